/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job summaries: I/O mode classification on synthetic traces of every
 * mode, phase and rate arithmetic on hand-built records, robustness to
 * broken lines, raw and compressed inputs agreeing.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps) assert_near_((a), (b), (eps), #a)
static void assert_near_(double a, double b, double eps, const char *what)
{
	if (!(a - b <= eps && b - a <= eps))
		fail_msg("%s = %.17g, want %.17g", what, a, b);
}

#include "profiler/summary.h"
#include "profiler/synth.h"
#include "profiler/trace.h"

#define T0 1472292884

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_summary.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	/* only files this test created, in its own mkdtemp directory */
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write every node's trace of s into tmpdir/<prefix>-c<i>.trace and
 * summarise them; dirty adds broken lines between the good ones. */
static void summarize_synth(const struct trace_synth *s, const char *prefix,
			    bool dirty, bool compress,
			    struct trace_summary *out)
{
	struct trace_job *j = trace_job_create(NULL);
	fwd_error_t err = {""};

	assert_non_null(j);
	for (uint32_t n = 0; n < s->nodes; n++) {
		char path[256], cpath[300], node[16];
		FILE *f;

		snprintf(node, sizeof(node), "c%u", n + 1);
		snprintf(path, sizeof(path), "%s/%s-%s.trace", tmpdir, prefix,
			 node);
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(trace_synth_node(f, s, n, NULL), 0);
		fclose(f);
		if (dirty) {
			/* interleave garbage: every good line followed by a
			 * broken one */
			char dpath[300], line[TRACE_LINE_MAX];
			FILE *in = fopen(path, "r"), *o;

			snprintf(dpath, sizeof(dpath), "%s.dirty", path);
			o = fopen(dpath, "w");
			assert_non_null(in);
			assert_non_null(o);
			fputs("# a comment\n", o);
			while (fgets(line, sizeof(line), in)) {
				fputs(line, o);
				fputs("[2016-08-27 10:14:44] T WRITE (0x1, "
				      "size=oops)\n",
				      o);
				fputs("lwfs-fuse: 1: WRITE (0x1, size=1, "
				      "offset=0, count=1)\n",
				      o);
			}
			fclose(in);
			fclose(o);
			rename(dpath, path);
		}
		if (compress) {
			snprintf(cpath, sizeof(cpath), "%s.c", path);
			assert_int_equal(trace_compress_file(path, cpath, node,
							     NULL, NULL, NULL),
					 0);
			if (trace_job_add_file(j, cpath, NULL, NULL, &err))
				fail_msg("%s", err.text);
		} else if (trace_job_add_file(j, path, node, NULL, &err)) {
			fail_msg("%s", err.text);
		}
	}
	if (trace_job_finish(j, out, &err))
		fail_msg("%s", err.text);
	trace_job_destroy(j);
}

struct mode_case {
	enum trace_synth_pattern pattern;
	uint32_t nodes, procs, groups;
	bool pid;
	enum fwd_io_mode want;
	uint32_t io_nodes, io_procs, files, shared_files;
};

/* 1 shared file vs N files vs M aggregator files vs one node. */
static void test_modes(void **state)
{
	static const struct mode_case cases[] = {
		{SYNTH_N_N, 8, 2, 0, true, FWD_IO_N_N, 8, 16, 16, 0},
		{SYNTH_N_N, 8, 1, 0, false, FWD_IO_N_N, 8, 8, 8, 0},
		{SYNTH_N_1, 8, 2, 0, true, FWD_IO_N_1, 8, 16, 1, 1},
		{SYNTH_N_1, 3, 1, 0, false, FWD_IO_N_1, 3, 3, 1, 1},
		{SYNTH_N_M, 8, 2, 2, true, FWD_IO_N_M, 8, 16, 2, 2},
		{SYNTH_N_M, 8, 1, 4, true, FWD_IO_N_M, 8, 8, 4, 4},
		{SYNTH_N_M_AGG, 8, 1, 2, true, FWD_IO_N_M, 2, 2, 2, 0},
		{SYNTH_N_M_AGG, 16, 2, 4, true, FWD_IO_N_M, 4, 8, 8, 0},
		{SYNTH_1_1, 8, 1, 0, true, FWD_IO_1_1, 1, 1, 1, 0},
		{SYNTH_1_1, 1, 1, 0, false, FWD_IO_1_1, 1, 1, 1, 0},
		{SYNTH_RANDOM, 4, 1, 0, true, FWD_IO_N_N, 4, 4, 4, 0},
		{SYNTH_META, 4, 1, 0, true, FWD_IO_N_N, 4, 4, 4, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mode_case *c = &cases[i];
		struct trace_synth s = {
			.pattern = c->pattern,
			.nodes = c->nodes,
			.procs = c->procs,
			.groups = c->groups,
			.req_size = 4096,
			.reqs_per_sec = 5,
			.seconds = 3,
			.start = T0,
			.pid_prefix = c->pid,
		};
		struct trace_summary sum;
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "mode%zu", i);
		summarize_synth(&s, prefix, false, false, &sum);
		if (sum.io_mode != c->want)
			fail_msg("case %zu (%s): mode %s, want %s", i,
				 trace_synth_name(c->pattern),
				 fwd_io_mode_name(sum.io_mode),
				 fwd_io_mode_name(c->want));
		assert_int_equal(sum.write_mode, c->want);
		assert_int_equal(sum.read_mode, FWD_IO_NONE);
		assert_int_equal(sum.nodes, c->nodes);
		assert_int_equal(sum.io_nodes, c->io_nodes);
		assert_int_equal(sum.io_procs, c->io_procs);
		assert_int_equal(sum.files, c->files);
		assert_int_equal(sum.shared_files, c->shared_files);
		assert_int_equal(sum.read_bytes, 0);
		assert_int_equal(sum.write_bytes,
				 (uint64_t)c->io_procs * 4096 * 5 * 3);
		trace_summary_free(&sum);
	}
}

static void rec_rw(struct trace_rec *r, int64_t t, enum trace_op op,
		   uint64_t fd, uint64_t size, uint64_t off, uint64_t count)
{
	memset(r, 0, sizeof(*r));
	r->time = t;
	r->level = 'T';
	r->op = op;
	r->fd = fd;
	r->size = size;
	r->offset = off;
	r->count = count;
	r->n = 1;
	r->text = "";
}

/*
 * Hand-checked phases and rates.
 * node a: OPEN f at 0; 100 B at 0, 100 B at 1, 50 B at 10 (count=2 of
 *         25), 1 B at 20.   node b: OPEN f at 1, 100 B read at 1.
 * Per second: 0:100  1:200  10:50  20:1; peak 200, threshold 20.
 * Metadata: 1 at 0, 1 at 1; peak 1, threshold 0.1: seconds 0 and 1.
 * Active seconds 0, 1, 10 (20 is below 10 % of the peak); gap 2 joins
 * 0-1 only: phases [0,1] and [10,10], 3 s, 350 B, 5 requests, 2 md ops.
 */
static void test_phase_math(void **state)
{
	struct trace_job *j = trace_job_create(NULL);
	struct trace_summary s;
	struct trace_rec r;
	fwd_error_t err;
	json_t *o;

	(void)state;
	assert_non_null(j);
	assert_int_equal(trace_job_node_begin(j, "a", &err), 0);
	rec_rw(&r, T0, TRACE_OP_OPEN, 1, 0, 0, 0);
	r.text = "f";
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	rec_rw(&r, T0, TRACE_OP_WRITE, 1, 100, 0, 1);
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	rec_rw(&r, T0 + 1, TRACE_OP_WRITE, 1, 100, 100, 1);
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	rec_rw(&r, T0 + 10, TRACE_OP_WRITE, 1, 25, 200, 2);
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	rec_rw(&r, T0 + 20, TRACE_OP_WRITE, 1, 1, 250, 1);
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	assert_int_equal(trace_job_node_end(j, &err), 0);
	assert_int_equal(trace_job_node_begin(j, "b", &err), 0);
	rec_rw(&r, T0 + 1, TRACE_OP_OPEN, 7, 0, 0, 0);
	r.text = "f";
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	rec_rw(&r, T0 + 1, TRACE_OP_READ, 7, 100, 0, 1);
	assert_int_equal(trace_job_add(j, &r, &err), 0);
	assert_int_equal(trace_job_node_end(j, &err), 0);
	/* the same node twice is refused */
	assert_int_equal(trace_job_node_begin(j, "a", &err), -1);
	assert_string_equal(err.text, "node a given twice");
	assert_int_equal(trace_job_finish(j, &s, &err), 0);

	assert_int_equal(s.nodes, 2);
	assert_int_equal(s.io_nodes, 2);
	assert_int_equal(s.io_procs, 2); /* no pids: one per node */
	assert_int_equal(s.write_bytes, 251);
	assert_int_equal(s.read_bytes, 100);
	assert_int_equal(s.write_ops, 5);
	assert_int_equal(s.read_ops, 1);
	assert_int_equal(s.mdops, 2);
	assert_int_equal(s.files, 1);
	assert_int_equal(s.shared_files, 1);
	/* writes: node a alone; reads: node b alone; together: one file
	 * shared by both nodes */
	assert_int_equal(s.write_mode, FWD_IO_1_1);
	assert_int_equal(s.read_mode, FWD_IO_1_1);
	assert_int_equal(s.io_mode, FWD_IO_N_1);
	assert_int_equal(s.n_phases, 2);
	assert_int_equal(s.phases[0].start, T0);
	assert_int_equal(s.phases[0].end, T0 + 1);
	assert_int_equal(s.phases[0].bytes, 300);
	assert_int_equal(s.phases[0].read_bytes, 100);
	assert_int_equal(s.phases[0].write_bytes, 200);
	assert_int_equal(s.phases[1].start, T0 + 10);
	assert_int_equal(s.phases[1].end, T0 + 10);
	assert_int_equal(s.phases[1].bytes, 50);
	assert_near(s.io_seconds, 3, 0);
	assert_near(s.peak_bandwidth_bps, 200, 0);
	assert_near(s.phase_bandwidth_bps, 350.0 / 3, 1e-9);
	assert_near(s.node_bandwidth_bps, 350.0 / 3 / 2, 1e-9);
	/* requests in phases: 1 + 1 + 1 (b) + 2 (count=2) = 5 */
	assert_near(s.iops, 5.0 / 3, 1e-9);
	assert_near(s.mdops_rate, 2.0 / 3, 1e-9);
	assert_int_equal(s.start, T0);
	assert_int_equal(s.end, T0 + 20);

	o = trace_summary_to_json(&s);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "io_mode")),
			    "N-1");
	assert_int_equal(json_integer_value(json_object_get(o, "io_nodes")), 2);
	assert_int_equal(json_array_size(json_object_get(o, "phases")), 2);
	json_decref(o);
	trace_summary_free(&s);
	trace_job_destroy(j);
}

static json_t *stable_json(const struct trace_summary *s)
{
	json_t *o = trace_summary_to_json(s);

	assert_non_null(o);
	json_object_del(o, "lines");
	json_object_del(o, "skipped");
	return o;
}

/* Broken lines do not change the result of the good ones; compressed
 * traces give the same summary as raw ones. */
static void test_broken_and_compressed(void **state)
{
	static const enum trace_synth_pattern pats[] = {
		SYNTH_N_1, SYNTH_N_N, SYNTH_N_M, SYNTH_N_M_AGG, SYNTH_1_1,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		struct trace_synth s = {
			.pattern = pats[i],
			.nodes = 4,
			.procs = 2,
			.groups = 2,
			.req_size = 1 << 20,
			.reqs_per_sec = 8,
			.seconds = 5,
			.start = T0,
			.pid_prefix = true,
		};
		struct trace_summary clean, dirty, comp;
		json_t *a, *b, *c;
		char pfx[32];

		snprintf(pfx, sizeof(pfx), "clean%zu", i);
		summarize_synth(&s, pfx, false, false, &clean);
		snprintf(pfx, sizeof(pfx), "dirty%zu", i);
		summarize_synth(&s, pfx, true, false, &dirty);
		snprintf(pfx, sizeof(pfx), "comp%zu", i);
		summarize_synth(&s, pfx, false, true, &comp);
		assert_int_equal(clean.skipped, 0);
		assert_true(dirty.skipped > 2 * clean.records / 2);
		a = stable_json(&clean);
		b = stable_json(&dirty);
		c = stable_json(&comp);
		if (!json_equal(a, b) || !json_equal(a, c)) {
			char *x = json_dumps(a, JSON_COMPACT);
			char *y = json_dumps(json_equal(a, b) ? c : b,
					     JSON_COMPACT);

			fail_msg("%s: summaries differ:\n%s\n%s",
				 trace_synth_name(pats[i]), x, y);
		}
		json_decref(a);
		json_decref(b);
		json_decref(c);
		trace_summary_free(&clean);
		trace_summary_free(&dirty);
		trace_summary_free(&comp);
	}
}

/* The job's node count from the jobs table turns "each of my I/O nodes
 * has its own file" into N-M when most nodes did no I/O. */
static void test_job_nodes_option(void **state)
{
	struct trace_summary_opts o;
	struct trace_job *j;
	struct trace_summary s;
	struct trace_rec r;

	(void)state;
	trace_summary_opts_default(&o);
	o.job_nodes = 64;
	j = trace_job_create(&o);
	for (int n = 0; n < 4; n++) {
		char name[8];

		snprintf(name, sizeof(name), "c%d", n);
		assert_int_equal(trace_job_node_begin(j, name, NULL), 0);
		rec_rw(&r, T0, TRACE_OP_WRITE, 0x10, 4096, 0, 1);
		assert_int_equal(trace_job_add(j, &r, NULL), 0);
		assert_int_equal(trace_job_node_end(j, NULL), 0);
	}
	assert_int_equal(trace_job_finish(j, &s, NULL), 0);
	assert_int_equal(s.nodes, 64);
	assert_int_equal(s.io_nodes, 4);
	assert_int_equal(s.io_mode, FWD_IO_N_M);
	trace_summary_free(&s);
	trace_job_destroy(j);
}

/* Dominant by volume: one node writing 1 GB while the others read a
 * small private file each is 1-1; two nodes carrying most private bytes
 * out of 8 is N-M; shared-file bytes beat a smaller private volume. */
static void test_dominant_by_volume(void **state)
{
	static const struct {
		uint64_t big[8]; /* private bytes per node */
		uint64_t shared; /* bytes per node to one shared file */
		enum fwd_io_mode want;
	} cases[] = {
		{{1000000000, 10, 10, 10, 10, 10, 10, 10}, 0, FWD_IO_1_1},
		{{500, 500, 1, 1, 1, 1, 1, 1}, 0, FWD_IO_N_M},
		{{100, 100, 100, 100, 100, 100, 100, 1}, 0, FWD_IO_N_N},
		/* half of the nodes: aggregators; more than half: N-N */
		{{100, 100, 100, 100, 0, 0, 0, 0}, 0, FWD_IO_N_M},
		{{100, 100, 100, 100, 100, 0, 0, 0}, 0, FWD_IO_N_N},
		{{10, 10, 10, 10, 10, 10, 10, 10}, 11, FWD_IO_N_1},
		{{12, 12, 12, 12, 12, 12, 12, 12}, 11, FWD_IO_N_N},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_job *j = trace_job_create(NULL);
		struct trace_summary s;
		struct trace_rec r;

		for (int n = 0; n < 8; n++) {
			char name[8];

			snprintf(name, sizeof(name), "c%d", n);
			assert_int_equal(trace_job_node_begin(j, name, NULL),
					 0);
			if (cases[i].big[n]) {
				/* a never-opened fd: private to the node */
				rec_rw(&r, T0, TRACE_OP_WRITE, 0x10,
				       cases[i].big[n], 0, 1);
				assert_int_equal(trace_job_add(j, &r, NULL), 0);
			}
			if (cases[i].shared) {
				rec_rw(&r, T0, TRACE_OP_OPEN, 0x20, 0, 0, 0);
				r.text = "shared";
				assert_int_equal(trace_job_add(j, &r, NULL), 0);
				rec_rw(&r, T0, TRACE_OP_WRITE, 0x20,
				       cases[i].shared, 0, 1);
				assert_int_equal(trace_job_add(j, &r, NULL), 0);
			}
			assert_int_equal(trace_job_node_end(j, NULL), 0);
		}
		assert_int_equal(trace_job_finish(j, &s, NULL), 0);
		if (s.io_mode != cases[i].want)
			fail_msg("case %zu: %s, want %s", i,
				 fwd_io_mode_name(s.io_mode),
				 fwd_io_mode_name(cases[i].want));
		trace_summary_free(&s);
		trace_job_destroy(j);
	}
}

static void test_span_limit(void **state)
{
	struct trace_summary_opts o;
	struct trace_job *j;
	struct trace_rec r;
	fwd_error_t err;

	(void)state;
	trace_summary_opts_default(&o);
	o.max_span = 100;
	j = trace_job_create(&o);
	assert_int_equal(trace_job_node_begin(j, "c1", NULL), 0);
	rec_rw(&r, T0, TRACE_OP_WRITE, 0x10, 1, 0, 1);
	assert_int_equal(trace_job_add(j, &r, NULL), 0);
	/* earlier records extend the series backwards */
	rec_rw(&r, T0 - 50, TRACE_OP_WRITE, 0x10, 1, 0, 1);
	assert_int_equal(trace_job_add(j, &r, NULL), 0);
	rec_rw(&r, T0 + 50, TRACE_OP_WRITE, 0x10, 1, 0, 1);
	assert_int_equal(trace_job_add(j, &r, &err), -1);
	assert_non_null(strstr(err.text, "traces span more than 100 seconds"));
	trace_job_destroy(j);
}

/* Only the job's time window counts: a node's trace holds other jobs. */
static void test_time_window(void **state)
{
	struct trace_summary_opts o;
	struct trace_job *j;
	struct trace_summary s;
	struct trace_rec r;

	(void)state;
	trace_summary_opts_default(&o);
	o.from = T0 + 10;
	o.to = T0 + 19;
	j = trace_job_create(&o);
	assert_int_equal(trace_job_node_begin(j, "c1", NULL), 0);
	for (int t = 0; t < 30; t++) {
		rec_rw(&r, T0 + t, TRACE_OP_WRITE, 0x10, 1000, 1000 * t, 1);
		assert_int_equal(trace_job_add(j, &r, NULL), 0);
	}
	assert_int_equal(trace_job_node_end(j, NULL), 0);
	assert_int_equal(trace_job_finish(j, &s, NULL), 0);
	assert_int_equal(s.write_bytes, 10000);
	assert_int_equal(s.records, 10);
	assert_int_equal(s.outside, 20);
	assert_int_equal(s.start, T0 + 10);
	assert_int_equal(s.end, T0 + 19);
	assert_int_equal(s.n_phases, 1);
	trace_summary_free(&s);
	trace_job_destroy(j);
}

static void test_mode_names(void **state)
{
	static const char *const names[] = {"none", "1-1", "N-1", "N-M", "N-N"};
	enum fwd_io_mode m;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(fwd_io_mode_parse(names[i], &m), 0);
		assert_string_equal(fwd_io_mode_name(m), names[i]);
	}
	assert_int_equal(fwd_io_mode_parse("N-2", &m), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_phase_math),
		cmocka_unit_test(test_broken_and_compressed),
		cmocka_unit_test(test_job_nodes_option),
		cmocka_unit_test(test_dominant_by_volume),
		cmocka_unit_test(test_span_limit),
		cmocka_unit_test(test_time_window),
		cmocka_unit_test(test_mode_names),
	};

	return cmocka_run_group_tests_name("summary", tests, setup, teardown);
}
