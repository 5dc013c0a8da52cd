/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_POLICIES_CAPS_ROOM_H
#define FWD_POLICIES_CAPS_ROOM_H

/*
 * policy_caps_room(): whether the policy's caps leave any forwarder of
 * the topology's idle pool (its backup forwarders) to a job.  Returns 1
 * and a warning in warn[] naming the cap and the value that would allow
 * an upgrade when they leave none (every upgrade is refused on this
 * machine), else 0 and "".  `topo_name` names the topology in the text.
 * Read by `fwdctl policy check`, the controller prolog's first run and
 * the controller service.
 */

#include <stddef.h>

struct policy;
struct topology;

int policy_caps_room(const struct policy *p, const struct topology *t,
		     const char *topo_name, char *warn, size_t len);

#endif
