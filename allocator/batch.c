/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batch arbitration (DESIGN.md "The decision" step 7): several jobs
 * starting together compete for the idle pool.  Each is decided alone
 * first, which also lists the options of the jobs with a bandwidth curve.
 * Those jobs are arbitrated together by the exact multiple-choice knapsack
 * over the idle pool minus the reserve (mckp.c), the value of staying on
 * a default forwarder divided among the jobs that stay on it (solved
 * again until that count settles), and granted first; the jobs without a
 * curve then get DFRA's upgrades in rank order.  Every grant is made
 * against a scratch ledger, and a job that got less than it would alone
 * says why.  The rules themselves are decide.c's.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "common/units.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* Forwarders the decision takes from the pool (none for shadow). */
static size_t pool_taken(const struct alloc_decision *d)
{
	size_t n = 0;

	if (d->action == FWD_ACT_SHADOW)
		return 0;
	for (size_t i = 0; i < d->n_forwarders; i++)
		n += d->private_fwd[i];
	return n;
}

/* Rank order: larger expected gain first, ties in input order (a stable
 * sort); input order for fcfs.  A merge sort through tmp (n_jobs + 1),
 * the order a stable insertion sort gives; the insertion sort itself
 * without `merge` (the reference) or with a gain that is not a number
 * (no strict order). */
static void rank(const struct policy *p, struct alloc_decision *const *alone,
		 size_t *order, size_t *tmp, size_t n_jobs, bool merge)
{
	bool nan = !merge;

	for (size_t i = 0; i < n_jobs; i++) {
		order[i] = i;
		nan |= isnan(alone[i]->gain_bps);
	}
	if (p->decision.contention != POLICY_CONTENTION_GAIN)
		return;
	if (nan) {
		for (size_t i = 1; i < n_jobs; i++) {
			size_t v = order[i], j = i;

			while (j > 0 && alone[order[j - 1]]->gain_bps <
						alone[v]->gain_bps) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
		return;
	}
	for (size_t w = 1; w < n_jobs; w *= 2) {
		for (size_t lo = 0; lo < n_jobs; lo += 2 * w) {
			size_t mid = lo + w < n_jobs ? lo + w : n_jobs;
			size_t hi = lo + 2 * w < n_jobs ? lo + 2 * w : n_jobs;
			size_t a = lo, b = mid, k = lo;

			while (a < mid && b < hi) {
				double ga = alone[order[a]]->gain_bps;
				double gb = alone[order[b]]->gain_bps;

				/* the right run's first goes ahead only when
				 * larger */
				tmp[k++] = ga < gb ? order[b++] : order[a++];
			}
			while (a < mid)
				tmp[k++] = order[a++];
			while (b < hi)
				tmp[k++] = order[b++];
		}
		memcpy(order, tmp, n_jobs * sizeof(*order));
	}
}

/* Whether batch job j keeps its first default forwarder in use: the
 * default mapping and the default plus extras both do (jobs without a
 * curve count as staying). */
static bool stays(const struct alloc_plan *pl, const size_t *pick, size_t j)
{
	enum alloc_opt_kind k;

	if (!pl[j].curve || !pl[j].opts.n)
		return true;
	k = pl[j].opts.o[pick[j]].kind;
	return k == ALLOC_OPT_DEFAULT || k == ALLOC_OPT_EXTRAS;
}

/* The share of its first default forwarder's time a job staying there
 * with option o takes: its value alone spread over its o->k forwarders,
 * at the rate one forwarder carries for it (a job without a curve, or
 * without a rate: all of it).  Computed once per option (share_set()). */
static double share_calc(const struct alloc_plan *q,
			 const struct alloc_option *o)
{
	double c;

	if (!q->curve || !q->opts.n || q->rate <= 0 || !o->k)
		return 1;
	c = o->alone / (double)o->k / q->rate;
	return c < 1 ? c : 1;
}

/* Every option's share, in `room` (as many as the curve jobs' options),
 * pointed to by each job's plan. */
static void share_set(struct alloc_plan *pl, size_t n_jobs, double *room)
{
	for (size_t j = 0; j < n_jobs; j++) {
		if (!pl[j].curve)
			continue;
		pl[j].share = room;
		for (size_t x = 0; x < pl[j].opts.n; x++)
			*room++ = share_calc(&pl[j], &pl[j].opts.o[x]);
	}
}

/* The share of option o, one of job q's (q->opts.o[..]). */
static inline double share_of(const struct alloc_plan *q,
			      const struct alloc_option *o)
{
	return q->curve && q->opts.n ? q->share[o - q->opts.o] : 1;
}

/* What option o is worth to job i when the others staying on its first
 * default forwarder take `others` of its time (the ledger's holders one
 * each): a forwarder asked for more than its time serves each its share
 * (sim/SIM.md "Bandwidth"). */
static inline double shared_value(const struct alloc_plan *q,
				  const struct alloc_option *o, double others)
{
	double load;

	if (o->kind == ALLOC_OPT_DEFAULT) {
		if (q->opts.isolate)
			return 0;
	} else if (o->kind != ALLOC_OPT_EXTRAS) {
		return o->value;
	}
	load = others + q->held_sharers + share_of(q, o);
	return load > 1 ? o->alone / load : o->alone;
}

/* The batch's jobs grouped by first default forwarder: the jobs of
 * group g are mem[gs[g]] .. mem[gs[g + 1] - 1]; grp[j] is job j's. */
struct groups {
	size_t *mem, *gs, *grp;
	size_t n;
};

static int groups_make(const struct alloc_plan *pl, size_t n_jobs,
		       struct groups *g)
{
	uint32_t top = 0;
	size_t *of = NULL, *at;

	g->mem = malloc((n_jobs + 1) * sizeof(*g->mem));
	g->gs = calloc(n_jobs + 2, sizeof(*g->gs));
	g->grp = malloc((n_jobs + 1) * sizeof(*g->grp));
	g->n = 0;
	for (size_t j = 0; j < n_jobs; j++)
		if (pl[j].first_default > top)
			top = pl[j].first_default;
	/* of[f]: the group of first default forwarder f */
	of = malloc(((size_t)top + 1) * sizeof(*of));
	if (!g->mem || !g->gs || !g->grp || !of) {
		free(of);
		return -1;
	}
	for (size_t f = 0; f <= top; f++)
		of[f] = SIZE_MAX;
	/* groups by first appearance, counted in gs[g + 1] */
	for (size_t j = 0; j < n_jobs; j++) {
		size_t *k = &of[pl[j].first_default];

		if (*k == SIZE_MAX)
			*k = g->n++;
		g->grp[j] = *k;
		g->gs[*k + 1]++;
	}
	for (size_t k = 0; k < g->n; k++)
		g->gs[k + 1] += g->gs[k];
	/* input order within a group (of reused for each group's next) */
	at = of;
	for (size_t k = 0; k < g->n; k++)
		at[k] = g->gs[k];
	for (size_t j = 0; j < n_jobs; j++)
		g->mem[at[g->grp[j]]++] = j;
	free(of);
	return 0;
}

static void groups_free(struct groups *g)
{
	free(g->mem);
	free(g->gs);
	free(g->grp);
}

/* The time of group g's forwarder the jobs staying there take. */
static double group_load(const struct alloc_plan *pl, const size_t *pick,
			 const struct groups *g, size_t grp)
{
	double s = 0;

	for (size_t m = g->gs[grp]; m < g->gs[grp + 1]; m++) {
		size_t j = g->mem[m];

		if (stays(pl, pick, j))
			s += pl[j].curve && pl[j].opts.n
				     ? share_of(&pl[j], &pl[j].opts.o[pick[j]])
				     : 1;
	}
	return s;
}

/* What group g's curve jobs are worth with their choices. */
static double group_value(const struct alloc_plan *pl, const size_t *pick,
			  const struct groups *g, size_t grp)
{
	double load = group_load(pl, pick, g, grp), v = 0;

	for (size_t m = g->gs[grp]; m < g->gs[grp + 1]; m++) {
		size_t j = g->mem[m];
		const struct alloc_option *o;

		if (!pl[j].curve || !pl[j].opts.n)
			continue;
		o = &pl[j].opts.o[pick[j]];
		v += shared_value(
			&pl[j], o,
			stays(pl, pick, j) ? load - share_of(&pl[j], o) : load);
	}
	return v;
}

/* What the batch's choices are worth once everyone's choice is known: the
 * jobs that keep their default forwarder (alone or with extras) share its
 * time with the others that keep it. */
static double batch_value(const struct alloc_plan *pl, const size_t *pick,
			  const struct groups *g)
{
	double v = 0;

	for (size_t grp = 0; grp < g->n; grp++)
		v += group_value(pl, pick, g, grp);
	return v;
}

/* Group g's value in parts, for changing one choice at a time in O(1):
 * the stayers' values alone (a), the others' values (b), the stayers'
 * load (l) and the ledger's sharers (h), when every curve job of the
 * group has the same count (else false: group_value() it is).  Its value
 * is a / max(1, l + h) + b, as group_value() computes it job by job. */
struct gsum {
	double a, b, l, h;
};

/* What choosing o adds to a group's parts (job j staying or not). */
static void gsum_add(const struct alloc_plan *q, const struct alloc_option *o,
		     bool stay, double sign, struct gsum *s)
{
	if (!stay) {
		s->b += sign * o->value;
		return;
	}
	s->l += sign * share_of(q, o);
	if (o->kind == ALLOC_OPT_DEFAULT && q->opts.isolate)
		return;
	s->a += sign * o->alone;
}

static bool gsum_of(const struct alloc_plan *pl, const size_t *pick,
		    const struct groups *g, size_t grp, struct gsum *s)
{
	bool any = false;

	*s = (struct gsum){0, 0, 0, 0};
	for (size_t m = g->gs[grp]; m < g->gs[grp + 1]; m++) {
		size_t j = g->mem[m];

		if (!pl[j].curve || !pl[j].opts.n) {
			s->l += 1;
			continue;
		}
		if (any && pl[j].held_sharers != s->h)
			return false;
		any = true;
		s->h = pl[j].held_sharers;
		gsum_add(&pl[j], &pl[j].opts.o[pick[j]], stays(pl, pick, j), 1,
			 s);
	}
	return true;
}

static double gsum_value(const struct gsum *s)
{
	double load = s->l + s->h;

	/* the stayers' sum, each divided as shared_value() divides it */
	return (load > 1 ? s->a / load : s->a) + s->b;
}

/* The batch jobs that keep each group's first default forwarder in use
 * (n[grp]); job i's other sharers are n[its group] but itself. */
static void group_stayers(const struct alloc_plan *pl, const size_t *pick,
			  const struct groups *g, uint32_t *n)
{
	for (size_t grp = 0; grp < g->n; grp++) {
		n[grp] = 0;
		for (size_t m = g->gs[grp]; m < g->gs[grp + 1]; m++)
			n[grp] += stays(pl, pick, g->mem[m]);
	}
}

/* The gain over the default mapping (its value `def`) the policy asks
 * of an upgrade. */
static double gain_needed(const struct policy *p, double def)
{
	const struct policy_curve *c = &p->decision.curve;

	return fmax(c->min_gain, c->min_gain_share * def);
}

/* Whether job i may take option x: within the exploration budget, and,
 * but for the default mapping, the gain over it (its value `def`) the
 * policy asks for (`need`, gain_needed()); no extras for an isolated
 * job. */
static bool option_ok(const struct alloc_plan *q, const struct alloc_option *x,
		      double xv, double def, double need, bool no_explore,
		      uint64_t budget)
{
	if (x->kind == ALLOC_OPT_DEFAULT)
		return true;
	if (q->opts.isolate && x->kind == ALLOC_OPT_EXTRAS)
		return false;
	if (x->estimated && (no_explore || x->take > budget))
		return false;
	/* alloc_option_gains() for x valued xv, without copying x */
	if (q->opts.isolate)
		return true;
	return xv - def >= need;
}

/* A group's parts (gsum_of()) kept until one of its choices changes. */
struct gkeep {
	struct gsum s;
	bool fast, valid;
};

/*
 * One job's choice changed at a time, while that raises the batch's
 * value (each option valued with the sharing the others' choices imply):
 * the knapsack values the options with the sharing of the round before,
 * this settles what that leaves.  Within the pool (cap) and the
 * exploration budget.  With `reuse`, a group's sums are kept in gk (one
 * per group, all invalid) until one of its choices changes; without, they
 * are summed anew for every job (the reference).
 */
static void improve(const struct policy *p, struct alloc_plan *pl,
		    size_t n_jobs, const struct groups *g, const bool *no_ex,
		    uint64_t budget, uint32_t cap, bool reuse, struct gkeep *gk,
		    size_t *pick)
{
	uint64_t used = 0, ex = 0;

	for (size_t i = 0; i < n_jobs; i++) {
		const struct alloc_option *c;

		if (!pl[i].curve || !pl[i].opts.n)
			continue;
		c = &pl[i].opts.o[pick[i]];
		used += c->take;
		ex += c->estimated ? c->take : 0;
	}
	for (int sweep = 0; sweep < 8; sweep++) {
		bool moved = false;

		for (size_t i = 0; i < n_jobs; i++) {
			const struct alloc_opts *o = &pl[i].opts;
			size_t grp = g->grp[i], was = pick[i], best = was;
			double before, best_v, load, def, need;
			const struct alloc_option *c;
			struct gsum sum;
			bool fast;

			if (!pl[i].curve || o->n < 2)
				continue;
			/* the same choices give the same sums: kept */
			if (!reuse || !gk[grp].valid) {
				gk[grp].fast =
					gsum_of(pl, pick, g, grp, &gk[grp].s);
				gk[grp].valid = true;
			}
			fast = gk[grp].fast;
			sum = gk[grp].s;
			before = fast ? gsum_value(&sum)
				      : group_value(pl, pick, g, grp);
			best_v = before;
			c = &o->o[was];
			if (fast)
				gsum_add(&pl[i], c, stays(pl, pick, i), -1,
					 &sum);
			/* the others' load: the parts' load once this job's
			 * part is out (the same sum as group_load()) */
			load = fast && reuse
				       ? sum.l
				       : group_load(pl, pick, g, grp) -
						 (stays(pl, pick, i)
							  ? share_of(&pl[i], c)
							  : 0);
			def = shared_value(&pl[i], &o->o[0], load);
			need = gain_needed(p, def);
			for (size_t x = 0; x < o->n; x++) {
				const struct alloc_option *y = &o->o[x];
				double v;

				if (x == was ||
				    used - c->take + y->take > cap ||
				    (y->estimated &&
				     ex - (c->estimated ? c->take : 0) +
						     y->take >
					     budget) ||
				    !option_ok(&pl[i], y,
					       shared_value(&pl[i], y, load),
					       def, need, no_ex[i], budget))
					continue;
				pick[i] = x;
				if (fast) {
					struct gsum t = sum;

					gsum_add(&pl[i], y, stays(pl, pick, i),
						 1, &t);
					v = gsum_value(&t);
				} else {
					v = group_value(pl, pick, g, grp);
				}
				pick[i] = was;
				if (v > best_v + 1e-9 * fabs(best_v) ||
				    (v >= best_v - 1e-9 * fabs(best_v) &&
				     y->take < o->o[best].take)) {
					best_v = v;
					best = x;
				}
			}
			if (best == was)
				continue;
			used = used - c->take + o->o[best].take;
			ex = ex - (c->estimated ? c->take : 0) +
			     (o->o[best].estimated ? o->o[best].take : 0);
			pick[i] = best;
			gk[grp].valid = false;
			moved = true;
		}
		if (!moved)
			break;
	}
}

/* The knapsack over the curve jobs' options; sets plan[i].chosen and
 * .apply.  The value of staying on a default forwarder (the default
 * mapping, or the defaults plus extras) is shared with the batch jobs that
 * stay on the same one, which depends on the answer: solved again with the
 * sharing each answer implies (at most 6 times, until the choices
 * settle), keeping the answer worth most (batch_value()), then improved
 * one job at a time (improve()).  0 or -1 (ENOMEM). */
/* Rounds of the knapsack remembered (choices in, choices out). */
#define MEMO 8

static int arbitrate(const struct policy *p, struct alloc_plan *pl,
		     size_t n_jobs, size_t base, bool reuse)
{
	/* one block for the per-job arrays (all of 8-byte elements but
	 * no_explore, last); only pick, best and no_explore are read before
	 * they are written (zeroed below) */
	size_t nj = n_jobs + 1;
	void *blk = malloc(nj * (sizeof(const struct alloc_option *) +
				 4 * sizeof(size_t) + sizeof(double) +
				 2 * MEMO * sizeof(size_t) + sizeof(bool)));
	const struct alloc_option **opt = blk;
	size_t *n = (size_t *)(opt + nj);
	size_t *pick = n + nj;
	size_t *got = pick + nj;
	size_t *best = got + nj;
	double *load = (double *)(best + nj);
	size_t *memo = (size_t *)(load + nj);
	bool *no_explore = (bool *)(memo + 2 * MEMO * nj);
	double best_v = -1;
	uint64_t budget = (uint64_t)floor(p->learn.pool_share * (double)base);
	uint64_t best_t = UINT64_MAX;
	uint32_t cap = base > p->decision.caps.reserve
			       ? (uint32_t)(base - p->decision.caps.reserve)
			       : 0;
	struct alloc_option *buf = NULL;
	struct alloc_mckp_buf mb = {0};
	struct groups g = {0};
	struct gkeep *gk = NULL;
	uint32_t *stayers = NULL;
	double *shares = NULL;
	size_t total = 0, n_memo = 0;
	int memo_drops[MEMO];
	int rv = -1;

	if (!blk || groups_make(pl, n_jobs, &g) < 0)
		goto out;
	memset(pick, 0, nj * sizeof(*pick));
	memset(best, 0, nj * sizeof(*best));
	memset(no_explore, 0, nj * sizeof(*no_explore));
	for (size_t i = 0; i < n_jobs; i++)
		total += pl[i].curve ? pl[i].opts.n : 0;
	if (!(buf = malloc((total + 1) * sizeof(*buf))) ||
	    !(shares = malloc((total + 1) * sizeof(*shares))))
		goto out;
	share_set(pl, n_jobs, shares);
	/* Isolation by harm with the batch's neighbours: a disruptive job is
	 * isolated when its harm (the longer of its data I/O on the default
	 * mapping and its metadata load) times (1 + the vulnerable jobs,
	 * running or starting, on its first default forwarder) reaches
	 * min_harm. */
	for (size_t i = 0; i < n_jobs; i++) {
		struct alloc_opts *o = &pl[i].opts;
		uint32_t v = pl[i].held_vulnerable;

		if (!pl[i].curve || !o->n || o->isolate || !pl[i].disruptive ||
		    !p->decision.interference.enabled)
			continue;
		for (size_t j = 0; j < n_jobs; j++)
			v += j != i && pl[j].vulnerable &&
			     pl[j].first_default == pl[i].first_default;
		if (pl[i].harm_s * (1.0 + v) >= p->decision.curve.min_harm)
			o->isolate = true;
	}
	/* first guess (pick all 0): every job stays; explorations beyond the
	 * learn budget are dropped, the least valuable per forwarder first,
	 * and the knapsack solved again */
	for (int round = 0, drops = 0; round < 6; round++) {
		size_t k = 0, used = 0, h;
		bool same = true;

		/* the same choices (and drops) as a round before give the
		 * same knapsack, so the same answer: not solved again */
		for (h = 0; h < n_memo && h < MEMO; h++)
			if (memo_drops[h] == drops &&
			    !memcmp(&memo[2 * h * n_jobs], pick,
				    n_jobs * sizeof(*pick)))
				break;
		if (h < n_memo && h < MEMO) {
			const size_t *out = &memo[(2 * h + 1) * n_jobs];

			same = !memcmp(out, pick, n_jobs * sizeof(*pick));
			memcpy(pick, out, n_jobs * sizeof(*pick));
			goto solved;
		}
		h = n_memo++ % MEMO;
		memo_drops[h] = drops;
		memcpy(&memo[2 * h * n_jobs], pick, n_jobs * sizeof(*pick));
		for (size_t grp = 0; grp < g.n; grp++)
			load[grp] = group_load(pl, pick, &g, grp);
		for (size_t i = 0; i < n_jobs; i++) {
			const struct alloc_opts *o = &pl[i].opts;
			struct alloc_option *b = &buf[used];
			double others, need;

			if (!pl[i].curve || !o->n)
				continue;
			/* what the others staying take of the forwarder */
			others = load[g.grp[i]] -
				 (stays(pl, pick, i)
					  ? share_of(&pl[i], &o->o[pick[i]])
					  : 0);
			b[0] = o->o[0];
			b[0].value = shared_value(&pl[i], &o->o[0], others);
			need = gain_needed(p, b[0].value);
			n[k] = 1;
			for (size_t x = 1; x < o->n; x++) {
				double xv =
					shared_value(&pl[i], &o->o[x], others);

				if (!option_ok(&pl[i], &o->o[x], xv, b[0].value,
					       need, no_explore[i], budget))
					continue;
				b[n[k]] = o->o[x];
				b[n[k]++].value = xv;
			}
			opt[k++] = b;
			used += n[k - 1];
		}
		if (!k)
			break;
		if (alloc_mckp_with(opt, n, k, cap, got, &mb) < 0)
			goto out;
		/* back to job indexes and the job's own option indexes */
		for (size_t i = n_jobs, j = k; i-- > 0;) {
			const struct alloc_option *c;
			size_t x;

			if (!pl[i].curve || !pl[i].opts.n)
				continue;
			j--;
			c = &opt[j][got[j]];
			for (x = 0; x < pl[i].opts.n; x++)
				if (pl[i].opts.o[x].kind == c->kind &&
				    pl[i].opts.o[x].take == c->take)
					break;
			if (x != pick[i])
				same = false;
			pick[i] = x;
		}
		memcpy(&memo[(2 * h + 1) * n_jobs], pick,
		       n_jobs * sizeof(*pick));
	solved:;
		/* over the exploration budget: drop one and solve again */
		uint64_t ex = 0;
		size_t worst = SIZE_MAX;
		double worst_v = INFINITY;

		for (size_t i = 0; i < n_jobs; i++) {
			const struct alloc_option *c;

			if (!pl[i].curve || !pl[i].opts.n)
				continue;
			c = &pl[i].opts.o[pick[i]];
			if (!c->estimated)
				continue;
			ex += c->take;
			if (c->take &&
			    (c->value - pl[i].opts.base) / c->take < worst_v) {
				worst_v =
					(c->value - pl[i].opts.base) / c->take;
				worst = i;
			}
		}
		if (ex > budget && worst != SIZE_MAX && drops < (int)n_jobs) {
			no_explore[worst] = true;
			drops++;
			round--;
			continue;
		}
		double v = batch_value(pl, pick, &g);
		uint64_t t = 0;

		for (size_t i = 0; i < n_jobs; i++)
			t += pl[i].curve && pl[i].opts.n
				     ? pl[i].opts.o[pick[i]].take
				     : 0;
		/* the best value; equal values: the fewer forwarders */
		if (v > best_v + 1e-9 * best_v ||
		    (v >= best_v - 1e-9 * best_v && t < best_t)) {
			best_v = v;
			best_t = t;
			memcpy(best, pick, n_jobs * sizeof(*pick));
		}
		if (same)
			break;
	}
	memcpy(pick, best, n_jobs * sizeof(*pick));
	if (!(gk = calloc(g.n + 1, sizeof(*gk))))
		goto out;
	improve(p, pl, n_jobs, &g, no_explore, budget, cap, reuse, gk, pick);
	/* the groups' stayers, counted once */
	if (!(stayers = malloc((g.n + 1) * sizeof(*stayers))))
		goto out;
	group_stayers(pl, pick, &g, stayers);
	for (size_t i = 0; i < n_jobs; i++) {
		if (!pl[i].curve || !pl[i].opts.n)
			continue;
		pl[i].apply = true;
		pl[i].collect = false;
		pl[i].chosen = pl[i].opts.o[pick[i]];
		pl[i].batch_sharers =
			stayers[g.grp[i]] - (uint32_t)stays(pl, pick, i);
	}
	rv = 0;
out:
	groups_free(&g);
	free(gk);
	free(stayers);
	for (size_t i = 0; i < n_jobs; i++)
		pl[i].share = NULL; /* not beyond the knapsack */
	free(shares);
	alloc_mckp_buf_free(&mb);
	free(buf);
	free(blk);
	return rv;
}

static int batch(const struct alloc_ctx *cx, const struct policy *p,
		 const struct alloc_ledger *ledger,
		 const struct alloc_health *health,
		 const struct alloc_job *jobs, size_t n_jobs, double now,
		 bool reuse, struct alloc_decision **out, fwd_error_t *err)
{
	struct alloc_decision **alone = NULL;
	struct alloc_ledger *scratch = NULL;
	struct alloc_plan *plan = NULL;
	struct alloc_scratch ws = {0};
	/* each job's default mapping, walked once for both passes (the
	 * reference walks it for each) */
	struct alloc_defmap *maps = NULL;
	size_t *order = NULL, *seq = NULL, base = 0, n_order = 0;
	size_t n_order_curve;
	uint64_t version;
	int rv = -1;

	for (size_t i = 0; i < n_jobs; i++)
		out[i] = NULL;
	alone = calloc(n_jobs + 1, sizeof(*alone));
	order = malloc((n_jobs + 1) * sizeof(*order));
	plan = calloc(n_jobs + 1, sizeof(*plan));
	seq = malloc((n_jobs + 1) * sizeof(*seq));
	maps = calloc(n_jobs + 1, sizeof(*maps));
	/* the grants go to a scratch ledger: the caller's entries borrowed
	 * (the reference: copied) */
	scratch = !ledger ? alloc_ledger_create_ranked(cx->t, cx->name_rank)
		  : reuse ? alloc_ledger_overlay(ledger)
			  : alloc_ledger_clone(ledger);
	if (!alone || !order || !plan || !seq || !maps || !scratch ||
	    alloc_scratch_init(&ws, cx) < 0) {
		errno = ENOMEM;
		errprintf(err, "batch: out of memory");
		goto out;
	}
	ws.pool.off = !reuse;
	/* The pool at batch start: the share cap of every grant. */
	for (size_t f = 0; f < cx->t->n_forwarders; f++)
		base += alloc_fwd_idle(cx->t, scratch, health, (uint32_t)f);
	for (size_t i = 0; i < n_jobs; i++) {
		plan[i].collect = true;
		ws.defmap = reuse ? &maps[i] : NULL;
		alone[i] = alloc_decide_base(cx, p, scratch, health, &jobs[i],
					     SIZE_MAX, &plan[i], &ws, err);
		if (!alone[i]) {
			errprefix(err, "job %zu", i);
			goto out;
		}
	}
	/* fcfs: no knapsack, each job in input order against the threshold */
	if (p->decision.contention == POLICY_CONTENTION_GAIN &&
	    arbitrate(p, plan, n_jobs, base, reuse) < 0) {
		errno = ENOMEM;
		errprintf(err, "batch: out of memory");
		goto out;
	}
	/* the curve jobs' knapsack grants first, then the others by rank */
	rank(p, alone, order, seq, n_jobs, reuse);
	for (size_t i = 0; i < n_jobs; i++)
		if (plan[i].apply)
			seq[n_order++] = i;
	n_order_curve = n_order;
	for (size_t r = 0; r < n_jobs; r++)
		if (!plan[order[r]].apply)
			seq[n_order++] = order[r];
	memcpy(order, seq, n_jobs * sizeof(*order));
	for (size_t r = 0; r < n_jobs; r++) {
		size_t i = order[r];
		struct alloc_decision *d;
		char g[32];

		ws.defmap = reuse ? &maps[i] : NULL;
		d = alloc_decide_base(cx, p, scratch, health, &jobs[i], base,
				      plan[i].apply ? &plan[i] : NULL, &ws,
				      err);
		if (!d) {
			errprefix(err, "job %s", jobs[i].job_id);
			goto out;
		}
		out[i] = d;
		if (plan[i].apply && pool_taken(d) < pool_taken(alone[i])) {
			/* the knapsack gave the pool to larger gains */
			if (alloc_reason(
				    d,
				    "pool contention: the batch's knapsack "
				    "over %zu job%s with a curve chose "
				    "otherwise (expected gain %s); alone "
				    "it would get %zu pool forwarder%s, "
				    "got %zu",
				    n_order_curve, alloc_plural(n_order_curve),
				    units_short_rate(alone[i]->gain_bps, g,
						     sizeof(g)),
				    pool_taken(alone[i]),
				    alloc_plural(pool_taken(alone[i])),
				    pool_taken(d)) < 0) {
				errno = ENOMEM;
				errprintf(err, "batch: out of memory");
				goto out;
			}
			if (!pool_taken(d) && d->action == FWD_ACT_DEFAULT)
				d->action = FWD_ACT_REFUSED;
		} else if (pool_taken(d) < pool_taken(alone[i]) &&
			   alloc_reason(
				   d,
				   "pool contention: ranked %zu of %zu (%s, "
				   "expected gain %s); alone it would get %zu "
				   "pool forwarder%s, got %zu",
				   r + 1, n_jobs,
				   p->decision.contention ==
						   POLICY_CONTENTION_GAIN
					   ? "by expected gain"
					   : "first come, first served",
				   units_short_rate(alone[i]->gain_bps, g,
						    sizeof(g)),
				   pool_taken(alone[i]),
				   alloc_plural(pool_taken(alone[i])),
				   pool_taken(d)) < 0) {
			errno = ENOMEM;
			errprintf(err, "batch: out of memory");
			goto out;
		}
		version = alloc_ledger_version(scratch);
		if (alloc_ledger_acquire(scratch, d, jobs[i].n_nodes, now,
					 err) < 0)
			goto out;
		/* the next job's pool: this one's forwarders out */
		if (reuse)
			alloc_pool_cache_acquired(&ws.pool, cx, scratch, d,
						  version);
	}
	rv = 0;
out:
	if (rv < 0)
		for (size_t i = 0; i < n_jobs; i++) {
			alloc_decision_destroy(out[i]);
			out[i] = NULL;
		}
	for (size_t i = 0; alone && i < n_jobs; i++)
		alloc_decision_destroy(alone[i]);
	free(alone);
	for (size_t i = 0; plan && i < n_jobs; i++)
		alloc_opts_free(&plan[i].opts);
	free(plan);
	for (size_t i = 0; maps && i < n_jobs; i++)
		alloc_defmap_free(&maps[i]);
	free(maps);
	free(seq);
	free(order);
	alloc_ledger_destroy(scratch);
	alloc_scratch_free(&ws);
	return rv;
}

int alloc_decide_batch(const struct alloc_ctx *cx, const struct policy *p,
		       const struct alloc_ledger *ledger,
		       const struct alloc_health *health,
		       const struct alloc_job *jobs, size_t n_jobs, double now,
		       struct alloc_decision **out, fwd_error_t *err)
{
	return batch(cx, p, ledger, health, jobs, n_jobs, now, true, out, err);
}

int alloc_decide_batch_ref(const struct alloc_ctx *cx, const struct policy *p,
			   const struct alloc_ledger *ledger,
			   const struct alloc_health *health,
			   const struct alloc_job *jobs, size_t n_jobs,
			   double now, struct alloc_decision **out,
			   fwd_error_t *err)
{
	return batch(cx, p, ledger, health, jobs, n_jobs, now, false, out, err);
}
