/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ingestion rate of each format into MariaDB: synthetic input written to
 * a file, then `fwdctl ingest --format F FILE` run on it and timed from
 * its start to its exit (process start, policy load, connection, parse,
 * store, commits: all that an admin's ingest costs).  Prints records/s
 * and the rows they produced, next to LOAD DATA of the same rows.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/report.h"
#include "bench/testdb.h"

#define FWDS 64
#define ROUNDS 60 /* beacon: 64 x 60 x 7 = 26,880 lines */
#define SERIES 200
/* influx: 200 x 1,000 = 200,000 lines (2.8 h of 200 components every
 * 10 s) into an empty store, then the next 200 x 150 = 30,000 (the
 * next 25 minutes, as a periodic ingest) */
#define POINTS 1000
#define NEXT_POINTS 150
#define NEXT_TS "1472302840" /* the first time of the next points */
#define TARGETS 40
#define JOBS 250 /* jobstats: 40 x 250 = 10,000 entries, 5 ops */

#define RAW_COLS                                                            \
	"kind, name, ts, dt, read_bytes, write_bytes, read_ops, write_ops," \
	" md_ops, queue_len"
#define HIST_COLS \
	"kind, name, ts, op, phase, dt, b0, b1, b2, b3, b4, b5, b6, b7"
#define JS_COLS                                                       \
	"kind, target, lustre_job_id, job_id, ts, op, samples, unit," \
	" min_value, max_value, sum_value"

static void gen_beacon(FILE *f)
{
	static const char *const st[] = {"Meta exe",  "Meta wait",
					 "Read exe",  "Read wait",
					 "Write exe", "Write wait"};
	for (int r = 0; r < ROUNDS; r++) {
		time_t t = 1472292840 + r * 30;
		char iso[32];
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
		for (int i = 0; i < FWDS; i++) {
			for (int s = 0; s < 6; s++) {
				fprintf(f,
					"10.0.%d.%d [x]  [Trace]: %s:", i / 250,
					i % 250 + 1, st[s]);
				for (int b = 0; b < 8; b++)
					fprintf(f, " %d",
						r * (8 - b) * (s + 1));
				fprintf(f, " %s\n", iso);
			}
			fprintf(f,
				"10.0.%d.%d [x]  [Trace]: queue length: %d "
				"%s\n",
				i / 250, i % 250 + 1, (r * 7 + i) % 16, iso);
		}
	}
}

/* Points [from, to) of every series. */
static void influx_points(FILE *f, int from, int to)
{
	for (int p = from; p < to; p++) {
		for (int s = 0; s < SERIES; s++) {
			long long v = (long long)p * (s + 1);

			fprintf(f,
				"%s,%s=%s%04d,fs=lustre read_bytes=%lldi,"
				"write_bytes=%lldi,read_ops=%lldi,"
				"write_ops=%lldi,md_ops=%lldi,queue_len=%d "
				"%lld000000000\n",
				s % 2 ? "ost" : "fwd",
				s % 2 ? "target" : "node",
				s % 2 ? "lustre-OST" : "fwd", s, v * 1048576,
				v * 524288, v * 16, v * 8, v, p % 9,
				1472292840LL + p * 10);
		}
	}
}

static void gen_influx(FILE *f)
{
	influx_points(f, 0, POINTS);
}

/* The same series' next points: every component's baselines stored. */
static void gen_influx_next(FILE *f)
{
	influx_points(f, POINTS, POINTS + NEXT_POINTS);
}

static void gen_jobstats(FILE *f)
{
	for (int t = 0; t < TARGETS; t++) {
		fprintf(f, "obdfilter.lustre-OST%04x.job_stats=\njob_stats:\n",
			t);
		for (int j = 0; j < JOBS; j++) {
			fprintf(f,
				"- job_id:          %d\n"
				"  snapshot_time:   %d\n"
				"  read_bytes:      { samples: %d, unit: "
				"bytes, min: 4096, max: 1048576, sum: %d }\n"
				"  write_bytes:     { samples: %d, unit: "
				"bytes, min: 4096, max: 1048576, sum: %d }\n"
				"  getattr:         { samples: %d, unit: reqs "
				"}\n"
				"  punch:           { samples: 0, unit: reqs "
				"}\n"
				"  sync:            { samples: 1, unit: reqs "
				"}\n",
				100000 + j, 1472292840 + j, j, j * 4096, j,
				j * 8192, j * 3);
		}
	}
}

static int64_t count(struct db *db, const char *sql)
{
	fwd_error_t err;
	int64_t n = 0;

	db_query_int64(db, &err, &n, sql, "");
	return n;
}

/*
 * The practical limit: the rows `sql` selects (what a format's ingest
 * stored), written to a tab-separated file and loaded into an empty copy
 * of `table` with LOAD DATA LOCAL INFILE (the mariadb client, timed from
 * its start).  Rows per second, 0 when it could not run.
 */
static double load_data_rate(struct bench_db *b, const char *table,
			     const char *cols, const char *sql)
{
	char path[128], ddl[256], load[1024];
	fwd_error_t err = {{0}};
	struct db_stmt *st;
	uint64_t rows = 0;
	unsigned ncols;
	double t0, secs;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/ref.tsv", b->dir);
	if (!(f = fopen(path, "w")))
		return 0;
	if (!(st = db_prepare(b->db, sql, &err)) || db_exec(st, &err) < 0) {
		fclose(f);
		return 0;
	}
	ncols = db_col_count(st);
	while ((r = db_fetch(st, &err)) > 0) {
		for (unsigned c = 0; c < ncols; c++) {
			const char *v =
				db_col_null(st, c) ? "\\N" : db_col_text(st, c);

			fprintf(f, "%s%s", c ? "\t" : "", v ? v : "\\N");
		}
		fputc('\n', f);
		rows++;
	}
	db_stmt_close(st);
	fclose(f);
	snprintf(ddl, sizeof(ddl),
		 "DROP TABLE IF EXISTS ref_%s; CREATE TABLE ref_%s LIKE %s",
		 table, table, table);
	snprintf(load, sizeof(load),
		 "LOAD DATA LOCAL INFILE '%s' INTO TABLE ref_%s (%s)", path,
		 table, cols);
	{
		char *a1[] = {(char *)TOP_SRCDIR "/scripts/testdb",
			      (char *)"sql",
			      b->dir,
			      (char *)"fwdalloc",
			      (char *)"-e",
			      ddl,
			      NULL};
		char *a2[] = {(char *)TOP_SRCDIR "/scripts/testdb",
			      (char *)"sql",
			      b->dir,
			      (char *)"--local-infile=1",
			      (char *)"fwdalloc",
			      (char *)"-e",
			      load,
			      NULL};

		if (bench_run(a1, true) != 0 ||
		    bench_db_settle(b->db, b->dir) < 0)
			return 0;
		t0 = fwd_clock_mono();
		if (bench_run(a2, true) != 0)
			return 0;
		secs = fwd_clock_mono() - t0;
	}
	return secs > 0 ? (double)rows / secs : 0;
}

static void report(const char *name, uint64_t records, uint64_t rows,
		   uint64_t lines, double secs)
{
	printf("  %-16s %7llu lines %7llu records %8llu rows  %6.2f s  "
	       "%9.0f records/s  %9.0f rows/s\n",
	       name, (unsigned long long)lines, (unsigned long long)records,
	       (unsigned long long)rows, secs, (double)records / secs,
	       (double)rows / secs);
}

/*
 * Write format's input (gen) to DIR/NAME.in and time `fwdctl ingest` of
 * it (run `tag`, naming the files).  Its seconds, or -1 when it did not run or
 * did not exit 0; *stored and *lines from its --json summary.
 */
static double run_ingest(struct bench_db *b, const char *fwdctl,
			 const char *policy, const char *format,
			 const char *tag, void (*gen)(FILE *), uint64_t *stored,
			 uint64_t *lines)
{
	char in[160], out[160], text[4096];
	char *argv[] = {(char *)fwdctl,
			(char *)"--policy",
			(char *)policy,
			(char *)"ingest",
			(char *)"--json",
			(char *)"--format",
			(char *)format,
			in,
			NULL};
	const char *at;
	double t0, secs;
	FILE *f;
	int st;
	size_t n;

	snprintf(in, sizeof(in), "%s/%s.in", b->dir, tag);
	snprintf(out, sizeof(out), "%s/%s.json", b->dir, tag);
	if (!(f = fopen(in, "w")))
		return -1;
	gen(f);
	if (fclose(f) != 0 || bench_db_settle(b->db, b->dir) < 0)
		return -1;
	t0 = fwd_clock_mono();
	st = bench_run_to(argv, out);
	secs = fwd_clock_mono() - t0;
	if (st != 0) {
		fprintf(stderr,
			"bench_ingest: fwdctl ingest --format %s: exit %d\n",
			format, st);
		return -1;
	}
	if (!(f = fopen(out, "r")))
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	*stored = (at = strstr(text, "\"stored\": "))
			  ? strtoull(at + 10, NULL, 10)
			  : 0;
	*lines = (at = strstr(text, "\"lines\": ")) ? strtoull(at + 9, NULL, 10)
						    : 0;
	return secs;
}

int main(void)
{
	char fwdctl[512], policy[160];
	uint64_t stored, lines;
	struct bench_db b;
	double secs;
	int64_t rows0, rows;
	FILE *f;

	/* a server's buffer pool holds the tables written (as a site's
	 * would), and each run starts on a settled server */
	setenv("FWDALLOC_TESTDB_BUFFER_POOL", "512M", 0);
	bench_db_start(&b);
	snprintf(fwdctl, sizeof(fwdctl), "%s/fwdctl", TOP_BUILDDIR);
	snprintf(policy, sizeof(policy), "%s/policy.yaml", b.dir);
	if (!(f = fopen(policy, "w")))
		goto fail;
	fprintf(f,
		"database:\n  socket: %s\n  name: fwdalloc\n"
		"  user: fwdalloc\n  password_file: %s\n  timeout: 600s\n",
		b.sock, b.pass);
	if (fclose(f) != 0)
		goto fail;
	printf("bench_ingest: `fwdctl ingest` from its start to its exit, "
	       "into MariaDB %s (default batch)\n",
	       b.sock);

	/* beacon-lwfs */
	if ((secs = run_ingest(&b, fwdctl, policy, "beacon-lwfs", "beacon",
			       gen_beacon, &stored, &lines)) < 0)
		goto fail;
	report("beacon-lwfs", stored,
	       (uint64_t)(count(b.db, "SELECT COUNT(*) FROM samples_raw") +
			  count(b.db, "SELECT COUNT(*) FROM samples_hist")),
	       lines, secs);
	bench_figure("ingest", "beacon-lwfs samples/s", (double)stored / secs,
		     "samples/s",
		     load_data_rate(&b, "samples_hist", HIST_COLS,
				    "SELECT " HIST_COLS " FROM samples_hist"),
		     "LOAD DATA of the histogram rows, rows/s");

	/* influx */
	rows0 = count(b.db, "SELECT COUNT(*) FROM samples_raw");
	if ((secs = run_ingest(&b, fwdctl, policy, "influx", "influx",
			       gen_influx, &stored, &lines)) < 0)
		goto fail;
	report("influx", stored,
	       (uint64_t)(count(b.db, "SELECT COUNT(*) FROM samples_raw") -
			  rows0),
	       lines, secs);
	bench_figure("ingest", "influx samples/s", (double)stored / secs,
		     "samples/s",
		     load_data_rate(&b, "samples_raw", RAW_COLS,
				    "SELECT " RAW_COLS " FROM samples_raw"
				    " WHERE ts >= 1472292840 AND ts < " NEXT_TS
				    " AND name NOT LIKE '10.%'"),
		     "LOAD DATA of the same rows, rows/s");

	/* influx again: the next interval of the same series */
	rows0 = count(b.db, "SELECT COUNT(*) FROM samples_raw");
	if ((secs = run_ingest(&b, fwdctl, policy, "influx", "influx-next",
			       gen_influx_next, &stored, &lines)) < 0)
		goto fail;
	report("influx, next", stored,
	       (uint64_t)(count(b.db, "SELECT COUNT(*) FROM samples_raw") -
			  rows0),
	       lines, secs);
	bench_figure("ingest", "influx samples/s, the series' next interval",
		     (double)stored / secs, "samples/s",
		     load_data_rate(&b, "samples_raw", RAW_COLS,
				    "SELECT " RAW_COLS " FROM samples_raw"
				    " WHERE ts >= " NEXT_TS " AND name NOT LIKE"
				    " '10.%'"),
		     "LOAD DATA of the same rows, rows/s");

	/* lustre-jobstats */
	if ((secs = run_ingest(&b, fwdctl, policy, "lustre-jobstats",
			       "jobstats", gen_jobstats, &stored, &lines)) < 0)
		goto fail;
	rows = count(b.db, "SELECT COUNT(*) FROM jobstats_raw");
	report("lustre-jobstats", stored, (uint64_t)rows, lines, secs);
	bench_figure("ingest", "lustre-jobstats rows/s", (double)rows / secs,
		     "rows/s",
		     load_data_rate(&b, "jobstats_raw", JS_COLS,
				    "SELECT " JS_COLS " FROM jobstats_raw"),
		     "LOAD DATA of the same rows, rows/s");

	bench_db_stop(&b);
	return 0;
fail:
	fprintf(stderr, "bench_ingest: could not run fwdctl ingest\n");
	bench_db_stop(&b);
	return 1;
}
