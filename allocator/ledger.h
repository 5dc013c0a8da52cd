/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_ALLOCATOR_LEDGER_H
#define FWD_ALLOCATOR_LEDGER_H

/*
 * The allocation ledger, in memory: which running job holds which
 * forwarders (private or shared), with the holder's I/O characteristics
 * (for the neighbour check of the interference rule) and, per forwarder,
 * the time it was last released (for least-recent-load selection).
 *
 * The database layer fills one from its rows (alloc_ledger_add()) or from
 * STATE.json (decision_json.h); the decision reads it; the controller prolog
 * acquires and the epilog releases.  Acquire and release are idempotent: a
 * job already present keeps its entry, releasing an absent job is a no-op.
 * Not thread-safe; callers serialise (the controller holds the global
 * decision lock).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/decide.h"
#include "common/error.h"

struct topology;

struct alloc_ledger_entry {
	char *job_id;
	uint32_t *forwarders; /* topology forwarder indexes, distinct */
	bool *private_fwd;    /* per forwarders[i]: held privately */
	size_t n_forwarders;
	/* Node blocks as decided (positions in the job's node list), or none
	 * (n_blocks 0: the default mapping when the forwarders are the job's
	 * defaults, else balanced blocks). */
	struct alloc_block *blocks;
	size_t n_blocks;
	enum fwd_action action; /* as decided */
	enum fwd_io_mode io_mode;
	size_t n_nodes; /* job size; 0 = unknown */
	/* The nodes the entry was decided for, a hostlist (the rows' node
	 * lists joined by ','), NULL = unknown.  A job that holds an entry
	 * and now has other nodes is decided again (alloc_decision.
	 * redecided). */
	char *nodes;
	double mdops;	      /* metadata ops/s in I/O phases */
	double bandwidth_bps; /* peak bandwidth */
	double iops;
	double acquired_at; /* epoch seconds */
};

struct alloc_ledger;

/* An empty ledger for this topology (it must outlive the ledger). */
struct alloc_ledger *alloc_ledger_create(const struct topology *t);
/* The same, the backups' name order from name_rank[f] (each forwarder's
 * rank among the forwarders' names, a permutation, as struct alloc_ctx
 * keeps it) instead of sorting the names. */
struct alloc_ledger *alloc_ledger_create_ranked(const struct topology *t,
						const uint32_t *name_rank);
void alloc_ledger_destroy(struct alloc_ledger *l);
/* A deep copy. */
struct alloc_ledger *alloc_ledger_clone(const struct alloc_ledger *l);
/* A copy that borrows l's entries instead of copying them (a batch's
 * scratch ledger, made for every batch): the same holders, order and
 * release times; entries added to it are its own, and releasing a
 * borrowed one leaves it to l.  l must outlive it and stay unchanged
 * while it lives. */
struct alloc_ledger *alloc_ledger_overlay(const struct alloc_ledger *l);

/*
 * Record an entry as is (copied).  Errors (-1, errno, err): a forwarder
 * index outside the topology (EINVAL), a duplicate forwarder in the entry
 * (EINVAL), a forwarder asked privately that another job holds or one asked
 * shared that another job holds privately (EBUSY), the job already present
 * (EEXIST).
 */
int alloc_ledger_add(struct alloc_ledger *l, const struct alloc_ledger_entry *e,
		     fwd_error_t *err);

/*
 * Apply a decision: the job holds decision->forwarders (privately where
 * decision->private_fwd says so), or its default forwarders, shared, for a
 * shadow decision.  The holder's characteristics come from the decision's
 * profile (none: unknown mode, zero rates).  Idempotent: a job already in
 * the ledger is left as is and 0 is returned.  A forwarder conflict is
 * EBUSY as for alloc_ledger_add().
 */
int alloc_ledger_acquire(struct alloc_ledger *l, const struct alloc_decision *d,
			 size_t n_nodes, double now, fwd_error_t *err);

/*
 * The job's forwarders become free; each one's last-release time becomes
 * `now`.  Returns 1 when the job held an entry, 0 when it did not (releasing
 * twice is harmless).
 */
int alloc_ledger_release(struct alloc_ledger *l, const char *job_id,
			 double now);

const struct alloc_ledger_entry *alloc_ledger_find(const struct alloc_ledger *l,
						   const char *job_id);
size_t alloc_ledger_count(const struct alloc_ledger *l);
/* Entries in insertion order (release keeps the others' order). */
const struct alloc_ledger_entry *
alloc_ledger_entry_at(const struct alloc_ledger *l, size_t i);

/* Per forwarder: number of holders, whether one holds it privately, the
 * holders themselves, its last release (0 = never). */
size_t alloc_ledger_holders(const struct alloc_ledger *l, uint32_t fwd,
			    const struct alloc_ledger_entry *const **out);
bool alloc_ledger_held_private(const struct alloc_ledger *l, uint32_t fwd);
double alloc_ledger_last_release(const struct alloc_ledger *l, uint32_t fwd);
void alloc_ledger_set_last_release(struct alloc_ledger *l, uint32_t fwd,
				   double t);
/* Each forwarder's last release from when[0..n_forwarders) (as
 * ledger_store_last_used() reads them), where it is later than the
 * ledger's: a read older than a release applied since leaves the newer
 * time, and 0 (none recorded) leaves it as it is. */
void alloc_ledger_set_last_releases(struct alloc_ledger *l, const double *when);

const struct topology *alloc_ledger_topology(const struct alloc_ledger *l);

/* A number that changes whenever holders or release times change (what
 * the decision's pool is read from), for caching what is read from it. */
uint64_t alloc_ledger_version(const struct alloc_ledger *l);

/* The backup forwarders no entry holds, in alloc_ledger_backups_by_release()
 * order, into fwd[] (room for n_forwarders); released[f] gets each one's
 * last release.  Returns their number. */
size_t alloc_ledger_unheld_backups(const struct alloc_ledger *l, uint32_t *fwd,
				   double *released);

/*
 * The backup forwarders (held or not) ordered by last release, then name:
 * kept sorted as releases happen (binary search), so that the decision's
 * pool is read in order rather than sorted per job.  n_out entries.
 */
const uint32_t *alloc_ledger_backups_by_release(const struct alloc_ledger *l,
						size_t *n_out);

#endif
