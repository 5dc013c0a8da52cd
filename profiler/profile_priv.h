/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_PROFILE_PRIV_H
#define FWD_PROFILER_PROFILE_PRIV_H

/*
 * Helpers shared by the job summaries (profiler/history.c) and the
 * profile store (profiler/profile_store.c); not part of
 * profiler/profile.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "policies/policy.h"
#include "profiler/profile.h"

struct db;
struct db_stmt;

/* Columns 0..14 of every runs query. */
#define RUN_COLS                                                           \
	"j.job_id, j.node_count, j.end_at, i.read_bytes, i.write_bytes,"   \
	" i.io_nodes, i.node_bandwidth_bps, i.peak_bandwidth_bps, i.iops," \
	" i.mdops_rate, i.metadata_queue, i.io_mode, i.forwarders_held,"   \
	" i.bandwidth_achieved_bps, i.runtime"

struct profile_runs {
	struct profile_run *v;
	uint64_t *job_ids;
	size_t n, cap;
};

/* The I/O mode of a job_io.io_mode text; none when NULL or unknown. */
enum trace_io_mode profile_mode_of(const char *s);
/* Column c as text into dst ("" when NULL); *has (may be NULL) = !NULL. */
void profile_copy_col(const struct db_stmt *st, unsigned c, char *dst,
		      size_t len, bool *has);
/* A run from the current row of a SELECT of RUN_COLS. */
void profile_read_run(const struct db_stmt *st, struct profile_run *r,
		      uint64_t *job_id);
void profile_runs_free(struct profile_runs *r);
int profile_runs_push(struct profile_runs *r, const struct profile_run *run,
		      uint64_t job_id);
/* The finished runs of job's key, newest first. */
int profile_key_runs(struct db *db, const struct policy *p,
		     const struct profile_job *job, int64_t now,
		     struct profile_runs *out, fwd_error_t *err);

#endif
