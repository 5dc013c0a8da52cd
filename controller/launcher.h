/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_LAUNCHER_H
#define FWD_CONTROLLER_LAUNCHER_H

/*
 * The controller prolog for a process that lives long (the controller
 * service, service/): what every launch would otherwise rebuild (the
 * allocator's index of the topology, the database connection and its
 * prepared statements, the profiles of recent applications) is kept, and
 * the jobs whose prologs arrive together are decided as one batch
 * (alloc_decide_batch(): the knapsack arbitrates between them) in one
 * transaction under the decision lock.
 *
 * Same contract as ctl_prolog() (controller/hooks.h) per job: a decision
 * committed and audited (file and, with audit.database, table), or the
 * job left on its default mapping with a record "fallback: <why>"; the
 * decision file published; the breaker (database.breaker) honoured and
 * tripped.  The difference: the work runs in the caller's process, each
 * database wait bounded by database.timeout; a batch that cannot commit
 * before the earliest deadline of its jobs is rolled back and every job
 * in it falls back.  A hook that stops waiting runs `fwdctl prolog
 * --abandoned` (ctl_prolog_abandon()), which releases under the decision
 * lock whatever was committed for its job and records the fallback; so
 * that both copies of the audit trail show the two writers' records in
 * one order, each writes its table row and file line under
 * audit_order_lock(), and the launcher writes no record at all for a job
 * whose hook_deadline has passed (its outcome is `unanswered`).
 */

#include <stddef.h>

#include "common/error.h"
#include "controller/hooks.h"
#include "controller/job.h"

struct policy;
struct topology;
struct ctl_launcher;

/*
 * How long a profile read at one launch serves the next launches of the
 * same application and scale, in seconds.  Profiles change when the
 * history loop runs (fwdalloc-history.timer, every few minutes), so a
 * launch never reads an application's history again within a minute.
 * "No history" is kept for CTL_PROFILE_NONE_TTL only: the jobs of a
 * burst share the answer, and an application's first profile (the
 * history loop's, once its first job has ended) is used at once.
 */
#define CTL_PROFILE_TTL 60.0
#define CTL_PROFILE_NONE_TTL 2.0

/*
 * How long the forwarder and OST health read for one batch serves the
 * next, in seconds; the forwarders' last release times (which only order
 * the least recently used first) too.  Health changes with the anomaly
 * scan (fwdalloc-health.timer) and `fwdctl health exclude|include`:
 * within a burst, batches a few milliseconds apart share one read; a
 * launch after a quiet second reads them again.
 */
#define CTL_HEALTH_TTL 1.0
/*
 * How long the ledger kept across batches serves before it is read whole
 * again, in seconds.  Between two reads each batch reads only what
 * changed since the last (ledger_store_load_changes(): the releases and
 * the new rows), however many jobs hold forwarders; a change made to
 * `allocations` other than through controller/ledger_store.c (by hand)
 * is seen within this time.
 */
#define CTL_LEDGER_TTL 60.0

/*
 * A launcher for policy p and topology t (both must outlive it; t may be
 * NULL: every job then falls back, as ctl_prolog() does).  NULL with
 * errno and err.
 */
struct ctl_launcher *ctl_launcher_create(const struct policy *p,
					 const struct topology *t,
					 fwd_error_t *err);
void ctl_launcher_destroy(struct ctl_launcher *L);

/* One job of a batch: the job, when its hook started (the records'
 * elapsed time), the time by which its hook must have its answer (a
 * margin before the next) and the time its hook stops waiting. */
struct ctl_launch {
	struct ctl_job job;
	double t0;
	double deadline;
	double hook_deadline;
};

/*
 * Decide the prologs of jobs[0..n) together; outs[i] answers jobs[i]
 * exactly as ctl_prolog() would (fill, then ctl_outcome_free() each).
 * The database connection is kept for the next call (and opened again
 * when it was lost).
 */
void ctl_launcher_prologs(struct ctl_launcher *L, const struct ctl_launch *jobs,
			  size_t n, struct ctl_outcome *outs);

/* Counters since creation, for the service's log and metrics. */
struct ctl_launcher_stats {
	unsigned long long batches, jobs, decided, fell_back;
	unsigned long long profile_hits, profile_reads, connects;
	/* The ledger read whole (the other batches read its changes). */
	unsigned long long ledger_loads;
	/* Time in each phase, in ms, over all batches: the job rows and
	 * profiles, the health, the transaction (lock to commit), the
	 * decision files and audit lines. */
	double ms_rows, ms_health, ms_tx, ms_publish;
};
void ctl_launcher_stats(const struct ctl_launcher *L,
			struct ctl_launcher_stats *st);

#endif
