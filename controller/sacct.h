/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_SACCT_H
#define FWD_CONTROLLER_SACCT_H

/*
 * Slurm accounting as history: the output of
 *   sacct --parsable2 --noconvert --allusers --starttime ... \
 *     --format=JobID,JobName,User,Account,Partition,NNodes,NodeList,\
 *              Start,End,State,TRESUsageInTot,TRESUsageOutTot
 * ('|'-separated, a header line naming the fields; the order is free and
 * other fields are ignored).  A job's line holds who and when; its steps'
 * lines (1234.batch, 1234.0, 1234.extern) hold the usage, whose fs/lustre
 * TRES (acct_gather_filesystem/lustre) is the bytes read (In) and written
 * (Out) on Lustre.  Without --noconvert sacct rounds sizes ("1.50G"):
 * they are read, but lose precision.  Start and End are wall-clock
 * times of the local time zone of the host sacct ran on (sacct's default
 * format, without a zone): they are read in the process's TZ, by the
 * zone's rules at each date (daylight saving), so the caller sets TZ to
 * that zone (fwdctl ingest --timezone).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

struct db;
struct policy;

struct sacct_job {
	uint64_t job_id;
	char user[65], account[65], name[256], partition[65], state[33];
	char nodelist[1024];
	uint32_t nnodes;
	int64_t start, end;
	bool has_lustre;		    /* an fs/lustre TRES was seen */
	bool lustre_bad;		    /* a step's was refused */
	long line;			    /* input line of the job */
	uint64_t lustre_read, lustre_write; /* summed over the steps */
};

#define SACCT_ERRORS_KEPT 5
#define SACCT_REASONS 6

struct sacct_stats {
	uint64_t lines, jobs, summaries; /* jobs recorded; with fs/lustre */
	uint64_t jobs_new;		 /* rows added to the jobs table */
	uint64_t not_run, running;	 /* ignored: never started, no end */
	uint64_t array_het;		 /* ignored: array / het components */
	uint64_t profiles;		 /* profiles recomputed */
	/* lines refused (malformed or implausible, common/plausible.h), by
	 * reason (FWD_REASON_*; the last slot: others), and the first
	 * messages ("line N: ...") */
	uint64_t rejected;
	struct {
		const char *reason;
		uint64_t n;
	} why[SACCT_REASONS + 1];
	fwd_error_t errors[SACCT_ERRORS_KEPT];
	size_t n_errors;
};

/*
 * Read sacct output from f and record each finished job: its jobs row
 * when there is none, and, with fs/lustre usage, its summary (job_io
 * source sacct, never over a better one); then the profiles of the keys
 * that got summaries.  A malformed or implausible line (common/
 * plausible.h: Start and End within 2000 .. now + 1 day and in order,
 * NNodes from 1 to max_nodes (0: FWD_PLAUS_NODES_MAX), fs/lustre counts
 * at most 2^63-1, a job's bytes at most the policy's
 * ingest.max_bandwidth per second of its run time) costs only itself:
 * it is counted in st->rejected by reason and the file goes on (a bad
 * job line drops its steps; a bad step line drops its job's summary, not
 * the job).  -1 (errno EINVAL, "line N: ...") only for input that is not
 * sacct output (no header, empty) and for database errors; what was
 * recorded before stays, and a second run of the same file records
 * nothing twice.
 */
int ctl_sacct_import(struct db *db, const struct policy *p, FILE *f,
		     int64_t now, uint32_t max_nodes, struct sacct_stats *st,
		     fwd_error_t *err);

#endif
