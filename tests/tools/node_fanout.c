/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_fanout POLICY JOB N PREFIX [LIMIT]: N node prologs of JOB at once
 * (bench/fanout.h), for nodes PREFIX1..PREFIXN, each killed after LIMIT
 * seconds (default 30).  One line per node:
 *   "<node> <file|db> <action> <fwd=address,...>"   read (targets "-"
 *                                                   when none serve it)
 *   "<node> <file|db> no-decision"                  the job has no rows
 *   "<node> fallback <why>"                         kept its defaults
 * then "fanout: n=N file=F db=D fallbacks=K no_decision=Z timed_out=T
 * p50_ms=.. p99_ms=.. max_ms=.. wall_ms=..".  Exit status 1 when the
 * processes could not be started.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench/fanout.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"

int main(int argc, char **argv)
{
	struct fanout_node *nodes;
	struct fanout_stats st;
	struct policy *p;
	fwd_error_t err;
	size_t n;
	double limit = 30;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: node_fanout POLICY JOB N PREFIX "
				"[LIMIT]\n");
		return 2;
	}
	n = strtoul(argv[3], NULL, 10);
	if (argc == 6)
		limit = strtod(argv[5], NULL);
	if (n < 1 || n > 65536 || !(limit > 0 && limit <= 600)) {
		fprintf(stderr, "node_fanout: N in 1..65536, LIMIT in "
				"(0, 600]\n");
		return 2;
	}
	if (!(p = policy_load(argv[1], &err))) {
		fprintf(stderr, "node_fanout: %s\n", err.text);
		return 1;
	}
	if (!(nodes = calloc(n, sizeof(*nodes))) ||
	    fanout_run(p, (uint32_t)strtoul(argv[2], NULL, 10), argv[4], n,
		       limit, nodes, &st) < 0) {
		policy_destroy(p);
		free(nodes);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fanout_node *f = &nodes[i];
		const char *src =
			f->source == FWDALLOC_SOURCE_FILE ? "file" : "db";

		if (f->fallback)
			printf("%s%zu fallback %s\n", argv[4], i + 1, f->err);
		else if (f->r == 0)
			printf("%s%zu %s no-decision\n", argv[4], i + 1, src);
		else
			printf("%s%zu %s %s %s\n", argv[4], i + 1, src,
			       f->action, f->targets[0] ? f->targets : "-");
	}
	printf("fanout: n=%zu file=%zu db=%zu fallbacks=%zu no_decision=%zu "
	       "timed_out=%zu p50_ms=%.2f p99_ms=%.2f max_ms=%.2f "
	       "wall_ms=%.0f\n",
	       st.n, st.from_file, st.from_db, st.fallbacks, st.no_decision,
	       st.timed_out, st.p50 * 1e3, st.p99 * 1e3, st.max * 1e3,
	       st.wall * 1e3);
	policy_destroy(p);
	free(nodes);
	return 0;
}
