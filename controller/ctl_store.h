/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_CTL_STORE_H
#define FWD_CONTROLLER_CTL_STORE_H

/*
 * The controller's reads and writes of the fwdalloc database (tables in
 * monitor/SCHEMA.md): the jobs table, health, the allocations
 * ledger and the audit table.  Every statement is prepared (monitor/db.h).
 * Functions return 0 / -1 with errno and err; they never print.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "common/error.h"

struct db;
struct policy;
struct topology;

/* A job as PrologSlurmctld / EpilogSlurmctld see it (environment). */
struct ctl_job {
	uint64_t job_num;
	char job_id[24];
	const char *user;
	const char *account;
	const char *name;
	const char *partition;
	const char *nodes; /* SLURM_JOB_NODELIST */
	uint32_t n_nodes;
	enum alloc_request request;
	const char *request_name; /* "scale", ..., or "not requested" */
};

/*
 * Fill j from the Slurm prolog/epilog environment.  SLURM_JOB_ID is
 * required; a SPANK_IO_UPGRADE that is not a known mode is an error (it
 * can only come from outside the plugin).  Strings point into environ.
 */
int ctl_job_from_env(struct ctl_job *j, fwd_error_t *err);

/* Insert or refresh the job's row in `jobs` (state RUNNING, start_at). */
int ctl_store_job_start(struct db *db, const struct ctl_job *j, double now,
			fwd_error_t *err);
/* Set end_at and state (COMPLETED, or the given state) of the job. */
int ctl_store_job_end(struct db *db, uint64_t job_num, const char *state,
		      double now, fwd_error_t *err);

/*
 * Health states of the topology's forwarders and OSTs (absent = ok).
 * The arrays are malloc'd, n_forwarders / n_osts entries.
 */
int ctl_store_health(struct db *db, const struct topology *t,
		     enum alloc_health_state **fwd,
		     enum alloc_health_state **ost, fwd_error_t *err);

/*
 * Fill an empty ledger from the unreleased rows of `allocations`, and the
 * per-forwarder last release times.  Rows naming a forwarder the topology
 * no longer has are skipped (counted in *skipped, may be NULL).
 */
int ctl_store_ledger(struct db *db, struct alloc_ledger *l, size_t *skipped,
		     fwd_error_t *err);

/* Does the job hold unreleased allocation rows?  1 yes, 0 no, -1 error. */
int ctl_store_job_held(struct db *db, uint64_t job_num, fwd_error_t *err);

/*
 * Write the decision's rows: one per forwarder in the mapping with the
 * nodes it serves (for shadow: the default forwarders, action "shadow",
 * which node prologs do not apply).  The caller holds the decision lock
 * and a transaction.
 */
int ctl_store_allocation(struct db *db, const struct topology *t,
			 const struct alloc_decision *d,
			 const struct ctl_job *j, double now, fwd_error_t *err);

/*
 * Release the job's unreleased rows (idempotent).  *released (may be
 * NULL) receives the number of rows released.
 */
int ctl_store_release(struct db *db, uint64_t job_num, const char *reason,
		      double now, uint64_t *released, fwd_error_t *err);

/* Insert the audit record (the same JSON object the file gets). */
int ctl_store_audit(struct db *db, const json_t *record, fwd_error_t *err);

#endif
