/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_JOB_IO_H
#define FWD_PROFILER_JOB_IO_H

/*
 * Job summaries (job_io) from every source the history loop uses, best
 * first: compute-node traces, Darshan, Lustre job_stats, the samples of
 * the forwarders the job held, Slurm accounting.  A summary is replaced
 * only by one of the same or a better source.  job_io.profiled_at marks
 * when the job's profile was last refreshed from its summary (the loop
 * refreshes it again when updated_at is newer).  Functions return 0 or
 * -1 with errno and err, and never print.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/vocab.h"

struct db;

enum job_io_source {
	JOB_IO_NONE = 0, /* no summary */
	JOB_IO_SACCT,
	JOB_IO_FORWARDERS,
	JOB_IO_JOBSTATS,
	JOB_IO_DARSHAN,
	JOB_IO_TRACES,
	JOB_IO_N_SOURCES,
};
const char *job_io_source_name(enum job_io_source s); /* "jobstats" ... */
enum job_io_source job_io_source_parse(const char *s);

struct job_io_state {
	enum job_io_source source; /* JOB_IO_NONE: no row */
	int64_t updated_at;
	int64_t profiled_at; /* -1: never */
};

/* out[i] = the summary state of ids[i]. */
int job_io_status(struct db *db, const uint64_t *ids, size_t n,
		  struct job_io_state *out, fwd_error_t *err);

/* What a source says about a job. */
struct job_io_totals {
	uint64_t read_bytes, write_bytes;
	uint64_t read_ops, write_ops, md_ops;
	uint32_t io_nodes, procs;
	enum fwd_io_mode io_mode; /* FWD_IO_NONE when unknown */
	double runtime;		  /* seconds */
	uint32_t forwarders_held; /* k; the achieved bandwidth is the
				   * volume over the run time when k > 0
				   * or the run was direct */
	bool forwarders_private;  /* every one of them the job's own */
	bool direct; /* decided direct (k = 0: no forwarder at all) */
};

/*
 * Upsert the summary of job_id from `source` (never over a better
 * source's; updated_at changes only when a figure does).
 */
int job_io_store_totals(struct db *db, uint64_t job_id,
			enum job_io_source source,
			const struct job_io_totals *t, int64_t now,
			fwd_error_t *err);

/* The loop refreshed job_id's profile at `now`. */
int job_io_mark_profiled(struct db *db, uint64_t job_id, int64_t now,
			 fwd_error_t *err);

/* The summaries of ids (newest id first) as a JSON array of {job_id,
 * source, read_bytes, write_bytes, mdops, forwarders_held,
 * bandwidth_achieved_bps, runtime}: where a profile's figures come from. */
int job_io_sources(struct db *db, const uint64_t *ids, size_t n, json_t **out,
		   fwd_error_t *err);

/* One job_io row, every figure; a NULL double is NAN, a NULL count 0. */
struct job_io_row {
	uint64_t job_id;
	char source[16]; /* "traces", "darshan", ... */
	uint64_t read_bytes, write_bytes, mdops;
	uint32_t io_nodes, procs, forwarders_held;
	char io_mode[8]; /* "N-N", ..., "none" */
	double node_bandwidth_bps, peak_bandwidth_bps, iops, mdops_rate;
	double metadata_queue, bandwidth_achieved_bps, runtime;
	bool forwarders_private, direct;
	char *phases; /* the phases JSON text, malloc'd, NULL when none */
};

/*
 * The job_io rows of ids (those that have one), in order of job id,
 * malloc'd (job_io_rows_free()).  0 or -1.
 */
int job_io_rows(struct db *db, const uint64_t *ids, size_t n,
		struct job_io_row **out, size_t *n_out, fwd_error_t *err);
void job_io_rows_free(struct job_io_row *v, size_t n);

#endif
