/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exact bound of a batch (SIM.md "Exact"): every combination of the
 * jobs' options, valued with the simulator's own sharing and interference
 * model, searched by branch and bound.  Items are jobs; an option either
 * has a value of its own (private forwarders, direct access) or stays on
 * shared forwarders, where its bandwidth is
 *
 *	d * min(phi, min over its shared forwarders s of
 *		     min(1, 1 / L_s) / slow_s)
 *
 * with L_s the load of every item staying on s and slow_s the worst
 * slowdown the classes there inflict on the item's class (job_bw() in
 * sim.c).  An item's value never rises when another item joins its
 * forwarders, so the items placed so far plus, for the rest, the smaller
 * of (a) the knapsack of their values alone over the pool left and (b)
 * the sum of their best values in the current state bound every
 * completion from above.
 *
 * Bound (c) is a shared forwarder's capacity.  Give each staying option
 * one of its forwarders s; there, with y = min(phi, 1 / L_s) (L_s counts
 * its own load lam), value <= d * y and the sum of lam * y is at most 1,
 * so the items given s are worth at most the fractional knapsack of their
 * d and lam in capacity 1, bounded in turn by its dual at any mu_s >= 0:
 * mu_s + sum of phi * (d - mu_s * lam)^+.  With mu fixed for the search
 * (capacity_mu()), every option has a fixed worth cval, so (c) = sum of
 * mu_s + the placed items' cval + the knapsack of the rest's cval over the
 * pool left, built once.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "sim/sim_internal.h"

struct search {
	struct sim_exact *x;
	size_t *order;	    /* item per depth */
	size_t *cur;	    /* option per item, SIZE_MAX: not yet */
	double *load;	    /* per shared forwarder */
	uint32_t *cnt;	    /* per shared forwarder and class */
	double *rest;	    /* (n_items + 1) x (pool + 1): bound (a) */
	double *rest_c;	    /* the same for bound (c) */
	double *cval;	    /* per option: its worth in bound (c) */
	double mu_sum;	    /* bound (c): sum of mu_s */
	double *alone;	    /* per option: its value alone */
	double *row, *nrow; /* state_bound()'s knapsack rows */
	double best;
	uint64_t nodes;
	uint64_t cells; /* state_bound()'s knapsack cells */
	bool stopped;
};

static const uint32_t *opt_sh(const struct sim_exact *x,
			      const struct sim_exact_opt *o)
{
	return &x->sh_idx[o->sh_off];
}

/* Option o's value in the current state; `with` adds its own load and
 * class (an option not yet applied). */
static double opt_value(const struct search *s, enum sim_class cls,
			const struct sim_exact_opt *o, bool with)
{
	const struct sim_exact *x = s->x;
	const uint32_t *sh = opt_sh(x, o);
	double f = o->phi;

	if (!o->n_sh)
		return o->d;
	for (uint32_t i = 0; i < o->n_sh; i++) {
		const uint32_t *c = &s->cnt[sh[i] * SIM_N_CLASSES];
		double l =
			s->load[sh[i]] + (with ? x->sh_load[o->sh_off + i] : 0);
		double share = l > 1 ? 1 / l : 1, slow = 1;

		for (int k = 0; k < SIM_N_CLASSES; k++) {
			uint32_t n = c[k] - (!with && k == (int)cls);

			if (n && x->slowdown[cls][k] > slow)
				slow = x->slowdown[cls][k];
		}
		if (share / slow < f)
			f = share / slow;
	}
	return o->d * f;
}

static void apply(struct search *s, enum sim_class cls,
		  const struct sim_exact_opt *o, int sign)
{
	const struct sim_exact *x = s->x;
	const uint32_t *sh = opt_sh(x, o);

	for (uint32_t i = 0; i < o->n_sh; i++) {
		s->load[sh[i]] += sign * x->sh_load[o->sh_off + i];
		s->cnt[sh[i] * SIM_N_CLASSES + cls] += (uint32_t)sign;
	}
}

/* The items placed so far, valued in the current state. */
static double placed_value(const struct search *s, size_t depth)
{
	const struct sim_exact *x = s->x;
	double v = 0;

	for (size_t d = 0; d < depth; d++) {
		size_t i = s->order[d];
		const struct sim_exact_item *it = &x->items[i];

		v += opt_value(s, it->cls, &x->opts[it->opt_off + s->cur[i]],
			       false);
	}
	return v;
}

/* Bound (b): the items left, each option valued in the current state
 * (its own load and class added), in a knapsack over the pool left. */
static double state_bound(struct search *s, size_t depth, uint32_t left)
{
	const struct sim_exact *x = s->x;
	double *row = s->row;

	for (uint32_t p = 0; p <= left; p++)
		row[p] = 0;
	s->cells += (uint64_t)(x->n_items - depth) * (left + 1);
	for (size_t d = depth; d < x->n_items; d++) {
		const struct sim_exact_item *it = &x->items[s->order[d]];
		double *nrow = s->nrow;

		for (uint32_t p = 0; p <= left; p++)
			nrow[p] = -1;
		for (size_t k = 0; k < it->n_opt; k++) {
			const struct sim_exact_opt *o =
				&x->opts[it->opt_off + k];
			double y;

			if (o->take > left)
				continue;
			y = opt_value(s, it->cls, o, true);
			for (uint32_t p = o->take; p <= left; p++)
				if (row[p - o->take] + y > nrow[p])
					nrow[p] = row[p - o->take] + y;
		}
		s->nrow = row;
		s->row = nrow;
		row = nrow;
	}
	return row[left];
}

/* `worth`: the placed items' worth in bound (c). */
static void dfs(struct search *s, size_t depth, uint32_t used, double worth)
{
	struct sim_exact *x = s->x;
	uint32_t left = x->pool - used;
	double have, ub;

	if (s->stopped)
		return;
	if (++s->nodes > x->max_nodes ||
	    (x->max_cells && s->cells > x->max_cells)) {
		s->stopped = true;
		return;
	}
	have = placed_value(s, depth);
	if (depth == x->n_items) {
		if (have > s->best) {
			s->best = have;
			memcpy(x->pick, s->cur, x->n_items * sizeof(*x->pick));
		}
		return;
	}
	ub = s->rest[depth * (x->pool + 1) + left];
	if (have + ub <= s->best * (1 + 1e-12))
		return;
	if (s->mu_sum + worth + s->rest_c[depth * (x->pool + 1) + left] <=
	    s->best * (1 + 1e-12))
		return;
	{
		double b = state_bound(s, depth, left);

		if (have + b <= s->best * (1 + 1e-12))
			return;
	}
	size_t i = s->order[depth];
	const struct sim_exact_item *it = &x->items[i];

	for (size_t k = 0; k < it->n_opt; k++) {
		const struct sim_exact_opt *o = &x->opts[it->opt_off + k];

		if (o->take > left)
			continue;
		s->cur[i] = k;
		apply(s, it->cls, o, 1);
		dfs(s, depth + 1, used + o->take,
		    worth + s->cval[it->opt_off + k]);
		apply(s, it->cls, o, -1);
		s->cur[i] = SIZE_MAX;
		if (s->stopped)
			return;
	}
}

static double alone_value(const struct search *s, enum sim_class cls,
			  const struct sim_exact_opt *o)
{
	(void)cls;
	/* alone on its forwarders: no class but its own, its own load */
	const struct sim_exact *x = s->x;
	double f = o->phi;

	if (!o->n_sh)
		return o->d;
	for (uint32_t i = 0; i < o->n_sh; i++) {
		double l = x->sh_load[o->sh_off + i];

		if (l > 1 && 1 / l < f)
			f = 1 / l;
	}
	return o->d * f;
}

/* Options in order of value alone, best first (an insertion sort: a job
 * has a few dozen). */
static void sort_options(struct sim_exact *x, struct search *s, size_t i)
{
	struct sim_exact_item *it = &x->items[i];
	struct sim_exact_opt *o = &x->opts[it->opt_off];
	double *a = &s->alone[it->opt_off];

	for (size_t k = 1; k < it->n_opt; k++) {
		struct sim_exact_opt v = o[k];
		double va = a[k];
		size_t j = k;

		while (j > 0 && (a[j - 1] < va ||
				 (a[j - 1] == va && o[j - 1].take > v.take))) {
			o[j] = o[j - 1];
			a[j] = a[j - 1];
			j--;
		}
		o[j] = v;
		a[j] = va;
	}
}

/* Drop an option another of the same item beats whatever the others do:
 * one that shares nothing, takes no more and is worth at least its value
 * alone. */
static void prune_options(struct sim_exact *x, struct search *s, size_t i)
{
	struct sim_exact_item *it = &x->items[i];
	struct sim_exact_opt *o = &x->opts[it->opt_off];
	double *a = &s->alone[it->opt_off];
	size_t n = 0;

	for (size_t k = 0; k < it->n_opt; k++) {
		bool dom = false;

		for (size_t j = 0; j < n && !dom; j++)
			dom = !o[j].n_sh && o[j].take <= o[k].take &&
			      a[j] >= a[k];
		if (dom)
			continue;
		o[n] = o[k];
		a[n++] = a[k];
	}
	it->n_opt = n;
}

/* tab[d][p]: the best knapsack of the items from depth d on over p pool
 * forwarders, each option worth val[] (bounds (a) and (c)). */
static void rest_table(struct search *s, const double *val, double *tab)
{
	const struct sim_exact *x = s->x;
	size_t P = x->pool;

	for (size_t p = 0; p <= P; p++)
		tab[x->n_items * (P + 1) + p] = 0;
	for (size_t d = x->n_items; d-- > 0;) {
		const struct sim_exact_item *it = &x->items[s->order[d]];

		for (size_t p = 0; p <= P; p++) {
			double b = -1;

			for (size_t k = 0; k < it->n_opt; k++) {
				const struct sim_exact_opt *o =
					&x->opts[it->opt_off + k];
				double v;

				if (o->take > p)
					continue;
				v = val[it->opt_off + k] +
				    tab[(d + 1) * (P + 1) + p - o->take];
				if (v > b)
					b = v;
			}
			tab[d * (P + 1) + p] = b < 0 ? 0 : b;
		}
	}
}

/* Each option's worth in bound (c) for the given mu: its value where it
 * shares nothing, else phi * (d - mu_s * lam)^+ on the forwarder where
 * that is least; returns the bound at the root. */
static double capacity_worth(struct search *s, const double *mu)
{
	const struct sim_exact *x = s->x;

	s->mu_sum = 0;
	for (size_t f = 0; f < x->n_shared; f++)
		s->mu_sum += mu[f];
	for (size_t i = 0; i < x->n_opts; i++) {
		const struct sim_exact_opt *o = &x->opts[i];
		double w = o->n_sh ? INFINITY : o->d;

		for (uint32_t j = 0; j < o->n_sh; j++) {
			double t = o->d - mu[x->sh_idx[o->sh_off + j]] *
						  x->sh_load[o->sh_off + j];
			double v = o->phi * (t > 0 ? t : 0);

			if (v < w)
				w = v;
		}
		s->cval[i] = w;
	}
	rest_table(s, s->cval, s->rest_c);
	return s->mu_sum + s->rest_c[x->pool];
}

/* Most mu tried per shared forwarder. */
#define MU_TRIES 24

/* Bound (c)'s mu: per shared forwarder in turn, the one of 0 and the d /
 * lam of the options there (the breakpoints of the dual, which is convex
 * in each mu_s; at most MU_TRIES of them, spread over their range) that
 * gives the least bound at the root, the others held. */
static int capacity_mu(struct search *s)
{
	const struct sim_exact *x = s->x;
	size_t n_all = 0;
	double *mu, *r, best;

	for (size_t i = 0; i < x->n_opts; i++)
		n_all += x->opts[i].n_sh;
	mu = calloc(x->n_shared + 1, sizeof(*mu));
	r = malloc((n_all + 1) * sizeof(*r));
	if (!mu || !r) {
		free(mu);
		free(r);
		return -1;
	}
	best = capacity_worth(s, mu);
	for (uint32_t f = 0; f < x->n_shared; f++) {
		size_t n = 0, tries;

		for (size_t i = 0; i < x->n_opts; i++) {
			const struct sim_exact_opt *o = &x->opts[i];

			for (uint32_t j = 0; j < o->n_sh; j++)
				if (x->sh_idx[o->sh_off + j] == f &&
				    x->sh_load[o->sh_off + j] > 0)
					r[n++] = o->d /
						 x->sh_load[o->sh_off + j];
		}
		qsort(r, n, sizeof(*r), fwd_cmp_double);
		tries = n < MU_TRIES ? n : MU_TRIES;
		for (size_t t = 0; t < tries; t++) {
			double was = mu[f], c;

			mu[f] = r[tries < n ? t * (n - 1) / (tries - 1) : t];
			c = capacity_worth(s, mu);
			if (c < best)
				best = c;
			else
				mu[f] = was;
		}
	}
	capacity_worth(s, mu);
	free(mu);
	free(r);
	return 0;
}

/* From the assignment in s->cur (applied), the single change of one
 * item's option that raises the total most per pool forwarder it adds
 * (per 1 when it adds none), made while one does; returns the total
 * reached. */
static double improve(struct search *s, uint32_t used)
{
	struct sim_exact *x = s->x;
	double v = placed_value(s, x->n_items);

	for (;;) {
		size_t bi = SIZE_MAX, bk = 0;
		double brate = 0, bv = v;

		for (size_t i = 0; i < x->n_items; i++) {
			const struct sim_exact_item *it = &x->items[i];
			size_t was = s->cur[i];
			const struct sim_exact_opt *c =
				&x->opts[it->opt_off + was];

			for (size_t k = 0; k < it->n_opt; k++) {
				const struct sim_exact_opt *o =
					&x->opts[it->opt_off + k];
				double y, rate;

				if (k == was ||
				    used - c->take + o->take > x->pool)
					continue;
				apply(s, it->cls, c, -1);
				apply(s, it->cls, o, 1);
				s->cur[i] = k;
				y = placed_value(s, x->n_items);
				s->cur[i] = was;
				apply(s, it->cls, o, -1);
				apply(s, it->cls, c, 1);
				if (y <= v * (1 + 1e-12))
					continue;
				rate = (y - v) / (o->take > c->take
							  ? o->take - c->take
							  : 1);
				if (rate > brate) {
					brate = rate;
					bi = i;
					bk = k;
					bv = y;
				}
			}
		}
		if (bi == SIZE_MAX)
			return v;
		{
			const struct sim_exact_item *it = &x->items[bi];
			const struct sim_exact_opt *c =
				&x->opts[it->opt_off + s->cur[bi]];
			const struct sim_exact_opt *o =
				&x->opts[it->opt_off + bk];

			apply(s, it->cls, c, -1);
			apply(s, it->cls, o, 1);
			used = used - c->take + o->take;
			s->cur[bi] = bk;
			v = bv;
		}
	}
}

/* Every item's option taken back. */
static void unapply_all(struct search *s)
{
	struct sim_exact *x = s->x;

	for (size_t i = 0; i < x->n_items; i++) {
		const struct sim_exact_item *it = &x->items[i];

		apply(s, it->cls, &x->opts[it->opt_off + s->cur[i]], -1);
		s->cur[i] = SIZE_MAX;
	}
}

/* A first answer to prune against, the better of two local searches
 * (improve()): one from every item on its first option the pool allows
 * (in search order), one from every item on the option that takes least
 * from the pool (the best such), which leaves the pool to be shared out
 * by single moves. */
static int incumbent(struct search *s)
{
	struct sim_exact *x = s->x;
	uint32_t used = 0;
	double v;

	for (size_t d = 0; d < x->n_items; d++) {
		size_t i = s->order[d];
		const struct sim_exact_item *it = &x->items[i];
		size_t k = it->n_opt - 1;

		for (size_t c = 0; c < it->n_opt; c++)
			if (x->opts[it->opt_off + c].take <= x->pool - used &&
			    (x->opts[it->opt_off + c].take <
				     x->opts[it->opt_off + k].take ||
			     c < k)) {
				k = c;
				break;
			}
		if (x->opts[it->opt_off + k].take > x->pool - used)
			for (k = 0; k < it->n_opt; k++)
				if (!x->opts[it->opt_off + k].take)
					break;
		if (k == it->n_opt)
			return -1;
		s->cur[i] = k;
		used += x->opts[it->opt_off + k].take;
		apply(s, it->cls, &x->opts[it->opt_off + k], 1);
	}
	s->best = improve(s, used);
	memcpy(x->pick, s->cur, x->n_items * sizeof(*x->pick));
	unapply_all(s);
	/* options are sorted best first: the first of the least take */
	used = 0;
	for (size_t i = 0; i < x->n_items; i++) {
		const struct sim_exact_item *it = &x->items[i];
		size_t k = 0;

		for (size_t c = 1; c < it->n_opt; c++)
			if (x->opts[it->opt_off + c].take <
			    x->opts[it->opt_off + k].take)
				k = c;
		s->cur[i] = k;
		used += x->opts[it->opt_off + k].take;
		apply(s, it->cls, &x->opts[it->opt_off + k], 1);
	}
	if (used <= x->pool && (v = improve(s, used)) > s->best) {
		s->best = v;
		memcpy(x->pick, s->cur, x->n_items * sizeof(*x->pick));
	}
	/* back to the empty state for the search */
	unapply_all(s);
	return 0;
}

int sim_exact_solve(struct sim_exact *x)
{
	struct search s = {.x = x, .best = -1};
	size_t n = x->n_items, P = x->pool;
	double *gain = NULL;
	int rv = -1;

	x->value = 0;
	x->proven = true;
	x->nodes = 0;
	if (!n)
		return 0;
	s.order = malloc(n * sizeof(*s.order));
	s.cur = malloc(n * sizeof(*s.cur));
	s.load = calloc(x->n_shared + 1, sizeof(*s.load));
	s.cnt = calloc((x->n_shared + 1) * SIM_N_CLASSES, sizeof(*s.cnt));
	s.rest = calloc((n + 1) * (P + 1), sizeof(*s.rest));
	s.rest_c = calloc((n + 1) * (P + 1), sizeof(*s.rest_c));
	s.cval = calloc(x->n_opts + 1, sizeof(*s.cval));
	s.alone = calloc(x->n_opts + 1, sizeof(*s.alone));
	s.row = calloc(P + 1, sizeof(*s.row));
	s.nrow = calloc(P + 1, sizeof(*s.nrow));
	gain = calloc(n, sizeof(*gain));
	if (!s.order || !s.cur || !s.load || !s.cnt || !s.rest || !s.alone ||
	    !s.rest_c || !s.cval || !s.row || !s.nrow || !gain) {
		errno = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sim_exact_item *it = &x->items[i];
		double lo = INFINITY, hi = 0;

		for (size_t k = 0; k < it->n_opt; k++)
			s.alone[it->opt_off + k] = alone_value(
				&s, it->cls, &x->opts[it->opt_off + k]);
		sort_options(x, &s, i);
		prune_options(x, &s, i);
		for (size_t k = 0; k < it->n_opt; k++) {
			double a = s.alone[it->opt_off + k];

			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
		gain[i] = it->n_opt ? hi - lo : 0;
		s.cur[i] = SIZE_MAX;
	}
	/* items with a single option first (their state is given), then
	 * the ones with most at stake */
	for (size_t i = 0, m = 0; i < n; i++) {
		size_t j = m;

		while (j > 0 && (x->items[s.order[j - 1]].n_opt > 1) &&
		       (x->items[i].n_opt == 1 ||
			gain[s.order[j - 1]] < gain[i])) {
			s.order[j] = s.order[j - 1];
			j--;
		}
		s.order[j] = i;
		m++;
	}
	rest_table(&s, s.alone, s.rest);
	if (capacity_mu(&s) < 0) {
		errno = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!x->items[i].n_opt) {
			errno = EINVAL;
			goto out;
		}
	if (incumbent(&s) < 0)
		goto out;
	dfs(&s, 0, 0, 0);
	x->nodes = s.nodes;
	x->proven = !s.stopped;
	x->value = s.best;
	if (s.best < 0) { /* stopped before any leaf: the first options */
		errno = EAGAIN;
		goto out;
	}
	/* pick[] indexes the options as sorted and pruned: back to tags */
	rv = 0;
out:
	free(s.order);
	free(s.cur);
	free(s.load);
	free(s.cnt);
	free(s.rest);
	free(s.rest_c);
	free(s.cval);
	free(s.alone);
	free(s.row);
	free(s.nrow);
	free(gain);
	return rv;
}
