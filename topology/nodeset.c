/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Node sets: a Slurm hostlist as topology node ids, and the distinct
 * default forwarders of a set of nodes (the job's N_f, DESIGN.md "The
 * decision" step 1).  Every module that needs "the forwarders these nodes
 * use by default" asks here: the allocator, the simulator, the controller
 * prolog's fallback record, the health scan.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/slurm_compat.h"
#include "topology/topology.h"

int topo_hostlist_nodes(const struct topology *t, const char *hostlist,
			uint32_t **ids_out, size_t *n_out, fwd_error_t *err)
{
	fwd_hostlist_t hl = NULL;
	uint8_t *seen = NULL;
	uint32_t *ids = NULL;
	char *host = NULL;
	size_t n = 0;
	int count, rv = -1;

	if (!hostlist || !*hostlist) {
		errno = EINVAL;
		return errprintf(err, "empty node list");
	}
	hl = slurm_hostlist_create(hostlist);
	if (!hl || (count = slurm_hostlist_count(hl)) <= 0) {
		errno = EINVAL;
		errprintf(err, "\"%s\": not a valid Slurm hostlist", hostlist);
		goto out;
	}
	ids = malloc((size_t)count * sizeof(*ids));
	seen = calloc(t->n_nodes ? t->n_nodes : 1, 1);
	if (!ids || !seen) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	while ((host = slurm_hostlist_shift(hl))) {
		long id = topo_node_id(t, host);

		if (id < 0) {
			errno = EINVAL;
			errprintf(err, "node %s is not in the topology", host);
			goto out;
		}
		if (seen[id]) {
			errno = EINVAL;
			errprintf(err, "node %s listed twice", host);
			goto out;
		}
		seen[id] = 1;
		ids[n++] = (uint32_t)id;
		free(host);
		host = NULL;
	}
	*ids_out = ids;
	*n_out = n;
	ids = NULL;
	rv = 0;
out:
	free(host);
	free(ids);
	free(seen);
	if (hl)
		slurm_hostlist_destroy(hl);
	return rv;
}

int topo_default_forwarders(const struct topology *t, const uint32_t *ids,
			    size_t n, uint32_t *count, uint32_t *fwd,
			    size_t *n_fwd, fwd_error_t *err)
{
	const int32_t *nf = t->node_forwarder;
	size_t k = *n_fwd;
	int32_t last = -1;
	uint32_t run = 0; /* further nodes of `last` not yet counted */
	int rv = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];
		int32_t f;

		if (id >= t->n_nodes) {
			errno = EINVAL;
			rv = errprintf(err,
				       "node id %u outside the topology (%zu "
				       "nodes)",
				       id, t->n_nodes);
			break;
		}
		f = nf[id];
		if (f < 0) {
			errno = EINVAL;
			rv = errprintf(err, "node %s has no default forwarder",
				       t->node_names[id]);
			break;
		}
		/* Neighbouring nodes mostly share a forwarder: count a run
		 * at its end rather than node by node. */
		if (f == last) {
			run++;
			continue;
		}
		if (run)
			count[last] += run;
		run = 0;
		last = f;
		if (count[f]++ == 0)
			fwd[k++] = (uint32_t)f;
	}
	if (run)
		count[last] += run;
	*n_fwd = k;
	return rv;
}

int topo_hostlist_default_forwarders(const struct topology *t,
				     const char *hostlist, uint32_t **fwd_out,
				     size_t *n_out, size_t *n_unknown,
				     fwd_error_t *err)
{
	fwd_hostlist_t hl = NULL;
	uint32_t *count = NULL, *fwd = NULL;
	size_t n = 0, unknown = 0;
	char *host;
	int rv = -1;

	if (!hostlist || !*hostlist) {
		errno = EINVAL;
		return errprintf(err, "empty node list");
	}
	hl = slurm_hostlist_create(hostlist);
	if (!hl || slurm_hostlist_count(hl) <= 0) {
		errno = EINVAL;
		errprintf(err, "\"%s\": not a valid Slurm hostlist", hostlist);
		goto out;
	}
	count = calloc(t->n_forwarders ? t->n_forwarders : 1, sizeof(*count));
	fwd = malloc((t->n_forwarders ? t->n_forwarders : 1) * sizeof(*fwd));
	if (!count || !fwd) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	while ((host = slurm_hostlist_shift(hl))) {
		long id = topo_node_id(t, host);
		uint32_t u = (uint32_t)id;

		free(host);
		if (id < 0 || t->node_forwarder[id] < 0) {
			unknown++;
			continue;
		}
		/* A covered, mapped node: cannot fail. */
		topo_default_forwarders(t, &u, 1, count, fwd, &n, NULL);
	}
	*fwd_out = fwd;
	*n_out = n;
	if (n_unknown)
		*n_unknown = unknown;
	fwd = NULL;
	rv = 0;
out:
	free(count);
	free(fwd);
	if (hl)
		slurm_hostlist_destroy(hl);
	return rv;
}
