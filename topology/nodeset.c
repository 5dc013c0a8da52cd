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
#include <string.h>

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

size_t topo_forwarder_run(const struct topology *t, const uint32_t *ids,
			  size_t n, size_t i)
{
	const int32_t *nf = t->node_forwarder;
	const uint32_t id = ids[i];
	const int32_t f = nf[id];
	size_t j = i + 1;

	/* eight at a time while the ids and the forwarders all match (no
	 * early exit inside a chunk: the compiler makes it vector compares),
	 * then one by one */
	while (j + 8 <= n && (size_t)id + (j - i) + 8 <= t->n_nodes) {
		const uint32_t base = id + (uint32_t)(j - i);
		const uint32_t *x = ids + j;
		const int32_t *y = nf + base;
		unsigned same = 1;

		for (unsigned k = 0; k < 8; k++)
			same &= (x[k] == base + k) & (y[k] == f);
		if (!same)
			break;
		j += 8;
	}
	while (j < n && ids[j] == id + (j - i) && ids[j] < t->n_nodes &&
	       nf[ids[j]] == f)
		j++;
	return j - i;
}

size_t topo_name_run(const struct topology *t, const struct topo_names *nm,
		     const uint32_t *ids, size_t n, size_t i)
{
	const uint32_t id = ids[i];
	size_t j = i + 1;

	/* as topo_forwarder_run(): eight at a time, then one by one; node
	 * j joins when its id follows and the name before it is followed
	 * (the eight flags read as one word: none of its bytes is 0) */
	while (j + 8 <= n && (size_t)id + (j - i) + 8 <= t->n_nodes) {
		const uint32_t base = id + (uint32_t)(j - i);
		const uint32_t *x = ids + j;
		const uint64_t ones = 0x0101010101010101u;
		uint64_t y;
		unsigned same = 1;

		memcpy(&y, nm->follow + base - 1, sizeof(y));
		for (unsigned k = 0; k < 8; k++)
			same &= x[k] == base + k;
		if (!same || ((y - ones) & ~y & (ones << 7)))
			break;
		j += 8;
	}
	while (j < n && ids[j] == id + (j - i) && ids[j] < t->n_nodes &&
	       nm->follow[ids[j] - 1])
		j++;
	return j - i;
}

int topo_default_forwarders(const struct topology *t, const uint32_t *ids,
			    size_t n, uint32_t *count, uint32_t *fwd,
			    size_t *n_fwd, fwd_error_t *err)
{
	const int32_t *nf = t->node_forwarder;
	size_t k = *n_fwd, run;

	for (size_t i = 0; i < n; i += run) {
		uint32_t id = ids[i];
		int32_t f;

		if (id >= t->n_nodes) {
			errno = EINVAL;
			*n_fwd = k;
			return errprintf(err,
					 "node id %u outside the topology (%zu "
					 "nodes)",
					 id, t->n_nodes);
		}
		f = nf[id];
		if (f < 0) {
			errno = EINVAL;
			*n_fwd = k;
			return errprintf(err,
					 "node %s has no default forwarder",
					 t->node_names[id]);
		}
		/* Neighbouring nodes mostly share a forwarder: a run of
		 * them is counted at once. */
		run = topo_forwarder_run(t, ids, n, i);
		if (count[f] == 0)
			fwd[k++] = (uint32_t)f;
		count[f] += (uint32_t)run;
	}
	*n_fwd = k;
	return 0;
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
