/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_prolog: what a job launch pays for fwdalloc, with a private MariaDB
 * on a local socket (scripts/testdb) and the TaihuLight-size topology
 * (etc/topology-taihulight.yaml: 40,960 nodes, 240 forwarders).
 *
 *   controller prolog  `fwdctl prolog` as slurmctld runs it: a new process
 *                      with the job in its environment, for 512-node and
 *                      8,192-node jobs asking to scale (a stored profile
 *                      says they move 100 GiB; the application has as
 *                      many finished runs at each size as a launch
 *                      reads), while 1,000 other jobs hold forwarders;
 *                      with no history, and with 1,000,000 released
 *                      allocations and 1,000,000 audit rows (the
 *                      forwarders' last_used_at as their releases left
 *                      it: `fwdctl db migrate` from 8).  The two
 *                      histories are in two servers and their jobs
 *                      alternate, so that the machine's speed, which
 *                      drifts by a third over minutes on a shared host,
 *                      weighs on both alike.  Each phase
 *                      (FWDALLOC_PROLOG_TIMING): exec (process start and
 *                      exit, outside fwdctl's own clock), policy,
 *                      topology (its compiled cache), load (up to the
 *                      worker), nodes, connect, record (job row,
 *                      profile), lock, ledger, decide, persist, audit,
 *                      commit, publish; median and 99th percentile.
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
 * Each configuration starts once the server has flushed and purged what
 * its set-up wrote (a year of history is not written the second before).
 *
 * Not a test: no limits asserted.  Environment: BENCH_PROLOG_JOBS (jobs
 * per configuration, default 100); FWDALLOC_TESTDB_BUFFER_POOL (default
 * 512M, as bench_health).  A fwdctl that prints no phases (an older one,
 * for comparison; or a prolog that fell back) is timed as a whole;
 * prologs that fell back are counted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/report.h"
#include "bench/testdb.h"
#include "common/array.h"
#include "common/timeutil.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/profile.h"
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

struct stat2 {
	double p50, p99;
};

static struct stat2 stats(double *v, size_t n)
{
	struct stat2 s = {0, 0};

	if (!n)
		return s;
	qsort(v, n, sizeof(*v), fwd_cmp_double);
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

/* One server and its database: what the prologs of one configuration
 * read.  Each has its own directory (policy, audit file, topology
 * cache). */
struct setup {
	const char *hist; /* "empty history", ... */
	char dir[128], dbdir[160], pol[192], errf[192];
	struct policy *p;
	struct remap *rm;
	int started;
};

struct ctx {
	char dir[64], fwdctl[512], self[512], testdb[512];
	struct setup s[2];
	size_t jobs;
	unsigned long next_job;
	struct stat2 ref;
};

/* What the jobs of one size measured on one setup. */
struct meas {
	double *ph[N_PHASES], *te, *tn;
	size_t nn, fallbacks;
};

static void meas_free(struct meas *m)
{
	for (size_t k = 0; k < N_PHASES; k++)
		free(m->ph[k]);
	free(m->te);
	free(m->tn);
}

static int meas_init(struct meas *m, size_t jobs)
{
	memset(m, 0, sizeof(*m));
	m->te = calloc(jobs, sizeof(double));
	m->tn = calloc(jobs * 4, sizeof(double));
	for (size_t k = 0; k < N_PHASES; k++)
		if (!(m->ph[k] = calloc(jobs, sizeof(double))))
			return -1;
	return m->te && m->tn ? 0 : -1;
}

/* Job number job, of `nodes` nodes, on setup s: its prolog, node
 * prologs and epilog, into m's i-th place. */
static int run_job(struct ctx *c, struct setup *s, struct meas *m, size_t i,
		   unsigned long job, unsigned nodes)
{
	char id[48], nodelist[64], nnodes[64];
	const char *const pro[] = {c->fwdctl, "--policy", s->pol, "prolog",
				   NULL};
	const char *const epi[] = {c->fwdctl, "--policy", s->pol, "epilog",
				   NULL};
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

	snprintf(nodelist, sizeof(nodelist), "SLURM_JOB_NODELIST=c[1-%u]",
		 nodes);
	snprintf(nnodes, sizeof(nnodes), "SLURM_JOB_NUM_NODES=%u", nodes);
	snprintf(id, sizeof(id), "SLURM_JOB_ID=%lu", job);
	t0 = fwd_clock_mono();
	for (size_t k = 0; k < N_PHASES; k++)
		ms[k] = -1;
	/* A prolog that fell back, or a fwdctl without
	 * FWDALLOC_PROLOG_TIMING (an older one, for comparison), gives
	 * the wall time only. */
	if (run(pro, envp, s->errf) != 0) {
		fprintf(stderr,
			"bench_prolog: job %lu: prolog failed (see %s)\n", job,
			s->errf);
		return -1;
	}
	wall = (fwd_clock_mono() - t0) * 1e3;
	parse_timing(s->errf, ms);
	ms[PH_WALL] = wall;
	if (ms[PH_TOTAL] >= 0)
		ms[PH_EXEC] = wall - ms[PH_TOTAL];
	for (size_t k = 0; k < N_PHASES; k++)
		m->ph[k][i] = ms[k];
	/* Did it decide?  A prolog that fell back (the database too slow
	 * for database.timeout, say) left no rows: counted, its node
	 * prologs not timed. */
	{
		struct fwdalloc_node_decision nd;
		fwd_error_t err;

		if (fwdalloc_node_decision(s->p, (uint32_t)job, "c1", &nd,
					   &err) <= 0 ||
		    nd.n == 0) {
			m->fallbacks++;
			goto epilog;
		}
	}
	/* Node prologs: the first, a middle and the last node. */
	for (unsigned k = 0; nodes <= 512 && k < 4; k++) {
		struct fwdalloc_node_decision nd;
		char node[32];
		fwd_error_t err;
		int f;

		snprintf(node, sizeof(node), "c%u", 1 + k * (nodes - 1) / 3);
		t0 = fwd_clock_mono();
		f = fwdalloc_node_decision(s->p, (uint32_t)job, node, &nd,
					   &err);
		if (f <= 0 || nd.n == 0) {
			fprintf(stderr,
				"bench_prolog: job %lu node %s: no decision: "
				"%s\n",
				job, node, f < 0 ? err.text : "");
			return -1;
		}
		if (remap_apply(s->rm, node, (uint32_t)job, nd.t, nd.n, &err) <
			    0 ||
		    remap_revert(s->rm, node, (uint32_t)job, &err) < 0) {
			fprintf(stderr, "bench_prolog: %s\n", err.text);
			return -1;
		}
		m->tn[m->nn++] = (fwd_clock_mono() - t0) * 1e3;
	}
epilog:
	t0 = fwd_clock_mono();
	if (run(epi, envp, NULL) != 0)
		return -1;
	m->te[i] = (fwd_clock_mono() - t0) * 1e3;
	return 0;
}

/* Print what m measured for `nodes`-node jobs on a setup named hist;
 * *p50: the prolog's median wall time. */
static void report(const struct ctx *c, const struct meas *m, unsigned nodes,
		   const char *hist, double *p50)
{
	char name[160];

	printf("%u-node jobs, %s (%zu jobs):\n", nodes, hist, c->jobs);
	snprintf(name, sizeof(name), "%u nodes, %s, prologs fallen back", nodes,
		 hist);
	bench_figure("prolog", name, (double)m->fallbacks, "jobs", 0, "");
	for (size_t k = 0; k < N_PHASES; k++) {
		struct stat2 st = stats(m->ph[k], c->jobs);
		const char *what = k == PH_WALL ? "prolog" : phases[k];

		if (st.p50 < 0)
			continue; /* not measured */
		if (k == PH_WALL)
			*p50 = st.p50;
		snprintf(name, sizeof(name), "%u nodes, %s, %s p50", nodes,
			 hist, what);
		bench_figure("prolog", name, st.p50, "ms", c->ref.p50,
			     "connect + SELECT 1, p50");
		snprintf(name, sizeof(name), "%u nodes, %s, %s p99", nodes,
			 hist, what);
		bench_figure("prolog", name, st.p99, "ms", c->ref.p99,
			     "connect + SELECT 1, p99");
	}
	{
		struct stat2 st = stats(m->te, c->jobs);

		snprintf(name, sizeof(name), "%u nodes, %s, epilog p50", nodes,
			 hist);
		bench_figure("prolog", name, st.p50, "ms", c->ref.p50,
			     "connect + SELECT 1, p50");
		snprintf(name, sizeof(name), "%u nodes, %s, epilog p99", nodes,
			 hist);
		bench_figure("prolog", name, st.p99, "ms", c->ref.p99,
			     "connect + SELECT 1, p99");
	}
	if (m->nn) {
		struct stat2 st = stats(m->tn, m->nn);

		snprintf(name, sizeof(name), "%s, node prolog p50", hist);
		bench_figure("prolog", name, st.p50, "ms", c->ref.p50,
			     "connect + SELECT 1, p50");
		snprintf(name, sizeof(name), "%s, node prolog p99", hist);
		bench_figure("prolog", name, st.p99, "ms", c->ref.p99,
			     "connect + SELECT 1, p99");
	}
}

/*
 * c->jobs jobs of `nodes` nodes on each setup, interleaved job by job
 * (each in turn first), so that a change of the machine's speed during
 * the run weighs on both alike; report each setup's figures, or with
 * `warmup` only the first's, under that name; p50[k]: setup k's median
 * prolog.
 */
static int run_size(struct ctx *c, unsigned nodes, const char *warmup,
		    double p50[2])
{
	struct meas m[2];
	int rv = -1;

	if (meas_init(&m[0], c->jobs) < 0 || meas_init(&m[1], c->jobs) < 0) {
		fprintf(stderr, "bench_prolog: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < c->jobs; i++) {
		unsigned long job = c->next_job++;

		for (size_t k = 0; k < 2; k++) {
			size_t w = (i + k) % 2;

			if (run_job(c, &c->s[w], &m[w], i, job, nodes) < 0)
				goto out;
		}
	}
	for (size_t k = 0; k < (warmup ? 1 : 2); k++)
		report(c, &m[k], nodes, warmup ? warmup : c->s[k].hist,
		       &p50[k]);
	rv = 0;
out:
	meas_free(&m[0]);
	meas_free(&m[1]);
	return rv;
}

static int measure_reference(struct ctx *c)
{
	double *v = calloc(c->jobs, sizeof(*v));
	const char *const argv[] = {c->self, "--reference", c->s[0].pol, NULL};

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

/* Connect to setup s's database as the controller, for bulk
 * statements (10 minutes each at most). */
static struct db *setup_db(struct setup *s)
{
	fwd_error_t err;
	double keep = s->p->database.timeout;
	struct db *db;

	s->p->database.timeout = 600;
	db = db_connect(&s->p->database, DB_ROLE_CONTROLLER, &err);
	s->p->database.timeout = keep;
	if (!db)
		fprintf(stderr, "bench_prolog: %s\n", err.text);
	return db;
}

/*
 * Setup s in c->dir/sub: its server, policy and database, with what both
 * configurations have: bwapp's profile at both sizes (100 GiB, N-N),
 * 1,000 jobs holding their default forwarder (shared), and bwapp's own
 * past (at each size as many finished runs as a launch reads,
 * PROFILE_LAUNCH_RUNS, without statistics, so that the runs the
 * measured jobs add do not change what a launch reads).
 */
static int setup_start(struct ctx *c, struct setup *s, const char *sub,
		       const char *hist)
{
	char q[1024];
	fwd_error_t err;
	struct db *db = NULL;
	int rv = -1;

	s->hist = hist;
	snprintf(s->dir, sizeof(s->dir), "%s/%s", c->dir, sub);
	snprintf(s->dbdir, sizeof(s->dbdir), "%s/db", s->dir);
	snprintf(s->pol, sizeof(s->pol), "%s/policy.yaml", s->dir);
	snprintf(s->errf, sizeof(s->errf), "%s/prolog.err", s->dir);
	if (mkdir(s->dir, 0700) < 0) {
		fprintf(stderr, "bench_prolog: %s: %s\n", s->dir,
			strerror(errno));
		return -1;
	}
	{
		const char *const a[] = {c->testdb, "start", s->dbdir, NULL};

		if (run(a, NULL, NULL) != 0) {
			fprintf(stderr,
				"bench_prolog: scripts/testdb start "
				"failed (is mariadb-server installed?)\n");
			return -1;
		}
		s->started = 1;
	}
	if (write_policy(s->dir) < 0)
		return -1;
	{
		const char *const a[] = {c->fwdctl, "--policy", s->pol,
					 "db",	    "init",	NULL};

		if (run(a, NULL, NULL) != 0)
			return -1;
	}
	if (!(s->p = policy_load(s->pol, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		return -1;
	}
	if (!(db = setup_db(s)))
		return -1;
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
	snprintf(q, sizeof(q),
		 "INSERT INTO jobs (job_id, user, name, partition_name, "
		 "nodelist, node_count, start_at, end_at, state, updated_at) "
		 "SELECT 3000000 + seq, 'root', 'bwapp', 'debug', "
		 "IF(seq %% 2, 'c[1-512]', 'c[1-8192]'), "
		 "IF(seq %% 2, 512, 8192), UNIX_TIMESTAMP() - 86400 + seq, "
		 "UNIX_TIMESTAMP() - 43200 + seq, 'COMPLETED', 0 "
		 "FROM seq_1_to_%d",
		 2 * PROFILE_LAUNCH_RUNS);
	if (sql(db, "bwapp's past runs", q) < 0)
		goto out;
	s->p->remap.driver = POLICY_DRIVER_NONE;
	/* The node prolog's database read (bench_fanout times the
	 * decision file). */
	free(s->p->remap.decision_dir);
	s->p->remap.decision_dir = NULL;
	if (!(s->rm = remap_create(&s->p->remap, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	rv = 0;
out:
	db_close(db);
	return rv;
}

/* A year of history in setup s: released allocations and audit rows,
 * and the forwarders' last_used_at as their releases left it. */
static int setup_history(struct ctx *c, struct setup *s)
{
	char q[1024];
	struct db *db = setup_db(s);
	int rv = -1;

	if (!db)
		return -1;
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
	{
		const char *const a[] = {c->fwdctl, "--policy", s->pol,
					 "db",	    "migrate",	NULL};

		if (run(a, NULL, NULL) != 0)
			goto out;
	}
	rv = 0;
out:
	db_close(db);
	return rv;
}

int main(int argc, char **argv)
{
	struct ctx c;
	double p512[2] = {0, 0}, p8192[2] = {0, 0}, ignore[2];
	int rv = 1;

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
	snprintf(c.fwdctl, sizeof(c.fwdctl), "%s/fwdctl", TOP_BUILDDIR);
	snprintf(c.self, sizeof(c.self), "%s/bench/bench_prolog", TOP_BUILDDIR);
	snprintf(c.testdb, sizeof(c.testdb), "%s/scripts/testdb", TOP_SRCDIR);
	/* Servers whose buffer pool holds the working set, as a site's
	 * would (MariaDB's own default is 128M; bench_health uses the
	 * same). */
	setenv("FWDALLOC_TESTDB_BUFFER_POOL", "512M", 0);
	if (setup_start(&c, &c.s[0], "empty", "empty history") < 0 ||
	    setup_start(&c, &c.s[1], "year", "1M released + 1M audit") < 0 ||
	    setup_history(&c, &c.s[1]) < 0)
		goto out;
	for (size_t k = 0; k < 2; k++) {
		struct db *db = setup_db(&c.s[k]);
		int r = db ? bench_db_settle(db, c.s[k].dbdir) : -1;

		db_close(db);
		if (r < 0)
			goto out;
	}
	printf("bench_prolog: TaihuLight topology (40,960 nodes, 240 "
	       "forwarders), %d jobs holding forwarders, MariaDB on a unix "
	       "socket (InnoDB buffer pool %s); the two histories in two "
	       "servers, their jobs interleaved\n",
	       HELD_JOBS, getenv("FWDALLOC_TESTDB_BUFFER_POOL"));
	if (measure_reference(&c) < 0)
		goto out;
	/* A first prolog writes the topology cache; not counted. */
	{
		size_t n = c.jobs;

		c.jobs = 1;
		printf("(warm-up)\n");
		if (run_size(&c, 4, "warm-up", ignore) < 0)
			goto out;
		c.jobs = n;
	}
	if (run_size(&c, 512, NULL, p512) < 0 ||
	    run_size(&c, 8192, NULL, p8192) < 0)
		goto out;
	printf("history:\n");
	bench_figure("prolog",
		     "512 nodes, prolog p50 with 1M released + 1M "
		     "audit rows",
		     p512[1], "ms", p512[0], "empty history, p50");
	bench_figure("prolog",
		     "8192 nodes, prolog p50 with 1M released + 1M "
		     "audit rows",
		     p8192[1], "ms", p8192[0], "empty history, p50");
	rv = 0;
out:
	for (size_t k = 0; k < 2; k++) {
		struct setup *s = &c.s[k];

		remap_destroy(s->rm);
		policy_destroy(s->p);
		if (s->started) {
			const char *const a[] = {c.testdb, "stop", s->dbdir,
						 NULL};

			run(a, NULL, NULL);
		}
	}
	{
		const char *const a[] = {"/bin/rm", "-rf", c.dir, NULL};

		run(a, NULL, NULL);
	}
	return rv;
}
