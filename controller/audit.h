/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_AUDIT_H
#define FWD_CONTROLLER_AUDIT_H

/*
 * The audit trail: its records, the file and the database's `audit`
 * table (owned here: every statement on it is in audit.c).
 *
 * The file holds one JSON object per line, appended with a single
 * write(2) on an O_APPEND descriptor, so records from concurrent
 * controller prologs never interleave or overwrite each other (the kernel
 * positions every O_APPEND write at the end of the file under the inode
 * lock).  The same record goes to the audit table.
 *
 * Record fields (DESIGN.md "Audit"):
 *   time (ISO-8601 UTC, ms), job_id, user, account, partition, name,
 *   nodes, request ("scale", ..., "not requested"), action, reasons[],
 *   forwarders_before[], forwarders_after[], mapping[{nodes,forwarder}],
 *   inputs (the profile used, or null), outcome ("applied", "shadow",
 *   "default", "released", "fallback: <error>"), policy_digest,
 *   elapsed_us, event ("prolog", "epilog", "reconcile").
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "allocator/decide.h"
#include "common/error.h"
#include "controller/job.h"

struct db;
struct topology;

/*
 * Append `record` (serialised compactly, plus '\n') to `path`, creating
 * the file (0640) and its directory (0750) when missing.  One write(2)
 * (never a second, which could land after another writer's record).
 * Whole lines or nothing: after a short write (disk full) the file is cut
 * back to where the record began and the call fails (ENOSPC), so no half
 * record stays and the next record starts its own line; if it cannot be
 * cut back, a newline ends the partial line when possible.  The caller
 * decides where a record that could not be written goes (the library
 * does not log).  0, or -1 with errno and err.
 */
int audit_append(const char *path, const json_t *record, fwd_error_t *err);

/* Same for an already serialised line without its '\n'. */
int audit_append_line(const char *path, const char *line, fwd_error_t *err);

/*
 * A job's prolog can have two writers: the controller service, and the
 * hook that gave up waiting for it (`fwdctl prolog --abandoned`).  Each
 * copy of the audit trail (file, table) must show their records in the
 * same order, so each writer commits its table row and appends its file
 * line while holding this lock: flock(2) on the audit file itself (no
 * other file to create or own).  Take it after the decision lock, never
 * before (the other writer may hold the decision lock and wait for this
 * one), and hold no other database lock while waiting for it.  A file
 * descriptor to give to audit_order_unlock(), or -1 when path is not set
 * or cannot be opened (the append that follows then reports why).
 */
int audit_order_lock(const char *path);
void audit_order_unlock(int fd);

/*
 * Records.  Each returns a new object (NULL when out of memory) with the
 * fields above in that order, plus "ts" (epoch seconds) and "decision"
 * (the allocator's decision object, or null).
 */

/* The prolog's decision for j, taken at `now` (event "prolog"). */
json_t *audit_record_decision(const struct ctl_job *j, const struct topology *t,
			      const struct alloc_decision *d, double now);

/*
 * The job was left on its default mapping because of `why` (outcome
 * "fallback: <why>").  With a topology the record names the job's default
 * forwarders; t may be NULL.
 */
json_t *audit_record_fallback(const struct ctl_job *j, const struct topology *t,
			      const char *event, const char *why, double now,
			      uint64_t elapsed_us);

/*
 * The epilog's release at `now`: `released` rows, or the failure `failed`
 * (outcome "fallback: <failed>") when not NULL.
 */
json_t *audit_record_release(const struct ctl_job *j, double now,
			     uint64_t released, const char *failed,
			     uint64_t elapsed_us);

/* Reconcile freed `released` rows of a job Slurm no longer runs. */
json_t *audit_record_reconcile(uint64_t job_num, double now, uint64_t released);

/* Insert the record into the audit table. */
int audit_store(struct db *db, const json_t *record, fwd_error_t *err);

/*
 * The job's latest "prolog" record from the audit table: *record a new
 * reference, or NULL when there is none.
 */
int audit_store_job_decision(struct db *db, uint64_t job_num, json_t **record,
			     fwd_error_t *err);

/* The same for the job's latest record of `event` ("epilog": its
 * release, with node_outcomes). */
int audit_store_job_event(struct db *db, uint64_t job_num, const char *event,
			  json_t **record, fwd_error_t *err);

/*
 * *direct = the job's latest "prolog" record in the audit table has
 * action "direct" (false when there is none: the table is written best
 * effort).
 */
int audit_job_direct(struct db *db, uint64_t job_num, bool *direct,
		     fwd_error_t *err);

/*
 * Fallback records (outcome "fallback: ...") the hooks wrote to the audit
 * file at `path` but could not store in the audit table (the database
 * unreachable, a password file refused, the breaker open), inserted now,
 * so that the table, and fwdctl metrics, count every fallback.  A record
 * is in the table when a row has the same job, time and event.
 *
 * Incremental: `state` (a file the caller owns, e.g. audit.replayed
 * beside the audit file) holds the device, inode and offset read up to;
 * each call reads from there: the rest of the file it was reading (the
 * newest rotated copy, path.1, once logrotate moved it: its delaycompress
 * leaves that copy uncompressed) and then the live file.  The state is
 * replaced atomically and only moves past records that are stored.  With
 * no state the live file is read from its start.  *n: records inserted.
 * 0, or -1 with errno and err (a missing audit file is no error).
 */
int audit_replay(struct db *db, const char *path, const char *state,
		 uint64_t *n, fwd_error_t *err);

/* Which records of the file audit_read() passes on; NULL fields match all. */
struct audit_filter {
	const char *job_id;
	const char *user;
	bool have_since;
	double since; /* epoch seconds; records at or after it */
};

/*
 * Read the audit file at `path`, oldest first, and call fn for each line:
 * with the parsed record when it passes `f` (NULL: every record), or with
 * rec NULL for a line that is not a JSON object (fn decides whether that
 * matters).  `line` is the text without its newline.  fn returning < 0
 * stops the reading and makes audit_read return -1.  A missing file is -1 with
 * errno ENOENT; other errors -1 with errno and err.
 */
int audit_read(const char *path, const struct audit_filter *f,
	       int (*fn)(void *arg, unsigned long lineno, const char *line,
			 const json_t *rec),
	       void *arg, fwd_error_t *err);

/*
 * The whole trail at `path`, oldest first: the copies logrotate left
 * (path.N or path.N.gz, highest N first, then down to path.1[.gz]), then
 * path itself; audit_read() reads each, compressed or not.  -1 with errno
 * ENOENT only when neither path nor a rotated copy exists.
 */
int audit_read_all(const char *path, const struct audit_filter *f,
		   int (*fn)(void *arg, unsigned long lineno, const char *line,
			     const json_t *rec),
		   void *arg, fwd_error_t *err);

/*
 * The audit table's records (column `record`), oldest first, filtered by
 * `f` in SQL and again as audit_read() does; `line` is the record as one
 * compact JSON line, `lineno` the row's position.  A job_id filter that is
 * not a number is -1 with errno EINVAL.  0, or -1 with errno and err.
 */
int audit_read_db(struct db *db, const struct audit_filter *f,
		  int (*fn)(void *arg, unsigned long lineno, const char *line,
			    const json_t *rec),
		  void *arg, fwd_error_t *err);

/*
 * What `fwdctl metrics` reports from the audit table: the controller
 * prologs' decisions (event "prolog") by action, how many fell back, and
 * their elapsed time as a histogram over AUDIT_LATENCY_BOUNDS (seconds,
 * cumulative counts as OpenMetrics wants them).  Retention pruning lowers
 * these counts.  0, or -1 with errno and err.
 */
#define AUDIT_METRICS_ACTIONS 16
#define AUDIT_LATENCY_BUCKETS 9
extern const double audit_latency_bounds[AUDIT_LATENCY_BUCKETS];
struct audit_metrics {
	size_t n_actions;
	char action[AUDIT_METRICS_ACTIONS][24];
	uint64_t by_action[AUDIT_METRICS_ACTIONS];
	uint64_t decisions, fallbacks;
	double elapsed_sum; /* seconds */
	uint64_t le[AUDIT_LATENCY_BUCKETS];
	/* From the epilog records' node_outcomes: node prologs that fell
	 * back, and nodes whose prolog never reported. */
	uint64_t node_fell_back, node_silent;
};
int audit_metrics(struct db *db, struct audit_metrics *m, fwd_error_t *err);

/*
 * Retention of the audit table: rows older than r->audit (0 = keep
 * forever) before `now` (db_prune_before()).  Appends its line to out[*n]
 * when it pruned.  0, or -1 with errno and err.
 */
struct db;
struct db_pruned;
struct policy_retention;
int audit_prune(struct db *db, const struct policy_retention *r, int64_t now,
		bool dry_run, struct db_pruned *out, size_t *n,
		fwd_error_t *err);

#endif
