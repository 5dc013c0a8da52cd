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

/*
 * What an operation of a job_stats entry counts as: bytes and requests
 * read or written (read_bytes, write_bytes; an MDT's are Data-on-MDT
 * data), metadata requests (an MDT's other operations but read / write /
 * punch, the same requests' times), or nothing counted (an OST's other
 * operations).
 */
enum jobstats_class {
	JOBSTATS_UNCOUNTED,
	JOBSTATS_READ,
	JOBSTATS_WRITE,
	JOBSTATS_METADATA,
};
enum jobstats_class jobstats_class_of(const char *kind, const char *op);

/*
 * A job_stats snapshot as an increment.  Lustre keeps an entry's counters
 * from its first operation on a target until the entry has been idle for
 * twice the target's job_cleanup_interval (or job_stats is cleared), and
 * then starts a new entry from zero at the next operation: a job with a
 * long quiet phase has several entries one after the other on a target.
 * So each snapshot of a (target, Lustre job id, operation) counts its
 * value less the previous snapshot's, and whole when it is the first or
 * when its samples or its sum is below the previous one's (a new entry).
 * A new entry that outgrew the old one between two snapshots is counted
 * as an increase: short by the old entry's value, which is the smaller.
 * The newest snapshot alone would count only the last entry.
 */
struct jobstats_step {
	const char *kind, *target, *lustre_job_id, *op;
	int64_t ts;
	enum jobstats_class cls;
	uint64_t samples, sum; /* the increments */
	bool new_target;       /* the first snapshot of this target */
};
typedef int (*jobstats_step_fn)(void *arg, const struct jobstats_step *s);

/*
 * Calls fn for every snapshot of job_id taken in [from, to], in the order
 * of the jobstats_raw_job index (target, Lustre id, ts, op), read as they
 * arrive (a day-long job has hundreds of thousands), so fn must not use
 * db meanwhile.  fn returns 0, or -1 with errno to stop the walk.  0, or
 * -1 with err.
 */
int jobstats_job_walk(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		      jobstats_step_fn fn, void *arg, fwd_error_t *err);

/* Totals over snapshots: the sums of their increments, by class. */
struct jobstats_sums {
	uint64_t read_bytes, write_bytes;
	uint64_t read_ops, write_ops; /* samples of read_bytes/write_bytes */
	uint64_t md_ops;	      /* samples of every MDT operation */
	uint64_t rows;		      /* snapshots summed; 0: no statistics */
};
void jobstats_sums_add(struct jobstats_sums *out,
		       const struct jobstats_step *s);

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
 * counted.  The increments of jobstats_job_walk(), classified by
 * jobstats_class_of().
 */
int jobstats_job_sums(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		      struct jobstats_sums *out, fwd_error_t *err);

/*
 * The totals of the job_stats rows of Lustre id `lustre_job_id` that name
 * no Slurm job (ids like dd.500, jobstats_proc_id()): the increments of
 * its snapshots taken in [since, to], each (target, operation) counted
 * from its newest snapshot before `since` (Lustre keeps an id's counters
 * until it has been idle, so an earlier run of the same program by the
 * same user may have left counts; a counter below that is a new entry:
 * taken whole).
 */
int jobstats_name_sums(struct db *db, const char *lustre_job_id, int64_t since,
		       int64_t to, struct jobstats_sums *out, fwd_error_t *err);

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
