/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long loading and validating the TaihuLight-size topology and the
 * example policy take (median of several runs), and how many node ->
 * default forwarder lookups per second the index answers.  Prints figures;
 * asserts nothing about time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/report.h"
#include "common/array.h"
#include "common/timeutil.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define RUNS 11

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), fwd_cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	const char *topo_path =
		argc > 1 ? argv[1] : TOP_SRCDIR "/etc/topology-taihulight.yaml";
	const char *policy_path =
		argc > 2 ? argv[2] : TOP_SRCDIR "/etc/fwdalloc.yaml";
	double t_topo[RUNS], t_policy[RUNS], t_read[RUNS], t0, dt, id_dt;
	double med_topo, med_policy;
	struct topology *t = NULL;
	fwd_error_t err;
	size_t lookups = 0, id_lookups = 0;
	long sum = 0;

	for (int i = 0; i < RUNS; i++) {
		topo_destroy(t);
		t0 = fwd_clock_mono();
		t = topo_load(topo_path, &err);
		t_topo[i] = fwd_clock_mono() - t0;
		if (!t) {
			fprintf(stderr, "bench_topology: %s\n", err.text);
			return 1;
		}
	}
	for (int i = 0; i < RUNS; i++) {
		struct policy *p;

		t0 = fwd_clock_mono();
		p = policy_load(policy_path, &err);
		t_policy[i] = fwd_clock_mono() - t0;
		if (!p) {
			fprintf(stderr, "bench_topology: %s\n", err.text);
			return 1;
		}
		policy_destroy(p);
	}
	/* Look every node up, round after round, for about half a second. */
	t0 = fwd_clock_mono();
	do {
		for (size_t n = 0; n < t->n_nodes; n++)
			sum += topo_node_default(t, t->node_names[n]);
		lookups += t->n_nodes;
		dt = fwd_clock_mono() - t0;
	} while (dt < 0.5);

	/* References: the file read alone, lookups by node id. */
	for (int i = 0; i < RUNS; i++) {
		FILE *f;
		char buf[1 << 16];

		t0 = fwd_clock_mono();
		if (!(f = fopen(topo_path, "r")))
			return 1;
		while (fread(buf, 1, sizeof(buf), f) > 0)
			;
		fclose(f);
		t_read[i] = fwd_clock_mono() - t0;
	}
	t0 = fwd_clock_mono();
	do {
		for (size_t n = 0; n < t->n_nodes; n++)
			sum += t->node_forwarder[n];
		id_lookups += t->n_nodes;
		id_dt = fwd_clock_mono() - t0;
	} while (id_dt < 0.2);

	med_topo = median(t_topo, RUNS); /* sorts: [0] is min, [RUNS-1] max */
	med_policy = median(t_policy, RUNS);
	printf("topology %s: %zu nodes, %zu forwarders, %zu mapping "
	       "entries (checksum %ld)\n",
	       topo_path, t->n_nodes, t->n_forwarders, t->n_mapping, sum);
	bench_figure("topology", "load+validate topology, median",
		     med_topo * 1e3, "ms", median(t_read, RUNS) * 1e3,
		     "reading the file");
	bench_figure("topology", "load+validate policy, median",
		     med_policy * 1e3, "ms", med_topo * 1e3,
		     "loading the topology");
	bench_figure("topology", "node name -> default forwarder",
		     (double)lookups / dt / 1e6, "M/s",
		     (double)id_lookups / id_dt / 1e6, "by node id");
	topo_destroy(t);
	return 0;
}
