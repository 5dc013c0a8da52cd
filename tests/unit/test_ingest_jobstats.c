/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lustre job_stats streaming parser: table-driven over small inputs. */
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

/* Run the parser over text; write one summary line per result into out:
 *   "ok <kind> <target> <job> <slurm|-> <ts> <n_ops> line <n>"
 *   "err <message>"
 */
static void run(const char *text, const char *target, char *out, size_t len,
		long *lines)
{
	struct jobstats_rec *r = malloc(sizeof(*r));
	struct jobstats_parser *p;
	size_t used = 0;
	fwd_error_t err = {{0}};
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(r);
	assert_non_null(f);
	out[0] = '\0';
	p = jobstats_open(f, target, &err);
	assert_non_null(p);
	while ((rc = jobstats_next(p, r, &err)) != 0) {
		if (rc > 0) {
			char slurm[24] = "-";

			if (r->has_slurm_id)
				snprintf(slurm, sizeof(slurm), "%llu",
					 (unsigned long long)r->slurm_id);
			used += (size_t)snprintf(
				out + used, len - used,
				"ok %s %s %s %s %lld %zu line %ld\n",
				ingest_kind_name(r->kind), r->target, r->job_id,
				slurm, (long long)r->ts, r->n_ops, r->line);
		} else {
			used += (size_t)snprintf(out + used, len - used,
						 "err %s\n", err.text);
		}
		assert_true(used < len);
	}
	if (lines)
		*lines = jobstats_lines(p);
	jobstats_close(p);
	fclose(f);
	free(r);
}

/* clang-format off */
static const char two_targets[] =
	"obdfilter.lustre-OST0000.job_stats=\n"
	"job_stats:\n"
	"- job_id:          12345\n"
	"  snapshot_time:   1472292840\n"
	"  read_bytes:      { samples: 7, unit: bytes, min: 4096, max: 1048576, sum: 7340032 }\n"
	"  getattr:         { samples: 0, unit:  reqs }\n"
	"- job_id:          dd.0\n"
	"  snapshot_time:   1472292841.123456789\n"
	"  start_time:      1472292800.000000000\n"
	"  write_bytes:     { samples: 1, unit: bytes, min: 4096, max: 4096, sum: 4096, sumsq: 16777216 }\n"
	"obdfilter.lustre-OST0001.job_stats=\n"
	"job_stats:\n"
	"mdt.lustre-MDT0000.job_stats=\n"
	"job_stats:\n"
	"- job_id:          777.c1\n"
	"  snapshot_time:   1472292845\n"
	"  open:            { samples: 300, unit:  reqs }\n";

struct tcase {
	const char *name;
	const char *text;
	const char *target;
	const char *want;
	long lines;
};
/* clang-format on */

/* clang-format off */
static const struct tcase cases[] = {
	{ "two targets and an mdt", two_targets, NULL,
	  "ok ost lustre-OST0000 12345 12345 1472292840 2 line 3\n"
	  "ok ost lustre-OST0000 dd.0 - 1472292841 1 line 7\n"
	  "ok mdt lustre-MDT0000 777.c1 777 1472292845 1 line 15\n",
	  17 },
	{ "lctl -n output with --target",
	  "job_stats:\n"
	  "- job_id: 42\n"
	  "  snapshot_time: 100\n"
	  "  punch: { samples: 1, unit: reqs }\n",
	  "lustre-OST0003",
	  "ok ost lustre-OST0003 42 42 100 1 line 2\n", 4 },
	{ "lctl -n output without --target",
	  "job_stats:\n"
	  "- job_id: 42\n"
	  "  snapshot_time: 100\n",
	  NULL,
	  "err line 1: expected a target line such as "
	  "'obdfilter.lustre-OST0000.job_stats=' (for `lctl get_param -n` "
	  "output give the target)\n",
	  3 },
	{ "target line with the YAML on the same line",
	  "mdt.lustre-MDT0001.job_stats=job_stats:\n"
	  "- job_id: 9\n"
	  "  snapshot_time: 5\n",
	  NULL, "ok mdt lustre-MDT0001 9 9 5 0 line 2\n", 3 },
	{ "bad entries are skipped, good ones kept",
	  "obdfilter.lustre-OST0000.job_stats=\n"
	  "job_stats:\n"
	  "- snapshot_time: 5\n"
	  "  open: { samples: 1, unit: reqs }\n"
	  "- job_id: 1\n"
	  "  read_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }\n"
	  "- job_id: 2\n"
	  "  snapshot_time: 5\n"
	  "  read_bytes: { samples: x, unit: bytes, min: 1, max: 1, sum: 1 }\n"
	  "- job_id: 3\n"
	  "  snapshot_time: yesterday\n"
	  "- job_id: 4\n"
	  "  snapshot_time: 6\n",
	  NULL,
	  "err line 3: entry without job_id\n"
	  "err line 5: job 1: entry without snapshot_time\n"
	  "err line 9: job 2: read_bytes.samples: 'x' is not a non-negative "
	  "integer\n"
	  "err line 11: job 3: snapshot_time 'yesterday' is not a time in "
	  "seconds\n"
	  "ok ost lustre-OST0000 4 4 6 0 line 12\n",
	  13 },
	{ "a YAML syntax error costs only its entry",
	  "obdfilter.lustre-OST0000.job_stats=\n"
	  "job_stats:\n"
	  "- job_id: 1\n"
	  "  snapshot_time: 5\n"
	  "  read_bytes: { samples: 1, unit: bytes\n"
	  "- job_id: 2\n"
	  "  snapshot_time: 5\n"
	  "obdfilter.lustre-OST0001.job_stats=\n"
	  "job_stats:\n"
	  "- job_id: 3\n"
	  "  snapshot_time: 7\n",
	  NULL,
	  "err line 5: lustre-OST0000 job_stats: did not find expected ',' or "
	  "'}'\n"
	  "ok ost lustre-OST0000 2 2 5 0 line 6\n"
	  "ok ost lustre-OST0001 3 3 7 0 line 10\n",
	  11 },
	{ "wrong top-level key",
	  "obdfilter.lustre-OST0000.job_stats=\n"
	  "jobs:\n"
	  "- job_id: 1\n"
	  "obdfilter.lustre-OST0002.job_stats=\n"
	  "job_stats:\n",
	  NULL,
	  "err line 2: unexpected value in lustre-OST0000 job_stats (expected "
	  "'job_stats:' and a list of entries)\n",
	  5 },
	/* Lustre 2.12 to 2.15 print ids unquoted ("- %-16s %s\n",
	 * lprocfs_jobstats_seq_show()) and users name their processes:
	 * one id that is not plain YAML costs only its own entry */
	{ "ids that are not plain YAML cost only their entry",
	  "obdfilter.lustre-OST0000.job_stats=\n"
	  "job_stats:\n"
	  "- job_id:          a: b.1001\n"
	  "  snapshot_time:   1700000001\n"
	  "  punch:           { samples:           1, unit:  reqs }\n"
	  "- job_id:          11\n"
	  "  snapshot_time:   1700000002\n"
	  "- job_id:          {x.1001\n"
	  "  snapshot_time:   1700000003\n"
	  "- job_id:          [a.1001\n"
	  "  snapshot_time:   1700000004\n"
	  "- job_id:          *ali.1001\n"
	  "  snapshot_time:   1700000005\n"
	  "- job_id:          %p.1001\n"
	  "  snapshot_time:   1700000006\n"
	  "- job_id:          @at.1001\n"
	  "  snapshot_time:   1700000007\n"
	  "- job_id:          - d.1001\n"
	  "  snapshot_time:   1700000008\n"
	  "- job_id:          caf\xe9.1001\n"
	  "  snapshot_time:   1700000009\n"
	  "- job_id:          x #y.1001\n"
	  "  snapshot_time:   1700000010\n"
	  "- job_id:          &an x.1001\n"
	  "  snapshot_time:   1700000011\n"
	  "- job_id:          \"dd\\x20500\"\n"
	  "  snapshot_time:   1700000012\n"
	  "- job_id:          12\n"
	  "  snapshot_time:   1700000013\n"
	  "obdfilter.lustre-OST0001.job_stats=\n"
	  "job_stats:\n"
	  "- job_id:          ~x: y\n"
	  "  snapshot_time:   1700000014\n"
	  "- job_id:          13\n"
	  "  snapshot_time:   1700000015\n",
	  NULL,
	  "err line 3: lustre-OST0000 job_stats: mapping values are not "
	  "allowed in this context\n"
	  "ok ost lustre-OST0000 11 11 1700000002 0 line 6\n"
	  "err line 9: lustre-OST0000 job_stats: did not find expected ',' or "
	  "'}'\n"
	  "err line 11: lustre-OST0000 job_stats: did not find expected ',' or "
	  "']'\n"
	  "err line 12: lustre-OST0000 job_stats: did not find expected "
	  "alphabetic or numeric character\n"
	  "err line 14: lustre-OST0000 job_stats: found character that cannot "
	  "start any token\n"
	  "err line 16: lustre-OST0000 job_stats: found character that cannot "
	  "start any token\n"
	  "err line 18: lustre-OST0000 job_stats: block sequence entries are "
	  "not allowed in this context\n"
	  "err line 20: lustre-OST0000 job_stats: invalid trailing UTF-8 octet\n"
	  "err line 22: job_id 'x #y.1001' is not plain YAML (a comment, "
	  "anchor or tag)\n"
	  "err line 24: job_id '&an x.1001' is not plain YAML (a comment, "
	  "anchor or tag)\n"
	  "ok ost lustre-OST0000 dd 500 - 1700000012 0 line 26\n"
	  "ok ost lustre-OST0000 12 12 1700000013 0 line 28\n"
	  "err line 32: lustre-OST0001 job_stats: mapping values are not "
	  "allowed in this context\n"
	  "ok ost lustre-OST0001 13 13 1700000015 0 line 34\n",
	  35 },
	{ "empty input", "", NULL, "", 0 },
};
/* clang-format on */

static void test_cases(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[4096];
		long lines = -1;

		run(cases[i].text, cases[i].target, out, sizeof(out), &lines);
		if (strcmp(out, cases[i].want) != 0) {
			/* fail_msg() cuts long messages */
			fprintf(stderr, "%s:\nwant:\n%sgot:\n%s", cases[i].name,
				cases[i].want, out);
			fail();
		}
		assert_int_equal(lines, cases[i].lines);
	}
}

static void test_values(void **state)
{
	const char *text = two_targets;
	struct jobstats_rec *r = malloc(sizeof(*r));
	fwd_error_t err;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct jobstats_parser *p = jobstats_open(f, NULL, &err);

	assert_non_null(p);
	assert_int_equal(jobstats_next(p, r, &err), 1);
	assert_string_equal(r->ops[0].name, "read_bytes");
	assert_string_equal(r->ops[0].unit, "bytes");
	assert_int_equal(r->ops[0].samples, 7);
	assert_int_equal(r->ops[0].min, 4096);
	assert_int_equal(r->ops[0].max, 1048576);
	assert_int_equal(r->ops[0].sum, 7340032);
	assert_string_equal(r->ops[1].name, "getattr");
	assert_string_equal(r->ops[1].unit, "reqs");
	assert_int_equal(r->ops[1].sum, 0);
	jobstats_close(p);
	fclose(f);
	free(r);
}

static void test_bad_target(void **state)
{
	fwd_error_t err = {{0}};

	assert_null(jobstats_open(stdin, "sda1", &err));
	assert_string_equal(err.text,
			    "target 'sda1': expected a Lustre target name such "
			    "as lustre-OST0000 or lustre-MDT0000");
}

/*
 * Implausible values are refused before they are stored, by reason:
 * samples of 2^64-1, a snapshot_time of 99999999999999 or in 2999, a
 * start after the snapshot, more bytes than max_bandwidth allows.
 */
static void test_check(void **state)
{
	/* clang-format off */
	static const struct {
		const char *entry;
		const char *reason; /* NULL: accepted */
		const char *error;
	} checks[] = {
		{ "  snapshot_time: 1700000000\n"
		  "  read_bytes: { samples: 18446744073709551615, unit: bytes, min: 1, max: 1, sum: 1 }\n",
		  FWD_REASON_VALUE, "job 7: read_bytes.samples 18446744073709551615 "
		  "is over 2^63-1 (an unset or wrapped counter)" },
		{ "  snapshot_time: 99999999999999\n", FWD_REASON_TIME,
		  "job 7: snapshot_time 99999999999999 is in the future "
		  "(accepted: 2000-01-01 to a day from now)" },
		{ "  snapshot_time: 32503680000.000000000 secs.nsecs\n",
		  FWD_REASON_TIME, "job 7: snapshot_time 32503680000 is in the "
		  "future (accepted: 2000-01-01 to a day from now)" },
		/* 0 is a time (refused as one), not a missing snapshot_time */
		{ "  snapshot_time: 0\n", FWD_REASON_TIME,
		  "job 7: snapshot_time 0 is before 2000 (accepted: "
		  "2000-01-01 to a day from now)" },
		{ "  snapshot_time: 12\n", FWD_REASON_TIME,
		  "job 7: snapshot_time 12 is before 2000 (accepted: "
		  "2000-01-01 to a day from now)" },
		{ "  snapshot_time: 1700000000\n  start_time: 1700000100\n",
		  FWD_REASON_ORDER, "job 7: snapshot_time 1700000000 is before "
		  "start_time 1700000100" },
		{ "  snapshot_time: 1700000010\n  start_time: 1700000000\n"
		  "  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 20000000000001 }\n",
		  FWD_REASON_RATE, "job 7: bytes 20000000000001 in 10 s is over "
		  "2e+12 B/s" },
		{ "  snapshot_time: 1700000010\n  start_time: 1700000000\n"
		  "  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 20000000000000 }\n",
		  NULL, NULL },
		{ "  snapshot_time: 1700000000\n"
		  "  read_bytes: { samples: 9223372036854775807, unit: bytes, min: 1, max: 1, sum: 1 }\n",
		  NULL, NULL },
	};
	/* clang-format on */
	struct policy_ingest lim = {.max_rate_factor = 4,
				    .max_bandwidth = 2e12,
				    .max_ops_rate = 1e7,
				    .max_queue_len = 1e6};
	struct jobstats_rec *r = malloc(sizeof(*r));

	assert_non_null(r);
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		char text[1024];
		fwd_error_t err = {{0}};
		FILE *f;
		struct jobstats_parser *p;
		int rc;

		snprintf(text, sizeof(text),
			 "obdfilter.lustre-OST0000.job_stats=\n"
			 "job_stats:\n- job_id: 7\n%s",
			 checks[i].entry);
		f = fmemopen(text, strlen(text), "r");
		p = jobstats_open(f, NULL, &err);
		assert_int_equal(jobstats_next(p, r, &err), 1);
		fwd_reason_clear();
		rc = jobstats_check(r, 1700000000, &lim, &err);
		if (!checks[i].reason) {
			if (rc < 0)
				fail_msg("case %zu: %s", i, err.text);
		} else {
			if (rc != -1)
				fail_msg("case %zu accepted", i);
			assert_string_equal(err.text, checks[i].error);
			assert_string_equal(fwd_reason_take(),
					    checks[i].reason);
		}
		jobstats_close(p);
		fclose(f);
	}
	free(r);
}

/*
 * Property: seeded random job_stats output of several targets mixing
 * valid entries (ids of any printable form Lustre prints unquoted, or
 * quoted as 2.16 does) and invalid ones (ids YAML cannot read, invalid
 * UTF-8, a bad value, a missing snapshot_time).  Every valid entry comes
 * out exactly once, with its id, time and values, in order; every
 * invalid one is an error, once, with its line.
 */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

struct want_entry {
	bool valid;
	char id[64];
	long line;
	int64_t ts;
	uint64_t sum;
};

static void test_property(void **state)
{
	/* an id is pre <number> post */
	static const char *const good_ids[][2] = {{"", ".n1"},
						  {"dd.", ""},
						  {"", ""},
						  {"x-", "_y.n1"},
						  {"caf\xc3\xa9.", ""}};
	static const char *const bad_ids[][2] = {
		{"a: b.", ""}, {"{x.", ""},  {"[a.", ""},  {"*ali.", ""},
		{"%p.", ""},   {"@at.", ""}, {"- d.", ""}, {"caf\xe9.", ""},
		{"`x.", ""},   {"|", ""}};
	enum { N = 400 };
	size_t cap = 256 * 1024, used = 0;
	char *text = malloc(cap);
	struct want_entry *want = calloc(N, sizeof(*want));
	struct jobstats_rec *r = malloc(sizeof(*r));
	long line = 0;
	size_t n_good = 0, n_bad = 0, got_good = 0, got_bad = 0, k = 0;
	fwd_error_t err = {{0}};
	struct jobstats_parser *p;
	FILE *f;
	int rc;

	assert_non_null(text);
	assert_non_null(want);
	assert_non_null(r);
	rng_state = 0x2545f4914f6cdd1dULL;
	for (int i = 0; i < N; i++) {
		struct want_entry *w = &want[i];
		unsigned u = (unsigned)(rnd() % 100000);
		int bad = (int)(rnd() % 4) == 0;
		char id[64];

		if (i % 50 == 0) {
			used += (size_t)snprintf(text + used, cap - used,
						 "obdfilter.lustre-OST%04x."
						 "job_stats=\njob_stats:\n",
						 i / 50);
			line += 2;
		}
		const char *const *form =
			bad ? bad_ids[rnd() % 10] : good_ids[rnd() % 5];

		snprintf(id, sizeof(id), "%s%u%s", form[0], u, form[1]);
		w->valid = !bad;
		snprintf(w->id, sizeof(w->id), "%s", id);
		w->line = ++line;
		w->ts = 1700000000 + (int64_t)(rnd() % 1000);
		w->sum = rnd() >> 1;
		used += (size_t)snprintf(
			text + used, cap - used,
			"- job_id:          %s\n"
			"  snapshot_time:   %lld\n"
			"  write_bytes:     { samples: 1, unit: bytes, min: 1, "
			"max: 1, sum: %llu }\n",
			id, (long long)w->ts, (unsigned long long)w->sum);
		line += 2;
		assert_true(used < cap);
		if (bad)
			n_bad++;
		else
			n_good++;
	}
	f = fmemopen(text, used, "r");
	p = jobstats_open(f, NULL, &err);
	assert_non_null(p);
	while ((rc = jobstats_next(p, r, &err)) != 0) {
		long at = rc > 0 ? r->line : strtol(err.text + 5, NULL, 10);

		/* the entry this result is about: the last one started at
		 * or before its line */
		while (k + 1 < N && want[k + 1].line <= at)
			k++;
		if (rc > 0) {
			if (!want[k].valid)
				fail_msg("invalid entry at line %ld stored",
					 want[k].line);
			assert_int_equal(r->line, want[k].line);
			assert_string_equal(r->job_id, want[k].id);
			assert_int_equal(r->ts, want[k].ts);
			assert_int_equal(r->n_ops, 1);
			assert_true(r->ops[0].sum == want[k].sum);
			want[k].valid = false; /* exactly once */
			got_good++;
		} else {
			if (want[k].valid)
				fail_msg("valid entry at line %ld refused: %s",
					 want[k].line, err.text);
			got_bad++;
		}
	}
	assert_int_equal(got_good, n_good);
	assert_int_equal(got_bad, n_bad);
	assert_true(n_good > 100 && n_bad > 50);
	jobstats_close(p);
	fclose(f);
	free(text);
	free(want);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad_target),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_property),
	};

	return cmocka_run_group_tests_name("ingest_jobstats", tests, NULL,
					   NULL);
}
