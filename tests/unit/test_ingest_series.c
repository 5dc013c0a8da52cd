/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Series engine: cumulative counters to deltas, restarts, old samples. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "monitor/ingest.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_seed_and_dirty),
	};

	return cmocka_run_group_tests_name("ingest_series", tests, NULL, NULL);
}
