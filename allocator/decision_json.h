/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_ALLOCATOR_DECISION_JSON_H
#define FWD_ALLOCATOR_DECISION_JSON_H

/*
 * The decision's JSON (decision_json.c): the decision printed and audited
 * as JSON (alloc_decision_json(), and alloc_decision_to_json() declared
 * in decide.h with the decision), and the JSON inputs of the offline decision
 * (`fwdctl decide`): JOB.json, STATE.json, HEALTH.json.  (The simulator reads
 * CSV, sim/sim.h.)  Inputs are parsed strictly with jansson: every error names
 * the file, the field path and the value: `job.json: profile.iops: -3:
 * must not be negative`, `state.json: [2].forwarders[0]: "fwd999": unknown
 * forwarder`.  Unknown keys are errors too (a typo must not silently
 * change a decision).
 *
 * JOB.json:
 *   {"job_id": "123" | 123, "user", "account", "name", "partition",
 *    "nodes": "<slurm hostlist>",
 *    "request": "auto|scale|isolate|off|shadow" (absent: none),
 *    "profile": null | {"io_volume_bytes", "io_nodes",
 *        "node_bandwidth_bps", "peak_bandwidth_bps", "iops", "mdops",
 *        "metadata_queue", "io_mode": "N-N|N-1|N-M|1-1", "runs",
 *        "bandwidth_by_forwarders": {"1": bps, "2": bps, ...}}}
 *   job_id and nodes are required; the other strings are optional; every
 *   profile field is optional (0 / unknown mode), never negative.
 *
 * STATE.json, the ledger: either an array of allocations or
 *   {"allocations": [...], "last_release": {"fwd081": epoch, ...}};
 *   an allocation is {"job_id", "forwarders": [names], "private": bool,
 *   "io_mode", "mdops", "bandwidth_bps", "iops"} plus optional
 *   "private_forwarders": [names] (a subset held privately when "private"
 *   is false, as a scaled job holds its extras), "n_nodes", "action",
 *   "acquired_at".
 *
 * HEALTH.json: [{"kind": "forwarder|ost", "name", "state":
 *   "ok|suspect|excluded"}]; unnamed ones are ok; a name listed twice is an
 *   error.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "common/error.h"

struct topology;

/* A parsed JOB.json; `job` points into it. */
struct alloc_jobfile {
	struct alloc_job job;
	struct alloc_profile profile;
	char *job_id, *user, *account, *name, *partition, *nodes;
	uint32_t *node_ids;
};

struct alloc_jobfile *alloc_jobfile_parse(const struct topology *t,
					  const char *text, const char *what,
					  fwd_error_t *err);
struct alloc_jobfile *alloc_jobfile_load(const struct topology *t,
					 const char *path, fwd_error_t *err);
void alloc_jobfile_destroy(struct alloc_jobfile *j);

/* Add STATE.json's allocations to a ledger (usually empty).  On error the
 * entries added so far stay; callers discard the ledger. */
int alloc_state_parse(struct alloc_ledger *l, const char *text,
		      const char *what, fwd_error_t *err);
int alloc_state_load(struct alloc_ledger *l, const char *path,
		     fwd_error_t *err);
/* The ledger in STATE.json form (object form), malloc'd; jansson flags. */
char *alloc_state_to_json(const struct alloc_ledger *l, size_t flags);

/* A parsed HEALTH.json; `health` points into it. */
struct alloc_healthfile {
	struct alloc_health health;
	enum fwd_health *forwarder; /* n_forwarders */
	enum fwd_health *ost;	    /* n_osts */
};

struct alloc_healthfile *alloc_healthfile_parse(const struct topology *t,
						const char *text,
						const char *what,
						fwd_error_t *err);
struct alloc_healthfile *alloc_healthfile_load(const struct topology *t,
					       const char *path,
					       fwd_error_t *err);
void alloc_healthfile_destroy(struct alloc_healthfile *h);

/*
 * The decision as a JSON object, the fields alloc_decision_to_json()
 * (decide.h) serialises, for callers that embed it in a larger record.
 * New reference, or NULL when out of memory.
 */
json_t *alloc_decision_json(const struct alloc_decision *d);

#endif
