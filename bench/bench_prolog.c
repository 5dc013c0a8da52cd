/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_prolog: how long the controller prolog and the node prolog take,
 * with a private MariaDB on a local socket (scripts/testdb).
 *
 *   controller prolog  `fwdctl prolog` as slurmctld runs it: a new process
 *                      with the job in its environment (policy and
 *                      topology load, connect, job row, profile, lock,
 *                      ledger, decide, allocation rows, audit row and
 *                      line).  Each job is released by `fwdctl epilog`
 *                      (timed too) so the ledger stays the same size.
 *   node prolog        what slurm_spank_job_prolog does per node: connect
 *                      with the read-only node account, read this node's
 *                      forwarders, apply and revert with the `none`
 *                      driver (the driver's own cost is site-specific).
 *
 * Prints median and 99th percentile.  Not a test: no limits asserted.
 * Environment: BENCH_PROLOG_JOBS (default 200).
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

#include "common/timeutil.h"
#include "db/db.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"
#include "spank/remap.h"

extern char **environ;

static int run(const char *const argv[], const char *const envp[], int quiet)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rc;

	posix_spawn_file_actions_init(&fa);
	if (quiet)
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
						 0);
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

static void report(const char *what, double *v, size_t n)
{
	size_t p99 = (size_t)((double)(n - 1) * 0.99 + 0.5);

	qsort(v, n, sizeof(*v), cmp_double);
	printf("%-34s n=%-5zu median %8.2f ms   p99 %8.2f ms\n", what, n,
	       v[n / 2] * 1e3, v[p99] * 1e3);
}

/* Copy the minicluster policy template with @DIR@ replaced. */
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

		while ((at = strstr(line, "@DIR@"))) {
			char rest[1024];

			snprintf(rest, sizeof(rest), "%s", at + 5);
			snprintf(at, sizeof(line) - (size_t)(at - line), "%s%s",
				 dir, rest);
		}
		fputs(line, fo);
	}
	fclose(fi);
	fclose(fo);
	{
		char src[2048], dst[2048];
		const char *const argv[] = {"/bin/cp", src, dst, NULL};

		snprintf(src, sizeof(src),
			 "%s/tests/fixtures/minicluster/topology.yaml",
			 TOP_SRCDIR);
		snprintf(dst, sizeof(dst), "%s/topology.yaml", dir);
		return run(argv, NULL, 0) == 0 ? 0 : -1;
	}
}

int main(void)
{
	const char *nodes[] = {"c1", "c2", "c3", "c4"};
	size_t jobs = 200, nc = 0, nn = 0, ne = 0;
	char dir[] = "/tmp/fwd-bench-prolog.XXXXXX";
	char dbdir[256], pol[256], fwdctl[512], testdb[512];
	double *tc = NULL, *tn = NULL, *te = NULL;
	struct policy *p = NULL;
	struct remap *rm = NULL;
	struct db *db = NULL;
	fwd_error_t err;
	int rv = 1, started = 0;

	if (getenv("BENCH_PROLOG_JOBS"))
		jobs = strtoul(getenv("BENCH_PROLOG_JOBS"), NULL, 10);
	if (jobs < 1)
		jobs = 1;
	if (!mkdtemp(dir)) {
		perror("bench_prolog: mkdtemp");
		return 1;
	}
	snprintf(dbdir, sizeof(dbdir), "%s/db", dir);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", dir);
	snprintf(fwdctl, sizeof(fwdctl), "%s/fwdctl", TOP_BUILDDIR);
	snprintf(testdb, sizeof(testdb), "%s/scripts/testdb", TOP_SRCDIR);
	{
		const char *const argv[] = {testdb, "start", dbdir, NULL};

		if (run(argv, NULL, 1) != 0) {
			fprintf(stderr,
				"bench_prolog: scripts/testdb start "
				"failed (is mariadb-server installed?)\n");
			goto out;
		}
		started = 1;
	}
	if (write_policy(dir) < 0)
		goto out;
	{
		const char *const argv[] = {fwdctl, "--policy", pol,
					    "db",   "init",	NULL};

		if (run(argv, NULL, 1) != 0)
			goto out;
	}
	if (!(p = policy_load(pol, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	if (!(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err)) ||
	    db_execf(db, &err,
		     "INSERT INTO profiles (profile_key, user, name, "
		     "node_bucket, runs, write_bytes, io_nodes, io_mode, "
		     "node_bandwidth_bps, peak_bandwidth_bps, iops, "
		     "mdops_rate, updated_at) VALUES ("
		     "'user=root;name=bwapp;node_bucket=4', 'root', 'bwapp', "
		     "4, 5, 107374182400, 4, 'N-N', 2.5e9, 1e10, 200, 10, 0)",
		     "") < 0) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	db_close(db);
	db = NULL;
	p->remap.driver = POLICY_DRIVER_NONE;
	/* The node prolog's database read (bench_fanout times the
	 * decision file). */
	free(p->remap.decision_dir);
	p->remap.decision_dir = NULL;
	if (!(rm = remap_create(&p->remap, &err))) {
		fprintf(stderr, "bench_prolog: %s\n", err.text);
		goto out;
	}
	tc = calloc(jobs, sizeof(*tc));
	te = calloc(jobs, sizeof(*te));
	tn = calloc(jobs * 4, sizeof(*tn));
	if (!tc || !te || !tn)
		goto out;

	for (size_t i = 0; i < jobs; i++) {
		char id[48];
		const char *const pro[] = {fwdctl, "--policy", pol, "prolog",
					   NULL};
		const char *const epi[] = {fwdctl, "--policy", pol, "epilog",
					   NULL};
		const char *const envp[] = {id,
					    "SLURM_JOB_NODELIST=c[1-4]",
					    "SLURM_JOB_NUM_NODES=4",
					    "SLURM_JOB_USER=root",
					    "SLURM_JOB_NAME=bwapp",
					    "SLURM_JOB_PARTITION=debug",
					    "SPANK_IO_UPGRADE=scale",
					    "PATH=/usr/bin:/bin",
					    NULL};
		double t0;

		snprintf(id, sizeof(id), "SLURM_JOB_ID=%zu", 1000 + i);
		t0 = fwd_clock_mono();
		if (run(pro, envp, 1) != 0)
			goto out;
		tc[nc++] = fwd_clock_mono() - t0;
		for (size_t k = 0; k < 4; k++) {
			struct fwdalloc_node_decision nd;
			int f;

			t0 = fwd_clock_mono();
			f = fwdalloc_node_decision(p, (uint32_t)(1000 + i),
						   nodes[k], &nd, &err);
			if (f <= 0 || nd.n == 0) {
				fprintf(stderr,
					"bench_prolog: job %zu node "
					"%s: no decision: %s\n",
					1000 + i, nodes[k],
					f < 0 ? err.text : "");
				goto out;
			}
			if (remap_apply(rm, nodes[k], (uint32_t)(1000 + i),
					nd.t, nd.n, &err) < 0 ||
			    remap_revert(rm, nodes[k], (uint32_t)(1000 + i),
					 &err) < 0) {
				fprintf(stderr, "bench_prolog: %s\n", err.text);
				goto out;
			}
			tn[nn++] = fwd_clock_mono() - t0;
		}
		t0 = fwd_clock_mono();
		if (run(epi, envp, 1) != 0)
			goto out;
		te[ne++] = fwd_clock_mono() - t0;
	}
	printf("bench_prolog: %zu jobs of 4 nodes, scale to 4 forwarders, "
	       "MariaDB on a unix socket\n",
	       jobs);
	report("controller prolog (fwdctl prolog)", tc, nc);
	report("controller epilog (fwdctl epilog)", te, ne);
	report("node prolog (read + apply/revert)", tn, nn);
	rv = 0;
out:
	db_close(db);
	remap_destroy(rm);
	policy_destroy(p);
	if (started) {
		const char *const argv[] = {testdb, "stop", dbdir, NULL};

		run(argv, NULL, 1);
	}
	{
		const char *const argv[] = {"/bin/rm", "-rf", dir, NULL};

		run(argv, NULL, 0);
	}
	free(tc);
	free(te);
	free(tn);
	return rv;
}
