/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DBSCAN on points whose labels can be checked by hand.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "monitor/dbscan.h"

#define MAXP 16
#define N DBSCAN_NOISE

struct dbscan_case {
	const char *name;
	struct dbscan_point pts[MAXP];
	size_t n;
	double eps;
	unsigned min_points;
	int want_clusters;
	int want_labels[MAXP];
};

static const struct dbscan_case cases[] = {
	{
		/* (0,-1) is seen first as noise (2 neighbours), then becomes
		 * a border point of the cluster grown from (0,0). */
		.name = "two clusters, one noise point, noise turned border",
		.pts = {{0, -1},
			{0, 0},
			{0, 1},
			{1, 0},
			{5, 5},
			{10, 10},
			{10, 11},
			{11, 10},
			{11, 11}},
		.n = 9,
		.eps = 1,
		.min_points = 3,
		.want_clusters = 2,
		.want_labels = {0, 0, 0, 0, N, 1, 1, 1, 1},
	},
	{
		.name = "chain of core points is one cluster, ends are border",
		.pts = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}},
		.n = 6,
		.eps = 1,
		.min_points = 3,
		.want_clusters = 1,
		.want_labels = {0, 0, 0, 0, 0, 0},
	},
	{
		.name = "gap wider than eps splits the chain",
		.pts = {{0, 0}, {1, 0}, {2, 0}, {3.5, 0}, {4.5, 0}, {5.5, 0}},
		.n = 6,
		.eps = 1,
		.min_points = 3,
		.want_clusters = 2,
		.want_labels = {0, 0, 0, 1, 1, 1},
	},
	{
		.name = "min_points 1: every point is core",
		.pts = {{0, 0}, {5, 5}, {0.1, 0}},
		.n = 3,
		.eps = 0.5,
		.min_points = 1,
		.want_clusters = 2,
		.want_labels = {0, 1, 0},
	},
	{
		.name = "all noise",
		.pts = {{0, 0}, {1, 1}, {2, 2}},
		.n = 3,
		.eps = 0.5,
		.min_points = 2,
		.want_clusters = 0,
		.want_labels = {N, N, N},
	},
	{
		.name = "eps is inclusive",
		.pts = {{0, 0}, {0.5, 0}},
		.n = 2,
		.eps = 0.5,
		.min_points = 2,
		.want_clusters = 1,
		.want_labels = {0, 0},
	},
	{
		.name = "no points",
		.n = 0,
		.eps = 0.5,
		.min_points = 2,
		.want_clusters = 0,
	},
};

static void test_cases(void **state)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct dbscan_case *tc = &cases[c];
		int labels[MAXP];
		fwd_error_t err = {""};
		int got;

		print_message("# case: %s\n", tc->name);
		got = dbscan_run(tc->pts, tc->n, tc->eps, tc->min_points,
				 labels, &err);
		assert_int_equal(got, tc->want_clusters);
		for (size_t i = 0; i < tc->n; i++)
			assert_int_equal(labels[i], tc->want_labels[i]);
	}
}

struct error_case {
	struct dbscan_point pt;
	double eps;
	unsigned min_points;
	const char *want;
};

static void test_errors(void **state)
{
	static const struct error_case ecases[] = {
		{{0, 0},
		 0,
		 3,
		 "dbscan: eps 0: must be a positive finite "
		 "number"},
		{{0, 0},
		 -1,
		 3,
		 "dbscan: eps -1: must be a positive finite "
		 "number"},
		{{0, 0},
		 INFINITY,
		 3,
		 "dbscan: eps inf: must be a positive "
		 "finite number"},
		{{0, 0}, 1, 0, "dbscan: min_points 0: must be at least 1"},
		{{NAN, 0},
		 1,
		 2,
		 "dbscan: point 0 (nan, 0): coordinates "
		 "must be finite"},
	};

	for (size_t c = 0; c < sizeof(ecases) / sizeof(ecases[0]); c++) {
		fwd_error_t err = {""};
		int label;

		errno = 0;
		assert_int_equal(dbscan_run(&ecases[c].pt, 1, ecases[c].eps,
					    ecases[c].min_points, &label, &err),
				 -1);
		assert_int_equal(errno, EINVAL);
		assert_string_equal(err.text, ecases[c].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("dbscan", tests, NULL, NULL);
}
