/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_DARSHAN_H
#define FWD_PROFILER_DARSHAN_H

/*
 * What a Darshan log says about a job, read from the text darshan-parser
 * prints (darshan-util, log format 3.x): `darshan-parser --total --perf`
 * (total_POSIX_* lines, the performance block) and the plain per-record
 * dump (<module> <rank> <record id> <counter> <value> <file> <mount>
 * <fs>; rank -1 is a file shared by all processes), or both
 * (`--all`: the totals win).  Pure: no database.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/vocab.h"

struct darshan_summary {
	uint64_t job_id;    /* "# jobid:" (Slurm's job id under Slurm) */
	int64_t start, end; /* "# start_time:", "# end_time:" (s) */
	uint64_t nprocs;    /* "# nprocs:" */
	uint64_t read_bytes, write_bytes; /* POSIX + STDIO */
	uint64_t reads, writes;		  /* POSIX + STDIO operations */
	uint64_t md_ops; /* opens, stats, seeks excluded: opens, stats,
			  * fsyncs, fdatasyncs, renames (POSIX, STDIO) */
	uint64_t shared_bytes, unique_bytes; /* by rank -1 / >= 0 records,
					      * or the perf block's split */
	enum fwd_io_mode io_mode;	     /* N-1 shared, N-N a file per
					      * process, N-M both, 1-1 one
					      * process; FWD_IO_NONE when the
					      * output does not say */
	long lines;			     /* lines read */
};

/*
 * Read darshan-parser output from f.  0 with *out, or -1 with err
 * ("line N: ...") for text that is not darshan-parser output (a line of
 * another form, a counter that is not a number, no "# jobid:" or times).
 */
int darshan_parse(FILE *f, struct darshan_summary *out, fwd_error_t *err);

/*
 * The plausibility of a summary (common/plausible.h), before it is
 * stored: start and end times within 2000 .. now + 1 day and in order,
 * nprocs at least 1, every count at most 2^63-1 and the bytes at most
 * max_bps per second of the run (max_bps <= 0: no bound; the policy's
 * ingest.max_bandwidth).  0, or -1 with errno EINVAL and err (reason
 * set).
 */
int darshan_check(const struct darshan_summary *s, int64_t now, double max_bps,
		  fwd_error_t *err);

#endif
