/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_RELEASE_QUEUE_H
#define FWD_CONTROLLER_RELEASE_QUEUE_H

/*
 * The controller epilog's hand-off.  slurmctld keeps a job COMPLETING
 * until EpilogSlurmctld ends, and when that happens after the nodes' own
 * epilogs, pending jobs wait for the next periodic scheduling pass
 * (sched_interval, 60 s by default): a burst of short jobs then runs tens
 * of times slower.  So the epilog Slurm runs only queues the job and
 * returns; the release itself (controller/hooks.h ctl_epilog) runs after
 * it, in one drainer at a time, and `fwdctl reconcile` stays the safety
 * net for a queue nobody drains.
 *
 * The queue is a directory, "release-queue" in the audit file's
 * directory (the controller account's, like the breaker state and the
 * topology cache), created mode 0700 and refused unless owned by the
 * caller with no group or other write.  One file per job, named by its
 * id, holds the job's environment as Slurm gave it to the epilog (the
 * variables ctl_job_from_env() reads), NUL-separated; written under a
 * temporary name and renamed, so a drainer never reads half an entry.
 * Entries are opened without following links.
 */

#include <stddef.h>

#include "common/error.h"

struct db;
struct policy;

/* The queue directory for policy p into buf.  0, or -1 (no audit file
 * directory, or the path does not fit) with err. */
int relq_dir(const struct policy *p, char *buf, size_t n, fwd_error_t *err);

/*
 * Queue the job described by this process's environment (SLURM_JOB_ID
 * must be a job id), with t0, the time the epilog started.  Creates the
 * directory when missing.  0, or -1 with errno and err.
 */
int relq_put(const char *dir, double t0, fwd_error_t *err);

/* relq_put() for the job whose CTL_JOB_VARS (controller/job.h) are in
 * vals[] (NULL: unset) rather than in the environment. */
int relq_put_vars(const char *dir, const char *const vals[], double t0,
		  fwd_error_t *err);

/*
 * Release what the queue in dir holds (relq_drain()), each job with
 * ctl_epilog() under policy p, or, given a connection db, with
 * ctl_epilog_on() on it (the controller service's release thread: no
 * process and no connection a job).  What the operator should hear (a
 * release's notes, a damaged entry, an audit record that could not be
 * written to the file: "audit record not written ...") goes to
 * log(arg, priority, message), syslog priorities.  *n_failed counts the
 * releases that failed (reconcile frees their rows later).  0, or -1
 * with err as relq_drain().
 */
int relq_release_all(struct db *db, const struct policy *p, const char *dir,
		     void (*log)(void *arg, int prio, const char *msg),
		     void *arg, size_t *n_done, size_t *n_failed,
		     fwd_error_t *err);

/*
 * Release what is queued, unless another drainer is at it (a lock file in
 * the directory): for each entry, in job id order, `release` is called
 * with the epilog's start time and the entry's values of CTL_JOB_VARS
 * (controller/job.h; NULL: unset; valid during the call: the environment
 * is left alone, so threads may drain), and the entry is removed.  Loops until
 * the queue is empty after the lock is given up, so an entry queued while
 * another drainer held the lock is never left behind.  *n_done counts the
 * entries handled (a damaged entry is removed and counted in *n_bad, its
 * reason in err).  0, or -1 with errno and err (the directory or the
 * lock could not be used).
 */
int relq_drain(const char *dir,
	       void (*release)(void *arg, double t0, const char *const vals[]),
	       void *arg, size_t *n_done, size_t *n_bad, fwd_error_t *err);

#endif
