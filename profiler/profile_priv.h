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

/* Columns 0..13 of every read of job_io as runs (profile_read_run()). */
#define PROFILE_IO_RUN_COLS                                               \
	"job_id, read_bytes, write_bytes, io_nodes, node_bandwidth_bps,"  \
	" peak_bandwidth_bps, iops, mdops_rate, metadata_queue, io_mode," \
	" forwarders_held, bandwidth_achieved_bps, runtime,"              \
	" forwarders_private, direct"

struct profile_runs {
	struct profile_run *v;
	uint64_t *job_ids;
	size_t n, cap;
};

/* The I/O mode of a job_io.io_mode text; none when NULL or unknown. */
enum fwd_io_mode profile_mode_of(const char *s);
/* A run from the current row of a SELECT of PROFILE_IO_RUN_COLS (nodes
 * and end_time are left 0: they come from the jobs table). */
void profile_read_run(const struct db_stmt *st, struct profile_run *r,
		      uint64_t *job_id);
void profile_runs_free(struct profile_runs *r);
int profile_runs_push(struct profile_runs *r, const struct profile_run *run,
		      uint64_t job_id);
/*
 * The runs of jobs (in their order; jobs without a job_io row are
 * skipped) appended to out until it holds max; nodes and end_time come
 * from jobs.
 */
int profile_db_runs(struct db *db, const struct profile_jobref *jobs, size_t n,
		    size_t max, struct profile_runs *out, fwd_error_t *err);

#endif
