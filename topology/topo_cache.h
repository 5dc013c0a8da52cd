/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_TOPOLOGY_TOPO_CACHE_H
#define FWD_TOPOLOGY_TOPO_CACHE_H

/*
 * The compiled topology: what topo_load() builds from the YAML (40,960
 * node names expanded from hostlists, the default mapping, the name
 * index), stored in one binary file so that a process that runs once per
 * job (the controller prolog) reads it instead of parsing and expanding
 * the YAML again.
 *
 * The file holds a header (magic, format version, byte order, and the
 * YAML's size, modification time and SHA-256) and the topology's contents
 * followed by a checksum of them.  It is used only when the header matches
 * the YAML as it is now and the checksum matches the contents; anything
 * else (another format, another machine's byte order, a truncated or
 * corrupt file, an edited YAML) is ignored and the YAML is loaded instead,
 * and the cache rewritten: to a temporary file in the same directory,
 * renamed over the old one, so a reader sees the old file or the new one,
 * never half of one.
 */

#include <stdbool.h>

#include "common/error.h"
#include "topology/topology.h"

enum topo_cache_use {
	TOPO_CACHE_HIT,	    /* read from the cache */
	TOPO_CACHE_WRITTEN, /* YAML loaded, cache (re)written */
	TOPO_CACHE_YAML,    /* YAML loaded, cache unusable and not written
			     * (why in cache_err) */
};

/*
 * The topology of YAML file `path`, through the cache file `cache`
 * (NULL: no cache, plain topo_load()).  NULL with err (the YAML's error)
 * when the YAML does not load; a cache problem is never an error: *how
 * (may be NULL) says what happened and cache_err (may be NULL; empty on a
 * hit) why the cache was not used (TOPO_CACHE_WRITTEN) or not written
 * (TOPO_CACHE_YAML).
 */
struct topology *topo_load_cached(const char *path, const char *cache,
				  enum topo_cache_use *how,
				  fwd_error_t *cache_err, fwd_error_t *err);

/*
 * The two halves, for tests.  topo_cache_write stores t (loaded from
 * `path`, whose bytes are checked now) into `cache` atomically;
 * topo_cache_read returns the topology stored in `cache` if it is valid
 * for `path` as it is now, else NULL with err saying why.
 */
int topo_cache_write(const struct topology *t, const char *path,
		     const char *cache, fwd_error_t *err);
struct topology *topo_cache_read(const char *path, const char *cache,
				 fwd_error_t *err);

#endif
