/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_BENCH_FANOUT_H
#define FWD_BENCH_FANOUT_H

/*
 * A job's node prologs, all at once: n processes forked from the caller,
 * held at a gate until the last one exists, then each reads its node's
 * part of the job's decision with fwdalloc_node_decision() -- exactly what
 * slurm_spank_job_prolog does -- and, when it would keep its default
 * mapping, records the fallback with fwdalloc_node_fallback_note() as the
 * job prolog does.  Shared by bench/bench_fanout and the integration test's
 * tests/tools/node_fanout.
 */

#include <stddef.h>
#include <stdint.h>

struct policy;

struct fanout_node {
	int done;     /* the process finished */
	int r;	      /* fwdalloc_node_decision()'s result */
	int source;   /* enum fwdalloc_source */
	int fallback; /* kept the default mapping although decided */
	double sec;   /* how long the read took */
	char action[32];
	char targets[512]; /* "fwd1=10.0.0.1,fwd2=-" */
	char err[256];
};

struct fanout_stats {
	size_t n, fallbacks, no_decision, from_file, from_db, timed_out;
	double p50, p99, max; /* seconds, over all n reads */
	double wall;	      /* from the gate opening to the last exit */
};

/*
 * Run n node prologs of job for nodes "<prefix>1".."<prefix>n", each in
 * its own process; a process still running after limit seconds is killed
 * and counted as a fallback.  nodes: n entries (shared memory is used
 * internally; the results are copied there).  0, or -1 with a message on
 * stderr when the processes could not be started.
 */
int fanout_run(const struct policy *p, uint32_t job, const char *prefix,
	       size_t n, double limit, struct fanout_node *nodes,
	       struct fanout_stats *st);

#endif
