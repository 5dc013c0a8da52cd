/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_HOOK_RUN_H
#define FWD_CONTROLLER_HOOK_RUN_H

/*
 * Internal to controller/: the half the prolog and the epilog share (run
 * the work in a bounded child, write the audit line it hands back, or a
 * fallback record when it hands back nothing).
 */

#include <stdbool.h>

#include <jansson.h>

#include "common/vocab.h"
#include "controller/hooks.h"

struct alloc_decision;
struct alloc_ledger;
struct db;

struct ctl_hook {
	const struct policy *p;
	const struct topology *t; /* prolog only; may be NULL */
	const struct ctl_job *j;
	double t0; /* when the command started */
};

/*
 * Child side: hand the audit record to the parent.  Protocol: "A <json>"
 * (done) or "F <json>" (fallback), one line.  0, or -1.
 */
int ctl_hook_send(int fd, bool fallback, const json_t *rec);

/*
 * Child side, before ctl_hook_send(): the phase times for
 * ctl_outcome.timing, one line "P <text>".  0, or -1.
 */
int ctl_hook_send_timing(int fd, const char *text);

/*
 * Child side, just before the commit that makes the decision visible:
 * tell the parent that, should the child be stopped from now on, the
 * allocation may be in the ledger (the parent then releases it, by job
 * id, before answering Slurm).  0, or -1.
 */
int ctl_hook_mark_commit(int fd);

/*
 * Parent side: run child(h, fd) under the policy's decide_timeout and
 * append the record it sends to the audit file; when it sends none (timed
 * out, killed, failed), record a fallback for `event` in the file and, if
 * the child did not hang, in the audit table.
 */
void ctl_hook_run(struct ctl_hook *h, int (*child)(void *h, int fd),
		  const char *event, struct ctl_outcome *out);

/*
 * The database circuit breaker (db/breaker.h) of the controller prolog:
 * its state file, "db-breaker" in the audit file's directory (written by
 * the same account).  0, or -1 when the path does not fit.
 */
int ctl_breaker_path(const struct policy *p, char *buf, size_t n);

/* Record a database failure now (database.breaker > 0); best effort. */
void ctl_breaker_trip(const struct policy *p);

/* True while the breaker is open at now (*ago: how long since the
 * failure, may be NULL). */
bool ctl_breaker_open(const struct policy *p, double now, double *ago);

/*
 * Before any database work: when the breaker is open (the database failed
 * less than database.breaker ago), record a fallback "database skipped:
 * failed Ns ago" (the job's default forwarders) in the audit file only,
 * fill *out as ctl_hook_run() would, and return 1; else 0 (out untouched).
 */
int ctl_hook_skip_db(struct ctl_hook *h, const char *event,
		     struct ctl_outcome *out);

/*
 * Health states of the topology's forwarders and OSTs from the health
 * table (absent = ok).  The arrays are malloc'd, n_forwarders / n_osts
 * entries.  0, or -1 with errno and err.
 */
int ctl_load_health(struct db *db, const struct policy *p,
		    const struct topology *t, enum fwd_health **fwd,
		    enum fwd_health **ost, fwd_error_t *err);

/* Append a message for the operator to out (dropped past CTL_MAX_NOTES). */
void ctl_note(struct ctl_outcome *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Did a rule want more forwarders than the pool could give? */
bool ctl_pool_refused(const struct alloc_decision *d);

/* Add to the record's reasons who holds the pool (best effort). */
void ctl_note_pool_holders(struct db *db, const struct alloc_ledger *l,
			   const struct ctl_job *j, json_t *rec);

#endif
