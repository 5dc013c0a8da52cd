/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profile lookup latency with 1 million stored jobs.
 *
 * Fills jobs and job_io with 1,000,000 rows (INSERT ... SELECT from the
 * server's sequence engine, one prepared statement each) and profiles with
 * 20,000 rows, then times the two lookups the controller makes at job
 * launch: the history query (last 5 finished runs of a user's application
 * in a node-count bucket, joined with their I/O summaries) and the profile
 * row by key.  Prints median and p99 over 2,000 random lookups each.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "bench/testdb.h"
#include "common/array.h"

#define JOBS 1000000
#define USERS 2000
#define APPS 10
#define LOOKUPS 2000

/* clang-format off */
static const char fill_jobs[] =
	"INSERT INTO jobs (job_id, user, account, name, partition_name,"
	" nodelist, node_count, submit_at, start_at, end_at, state, request,"
	" updated_at)"
	" SELECT seq, CONCAT('u', seq % ?), 'acct', CONCAT('app', (seq DIV ?)"
	" % ?), 'batch', CONCAT('c[1-', 1 << ((seq DIV 7) % 10), ']'),"
	" 1 << ((seq DIV 7) % 10), ? + seq * 30 - 7200, ? + seq * 30 - 3600,"
	" ? + seq * 30, 'COMPLETED', IF(seq % 3 = 0, 'auto', NULL), ?"
	" FROM seq_1_to_1000000";

static const char fill_io[] =
	"INSERT INTO job_io (job_id, read_bytes, write_bytes, io_nodes, procs,"
	" io_mode, node_bandwidth_bps, peak_bandwidth_bps, iops, mdops,"
	" mdops_rate, metadata_queue, forwarders_held, bandwidth_achieved_bps,"
	" runtime, source, updated_at)"
	" SELECT seq, (seq % 997) * 1073741824, (seq % 991) * 536870912,"
	" 1 << ((seq DIV 7) % 10), 32 << ((seq DIV 7) % 10),"
	" ELT(1 + seq % 4, 'N-N', 'N-1', 'N-M', '1-1'), 1e8 + seq % 1000,"
	" 2e9 + seq % 5000, 1000 + seq % 300, seq % 10000, seq % 500,"
	" seq % 7, 1 + seq % 4, 1.5e9, 3600, 'traces', ?"
	" FROM seq_1_to_1000000";

static const char fill_profiles[] =
	"INSERT INTO profiles (profile_key, user, name, node_bucket, runs,"
	" read_bytes, write_bytes, io_nodes, io_mode, node_bandwidth_bps,"
	" peak_bandwidth_bps, iops, mdops_rate, metadata_queue, runtime,"
	" figures, bandwidth_by_forwarders, last_job_id, updated_at)"
	" SELECT CONCAT('user=u', seq % ?, ';name=app', seq DIV ?,"
	" ';node_bucket=', 1 << (seq % 10)), CONCAT('u', seq % ?),"
	" CONCAT('app', seq DIV ?), 1 << (seq % 10), 5, 1e11, 5e10, 64,"
	" 'N-N', 1e8, 2e9, 1000, 10, 1, 3600, '{}',"
	" '{\"1\": 2.1e9, \"4\": 7.9e9}', seq, ?"
	" FROM seq_0_to_19999";

static const char history_sql[] =
	"SELECT j.job_id, j.node_count, j.end_at, i.read_bytes, i.write_bytes,"
	" i.io_nodes, i.io_mode, i.node_bandwidth_bps, i.peak_bandwidth_bps,"
	" i.iops, i.mdops_rate, i.metadata_queue, i.forwarders_held,"
	" i.bandwidth_achieved_bps"
	" FROM jobs j JOIN job_io i ON i.job_id = j.job_id"
	" WHERE j.user = ? AND j.name = ? AND j.node_count >= ?"
	" AND j.node_count < ? AND j.end_at >= ?"
	" ORDER BY j.end_at DESC LIMIT 5";

static const char profile_sql[] =
	"SELECT runs, read_bytes, write_bytes, io_nodes, io_mode,"
	" node_bandwidth_bps, peak_bandwidth_bps, iops, mdops_rate,"
	" metadata_queue, bandwidth_by_forwarders"
	" FROM profiles WHERE profile_key = ?";
/* clang-format on */

static void stats(const char *what, double *v, size_t n, long rows)
{
	qsort(v, n, sizeof(*v), fwd_cmp_double);
	printf("  %-34s median %7.1f us  p99 %7.1f us  max %7.1f us  "
	       "(%zu lookups, %.1f rows each)\n",
	       what, v[n / 2] * 1e6, v[(n * 99) / 100] * 1e6, v[n - 1] * 1e6, n,
	       (double)rows / (double)n);
}

int main(void)
{
	static double lat[LOOKUPS];
	const int64_t base = 1700000000;
	struct bench_db b;
	fwd_error_t err = {{0}};
	struct db_stmt *st = NULL;
	double t0;
	long rows;
	int64_t n;

	bench_db_start(&b);
	srand(42);
	printf("bench_db: %d jobs, %d users x %d applications\n", JOBS, USERS,
	       APPS);

	t0 = fwd_clock_mono();
	if (db_execf(b.db, &err, fill_jobs, "iiiiiii", (int64_t)USERS,
		     (int64_t)USERS, (int64_t)APPS, base, base, base, base) < 0)
		goto fail;
	printf("  filled jobs in %.1f s\n", fwd_clock_mono() - t0);
	t0 = fwd_clock_mono();
	if (db_execf(b.db, &err, fill_io, "i", base) < 0)
		goto fail;
	printf("  filled job_io in %.1f s\n", fwd_clock_mono() - t0);
	if (db_execf(b.db, &err, fill_profiles, "iiiii", (int64_t)USERS,
		     (int64_t)USERS, (int64_t)USERS, (int64_t)USERS, base) < 0)
		goto fail;
	if (db_execf(b.db, &err, "ANALYZE TABLE jobs, job_io, profiles", "") <
	    0)
		goto fail;
	if (db_query_int64(b.db, &err, &n, "SELECT COUNT(*) FROM jobs", "") < 0)
		goto fail;
	printf("  %lld jobs stored\n", (long long)n);

	st = db_prepare(b.db, history_sql, &err);
	if (!st)
		goto fail;
	rows = 0;
	for (int i = 0; i < LOOKUPS; i++) {
		char user[16], app[16];
		int bucket = rand() % 10;
		double t;
		int r;

		snprintf(user, sizeof(user), "u%d", rand() % USERS);
		snprintf(app, sizeof(app), "app%d", rand() % APPS);
		db_bind_text(st, 0, user);
		db_bind_text(st, 1, app);
		db_bind_int64(st, 2, 1 << bucket);
		db_bind_int64(st, 3, 2 << bucket);
		db_bind_int64(st, 4, base);
		t = fwd_clock_mono();
		if (db_exec(st, &err) < 0)
			goto fail;
		while ((r = db_fetch(st, &err)) > 0)
			rows++;
		if (r < 0)
			goto fail;
		lat[i] = fwd_clock_mono() - t;
	}
	stats("history (last 5 runs, join)", lat, LOOKUPS, rows);
	db_stmt_close(st);

	st = db_prepare(b.db, profile_sql, &err);
	if (!st)
		goto fail;
	rows = 0;
	for (int i = 0; i < LOOKUPS; i++) {
		char key[96];
		int s = rand() % 20000;
		double t;
		int r;

		snprintf(key, sizeof(key), "user=u%d;name=app%d;node_bucket=%d",
			 s % USERS, s / USERS, 1 << (s % 10));
		db_bind_text(st, 0, key);
		t = fwd_clock_mono();
		if (db_exec(st, &err) < 0)
			goto fail;
		while ((r = db_fetch(st, &err)) > 0)
			rows++;
		if (r < 0)
			goto fail;
		lat[i] = fwd_clock_mono() - t;
	}
	stats("profile row by key", lat, LOOKUPS, rows);
	db_stmt_close(st);

	bench_db_stop(&b);
	return 0;
fail:
	fprintf(stderr, "bench_db: %s\n", err.text);
	db_stmt_close(st);
	bench_db_stop(&b);
	return 1;
}
