/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The health scan and the admin overrides against the store: reads
 * rollups_minute, jobs, allocations and jobstats_raw, writes health and
 * health_history.  See monitor/health.h; tables in monitor/SCHEMA.md.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <slurm/slurm.h>

#include "db/db.h"
#include "monitor/anomaly.h"
#include "monitor/health.h"
#include "topology/topology.h"

/*
 * The health lock: a scan and an admin override each run in a transaction
 * that starts by locking the one row of `health_lock` (owned here), so two
 * of them never interleave their read-modify-write of an episode.  A row
 * lock, not a named lock: any account (the node account too) can hold a
 * named lock, and would stall every scan and every `fwdctl health
 * exclude` with it.
 */
static int health_lock(struct db *db, const struct policy *p, fwd_error_t *err)
{
	return db_begin_locked(db,
			       "SELECT id FROM health_lock WHERE id = 1 "
			       "FOR UPDATE",
			       "health lock", p->database.lock_timeout, err);
}

/* Bounds on what one scan reads; far above any real day of a machine. */
#define MAX_JOBS 100000
#define MAX_ROWS 10000000

static const char *db_kind(enum health_kind k)
{
	return k == HEALTH_OST ? "ost" : "fwd";
}

static int parse_db_kind(const char *s, enum health_kind *k)
{
	if (!strcmp(s, "fwd")) {
		*k = HEALTH_FORWARDER;
		return 0;
	}
	if (!strcmp(s, "ost")) {
		*k = HEALTH_OST;
		return 0;
	}
	return -1; /* mdt: not tracked by the scanner */
}

static int cmp_entry(const void *a, const void *b)
{
	const struct health_entry *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

long health_find(const struct health_entry *entries, size_t n,
		 enum health_kind kind, const char *name)
{
	struct health_entry key;
	const struct health_entry *hit;

	if (!n)
		return -1;
	key.kind = kind;
	snprintf(key.name, sizeof(key.name), "%s", name);
	hit = bsearch(&key, entries, n, sizeof(*entries), cmp_entry);
	return hit ? hit - entries : -1;
}

/* Fill e from the current row of a SELECT of ROW_COLUMNS. */
#define ROW_COLUMNS                                               \
	"kind, name, state, since, COALESCE(reason, ''), source," \
	" bad_windows, good_windows, COALESCE(last_scan_at, 0)"

static int row_to_entry(struct db_stmt *st, double window,
			struct health_entry *e)
{
	enum health_kind kind;
	enum health_state state;

	if (parse_db_kind(db_col_text(st, 0), &kind) < 0)
		return -1;
	health_entry_init(e, kind, db_col_text(st, 1));
	if (health_state_parse(db_col_text(st, 2), &state) < 0)
		state = HEALTH_OK;
	e->state = state;
	e->since = (double)db_col_int64(st, 3);
	snprintf(e->reason, sizeof(e->reason), "%s", db_col_text(st, 4));
	if (!strcmp(db_col_text(st, 5), "admin"))
		e->override = state == HEALTH_EXCLUDED ? HEALTH_OVERRIDE_EXCLUDE
						       : HEALTH_OVERRIDE_CLEAR;
	e->bad_streak = (uint32_t)db_col_uint64(st, 6);
	e->good_streak = (uint32_t)db_col_uint64(st, 7);
	e->scanned_until = (double)db_col_int64(st, 8);
	/* Not stored: estimated from the streaks (exact unless windows
	 * without evidence interleaved). */
	e->bad_since = e->scanned_until - e->bad_streak * window;
	e->good_since = e->scanned_until - e->good_streak * window;
	e->episode_start = state == HEALTH_OK ? 0 : e->since;
	return 0;
}

int health_db_load(struct db *db, double window, struct health_entry **entries,
		   size_t *n, fwd_error_t *err)
{
	struct health_entry *v = NULL;
	struct db_stmt *st;
	size_t cnt = 0, cap = 0;
	int rv = -1, r;

	*entries = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT " ROW_COLUMNS " FROM health"
			" WHERE kind IN ('fwd', 'ost') LIMIT 1000000",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		if (cnt == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct health_entry *nv = realloc(v, nc * sizeof(*v));

			if (!nv) {
				errprintf(err, "health table: out of memory");
				goto out;
			}
			v = nv;
			cap = nc;
		}
		if (row_to_entry(st, window, &v[cnt]) == 0)
			cnt++;
	}
	if (r < 0)
		goto out;
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_entry);
	*entries = v;
	*n = cnt;
	v = NULL;
	rv = 0;
out:
	free(v);
	db_stmt_close(st);
	return rv;
}

/* ---- writing ---------------------------------------------------------- */

static int write_entry(struct db *db, const struct health_entry *e, double now,
		       fwd_error_t *err)
{
	return db_execf(db, err,
			"INSERT INTO health (kind, name, state, since, reason,"
			" source, bad_windows, good_windows, last_scan_at,"
			" updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
			" ON DUPLICATE KEY UPDATE state = VALUES(state),"
			" since = VALUES(since), reason = VALUES(reason),"
			" source = VALUES(source),"
			" bad_windows = VALUES(bad_windows),"
			" good_windows = VALUES(good_windows),"
			" last_scan_at = VALUES(last_scan_at),"
			" updated_at = VALUES(updated_at)",
			"sssissuuii", db_kind(e->kind), e->name,
			health_state_name(e->state), (int64_t)e->since,
			e->reason,
			e->override != HEALTH_OVERRIDE_NONE ? "admin"
							    : "scanner",
			(uint64_t)e->bad_streak, (uint64_t)e->good_streak,
			(int64_t)e->scanned_until, (int64_t)now) < 0
		       ? -1
		       : 0;
}

/* Close the component's open history row and open one for the new state. */
static int write_change(struct db *db, const struct health_entry *e,
			const struct health_change *c, fwd_error_t *err)
{
	if (db_execf(db, err,
		     "UPDATE health_history SET end_at = GREATEST(start_at, ?),"
		     " duration = GREATEST(start_at, ?) - start_at"
		     " WHERE kind = ? AND name = ? AND end_at IS NULL",
		     "iiss", (int64_t)c->time, (int64_t)c->time,
		     db_kind(e->kind), e->name) < 0)
		return -1;
	if (db_execf(db, err,
		     "INSERT INTO health_history (kind, name, state, start_at,"
		     " reason, source) VALUES (?, ?, ?, ?, ?, ?)",
		     "sssiss", db_kind(e->kind), e->name,
		     health_state_name(c->to), (int64_t)c->time, c->reason,
		     c->admin ? "admin" : "scanner") < 0)
		return -1;
	return 0;
}

/* ---- the scan ------------------------------------------------------------ */

struct verdict {
	double wstart;
	int verdict;
	char reason[HEALTH_REASON_MAX];
};

struct comp {
	struct health_entry e;
	double peak;	      /* benchmarked, B/s; 0 unknown */
	bool stored;	      /* e comes from the health table */
	bool touched;	      /* windows applied: write the row */
	struct verdict *peer; /* peer-detector verdicts, by window */
	size_t n_peer, cap_peer;
	struct health_change *chg;
	size_t n_chg, cap_chg;
};

struct scan {
	struct db *db;
	const struct policy *p;
	const struct topology *t;
	struct comp *c;
	size_t n, cap;
	bool sorted;
	double window;
	fwd_error_t *err;
};

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	void *nv;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	nv = realloc(*v, nc * size);
	if (!nv)
		return -1;
	*v = nv;
	*cap = nc;
	return 0;
}

static struct comp *comp_add(struct scan *s, enum health_kind kind,
			     const char *name, double peak)
{
	struct comp *c;

	if (grow((void **)&s->c, &s->cap, s->n + 1, sizeof(*s->c)) < 0) {
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
	return cmp_entry(&((const struct comp *)a)->e,
			 &((const struct comp *)b)->e);
}

static void comp_free(struct comp *c)
{
	free(c->peer);
	free(c->chg);
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
				if (grow((void **)&k->peer, &k->cap_peer,
					 k->n_peer + 1, sizeof(*k->peer)) < 0)
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

static struct comp *comp_get(struct scan *s, enum health_kind kind,
			     const char *name)
{
	struct comp key;
	struct comp *hit;

	if (comps_sort(s) < 0)
		return NULL;
	key.e.kind = kind;
	snprintf(key.e.name, sizeof(key.e.name), "%s", name);
	hit = bsearch(&key, s->c, s->n, sizeof(*s->c), cmp_comp);
	if (hit)
		return hit;
	return comp_add(s, kind, name, 0);
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
	st = db_prepare(s->db,
			"SELECT minute, read_bytes + write_bytes,"
			" read_ops + write_ops + md_ops,"
			" COALESCE(queue_len_avg, -1)"
			" FROM rollups_minute WHERE kind = ? AND name = ?"
			" AND minute >= ? AND minute < ? ORDER BY minute"
			" LIMIT 10000000",
			s->err);
	if (!st)
		return -1;
	if (db_bind_text(st, 0, db_kind(kind)) < 0 ||
	    db_bind_text(st, 1, name) < 0 ||
	    db_bind_int64(st, 2, (int64_t)floor(from)) < 0 ||
	    db_bind_int64(st, 3, (int64_t)ceil(to)) < 0 ||
	    db_exec(st, s->err) < 0)
		goto out;
	while ((r = db_fetch(st, s->err)) > 0) {
		struct anomaly_sample *x;

		if (grow((void **)&v, &cap, cnt + 1, sizeof(*v)) < 0) {
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
	db_stmt_close(st);
	return rv;
}

/* Names from a one-column SELECT bound to a job id. */
static int job_names(struct scan *s, const char *sql, uint64_t job,
		     char ***names, size_t *n)
{
	struct db_stmt *st;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int rv = -1, r;

	st = db_prepare(s->db, sql, s->err);
	if (!st)
		return -1;
	if (db_bind_uint64(st, 0, job) < 0 || db_exec(st, s->err) < 0)
		goto out;
	while ((r = db_fetch(st, s->err)) > 0) {
		if (grow((void **)&v, &cap, cnt + 1, sizeof(*v)) < 0 ||
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
	db_stmt_close(st);
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

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The default forwarders of a node list, from the topology. */
static int default_forwarders(struct scan *s, const char *nodelist,
			      char ***names, size_t *n)
{
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	hostlist_t hl;
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
		if (grow((void **)&v, &cap, cnt + 1, sizeof(*v)) < 0 ||
		    !(v[cnt] = strdup(s->t->forwarders[f].name))) {
			rv = errprintf(s->err, "health scan: out of memory");
			continue;
		}
		cnt++;
	}
	slurm_hostlist_destroy(hl);
	if (rv < 0) {
		free_names(v, cnt);
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
	if (grow((void **)&c->peer, &c->cap_peer, c->n_peer + 1,
		 sizeof(*c->peer)) < 0)
		return errprintf(s->err, "health scan: out of memory");
	v = &c->peer[c->n_peer++];
	v->wstart = wstart;
	v->verdict = verdict;
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
	return 0;
}

/* Run the peer detector on the members of one kind of one job. */
static int peer_job(struct scan *s, uint64_t job, uint32_t nodes, double start,
		    double end, enum health_kind kind, char **names, size_t n,
		    bool *eligible)
{
	struct anomaly_series *mem = calloc(n ? n : 1, sizeof(*mem));
	struct anomaly_peer_stat *stat = calloc(n ? n : 1, sizeof(*stat));
	struct anomaly_peer_result res;
	double wstart = floor(end / s->window) * s->window;
	int rv = -1;

	if (!mem || !stat) {
		errprintf(s->err, "health scan: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct anomaly_sample *smp;
		size_t ns;

		if (load_series(s, kind, names[i], start, end, &smp, &ns) < 0)
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
	for (size_t i = 0; mem && i < n; i++)
		free((void *)mem[i].samples);
	free(mem);
	free(stat);
	return rv;
}

struct job_row {
	uint64_t id;
	uint32_t nodes;
	double start, end;
	char *nodelist;
};

static int peer_scan(struct scan *s, double from, double to,
		     struct health_scan_stats *stats)
{
	struct job_row *jobs = NULL;
	size_t n = 0, cap = 0;
	struct db_stmt *st;
	int rv = -1, r;

	st = db_prepare(s->db,
			"SELECT job_id, node_count, start_at, end_at,"
			" COALESCE(nodelist, '') FROM jobs"
			" WHERE end_at >= ? AND end_at < ?"
			" AND start_at IS NOT NULL AND node_count >= ?"
			" ORDER BY end_at, job_id LIMIT 100000",
			s->err);
	if (!st)
		return -1;
	if (db_bind_int64(st, 0, (int64_t)from) < 0 ||
	    db_bind_int64(st, 1, (int64_t)to) < 0 ||
	    db_bind_uint64(st, 2, s->p->anomaly.peer.min_job_nodes) < 0 ||
	    db_exec(st, s->err) < 0)
		goto out;
	while ((r = db_fetch(st, s->err)) > 0) {
		struct job_row *j;

		if (grow((void **)&jobs, &cap, n + 1, sizeof(*jobs)) < 0) {
			errprintf(s->err, "health scan: out of memory");
			goto out;
		}
		j = &jobs[n];
		j->id = db_col_uint64(st, 0);
		j->nodes = (uint32_t)db_col_uint64(st, 1);
		j->start = (double)db_col_int64(st, 2);
		j->end = (double)db_col_int64(st, 3);
		j->nodelist = strdup(db_col_text(st, 4));
		if (!j->nodelist) {
			errprintf(s->err, "health scan: out of memory");
			goto out;
		}
		n++;
	}
	if (r < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	for (size_t i = 0; i < n; i++) {
		struct job_row *j = &jobs[i];
		char **names = NULL;
		size_t nn = 0;
		bool eligible = false;

		stats->jobs++;
		/* Forwarders: what the job really held, else its default
		 * mapping. */
		if (job_names(s,
			      "SELECT DISTINCT forwarder FROM allocations"
			      " WHERE job_id = ? ORDER BY forwarder"
			      " LIMIT 100000",
			      j->id, &names, &nn) < 0)
			goto out;
		if (!nn) {
			free(names);
			if (default_forwarders(s, j->nodelist, &names, &nn) < 0)
				goto out;
		}
		r = peer_job(s, j->id, j->nodes, j->start, j->end,
			     HEALTH_FORWARDER, names, nn, &eligible);
		free_names(names, nn);
		if (r < 0)
			goto out;
		if (job_names(s,
			      "SELECT DISTINCT target FROM jobstats_raw"
			      " WHERE job_id = ? AND kind = 'ost'"
			      " ORDER BY target LIMIT 100000",
			      j->id, &names, &nn) < 0)
			goto out;
		r = peer_job(s, j->id, j->nodes, j->start, j->end, HEALTH_OST,
			     names, nn, &eligible);
		free_names(names, nn);
		if (r < 0)
			goto out;
		if (eligible)
			stats->jobs_eligible++;
	}
	rv = 0;
out:
	db_stmt_close(st);
	for (size_t i = 0; i < n; i++)
		free(jobs[i].nodelist);
	free(jobs);
	return rv;
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

static int scan_comp(struct scan *s, struct comp *c, double since, double end,
		     struct health_scan_stats *stats)
{
	const struct policy_anomaly *pa = &s->p->anomaly;
	struct anomaly_sample *smp = NULL;
	size_t ns = 0;
	double start = since;
	int rv = -1;

	if (c->e.scanned_until > start)
		start = c->e.scanned_until;
	start = floor(start / s->window) * s->window;
	if (start >= end)
		return 0;
	if (c->peak > 0 &&
	    load_series(s, c->e.kind, c->e.name, start - pa->sustained.duration,
			end, &smp, &ns) < 0)
		return -1;
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
			if (grow((void **)&c->chg, &c->cap_chg, c->n_chg + 1,
				 sizeof(*c->chg)) < 0) {
				errprintf(s->err, "health scan: out of memory");
				goto out;
			}
			c->chg[c->n_chg++] = chg;
			stats->changes++;
		}
	}
	rv = 0;
out:
	free(smp);
	return rv;
}

static void run_change_commands(const struct policy *p,
				const struct health_entry *final,
				const struct health_change *chg, double timeout,
				fwd_error_t *cmd_err, size_t *failed)
{
	struct health_entry at = *final;

	/* The component as the change left it. */
	at.state = chg->to;
	snprintf(at.reason, sizeof(at.reason), "%s", chg->reason);
	cmd_err->text[0] = '\0';
	if (health_run_commands(&p->anomaly, &at, chg, timeout, cmd_err) < 0 &&
	    failed)
		(*failed)++;
}

int health_db_scan(struct db *db, const struct policy *p,
		   const struct topology *t, const struct health_scan_opts *o,
		   struct health_scan_stats *stats, fwd_error_t *err)
{
	struct scan s = {.db = db,
			 .p = p,
			 .t = t,
			 .err = err,
			 .window = p->anomaly.window};
	struct health_entry *rows = NULL;
	size_t n_rows = 0;
	double until, since, end, lo, now = (double)time(NULL);
	bool in_tx = false;
	int rv = -1;

	memset(stats, 0, sizeof(*stats));
	if (!(s.window > 0)) {
		errno = EINVAL;
		return errprintf(err, "anomaly.window %g: must be positive",
				 s.window);
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
	end = floor(until / s.window) * s.window;
	since = o->since > 0 ? o->since : end - 86400;
	since = floor(since / s.window) * s.window;
	/* One transaction from here: the reads see one snapshot, taken
	 * once the lock is held. */
	if (health_lock(db, p, err) < 0)
		return -1;
	in_tx = true;
	if (health_db_load(db, s.window, &rows, &n_rows, err) < 0)
		goto out;
	for (size_t i = 0; i < n_rows; i++) {
		struct comp *c = comp_add(&s, rows[i].kind, rows[i].name, 0);

		if (!c)
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
	if (lo < end && peer_scan(&s, lo, end, stats) < 0)
		goto out;
	if (comps_sort(&s) < 0)
		goto out;
	for (size_t i = 0; i < s.n; i++)
		if (scan_comp(&s, &s.c[i], since, end, stats) < 0)
			goto out;
	for (size_t i = 0; i < s.n; i++) {
		struct comp *c = &s.c[i];

		if (!c->touched)
			continue;
		for (size_t k = 0; k < c->n_chg; k++)
			if (write_change(db, &c->e, &c->chg[k], err) < 0)
				goto out;
		if (write_entry(db, &c->e, now, err) < 0)
			goto out;
	}
	if (db_commit(db, err) < 0)
		goto out;
	in_tx = false;
	/* Feedback after the commit: a failed scan runs no command. */
	for (size_t i = 0; i < s.n; i++) {
		for (size_t k = 0; k < s.c[i].n_chg; k++) {
			fwd_error_t cmd_err;

			run_change_commands(p, &s.c[i].e, &s.c[i].chg[k],
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
	for (size_t i = 0; i < s.n; i++)
		comp_free(&s.c[i]);
	free(s.c);
	free(rows);
	return rv;
}

/* ---- admin ------------------------------------------------------------------
 */

int health_db_admin(struct db *db, const struct policy *p,
		    enum health_kind kind, const char *name,
		    enum health_override action, const char *reason, double now,
		    double command_timeout, struct health_change *chg,
		    fwd_error_t *cmd_err, fwd_error_t *err)
{
	struct health_entry *rows = NULL, e;
	struct health_change c;
	size_t n = 0;
	bool in_tx = false;
	long i;
	int rv = -1, r;

	if (cmd_err)
		cmd_err->text[0] = '\0';
	if (strlen(name) >= HEALTH_NAME_MAX) {
		errno = EINVAL;
		return errprintf(err,
				 "component name %.40s...: longer than "
				 "%d characters",
				 name, HEALTH_NAME_MAX - 1);
	}
	if (health_lock(db, p, err) < 0)
		return -1;
	in_tx = true;
	if (health_db_load(db, p->anomaly.window, &rows, &n, err) < 0)
		goto out;
	i = health_find(rows, n, kind, name);
	if (i >= 0)
		e = rows[i];
	else
		health_entry_init(&e, kind, name);
	switch (action) {
	case HEALTH_OVERRIDE_EXCLUDE:
		r = health_admin_exclude(&e, now, reason, &c);
		break;
	case HEALTH_OVERRIDE_CLEAR:
		r = health_admin_clear(&e, now, reason, &c);
		break;
	default:
		r = health_admin_release(&e, now, reason, &c);
		break;
	}
	if (r == 1 && write_change(db, &e, &c, err) < 0)
		goto out;
	if (write_entry(db, &e, now, err) < 0)
		goto out;
	if (db_commit(db, err) < 0)
		goto out;
	in_tx = false;
	if (r == 1) {
		fwd_error_t ce;

		run_change_commands(p, &e, &c, command_timeout, &ce, NULL);
		if (cmd_err)
			*cmd_err = ce;
		if (chg)
			*chg = c;
	}
	free(rows);
	return r;
out:
	if (in_tx)
		db_rollback(db);
	free(rows);
	return rv;
}

/* ---- report -----------------------------------------------------------------
 */

int health_db_report(struct db *db, double since, double now,
		     struct health_report *r, fwd_error_t *err)
{
	struct db_stmt *st;
	char cur_kind[8] = "", cur_name[HEALTH_NAME_MAX] = "";
	bool open = false;
	double ep_start = 0, ep_end = 0;
	bool ep_ongoing = false;
	enum health_kind ep_kind = HEALTH_FORWARDER;
	int rv = -1, f;

	memset(r, 0, sizeof(*r));

#define CLOSE_EPISODE()                                                  \
	do {                                                             \
		if (open && ep_start >= since) {                         \
			int b = health_duration_bin(                     \
				(ep_ongoing ? now : ep_end) - ep_start); \
			if (ep_ongoing)                                  \
				r->ongoing[ep_kind][b]++;                \
			else                                             \
				r->count[ep_kind][b]++;                  \
		}                                                        \
		open = false;                                            \
	} while (0)

	st = db_prepare(db,
			"SELECT kind, name, state, start_at, end_at"
			" FROM health_history WHERE kind IN ('fwd', 'ost')"
			" ORDER BY kind, name, start_at, id LIMIT 10000000",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		const char *kind = db_col_text(st, 0);
		const char *name = db_col_text(st, 1);
		bool ok = !strcmp(db_col_text(st, 2), "ok");
		enum health_kind k;

		if (parse_db_kind(kind, &k) < 0)
			continue;
		if (strcmp(kind, cur_kind) || strcmp(name, cur_name)) {
			CLOSE_EPISODE();
			snprintf(cur_kind, sizeof(cur_kind), "%s", kind);
			snprintf(cur_name, sizeof(cur_name), "%s", name);
		}
		if (ok) {
			CLOSE_EPISODE();
			continue;
		}
		if (!open) {
			open = true;
			ep_kind = k;
			ep_start = (double)db_col_int64(st, 3);
		}
		ep_ongoing = db_col_null(st, 4);
		ep_end = (double)db_col_int64(st, 4);
	}
	if (f < 0)
		goto out;
	CLOSE_EPISODE();
#undef CLOSE_EPISODE
	db_stmt_close(st);
	st = db_prepare(db,
			"SELECT kind, state, COUNT(*) FROM health"
			" WHERE kind IN ('fwd', 'ost') AND state <> 'ok'"
			" GROUP BY kind, state LIMIT 100",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		enum health_kind k;
		unsigned cnt = (unsigned)db_col_uint64(st, 2);

		if (parse_db_kind(db_col_text(st, 0), &k) < 0)
			continue;
		if (!strcmp(db_col_text(st, 1), "excluded"))
			r->excluded_now[k] = cnt;
		else
			r->suspect_now[k] = cnt;
	}
	if (f < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

/* ---- job-level anomaly ----------------------------------------------------
 */

/* job_io.phases: [{"start","end","read_bytes","write_bytes",...}, ...] */
static int parse_phases(const char *text, uint64_t job,
			struct anomaly_phase **out, size_t *n, fwd_error_t *err)
{
	struct anomaly_phase *v = NULL;
	json_error_t je;
	json_t *a = json_loads(text, 0, &je), *el;
	size_t i, cnt = 0;

	*out = NULL;
	*n = 0;
	if (!a || !json_is_array(a)) {
		json_decref(a);
		errno = EINVAL;
		return errprintf(err,
				 "job %llu: job_io.phases: not a JSON "
				 "array",
				 (unsigned long long)job);
	}
	v = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*v));
	if (!v) {
		json_decref(a);
		return errprintf(err, "job %llu: out of memory",
				 (unsigned long long)job);
	}
	json_array_foreach (a, i, el) {
		json_t *s = json_object_get(el, "start");
		json_t *e = json_object_get(el, "end");
		double rb =
			json_number_value(json_object_get(el, "read_bytes"));
		double wb =
			json_number_value(json_object_get(el, "write_bytes"));

		if (!json_is_number(s) || !json_is_number(e) ||
		    json_number_value(e) < json_number_value(s)) {
			free(v);
			json_decref(a);
			errno = EINVAL;
			return errprintf(err,
					 "job %llu: job_io.phases[%zu]: "
					 "needs numbers start <= end",
					 (unsigned long long)job, i);
		}
		v[cnt].duration = json_number_value(e) - json_number_value(s);
		v[cnt].volume = rb + wb;
		cnt++;
	}
	json_decref(a);
	*out = v;
	*n = cnt;
	return 0;
}

/* Forwarders a job used: the ledger's rows, else its default mapping. */
static int job_forwarders(struct scan *s, uint64_t job, const char *nodelist,
			  char ***names, size_t *n)
{
	if (job_names(s,
		      "SELECT DISTINCT forwarder FROM allocations"
		      " WHERE job_id = ? AND action <> 'shadow'"
		      " ORDER BY forwarder LIMIT 100000",
		      job, names, n) < 0)
		return -1;
	if (*n)
		return 0;
	free(*names);
	return default_forwarders(s, nodelist, names, n);
}

static void bucket_range(uint32_t nodes, uint32_t base, uint64_t *lo,
			 uint64_t *hi)
{
	uint64_t b = 1;

	if (base < 2)
		base = 2;
	while (b * base <= nodes)
		b *= base;
	*lo = b;
	*hi = b * base - 1;
}

struct nb_row {
	uint64_t id;
	struct anomaly_neighbour nb;
	char **fw;
	size_t n_fw;
	char *nodelist;
};

void health_job_report_free(struct health_job_report *r)
{
	if (!r)
		return;
	free(r->phases);
	free(r->outlier);
	free_names(r->forwarders, r->n_forwarders);
	free(r->neighbours);
	memset(r, 0, sizeof(*r));
}

int health_db_job_check(struct db *db, const struct policy *p,
			const struct topology *t, uint64_t job_id,
			struct health_job_report *r, fwd_error_t *err)
{
	struct scan s = {.db = db, .p = p, .t = t, .err = err};
	struct anomaly_phase *hist = NULL;
	size_t n_hist = 0, cap_hist = 0, n_nb = 0, cap_nb = 0;
	struct nb_row *nbs = NULL;
	struct anomaly_neighbour *plain = NULL;
	struct anomaly_phase_report rep = {0};
	struct anomaly_run run;
	struct db_stmt *st = NULL;
	char *nodelist = NULL, *phases = NULL;
	double start, end;
	uint64_t lo, hi;
	int rv = -1, f;

	memset(r, 0, sizeof(*r));
	r->job_id = job_id;
	st = db_prepare(db,
			"SELECT j.user, j.name, j.node_count, j.start_at,"
			" j.end_at, COALESCE(j.nodelist, ''), i.phases"
			" FROM jobs j LEFT JOIN job_io i ON i.job_id = j.job_id"
			" WHERE j.job_id = ? LIMIT 1",
			err);
	if (!st)
		return -1;
	if (db_bind_uint64(st, 0, job_id) < 0 || db_exec(st, err) < 0)
		goto out;
	f = db_fetch(st, err);
	if (f < 0)
		goto out;
	if (f == 0) {
		errno = ENOENT;
		errprintf(err, "job %llu: not in the jobs table",
			  (unsigned long long)job_id);
		goto out;
	}
	snprintf(r->user, sizeof(r->user), "%s", db_col_text(st, 0));
	snprintf(r->name, sizeof(r->name), "%s", db_col_text(st, 1));
	r->nodes = (uint32_t)db_col_uint64(st, 2);
	start = (double)db_col_int64(st, 3);
	end = db_col_null(st, 4) ? (double)time(NULL)
				 : (double)db_col_int64(st, 4);
	nodelist = strdup(db_col_text(st, 5));
	phases = db_col_null(st, 6) ? NULL : strdup(db_col_text(st, 6));
	if (!nodelist) {
		errprintf(err, "job check: out of memory");
		goto out;
	}
	if (!phases) {
		errno = ENOENT;
		errprintf(err,
			  "job %llu: no I/O phases recorded (job_io."
			  "phases is empty)",
			  (unsigned long long)job_id);
		goto out;
	}
	if (parse_phases(phases, job_id, &r->phases, &r->n_phases, err) < 0)
		goto out;
	db_stmt_close(st);

	/* The same application's past runs at the same scale. */
	bucket_range(r->nodes, p->history.bucket_base, &lo, &hi);
	st = db_prepare(db,
			"SELECT j.job_id, i.phases FROM jobs j"
			" JOIN job_io i ON i.job_id = j.job_id"
			" WHERE j.user = ? AND j.name = ?"
			" AND j.node_count BETWEEN ? AND ?"
			" AND j.end_at IS NOT NULL AND j.end_at <= ?"
			" AND j.end_at >= ? AND j.job_id <> ?"
			" AND i.phases IS NOT NULL"
			" ORDER BY j.end_at DESC LIMIT 50",
			err);
	if (!st)
		goto out;
	if (db_bind_text(st, 0, r->user) < 0 ||
	    db_bind_text(st, 1, r->name) < 0 || db_bind_uint64(st, 2, lo) < 0 ||
	    db_bind_uint64(st, 3, hi) < 0 ||
	    db_bind_int64(st, 4, (int64_t)start) < 0 ||
	    db_bind_int64(st, 5, (int64_t)(start - p->history.max_age)) < 0 ||
	    db_bind_uint64(st, 6, job_id) < 0 || db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		struct anomaly_phase *ph;
		size_t n;

		if (parse_phases(db_col_text(st, 1), db_col_uint64(st, 0), &ph,
				 &n, NULL) < 0)
			continue; /* a bad past record: not history */
		if (grow((void **)&hist, &cap_hist, n_hist + n + 1,
			 sizeof(*hist)) < 0) {
			free(ph);
			errprintf(err, "job check: out of memory");
			goto out;
		}
		memcpy(hist + n_hist, ph, n * sizeof(*ph));
		n_hist += n;
		free(ph);
		r->n_history_runs++;
	}
	if (f < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	r->n_history_phases = n_hist;

	if (job_forwarders(&s, job_id, nodelist, &r->forwarders,
			   &r->n_forwarders) < 0)
		goto out;

	/* Jobs that ran at the same time. */
	st = db_prepare(db,
			"SELECT j.job_id, j.node_count, COALESCE(j.nodelist,"
			" ''), COALESCE(i.io_mode, 'none'),"
			" COALESCE(i.mdops_rate, 0),"
			" COALESCE(i.peak_bandwidth_bps, 0), j.start_at,"
			" COALESCE(j.end_at, ?)"
			" FROM jobs j LEFT JOIN job_io i ON i.job_id = j.job_id"
			" WHERE j.job_id <> ? AND j.start_at IS NOT NULL"
			" AND j.start_at < ? AND (j.end_at IS NULL OR"
			" j.end_at > ?) ORDER BY j.job_id LIMIT 10000",
			err);
	if (!st)
		goto out;
	if (db_bind_int64(st, 0, (int64_t)time(NULL)) < 0 ||
	    db_bind_uint64(st, 1, job_id) < 0 ||
	    db_bind_int64(st, 2, (int64_t)end) < 0 ||
	    db_bind_int64(st, 3, (int64_t)start) < 0 || db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		struct nb_row *nr;

		if (grow((void **)&nbs, &cap_nb, n_nb + 1, sizeof(*nbs)) < 0) {
			errprintf(err, "job check: out of memory");
			goto out;
		}
		nr = &nbs[n_nb];
		memset(nr, 0, sizeof(*nr));
		nr->id = db_col_uint64(st, 0);
		nr->nb.nodes = (uint32_t)db_col_uint64(st, 1);
		nr->nodelist = strdup(db_col_text(st, 2));
		nr->nb.n_to_1 = !strcmp(db_col_text(st, 3), "N-1");
		nr->nb.metadata_rate = db_col_double(st, 4);
		nr->nb.peak_bps = db_col_double(st, 5);
		nr->nb.start = (double)db_col_int64(st, 6);
		nr->nb.end = (double)db_col_int64(st, 7);
		n_nb++;
		if (!nr->nodelist) {
			errprintf(err, "job check: out of memory");
			goto out;
		}
	}
	if (f < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	plain = calloc(n_nb ? n_nb : 1, sizeof(*plain));
	if (!plain) {
		errprintf(err, "job check: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_nb; i++) {
		if (job_forwarders(&s, nbs[i].id, nbs[i].nodelist, &nbs[i].fw,
				   &nbs[i].n_fw) < 0)
			goto out;
		plain[i] = nbs[i].nb;
		plain[i].job_id = NULL;
		plain[i].forwarders = (const char *const *)nbs[i].fw;
		plain[i].n_forwarders = nbs[i].n_fw;
	}
	run.job_id = "run";
	run.start = start;
	run.end = end;
	run.forwarders = (const char *const *)r->forwarders;
	run.n_forwarders = r->n_forwarders;
	run.phases = r->phases;
	run.n_phases = r->n_phases;
	if (anomaly_phase_check(&p->anomaly, &p->decision.interference, hist,
				n_hist, &run, plain, n_nb, &rep, err) < 0)
		goto out;
	r->checked = rep.checked;
	r->anomalous = rep.anomalous;
	r->n_clusters = rep.n_clusters;
	r->n_outliers = rep.n_outliers;
	snprintf(r->reason, sizeof(r->reason), "%s", rep.reason);
	r->outlier = rep.outlier;
	rep.outlier = NULL;
	if (rep.n_neighbours) {
		r->neighbours =
			calloc(rep.n_neighbours, sizeof(*r->neighbours));
		if (!r->neighbours) {
			errprintf(err, "job check: out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < rep.n_neighbours; i++) {
		const struct anomaly_neighbour_report *in = &rep.neighbours[i];
		struct health_job_neighbour *o = &r->neighbours[i];
		const struct nb_row *nr = &nbs[in->index];

		o->job_id = nr->id;
		o->disruptive = in->disruptive;
		snprintf(o->reasons, sizeof(o->reasons), "%s", in->reasons);
		for (size_t a = 0; a < nr->n_fw && !o->shared[0]; a++)
			for (size_t b = 0; b < r->n_forwarders; b++)
				if (!strcmp(nr->fw[a], r->forwarders[b])) {
					snprintf(o->shared, sizeof(o->shared),
						 "%s", nr->fw[a]);
					break;
				}
	}
	r->n_neighbours = rep.n_neighbours;
	r->n_disruptive = rep.n_disruptive;
	rv = 0;
out:
	db_stmt_close(st);
	anomaly_phase_report_free(&rep);
	for (size_t i = 0; i < n_nb; i++) {
		free_names(nbs[i].fw, nbs[i].n_fw);
		free(nbs[i].nodelist);
	}
	free(nbs);
	free(plain);
	free(hist);
	free(nodelist);
	free(phases);
	if (rv < 0)
		health_job_report_free(r);
	return rv;
}
