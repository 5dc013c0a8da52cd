/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Series engine: cumulative counters to deltas, restarts, old samples,
 * plausibility checks and the bounds of the policy's `ingest:` section. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "monitor/ingest.h"
#include "policies/policy.h"

struct step {
	int64_t ts;
	uint64_t v[2];
	int want;
	uint64_t d[2];
	double dt;
};

/* clang-format off */
static const struct step steps[] = {
	{ 100, { 10, 1000 }, SERIES_BASELINE, { 0, 0 }, 0 },
	{ 130, { 15, 1000 }, SERIES_DELTA, { 5, 0 }, 30 },
	{ 130, { 99, 9999 }, SERIES_OLD, { 0, 0 }, 0 },   /* same time */
	{ 120, { 99, 9999 }, SERIES_OLD, { 0, 0 }, 0 },   /* earlier */
	{ 160, { 16, 3 }, SERIES_RESTART, { 16, 3 }, 30 }, /* one went back */
	{ 170, { 20, 10 }, SERIES_DELTA, { 4, 7 }, 10 },
	{ 200, { 0, 0 }, SERIES_RESTART, { 0, 0 }, 30 },
	{ 201, { UINT64_MAX, 1 }, SERIES_DELTA, { UINT64_MAX, 1 }, 1 },
};
/* clang-format on */

static void test_steps(void **state)
{
	struct series_table *t = series_create();

	assert_non_null(t);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint64_t d[2] = {0, 0};
		double dt = 0;
		int r = series_update(t, "fwd\tf1\tread", steps[i].ts,
				      steps[i].v, 2, d, &dt);

		assert_int_equal(r, steps[i].want);
		if (r == SERIES_DELTA || r == SERIES_RESTART) {
			assert_memory_equal(d, steps[i].d, sizeof(d));
			assert_true(dt == steps[i].dt);
		}
	}
	series_destroy(t);
}

static int count_visit(const char *key, int64_t ts, const uint64_t *v, size_t n,
		       void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static void test_seed_and_dirty(void **state)
{
	struct series_table *t = series_create();
	uint64_t v = 50, d = 0;
	double dt = 0;
	int n = 0;
	char key[32];

	assert_non_null(t);
	assert_false(series_known(t, "a"));
	assert_int_equal(series_seed(t, "a", 100, &v, 1), 0);
	assert_true(series_known(t, "a"));
	/* a seeded baseline is not "dirty": nothing new to save */
	assert_int_equal(series_foreach_dirty(t, count_visit, &n), 0);
	assert_int_equal(n, 0);
	v = 80;
	assert_int_equal(series_update(t, "a", 160, &v, 1, &d, &dt),
			 SERIES_DELTA);
	assert_int_equal(d, 30);
	assert_true(dt == 60);
	/* an older seed does not replace newer state */
	v = 1;
	assert_int_equal(series_seed(t, "a", 10, &v, 1), 0);
	v = 81;
	assert_int_equal(series_update(t, "a", 170, &v, 1, &d, &dt),
			 SERIES_DELTA);
	assert_int_equal(d, 1);
	assert_int_equal(series_foreach_dirty(t, count_visit, &n), 0);
	assert_int_equal(n, 1);
	n = 0;
	assert_int_equal(series_foreach_dirty(t, count_visit, &n), 0);
	assert_int_equal(n, 0);
	/* many series: the table grows and finds them all */
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		v = (uint64_t)i;
		assert_int_equal(series_update(t, key, 1, &v, 1, &d, &dt),
				 SERIES_BASELINE);
	}
	for (int i = 0; i < 5000; i += 777) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_true(series_known(t, key));
	}
	n = 0;
	assert_int_equal(series_foreach(t, count_visit, &n), 0);
	assert_int_equal(n, 5001);
	/* too many values */
	{
		uint64_t many[SERIES_MAX_VALUES + 1] = {0};

		assert_int_equal(series_update(t, "x", 1, many,
					       SERIES_MAX_VALUES + 1, many,
					       &dt),
				 -1);
		assert_int_equal(errno, EINVAL);
	}
	series_destroy(t);
	series_destroy(NULL);
}

#define G62 4611686018427387904ULL /* 2^62 */

/* One counter checked at 100 per second. */
struct cstep {
	int64_t ts;
	uint64_t v;
	int want;
	uint64_t d; /* for SERIES_DELTA, SERIES_RESTART, SERIES_IMPLAUSIBLE */
	double dt;
};

/* clang-format off */
static const struct cstep csteps[] = {
	{ 100, 1000, SERIES_BASELINE, 0, 0 },
	{ 102, 1100, SERIES_DELTA, 100, 2 },
	/* a jump near 2^62: rejected, the baseline stays at 1100 @ 102 */
	{ 104, G62, SERIES_IMPLAUSIBLE, G62 - 1100, 2 },
	/* so the next delta spans both intervals: 400 in 4 s, at the bound */
	{ 106, 1500, SERIES_DELTA, 400, 4 },
	{ 108, 1500 + 201, SERIES_IMPLAUSIBLE, 201, 2 }, /* just over */
	{ 110, 1500 + 400, SERIES_DELTA, 400, 4 },
	/* a jump confirmed by the next value: the series goes on from it */
	{ 112, G62, SERIES_IMPLAUSIBLE, G62 - 1900, 2 },
	{ 114, G62 + 100, SERIES_DELTA, 100, 2 },
	{ 116, G62 + 300, SERIES_DELTA, 200, 2 },
	{ 116, 7, SERIES_OLD, 0, 0 },
	/* back to a small value: a restart, plausible */
	{ 118, 5, SERIES_RESTART, 5, 2 },
	/* a restart can be implausible too */
	{ 120, 1000, SERIES_IMPLAUSIBLE, 995, 2 },
	/* from the baseline (5 @ 118) 1095 in 4 s is too fast, from the
	 * candidate (1000 @ 120) 95 in 2 s is not */
	{ 122, 1095, SERIES_DELTA, 95, 2 },
	{ 124, G62, SERIES_IMPLAUSIBLE, G62 - 1095, 2 },
	{ 126, 1195, SERIES_DELTA, 100, 4 },
	/* the candidate (2^62 @ 124) went with the accepted value: 50 in
	 * 4 s from it does not count */
	{ 128, G62 + 50, SERIES_IMPLAUSIBLE, G62 + 50 - 1195, 2 },
	/* the same value again in the candidate's own second: no interval
	 * to measure a rate over, still implausible */
	{ 128, G62 + 50, SERIES_IMPLAUSIBLE, G62 + 50 - 1195, 2 },
	{ 130, UINT64_MAX, SERIES_IMPLAUSIBLE, UINT64_MAX - 1195, 4 },
};
/* clang-format on */

static void test_checked_steps(void **state)
{
	struct series_table *t = series_create();
	double bound = 100;

	assert_non_null(t);
	for (size_t i = 0; i < sizeof(csteps) / sizeof(csteps[0]); i++) {
		const struct cstep *c = &csteps[i];
		uint64_t d = 0, pd = 0;
		double dt = 0, pdt = 0;
		int peek = series_peek(t, "ost\to1\tread_bytes", c->ts, &c->v,
				       1, series_check_rate, &bound, &pd, &pdt);
		int r = series_update_checked(t, "ost\to1\tread_bytes", c->ts,
					      &c->v, 1, series_check_rate,
					      &bound, &d, &dt);

		print_message("step %zu: ts %lld\n", i, (long long)c->ts);
		assert_int_equal(peek, c->want);
		assert_int_equal(r, c->want);
		if (r == SERIES_DELTA || r == SERIES_RESTART ||
		    r == SERIES_IMPLAUSIBLE) {
			assert_true(d == c->d);
			assert_true(dt == c->dt);
			assert_true(pd == c->d);
			assert_true(pdt == c->dt);
		}
	}
	series_destroy(t);
}

/* A rejected value changes no baseline: nothing to save, and the saved
 * state is the last plausible value. */
static int save_visit(const char *key, int64_t ts, const uint64_t *v, size_t n,
		      void *arg)
{
	int64_t *got = arg;

	got[0]++;
	got[1] = ts;
	got[2] = (int64_t)v[0];
	return 0;
}

static void test_rejected_not_saved(void **state)
{
	struct series_table *t = series_create();
	uint64_t v[8] = {10}, d[8];
	double dt, bound = 1e7;
	int64_t got[3] = {0, 0, 0};

	assert_non_null(t);
	assert_int_equal(series_update_checked(t, "k", 1, v, 8,
					       series_check_rate, &bound, d,
					       &dt),
			 SERIES_BASELINE);
	assert_int_equal(series_foreach_dirty(t, save_visit, got), 0);
	assert_int_equal(got[0], 1);
	/* 8 buckets summing past 2^64 are not a wrapped small number */
	for (int i = 0; i < 8; i++)
		v[i] = G62 * 2 + 10;
	assert_int_equal(series_update_checked(t, "k", 3, v, 8,
					       series_check_rate, &bound, d,
					       &dt),
			 SERIES_IMPLAUSIBLE);
	got[0] = 0;
	assert_int_equal(series_foreach_dirty(t, save_visit, got), 0);
	assert_int_equal(got[0], 0);
	assert_int_equal(series_foreach(t, save_visit, got), 0);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[2], 10);
	/* Without a check, series_update() takes anything as before. */
	assert_int_equal(series_update(t, "k", 5, v, 8, d, &dt), SERIES_DELTA);
	assert_true(d[0] == G62 * 2 && dt == 4);
	series_destroy(t);
}

struct rate_case {
	double delta, dt, max;
	bool want;
};

/* clang-format off */
static const struct rate_case rates[] = {
	{ 0, 2, 100, true },
	{ 200, 2, 100, true },		/* at the bound */
	{ 200.5, 2, 100, false },
	{ 4.611686018427387904e18, 2, 4e12, false },
	{ 3.47e18, 2, 1e12, false },	/* the fuzzed OST */
	{ NAN, 2, 100, false },
	{ INFINITY, 2, 1e308, false },
	{ -1, 2, 100, false },
	{ 0, 0, 100, true },		/* no time: only nothing */
	{ 1, 0, 100, false },
	{ 1, -5, 100, false },
};

struct gauge_case {
	double v, max;
	bool want;
};

static const struct gauge_case gauges[] = {
	{ 0, 1e6, true },
	{ 1e6, 1e6, true },
	{ 1000001, 1e6, false },
	{ 1e308, 1e6, false },
	{ 18446744073709551615.0, 1e6, false },
	{ NAN, 1e6, false },
	{ INFINITY, 1e6, false },
	{ -INFINITY, 1e6, false },
	{ -1, 1e6, false },
	{ -0.0, 1e6, true },
};
/* clang-format on */

static void test_bounds(void **state)
{
	struct policy *p = policy_defaults();

	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		print_message("rate case %zu\n", i);
		assert_int_equal(ingest_rate_ok(rates[i].delta, rates[i].dt,
						rates[i].max),
				 rates[i].want);
	}
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++) {
		print_message("gauge case %zu\n", i);
		assert_int_equal(ingest_gauge_ok(gauges[i].v, gauges[i].max),
				 gauges[i].want);
	}
	/* The documented defaults: 4 x the peak, 1 TB/s when it is
	 * unknown, 10M ops/s, a queue of 1M. */
	assert_non_null(p);
	assert_true(p->ingest.max_rate_factor == 4);
	assert_true(p->ingest.max_bandwidth == 1e12);
	assert_true(p->ingest.max_ops_rate == 1e7);
	assert_true(p->ingest.max_queue_len == 1e6);
	assert_true(ingest_bytes_bound(&p->ingest, 2.5e9) == 10e9);
	assert_true(ingest_bytes_bound(&p->ingest, 0) == 1e12);
	assert_true(ingest_bytes_bound(&p->ingest, -1) == 1e12);
	assert_true(ingest_bytes_bound(&p->ingest, NAN) == 1e12);
	assert_true(ingest_bytes_bound(&p->ingest, INFINITY) == 1e12);
	p->ingest.max_rate_factor = 1.5;
	assert_true(ingest_bytes_bound(&p->ingest, 2e9) == 3e9);
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_seed_and_dirty),
		cmocka_unit_test(test_checked_steps),
		cmocka_unit_test(test_rejected_not_saved),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests_name("ingest_series", tests, NULL, NULL);
}
