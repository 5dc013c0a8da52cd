/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's tables over a time range, for the reports; see
 * monitor/weather.h.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/ingest_rollup.h"
#include "monitor/weather.h"

/* names per statement: the IN list's placeholders */
#define WEATHER_CHUNK 100

static void copy_col(struct db_stmt *st, unsigned int col, char *buf,
		     size_t len)
{
	const char *v = db_col_null(st, col) ? NULL : db_col_text(st, col);

	snprintf(buf, len, "%s", v ? v : "");
}

/* The part of [from, to) that rollups_15min serves exactly for buckets of
 * `bucket` seconds from `from`: the whole quarter hours [*qa, *qb) that
 * lie inside one bucket each, which is all of them when the buckets are
 * whole quarter hours from a quarter hour, or when one bucket spans the
 * range; else none (*qa = *qb = to).  The minutes of [from, *qa) and
 * [*qb, to) are read from rollups_minute. */
static void quarters_of(int64_t from, int64_t to, int64_t bucket, int64_t *qa,
			int64_t *qb)
{
	int64_t a = from % ROLLUP_QUARTER
			    ? rollup_quarter(from) + ROLLUP_QUARTER
			    : from;
	int64_t b = rollup_quarter(to);

	*qa = *qb = to;
	if (a >= b)
		return;
	if (bucket >= to - from ||
	    (a == from && bucket % ROLLUP_QUARTER == 0)) {
		*qa = a;
		*qb = b;
	}
}

static void cells_filter(char *sql, size_t len, const char *kind, size_t k)
{
	if (kind)
		strncat(sql, " AND kind = ?", len - strlen(sql) - 1);
	if (k) {
		strncat(sql, " AND name IN (", len - strlen(sql) - 1);
		db_append_placeholders(sql, len, k);
		strncat(sql, ")", len - strlen(sql) - 1);
	}
}

static void cells_bind(struct db_stmt *st, unsigned int *i, const char *kind,
		       char *const *names, size_t k)
{
	if (kind)
		db_bind_text(st, (*i)++, kind);
	for (size_t j = 0; j < k; j++)
		db_bind_text(st, (*i)++, names[j]);
}

#define CELL_COLS                                                             \
	"kind, name, minute, samples, read_bytes, write_bytes, read_ops,"     \
	" write_ops, md_ops, queue_len_sum, queue_len_samples, read_bps_max," \
	" write_bps_max"

static const char t_minute[] = "rollups_minute", t_quarter[] = "rollups_15min";

/* Rows of one table (t_minute or t_quarter) in [a, z). */
struct cell_part {
	const char *table;
	int64_t a, z;
};

/* Binds a part's range and the kind and names of its filter. */
static void part_bind(struct db_stmt *st, unsigned int *i,
		      const struct cell_part *p, const char *kind,
		      char *const *names, size_t k)
{
	db_bind_int64(st, (*i)++, p->a);
	db_bind_int64(st, (*i)++, p->z);
	cells_bind(st, i, kind, names, k);
}

/* The rows of one table that are the buckets already (minutes of a
 * minute's buckets, quarter hours of a quarter hour's, from a bucket's
 * boundary), as they are, in the primary key's order, with no grouping
 * (a day of the machine in quarter hours). */
static struct db_stmt *cells_as_stored(struct db *db, const struct cell_part *p,
				       const char *kind, char *const *names,
				       size_t k, fwd_error_t *err)
{
	char sql[2048 + 12 * WEATHER_CHUNK];
	struct db_stmt *st;
	unsigned int i = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT kind, name, minute, samples, read_bytes,"
		 " write_bytes, read_ops, write_ops, md_ops,"
		 " COALESCE(queue_len_sum, 0), queue_len_samples,"
		 " COALESCE(read_bps_max, 0),"
		 " COALESCE(write_bps_max, 0) FROM %s"
		 " WHERE minute >= ? AND minute < ?",
		 p->table);
	cells_filter(sql, sizeof(sql), kind, k);
	strncat(sql, " ORDER BY kind, name, minute",
		sizeof(sql) - strlen(sql) - 1);
	st = db_prepare(db, sql, err);
	if (st)
		part_bind(st, &i, p, kind, names, k);
	return st;
}

/* The parts' rows summed into buckets of `bucket` seconds from `from`. */
static struct db_stmt *
cells_grouped(struct db *db, const struct cell_part *part, size_t n_part,
	      int64_t from, int64_t bucket, const char *kind,
	      char *const *names, size_t k, fwd_error_t *err)
{
	char sql[2048 + 12 * WEATHER_CHUNK];
	struct db_stmt *st;
	unsigned int i = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT kind, name, ? + ((minute - ?) DIV ?) * ? AS b,"
		 " SUM(samples), SUM(read_bytes), SUM(write_bytes),"
		 " SUM(read_ops), SUM(write_ops), SUM(md_ops),"
		 " COALESCE(SUM(queue_len_sum), 0),"
		 " SUM(queue_len_samples),"
		 " COALESCE(MAX(read_bps_max), 0),"
		 " COALESCE(MAX(write_bps_max), 0) FROM (");
	for (size_t p = 0; p < n_part; p++) {
		size_t len = strlen(sql);

		snprintf(sql + len, sizeof(sql) - len,
			 "%sSELECT " CELL_COLS " FROM %s"
			 " WHERE minute >= ? AND minute < ?",
			 p ? " UNION ALL " : "", part[p].table);
		cells_filter(sql, sizeof(sql), kind, k);
	}
	strncat(sql, ") c GROUP BY kind, name, b ORDER BY kind, name, b",
		sizeof(sql) - strlen(sql) - 1);
	st = db_prepare(db, sql, err);
	if (!st)
		return NULL;
	db_bind_int64(st, i++, from);
	db_bind_int64(st, i++, from);
	db_bind_int64(st, i++, bucket);
	db_bind_int64(st, i++, bucket);
	for (size_t p = 0; p < n_part; p++)
		part_bind(st, &i, &part[p], kind, names, k);
	return st;
}

static int cells_run(struct db *db, const char *kind, char *const *names,
		     size_t k, int64_t from, int64_t to, int64_t bucket,
		     struct weather_cell **out, size_t *n, size_t *cap,
		     fwd_error_t *err)
{
	struct db_stmt *st;
	int64_t qa, qb;
	/* the parts: [from, qa) minutes, [qa, qb) quarter hours, [qb, to)
	 * minutes; only those that are not empty, each a range of the
	 * primary key per component (an empty range or an OR of ranges
	 * lets the optimizer pick a scan) */
	struct cell_part part[3];
	size_t n_part = 0;
	int r, rv = -1;

	quarters_of(from, to, bucket, &qa, &qb);
	if (from < qa)
		part[n_part++] = (struct cell_part){t_minute, from, qa};
	if (qa < qb)
		part[n_part++] = (struct cell_part){t_quarter, qa, qb};
	if (qb < to)
		part[n_part++] = (struct cell_part){t_minute, qb, to};
	if (n_part == 1 && from % bucket == 0 &&
	    bucket == (part[0].table == t_quarter ? ROLLUP_QUARTER : 60))
		st = cells_as_stored(db, &part[0], kind, names, k, err);
	else
		st = cells_grouped(db, part, n_part, from, bucket, kind, names,
				   k, err);
	if (!st)
		return -1;
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
		/* every component with rollups in the range: their names
		 * from the quarter hours that hold its minutes, then a range
		 * of the primary key per component (the minute index would
		 * fetch each row by its key) */
		struct db_stmt *st;
		char **all = NULL;
		size_t n_all = 0, all_cap = 0;
		int r, rc = -1;

		if (!kind) {
			static const char *const kinds[] = {"fwd", "ost",
							    "mdt"};
			struct weather_cell *part = NULL, *nv;
			size_t n_part = 0;

			for (size_t k = 0; k < 3; k++) {
				if (weather_cells(db, kinds[k], NULL, 0, from,
						  to, bucket, &part, &n_part,
						  err) < 0)
					goto fail;
				if (!n_part)
					continue;
				nv = realloc(*out,
					     (*n + n_part) * sizeof(**out));
				if (!nv) {
					free(part);
					errprintf(err, "%s", strerror(errno));
					goto fail;
				}
				*out = nv;
				memcpy(*out + *n, part, n_part * sizeof(*part));
				*n += n_part;
				free(part);
			}
			return 0;
		}
		/* the range of the minute index, which holds the primary key
		 * (kind, name, minute): a day is 96 entries a component,
		 * whatever the rows before and after (a loose scan of the
		 * primary key by kind is the optimizer's choice on fresh
		 * statistics, a scan of every row of the kind on stale ones) */
		st = db_queryf(db, err,
			       "SELECT DISTINCT kind, name FROM rollups_15min"
			       " FORCE INDEX (rollups_15min_minute)"
			       " WHERE minute >= ? AND minute < ? AND kind = ?",
			       "iis", rollup_quarter(from), to, kind);
		if (!st)
			goto fail;
		while ((r = db_fetch(st, err)) > 0) {
			const char *nm = db_col_text(st, 1);
			bool dup = false;

			for (size_t i = 0; nm && i < n_all && !dup; i++)
				dup = !strcmp(all[i], nm);
			if (!nm || dup)
				continue;
			if (FWD_GROW(all, all_cap, n_all + 1, 64) < 0 ||
			    !(all[n_all] = strdup(nm))) {
				errprintf(err, "%s", strerror(errno));
				r = -1;
				break;
			}
			n_all++;
		}
		db_stmt_close(st);
		/* none of this kind: nothing to read (and no recursion
		 * with no names again) */
		if (r == 0)
			rc = n_all ? weather_cells(db, kind, all, n_all, from,
						   to, bucket, out, n, err)
				   : 0;
		for (size_t i = 0; i < n_all; i++)
			free(all[i]);
		free(all);
		if (rc < 0)
			goto fail;
		if (n_all == 0) {
			*out = NULL;
			*n = 0;
		}
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

struct jobstats_fill {
	int64_t t0, bucket;
	size_t nb;
	struct weather_jobstats *buckets;
	struct weather_jobstats *targets;
	size_t n_targets, cap;
};

static int fill_step(void *arg, const struct jobstats_step *s)
{
	struct jobstats_fill *f = arg;

	if (f->nb) {
		size_t b = s->ts < f->t0
				   ? 0
				   : (size_t)((s->ts - f->t0) / f->bucket);

		jobstats_sums_add(&f->buckets[b < f->nb ? b : f->nb - 1].io, s);
	}
	if (s->new_target) {
		struct weather_jobstats *t;

		if (FWD_GROW(f->targets, f->cap, f->n_targets + 1, 16) < 0)
			return -1;
		t = &f->targets[f->n_targets++];
		memset(t, 0, sizeof(*t));
		snprintf(t->kind, sizeof(t->kind), "%s", s->kind);
		snprintf(t->target, sizeof(t->target), "%s", s->target);
	}
	jobstats_sums_add(&f->targets[f->n_targets - 1].io, s);
	return 0;
}

int weather_jobstats(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		     int64_t t0, int64_t bucket, size_t nb,
		     struct weather_jobstats *buckets,
		     struct weather_jobstats **targets, size_t *n_targets,
		     fwd_error_t *err)
{
	struct jobstats_fill f = {
		.t0 = t0,
		.bucket = bucket,
		.nb = nb,
		.buckets = buckets,
	};

	*targets = NULL;
	*n_targets = 0;
	if (jobstats_job_walk(db, job_id, from, to, fill_step, &f, err) < 0) {
		free(f.targets);
		return -1;
	}
	*targets = f.targets;
	*n_targets = f.n_targets;
	return 0;
}

int weather_episodes(struct db *db, int64_t from, int64_t to,
		     char *const *names, size_t n_names,
		     struct weather_episode **out, size_t *n, fwd_error_t *err)
{
	static const char open_sql[] =
		"SELECT kind, name, state, source, start_at, end_at,"
		" reason FROM health_history"
		" WHERE end_at IS NULL AND start_at < ? AND state <> 'ok'";
	static const char ended_sql[] =
		" UNION ALL SELECT kind, name, state, source, start_at,"
		" end_at, reason FROM health_history"
		" WHERE lasted_class = ? AND start_at >= ? AND start_at < ?"
		" AND end_at > ? AND state <> 'ok'";
	static const char order[] = " ORDER BY start_at, kind, name";
	unsigned char cls[DB_DURATION_CLASSES];
	struct db_stmt *st = NULL;
	size_t n_cls = 0, cap = 0;
	unsigned int b = 0;
	char *sql = NULL;
	int r, rv = -1;

	*out = NULL;
	*n = 0;
	/* the periods still open (health_history_open), and the ended ones
	 * of each duration class that started within that class's longest
	 * period before from (health_history_lasted_class): one that ended
	 * after from and started earlier would have lasted longer.  A
	 * period per state change: the name filter is applied here rather
	 * than in an IN list */
	if (db_duration_classes(db, "health_history", "lasted_class", cls,
				&n_cls, err) < 0)
		goto fail;
	if (!(sql = db_duration_sql(open_sql, ended_sql, order, n_cls))) {
		errprintf(err, "%s", strerror(errno));
		goto fail;
	}
	if (!(st = db_prepare(db, sql, err)))
		goto fail;
	db_bind_int64(st, b++, to);
	db_bind_duration_parts(st, &b, cls, n_cls, from, to);
	if (db_exec(st, err) < 0)
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
	free(sql);
	db_stmt_close(st);
	return rv;
}
