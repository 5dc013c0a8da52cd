/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_JOBSTATS_H
#define FWD_MONITOR_JOBSTATS_H

/*
 * What the stored Lustre job_stats (jobstats_raw, db/SCHEMA.md) say
 * about Slurm jobs, for the job summaries of the profiler (its caller
 * passes them on).  Prepared statements; 0 / -1 with errno and err.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct db;

/* A job's totals over every target, from the newest snapshot of each
 * (target, Lustre job id, operation). */
struct jobstats_sums {
	uint64_t read_bytes, write_bytes;
	uint64_t read_ops, write_ops; /* samples of read_bytes/write_bytes */
	uint64_t md_ops;	      /* samples of every MDT operation */
	uint64_t rows;		      /* (target, id, operation) snapshots used;
				       * 0: no statistics */
};

/* What the forwarders' own samples say about an interval. */
struct fwd_samples_sums {
	uint64_t read_bytes, write_bytes, read_ops, write_ops, md_ops;
	uint64_t samples; /* rows summed; 0: none */
};

/*
 * The sums of the samples of forwarders names[0..n) whose intervals end
 * in (from, to] (samples_raw, kind fwd): what went through the forwarders
 * a job held while it ran, shared with the other jobs on them.
 */
int fwd_samples_sums(struct db *db, char *const *names, size_t n, int64_t from,
		     int64_t to, struct fwd_samples_sums *out,
		     fwd_error_t *err);

/* The Slurm job ids that have job_stats rows, ascending, malloc'd
 * (*n may be 0 and *ids NULL). */
int jobstats_job_ids(struct db *db, uint64_t **ids, size_t *n,
		     fwd_error_t *err);

/*
 * The totals of job_id (all 0 when it has no rows) from the snapshots
 * taken in [from, to] (seconds): the job's run time plus a grace, so the
 * statistics of an older job with the same id (ids are reused) are not
 * counted.  An MDT's read_bytes / write_bytes (Data-on-MDT) count as
 * data, its other operations but read / write / punch as metadata.
 */
int jobstats_job_sums(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		      struct jobstats_sums *out, fwd_error_t *err);

/*
 * The totals of the job_stats rows of Lustre id `lustre_job_id` that name
 * no Slurm job (ids like dd.500, jobstats_proc_id()), from the snapshots
 * taken in [from, to], less what the same (target, id, operation) held
 * in its newest snapshot before `before`: Lustre keeps an id's counters
 * until it has been idle for job_cleanup_interval, so an earlier run of
 * the same program by the same user may have left counts (a counter
 * below that is a new entry: taken whole).
 */
int jobstats_name_sums(struct db *db, const char *lustre_job_id, int64_t from,
		       int64_t to, int64_t before, struct jobstats_sums *out,
		       fwd_error_t *err);

/*
 * The times of the forwarder samples and of the job_stats snapshots
 * written since the last call (ingest_arrivals, kept by every ingest
 * commit), then forgotten: *has_x false when none arrived.  0 or -1.
 */
struct ingest_arrivals {
	bool has_samples, has_jobstats;
	int64_t samples_from, samples_to;
	int64_t jobstats_from, jobstats_to;
};
int ingest_arrivals_take(struct db *db, struct ingest_arrivals *out,
			 fwd_error_t *err);

#endif
