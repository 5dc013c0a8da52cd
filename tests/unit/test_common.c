/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common/: the vocabulary (every word both ways, refusals), the time parser
 * (every accepted form with its exact value, every refused form), the
 * timestamp style, and array growth.
 */
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/array.h"
#include "common/error.h"
#include "common/plausible.h"
#include "common/safedir.h"
#include "common/timeutil.h"
#include "common/vocab.h"
#include "common/xml.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_io_modes(void **state)
{
	static const struct {
		enum fwd_io_mode m;
		const char *name;
	} t[] = {
		{FWD_IO_NONE, "none"}, {FWD_IO_N_N, "N-N"}, {FWD_IO_N_1, "N-1"},
		{FWD_IO_N_M, "N-M"},   {FWD_IO_1_1, "1-1"},
	};
	enum fwd_io_mode m;

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		assert_string_equal(fwd_io_mode_name(t[i].m), t[i].name);
		m = FWD_IO_N_M;
		if (t[i].m == FWD_IO_N_M)
			m = FWD_IO_NONE;
		assert_int_equal(fwd_io_mode_parse(t[i].name, &m), 0);
		assert_int_equal(m, t[i].m);
	}
	m = FWD_IO_N_N;
	assert_int_equal(fwd_io_mode_parse("unknown", &m), 0);
	assert_int_equal(m, FWD_IO_NONE);
	errno = 0;
	assert_int_equal(fwd_io_mode_parse("n-n", &m), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fwd_io_mode_parse(NULL, &m), -1);
	assert_string_equal(fwd_io_mode_name((enum fwd_io_mode)99), "?");
}

static void test_actions_requests_health(void **state)
{
	static const char *const actions[] = {
		"default",	 "scale",  "isolate",
		"avoid-anomaly", "shadow", "refused",
	};
	static const char *const requests[] = {
		"none", "auto", "scale", "isolate", "off", "shadow",
	};
	static const char *const health[] = {"ok", "suspect", "excluded"};
	enum fwd_action a;
	enum fwd_request r;
	enum fwd_health h;

	(void)state;
	for (size_t i = 0; i < N(actions); i++) {
		assert_string_equal(fwd_action_name((enum fwd_action)i),
				    actions[i]);
		a = (enum fwd_action)(i + 1);
		assert_int_equal(fwd_action_parse(actions[i], &a), 0);
		assert_int_equal(a, (enum fwd_action)i);
	}
	for (size_t i = 0; i < N(requests); i++) {
		assert_string_equal(fwd_request_name((enum fwd_request)i),
				    requests[i]);
		r = FWD_REQ_NONE;
		errno = 0;
		if (i == FWD_REQ_NONE) {
			/* the absence of a request is not a value */
			assert_int_equal(fwd_request_parse(requests[i], &r),
					 -1);
			assert_int_equal(errno, EINVAL);
			continue;
		}
		assert_int_equal(fwd_request_parse(requests[i], &r), 0);
		assert_int_equal(r, (enum fwd_request)i);
		assert_non_null(strstr(fwd_request_choices(), requests[i]));
	}
	for (size_t i = 0; i < N(health); i++) {
		assert_string_equal(fwd_health_name((enum fwd_health)i),
				    health[i]);
		h = (enum fwd_health)((i + 1) % N(health));
		assert_int_equal(fwd_health_parse(health[i], &h), 0);
		assert_int_equal(h, (enum fwd_health)i);
	}
	errno = 0;
	assert_int_equal(fwd_health_parse("OK", &h), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fwd_action_parse("avoid_anomaly", &a), -1);
}

/* 2026-11-22T10:00:00Z */
#define T0 1795341600.0
#define NOW 1795400000.0

/* Job ids: the boundaries of 1..4294967295 and every near miss. */
static void test_job_ids(void **state)
{
	static const struct {
		const char *in;
		uint32_t want;
	} ok[] = {{"1", 1},
		  {"9", 9},
		  {"10", 10},
		  {"4294967295", 4294967295u},
		  {"4294967294", 4294967294u},
		  {"1000000000", 1000000000}};
	static const char *const bad[] = {
		"",
		"0",
		"00",
		"01",
		"-1",
		"+1",
		" 1",
		"1 ",
		"1\n",
		"1x",
		"0x10",
		"1e3",
		"4294967296",
		"9999999999",
		"10000000000",
		"1.0",
		"18446744073709551617",
		"\xd9\xa1",
		"１",
	};
	uint32_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 0;
		assert_int_equal(fwd_job_id_parse(ok[i].in, &v), 0);
		assert_int_equal(v, ok[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		errno = 0;
		assert_int_equal(fwd_job_id_parse(bad[i], &v), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(v, 7);
	}
	errno = 0;
	assert_int_equal(fwd_job_id_parse(NULL, &v), -1);
	assert_int_equal(errno, EINVAL);
}

/* Checked directories: each way a directory can be unsafe, refused with
 * its reason and errno; a safe one opened, a missing one created. */
static void test_safedir(void **state)
{
	char top[] = "/tmp/fwd-safedir.XXXXXX", d[256], f[256], l[256];
	fwd_error_t err;
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(d, sizeof(d), "%s/d", top);
	/* Missing, not created. */
	assert_int_equal(fwd_dir_check(d, 0, geteuid(), &err), -1);
	assert_int_equal(errno, ENOENT);
	/* Created with the mode asked for. */
	fd = fwd_dir_open_checked(d, 0700, geteuid(), &err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(fd);
	/* Group- or other-writable. */
	for (mode_t m = 0; m < 2; m++) {
		assert_int_equal(chmod(d, m ? 0757 : 0770), 0);
		errno = 0;
		assert_int_equal(fwd_dir_check(d, 0, geteuid(), &err), -1);
		assert_int_equal(errno, EPERM);
		assert_non_null(strstr(err.text, "lets others write into it"));
		assert_non_null(strstr(err.text, "chmod go-w"));
	}
	/* Sticky /tmp-style: still writable by others. */
	assert_int_equal(chmod(d, 01777), 0);
	assert_int_equal(fwd_dir_check(d, 0, FWD_DIR_ANY_OWNER, &err), -1);
	assert_int_equal(chmod(d, 0755), 0);
	assert_int_equal(fwd_dir_check(d, 0, FWD_DIR_ANY_OWNER, &err), 0);
	/* Another owner. */
	if (geteuid() == 0) {
		assert_int_equal(chown(d, 65534, 65534), 0);
		assert_int_equal(fwd_dir_check(d, 0, 0, &err), -1);
		assert_int_equal(errno, EPERM);
		assert_non_null(
			strstr(err.text, "owned by uid 65534, not uid 0"));
		/* Any owner will do when only it can write. */
		assert_int_equal(fwd_dir_check(d, 0, FWD_DIR_ANY_OWNER, &err),
				 0);
		assert_int_equal(chown(d, 0, 0), 0);
	}
	/* A link to a good directory, and a file. */
	snprintf(l, sizeof(l), "%s/link", top);
	assert_int_equal(symlink(d, l), 0);
	assert_int_equal(fwd_dir_check(l, 0700, geteuid(), &err), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_non_null(strstr(err.text, "not a directory (a link or a file)"));
	snprintf(f, sizeof(f), "%s/file", top);
	fd = open(f, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(fwd_dir_check(f, 0, geteuid(), &err), -1);
	assert_int_equal(errno, ENOTDIR);
	/* Relative paths are configuration errors. */
	assert_int_equal(fwd_dir_check("spool", 0700, geteuid(), &err), -1);
	assert_int_equal(errno, EINVAL);
	unlink(f);
	unlink(l);
	rmdir(d);
	rmdir(top);
}

static void test_time_parse_ok(void **state)
{
	static const struct {
		const char *in;
		double want;
	} t[] = {
		{"1700000000", 1700000000.0},
		{"1700000000.25", 1700000000.25},
		{"0", 0},
		{"2026-11-22T10:00:00Z", T0},
		{"2026-11-22T10:00:00", T0},
		{"2026-11-22T10:00:00+00:00", T0},
		{"2026-11-22T10:00:00-00:00", T0},
		{"2026-11-22 10:00:00", T0},
		{"2026-11-22T10:00", T0},
		{"2026-11-22T10:00Z", T0},
		{"2026-11-22", T0 - 36000},
		{"2026-11-22T10:00:00.5Z", T0 + 0.5},
		{"2026-11-22T10:00:00,25", T0 + 0.25},
		{"2024-02-29T00:00:00Z", 1709164800.0},
		{"1970-01-01T00:00:00Z", 0},
		{"9999-12-31T23:59:59Z", FWD_TIME_MAX},
		{"2026-11-22T10:00:59Z", T0 + 59},
		{"253402300799", FWD_TIME_MAX}, /* 12 digits, the most */
		{"2026-11-22T10:59:00Z", T0 + 3540},
		{"2026-11-22T23:00:00Z", T0 + 46800},
		{"now", NOW},
		{"now-30days", NOW - 30 * 86400.0},
		{"now-1day", NOW - 86400.0},
		{"now+1hour", NOW + 3600.0},
		{"now-90", NOW - 90.0},
		{"now-2weeks", NOW - 14 * 86400.0},
		{"now-5minutes", NOW - 300.0},
		{"-30d", NOW - 30 * 86400.0},
		{"30d", NOW - 30 * 86400.0},
		{"2h", NOW - 7200.0},
		{"-90m", NOW - 5400.0},
		{"10s", NOW - 10.0},
		{"1w", NOW - 604800.0},
		{"3hours", NOW - 10800.0},
		{"now+100000000000", NOW + 1e11}, /* 12 digits, the most */
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		double v = -1;

		if (fwd_time_parse(t[i].in, NOW, &v) != 0)
			fail_msg("refused '%s'", t[i].in);
		if (v != t[i].want)
			fail_msg("'%s': %.3f, want %.3f", t[i].in, v,
				 t[i].want);
	}
}

static void test_time_parse_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"nan",
		"inf",
		"0x10",
		"1e9",
		"+5",
		"-5",
		"5x",
		"now-",
		"now-5parsecs",
		"nowish",
		"2026-02-29",
		"2026-02-31T00:00:00Z",
		"2026-13-01",
		"2026-11-22T24:00:00Z",
		"2026-11-22T10:60Z",
		"2026-11-22T10:00:61Z",
		"2026-11-22T10:00:60Z", /* a leap second: POSIX time has none */
		"2016-12-31T23:59:60Z",
		"2026-11-22T10:00:00+02:00",
		"2026-11-22T10:00:00ZZ",
		"2026-11-22T10:00:00.",
		"1969-12-31",
		"10000-01-01",
		"26-11-22",
		"2026/11/22",
		"1e400",
		"99999999999999999999",
		"-999999999999999d",
		"1e3s",
		"-1.5h",
		"now-1e3",
		"now+1000000000000", /* 13 digits */
	};

	(void)state;
	for (size_t i = 0; i < N(bad); i++) {
		double v = 42;

		errno = 0;
		if (fwd_time_parse(bad[i], NOW, &v) != -1)
			fail_msg("accepted '%s' as %f", bad[i], v);
		assert_int_equal(errno, EINVAL);
		assert_true(v == 42);
	}
}

/* Plausibility ranges at both edges: the bounds are inside. */
static void test_plausible_edges(void **state)
{
	static const struct {
		uint64_t v, min, max;
		int want;
	} count[] = {
		{5, 5, 9, 0},
		{9, 5, 9, 0},
		{4, 5, 9, -1},
		{10, 5, 9, -1},
		{0, 0, 0, 0},
		{1, 0, 0, -1},
		{UINT64_MAX, 0, UINT64_MAX, 0},
	};
	static const struct {
		uint64_t v;
		int want;
	} counter[] = {
		{0, 0},
		{FWD_PLAUS_COUNTER_MAX, 0},
		{FWD_PLAUS_COUNTER_MAX + 1, -1},
		{UINT64_MAX, -1},
	};

	(void)state;
	for (size_t i = 0; i < N(count); i++) {
		fwd_error_t err;

		if (fwd_plaus_count("x", count[i].v, count[i].min, count[i].max,
				    &err) != count[i].want)
			fail_msg("count %llu in [%llu, %llu]: want %d",
				 (unsigned long long)count[i].v,
				 (unsigned long long)count[i].min,
				 (unsigned long long)count[i].max,
				 count[i].want);
	}
	for (size_t i = 0; i < N(counter); i++) {
		fwd_error_t err;

		if (fwd_plaus_counter("x", counter[i].v, &err) !=
		    counter[i].want)
			fail_msg("counter %llu: want %d",
				 (unsigned long long)counter[i].v,
				 counter[i].want);
	}
}

/* UTF-8 validity over whole strings: the offset of the first bad byte. */
static void test_utf8_valid(void **state)
{
	static const struct {
		const char *s;
		bool ok;
		size_t bad;
	} t[] = {
		{"", true, 0},
		{"a", true, 0},
		{"wrf.exe", true, 0},
		{"caf\xc3\xa9", true, 0},	/* 2 bytes */
		{"\xe2\x82\xac 5", true, 0},	/* 3 bytes */
		{"x\xf0\x9f\x98\x80", true, 0}, /* 4 bytes */
		{"ab\xc3", false, 2},		/* cut short */
		{"a\xc0\xaf", false, 1},	/* overlong */
		{"\xed\xa0\x80", false, 0},	/* a surrogate */
		{"ok\xff", false, 2},
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		size_t bad = 99;
		bool ok = fwd_utf8_valid(t[i].s, strlen(t[i].s), &bad);

		if (ok != t[i].ok || (!ok && bad != t[i].bad))
			fail_msg("case %zu: %d at %zu, want %d at %zu", i, ok,
				 bad, t[i].ok, t[i].bad);
	}
}

static void test_time_parse_iso_strict(void **state)
{
	static const char *const bad[] = {
		"2026-11-22",
		"2026-11-22T10:00Z",
		"2026-11-22T10:00:00",
	};
	const char *ok = "2026-11-22T10:00:00.123Z trailing";
	double v = 0;

	(void)state;
	/* the length bounds the text: what follows is not read */
	assert_int_equal(fwd_time_parse_iso(ok, 24, FWD_TIME_STRICT, &v), 0);
	assert_true(v > T0 + 0.1229 && v < T0 + 0.1231);
	assert_int_equal(fwd_time_parse_iso(ok, strlen(ok), 0, &v), -1);
	for (size_t i = 0; i < N(bad); i++) {
		errno = 0;
		assert_int_equal(fwd_time_parse_iso(bad[i], strlen(bad[i]),
						    FWD_TIME_STRICT, &v),
				 -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(
			fwd_time_parse_iso(bad[i], strlen(bad[i]), 0, &v), 0);
	}
}

static void test_time_format(void **state)
{
	char buf[64];
	double back = 0;

	(void)state;
	fwd_time_format(T0, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-22T10:00:00Z");
	assert_int_equal(fwd_time_parse(buf, NOW, &back), 0);
	assert_true(back == T0);
	fwd_time_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "-");
	fwd_time_format_ms(T0 + 0.123, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-22T10:00:00.123Z");
	fwd_time_format_ms(T0 + 0.9999, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-22T10:00:00.999Z");
}

static void test_clock(void **state)
{
	double a = fwd_clock_mono(), b = fwd_clock_mono();
	double r = fwd_clock_real();

	(void)state;
	assert_true(b >= a);
	assert_true(r > 1.7e9 && r < FWD_TIME_MAX);
}

static void test_grow(void **state)
{
	int *a = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(FWD_GROW(a, cap, 1, 16), 0);
	assert_non_null(a);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 16; i++)
		a[i] = i;
	assert_int_equal(FWD_GROW(a, cap, 16, 16), 0); /* fits: unchanged */
	assert_int_equal(cap, 16);
	assert_int_equal(FWD_GROW(a, cap, 17, 16), 0);
	assert_int_equal(cap, 32);
	assert_int_equal(FWD_GROW(a, cap, 100, 16), 0);
	assert_int_equal(cap, 128);
	for (int i = 0; i < 16; i++)
		assert_int_equal(a[i], i); /* contents kept */
	/* an impossible size: refused, the array kept */
	errno = 0;
	assert_int_equal(fwd_grow(&a, &cap, SIZE_MAX / 2, sizeof(*a), 16), -1);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(cap, 128);
	assert_int_equal(a[15], 15);
	free(a);
}

/* fwd_cmp_double: ascending, negatives and ties included, and
 * antisymmetric. */
static void test_cmp_double(void **state)
{
	double v[] = {3.5, -1, 1e-300, 0, -1e9, 3.5, 2};
	const double want[] = {-1e9, -1, 0, 1e-300, 2, 3.5, 3.5};
	double a = 1, b = 2;

	(void)state;
	qsort(v, sizeof(v) / sizeof(*v), sizeof(*v), fwd_cmp_double);
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		assert_true(v[i] == want[i]);
	assert_int_equal(fwd_cmp_double(&a, &b), -1);
	assert_int_equal(fwd_cmp_double(&b, &a), 1);
	assert_int_equal(fwd_cmp_double(&a, &a), 0);
}

static void vfail(fwd_error_t *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errno = ENOENT;
	assert_int_equal(verrprintf(e, fmt, ap), -1);
	va_end(ap);
}

static void test_verrprintf(void **state)
{
	fwd_error_t e;

	(void)state;
	vfail(&e, "%s: %d", "x", 7);
	assert_string_equal(e.text, "x: 7");
	assert_int_equal(errno, ENOENT); /* preserved */
	vfail(NULL, "%s", "ignored");
	assert_int_equal(errno, ENOENT);
}

/* Wall-clock times of a zone with daylight saving (sacct's Start/End). */
static void test_time_local(void **state)
{
	double t;

	(void)state;
	assert_int_equal(setenv("TZ", "Europe/Paris", 1), 0);
	tzset();
	/* 2023-03-26: 02:00 CET became 03:00 CEST */
	assert_int_equal(fwd_time_local(1679794200, &t), 0); /* 01:30 */
	assert_true(t == 1679790600);			     /* 00:30Z */
	assert_int_equal(fwd_time_local(1679801400, &t), 0); /* 03:30 */
	assert_true(t == 1679794200);			     /* 01:30Z */
	/* summer: UTC+2; a fraction is kept */
	assert_int_equal(fwd_time_local(1688212800.5, &t), 0);
	assert_true(t == 1688205600.5);
	assert_int_equal(fwd_time_local(-1, &t), -1);
	assert_int_equal(setenv("TZ", "UTC", 1), 0);
	tzset();
	assert_int_equal(fwd_time_local(1679794200, &t), 0);
	assert_true(t == 1679794200);
	unsetenv("TZ");
	tzset();
	assert_true(fwd_timezone_known("UTC"));
	assert_true(fwd_timezone_known("Europe/Paris"));
	assert_false(fwd_timezone_known("Mars/Olympus_Mons"));
	assert_false(fwd_timezone_known("../../etc/passwd"));
	assert_false(fwd_timezone_known("/etc/localtime"));
	assert_false(fwd_timezone_known(""));
}

/* Every string a page shows goes through fwd_xml_text(): markup and
 * quotes become entities, control characters vanish, UTF-8 stays. */
static void test_xml_text(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain", "plain"},
		{"<script>alert('x')</script>",
		 "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"},
		{"a & b \"q\"", "a &amp; b &quot;q&quot;"},
		{"tab\tnl\n", "tab\tnl\n"},
		{"bell\a esc\x1b cr\r", "bell esc cr"},
		{"caf\xc3\xa9", "caf\xc3\xa9"},
		{"", ""},
	};
	char *buf;
	size_t len;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = open_memstream(&buf, &len);

		assert_non_null(f);
		fwd_xml_text(f, cases[i].in);
		fclose(f);
		assert_string_equal(buf, cases[i].out);
		free(buf);
	}
	{
		FILE *f = open_memstream(&buf, &len);

		assert_non_null(f);
		fwd_xml_text(f, NULL);
		fclose(f);
		assert_int_equal(len, 0);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_modes),
		cmocka_unit_test(test_actions_requests_health),
		cmocka_unit_test(test_job_ids),
		cmocka_unit_test(test_safedir),
		cmocka_unit_test(test_time_parse_ok),
		cmocka_unit_test(test_time_parse_bad),
		cmocka_unit_test(test_plausible_edges),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_time_parse_iso_strict),
		cmocka_unit_test(test_time_format),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_time_local),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_cmp_double),
		cmocka_unit_test(test_verrprintf),
		cmocka_unit_test(test_xml_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
