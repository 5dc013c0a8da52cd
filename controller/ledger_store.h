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
struct db_config;
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

/*
 * How many times a decision transaction runs at most.  On a Galera
 * cluster (db/SCHEMA.md, "A cluster") two controllers' decisions
 * on different servers may conflict; the server then rolls one back with
 * ER_LOCK_DEADLOCK at a statement or at COMMIT, and the transaction must
 * be run again from its start.
 */
#define LEDGER_STORE_TX_ATTEMPTS 5

/*
 * After attempt *attempt (1 = the first) of a decision transaction failed
 * with errno `cause`: when the failure is worth running the transaction
 * again and attempts are left, roll the transaction back, wait a short
 * randomised back-off (10 ms doubling per attempt, at most 160 ms), count
 * the attempt and return true; the caller then starts over from
 * db_begin(), rebuilding everything it read inside the transaction.  Else
 * return false (err gains "after N attempts" when conflicts used them
 * up).  Worth another run: db_err_retryable(cause) (a deadlock, a
 * certification failure or a brute-force abort), and EEXIST, which inside
 * the decision transaction can only mean that a private forwarder the
 * decision chose was taken by a decision this one could not yet see.
 * Work done before db_begin() (the job's row, the profile lookup) is not
 * repeated.
 */
bool ledger_store_tx_retry(struct db *db, int cause, unsigned int *attempt,
			   fwd_error_t *err);

/* The back-off before attempt+1, in ms: 10 ms doubling per attempt plus a
 * random part below that (from seed), at most 160 ms. */
long ledger_store_tx_backoff_ms(unsigned int attempt, unsigned int seed);

/*
 * After attempt *attempt of a decision lost its connection
 * (db_err_unavailable(cause)) while the policy lists several endpoints
 * (database.hosts, a cluster) and attempts are left: close *db, connect
 * again (db_connect() tries the endpoints in order, so a dead server is
 * passed over) and count the attempt.  Returns 1 when reconnected (the
 * new connection holds no lock and no transaction), 0 when not
 * applicable (*db untouched), -1 when reconnecting failed (*db is then
 * NULL; err says why).  A transaction that lost its connection before
 * COMMIT was rolled back by the server (or died with it) and may be run
 * again; one lost at COMMIT may or may not have taken effect
 * (ledger_store_has_rows()).
 */
int ledger_store_tx_reconnect(struct db **db, const struct db_config *cfg,
			      int cause, unsigned int *attempt,
			      fwd_error_t *err);

/* Whether job_num has allocation rows (1) or none (0); -1 on error.  After
 * a COMMIT whose answer was lost, this tells whether it took effect. */
int ledger_store_has_rows(struct db *db, uint64_t job_num, fwd_error_t *err);

/* Insert or refresh the job's row in `jobs` (state RUNNING, start_at). */
int ledger_store_job_start(struct db *db, const struct ctl_job *j, double now,
			   fwd_error_t *err);
/* Set end_at and state ("COMPLETED", "GONE", ...) of the job. */
/*
 * A job that ran before fwdalloc saw it (Slurm accounting): its row in
 * jobs when there is none (a row the prolog wrote is kept).  1 inserted,
 * 0 already there, -1 error.
 */
int ledger_store_job_import(struct db *db, uint64_t job_num, const char *user,
			    const char *account, const char *name,
			    const char *partition, const char *nodelist,
			    uint32_t n_nodes, int64_t start, int64_t end,
			    const char *state, int64_t now, fwd_error_t *err);

int ledger_store_job_end(struct db *db, uint64_t job_num, const char *state,
			 double now, fwd_error_t *err);

/* One row of `jobs`: what Slurm told the controller about a job. */
struct ledger_job {
	uint64_t job_id;
	char user[65];
	char account[65]; /* "" when NULL */
	char name[256];
	char partition[65]; /* "" when NULL */
	char *nodelist;	    /* malloc'd, "" when NULL */
	uint32_t node_count;
	int64_t start_at; /* -1 when NULL */
	int64_t end_at;	  /* -1 when NULL (running) */
	char state[33];
	char request[17]; /* "" when NULL */
};

/*
 * The `jobs` row of job J into *out (ledger_store_job_clear() frees it).
 * 0 found, 1 no such job (*out zeroed), -1 error.
 */
int ledger_store_job_get(struct db *db, uint64_t job_num,
			 struct ledger_job *out, fwd_error_t *err);
void ledger_store_job_clear(struct ledger_job *j);

/*
 * Fill an empty ledger from the unreleased rows of `allocations`, and the
 * per-forwarder last release times (forwarders.last_used_at, which
 * ledger_store_release() keeps: the latest released_at of each
 * forwarder's rows, for least-recently-used selection).  Neither read
 * grows with the released history.  Rows naming a
 * forwarder the topology no longer has are skipped (counted in *skipped,
 * may be NULL).
 */
int ledger_store_load(struct db *db, struct alloc_ledger *l, size_t *skipped,
		      fwd_error_t *err);

/*
 * A ledger kept in memory across decisions (the controller service's),
 * brought up to date by reading only what changed.  After a release
 * commits, the releases of the last LEDGER_STAMP_WINDOW seconds not
 * numbered yet take the next number of the `ledger_version` row
 * (`released_seq`), in a transaction holding the row to its commit, so
 * the numbers commit in order; a release that finds the row held leaves
 * the numbering to the next.  New rows are written under the decision
 * lock.  A mark is where a ledger stands: the largest release number and
 * the largest allocation id it has read.
 *
 * ledger_store_load_marked(): the unreleased rows into l (mark NULL: as
 * ledger_store_load() without the last release times), and *mark where
 * that ledger stands.  ledger_store_load_changes(): the releases
 * numbered after mark->released_seq and the recent ones not numbered yet
 * leave l, the held rows after mark->max_id join it, and *mark moves on;
 * one statement, whatever the number of jobs held.  Both with the
 * decision lock held (no new row can commit meanwhile).  0, or -1 with
 * errno and err: a job among the new rows that l holds already (EEXIST,
 * l is then half changed: load it afresh), a missing ledger_version row
 * (ENOENT, ledger_store_load_marked()).
 */
#define LEDGER_STAMP_WINDOW 3600
struct ledger_mark {
	uint64_t released_seq;
	uint64_t max_id;
};
int ledger_store_load_marked(struct db *db, struct alloc_ledger *l,
			     struct ledger_mark *mark, size_t *skipped,
			     fwd_error_t *err);
int ledger_store_load_changes(struct db *db, struct alloc_ledger *l,
			      struct ledger_mark *mark, size_t *skipped,
			      fwd_error_t *err);

/*
 * The other half of ledger_store_load(), for a caller that keeps the last
 * release times a while (the controller service: they only order the
 * least recently used first, and a burst's batches share one read): each
 * forwarder's last release into when[0..t->n_forwarders) (0: none
 * recorded; alloc_ledger_set_last_releases() applies them).  0, or -1
 * with err.
 */
int ledger_store_last_used(struct db *db, const struct topology *t,
			   double *when, fwd_error_t *err);

/* One allocation row of a decision, as ledger_store_write() stores it. */
struct ledger_alloc_row {
	uint32_t fwd;	       /* the forwarder's index in the topology */
	const char *forwarder; /* its name (the topology's) */
	bool priv;
	char *nodes; /* the nodes it serves, a ranged hostlist */
	size_t count;
};

/*
 * The rows ledger_store_write() stores for decision d of job j, in the
 * order it stores them (the order of their ids): *n rows into *rows, to
 * free with ledger_store_decision_rows_free(d, ...).  0, or -1 with err.
 */
int ledger_store_decision_rows(const struct topology *t,
			       const struct alloc_decision *d,
			       const struct ctl_job *j,
			       struct ledger_alloc_row **rows, size_t *n,
			       fwd_error_t *err);
void ledger_store_decision_rows_free(const struct alloc_decision *d,
				     struct ledger_alloc_row *rows, size_t n);

/*
 * Write the decision's rows, those ledger_store_decision_rows() built for
 * d (n of them): one per forwarder in the mapping with the nodes it serves
 * (for shadow: the default forwarders, action "shadow", which node
 * prologs do not apply).  The caller holds the decision lock (its
 * transaction, ledger_store_lock()).  A forwarder already held privately
 * by another job is an error (errno EEXIST).
 */
int ledger_store_write(struct db *db, const struct alloc_decision *d,
		       const struct ctl_job *j,
		       const struct ledger_alloc_row *rows, size_t n,
		       double now, fwd_error_t *err);

/*
 * Release the job's unreleased rows (idempotent) with `reason`
 * ("epilog", "reconcile").  *released (may be NULL) receives the number of
 * rows released.  When rows were released, the forwarders they name (a
 * shadow decision's defaults included: its job ran on them) get
 * forwarders.last_used_at = now (monitor/inventory.h), the
 * least-recently-used order ledger_store_load() reads.
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
 * The distinct forwarders job J held (LEDGER_HELD_WHERE), sorted by name.
 * *names is a malloc'd array of malloc'd strings (ledger_store_names_free());
 * *n may be 0.
 */
int ledger_store_job_forwarders(struct db *db, uint64_t job_num, char ***names,
				size_t *n, fwd_error_t *err);
void ledger_store_names_free(char **names, size_t n);

/* *priv = whether job J held forwarders (LEDGER_HELD_WHERE) and every one
 * of its rows was private (isolated, or k private forwarders): how the
 * bandwidth its run achieved counts in its application's curve. */
int ledger_store_job_private(struct db *db, uint64_t job_num, bool *priv,
			     fwd_error_t *err);

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
	/* what the decision expected of the job (neighbour checks) */
	char io_mode[8];			/* "" when NULL */
	double mdops_rate, bandwidth_bps, iops; /* 0 when NULL */
};

/* Every unreleased row, by job then insertion. */
int ledger_store_held(struct db *db, struct ledger_row **rows, size_t *n,
		      fwd_error_t *err);
/* Every row of one job, held or released, in insertion order. */
int ledger_store_job_rows(struct db *db, uint64_t job_num,
			  struct ledger_row **rows, size_t *n,
			  fwd_error_t *err);
void ledger_store_rows_free(struct ledger_row *rows, size_t n);
/*
 * The rows held at some time in [from, to): acquired before `to`, not
 * released before `from` (held rows included), by job then insertion.
 * Reads the held rows and the acquisitions of [from less the longest hold
 * ever released, to): what it reads does not grow with the history after
 * `to` (schema version 13).
 */
int ledger_store_rows_between(struct db *db, int64_t from, int64_t to,
			      struct ledger_row **rows, size_t *n,
			      fwd_error_t *err);

/*
 * Retention of the ledger (policy retention.allocations, retention.jobs):
 * rows of `allocations` released before now minus the setting (held rows
 * are never pruned) and rows of `jobs` that ended before theirs, deleted
 * in batches (db_prune_before()).  Appends a line per table to out[*n]
 * (room for LEDGER_STORE_PRUNE_TABLES more).  0, or -1 with err.
 */
#define LEDGER_STORE_PRUNE_TABLES 2
struct db_pruned;
struct policy_retention;
int ledger_store_prune(struct db *db, const struct policy_retention *r,
		       int64_t now, bool dry_run, struct db_pruned *out,
		       size_t *n, fwd_error_t *err);

#endif
