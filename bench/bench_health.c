/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_health: how long a health scan takes for 288 forwarders and 432
 * OSTs over 24 h of per-minute rollups (144 windows of 10 minutes).
 *
 *   1. in memory: the detectors and the state machine alone, on generated
 *      series (what the scan computes once the rows are fetched);
 *   2. against MariaDB: ctl_health_scan() on the same day stored in
 *      rollups_minute, with 200 finished jobs for the peer detector (the
 *      whole scan: queries, detectors, one transaction), next to the
 *      detectors' own time in memory; a rescan of the same period
 *      (idempotent, nothing to apply); a scan after a second day of
 *      samples and jobs arrived (144 new windows per component, what a
 *      scan that was not run for a day pays); the next timer run (one
 *      window).
 *
 * Part 2 uses the server named by $FWDALLOC_TESTDB_POLICY (a policy file
 * with a `database:` section, as `scripts/testdb start` writes), or starts
 * a private one with scripts/testdb, with a 512 MB buffer pool so that the
 * day's rollups (about 150 MB with their indexes) stay in the server's
 * memory, as on a production server (the test servers' 64 MB would make
 * every scan read them from disk); without one it is skipped and says so.
 * Figures only, no timed assertion.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/report.h"
#include "bench/testdb.h"
#include "controller/health_ctl.h"
#include "db/db.h"
#include "monitor/anomaly.h"
#include "monitor/health.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define N_FWD 288
#define N_SERVICE 80 /* 512 nodes each: 40,960 compute nodes */
#define N_OST 432
#define N_COMP (N_FWD + N_OST)
#define MINUTES 1440
#define PRE 60 /* minutes before the day: the sustained duration */
#define FWD_PEAK 2.5e9
#define OST_PEAK 1.2e9
#define N_JOBS 200

static const int slow_fwd[] = {5, 77, 150};
static const int slow_ost[] = {10, 200, 333, 400, 431};

static uint64_t rng = 88172645463325252ULL;

static double frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (1.0 / 9007199254740992.0);
}

static bool is_slow(int c, int minute)
{
	if (c < N_FWD) {
		for (size_t i = 0; i < sizeof(slow_fwd) / sizeof(*slow_fwd);
		     i++)
			if (c == slow_fwd[i])
				return minute >= 300 && minute < 500;
		return false;
	}
	for (size_t i = 0; i < sizeof(slow_ost) / sizeof(*slow_ost); i++)
		if (c - N_FWD == slow_ost[i])
			return minute >= 800 && minute < 1000;
	return false;
}

static void comp_name(int c, char *buf, size_t len)
{
	if (c < N_FWD)
		snprintf(buf, len, "fwd%03d", c + 1);
	else
		snprintf(buf, len, "lustre-OST%04x", c - N_FWD);
}

/* One component's day (plus PRE minutes): busy 70 % of the minutes at
 * 35-95 % of its peak, a slow spell for the chosen few. */
static void gen_series(int c, double t0, struct anomaly_sample *s)
{
	double peak = c < N_FWD ? FWD_PEAK : OST_PEAK;

	for (int m = 0; m < MINUTES + PRE; m++) {
		bool busy = frand() < 0.7 || is_slow(c, m - PRE);
		double frac = is_slow(c, m - PRE) ? 0.05 : 0.35 + 0.6 * frand();

		s[m].time = t0 + (m - PRE) * 60.0;
		s[m].seconds = 60;
		s[m].bytes = busy ? frac * peak * 60 : 0;
		s[m].ops = busy ? 200 * 60 : 0;
		s[m].queue = c < N_FWD ? (busy ? 2 : 0) : -1;
	}
}

/* The detectors' time in memory for the day, seconds (reference). */
static double mem_seconds;

static int bench_memory(const struct policy *p, double t0)
{
	struct anomaly_sample *s =
		calloc((size_t)N_COMP * (MINUTES + PRE), sizeof(*s));
	struct health_entry *e = calloc(N_COMP, sizeof(*e));
	size_t excluded = 0, bad = 0, windows = 0, changes = 0;
	double w = p->anomaly.window, t;

	if (!s || !e) {
		fprintf(stderr, "bench_health: out of memory\n");
		return -1;
	}
	for (int c = 0; c < N_COMP; c++)
		gen_series(c, t0, s + (size_t)c * (MINUTES + PRE));
	t = fwd_clock_mono();
	for (int c = 0; c < N_COMP; c++) {
		const struct anomaly_sample *cs =
			s + (size_t)c * (MINUTES + PRE);
		double peak = c < N_FWD ? FWD_PEAK : OST_PEAK;
		char name[32];

		comp_name(c, name, sizeof(name));
		health_entry_init(
			&e[c], c < N_FWD ? HEALTH_FORWARDER : HEALTH_OST, name);
		for (double ws = t0; ws < t0 + MINUTES * 60; ws += w) {
			struct health_change chg;
			char reason[HEALTH_REASON_MAX];
			int v = anomaly_window_verdict(
				&p->anomaly.sustained, peak, cs, MINUTES + PRE,
				ws, ws + w, reason, sizeof(reason), NULL);

			if (v < 0)
				return -1;
			bad += v == ANOMALY_BAD;
			windows++;
			if (health_step(&p->anomaly, &e[c], ws, ws + w, v,
					reason, &chg) == 1) {
				changes++;
				excluded += chg.to == FWD_HEALTH_EXCLUDED;
			}
		}
	}
	t = fwd_clock_mono() - t;
	mem_seconds = t;
	printf("in memory: %d forwarders + %d OSTs, %d min of rollups each, "
	       "%zu windows (%zu bad): %.1f ms (%.1f us per component); "
	       "%zu state changes, %zu exclusions (%zu slow components "
	       "generated)\n",
	       N_FWD, N_OST, MINUTES, windows, bad, t * 1e3, t * 1e6 / N_COMP,
	       changes, excluded,
	       sizeof(slow_fwd) / sizeof(*slow_fwd) +
		       sizeof(slow_ost) / sizeof(*slow_ost));
	free(s);
	free(e);
	return 0;
}

/* ---- against MariaDB ----------------------------------------------------- */

static struct topology *make_topology(fwd_error_t *err)
{
	struct topology *t = topo_create();
	char name[32];

	if (!t)
		return NULL;
	for (int i = 0; i < N_FWD; i++) {
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = FWD_PEAK,
			.group = (char *)"g0",
			.role = i < N_SERVICE ? TOPO_ROLE_SERVICE
					      : TOPO_ROLE_BACKUP,
		};

		comp_name(i, name, sizeof(name));
		if (topo_add_forwarder(t, &f, err) < 0)
			goto fail;
	}
	for (int i = 0; i < N_OST; i++) {
		struct topo_ost o = {.name = name, .bandwidth_bps = OST_PEAK};

		comp_name(N_FWD + i, name, sizeof(name));
		if (topo_add_ost(t, &o, err) < 0)
			goto fail;
	}
	if (topo_add_compute_nodes(t, "c[1-40960]", err) < 0 ||
	    topo_map_per_forwarder(t, 512, err) < 0 ||
	    topo_finalize(t, err) < 0)
		goto fail;
	return t;
fail:
	topo_destroy(t);
	return NULL;
}

#define ROWS_PER_INSERT 100

/* The day from t0 (and PRE minutes before it; those already stored, when
 * the previous day was, are kept). */
static int load_rollups(struct db *db, double t0, fwd_error_t *err)
{
	char sql[64 * ROWS_PER_INSERT + 256];
	struct anomaly_sample *s = calloc(MINUTES + PRE, sizeof(*s));
	struct db_stmt *st;
	size_t len;
	int rv = -1;

	if (!s)
		return -1;
	len = (size_t)snprintf(sql, sizeof(sql),
			       "INSERT IGNORE INTO rollups_minute (kind, name,"
			       " minute,"
			       " samples, write_bytes, write_ops,"
			       " queue_len_avg) VALUES ");
	for (int i = 0; i < ROWS_PER_INSERT; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len,
					"%s(?, ?, ?, 6, ?, ?, ?)",
					i ? "," : "");
	st = db_prepare(db, sql, err);
	if (!st)
		goto out;
	rng = 88172645463325252ULL; /* the same day as in memory */
	for (int c = 0; c < N_COMP; c++) {
		char name[32];
		int k = 0;

		comp_name(c, name, sizeof(name));
		gen_series(c, t0, s);
		if (db_begin(db, err) < 0)
			goto out;
		for (int m = 0; m < MINUTES + PRE; m++) {
			unsigned b = (unsigned)k * 6;

			db_bind_text(st, b, c < N_FWD ? "fwd" : "ost");
			db_bind_text(st, b + 1, name);
			db_bind_int64(st, b + 2, (int64_t)s[m].time);
			db_bind_uint64(st, b + 3, (uint64_t)s[m].bytes);
			db_bind_uint64(st, b + 4, (uint64_t)s[m].ops);
			if (s[m].queue < 0)
				db_bind_null(st, b + 5);
			else
				db_bind_double(st, b + 5, s[m].queue);
			if (++k == ROWS_PER_INSERT) {
				if (db_exec(st, err) < 0)
					goto out;
				k = 0;
			}
		}
		/* MINUTES + PRE is a multiple of ROWS_PER_INSERT. */
		if (db_commit(db, err) < 0)
			goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		db_rollback(db);
	db_stmt_close(st);
	free(s);
	return rv;
}

/* 200 finished jobs of 64-2048 nodes spread over the day, each using the
 * default forwarders of its nodes and 16 OSTs (job_stats). */
static int load_jobs(struct db *db, double t0, int base, fwd_error_t *err)
{
	for (int j = base; j < base + N_JOBS; j++) {
		int nodes = 64 << (j % 6);
		int first = 1 + (j * 512) % (40960 - nodes);
		double start = t0 + ((j - base) * MINUTES / N_JOBS) * 60.0;
		double end = start + 40 * 60.0;
		char nodelist[64];

		snprintf(nodelist, sizeof(nodelist), "c[%d-%d]", first,
			 first + nodes - 1);
		if (db_execf(db, err,
			     "INSERT INTO jobs (job_id, user, name, nodelist,"
			     " node_count, start_at, end_at, state, updated_at)"
			     " VALUES (?, 'bench', 'app', ?, ?, ?, ?,"
			     " 'COMPLETED', ?)",
			     "isiiii", (int64_t)(100000 + j), nodelist,
			     (int64_t)nodes, (int64_t)start, (int64_t)end,
			     (int64_t)end) < 0)
			return -1;
		for (int o = 0; o < 16; o++) {
			char target[32], jid[32];

			comp_name(N_FWD + (j * 16 + o) % N_OST, target,
				  sizeof(target));
			snprintf(jid, sizeof(jid), "%d", 100000 + j);
			if (db_execf(
				    db, err,
				    "INSERT INTO jobstats_raw (kind, target,"
				    " lustre_job_id, job_id, ts, op, samples)"
				    " VALUES ('ost', ?, ?, ?, ?, 'write_bytes',"
				    " 1)",
				    "ssii", target, jid, (int64_t)(100000 + j),
				    (int64_t)end) < 0)
				return -1;
		}
	}
	return 0;
}

static int bench_db(struct policy *p, double t0)
{
	struct health_scan_opts o = {
		.since = t0, .until = t0 + MINUTES * 60, .command_timeout = 30};
	struct health_scan_stats st;
	struct topology *t;
	fwd_error_t err;
	struct db *db;
	double a, b, c, d;
	int rv = -1;

	t = make_topology(&err);
	if (!t) {
		fprintf(stderr, "bench_health: topology: %s\n", err.text);
		return -1;
	}
	p->database.timeout = 600;
	db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err);
	if (!db || db_migrate(db, NULL, NULL, &err) < 0) {
		fprintf(stderr, "bench_health: %s\n", err.text);
		goto out;
	}
	/* A clean slate when run twice against the same server. */
	db_execf(db, NULL, "DELETE FROM rollups_minute", "");
	db_execf(db, NULL, "DELETE FROM jobs WHERE user = 'bench'", "");
	db_execf(db, NULL, "DELETE FROM jobstats_raw", "");
	db_execf(db, NULL, "DELETE FROM health", "");
	db_execf(db, NULL, "DELETE FROM health_history", "");
	a = fwd_clock_mono();
	if (load_rollups(db, t0, &err) < 0 || load_jobs(db, t0, 0, &err) < 0) {
		fprintf(stderr, "bench_health: loading: %s\n", err.text);
		goto out;
	}
	b = fwd_clock_mono();
	if (ctl_health_scan(db, p, t, &o, &st, &err) < 0) {
		fprintf(stderr, "bench_health: scan: %s\n", err.text);
		goto out;
	}
	c = fwd_clock_mono();
	printf("MariaDB: loaded %d rollup rows and %d jobs in %.1f s\n",
	       N_COMP * (MINUTES + PRE), N_JOBS, b - a);
	printf("MariaDB: scan of 24 h for %zu components: %.2f s (%zu windows, "
	       "%zu bad; %zu jobs, %zu compared; %zu state changes)\n",
	       st.components, c - b, st.windows, st.bad_windows, st.jobs,
	       st.jobs_eligible, st.changes);
	if (ctl_health_scan(db, p, t, &o, &st, &err) < 0) {
		fprintf(stderr, "bench_health: rescan: %s\n", err.text);
		goto out;
	}
	d = fwd_clock_mono();
	printf("MariaDB: rescan of the same period (nothing to apply): %.3f s "
	       "(%zu windows)\n",
	       d - c, st.windows);
	bench_figure("health", "scan, 720 components x 24 h", c - b, "s",
		     mem_seconds, "the detectors alone, in memory");
	bench_figure("health", "rescan, same period (nothing to apply)", d - c,
		     "s", c - b, "first scan");
	/* A second day arrives: its samples and jobs. */
	if (load_rollups(db, t0 + MINUTES * 60, &err) < 0 ||
	    load_jobs(db, t0 + MINUTES * 60, N_JOBS, &err) < 0) {
		fprintf(stderr, "bench_health: loading day 2: %s\n", err.text);
		goto out;
	}
	o.since = 0;
	o.until = t0 + 2 * MINUTES * 60;
	a = fwd_clock_mono();
	if (ctl_health_scan(db, p, t, &o, &st, &err) < 0) {
		fprintf(stderr, "bench_health: day 2 scan: %s\n", err.text);
		goto out;
	}
	d = fwd_clock_mono() - a;
	printf("MariaDB: rescan after a new day of samples: %.2f s (%zu "
	       "windows, %zu bad; %zu jobs, %zu compared; %zu state "
	       "changes)\n",
	       d, st.windows, st.bad_windows, st.jobs, st.jobs_eligible,
	       st.changes);
	bench_figure("health", "rescan after a new day of samples", d, "s",
		     c - b, "first scan");
	o.until = t0 + 2 * MINUTES * 60 + p->anomaly.window;
	a = fwd_clock_mono();
	if (ctl_health_scan(db, p, t, &o, &st, &err) < 0) {
		fprintf(stderr, "bench_health: next scan: %s\n", err.text);
		goto out;
	}
	d = fwd_clock_mono() - a;
	printf("MariaDB: the next timer run (one new window): %.3f s\n", d);
	bench_figure("health", "next timer run (one new window)", d, "s", c - b,
		     "first scan");
	rv = 0;
out:
	db_close(db);
	topo_destroy(t);
	return rv;
}

int main(void)
{
	const char *env = getenv("FWDALLOC_TESTDB_POLICY");
	char dir[] = "/tmp/bench_health.XXXXXX";
	char policy_path[128];
	struct policy *p = policy_defaults();
	double t0 = 1767225600; /* 2026-01-01T00:00:00Z */
	fwd_error_t err;
	bool started = false;
	int rv = 1;

	if (!p)
		return 1;
	if (bench_memory(p, t0) < 0)
		goto out;
	if (env && *env) {
		snprintf(policy_path, sizeof(policy_path), "%s", env);
	} else if (access(TOP_SRCDIR "/scripts/testdb", X_OK) == 0 &&
		   mkdtemp(dir)) {
		char *argv[] = {(char *)"/bin/sh",
				(char *)TOP_SRCDIR "/scripts/testdb",
				(char *)"start", dir, NULL};

		started = true;
		setenv("FWDALLOC_TESTDB_BUFFER_POOL", "512M", 0);
		printf("MariaDB: a private server, InnoDB buffer pool %s\n",
		       getenv("FWDALLOC_TESTDB_BUFFER_POOL"));
		if (bench_run(argv, true) != 0) {
			printf("MariaDB: skipped (scripts/testdb could not "
			       "start a server)\n");
			rv = 0;
			goto out;
		}
		snprintf(policy_path, sizeof(policy_path), "%s/policy-db.yaml",
			 dir);
	} else {
		printf("MariaDB: skipped (set FWDALLOC_TESTDB_POLICY)\n");
		rv = 0;
		goto out;
	}
	policy_destroy(p);
	p = policy_load(policy_path, &err);
	if (!p) {
		fprintf(stderr, "bench_health: %s\n", err.text);
		goto out;
	}
	if (bench_db(p, t0) < 0)
		goto out;
	rv = 0;
out:
	policy_destroy(p);
	if (started) {
		char *stop[] = {(char *)"/bin/sh",
				(char *)TOP_SRCDIR "/scripts/testdb",
				(char *)"stop", dir, NULL};
		char *rm[] = {(char *)"/bin/rm", (char *)"-rf", dir, NULL};

		bench_run(stop, true);
		bench_run(rm, true);
	}
	return rv;
}
