/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The caps against the machine: do they leave any upgrade possible?
 * (policies/caps_room.h)
 */

#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "policies/caps_room.h"
#include "policies/policy.h"
#include "topology/topology.h"

int policy_caps_room(const struct policy *p, const struct topology *t,
		     const char *topo_name, char *warn, size_t len)
{
	const struct policy_caps *c = &p->decision.caps;
	size_t backups = 0, share;

	warn[0] = '\0';
	for (size_t i = 0; i < t->n_forwarders; i++)
		backups += t->forwarders[i].role == TOPO_ROLE_BACKUP;
	share = (size_t)floor(c->max_pool_share * (double)backups);
	if (backups == 0)
		snprintf(warn, len,
			 "topology %s has no backup forwarder: every upgrade "
			 "is refused (the idle pool is empty)",
			 topo_name);
	else if (c->reserve >= backups)
		snprintf(warn, len,
			 "decision.caps.reserve %" PRIu32 " keeps all %zu "
			 "backup forwarder%s of topology %s in reserve: every "
			 "upgrade is refused on this machine; set "
			 "decision.caps.reserve below %zu",
			 c->reserve, backups, backups == 1 ? "" : "s",
			 topo_name, backups);
	else if (share == 0)
		snprintf(warn, len,
			 "decision.caps.max_pool_share %g of the %zu backup "
			 "forwarder%s of topology %s is less than one: every "
			 "upgrade is refused on this machine; set it to at "
			 "least %g",
			 c->max_pool_share, backups, backups == 1 ? "" : "s",
			 topo_name, 1.0 / (double)backups);
	return warn[0] != '\0';
}
