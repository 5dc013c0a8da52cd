/* SPDX-License-Identifier: GPL-2.0-or-later */
/* InfluxDB line protocol parser, and the plausibility of what it gives:
 * table-driven. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/plausible.h"
#include "monitor/ingest.h"
#include "policies/policy.h"

#define NOW 1700000000000000000LL
#define NA UINT64_MAX /* field absent */

struct good {
	const char *line;
	enum ingest_kind kind;
	const char *name;
	int64_t ts;
	uint64_t c[INFLUX_N_COUNTERS]; /* NA = absent */
	double queue;		       /* < 0 = absent */
};

/* clang-format off */
static const struct good goods[] = {
	{ "fwd,node=fwd012 read_bytes=1000i,write_bytes=2000i,read_ops=10i,"
	  "write_ops=20i,md_ops=5i,queue_len=3 1472292840000000000",
	  INGEST_FWD, "fwd012", 1472292840000000000LL,
	  { 1000, 2000, 10, 20, 5 }, 3 },
	{ "ost,target=lustre-OST0004,fs=lustre read_bytes=500u,write_bytes=7 1",
	  INGEST_OST, "lustre-OST0004", 1, { 500, 7, NA, NA, NA }, -1 },
	{ "mdt,target=lustre-MDT0000 md_ops=1e3", INGEST_MDT,
	  "lustre-MDT0000", NOW, { NA, NA, NA, NA, 1000 }, -1 },
	/* escaped space and comma in tag values, '=' in a tag key */
	{ "fwd,rack=a\\,b,node=fwd\\ 13,x\\=y=1 read_bytes=5i 10",
	  INGEST_FWD, "fwd 13", 10, { 5, NA, NA, NA, NA }, -1 },
	/* string and boolean fields are skipped but must be well-formed */
	{ "fwd,node=f1 note=\"a, b=c \\\"q\\\" \\\\\",ok=true,read_ops=3i,"
	  "up=F 20",
	  INGEST_FWD, "f1", 20, { NA, NA, 3, NA, NA }, -1 },
	{ "fwd,node=f1 queue_len=2.5  30  ", INGEST_FWD, "f1", 30,
	  { NA, NA, NA, NA, NA }, 2.5 },
	{ "fwd,node=f1 read_bytes=12.0,other=-3 40", INGEST_FWD, "f1", 40,
	  { 12, NA, NA, NA, NA }, -1 },
	{ "fwd,node=f\\1 write_ops=0i", INGEST_FWD, "f\\1", NOW,
	  { NA, NA, NA, 0, NA }, -1 },
};
/* clang-format on */

static void test_good(void **state)
{
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];
		struct influx_rec r;
		fwd_error_t err = {{0}};
		int rc = influx_parse_line(g->line, NOW, &r, &err);

		if (rc != INGEST_OK)
			fail_msg("line %zu: %d %s", i, rc, err.text);
		assert_int_equal(r.kind, g->kind);
		assert_string_equal(r.name, g->name);
		assert_int_equal(r.ts_ns, g->ts);
		for (int k = 0; k < INFLUX_N_COUNTERS; k++) {
			assert_int_equal(r.has[k], g->c[k] != NA);
			if (g->c[k] != NA)
				assert_int_equal(r.counter[k], g->c[k]);
		}
		assert_int_equal(r.has_queue, g->queue >= 0);
		if (g->queue >= 0)
			assert_true(r.queue_len == g->queue);
	}
}

static void test_skip(void **state)
{
	static const char *const lines[] = {
		"",
		"   ",
		"# a comment",
		"cpu,host=n1 usage_idle=99.5 1",
		"fwd_other,node=x read_bytes=1i",
		"fwd,node=f1 unrelated=1i 5",
	};
	struct influx_rec r;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		assert_int_equal(influx_parse_line(lines[i], NOW, &r, NULL),
				 INGEST_SKIP);
}

struct bad {
	const char *line;
	const char *error;
};

/* clang-format off */
static const struct bad bads[] = {
	{ "fwd,node=f1", "missing fields after 'fwd'" },
	{ "fwd,node=f1 ", "missing fields after 'fwd'" },
	{ "fwd read_bytes=1i", "measurement 'fwd' needs a node= tag" },
	{ "ost,node=x read_bytes=1i", "measurement 'ost' needs a target= tag" },
	{ "fwd,node read_bytes=1i", "tag 'node' without '=value'" },
	{ "fwd,node= read_bytes=1i", "tag 'node': empty value" },
	{ "fwd,node=f1 read_bytes", "field 'read_bytes' without '=value'" },
	{ "fwd,node=f1 read_bytes=", "field 'read_bytes': missing value" },
	{ "fwd,node=f1 =1", "empty field key" },
	{ "fwd,node=f1 read_bytes=-1i",
	  "field 'read_bytes': a cumulative counter must be a non-negative "
	  "integer" },
	{ "fwd,node=f1 read_bytes=1.5",
	  "field 'read_bytes': a cumulative counter must be a non-negative "
	  "integer" },
	{ "fwd,node=f1 read_bytes=\"12\"",
	  "field 'read_bytes': a cumulative counter must be a non-negative "
	  "integer" },
	{ "fwd,node=f1 read_bytes=true",
	  "field 'read_bytes': a cumulative counter must be a non-negative "
	  "integer" },
	{ "fwd,node=f1 queue_len=-2", "field 'queue_len': negative value" },
	{ "fwd,node=f1 queue_len=\"x\"", "field 'queue_len': expected a number" },
	{ "fwd,node=f1 read_bytes=12x",
	  "field 'read_bytes': bad value '12x' (expected a float, an integer "
	  "such as 12i or 12u, a boolean or a quoted string)" },
	{ "fwd,node=f1 read_bytes=-5u",
	  "field 'read_bytes': bad value '-5u' (expected a float, an integer "
	  "such as 12i or 12u, a boolean or a quoted string)" },
	{ "fwd,node=f1 read_bytes=99999999999999999999i",
	  "field 'read_bytes': bad value '99999999999999999999i' (expected a "
	  "float, an integer such as 12i or 12u, a boolean or a quoted "
	  "string)" },
	{ "fwd,node=f1 note=\"open", "field 'note': unterminated string value" },
	{ "fwd,node=f1 note=\"a\"b", "field 'note': unexpected 'b' after the "
				    "value" },
	{ "fwd,node=f1 read_bytes=1i 12abc",
	  "bad timestamp '12abc': expected non-negative nanoseconds since the "
	  "epoch" },
	{ "fwd,node=f1 read_bytes=1i -5",
	  "bad timestamp '-5': expected non-negative nanoseconds since the "
	  "epoch" },
	{ "fwd,node=f1 read_bytes=1i 5 6",
	  "unexpected text after the timestamp: '6'" },
	{ ",node=f1 read_bytes=1i", "missing measurement name" },
};
/* clang-format on */

static void test_bad(void **state)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct influx_rec r;
		fwd_error_t err = {{0}};
		int rc = influx_parse_line(bads[i].line, NOW, &r, &err);

		if (rc != -1)
			fail_msg("line %zu '%s': rc %d", i, bads[i].line, rc);
		assert_string_equal(err.text, bads[i].error);
	}
}

/*
 * Plausibility with the policy's default bounds: `prev` (if any) is the
 * series' baseline, `line` the next sample, `peak` the component's peak
 * bandwidth (0 = unknown).
 */
enum { PL_OK, PL_IMPLAUSIBLE, PL_PARSE_ERROR };

struct plaus {
	const char *prev, *line;
	double peak;
	int want;
};

/* clang-format off */
static const struct plaus plaus[] = {
	{ NULL, "fwd,node=f1 queue_len=1e308 2", 0, PL_IMPLAUSIBLE },
	{ NULL, "fwd,node=f1 queue_len=1000000 2", 0, PL_OK },
	{ NULL, "fwd,node=f1 queue_len=1000000.5 2", 0, PL_IMPLAUSIBLE },
	{ NULL, "fwd,node=f1 queue_len=18446744073709551615u 2", 0,
	  PL_IMPLAUSIBLE },
	{ NULL, "fwd,node=f1 queue_len=0 2", 0, PL_OK },
	{ NULL, "fwd,node=f1 queue_len=1e309 2", 0, PL_PARSE_ERROR },
	{ NULL, "fwd,node=f1 queue_len=nan 2", 0, PL_PARSE_ERROR },
	{ NULL, "fwd,node=f1 queue_len=inf 2", 0, PL_PARSE_ERROR },
	{ NULL, "fwd,node=f1 queue_len=-1 2", 0, PL_PARSE_ERROR },
	{ NULL, "fwd,node=f1 queue_len=-1i 2", 0, PL_PARSE_ERROR },
	/* the fuzzed counters: near 2^62 in 2 s */
	{ "ost,target=o1 read_bytes=1000i 0",
	  "ost,target=o1 read_bytes=4611686018427387904i 2000000000", 0,
	  PL_IMPLAUSIBLE },
	{ "ost,target=o1 read_bytes=1000i 0",
	  "ost,target=o1 read_bytes=3470000000000001000i 2000000000", 1.2e9,
	  PL_IMPLAUSIBLE },
	{ "fwd,node=f1 write_bytes=0i 0",
	  "fwd,node=f1 write_bytes=4.611686018427388e18 2000000000", 0,
	  PL_IMPLAUSIBLE },
	/* peak unknown: 1 TB/s */
	{ "ost,target=o1 read_bytes=0i 0",
	  "ost,target=o1 read_bytes=2000000000000i 2000000000", 0, PL_OK },
	{ "ost,target=o1 read_bytes=0i 0",
	  "ost,target=o1 read_bytes=2000000000001i 2000000000", 0,
	  PL_IMPLAUSIBLE },
	/* peak 1 GB/s: 4 GB/s */
	{ "ost,target=o1 write_bytes=0i 0",
	  "ost,target=o1 write_bytes=8000000000i 2000000000", 1e9, PL_OK },
	{ "ost,target=o1 write_bytes=0i 0",
	  "ost,target=o1 write_bytes=8000000001i 2000000000", 1e9,
	  PL_IMPLAUSIBLE },
	/* 10M operations per second */
	{ "mdt,target=m1 md_ops=0i 0",
	  "mdt,target=m1 md_ops=20000000i 2000000000", 0, PL_OK },
	{ "mdt,target=m1 md_ops=0i 0",
	  "mdt,target=m1 md_ops=20000001i 2000000000", 0, PL_IMPLAUSIBLE },
	{ "ost,target=o1 read_ops=5i,write_ops=5i 0",
	  "ost,target=o1 read_ops=10i,write_ops=4611686018427387904i "
	  "2000000000", 1e9, PL_IMPLAUSIBLE },
	/* a counter back at a small value is a restart, plausible */
	{ "ost,target=o1 read_bytes=4611686018427387904i 0",
	  "ost,target=o1 read_bytes=7i 2000000000", 0, PL_OK },
};
/* clang-format on */

static int judge(const struct policy_ingest *lim, const struct plaus *c)
{
	struct series_table *t = series_create();
	struct influx_rec r;
	fwd_error_t err = {{0}};
	int want = PL_OK;

	assert_non_null(t);
	if (c->prev) {
		assert_int_equal(influx_parse_line(c->prev, NOW, &r, &err),
				 INGEST_OK);
		for (int k = 0; k < INFLUX_N_COUNTERS; k++)
			if (r.has[k])
				assert_int_equal(
					series_update(t, influx_field_name(k),
						      r.ts_ns / 1000000000,
						      &r.counter[k], 1, NULL,
						      NULL),
					SERIES_BASELINE);
	}
	if (influx_parse_line(c->line, NOW, &r, &err) != INGEST_OK) {
		series_destroy(t);
		return PL_PARSE_ERROR;
	}
	if (r.has_queue && !ingest_gauge_ok(r.queue_len, lim->max_queue_len))
		want = PL_IMPLAUSIBLE;
	for (int k = 0; k < INFLUX_N_COUNTERS; k++) {
		double bound = k == INFLUX_READ_BYTES || k == INFLUX_WRITE_BYTES
				       ? ingest_bytes_bound(lim, c->peak)
				       : lim->max_ops_rate;
		uint64_t d;
		double dt;

		if (r.has[k] &&
		    series_peek(t, influx_field_name(k), r.ts_ns / 1000000000,
				&r.counter[k], 1, series_check_rate, &bound, &d,
				&dt) == SERIES_IMPLAUSIBLE)
			want = PL_IMPLAUSIBLE;
	}
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

/* Lustre jobid_name patterns -> Slurm job ids (monitor/jobid.c). */
static void test_jobid_map(void **state)
{
	static const struct {
		const char *pattern, *id;
		int want;
		uint64_t job;
	} t[] = {
		{"%j", "12345", 1, 12345},
		{"%j", "12345.n01", 0, 0},
		{"%j.%H", "12345.n01", 1, 12345},
		{"%j.%e", "77.a.out.x", 1, 77},
		{"%e.%u", "dd.500", 0, 0},
		{"%e.%j", "python3.9.4242", 1, 4242},
		{"job%j", "job88", 1, 88},
		{"job%j", "88", 0, 0},
		{"%j", "kworker/13:2.0", 0, 0},
		{"%%%j", "%5", 1, 5},
		{"%q", "5", -1, 0},
		/* a job id too long for a number: no id, even when another
		 * %j of the pattern matched */
		{"%j", "99999999999999999999999", 0, 0},
		{"%j.%j", "99999999999999999999999.5", 0, 0},
		{"%j.%j", "7.5", 1, 7},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t id = 0;
		int r = jobstats_map_id(t[i].pattern, t[i].id, &id);

		if (r != t[i].want || (r == 1 && id != t[i].job))
			fail_msg("%s / %s: %d %llu, want %d %llu", t[i].pattern,
				 t[i].id, r, (unsigned long long)id, t[i].want,
				 (unsigned long long)t[i].job);
	}
}

/* Telegraf lustre2 / lustre2_lctl lines (their README and tests). */
static void test_lustre2(void **state)
{
	struct influx_opts o = {.now_ns = NOW, .unit_ns = 1};
	struct influx_rec r;
	struct jobstats_rec *js = calloc(2, sizeof(*js));
	fwd_error_t err;

	(void)state;
	assert_non_null(js);
	assert_int_equal(
		influx_parse(
			"lustre2,host=oss2,jobid=42990218,name=wrk-OST0041 "
			"jobstats_read_bytes=4096i,jobstats_read_calls=1i,"
			"jobstats_write_bytes=310206488i,jobstats_write_"
			"calls=7423i,jobstats_ost_setattr=3i "
			"1556525847000000000",
			&o, &r, js, &err),
		INGEST_JOBSTATS);
	assert_int_equal(js->kind, INGEST_OST);
	assert_string_equal(js->target, "wrk-OST0041");
	assert_true(js->has_slurm_id);
	assert_int_equal(js->slurm_id, 42990218);
	assert_int_equal(js->ts, 1556525847);
	assert_int_equal(js->n_ops, 3);
	assert_string_equal(js->ops[1].name, "write_bytes");
	assert_int_equal(js->ops[1].sum, 310206488);
	assert_int_equal(js->ops[1].samples, 7423);
	assert_string_equal(js->ops[2].name, "setattr");
	assert_int_equal(js->ops[2].samples, 3);
	/* OST stats: counters; MDT md_stats: summed into md_ops */
	assert_int_equal(influx_parse("lustre2,name=fs-OST0001 read_bytes=10u,"
				      "write_calls=3u 1",
				      &o, &r, js, &err),
			 INGEST_OK);
	assert_int_equal(r.kind, INGEST_OST);
	assert_true(r.has[INFLUX_READ_BYTES] && r.has[INFLUX_WRITE_OPS]);
	assert_int_equal(r.counter[INFLUX_READ_BYTES], 10);
	assert_int_equal(
		influx_parse("lustre2,name=fs-MDT0000 open=5u,close=4u,"
			     "getattr=1u 1",
			     &o, &r, js, &err),
		INGEST_OK);
	assert_int_equal(r.kind, INGEST_MDT);
	assert_int_equal(r.counter[INFLUX_MD_OPS], 10);
	/* lctl: samples and min/max/sum on two lines, joined */
	assert_int_equal(
		influx_parse("> lustre2_lctl_ost,host=oss1,jobid=1306853,"
			     "volume=OST0000 jobstats_read_bytes_"
			     "samples=169256u 1693988320000000000",
			     &o, &r, &js[0], &err),
		INGEST_JOBSTATS);
	assert_int_equal(
		influx_parse(
			"lustre2_lctl_ost,host=oss1,jobid=1306853,unit=bytes,"
			"volume=OST0000 jobstats_read_bytes_max=4194304u,"
			"jobstats_read_bytes_min=4096u,jobstats_read_bytes_"
			"sum=62372188160u,jobstats_read_bytes_sumsq=0u "
			"1693988320000000000",
			&o, &r, &js[1], &err),
		INGEST_JOBSTATS);
	assert_int_equal(jobstats_merge(&js[0], &js[1]), 1);
	assert_int_equal(js[0].n_ops, 1);
	assert_int_equal(js[0].ops[0].samples, 169256);
	assert_int_equal(js[0].ops[0].sum, 62372188160ULL);
	assert_int_equal(js[0].ops[0].min, 4096);
	assert_string_equal(js[0].ops[0].unit, "bytes");
	/* lctl md_stats (Telegraf mdt_test.go, TestGatherMDTStats): one
	 * operation a line, joined into the MDT's md_ops; the min/max/sum
	 * lines are latencies, said ignored */
	{
		struct influx_rec m2;

		assert_int_equal(influx_parse("> lustre2_lctl_mdt,host=mds1,"
					      "volume=thfs2-MDT0000 stats_open_"
					      "samples=293759658u 1694140455"
					      "000000000",
					      &o, &r, js, &err),
				 INGEST_OK);
		assert_true(r.md_part);
		assert_int_equal(r.kind, INGEST_MDT);
		assert_string_equal(r.name, "thfs2-MDT0000");
		assert_int_equal(r.counter[INFLUX_MD_OPS], 293759658);
		assert_int_equal(
			influx_parse("lustre2_lctl_mdt,host=mds1,unit=usecs,"
				     "volume=thfs2-MDT0000 stats_open_max="
				     "65525205u,stats_open_min=5u,stats_open_"
				     "sum=38223033629u,stats_open_sumsq="
				     "34619065558020419u 1694140455000000000",
				     &o, &m2, js, &err),
			INGEST_SKIP);
		assert_string_equal(m2.ignored, "lustre2_lctl_mdt md_stats "
						"min/max/sum (latencies)");
		assert_int_equal(
			influx_parse("lustre2_lctl_mdt,host=mds1,"
				     "volume=thfs2-MDT0000 stats_close_"
				     "samples=675832392u 1694140455"
				     "000000000",
				     &o, &m2, js, &err),
			INGEST_OK);
		assert_int_equal(influx_merge_md(&r, &m2), 1);
		assert_int_equal(r.counter[INFLUX_MD_OPS], 969592050);
		/* another time or target is another sample */
		m2.ts_ns += 1000000000;
		assert_int_equal(influx_merge_md(&r, &m2), 0);
		assert_int_equal(r.counter[INFLUX_MD_OPS], 969592050);
		/* Data-on-MDT I/O is not metadata */
		assert_int_equal(influx_parse("lustre2_lctl_mdt,host=mds1,"
					      "volume=thfs2-MDT0000 stats_read_"
					      "bytes_samples=5u 1694140455"
					      "000000000",
					      &o, &m2, js, &err),
				 INGEST_SKIP);
		assert_string_equal(m2.ignored,
				    "lustre2_lctl_mdt md_stats operations "
				    "other than metadata");
	}
	/* ignored, with what */
	assert_int_equal(influx_parse("lustre2,brw_section=io_time,bucket=1,"
				      "name=OST0001 read_ios=5u",
				      &o, &r, js, &err),
			 INGEST_SKIP);
	assert_string_equal(r.ignored, "lustre2 brw_stats");
	assert_int_equal(
		influx_parse("cpu,host=a usage_idle=1", &o, &r, js, &err),
		INGEST_SKIP);
	assert_string_equal(r.ignored, "cpu");
	/* precision and plausibility of times */
	o.unit_ns = 1000000000;
	o.check_time = true;
	assert_int_equal(influx_parse("lustre2,name=a-OST0000 read_bytes=1i "
				      "1700000000",
				      &o, &r, js, &err),
			 INGEST_OK);
	assert_int_equal(r.ts_ns, 1700000000000000000LL);
	o.unit_ns = 1;
	assert_int_equal(influx_parse("lustre2,name=a-OST0000 read_bytes=1i "
				      "1700000000",
				      &o, &r, js, &err),
			 -1);
	assert_non_null(strstr(err.text, "before 2000 or in the future"));
	free(js);
}

/* The id of a process under a jobid_name naming it (lustre-release
 * jobid_interpret_string(): %e current->comm, %u fsuid). */
static void test_proc_id(void **state)
{
	static const struct {
		const char *pattern, *prog;
		uint32_t uid;
		int want;
		const char *id;
	} t[] = {
		{"%e.%u", "dd", 500, 1, "dd.500"},
		/* comm keeps 15 bytes (TASK_COMM_LEN 16) */
		{"%e.%u", "averyveryverylongprogram", 65534, 1,
		 "averyveryverylo.65534"},
		{"%u-%e%%", "ior", 0, 1, "0-ior%"},
		{"%e .%u", "dd", 7, 1, "dd.7"},	  /* white space dropped */
		{"%j", "dd", 500, 0, NULL},	  /* names the job */
		{"%e", "dd", 500, 0, NULL},	  /* no uid */
		{"%e.%u.%h", "dd", 500, 0, NULL}, /* the host: unknown */
		{"%e.%p", "dd", 500, 0, NULL},
		{"%q", "dd", 500, -1, NULL},
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = jobstats_proc_id(t[i].pattern, t[i].prog, t[i].uid, out,
					 sizeof(out));

		if (r != t[i].want || (r == 1 && strcmp(out, t[i].id) != 0))
			fail_msg("%s / %s: %d '%s', want %d '%s'", t[i].pattern,
				 t[i].prog, r, r == 1 ? out : "", t[i].want,
				 t[i].id ? t[i].id : "");
	}
	assert_int_equal(jobstats_proc_id("%e.%u", "dd", 500, out, 6), -1);
	assert_int_equal(jobstats_proc_id("%e.%u", "dd", 500, out, 7), 1);
	assert_string_equal(out, "dd.500");
}

/*
 * What sites really send: a name that is not UTF-8 (MariaDB would refuse
 * it and roll the batch back), a counter of 2^64-1, a time in 2999.  Each
 * is refused on its line, with its reason, never stored.
 */
struct adv {
	const char *line;
	const char *reason; /* NULL: accepted */
	const char *error;
};

/* clang-format off */
static const struct adv advs[] = {
	{ "fwd,node=f\xe9 read_bytes=1i 1700000000000000000", FWD_REASON_UTF8,
	  "tag node is not valid UTF-8 (byte 0xe9 at offset 1)" },
	{ "fwd,node=f\xc3\xa9 read_bytes=1i 1700000000000000000", NULL, NULL },
	{ "fwd,node=f1,rack=\xff read_bytes=1i 1700000000000000000",
	  FWD_REASON_UTF8, "tag rack is not valid UTF-8 (byte 0xff at offset 0)" },
	{ "fw\xc0\x80 read_bytes=1i", FWD_REASON_UTF8,
	  "the measurement is not valid UTF-8 (byte 0xc0 at offset 2)" },
	{ "lustre2,name=OST0001,jobid=a\xed\xa0\x80 jobstats_read_bytes=1i "
	  "1700000000000000000", FWD_REASON_UTF8,
	  "tag jobid is not valid UTF-8 (byte 0xed at offset 1)" },
	{ "fwd,node=f1 read_bytes=18446744073709551615u 1700000000000000000",
	  FWD_REASON_VALUE,
	  "read_bytes 18446744073709551615 is over 2^63-1 (an unset or "
	  "wrapped counter)" },
	{ "fwd,node=f1 read_bytes=9223372036854775807u 1700000000000000000",
	  NULL, NULL },
	{ "fwd,node=f1 write_bytes=1e19 1700000000000000000", FWD_REASON_VALUE,
	  "field 'write_bytes': 1e+19 is over 2^63-1 (an unset or wrapped "
	  "counter)" },
	{ "fwd,node=f1 read_bytes=1i 2200000000000000000", FWD_REASON_TIME,
	  "timestamp 2200000000000000000 is 2039-09-18T23:06:40Z: before "
	  "2000 or in the future (wrong --precision?)" },
	{ "fwd,node=f1 read_bytes=1i 99999999999999", FWD_REASON_TIME,
	  "timestamp 99999999999999 is 1970-01-02T03:46:39Z: before 2000 or "
	  "in the future (wrong --precision?)" },
	{ "fwd,node=f1 read_bytes=1i 1700000000000000000", NULL, NULL },
};
/* clang-format on */

static void test_adversarial(void **state)
{
	struct influx_opts o = {
		.now_ns = NOW, .unit_ns = 1, .check_time = true};
	struct jobstats_rec *js = malloc(sizeof(*js));

	assert_non_null(js);
	for (size_t i = 0; i < sizeof(advs) / sizeof(advs[0]); i++) {
		struct influx_rec r;
		fwd_error_t err = {{0}};
		int rc;

		fwd_reason_clear();
		rc = influx_parse(advs[i].line, &o, &r, js, &err);

		if (!advs[i].reason) {
			if (rc < 0)
				fail_msg("line %zu: %s", i, err.text);
			continue;
		}
		if (rc != -1)
			fail_msg("line %zu accepted (%d)", i, rc);
		assert_string_equal(err.text, advs[i].error);
		assert_string_equal(fwd_reason_take(), advs[i].reason);
	}
	free(js);
}

/*
 * Property: over seeded random lines, valid ones (names of any UTF-8,
 * counters up to 2^63-1, times in the window) parse to exactly their
 * values, and invalid ones (a byte that spoils the UTF-8 of the name, a
 * counter over 2^63-1, a time out of the window, a broken field) are
 * refused, each once.
 */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic across platforms */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static void test_property(void **state)
{
	static const char *const pieces[] = {"a",
					     "z",
					     "0",
					     "-",
					     "_",
					     ".",
					     "\xc3\xa9",
					     "\xe2\x82\xac",
					     "\xf0\x9f\x90\xa7",
					     "\\,",
					     "\\ ",
					     "\\="};
	static const char *const spoil[] = {"\xff", "\xc3", "\xed\xa0\x80",
					    "\xc0\xaf", "\xf4\x90\x80\x80"};
	struct influx_opts o = {
		.now_ns = NOW, .unit_ns = 1, .check_time = true};
	unsigned valid = 0, refused = 0, n_valid = 0, n_bad = 0;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 20000; i++) {
		char name[128] = "", want[128] = "", line[512];
		uint64_t c = rnd() >> 1; /* up to 2^63-1 */
		int64_t ts = NOW - (int64_t)(rnd() % 700000000000000000ULL);
		int kind = (int)(rnd() % 5), len = 1 + (int)(rnd() % 8);
		struct influx_rec r;
		fwd_error_t err = {{0}};
		int rc;

		for (int k = 0; k < len; k++) {
			const char *pc = pieces[rnd() % 12];

			strcat(name, pc);
			strcat(want, pc[0] == '\\' ? pc + 1 : pc);
		}
		if (kind == 1) /* spoil the name's UTF-8 */
			strcat(name, spoil[rnd() % 5]);
		else if (kind == 2) /* a counter over 2^63-1 */
			c |= 1ULL << 63;
		else if (kind == 3) /* a time far ahead */
			ts = NOW + 2 * 86400000000000LL +
			     (int64_t)(rnd() % 1000000000000000000ULL);
		snprintf(line, sizeof(line),
			 "fwd,node=%s read_bytes=%lluu,queue_len=3 %lld", name,
			 (unsigned long long)c, (long long)ts);
		if (kind == 4) /* a broken field */
			snprintf(line, sizeof(line),
				 "fwd,node=%s read_bytes=%llux %lld", name,
				 (unsigned long long)c, (long long)ts);
		rc = influx_parse(line, &o, &r, NULL, &err);
		if (kind == 0) {
			n_valid++;
			if (rc != INGEST_OK)
				fail_msg("valid '%s' refused: %s", line,
					 err.text);
			assert_string_equal(r.name, want);
			assert_true(r.has[INFLUX_READ_BYTES]);
			assert_true(r.counter[INFLUX_READ_BYTES] == c);
			assert_true(r.ts_ns == ts);
			valid++;
		} else {
			n_bad++;
			if (rc != -1)
				fail_msg("invalid '%s' accepted", line);
			refused++;
		}
	}
	assert_int_equal(valid, n_valid);
	assert_int_equal(refused, n_bad);
	assert_true(n_valid > 1000 && n_bad > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_plausibility),
		cmocka_unit_test(test_jobid_map),
		cmocka_unit_test(test_proc_id),
		cmocka_unit_test(test_lustre2),
		cmocka_unit_test(test_adversarial),
		cmocka_unit_test(test_property),
	};

	return cmocka_run_group_tests_name("ingest_influx", tests, NULL, NULL);
}
