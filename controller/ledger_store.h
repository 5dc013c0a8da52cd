/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_LEDGER_STORE_H
#define FWD_CONTROLLER_LEDGER_STORE_H

/*
 * The ledger as stored: the `allocations` and `jobs` tables
 * (db/SCHEMA.md), owned here.  Every statement on them is in
 * ledger_store.c; other modules call these functions.  (The in-memory
 * ledger the decision reads is allocator/ledger.h; ledger_store_load()
 * fills one.)  Prepared statements only.  Functions return 0 / -1 with
 * errno and err; they never print.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "common/error.h"
#include "controller/job.h"

struct db;
struct topology;

/*
 * The decision lock: every controller decision and every reconcile runs in
 * a transaction that starts by locking the one row of `decision_lock`
 * (SELECT ... FOR UPDATE, db_begin_locked()), so two launches never hand
 * out the same private forwarder, and the ledger the decision reads holds
 * everything the previous holder committed.  Only accounts that may read
 * the table can take it: not the node account (db/SCHEMA.md).
 *
 * Start that transaction, waiting at most timeout seconds for the lock;
 * on timeout -1 with errno EAGAIN and "decision lock held elsewhere for
 * more than <t>s" (the prolog's fallback reason).  db_commit() or
 * db_rollback() ends the transaction and releases the lock.
 */
int ledger_store_lock(struct db *db, double timeout, fwd_error_t *err);

/* Insert or refresh the job's row in `jobs` (state RUNNING, start_at). */
int ledger_store_job_start(struct db *db, const struct ctl_job *j, double now,
			   fwd_error_t *err);
/* Set end_at and state ("COMPLETED", "GONE", ...) of the job. */
int ledger_store_job_end(struct db *db, uint64_t job_num, const char *state,
			 double now, fwd_error_t *err);

/*
 * Fill an empty ledger from the unreleased rows of `allocations`, and the
 * per-forwarder last release times (the latest released_at of each
 * forwarder's rows, for least-recently-used selection).  Rows naming a
 * forwarder the topology no longer has are skipped (counted in *skipped,
 * may be NULL).
 */
int ledger_store_load(struct db *db, struct alloc_ledger *l, size_t *skipped,
		      fwd_error_t *err);

/*
 * Write the decision's rows: one per forwarder in the mapping with the
 * nodes it serves (for shadow: the default forwarders, action "shadow",
 * which node prologs do not apply).  The caller holds the decision lock
 * (its transaction, ledger_store_lock()).  A forwarder already held privately
 * by another job is an error (errno EEXIST).
 */
int ledger_store_write(struct db *db, const struct topology *t,
		       const struct alloc_decision *d, const struct ctl_job *j,
		       double now, fwd_error_t *err);

/*
 * Release the job's unreleased rows (idempotent) with `reason`
 * ("epilog", "reconcile").  *released (may be NULL) receives the number of
 * rows released.  When rows were released, the forwarders the job held
 * (ledger_store_job_forwarders()) get forwarders.last_used_at = now
 * (monitor/inventory.h).
 */
int ledger_store_release(struct db *db, uint64_t job_num, const char *reason,
			 double now, uint64_t *released, fwd_error_t *err);

/*
 * The allocation rows that mean a job held the forwarder: every row but a
 * shadow decision's (a shadow job runs on its defaults and node prologs
 * apply nothing), released or not.  The one definition, for every query
 * of the controller that asks what a job held.
 */
#define LEDGER_HELD_WHERE "action <> 'shadow'"

/*
 * The distinct forwarders job J held (LEDGER_HELD_WHERE), sorted by name.  *names is a malloc'd array
 * of malloc'd strings (ledger_store_names_free()); *n may be 0.
 */
int ledger_store_job_forwarders(struct db *db, uint64_t job_num, char ***names,
				size_t *n, fwd_error_t *err);
void ledger_store_names_free(char **names, size_t n);

/* The jobs holding unreleased rows, ascending; *jobs malloc'd. */
int ledger_store_held_jobs(struct db *db, uint64_t **jobs, size_t *n,
			   fwd_error_t *err);

/* One row of `allocations`, as `fwdctl alloc` shows it. */
struct ledger_row {
	uint64_t job_id;
	char *action;	 /* "scale", ..., "shadow" */
	char *forwarder; /* name */
	bool is_private;
	char *nodes; /* the hostlist it serves */
	uint64_t node_count;
	int64_t acquired_at;
	bool released;
	int64_t released_at;  /* when released */
	char *release_reason; /* NULL while held or when none was given */
};

/* Every unreleased row, by job then insertion. */
int ledger_store_held(struct db *db, struct ledger_row **rows, size_t *n,
		      fwd_error_t *err);
/* Every row of one job, held or released, in insertion order. */
int ledger_store_job_rows(struct db *db, uint64_t job_num,
			  struct ledger_row **rows, size_t *n,
			  fwd_error_t *err);
void ledger_store_rows_free(struct ledger_row *rows, size_t n);

#endif
