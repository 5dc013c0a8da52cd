/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's thresholds at equality, table by table: the noise floor
 * (a sample exactly at it is idle), a slow stretch exactly `duration`
 * long, a stretch that ends exactly where a window starts, DBSCAN's eps
 * at and around its valid range, the byte-counter bound for an unknown
 * peak.
 */
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

#include "monitor/anomaly.h"
#include "monitor/dbscan.h"
#include "monitor/ingest.h"
#include "policies/policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define T0 1.7e9

/* ---- the noise floor --------------------------------------------------- */

/* Two members with the same samples (B/s, 60 s each) and a noise floor of
 * 1 MB/s: a sample at the floor counts for the volume, not for the
 * activity, the average or the peak. */
static void test_noise_floor(void **state)
{
	static const struct {
		const char *what;
		double bps[3];
		size_t active;
		double peak, avg;
	} t[] = {
		{"all at the floor: idle", {1e6, 1e6, 1e6}, 0, 0, 0},
		{"one above the floor", {1e6, 1e6, 3e6}, 1, 3e6, 3e6},
		{"just above the floor",
		 {1e6 + 1, 1e6, 1e6},
		 1,
		 1e6 + 1,
		 1e6 + 1},
		{"below the floor", {0.5e6, 2e6, 4e6}, 2, 4e6, 3e6},
	};
	struct policy *p = policy_defaults();
	struct policy_peer_detector d;

	(void)state;
	assert_non_null(p);
	d = p->anomaly.peer;
	d.noise_floor = 1e6;
	d.min_job_nodes = 0;
	d.min_job_volume = 0;
	for (size_t i = 0; i < N(t); i++) {
		struct anomaly_sample s[3];
		struct anomaly_series m[2] = {{"a", s, 3}, {"b", s, 3}};
		struct anomaly_peer_stat st[2];
		struct anomaly_peer_result res;
		fwd_error_t err;

		for (int k = 0; k < 3; k++)
			s[k] = (struct anomaly_sample){.time = T0 + 60 * k,
						       .seconds = 60,
						       .bytes =
							       t[i].bps[k] * 60,
						       .ops = 10,
						       .queue = -1};
		if (anomaly_peer_check(&d, 64, m, 2, st, &res, &err) < 0)
			fail_msg("%s: %s", t[i].what, err.text);
		if (st[0].active != t[i].active ||
		    fabs(st[0].peak_bps - t[i].peak) > 1e-6 ||
		    fabs(st[0].avg_bps - t[i].avg) > 1e-6 ||
		    fabs(st[0].volume -
			 60 * (t[i].bps[0] + t[i].bps[1] + t[i].bps[2])) > 1e-3)
			fail_msg("%s: active %zu peak %g avg %g volume %g",
				 t[i].what, st[0].active, st[0].peak_bps,
				 st[0].avg_bps, st[0].volume);
	}
	policy_destroy(p);
}

/* ---- a sustained slow stretch against the window ------------------------ */

/* Slow loaded samples of 60 s from T0 (100 MB/s against a 1 GB/s peak,
 * fraction 0.3: slow), duration 600 s. */
static void test_window_edges(void **state)
{
	static const struct {
		const char *what;
		size_t n;	     /* slow samples from T0 */
		double wstart, wend; /* relative to T0 */
		enum anomaly_verdict want;
	} t[] = {
		{"exactly duration long, reached inside", 10, 540, 660,
		 ANOMALY_BAD},
		{"one sample short of duration", 9, 480, 600, ANOMALY_NONE},
		{"reached exactly at the window's start", 10, 600, 1200,
		 ANOMALY_NONE},
		{"reached inside, continued past the end", 12, 600, 1200,
		 ANOMALY_BAD},
		{"reached exactly at the window's end", 10, 0, 600,
		 ANOMALY_NONE},
	};
	struct policy_sustained_detector d = {
		.peak_fraction = 0.3, .duration = 600, .min_load_ops = 1};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		struct anomaly_sample s[16];
		fwd_error_t err;
		int v;

		for (size_t k = 0; k < t[i].n; k++)
			s[k] = (struct anomaly_sample){.time = T0 + 60.0 * k,
						       .seconds = 60,
						       .bytes = 1e8 * 60,
						       .ops = 600,
						       .queue = -1};
		v = anomaly_window_verdict(&d, 1e9, s, t[i].n, T0 + t[i].wstart,
					   T0 + t[i].wend, NULL, 0, &err);
		if (v != (int)t[i].want)
			fail_msg("%s: %d, want %s", t[i].what, v,
				 anomaly_verdict_name(t[i].want));
	}
}

/* DBSCAN on I/O phases with a history that is all zero on one axis: the
 * axis stays unscaled (no division by zero), the run's phases are
 * checked, and one away from the history on that axis is an outlier. */
static void test_phases_zero_axis(void **state)
{
	static const struct {
		const char *what;
		struct anomaly_phase hist[4];
		struct anomaly_phase run;
		bool outlier;
	} t[] = {
		{"durations all 0, the run's 0 too",
		 {{0, 1e9}, {0, 1e9}, {0, 1e9}, {0, 1e9}},
		 {0, 1e9},
		 false},
		{"durations all 0, the run's 60 s",
		 {{0, 1e9}, {0, 1e9}, {0, 1e9}, {0, 1e9}},
		 {60, 1e9},
		 true},
		{"volumes all 0, the run's 0 too",
		 {{60, 0}, {60, 0}, {60, 0}, {60, 0}},
		 {60, 0},
		 false},
		{"volumes all 0, the run's 1 GB",
		 {{60, 0}, {60, 0}, {60, 0}, {60, 0}},
		 {60, 1e9},
		 true},
	};
	struct policy *p = policy_defaults();

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		struct anomaly_run run = {
			.job_id = "7", .phases = &t[i].run, .n_phases = 1};
		struct anomaly_phase_report rep;
		fwd_error_t err;

		if (anomaly_phase_check(&p->anomaly, &p->decision.interference,
					t[i].hist, 4, &run, NULL, 0, &rep,
					&err) < 0)
			fail_msg("%s: %s", t[i].what, err.text);
		if (!rep.checked || rep.outlier[0] != t[i].outlier)
			fail_msg("%s: checked %d outlier %d, want outlier %d",
				 t[i].what, rep.checked,
				 rep.checked ? rep.outlier[0] : -1,
				 t[i].outlier);
		anomaly_phase_report_free(&rep);
	}
	policy_destroy(p);
}

/* ---- DBSCAN's eps ---------------------------------------------------------
 */

static void test_dbscan_eps(void **state)
{
	static const struct {
		double eps;
		int want; /* clusters, or -1 EINVAL */
	} t[] = {
		{0.5, 1},  {1e-9, 0},	   {0, -1},	    {-0.1, -1},
		{NAN, -1}, {INFINITY, -1}, {-INFINITY, -1},
	};
	/* three points within 0.1 of each other: one cluster at eps 0.5 */
	struct dbscan_point pts[] = {{0, 0}, {0.05, 0}, {0, 0.05}};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		int labels[3];
		fwd_error_t err;
		int r;

		errno = 0;
		r = dbscan_run(pts, 3, t[i].eps, 3, labels, &err);
		if (r != t[i].want || (r < 0 && errno != EINVAL))
			fail_msg("eps %g: %d (errno %d), want %d", t[i].eps, r,
				 errno, t[i].want);
	}
}

/* ---- the byte-counter bound ------------------------------------------------
 */

static void test_bytes_bound(void **state)
{
	static const struct {
		double peak;
		bool known; /* the bound is factor x peak */
	} t[] = {
		{1e9, true},	    {1, true},	  {0, false},
		{-1e9, false},	    {NAN, false}, {INFINITY, false},
		{-INFINITY, false},
	};
	struct policy_ingest l = {.max_rate_factor = 4, .max_bandwidth = 123e9};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		double b = ingest_bytes_bound(&l, t[i].peak);
		double want = t[i].known ? 4 * t[i].peak : 123e9;

		if (b != want)
			fail_msg("peak %g: bound %g, want %g", t[i].peak, b,
				 want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noise_floor),
		cmocka_unit_test(test_window_edges),
		cmocka_unit_test(test_phases_zero_axis),
		cmocka_unit_test(test_dbscan_eps),
		cmocka_unit_test(test_bytes_bound),
	};

	return cmocka_run_group_tests_name("monitor_edges", tests, NULL, NULL);
}
