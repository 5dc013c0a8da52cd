/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_SYNTH_H
#define FWD_PROFILER_SYNTH_H

/*
 * Synthetic LWFS client traces of each I/O mode, for tests, benchmarks
 * and demonstrations.  Deterministic: the same parameters give the same
 * bytes.  Each process opens its file, issues reqs_per_sec contiguous
 * requests of req_size bytes per second for `seconds` seconds (offsets
 * advancing through its own segment of the file), then releases it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum trace_synth_pattern {
	SYNTH_N_N = 0, /* every node writes its own file per process */
	SYNTH_N_1,     /* every node writes a segment of one shared file */
	SYNTH_N_M,     /* groups of nodes share one of M files */
	SYNTH_N_M_AGG, /* M aggregator nodes write one file each; the
			* other nodes do no I/O */
	SYNTH_1_1,     /* node 0 alone writes one file */
	SYNTH_RANDOM,  /* N-N with scattered offsets: nothing to merge */
	SYNTH_META,    /* N-N plus a GETATTR between requests */
};

struct trace_synth {
	enum trace_synth_pattern pattern;
	uint32_t nodes;	       /* nodes of the job */
	uint32_t procs;	       /* I/O processes per node */
	uint32_t groups;       /* M for the N-M patterns */
	uint64_t req_size;     /* bytes per request */
	uint32_t reqs_per_sec; /* per process */
	uint32_t seconds;      /* length of the I/O phase */
	int64_t start;	       /* first second (UTC epoch) */
	bool read;	       /* READ instead of WRITE */
	bool pid_prefix;       /* "lwfs-fuse: PID:" form */
};

const char *trace_synth_name(enum trace_synth_pattern p);

/*
 * Write node `node`'s trace (0 <= node < s->nodes) to f.  Returns 0, or
 * -1 with errno on a write error.  bytes (may be NULL) gets the data
 * volume written into the trace's records.
 */
int trace_synth_node(FILE *f, const struct trace_synth *s, uint32_t node,
		     uint64_t *bytes);

#endif
