/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trace parsing, canonical formatting and first-pass compression.
 */
#include "config.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profiler/synth.h"
#include "profiler/trace.h"

/* 2016-08-27 10:14:44 UTC */
#define T0 1472292884

struct parse_case {
	const char *line;
	int rv; /* 1 record, 0 blank, -1 broken */
	enum trace_op op;
	bool has_pid;
	uint32_t pid;
	uint64_t fd, size, offset, count;
	const char *text; /* path / rest of line */
	const char *err;  /* substring of the error for broken lines */
};

/* clang-format off */
static const struct parse_case parse_cases[] = {
	/* the forms in the DFRA slides, verbatim (with trailing blanks) */
	{ "[2016-08-27 10:14:44] T lwfs-fuse: 69742: OPEN() btio.full.out => 0x200095032d0  ",
	  1, TRACE_OP_OPEN, true, 69742, 0x200095032d0, 0, 0, 0,
	  "btio.full.out", NULL },
	{ "[2016-08-27 10:14:44] T lwfs-fuse: 69745: WRITE (0x200095032d0, size=161320, offset=0, count=2)  ",
	  1, TRACE_OP_WRITE, true, 69745, 0x200095032d0, 161320, 0, 2, "",
	  NULL },
	{ "[2016-08-27 10:14:44] T lwfs-fuse: 69740: RELEASE 0x20009500e40 (FLUSH implied)  \n",
	  1, TRACE_OP_RELEASE, true, 69740, 0x20009500e40, 0, 0, 0,
	  "(FLUSH implied)", NULL },
	{ "[2016-08-27 10:14:49] T lwfs-fuse: 69811: READ (0x20009504160, size=262144, offset=262144, count=4)",
	  1, TRACE_OP_READ, true, 69811, 0x20009504160, 262144, 262144, 4,
	  "", NULL },
	/* Beacon's bare form, with and without the pid prefix */
	{ "[2016-08-27 10:14:44] T READ 0x2a size=4096 offset=8192 count=3\n",
	  1, TRACE_OP_READ, false, 0, 0x2a, 4096, 8192, 3, "", NULL },
	{ "[2016-08-27 10:14:44] T lwfs-fuse: 7: WRITE 0x2a size=1 offset=2 count=3",
	  1, TRACE_OP_WRITE, true, 7, 0x2a, 1, 2, 3, "", NULL },
	/* count is optional (Beacon's raw collector reads without it) */
	{ "[2016-08-27 10:14:44] T WRITE (0x2a, size=10, offset=20)",
	  1, TRACE_OP_WRITE, false, 0, 0x2a, 10, 20, 1, "", NULL },
	{ "[2016-08-27 10:14:44] T OPEN() /a b/c => d.txt => 0x5",
	  1, TRACE_OP_OPEN, false, 0, 5, 0, 0, 0, "/a b/c => d.txt", NULL },
	{ "[2016-08-27 10:14:44] T RELEASE 0x5",
	  1, TRACE_OP_RELEASE, false, 0, 5, 0, 0, 0, "", NULL },
	{ "[2016-08-27 10:14:44] T lwfs-fuse: 9: GETATTR (0x5)",
	  1, TRACE_OP_META, true, 9, 0, 0, 0, 0, " (0x5)", NULL },
	{ "", 0, 0, false, 0, 0, 0, 0, 0, NULL, NULL },
	{ "   \r\n", 0, 0, false, 0, 0, 0, 0, 0, NULL, NULL },
	/* broken lines, each with the reason */
	{ "garbage", -1, 0, false, 0, 0, 0, 0, 0, NULL, "stamp" },
	{ "[2016-02-30 10:14:44] T READ 0x1 size=1 offset=0 count=1", -1, 0,
	  false, 0, 0, 0, 0, 0, NULL, "stamp" },
	{ "[2016-08-27 25:14:44] T READ 0x1 size=1 offset=0 count=1", -1, 0,
	  false, 0, 0, 0, 0, 0, NULL, "stamp" },
	{ "[2016-08-27 10:14:44] t READ 0x1 size=1 offset=0 count=1", -1, 0,
	  false, 0, 0, 0, 0, 0, NULL, "level" },
	{ "[2016-08-27 10:14:44] T FROB 0x1", -1, 0, false, 0, 0, 0, 0, 0,
	  NULL, "unknown operation \"FROB\"" },
	{ "[2016-08-27 10:14:44] T READ 0x size=1 offset=0 count=1", -1, 0,
	  false, 0, 0, 0, 0, 0, NULL, "file descriptor" },
	{ "[2016-08-27 10:14:44] T READ 0x1 size=-1 offset=0 count=1", -1, 0,
	  false, 0, 0, 0, 0, 0, NULL, "bad size=-1" },
	{ "[2016-08-27 10:14:44] T READ 0x1 size=1 offset=99999999999999999999 count=1",
	  -1, 0, false, 0, 0, 0, 0, 0, NULL, "bad offset=99999999999999999999" },
	{ "[2016-08-27 10:14:44] T READ 0x1 size=1 offset=0 count=0", -1, 0,
	  false, 0, 0, 0, 0, 0, NULL, "bad count=0" },
	{ "[2016-08-27 10:14:44] T READ 0x1 size=1 offset=0 count=1 junk", -1,
	  0, false, 0, 0, 0, 0, 0, NULL, "trailing text \" junk\"" },
	{ "[2016-08-27 10:14:44] T READ 0x1 size=1 offset=0 count=1, x", -1,
	  0, false, 0, 0, 0, 0, 0, NULL, "trailing text \", x\"" },
	{ "[2016-08-27 10:14:44] T WRITE (0x1, size=1, offset=0, count=1) x",
	  -1, 0, false, 0, 0, 0, 0, 0, NULL, "trailing text \" x\"" },
	{ "[2016-08-27 10:14:44] T WRITE 0x1 offset=0 size=1", -1, 0, false,
	  0, 0, 0, 0, 0, NULL, "missing size=" },
	{ "[2016-08-27 10:14:44] T WRITE (0x1, size=1, offset=0, count=1", -1,
	  0, false, 0, 0, 0, 0, 0, NULL, "\")\"" },
	{ "[2016-08-27 10:14:44] T lwfs-fuse: x: READ 0x1 size=1 offset=0", -1,
	  0, false, 0, 0, 0, 0, 0, NULL, "pid" },
	{ "[2016-08-27 10:14:44] T OPEN() => 0x1", -1, 0, false, 0, 0, 0, 0,
	  0, NULL, "PATH => 0xFD" },
	{ "[2016-08-27 10:14:44] T OPEN() a => 0xzz", -1, 0, false, 0, 0, 0,
	  0, 0, NULL, "file descriptor" },
	{ "[2016-08-27 10:14:44] T RELEASE 0x1x", -1, 0, false, 0, 0, 0, 0, 0,
	  NULL, "trailing text" },
	{ "[2016-08-27 10:14:44] T READ 0x1 size=18446744073709551615 offset=1 count=1",
	  -1, 0, false, 0, 0, 0, 0, 0, NULL, "overflows" },
};
/* clang-format on */

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]);
	     i++) {
		const struct parse_case *c = &parse_cases[i];
		struct trace_rec r;
		fwd_error_t err = {""};
		char line[512];
		int rv;

		snprintf(line, sizeof(line), "%s", c->line);
		rv = trace_parse_line(line, &r, &err);
		if (rv != c->rv)
			fail_msg("case %zu \"%s\": rv %d want %d (%s)", i,
				 c->line, rv, c->rv, err.text);
		if (rv < 0) {
			if (!strstr(err.text, c->err))
				fail_msg("case %zu: error \"%s\" lacks \"%s\"",
					 i, err.text, c->err);
			continue;
		}
		if (rv == 0)
			continue;
		assert_int_equal(r.op, c->op);
		assert_int_equal(r.has_pid, c->has_pid);
		assert_int_equal(r.pid, c->pid);
		assert_int_equal(r.fd, c->fd);
		assert_int_equal(r.n, 1);
		if (c->op == TRACE_OP_READ || c->op == TRACE_OP_WRITE) {
			assert_int_equal(r.size, c->size);
			assert_int_equal(r.offset, c->offset);
			assert_int_equal(r.count, c->count);
			assert_int_equal(trace_rec_bytes(&r),
					 c->size * c->count);
		}
		assert_string_equal(r.text, c->text);
		assert_int_equal(r.level, 'T');
	}
}

/* Canonical lines format back to themselves byte for byte. */
static void test_format_canonical(void **state)
{
	/* clang-format off */
	static const char *const lines[] = {
		"[2016-08-27 10:14:44] T lwfs-fuse: 69742: OPEN() btio.full.out => 0x200095032d0\n",
		"[2016-08-27 10:14:44] T lwfs-fuse: 69745: WRITE (0x200095032d0, size=161320, offset=0, count=2)\n",
		"[2016-08-27 10:14:44] T lwfs-fuse: 69740: RELEASE 0x20009500e40 (FLUSH implied)\n",
		"[2016-08-27 10:14:44] T READ 0x2a size=4096 offset=8192 count=3\n",
		"[2000-02-29 23:59:59] D lwfs-fuse: 1: MKDIR () /x\n",
		"[1999-12-31 00:00:00] T RELEASE 0x5\n",
	};
	/* clang-format on */

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char in[256], out[256];
		struct trace_rec r;

		snprintf(in, sizeof(in), "%s", lines[i]);
		assert_int_equal(trace_parse_line(in, &r, NULL), 1);
		assert_true(trace_format_raw(&r, 0, out, sizeof(out)) > 0);
		assert_string_equal(out, lines[i]);
	}
}

/* Parse records of a raw text and return them formatted, one per line. */
static char *canonical_stream(const char *path)
{
	struct trace_reader *r = trace_reader_open(path, NULL);
	struct trace_rec rec;
	char *buf = NULL, line[TRACE_LINE_MAX];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(r);
	assert_non_null(m);
	while (trace_reader_next(r, &rec, NULL) == 1)
		for (uint64_t i = 0; i < rec.n; i++) {
			assert_true(trace_format_raw(&rec, i, line,
						     sizeof(line)) > 0);
			fputs(line, m);
		}
	fclose(m);
	trace_reader_destroy(r);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

struct rt_case {
	enum trace_synth_pattern pattern;
	bool pid;
	uint32_t procs, reqs;
	double min_ratio; /* records per compressed line at least */
};

/* Each synthetic pattern: compress, expand, compare byte for byte. */
static void test_roundtrip_patterns(void **state)
{
	static const struct rt_case cases[] = {
		{SYNTH_N_N, true, 2, 50, 20},
		{SYNTH_N_1, false, 4, 50, 20},
		{SYNTH_N_M, true, 1, 10, 3},
		{SYNTH_N_M_AGG, true, 2, 20, 5},
		{SYNTH_1_1, false, 1, 100, 20},
		{SYNTH_RANDOM, true, 2, 20, 0.9},
		{SYNTH_META, true, 1, 20, 0.9},
	};
	char dir[] = "/tmp/test_trace.XXXXXX";
	char raw[300], comp[300], exp[300];

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_synth s = {
			.pattern = cases[i].pattern,
			.nodes = 4,
			.procs = cases[i].procs,
			.groups = 2,
			.req_size = 65536,
			.reqs_per_sec = cases[i].reqs,
			.seconds = 3,
			.start = T0,
			.pid_prefix = cases[i].pid,
		};
		struct trace_stats st;
		uint64_t out_bytes = 0, exp_bytes = 0;
		fwd_error_t err = {""};
		char *a, *b, *c;
		size_t alen, blen;
		FILE *f;

		snprintf(raw, sizeof(raw), "%s/c1.trace", dir);
		snprintf(comp, sizeof(comp), "%s/c1.ctrace", dir);
		snprintf(exp, sizeof(exp), "%s/c1.expanded", dir);
		f = fopen(raw, "w");
		assert_non_null(f);
		assert_int_equal(trace_synth_node(f, &s, 0, NULL), 0);
		fclose(f);

		if (trace_compress_file(raw, comp, NULL, &st, &out_bytes, &err))
			fail_msg("compress: %s", err.text);
		assert_int_equal(st.skipped, 0);
		if (trace_expand_file(comp, exp, NULL, &exp_bytes, &err))
			fail_msg("expand: %s", err.text);
		a = slurp(raw, &alen);
		b = slurp(exp, &blen);
		if (strcmp(a, b))
			fail_msg("pattern %s: expand(compress(x)) != x",
				 trace_synth_name(s.pattern));
		assert_int_equal(blen, exp_bytes);
		c = slurp(comp, NULL);
		assert_non_null(strstr(c, "#node c1\n"));
		/* compression ratio in records per line */
		struct trace_reader *r = trace_reader_open(comp, NULL);
		struct trace_rec rec;

		assert_non_null(r);
		assert_true(trace_reader_compressed(r));
		assert_string_equal(trace_reader_node(r), "c1");
		while (trace_reader_next(r, &rec, NULL) == 1)
			;
		if ((double)trace_reader_stats(r)->records /
			    (double)trace_reader_stats(r)->runs <
		    cases[i].min_ratio)
			fail_msg("pattern %s: %llu records in %llu runs",
				 trace_synth_name(s.pattern),
				 (unsigned long long)trace_reader_stats(r)
					 ->records,
				 (unsigned long long)trace_reader_stats(r)
					 ->runs);
		assert_int_equal(trace_reader_stats(r)->records, st.records);
		/* compress reports the runs it wrote, not the raw lines */
		assert_int_equal(trace_reader_stats(r)->runs, st.runs);
		trace_reader_destroy(r);
		free(a);
		free(b);
		free(c);
	}
	unlink(raw);
	unlink(comp);
	unlink(exp);
	rmdir(dir);
}

/* The merge rule exactly: what joins a run and what breaks it. */
static void test_merge_rule(void **state)
{
	/* clang-format off */
	static const char *const in =
		/* 3 contiguous writes, count=2 each: one run of 3 */
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=0, count=2)\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=200, count=2)\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=400, count=2)\n"
		/* gap in offsets: new run */
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=700, count=2)\n"
		/* other size: new run */
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=50, offset=900, count=2)\n"
		/* other pid: new run */
		"[2016-08-27 10:14:44] T lwfs-fuse: 2: WRITE (0x10, size=50, offset=1000, count=2)\n"
		/* next second: new run */
		"[2016-08-27 10:14:45] T lwfs-fuse: 2: WRITE (0x10, size=50, offset=1100, count=2)\n"
		/* READ after WRITE: new run */
		"[2016-08-27 10:14:45] T lwfs-fuse: 2: READ (0x10, size=50, offset=1200, count=2)\n"
		/* a metadata record between two contiguous reads splits */
		"[2016-08-27 10:14:45] T lwfs-fuse: 2: GETATTR (0x10)\n"
		"[2016-08-27 10:14:45] T lwfs-fuse: 2: READ (0x10, size=50, offset=1300, count=2)\n"
		"[2016-08-27 10:14:45] T lwfs-fuse: 2: READ (0x10, size=50, offset=1400, count=2)\n"
		"[2016-08-27 10:14:45] T lwfs-fuse: 2: READ (0x11, size=50, offset=1500, count=2)\n";
	/* clang-format on */
	char dir[] = "/tmp/test_merge.XXXXXX";
	char raw[300], comp[300], exp[300];
	static const uint64_t want_n[] = {3, 1, 1, 1, 1, 1, 0, 2, 1};
	struct trace_reader *r;
	struct trace_rec rec;
	size_t k = 0;
	FILE *f;
	char *x;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(raw, sizeof(raw), "%s/n7.log", dir);
	snprintf(comp, sizeof(comp), "%s/n7.c", dir);
	snprintf(exp, sizeof(exp), "%s/n7.x", dir);
	f = fopen(raw, "w");
	fputs(in, f);
	fclose(f);
	assert_int_equal(trace_compress_file(raw, comp, NULL, NULL, NULL, NULL),
			 0);
	r = trace_reader_open(comp, NULL);
	assert_non_null(r);
	while (trace_reader_next(r, &rec, NULL) == 1) {
		assert_true(k < sizeof(want_n) / sizeof(want_n[0]));
		if (want_n[k] == 0) /* the GETATTR */
			assert_int_equal(rec.op, TRACE_OP_META);
		else
			assert_int_equal(rec.n, want_n[k]);
		k++;
	}
	assert_int_equal(k, sizeof(want_n) / sizeof(want_n[0]));
	assert_int_equal(trace_reader_stats(r)->records, 12);
	trace_reader_destroy(r);
	assert_int_equal(trace_expand_file(comp, exp, NULL, NULL, NULL), 0);
	x = slurp(exp, NULL);
	assert_string_equal(x, in);
	free(x);
	unlink(raw);
	unlink(comp);
	unlink(exp);
	rmdir(dir);
}

/* Broken lines are skipped, counted and reported with their numbers;
 * the operation stream of the good lines is unchanged. */
static void test_broken_lines(void **state)
{
	/* clang-format off */
	static const char *const good =
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: OPEN() f => 0x10\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=0, count=1)\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=100, count=1)\n"
		"[2016-08-27 10:14:45] T lwfs-fuse: 1: RELEASE 0x10\n";
	static const char *const bad =
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: OPEN() f => 0x10\n"
		"this is not a trace line\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=0, count=1)\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=1x0, offset=100, count=1)\n"
		"[2016-08-27 10:14:44] T lwfs-fuse: 1: WRITE (0x10, size=100, offset=100, count=1)\n"
		"\n"
		"[2016-08-27 10:14:45] T lwfs-fuse: 1: RELEASE 0x10\n"
		"[2016-08-27 10:14:4";
	/* clang-format on */
	char dir[] = "/tmp/test_broken.XXXXXX";
	char p1[300], p2[300];
	struct trace_reader *r;
	struct trace_rec rec;
	char *s1, *s2;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p1, sizeof(p1), "%s/good", dir);
	snprintf(p2, sizeof(p2), "%s/bad", dir);
	f = fopen(p1, "w");
	fputs(good, f);
	fclose(f);
	f = fopen(p2, "w");
	fputs(bad, f);
	fclose(f);
	s1 = canonical_stream(p1);
	s2 = canonical_stream(p2);
	assert_string_equal(s1, s2);
	assert_string_equal(s1, good);

	r = trace_reader_open(p2, NULL);
	while (trace_reader_next(r, &rec, NULL) == 1)
		;
	assert_int_equal(trace_reader_stats(r)->lines, 8);
	assert_int_equal(trace_reader_stats(r)->records, 4);
	assert_int_equal(trace_reader_stats(r)->skipped, 3);
	assert_int_equal(trace_reader_stats(r)->n_bad, 3);
	assert_non_null(strstr(trace_reader_stats(r)->bad[0], "/bad:2: "));
	assert_non_null(
		strstr(trace_reader_stats(r)->bad[1], "/bad:4: bad size=1x0"));
	assert_non_null(strstr(trace_reader_stats(r)->bad[2], "/bad:8: "));
	trace_reader_destroy(r);
	free(s1);
	free(s2);
	unlink(p1);
	unlink(p2);
	rmdir(dir);
}

struct cbad_case {
	const char *text;
	const char *err;
};

/* A damaged compressed file is an error naming the line, never a
 * silently shorter stream. */
static void test_compressed_damage(void **state)
{
	/* clang-format off */
	static const struct cbad_case cases[] = {
		{ "#fwdtrace-compressed 1\nW 1472292884 T 1 0x10 100 0 1 3\n",
		  "no #end trailer" },
		{ "#fwdtrace-compressed 1\nW 1472292884 T 1 0x10 100 0 1 3\n"
		  "#end records=4 runs=1\n",
		  "#end says 4 records, found 3" },
		{ "#fwdtrace-compressed 1\nX 1472292884 T 1 0x10\n#end records=0 runs=0\n",
		  ":2: malformed compressed trace: unknown record kind" },
		{ "#fwdtrace-compressed 1\nW 1472292884 T 1 0x10 100 0 1 0\n#end records=0 runs=0\n",
		  ":2: malformed compressed trace: count or run length" },
		{ "#fwdtrace-compressed 1\nW 1472292884 T 1 0x10 100 0 1 1\n#end records=1 runs=1\nW 1 T 1 0x1 1 0 1 1\n",
		  ":4: malformed compressed trace: record after #end" },
		{ "#fwdtrace-compressed 1\nO 1472292884 T 1 0x10\n#end records=1 runs=1\n",
		  "OPEN without a path" },
		{ "#fwdtrace-compressed 1\nW 99999999999999 T 1 0x10 1 0 1 1\n#end records=1 runs=1\n",
		  "time out of range" },
		/* version 2: stream references */
		{ "#fwdtrace-compressed 2\n=0\n#end records=1 runs=1\n",
		  ":2: malformed compressed trace: reference to an unknown stream" },
		{ "#fwdtrace-compressed 2\nW 1472292884 T 1 0x10 100 0 1 1\n=64\n#end records=2 runs=2\n",
		  ":3: malformed compressed trace: reference to an unknown stream" },
		{ "#fwdtrace-compressed 2\nW 1472292884 T 1 0x10 100 0 1 1\n=0 x\n#end records=2 runs=2\n",
		  ":3: malformed compressed trace: bad stream reference" },
		{ "#fwdtrace-compressed 2\nW 1472292884 T 1 0x10 100 0 1 1\n=0 n0\n#end records=1 runs=2\n",
		  ":3: malformed compressed trace: count or run length" },
		/* the longest run a line holds (TRACE_MAX_RUN) is read, one
		 * more is not */
		{ "#fwdtrace-compressed 2\nW 1472292884 T 1 0x10 100 0 1 1\n=0 n1000000\n#end records=5 runs=2\n",
		  "#end says 5 records, found 1000001" },
		{ "#fwdtrace-compressed 2\nW 1472292884 T 1 0x10 100 0 1 1\n=0 n1000001\n#end records=1000002 runs=2\n",
		  ":3: malformed compressed trace: count or run length" },
		{ "#fwdtrace-compressed 2\nW 1472292884 T 1 0x10 100 0 1 1\n=0 t999999999999\n#end records=2 runs=2\n",
		  ":3: malformed compressed trace: bad time step" },
		{ "#fwdtrace-compressed 1\nW 1472292884 T 1 0x10 100 0 1 1\n=0\n#end records=2 runs=2\n",
		  ":3: malformed compressed trace: unknown record kind" },
	};
	/* clang-format on */

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fmemopen((void *)cases[i].text, strlen(cases[i].text),
				   "r");
		struct trace_reader *r = trace_reader_fdopen(f, "x.c", NULL);
		fwd_error_t err = {""};
		struct trace_rec rec;
		int rv;

		assert_non_null(r);
		assert_true(trace_reader_compressed(r));
		while ((rv = trace_reader_next(r, &rec, &err)) == 1)
			;
		assert_int_equal(rv, -1);
		if (!strstr(err.text, cases[i].err))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.text,
				 cases[i].err);
		trace_reader_destroy(r);
		fclose(f);
	}
}

/*
 * A damaged header (the #end trailer among the header comments) fails the
 * open with the file and line; the file is closed once (a double fclose
 * here used to abort under ASan/valgrind), through every entry point.
 */
static void test_compressed_bad_header(void **state)
{
	/* clang-format off */
	static const struct cbad_case cases[] = {
		{ "#fwdtrace-compressed 1\n#end records=x\n",
		  ":2: malformed compressed trace: bad #end trailer" },
		{ "#fwdtrace-compressed 1\n#node \n",
		  ":2: malformed compressed trace: bad #node" },
		{ "#fwdtrace-compressed 1\n#end records=0 runs=0\n#node a\n",
		  ":3: malformed compressed trace: text after #end" },
	};
	/* clang-format on */
	char dir[] = "/tmp/test_trace.XXXXXX", in[300], out[300];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/c1.ctrace", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err = {""};
		struct trace_stats st;
		FILE *f = fopen(in, "w");

		assert_non_null(f);
		fputs(cases[i].text, f);
		fclose(f);

		assert_null(trace_reader_open(in, &err));
		if (!strstr(err.text, cases[i].err) || !strstr(err.text, in))
			fail_msg("case %zu open: \"%s\" lacks \"%s\"", i,
				 err.text, cases[i].err);

		memset(&err, 0, sizeof(err));
		assert_int_equal(trace_expand_file(in, out, &st, NULL, &err),
				 -1);
		if (!strstr(err.text, cases[i].err))
			fail_msg("case %zu expand: \"%s\"", i, err.text);

		memset(&err, 0, sizeof(err));
		assert_int_equal(
			trace_compress_file(in, out, NULL, &st, NULL, &err),
			-1);
		if (!strstr(err.text, cases[i].err))
			fail_msg("case %zu compress: \"%s\"", i, err.text);
	}
	unlink(in);
	unlink(out);
	rmdir(dir);
}

/* Every record of a trace file, as text, one line per run. */
static char *all_runs(const char *path)
{
	struct trace_reader *r = trace_reader_open(path, NULL);
	struct trace_rec rec;
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	int rv;

	assert_non_null(r);
	assert_non_null(m);
	while ((rv = trace_reader_next(r, &rec, NULL)) == 1) {
		char buf[TRACE_LINE_MAX + 64];

		assert_true(trace_format_raw(&rec, 0, buf, sizeof(buf)) > 0);
		fprintf(m, "%" PRIu64 " %s", rec.n, buf);
	}
	assert_int_equal(rv, 0);
	trace_reader_destroy(r);
	fclose(m);
	return out;
}

/*
 * The zstd second stage: a ".zst" output is a zstd frame holding the
 * first-pass lines; it reads back as the same runs as the first-pass file,
 * whatever its name (detected by the magic), smaller than the first pass.
 */
static void test_zstd_roundtrip(void **state)
{
	char dir[] = "/tmp/test_trace.XXXXXX";
	char raw[300], comp[300], zst[300], renamed[300], exp[300];
	struct trace_synth s = {
		.pattern = SYNTH_RANDOM,
		.nodes = 2,
		.procs = 2,
		.groups = 1,
		.req_size = 65536,
		.reqs_per_sec = 50,
		.seconds = 5,
		.start = T0,
		.pid_prefix = true,
	};
	uint64_t cbytes = 0, zbytes = 0;
	fwd_error_t err = {""};
	char *a, *b, *c, *d;
	size_t zlen;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(raw, sizeof(raw), "%s/c1.trace", dir);
	snprintf(comp, sizeof(comp), "%s/c1.ctrace", dir);
	snprintf(zst, sizeof(zst), "%s/c1.ctrace.zst", dir);
	snprintf(renamed, sizeof(renamed), "%s/c1.data", dir);
	snprintf(exp, sizeof(exp), "%s/c1.expanded", dir);
	assert_non_null(f = fopen(raw, "w"));
	assert_int_equal(trace_synth_node(f, &s, 0, NULL), 0);
	fclose(f);
	if (trace_compress_file(raw, comp, NULL, NULL, &cbytes, &err) ||
	    trace_compress_file(raw, zst, NULL, NULL, &zbytes, &err))
		fail_msg("compress: %s", err.text);
	c = slurp(zst, &zlen);
	assert_int_equal(zlen, zbytes);
	assert_memory_equal(c, "\x28\xb5\x2f\xfd", 4);
	assert_true(zbytes * 3 < cbytes);
	assert_int_equal(rename(zst, renamed), 0);
	a = all_runs(comp);
	b = all_runs(renamed);
	assert_string_equal(a, b);
	/* expand gives the raw trace back; compress reads .zst too */
	if (trace_expand_file(renamed, exp, NULL, NULL, &err))
		fail_msg("expand: %s", err.text);
	d = slurp(exp, NULL);
	free(a);
	a = slurp(raw, NULL);
	assert_string_equal(a, d);
	free(a);
	free(b);
	free(c);
	free(d);
	unlink(raw);
	unlink(comp);
	unlink(renamed);
	unlink(exp);
	rmdir(dir);
}

/* Version 2 (inside .ctrace.zst): "=K" lines continue stream K -- same
 * operation, pid, descriptor, size and count; time, offset and run length
 * from the line or following on -- and update it. */
static void test_v2_references(void **state)
{
	static const char text[] = "#fwdtrace-compressed 2\n"
				   "W 1472292884 T 1 0x10 100 0 1 1\n"
				   "R 1472292884 T - 0x20 4096 0 2 1\n"
				   "=0 n3\n"
				   "=1 t2 o65536\n"
				   "=0 t1 o1000\n"
				   "=1 t-1\n"
				   "#end records=8 runs=6\n";
	static const struct {
		enum trace_op op;
		int64_t time;
		uint32_t pid;
		uint64_t fd, size, offset, count, n;
	} want[] = {
		{TRACE_OP_WRITE, 1472292884, 1, 0x10, 100, 0, 1, 1},
		{TRACE_OP_READ, 1472292884, 0, 0x20, 4096, 0, 2, 1},
		{TRACE_OP_WRITE, 1472292884, 1, 0x10, 100, 100, 1, 3},
		{TRACE_OP_READ, 1472292886, 0, 0x20, 4096, 65536, 2, 1},
		{TRACE_OP_WRITE, 1472292885, 1, 0x10, 100, 1000, 1, 1},
		{TRACE_OP_READ, 1472292885, 0, 0x20, 4096, 65536 + 8192, 2, 1},
	};
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct trace_reader *r = trace_reader_fdopen(f, "v2", NULL);
	fwd_error_t err = {""};
	struct trace_rec rec;
	size_t i = 0;
	int rv;

	(void)state;
	assert_non_null(r);
	assert_true(trace_reader_compressed(r));
	while ((rv = trace_reader_next(r, &rec, &err)) == 1) {
		assert_true(i < sizeof(want) / sizeof(*want));
		assert_int_equal(rec.op, want[i].op);
		assert_int_equal(rec.time, want[i].time);
		assert_int_equal(rec.has_pid, want[i].pid != 0);
		if (want[i].pid)
			assert_int_equal(rec.pid, want[i].pid);
		assert_int_equal(rec.fd, want[i].fd);
		assert_int_equal(rec.size, want[i].size);
		assert_int_equal(rec.offset, want[i].offset);
		assert_int_equal(rec.count, want[i].count);
		assert_int_equal(rec.n, want[i].n);
		i++;
	}
	if (rv != 0)
		fail_msg("%s", err.text);
	assert_int_equal(i, sizeof(want) / sizeof(*want));
	trace_reader_destroy(r);
	fclose(f);
}

/* Damaged zstd input: a clear error naming the file and the zstd stage,
 * never a partial trace passed off as whole. */
static void test_zstd_damage(void **state)
{
	char dir[] = "/tmp/test_trace.XXXXXX";
	char raw[300], zst[300], bad[300];
	struct trace_synth s = {
		.pattern = SYNTH_N_N,
		.nodes = 1,
		.procs = 2,
		.groups = 1,
		.req_size = 4096,
		.reqs_per_sec = 20,
		.seconds = 5,
		.start = T0,
		.pid_prefix = true,
	};
	static const struct {
		const char *what;
		const char *err;
	} cases[] = {
		{"truncated", "bad.zst: zstd: truncated stream"},
		{"flipped", "bad.zst: zstd: damaged stream: "},
		{"magic", "bad.zst: zstd: not a zstd stream (bad magic)"},
		{"garbage after", "bad.zst: zstd: damaged stream: "},
	};
	fwd_error_t err = {""};
	char *z;
	size_t zlen;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(raw, sizeof(raw), "%s/c1.trace", dir);
	snprintf(zst, sizeof(zst), "%s/c1.ctrace.zst", dir);
	snprintf(bad, sizeof(bad), "%s/bad.zst", dir);
	assert_non_null(f = fopen(raw, "w"));
	assert_int_equal(trace_synth_node(f, &s, 0, NULL), 0);
	fclose(f);
	if (trace_compress_file(raw, zst, NULL, NULL, NULL, &err))
		fail_msg("compress: %s", err.text);
	z = slurp(zst, &zlen);
	assert_true(zlen > 40);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct trace_reader *r;
		struct trace_rec rec;
		int rv = -1;

		assert_non_null(f = fopen(bad, "w"));
		if (i == 0) {
			fwrite(z, 1, zlen - 7, f);
		} else if (i == 1) {
			z[zlen / 2] ^= 0x5a;
			fwrite(z, 1, zlen, f);
			z[zlen / 2] ^= 0x5a;
		} else if (i == 2) {
			fwrite("\x28\xb5\x2f\xfe", 1, 4, f);
			fwrite(z + 4, 1, zlen - 4, f);
		} else {
			fwrite(z, 1, zlen, f);
			fwrite("\x28garbage", 1, 8, f);
		}
		fclose(f);
		err.text[0] = '\0';
		r = trace_reader_open(bad, &err);
		if (r) {
			while ((rv = trace_reader_next(r, &rec, &err)) == 1)
				;
			trace_reader_destroy(r);
		}
		assert_int_equal(rv, -1);
		if (!strstr(err.text, cases[i].err))
			fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].what,
				 err.text, cases[i].err);
	}
	free(z);
	unlink(raw);
	unlink(zst);
	unlink(bad);
	rmdir(dir);
}

static void test_node_name(void **state)
{
	char buf[64];

	(void)state;
	trace_node_from_path("/var/log/lwfs/c123.trace.gz", buf, sizeof(buf));
	assert_string_equal(buf, "c123");
	trace_node_from_path("node7", buf, sizeof(buf));
	assert_string_equal(buf, "node7");
	trace_node_from_path("dir.d/.hidden", buf, sizeof(buf));
	assert_string_equal(buf, ".hidden");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_format_canonical),
		cmocka_unit_test(test_roundtrip_patterns),
		cmocka_unit_test(test_merge_rule),
		cmocka_unit_test(test_broken_lines),
		cmocka_unit_test(test_compressed_damage),
		cmocka_unit_test(test_compressed_bad_header),
		cmocka_unit_test(test_node_name),
		cmocka_unit_test(test_zstd_roundtrip),
		cmocka_unit_test(test_v2_references),
		cmocka_unit_test(test_zstd_damage),
	};

	return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
