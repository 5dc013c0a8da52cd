/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ingestion rate of each format into MariaDB: synthetic input written to
 * a temporary file, then parsed and stored exactly as `fwdctl ingest`
 * does (same parsers, same store, default batch).  Prints records/s and
 * the rows they produced.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/testdb.h"
#include "monitor/ingest.h"

#define FWDS 64
#define ROUNDS 60 /* beacon: 64 x 60 x 7 = 26,880 lines */
#define SERIES 200
#define POINTS 150 /* influx: 200 x 150 = 30,000 lines */
#define TARGETS 40
#define JOBS 250 /* jobstats: 40 x 250 = 10,000 entries, 5 ops */

static FILE *gen_beacon(void)
{
	static const char *const st[] = {"Meta exe",  "Meta wait",
					 "Read exe",  "Read wait",
					 "Write exe", "Write wait"};
	FILE *f = tmpfile();

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
	rewind(f);
	return f;
}

static FILE *gen_influx(void)
{
	FILE *f = tmpfile();

	for (int p = 0; p < POINTS; p++) {
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
	rewind(f);
	return f;
}

static FILE *gen_jobstats(void)
{
	FILE *f = tmpfile();

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
	rewind(f);
	return f;
}

static int64_t count(struct db *db, const char *sql)
{
	fwd_error_t err;
	int64_t n = 0;

	db_query_int64(db, &err, &n, sql, "");
	return n;
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

int main(void)
{
	struct bench_db b;
	struct ingest_reader *rd = malloc(sizeof(*rd));
	struct jobstats_rec *jr = malloc(sizeof(*jr));
	fwd_error_t err = {{0}};
	struct ingest_store *s;
	const char *line;
	bool trunc;
	double t0;
	FILE *f;
	int64_t rows0;

	if (!rd || !jr)
		return 1;
	bench_db_start(&b);
	printf("bench_ingest: parse + store into MariaDB %s (prepared "
	       "statements, 1000 records per transaction)\n",
	       b.sock);

	/* beacon-lwfs */
	f = gen_beacon();
	s = ingest_store_open(b.db, 0, &err);
	if (!s)
		goto fail;
	ingest_reader_init(rd, f);
	t0 = fwd_clock_mono();
	while ((line = ingest_reader_next(rd, &trunc))) {
		struct beacon_rec r;

		if (beacon_parse_line(line, &r, &err) == INGEST_OK &&
		    ingest_store_beacon(s, r.addr, &r, &err) < 0)
			goto fail;
	}
	if (ingest_store_flush(s, &err) < 0)
		goto fail;
	report("beacon-lwfs", ingest_store_stats(s)->stored,
	       (uint64_t)(count(b.db, "SELECT COUNT(*) FROM samples_raw") +
			  count(b.db, "SELECT COUNT(*) FROM samples_hist")),
	       (uint64_t)rd->lineno, fwd_clock_mono() - t0);
	ingest_store_close(s);
	fclose(f);

	/* influx */
	rows0 = count(b.db, "SELECT COUNT(*) FROM samples_raw");
	f = gen_influx();
	s = ingest_store_open(b.db, 0, &err);
	if (!s)
		goto fail;
	ingest_reader_init(rd, f);
	t0 = fwd_clock_mono();
	while ((line = ingest_reader_next(rd, &trunc))) {
		struct influx_rec r;

		if (influx_parse_line(line, 0, &r, &err) == INGEST_OK &&
		    ingest_store_influx(s, &r, &err) < 0)
			goto fail;
	}
	if (ingest_store_flush(s, &err) < 0)
		goto fail;
	report("influx", ingest_store_stats(s)->stored,
	       (uint64_t)(count(b.db, "SELECT COUNT(*) FROM samples_raw") -
			  rows0),
	       (uint64_t)rd->lineno, fwd_clock_mono() - t0);
	ingest_store_close(s);
	fclose(f);

	/* lustre-jobstats */
	f = gen_jobstats();
	s = ingest_store_open(b.db, 0, &err);
	if (!s)
		goto fail;
	{
		struct jobstats_parser *p = jobstats_open(f, NULL, &err);
		int r;

		if (!p)
			goto fail;
		t0 = fwd_clock_mono();
		while ((r = jobstats_next(p, jr, &err)) != 0) {
			if (r > 0 && ingest_store_jobstats(s, jr, &err) < 0)
				goto fail;
		}
		if (ingest_store_flush(s, &err) < 0)
			goto fail;
		report("lustre-jobstats", ingest_store_stats(s)->stored,
		       (uint64_t)count(b.db,
				       "SELECT COUNT(*) FROM jobstats_raw"),
		       (uint64_t)jobstats_lines(p), fwd_clock_mono() - t0);
		jobstats_close(p);
	}
	ingest_store_close(s);
	fclose(f);

	bench_db_stop(&b);
	free(rd);
	free(jr);
	return 0;
fail:
	fprintf(stderr, "bench_ingest: %s\n", err.text);
	bench_db_stop(&b);
	return 1;
}
