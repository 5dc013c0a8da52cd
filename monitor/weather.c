/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's tables over a time range, for the reports; see
 * monitor/weather.h.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/weather.h"

/* names per statement: the IN list's placeholders */
#define WEATHER_CHUNK 100

static void copy_col(struct db_stmt *st, unsigned int col, char *buf,
		     size_t len)
{
	const char *v = db_col_null(st, col) ? NULL : db_col_text(st, col);

	snprintf(buf, len, "%s", v ? v : "");
}

static int cells_run(struct db *db, const char *kind, char *const *names,
		     size_t k, int64_t from, int64_t to, int64_t bucket,
		     struct weather_cell **out, size_t *n, size_t *cap,
		     fwd_error_t *err)
{
	char sql[1024 + 2 * WEATHER_CHUNK];
	struct db_stmt *st;
	unsigned int i = 0;
	int r, rv = -1;

	snprintf(sql, sizeof(sql),
		 "SELECT kind, name, ? + ((minute - ?) DIV ?) * ? AS b,"
		 " SUM(samples), SUM(read_bytes), SUM(write_bytes),"
		 " SUM(read_ops), SUM(write_ops), SUM(md_ops),"
		 " COALESCE(SUM(queue_len_sum), 0), SUM(queue_len_samples),"
		 " COALESCE(MAX(read_bps_max), 0),"
		 " COALESCE(MAX(write_bps_max), 0)"
		 " FROM rollups_minute WHERE minute >= ? AND minute < ?%s%s",
		 kind ? " AND kind = ?" : "", k ? " AND name IN (" : "");
	if (k) {
		db_append_placeholders(sql, sizeof(sql), k);
		strncat(sql, ")", sizeof(sql) - strlen(sql) - 1);
	}
	strncat(sql, " GROUP BY kind, name, b ORDER BY kind, name, b",
		sizeof(sql) - strlen(sql) - 1);
	st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	db_bind_int64(st, i++, from);
	db_bind_int64(st, i++, from);
	db_bind_int64(st, i++, bucket);
	db_bind_int64(st, i++, bucket);
	db_bind_int64(st, i++, from);
	db_bind_int64(st, i++, to);
	if (kind)
		db_bind_text(st, i++, kind);
	for (size_t j = 0; j < k; j++)
		db_bind_text(st, i++, names[j]);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		struct weather_cell *c;

		if (FWD_GROW(*out, *cap, *n + 1, 256) < 0) {
			errprintf(err, "%s", strerror(errno));
			goto out;
		}
		c = &(*out)[(*n)++];
		memset(c, 0, sizeof(*c));
		copy_col(st, 0, c->kind, sizeof(c->kind));
		copy_col(st, 1, c->name, sizeof(c->name));
		c->t = db_col_int64(st, 2);
		c->samples = db_col_uint64(st, 3);
		c->read_bytes = db_col_uint64(st, 4);
		c->write_bytes = db_col_uint64(st, 5);
		c->read_ops = db_col_uint64(st, 6);
		c->write_ops = db_col_uint64(st, 7);
		c->md_ops = db_col_uint64(st, 8);
		c->queue_sum = db_col_double(st, 9);
		c->queue_n = db_col_uint64(st, 10);
		c->read_bps_max = db_col_double(st, 11);
		c->write_bps_max = db_col_double(st, 12);
	}
	if (r == 0)
		rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int weather_cells(struct db *db, const char *kind, char *const *names,
		  size_t n_names, int64_t from, int64_t to, int64_t bucket,
		  struct weather_cell **out, size_t *n, fwd_error_t *err)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (bucket < 60 || bucket % 60 || to <= from) {
		errno = EINVAL;
		return errprintf(err,
				 "rollups: bucket %lld s over [%lld, %lld): "
				 "not a whole number of minutes over a range",
				 (long long)bucket, (long long)from,
				 (long long)to);
	}
	if (n_names == 0) {
		if (cells_run(db, kind, NULL, 0, from, to, bucket, out, n, &cap,
			      err) < 0)
			goto fail;
		return 0;
	}
	for (size_t at = 0; at < n_names; at += WEATHER_CHUNK) {
		size_t k = n_names - at < WEATHER_CHUNK ? n_names - at
							: WEATHER_CHUNK;

		if (cells_run(db, kind, names + at, k, from, to, bucket, out, n,
			      &cap, err) < 0)
			goto fail;
	}
	return 0;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	return errprefix(err, "reading the rollups");
}

/* The classification of jobstats_job_sums() (monitor/jobstats.c). */
static void add_op(struct weather_jobstats *w, const char *op, uint64_t samples,
		   uint64_t sum)
{
	if (!strcmp(op, "read_bytes")) {
		w->read_ops += samples;
		w->read_bytes += sum;
	} else if (!strcmp(op, "write_bytes")) {
		w->write_ops += samples;
		w->write_bytes += sum;
	} else if (!strcmp(w->kind, "mdt") && strcmp(op, "read") != 0 &&
		   strcmp(op, "write") != 0 && strcmp(op, "punch") != 0) {
		w->md_ops += samples;
	}
}

static int js_cmp(const void *a, const void *b)
{
	const struct weather_jobstats *x = a, *y = b;
	int c;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	c = strcmp(x->kind, y->kind);
	return c ? c : strcmp(x->target, y->target);
}

int weather_jobstats(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		     struct weather_jobstats **out, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	size_t cap = 0;
	char prev_key[600] = "";
	uint64_t prev_s = 0, prev_v = 0;
	int r, rv = -1;

	*out = NULL;
	*n = 0;
	st = db_queryf(db, err,
		       "SELECT kind, target, lustre_job_id, op, ts, samples,"
		       " sum_value FROM jobstats_raw"
		       " WHERE job_id = ? AND ts BETWEEN ? AND ?"
		       " ORDER BY kind, target, lustre_job_id, op, ts",
		       "uii", job_id, from, to);
	if (!st)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		const char *kind = db_col_text(st, 0),
			   *target = db_col_text(st, 1),
			   *lid = db_col_text(st, 2), *op = db_col_text(st, 3);
		int64_t ts = db_col_int64(st, 4);
		uint64_t s = db_col_uint64(st, 5), v = db_col_uint64(st, 6);
		uint64_t ds, dv;
		char key[600];
		struct weather_jobstats *w = NULL;

		if (!kind || !target || !lid || !op)
			continue;
		snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s", kind, target,
			 lid, op);
		if (!strcmp(key, prev_key) && s >= prev_s && v >= prev_v) {
			ds = s - prev_s;
			dv = v - prev_v;
		} else {
			ds = s; /* first snapshot, or a new entry */
			dv = v;
		}
		snprintf(prev_key, sizeof(prev_key), "%s", key);
		prev_s = s;
		prev_v = v;
		/* rows of one (kind, target) come together: merge into the
		 * entry of the same ts among them */
		for (size_t i = *n; i-- > 0;) {
			struct weather_jobstats *c = &(*out)[i];

			if (strcmp(c->kind, kind) || strcmp(c->target, target))
				break;
			if (c->ts == ts) {
				w = c;
				break;
			}
		}
		if (!w) {
			if (FWD_GROW(*out, cap, *n + 1, 64) < 0) {
				errprintf(err, "%s", strerror(errno));
				goto fail;
			}
			w = &(*out)[(*n)++];
			memset(w, 0, sizeof(*w));
			snprintf(w->kind, sizeof(w->kind), "%s", kind);
			snprintf(w->target, sizeof(w->target), "%s", target);
			w->ts = ts;
		}
		add_op(w, op, ds, dv);
	}
	if (r < 0)
		goto fail;
	if (*n)
		qsort(*out, *n, sizeof(**out), js_cmp);
	rv = 0;
	goto out;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	errprefix(err, "reading the job_stats of job %llu",
		  (unsigned long long)job_id);
out:
	db_stmt_close(st);
	return rv;
}

int weather_episodes(struct db *db, int64_t from, int64_t to,
		     char *const *names, size_t n_names,
		     struct weather_episode **out, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	size_t cap = 0;
	int r, rv = -1;

	*out = NULL;
	*n = 0;
	/* health_history holds few rows (a period per state change): the
	 * name filter is applied here rather than in an IN list */
	st = db_queryf(db, err,
		       "SELECT kind, name, state, source, start_at, end_at,"
		       " reason FROM health_history"
		       " WHERE state <> 'ok' AND start_at < ?"
		       " AND (end_at IS NULL OR end_at > ?)"
		       " ORDER BY start_at, kind, name",
		       "ii", to, from);
	if (!st)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		struct weather_episode *e;
		const char *name = db_col_text(st, 1);
		bool keep = n_names == 0;

		for (size_t i = 0; !keep && name && i < n_names; i++)
			keep = !strcmp(names[i], name);
		if (!keep)
			continue;
		if (FWD_GROW(*out, cap, *n + 1, 16) < 0) {
			errprintf(err, "%s", strerror(errno));
			goto fail;
		}
		e = &(*out)[(*n)++];
		memset(e, 0, sizeof(*e));
		copy_col(st, 0, e->kind, sizeof(e->kind));
		copy_col(st, 1, e->name, sizeof(e->name));
		copy_col(st, 2, e->state, sizeof(e->state));
		copy_col(st, 3, e->source, sizeof(e->source));
		e->start_at = db_col_int64(st, 4);
		e->end_at = db_col_null(st, 5) ? -1 : db_col_int64(st, 5);
		copy_col(st, 6, e->reason, sizeof(e->reason));
	}
	if (r < 0)
		goto fail;
	rv = 0;
	goto out;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	errprefix(err, "reading the health history");
out:
	db_stmt_close(st);
	return rv;
}
