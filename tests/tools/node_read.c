/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_read POLICY JOB NODE: what the SPANK job prolog reads on NODE for
 * JOB (fwdalloc_node_decision(), with the node account of POLICY), for the
 * integration tests.  Prints one line per forwarder serving NODE,
 * "<action> <forwarder> <address or ->", "direct (no forwarder)" when the
 * job's action direct covers NODE, "no decision" when the job holds no
 * rows, or the error on stderr with exit status 1.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "policies/policy.h"
#include "spank/fwdalloc.h"

int main(int argc, char **argv)
{
	struct fwdalloc_node_decision nd;
	struct policy *p;
	fwd_error_t err;
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: node_read POLICY JOB NODE\n");
		return 2;
	}
	if (!(p = policy_load(argv[1], &err))) {
		fprintf(stderr, "node_read: %s\n", err.text);
		return 1;
	}
	r = fwdalloc_node_decision(p, (uint32_t)strtoul(argv[2], NULL, 10),
				   argv[3], &nd, &err);
	if (r < 0)
		fprintf(stderr, "node_read: %s\n", err.text);
	else if (r == 0)
		printf("no decision\n");
	if (r > 0 && nd.direct)
		printf("direct (no forwarder)\n");
	for (size_t i = 0; r > 0 && i < nd.n; i++)
		printf("%s %s %s\n", nd.action, nd.t[i].name,
		       nd.t[i].address ? nd.t[i].address : "-");
	policy_destroy(p);
	return r < 0 ? 1 : 0;
}
