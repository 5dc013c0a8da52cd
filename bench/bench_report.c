/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_report: how long `fwdctl report job` takes for a 24 h, 512-node
 * job and `fwdctl report machine` for 24 h, on a store at TaihuLight's
 * scale: the shipped topology's 240 forwarders and 144 OSTs and an MDT,
 * per-minute rollups of every one of them and their quarter-hour rollups
 * (rollups_15min, the sums of those minutes, as ingestion keeps them), the
 * job's Lustre job_stats (a snapshot a minute on each of the 144 OSTs and
 * the MDT), a job every 10 minutes with its allocations, 50 earlier runs of
 * the application, health episodes.
 *
 * The rollups cover FWDALLOC_BENCH_REPORT_DAYS days (default 14, at most
 * 366; a year of minutes is about 200 million rows, which this machine
 * cannot load in the time a bench run has).  What the days change: the
 * reports read the minutes of the job's own run (its forwarders' series)
 * and quarter hours for the rest (the week or the day before the job, the
 * OSTs' totals over the run, the machine's day), each a range of the
 * primary key per component, so the rows read do not grow with the days
 * stored; the days only deepen the indexes.  Before rollups_15min the job
 * report read every minute of its OSTs over the day before and of its
 * forwarders over the week before (about 460,000 rows), the machine report
 * every minute of the day (554,000).  The figures say how many days the
 * store held.  Rows are written with LOAD DATA LOCAL (db_load_local()),
 * the minute table's secondary indexes built after its rows.
 *
 * Each report is run 20 times (text, then HTML); its p95 is printed next
 * to two references measured in the same run, each the p95 of 20 runs of
 * plain indexed SELECTs: of the rows the report reads (the job: its
 * job_stats rows, its forwarders' minutes over the run and quarter hours
 * over the week before, its OSTs' and MDT's quarter hours over the run and
 * the day before; the machine: the day's quarter hours grouped by
 * component), the figure's reference; and of the minute rows of the same
 * ranges, what the reports read before (the figure "..., against
 * minutes").  Figures only, no timed assertion.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "bench/testdb.h"
#include "common/array.h"
#include "report/report.h"

#define N_FWD 240
#define N_OST 144
#define JOB_ID 900001
#define N_JOB_FWD 4 /* scaled: its default forwarder and 3 more */
#define REPS 20
#define T_END 1767225600 /* 2026-01-01T00:00:00Z: the store ends here */

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fwd_name(int i, char *b, size_t n)
{
	snprintf(b, n, "fwd%03d", i + 1);
}

static void ost_name(int i, char *b, size_t n)
{
	snprintf(b, n, "online1-OST%04x", i);
}

static int load(struct db *db, const char *sql, struct db_text *t,
		uint64_t *rows)
{
	fwd_error_t err;
	bool refused = false;
	int64_t n;

	if (!t->len)
		return 0;
	n = db_load_local(db, sql, t->buf, t->len, &refused, &err);
	if (n < 0) {
		fprintf(stderr, "bench_report: %s%s\n", err.text,
			refused ? " (LOCAL refused)" : "");
		return -1;
	}
	*rows += (uint64_t)n;
	db_text_clear(t);
	return 0;
}

static const char rollup_sql[] =
	"LOAD DATA LOCAL INFILE 'rollups' INTO TABLE rollups_minute"
	" FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\'"
	" LINES TERMINATED BY '\\n'"
	" (kind, name, minute, samples, read_bytes, write_bytes, read_ops,"
	" write_ops, md_ops, read_bps_max, write_bps_max, queue_len_avg,"
	" queue_len_max, queue_len_sum, queue_len_samples)";

static const char rollup_q_sql[] =
	"LOAD DATA LOCAL INFILE 'quarters' INTO TABLE rollups_15min"
	" FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\'"
	" LINES TERMINATED BY '\\n'"
	" (kind, name, minute, samples, read_bytes, write_bytes, read_ops,"
	" write_ops, md_ops, read_bps_max, write_bps_max, queue_len_avg,"
	" queue_len_max, queue_len_sum, queue_len_samples)";

/* One rollup row's figures: a minute's, or a quarter hour's sums. */
struct rollup_fig {
	uint64_t samples, r, w, rops, wops, md, qn;
	double rmax, wmax, qsum, qmax;
};

static void rollup_text(struct db_text *t, const char *kind, const char *name,
			int64_t minute, const struct rollup_fig *f)
{
	db_text_room(t, 512);
	db_text_str(t, kind);
	db_text_str(t, name);
	db_text_i64(t, minute);
	db_text_u64(t, f->samples);
	db_text_u64(t, f->r);
	db_text_u64(t, f->w);
	db_text_u64(t, f->rops);
	db_text_u64(t, f->wops);
	db_text_u64(t, f->md);
	db_text_double(t, f->rmax);
	db_text_double(t, f->wmax);
	db_text_double(t, f->qn ? f->qsum / (double)f->qn : 0);
	db_text_double(t, f->qmax);
	db_text_double(t, f->qsum);
	db_text_u64(t, f->qn);
	db_text_row_end(t);
}

/* A component's minute: busy 60 % of the time. */
static void rollup_minute_fig(double peak, struct rollup_fig *f)
{
	bool busy = next() % 10 < 6;
	uint64_t r = busy ? next() % (uint64_t)(peak * 30) : 0;
	uint64_t w = busy ? next() % (uint64_t)(peak * 30) : 0;
	double q = busy ? (double)(next() % 8) : 0;

	*f = (struct rollup_fig){
		.samples = 6,
		.r = r,
		.w = w,
		.rops = r >> 20,
		.wops = w >> 20,
		.md = busy ? next() % 20000 : 0,
		.rmax = (double)r / 10.0,
		.wmax = (double)w / 10.0,
		.qsum = q * 6,
		.qmax = q + 1,
		.qn = 6,
	};
}

/* A minute's figures added to its quarter hour's, as ingestion adds them
 * (monitor/ingest_rollup.c). */
static void rollup_add(struct rollup_fig *q, const struct rollup_fig *m)
{
	q->samples += m->samples;
	q->r += m->r;
	q->w += m->w;
	q->rops += m->rops;
	q->wops += m->wops;
	q->md += m->md;
	q->qn += m->qn;
	q->qsum += m->qsum;
	if (m->rmax > q->rmax)
		q->rmax = m->rmax;
	if (m->wmax > q->wmax)
		q->wmax = m->wmax;
	if (m->qmax > q->qmax)
		q->qmax = m->qmax;
}

/*
 * The minute table's secondary indexes are dropped for the load and built
 * again after it, as a bulk load does: inserting a year of minutes into an
 * index larger than the buffer pool slows the load several times.  They
 * are read from the schema first, so that what is built again is what
 * db/schema.c made.
 */
#define MAX_INDEXES 8
static struct minute_index {
	char name[65];
	char cols[256];
	bool unique;
} minute_idx[MAX_INDEXES];
static size_t n_minute_idx;

static int minute_indexes_drop(struct db *db)
{
	struct db_stmt *st;
	fwd_error_t err;
	char sql[160];
	int r;

	st = db_queryf(db, &err,
		       "SELECT index_name, GROUP_CONCAT(CONCAT('`',"
		       " column_name, '`') ORDER BY seq_in_index),"
		       " MIN(non_unique) FROM information_schema.statistics"
		       " WHERE table_schema = DATABASE() AND table_name ="
		       " 'rollups_minute' AND index_name <> 'PRIMARY'"
		       " GROUP BY index_name",
		       "");
	if (!st)
		goto fail;
	while ((r = db_fetch(st, &err)) > 0) {
		struct minute_index *x = &minute_idx[n_minute_idx];

		if (n_minute_idx == MAX_INDEXES) {
			snprintf(err.text, sizeof(err.text),
				 "rollups_minute: more than %d indexes",
				 MAX_INDEXES);
			r = -1;
			break;
		}
		snprintf(x->name, sizeof(x->name), "%s", db_col_text(st, 0));
		snprintf(x->cols, sizeof(x->cols), "%s", db_col_text(st, 1));
		x->unique = db_col_int64(st, 2) == 0;
		n_minute_idx++;
	}
	db_stmt_close(st);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < n_minute_idx; i++) {
		snprintf(sql, sizeof(sql),
			 "ALTER TABLE rollups_minute DROP INDEX `%.64s`",
			 minute_idx[i].name);
		if (db_execf(db, &err, sql, "") < 0)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "bench_report: %s\n", err.text);
	return -1;
}

static int minute_indexes_build(struct db *db)
{
	fwd_error_t err;
	char sql[400];

	for (size_t i = 0; i < n_minute_idx; i++) {
		snprintf(sql, sizeof(sql),
			 "ALTER TABLE rollups_minute ADD %sINDEX `%.64s` "
			 "(%.255s)",
			 minute_idx[i].unique ? "UNIQUE " : "",
			 minute_idx[i].name, minute_idx[i].cols);
		if (db_execf(db, &err, sql, "") < 0) {
			fprintf(stderr, "bench_report: %s\n", err.text);
			return -1;
		}
	}
	return 0;
}

static int load_rollups(struct db *db, int days, uint64_t *rows)
{
	struct db_text t = {0}, tq = {0};
	int64_t t0 = T_END - (int64_t)days * 86400;
	char name[32];
	int rv = -1;

	/* in the primary key's order (kind, name, minute): the clustered
	 * index grows at its end */
	for (int c = 0; c < N_FWD + N_OST + 1; c++) {
		const char *kind = c < N_FWD	       ? "fwd"
				   : c < N_FWD + N_OST ? "ost"
						       : "mdt";
		double peak = c < N_FWD ? 2.5e9 : c < N_FWD + N_OST ? 1e9 : 1e8;
		struct rollup_fig q = {0};

		if (c < N_FWD)
			fwd_name(c, name, sizeof(name));
		else if (c < N_FWD + N_OST)
			ost_name(c - N_FWD, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "online1-MDT0000");
		for (int64_t m = t0; m < T_END; m += 60) {
			struct rollup_fig f;

			rollup_minute_fig(peak, &f);
			rollup_text(&t, kind, name, m, &f);
			rollup_add(&q, &f);
			if ((m + 60) % 900 == 0) {
				rollup_text(&tq, kind, name, m + 60 - 900, &q);
				memset(&q, 0, sizeof(q));
			}
		}
		if (t.len > (64u << 20) && load(db, rollup_sql, &t, rows) < 0)
			goto out;
		if (tq.len > (16u << 20) &&
		    load(db, rollup_q_sql, &tq, rows) < 0)
			goto out;
	}
	if (load(db, rollup_sql, &t, rows) < 0 ||
	    load(db, rollup_q_sql, &tq, rows) < 0)
		goto out;
	rv = 0;
out:
	db_text_free(&t);
	db_text_free(&tq);
	return rv;
}

static const char js_sql[] =
	"LOAD DATA LOCAL INFILE 'jobstats' INTO TABLE jobstats_raw"
	" FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\'"
	" LINES TERMINATED BY '\\n'"
	" (kind, target, lustre_job_id, job_id, ts, op, samples, unit,"
	" min_value, max_value, sum_value)";

static void js_row(struct db_text *t, uint64_t job, const char *kind,
		   const char *target, int64_t ts, const char *op,
		   uint64_t samples, uint64_t sum)
{
	db_text_room(t, 512);
	db_text_str(t, kind);
	db_text_str(t, target);
	db_text_u64(t, job);
	db_text_u64(t, job);
	db_text_i64(t, ts);
	db_text_str(t, op);
	db_text_u64(t, samples);
	db_text_str(t, strstr(op, "bytes") ? "bytes" : "usecs");
	db_text_u64(t, 4096);
	db_text_u64(t, 4194304);
	db_text_u64(t, sum);
	db_text_row_end(t);
}

/* The job's job_stats: cumulative, a snapshot a minute per target. */
static int load_jobstats(struct db *db, int64_t start, uint64_t *rows)
{
	static const char *const md_ops[] = {"open",	"close", "getattr",
					     "setattr", "mkdir", "unlink"};
	struct db_text t = {0};
	char name[32];
	int rv = -1;

	for (int i = 0; i < N_OST; i++) {
		uint64_t rs = 0, rb = 0, ws = 0, wb = 0;

		ost_name(i, name, sizeof(name));
		for (int64_t ts = start + 30; ts < start + 86400; ts += 60) {
			/* a minute's requests, of 1 MiB each */
			uint64_t dr = next() % 64, dw = next() % 128;

			rs += dr;
			rb += dr * 1048576;
			ws += dw;
			wb += dw * 1048576;
			js_row(&t, JOB_ID, "ost", name, ts, "read_bytes", rs,
			       rb);
			js_row(&t, JOB_ID, "ost", name, ts, "write_bytes", ws,
			       wb);
		}
		if (load(db, js_sql, &t, rows) < 0)
			goto out;
	}
	for (size_t k = 0; k < sizeof(md_ops) / sizeof(*md_ops); k++) {
		uint64_t s = 0;

		for (int64_t ts = start + 30; ts < start + 86400; ts += 60) {
			s += next() % 500;
			js_row(&t, JOB_ID, "mdt", "online1-MDT0000", ts,
			       md_ops[k], s, s * 20);
		}
	}
	if (load(db, js_sql, &t, rows) < 0)
		goto out;
	/* the earlier runs' job_stats (2 h each, a snapshot every 10
	 * minutes): the table holds other jobs than the one reported */
	for (int j = 0; j < 50; j++) {
		int64_t s0 = start - (int64_t)(j + 1) * 86400 / 2;

		for (int i = 0; i < N_OST; i++) {
			uint64_t v = 0;

			ost_name(i, name, sizeof(name));
			for (int64_t ts = s0 + 600; ts <= s0 + 7200;
			     ts += 600) {
				v += next() % 1000;
				js_row(&t, (uint64_t)(800000 + j), "ost", name,
				       ts, "write_bytes", v, v * 1048576);
				js_row(&t, (uint64_t)(800000 + j), "ost", name,
				       ts, "read_bytes", v / 2, v * 524288);
			}
		}
		if (load(db, js_sql, &t, rows) < 0)
			goto out;
	}
	rv = 0;
out:
	db_text_free(&t);
	return rv;
}

static int seed_jobs(struct db *db, int days, int64_t start, uint64_t *rows)
{
	fwd_error_t err;
	int64_t t0 = T_END - (int64_t)days * 86400;
	uint64_t id = 100000;
	char name[32];

	if (db_begin(db, &err) < 0)
		goto fail;
	/* a job every 10 minutes on 512 nodes of its own forwarder */
	for (int64_t s = t0; s < T_END; s += 600, id++) {
		int f = (int)(next() % N_FWD);

		fwd_name(f, name, sizeof(name));
		if (db_execf(db, &err,
			     "INSERT INTO jobs (job_id, user, name, nodelist,"
			     " node_count, start_at, end_at, state, updated_at)"
			     " VALUES (?, 'u1', 'app', 'c[1-512]', 512, ?, ?,"
			     " 'COMPLETED', 0)",
			     "uii", id, s, s + 3600) < 0 ||
		    db_execf(db, &err,
			     "INSERT INTO allocations (job_id, forwarder,"
			     " nodes, node_count, action, acquired_at,"
			     " released_at, io_mode, mdops_rate,"
			     " bandwidth_bps, iops) VALUES (?, ?, 'c[1-512]',"
			     " 512, 'default', ?, ?, 'N-N', 10, 1e9, 100)",
			     "usii", id, name, s, s + 3600) < 0)
			goto fail;
		*rows += 2;
	}
	/* the application's 50 earlier runs at 512 nodes */
	for (int i = 0; i < 50; i++) {
		int64_t s = start - (int64_t)(i + 1) * 86400 / 2;

		if (db_execf(db, &err,
			     "INSERT INTO jobs (job_id, user, name, nodelist,"
			     " node_count, start_at, end_at, state, updated_at)"
			     " VALUES (?, 'alice', 'wrf', 'c[1-512]', 512, ?,"
			     " ?, 'COMPLETED', 0)",
			     "uii", (uint64_t)(800000 + i), s, s + 7200) < 0 ||
		    db_execf(
			    db, &err,
			    "INSERT INTO job_io (job_id, read_bytes,"
			    " write_bytes, io_nodes, procs, io_mode,"
			    " forwarders_held, bandwidth_achieved_bps, runtime,"
			    " source, updated_at) VALUES (?, 1e12, 4e12, 512,"
			    " 32768, 'N-1', ?, ?, 7200, 'darshan', 0)",
			    "uid", (uint64_t)(800000 + i),
			    (int64_t)(1 + i % N_JOB_FWD),
			    2e9 + (double)(next() % 1000) * 1e6) < 0)
			goto fail;
		*rows += 2;
	}
	/* the job: 24 h on 512 nodes, scaled to N_JOB_FWD forwarders */
	if (db_execf(db, &err,
		     "INSERT INTO jobs (job_id, user, name, nodelist,"
		     " node_count, start_at, end_at, state, request,"
		     " updated_at) VALUES (?, 'alice', 'wrf', 'c[1-512]', 512,"
		     " ?, ?, 'COMPLETED', 'auto', 0)",
		     "uii", (uint64_t)JOB_ID, start, start + 86400) < 0 ||
	    db_execf(db, &err,
		     "INSERT INTO job_io (job_id, read_bytes, write_bytes,"
		     " io_nodes, procs, io_mode, forwarders_held,"
		     " bandwidth_achieved_bps, runtime, mdops_rate, source,"
		     " updated_at) VALUES (?, 2e12, 8e12, 512, 32768, 'N-1',"
		     " ?, 3e9, 86400, 400, 'darshan', 0)",
		     "ui", (uint64_t)JOB_ID, (int64_t)N_JOB_FWD) < 0)
		goto fail;
	for (int i = 0; i < N_JOB_FWD; i++) {
		fwd_name(i * 60, name, sizeof(name));
		if (db_execf(db, &err,
			     "INSERT INTO allocations (job_id, forwarder,"
			     " nodes, node_count, action, acquired_at,"
			     " released_at, io_mode, mdops_rate, bandwidth_bps,"
			     " iops) VALUES (?, ?, 'c[1-128]', 128, 'scale',"
			     " ?, ?, 'N-1', 400, 1e10, 5000)",
			     "usii", (uint64_t)JOB_ID, name, start,
			     start + 86400) < 0)
			goto fail;
	}
	/* health episodes: one a day somewhere */
	for (int64_t s = t0; s < T_END; s += 86400) {
		fwd_name((int)(next() % N_FWD), name, sizeof(name));
		if (db_execf(db, &err,
			     "INSERT INTO health_history (kind, name, state,"
			     " start_at, end_at, duration, reason) VALUES"
			     " ('fwd', ?, 'suspect', ?, ?, 3600, 'slow')",
			     "sii", name, s + 7200, s + 10800) < 0)
			goto fail;
	}
	if (db_commit(db, &err) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "bench_report: %s\n", err.text);
	db_rollback(db);
	return -1;
}

static double p95(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), fwd_cmp_double);
	return v[(size_t)((double)(n - 1) * 0.95 + 0.5)];
}

/*
 * The rows the job report reads, by plain indexed SELECTs: its job_stats,
 * its forwarders' minutes over the run, and (coarse) their quarter hours
 * over the week before, its OSTs' and MDT's quarter hours over the day
 * before and the run (the run starts and ends on a quarter hour here); or
 * (!coarse) the minute rows of those ranges, what it read before
 * rollups_15min.
 */
static int ref_job(struct db *db, int64_t start, bool coarse, fwd_error_t *err)
{
	const char *tbl = coarse ? "rollups_15min" : "rollups_minute";
	int64_t n;
	char sql[512];

	if (db_query_int64(db, err, &n,
			   "SELECT COUNT(*) + SUM(sum_value) % 2 FROM"
			   " jobstats_raw FORCE INDEX (jobstats_raw_job)"
			   " WHERE job_id = ? AND ts BETWEEN ? AND ?",
			   "uii", (uint64_t)JOB_ID, start - 600,
			   start + 86400 + 600) < 0)
		return -1;
	/* its forwarders: the run's minutes, the week before */
	if (db_query_int64(db, err, &n,
			   "SELECT COUNT(*) + SUM(read_bytes + write_bytes) % 2"
			   " FROM rollups_minute WHERE kind = 'fwd' AND name IN"
			   " ('fwd001', 'fwd061', 'fwd121', 'fwd181') AND"
			   " minute >= ? AND minute < ?",
			   "ii", start, start + 86400) < 0)
		return -1;
	snprintf(sql, sizeof(sql),
		 "SELECT COUNT(*) + SUM(read_bytes + write_bytes) %% 2 FROM"
		 " %s WHERE kind = 'fwd' AND name IN ('fwd001', 'fwd061',"
		 " 'fwd121', 'fwd181') AND minute >= ? AND minute < ?",
		 tbl);
	if (db_query_int64(db, err, &n, sql, "ii", start - 7 * 86400, start) <
	    0)
		return -1;
	/* its OSTs and the MDT: the run and the day before */
	snprintf(sql, sizeof(sql),
		 "SELECT COUNT(*) + SUM(read_bytes + write_bytes) %% 2 FROM"
		 " %s WHERE kind IN ('ost', 'mdt') AND minute >= ? AND"
		 " minute < ?",
		 tbl);
	return db_query_int64(db, err, &n, sql, "ii", start - 86400,
			      start + 86400) < 0
		       ? -1
		       : 0;
}

/* The day's rows grouped by component: its quarter hours (coarse), what
 * the machine report reads, or its minutes. */
static int ref_machine(struct db *db, int64_t start, bool coarse,
		       fwd_error_t *err)
{
	char sql[256];
	struct db_stmt *st;
	int r;

	snprintf(sql, sizeof(sql),
		 "SELECT kind, name, SUM(read_bytes + write_bytes),"
		 " SUM(queue_len_sum) FROM %s WHERE minute >= ? AND"
		 " minute < ? GROUP BY kind, name",
		 coarse ? "rollups_15min" : "rollups_minute");
	st = db_queryf(db, err, sql, "ii", start, start + 86400);
	if (!st)
		return -1;
	while ((r = db_fetch(st, err)) > 0)
		;
	db_stmt_close(st);
	return r;
}

/* p95 of REPS runs of a reference. */
static int ref_p95(struct db *db, int64_t start, bool job, bool coarse,
		   double *out, fwd_error_t *err)
{
	double v[REPS];

	for (int r = 0; r < REPS; r++) {
		double t = fwd_clock_mono();

		if ((job ? ref_job(db, start, coarse, err)
			 : ref_machine(db, start, coarse, err)) < 0)
			return -1;
		v[r] = fwd_clock_mono() - t;
	}
	*out = p95(v, REPS);
	return 0;
}

static int measure(struct db *db, int days, int64_t start)
{
	double v[REPS], ref, ref_min;
	fwd_error_t err;
	char label[160], l2[200];
	size_t out_len = 0;
	static const enum report_format fmts[] = {REPORT_TEXT, REPORT_HTML};
	static const char *const fmt_name[] = {"text", "HTML"};

	for (int job = 1; job >= 0; job--) {
		for (int which = 0; which < 2; which++) {
			if (ref_p95(db, start, job, true, &ref, &err) < 0 ||
			    ref_p95(db, start, job, false, &ref_min, &err) < 0)
				goto fail;
			for (int r = 0; r < REPS; r++) {
				char *out = NULL;
				double t = fwd_clock_mono();
				int rc = job ? report_job(db, JOB_ID,
							  fmts[which], &out,
							  &err)
					     : report_machine(
						       db, start, start + 86400,
						       fmts[which], &out, &err);

				if (rc != 0)
					goto fail;
				v[r] = fwd_clock_mono() - t;
				out_len = strlen(out);
				free(out);
			}
			if (job)
				snprintf(label, sizeof(label),
					 "report job, 24 h 512-node job, %s, "
					 "p95 (%d days stored)",
					 fmt_name[which], days);
			else
				snprintf(label, sizeof(label),
					 "report machine, 24 h, %s, p95 (%d "
					 "days stored)",
					 fmt_name[which], days);
			printf("%s: %.3f s (%zu bytes); plain SELECTs of the "
			       "rows it reads: %.3f s (%.2fx); of the minute "
			       "rows of the same ranges: %.3f s (%.2fx)\n",
			       label, p95(v, REPS), out_len, ref,
			       p95(v, REPS) / ref, ref_min,
			       p95(v, REPS) / ref_min);
			bench_figure("report", label, p95(v, REPS), "s", ref,
				     "indexed SELECT of the rows it reads");
			snprintf(l2, sizeof(l2), "%s, against minutes", label);
			bench_figure("report", l2, p95(v, REPS), "s", ref_min,
				     "indexed SELECT of the minutes of the "
				     "same ranges");
		}
	}
	return 0;
fail:
	fprintf(stderr, "bench_report: %s\n", err.text);
	return -1;
}

/* The days of rollups a kept store holds (its MDT's quarter hours). */
static int store_days(struct db *db)
{
	fwd_error_t err;
	int64_t q = 0;

	if (db_query_int64(
		    db, &err, &q,
		    "SELECT COUNT(*) FROM rollups_15min WHERE kind = 'mdt'",
		    "") < 0) {
		fprintf(stderr, "bench_report: %s\n", err.text);
		return -1;
	}
	return (int)(q / 96);
}

int main(void)
{
	const char *env = getenv("FWDALLOC_BENCH_REPORT_DAYS");
	const char *store = getenv("FWDALLOC_BENCH_REPORT_STORE");
	const char *keep = getenv("FWDALLOC_BENCH_REPORT_KEEP");
	int days = env && *env ? atoi(env) : 14;
	struct bench_db b;
	uint64_t rows = 0;
	int64_t start = T_END - 86400;
	double t, t_idx;
	int rv = 1;

	if (days < 2 || days > 366) {
		fprintf(stderr,
			"bench_report: FWDALLOC_BENCH_REPORT_DAYS=%s: not a "
			"number of days from 2 to 366\n",
			env);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (store && *store) {
		/* a store an earlier run loaded and kept: measured again */
		bench_db_attach(&b, store);
		if ((days = store_days(b.db)) < 2) {
			fprintf(stderr,
				"bench_report: %s holds no store of this "
				"bench (%d days of rollups)\n",
				store, days < 0 ? 0 : days);
			db_close(b.db);
			return 1;
		}
		printf("store: %s, kept by an earlier run: %d days\n", store,
		       days);
	} else {
		setenv("FWDALLOC_TESTDB_BUFFER_POOL", "2G", 0);
		bench_db_start(&b);
		printf("store: %d forwarders, %d OSTs, 1 MDT; %d days of "
		       "per-minute and quarter-hour rollups (a year would be "
		       "365: scaled to what this machine loads in a bench "
		       "run; the reports read the same rows whatever the "
		       "days)\n",
		       N_FWD, N_OST, days);
		t = fwd_clock_mono();
		if (minute_indexes_drop(b.db) < 0 ||
		    load_rollups(b.db, days, &rows) < 0 ||
		    load_jobstats(b.db, start, &rows) < 0 ||
		    seed_jobs(b.db, days, start, &rows) < 0)
			goto out;
		t_idx = fwd_clock_mono();
		if (minute_indexes_build(b.db) < 0)
			goto out;
		printf("loaded %llu rows in %.1f s (of which the minutes' "
		       "%zu secondary index%s, built after the rows: %.1f s)\n",
		       (unsigned long long)rows, fwd_clock_mono() - t,
		       n_minute_idx, n_minute_idx == 1 ? "" : "es",
		       fwd_clock_mono() - t_idx);
	}
	if (bench_db_settle(b.db, b.dir) < 0)
		goto out;
	if (measure(b.db, days, start) < 0)
		goto out;
	rv = 0;
out:
	if ((keep && *keep) || (store && *store))
		bench_db_keep(&b);
	else
		bench_db_stop(&b);
	return rv;
}
