/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_INVENTORY_H
#define FWD_MONITOR_INVENTORY_H
/*
 * The component inventory: the `forwarders` and `osts` tables, owned here.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct db;
struct topology;

/*
 * Mirror the topology's forwarders (name, address, group, role, peak) and
 * OSTs into the forwarders and osts tables, in one transaction.  Rows are
 * upserted by name, their retired_at cleared; forwarders.last_used_at (the
 * ledger's) is kept.  Rows no longer in the topology are kept (the
 * ledger, the audit and health history name them) but retired: retired_at
 * set to now, once.  *retired_fwd, *retired_ost: how many this call
 * retired (either may be NULL).  0, or -1 with errno and err.
 */
int inventory_sync(struct db *db, const struct topology *t,
		   uint64_t *retired_fwd, uint64_t *retired_ost,
		   fwd_error_t *err);

/*
 * The names of the retired forwarders (ost false) or OSTs and MDTs (ost
 * true), sorted (strcmp), malloc'd: free with inventory_names_free().
 * 0, or -1 with errno and err.
 */
int inventory_retired(struct db *db, bool ost, char ***names, size_t *n,
		      fwd_error_t *err);
void inventory_names_free(char **names, size_t n);

/*
 * The ledger released an allocation on these forwarders at `when`: set
 * their last_used_at to it (never moving it backwards).  A name without a
 * row (never mirrored) gets one with no address and no peak, so that the
 * ledger's least-recently-used order never has to be read from its
 * history.  0, or -1 with errno and err.
 */
int inventory_touch_forwarders(struct db *db, const char *const *names,
			       size_t n, double when, fwd_error_t *err);

/*
 * fn(name, last_used_at, arg) for every forwarder row that has a
 * last_used_at: 240 rows on TaihuLight, however long the ledger's
 * history.  0, or -1 with errno and err.
 */
int inventory_last_used(struct db *db,
			void (*fn)(const char *name, double when, void *arg),
			void *arg, fwd_error_t *err);

/*
 * Every component's benchmarked peak bandwidth as mirrored: forwarders
 * (kind "fwd") and the osts table's targets (kind "ost" or "mdt"), those
 * with a known peak (> 0) only, sorted by kind then name (strcmp), in a
 * malloc'd *out of *n entries.  At most INVENTORY_MAX_PEAKS rows.  0, or
 * -1 with errno and err.
 */
#define INVENTORY_MAX_PEAKS 1000000
struct inventory_peak {
	char kind[4];
	char name[129];
	double bandwidth_bps;
};
int inventory_peaks(struct db *db, struct inventory_peak **out, size_t *n,
		    fwd_error_t *err);
/* The entry for (kind, name) in a sorted array, or NULL. */
const struct inventory_peak *inventory_peak_find(const struct inventory_peak *p,
						 size_t n, const char *kind,
						 const char *name);

#endif
