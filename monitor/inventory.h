/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_INVENTORY_H
#define FWD_MONITOR_INVENTORY_H
/*
 * The component inventory: the `forwarders` and `osts` tables, owned here.
 */
#include <stddef.h>

#include "common/error.h"

struct db;
struct topology;

/*
 * Mirror the topology's forwarders (name, address, group, role, peak) and
 * OSTs into the forwarders and osts tables, in one transaction.  Rows are
 * upserted by name; forwarders.last_used_at (the ledger's) is kept; rows
 * no longer in the topology are left alone (the ledger may name them).
 */
int inventory_sync(struct db *db, const struct topology *t, fwd_error_t *err);

/*
 * The ledger released an allocation on these forwarders at `when`: set
 * their last_used_at to it (never moving it backwards).  Names without a
 * row (never mirrored) are skipped.  0, or -1 with errno and err.
 */
int inventory_touch_forwarders(struct db *db, const char *const *names,
			       size_t n, double when, fwd_error_t *err);

#endif
