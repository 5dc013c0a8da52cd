/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_HOOKS_H
#define FWD_CONTROLLER_HOOKS_H

/*
 * slurmctld's PrologSlurmctld and EpilogSlurmctld: one decision per job,
 * taken on the controller under the decision lock and persisted before
 * any node prolog runs; the release at the job's end.
 *
 * Reliability: the work runs in a child process under the policy's
 * decide_timeout (common/run.h); the parent only waits and writes the
 * audit line.  A timeout, a crash, an unreachable database or any other
 * error leaves the job on its default mapping (no allocation rows: node
 * prologs keep the default) with an audit record "fallback: <error>".
 * The hooks therefore never fail; what went wrong is in the outcome.
 * A worker stopped after it began to commit has its allocation released
 * by job id before the hook returns (the records then match the ledger).
 * After a database failure or a timeout, prologs skip the database for
 * the policy's database.breaker (db/breaker.h; state file "db-breaker"
 * next to the audit file) and fall back at once.
 */

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "controller/job.h"
#include "topology/topo_cache.h"

struct db;
struct policy;
struct topology;

#define CTL_MAX_NOTES 4

struct ctl_outcome {
	/* prolog: the job was left on its default mapping; epilog: the
	 * release failed (reconcile frees the rows later). */
	bool fallback;
	/* The prolog fell back and the policy says access.fail: closed:
	 * slurmctld should stop the job (a failing PrologSlurmctld makes
	 * Slurm requeue it). */
	bool stop_job;
	/* The controller service's prolog only: the hook had stopped
	 * waiting before the job's record could be written, so the service
	 * wrote none; it closes the connection without an answer and the
	 * hook's `fwdctl prolog --abandoned` records the fallback. */
	bool unanswered;
	/* Messages for the operator (slurmctld's log), in order. */
	size_t n_notes;
	fwd_error_t notes[CTL_MAX_NOTES];
	/* The audit line that could not be written to the audit file (disk
	 * full, ...; a note says why), malloc'd, else NULL: the caller sends
	 * it elsewhere (syslog).  ctl_outcome_free() frees it. */
	char *lost_record;
	/* With FWDALLOC_PROLOG_TIMING set in the environment, the prolog's
	 * phases, "name=ms ..." (load: from the command's start to the
	 * worker's, policy and topology included; nodes, connect, record
	 * (job row and profile), lock, ledger (held rows and health),
	 * decide, persist (allocation rows), audit, commit, publish,
	 * total), for the caller to print; else empty. */
	char timing[512];
};

/* Free what an outcome holds (lost_record); the struct itself stays. */
void ctl_outcome_free(struct ctl_outcome *out);

/*
 * The prolog for job j: record the job, look up its profile, take the
 * decision lock, load the ledger and health, decide, write the allocation
 * and the audit record (file and, with audit.database, table).  t is the
 * topology (NULL when it could not be loaded: the job falls back).  t0 is
 * when the command started (the audit records' elapsed time).  Callers
 * skip it under access.mode off.
 */
void ctl_prolog(const struct policy *p, const struct topology *t,
		const struct ctl_job *j, double t0, struct ctl_outcome *out);

/*
 * The controller service took the prolog but did not answer within the
 * hook's budget (or answered nonsense): whatever it may have committed for
 * j is released, in a bounded worker (database.timeout) that stores the
 * fallback record `why` in the same transaction, and the record goes to
 * the audit file.  The job then runs on its default mapping, as every
 * record says.  out as for ctl_prolog().
 */
void ctl_prolog_abandon(const struct policy *p, const struct topology *t,
			const struct ctl_job *j, const char *why, double t0,
			struct ctl_outcome *out);

/* The epilog: release the job's allocation (idempotent), record its end,
 * audit the release. */
void ctl_epilog(const struct policy *p, const struct ctl_job *j, double t0,
		struct ctl_outcome *out);

/*
 * ctl_epilog() on the caller's connection db, in the caller's thread, with
 * no worker process and no time bound beyond db's own timeouts (the
 * controller service's release thread; nothing waits for it).  A failed
 * release (out->fallback) leaves its rows to reconcile and says why in
 * its record.  When db is unusable (db_err_unavailable()) the release is
 * done again on a connection of its own; the caller had best reconnect.
 */
void ctl_epilog_on(struct db *db, const struct policy *p,
		   const struct ctl_job *j, double t0, struct ctl_outcome *out);

/*
 * The topology the controller's prolog decides with: path (NULL: the
 * policy's), through its compiled cache (topology/topo_cache.h),
 * topology.cache in the audit file's directory (written by the
 * controller's account, as the breaker's state), rebuilt whenever the
 * YAML changes; the YAML itself when there is no such directory or the
 * cache cannot be used.  *how and cache_err: what happened to the cache.
 * NULL with err when the topology cannot be loaded.
 */
struct topology *ctl_topology_load(const struct policy *p, const char *path,
				   enum topo_cache_use *how,
				   fwd_error_t *cache_err, fwd_error_t *err);

/*
 * The prolog when no policy could be loaded (why: the loader's error):
 * nothing can be decided and the job runs on its default mapping.  The
 * fallback record ("fallback: the policy could not be loaded: <why>") goes
 * to the audit file and, when lp says so, the audit table, both where lp
 * (policy_load_locations()) finds them.  out as for ctl_prolog(); the job
 * is never stopped (there is no policy that could say fail: closed).
 */
void ctl_no_policy(const struct policy *lp, const struct ctl_job *j,
		   const char *why, double t0, struct ctl_outcome *out);

/*
 * The epilog when no policy could be loaded: as ctl_epilog() under lp
 * (policy_load_locations()): what the job holds is released from the
 * ledger, its decision and fallback files are collected and removed, and
 * the "epilog" record carries "policy_error": why.
 */
void ctl_epilog_no_policy(const struct policy *lp, const struct ctl_job *j,
			  const char *why, double t0, struct ctl_outcome *out);

#endif
