/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profile keys, buckets and predictions with hand-checked numbers.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policies/policy.h"
#include "profiler/profile.h"

#define assert_near(a, b) assert_near_((a), (b), #a)
static void assert_near_(double a, double b, const char *what)
{
	double eps = 1e-9 * (b < 0 ? -b : b) + 1e-9;

	if (!(a - b <= eps && b - a <= eps))
		fail_msg("%s = %.17g, want %.17g", what, a, b);
}

static void test_bucket(void **state)
{
	static const struct {
		uint32_t nodes, base, want;
	} cases[] = {
		{0, 2, 0},
		{1, 2, 1},
		{2, 2, 2},
		{3, 2, 2},
		{255, 2, 128},
		{256, 2, 256},
		{300, 2, 256},
		{511, 2, 256},
		{512, 2, 512},
		{300, 10, 100},
		{99, 10, 10},
		{40960, 4, 16384},
		{4294967295u, 2, 2147483648u},
		{5, 0, 4},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (profile_bucket(cases[i].nodes, cases[i].base) !=
		    cases[i].want)
			fail_msg("bucket(%u, %u) = %u, want %u", cases[i].nodes,
				 cases[i].base,
				 profile_bucket(cases[i].nodes, cases[i].base),
				 cases[i].want);
}

static void set_key(struct policy *p, const char *const *f, size_t n)
{
	for (size_t i = 0; i < p->history.key.count; i++)
		free(p->history.key.items[i]);
	free(p->history.key.items);
	p->history.key.items = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		p->history.key.items[i] = strdup(f[i]);
	p->history.key.count = n;
}

static void test_key(void **state)
{
	struct policy *p = policy_defaults();
	struct profile_job job = {"alice", "proj1", "wrf", "batch", 300};
	char buf[256];
	fwd_error_t err;
	static const char *const all[] = {"account", "partition", "user",
					  "name", "node_bucket"};
	static const char *const bad[] = {"user", "qos"};

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile_key(p, &job, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "user=alice;name=wrf;node_bucket=256");
	/* job names can hold anything: encoded, unambiguous */
	job.name = "my job;x=1%\n";
	assert_int_equal(profile_key(p, &job, buf, sizeof(buf), &err), 0);
	assert_string_equal(
		buf, "user=alice;name=my job%3Bx%3D1%25%0A;node_bucket=256");
	job.name = "wrf";
	job.account = NULL;
	set_key(p, all, 5);
	assert_int_equal(profile_key(p, &job, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "account=;partition=batch;user=alice;"
				 "name=wrf;node_bucket=256");
	assert_int_equal(profile_key(p, &job, buf, 20, &err), -1);
	assert_int_equal(errno, ENOSPC);
	set_key(p, bad, 2);
	assert_int_equal(profile_key(p, &job, buf, sizeof(buf), &err), -1);
	assert_non_null(strstr(err.text, "unknown field \"qos\""));
	policy_destroy(p);
}

/* Whether s is valid UTF-8 (the profiles.profile_key column is utf8mb4). */
static bool utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;

		if (*p >= 0x80 && *p < 0xc2)
			return false;
		for (size_t i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		p += n;
	}
	return true;
}

/* A job name of any length gets a key of at most PROFILE_KEY_MAX bytes:
 * a prefix and a digest of the whole key past that length, the same for
 * the same name, different for names that differ only past the prefix,
 * never equal to a key that was not cut, valid UTF-8. */
static void test_key_long_names(void **state)
{
	struct policy *p = policy_defaults();
	struct profile_job job = {"alice", NULL, NULL, NULL, 4};
	char semi[162], pct[201], cjk[170 * 3 + 1], a[PROFILE_KEY_MAX + 1],
		b[PROFILE_KEY_MAX + 1], name2[201];
	const char *names[] = {semi, pct, cjk};
	fwd_error_t err;

	(void)state;
	assert_non_null(p);
	memset(semi, ';', 161);
	semi[161] = '\0';
	memset(pct, '%', 200);
	pct[200] = '\0';
	for (size_t i = 0; i < 170; i++)
		memcpy(cjk + 3 * i, "\xe6\xb0\xa3", 3); /* U+6C23 */
	cjk[510] = '\0';
	for (size_t i = 0; i < 3; i++) {
		job.name = names[i];
		assert_int_equal(profile_key(p, &job, a, sizeof(a), &err), 0);
		assert_true(strlen(a) <= PROFILE_KEY_MAX);
		assert_true(utf8_ok(a));
		assert_int_equal(strncmp(a, "user=alice;name=", 16), 0);
		assert_non_null(strstr(a, "%~"));
		assert_int_equal(profile_key(p, &job, b, sizeof(b), &err), 0);
		assert_string_equal(a, b);
	}
	/* names that differ only at the end: different keys */
	memcpy(name2, pct, sizeof(pct));
	name2[199] = 'x';
	job.name = pct;
	assert_int_equal(profile_key(p, &job, a, sizeof(a), &err), 0);
	job.name = name2;
	assert_int_equal(profile_key(p, &job, b, sizeof(b), &err), 0);
	assert_string_not_equal(a, b);
	/* a short name keeps its plain key, without a digest */
	job.name = "wrf%~";
	assert_int_equal(profile_key(p, &job, a, sizeof(a), &err), 0);
	assert_string_equal(a, "user=alice;name=wrf%25~;node_bucket=4");
	policy_destroy(p);
}

static struct profile_run run(int64_t end, uint32_t nodes, uint64_t vol,
			      uint32_t ion, double bc, double peak, double iops,
			      double md, enum fwd_io_mode mode)
{
	struct profile_run r = {
		.end_time = end,
		.nodes = nodes,
		.io_volume_bytes = vol,
		.io_nodes = ion,
		.node_bandwidth_bps = bc,
		.peak_bandwidth_bps = peak,
		.iops = iops,
		.mdops = md,
		.metadata_queue = -1,
		.io_mode = mode,
	};

	return r;
}

/*
 * Runs at 256 nodes (ends 1..6) and 512 nodes (ends 7..8); a job of 300
 * nodes: nearest scale 256; K = 5 keeps ends 6,5,4,3,2 (drops end 1).
 *   volumes (GB) at ends 2..6: 10, 30, 20, 1000, 40 -> median 30
 *     -> scaled 30 * 300/256 = 35.15625 GB
 *   io_nodes 256, 200, 128, 256, 256 -> median 256 -> 300
 *   B_c (MB/s) 100, 300, 200, 50, 400 -> median 200 (not scaled)
 *   peak 8, 6, 4, 2, 10 GB/s -> 6 -> 7.03125 GB/s
 *   iops 1000,1000,3000,2000,4000 -> 2000 -> 2343.75
 *   md   10, 20, 30, 40, 50 -> 30 -> 35.15625
 *   modes N-1, N-N, N-N, N-1, N-1 -> N-1
 * The outlier of end 1 (and its volume) plays no part.
 */
static void test_predict_nearest_scale(void **state)
{
	struct profile_run runs[] = {
		run(1, 256, 999000000000ULL, 1, 1, 1, 1, 1, FWD_IO_1_1),
		run(2, 256, 10000000000ULL, 256, 100e6, 8e9, 1000, 10,
		    FWD_IO_N_1),
		run(3, 256, 30000000000ULL, 200, 300e6, 6e9, 1000, 20,
		    FWD_IO_N_N),
		run(4, 256, 20000000000ULL, 128, 200e6, 4e9, 3000, 30,
		    FWD_IO_N_N),
		run(5, 256, 1000000000000ULL, 256, 50e6, 2e9, 2000, 40,
		    FWD_IO_N_1),
		run(6, 256, 40000000000ULL, 256, 400e6, 10e9, 4000, 50,
		    FWD_IO_N_1),
		run(7, 512, 1, 512, 1, 1, 1, 1, FWD_IO_N_N),
		run(8, 512, 1, 512, 1, 1, 1, 1, FWD_IO_N_N),
	};
	struct profile p;

	(void)state;
	assert_int_equal(profile_predict(runs, 8, 300, 5, 0, 100, &p), 0);
	assert_int_equal(p.runs, 5);
	assert_int_equal(p.scale_nodes, 256);
	assert_int_equal(p.io_volume_bytes, 35156250000ULL);
	assert_int_equal(p.io_nodes, 300);
	assert_near(p.node_bandwidth_bps, 200e6);
	assert_near(p.peak_bandwidth_bps, 7.03125e9);
	assert_near(p.iops, 2343.75);
	assert_near(p.mdops, 35.15625);
	assert_int_equal(p.io_mode, FWD_IO_N_1);
	assert_int_equal(p.n_bw, 0);

	/* 400 nodes: 512 is nearer (112 vs 144): the two 512 runs */
	assert_int_equal(profile_predict(runs, 8, 400, 5, 0, 100, &p), 0);
	assert_int_equal(p.scale_nodes, 512);
	assert_int_equal(p.runs, 2);
	assert_int_equal(p.io_nodes, 400);
	assert_int_equal(p.io_mode, FWD_IO_N_N);

	/* 384 nodes: 128 from both; ties go to the larger scale */
	assert_int_equal(profile_predict(runs, 8, 384, 5, 0, 100, &p), 0);
	assert_int_equal(p.scale_nodes, 512);

	/* max_age: at now = 100 with max_age 94.5 only ends >= 5.5 count:
	 * runs 6, 7, 8; for 256 nodes run 6 alone */
	assert_int_equal(profile_predict(runs, 8, 256, 5, 94.5, 100, &p), 0);
	assert_int_equal(p.runs, 1);
	assert_int_equal(p.io_volume_bytes, 40000000000ULL);

	/* even count: mean of the middle two.  K = 2 at 256: ends 6 and 5:
	 * volume (40 + 1000) / 2 = 520 GB; B_c (400 + 50) / 2 = 225 MB/s */
	assert_int_equal(profile_predict(runs, 8, 256, 2, 0, 100, &p), 0);
	assert_int_equal(p.io_volume_bytes, 520000000000ULL);
	assert_near(p.node_bandwidth_bps, 225e6);

	/* no usable run */
	assert_int_equal(profile_predict(runs, 8, 256, 5, 1, 100, &p), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(p.runs, 0);
	assert_int_equal(profile_predict(NULL, 0, 256, 5, 0, 100, &p), -1);
}

/* 1-1 applications keep one I/O node whatever the scale; I/O nodes never
 * exceed the job's nodes. */
static void test_predict_scaling_limits(void **state)
{
	struct profile_run r1[] = {
		run(1, 64, 1000, 1, 5e6, 5e6, 10, 1, FWD_IO_1_1),
	};
	struct profile_run r2[] = {
		run(1, 100, 1000, 100, 5e6, 5e8, 10, 1, FWD_IO_N_N),
	};
	struct profile p;

	(void)state;
	assert_int_equal(profile_predict(r1, 1, 1024, 5, 0, 0, &p), 0);
	assert_int_equal(p.io_nodes, 1);
	assert_int_equal(p.io_volume_bytes, 16000);
	assert_int_equal(profile_predict(r2, 1, 150, 5, 0, 0, &p), 0);
	assert_int_equal(p.io_nodes, 150);
	assert_int_equal(profile_predict(r2, 1, 1, 5, 0, 0, &p), 0);
	assert_int_equal(p.io_nodes, 1);
	assert_int_equal(p.io_volume_bytes, 10);
	assert_near(p.peak_bandwidth_bps, 5e6);
}

/* Ties and caps, case by case: the mode most frequent among the K runs
 * used, a tie going to the most recent run's mode; I/O nodes never above
 * the job's nodes even when a run recorded more I/O nodes than nodes. */
static void test_predict_ties_and_caps(void **state)
{
	static const struct {
		const char *what;
		enum fwd_io_mode modes[4]; /* runs ending 1..4 at 64 nodes */
		uint32_t ion;		   /* each run's io_nodes */
		uint32_t nodes;		   /* the job's nodes */
		enum fwd_io_mode want_mode;
		uint32_t want_ion;
	} t[] = {
		{"2-2 tie, the latest run N-N",
		 {FWD_IO_N_N, FWD_IO_N_1, FWD_IO_N_1, FWD_IO_N_N},
		 32,
		 64,
		 FWD_IO_N_N,
		 32},
		{"2-2 tie, the latest run N-1",
		 {FWD_IO_N_1, FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_1},
		 32,
		 64,
		 FWD_IO_N_1,
		 32},
		{"3-1, the latest run in the minority",
		 {FWD_IO_N_M, FWD_IO_N_M, FWD_IO_N_M, FWD_IO_N_N},
		 32,
		 64,
		 FWD_IO_N_M,
		 32},
		{"1-1-1-1 tie, the latest run N-M",
		 {FWD_IO_N_N, FWD_IO_N_1, FWD_IO_1_1, FWD_IO_N_M},
		 32,
		 64,
		 FWD_IO_N_M,
		 32},
		{"io_nodes above the node count: capped",
		 {FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_N},
		 100,
		 64,
		 FWD_IO_N_N,
		 64},
		{"io_nodes exactly the node count: kept",
		 {FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_N},
		 64,
		 64,
		 FWD_IO_N_N,
		 64},
		{"scaled up past the job's nodes: capped",
		 {FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_N, FWD_IO_N_N},
		 100,
		 70,
		 FWD_IO_N_N,
		 70},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct profile_run runs[4];
		struct profile p;

		for (int j = 0; j < 4; j++)
			runs[j] = run(j + 1, 64, 1000000, t[i].ion, 1e6, 1e6,
				      10, 1, t[i].modes[j]);
		if (profile_predict(runs, 4, t[i].nodes, 5, 0, 100, &p) != 0)
			fail_msg("%s: refused", t[i].what);
		if (p.io_mode != t[i].want_mode || p.io_nodes != t[i].want_ion)
			fail_msg("%s: mode %d io_nodes %u, want %d and %u",
				 t[i].what, (int)p.io_mode, p.io_nodes,
				 (int)t[i].want_mode, t[i].want_ion);
	}
}

/* bandwidth_by_forwarders: median per k over all runs of the key. */
static void test_bandwidth_by_forwarders(void **state)
{
	struct profile_run runs[] = {
		run(1, 256, 1, 1, 1, 1, 1, 1, FWD_IO_N_N),
		run(2, 256, 1, 1, 1, 1, 1, 1, FWD_IO_N_N),
		run(3, 256, 1, 1, 1, 1, 1, 1, FWD_IO_N_N),
		run(4, 512, 1, 1, 1, 1, 1, 1, FWD_IO_N_N),
		run(5, 256, 1, 1, 1, 1, 1, 1, FWD_IO_N_N),
	};
	struct profile p;
	json_t *o, *bw;

	(void)state;
	runs[0].forwarders = 1, runs[0].achieved_bps = 2.0e9;
	runs[1].forwarders = 4, runs[1].achieved_bps = 7.0e9;
	runs[2].forwarders = 1, runs[2].achieved_bps = 2.4e9;
	runs[3].forwarders = 4, runs[3].achieved_bps = 9.0e9;
	runs[4].forwarders = 2; /* achieved unknown: ignored */
	runs[0].metadata_queue = 3;
	runs[2].metadata_queue = 5;
	assert_int_equal(profile_predict(runs, 5, 256, 5, 0, 10, &p), 0);
	assert_int_equal(p.n_bw, 2);
	assert_int_equal(p.bw[0].k, 1);
	assert_near(p.bw[0].bps, 2.2e9);
	assert_int_equal(p.bw[1].k, 4);
	assert_near(p.bw[1].bps, 8.0e9);
	assert_near(p.metadata_queue, 4);

	o = profile_to_json(&p);
	assert_non_null(o);
	bw = json_object_get(o, "bandwidth_by_forwarders");
	assert_near(json_real_value(json_object_get(bw, "1")), 2.2e9);
	assert_near(json_real_value(json_object_get(bw, "4")), 8.0e9);
	assert_string_equal(json_string_value(json_object_get(o, "io_mode")),
			    "N-N");
	assert_int_equal(json_integer_value(json_object_get(o, "runs")), 4);
	json_decref(o);
	/* an unknown mode is left out, as decide's input expects */
	p.io_mode = FWD_IO_NONE;
	o = profile_to_json(&p);
	assert_null(json_object_get(o, "io_mode"));
	assert_non_null(json_object_get(o, "io_nodes"));
	json_decref(o);
}

/* One point of a curve: k, its median, how many runs, their spread, and
 * whether they had their forwarders alone. */
static void assert_point(const struct profile_bw *b, uint32_t k, double bps,
			 uint32_t runs, double spread, bool priv)
{
	assert_int_equal(b->k, k);
	assert_near(b->bps, bps);
	assert_int_equal(b->runs, runs);
	assert_near(b->spread_bps, spread);
	assert_int_equal(b->private_fwd, priv);
}

/* Per k: the runs that had their forwarders alone count, else the shared
 * ones; how many, and their spread. */
static void test_curve_private_first(void **state)
{
	struct profile_run runs[6];
	struct profile p;

	(void)state;
	for (int i = 0; i < 6; i++)
		runs[i] = run(i + 1, 256, 1, 1, 1, 1, 1, 1, FWD_IO_N_N);
	/* k = 2: three private runs (1, 3, 2 GB/s) and a shared one (8) */
	runs[0].forwarders = 2, runs[0].achieved_bps = 1e9;
	runs[1].forwarders = 2, runs[1].achieved_bps = 3e9;
	runs[2].forwarders = 2, runs[2].achieved_bps = 2e9;
	runs[3].forwarders = 2, runs[3].achieved_bps = 8e9;
	runs[0].private_fwd = runs[1].private_fwd = runs[2].private_fwd = true;
	/* k = 4: shared runs only (4 and 5 GB/s) */
	runs[4].forwarders = 4, runs[4].achieved_bps = 4e9;
	runs[5].forwarders = 4, runs[5].achieved_bps = 5e9;
	assert_int_equal(profile_predict(runs, 6, 256, 5, 0, 10, &p), 0);
	assert_int_equal(p.n_bw, 2);
	assert_point(&p.bw[0], 2, 2e9, 3, 2e9, true);
	assert_point(&p.bw[1], 4, 4.5e9, 2, 1e9, false);
}

/* Runs decided direct (no forwarder) give the k = 0 point: their median,
 * count and spread; a run with k = 0 not decided direct gives none. */
static void test_curve_direct(void **state)
{
	struct profile_run runs[5];
	struct profile p;
	json_t *o, *c;

	(void)state;
	for (int i = 0; i < 5; i++)
		runs[i] = run(i + 1, 256, 1, 1, 1, 1, 1, 1, FWD_IO_N_N);
	/* direct: 3, 1 and 2 GB/s */
	runs[0].direct = runs[1].direct = runs[2].direct = true;
	runs[0].achieved_bps = 3e9;
	runs[1].achieved_bps = 1e9;
	runs[2].achieved_bps = 2e9;
	/* k = 0 without a direct decision: nothing known */
	runs[3].achieved_bps = 9e9;
	/* k = 1, private: 0.5 GB/s */
	runs[4].forwarders = 1, runs[4].achieved_bps = 0.5e9;
	runs[4].private_fwd = true;
	assert_int_equal(profile_predict(runs, 5, 256, 5, 0, 10, &p), 0);
	assert_int_equal(p.n_bw, 2);
	assert_point(&p.bw[0], 0, 2e9, 3, 2e9, false);
	assert_point(&p.bw[1], 1, 0.5e9, 1, 0, true);
	/* stored as "0", shown as direct */
	o = profile_to_json(&p);
	assert_near(
		json_real_value(json_object_get(
			json_object_get(o, "bandwidth_by_forwarders"), "0")),
		2e9);
	json_decref(o);
	c = profile_curve_json(&p);
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(c, 0), "k")),
		0);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(c, 0), "forwarders")),
			    "direct");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(c, 1), "forwarders")),
			    "private");
	json_decref(c);
	/* without the direct runs: no k = 0 point */
	assert_int_equal(profile_predict(runs + 3, 2, 256, 5, 0, 10, &p), 0);
	assert_int_equal(p.n_bw, 1);
	assert_int_equal(p.bw[0].k, 1);
}

struct json_case {
	const char *text;
	const char *err; /* NULL = valid */
};

static void test_from_json(void **state)
{
	static const struct json_case cases[] = {
		{"{\"io_volume_bytes\": 64000000000, \"io_nodes\": 256,"
		 " \"node_bandwidth_bps\": 2e8, \"peak_bandwidth_bps\": 6e10,"
		 " \"iops\": 500, \"mdops\": 12.5, \"metadata_queue\": 0.5,"
		 " \"io_mode\": \"N-N\", \"runs\": 7,"
		 " \"bandwidth_by_forwarders\": {\"4\": 9e9, \"1\": 2.5e9}}",
		 NULL},
		{"{\"io_volume_bytes\": 1, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"1-1\"}",
		 NULL},
		{"[]", "not a JSON object"},
		{"{\"io_nodes\": 1, \"node_bandwidth_bps\": 1,"
		 " \"io_mode\": \"N-N\"}",
		 "missing \"io_volume_bytes\""},
		{"{\"io_volume_bytes\": -5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-N\"}",
		 "\"io_volume_bytes\": -5: must be a number >= 0"},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1.5,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-N\"}",
		 "\"io_nodes\": 1.5: must be a whole number"},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": \"fast\", \"io_mode\": \"N-N\"}",
		 "\"node_bandwidth_bps\": \"fast\""},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-2\"}",
		 "\"io_mode\": \"N-2\""},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1}",
		 NULL},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": 3}",
		 "\"io_mode\" must be one of"},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1, \"colour\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-N\"}",
		 "unknown key \"colour\""},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-N\","
		 " \"bandwidth_by_forwarders\": {\"x\": 5}}",
		 "\"x\": not a forwarder count"},
		/* k = 0: direct file-system access */
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-N\","
		 " \"bandwidth_by_forwarders\": {\"1\": 2, \"0\": 5}}",
		 NULL},
		{"{\"io_volume_bytes\": 5, \"io_nodes\": 1,"
		 " \"node_bandwidth_bps\": 1, \"io_mode\": \"N-N\","
		 " \"bandwidth_by_forwarders\": {\"2\": -1}}",
		 "\"2\": -1: must be a number >= 0"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = json_loads(cases[i].text, JSON_DECODE_ANY, NULL);
		struct profile p;
		fwd_error_t err = {""};
		int rv;

		assert_non_null(o);
		rv = profile_from_json(o, &p, &err);
		if (cases[i].err == NULL) {
			if (rv)
				fail_msg("case %zu: %s", i, err.text);
			if (strstr(cases[i].text, "\"0\": 5")) {
				assert_int_equal(p.n_bw, 2);
				assert_int_equal(p.bw[0].k, 0);
				assert_true(p.bw[0].bps == 5);
				assert_int_equal(p.bw[1].k, 1);
			}
		} else if (rv != -1 || !strstr(err.text, cases[i].err)) {
			fail_msg("case %zu: rv %d \"%s\" lacks \"%s\"", i, rv,
				 err.text, cases[i].err);
		}
		if (i == 0) {
			/* round trip through profile_to_json */
			json_t *back = profile_to_json(&p);

			assert_int_equal(p.n_bw, 2);
			assert_int_equal(p.bw[0].k, 1);
			assert_int_equal(p.runs, 7);
			assert_int_equal(p.io_volume_bytes, 64000000000ULL);
			assert_near(json_number_value(
					    json_object_get(back, "mdops")),
				    12.5);
			assert_near(json_number_value(json_object_get(
					    json_object_get(
						    back,
						    "bandwidth_by_forwarders"),
					    "4")),
				    9e9);
			assert_string_equal(json_string_value(json_object_get(
						    back, "io_mode")),
					    "N-N");
			json_decref(back);
		}
		json_decref(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_key_long_names),
		cmocka_unit_test(test_predict_nearest_scale),
		cmocka_unit_test(test_predict_scaling_limits),
		cmocka_unit_test(test_predict_ties_and_caps),
		cmocka_unit_test(test_bandwidth_by_forwarders),
		cmocka_unit_test(test_curve_private_first),
		cmocka_unit_test(test_curve_direct),
		cmocka_unit_test(test_from_json),
	};

	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
