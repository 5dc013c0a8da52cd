/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-job figures from jobstats_raw; see monitor/jobstats.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/jobstats.h"

int jobstats_job_ids(struct db *db, uint64_t **ids, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	uint64_t *v = NULL;
	size_t cnt = 0;
	int rv = -1;

	*ids = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT DISTINCT job_id FROM jobstats_raw"
			" WHERE job_id IS NOT NULL ORDER BY job_id",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	if (db_fetch_uint64s(st, &v, &cnt, err) < 0)
		goto out;
	*ids = v;
	*n = cnt;
	v = NULL;
	rv = 0;
out:
	free(v);
	db_stmt_close(st);
	return rv;
}

enum jobstats_class jobstats_class_of(const char *kind, const char *op)
{
	if (!strcmp(op, "read_bytes"))
		return JOBSTATS_READ;
	if (!strcmp(op, "write_bytes"))
		return JOBSTATS_WRITE;
	/* Data-on-MDT: an MDT's read / write / punch are the times of the
	 * data requests counted above */
	if (!strcmp(kind, "mdt") && strcmp(op, "read") != 0 &&
	    strcmp(op, "write") != 0 && strcmp(op, "punch") != 0)
		return JOBSTATS_METADATA;
	return JOBSTATS_UNCOUNTED;
}

/* The previous snapshot of an operation of the current (target, Lustre
 * job id): a handful of operations. */
struct prev_op {
	char op[33];
	uint64_t samples, sum;
	bool known; /* a snapshot (or a baseline) came before */
};

/* A snapshot before the walk, from which its operation's increments
 * start (jobstats_name_sums()). */
struct snap {
	char target[129], op[33];
	uint64_t samples, sum;
};

/* One walk: the current (target, Lustre job id), whose rows come
 * together (compared with it, copied when it changes), its operations'
 * previous snapshots, and the baselines (none for a Slurm job id). */
struct walk {
	char *target, *lid;
	size_t target_cap, lid_cap;
	struct prev_op *prev;
	size_t n_prev, prev_cap;
	const struct snap *base;
	size_t n_base;
};

/* Copies s into *key, grown as needed. */
static int set_key(char **key, size_t *cap, const char *s)
{
	size_t len = strlen(s) + 1;

	if (FWD_GROW(*key, *cap, len, 64) < 0)
		return -1;
	memcpy(*key, s, len);
	return 0;
}

static struct prev_op *prev_of(struct walk *w, const char *target,
			       const char *op)
{
	struct prev_op *p;

	for (size_t i = 0; i < w->n_prev; i++)
		if (!strcmp(w->prev[i].op, op))
			return &w->prev[i];
	if (FWD_GROW(w->prev, w->prev_cap, w->n_prev + 1, 16) < 0)
		return NULL;
	p = &w->prev[w->n_prev++];
	memset(p, 0, sizeof(*p));
	snprintf(p->op, sizeof(p->op), "%s", op);
	for (size_t i = 0; i < w->n_base; i++)
		if (!strcmp(w->base[i].target, target) &&
		    !strcmp(w->base[i].op, op)) {
			p->samples = w->base[i].samples;
			p->sum = w->base[i].sum;
			p->known = true;
			break;
		}
	return p;
}

/* The walks' statements: the columns walk_rows() reads, through the
 * job_id index (job, target, Lustre id, ts, op), in its order. */
#define WALK_SELECT                                            \
	"SELECT kind, target, lustre_job_id, op, ts, samples," \
	" sum_value FROM jobstats_raw FORCE INDEX (jobstats_raw_job)"
#define WALK_ORDER " ORDER BY target, lustre_job_id, ts, op"

/* Reads st's rows (kind, target, Lustre id, op, ts, samples, sum), in
 * (target, Lustre id, ts, op) order, as increments. */
static int walk_rows(struct walk *w, struct db_stmt *st, jobstats_step_fn fn,
		     void *arg, fwd_error_t *err)
{
	int r;

	while ((r = db_fetch(st, err)) > 0) {
		struct jobstats_step s = {
			.kind = db_col_text(st, 0),
			.target = db_col_text(st, 1),
			.lustre_job_id = db_col_text(st, 2),
			.op = db_col_text(st, 3),
			.ts = db_col_int64(st, 4),
		};
		uint64_t n = db_col_uint64(st, 5), v = db_col_uint64(st, 6);
		struct prev_op *p;

		if (!s.kind || !s.target || !s.lustre_job_id || !s.op)
			continue;
		s.new_target = !w->target || strcmp(w->target, s.target);
		if (s.new_target || strcmp(w->lid, s.lustre_job_id)) {
			if ((s.new_target && set_key(&w->target, &w->target_cap,
						     s.target) < 0) ||
			    set_key(&w->lid, &w->lid_cap, s.lustre_job_id) < 0)
				goto oom;
			w->n_prev = 0;
		}
		if (!(p = prev_of(w, s.target, s.op)))
			goto oom;
		/* the first snapshot, or a new entry: whole */
		s.samples = n;
		s.sum = v;
		if (p->known && n >= p->samples && v >= p->sum) {
			s.samples = n - p->samples;
			s.sum = v - p->sum;
		}
		p->samples = n;
		p->sum = v;
		p->known = true;
		s.cls = jobstats_class_of(s.kind, s.op);
		if (fn(arg, &s) < 0)
			goto oom;
	}
	return r;
oom:
	return errprintf(err, "%s", strerror(errno));
}

static void walk_free(struct walk *w)
{
	free(w->target);
	free(w->lid);
	free(w->prev);
}

int jobstats_job_walk(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		      jobstats_step_fn fn, void *arg, fwd_error_t *err)
{
	struct walk w = {0};
	struct db_stmt *st;
	int rv = -1;

	/* the job_id index holds the primary key (target, Lustre id, ts,
	 * op) after the job id: its order is the one wanted, without a
	 * sort; left to itself the optimizer walks the whole primary key
	 * for that order instead */
	st = db_queryf_stream(db, err,
			      WALK_SELECT " WHERE job_id = ?"
					  " AND ts BETWEEN ? AND ?" WALK_ORDER,
			      "uii", job_id, from, to);
	if (st && walk_rows(&w, st, fn, arg, err) == 0)
		rv = 0;
	walk_free(&w);
	db_stmt_close(st);
	if (rv < 0)
		errprefix(err, "reading the job_stats of job %llu",
			  (unsigned long long)job_id);
	return rv;
}

void jobstats_sums_add(struct jobstats_sums *out, const struct jobstats_step *s)
{
	out->rows++;
	switch (s->cls) {
	case JOBSTATS_READ:
		out->read_ops += s->samples;
		out->read_bytes += s->sum;
		break;
	case JOBSTATS_WRITE:
		out->write_ops += s->samples;
		out->write_bytes += s->sum;
		break;
	case JOBSTATS_METADATA:
		out->md_ops += s->samples;
		break;
	case JOBSTATS_UNCOUNTED:
		break;
	}
}

static int sums_step(void *arg, const struct jobstats_step *s)
{
	jobstats_sums_add(arg, s);
	return 0;
}

int jobstats_job_sums(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		      struct jobstats_sums *out, fwd_error_t *err)
{
	memset(out, 0, sizeof(*out));
	if (jobstats_job_walk(db, job_id, from, to, sums_step, out, err) < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}

int fwd_samples_sums(struct db *db, char *const *names, size_t n, int64_t from,
		     int64_t to, struct fwd_samples_sums *out, fwd_error_t *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t at = 0; at < n; at += 100) {
		size_t k = n - at < 100 ? n - at : 100;
		char sql[512 + 2 * 100];
		struct db_stmt *st;
		int r;

		snprintf(sql, sizeof(sql),
			 "SELECT COALESCE(SUM(read_bytes), 0),"
			 " COALESCE(SUM(write_bytes), 0),"
			 " COALESCE(SUM(read_ops), 0),"
			 " COALESCE(SUM(write_ops), 0),"
			 " COALESCE(SUM(md_ops), 0), COUNT(dt)"
			 " FROM samples_raw WHERE kind = 'fwd'"
			 " AND ts > ? AND ts <= ? AND dt IS NOT NULL"
			 " AND name IN (");
		db_append_placeholders(sql, sizeof(sql), k);
		strncat(sql, ")", sizeof(sql) - strlen(sql) - 1);
		if (!(st = db_prepare(db, sql, err)))
			return -1;
		db_bind_int64(st, 0, from);
		db_bind_int64(st, 1, to);
		for (size_t i = 0; i < k; i++)
			db_bind_text(st, (unsigned)(2 + i), names[at + i]);
		if (db_exec(st, err) < 0) {
			db_stmt_close(st);
			return -1;
		}
		r = db_fetch(st, err);
		if (r > 0) {
			out->read_bytes += db_col_uint64(st, 0);
			out->write_bytes += db_col_uint64(st, 1);
			out->read_ops += db_col_uint64(st, 2);
			out->write_ops += db_col_uint64(st, 3);
			out->md_ops += db_col_uint64(st, 4);
			out->samples += db_col_uint64(st, 5);
		}
		db_stmt_close(st);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* The newest snapshot of each (kind, target, op) of a Lustre id with no
 * Slurm job before a time: where the id's counters stood then. */
static const char name_base_sql[] =
	"SELECT r.target, r.op, r.samples, r.sum_value"
	" FROM jobstats_raw r JOIN (SELECT kind, target, op, MAX(ts) AS ts"
	"  FROM jobstats_raw WHERE lustre_job_id = ? AND job_id IS NULL"
	"  AND ts < ? GROUP BY kind, target, op) m"
	" ON m.kind = r.kind AND m.target = r.target AND m.op = r.op"
	" AND m.ts = r.ts WHERE r.lustre_job_id = ? AND r.job_id IS NULL";

static int name_base(struct db *db, const char *id, int64_t before,
		     struct snap **v, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st =
		db_queryf(db, err, name_base_sql, "sis", id, before, id);
	size_t cap = 0;
	int r;

	*v = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((r = db_fetch(st, err)) > 0) {
		const char *tg = db_col_text(st, 0), *op = db_col_text(st, 1);
		struct snap *x;

		if (!tg || !op)
			continue;
		if (FWD_GROW(*v, cap, *n + 1, 16) < 0) {
			errprintf(err, "%s", strerror(errno));
			r = -1;
			break;
		}
		x = &(*v)[(*n)++];
		snprintf(x->target, sizeof(x->target), "%s", tg);
		snprintf(x->op, sizeof(x->op), "%s", op);
		x->samples = db_col_uint64(st, 2);
		x->sum = db_col_uint64(st, 3);
	}
	db_stmt_close(st);
	return r < 0 ? -1 : 0;
}

int jobstats_name_sums(struct db *db, const char *lustre_job_id, int64_t since,
		       int64_t to, struct jobstats_sums *out, fwd_error_t *err)
{
	struct snap *base = NULL;
	struct walk w = {0};
	struct db_stmt *st = NULL;
	int rv = -1;

	memset(out, 0, sizeof(*out));
	if (name_base(db, lustre_job_id, since, &base, &w.n_base, err) < 0)
		goto out;
	w.base = base;
	/* the rows of no Slurm job are the NULL range of the job_id index,
	 * in (target, Lustre id, ts, op) order there */
	st = db_queryf_stream(db, err,
			      WALK_SELECT " WHERE job_id IS NULL"
					  " AND lustre_job_id = ?"
					  " AND ts BETWEEN ? AND ?" WALK_ORDER,
			      "sii", lustre_job_id, since, to);
	if (st && walk_rows(&w, st, sums_step, out, err) == 0)
		rv = 0;
out:
	walk_free(&w);
	free(base);
	db_stmt_close(st);
	if (rv < 0) {
		memset(out, 0, sizeof(*out));
		errprefix(err, "reading the job_stats of %s", lustre_job_id);
	}
	return rv;
}

int ingest_arrivals_take(struct db *db, struct ingest_arrivals *out,
			 fwd_error_t *err)
{
	struct db_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	if (db_begin(db, err) < 0)
		return -1;
	st = db_prepare(db,
			"SELECT source, min_ts, max_ts FROM ingest_arrivals"
			" FOR UPDATE",
			err);
	if (!st || db_exec(st, err) < 0)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		const char *src = db_col_text(st, 0);

		if (src && !strcmp(src, "samples")) {
			out->has_samples = true;
			out->samples_from = db_col_int64(st, 1);
			out->samples_to = db_col_int64(st, 2);
		} else if (src && !strcmp(src, "jobstats")) {
			out->has_jobstats = true;
			out->jobstats_from = db_col_int64(st, 1);
			out->jobstats_to = db_col_int64(st, 2);
		}
	}
	if (r < 0)
		goto fail;
	db_stmt_close(st);
	st = NULL;
	if (db_execf(db, err, "DELETE FROM ingest_arrivals", "") < 0 ||
	    db_commit(db, err) < 0)
		goto fail;
	return 0;
fail:
	db_stmt_close(st);
	db_rollback(db);
	return -1;
}
