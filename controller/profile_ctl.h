/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_PROFILE_CTL_H
#define FWD_CONTROLLER_PROFILE_CTL_H

/*
 * The profile operations that need the job history (controller/
 * history.h) or Lustre job_stats (monitor/jobstats.h): the lookup at
 * launch, a job summary stored from traces, the rebuild; and the
 * allocator's view of a profile.
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "profiler/profile.h"
#include "profiler/summary.h"

struct db;
struct policy;
struct history_job;
struct alloc_profile;
struct alloc_bw_point;

/*
 * The allocator's view of a profile (allocator/decide.h), for the
 * controller prolog: fills dst, with dst->bw pointing at bw (room for
 * PROFILE_MAX_BW points, caller's storage that must outlive dst).  The
 * "none" mode maps to FWD_IO_NONE; the k = 0 point (direct file-system
 * access) becomes dst->direct_bps, not a point of dst->bw.
 */
void profile_to_alloc(const struct profile *src, struct alloc_profile *dst,
		      struct alloc_bw_point *bw);

/*
 * profile_lookup - the profile of a job about to start, for the
 * controller prolog before the decision.  The key comes from
 * policy->history.key; res->key is set before any database access.  The
 * finished runs of that key (jobs table, newest first, at most 500, not
 * older than history.max_age) are predicted from as in
 * profile_lookup_runs().  Returns 1 with res filled, 0 when there is no
 * history (res->source NONE, res->key still set), -1 with errno and err
 * on a database error.  Strings in job may be NULL.
 *
 *   struct profile_result res;
 *   if (profile_lookup(db, policy, &job, time(NULL), &res, &err) < 0)
 *           fail open: db_err_unavailable(errno) ...
 *   if (res.source != PROFILE_SOURCE_NONE) {
 *           struct alloc_profile ap;
 *           struct alloc_bw_point bw[PROFILE_MAX_BW];
 *           profile_to_alloc(&res.profile, &ap, bw);
 *   }
 */
int profile_lookup(struct db *db, const struct policy *p,
		   const struct profile_job *job, int64_t now,
		   struct profile_result *res, fwd_error_t *err);

/*
 * Store s as the summary of job (a row of the jobs table) with the
 * number of forwarders it held (controller/history.h), then, when the
 * job has ended, recompute the profile of its key.  Returns 0, or -1
 * with errno and err; *stored tells whether the summary was stored
 * (false: nothing changed; true: only the profile update failed).
 */
int ctl_profile_store_summary(struct db *db, const struct policy *p,
			      const struct history_job *job,
			      const struct trace_summary *s, double runtime,
			      int64_t now, bool *stored, fwd_error_t *err);

/*
 * Summaries from Lustre job_stats for the finished jobs that have
 * job_stats rows and no summary (profile_db_store_jobstats()), in order
 * of job id, at most 100000.  *made gets the rows written.  With
 * skipped, a job whose summary the database refuses is counted there and
 * gone past (without it, that fails the call).
 */
int ctl_profile_jobstats(struct db *db, const struct policy *p, int64_t now,
			 uint64_t *made, struct profile_skips *skipped,
			 fwd_error_t *err);

/*
 * ctl_profile_jobstats(), then recompute every computed profile from
 * the summaries of the finished jobs (profile_db_rebuild()).
 */
int ctl_profile_rebuild(struct db *db, const struct policy *p, int64_t now,
			struct profile_rebuild_stats *st, fwd_error_t *err);

#endif
