/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_SUMMARY_H
#define FWD_PROFILER_SUMMARY_H

/*
 * Per-job I/O summary from the traces of all its compute nodes (Beacon
 * §3.3): volumes, nodes and processes doing I/O, files, the I/O mode, the
 * I/O phases and the bandwidth, IOPS and metadata rates inside them.
 *
 * Usage: trace_job_create(); for each node trace_job_add_file() (or
 * trace_job_node_begin(), trace_job_add() per record, trace_job_node_end());
 * trace_job_finish(); trace_summary_to_json(); trace_summary_free().
 * Memory is bounded by the job's distinct files, processes and seconds,
 * not by the number of records.
 *
 * I/O mode, decided on volume (each byte votes for the sharing pattern of
 * the file it went to; the pattern with most bytes wins):
 *   1-1  one node does (nearly) all the I/O;
 *   N-1  the bytes go to files shared by more than half of the I/O nodes;
 *   N-M  the bytes go to files each shared by a group of nodes (at most
 *        half), or to per-node files written by at most half of the job's
 *        nodes (the aggregators);
 *   N-N  the bytes go to per-node files written by more than half of the
 *        job's nodes.
 * Nodes writing per-node files are counted by volume: the fewest nodes
 * carrying 90 % of those bytes.
 * A file is identified by its OPEN path; a descriptor never opened in the
 * trace is a file private to its node.
 *
 * I/O phases: seconds whose job bandwidth is at least phase_fraction of
 * the peak (or whose metadata rate is at least phase_fraction of its
 * peak), joined when separated by at most phase_gap idle seconds.  Rates
 * "in I/O phases" divide the phases' totals by their total duration; the
 * per-node bandwidth B_c is that bandwidth divided by the I/O nodes, so
 * that N_io * B_c is the job's demand while it does I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/vocab.h"
#include "profiler/trace.h"

struct trace_summary_opts {
	double phase_fraction; /* default 0.1 */
	uint32_t phase_gap;    /* seconds; default 2 */
	uint32_t job_nodes;    /* nodes of the job; 0 = node traces given */
	uint32_t max_span;     /* longest trace span, seconds; 31 days */
	/* Only records with from <= time <= to count (a node's trace holds
	 * every job that ran there); 0 = no bound.  Records outside are
	 * counted in `outside`, not as broken. */
	int64_t from, to;
};

void trace_summary_opts_default(struct trace_summary_opts *o);

struct trace_phase {
	int64_t start, end; /* first and last second, inclusive */
	uint64_t bytes;	    /* read_bytes + write_bytes */
	uint64_t read_bytes, write_bytes, ops, mdops;
};

struct trace_summary {
	uint32_t nodes;	   /* job nodes */
	uint32_t io_nodes; /* nodes that read or wrote */
	uint32_t io_procs; /* distinct (node, pid) that read or wrote;
			    * nodes without pids count one each */
	uint64_t read_bytes, write_bytes;
	uint64_t read_ops, write_ops; /* requests */
	uint64_t mdops;	       /* OPEN, RELEASE and other metadata records */
	uint32_t files;	       /* distinct files read or written */
	uint32_t shared_files; /* of which used by more than one node */
	enum fwd_io_mode io_mode, read_mode, write_mode;
	double node_bandwidth_bps;  /* B_c in I/O phases */
	double peak_bandwidth_bps;  /* busiest second, whole job */
	double phase_bandwidth_bps; /* whole job, in I/O phases */
	double iops;		    /* requests/s in I/O phases */
	double mdops_rate;	    /* metadata ops/s in I/O phases */
	double io_seconds;	    /* total duration of the I/O phases */
	int64_t start, end;	    /* first and last second seen; 0 if none */
	struct trace_phase *phases;
	size_t n_phases;
	/* input bookkeeping */
	uint64_t records, lines, skipped;
	uint64_t outside; /* records outside [from, to] */
};

struct trace_job;

struct trace_job *trace_job_create(const struct trace_summary_opts *o);
void trace_job_destroy(struct trace_job *j);

/* Add one node's trace file (raw or compressed).  node NULL = the file
 * name without extension.  A node given twice is an error.  Broken lines
 * are skipped; st (may be NULL) receives the reader's stats. */
int trace_job_add_file(struct trace_job *j, const char *path, const char *node,
		       struct trace_stats *st, fwd_error_t *err);

/* Record-level interface (used by add_file and by tests). */
int trace_job_node_begin(struct trace_job *j, const char *node,
			 fwd_error_t *err);
int trace_job_add(struct trace_job *j, const struct trace_rec *rec,
		  fwd_error_t *err);
int trace_job_node_end(struct trace_job *j, fwd_error_t *err);

/* Compute the summary.  out is owned by the caller (trace_summary_free).
 * The job can not be added to afterwards. */
int trace_job_finish(struct trace_job *j, struct trace_summary *out,
		     fwd_error_t *err);

void trace_summary_free(struct trace_summary *s);

/* The summary as a JSON object (NULL on ENOMEM). */
json_t *trace_summary_to_json(const struct trace_summary *s);

#endif
