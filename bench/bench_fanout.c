/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_fanout: the node side of one large job.  A private MariaDB
 * (scripts/testdb, max_connections 200), a topology of BENCH_FANOUT_NODES
 * compute nodes (default 2048) behind 16 service forwarders, one
 * controller prolog (`fwdctl prolog`) for a job on all of them, then all
 * its node prologs at once (bench/fanout.h: one process each, released
 * together, each doing what slurm_spank_job_prolog reads):
 *
 *   decision file   remap.decision_dir set: the file PrologSlurmctld
 *                   published
 *   database        the reference, same run: the file withdrawn, so every
 *                   node opens its own connection with the node account
 *
 * Prints p50/p99/max of the reads and how many nodes fell back (kept the
 * default mapping).  Not a test: no limits asserted
 * (tests/integration/node_fanout.sh asserts).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/fanout.h"
#include "bench/report.h"
#include "bench/testdb.h"
#include "policies/policy.h"

#define FORWARDERS 16

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "bench_fanout: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int write_setup(const char *dir, size_t nodes)
{
	char path[512], buf[8192], *db = NULL;
	size_t per = (nodes + FORWARDERS - 1) / FORWARDERS, off = 0;
	FILE *f;
	long len;

	off += (size_t)snprintf(buf + off, sizeof(buf) - off, "forwarders:\n");
	for (int i = 1; i <= FORWARDERS; i++)
		off += (size_t)snprintf(
			buf + off, sizeof(buf) - off,
			"  - {name: fwd%d, address: 10.0.0.%d, bandwidth: "
			"2.5GB/s, group: g0, role: service}\n",
			i, i);
	off += (size_t)snprintf(buf + off, sizeof(buf) - off,
				"compute_nodes: c[1-%zu]\nmapping:\n", nodes);
	for (size_t i = 0; i < FORWARDERS && i * per < nodes; i++) {
		size_t last = (i + 1) * per < nodes ? (i + 1) * per : nodes;

		off += (size_t)snprintf(
			buf + off, sizeof(buf) - off,
			"  - {nodes: \"c[%zu-%zu]\", forwarder: fwd%zu}\n",
			i * per + 1, last, i + 1);
	}
	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	if (write_file(path, buf) < 0)
		return -1;
	/* The database section scripts/testdb wrote. */
	snprintf(path, sizeof(path), "%s/db/policy-db.yaml", dir);
	if (!(f = fopen(path, "r")) || fseek(f, 0, SEEK_END) < 0 ||
	    (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(db = calloc(1, (size_t)len + 1)) ||
	    fread(db, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "bench_fanout: %s: %s\n", path,
			strerror(errno));
		if (f)
			fclose(f);
		free(db);
		return -1;
	}
	fclose(f);
	snprintf(buf, sizeof(buf),
		 "topology: %s/topology.yaml\n"
		 "access:\n  mode: opt-in\n  fail: open\n"
		 "decision:\n  decide_timeout: 60s\n"
		 "audit:\n  file: %s/audit.jsonl\n  database: false\n"
		 "remap:\n  driver: none\n  decision_dir: %s/spool\n"
		 "%s",
		 dir, dir, dir, db);
	free(db);
	snprintf(path, sizeof(path), "%s/policy.yaml", dir);
	return write_file(path, buf);
}

static int hook(const char *dir, const char *what, size_t nodes)
{
	char fwdctl[512], pol[512], nl[64], nn[64];
	char *argv[] = {fwdctl, (char *)"--policy", pol, (char *)what, NULL};

	snprintf(fwdctl, sizeof(fwdctl), "%s/fwdctl", TOP_BUILDDIR);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", dir);
	snprintf(nl, sizeof(nl), "c[1-%zu]", nodes);
	snprintf(nn, sizeof(nn), "%zu", nodes);
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_JOB_NODELIST", nl, 1);
	setenv("SLURM_JOB_NUM_NODES", nn, 1);
	setenv("SLURM_JOB_USER", "root", 1);
	setenv("SLURM_JOB_NAME", "fanout", 1);
	setenv("SPANK_IO_UPGRADE", "scale", 1);
	return bench_run(argv, true);
}

static void report(const char *what, const struct fanout_stats *st)
{
	printf("%-16s n=%-5zu p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms  "
	       "all done in %6.0f ms  fell back %zu (timed out %zu)\n",
	       what, st->n, st->p50 * 1e3, st->p99 * 1e3, st->max * 1e3,
	       st->wall * 1e3, st->fallbacks, st->timed_out);
}

int main(void)
{
	char dir[] = "/tmp/fwd-bench-fanout.XXXXXX";
	char dbdir[512], pol[512], file[512], moved[512], name[96];
	char *start[] = {(char *)TOP_SRCDIR "/scripts/testdb", (char *)"start",
			 dbdir, NULL};
	char *stop[] = {(char *)TOP_SRCDIR "/scripts/testdb", (char *)"stop",
			dbdir, NULL};
	char *rm[] = {(char *)"/bin/rm", (char *)"-rf", dir, NULL};
	struct fanout_stats sf, sd;
	struct fanout_node *res = NULL;
	struct policy *p = NULL;
	fwd_error_t err;
	size_t nodes = 2048;
	int rv = 1, started = 0;

	if (getenv("BENCH_FANOUT_NODES"))
		nodes = strtoul(getenv("BENCH_FANOUT_NODES"), NULL, 10);
	if (nodes < FORWARDERS || nodes > 16384) {
		fprintf(stderr,
			"bench_fanout: BENCH_FANOUT_NODES in 16..16384\n");
		return 1;
	}
	if (!mkdtemp(dir)) {
		perror("bench_fanout: mkdtemp");
		return 1;
	}
	snprintf(dbdir, sizeof(dbdir), "%s/db", dir);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", dir);
	if (bench_run(start, true) != 0) {
		fprintf(stderr, "bench_fanout: scripts/testdb start failed "
				"(is mariadb-server installed?)\n");
		goto out;
	}
	started = 1;
	if (write_setup(dir, nodes) < 0)
		goto out;
	{
		char fwdctl[512];
		char *init[] = {fwdctl,	      (char *)"--policy", pol,
				(char *)"db", (char *)"init",	  NULL};

		snprintf(fwdctl, sizeof(fwdctl), "%s/fwdctl", TOP_BUILDDIR);
		if (bench_run(init, true) != 0) {
			fprintf(stderr,
				"bench_fanout: fwdctl db init failed\n");
			goto out;
		}
	}
	if (hook(dir, "prolog", nodes) != 0) {
		fprintf(stderr, "bench_fanout: fwdctl prolog failed\n");
		goto out;
	}
	if (!(p = policy_load(pol, &err))) {
		fprintf(stderr, "bench_fanout: %s\n", err.text);
		goto out;
	}
	snprintf(file, sizeof(file), "%s/spool/4242.decision", dir);
	snprintf(moved, sizeof(moved), "%s/4242.decision", dir);
	if (access(file, R_OK) != 0) {
		fprintf(stderr, "bench_fanout: %s: %s\n", file,
			strerror(errno));
		goto out;
	}
	if (!(res = calloc(nodes, sizeof(*res))) ||
	    fanout_run(p, 4242, "c", nodes, 60, res, &sf) < 0 ||
	    rename(file, moved) < 0 ||
	    fanout_run(p, 4242, "c", nodes, 60, res, &sd) < 0)
		goto out;
	hook(dir, "epilog", nodes);
	printf("bench_fanout: one job on %zu nodes, %d forwarders, every node "
	       "prolog at once, MariaDB on a unix socket (max_connections "
	       "200)\n",
	       nodes, FORWARDERS);
	report("decision file", &sf);
	report("database (ref.)", &sd);
	snprintf(name, sizeof(name), "%zu node prologs, decision file, p50",
		 nodes);
	bench_figure("fanout", name, sf.p50 * 1e3, "ms", sd.p50 * 1e3,
		     "database path p50");
	snprintf(name, sizeof(name), "%zu node prologs, decision file, p99",
		 nodes);
	bench_figure("fanout", name, sf.p99 * 1e3, "ms", sd.p99 * 1e3,
		     "database path p99");
	bench_figure("fanout", "node prologs fallen back, decision file",
		     (double)sf.fallbacks, "nodes", 0, NULL);
	bench_figure("fanout", "node prologs fallen back, database",
		     (double)sd.fallbacks, "nodes", 0, NULL);
	rv = 0;
out:
	policy_destroy(p);
	free(res);
	if (started)
		bench_run(stop, true);
	bench_run(rm, true);
	return rv;
}
