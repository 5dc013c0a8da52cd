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

#include "monitor/ingest.h"

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
	{ "YAML syntax error skips to the next target",
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
	  "err line 6: lustre-OST0000 job_stats: did not find expected ',' or "
	  "'}'\n"
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
	{ "empty input", "", NULL, "", 0 },
};
/* clang-format on */

static void test_cases(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[4096];
		long lines = -1;

		run(cases[i].text, cases[i].target, out, sizeof(out), &lines);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("%s:\nwant:\n%sgot:\n%s", cases[i].name,
				 cases[i].want, out);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad_target),
	};

	return cmocka_run_group_tests_name("ingest_jobstats", tests, NULL,
					   NULL);
}
