/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_HISTORY_RUN_H
#define FWD_CONTROLLER_HISTORY_RUN_H

/*
 * The history loop (`fwdctl history run`, fwdalloc-history.timer): every
 * finished job becomes a summary in job_io and refreshes its
 * application's profile, with no admin action.  For each job that ended
 * in the last history_loop.lookback:
 *   - a summary from traces or Darshan (written when they are ingested)
 *     is kept;
 *   - otherwise the best source there is now: Lustre job_stats of the
 *     job's id inside its run time +- jobstats.grace, else the samples of
 *     the forwarders it held while it ran (shared with the other jobs on
 *     them, the weakest source);
 *   - a job that ended less than history_loop.late ago, or has no
 *     summary, is looked at again on every run (statistics arrive late);
 *   - the summary records the forwarders the job held (k) and the
 *     bandwidth it achieved with them, so the profile's
 *     bandwidth_by_forwarders fills in from real runs;
 *   - when a summary changed since the job's profile was last refreshed
 *     (job_io.profiled_at), the profile of its key is recomputed.
 * One job that cannot be processed (the database refuses its summary or
 * its profile) is skipped and counted in st->skipped, with why, and the
 * run goes on with the others; only an unavailable database ends it.
 * Idempotent (a second run changes nothing), serialised by a database
 * named lock (a concurrent run returns at once with busy set), catches up
 * after downtime (lookback).  The controller orchestrates: the jobs and
 * forwarders held come from controller/history.h, statistics from
 * monitor/, summaries and profiles from profiler/.
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "profiler/profile.h"

struct db;
struct policy;

struct history_run_stats {
	bool busy;	   /* another run holds the lock: nothing done */
	uint64_t examined; /* finished jobs looked at */
	uint64_t from_jobstats, from_forwarders; /* summaries written */
	uint64_t kept;	    /* traces / Darshan summaries kept */
	uint64_t unchanged; /* summaries that did not change */
	uint64_t no_data;   /* jobs with no statistics (yet) */
	uint64_t profiles;  /* profiles recomputed */
	/* jobs.jobid_name naming the process (%e.%u, ids like dd.500): job
	 * statistics found by the job's name and its user's uid, and jobs
	 * left without them because another job of the same user and name
	 * ran at the same time, or the user has no uid on this host */
	uint64_t by_program, unmatched_ambiguous, unmatched_user;
	/* of no_data: found without statistics by a run less than
	 * history_loop.late ago, and none of their run arrived since: not
	 * looked at again */
	uint64_t not_reexamined;
	/* jobs that could not be summarised or profiled (the database
	 * refused a statement of theirs): counted, the first few with why,
	 * and gone past; the others are done in the same run */
	struct profile_skips skipped;
};

int ctl_history_run(struct db *db, const struct policy *p, int64_t now,
		    struct history_run_stats *st, fwd_error_t *err);

struct darshan_summary;

/*
 * Store a Darshan summary as its job's job_io row (source darshan, never
 * over a traces summary), with the forwarders the job held (k) from the
 * ledger and its node count from the jobs table when the job is there;
 * the history loop then refreshes the job's profile.  A log whose times
 * lie outside the run of the job with that id in the jobs table (+-
 * jobstats.grace: the id was reused) is refused: -1, errno EINVAL.
 */
int ctl_history_store_darshan(struct db *db, const struct policy *p,
			      const struct darshan_summary *s, int64_t now,
			      fwd_error_t *err);

#endif
