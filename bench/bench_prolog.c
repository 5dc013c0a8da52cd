/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_prolog: what a job launch pays for fwdalloc, with a private MariaDB
 * on a local socket (scripts/testdb) and the TaihuLight-size topology
 * (etc/topology-taihulight.yaml: 40,960 nodes, 240 forwarders).
 *
 *   controller prolog  `fwdctl prolog` as slurmctld runs it: a new process
 *                      with the job in its environment, for 512-node and
 *                      8,192-node jobs asking to scale (a stored profile
 *                      says they move 100 GiB), while 1,000 other jobs
 *                      hold forwarders; first with no history, then with
 *                      1,000,000 released allocations and 1,000,000 audit
 *                      rows (the forwarders' last_used_at as their
 *                      releases left it: `fwdctl db migrate` from 8).  Each phase (FWDALLOC_PROLOG_TIMING): exec
 *                      (process start and exit, outside fwdctl's own
 *                      clock), policy, topology (its compiled cache),
 *                      load (up to the worker), nodes, connect, record
 *                      (job row, profile), lock, ledger, decide, persist,
 *                      audit, commit, publish; median and 99th percentile.
 *                      Each job is released by `fwdctl epilog` (timed
 *                      too) so the ledger stays the same size.
 *   node prolog        what slurm_spank_job_prolog does per node: connect
 *                      with the node account, read this node's
 *                      forwarders, apply and revert with the `none`
 *                      driver (the driver's own cost is site-specific).
 *   reference          a process (this program again) that connects as
 *                      the controller and runs one SELECT: the least a
 *                      launch hook that uses the database can cost.
 *
 * Not a test: no limits asserted.  Environment: BENCH_PROLOG_JOBS (jobs
 * per configuration, default 100).  A fwdctl that prints no phases (an
 * older one, for comparison; or a prolog that fell back) is timed as a
 * whole; prologs that fell back are counted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/report.h"
#include "common/timeutil.h"
#include "db/db.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"
#include "spank/remap.h"

extern char **environ;

#define HELD_JOBS 1000
#define HISTORY_ROWS 1000000

/* Phases as fwdctl prints them, then "exec" and "wall" (ours). */
static const char *const phases[] = {
	"policy",  "topology", "load",	 "nodes",   "connect", "record",
	"lock",	   "ledger",   "decide", "persist", "audit",   "commit",
	"publish", "total",    "exec",	 "wall",
};
#define N_PHASES (sizeof(phases) / sizeof(phases[0]))
#define PH_TOTAL 13
#define PH_EXEC 14
#define PH_WALL 15

/* Run argv, stdout to /dev/null, stderr to errfile (or /dev/null). */
static int run(const char *const argv[], const char *const envp[],
	       const char *errfile)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (errfile)
		posix_spawn_file_actions_addopen(
			&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	/* posix_spawn's vectors are not const-qualified, but it does not
	 * modify them. */
	rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
			 envp ? (char *const *)envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "bench_prolog: %s: %s\n", argv[0],
			strerror(rc));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat2 {
	double p50, p99;
};

static struct stat2 stats(double *v, size_t n)
{
	struct stat2 s = {0, 0};

	if (!n)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	s.p50 = v[n / 2];
	s.p99 = v[(size_t)((double)(n - 1) * 0.99 + 0.5)];
	return s;
}

/* Read "fwdctl prolog: timing ms: a=1.0 b=2.0 ..." from file into ms[]. */
static int parse_timing(const char *file, double ms[N_PHASES])
{
	char line[2048];
	FILE *f = fopen(file, "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "timing ms: "), *tok, *save = NULL;

		if (!p)
			continue;
		found = 1;
		for (tok = strtok_r(p + 11, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			char *eq = strchr(tok, '=');

			if (!eq)
				continue;
			*eq = '\0';
			for (size_t k = 0; k < N_PHASES; k++)
				if (!strcmp(tok, phases[k]))
					ms[k] = strtod(eq + 1, NULL);
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static int write_policy(const char *dir)
{
	char in[4096], out[4096], line[1024];
	FILE *fi, *fo;

	snprintf(in, sizeof(in), "%s/tests/fixtures/minicluster/policy.yaml.in",
		 TOP_SRCDIR);
	snprintf(out, sizeof(out), "%s/policy.yaml", dir);
	if (!(fi = fopen(in, "r")) || !(fo = fopen(out, "w"))) {
		fprintf(stderr, "bench_prolog: %s: %s\n", in, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fi)) {
		char *at;

		if (!strncmp(line, "topology:", 9)) {
			fprintf(fo,
				"topology: %s/etc/topology-taihulight.yaml\n",
				TOP_SRCDIR);
			continue;
		}
		while ((at = strstr(line, "@DIR@"))) {
			char rest[1024];

			snprintf(rest, sizeof(rest), "%s", at + 5);
			snprintf(at, sizeof(line) - (size_t)(at - line), "%s%s",
				 dir, rest);
		}
		fputs(line, fo);
	}
	fclose(fi);
	return fclose(fo) == 0 ? 0 : -1;
}

/* The reference: connect as the controller, one SELECT, exit. */
static int reference(const char *policy)
{
	fwd_error_t err;
	struct policy *p = policy_load(policy, &err);
	struct db *db;
	int64_t one = 0;

	if (!p || !(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err)) ||
	    db_query_int64(db, &err, &one, "SELECT 1", "") < 0 || one != 1) {
		fprintf(stderr, "bench_prolog --reference: %s\n", err.text);
		return 1;
	}
	db_close(db);
	policy_destroy(p);
	return 0;
}

static int sql(struct db *db, const char *what, const char *q)
{
	fwd_error_t err;
	double t0 = fwd_clock_mono();

	if (db_execf(db, &err, q, "") < 0) {
		fprintf(stderr, "bench_prolog: %s: %s\n", what, err.text);
		return -1;
	}
	printf("  (%s: %.1f s)\n", what, fwd_clock_mono() - t0);
	fflush(stdout);
	return 0;
}

struct ctx {
	char dir[64], pol[256], fwdctl[512], self[512], errf[300];
	struct policy *p;
	struct remap *rm;
	size_t jobs;
	unsigned long next_job;
	struct stat2 ref;
};

/* N prologs and epilogs of one job size; report them; *p50: the
 * prolog's median wall time. */
static int run_size(struct ctx *c, unsigned nodes, const char *hist,
		    double *p50)
{
	double *ph[N_PHASES], *te = calloc(c->jobs, sizeof(double)),
			      *tn = calloc(c->jobs * 4, sizeof(double));
	size_t nn = 0, fallbacks = 0;
	char nodelist[64], nnodes[64], name[160];
	int rv = -1;

	for (size_t k = 0; k < N_PHASES; k++)
		ph[k] = calloc(c->jobs, sizeof(double));
	snprintf(nodelist, sizeof(nodelist), "SLURM_JOB_NODELIST=c[1-%u]",
		 nodes);
	snprintf(nnodes, sizeof(nnodes), "SLURM_JOB_NUM_NODES=%u", nodes);
	for (size_t i = 0; i < c->jobs; i++) {
		char id[48];
		unsigned long job = c->next_job++;
		const char *const pro[] = {c->fwdctl, "--policy", c->pol,
					   "prolog", NULL};
		const char *const epi[] = {c->fwdctl, "--policy", c->pol,
					   "epilog", NULL};
		const char *const envp[] = {id,
					    nodelist,
					    nnodes,
					    "SLURM_JOB_USER=root",
					    "SLURM_JOB_NAME=bwapp",
					    "SLURM_JOB_PARTITION=debug",
					    "SPANK_IO_UPGRADE=scale",
					    "FWDALLOC_PROLOG_TIMING=1",
					    "PATH=/usr/bin:/bin",
					    NULL};
		double ms[N_PHASES] = {0}, t0, wall;

		snprintf(id, sizeof(id), "SLURM_JOB_ID=%lu", job);
		t0 = fwd_clock_mono();
		for (size_t k = 0; k < N_PHASES; k++)
			ms[k] = -1;
		/* A prolog that fell back, or a fwdctl without
		 * FWDALLOC_PROLOG_TIMING (an older one, for comparison),
		 * gives the wall time only. */
		if (run(pro, envp, c->errf) != 0) {
			fprintf(stderr,
				"bench_prolog: job %lu: prolog failed "
				"(see %s)\n",
				job, c->errf);
			goto out;
		}
		wall = (fwd_clock_mono() - t0) * 1e3;
		parse_timing(c->errf, ms);
		ms[PH_WALL] = wall;
		if (ms[PH_TOTAL] >= 0)
			ms[PH_EXEC] = wall - ms[PH_TOTAL];
		for (size_t k = 0; k < N_PHASES; k++)
			ph[k][i] = ms[k];
		/* Did it decide?  A prolog that fell back (the database
		 * too slow for database.timeout, say) left no rows: counted,
		 * its node prologs not timed. */
		{
			struct fwdalloc_node_decision nd;
			fwd_error_t err;

			if (fwdalloc_node_decision(c->p, (uint32_t)job, "c1",
						   &nd, &err) <= 0 ||
			    nd.n == 0) {
				fallbacks++;
				goto epilog;
			}
		}
		/* Node prologs: the first, a middle and the last node. */
		for (unsigned k = 0; nodes <= 512 && k < 4; k++) {
			struct fwdalloc_node_decision nd;
			char node[32];
			fwd_error_t err;
			int f;

			snprintf(node, sizeof(node), "c%u",
				 1 + k * (nodes - 1) / 3);
			t0 = fwd_clock_mono();
			f = fwdalloc_node_decision(c->p, (uint32_t)job, node,
						   &nd, &err);
			if (f <= 0 || nd.n == 0) {
				fprintf(stderr,
					"bench_prolog: job %lu node %s: no "
					"decision: %s\n",
					job, node, f < 0 ? err.text : "");
				goto out;
			}
			if (remap_apply(c->rm, node, (uint32_t)job, nd.t, nd.n,
					&err) < 0 ||
			    remap_revert(c->rm, node, (uint32_t)job, &err) <
				    0) {
				fprintf(stderr, "bench_prolog: %s\n", err.text);
				goto out;
			}
			tn[nn++] = (fwd_clock_mono() - t0) * 1e3;
		}
	epilog:
		t0 = fwd_clock_mono();
		if (run(epi, envp, NULL) != 0)
			goto out;
		te[i] = (fwd_clock_mono() - t0) * 1e3;
	}
	printf("%u-node jobs, %s (%zu jobs):\n", nodes, hist, c->jobs);
	snprintf(name, sizeof(name), "%u nodes, %s, prologs fallen back", nodes,
		 hist);
	bench_figure("prolog", name, (double)fallbacks, "jobs", 0, "");
	for (size_t k = 0; k < N_PHASES; k++) {
		struct stat2 s = stats(ph[k], c->jobs);
		const char *what = k == PH_WALL ? "prolog" : phases[k];

		if (s.p50 < 0)
			continue; /* not measured */
		if (k == PH_WALL)
			*p50 = s.p50;
		snprintf(name, sizeof(name), "%u nodes, %s, %s p50", nodes,
			 hist, what);
		bench_figure("prolog", name, s.p50, "ms", c->ref.p50,
			     "connect + SELECT 1, p50");
		snprintf(name, sizeof(name), "%u nodes, %s, %s p99", nodes,
			 hist, what);
		bench_figure("prolog", name, s.p99, "ms", c->ref.p99,
			     "connect + SELECT 1, p99");
	}
	{
		struct stat2 s = stats(te, c->jobs);

		snprintf(name, sizeof(name), "%u nodes, %s, epilog p50", nodes,
			 hist);
		bench_figure("prolog", name, s.p50, "ms", c->ref.p50,
			     "connect + SELECT 1, p50");
		snprintf(name, sizeof(name), "%u nodes, %s, epilog p99", nodes,
			 hist);
		bench_figure("prolog", name, s.p99, "ms", c->ref.p99,
			     "connect + SELECT 1, p99");
	}
	if (nn) {
		struct stat2 s = stats(tn, nn);

		snprintf(name, sizeof(name), "%s, node prolog p50", hist);
		bench_figure("prolog", name, s.p50, "ms", c->ref.p50,
			     "connect + SELECT 1, p50");
		snprintf(name, sizeof(name), "%s, node prolog p99", hist);
		bench_figure("prolog", name, s.p99, "ms", c->ref.p99,
			     "connect + SELECT 1, p99");
	}
	rv = 0;
out:
	for (size_t k = 0; k < N_PHASES; k++)
		free(ph[k]);
	free(te);
	free(tn);
	return rv;
}

static int measure_reference(struct ctx *c)
{
	double *v = calloc(c->jobs, sizeof(*v));
	const char *const argv[] = {c->self, "--reference", c->pol, NULL};

	if (!v)
		return -1;
	for (size_t i = 0; i < c->jobs; i++) {
		double t0 = fwd_clock_mono();

		if (run(argv, NULL, NULL) != 0) {
			free(v);
			return -1;
		}
		v[i] = (fwd_clock_mono() - t0) * 1e3;
	}
	c->ref = stats(v, c->jobs);
	free(v);
	printf("reference (a process: connect + SELECT 1): p50 %.2f ms, p99 "
	       "%.2f ms\n",
	       c->ref.p50, c->ref.p99);
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c;
	char dbdir[256], testdb[512], q[1024];
	struct db *db = NULL;
	fwd_error_t err;
	double e512 = 0, e8192 = 0, h512 = 0, h8192 = 0;
	int rv = 1, started = 0;

	if (argc == 3 && !strcmp(argv[1], "--reference"))
		return reference(argv[2]);
	memset(&c, 0, sizeof(c));
	c.jobs = 100;
	c.next_job = 100000;
	if (getenv("BENCH_PROLOG_JOBS"))
		c.jobs = strtoul(getenv("BENCH_PROLOG_JOBS"), NULL, 10);
	if (c.jobs < 1)
		c.jobs = 1;
	snprintf(c.dir, sizeof(c.dir), "/tmp/fwd-bench-prolog.XXXXXX");
	if (!mkdtemp(c.dir)) {
		perror("bench_prolog: mkdtemp");
		return 1;
	}
	snprintf(dbdir, sizeof(dbdir), "%s/db", c.dir);
	snprintf(c.pol, sizeof(c.pol), "%s/policy.yaml", c.dir);
	snprintf(c.errf, sizeof(c.errf), "%s/prolog.err", c.dir);
	snprintf(c.fwdctl, sizeof(c.fwdctl), "%s/fwdctl", TOP_BUILDDIR);
	snprintf(c.self, sizeof(c.self), "%s/bench/bench_prolog", TOP_BUILDDIR);
	snprintf(testdb, sizeof(testdb), "%s/scripts/testdb", TOP_SRCDIR);
	{
		const char *const a[] = {testdb, "start", dbdir, NULL};

		if (run(a, NULL, NULL) != 0) {
			fprintf(stderr,
				"bench_prolog: scripts/testdb start "
				"failed (is mariadb-server installed?)\n");
			goto out;
		}
		started = 1;
	}
	if (write_policy(c.dir) < 0)
		goto out;
	{
		const char *const a[] = {c.fwdctl, "--policy", c.pol,
					 "db",	   "init",     NULL};

		if (run(a, NULL, NULL) != 0)
			goto out;
	}
	if (!(c.p = policy_load(c.pol, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	c.p->database.timeout = 600; /* the bulk statements below */
	if (!(db = db_connect(&c.p->database, DB_ROLE_CONTROLLER, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	c.p->database.timeout = 2;
	/* The application's profile at both sizes (100 GiB, N-N), and 1,000
	 * jobs holding their default forwarder (shared). */
	if (sql(db, "profiles",
		"INSERT INTO profiles (profile_key, user, name, node_bucket, "
		"runs, write_bytes, io_nodes, io_mode, node_bandwidth_bps, "
		"peak_bandwidth_bps, iops, mdops_rate, updated_at) VALUES "
		"('user=root;name=bwapp;node_bucket=512', 'root', 'bwapp', "
		"512, 5, 107374182400, 512, 'N-N', 2.5e9, 1e10, 200, 10, 0), "
		"('user=root;name=bwapp;node_bucket=8192', 'root', 'bwapp', "
		"8192, 5, 107374182400, 8192, 'N-N', 2.5e9, 1e10, 200, 10, "
		"0)") < 0)
		goto out;
	snprintf(q, sizeof(q),
		 "INSERT INTO allocations (job_id, forwarder, nodes, "
		 "node_count, action, acquired_at) SELECT seq, "
		 "CONCAT('fwd', LPAD(1 + (seq %% 40) * 6, 3, '0')), "
		 "CONCAT('c', 20000 + seq), 1, 'default', UNIX_TIMESTAMP() "
		 "FROM seq_1_to_%d",
		 HELD_JOBS);
	if (sql(db, "1,000 held allocations", q) < 0)
		goto out;
	db_close(db);
	db = NULL;
	c.p->remap.driver = POLICY_DRIVER_NONE;
	/* The node prolog's database read (bench_fanout times the
	 * decision file). */
	free(c.p->remap.decision_dir);
	c.p->remap.decision_dir = NULL;
	if (!(c.rm = remap_create(&c.p->remap, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	printf("bench_prolog: TaihuLight topology (40,960 nodes, 240 "
	       "forwarders), %d jobs holding forwarders, MariaDB on a unix "
	       "socket\n",
	       HELD_JOBS);
	if (measure_reference(&c) < 0)
		goto out;
	/* A first prolog writes the topology cache; not counted. */
	{
		size_t n = c.jobs;
		double ignore;

		c.jobs = 1;
		printf("(warm-up)\n");
		if (run_size(&c, 4, "warm-up", &ignore) < 0)
			goto out;
		c.jobs = n;
	}
	if (run_size(&c, 512, "empty history", &e512) < 0 ||
	    run_size(&c, 8192, "empty history", &e8192) < 0)
		goto out;
	/* A year of history: released allocations and audit rows. */
	c.p->database.timeout = 600;
	if (!(db = db_connect(&c.p->database, DB_ROLE_CONTROLLER, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	c.p->database.timeout = 2;
	snprintf(q, sizeof(q),
		 "INSERT INTO allocations (job_id, forwarder, nodes, "
		 "node_count, action, acquired_at, released_at, "
		 "release_reason) SELECT 1000000 + seq, CONCAT('fwd', "
		 "LPAD(1 + seq %% 240, 3, '0')), 'c[1-512]', 512, 'scale', "
		 "UNIX_TIMESTAMP() - 3e7 + seq * 20, UNIX_TIMESTAMP() - 3e7 + "
		 "seq * 20 + 10, 'epilog' FROM seq_1_to_%d",
		 HISTORY_ROWS);
	if (sql(db, "1,000,000 released allocations", q) < 0)
		goto out;
	snprintf(q, sizeof(q),
		 "INSERT INTO audit (ts, job_id, user, action, outcome, "
		 "record) SELECT UNIX_TIMESTAMP() - 3e7 + seq * 20, 1000000 + "
		 "seq, 'root', 'scale', 'scale', '{}' FROM seq_1_to_%d",
		 HISTORY_ROWS);
	if (sql(db, "1,000,000 audit rows", q) < 0 ||
	    sql(db, "ANALYZE", "ANALYZE TABLE allocations, audit") < 0)
		goto out;
	/* The releases of that year would have stamped the forwarders'
	 * last_used_at: as `fwdctl db migrate` does for a ledger from
	 * before schema version 9. */
	if (sql(db, "schema version 8",
		"DELETE FROM schema_version WHERE version >= 9") < 0)
		goto out;
	db_close(db);
	db = NULL;
	{
		const char *const a[] = {c.fwdctl, "--policy", c.pol,
					 "db",	   "migrate",  NULL};

		if (run(a, NULL, NULL) != 0)
			goto out;
	}
	if (run_size(&c, 512, "1M released + 1M audit", &h512) < 0 ||
	    run_size(&c, 8192, "1M released + 1M audit", &h8192) < 0)
		goto out;
	printf("history:\n");
	bench_figure("prolog",
		     "512 nodes, prolog p50 with 1M released + 1M "
		     "audit rows",
		     h512, "ms", e512, "empty history, p50");
	bench_figure("prolog",
		     "8192 nodes, prolog p50 with 1M released + 1M "
		     "audit rows",
		     h8192, "ms", e8192, "empty history, p50");
	rv = 0;
out:
	db_close(db);
	remap_destroy(c.rm);
	policy_destroy(c.p);
	if (started) {
		const char *const a[] = {testdb, "stop", dbdir, NULL};

		run(a, NULL, NULL);
	}
	{
		const char *const a[] = {"/bin/rm", "-rf", c.dir, NULL};

		run(a, NULL, NULL);
	}
	return rv;
}
