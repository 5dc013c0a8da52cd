/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_HEALTH_CTL_H
#define FWD_CONTROLLER_HEALTH_CTL_H

/*
 * The health operations that need the job history: the scan and the
 * job-level check of monitor/health.h, with the jobs and the forwarders
 * they held read from the controller's tables (controller/history.h) and
 * the job summaries from the profiler's (profiler/profile.h).
 */

#include <stdint.h>

#include "common/error.h"
#include "monitor/health.h"

struct db;
struct policy;
struct topology;

/*
 * health_db_scan() over the jobs that finished in the scan's span
 * (health_scan_span()).  Same contract: an `until` in the future fails
 * with EINVAL before the database is touched.
 */
int ctl_health_scan(struct db *db, const struct policy *p,
		    const struct topology *t, const struct health_scan_opts *o,
		    struct health_scan_stats *st, fwd_error_t *err);

/*
 * health_job_check() for job_id: the job from the jobs table, its phases
 * from job_io, the same application's past runs at the same scale (same
 * user and job name, node count in the same history.bucket_base bucket,
 * ended before it started, within history.max_age, the newest 50 with
 * phases) and the jobs that overlapped it, with the forwarders each held.
 * Returns 0, or -1 with errno ENOENT ("job N: not in the jobs table" or
 * "no I/O phases recorded") or a database errno, and err set.  Release
 * with health_job_report_free().
 */
int ctl_health_job_check(struct db *db, const struct policy *p,
			 const struct topology *t, uint64_t job_id,
			 struct health_job_report *r, fwd_error_t *err);

#endif
