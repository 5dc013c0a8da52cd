/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ingestion writer: parsed records -> samples_raw, samples_hist,
 * jobstats_raw, rollups and counter baselines (db/SCHEMA.md).
 *
 * Idempotence: every sample row has a natural primary key (component,
 * time[, op, phase]); rows are written with INSERT IGNORE or an upsert that
 * only fills columns, so the same input stored twice changes nothing.
 * Counter baselines live in counter_state and are saved in the same
 * transaction as the samples derived from them, so a crash never leaves a
 * baseline that disagrees with the stored deltas.  Rollups are recomputed
 * from the raw rows of each minute a batch touched, which is idempotent
 * too.
 *
 * Plausibility (policy `ingest:`): a counter delta faster than the
 * component can go, or a gauge beyond its bound, rejects the whole record
 * before anything of it is written; the baselines stay on the last
 * plausible values (series_update_checked), so the next record's deltas
 * are right.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/array.h"
#include "common/plausible.h"
#include "common/units.h"
#include "db/db.h"
#include "monitor/ingest.h"
#include "monitor/ingest_rollup.h"
#include "monitor/inventory.h"
#include "policies/policy.h"

#define DEFAULT_BATCH 100000
#define MAX_TOUCHED 1024

#define RAW_CHUNK 5000
#define STATE_CHUNK 400
#define STATE_SINGLE_LOADS 32
#define STATE_BULK_MAX 200000
#define ROLLUP_CHUNK 200

/* Multi-row statements are prepared for these numbers of rows; a batch
 * is written in as few of them as fit. */
static const size_t size_class[] = {500, 64, 8, 1};
#define N_CLASS 4

struct raw_buf {
	enum ingest_kind kind;
	char name[128];
	int64_t ts;
	double dt;
	bool has_dt;
	bool has[INFLUX_N_COUNTERS];
	uint64_t v[INFLUX_N_COUNTERS];
	bool has_queue;
	double queue;
	/* a row of a gauge alone: its record is counted when it is
	 * written, stored or already stored (raw_wait()) */
	bool count_at_write;
};

struct state_row {
	enum ingest_kind kind;
	char name[128];
	char metric[32];
	int64_t ts;
	uint64_t v[SERIES_MAX_VALUES];
};

struct touched {
	enum ingest_kind kind;
	char name[128];
	int64_t min_ts, max_ts;
	bool hist;
};

/*
 * A chunk of raw rows written by a thread of its own while the caller
 * reads and checks the next records: parsing and LOAD DATA overlap.  One
 * chunk at a time; while it is written the connection is the writer's,
 * and every other use of it comes after raw_wait() (flush_raw(), the
 * baselines read for a new component, a row written alone, the commit,
 * the rollback, the other formats' records).
 */
struct raw_write {
	bool busy, threaded;
	pthread_t th;
	struct ingest_store *s;
	struct raw_buf *rows; /* RAW_CHUNK rows, not rawbuf */
	size_t k;
	int all_new; /* insert_new()'s answer */
	/* the rollup contributions of a chunk of new rows, added to the
	 * stored rollups by the writer too */
	struct rollup_acc *acc;
	fwd_error_t err;
	int err_no; /* the writer's errno (its own thread's) on failure */
};

struct ingest_store {
	struct db *db;
	size_t batch;
	size_t pending; /* records in the open transaction */
	bool in_txn;
	struct series_table *series;
	struct ingest_stats stats;
	/* stored / skipped when the open transaction began: what a
	 * rollback gives back, so that the counts say what is kept */
	uint64_t txn_stored, txn_skipped;
	struct db_stmt *raw_upsert;
	/* [n]: inserts the n operations of one entry in one statement */
	struct db_stmt *jobstats_insert[JOBSTATS_MAX_OPS + 1];
	struct db_stmt *state_load;
	struct db_stmt *target_insert;
	struct touched *touched;
	size_t n_touched;
	char last_target[128];
	struct policy_ingest lim;
	struct inventory_peak *peaks; /* sorted, see inventory_peaks() */
	size_t n_peaks;
	/* influx rows with counter deltas, written RAW_CHUNK at a time in
	 * one multi-row upsert (raw_multi) before anything else runs */
	struct raw_buf *rawbuf;
	size_t n_raw;
	/* the chunk being written while the next one is read (raw_wait()) */
	struct raw_write w;
	struct db_stmt *raw_multi[N_CLASS];
	/* counter baselines to save, written STATE_CHUNK at a time */
	struct state_row *states;
	size_t n_states;
	struct db_stmt *state_multi[N_CLASS];
	struct db_stmt *rollup_multi[N_CLASS];
	struct db_stmt *rollup_hist_multi[N_CLASS];
	struct db_stmt *rollup_q_multi[N_CLASS];
	/* components whose stored baselines were loaded (kind\tname): one
	 * by one, then all at once (load_state()) */
	struct series_table *loaded;
	size_t n_single_loads;
	bool all_loaded;
	/* the first try of a chunk of raw rows: INSERT IGNORE, all new? */
	struct db_stmt *raw_ignore[N_CLASS];
	/* ... or LOAD DATA LOCAL IGNORE of this text, unless the server
	 * refused LOCAL once (no_load) */
	struct db_text text;
	bool no_load;
	/* the rollup contributions of raw rows known to be new */
	struct rollup_acc *acc;
	/* minutes before this may have lost raw rows to a prune: their
	 * rollups are recomputed, never added to (ingest_horizon) */
	int64_t horizon;
	/* the times of the forwarder samples and job_stats snapshots this
	 * transaction wrote (ingest_arrivals, for the history loop) */
	bool arr_has[2];
	int64_t arr_min[2], arr_max[2];
	/* job_stats rows not written yet, and the entries they belong to */
	struct js_row *jsrows;
	size_t n_jsrows;
	struct js_entry *jsents;
	size_t n_jsents;
	struct db_stmt *js_multi[N_CLASS];
	struct hist_buf *histbuf;
	size_t n_hist;
	struct db_stmt *hist_multi[N_CLASS];
};

enum { ARR_SAMPLES = 0, ARR_JOBSTATS = 1 };

static void raw_abandon(struct ingest_store *s);
static int raw_wait(struct ingest_store *s, fwd_error_t *err);

/* job_stats entries buffered, written JS_CHUNK rows at a time */
#define JS_CHUNK 500
struct js_row {
	enum ingest_kind kind;
	char target[128];
	char job_id[256];
	bool has_slurm_id;
	uint64_t slurm_id;
	int64_t ts;
	struct jobstats_op op;
};
struct js_entry {
	size_t first, n;
	int64_t ts;
};

/* LWFS histogram deltas buffered, written HIST_CHUNK at a time */
#define HIST_CHUNK 500
struct hist_buf {
	char name[128];
	int64_t ts;
	enum beacon_op op;
	enum beacon_phase phase;
	double dt;
	uint64_t b[BEACON_BUCKETS];
};

/* clang-format off */
/* Raw samples, many rows at once: head, "(...)" per row, tail; a single
 * row is the same statement with one. */
#define RAW_HEAD \
	"INSERT INTO samples_raw (kind, name, ts, dt, read_bytes, write_bytes," \
	" read_ops, write_ops, md_ops, queue_len) VALUES "
#define RAW_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define RAW_TAIL \
	" ON DUPLICATE KEY UPDATE" \
	" dt = COALESCE(VALUES(dt), dt)," \
	" read_bytes = COALESCE(VALUES(read_bytes), read_bytes)," \
	" write_bytes = COALESCE(VALUES(write_bytes), write_bytes)," \
	" read_ops = COALESCE(VALUES(read_ops), read_ops)," \
	" write_ops = COALESCE(VALUES(write_ops), write_ops)," \
	" md_ops = COALESCE(VALUES(md_ops), md_ops)," \
	" queue_len = COALESCE(VALUES(queue_len), queue_len)"
static const char raw_multi_head[] = RAW_HEAD;
static const char raw_ignore_head[] =
	"INSERT IGNORE INTO samples_raw (kind, name, ts, dt, read_bytes,"
	" write_bytes, read_ops, write_ops, md_ops, queue_len) VALUES ";
static const char raw_multi_tail[] = RAW_TAIL;
static const char raw_upsert_sql[] = RAW_HEAD RAW_ROW RAW_TAIL;
/* The same first try in LOAD DATA's default text format (raw_text()). */
static const char raw_load_sql[] =
	"LOAD DATA LOCAL INFILE 'samples_raw' IGNORE INTO TABLE samples_raw"
	" CHARACTER SET utf8mb4"
	" FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\'"
	" LINES TERMINATED BY '\\n'"
	" (kind, name, ts, dt, read_bytes, write_bytes, read_ops, write_ops,"
	" md_ops, queue_len)";

static const char hist_ignore_head[] =
	"INSERT IGNORE INTO samples_hist (kind, name, ts, op, phase, dt,"
	" b0, b1, b2, b3, b4, b5, b6, b7) VALUES ";
#define HIST_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

static const char jobstats_insert_sql[] =
	"INSERT IGNORE INTO jobstats_raw (kind, target, lustre_job_id, job_id,"
	" ts, op, samples, unit, min_value, max_value, sum_value) VALUES ";
#define JOBSTATS_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define JOBSTATS_COLS 11

static const char state_load_sql[] =
	"SELECT ts, v0, v1, v2, v3, v4, v5, v6, v7, metric FROM counter_state"
	" WHERE kind = ? AND name = ?";
static const char state_count_sql[] = "SELECT COUNT(*) FROM counter_state";
static const char state_load_all_sql[] =
	"SELECT ts, v0, v1, v2, v3, v4, v5, v6, v7, metric, kind, name"
	" FROM counter_state";

static const char state_multi_head[] =
	"INSERT INTO counter_state (kind, name, metric, ts,"
	" v0, v1, v2, v3, v4, v5, v6, v7) VALUES ";
#define STATE_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
static const char state_multi_tail[] =
	" ON DUPLICATE KEY UPDATE"
	" v0 = IF(VALUES(ts) > ts, VALUES(v0), v0),"
	" v1 = IF(VALUES(ts) > ts, VALUES(v1), v1),"
	" v2 = IF(VALUES(ts) > ts, VALUES(v2), v2),"
	" v3 = IF(VALUES(ts) > ts, VALUES(v3), v3),"
	" v4 = IF(VALUES(ts) > ts, VALUES(v4), v4),"
	" v5 = IF(VALUES(ts) > ts, VALUES(v5), v5),"
	" v6 = IF(VALUES(ts) > ts, VALUES(v6), v6),"
	" v7 = IF(VALUES(ts) > ts, VALUES(v7), v7),"
	" ts = GREATEST(ts, VALUES(ts))";

/* The rollups of many components over one time range: the minutes of
 * the range are recomputed for each (idempotent). */
static const char rollup_multi_head[] =
	"INSERT INTO rollups_minute (kind, name, minute, samples, read_bytes,"
	" write_bytes, read_ops, write_ops, md_ops, read_bps_max,"
	" write_bps_max, queue_len_avg, queue_len_max, queue_len_sum,"
	" queue_len_samples)"
	" SELECT kind, name, ts - MOD(ts, 60) AS m, COUNT(*),"
	" COALESCE(SUM(read_bytes), 0), COALESCE(SUM(write_bytes), 0),"
	" COALESCE(SUM(read_ops), 0), COALESCE(SUM(write_ops), 0),"
	" COALESCE(SUM(md_ops), 0),"
	" MAX(read_bytes / NULLIF(dt, 0)), MAX(write_bytes / NULLIF(dt, 0)),"
	" AVG(queue_len), MAX(queue_len), SUM(queue_len), COUNT(queue_len)"
	" FROM samples_raw WHERE ts >= ? AND ts < ? AND (kind, name) IN (";
/* A recomputed rollup row replaces the stored one (rollups_minute and
 * rollups_15min have the same columns). */
#define ROLLUP_REPLACE                                                         \
	" ON DUPLICATE KEY UPDATE samples = VALUES(samples),"                  \
	" read_bytes = VALUES(read_bytes), write_bytes = VALUES(write_bytes)," \
	" read_ops = VALUES(read_ops), write_ops = VALUES(write_ops),"         \
	" md_ops = VALUES(md_ops), read_bps_max = VALUES(read_bps_max),"       \
	" write_bps_max = VALUES(write_bps_max),"                              \
	" queue_len_avg = VALUES(queue_len_avg),"                              \
	" queue_len_max = VALUES(queue_len_max),"                              \
	" queue_len_sum = VALUES(queue_len_sum),"                              \
	" queue_len_samples = VALUES(queue_len_samples)"
static const char rollup_multi_tail[] =
	") GROUP BY kind, name, m" ROLLUP_REPLACE;
static const char rollup_hist_multi_head[] =
	"INSERT INTO rollups_hist_minute (kind, name, minute, op, phase,"
	" b0, b1, b2, b3, b4, b5, b6, b7)"
	" SELECT kind, name, ts - MOD(ts, 60) AS m, op, phase,"
	" SUM(b0), SUM(b1), SUM(b2), SUM(b3), SUM(b4), SUM(b5), SUM(b6),"
	" SUM(b7)"
	" FROM samples_hist WHERE ts >= ? AND ts < ? AND (kind, name) IN (";
static const char rollup_hist_multi_tail[] =
	") GROUP BY kind, name, m, op, phase"
	" ON DUPLICATE KEY UPDATE b0 = VALUES(b0), b1 = VALUES(b1),"
	" b2 = VALUES(b2), b3 = VALUES(b3), b4 = VALUES(b4), b5 = VALUES(b5),"
	" b6 = VALUES(b6), b7 = VALUES(b7)";
/* The quarter hours of the minutes recomputed above, from those minutes
 * (rollups_15min: monitor/ingest_rollup.h). */
static const char rollup_q_multi_head[] =
	"INSERT INTO rollups_15min (kind, name, minute, samples, read_bytes,"
	" write_bytes, read_ops, write_ops, md_ops, read_bps_max,"
	" write_bps_max, queue_len_avg, queue_len_max, queue_len_sum,"
	" queue_len_samples)"
	" SELECT kind, name, minute - MOD(minute, 900) AS q, SUM(samples),"
	" SUM(read_bytes), SUM(write_bytes), SUM(read_ops), SUM(write_ops),"
	" SUM(md_ops), MAX(read_bps_max), MAX(write_bps_max),"
	" SUM(queue_len_sum) / NULLIF(SUM(queue_len_samples), 0),"
	" MAX(queue_len_max), SUM(queue_len_sum), SUM(queue_len_samples)"
	" FROM rollups_minute WHERE minute >= ? AND minute < ?"
	" AND (kind, name) IN (";
static const char rollup_q_multi_tail[] =
	") GROUP BY kind, name, q" ROLLUP_REPLACE;
#define KN_ROW "(?, ?)"

static const char horizon_sql[] =
	"SELECT COALESCE(MAX(before_ts), 0) FROM ingest_horizon";
static const char horizon_save_sql[] =
	"INSERT INTO ingest_horizon (id, before_ts) VALUES (1, ?)"
	" ON DUPLICATE KEY UPDATE before_ts = GREATEST(before_ts,"
	" VALUES(before_ts))";

static const char arrivals_sql[] =
	"INSERT INTO ingest_arrivals (source, min_ts, max_ts) VALUES (?, ?, ?)"
	" ON DUPLICATE KEY UPDATE min_ts = LEAST(min_ts, VALUES(min_ts)),"
	" max_ts = GREATEST(max_ts, VALUES(max_ts))";

static const char target_insert_sql[] =
	"INSERT IGNORE INTO osts (name, kind, bandwidth_bps, updated_at)"
	" VALUES (?, ?, 0, ?)";

void ingest_store_close(struct ingest_store *s)
{
	int saved = errno;

	if (!s)
		return;
	raw_abandon(s);
	if (s->in_txn)
		db_rollback(s->db);
	db_stmt_close(s->raw_upsert);
	for (size_t i = 0; i <= JOBSTATS_MAX_OPS; i++)
		db_stmt_close(s->jobstats_insert[i]);
	db_stmt_close(s->state_load);
	db_stmt_close(s->target_insert);
	for (size_t i = 0; i < N_CLASS; i++) {
		db_stmt_close(s->raw_multi[i]);
		db_stmt_close(s->state_multi[i]);
		db_stmt_close(s->rollup_multi[i]);
		db_stmt_close(s->rollup_hist_multi[i]);
		db_stmt_close(s->rollup_q_multi[i]);
		db_stmt_close(s->raw_ignore[i]);
		db_stmt_close(s->js_multi[i]);
		db_stmt_close(s->hist_multi[i]);
	}
	free(s->histbuf);
	free(s->jsrows);
	free(s->jsents);
	rollup_acc_destroy(s->acc);
	rollup_acc_destroy(s->w.acc);
	series_destroy(s->series);
	series_destroy(s->loaded);
	free(s->rawbuf);
	free(s->w.rows);
	db_text_free(&s->text);
	free(s->states);
	free(s->touched);
	free(s->peaks);
	free(s);
	errno = saved;
}
/* clang-format on */

struct ingest_store *ingest_store_open(struct db *db, size_t batch,
				       fwd_error_t *err)
{
	struct ingest_store *s = calloc(1, sizeof(*s));
	struct policy *def;

	if (!s) {
		errprintf(err, "ingest: %s", strerror(errno));
		return NULL;
	}
	s->db = db;
	if (!(def = policy_defaults())) {
		errprintf(err, "ingest: %s", strerror(errno));
		free(s);
		return NULL;
	}
	s->lim = def->ingest;
	policy_destroy(def);
	s->batch = batch ? batch : DEFAULT_BATCH;
	s->series = series_create();
	s->touched = calloc(MAX_TOUCHED, sizeof(*s->touched));
	s->rawbuf = calloc(RAW_CHUNK, sizeof(*s->rawbuf));
	s->w.rows = calloc(RAW_CHUNK, sizeof(*s->w.rows));
	s->w.s = s;
	s->w.acc = rollup_acc_create(db);
	s->states = calloc(STATE_CHUNK, sizeof(*s->states));
	s->loaded = series_create();
	s->acc = rollup_acc_create(db);
	s->jsrows = calloc(JS_CHUNK + JOBSTATS_MAX_OPS, sizeof(*s->jsrows));
	s->jsents = calloc(JS_CHUNK + JOBSTATS_MAX_OPS, sizeof(*s->jsents));
	s->histbuf = calloc(HIST_CHUNK, sizeof(*s->histbuf));
	if (!s->series || !s->touched || !s->rawbuf || !s->w.rows ||
	    !s->w.acc || !s->states || !s->loaded || !s->acc || !s->jsrows ||
	    !s->jsents || !s->histbuf) {
		errprintf(err, "ingest: %s", strerror(errno));
		goto fail;
	}
	if (!(s->raw_upsert = db_prepare(db, raw_upsert_sql, err)) ||
	    !(s->state_load = db_prepare(db, state_load_sql, err)) ||
	    !(s->target_insert = db_prepare(db, target_insert_sql, err)))
		goto fail;
	if (inventory_peaks(db, &s->peaks, &s->n_peaks, err) < 0 ||
	    db_query_int64(db, err, &s->horizon, horizon_sql, "") < 0)
		goto fail;
	return s;
fail:
	ingest_store_close(s);
	return NULL;
}

void ingest_store_set_limits(struct ingest_store *s,
			     const struct policy_ingest *l)
{
	s->lim = *l;
}

bool ingest_store_pending(const struct ingest_store *s)
{
	return s->in_txn;
}

const struct ingest_stats *ingest_store_stats(const struct ingest_store *s)
{
	return &s->stats;
}

/* A name is stored in utf8mb4 columns: refused here when MariaDB would
 * refuse it ("Incorrect string value"), which would roll the whole batch
 * back. */
static bool name_ok(const char *name, fwd_error_t *err)
{
	return fwd_plaus_name("name", name, err) == 0;
}

static void bind_raw_rows(struct db_stmt *st, const struct raw_buf *rows,
			  size_t k)
{
	for (size_t i = 0; i < k; i++) {
		const struct raw_buf *r = &rows[i];
		unsigned int b = (unsigned int)(i * 10);

		db_bind_text(st, b, ingest_kind_name(r->kind));
		db_bind_text(st, b + 1, r->name);
		db_bind_int64(st, b + 2, r->ts);
		if (r->has_dt)
			db_bind_double(st, b + 3, r->dt);
		else
			db_bind_null(st, b + 3);
		for (unsigned int j = 0; j < INFLUX_N_COUNTERS; j++) {
			if (r->has[j])
				db_bind_uint64(st, b + 4 + j, r->v[j]);
			else
				db_bind_null(st, b + 4 + j);
		}
		if (r->has_queue)
			db_bind_double(st, b + 9, r->queue);
		else
			db_bind_null(st, b + 9);
	}
}

static int touch(struct ingest_store *s, enum ingest_kind kind,
		 const char *name, int64_t ts, bool hist, fwd_error_t *err);

static void arrive(struct ingest_store *s, int src, int64_t ts)
{
	if (!s->arr_has[src] || ts < s->arr_min[src])
		s->arr_min[src] = ts;
	if (!s->arr_has[src] || ts > s->arr_max[src])
		s->arr_max[src] = ts;
	s->arr_has[src] = true;
}

/* Say which times of forwarder samples and job_stats this transaction
 * wrote (ingest_arrivals): the history loop looks again at the jobs
 * that ran then. */
static int save_arrivals(struct ingest_store *s, fwd_error_t *err)
{
	static const char *const name[2] = {"samples", "jobstats"};

	for (int i = 0; i < 2; i++) {
		if (!s->arr_has[i])
			continue;
		if (db_execf(s->db, err, arrivals_sql, "sii", name[i],
			     s->arr_min[i], s->arr_max[i]) < 0)
			return -1;
		s->arr_has[i] = false;
	}
	return 0;
}

/* The most one row of raw_text() takes: kind, the name with every byte
 * escaped, ts, dt, the counters and the queue length, tabs, newline. */
#define RAW_TEXT_MAX (8 + 2 * 128 + (INFLUX_N_COUNTERS + 3) * 33 + 1)

/* rows[0..k) in LOAD DATA's default text into s->text. */
static int raw_text(struct ingest_store *s, const struct raw_buf *rows,
		    size_t k, fwd_error_t *err)
{
	struct db_text *t = &s->text;

	db_text_clear(t);
	if (db_text_room(t, k * RAW_TEXT_MAX) < 0)
		return errprintf(err, "ingest: out of memory");
	for (size_t i = 0; i < k; i++) {
		const struct raw_buf *r = &rows[i];

		db_text_str(t, ingest_kind_name(r->kind));
		db_text_str(t, r->name);
		db_text_i64(t, r->ts);
		if (r->has_dt)
			db_text_double(t, r->dt);
		else
			db_text_null(t);
		for (unsigned int j = 0; j < INFLUX_N_COUNTERS; j++) {
			if (r->has[j])
				db_text_u64(t, r->v[j]);
			else
				db_text_null(t);
		}
		if (r->has_queue)
			db_text_double(t, r->queue);
		else
			db_text_null(t);
		db_text_row_end(t);
	}
	return 0;
}

/*
 * The first try of rows[0..k): LOAD DATA LOCAL IGNORE of their text, or,
 * where the server refuses LOCAL, multi-row INSERT IGNOREs.  Returns 1
 * when every row was new, 0 when some were stored already, -1 on error.
 */
static int insert_new(struct ingest_store *s, const struct raw_buf *rows,
		      size_t k, fwd_error_t *err)
{
	size_t at = 0, added = 0;

	if (!s->no_load) {
		bool refused;
		int64_t n;

		if (raw_text(s, rows, k, err) < 0)
			return -1;
		n = db_load_local(s->db, raw_load_sql, s->text.buf, s->text.len,
				  &refused, err);
		if (n >= 0)
			return (size_t)n == k;
		if (!refused)
			return -1;
		s->no_load = true;
	}
	while (at < k) {
		size_t m;
		struct db_stmt *st = db_prepare_rows_upto(
			s->db, s->raw_ignore, size_class, k - at,
			raw_ignore_head, RAW_ROW, "", &m, err);

		if (!st)
			return -1;
		bind_raw_rows(st, rows + at, m);
		if (db_exec(st, err) < 0)
			return -1;
		added += db_affected(st);
		at += m;
	}
	return added == k;
}

/*
 * rows[0..k) written over what is stored (the upsert keeps a stored
 * value where a row has none), in their order.  A row counted when
 * written (count_at_write) goes alone: stored when the upsert changed
 * something, else already stored.
 */
static int upsert_rows(struct ingest_store *s, const struct raw_buf *rows,
		       size_t k, fwd_error_t *err)
{
	for (size_t at = 0; at < k;) {
		size_t m, run = 0;
		struct db_stmt *st;

		while (at + run < k && !rows[at + run].count_at_write)
			run++;
		st = db_prepare_rows_upto(s->db, s->raw_multi, size_class,
					  run ? run : 1, raw_multi_head,
					  RAW_ROW, raw_multi_tail, &m, err);
		if (!st)
			return -1;
		bind_raw_rows(st, rows + at, m);
		if (db_exec(st, err) < 0)
			return -1;
		if (!run) {
			if (db_affected(st))
				s->stats.stored++;
			else
				s->stats.skipped++;
		}
		at += m;
	}
	return 0;
}

/* Rows in primary-key order: InnoDB appends to its pages instead of
 * splitting them. */
static int cmp_raw(const void *a, const void *b)
{
	const struct raw_buf *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (c)
		return c;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void raw_rollup_row(const struct raw_buf *r, struct rollup_row *rr)
{
	*rr = (struct rollup_row){
		.kind = r->kind,
		.name = r->name,
		.ts = r->ts,
		.has_dt = r->has_dt,
		.dt = r->dt,
		.has = r->has,
		.v = r->v,
		.has_queue = r->has_queue,
		.queue = r->queue,
	};
}

/* The writer: the chunk's rows, then, when all were new, their rollup
 * contributions (from the minutes a prune cannot have touched). */
static void *raw_writer(void *arg)
{
	struct raw_write *w = arg;

	w->all_new = insert_new(w->s, w->rows, w->k, &w->err);
	w->err_no = errno;
	if (w->all_new <= 0)
		return NULL;
	for (size_t i = 0; i < w->k; i++) {
		struct rollup_row rr;

		if (rollup_minute(w->rows[i].ts) < w->s->horizon)
			continue;
		raw_rollup_row(&w->rows[i], &rr);
		if (rollup_acc_add(w->acc, &rr, &w->err) < 0) {
			w->all_new = -1;
			break;
		}
	}
	if (w->all_new > 0 && rollup_acc_write(w->acc, &w->err) < 0)
		w->all_new = -1;
	w->err_no = errno;
	rollup_acc_clear(w->acc);
	return NULL;
}

/* Wait for the chunk being written, and forget it (the transaction is
 * rolled back). */
static void raw_abandon(struct ingest_store *s)
{
	if (s->w.busy && s->w.threaded)
		pthread_join(s->w.th, NULL);
	s->w.busy = false;
}

/*
 * Wait for the chunk being written (insert_new()).  When every row was
 * new, the writer has added the rows' rollup contributions to the stored
 * rollups (exact: the minute held nothing of them).  Otherwise (rows
 * already stored, by an earlier run or a concurrent one) the rows are
 * written again with the upsert that fills the stored rows' missing
 * columns, and the minutes they touched are recomputed from the raw rows
 * at the commit.
 */
static int raw_wait(struct ingest_store *s, fwd_error_t *err)
{
	struct raw_write *w = &s->w;
	const struct raw_buf *rows = w->rows;

	if (!w->busy)
		return 0;
	raw_abandon(s);
	if (w->all_new < 0) {
		*err = w->err;
		errno = w->err_no;
		return -1;
	}
	if (!w->all_new && upsert_rows(s, rows, w->k, err) < 0)
		return -1;
	for (size_t i = 0; i < w->k; i++) {
		const struct raw_buf *r = &rows[i];

		if (w->all_new && r->count_at_write)
			s->stats.stored++;

		if (r->kind == INGEST_FWD)
			arrive(s, ARR_SAMPLES, r->ts);
		/* the writer added the new rows' rollups */
		if ((!w->all_new || rollup_minute(r->ts) < s->horizon) &&
		    touch(s, r->kind, r->name, r->ts, false, err) < 0)
			return -1;
	}
	return 0;
}

/* Hand the buffered rows to the writer (after the chunk before them),
 * and go on with an empty buffer. */
static int flush_raw(struct ingest_store *s, fwd_error_t *err)
{
	struct raw_write *w = &s->w;
	struct raw_buf *t;

	if (raw_wait(s, err) < 0)
		return -1;
	if (!s->n_raw)
		return 0;
	qsort(s->rawbuf, s->n_raw, sizeof(*s->rawbuf), cmp_raw);
	t = w->rows;
	w->rows = s->rawbuf;
	s->rawbuf = t;
	w->k = s->n_raw;
	s->n_raw = 0;
	w->busy = true;
	w->threaded = pthread_create(&w->th, NULL, raw_writer, w) == 0;
	if (!w->threaded)
		raw_writer(w); /* no thread: written here and now */
	return 0;
}

/* Write the buffered counter baselines. */
static int flush_states(struct ingest_store *s, fwd_error_t *err)
{
	size_t at = 0;

	while (at < s->n_states) {
		size_t k;
		struct db_stmt *st = db_prepare_rows_upto(
			s->db, s->state_multi, size_class, s->n_states - at,
			state_multi_head, STATE_ROW, state_multi_tail, &k, err);

		if (!st)
			return -1;
		for (size_t i = 0; i < k; i++) {
			const struct state_row *r = &s->states[at + i];
			unsigned int b = (unsigned int)(i * 12);

			db_bind_text(st, b, ingest_kind_name(r->kind));
			db_bind_text(st, b + 1, r->name);
			db_bind_text(st, b + 2, r->metric);
			db_bind_int64(st, b + 3, r->ts);
			for (unsigned int j = 0; j < SERIES_MAX_VALUES; j++)
				db_bind_uint64(st, b + 4 + j, r->v[j]);
		}
		if (db_exec(st, err) < 0)
			return -1;
		at += k;
	}
	s->n_states = 0;
	return 0;
}

enum rollup_what { ROLL_MINUTE, ROLL_HIST, ROLL_QUARTER };

/* The rollups of the touched components over the minutes from the
 * earliest to the latest sample touched: their minutes (from the raw
 * rows), their histograms' minutes, or the quarter hours of those minutes
 * (from the minutes, after them). */
static int rollups_of(struct ingest_store *s, enum rollup_what what,
		      fwd_error_t *err)
{
	static const char *const heads[] = {
		rollup_multi_head, rollup_hist_multi_head, rollup_q_multi_head};
	static const char *const tails[] = {
		rollup_multi_tail, rollup_hist_multi_tail, rollup_q_multi_tail};
	struct db_stmt **cache = what == ROLL_HIST	? s->rollup_hist_multi
				 : what == ROLL_QUARTER ? s->rollup_q_multi
							: s->rollup_multi;
	const char *head = heads[what], *tail = tails[what];
	bool hist = what == ROLL_HIST;
	size_t idx[ROLLUP_CHUNK];
	size_t n = 0;
	int64_t lo = 0, hi = 0;

	for (size_t i = 0; i <= s->n_touched; i++) {
		const struct touched *t =
			i < s->n_touched ? &s->touched[i] : NULL;

		if (t && hist && !t->hist)
			continue;
		if (t) {
			int64_t a = rollup_minute(t->min_ts);
			int64_t z = rollup_minute(t->max_ts) + 60;

			if (what == ROLL_QUARTER) {
				a = rollup_quarter(a);
				z = rollup_quarter(z - 1) + ROLLUP_QUARTER;
			}

			if (!n || a < lo)
				lo = a;
			if (!n || z > hi)
				hi = z;
			idx[n++] = i;
		}
		if (n && (n == ROLLUP_CHUNK || !t)) {
			size_t at = 0;

			while (at < n) {
				size_t k;
				struct db_stmt *st = db_prepare_rows_upto(
					s->db, cache, size_class, n - at, head,
					KN_ROW, tail, &k, err);

				if (!st)
					return -1;
				db_bind_int64(st, 0, lo);
				db_bind_int64(st, 1, hi);
				for (size_t j = 0; j < k; j++) {
					const struct touched *u =
						&s->touched[idx[at + j]];

					db_bind_text(st,
						     (unsigned int)(2 + 2 * j),
						     ingest_kind_name(u->kind));
					db_bind_text(st,
						     (unsigned int)(3 + 2 * j),
						     u->name);
				}
				if (db_exec(st, err) < 0)
					return -1;
				at += k;
			}
			n = 0;
		}
	}
	return 0;
}

/* How long a batch waits for another ingest's batch (ingest_lock). */
#define LOCK_WAIT 120.0

/* Open the batch's transaction.  It holds ingest_lock's row: concurrent
 * ingests take turns batch by batch (a batch commits before its writer
 * waits for input), instead of deadlocking. */
static int begin(struct ingest_store *s, fwd_error_t *err)
{
	if (s->in_txn)
		return 0;
	if (db_begin_locked(
		    s->db, "SELECT id FROM ingest_lock WHERE id = 1 FOR UPDATE",
		    "ingest lock", LOCK_WAIT, err) < 0)
		return -1;
	s->in_txn = true;
	s->txn_stored = s->stats.stored;
	s->txn_skipped = s->stats.skipped;
	return 0;
}

/* The rollups so far: the contributions of new rows added first, then
 * the touched minutes recomputed from the raw rows (which overwrites
 * what was added to them: both are exact). */
static int rollups_now(struct ingest_store *s, fwd_error_t *err)
{
	if (raw_wait(s, err) < 0 || rollup_acc_write(s->acc, err) < 0 ||
	    rollups_of(s, ROLL_MINUTE, err) < 0 ||
	    rollups_of(s, ROLL_QUARTER, err) < 0 ||
	    rollups_of(s, ROLL_HIST, err) < 0)
		return -1;
	s->n_touched = 0;
	return 0;
}

/* Remember that the rollups of name's minutes around ts must be
 * recomputed (after its raw rows are written). */
static int touch(struct ingest_store *s, enum ingest_kind kind,
		 const char *name, int64_t ts, bool hist, fwd_error_t *err)
{
	struct touched *t = NULL;

	/* Input is usually grouped by component: look at the newest
	 * entries first. */
	for (size_t i = s->n_touched; i-- > 0;) {
		if (s->touched[i].kind == kind &&
		    !strcmp(s->touched[i].name, name)) {
			t = &s->touched[i];
			break;
		}
	}
	if (!t) {
		if (s->n_touched == MAX_TOUCHED && rollups_now(s, err) < 0)
			return -1;
		t = &s->touched[s->n_touched++];
		t->kind = kind;
		snprintf(t->name, sizeof(t->name), "%s", name);
		t->min_ts = t->max_ts = ts;
		t->hist = false;
	}
	if (ts < t->min_ts)
		t->min_ts = ts;
	if (ts > t->max_ts)
		t->max_ts = ts;
	t->hist |= hist;
	return 0;
}

/* Series keys are "kind\tname\tmetric". */
static int save_state(const char *key, int64_t ts, const uint64_t *v, size_t n,
		      void *arg)
{
	struct ingest_store *s = ((void **)arg)[0];
	fwd_error_t *err = ((void **)arg)[1];
	const char *t1 = strchr(key, '\t');
	const char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	struct state_row *r;

	if (!t2)
		return 0;
	if (s->n_states == STATE_CHUNK && flush_states(s, err) < 0)
		return -1;
	r = &s->states[s->n_states++];
	memset(r, 0, sizeof(*r));
	r->kind = !strncmp(key, "fwd\t", 4)   ? INGEST_FWD
		  : !strncmp(key, "ost\t", 4) ? INGEST_OST
					      : INGEST_MDT;
	snprintf(r->name, sizeof(r->name), "%.*s", (int)(t2 - t1 - 1), t1 + 1);
	snprintf(r->metric, sizeof(r->metric), "%s", t2 + 1);
	r->ts = ts;
	for (size_t i = 0; i < n && i < SERIES_MAX_VALUES; i++)
		r->v[i] = v[i];
	return 0;
}

/*
 * Write the buffered histogram deltas: when every row of a chunk was new
 * its contribution is added to rollups_hist_minute at the commit, else
 * its minutes are recomputed (as flush_raw()).
 */
static int flush_hist(struct ingest_store *s, fwd_error_t *err)
{
	size_t at = 0;

	while (at < s->n_hist) {
		size_t k;
		const struct hist_buf *rows = &s->histbuf[at];
		struct db_stmt *st = db_prepare_rows_upto(
			s->db, s->hist_multi, size_class, s->n_hist - at,
			hist_ignore_head, HIST_ROW, "", &k, err);
		bool all_new;

		if (!st)
			return -1;
		for (size_t i = 0; i < k; i++) {
			const struct hist_buf *r = &rows[i];
			unsigned int b = (unsigned int)(i * 14);

			db_bind_text(st, b, "fwd");
			db_bind_text(st, b + 1, r->name);
			db_bind_int64(st, b + 2, r->ts);
			db_bind_text(st, b + 3, beacon_op_name(r->op));
			db_bind_text(st, b + 4, beacon_phase_name(r->phase));
			db_bind_double(st, b + 5, r->dt);
			for (unsigned int j = 0; j < BEACON_BUCKETS; j++)
				db_bind_uint64(st, b + 6 + j, r->b[j]);
		}
		if (db_exec(st, err) < 0)
			return -1;
		all_new = db_affected(st) == k;
		for (size_t i = 0; i < k; i++) {
			const struct hist_buf *r = &rows[i];
			struct rollup_hist_row hr = {
				.kind = INGEST_FWD,
				.name = r->name,
				.ts = r->ts,
				.op = beacon_op_name(r->op),
				.phase = beacon_phase_name(r->phase),
				.b = r->b,
			};

			if (all_new && rollup_minute(r->ts) >= s->horizon) {
				if (rollup_acc_add_hist(s->acc, &hr, err) < 0)
					return -1;
			} else if (touch(s, INGEST_FWD, r->name, r->ts, true,
					 err) < 0) {
				return -1;
			}
		}
		at += k;
	}
	s->n_hist = 0;
	return 0;
}

/* The raw row being buffered for (kind, name, ts): the last one, when it
 * is that row (a forwarder's LWFS lines of one time come together). */
static struct raw_buf *raw_last(struct ingest_store *s, enum ingest_kind kind,
				const char *name, int64_t ts)
{
	struct raw_buf *b = s->n_raw ? &s->rawbuf[s->n_raw - 1] : NULL;

	if (b && b->kind == kind && b->ts == ts && !strcmp(b->name, name))
		return b;
	return NULL;
}

static void bind_js_row(struct db_stmt *st, unsigned int b,
			const struct js_row *r)
{
	db_bind_text(st, b + 0, ingest_kind_name(r->kind));
	db_bind_text(st, b + 1, r->target);
	db_bind_text(st, b + 2, r->job_id);
	if (r->has_slurm_id)
		db_bind_uint64(st, b + 3, r->slurm_id);
	else
		db_bind_null(st, b + 3);
	db_bind_int64(st, b + 4, r->ts);
	db_bind_text(st, b + 5, r->op.name);
	db_bind_uint64(st, b + 6, r->op.samples);
	db_bind_text(st, b + 7, r->op.unit);
	db_bind_uint64(st, b + 8, r->op.min);
	db_bind_uint64(st, b + 9, r->op.max);
	db_bind_uint64(st, b + 10, r->op.sum);
}

static struct db_stmt *jobstats_stmt(struct ingest_store *s, size_t n,
				     fwd_error_t *err);

/*
 * Write the buffered job_stats entries: all their rows in a few
 * multi-row INSERT IGNOREs.  When some rows were already stored (a
 * re-ingest, a concurrent one) that is undone (to a savepoint) and each
 * entry is written alone, so it counts as stored or as already stored.
 */
static int flush_js(struct ingest_store *s, fwd_error_t *err)
{
	uint64_t total = 0;
	size_t at = 0;

	if (!s->n_jsrows)
		return 0;
	if (db_execf(s->db, err, "SAVEPOINT ingest_js", "") < 0)
		return -1;
	while (at < s->n_jsrows) {
		size_t k;
		struct db_stmt *st = db_prepare_rows_upto(
			s->db, s->js_multi, size_class, s->n_jsrows - at,
			jobstats_insert_sql, JOBSTATS_ROW, "", &k, err);

		if (!st)
			return -1;
		for (size_t i = 0; i < k; i++)
			bind_js_row(st, (unsigned int)(i * JOBSTATS_COLS),
				    &s->jsrows[at + i]);
		if (db_exec(st, err) < 0)
			return -1;
		total += db_affected(st);
		at += k;
	}
	if (total == s->n_jsrows) {
		for (size_t e = 0; e < s->n_jsents; e++)
			arrive(s, ARR_JOBSTATS, s->jsents[e].ts);
		s->stats.stored += s->n_jsents;
	} else {
		if (db_execf(s->db, err, "ROLLBACK TO SAVEPOINT ingest_js",
			     "") < 0)
			return -1;
		for (size_t e = 0; e < s->n_jsents; e++) {
			const struct js_entry *en = &s->jsents[e];
			struct db_stmt *st = jobstats_stmt(s, en->n, err);

			if (!st)
				return -1;
			for (size_t i = 0; i < en->n; i++)
				bind_js_row(st,
					    (unsigned int)(i * JOBSTATS_COLS),
					    &s->jsrows[en->first + i]);
			if (db_exec(st, err) < 0)
				return -1;
			if (db_affected(st)) {
				s->stats.stored++;
				arrive(s, ARR_JOBSTATS, en->ts);
			} else {
				s->stats.skipped++;
			}
		}
	}
	s->n_jsrows = s->n_jsents = 0;
	return 0;
}

int ingest_store_flush(struct ingest_store *s, fwd_error_t *err)
{
	void *arg[2] = {s, err};

	if (!s->in_txn)
		return 0;
	if (flush_raw(s, err) < 0 || raw_wait(s, err) < 0 ||
	    flush_hist(s, err) < 0 || flush_js(s, err) < 0 ||
	    rollups_now(s, err) < 0 ||
	    series_foreach_dirty(s->series, save_state, arg) != 0 ||
	    flush_states(s, err) < 0 || save_arrivals(s, err) < 0 ||
	    db_commit(s->db, err) < 0) {
		int e = errno;

		s->n_raw = 0;
		s->n_hist = 0;
		s->n_jsrows = s->n_jsents = 0;
		s->n_touched = 0;
		s->arr_has[0] = s->arr_has[1] = false;
		rollup_acc_clear(s->acc);
		s->n_states = 0;
		raw_abandon(s);
		db_rollback(s->db);
		s->in_txn = false;
		s->stats.stored = s->txn_stored;
		s->stats.skipped = s->txn_skipped;
		errno = e;
		return -1;
	}
	s->in_txn = false;
	s->pending = 0;
	return 0;
}

/* Count one record and commit when the batch is full. */
static int record_done(struct ingest_store *s, fwd_error_t *err)
{
	if (++s->pending >= s->batch || s->n_touched >= MAX_TOUCHED - 1)
		return ingest_store_flush(s, err);
	return 0;
}

static int fail(struct ingest_store *s)
{
	int e = errno;

	s->n_raw = 0;
	s->n_hist = 0;
	s->n_jsrows = s->n_jsents = 0;
	s->n_states = 0;
	s->n_touched = 0;
	s->arr_has[0] = s->arr_has[1] = false;
	rollup_acc_clear(s->acc);
	raw_abandon(s);
	if (s->in_txn) {
		db_rollback(s->db);
		s->in_txn = false;
		s->stats.stored = s->txn_stored;
		s->stats.skipped = s->txn_skipped;
	}
	errno = e;
	return -1;
}

/* How many values a stored baseline has: one for an influx counter,
 * BEACON_BUCKETS for an LWFS histogram ("read_exe", ...). */
static size_t state_width(const char *metric)
{
	for (int f = 0; f < INFLUX_N_COUNTERS; f++)
		if (!strcmp(metric, influx_field_name((enum influx_field)f)))
			return 1;
	return BEACON_BUCKETS;
}

/* The baselines of rows in st (ts, v0..v7, metric, then kind and name
 * when comp is NULL: every component's) into the series; comp, or each
 * component read, is marked loaded. */
static int seed_states(struct ingest_store *s, struct db_stmt *st,
		       const char *comp, fwd_error_t *err)
{
	char c[200], k2[256];
	uint64_t zero = 0;
	int r;

	while ((r = db_fetch(st, err)) > 0) {
		uint64_t v[SERIES_MAX_VALUES];
		const char *m = db_col_text(st, 9);

		if (!m)
			continue;
		if (!comp) {
			const char *kind = db_col_text(st, 10);
			const char *name = db_col_text(st, 11);

			snprintf(c, sizeof(c), "%s\t%s", kind ? kind : "",
				 name ? name : "");
			if (series_seed(s->loaded, c, 0, &zero, 1) < 0)
				return -1;
		}
		for (unsigned int i = 0; i < SERIES_MAX_VALUES; i++)
			v[i] = db_col_uint64(st, 1 + i);
		snprintf(k2, sizeof(k2), "%s\t%s", comp ? comp : c, m);
		if (series_seed(s->series, k2, db_col_int64(st, 0), v,
				state_width(m)) < 0)
			return -1;
	}
	if (r < 0)
		return -1;
	return comp ? series_seed(s->loaded, comp, 0, &zero, 1) : 0;
}

/*
 * Make sure the series know the stored baselines of component comp
 * ("kind\tname") before their first use in this run.  The first
 * STATE_SINGLE_LOADS components are read one statement each (a stream
 * of a few components reads only theirs); past that, all of
 * counter_state is read in one statement (an interval of a whole site's
 * output reads every component once), unless it holds more than
 * STATE_BULK_MAX rows (then memory stays bounded by the components
 * seen, and each is read alone).
 */
static int load_state(struct ingest_store *s, enum ingest_kind kind,
		      const char *name, const char *comp, fwd_error_t *err)
{
	struct db_stmt *st = s->state_load;
	int64_t rows = 0;

	if (s->all_loaded || series_known(s->loaded, comp))
		return 0;
	if (raw_wait(s, err) < 0)
		return -1;
	if (s->n_single_loads++ == STATE_SINGLE_LOADS) {
		int r;

		if (db_query_int64(s->db, err, &rows, state_count_sql, "") < 0)
			return -1;
		if (rows <= STATE_BULK_MAX) {
			struct db_stmt *all =
				db_queryf(s->db, err, state_load_all_sql, "");

			if (!all)
				return -1;
			r = seed_states(s, all, NULL, err);
			db_stmt_close(all);
			if (r < 0)
				return -1;
			s->all_loaded = true;
			return 0;
		}
	}
	db_bind_text(st, 0, ingest_kind_name(kind));
	db_bind_text(st, 1, name);
	if (db_exec(st, err) < 0)
		return -1;
	return seed_states(s, st, comp, err);
}

/* "kind\tname" of a component into comp (room for 200), its length. */
static size_t comp_key(char *comp, enum ingest_kind kind, const char *name)
{
	const char *k = ingest_kind_name(kind);
	size_t nk = strlen(k), nn = strlen(name);

	/* name_ok() keeps names under 128 bytes */
	memcpy(comp, k, nk);
	comp[nk] = '\t';
	memcpy(comp + nk + 1, name, nn + 1);
	return nk + 1 + nn;
}

static int bind_opt_u64(struct db_stmt *st, unsigned int idx, bool has,
			uint64_t v)
{
	return has ? db_bind_uint64(st, idx, v) : db_bind_null(st, idx);
}

struct raw_row {
	enum ingest_kind kind;
	const char *name;
	int64_t ts;
	bool has_dt;
	double dt;
	bool has[INFLUX_N_COUNTERS];
	uint64_t v[INFLUX_N_COUNTERS];
	bool has_queue;
	double queue;
};

static int upsert_raw(struct ingest_store *s, const struct raw_row *r,
		      uint64_t *affected, fwd_error_t *err)
{
	struct db_stmt *st = s->raw_upsert;

	/* The buffered rows first, written before this one. */
	if (flush_raw(s, err) < 0 || raw_wait(s, err) < 0)
		return -1;
	db_bind_text(st, 0, ingest_kind_name(r->kind));
	db_bind_text(st, 1, r->name);
	db_bind_int64(st, 2, r->ts);
	if (r->has_dt)
		db_bind_double(st, 3, r->dt);
	else
		db_bind_null(st, 3);
	for (unsigned int i = 0; i < INFLUX_N_COUNTERS; i++)
		bind_opt_u64(st, 4 + i, r->has[i], r->v[i]);
	if (r->has_queue)
		db_bind_double(st, 9, r->queue);
	else
		db_bind_null(st, 9);
	if (db_exec(st, err) < 0)
		return -1;
	*affected = db_affected(st);
	if (*affected && r->kind == INGEST_FWD)
		arrive(s, ARR_SAMPLES, r->ts);
	return 0;
}

/* row written alone now (upserted) and counted; its minute's rollups
 * are recomputed at the commit. */
static int store_now(struct ingest_store *s, const struct raw_row *row,
		     fwd_error_t *err)
{
	uint64_t affected;

	if (upsert_raw(s, row, &affected, err) < 0)
		return fail(s);
	if (affected)
		s->stats.stored++;
	else
		s->stats.skipped++;
	if (touch(s, row->kind, row->name, row->ts, false, err) < 0)
		return fail(s);
	return record_done(s, err);
}

/* ---- plausibility ---- */

/* The component's peak bandwidth, 0 when unknown. */
static double peak_of(const struct ingest_store *s, enum ingest_kind kind,
		      const char *name)
{
	const struct inventory_peak *p = inventory_peak_find(
		s->peaks, s->n_peaks, ingest_kind_name(kind), name);

	return p ? p->bandwidth_bps : 0;
}

/* Reject a record: nothing of it is stored, the batch goes on. */
static int implausible(struct ingest_store *s, fwd_error_t *err,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int implausible(struct ingest_store *s, fwd_error_t *err,
		       const char *fmt, ...)
{
	va_list ap;

	s->stats.implausible++;
	va_start(ap, fmt);
	verrprintf(err, fmt, ap);
	va_end(ap);
	return fwd_plaus_fail(FWD_REASON_RATE);
}

/* The sum of the deltas, UINT64_MAX when it does not fit. */
static uint64_t delta_sum(const uint64_t *d, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (sum + d[i] < sum)
			return UINT64_MAX;
		sum += d[i];
	}
	return sum;
}

static int queue_rejected(struct ingest_store *s, enum ingest_kind kind,
			  const char *name, const char *what, double v,
			  fwd_error_t *err)
{
	s->stats.implausible_queue++;
	return implausible(s, err,
			   "%s %s: implausible %s %.3g: over %.15g "
			   "(ingest.max_queue_len)",
			   ingest_kind_name(kind), name, what, v,
			   s->lim.max_queue_len);
}

int ingest_store_beacon(struct ingest_store *s, const char *name,
			const struct beacon_rec *r, fwd_error_t *err)
{
	struct raw_row row = {.kind = INGEST_FWD, .name = name, .ts = r->ts};
	uint64_t d[BEACON_BUCKETS], sum = 0;
	struct raw_buf *b;
	struct hist_buf *h;
	char key[256], metric[16], comp[200];
	double dt = 0;
	int u;

	if (!name_ok(name, err))
		return -1;
	/* LWFS records write through the connection throughout. */
	if (raw_wait(s, err) < 0)
		return fail(s);
	if (begin(s, err) < 0)
		return -1;
	if (r->is_queue) {
		if (!ingest_gauge_ok((double)r->queue_len,
				     s->lim.max_queue_len))
			return queue_rejected(s, INGEST_FWD, name,
					      "queue length",
					      (double)r->queue_len, err);
		row.has_queue = true;
		row.queue = (double)r->queue_len;
		b = raw_last(s, INGEST_FWD, name, r->ts);
		if (b) {
			/* the row of this time's histogram lines */
			b->has_queue = true;
			b->queue = row.queue;
			s->stats.stored++;
			return record_done(s, err);
		}
		return store_now(s, &row, err);
	}

	snprintf(metric, sizeof(metric), "%s_%s", beacon_op_name(r->op),
		 beacon_phase_name(r->phase));
	snprintf(key, sizeof(key), "fwd\t%s\t%s", name, metric);
	comp_key(comp, INGEST_FWD, name);
	if (load_state(s, INGEST_FWD, name, comp, err) < 0)
		return fail(s);
	u = series_update_checked(s->series, key, r->ts, r->v, BEACON_BUCKETS,
				  series_check_rate, &s->lim.max_ops_rate, d,
				  &dt);
	if (u < 0) {
		errprintf(err, "ingest: %s", strerror(errno));
		return fail(s);
	}
	if (u == SERIES_IMPLAUSIBLE) {
		uint64_t n = delta_sum(d, BEACON_BUCKETS);

		s->stats.implausible_ops++;
		return implausible(s, err,
				   "fwd %s: implausible %s %s requests delta "
				   "%" PRIu64 " in %.0f s (%.3g ops/s): over "
				   "%.15g ops/s (ingest.max_ops_rate)",
				   name, beacon_op_name(r->op),
				   beacon_phase_name(r->phase), n, dt,
				   (double)n / dt, s->lim.max_ops_rate);
	}
	if (u == SERIES_BASELINE || u == SERIES_OLD) {
		s->stats.skipped++;
		return record_done(s, err);
	}

	/* new deltas (after the series' baseline): buffered, written in
	 * multi-row statements (flush_hist(), flush_raw()) */
	if (s->n_hist == HIST_CHUNK && flush_hist(s, err) < 0)
		return fail(s);
	h = &s->histbuf[s->n_hist++];
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->ts = r->ts;
	h->op = r->op;
	h->phase = r->phase;
	h->dt = dt;
	memcpy(h->b, d, sizeof(h->b));
	/* Requests completed in the interval = the exe histogram's delta,
	 * in the forwarder's raw row of that time. */
	if (r->phase == BEACON_EXE) {
		static const enum influx_field col[] = {
			[BEACON_META] = INFLUX_MD_OPS,
			[BEACON_READ] = INFLUX_READ_OPS,
			[BEACON_WRITE] = INFLUX_WRITE_OPS,
		};

		for (unsigned int i = 0; i < BEACON_BUCKETS; i++)
			sum += d[i];
		b = raw_last(s, INGEST_FWD, name, r->ts);
		if (!b) {
			if (s->n_raw == RAW_CHUNK &&
			    (flush_raw(s, err) < 0 || raw_wait(s, err) < 0))
				return fail(s);
			b = &s->rawbuf[s->n_raw++];
			memset(b, 0, sizeof(*b));
			b->kind = INGEST_FWD;
			snprintf(b->name, sizeof(b->name), "%s", name);
			b->ts = r->ts;
		}
		b->has_dt = true;
		b->dt = dt;
		b->has[col[r->op]] = true;
		b->v[col[r->op]] = sum;
	}
	s->stats.stored++;
	return record_done(s, err);
}

static bool is_bytes(enum influx_field f)
{
	return f == INFLUX_READ_BYTES || f == INFLUX_WRITE_BYTES;
}

/* The message for an implausible counter of an influx record. */
static int counter_rejected(struct ingest_store *s, const struct influx_rec *r,
			    enum influx_field f, uint64_t d, double dt,
			    double bound, double peak, fwd_error_t *err)
{
	const char *kind = ingest_kind_name(r->kind);
	char b[64], pk[64];

	if (!is_bytes(f))
		return implausible(s, err,
				   "%s %s: implausible %s delta %" PRIu64
				   " in %.0f s (%.3g ops/s): over %.15g "
				   "ops/s (ingest.max_ops_rate)",
				   kind, r->name, influx_field_name(f), d, dt,
				   (double)d / dt, bound);
	units_format_rate(bound, b, sizeof(b));
	if (!(peak > 0))
		return implausible(s, err,
				   "%s %s: implausible %s delta %" PRIu64
				   " in %.0f s (%.3g B/s): over %s "
				   "(ingest.max_bandwidth; peak bandwidth "
				   "unknown)",
				   kind, r->name, influx_field_name(f), d, dt,
				   (double)d / dt, b);
	units_format_rate(peak, pk, sizeof(pk));
	return implausible(s, err,
			   "%s %s: implausible %s delta %" PRIu64
			   " in %.0f s (%.3g B/s): over %s "
			   "(ingest.max_rate_factor %.15g x peak %s)",
			   kind, r->name, influx_field_name(f), d, dt,
			   (double)d / dt, b, s->lim.max_rate_factor, pk);
}

int ingest_store_influx(struct ingest_store *s, const struct influx_rec *r,
			fwd_error_t *err)
{
	struct raw_row row = {.kind = r->kind, .name = r->name};
	char key[INFLUX_N_COUNTERS][256], comp[200];
	size_t n;
	double bound[INFLUX_N_COUNTERS], dt[INFLUX_N_COUNTERS];
	uint64_t d[INFLUX_N_COUNTERS];
	int u[INFLUX_N_COUNTERS];
	bool old = false, any_delta = false, bad = false;
	double peak = 0;
	int64_t ts;
	int first_bad = -1;

	if (!name_ok(r->name, err))
		return -1;
	/* floor division: ns before 1970 are refused by the parser */
	ts = r->ts_ns / 1000000000;
	row.ts = ts;
	if (begin(s, err) < 0)
		return -1;
	if (r->has[INFLUX_READ_BYTES] || r->has[INFLUX_WRITE_BYTES])
		peak = peak_of(s, r->kind, r->name);
	n = comp_key(comp, r->kind, r->name);
	if (load_state(s, r->kind, r->name, comp, err) < 0)
		return fail(s);
	/* Judge every counter before any baseline moves: a record is
	 * stored whole or not at all. */
	for (int i = 0; i < INFLUX_N_COUNTERS; i++) {
		enum influx_field f = (enum influx_field)i;
		const char *fn = influx_field_name(f);

		if (!r->has[i])
			continue;
		/* "kind\tname\tfield" */
		memcpy(key[i], comp, n);
		key[i][n] = '\t';
		memcpy(key[i] + n + 1, fn, strlen(fn) + 1);
		bound[i] = is_bytes(f) ? ingest_bytes_bound(&s->lim, peak)
				       : s->lim.max_ops_rate;
		u[i] = series_peek(s->series, key[i], ts, &r->counter[i], 1,
				   series_check_rate, &bound[i], &d[i], &dt[i]);
		if (u[i] < 0) {
			errprintf(err, "ingest: %s", strerror(errno));
			return fail(s);
		}
		if (u[i] == SERIES_OLD)
			old = true;
		if (u[i] == SERIES_IMPLAUSIBLE) {
			bad = true;
			if (first_bad < 0)
				first_bad = i;
		}
	}
	if (!old && r->has_queue &&
	    !ingest_gauge_ok(r->queue_len, s->lim.max_queue_len)) {
		/* The counters' baselines stay: their next deltas span this
		 * record's interval too. */
		if (bad)
			s->stats.implausible_queue++;
		else
			return queue_rejected(s, r->kind, r->name, "queue_len",
					      r->queue_len, err);
	}
	if (!old && bad) {
		for (int i = 0; i < INFLUX_N_COUNTERS; i++) {
			if (!r->has[i] || u[i] != SERIES_IMPLAUSIBLE)
				continue;
			if (is_bytes((enum influx_field)i))
				s->stats.implausible_bytes++;
			else
				s->stats.implausible_ops++;
			/* Remember the value as a candidate. */
			if (series_update_checked(s->series, key[i], ts,
						  &r->counter[i], 1,
						  series_check_rate, &bound[i],
						  &d[i], &dt[i]) < 0) {
				errprintf(err, "ingest: %s", strerror(errno));
				return fail(s);
			}
		}
		return counter_rejected(s, r, (enum influx_field)first_bad,
					d[first_bad], dt[first_bad],
					bound[first_bad], peak, err);
	}
	for (int i = 0; i < INFLUX_N_COUNTERS; i++) {
		if (!r->has[i])
			continue;
		u[i] = series_update_checked(
			s->series, key[i], ts, &r->counter[i], 1,
			series_check_rate, &bound[i], &d[i], &dt[i]);
		if (u[i] < 0) {
			errprintf(err, "ingest: %s", strerror(errno));
			return fail(s);
		}
		if (u[i] == SERIES_DELTA || u[i] == SERIES_RESTART) {
			row.has[i] = true;
			row.v[i] = d[i];
			row.has_dt = true;
			row.dt = dt[i];
			any_delta = true;
		}
	}
	row.has_queue = r->has_queue;
	row.queue = r->queue_len;
	if (old || (!any_delta && !row.has_queue)) {
		s->stats.skipped++;
		return record_done(s, err);
	}
	{
		/* new deltas (the series saw these values after its
		 * baseline), or a queue length: buffered, written in
		 * multi-row statements; a row of the same time as the last
		 * one buffered (Telegraf lustre2_lctl gives an OST's calls
		 * and bytes on two lines) fills that one, as the upsert
		 * would */
		struct raw_buf *b = raw_last(s, row.kind, row.name, row.ts);
		bool later = false;

		if (!b) {
			if (s->n_raw == RAW_CHUNK && flush_raw(s, err) < 0)
				return fail(s);
			b = &s->rawbuf[s->n_raw++];
			memset(b, 0, sizeof(*b));
			b->kind = row.kind;
			snprintf(b->name, sizeof(b->name), "%s", row.name);
			b->ts = row.ts;
			/* no delta: a queue length alone, maybe stored
			 * already (a re-ingest): counted when written */
			b->count_at_write = later = !any_delta;
		}
		if (row.has_dt) {
			b->has_dt = true;
			b->dt = row.dt;
		}
		for (int i = 0; i < INFLUX_N_COUNTERS; i++) {
			if (row.has[i]) {
				b->has[i] = true;
				b->v[i] = row.v[i];
			}
		}
		if (row.has_queue) {
			b->has_queue = true;
			b->queue = row.queue;
		}
		if (!later)
			s->stats.stored++;
		/* its rollups: see raw_wait() */
		return record_done(s, err);
	}
}

/* The multi-row insert for n operations, prepared on first use: one
 * round trip per entry instead of one per operation. */
static struct db_stmt *jobstats_stmt(struct ingest_store *s, size_t n,
				     fwd_error_t *err)
{
	size_t len =
		sizeof(jobstats_insert_sql) + n * (sizeof(JOBSTATS_ROW) + 2);
	char *sql;

	if (s->jobstats_insert[n])
		return s->jobstats_insert[n];
	sql = malloc(len);
	if (!sql) {
		errprintf(err, "ingest: %s", strerror(errno));
		return NULL;
	}
	strcpy(sql, jobstats_insert_sql);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(sql, ", ");
		strcat(sql, JOBSTATS_ROW);
	}
	s->jobstats_insert[n] = db_prepare(s->db, sql, err);
	free(sql);
	return s->jobstats_insert[n];
}

int ingest_store_jobstats(struct ingest_store *s, const struct jobstats_rec *r,
			  fwd_error_t *err)
{
	const char *kind = ingest_kind_name(r->kind);
	struct js_entry *en;

	if (!name_ok(r->target, err) || !name_ok(r->job_id, err))
		return -1;
	if (raw_wait(s, err) < 0)
		return fail(s);
	if (begin(s, err) < 0)
		return -1;
	if (strcmp(s->last_target, r->target) != 0) {
		/* Record targets as they are first seen. */
		db_bind_text(s->target_insert, 0, r->target);
		db_bind_text(s->target_insert, 1, kind);
		db_bind_int64(s->target_insert, 2, (int64_t)time(NULL));
		if (db_exec(s->target_insert, err) < 0)
			return fail(s);
		snprintf(s->last_target, sizeof(s->last_target), "%s",
			 r->target);
	}
	if (r->n_ops == 0 || r->n_ops > JOBSTATS_MAX_OPS) {
		s->stats.skipped++; /* an entry without operations */
		return record_done(s, err);
	}
	if (s->n_jsrows + r->n_ops > JS_CHUNK && flush_js(s, err) < 0)
		return fail(s);
	en = &s->jsents[s->n_jsents++];
	en->first = s->n_jsrows;
	en->n = r->n_ops;
	en->ts = r->ts;
	for (size_t i = 0; i < r->n_ops; i++) {
		struct js_row *row = &s->jsrows[s->n_jsrows++];

		row->kind = r->kind;
		snprintf(row->target, sizeof(row->target), "%s", r->target);
		snprintf(row->job_id, sizeof(row->job_id), "%s", r->job_id);
		row->has_slurm_id = r->has_slurm_id;
		row->slurm_id = r->slurm_id;
		row->ts = r->ts;
		row->op = r->ops[i];
	}
	/* stored or already stored: counted when written (flush_js) */
	return record_done(s, err);
}

int ingest_prune(struct db *db, const struct policy_retention *r, int64_t now,
		 bool dry_run, struct db_pruned *out, size_t *n,
		 fwd_error_t *err)
{
	static const struct {
		const char *table, *column;
		bool rollup;
	} t[INGEST_PRUNE_TABLES] = {
		{"samples_raw", "ts", false},
		{"samples_hist", "ts", false},
		{"jobstats_raw", "ts", false},
		{"rollups_minute", "minute", true},
		{"rollups_15min", "minute", true},
		{"rollups_hist_minute", "minute", true},
	};

	int64_t horizon = 0;

	for (size_t i = 0; i < INGEST_PRUNE_TABLES; i++) {
		double keep = t[i].rollup ? r->rollups : r->raw_samples;
		struct db_pruned *p = &out[*n];

		if (keep <= 0)
			continue; /* 0 = keep forever */
		p->table = t[i].table;
		p->cutoff = now - (int64_t)keep;
		/* Rollups go by whole quarter hours: a quarter hour of
		 * rollups_15min stays the aggregate of the minutes kept. */
		if (t[i].rollup)
			p->cutoff = rollup_quarter(p->cutoff);
		if (db_prune_before(db, p, t[i].column, dry_run, err) < 0)
			return -1;
		if (!dry_run && p->cutoff > horizon)
			horizon = p->cutoff;
		(*n)++;
	}
	/* Rows of a minute before this may be gone: its rollup is
	 * recomputed from what is left, never added to (ingest_store). */
	if (horizon > 0 && db_execf(db, err, horizon_save_sql, "i",
				    rollup_minute(horizon) + 60) < 0)
		return errprefix(err, "prune");
	return 0;
}
