/* SPDX-License-Identifier: GPL-2.0-or-later */
/* beacon-lwfs line parser, ISO-8601 times and the plausibility of what the
 * parser gives: table-driven. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/plausible.h"
#include "common/timeutil.h"
#include "monitor/ingest.h"
#include "policies/policy.h"

#define P "10.0.1.17 [2016-08-27 18:14:44]  [Trace]: "
#define T " 2016-08-27T10:14:44Z"
#define TS 1472292884

struct good {
	const char *line;
	const char *addr;
	bool is_queue;
	enum beacon_op op;
	enum beacon_phase phase;
	uint64_t v[8];
	uint64_t queue;
	int64_t ts;
};

/* clang-format off */
static const struct good goods[] = {
	{ P "Meta exe: 1 2 3 4 5 6 7 8" T, "10.0.1.17", false, BEACON_META,
	  BEACON_EXE, { 1, 2, 3, 4, 5, 6, 7, 8 }, 0, TS },
	{ P "Read wait: 0 0 0 0 0 0 0 18446744073709551615" T, "10.0.1.17",
	  false, BEACON_READ, BEACON_WAIT,
	  { 0, 0, 0, 0, 0, 0, 0, UINT64_MAX }, 0, TS },
	{ P "Write exe: 9 8 7 6 5 4 3 2 2016-08-27T10:14:44.250Z",
	  "10.0.1.17", false, BEACON_WRITE, BEACON_EXE,
	  { 9, 8, 7, 6, 5, 4, 3, 2 }, 0, TS },
	{ P "queue length: 42" T, "10.0.1.17", true, 0, 0, { 0 }, 42, TS },
	{ "\t10.0.1.17 [x] [Trace]:   queue length:  5   "
	  "2016-08-27T10:14:44+00:00  ",
	  "10.0.1.17", true, 0, 0, { 0 }, 5, TS },
	{ "fwd-3.cab0 [2016-08-27 18:14:44] [Trace]: Write wait: "
	  "1 1 1 1 1 1 1 1 1970-01-01T00:00:00Z",
	  "fwd-3.cab0", false, BEACON_WRITE, BEACON_WAIT,
	  { 1, 1, 1, 1, 1, 1, 1, 1 }, 0, 0 },
};
/* clang-format on */

static void test_good(void **state)
{
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];
		struct beacon_rec r;
		fwd_error_t err = {{0}};

		assert_int_equal(beacon_parse_line(g->line, &r, &err),
				 INGEST_OK);
		assert_string_equal(r.addr, g->addr);
		assert_int_equal(r.is_queue, g->is_queue);
		assert_int_equal(r.ts, g->ts);
		if (g->is_queue) {
			assert_int_equal(r.queue_len, g->queue);
			continue;
		}
		assert_int_equal(r.op, g->op);
		assert_int_equal(r.phase, g->phase);
		assert_memory_equal(r.v, g->v, sizeof(g->v));
	}
}

struct bad {
	const char *line;
	const char *error;
};

/* clang-format off */
static const struct bad bads[] = {
	{ P "Read exe: 1 2 3 4 5 6 7" T,
	  "expected 8 histogram counters, got 7" },
	{ P "Read exe: 1 2 3 4 5 6 7 8 9" T,
	  "expected 8 histogram counters, got 9" },
	{ P "Read exe: 1 2 3 -4 5 6 7 8" T,
	  "counter 4 '-4' is not a non-negative integer" },
	{ P "Read exe: 1 2 3 4 5 6 7 18446744073709551616" T,
	  "counter 8 '18446744073709551616' is not a non-negative integer" },
	{ P "Open exe: 1 2 3 4 5 6 7 8" T,
	  "unknown statistic 'Open': expected Meta, Read, Write or 'queue "
	  "length'" },
	{ P "Read run: 1 2 3 4 5 6 7 8" T,
	  "unknown phase 'run:' after Read: expected 'exe:' or 'wait:'" },
	{ P "Read exe: 1 2 3 4 5 6 7 8 2016-08-27T10:14:44",
	  "bad time '2016-08-27T10:14:44': expected ISO-8601 UTC such as "
	  "2016-08-27T10:14:44Z" },
	{ P "Read exe: 1 2 3 4 5 6 7 8 2016-08-27T10:14:44+02:00",
	  "bad time '2016-08-27T10:14:44+02:00': expected ISO-8601 UTC such "
	  "as 2016-08-27T10:14:44Z" },
	{ P "Read exe: 1 2 3 4 5 6 7 8 2016-02-30T10:14:44Z",
	  "bad time '2016-02-30T10:14:44Z': expected ISO-8601 UTC such as "
	  "2016-08-27T10:14:44Z" },
	{ P "queue length: 3 4" T, "expected one queue length value, got 2" },
	{ P "queue length: many" T,
	  "queue length 'many' is not a non-negative integer" },
	{ P "queue length:", "missing values and ISO-8601 UTC time" },
	{ "10.0.1.17 [Trace]: Read exe: 1 2 3 4 5 6 7 8" T,
	  "expected '[Trace]:' after the local time, got ':'" },
	{ "10.0.1.17 2016-08-27 [Trace]: Read exe: 1 2 3 4 5 6 7 8" T,
	  "expected '[<local time>]' after address '10.0.1.17'" },
	{ "10.0.1.17 [2016-08-27 18:14:44] Read exe: 1 2 3 4 5 6 7 8" T,
	  "expected '[Trace]:' after the local time, got 'Read'" },
	{ "bad/addr [x] [Trace]: queue length: 1" T,
	  "bad forwarder address 'bad/addr': expected an IP address or host "
	  "name" },
	{ P "Read exe: 1 2 3 4 5 6 7 8 9 10 11 12 13" T,
	  "too many fields after 'exe:/wait:'" },
};
/* clang-format on */

static void test_bad(void **state)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct beacon_rec r;
		fwd_error_t err = {{0}};

		assert_int_equal(beacon_parse_line(bads[i].line, &r, &err), -1);
		assert_string_equal(err.text, bads[i].error);
	}
}

static void test_blank(void **state)
{
	struct beacon_rec r;

	assert_int_equal(beacon_parse_line("", &r, NULL), INGEST_SKIP);
	assert_int_equal(beacon_parse_line("  \t ", &r, NULL), INGEST_SKIP);
}

static void test_iso8601(void **state)
{
	/* clang-format off */
	static const struct {
		const char *s;
		int rc;
		int64_t t;
	} cases[] = {
		{ "2016-08-27T10:14:44Z", 0, 1472292884 },
		{ "2016-08-27 10:14:44Z", 0, 1472292884 },
		{ "2016-08-27T10:14:44.999999Z", 0, 1472292884 },
		{ "2016-08-27T10:14:44-00:00", 0, 1472292884 },
		{ "2024-02-29T00:00:00Z", 0, 1709164800 },
		{ "2023-02-29T00:00:00Z", -1, 0 },
		{ "2016-13-01T00:00:00Z", -1, 0 },
		{ "2016-08-27T24:00:00Z", -1, 0 },
		{ "2016-08-27T10:14:44.Z", -1, 0 },
		{ "2016-08-27T10:14Z", -1, 0 },
		{ "1969-12-31T23:59:59Z", -1, 0 },
		{ "2016-08-27T10:14:44ZZ", -1, 0 },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double t = 0;

		assert_int_equal(fwd_time_parse_iso(cases[i].s,
						    strlen(cases[i].s),
						    FWD_TIME_STRICT, &t),
				 cases[i].rc);
		if (cases[i].rc == 0)
			assert_int_equal((int64_t)t, cases[i].t);
	}
}

static void test_reader(void **state)
{
	/* A line longer than the limit is consumed whole and flagged; the
	 * next line is intact. */
	size_t big = INGEST_MAX_LINE + 100;
	char *data = malloc(big + 32);
	struct ingest_reader *rd = malloc(sizeof(*rd));
	const char *l;
	bool trunc;
	FILE *f;

	assert_non_null(data);
	assert_non_null(rd);
	memset(data, 'x', big);
	strcpy(data + big, "\nnext\r\nlast");
	f = fmemopen(data, strlen(data), "r");
	assert_non_null(f);
	ingest_reader_init(rd, f);
	l = ingest_reader_next(rd, &trunc);
	assert_non_null(l);
	assert_true(trunc);
	assert_int_equal(rd->lineno, 1);
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "next");
	assert_false(trunc);
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "last");
	assert_int_equal(rd->lineno, 3);
	assert_null(ingest_reader_next(rd, &trunc));
	fclose(f);
	free(rd);
	free(data);
}

/* Write s to fd whole. */
static void put(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		assert_true(w > 0);
		s += w;
		n -= (size_t)w;
	}
}

/* Through a pipe (the descriptor read directly): a line split across
 * writes waits for its end, ready() says whether a whole line is there,
 * lengths at and past the limit, CRLF, the last line without newline. */
static void test_reader_pipe(void **state)
{
	struct ingest_reader *rd = malloc(sizeof(*rd));
	size_t at = INGEST_MAX_LINE - 1, past = 3 * INGEST_MAX_LINE;
	char *big = malloc(past + 1);
	const char *l;
	bool trunc;
	int p[2];
	FILE *f;

	(void)state;
	assert_non_null(rd);
	assert_non_null(big);
	assert_int_equal(pipe(p), 0);
	/* room for every write below before the first read */
	assert_true(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (1 << 20));
	f = fdopen(p[0], "r");
	assert_non_null(f);
	ingest_reader_init(rd, f);
	assert_false(ingest_reader_ready(rd));

	put(p[1], "one\ntw", strlen("one\ntw"));
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "one");
	assert_false(trunc);
	/* "tw" is read, its line not yet whole */
	assert_false(ingest_reader_ready(rd));
	put(p[1], "o\r\nthree\n", strlen("o\r\nthree\n"));
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "two");
	assert_true(ingest_reader_ready(rd));
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "three");
	assert_int_equal(rd->lineno, 3);
	assert_false(ingest_reader_ready(rd));

	/* exactly the limit: whole; past it: cut and flagged, the rest of
	 * the line dropped */
	memset(big, 'a', past);
	put(p[1], big, at);
	put(p[1], "\n", 1);
	l = ingest_reader_next(rd, &trunc);
	assert_false(trunc);
	assert_int_equal(strlen(l), at);
	put(p[1], big, INGEST_MAX_LINE);
	put(p[1], "\n", 1);
	l = ingest_reader_next(rd, &trunc);
	assert_true(trunc);
	assert_int_equal(strlen(l), at);
	put(p[1], big, past);
	put(p[1], "\nafter\nlast", strlen("\nafter\nlast"));
	close(p[1]);
	l = ingest_reader_next(rd, &trunc);
	assert_true(trunc);
	assert_int_equal(strlen(l), at);
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "after");
	assert_false(trunc);
	l = ingest_reader_next(rd, &trunc);
	assert_string_equal(l, "last");
	assert_int_equal(rd->lineno, 8);
	assert_true(ingest_reader_ready(rd));
	assert_null(ingest_reader_next(rd, &trunc));
	assert_int_equal(ingest_reader_error(rd), 0);
	fclose(f);

	/* a read that fails: NULL, and the reason */
	f = fopen(".", "r");
	assert_non_null(f);
	ingest_reader_init(rd, f);
	assert_null(ingest_reader_next(rd, &trunc));
	assert_int_equal(ingest_reader_error(rd), EISDIR);
	fclose(f);
	free(big);
	free(rd);
}

/* Plausibility with the policy's default bounds (10M requests/s, a queue
 * of 1M): `prev` (if any) is the histogram's baseline. */
#define T2 " 2016-08-27T10:14:46Z" /* T + 2 s */

enum { PL_OK, PL_IMPLAUSIBLE, PL_PARSE_ERROR };

struct plaus {
	const char *prev, *line;
	int want;
};

/* clang-format off */
static const struct plaus plaus[] = {
	{ NULL, P "queue length: 1000000" T, PL_OK },
	{ NULL, P "queue length: 1000001" T, PL_IMPLAUSIBLE },
	{ NULL, P "queue length: 18446744073709551615" T, PL_IMPLAUSIBLE },
	{ NULL, P "queue length: 18446744073709551616" T, PL_PARSE_ERROR },
	{ NULL, P "queue length: -1" T, PL_PARSE_ERROR },
	{ NULL, P "queue length: nan" T, PL_PARSE_ERROR },
	{ P "Read exe: 10 0 0 0 0 0 0 0" T,
	  P "Read exe: 4611686018427387904 0 0 0 0 0 0 0" T2, PL_IMPLAUSIBLE },
	/* 20M requests in 2 s over the 8 buckets: at the bound */
	{ P "Write exe: 0 0 0 0 0 0 0 0" T,
	  P "Write exe: 2500000 2500000 2500000 2500000 2500000 2500000 "
	  "2500000 2500000" T2, PL_OK },
	{ P "Write exe: 0 0 0 0 0 0 0 0" T,
	  P "Write exe: 2500000 2500000 2500000 2500000 2500000 2500000 "
	  "2500000 2500001" T2, PL_IMPLAUSIBLE },
	/* buckets whose sum wraps 2^64 are not a small number */
	{ P "Meta wait: 0 0 0 0 0 0 0 0" T,
	  P "Meta wait: 0 0 0 0 0 0 9223372036854775808 "
	  "9223372036854775808" T2, PL_IMPLAUSIBLE },
	/* a histogram back at small values is a restart, plausible */
	{ P "Read exe: 4611686018427387904 0 0 0 0 0 0 0" T,
	  P "Read exe: 3 1 0 0 0 0 0 0" T2, PL_OK },
};
/* clang-format on */

static int judge(const struct policy_ingest *lim, const struct plaus *c)
{
	struct series_table *t = series_create();
	uint64_t d[BEACON_BUCKETS];
	fwd_error_t err = {{0}};
	struct beacon_rec r;
	double dt, ops = lim->max_ops_rate;
	int want = PL_OK;

	assert_non_null(t);
	if (c->prev) {
		assert_int_equal(beacon_parse_line(c->prev, &r, &err),
				 INGEST_OK);
		assert_int_equal(series_update(t, "h", r.ts, r.v,
					       BEACON_BUCKETS, d, &dt),
				 SERIES_BASELINE);
	}
	if (beacon_parse_line(c->line, &r, &err) != INGEST_OK)
		want = PL_PARSE_ERROR;
	else if (r.is_queue)
		want = ingest_gauge_ok((double)r.queue_len, lim->max_queue_len)
			       ? PL_OK
			       : PL_IMPLAUSIBLE;
	else if (series_update_checked(t, "h", r.ts, r.v, BEACON_BUCKETS,
				       series_check_rate, &ops, d,
				       &dt) == SERIES_IMPLAUSIBLE)
		want = PL_IMPLAUSIBLE;
	series_destroy(t);
	return want;
}

static void test_plausibility(void **state)
{
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(plaus) / sizeof(plaus[0]); i++) {
		int got = judge(&p->ingest, &plaus[i]);

		if (got != plaus[i].want)
			fail_msg("case %zu '%s': got %d, want %d", i,
				 plaus[i].line, got, plaus[i].want);
	}
	policy_destroy(p);
}

/*
 * beacon_check(): what `fwdctl ingest --format beacon-lwfs` refuses before
 * the store, each with the reason it is counted under (a queue length is
 * bounded by ingest.max_queue_len in the store: test_plausibility).
 */
#define NOW 1700000000 /* "now" for the time window */

struct check {
	const char *line;
	const char *reason; /* NULL: plausible */
	const char *error;
};

/* clang-format off */
static const struct check checks[] = {
	{ P "Read exe: 1 2 3 4 5 6 7 8" T, NULL, NULL },
	/* the window's ends: 2000-01-01 and a day ahead */
	{ P "Read exe: 1 1 1 1 1 1 1 1 2000-01-01T00:00:00Z", NULL, NULL },
	{ P "Read exe: 1 1 1 1 1 1 1 1 2023-11-15T22:13:20Z", NULL, NULL },
	{ P "Read exe: 1 1 1 1 1 1 1 1 2023-11-15T22:13:21Z", FWD_REASON_TIME,
	  "time 1700086401 is in the future (accepted: 2000-01-01 to a day "
	  "from now)" },
	{ P "Meta wait: 1 1 1 1 1 1 1 1 1999-12-31T23:59:59Z", FWD_REASON_TIME,
	  "time 946684799 is before 2000 (accepted: 2000-01-01 to a day "
	  "from now)" },
	{ P "Write exe: 1 1 1 1 1 1 1 1 2999-01-01T00:00:00Z", FWD_REASON_TIME,
	  "time 32472144000 is in the future (accepted: 2000-01-01 to a day "
	  "from now)" },
	{ P "Write exe: 1 1 1 1 1 1 1 1 1970-01-01T00:00:00Z", FWD_REASON_TIME,
	  "time 0 is before 2000 (accepted: 2000-01-01 to a day "
	  "from now)" },
	{ P "queue length: 3 2999-01-01T00:00:00Z", FWD_REASON_TIME,
	  "time 32472144000 is in the future (accepted: 2000-01-01 to a day "
	  "from now)" },
	/* counters up to 2^63-1: what a signed column and a rate hold */
	{ P "Read wait: 0 0 0 0 0 0 0 9223372036854775807" T, NULL, NULL },
	{ P "Read wait: 0 0 0 0 0 0 0 9223372036854775808" T, FWD_REASON_VALUE,
	  "counter 9223372036854775808 is over 2^63-1 (an unset or wrapped counter)" },
	{ P "Meta exe: 18446744073709551615 0 0 0 0 0 0 0" T, FWD_REASON_VALUE,
	  "counter 18446744073709551615 is over 2^63-1 (an unset or wrapped counter)" },
	/* the store bounds a queue length, not the check */
	{ P "queue length: 18446744073709551615" T, NULL, NULL },
};
/* clang-format on */

static void test_check(void **state)
{
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		const struct check *c = &checks[i];
		fwd_error_t err = {{0}};
		struct beacon_rec r;
		int rc;

		assert_int_equal(beacon_parse_line(c->line, &r, &err),
				 INGEST_OK);
		fwd_reason_clear();
		rc = beacon_check(&r, NOW, &err);
		if (!c->reason) {
			if (rc != 0)
				fail_msg("case %zu '%s' refused: %s", i,
					 c->line, err.text);
			assert_null(fwd_reason_take());
			continue;
		}
		if (rc != -1)
			fail_msg("case %zu '%s' accepted", i, c->line);
		assert_string_equal(err.text, c->error);
		assert_string_equal(fwd_reason_take(), c->reason);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_blank),
		cmocka_unit_test(test_iso8601),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_pipe),
		cmocka_unit_test(test_plausibility),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests_name("ingest_beacon", tests, NULL, NULL);
}
