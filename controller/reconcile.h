/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_RECONCILE_H
#define FWD_CONTROLLER_RECONCILE_H

/*
 * Reconcile: free the allocations of jobs Slurm no longer runs (a lost
 * EpilogSlurmctld, a controller prolog killed after it wrote, a controller
 * crash).  Slurm is asked through libslurm (slurm_load_jobs), never by
 * parsing command output.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct policy;

struct ctl_reconcile {
	uint64_t *freed; /* jobs freed (or, dry run, to free), ascending */
	size_t n_freed;
	uint64_t *kept; /* jobs holding rows that Slurm still runs */
	size_t n_kept;
	/* On failure: the database, the lock or slurmctld could not be used,
	 * rather than a statement failing midway.  Either way nothing was
	 * freed (one transaction, rolled back) and n_freed is 0. */
	bool unavailable;
	/* Audit file failures (the release itself went on), in order. */
	size_t n_notes;
	fwd_error_t notes[4];
};

/*
 * Under the decision lock, in one transaction, free every held allocation
 * whose job Slurm does not report as running, suspended, configuring or
 * completing, and audit each (event "reconcile": the table row in the
 * transaction, the file line once it is committed).  With dry_run only
 * fill r.  0, or -1 with errno and err (nothing freed; r->kept and, for a
 * dry run, r->freed say what was seen).  ctl_reconcile_free(r) in both
 * cases.
 */
int ctl_reconcile(const struct policy *p, bool dry_run, struct ctl_reconcile *r,
		  fwd_error_t *err);
void ctl_reconcile_free(struct ctl_reconcile *r);

/*
 * For a prolog refused for lack of pool: a sentence for its audit record
 * saying how many private forwarders other jobs hold (unreleased rows of
 * `db`, the caller's transaction) and how many of them are held by jobs
 * Slurm no longer runs (lost epilogs; fwdctl reconcile frees them), with
 * those jobs' ids.  slurmctld is asked (slurm_load_jobs) in a child that
 * may take `timeout` seconds; when it does not answer in time, the
 * sentence says how long the oldest has been held instead (`now`, epoch
 * seconds) and why slurmctld could not be asked.  `self` (the deciding
 * job) is not counted.  `l` (may be NULL): the ledger the caller read in
 * the same transaction; when it shows no private forwarder held by
 * another job, neither the rows nor slurmctld are read again.  0 with
 * buf filled, or -1 with errno and err (the rows could not be read).
 */
struct db;
struct alloc_ledger;
int ctl_pool_holders(struct db *db, const struct alloc_ledger *l, uint64_t self,
		     double timeout, double now, char *buf, size_t size,
		     fwd_error_t *err);

#endif
