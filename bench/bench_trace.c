/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_trace: parse + first-pass compression throughput on a generated
 * trace (default 1 GiB; `bench_trace MB` for another size), and the
 * compression ratio on each synthetic I/O pattern.  Prints figures; no
 * timed assertions.  The generated trace lives in a temporary directory
 * and is deleted before exit.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profiler/summary.h"
#include "profiler/synth.h"
#include "profiler/trace.h"

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long fsize(const char *path)
{
	FILE *f = fopen(path, "r");
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return n;
}

/* Ratio of one pattern: 16 nodes' traces compressed one by one. */
static int pattern_ratio(const char *dir, enum trace_synth_pattern pat)
{
	struct trace_synth s = {
		.pattern = pat,
		.nodes = 16,
		.procs = 4,
		.groups = 4,
		.req_size = 1 << 20,
		.reqs_per_sec = 16,
		.seconds = 30,
		.start = 1472292884,
		.pid_prefix = true,
	};
	uint64_t in = 0, out = 0, recs = 0, runs = 0;
	char raw[512], comp[512];
	fwd_error_t err;

	snprintf(raw, sizeof(raw), "%s/p.trace", dir);
	snprintf(comp, sizeof(comp), "%s/p.ctrace", dir);
	for (uint32_t n = 0; n < s.nodes; n++) {
		struct trace_stats st;
		uint64_t ob = 0;
		FILE *f = fopen(raw, "w");

		if (!f || trace_synth_node(f, &s, n, NULL) || fclose(f)) {
			perror(raw);
			return -1;
		}
		if (trace_compress_file(raw, comp, "n", &st, &ob, &err)) {
			fprintf(stderr, "%s\n", err.text);
			return -1;
		}
		in += st.bytes;
		out += ob;
		recs += st.records;
		/* runs = record lines of the compressed file */
		struct trace_reader *r = trace_reader_open(comp, NULL);
		struct trace_rec rec;

		while (r && trace_reader_next(r, &rec, NULL) == 1)
			;
		if (r)
			runs += trace_reader_stats(r)->runs;
		trace_reader_destroy(r);
	}
	printf("  %-16s %10" PRIu64 " -> %9" PRIu64 " bytes  %6.1fx  "
	       "(%" PRIu64 " records in %" PRIu64 " runs)\n",
	       trace_synth_name(pat), in, out,
	       out ? (double)in / (double)out : 0, recs, runs);
	unlink(raw);
	unlink(comp);
	return 0;
}

int main(int argc, char **argv)
{
	static const enum trace_synth_pattern pats[] = {
		SYNTH_N_N, SYNTH_N_1,	 SYNTH_N_M,  SYNTH_N_M_AGG,
		SYNTH_1_1, SYNTH_RANDOM, SYNTH_META,
	};
	long mb = argc > 1 ? atol(argv[1]) : 1024;
	char dir[] = "/tmp/bench_trace.XXXXXX";
	char raw[512], comp[512];
	struct trace_synth s = {
		.pattern = SYNTH_N_N,
		.nodes = 1,
		.procs = 8,
		.groups = 1,
		.req_size = 65536,
		.reqs_per_sec = 16,
		.seconds = 1,
		.start = 1472292884,
		.pid_prefix = true,
	};
	struct trace_stats st;
	uint64_t out_bytes = 0;
	double w0, c0, wall, cpu;
	fwd_error_t err;
	long size;
	FILE *f;
	int rc = 1;

	if (mb <= 0) {
		fprintf(stderr, "usage: bench_trace [MB]\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(raw, sizeof(raw), "%s/node.trace", dir);
	snprintf(comp, sizeof(comp), "%s/node.ctrace", dir);

	/* One node's trace of about `mb` MiB: 8 processes, 16 contiguous
	 * 64 KiB writes each per second, for as many seconds as needed. */
	f = fopen(raw, "w");
	if (!f) {
		perror(raw);
		goto out;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	while (ftell(f) < mb * 1048576L) {
		if (trace_synth_node(f, &s, 0, NULL)) {
			perror(raw);
			fclose(f);
			goto out;
		}
		s.start++;
	}
	if (fclose(f)) {
		perror(raw);
		goto out;
	}
	size = fsize(raw);
	printf("bench_trace: generated %.1f MiB trace (%s)\n",
	       (double)size / 1048576, raw);

	/* parse + compress, output to a file (what a node-side daemon does) */
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	if (trace_compress_file(raw, comp, "node", &st, &out_bytes, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.text);
		goto out;
	}
	wall = now(CLOCK_MONOTONIC) - w0;
	cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	printf("parse+compress: %.1f MiB, %" PRIu64 " records -> %" PRIu64
	       " bytes (%.1fx)\n",
	       (double)st.bytes / 1048576, st.records, out_bytes,
	       (double)st.bytes / (double)out_bytes);
	printf("parse+compress: %.2f s wall, %.2f s cpu: %.0f MB/s per core "
	       "(%.2f M records/s)\n",
	       wall, cpu, (double)st.bytes / 1e6 / cpu,
	       (double)st.records / 1e6 / cpu);
	unlink(comp);

	/* summary over the same trace (one node) */
	{
		struct trace_job *j = trace_job_create(NULL);
		struct trace_summary sum;

		c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		if (!j || trace_job_add_file(j, raw, NULL, NULL, &err) ||
		    trace_job_finish(j, &sum, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.text);
			trace_job_destroy(j);
			goto out;
		}
		cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		printf("parse+summarize: %.0f MB/s per core\n",
		       (double)size / 1e6 / cpu);
		trace_summary_free(&sum);
		trace_job_destroy(j);
	}
	unlink(raw);

	printf("compression ratio per pattern (16 nodes x 4 procs x 16 "
	       "req/s x 30 s):\n");
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (pattern_ratio(dir, pats[i]))
			goto out;
	rc = 0;
out:
	unlink(raw);
	unlink(comp);
	rmdir(dir);
	return rc;
}
