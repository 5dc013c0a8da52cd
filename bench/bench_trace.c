/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_trace: storing a generated mixed trace (several processes,
 * interleaved N-1 and N-N, scattered offsets; default 256 MiB,
 * `bench_trace MB` for another size) -- first pass, and first pass + zstd
 * (.ctrace.zst) -- next to `zstd -3` (libzstd, in process) on the same
 * bytes: ratios and throughput per core; then the stored ratio of each
 * synthetic I/O pattern next to zstd -3.  Prints figures; no timed
 * assertions.  The generated trace lives in a temporary directory
 * and is deleted before exit.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "bench/report.h"
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

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n >= 0 && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = buf ? (size_t)n : 0;
	return buf;
}

/* `zstd -3` in process on a file's bytes: compressed size and CPU
 * seconds.  -1 on failure. */
static int zstd3(const char *path, uint64_t *in, uint64_t *out, double *cpu)
{
	size_t n, cap;
	char *src = slurp(path, &n), *dst;
	double c0;
	size_t r;

	if (!src)
		return -1;
	cap = ZSTD_compressBound(n);
	if (!(dst = malloc(cap))) {
		free(src);
		return -1;
	}
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	r = ZSTD_compress(dst, cap, src, n, 3);
	*cpu += now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	free(src);
	free(dst);
	if (ZSTD_isError(r))
		return -1;
	*in += n;
	*out += r;
	return 0;
}

/* Ratio of one pattern: 16 nodes' traces compressed one by one, stored
 * (first pass + zstd) next to zstd -3 on the same raw bytes. */
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
	uint64_t in = 0, out = 0, zin = 0, zout = 0, recs = 0, runs = 0;
	double zcpu = 0;
	char raw[512], comp[512], label[128];
	fwd_error_t err;

	snprintf(raw, sizeof(raw), "%s/p.trace", dir);
	snprintf(comp, sizeof(comp), "%s/p.ctrace.zst", dir);
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
		if (zstd3(raw, &zin, &zout, &zcpu) < 0) {
			fprintf(stderr, "bench_trace: zstd -3 failed\n");
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
	printf("  %-16s %10" PRIu64 " -> %9" PRIu64 " bytes stored "
	       "(%" PRIu64 " records in %" PRIu64 " runs)\n",
	       trace_synth_name(pat), in, out, recs, runs);
	snprintf(label, sizeof(label), "stored ratio, %s pattern",
		 trace_synth_name(pat));
	bench_figure("trace", label, out ? (double)in / (double)out : 0, "x",
		     zout ? (double)zin / (double)zout : 0,
		     "zstd -3 on the same bytes");
	unlink(raw);
	unlink(comp);
	return 0;
}

/* Append the lines of the streams to f round-robin, one line of each in
 * turn, as one node's log has its processes' records; stream i's pids
 * become 4(i+1)xxx so that the processes stay distinct. */
static int interleave(FILE *f, char **bufs, size_t n)
{
	char *pos[8];
	bool more = true;

	for (size_t i = 0; i < n; i++)
		pos[i] = bufs[i];
	while (more) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			char *nl, *pid;
			size_t len;

			if (!*pos[i])
				continue;
			nl = strchr(pos[i], '\n');
			len = nl ? (size_t)(nl - pos[i]) + 1 : strlen(pos[i]);
			if (nl)
				*nl = '\0';
			pid = strstr(pos[i], "lwfs-fuse: 40");
			if (nl)
				*nl = '\n';
			if (pid)
				pid[12] = (char)('1' + i);
			if (fwrite(pos[i], 1, len, f) != len)
				return -1;
			pos[i] += len;
			more = true;
		}
	}
	return 0;
}

/* The mixed trace: one node, N-N writers (4 processes), N-1 writers into a
 * shared file (4) and N-N writers at scattered offsets (2), their lines
 * interleaved, for about mb MiB. */
static int gen_mixed(const char *path, long mb)
{
	struct trace_synth s[3] = {
		{.pattern = SYNTH_N_N,
		 .nodes = 4,
		 .procs = 4,
		 .groups = 1,
		 .req_size = 65536,
		 .reqs_per_sec = 16,
		 .seconds = 8,
		 .start = 1472292884,
		 .pid_prefix = true},
		{.pattern = SYNTH_N_1,
		 .nodes = 4,
		 .procs = 4,
		 .groups = 1,
		 .req_size = 1 << 20,
		 .reqs_per_sec = 8,
		 .seconds = 8,
		 .start = 1472292884,
		 .pid_prefix = true},
		{.pattern = SYNTH_RANDOM,
		 .nodes = 4,
		 .procs = 2,
		 .groups = 1,
		 .req_size = 4096,
		 .reqs_per_sec = 32,
		 .seconds = 8,
		 .start = 1472292884,
		 .pid_prefix = true},
	};
	char *bufs[3] = {NULL};
	size_t lens[3], per_s = 0;
	FILE *f = NULL;
	int rv = -1;

	/* bytes per second of the three, then the seconds for mb MiB */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 3; i++) {
			FILE *m;

			free(bufs[i]);
			bufs[i] = NULL;
			if (!(m = open_memstream(&bufs[i], &lens[i])) ||
			    trace_synth_node(m, &s[i], 1, NULL) || fclose(m))
				goto out;
			if (!pass)
				per_s += lens[i] / 8;
		}
		for (int i = 0; !pass && i < 3; i++)
			s[i].seconds = (uint32_t)(mb * 1048576L /
						  (long)(per_s ? per_s : 1)) +
				       1;
	}
	if (!(f = fopen(path, "w")))
		goto out;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	rv = interleave(f, bufs, 3);
	if (fclose(f))
		rv = -1;
out:
	for (int i = 0; i < 3; i++)
		free(bufs[i]);
	return rv;
}

/* Parse + compress raw into out (what a node-side daemon does): bytes
 * in and out, CPU seconds. */
static int compress_timed(const char *raw, const char *out, uint64_t *in,
			  uint64_t *ob, double *cpu)
{
	struct trace_stats st;
	fwd_error_t err;
	double c0 = now(CLOCK_PROCESS_CPUTIME_ID);

	if (trace_compress_file(raw, out, "node", &st, ob, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.text);
		return -1;
	}
	*cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*in = st.bytes;
	return 0;
}

int main(int argc, char **argv)
{
	static const enum trace_synth_pattern pats[] = {
		SYNTH_N_N, SYNTH_N_1,	 SYNTH_N_M,  SYNTH_N_M_AGG,
		SYNTH_1_1, SYNTH_RANDOM, SYNTH_META,
	};
	long mb = argc > 1 ? atol(argv[1]) : 256;
	char dir[] = "/tmp/bench_trace.XXXXXX";
	char raw[512], comp[512], zst[512];
	uint64_t in = 0, first = 0, stored = 0, zin = 0, zout = 0;
	double cpu1, cpu2, zcpu = 0, sum_cpu;
	long size;
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
	snprintf(zst, sizeof(zst), "%s/node.ctrace.zst", dir);
	if (gen_mixed(raw, mb)) {
		perror(raw);
		goto out;
	}
	size = fsize(raw);
	printf("bench_trace: mixed trace of %.1f MiB (N-N, N-1 and scattered "
	       "N-N processes, lines interleaved)\n",
	       (double)size / 1048576);
	if (compress_timed(raw, comp, &in, &first, &cpu1) ||
	    compress_timed(raw, zst, &in, &stored, &cpu2) ||
	    zstd3(raw, &zin, &zout, &zcpu)) {
		fprintf(stderr, "bench_trace: compression failed\n");
		goto out;
	}
	printf("first pass %" PRIu64 " bytes, stored (.ctrace.zst) %" PRIu64
	       " bytes, zstd -3 %" PRIu64 " bytes\n",
	       first, stored, zout);
	bench_figure("trace", "mixed trace, stored ratio (first pass + zstd)",
		     (double)in / (double)stored, "x",
		     (double)zin / (double)zout, "zstd -3 on the same bytes");
	bench_figure("trace", "mixed trace, first-pass ratio",
		     (double)in / (double)first, "x",
		     (double)zin / (double)zout, "zstd -3 on the same bytes");
	bench_figure("trace", "mixed trace, stored compression per core",
		     (double)in / 1e6 / cpu2, "MB/s", (double)zin / 1e6 / zcpu,
		     "zstd -3 on the same bytes");
	bench_figure("trace", "mixed trace, first pass per core",
		     (double)in / 1e6 / cpu1, "MB/s", (double)zin / 1e6 / zcpu,
		     "zstd -3 on the same bytes");

	/* summary over the same trace (one node) */
	{
		struct trace_job *j = trace_job_create(NULL);
		struct trace_summary sum;
		fwd_error_t err;
		double c0 = now(CLOCK_PROCESS_CPUTIME_ID);

		if (!j || trace_job_add_file(j, zst, NULL, NULL, &err) ||
		    trace_job_finish(j, &sum, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.text);
			trace_job_destroy(j);
			goto out;
		}
		sum_cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		bench_figure("trace", "mixed trace, summarize stored per core",
			     (double)size / 1e6 / sum_cpu, "MB/s (raw)",
			     (double)in / 1e6 / cpu2, "storing it");
		trace_summary_free(&sum);
		trace_job_destroy(j);
	}
	unlink(raw);
	unlink(comp);
	unlink(zst);

	printf("stored ratio per pattern (16 nodes x 4 procs x 16 req/s x "
	       "30 s):\n");
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (pattern_ratio(dir, pats[i]))
			goto out;
	rc = 0;
out:
	unlink(raw);
	unlink(comp);
	unlink(zst);
	rmdir(dir);
	return rc;
}
