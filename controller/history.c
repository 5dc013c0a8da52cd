/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job history read from jobs and allocations; see
 * controller/history.h.  The only SQL assembled at run time is the WHERE
 * clause of the key query, from constant fragments chosen by which key
 * fields the policy names (never from values), so the jobs_app index is
 * usable for the default key, and the IN lists of by-id reads, from
 * constant placeholders.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "controller/audit.h"
#include "controller/history.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "policies/policy.h"

/* Job ids per statement of a by-id read. */
#define IN_CHUNK 100

static int nomem(fwd_error_t *err)
{
	errno = ENOMEM;
	return errprintf(err, "out of memory");
}

/* A malloc'd copy of column c ("" for NULL); -1 on ENOMEM. */
static int dup_col(const struct db_stmt *st, unsigned c, char **dst, bool *has)
{
	const char *v = db_col_null(st, c) ? NULL : db_col_text(st, c);

	if (has)
		*has = v != NULL;
	*dst = strdup(v ? v : "");
	return *dst ? 0 : -1;
}

/* ---- forwarders held ---- */

/* v[i].held for the jobs of one chunk, in one statement. */
static int fill_held_chunk(struct db *db, struct history_job *v, size_t n,
			   fwd_error_t *err)
{
	char sql[512 + 2 * IN_CHUNK];
	struct db_stmt *st;
	int rv = -1, r;

	snprintf(sql, sizeof(sql),
		 "SELECT DISTINCT job_id, forwarder FROM allocations"
		 " WHERE " LEDGER_HELD_WHERE " AND job_id IN (");
	db_append_placeholders(sql, sizeof(sql), n);
	strncat(sql, ") ORDER BY job_id, forwarder",
		sizeof(sql) - strlen(sql) - 1);
	if (!(st = db_prepare(db, sql, err)))
		return -1;
	for (size_t i = 0; i < n; i++)
		db_bind_uint64(st, (unsigned)i, v[i].job_id);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		uint64_t id = db_col_uint64(st, 0);

		for (size_t i = 0; i < n; i++) {
			struct history_job *j = &v[i];
			char **a;

			if (j->job_id != id)
				continue;
			a = realloc(j->held, (j->n_held + 1) * sizeof(*a));
			if (!a) {
				nomem(err);
				goto out;
			}
			j->held = a;
			if (!(a[j->n_held] = strdup(db_col_text(st, 1)))) {
				nomem(err);
				goto out;
			}
			j->n_held++;
		}
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int history_fill_held(struct db *db, struct history_job *v, size_t n,
		      fwd_error_t *err)
{
	for (size_t at = 0; at < n; at += IN_CHUNK)
		if (fill_held_chunk(db, v + at,
				    n - at < IN_CHUNK ? n - at : IN_CHUNK,
				    err) < 0)
			return -1;
	return 0;
}

/* ---- jobs rows ---- */

#define JOB_COLS                                                             \
	"job_id, user, account, name, partition_name, nodelist, node_count," \
	" start_at, end_at"

static int read_job(const struct db_stmt *st, struct history_job *row,
		    fwd_error_t *err)
{
	memset(row, 0, sizeof(*row));
	row->job_id = db_col_uint64(st, 0);
	if (dup_col(st, 1, &row->user, NULL) < 0 ||
	    dup_col(st, 2, &row->account, &row->has_account) < 0 ||
	    dup_col(st, 3, &row->name, NULL) < 0 ||
	    dup_col(st, 4, &row->partition, &row->has_partition) < 0)
		return nomem(err);
	if (!db_col_null(st, 5) &&
	    !(row->nodelist = strdup(db_col_text(st, 5))))
		return nomem(err);
	row->node_count = (uint32_t)db_col_uint64(st, 6);
	row->start_at = db_col_int64(st, 7);
	row->has_start = !db_col_null(st, 7);
	row->end_at = db_col_int64(st, 8);
	return 0;
}

void history_job_free(struct history_job *row)
{
	if (!row)
		return;
	free(row->nodelist);
	row->nodelist = NULL;
	free(row->user);
	free(row->account);
	free(row->name);
	free(row->partition);
	row->user = row->account = row->name = row->partition = NULL;
	ledger_store_names_free(row->held, row->n_held);
	row->held = NULL;
	row->n_held = 0;
}

void history_jobs_free(struct history_job *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		history_job_free(&v[i]);
	free(v);
}

int history_job(struct db *db, uint64_t job_id, struct history_job *row,
		fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1, r;

	memset(row, 0, sizeof(*row));
	st = db_prepare(db, "SELECT " JOB_COLS " FROM jobs WHERE job_id = ?",
			err);
	if (!st)
		return -1;
	db_bind_uint64(st, 0, job_id);
	if (db_exec(st, err) < 0)
		goto out;
	r = db_fetch(st, err);
	if (r <= 0) {
		rv = r;
		goto out;
	}
	if (read_job(st, row, err) < 0) {
		history_job_free(row);
		goto out;
	}
	rv = 1;
out:
	db_stmt_close(st);
	return rv;
}

/* Append the rows of an executed SELECT of JOB_COLS to *v. */
static int fetch_jobs(struct db_stmt *st, struct history_job **v, size_t *n,
		      size_t *cap, fwd_error_t *err)
{
	int r;

	while ((r = db_fetch(st, err)) > 0) {
		if (fwd_grow((void **)v, cap, *n + 1, sizeof(**v), 64) < 0)
			return nomem(err);
		if (read_job(st, &(*v)[*n], err) < 0) {
			history_job_free(&(*v)[*n]);
			return -1;
		}
		(*n)++;
	}
	return r < 0 ? -1 : 0;
}

int history_jobs_ended(struct db *db, double from, double to,
		       uint32_t min_nodes, struct history_job **out,
		       size_t *n_out, fwd_error_t *err)
{
	struct history_job *v = NULL;
	size_t n = 0, cap = 0;
	struct db_stmt *st;
	int rv = -1;

	*out = NULL;
	*n_out = 0;
	st = db_prepare(db,
			"SELECT " JOB_COLS " FROM jobs"
			" WHERE end_at >= ? AND end_at < ?"
			" AND start_at IS NOT NULL AND node_count >= ?"
			" ORDER BY end_at, job_id LIMIT 100000",
			err);
	if (!st)
		return -1;
	if (db_bind_int64(st, 0, (int64_t)from) < 0 ||
	    db_bind_int64(st, 1, (int64_t)to) < 0 ||
	    db_bind_uint64(st, 2, min_nodes) < 0 || db_exec(st, err) < 0)
		goto out;
	if (fetch_jobs(st, &v, &n, &cap, err) < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	if (history_fill_held(db, v, n, err) < 0)
		goto out;
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	rv = 0;
out:
	db_stmt_close(st);
	history_jobs_free(v, n);
	return rv;
}

static int cmp_job_id(const void *a, const void *b)
{
	const struct history_job *x = a, *y = b;

	return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

int history_jobs_by_id(struct db *db, const uint64_t *ids, size_t n_ids,
		       bool finished_only, struct history_job **out,
		       size_t *n_out, fwd_error_t *err)
{
	struct history_job *v = NULL;
	size_t n = 0, cap = 0;
	int rv = -1;

	*out = NULL;
	*n_out = 0;
	for (size_t at = 0; at < n_ids; at += IN_CHUNK) {
		size_t k = n_ids - at < IN_CHUNK ? n_ids - at : IN_CHUNK;
		char sql[512 + 2 * IN_CHUNK];
		struct db_stmt *st;
		int r;

		snprintf(sql, sizeof(sql),
			 "SELECT " JOB_COLS " FROM jobs WHERE %sjob_id IN (",
			 finished_only ? "end_at IS NOT NULL AND " : "");
		db_append_placeholders(sql, sizeof(sql), k);
		strncat(sql, ")", sizeof(sql) - strlen(sql) - 1);
		if (!(st = db_prepare(db, sql, err)))
			goto out;
		for (size_t i = 0; i < k; i++)
			db_bind_uint64(st, (unsigned)i, ids[at + i]);
		r = db_exec(st, err) < 0 ? -1
					 : fetch_jobs(st, &v, &n, &cap, err);
		db_stmt_close(st);
		if (r < 0)
			goto out;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_job_id);
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	rv = 0;
out:
	history_jobs_free(v, n);
	return rv;
}

/* ---- profile keys ---- */

int history_key_jobs(struct db *db, const struct policy *p,
		     const struct profile_job *job, int64_t now, size_t limit,
		     struct profile_jobref **out, size_t *n_out,
		     fwd_error_t *err)
{
	char sql[1024];
	struct db_stmt *st;
	struct profile_jobref *v = NULL;
	size_t n = 0, cap = 0;
	unsigned idx = 0;
	int rv = -1, r;
	int64_t since = p->history.max_age > 0
				? now - (int64_t)p->history.max_age
				: INT64_MIN;

	*out = NULL;
	*n_out = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT job_id, node_count, end_at FROM jobs"
		 " WHERE end_at IS NOT NULL AND end_at >= ?");
	for (size_t i = 0; i < p->history.key.count; i++) {
		const char *f = p->history.key.items[i];
		const char *frag = NULL;

		if (!strcmp(f, "user"))
			frag = " AND user = ?";
		else if (!strcmp(f, "account"))
			frag = " AND account <=> ?";
		else if (!strcmp(f, "name"))
			frag = " AND name = ?";
		else if (!strcmp(f, "partition"))
			frag = " AND partition_name <=> ?";
		else if (!strcmp(f, "node_bucket"))
			frag = " AND node_count >= ? AND node_count < ?";
		if (!frag) {
			errno = EINVAL;
			return errprintf(err,
					 "history.key: unknown field "
					 "\"%s\"",
					 f);
		}
		strncat(sql, frag, sizeof(sql) - strlen(sql) - 1);
	}
	if (!limit || limit > HISTORY_KEY_JOBS_MAX)
		limit = HISTORY_KEY_JOBS_MAX;
	snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
		 " ORDER BY end_at DESC LIMIT %zu", limit);

	if (!(st = db_prepare(db, sql, err)))
		return -1;
	db_bind_int64(st, idx++, since);
	for (size_t i = 0; i < p->history.key.count; i++) {
		const char *f = p->history.key.items[i];

		if (!strcmp(f, "user")) {
			db_bind_text(st, idx++, job->user ? job->user : "");
		} else if (!strcmp(f, "account")) {
			db_bind_text(st, idx++, job->account);
		} else if (!strcmp(f, "name")) {
			db_bind_text(st, idx++, job->name ? job->name : "");
		} else if (!strcmp(f, "partition")) {
			db_bind_text(st, idx++, job->partition);
		} else {
			uint64_t lo = profile_bucket(job->nodes,
						     p->history.bucket_base);
			uint64_t base = p->history.bucket_base < 2
						? 2
						: p->history.bucket_base;

			db_bind_uint64(st, idx++, lo);
			db_bind_uint64(st, idx++, lo ? lo * base : 1);
		}
	}
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		struct profile_jobref *x;

		if (fwd_grow((void **)&v, &cap, n + 1, sizeof(*v), 64) < 0) {
			nomem(err);
			goto out;
		}
		x = &v[n++];
		memset(x, 0, sizeof(*x));
		x->job_id = db_col_uint64(st, 0);
		x->job.nodes = (uint32_t)db_col_uint64(st, 1);
		x->end_at = db_col_int64(st, 2);
	}
	if (r < 0)
		goto out;
	*out = v;
	*n_out = n;
	v = NULL;
	rv = 0;
out:
	free(v);
	db_stmt_close(st);
	return rv;
}

/* ---- the job-level check ---- */

int history_app_runs(struct db *db, const char *user, const char *name,
		     uint64_t lo, uint64_t hi, int64_t after, int64_t before,
		     uint64_t exclude, uint64_t **out, size_t *n_out,
		     fwd_error_t *err)
{
	struct db_stmt *st;
	uint64_t *v = NULL;
	size_t n = 0;
	int rv = -1;

	*out = NULL;
	*n_out = 0;
	st = db_prepare(db,
			"SELECT job_id FROM jobs"
			" WHERE user = ? AND name = ?"
			" AND node_count BETWEEN ? AND ?"
			" AND end_at IS NOT NULL AND end_at <= ?"
			" AND end_at >= ? AND job_id <> ?"
			" ORDER BY end_at DESC LIMIT 100000",
			err);
	if (!st)
		return -1;
	if (db_bind_text(st, 0, user) < 0 || db_bind_text(st, 1, name) < 0 ||
	    db_bind_uint64(st, 2, lo) < 0 || db_bind_uint64(st, 3, hi) < 0 ||
	    db_bind_int64(st, 4, before) < 0 ||
	    db_bind_int64(st, 5, after) < 0 ||
	    db_bind_uint64(st, 6, exclude) < 0 || db_exec(st, err) < 0)
		goto out;
	if (db_fetch_uint64s(st, &v, &n, err) < 0)
		goto out;
	*out = v;
	*n_out = n;
	v = NULL;
	rv = 0;
out:
	free(v);
	db_stmt_close(st);
	return rv;
}

int history_jobs_overlapping(struct db *db, uint64_t exclude, double start,
			     double end, double now, struct history_job **out,
			     size_t *n_out, fwd_error_t *err)
{
	struct history_job *v = NULL;
	size_t n = 0, cap = 0;
	struct db_stmt *st;
	int rv = -1;

	*out = NULL;
	*n_out = 0;
	st = db_prepare(db,
			"SELECT job_id, user, account, name, partition_name,"
			" COALESCE(nodelist, ''), node_count, start_at,"
			" COALESCE(end_at, ?) FROM jobs"
			" WHERE job_id <> ? AND start_at IS NOT NULL"
			" AND start_at < ? AND (end_at IS NULL OR"
			" end_at > ?) ORDER BY job_id LIMIT 10000",
			err);
	if (!st)
		return -1;
	if (db_bind_int64(st, 0, (int64_t)now) < 0 ||
	    db_bind_uint64(st, 1, exclude) < 0 ||
	    db_bind_int64(st, 2, (int64_t)end) < 0 ||
	    db_bind_int64(st, 3, (int64_t)start) < 0 || db_exec(st, err) < 0)
		goto out;
	if (fetch_jobs(st, &v, &n, &cap, err) < 0)
		goto out;
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	rv = 0;
out:
	db_stmt_close(st);
	history_jobs_free(v, n);
	return rv;
}

int history_job_forwarding(struct db *db, uint64_t job_num, size_t n_held,
			   bool *priv, bool *direct, fwd_error_t *err)
{
	*priv = *direct = false;
	if (n_held)
		return ledger_store_job_private(db, job_num, priv, err);
	return audit_job_direct(db, job_num, direct, err);
}
