/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The health scan: reads rollups_minute and jobstats_raw (the finished
 * jobs and the forwarders they held come from the caller), applies the
 * windows and writes health and health_history.  See monitor/health.h;
 * tables in db/SCHEMA.md.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/array.h"
#include "common/slurm_compat.h"
#include "db/db.h"
#include "monitor/anomaly.h"
#include "monitor/health.h"
#include "monitor/health_priv.h"
#include "monitor/inventory.h"
#include "topology/topology.h"

/* Bounds on what one scan reads; far above any real day of a machine. */
#define MAX_JOBS 100000
#define MAX_ROWS 10000000

/* ---- the scan ------------------------------------------------------------ */

struct verdict {
	double wstart;
	int verdict;
	char reason[HEALTH_REASON_MAX];
};

struct comp {
	struct health_entry e;
	double peak; /* benchmarked, B/s; 0 unknown */
	/* Its rollups, read with those of every component of its kind
	 * (load_kind()); loaded says they were. */
	struct anomaly_sample *smp;
	size_t n_smp, cap_smp;
	bool loaded;
	double lo, hi;	      /* the minutes loaded: lo <= minute < hi */
	bool stored;	      /* e comes from the health table */
	bool touched;	      /* windows applied: write the row */
	struct verdict *peer; /* peer-detector verdicts, by window */
	size_t n_peer, cap_peer;
	struct health_change *chg;
	size_t n_chg, cap_chg;
};

static struct comp *comp_add(struct scan *s, enum health_kind kind,
			     const char *name, double peak)
{
	struct comp *c;

	if (fwd_grow((void **)&s->c, &s->cap, s->n + 1, sizeof(*s->c), 16) <
	    0) {
		errprintf(s->err, "health scan: out of memory");
		return NULL;
	}
	c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	health_entry_init(&c->e, kind, name);
	c->peak = peak;
	s->sorted = false;
	return c;
}

static int cmp_comp(const void *a, const void *b)
{
	return health_cmp_entry(&((const struct comp *)a)->e,
				&((const struct comp *)b)->e);
}

static void comp_free(struct comp *c)
{
	free(c->peer);
	free(c->chg);
	free(c->smp);
}

/*
 * Sort and merge duplicates: the survivor keeps the stored entry, the
 * benchmarked peak and every peer verdict.
 */
static int comps_sort(struct scan *s)
{
	size_t out = 0;

	if (s->sorted)
		return 0;
	if (s->n) /* none: s->c may be NULL */
		qsort(s->c, s->n, sizeof(*s->c), cmp_comp);
	for (size_t i = 0; i < s->n; i++) {
		struct comp *k;

		if (out && !cmp_comp(&s->c[out - 1], &s->c[i])) {
			k = &s->c[out - 1];
			if (s->c[i].stored && !k->stored) {
				k->e = s->c[i].e;
				k->stored = true;
			}
			if (s->c[i].peak > k->peak)
				k->peak = s->c[i].peak;
			for (size_t j = 0; j < s->c[i].n_peer; j++) {
				if (fwd_grow((void **)&k->peer, &k->cap_peer,
					     k->n_peer + 1, sizeof(*k->peer),
					     16) < 0)
					return errprintf(s->err,
							 "health scan: "
							 "out of memory");
				k->peer[k->n_peer++] = s->c[i].peer[j];
			}
			comp_free(&s->c[i]);
			continue;
		}
		if (out != i)
			s->c[out] = s->c[i];
		out++;
	}
	s->n = out;
	s->sorted = true;
	return 0;
}

/* The component, when the scan has it (no entry is added). */
static struct comp *comp_find(struct scan *s, enum health_kind kind,
			      const char *name)
{
	struct comp key;

	if (comps_sort(s) < 0)
		return NULL;
	key.e.kind = kind;
	snprintf(key.e.name, sizeof(key.e.name), "%s", name);
	return s->n ? bsearch(&key, s->c, s->n, sizeof(*s->c), cmp_comp) : NULL;
}

static struct comp *comp_get(struct scan *s, enum health_kind kind,
			     const char *name)
{
	struct comp *hit;

	if (comps_sort(s) < 0)
		return NULL;
	hit = comp_find(s, kind, name);
	return hit ? hit : comp_add(s, kind, name, 0);
}

/* Samples of one component in [from, to) from rollups_minute. */
static int load_series(struct scan *s, enum health_kind kind, const char *name,
		       double from, double to, struct anomaly_sample **out,
		       size_t *n)
{
	struct anomaly_sample *v = NULL;
	struct db_stmt *st;
	size_t cnt = 0, cap = 0;
	int rv = -1, r;

	*out = NULL;
	*n = 0;
	if (!s->series_st)
		s->series_st = db_prepare(
			s->db,
			"SELECT minute, read_bytes + write_bytes,"
			" read_ops + write_ops + md_ops,"
			" COALESCE(queue_len_avg, -1)"
			" FROM rollups_minute WHERE kind = ? AND name = ?"
			" AND minute >= ? AND minute < ? ORDER BY minute"
			" LIMIT 10000000",
			s->err);
	if (!(st = s->series_st))
		return -1;
	if (db_bind_text(st, 0, health_db_kind(kind)) < 0 ||
	    db_bind_text(st, 1, name) < 0 ||
	    db_bind_int64(st, 2, (int64_t)floor(from)) < 0 ||
	    db_bind_int64(st, 3, (int64_t)ceil(to)) < 0 ||
	    db_exec(st, s->err) < 0)
		goto out;
	while ((r = db_fetch(st, s->err)) > 0) {
		struct anomaly_sample *x;

		if (fwd_grow((void **)&v, &cap, cnt + 1, sizeof(*v), 16) < 0) {
			errprintf(s->err, "health scan: out of memory");
			goto out;
		}
		x = &v[cnt++];
		x->time = (double)db_col_int64(st, 0);
		x->seconds = 60;
		x->bytes = db_col_double(st, 1);
		x->ops = db_col_double(st, 2);
		x->queue = db_col_double(st, 3);
	}
	if (r < 0)
		goto out;
	*out = v;
	*n = cnt;
	v = NULL;
	rv = 0;
out:
	free(v);
	return rv;
}

/* Names from a one-column SELECT bound to a job id. */
int health_job_names(struct scan *s, const char *sql, uint64_t job,
		     char ***names, size_t *n)
{
	struct db_stmt *st;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int rv = -1, r;

	if (!s->names_st || !s->names_sql || strcmp(s->names_sql, sql)) {
		db_stmt_close(s->names_st);
		s->names_sql = sql;
		s->names_st = db_prepare(s->db, sql, s->err);
	}
	if (!(st = s->names_st))
		return -1;
	if (db_bind_uint64(st, 0, job) < 0 || db_exec(st, s->err) < 0)
		goto out;
	while ((r = db_fetch(st, s->err)) > 0) {
		if (fwd_grow((void **)&v, &cap, cnt + 1, sizeof(*v), 16) < 0 ||
		    !(v[cnt] = strdup(db_col_text(st, 0)))) {
			errprintf(s->err, "health scan: out of memory");
			goto out;
		}
		cnt++;
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	if (rv < 0) {
		for (size_t i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
		return -1;
	}
	*names = v;
	*n = cnt;
	return 0;
}

void health_free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The default forwarders of a node list, from the topology. */
int health_default_forwarders(struct scan *s, const char *nodelist,
			      char ***names, size_t *n)
{
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	fwd_hostlist_t hl;
	char *host;
	int rv = 0;

	*names = NULL;
	*n = 0;
	if (!s->t || !*nodelist)
		return 0;
	hl = slurm_hostlist_create(nodelist);
	if (!hl)
		return 0; /* an unparsable list: no members, no verdict */
	while ((host = slurm_hostlist_shift(hl))) {
		long f = topo_node_default(s->t, host);
		bool seen = false;

		free(host);
		if (f < 0 || rv < 0)
			continue;
		for (size_t i = 0; i < cnt && !seen; i++)
			seen = !strcmp(v[i], s->t->forwarders[f].name);
		if (seen)
			continue;
		if (fwd_grow((void **)&v, &cap, cnt + 1, sizeof(*v), 16) < 0 ||
		    !(v[cnt] = strdup(s->t->forwarders[f].name))) {
			rv = errprintf(s->err, "health scan: out of memory");
			continue;
		}
		cnt++;
	}
	slurm_hostlist_destroy(hl);
	if (rv < 0) {
		health_free_names(v, cnt);
		return -1;
	}
	*names = v;
	*n = cnt;
	return 0;
}

static int add_peer_verdict(struct scan *s, enum health_kind kind,
			    const char *name, double wstart, int verdict,
			    const char *reason)
{
	struct comp *c = comp_get(s, kind, name);
	struct verdict *v;

	if (!c)
		return -1;
	if (fwd_grow((void **)&c->peer, &c->cap_peer, c->n_peer + 1,
		     sizeof(*c->peer), 16) < 0)
		return errprintf(s->err, "health scan: out of memory");
	v = &c->peer[c->n_peer++];
	v->wstart = wstart;
	v->verdict = verdict;
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
	return 0;
}

static void slice(const struct comp *c, double from, double to,
		  struct anomaly_sample **out, size_t *n);

/*
 * A member's samples in [start, end): from what load_kind() read when it
 * covers them (*own false), else from the database (*own true: free them).
 */
static int member_series(struct scan *s, enum health_kind kind,
			 const char *name, double start, double end,
			 struct anomaly_sample **smp, size_t *ns, bool *own)
{
	struct comp *c = comp_find(s, kind, name);

	*own = false;
	if (c && c->loaded && floor(start) >= c->lo && ceil(end) <= c->hi) {
		slice(c, floor(start), ceil(end), smp, ns);
		return 0;
	}
	*own = true;
	return load_series(s, kind, name, start, end, smp, ns);
}

/* Run the peer detector on the members of one kind of one job. */
static int peer_job(struct scan *s, uint64_t job, uint32_t nodes, double start,
		    double end, enum health_kind kind, char **names, size_t n,
		    bool *eligible)
{
	struct anomaly_series *mem = calloc(n ? n : 1, sizeof(*mem));
	struct anomaly_peer_stat *stat = calloc(n ? n : 1, sizeof(*stat));
	bool *own = calloc(n ? n : 1, sizeof(*own));
	struct anomaly_peer_result res;
	double wstart = floor(end / s->window) * s->window;
	int rv = -1;

	if (!mem || !stat || !own) {
		errprintf(s->err, "health scan: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct anomaly_sample *smp;
		size_t ns;

		if (member_series(s, kind, names[i], start, end, &smp, &ns,
				  &own[i]) < 0)
			goto out;
		mem[i].name = names[i];
		mem[i].samples = smp;
		mem[i].n_samples = ns;
	}
	if (anomaly_peer_check(&s->p->anomaly.peer, nodes, mem, n, stat, &res,
			       s->err) < 0)
		goto out;
	*eligible = *eligible || res.eligible;
	for (size_t i = 0; res.eligible && i < n; i++) {
		char reason[HEALTH_REASON_MAX];

		if (!stat[i].active)
			continue;
		if (stat[i].flagged)
			snprintf(reason, sizeof(reason),
				 "job %llu: average %.3g B/s and peak %.3g "
				 "B/s under %.0f%% of the %zu members' mean "
				 "peak %.3g B/s while carrying %.3g bytes "
				 "(mean %.3g)",
				 (unsigned long long)job, stat[i].avg_bps,
				 stat[i].peak_bps,
				 s->p->anomaly.peer.bandwidth_fraction * 100, n,
				 res.mean_peak_bps, stat[i].volume,
				 res.mean_volume);
		else
			snprintf(reason, sizeof(reason),
				 "job %llu: in line with its %zu peers",
				 (unsigned long long)job, n - 1);
		if (add_peer_verdict(s, kind, names[i], wstart,
				     stat[i].flagged ? ANOMALY_BAD
						     : ANOMALY_GOOD,
				     reason) < 0)
			goto out;
	}
	rv = 0;
out:
	for (size_t i = 0; mem && own && i < n; i++)
		if (own[i])
			free((void *)mem[i].samples);
	free(mem);
	free(stat);
	free(own);
	return rv;
}

/* Forwarders a job used: what it held, else its default mapping. */
int health_job_forwarders(struct scan *s, const struct health_job *j,
			  char ***names, size_t *n)
{
	char **v;

	*names = NULL;
	*n = 0;
	if (!j->n_held)
		return health_default_forwarders(
			s, j->nodelist ? j->nodelist : "", names, n);
	v = calloc(j->n_held, sizeof(*v));
	if (!v)
		return errprintf(s->err, "health scan: out of memory");
	for (size_t i = 0; i < j->n_held; i++)
		if (!(v[i] = strdup(j->held[i]))) {
			health_free_names(v, i);
			return errprintf(s->err, "health scan: out of memory");
		}
	*names = v;
	*n = j->n_held;
	return 0;
}

static int peer_scan(struct scan *s, double from, double to,
		     struct health_scan_stats *stats)
{
	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct health_job *j = &s->jobs[i];
		char **names = NULL;
		size_t nn = 0;
		bool eligible = false;
		int r;

		if (!(j->end >= from && j->end < to) ||
		    j->nodes < s->p->anomaly.peer.min_job_nodes)
			continue;
		stats->jobs++;
		if (health_job_forwarders(s, j, &names, &nn) < 0)
			return -1;
		r = peer_job(s, j->id, j->nodes, j->start, j->end,
			     HEALTH_FORWARDER, names, nn, &eligible);
		health_free_names(names, nn);
		if (r < 0)
			return -1;
		if (health_job_names(s,
				     "SELECT DISTINCT target FROM jobstats_raw"
				     " WHERE job_id = ? AND kind = 'ost'"
				     " ORDER BY target LIMIT 100000",
				     j->id, &names, &nn) < 0)
			return -1;
		r = peer_job(s, j->id, j->nodes, j->start, j->end, HEALTH_OST,
			     names, nn, &eligible);
		health_free_names(names, nn);
		if (r < 0)
			return -1;
		if (eligible)
			stats->jobs_eligible++;
	}
	return 0;
}

/* Combine the sustained verdict with the peer verdicts of the window. */
static int combine(const struct comp *c, double wstart, int sustained,
		   char *reason, size_t len)
{
	int v = sustained;

	for (size_t i = 0; i < c->n_peer; i++) {
		const struct verdict *pv = &c->peer[i];

		if (pv->wstart != wstart)
			continue;
		if (pv->verdict == ANOMALY_BAD && v != ANOMALY_BAD) {
			v = ANOMALY_BAD;
			snprintf(reason, len, "%s", pv->reason);
		} else if (pv->verdict == ANOMALY_GOOD && v == ANOMALY_NONE) {
			v = ANOMALY_GOOD;
			snprintf(reason, len, "%s", pv->reason);
		}
	}
	return v;
}

/* The first window scan_comp() applies to c. */
static double comp_start(const struct scan *s, const struct comp *c,
			 double since)
{
	double start = since;

	if (c->e.scanned_until > start)
		start = c->e.scanned_until;
	return floor(start / s->window) * s->window;
}

/*
 * The earliest start of the jobs peer_scan() looks at (those that ended in
 * [from, to) and are large enough); `to` when there are none.
 */
static double jobs_start(const struct scan *s, double from, double to)
{
	double lo = to;

	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct health_job *j = &s->jobs[i];

		if (j->end >= from && j->end < to &&
		    j->nodes >= s->p->anomaly.peer.min_job_nodes &&
		    j->start < lo)
			lo = j->start;
	}
	return lo;
}

/* Components per statement of load_kind(). */
#define KIND_CHUNK 500

static int cmp_name(const void *key, const void *elem)
{
	const struct comp *c = *(struct comp *const *)elem;

	return strcmp(key, c->e.name);
}

/*
 * The rollups of every component of `kind` that scan_comp() will read,
 * set-wise: one statement per KIND_CHUNK components (the primary key
 * (kind, name, minute) serves it range by range), from the earliest
 * start they need, or jobs_lo when earlier (the peer detector reads the
 * same rows over its jobs' runs), each component's rows kept in c->smp.
 */
static int load_kind(struct scan *s, enum health_kind kind, double since,
		     double end, double jobs_lo)
{
	const double dur = s->p->anomaly.sustained.duration;
	struct comp **v = NULL;
	size_t n = 0;
	double lo = end;
	int rv = -1;

	if (!(v = calloc(s->n ? s->n : 1, sizeof(*v))))
		return errprintf(s->err, "health scan: out of memory");
	for (size_t i = 0; i < s->n; i++) {
		struct comp *c = &s->c[i];
		double st = comp_start(s, c, since);

		if (c->e.kind != kind || !(c->peak > 0) || st >= end)
			continue;
		v[n++] = c;
		if (st - dur < lo)
			lo = st - dur;
	}
	/* Jobs' runs up to a day earlier too (a longer one reads its own
	 * rows, member_series()). */
	if (jobs_lo < lo)
		lo = fmax(jobs_lo, lo - 86400);
	/* s->c is sorted by kind then name: so is v. */
	for (size_t off = 0; off < n; off += KIND_CHUNK) {
		size_t k = n - off < KIND_CHUNK ? n - off : KIND_CHUNK;
		size_t len = 512 + 2 * k;
		char *sql = malloc(len);
		struct db_stmt *st;
		struct comp *last = NULL;
		unsigned p = 0;
		int r;

		if (!sql) {
			errprintf(s->err, "health scan: out of memory");
			goto out;
		}
		/* Placeholders only: the names are bound. */
		snprintf(sql, len,
			 "SELECT name, minute, read_bytes + write_bytes,"
			 " read_ops + write_ops + md_ops,"
			 " COALESCE(queue_len_avg, -1)"
			 " FROM rollups_minute WHERE kind = ? AND name IN (");
		db_append_placeholders(sql, len, k);
		strcat(sql, ") AND minute >= ? AND minute < ?"
			    " ORDER BY name, minute LIMIT 100000000");
		st = db_prepare(s->db, sql, s->err);
		free(sql);
		if (!st)
			goto out;
		db_bind_text(st, p++, health_db_kind(kind));
		for (size_t i = 0; i < k; i++)
			db_bind_text(st, p++, v[off + i]->e.name);
		db_bind_int64(st, p++, (int64_t)floor(lo));
		db_bind_int64(st, p++, (int64_t)ceil(end));
		if (db_exec(st, s->err) < 0) {
			db_stmt_close(st);
			goto out;
		}
		while ((r = db_fetch(st, s->err)) > 0) {
			const char *name = db_col_text(st, 0);
			struct anomaly_sample *x;

			if (!last || strcmp(last->e.name, name)) {
				struct comp **hit = bsearch(
					name, v + off, k, sizeof(*v), cmp_name);

				last = hit ? *hit : NULL;
			}
			if (!last)
				continue;
			if (fwd_grow((void **)&last->smp, &last->cap_smp,
				     last->n_smp + 1, sizeof(*last->smp),
				     1024) < 0) {
				r = errprintf(s->err,
					      "health scan: out of memory");
				break;
			}
			x = &last->smp[last->n_smp++];
			x->time = (double)db_col_int64(st, 1);
			x->seconds = 60;
			x->bytes = db_col_double(st, 2);
			x->ops = db_col_double(st, 3);
			x->queue = db_col_double(st, 4);
		}
		db_stmt_close(st);
		if (r < 0)
			goto out;
		for (size_t i = 0; i < k; i++) {
			v[off + i]->loaded = true;
			v[off + i]->lo = floor(lo);
			v[off + i]->hi = ceil(end);
		}
	}
	rv = 0;
out:
	free(v);
	return rv;
}

/* c's loaded samples with from <= time < to (they are in time order). */
static void slice(const struct comp *c, double from, double to,
		  struct anomaly_sample **out, size_t *n)
{
	size_t a = 0, b = c->n_smp;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (c->smp[m].time < from)
			a = m + 1;
		else
			b = m;
	}
	b = a;
	while (b < c->n_smp && c->smp[b].time < to)
		b++;
	*out = c->smp ? c->smp + a : NULL;
	*n = b - a;
}

static int scan_comp(struct scan *s, struct comp *c, double since, double end,
		     struct health_scan_stats *stats)
{
	const struct policy_anomaly *pa = &s->p->anomaly;
	struct anomaly_sample *smp = NULL;
	size_t ns = 0;
	double start = comp_start(s, c, since);
	bool own = false;
	int rv = -1;

	if (start >= end)
		return 0;
	if (c->peak > 0 && c->loaded) {
		/* The range load_series() would have read. */
		slice(c, floor(start - pa->sustained.duration), ceil(end), &smp,
		      &ns);
	} else if (c->peak > 0) {
		if (load_series(s, c->e.kind, c->e.name,
				start - pa->sustained.duration, end, &smp,
				&ns) < 0)
			return -1;
		own = true;
	}
	stats->components++;
	for (double w = start; w < end; w += s->window) {
		char reason[HEALTH_REASON_MAX] = "no evidence in the window";
		struct health_change chg;
		int v = ANOMALY_NONE;
		int r;

		if (c->peak > 0) {
			v = anomaly_window_verdict(&pa->sustained, c->peak, smp,
						   ns, w, w + s->window, reason,
						   sizeof(reason), s->err);
			if (v < 0) {
				errprefix(s->err, "%s %s",
					  health_kind_name(c->e.kind),
					  c->e.name);
				goto out;
			}
		}
		v = combine(c, w, v, reason, sizeof(reason));
		r = health_step(pa, &c->e, w, w + s->window, v, reason, &chg);
		if (r < 0) {
			errprintf(s->err, "%s %s: window %.0f: %s",
				  health_kind_name(c->e.kind), c->e.name, w,
				  strerror(errno));
			goto out;
		}
		c->touched = true;
		stats->windows++;
		if (v == ANOMALY_BAD)
			stats->bad_windows++;
		if (!stats->first_window || w < stats->first_window)
			stats->first_window = w;
		if (w + s->window > stats->last_window)
			stats->last_window = w + s->window;
		if (r == 1) {
			if (fwd_grow((void **)&c->chg, &c->cap_chg,
				     c->n_chg + 1, sizeof(*c->chg), 16) < 0) {
				errprintf(s->err, "health scan: out of memory");
				goto out;
			}
			c->chg[c->n_chg++] = chg;
			stats->changes++;
		}
	}
	rv = 0;
out:
	if (own)
		free(smp);
	return rv;
}

void health_scan_close(struct scan *s)
{
	db_stmt_close(s->series_st);
	db_stmt_close(s->names_st);
	s->series_st = s->names_st = NULL;
	s->names_sql = NULL;
}

int health_scan_span(const struct policy *p, const struct health_scan_opts *o,
		     double now, double *since_out, double *end_out,
		     fwd_error_t *err)
{
	double window = p->anomaly.window, until, since, end;

	if (!(window > 0)) {
		errno = EINVAL;
		return errprintf(err, "anomaly.window %g: must be positive",
				 window);
	}
	/* A window is applied once: one in the future would be marked
	 * scanned before its statistics arrive and never looked at again.
	 * NaN and infinity are refused here too. */
	if (!(o->until <= now)) {
		errno = EINVAL;
		return errprintf(err,
				 "scan until %.0f: in the future (now %.0f): "
				 "its windows are not complete yet",
				 o->until, now);
	}
	until = o->until > 0 ? o->until : now;
	end = floor(until / window) * window;
	since = o->since > 0 ? o->since : end - 86400;
	since = floor(since / window) * window;
	*since_out = since;
	*end_out = end;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int health_db_scan(struct db *db, const struct policy *p,
		   const struct topology *t, const struct health_scan_opts *o,
		   const struct health_job *jobs, size_t n_jobs,
		   struct health_scan_stats *stats, fwd_error_t *err)
{
	struct scan s = {.db = db,
			 .p = p,
			 .t = t,
			 .err = err,
			 .window = p->anomaly.window,
			 .jobs = jobs,
			 .n_jobs = n_jobs};
	struct health_entry *rows = NULL, *touched = NULL;
	size_t n_rows = 0, n_touched = 0, n_ret[2] = {0, 0};
	char **retired[2] = {NULL, NULL};
	double since, end, lo, jlo, now = (double)time(NULL);
	bool in_tx = false;
	int rv = -1;

	memset(stats, 0, sizeof(*stats));
	if (health_scan_span(p, o, now, &since, &end, err) < 0)
		return -1;
	/* One transaction from here: the reads see one snapshot, taken
	 * once the lock is held. */
	if (health_lock(db, p, err) < 0)
		return -1;
	in_tx = true;
	if (health_db_load(db, s.window, &rows, &n_rows, err) < 0 ||
	    inventory_retired(db, false, &retired[0], &n_ret[0], err) < 0 ||
	    inventory_retired(db, true, &retired[1], &n_ret[1], err) < 0)
		goto out;
	for (size_t i = 0; i < n_rows; i++) {
		int k = rows[i].kind == HEALTH_OST;
		const char *name = rows[i].name;
		struct comp *c;

		/* Left the topology (fwdctl db init): history, not scanned
		 * (unless this topology has it again). */
		if (n_ret[k] &&
		    bsearch(&name, retired[k], n_ret[k], sizeof(*retired[k]),
			    name_cmp) &&
		    !(t && (k ? topo_ost_index(t, name)
			      : topo_forwarder_index(t, name)) >= 0))
			continue;
		if (!(c = comp_add(&s, rows[i].kind, rows[i].name, 0)))
			goto out;
		c->e = rows[i];
		c->stored = true;
	}
	for (size_t i = 0; t && i < t->n_forwarders; i++)
		if (!comp_add(&s, HEALTH_FORWARDER, t->forwarders[i].name,
			      t->forwarders[i].bandwidth_bps))
			goto out;
	for (size_t i = 0; t && i < t->n_osts; i++)
		if (!comp_add(&s, HEALTH_OST, t->osts[i].name,
			      t->osts[i].bandwidth_bps))
			goto out;
	if (comps_sort(&s) < 0)
		goto out;
	/* Jobs that ended in any window some component still has to see. */
	lo = end;
	for (size_t i = 0; i < s.n; i++) {
		double st = fmax(since, s.c[i].e.scanned_until);

		if (st < lo)
			lo = st;
	}
	/* Each kind's rollups in one read, for both detectors. */
	jlo = jobs_start(&s, lo, end);
	if (load_kind(&s, HEALTH_FORWARDER, since, end, jlo) < 0 ||
	    load_kind(&s, HEALTH_OST, since, end, jlo) < 0)
		goto out;
	if (lo < end && peer_scan(&s, lo, end, stats) < 0)
		goto out;
	if (comps_sort(&s) < 0)
		goto out;
	for (size_t i = 0; i < s.n; i++)
		if (scan_comp(&s, &s.c[i], since, end, stats) < 0)
			goto out;
	/* The rows, batched (health_write_entries()); the episodes, rare,
	 * one by one. */
	if (!(touched = calloc(s.n ? s.n : 1, sizeof(*touched)))) {
		errprintf(err, "health scan: out of memory");
		goto out;
	}
	for (size_t i = 0; i < s.n; i++) {
		struct comp *c = &s.c[i];

		if (!c->touched)
			continue;
		for (size_t k = 0; k < c->n_chg; k++)
			if (health_write_change(db, &c->e, &c->chg[k], err) < 0)
				goto out;
		touched[n_touched++] = c->e;
	}
	if (health_write_entries(db, touched, n_touched, now, err) < 0)
		goto out;
	if (db_commit(db, err) < 0)
		goto out;
	in_tx = false;
	/* Feedback after the commit: a failed scan runs no command. */
	for (size_t i = 0; i < s.n; i++) {
		for (size_t k = 0; k < s.c[i].n_chg; k++) {
			fwd_error_t cmd_err;

			health_run_change_commands(p, &s.c[i].e, &s.c[i].chg[k],
						   o->command_timeout, &cmd_err,
						   &stats->command_errors);
			if (o->on_change)
				o->on_change(o->arg, &s.c[i].e, &s.c[i].chg[k],
					     cmd_err.text[0] ? cmd_err.text
							     : NULL);
		}
	}
	rv = 0;
out:
	if (in_tx)
		db_rollback(db);
	health_scan_close(&s);
	for (size_t i = 0; i < s.n; i++)
		comp_free(&s.c[i]);
	free(s.c);
	free(rows);
	free(touched);
	inventory_names_free(retired[0], n_ret[0]);
	inventory_names_free(retired[1], n_ret[1]);
	return rv;
}
