/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fail-slow detectors on generated series: Beacon's LAMMPS and Shentu
 * cases, a healthy but unevenly loaded job, transient dips, idle and
 * lightly used components, window verdicts, DBSCAN on I/O phases.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "monitor/anomaly.h"
#include "policies/policy.h"

#define GB 1e9
#define MB 1e6
#define MIN 60.0

/*
 * A member's load as phases of per-minute samples: `minutes` samples at
 * `bps`, then the next phase.  ops and queue apply to every sample.
 */
struct phase {
	double minutes;
	double bps;
};

#define MAXPH 4

struct member {
	struct phase ph[MAXPH];
};

static struct anomaly_sample *gen(const struct phase *ph, size_t nph,
				  double ops, double queue, size_t *n)
{
	size_t total = 0, k = 0;
	struct anomaly_sample *s;

	for (size_t i = 0; i < nph; i++)
		total += (size_t)ph[i].minutes;
	s = calloc(total ? total : 1, sizeof(*s));
	assert_non_null(s);
	for (size_t i = 0; i < nph; i++) {
		for (size_t m = 0; m < (size_t)ph[i].minutes; m++, k++) {
			s[k].time = 1.7e9 + k * MIN;
			s[k].seconds = MIN;
			s[k].bytes = ph[i].bps * MIN;
			s[k].ops = ph[i].bps > 0 ? ops * MIN : 0;
			s[k].queue = queue;
		}
	}
	*n = total;
	return s;
}

/* ---- peer detector -------------------------------------------------- */

struct peer_case {
	const char *name;
	uint32_t nodes;
	size_t n_members;
	/* members not listed use `base`, listed ones `odd`. */
	struct member base, odd;
	size_t odd_idx[8];
	size_t n_odd;
	bool want_eligible;
	const char *want_reason; /* when not eligible */
	int want_flagged;	 /* count; the odd members are the flagged
				  * ones when want_odd_flagged */
	bool want_odd_flagged;
	/* Explicit per-member load, overrides base/odd when set. */
	const struct member *explicit_members;
};

/* Healthy but unevenly loaded: two big writers at different speeds and
 * two lightly used, slow-looking members that carried little:
 * 120 GB at 1 GB/s, 108 GB at 0.6 GB/s, 12 GB at 0.2, 6 GB at 0.1. */
static const struct member uneven4[] = {
	{{{2, 1.0 * GB}, {30, 0}}},
	{{{3, 0.6 * GB}, {30, 0}}},
	{{{1, 0.2 * GB}, {30, 0}}},
	{{{1, 0.1 * GB}, {30, 0}}},
};

static const struct peer_case peer_cases[] = {
	{
		/* Beacon Fig. 7: 1500 nodes on 3 forwarders, one serving at
		 * 1/20 of its peers' rate.  Each carries 600 GB: the fast
		 * ones take 10 minutes then idle, the slow one 200. */
		.name = "LAMMPS: 3 forwarders, one at 1/20 speed",
		.nodes = 1500,
		.n_members = 3,
		.base = {{{10, 1 * GB}, {190, 0}}},
		.odd = {{{200, 0.05 * GB}}},
		.odd_idx = {1},
		.n_odd = 1,
		.want_eligible = true,
		.want_flagged = 1,
		.want_odd_flagged = true,
	},
	{
		/* Beacon Fig. 8: nearly 400 OSTs read evenly, a few lag. */
		.name = "Shentu: 5 of 400 OSTs lagging",
		.nodes = 40000,
		.n_members = 400,
		.base = {{{2, 500 * MB}, {11, 0}}},
		.odd = {{{12, 100 * MB}}},
		.odd_idx = {7, 100, 250, 333, 399},
		.n_odd = 5,
		.want_eligible = true,
		.want_flagged = 5,
		.want_odd_flagged = true,
	},
	{
		.name = "all healthy and alike: nothing flagged",
		.nodes = 256,
		.n_members = 8,
		.base = {{{20, 1 * GB}}},
		.want_eligible = true,
		.want_flagged = 0,
	},
	{
		.name = "small job is not used",
		.nodes = 8,
		.n_members = 3,
		.base = {{{10, 1 * GB}, {190, 0}}},
		.odd = {{{200, 0.05 * GB}}},
		.odd_idx = {1},
		.n_odd = 1,
		.want_eligible = false,
		.want_reason = "job has 8 nodes, fewer than min_job_nodes 32",
	},
	{
		.name = "job with little I/O is not used",
		.nodes = 512,
		.n_members = 3,
		.base = {{{1, 2 * MB}}},
		.odd = {{{1, 0.1 * MB}}},
		.odd_idx = {1},
		.n_odd = 1,
		.want_eligible = false,
		.want_reason = "job moved 246000000 bytes, less than "
			       "min_job_volume 1073741824",
	},
	{
		/* The odd member's traffic is under the 1 MB/s noise floor:
		 * it is no peer, and one active member cannot be compared. */
		.name = "one active member cannot be compared",
		.nodes = 512,
		.n_members = 2,
		.base = {{{10, 1 * GB}}},
		.odd = {{{600, 0.5 * MB}}},
		.odd_idx = {1},
		.n_odd = 1,
		.want_eligible = false,
		.want_reason = "1 member(s) active above the noise floor, "
			       "need 2 to compare",
	},
	{
		.name = "healthy but unevenly loaded: nothing flagged",
		.nodes = 256,
		.n_members = 4,
		.explicit_members = uneven4,
		.want_eligible = true,
		.want_flagged = 0,
	},
};

static bool is_odd(const struct peer_case *tc, size_t m)
{
	for (size_t i = 0; i < tc->n_odd; i++)
		if (tc->odd_idx[i] == m)
			return true;
	return false;
}

static size_t nphases(const struct member *m)
{
	size_t n = 0;

	while (n < MAXPH && m->ph[n].minutes > 0)
		n++;
	return n;
}

static void test_peer_cases(void **state)
{
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t c = 0; c < sizeof(peer_cases) / sizeof(peer_cases[0]);
	     c++) {
		const struct peer_case *tc = &peer_cases[c];
		struct anomaly_series *mem =
			calloc(tc->n_members, sizeof(*mem));
		struct anomaly_peer_stat *st =
			calloc(tc->n_members, sizeof(*st));
		struct anomaly_peer_result res;
		fwd_error_t err = {""};
		int got;

		print_message("# case: %s\n", tc->name);
		assert_non_null(mem);
		assert_non_null(st);
		for (size_t m = 0; m < tc->n_members; m++) {
			const struct member *src =
				tc->explicit_members ? &tc->explicit_members[m]
				: is_odd(tc, m)	     ? &tc->odd
						     : &tc->base;

			mem[m].name = "member";
			mem[m].samples = gen(src->ph, nphases(src), 100, -1,
					     &mem[m].n_samples);
		}
		got = anomaly_peer_check(&p->anomaly.peer, tc->nodes, mem,
					 tc->n_members, st, &res, &err);
		assert_int_equal(res.eligible, tc->want_eligible);
		if (!tc->want_eligible) {
			assert_int_equal(got, 0);
			assert_string_equal(res.reason, tc->want_reason);
		} else {
			assert_int_equal(got, tc->want_flagged);
			assert_int_equal(res.n_flagged, tc->want_flagged);
		}
		for (size_t m = 0; m < tc->n_members; m++) {
			bool want = tc->want_eligible && tc->want_odd_flagged &&
				    is_odd(tc, m);

			assert_int_equal(st[m].flagged, want);
			free((void *)mem[m].samples);
		}
		free(mem);
		free(st);
	}
	policy_destroy(p);
}

static void test_peer_figures(void **state)
{
	/* LAMMPS figures by hand: peaks 1, 0.05, 1 GB/s -> mean 0.6833;
	 * idle minutes do not dilute the fast members' average. */
	struct policy *p = policy_defaults();
	struct phase fast[] = {{10, 1 * GB}, {190, 0}};
	struct phase slow[] = {{200, 0.05 * GB}};
	struct anomaly_series mem[3];
	struct anomaly_peer_stat st[3];
	struct anomaly_peer_result res;
	fwd_error_t err;

	assert_non_null(p);
	mem[0].samples = gen(fast, 2, 100, -1, &mem[0].n_samples);
	mem[1].samples = gen(slow, 1, 100, -1, &mem[1].n_samples);
	mem[2].samples = gen(fast, 2, 100, -1, &mem[2].n_samples);
	mem[0].name = "fwd1";
	mem[1].name = "fwd2";
	mem[2].name = "fwd3";
	assert_int_equal(anomaly_peer_check(&p->anomaly.peer, 1500, mem, 3, st,
					    &res, &err),
			 1);
	assert_true(fabs(res.mean_peak_bps - 2.05 * GB / 3) < 1);
	assert_true(fabs(res.mean_volume - 600 * GB) < 1);
	assert_true(fabs(st[0].avg_bps - 1 * GB) < 1);
	assert_true(fabs(st[0].peak_bps - 1 * GB) < 1);
	assert_int_equal(st[0].active, 10);
	assert_true(fabs(st[1].avg_bps - 0.05 * GB) < 1);
	assert_true(fabs(st[1].volume - 600 * GB) < 1);
	assert_true(st[1].flagged);

	/* A bad sample names the member and the sample. */
	((struct anomaly_sample *)mem[1].samples)[3].bytes = -5;
	errno = 0;
	assert_int_equal(anomaly_peer_check(&p->anomaly.peer, 1500, mem, 3, st,
					    &res, &err),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "fwd2: sample 3: bytes -5 must be a "
				      "non-negative number");
	((struct anomaly_sample *)mem[1].samples)[3].seconds = 0;
	assert_int_equal(anomaly_peer_check(&p->anomaly.peer, 1500, mem, 3, st,
					    &res, &err),
			 -1);
	assert_string_equal(err.text, "fwd2: sample 3: interval 0 s must be "
				      "positive");
	for (int i = 0; i < 3; i++)
		free((void *)mem[i].samples);
	policy_destroy(p);
}

/* ---- sustained detector --------------------------------------------- */

#define PEAK (2.5 * GB) /* threshold 0.75 GB/s */

struct sustained_case {
	const char *name;
	struct phase ph[MAXPH];
	double ops; /* ops/s while bytes flow */
	double queue;
	size_t gap_after; /* drop this many samples after sample gap_at */
	size_t gap_at;
	bool want_flagged;
	double want_longest; /* seconds */
};

static const struct sustained_case sustained_cases[] = {
	{"90 minutes slow and loaded",
	 {{10, 2 * GB}, {90, 0.1 * GB}, {10, 2 * GB}},
	 100,
	 -1,
	 0,
	 0,
	 true,
	 90 * MIN},
	{"transient dip of 30 minutes",
	 {{30, 2 * GB}, {30, 0.1 * GB}, {30, 2 * GB}},
	 100,
	 -1,
	 0,
	 0,
	 false,
	 30 * MIN},
	{"exactly the duration",
	 {{60, 0.5 * GB}},
	 100,
	 -1,
	 0,
	 0,
	 true,
	 60 * MIN},
	{"slow but idle (no ops)", {{120, 0.1 * GB}}, 0, -1, 0, 0, false, 0},
	{"slow, ops below min_load_ops",
	 {{120, 0.1 * GB}},
	 0.5,
	 -1,
	 0,
	 0,
	 false,
	 0},
	{"lightly used: requests served at once (empty queue)",
	 {{120, 0.1 * GB}},
	 100,
	 0.2,
	 0,
	 0,
	 false,
	 0},
	{"slow with requests waiting",
	 {{120, 0.1 * GB}},
	 100,
	 4,
	 0,
	 0,
	 true,
	 120 * MIN},
	{"gap in the data splits the stretch",
	 {{90, 0.1 * GB}},
	 100,
	 -1,
	 10,
	 40,
	 false,
	 40 * MIN},
	{"at the threshold is not slow",
	 {{120, 0.75 * GB}},
	 100,
	 -1,
	 0,
	 0,
	 false,
	 0},
};

static void test_sustained_cases(void **state)
{
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t c = 0;
	     c < sizeof(sustained_cases) / sizeof(sustained_cases[0]); c++) {
		const struct sustained_case *tc = &sustained_cases[c];
		struct anomaly_sustained_result res;
		struct anomaly_sample *s;
		fwd_error_t err = {""};
		size_t n, k = 0;

		print_message("# case: %s\n", tc->name);
		while (k < MAXPH && tc->ph[k].minutes > 0)
			k++;
		s = gen(tc->ph, k, tc->ops, tc->queue, &n);
		if (tc->gap_after) {
			memmove(&s[tc->gap_at], &s[tc->gap_at + tc->gap_after],
				(n - tc->gap_at - tc->gap_after) * sizeof(*s));
			n -= tc->gap_after;
		}
		assert_int_equal(anomaly_sustained_check(&p->anomaly.sustained,
							 PEAK, s, n, &res,
							 &err),
				 0);
		assert_int_equal(res.flagged, tc->want_flagged);
		assert_true(fabs(res.longest.end - res.longest.start -
				 tc->want_longest) < 1e-6);
		if (tc->want_flagged)
			assert_true(res.longest.max_bps < 0.3 * PEAK);
		free(s);
	}
	policy_destroy(p);
}

static void test_sustained_errors(void **state)
{
	struct policy *p = policy_defaults();
	struct anomaly_sample s[2] = {
		{1000, 60, 1, 1, -1},
		{900, 60, 1, 1, -1},
	};
	struct anomaly_sustained_result res;
	fwd_error_t err;

	assert_non_null(p);
	errno = 0;
	assert_int_equal(anomaly_sustained_check(&p->anomaly.sustained, PEAK, s,
						 2, &res, &err),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "sustained: sample 1: time 900 before "
				      "the previous sample's 1000");
	assert_int_equal(anomaly_sustained_check(&p->anomaly.sustained, 0, s, 1,
						 &res, &err),
			 -1);
	assert_string_equal(err.text, "sustained: benchmarked peak 0 B/s must "
				      "be positive");
	s[0].queue = NAN;
	assert_int_equal(anomaly_sustained_check(&p->anomaly.sustained, PEAK, s,
						 1, &res, &err),
			 -1);
	assert_string_equal(err.text, "sustained: sample 0: queue length is "
				      "NaN");
	policy_destroy(p);
}

/* ---- window verdicts ------------------------------------------------- */

struct window_case {
	double wstart_min; /* minutes from the first sample */
	int want;
};

static void test_window_verdicts(void **state)
{
	/* 30 min fast, 120 min slow and loaded, 30 min fast, 30 min idle. */
	struct phase ph[] = {
		{30, 2 * GB}, {120, 0.1 * GB}, {30, 2 * GB}, {30, 0}};
	static const struct window_case wc[] = {
		{0, ANOMALY_GOOD},
		{20, ANOMALY_GOOD}, /* ends as the dip starts */
		{30, ANOMALY_NONE}, /* slow, 0-10 min into the stretch */
		{80, ANOMALY_NONE}, /* 50-60 min: not yet the duration */
		{81, ANOMALY_BAD},  /* reaches 60 min inside the window */
		{90, ANOMALY_BAD},
		{140, ANOMALY_BAD},  /* the stretch's last 10 minutes */
		{145, ANOMALY_BAD},  /* bad and fast in one window: bad */
		{150, ANOMALY_GOOD}, /* recovered */
		{180, ANOMALY_NONE}, /* idle */
	};
	struct policy *p = policy_defaults();
	struct anomaly_sample *s;
	char reason[256];
	fwd_error_t err;
	size_t n;
	double t0 = 1.7e9;

	assert_non_null(p);
	s = gen(ph, 4, 100, -1, &n);
	for (size_t c = 0; c < sizeof(wc) / sizeof(wc[0]); c++) {
		double ws = t0 + wc[c].wstart_min * MIN;

		print_message("# window at +%.0f min\n", wc[c].wstart_min);
		assert_int_equal(anomaly_window_verdict(&p->anomaly.sustained,
							PEAK, s, n, ws,
							ws + 600, reason,
							sizeof(reason), &err),
				 wc[c].want);
	}
	/* The reason says what was seen. */
	assert_int_equal(anomaly_window_verdict(&p->anomaly.sustained, PEAK, s,
						n, t0 + 90 * MIN,
						t0 + 100 * MIN, reason,
						sizeof(reason), &err),
			 ANOMALY_BAD);
	assert_string_equal(reason, "bandwidth at most 1e+08 B/s, under 30% "
				    "of the 2.5e+09 B/s peak, for at least 70 "
				    "min while loaded");
	/* Only the samples from `duration` before the window matter: the
	 * same verdict from a suffix of the series. */
	assert_int_equal(anomaly_window_verdict(&p->anomaly.sustained, PEAK,
						s + 30, n - 30, t0 + 90 * MIN,
						t0 + 100 * MIN, NULL, 0, &err),
			 ANOMALY_BAD);
	assert_int_equal(anomaly_window_verdict(&p->anomaly.sustained, PEAK, s,
						n, t0, t0, NULL, 0, &err),
			 -1);
	assert_string_equal(err.text, "sustained: window [1700000000, "
				      "1700000000) is empty");
	free(s);
	policy_destroy(p);
}

/* ---- DBSCAN on I/O phases -------------------------------------------- */

static const struct anomaly_phase history[] = {
	/* Five past runs: an input read and a checkpoint each. */
	{100, 50 * GB}, {300, 200 * GB}, {104, 51 * GB}, {296, 198 * GB},
	{98, 49 * GB},	{305, 202 * GB}, {102, 50 * GB}, {299, 201 * GB},
	{101, 50 * GB}, {301, 199 * GB},
};

static void test_phase_check(void **state)
{
	static const struct anomaly_phase normal[] = {{103, 51 * GB},
						      {302, 200 * GB}};
	static const struct anomaly_phase slow[] = {{100, 50 * GB},
						    {3000, 200 * GB}};
	static const char *const fw_run[] = {"fwd1", "fwd2"};
	static const char *const fw_a[] = {"fwd2"};
	static const char *const fw_b[] = {"fwd9"};
	static const char *const fw_c[] = {"fwd1"};
	const struct anomaly_neighbour nb[] = {
		/* shares fwd2, overlaps, N-1 on 128 nodes: disruptive */
		{"A", 1000, 5000, fw_a, 1, 128, true, 10, 1 * GB},
		/* overlaps, other forwarder: not a neighbour */
		{"B", 1000, 5000, fw_b, 1, 512, true, 900, 9 * GB},
		/* shares fwd1 but ran before: not a neighbour */
		{"C", 0, 500, fw_c, 1, 512, true, 900, 9 * GB},
		/* shares fwd1, overlaps, benign */
		{"D", 3000, 9000, fw_c, 1, 64, false, 20, 1 * GB},
		/* shares, overlaps, metadata heavy and high bandwidth */
		{"E", 1500, 2500, fw_run, 2, 16, false, 450, 6 * GB},
	};
	struct anomaly_run run = {"42", 2000, 4000, fw_run, 2, normal, 2};
	struct policy *p = policy_defaults();
	struct anomaly_phase_report rep;
	fwd_error_t err;

	assert_non_null(p);
	assert_int_equal(anomaly_phase_check(&p->anomaly,
					     &p->decision.interference, history,
					     10, &run, nb, 5, &rep, &err),
			 0);
	assert_true(rep.checked);
	assert_false(rep.anomalous);
	assert_int_equal(rep.n_clusters, 2);
	assert_int_equal(rep.n_neighbours, 0);
	anomaly_phase_report_free(&rep);

	run.phases = slow;
	assert_int_equal(anomaly_phase_check(&p->anomaly,
					     &p->decision.interference, history,
					     10, &run, nb, 5, &rep, &err),
			 0);
	assert_true(rep.anomalous);
	assert_int_equal(rep.n_outliers, 1);
	assert_false(rep.outlier[0]);
	assert_true(rep.outlier[1]);
	assert_string_equal(rep.reason, "1 of 2 I/O phase(s) outside the 2 "
					"cluster(s) of 10 past phase(s)");
	assert_int_equal(rep.n_neighbours, 3);
	assert_int_equal(rep.n_disruptive, 2);
	assert_int_equal(rep.neighbours[0].index, 0);
	assert_true(rep.neighbours[0].disruptive);
	assert_string_equal(rep.neighbours[0].reasons,
			    "N-1 on 128 nodes (limit 64)");
	assert_int_equal(rep.neighbours[1].index, 3);
	assert_false(rep.neighbours[1].disruptive);
	assert_string_equal(rep.neighbours[1].reasons, "");
	assert_int_equal(rep.neighbours[2].index, 4);
	assert_string_equal(rep.neighbours[2].reasons,
			    "450 md ops/s (limit 300); peak 6e+09 B/s "
			    "(limit 5e+09)");
	anomaly_phase_report_free(&rep);

	/* Too little history: no verdict. */
	assert_int_equal(anomaly_phase_check(&p->anomaly,
					     &p->decision.interference, history,
					     2, &run, nb, 5, &rep, &err),
			 0);
	assert_false(rep.checked);
	assert_false(rep.anomalous);
	assert_string_equal(rep.reason, "2 past I/O phase(s), need 3 to form "
					"a cluster");
	anomaly_phase_report_free(&rep);

	/* A bad phase is named. */
	{
		struct anomaly_phase bad[] = {{-1, 5}};

		run.phases = bad;
		run.n_phases = 1;
		errno = 0;
		assert_int_equal(anomaly_phase_check(
					 &p->anomaly, &p->decision.interference,
					 history, 10, &run, nb, 5, &rep, &err),
				 -1);
		assert_int_equal(errno, EINVAL);
		assert_string_equal(err.text, "42 phase 0: duration -1 s, "
					      "volume 5 bytes: must be "
					      "non-negative numbers");
	}
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_cases),
		cmocka_unit_test(test_peer_figures),
		cmocka_unit_test(test_sustained_cases),
		cmocka_unit_test(test_sustained_errors),
		cmocka_unit_test(test_window_verdicts),
		cmocka_unit_test(test_phase_check),
	};

	return cmocka_run_group_tests_name("anomaly", tests, NULL, NULL);
}
