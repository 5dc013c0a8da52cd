/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DFRA decision: the rules, in the order of DESIGN.md "The decision"
 * (decide.h has the contract).  One section per step:
 *
 *   1. default mapping      default_mapping(): the job's N_f forwarders
 *   2. anomaly avoidance    replace_excluded(), apply_defaults()
 *   3. eligibility          scale_check(), with S from compute_s()
 *   4. scaling              try_scale(), capped by upgrade_room()
 *   5. interference         interference_check(), try_isolate()
 *   6. selection            the pool's order is pool.c's, the blocks of
 *                           nodes per forwarder nodeset.c's
 *   7. expected gain        set_gain(); batch arbitration is batch.c
 *   8. output               alloc_decide_base(): requests and access,
 *                           precedence, shadow, refusal, rendering
 *                           (nodeset.c)
 *
 * Everything here works on topology indexes: node ids, forwarder indexes.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "common/units.h"
#include "policies/classify.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* "s" to follow a count's noun in a reason, so that 1 reads singular. */
const char *alloc_plural(uintmax_t n)
{
	return n == 1 ? "" : "s";
}

/* ---- the decision object ---------------------------------------------- */

/* d->forwarders and its flags: in the decision's room, else each its
 * own allocation. */
static void free_forwarders(struct alloc_decision *d)
{
	if (d->forwarders != d->fwd_room)
		free(d->forwarders);
	if (d->private_fwd != d->priv_room)
		free(d->private_fwd);
	d->forwarders = NULL;
	d->private_fwd = NULL;
}

void alloc_blocks_free(struct alloc_decision *d)
{
	if (d->blocks != d->blk_room)
		free(d->blocks);
	d->blocks = NULL;
	d->n_blocks = 0;
}

int alloc_blocks_room(struct alloc_decision *d, size_t n)
{
	alloc_blocks_free(d);
	d->blocks = n <= sizeof(d->blk_room) / sizeof(d->blk_room[0])
			    ? d->blk_room
			    : malloc(n * sizeof(*d->blocks));
	return d->blocks ? 0 : -1;
}

void alloc_decision_destroy(struct alloc_decision *d)
{
	int saved = errno;

	if (!d)
		return;
	if (d->job_id != d->id_room)
		free(d->job_id);
	free(d->reason_text);
	if (d->reasons != d->reason_room)
		free(d->reasons);
	if (d->defaults != d->def_room)
		free(d->defaults);
	free_forwarders(d);
	alloc_blocks_free(d);
	free(d->excluded_osts);
	free(d->profile.bw);
	/* rendered (alloc_render()): the strings and the arrays pointing
	 * into them live in d->strings; others were given one by one */
	if (!d->strings) {
		for (size_t i = 0; i < d->n_mapping; i++)
			free(d->mapping[i].nodes);
		free(d->mapping);
		for (size_t i = 0; i < d->n_forwarders; i++)
			free(d->forwarder_names ? d->forwarder_names[i] : NULL);
		free(d->forwarder_names);
		for (size_t i = 0; i < d->n_excluded_osts; i++)
			free(d->ost_names ? d->ost_names[i] : NULL);
		free(d->ost_names);
	}
	free(d->strings);
	free(d);
	errno = saved;
}

/* Longest reason: a longer one is cut, as snprintf cuts. */
#define REASON_MAX 512
/* reason_text's first room */
#define REASON_FIRST 1000

int alloc_reason(struct alloc_decision *d, const char *fmt, ...)
{
	char line[REASON_MAX];
	char **p;
	va_list ap;
	size_t n;

	if (d->dry)
		return 0;
	/* room for REASON_ROOM (8) in the decision, then for twice a power
	 * of two: grown when the count reaches 0, 8, 16, ... (a count taken
	 * back, as try_scale() does, finds room up to its next power of
	 * two) */
	if (!d->n_reasons && !d->reasons) {
		d->reasons = d->reason_room; /* the first 8: no allocation */
	} else if (!d->n_reasons || (d->n_reasons >= REASON_ROOM &&
				     !(d->n_reasons & (d->n_reasons - 1)))) {
		size_t room = d->n_reasons ? 2 * d->n_reasons : REASON_ROOM;

		if (d->reasons == d->reason_room) {
			if ((p = malloc(room * sizeof(*p))))
				memcpy(p, d->reasons,
				       d->n_reasons * sizeof(*p));
		} else {
			p = realloc(d->reasons, room * sizeof(*p));
		}
		if (!p)
			return -1;
		d->reasons = p;
	}
	/* the text is formatted on the stack, then appended to reason_text
	 * (one after the other, each ended by its NUL); when reason_text
	 * moves, the reasons before follow it.  Its first room (under
	 * malloc's small-block limit) holds a decision's usual reasons. */
	va_start(ap, fmt);
	n = units_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (d->reason_cap - d->reason_used < n + 1) {
		size_t cap = d->reason_cap ? 2 * d->reason_cap : REASON_FIRST;
		char *t, *q;

		while (cap - d->reason_used < n + 1)
			cap *= 2;
		if (!(t = realloc(d->reason_text, cap)))
			return -1;
		q = t;
		for (size_t i = 0; i < d->n_reasons; i++) {
			d->reasons[i] = q;
			q += strlen(q) + 1;
		}
		d->reason_text = t;
		d->reason_cap = cap;
	}
	p = d->reasons;
	p[d->n_reasons] = d->reason_text + d->reason_used;
	memcpy(p[d->n_reasons], line, n + 1);
	d->reason_used += n + 1;
	d->n_reasons++;
	return 0;
}

/* The reasons after the first `keep` taken back (their text too). */
static void reasons_keep(struct alloc_decision *d, size_t keep)
{
	if (keep >= d->n_reasons)
		return;
	d->reason_used = (size_t)(d->reasons[keep] - d->reason_text);
	d->n_reasons = keep;
}

static const char *size_str(uint64_t v, char *buf, size_t len)
{
	const double gib = 1024.0 * 1024 * 1024;

	if (v >= (uint64_t)gib)
		units_format(buf, len, "%.4gGiB", (double)v / gib);
	else
		units_format(buf, len, "%llu bytes", (unsigned long long)v);
	return buf;
}

static int copy_profile(struct alloc_decision *d, const struct alloc_profile *p)
{
	if (!p)
		return 0;
	d->has_profile = true;
	d->profile = *p;
	d->profile.bw = NULL;
	if (p->n_bw) {
		d->profile.bw = malloc(p->n_bw * sizeof(*p->bw));
		if (!d->profile.bw)
			return -1;
		memcpy(d->profile.bw, p->bw, p->n_bw * sizeof(*p->bw));
	}
	return 0;
}

/* The forwarders the job gets, in block order, and which are private. */
static int set_forwarders(struct alloc_decision *d, const uint32_t *fw,
			  const bool *priv, size_t n)
{
	size_t room = n ? n : 1;

	free_forwarders(d);
	if (room <= sizeof(d->fwd_room) / sizeof(d->fwd_room[0])) {
		d->forwarders = d->fwd_room;
		d->private_fwd = d->priv_room;
	} else {
		d->forwarders = malloc(room * sizeof(*d->forwarders));
		d->private_fwd = malloc(room * sizeof(*d->private_fwd));
		if (!d->forwarders || !d->private_fwd)
			return -1;
	}
	if (n) { /* none: direct file-system access */
		memcpy(d->forwarders, fw, n * sizeof(*fw));
		memcpy(d->private_fwd, priv, n * sizeof(*priv));
	}
	d->n_forwarders = n;
	return 0;
}

/* ---- working state ---------------------------------------------------- */

int alloc_scratch_init(struct alloc_scratch *s, const struct alloc_ctx *cx)
{
	size_t n = cx->t->n_forwarders + 1;

	memset(s, 0, sizeof(*s));
	s->cnt = calloc(n, sizeof(*s->cnt));
	s->gweight = calloc(cx->n_groups + 1, sizeof(*s->gweight));
	s->defaults = malloc(n * sizeof(*s->defaults));
	s->pool_fwd = malloc(n * sizeof(*s->pool_fwd));
	s->subst = malloc(n * sizeof(*s->subst));
	s->pool_released = malloc(n * sizeof(*s->pool_released));
	s->fw = malloc(2 * n * sizeof(*s->fw));
	s->priv = malloc(2 * n * sizeof(*s->priv));
	s->repl = malloc(2 * n * sizeof(*s->repl));
	s->pool.idle = malloc(n * sizeof(*s->pool.idle));
	s->pool.place = malloc((2 * cx->n_groups + n) * sizeof(*s->pool.place));
	s->pool.bucket = malloc(n * sizeof(*s->pool.bucket));
	s->pool.b_off = malloc((cx->n_groups + 1) * sizeof(*s->pool.b_off));
	s->pool.b_n = malloc((cx->n_groups + 1) * sizeof(*s->pool.b_n));
	if (!s->cnt || !s->gweight || !s->defaults || !s->pool_fwd ||
	    !s->subst || !s->pool_released || !s->fw || !s->priv || !s->repl ||
	    !s->pool.idle || !s->pool.place || !s->pool.bucket ||
	    !s->pool.b_off || !s->pool.b_n) {
		alloc_scratch_free(s);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void alloc_defmap_free(struct alloc_defmap *m)
{
	if (m->fwd != m->room)
		free(m->fwd);
	memset(m, 0, sizeof(*m));
}

void alloc_scratch_free(struct alloc_scratch *s)
{
	free(s->cnt);
	free(s->gweight);
	free(s->defaults);
	free(s->pool_fwd);
	free(s->subst);
	free(s->pool_released);
	free(s->fw);
	free(s->priv);
	free(s->repl);
	free(s->pool.idle);
	free(s->pool.place);
	free(s->pool.bucket);
	free(s->pool.b_off);
	free(s->pool.b_n);
	memset(s, 0, sizeof(*s));
}

struct work {
	const struct alloc_ctx *cx;
	const struct topology *t;
	const struct policy *p;
	const struct alloc_ledger *l;
	const struct alloc_health *h;
	const struct alloc_job *job;
	struct alloc_decision *d;
	uint32_t *cnt;	   /* per forwarder: job nodes mapped by default */
	uint64_t *gweight; /* per group: job nodes served by default */
	struct alloc_pool pool;
	struct alloc_scratch *ws;
	/* isolation without a curve (interference_check()): the harm of
	 * the default mapping and what the job needs over its I/O time */
	struct alloc_harm harm;
	uint32_t held; /* most jobs on one of its default forwarders */
};

/* Back to all 0: the counts of the job's default forwarders and groups
 * (ws->defaults holds them, also after a node outside the topology). */
static void scratch_clear(struct work *w)
{
	if (!w->d || !w->ws)
		return;
	for (size_t i = 0; i < w->d->n_defaults; i++) {
		uint32_t f = w->ws->defaults[i];

		w->cnt[f] = 0;
		w->gweight[w->cx->group[f]] = 0;
	}
}

struct plan {
	bool considered, allowed, shadow, asked;
	bool want_scale, want_isolate;
	bool upgrade_denied;
	size_t n_excluded; /* excluded default forwarders */
};

/* ---- 1. default mapping ----------------------------------------------- */

/* The job's default forwarders (N_f of them, by first appearance) and how
 * many of its nodes each network group serves (for the pool's order).
 * -1 with errno EINVAL and err for a node outside the topology. */
static int default_mapping(struct work *w, fwd_error_t *err)
{
	struct alloc_decision *d = w->d;
	struct alloc_defmap *m = w->ws->defmap;
	uint32_t *def = w->ws->defaults;

	if (m && m->fwd) {
		d->n_defaults = m->n;
		memcpy(def, m->fwd, m->n * sizeof(*def));
		for (size_t i = 0; i < m->n; i++)
			w->cnt[def[i]] = m->fwd[m->n + i];
	} else if (topo_default_forwarders(w->t, w->job->node_ids,
					   w->job->n_nodes, w->cnt, def,
					   &d->n_defaults, err) < 0) {
		return errprefix(err, "job %s", w->job->job_id);
	} else if (m) {
		m->fwd = 2 * d->n_defaults <= sizeof(m->room) / sizeof(*m->room)
				 ? m->room
				 : malloc(2 * d->n_defaults * sizeof(*m->fwd));
		if (!m->fwd) {
			errno = ENOMEM;
			return errprintf(err, "decision: out of memory");
		}
		m->n = d->n_defaults;
		memcpy(m->fwd, def, m->n * sizeof(*def));
		for (size_t i = 0; i < m->n; i++)
			m->fwd[m->n + i] = w->cnt[def[i]];
	}
	for (size_t i = 0; i < d->n_defaults; i++) {
		uint32_t f = def[i];

		w->gweight[w->cx->group[f]] += w->cnt[f];
	}
	d->n_f = (uint32_t)d->n_defaults;
	d->defaults =
		d->n_defaults <= sizeof(d->def_room) / sizeof(d->def_room[0])
			? d->def_room
			: malloc(d->n_defaults * sizeof(*d->defaults));
	if (!d->defaults) {
		errno = ENOMEM;
		return errprintf(err, "decision: out of memory");
	}
	memcpy(d->defaults, def, d->n_defaults * sizeof(*def));
	return 0;
}

/* ---- 2. anomaly avoidance --------------------------------------------- */

/* Excluded OSTs are listed in the decision (the exclusion itself is
 * applied by the monitor's command). */
static int excluded_osts(struct work *w)
{
	const struct alloc_health *h = w->h;
	struct alloc_decision *d = w->d;

	for (size_t o = 0; h && h->ost && o < w->t->n_osts; o++) {
		if (h->ost[o] != FWD_HEALTH_EXCLUDED)
			continue;
		if (!d->excluded_osts &&
		    !(d->excluded_osts =
			      malloc(w->t->n_osts * sizeof(*d->excluded_osts))))
			return -1;
		d->excluded_osts[d->n_excluded_osts++] = (uint32_t)o;
	}
	return 0;
}

/* Keep the defaults (replacing excluded ones as far as the pool allows),
 * return the substitution table. */
static int replace_excluded(struct work *w, uint32_t *subst, bool *repl,
			    size_t *n_replaced)
{
	struct alloc_decision *d = w->d;

	*n_replaced = 0;
	for (size_t i = 0; i < d->n_defaults; i++) {
		uint32_t f = d->defaults[i];

		repl[i] = false;
		subst[f] = f;
		if (alloc_fwd_health(w->h, f) != FWD_HEALTH_EXCLUDED)
			continue;
		if (!alloc_pool_left(&w->pool)) {
			if (alloc_reason(d,
					 "forwarder %s is excluded but no "
					 "healthy idle forwarder is left to "
					 "replace it",
					 w->t->forwarders[f].name) < 0)
				return -1;
			continue;
		}
		subst[f] =
			alloc_pool_take_group(&w->pool, w->cx, w->cx->group[f]);
		repl[i] = true;
		(*n_replaced)++;
		if (alloc_reason(d, "forwarder %s is excluded: replaced by %s",
				 w->t->forwarders[f].name,
				 w->t->forwarders[subst[f]].name) < 0)
			return -1;
	}
	return 0;
}

/* The default mapping, with anomaly replacement when `anomalies`. */
static int apply_defaults(struct work *w, bool anomalies)
{
	struct alloc_decision *d = w->d;
	uint32_t *subst = w->ws->subst, *fw = w->ws->fw;
	bool *priv = w->ws->priv, *repl = w->ws->repl;
	size_t n_repl = 0;
	int rv = -1;

	/* only the job's default forwarders are ever looked up */
	for (size_t i = 0; i < d->n_defaults; i++)
		subst[d->defaults[i]] = d->defaults[i];
	if (anomalies && replace_excluded(w, subst, repl, &n_repl) < 0)
		goto out;
	for (size_t i = 0; i < d->n_defaults; i++) {
		fw[i] = subst[d->defaults[i]];
		priv[i] = fw[i] != d->defaults[i];
	}
	if (set_forwarders(d, fw, priv, d->n_defaults) < 0 ||
	    (!d->dry && alloc_blocks_default(w->t, w->job->node_ids,
					     w->job->n_nodes, subst, d) < 0))
		goto out;
	d->rule_action = n_repl ? FWD_ACT_AVOID_ANOMALY : FWD_ACT_DEFAULT;
	rv = 0;
out:
	return rv;
}

/* ---- 3. eligibility for scaling --------------------------------------- */

/* B_f: mean benchmarked bandwidth of the job's default forwarders. */
static double mean_bf(const struct work *w)
{
	const struct alloc_decision *d = w->d;
	double bf = 0;

	for (size_t i = 0; i < d->n_defaults; i++)
		bf += w->t->forwarders[d->defaults[i]].bandwidth_bps;
	return d->n_defaults ? bf / (double)d->n_defaults : 0;
}

/* S = ceil(N_io * B_c / B_f); it sizes both scaling and isolation. */
static void compute_s(struct work *w)
{
	const struct alloc_profile *pr = w->job->profile;
	double bf = mean_bf(w), s;

	s = bf > 0 ? ceil((double)pr->io_nodes * pr->node_bandwidth_bps / bf)
		   : 0;
	w->d->s = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* V > V_min, N_io > N_min, not metadata-bound, and S > N_f; returns (in
 * *want) whether scaling is wanted. */
static int scale_check(struct work *w, bool *want)
{
	const struct policy_scale *sc = &w->p->decision.scale;
	const struct alloc_profile *pr = w->job->profile;
	struct alloc_decision *d = w->d;
	char a[32], b[32], c[32];
	double bf = mean_bf(w);

	*want = false;
	if (pr->io_volume_bytes <= sc->min_volume)
		return alloc_reason(d,
				    "not eligible for scaling: I/O volume %s "
				    "<= V_min %s",
				    size_str(pr->io_volume_bytes, a, sizeof(a)),
				    size_str(sc->min_volume, b, sizeof(b)));
	if (pr->io_nodes <= sc->min_io_nodes)
		return alloc_reason(d,
				    "not eligible for scaling: %u I/O node%s "
				    "<= N_min %u",
				    pr->io_nodes, alloc_plural(pr->io_nodes),
				    sc->min_io_nodes);
	if (pr->mdops >= sc->max_metadata_rate)
		return alloc_reason(d,
				    "not eligible for scaling: metadata-bound "
				    "(%.0f ops/s >= %.0f ops/s)",
				    pr->mdops, sc->max_metadata_rate);
	if (d->dry) {
		*want = d->s > d->n_f;
		return 0;
	}
	if (d->s <= d->n_f)
		return alloc_reason(
			d,
			"no scaling needed: S = %u <= N_f = %u (N_io %u x B_c "
			"%s / B_f %s)",
			d->s, d->n_f, pr->io_nodes,
			units_short_rate(pr->node_bandwidth_bps, a, sizeof(a)),
			units_short_rate(bf, b, sizeof(b)));
	*want = true;
	return alloc_reason(
		d,
		"demanding: S = %u > N_f = %u (N_io %u x B_c %s / B_f %s = %s "
		"needed)",
		d->s, d->n_f, pr->io_nodes,
		units_short_rate(pr->node_bandwidth_bps, a, sizeof(a)),
		units_short_rate(bf, b, sizeof(b)),
		units_short_rate((double)pr->io_nodes * pr->node_bandwidth_bps,
				 c, sizeof(c)));
}

/* ---- 4. scaling ------------------------------------------------------- */

/* Upgrade capacity after replacements: idle minus reserve, and the
 * pool-share cap. */
static size_t upgrade_room(struct work *w, size_t want, size_t *share_cap,
			   size_t *reserve_room)
{
	const struct policy_caps *c = &w->p->decision.caps;
	size_t left = alloc_pool_left(&w->pool);

	*share_cap = (size_t)floor(c->max_pool_share * (double)w->pool.base);
	*reserve_room = left > c->reserve ? left - c->reserve : 0;
	if (want > *share_cap)
		want = *share_cap;
	if (want > *reserve_room)
		want = *reserve_room;
	return want;
}

/* "; refused by <the cap>" for a refusal's reason (pool_limit()), or ""
 * when no cap refused. */
static const char *pool_limit(const struct work *w, size_t want,
			      size_t share_cap, size_t reserve_room, char *buf,
			      size_t len);

static const char *refused_by(const struct work *w, size_t k, size_t share_cap,
			      size_t reserve_room, char *buf, size_t len)
{
	char lim[160];

	if (*pool_limit(w, k, share_cap, reserve_room, lim, sizeof(lim)))
		units_format(buf, len, "; refused by %s", lim);
	else
		buf[0] = '\0';
	return buf;
}

/* One reason line for each cap that bit. */
static int cap_reasons(struct work *w, const char *what, size_t wanted,
		       size_t got, size_t share_cap, size_t reserve_room)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;
	size_t left = alloc_pool_left(&w->pool);

	if (got >= wanted)
		return 0;
	if (wanted > share_cap &&
	    alloc_reason(d,
			 "%s capped by max_pool_share %.2f: at most %zu of "
			 "%zu idle forwarder%s",
			 what, c->max_pool_share, share_cap, w->pool.base,
			 alloc_plural(w->pool.base)) < 0)
		return -1;
	if (wanted > reserve_room &&
	    alloc_reason(d,
			 "%s capped by the pool: %zu idle healthy "
			 "forwarder%s, %u kept in reserve",
			 what, left, alloc_plural(left), c->reserve) < 0)
		return -1;
	return 0;
}

/* Scale: defaults (with replacements) + private extras.  Returns 1 when
 * granted, 0 when not (reasons added, pool untouched), -1 on ENOMEM. */
static int try_scale(struct work *w, bool anomalies)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;
	size_t total = d->s, extras, want, share_cap, reserve_room;
	size_t saved_next = w->pool.next, n_repl = 0, nd = d->n_defaults;
	char capname[200];
	uint32_t *subst = w->ws->subst, *fw = w->ws->fw;
	bool *priv = w->ws->priv, *repl = w->ws->repl;
	size_t saved_reasons;
	int rv = -1;

	if (total > c->max_forwarders_per_job) {
		if (alloc_reason(d,
				 "scale capped by max_forwarders_per_job: %u "
				 "of S = %u",
				 c->max_forwarders_per_job, d->s) < 0)
			return -1;
		total = c->max_forwarders_per_job;
	}
	if (total > w->job->n_nodes) {
		if (alloc_reason(d, "scale capped at the job's %zu node%s",
				 w->job->n_nodes,
				 alloc_plural(w->job->n_nodes)) < 0)
			return -1;
		total = w->job->n_nodes;
	}
	if (total <= nd) {
		if (alloc_reason(
			    d,
			    "scale refused: the caps leave no forwarder "
			    "beyond the %zu default one%s%s",
			    nd, alloc_plural(nd),
			    c->max_forwarders_per_job <= nd
				    ? "; refused by "
				      "decision.caps.max_forwarders_per_job"
				    : "") < 0)
			return -1;
		return 0;
	}
	/* only the job's default forwarders are ever looked up */
	for (size_t i = 0; i < d->n_defaults; i++)
		subst[d->defaults[i]] = d->defaults[i];
	saved_reasons = d->n_reasons;
	if (anomalies && replace_excluded(w, subst, repl, &n_repl) < 0)
		goto out;
	want = total - nd;
	extras = upgrade_room(w, want, &share_cap, &reserve_room);
	if (!extras) {
		/* Undo replacements: the caller falls back to the next rule,
		 * which replaces again. */
		w->pool.next = saved_next;
		reasons_keep(d, saved_reasons);
		if (!d->dry &&
		    alloc_reason(d,
				 "scale refused: no idle forwarder available "
				 "(%zu idle healthy, %u in reserve, pool share "
				 "cap %zu)%s",
				 alloc_pool_left(&w->pool), c->reserve,
				 share_cap,
				 refused_by(w, 1, share_cap, reserve_room,
					    capname, sizeof(capname))) < 0)
			goto out;
		rv = 0;
		goto out;
	}
	if (cap_reasons(w, "scale", want, extras, share_cap, reserve_room) < 0)
		goto out;
	for (size_t i = 0; i < nd; i++) {
		fw[i] = subst[d->defaults[i]];
		priv[i] = fw[i] != d->defaults[i];
	}
	for (size_t i = 0; i < extras; i++) {
		fw[nd + i] = alloc_pool_take(&w->pool);
		priv[nd + i] = true;
	}
	if (set_forwarders(d, fw, priv, nd + extras) < 0 ||
	    (!d->dry && alloc_blocks_balanced(d, w->job->n_nodes) < 0))
		goto out;
	if (alloc_reason(
		    d, "scale: %zu forwarder%s (%zu default + %zu private)",
		    nd + extras, alloc_plural(nd + extras), nd, extras) < 0)
		goto out;
	d->rule_action = FWD_ACT_SCALE;
	rv = 1;
out:
	return rv;
}

/* ---- 5. interference -------------------------------------------------- */

static uint32_t default_sharers(const struct work *w, uint32_t *vulnerable);

/* A vulnerable job next to a disruptive job already running: private
 * forwarders (the neighbour cannot be moved).  0 or -1 (ENOMEM). */
static int victim_check(struct work *w, bool *isolate)
{
	const struct policy_interference *in = &w->p->decision.interference;
	const struct alloc_profile *pr = w->job->profile;
	char why[160];

	if (!policy_job_vulnerable(in, pr->iops))
		return 0;
	for (size_t i = 0; i < w->d->n_defaults; i++) {
		const struct alloc_ledger_entry *const *hold;
		size_t n = alloc_ledger_holders(w->l, w->d->defaults[i], &hold);

		for (size_t k = 0; k < n; k++) {
			const struct alloc_ledger_entry *e = hold[k];

			/* Unknown size: an N-1 holder counts as large. */
			if (!policy_job_disruptive(
				    in, e->io_mode == FWD_IO_N_1,
				    e->n_nodes ? e->n_nodes : SIZE_MAX,
				    e->mdops, e->bandwidth_bps,
				    w->d->dry ? NULL : why, sizeof(why)))
				continue;
			*isolate = true;
			return alloc_reason(
				w->d,
				"vulnerable (%.0f IOPS > %.0f) and neighbour "
				"job %s on %s is disruptive (%s): private "
				"forwarders",
				pr->iops, in->vulnerable_iops, e->job_id,
				w->t->forwarders[w->d->defaults[i]].name, why);
		}
	}
	return 0;
}

/* What the default mapping gives a job without a curve: DFRA's
 * min(N_f B_f, N_io B_c), the peak standing for N_io B_c when the profile
 * has no B_c. */
static double default_rate(const struct work *w)
{
	const struct alloc_profile *pr = w->job->profile;
	double rate = (double)pr->io_nodes * pr->node_bandwidth_bps;

	if (!(rate > 0))
		rate = pr->peak_bandwidth_bps;
	return fmin((double)w->d->n_f * mean_bf(w), rate);
}

/* The reason's account of a harm: "H s (V at B, x N vulnerable
 * neighbours + 1)", with the metadata load when it is the longer. */
static const char *harm_text(const struct work *w, const struct alloc_harm *h,
			     double base, char *buf, size_t len)
{
	const struct alloc_profile *pr = w->job->profile;
	char a[32], b[32];

	if (h->md_s > h->data_s)
		units_format(
			buf, len,
			"%.3g s (metadata: %.0f ops/s over %.3g s of I/O = "
			"%.3g s at %.0f ops/s, x %u vulnerable neighbour%s + "
			"1)",
			h->harm, pr->mdops, h->io_seconds, h->md_s,
			w->p->decision.interference.metadata_heavy_rate,
			h->vulnerable, alloc_plural(h->vulnerable));
	else
		units_format(
			buf, len,
			"%.3g s (%s at %s, x %u vulnerable neighbour%s + 1)",
			h->harm, size_str(pr->io_volume_bytes, a, sizeof(a)),
			units_short_rate(base, b, sizeof(b)), h->vulnerable,
			alloc_plural(h->vulnerable));
	return buf;
}

/* Disruptive, or vulnerable next to a disruptive neighbour (the policy's
 * reading, policy_job_disruptive()); returns (in *want) whether the job
 * should be isolated.  A disruptive job is, by the harm it would do, as
 * with a curve: the longer of its data I/O on the default mapping and
 * its metadata load, times 1 + the vulnerable jobs on its defaults; a
 * short burst stays. */
static int interference_check(struct work *w, bool *want)
{
	const struct policy_interference *in = &w->p->decision.interference;
	const struct alloc_profile *pr = w->job->profile;
	struct alloc_decision *d = w->d;
	double base = default_rate(w);
	uint32_t vuln;
	char why[160], h[200];

	*want = false;
	w->held = default_sharers(w, &vuln);
	alloc_harm_of(in, pr, base, vuln, &w->harm);
	if (policy_job_disruptive(
		    in, pr->io_mode == FWD_IO_N_1, w->job->n_nodes, pr->mdops,
		    pr->peak_bandwidth_bps, d->dry ? NULL : why, sizeof(why))) {
		*want = w->harm.harm >= w->p->decision.curve.min_harm;
		/* a batch's first pass keeps no reasons: not formatted */
		if (!d->dry &&
		    alloc_reason(
			    d,
			    "disruptive (%s): expected harm %s %s "
			    "min_harm %.3g s%s",
			    why, harm_text(w, &w->harm, base, h, sizeof(h)),
			    *want ? ">=" : "<", w->p->decision.curve.min_harm,
			    *want ? ": private forwarders" : "") < 0)
			return -1;
		if (*want)
			return 0;
	}
	return victim_check(w, want);
}

/* The job's forwarders become n private ones taken from the pool, its
 * nodes spread over them in balanced blocks.  0, or -1 ENOMEM. */
static int take_private(struct work *w, size_t n)
{
	uint32_t *fw = w->ws->fw;
	bool *priv = w->ws->priv;

	for (size_t i = 0; i < n; i++) {
		fw[i] = alloc_pool_take(&w->pool);
		priv[i] = true;
	}
	if (set_forwarders(w->d, fw, priv, n) < 0 ||
	    (!w->d->dry && alloc_blocks_balanced(w->d, w->job->n_nodes) < 0))
		return -1;
	return 0;
}

/* The policy setting that leaves fewer than `want` pool forwarders
 * (share_cap and reserve_room as upgrade_room() gives them), named by its
 * policy key for a reason: decision.caps.max_pool_share or
 * decision.caps.reserve, or the pool itself; "" when none does. */
static const char *pool_limit(const struct work *w, size_t want,
			      size_t share_cap, size_t reserve_room, char *buf,
			      size_t len)
{
	const struct policy_caps *c = &w->p->decision.caps;
	size_t left = alloc_pool_left(&w->pool);

	if (!left)
		units_format(buf, len, "the pool (no idle healthy forwarder)");
	else if (share_cap < want && share_cap <= reserve_room)
		units_format(
			buf, len,
			"decision.caps.max_pool_share %.2f (at most %zu of "
			"%zu idle forwarder%s)",
			c->max_pool_share, share_cap, w->pool.base,
			alloc_plural(w->pool.base));
	else if (reserve_room < want && c->reserve)
		units_format(buf, len,
			     "decision.caps.reserve %u (%zu idle healthy "
			     "forwarder%s, %u kept)",
			     c->reserve, left, alloc_plural(left),
			     c->reserve < left ? c->reserve : (unsigned)left);
	else if (reserve_room < want)
		units_format(buf, len,
			     "the pool (%zu idle healthy forwarder%s)", left,
			     alloc_plural(left));
	else
		buf[0] = '\0';
	return buf;
}

/*
 * Isolate: the private forwarders the job needs over its I/O time (what
 * it needs, V / io_seconds, over B_f; at least 1, at most its nodes and
 * max_forwarders_per_job), from the pool.  When the pool's caps leave
 * fewer, the best smaller option: fewer private forwarders when they serve
 * the job at least as well as its shared defaults, else the defaults plus
 * the extras there are when they serve it better, else the default
 * mapping; every reason names the cap that limited it.  Returns 1 when
 * granted, 0 when not (reasons added, pool untouched), -1 on ENOMEM.
 */
static int try_isolate(struct work *w, bool anomalies)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;
	const struct alloc_harm *hm = &w->harm;
	double bf = mean_bf(w), need_bps = hm->need_bps, v_def, v_got;
	size_t need, capped, got, share_cap, reserve_room, kcap, e;
	char a[32], b[32], lim[160];
	const char *capname = NULL;
	uint32_t s;
	int rv;

	need = bf > 0 && need_bps > 0 ? (size_t)ceil(need_bps / bf) : d->n_f;
	if (need < 1)
		need = 1;
	if (!d->dry &&
	    alloc_reason(d,
			 "isolation needs %zu private forwarder%s (%s over "
			 "its I/O time of %.3g s / B_f %s)",
			 need, alloc_plural(need),
			 units_short_rate(need_bps, a, sizeof(a)),
			 hm->io_seconds,
			 units_short_rate(bf, b, sizeof(b))) < 0)
		return -1;
	capped = need;
	if (capped > c->max_forwarders_per_job) {
		capped = c->max_forwarders_per_job;
		capname = "decision.caps.max_forwarders_per_job";
	}
	if (capped > w->job->n_nodes) {
		capped = w->job->n_nodes;
		capname = "the job's node count";
	}
	got = upgrade_room(w, capped, &share_cap, &reserve_room);
	if (got < capped && !d->dry) /* named in reasons only */
		capname = pool_limit(w, capped, share_cap, reserve_room, lim,
				     sizeof(lim));
	/* what the job gets on its shared defaults, and on `got` private */
	v_def = fmin((double)d->n_f * bf, need_bps) / (1.0 + w->held);
	v_got = fmin((double)got * bf, need_bps);
	if (got && (got == need || v_got >= v_def)) {
		if (got < need &&
		    alloc_reason(d,
				 "isolation capped by %s: %zu of the %zu "
				 "private forwarder%s it needs",
				 capname, got, need, alloc_plural(need)) < 0)
			return -1;
		if (take_private(w, got) < 0 ||
		    alloc_reason(d, "isolate: %zu private forwarder%s", got,
				 alloc_plural(got)) < 0)
			return -1;
		d->rule_action = FWD_ACT_ISOLATE;
		return 1;
	}
	/* The defaults plus extras: the job stays on its shared defaults but
	 * spreads its I/O over more forwarders. */
	kcap = c->max_forwarders_per_job < w->job->n_nodes
		       ? c->max_forwarders_per_job
		       : w->job->n_nodes;
	/* only where scaling may serve it: not metadata-bound, scaling on
	 * and not an isolate-only request */
	e = kcap > d->n_f && w->p->decision.scale.enabled &&
			    w->job->request != FWD_REQ_ISOLATE &&
			    w->job->profile->mdops <
				    w->p->decision.scale.max_metadata_rate
		    ? upgrade_room(w, kcap - d->n_f, &share_cap, &reserve_room)
		    : 0;
	while (e > 1 && fmin((double)(d->n_f + e - 1) * bf, need_bps) >=
				fmin((double)(d->n_f + e) * bf, need_bps))
		e--; /* no more than it can use */
	if (e && fmin((double)(d->n_f + e) * bf, need_bps) >
			 fmin((double)d->n_f * bf, need_bps)) {
		if (!d->dry &&
		    alloc_reason(d,
				 "isolation capped by %s: %zu of the %zu "
				 "private forwarder%s it needs would serve it "
				 "slower than its defaults (%s < %s); best "
				 "smaller option: its defaults + %zu "
				 "extra%s",
				 capname, got, need, alloc_plural(need),
				 units_short_rate(v_got, a, sizeof(a)),
				 units_short_rate(v_def, b, sizeof(b)), e,
				 alloc_plural(e)) < 0)
			return -1;
		s = d->s;
		d->s = (uint32_t)(d->n_f + e);
		rv = try_scale(w, anomalies);
		d->s = s;
		return rv;
	}
	if (d->dry) /* a batch's first pass keeps no reasons */
		return 0;
	return alloc_reason(d,
			    "isolation refused: %s leaves %zu of the %zu "
			    "private forwarder%s it needs (%s, its defaults "
			    "give %s) and no extras serve it better: default "
			    "mapping",
			    capname ? capname : "the pool", got, need,
			    alloc_plural(need),
			    units_short_rate(v_got, a, sizeof(a)),
			    units_short_rate(v_def, b, sizeof(b))) < 0
		       ? -1
		       : 0;
}

/* ---- 7. expected gain ------------------------------------------------- */

/* Expected bandwidth at k forwarders: the profile's curve when it has one
 * (proportional below the first measurement, linear between, flat after
 * the last), else min(k * B_f, N_io * B_c). */
static double est_bw(const struct alloc_profile *pr, double bf, double k)
{
	if (pr->n_bw) {
		const struct alloc_bw_point *b = pr->bw;
		size_t n = pr->n_bw;

		/* Below the first measurement: proportional to k. */
		if (k <= b[0].k)
			return b[0].bps * k / b[0].k;
		for (size_t i = 1; i < n; i++) {
			if (k <= b[i].k) {
				double x = (k - b[i - 1].k) /
					   (double)(b[i].k - b[i - 1].k);

				return b[i - 1].bps +
				       x * (b[i].bps - b[i - 1].bps);
			}
		}
		return b[n - 1].bps; /* no extrapolation past measurements */
	}
	return fmin(k * bf, (double)pr->io_nodes * pr->node_bandwidth_bps);
}

/* The upgrade's gain over the default mapping, for batch ranking. */
static void set_gain(struct work *w, bool upgraded)
{
	const struct alloc_profile *pr = w->job->profile;
	struct alloc_decision *d = w->d;
	double bf;

	if (!pr)
		return;
	bf = mean_bf(w);
	if (upgraded)
		d->gain_bps = est_bw(pr, bf, (double)d->n_forwarders) -
			      est_bw(pr, bf, (double)d->n_f);
	if (d->gain_bps < 0)
		d->gain_bps = 0;
}

/* ---- 7. curves: options, knapsack, harm (curve.c, mckp.c, harm.c) ----- */

/* k private forwarders from the pool.  1 granted, 0 not (reason added),
 * -1 ENOMEM. */
static int grant_private(struct work *w, uint32_t k, enum fwd_action act)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;
	size_t share_cap, reserve_room, got;
	char capname[200];

	got = upgrade_room(w, k, &share_cap, &reserve_room);
	if ((got < k || !got) && d->dry)
		return 0; /* a batch's first pass keeps no reasons */
	if (got < k || !got)
		return alloc_reason(
			       d,
			       "%s refused: %u private forwarder%s wanted, "
			       "%zu available (%zu idle healthy, %u in "
			       "reserve, pool share cap %zu)%s",
			       act == FWD_ACT_ISOLATE ? "isolation" : "scale",
			       k, alloc_plural(k), got,
			       alloc_pool_left(&w->pool), c->reserve, share_cap,
			       refused_by(w, k, share_cap, reserve_room,
					  capname, sizeof(capname))) < 0
			       ? -1
			       : 0;
	if (take_private(w, k) < 0 ||
	    alloc_reason(d, "%s: %u private forwarder%s",
			 act == FWD_ACT_ISOLATE ? "isolate" : "scale", k,
			 alloc_plural(k)) < 0)
		return -1;
	d->rule_action = act;
	return 1;
}

static const char *opt_name(enum alloc_opt_kind k)
{
	switch (k) {
	case ALLOC_OPT_EXTRAS:
		return "default + extras,";
	case ALLOC_OPT_PRIVATE:
		return "private,";
	case ALLOC_OPT_DIRECT:
		return "direct file-system access,";
	default:
		return "default";
	}
}

/* Direct file-system access: no forwarder at all. */
static int grant_direct(struct work *w)
{
	struct alloc_decision *d = w->d;

	if (set_forwarders(d, NULL, NULL, 0) < 0)
		return -1;
	alloc_blocks_free(d);
	d->rule_action = FWD_ACT_DIRECT;
	return alloc_reason(d, "direct: no forwarder") < 0 ? -1 : 1;
}

/* What one forwarder serving the application alone carries at most: its
 * best bandwidth per forwarder over the curve, at most B_f (the share of
 * a forwarder's time a job of value v spread over k forwarders takes is
 * v / k / rate; sim/SIM.md "Bandwidth" reads it the same way). */
static double curve_rate(const struct alloc_profile *pr, double bf)
{
	double r = 0;

	for (size_t i = 0; i < pr->n_bw; i++)
		if (pr->bw[i].k && pr->bw[i].bps / pr->bw[i].k > r)
			r = pr->bw[i].bps / pr->bw[i].k;
	return r > 0 && (bf <= 0 || r < bf) ? r : bf;
}

/* Jobs on the default forwarders (ledger), and how many are vulnerable. */
static uint32_t default_sharers(const struct work *w, uint32_t *vulnerable)
{
	const struct policy_interference *in = &w->p->decision.interference;
	uint32_t most = 0;

	*vulnerable = 0;
	for (size_t i = 0; i < w->d->n_defaults; i++) {
		const struct alloc_ledger_entry *const *hold;
		size_t n = alloc_ledger_holders(w->l, w->d->defaults[i], &hold);
		uint32_t v = 0;

		for (size_t k = 0; k < n; k++)
			v += policy_job_vulnerable(in, hold[k]->iops);
		if (n > most)
			most = (uint32_t)n;
		if (v > *vulnerable)
			*vulnerable = v;
	}
	return most;
}

/* Whether the curve rule decides this job, with the reasons when a gate
 * stops it (the job then keeps its default mapping). */
static int curve_gates(struct work *w, bool *pass)
{
	const struct policy *p = w->p;
	const struct policy_scale *sc = &p->decision.scale;
	const struct alloc_profile *pr = w->job->profile;
	char a[32], b[32];

	*pass = false;
	if (p->decision.curve.admin_floors) {
		if (pr->io_volume_bytes <= sc->min_volume)
			return alloc_reason(
				w->d, "not eligible: I/O volume %s <= V_min %s",
				size_str(pr->io_volume_bytes, a, sizeof(a)),
				size_str(sc->min_volume, b, sizeof(b)));
		if (pr->io_nodes <= sc->min_io_nodes)
			return alloc_reason(w->d,
					    "not eligible: %u I/O node%s <= "
					    "N_min %u",
					    pr->io_nodes,
					    alloc_plural(pr->io_nodes),
					    sc->min_io_nodes);
	}
	if (pr->mdops >= sc->max_metadata_rate)
		return alloc_reason(w->d,
				    "not eligible: metadata-bound (%.0f ops/s "
				    ">= %.0f ops/s)",
				    pr->mdops, sc->max_metadata_rate);
	*pass = true;
	return 0;
}

/* Why no private option was chosen within `cap` pool forwarders: the
 * cap that left none, or the pool's threshold. */
static const char *curve_limit(const struct work *w, uint32_t cap,
			       size_t share_cap, size_t reserve_room, char *buf,
			       size_t len)
{
	if (!cap)
		return pool_limit(w, 1, share_cap, reserve_room, buf, len);
	snprintf(buf, len,
		 "none is worth its pool forwarders at the pool's threshold");
	return buf;
}

/*
 * The curve rule (DESIGN.md step 7): the job's options valued from its
 * curve; the batch's knapsack choice when `plan` applies one, else the
 * online threshold; isolation when the job is disruptive and the harm of
 * leaving it on its defaults reaches min_harm.  1 upgraded, 0 not, -1
 * ENOMEM.
 */
static int curve_rule(struct work *w, struct plan *pl, struct alloc_plan *plan,
		      bool anomalies)
{
	const struct policy *p = w->p;
	const struct policy_caps *c = &p->decision.caps;
	const struct alloc_profile *pr = w->job->profile;
	const struct alloc_job *job = w->job;
	struct alloc_decision *d = w->d;
	struct alloc_opts own = {0}, *o = &own;
	struct alloc_option ch;
	uint32_t vuln, held, cap, kcap, used, total = 0;
	size_t share_cap, reserve_room;
	double bf = mean_bf(w), bmax = 0, base_v;
	bool isolate = false, pass;
	char why[160], a[32], b[32];
	int got = 0;

	compute_s(w);
	if (curve_gates(w, &pass) < 0)
		return -1;
	/* the gates stop scaling, not isolation (as without a curve: a
	 * metadata-heavy job is metadata-bound too) */
	if (!pass && (!p->decision.interference.enabled ||
		      job->request == FWD_REQ_SCALE)) {
		if (apply_defaults(w, anomalies) < 0)
			return -1;
		return 0;
	}
	held = default_sharers(w, &vuln);
	/* the default mapping's value, alone (read three times below) */
	base_v = alloc_curve_value(pr, bf, d->n_f, NULL);
	if (plan) {
		struct alloc_harm hh;

		plan->held_vulnerable = vuln;
		alloc_harm_of(&p->decision.interference, pr, base_v, 0, &hh);
		plan->harm_s = hh.harm;
		plan->vulnerable = policy_job_vulnerable(
			&p->decision.interference, pr->iops);
		plan->disruptive = policy_job_disruptive(
			&p->decision.interference, pr->io_mode == FWD_IO_N_1,
			job->n_nodes, pr->mdops, pr->peak_bandwidth_bps, NULL,
			0);
	}
	if (plan && plan->apply) {
		isolate = plan->opts.isolate;
	} else if (p->decision.interference.enabled &&
		   job->request != FWD_REQ_SCALE) {
		if (policy_job_disruptive(&p->decision.interference,
					  pr->io_mode == FWD_IO_N_1,
					  job->n_nodes, pr->mdops,
					  pr->peak_bandwidth_bps,
					  d->dry ? NULL : why, sizeof(why))) {
			struct alloc_harm hh;
			char ht[200];

			alloc_harm_of(&p->decision.interference, pr, base_v,
				      vuln, &hh);
			isolate = hh.harm >= p->decision.curve.min_harm;
			if (!d->dry &&
			    alloc_reason(
				    d,
				    "disruptive (%s): expected harm %s %s "
				    "min_harm %.3g s%s",
				    why,
				    harm_text(w, &hh, base_v, ht, sizeof(ht)),
				    isolate ? ">=" : "<",
				    p->decision.curve.min_harm,
				    isolate ? ": private forwarders" : "") < 0)
				return -1;
		}
		if (!isolate && victim_check(w, &isolate) < 0)
			return -1;
		if (job->request == FWD_REQ_ISOLATE)
			isolate = true;
	}
	/* not eligible (the gates above): only an isolation may upgrade it */
	if (!pass && !isolate) {
		if (apply_defaults(w, anomalies) < 0)
			return -1;
		return 0;
	}
	/* scaling off: only an isolation may upgrade the job */
	if (!p->decision.scale.enabled && !isolate) {
		if (alloc_reason(d, "scaling disabled by the policy") < 0 ||
		    apply_defaults(w, anomalies) < 0)
			return -1;
		return 0;
	}
	cap = (uint32_t)upgrade_room(w, SIZE_MAX, &share_cap, &reserve_room);
	if (cap > c->max_forwarders_per_job)
		cap = c->max_forwarders_per_job;
	if (cap > job->n_nodes)
		cap = (uint32_t)job->n_nodes;
	/* the most forwarders the job can use in all: options above it would
	 * be trimmed after valuation (try_scale()) */
	kcap = c->max_forwarders_per_job;
	if (kcap > job->n_nodes)
		kcap = (uint32_t)job->n_nodes;
	/* a batch's choice: its first pass valued the options already */
	if (plan && plan->apply
		    ? alloc_opts_regate(p, &plan->opts, pr, d->n_f,
					held + plan->batch_sharers, cap,
					isolate, o) < 0
		    : alloc_curve_options(
			      p, pr, bf, d->n_f,
			      held + (plan ? plan->batch_sharers : 0), cap,
			      kcap, isolate, !(plan && plan->collect), o) < 0)
		return -1;
	if (plan) {
		plan->curve = true;
		plan->first_default = d->n_defaults ? d->defaults[0] : 0;
		plan->held_sharers = held;
		plan->rate = curve_rate(pr, bf);
	}
	/* a batch's knapsack gets every option (it applies the gain gate
	 * and the learn budget itself) */
	if (plan && plan->collect) {
		plan->opts = own;
		plan->opts.o = malloc((own.n ? own.n : 1) * sizeof(*own.o));
		if (!plan->opts.o)
			goto nomem;
		memcpy(plan->opts.o, own.o, own.n * sizeof(*own.o));
	}
	/* exploration within the learn budget */
	{
		size_t budget = (size_t)floor(p->learn.pool_share *
					      (double)w->pool.base),
		       k = 1;

		for (size_t x = 1; x < o->n; x++)
			if (!o->o[x].estimated || o->o[x].take <= budget)
				o->o[k++] = o->o[x];
		o->n = k;
	}
	if (plan && plan->apply) {
		ch = plan->chosen;
	} else {
		bmax = w->cx->bw_max;
		total = w->cx->n_backups;
		used = total > w->pool.n ? total - (uint32_t)w->pool.n : 0;
		ch = o->o[alloc_online_pick_cached(o, used, total, cap,
						   p->decision.curve.online_low,
						   bmax, &w->ws->thr)];
		/* no private option fits or pays: the best smaller option
		 * (the defaults plus extras, valued shared), not a refusal
		 * that leaves it with less than it could have */
		if (isolate && ch.kind == ALLOC_OPT_DEFAULT && pass &&
		    p->decision.scale.enabled) {
			struct alloc_opts alt = {0};
			size_t x;

			if (alloc_curve_options(
				    p, pr, bf, d->n_f,
				    held + (plan ? plan->batch_sharers : 0),
				    cap, kcap, false, true, &alt) < 0)
				goto nomem;
			for (x = 1; x < alt.n; x++)
				if (alt.o[x].kind != ALLOC_OPT_EXTRAS ||
				    alt.o[x].estimated)
					alt.o[x].value = 0; /* not these */
			x = alloc_online_pick(&alt, used, total, cap,
					      p->decision.curve.online_low,
					      bmax);
			if (x && !d->dry &&
			    alloc_reason(d,
					 "isolation: no private option fits "
					 "or pays within %u pool forwarder%s "
					 "(%s); best smaller option: its "
					 "defaults + %u extra%s",
					 cap, alloc_plural(cap),
					 curve_limit(w, cap, share_cap,
						     reserve_room, why,
						     sizeof(why)),
					 alt.o[x].take,
					 alloc_plural(alt.o[x].take)) < 0) {
				alloc_opts_free(&alt);
				goto nomem;
			}
			if (x) {
				ch = alt.o[x];
				isolate = false;
			}
			alloc_opts_free(&alt);
		}
	}
	if (!d->dry &&
	    alloc_reason(d,
			 "curve: %s with the default mapping (N_f = %u, "
			 "shared with %u job%s), %zu option%s within %u pool "
			 "forwarder%s; chosen: %s k = %u, %s%s",
			 units_short_rate(o->base, a, sizeof(a)), d->n_f,
			 held + (plan ? plan->batch_sharers : 0),
			 alloc_plural(held + (plan ? plan->batch_sharers : 0)),
			 o->n, alloc_plural(o->n), cap, alloc_plural(cap),
			 opt_name(ch.kind), ch.k,
			 units_short_rate(ch.value, b, sizeof(b)),
			 ch.estimated ? " (estimated: explore)" : "") < 0)
		goto nomem;
	if (ch.estimated && !d->dry &&
	    (ch.kind == ALLOC_OPT_DIRECT
		     ? alloc_reason(d,
				    "explore: direct access is not measured "
				    "yet; acting on the estimate %s",
				    units_short_rate(ch.value, b, sizeof(b)))
		     : alloc_reason(d,
				    "explore: k = %u is above the highest "
				    "measured count %u; acting on the estimate "
				    "%s",
				    ch.k, alloc_curve_kmax(pr),
				    units_short_rate(ch.value, b, sizeof(b)))) <
		    0)
		goto nomem;
	alloc_opts_free(&own);
	d->s = ch.k;
	if (ch.kind == ALLOC_OPT_EXTRAS) {
		got = try_scale(w, anomalies);
	} else if (ch.kind == ALLOC_OPT_DIRECT) {
		got = grant_direct(w);
	} else if (ch.kind == ALLOC_OPT_PRIVATE) {
		got = grant_private(w, ch.take,
				    isolate ? FWD_ACT_ISOLATE : FWD_ACT_SCALE);
	} else if (isolate) {
		if (!d->dry &&
		    alloc_reason(d,
				 "isolation refused: no private option fits "
				 "the pool within %u pool forwarder%s (%s), "
				 "nor a smaller one",
				 cap, alloc_plural(cap),
				 curve_limit(w, cap, share_cap, reserve_room,
					     why, sizeof(why))) < 0)
			return -1;
		pl->upgrade_denied = true;
	}
	if (got < 0)
		return -1;
	if (!got && apply_defaults(w, anomalies) < 0)
		return -1;
	if (got)
		d->gain_bps = ch.value - base_v / (1.0 + held);
	if (d->gain_bps < 0)
		d->gain_bps = 0;
	return got;
nomem:
	alloc_opts_free(&own);
	return -1;
}

/* ---- requests, access and a job already decided ----------------------- */

/* plan (NULL: none): a batch's, whose first pass may have found the job
 * allowed already (the same job, the same policy). */
static int access_check(struct work *w, struct plan *pl,
			struct alloc_plan *plan)
{
	const struct policy_access *a = &w->p->access;
	const struct alloc_job *job = w->job;
	struct alloc_decision *d = w->d;
	char why[256];

	pl->shadow =
		job->request == FWD_REQ_SHADOW || a->mode == POLICY_MODE_SHADOW;
	pl->asked = job->request == FWD_REQ_AUTO ||
		    job->request == FWD_REQ_SCALE ||
		    job->request == FWD_REQ_ISOLATE ||
		    job->request == FWD_REQ_SHADOW;
	switch (job->request) {
	case FWD_REQ_OFF:
		pl->considered = false;
		return alloc_reason(d, "upgrade off by request "
				       "(--io-upgrade=off)");
	case FWD_REQ_NONE:
		pl->considered = a->mode == POLICY_MODE_OPT_OUT ||
				 a->mode == POLICY_MODE_SHADOW;
		if (!pl->considered && a->mode == POLICY_MODE_OPT_IN)
			return alloc_reason(d, "not opted in (no --io-upgrade; "
					       "access.mode opt-in)");
		break;
	default:
		pl->considered = true;
	}
	if (a->mode == POLICY_MODE_OFF) {
		pl->considered = false;
		return alloc_reason(d, "fwdalloc is off (access.mode off)");
	}
	if (!pl->considered)
		return 0;
	pl->allowed = (plan && plan->allowed) ||
		      policy_job_allowed(w->p, job->user, job->account,
					 job->partition, why, sizeof(why));
	if (plan)
		plan->allowed = pl->allowed;
	if (!pl->allowed) {
		pl->considered = false;
		pl->upgrade_denied = pl->asked;
		return alloc_reason(d, "%s", why);
	}
	return 0;
}

static bool same_set(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		size_t j;

		for (j = 0; j < nb && b[j] != a[i]; j++)
			;
		if (j == nb)
			return false;
	}
	return true;
}

/* The job already holds an entry: give it back. */
static int from_entry(struct work *w, const struct alloc_ledger_entry *e)
{
	struct alloc_decision *d = w->d;
	size_t sum = 0;

	d->action = d->rule_action = e->action;
	if (set_forwarders(d, e->forwarders, e->private_fwd, e->n_forwarders) <
	    0)
		return -1;
	for (size_t i = 0; i < e->n_blocks; i++)
		sum += e->blocks[i].count;
	if (e->n_blocks && sum == w->job->n_nodes) {
		if (alloc_blocks_room(d, e->n_blocks) < 0)
			return -1;
		memcpy(d->blocks, e->blocks, e->n_blocks * sizeof(*e->blocks));
		d->n_blocks = e->n_blocks;
	} else if (same_set(e->forwarders, e->n_forwarders, d->defaults,
			    d->n_defaults)) {
		if (alloc_blocks_default(w->t, w->job->node_ids,
					 w->job->n_nodes, NULL, d) < 0)
			return -1;
	} else if (alloc_blocks_balanced(d, w->job->n_nodes) < 0) {
		return -1;
	}
	return alloc_reason(d, "job already holds an allocation: returning it");
}

/*
 * Does the held entry e cover exactly the job's nodes?  true when it does
 * or when e does not say (nodes unknown: the entry is returned as it is).
 */
static bool held_same_nodes(const struct work *w,
			    const struct alloc_ledger_entry *e)
{
	const struct alloc_job *job = w->job;
	struct alloc_nodeset seen = {0};
	fwd_error_t ignored;
	uint32_t *ids = NULL;
	size_t n = 0;
	bool same = false;

	if (!e->nodes || !*e->nodes)
		return true;
	/* a node the topology no longer has: other nodes */
	if (alloc_ctx_job_nodes(w->cx, e->nodes, &ids, &n, &ignored) < 0)
		return false;
	if (n != job->n_nodes || alloc_nodeset_init(&seen, w->t->n_nodes) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		alloc_nodeset_test_set(&seen, ids[i]);
	/* as many distinct nodes on both sides: equal when every node of
	 * the job is among the held ones */
	same = true;
	for (size_t i = 0; same && i < job->n_nodes; i++)
		same = job->node_ids[i] < w->t->n_nodes &&
		       alloc_nodeset_test_set(&seen, job->node_ids[i]);
out:
	alloc_nodeset_free(&seen);
	free(ids);
	return same;
}

/* A copy of l without the job's entry, each forwarder keeping the last
 * release it had (the job's old forwarders are not "just released"). */
static struct alloc_ledger *ledger_without(const struct alloc_ledger *l,
					   const struct alloc_ledger_entry *e)
{
	struct alloc_ledger *c = alloc_ledger_clone(l);
	double *last;

	if (!c)
		return NULL;
	last = calloc(e->n_forwarders ? e->n_forwarders : 1, sizeof(*last));
	if (!last) {
		alloc_ledger_destroy(c);
		return NULL;
	}
	for (size_t i = 0; i < e->n_forwarders; i++)
		last[i] = alloc_ledger_last_release(l, e->forwarders[i]);
	alloc_ledger_release(c, e->job_id, 0);
	for (size_t i = 0; i < e->n_forwarders; i++)
		alloc_ledger_set_last_release(c, e->forwarders[i], last[i]);
	free(last);
	return c;
}

/* ---- 8. the decision -------------------------------------------------- */

/* Scaling and interference for a considered job with a profile: S, then
 * which upgrades it wants, with the reasons. */
static int want_upgrades(struct work *w, struct plan *pl)
{
	const struct policy *p = w->p;
	const struct alloc_job *job = w->job;
	struct alloc_decision *d = w->d;
	bool sc_ok =
		p->decision.scale.enabled && job->request != FWD_REQ_ISOLATE;
	bool is_ok = p->decision.interference.enabled &&
		     job->request != FWD_REQ_SCALE;

	compute_s(w);
	if (sc_ok && scale_check(w, &pl->want_scale) < 0)
		return -1;
	if (!sc_ok && alloc_reason(d, job->request == FWD_REQ_ISOLATE
					      ? "scaling not considered: "
						"isolate requested"
					      : "scaling disabled by the "
						"policy") < 0)
		return -1;
	if (is_ok && interference_check(w, &pl->want_isolate) < 0)
		return -1;
	if (!is_ok && alloc_reason(d, job->request == FWD_REQ_SCALE
					      ? "isolation not considered: "
						"scale requested"
					      : "interference avoidance "
						"disabled by the policy") < 0)
		return -1;
	if (!pl->want_scale && !pl->want_isolate &&
	    alloc_reason(d, "no upgrade needed: default mapping") < 0)
		return -1;
	return 0;
}

struct alloc_decision *
alloc_decide_base(const struct alloc_ctx *cx, const struct policy *p,
		  const struct alloc_ledger *l, const struct alloc_health *h,
		  const struct alloc_job *job, size_t pool_base,
		  struct alloc_plan *plan, struct alloc_scratch *ws,
		  fwd_error_t *err)
{
	const struct topology *t = cx->t;
	struct work w = {.cx = cx, .t = t, .p = p, .l = l, .h = h, .job = job};
	/* working arrays of its own only without the caller's (a batch
	 * lends them: neither cleared nor freed for each job) */
	struct alloc_scratch own, *mine = NULL;
	struct alloc_decision *d = NULL;
	const struct alloc_ledger_entry *held;
	struct alloc_ledger *other = NULL; /* l without the job's entry */
	struct plan pl = {0};
	bool anomalies;
	int got = 0;

	if (!job->job_id || !*job->job_id) {
		errno = EINVAL;
		errprintf(err, "job_id: missing or empty");
		return NULL;
	}
	if (!job->n_nodes || !job->node_ids) {
		errno = EINVAL;
		errprintf(err, "job %s: no nodes", job->job_id);
		return NULL;
	}
	if (l && alloc_ledger_topology(l) != t) {
		errno = EINVAL;
		errprintf(err, "ledger belongs to another topology");
		return NULL;
	}
	if (!ws) {
		if (alloc_scratch_init(&own, cx) < 0)
			goto nomem;
		ws = mine = &own;
	}
	w.ws = ws;
	w.cnt = ws->cnt;
	w.gweight = ws->gweight;
	w.pool.fwd = ws->pool_fwd;
	w.pool.released = ws->pool_released;
	w.pool.cache = ws->pool.off ? NULL : &ws->pool;
	w.pool.count_only = plan && plan->collect;
	if (!(d = calloc(1, sizeof(*d))))
		goto nomem;
	w.d = d;
	d->dry = plan && plan->collect;
	/* a batch's first pass is read for its gain and pool only */
	if (!d->dry && strlen(job->job_id) < sizeof(d->id_room))
		d->job_id = strcpy(d->id_room, job->job_id);
	else if (!d->dry && !(d->job_id = strdup(job->job_id)))
		goto nomem;
	d->request = job->request;
	{ /* snprintf's copy, without its cost */
		size_t dl = strnlen(p->digest, sizeof(d->policy_digest) - 1);

		memcpy(d->policy_digest, p->digest, dl);
		d->policy_digest[dl] = '\0';
	}
	if (!d->dry && copy_profile(d, job->profile) < 0)
		goto nomem;

	/* 1. Default mapping and N_f; the OSTs to avoid. */
	if (default_mapping(&w, err) < 0)
		goto fail;
	if (plan && d->n_defaults) /* a batch groups its jobs by it */
		plan->first_default = d->defaults[0];
	if (excluded_osts(&w) < 0)
		goto nomem;

	held = alloc_ledger_find(l, job->job_id);
	if (held && held_same_nodes(&w, held)) {
		if (from_entry(&w, held) < 0)
			goto nomem;
		goto render;
	}
	if (held) {
		/* Run again for other nodes (a requeue after a lost epilog,
		 * a second controller): what it holds maps nodes it no
		 * longer has.  Decide afresh as if it were released. */
		if (!(other = ledger_without(l, held)))
			goto nomem;
		l = w.l = other;
		d->redecided = true;
		if (alloc_reason(d,
				 "job already holds an allocation for other "
				 "nodes (%s): decided again for its nodes now",
				 held->nodes) < 0)
			goto nomem;
	}

	/* 6. The pool, in selection order. */
	alloc_pool_fill(&w.pool, cx, l, h, w.gweight);
	w.pool.base = pool_base != SIZE_MAX ? pool_base : w.pool.n;

	/* Who may be upgraded; 3.-5. which upgrades the job wants. */
	if (access_check(&w, &pl, plan) < 0)
		goto nomem;
	anomalies = p->decision.avoid_anomalies &&
		    p->access.mode != POLICY_MODE_OFF;
	if (pl.considered && !job->profile &&
	    alloc_reason(d, "no I/O history for this application") < 0)
		goto nomem;
	/* 7. With a curve: options, knapsack, harm. */
	if (pl.considered && job->profile && job->profile->n_bw &&
	    p->decision.curve.enabled && job->request != FWD_REQ_OFF) {
		if ((got = curve_rule(&w, &pl, plan, anomalies)) < 0)
			goto nomem;
		goto action;
	}
	if (pl.considered && job->profile && want_upgrades(&w, &pl) < 0)
		goto nomem;

	/* Precedence: scale > isolate > avoid-anomaly (2.) > default. */
	if (pl.want_scale && (got = try_scale(&w, anomalies)) < 0)
		goto nomem;
	if (!got && pl.want_isolate && (got = try_isolate(&w, anomalies)) < 0)
		goto nomem;
	if (!got && apply_defaults(&w, anomalies) < 0)
		goto nomem;
	if (!got && (pl.want_scale || pl.want_isolate))
		pl.upgrade_denied = true;

	/* 7. Expected gain, for batch ranking. */
	set_gain(&w, got);

action:
	/* 8. The action: shadow and refusal on top of the rules' choice. */
	d->action = d->rule_action;
	if (pl.shadow) {
		d->action = FWD_ACT_SHADOW;
		if (alloc_reason(d, "shadow mode: would %s; nothing applied",
				 d->rule_action == FWD_ACT_DEFAULT
					 ? "keep the default mapping"
					 : fwd_action_name(d->rule_action)) < 0)
			goto nomem;
	} else if (pl.upgrade_denied &&
		   (d->rule_action == FWD_ACT_DEFAULT ||
		    d->rule_action == FWD_ACT_AVOID_ANOMALY)) {
		d->action = FWD_ACT_REFUSED;
	}

render:
	/* a batch's first pass reads only the gain and the pool taken */
	if (!d->dry && !job->no_render &&
	    alloc_render(cx, job->node_ids, d) < 0)
		goto nomem;
	scratch_clear(&w);
	if (mine)
		alloc_scratch_free(mine);
	alloc_ledger_destroy(other);
	return d;
nomem:
	errno = ENOMEM;
	errprintf(err, "decision: out of memory");
fail:
	scratch_clear(&w);
	if (mine)
		alloc_scratch_free(mine);
	alloc_ledger_destroy(other);
	alloc_decision_destroy(d);
	return NULL;
}

struct alloc_decision *alloc_decide(const struct alloc_ctx *cx,
				    const struct policy *p,
				    const struct alloc_ledger *ledger,
				    const struct alloc_health *health,
				    const struct alloc_job *job, double now,
				    fwd_error_t *err)
{
	(void)now; /* reserved: age-based rules; the ledger carries times */
	return alloc_decide_base(cx, p, ledger, health, job, SIZE_MAX, NULL,
				 NULL, err);
}
