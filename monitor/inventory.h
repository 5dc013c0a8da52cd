/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_INVENTORY_H
#define FWD_MONITOR_INVENTORY_H
/*
 * The component inventory: the `forwarders` and `osts` tables, owned here.
 */
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

#endif
