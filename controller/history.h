/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_HISTORY_H
#define FWD_CONTROLLER_HISTORY_H

/*
 * The job history the monitor and the profiler need, read from the
 * tables the controller owns (jobs, allocations; db/SCHEMA.md).
 * The lower modules never read these tables: the functions here fetch
 * the rows and controller/health_ctl.c and controller/profile_ctl.c pass
 * them down.  Every statement is prepared; functions return 0 (or 1 / 0
 * for found / not found) or -1 with errno and err, and never print.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "profiler/profile.h"

struct db;
struct policy;

/* A row of the jobs table. */
struct history_job {
	uint64_t job_id;
	/* malloc'd and whole ("" for NULL, has_* false): a copy cut to a
	 * fixed size would give a long name another profile key, or cut a
	 * character in two */
	char *user, *account, *name, *partition;
	bool has_account, has_partition;
	char *nodelist; /* malloc'd, NULL when unknown */
	uint32_t node_count;
	int64_t start_at, end_at; /* 0 when unknown */
	bool has_start;		  /* start_at is known */
	char **held;		  /* history_fill_held(): malloc'd */
	size_t n_held;
};

/* v[i].held = ledger_store_job_forwarders() of every job (one statement per
 * 100 jobs). */
int history_fill_held(struct db *db, struct history_job *v, size_t n,
		      fwd_error_t *err);

/* job_id's row: 1 found, 0 not found, -1 error. */
int history_job(struct db *db, uint64_t job_id, struct history_job *row,
		fwd_error_t *err);
void history_job_free(struct history_job *row);
void history_jobs_free(struct history_job *v, size_t n);

/*
 * The jobs that ended in [from, to), started, with at least min_nodes
 * nodes, in order of end then id (at most 100000), with the forwarders
 * they held.
 */
int history_jobs_ended(struct db *db, double from, double to,
		       uint32_t min_nodes, struct history_job **v, size_t *n,
		       fwd_error_t *err);

/*
 * The jobs of ids that exist (and have ended, when finished_only), in
 * order of id.
 */
int history_jobs_by_id(struct db *db, const uint64_t *ids, size_t n_ids,
		       bool finished_only, struct history_job **v, size_t *n,
		       fwd_error_t *err);

/*
 * The finished jobs of job's profile key under policy p (the fields of
 * history.key), ended at or after now - history.max_age, newest first
 * (at most limit; 0: HISTORY_KEY_JOBS_MAX): job_id, end_at and job.nodes
 * of each.  malloc'd.
 */
#define HISTORY_KEY_JOBS_MAX 100000
int history_key_jobs(struct db *db, const struct policy *p,
		     const struct profile_job *job, int64_t now, size_t limit,
		     struct profile_jobref **v, size_t *n, fwd_error_t *err);

/*
 * Past runs of an application for the job-level check: the jobs of user
 * and name with a node count in [lo, hi] that ended in [after, before],
 * other than exclude, newest first (at most 100000).  malloc'd ids.
 */
int history_app_runs(struct db *db, const char *user, const char *name,
		     uint64_t lo, uint64_t hi, int64_t after, int64_t before,
		     uint64_t exclude, uint64_t **ids, size_t *n,
		     fwd_error_t *err);

/*
 * The jobs other than exclude that started before `end` and had not
 * ended by `start` (running jobs count as ending at `now`, which end_at
 * then holds), in order of id, at most 10000, with "" for an unknown
 * node list.
 */
int history_jobs_overlapping(struct db *db, uint64_t exclude, double start,
			     double end, double now, struct history_job **v,
			     size_t *n, fwd_error_t *err);

/*
 * How job_num ran, given the n_held forwarders the ledger gave it:
 * *priv = every one of them was its own; *direct = it held none because
 * it was decided direct (its audit record), its bandwidth being the
 * curve's k = 0.  Both false otherwise.
 */
int history_job_forwarding(struct db *db, uint64_t job_num, size_t n_held,
			   bool *priv, bool *direct, fwd_error_t *err);

#endif
