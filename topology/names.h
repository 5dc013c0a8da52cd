/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_TOPOLOGY_NAMES_H
#define FWD_TOPOLOGY_NAMES_H

/*
 * Inside topology/: building, checking and freeing the node names' split
 * (topology.h, struct topo_names).
 */

#include <stdbool.h>

#include "topology/topology.h"

/* The split and who owns its arrays: built (malloc'd, freed here) or
 * borrowed from the compiled cache's mapping (only the prefixes and
 * classes arrays themselves are malloc'd). */
struct topo_names_store {
	struct topo_names n;
	bool borrowed;
};

/* Split names[0..n_nodes).  0, or -1 with errno ENOMEM. */
int topo_names_build(struct topo_names_store *s, const char *const *names,
		     size_t n_nodes);
/* Every index in range (for a split read from the cache).  0 or -1. */
int topo_names_check(const struct topo_names *nm, size_t n_nodes);
void topo_names_free(struct topo_names_store *s);

/*
 * For the compiled cache, after topo_adopt_nodes(): the stored split,
 * checked (every index in range; t takes s over, or -1 with err and the
 * caller keeps it); and the mapping (mmap) the adopted arrays live in,
 * unmapped by topo_destroy() instead of freeing them.
 */
int topo_adopt_names(struct topology *t, const struct topo_names_store *s,
		     fwd_error_t *err);
void topo_adopt_mapping(struct topology *t, void *map, size_t len);

#endif
