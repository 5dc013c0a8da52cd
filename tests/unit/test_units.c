/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Units: every accepted form with its exact value, every refused form with
 * its exact message and errno, and formatter round trips.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/units.h"

#define SIZE_ALLOWED                                                      \
	"a size is a number with an optional unit k, M, G, T, P (powers " \
	"of 1000) or Ki, Mi, Gi, Ti, Pi (powers of 1024), optionally "    \
	"followed by B, e.g. 20GiB or 512MB"
#define RATE_ALLOWED                                                       \
	"a rate is a number of bytes per second with an optional unit k, " \
	"M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi (powers of "    \
	"1024) followed by B/s, e.g. 2.5GB/s or 800MiB/s"
#define DURATION_ALLOWED                                                  \
	"a duration is a number of seconds, or numbers with units d, h, " \
	"m, s, ms in that order, e.g. 90s, 60m, 1h30m, 7d or 250ms"
#define FRACTION_ALLOWED                                                 \
	"a fraction is a number from 0 to 1 or a percentage from 0% to " \
	"100%, e.g. 0.3 or 30%"

struct ok_case {
	const char *in;
	double want;
};

struct bad_case {
	const char *in;
	int err;
	const char *msg;
};

static const struct {
	const char *in;
	uint64_t want;
} size_ok[] = {
	{"0", 0},
	{"4096", 4096},
	{"4096B", 4096},
	{"512MB", 512000000ULL},
	{"512M", 512000000ULL},
	{"20GiB", 20ULL << 30},
	{"20Gi", 20ULL << 30},
	{"1.5TB", 1500000000000ULL},
	{"1kB", 1000},
	{"1KB", 1000},
	{"1KiB", 1024},
	{"2PiB", 2ULL << 50},
	{"3PB", 3000000000000000ULL},
	{"0.5KiB", 512},
	{"18446744073709551615", UINT64_MAX},
};

static const struct bad_case size_bad[] = {
	{"", EINVAL, "value '': empty; " SIZE_ALLOWED},
	{"-1", EINVAL,
	 "value '-1': negative values are not allowed; " SIZE_ALLOWED},
	{"GiB", EINVAL, "value 'GiB': not a number; " SIZE_ALLOWED},
	{" 5", EINVAL, "value ' 5': not a number; " SIZE_ALLOWED},
	{"5 GiB", EINVAL, "value '5 GiB': unknown unit; " SIZE_ALLOWED},
	{"20GB/s", EINVAL,
	 "value '20GB/s': a rate is not a size; " SIZE_ALLOWED},
	{"20XB", EINVAL, "value '20XB': unknown unit; " SIZE_ALLOWED},
	{"20gb", EINVAL, "value '20gb': unknown unit; " SIZE_ALLOWED},
	{"1e9", EINVAL, "value '1e9': unknown unit; " SIZE_ALLOWED},
	{"0x10", EINVAL, "value '0x10': unknown unit; " SIZE_ALLOWED},
	{"1.", EINVAL, "value '1.': unknown unit; " SIZE_ALLOWED},
	{"1.5B", EINVAL,
	 "value '1.5B': not a whole number of bytes; " SIZE_ALLOWED},
	{"18446744073709551616", ERANGE,
	 "value '18446744073709551616': too large; " SIZE_ALLOWED},
	{"20000PiB", ERANGE, "value '20000PiB': too large; " SIZE_ALLOWED},
	{"nan", EINVAL, "value 'nan': not a number; " SIZE_ALLOWED},
};

static const struct ok_case rate_ok[] = {
	{"100", 100},	       {"100B/s", 100},
	{"2.5GB/s", 2.5e9},    {"800MiB/s", 800.0 * 1048576},
	{"1kB/s", 1000},       {"0", 0},
	{"1.25TB/s", 1.25e12},
};

static const struct bad_case rate_bad[] = {
	{"", EINVAL, "value '': empty; " RATE_ALLOWED},
	{"-2GB/s", EINVAL,
	 "value '-2GB/s': negative values are not allowed; " RATE_ALLOWED},
	{"2.5GB", EINVAL,
	 "value '2.5GB': a size is not a rate (add /s); " RATE_ALLOWED},
	{"2.5G", EINVAL, "value '2.5G': unknown unit; " RATE_ALLOWED},
	{"2.5Gb/s", EINVAL, "value '2.5Gb/s': unknown unit; " RATE_ALLOWED},
	{"2.5GB/h", EINVAL, "value '2.5GB/h': unknown unit; " RATE_ALLOWED},
	{"fast", EINVAL, "value 'fast': not a number; " RATE_ALLOWED},
	{"inf", EINVAL, "value 'inf': not a number; " RATE_ALLOWED},
};

static const struct ok_case duration_ok[] = {
	{"3600", 3600},	 {"2.5", 2.5},
	{"60m", 3600},	 {"1h30m", 5400},
	{"90s", 90},	 {"7d", 7 * 86400},
	{"250ms", 0.25}, {"1d2h3m4s5ms", 86400 + 7200 + 180 + 4 + 0.005},
	{"1.5h", 5400},	 {"0s", 0},
};

static const struct bad_case duration_bad[] = {
	{"", EINVAL, "value '': empty; " DURATION_ALLOWED},
	{"-5m", EINVAL,
	 "value '-5m': negative values are not allowed; " DURATION_ALLOWED},
	{"30m1h", EINVAL,
	 "value '30m1h': units out of order; " DURATION_ALLOWED},
	{"1h1h", EINVAL, "value '1h1h': units out of order; " DURATION_ALLOWED},
	{"5min", EINVAL, "value '5min': unknown unit; " DURATION_ALLOWED},
	{"5w", EINVAL, "value '5w': unknown unit; " DURATION_ALLOWED},
	{"1h30", EINVAL,
	 "value '1h30': a number without a unit must stand "
	 "alone; " DURATION_ALLOWED},
	{"1hm", EINVAL, "value '1hm': unknown unit; " DURATION_ALLOWED},
	{"1h.5m", EINVAL,
	 "value '1h.5m': expected a number; " DURATION_ALLOWED},
	{"h", EINVAL, "value 'h': not a number; " DURATION_ALLOWED},
	{"1 h", EINVAL, "value '1 h': unknown unit; " DURATION_ALLOWED},
};

static const struct ok_case fraction_ok[] = {
	{"0", 0},    {"0.3", 0.3}, {"30%", 0.3},     {"1", 1},
	{"100%", 1}, {"0%", 0},	   {"12.5%", 0.125},
};

static const struct bad_case fraction_bad[] = {
	{"", EINVAL, "value '': empty; " FRACTION_ALLOWED},
	{"1.5", ERANGE, "value '1.5': out of range; " FRACTION_ALLOWED},
	{"150%", ERANGE, "value '150%': out of range; " FRACTION_ALLOWED},
	{"-0.1", EINVAL,
	 "value '-0.1': negative values are not allowed; " FRACTION_ALLOWED},
	{"30 %", EINVAL,
	 "value '30 %': not a number or percentage; " FRACTION_ALLOWED},
	{"half", EINVAL, "value 'half': not a number; " FRACTION_ALLOWED},
	{"0.3%%", EINVAL,
	 "value '0.3%%': not a number or percentage; " FRACTION_ALLOWED},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_size(void **state)
{
	fwd_error_t e;
	uint64_t v;

	for (size_t i = 0; i < N(size_ok); i++) {
		v = 12345;
		if (units_parse_size(size_ok[i].in, &v, &e))
			fail_msg("%s: %s", size_ok[i].in, e.text);
		assert_int_equal(v, size_ok[i].want);
	}
	for (size_t i = 0; i < N(size_bad); i++) {
		v = 12345;
		errno = 0;
		assert_int_equal(units_parse_size(size_bad[i].in, &v, &e), -1);
		assert_int_equal(errno, size_bad[i].err);
		assert_string_equal(e.text, size_bad[i].msg);
		assert_int_equal(v, 12345); /* output untouched on error */
	}
}

typedef int (*parse_fn)(const char *, double *, fwd_error_t *);

static void run_double(parse_fn fn, const struct ok_case *ok, size_t n_ok,
		       const struct bad_case *bad, size_t n_bad)
{
	fwd_error_t e;
	double v;

	for (size_t i = 0; i < n_ok; i++) {
		v = -1;
		if (fn(ok[i].in, &v, &e))
			fail_msg("%s: %s", ok[i].in, e.text);
		if (v != ok[i].want)
			fail_msg("%s: got %.17g want %.17g", ok[i].in, v,
				 ok[i].want);
	}
	for (size_t i = 0; i < n_bad; i++) {
		v = -1;
		errno = 0;
		assert_int_equal(fn(bad[i].in, &v, &e), -1);
		assert_int_equal(errno, bad[i].err);
		assert_string_equal(e.text, bad[i].msg);
		assert_true(v == -1);
	}
}

static void test_rate(void **state)
{
	run_double(units_parse_rate, rate_ok, N(rate_ok), rate_bad,
		   N(rate_bad));
}

static void test_duration(void **state)
{
	run_double(units_parse_duration, duration_ok, N(duration_ok),
		   duration_bad, N(duration_bad));
}

static void test_fraction(void **state)
{
	run_double(units_parse_fraction, fraction_ok, N(fraction_ok),
		   fraction_bad, N(fraction_bad));
}

/* A NULL error pointer is allowed: only the return value matters. */
static void test_null_error(void **state)
{
	uint64_t v;

	errno = 0;
	assert_int_equal(units_parse_size("x", &v, NULL), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_format_exact(void **state)
{
	static const struct {
		uint64_t v;
		const char *want;
	} sizes[] = {
		{0, "0"},	{20ULL << 30, "20GiB"}, {512000000, "512MB"},
		{1024, "1KiB"}, {1000, "1kB"},		{1536, "1536"},
		{4097, "4097"},
	};
	static const struct {
		double v;
		const char *want;
	} rates[] =
		{
			{2.5e9, "2.5GB/s"}, {5e9, "5GB/s"}, {1048576, "1MiB/s"},
			{100, "100"},	    {0, "0"},	    {1e6, "1MB/s"},
			{1.5, "1.5"},
		},
	  durations[] =
		  {
			  {5400, "1h30m"},  {3600, "1h"},      {90, "1m30s"},
			  {0.25, "250ms"},  {7 * 86400, "7d"}, {0, "0s"},
			  {1.5, "1s500ms"},
		  },
	  fractions[] = {
		  {0.3, "30%"}, {0.5, "50%"},	  {1, "100%"},
		  {0, "0%"},	{0.125, "12.5%"},
	  };
	char buf[64];

	for (size_t i = 0; i < N(sizes); i++) {
		units_format_size(sizes[i].v, buf, sizeof(buf));
		assert_string_equal(buf, sizes[i].want);
	}
	for (size_t i = 0; i < N(rates); i++) {
		units_format_rate(rates[i].v, buf, sizeof(buf));
		assert_string_equal(buf, rates[i].want);
	}
	for (size_t i = 0; i < N(durations); i++) {
		units_format_duration(durations[i].v, buf, sizeof(buf));
		assert_string_equal(buf, durations[i].want);
	}
	for (size_t i = 0; i < N(fractions); i++) {
		units_format_fraction(fractions[i].v, buf, sizeof(buf));
		assert_string_equal(buf, fractions[i].want);
	}
}

/* Whatever a formatter prints, the parser reads back the same value. */
static void test_round_trip(void **state)
{
	static const uint64_t sizes[] = {
		0,	    1,
		999,	    1000,
		1023,	    1024,
		123456789,  20ULL << 30,
		3ULL << 50, 1500000000000ULL,
		UINT64_MAX, UINT64_MAX - 1,
	};
	static const double rates[] = {
		0,    1,       0.5,  2.5e9, 123456.789, 1e6, 3.0 * 1048576,
		1e15, 1.0 / 3, 7e20,
	};
	static const double durations[] = {
		0,	  0.001, 0.25,	1.5,	    59,	     60,	61,
		3599.999, 5400,	 86399, 90 * 86400, 1.0 / 3, 12345.678,
	};
	static const double fractions[] = {
		0, 0.3, 0.15, 0.6, 1, 1.0 / 3, 0.999, 0.0001,
	};
	char buf[64];
	fwd_error_t e;

	for (size_t i = 0; i < N(sizes); i++) {
		uint64_t back;

		units_format_size(sizes[i], buf, sizeof(buf));
		if (units_parse_size(buf, &back, &e))
			fail_msg("%s: %s", buf, e.text);
		assert_int_equal(back, sizes[i]);
	}
	for (size_t i = 0; i < N(rates); i++) {
		double back;

		units_format_rate(rates[i], buf, sizeof(buf));
		if (units_parse_rate(buf, &back, &e))
			fail_msg("%s: %s", buf, e.text);
		if (back != rates[i])
			fail_msg("rate %.17g -> %s -> %.17g", rates[i], buf,
				 back);
	}
	for (size_t i = 0; i < N(durations); i++) {
		double back;

		units_format_duration(durations[i], buf, sizeof(buf));
		if (units_parse_duration(buf, &back, &e))
			fail_msg("%s: %s", buf, e.text);
		if (back != durations[i])
			fail_msg("duration %.17g -> %s -> %.17g", durations[i],
				 buf, back);
	}
	for (size_t i = 0; i < N(fractions); i++) {
		double back;

		units_format_fraction(fractions[i], buf, sizeof(buf));
		if (units_parse_fraction(buf, &back, &e))
			fail_msg("%s: %s", buf, e.text);
		if (back != fractions[i])
			fail_msg("fraction %.17g -> %s -> %.17g", fractions[i],
				 buf, back);
	}
}

/* Formatters always terminate, even in a tiny buffer. */
static void test_format_truncates(void **state)
{
	char buf[4];

	memset(buf, 'x', sizeof(buf));
	units_format_size(20ULL << 30, buf, sizeof(buf));
	assert_string_equal(buf, "20G");
	units_format_rate(2.5e9, buf, sizeof(buf));
	assert_int_equal(buf[3], '\0');
	units_format_duration(5400, buf, sizeof(buf));
	assert_int_equal(buf[3], '\0');
	units_format_fraction(0.125, buf, sizeof(buf));
	assert_int_equal(buf[3], '\0');
}

/* units_short_rate() prints without printf's "%.3g" where it can: the
 * same text as "%.3g" on random rates of every size, on the decimal
 * values the curves hold (k / 1000 of a unit, and their neighbours one
 * ulp away), on exact halves, and into short buffers. */
static void check_short_rate(double bps, size_t len)
{
	char got[64], want[64];

	if (bps >= 1e9)
		snprintf(want, len, "%.3gGB/s", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(want, len, "%.3gMB/s", bps / 1e6);
	else
		snprintf(want, len, "%.3gB/s", bps);
	units_short_rate(bps, got, len);
	if (strcmp(got, want))
		fail_msg("%.17g (buffer %zu): \"%s\", %%.3g gives \"%s\"", bps,
			 len, got, want);
}

static void test_short_rate_like_printf(void **state)
{
	uint64_t r = 0x9E3779B97F4A7C15ULL;

	(void)state;
	for (int i = 0; i < 300000; i++) {
		double u;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		u = (double)(r >> 11) / 9007199254740992.0;
		check_short_rate(pow(10, -1 + 14 * u), 64);
	}
	for (int k = 1; k < 1000000; k += 1) {
		double x = k / 1000.0;

		check_short_rate(x * 1e6, 64);
		check_short_rate(x * 1e9, 64);
		check_short_rate(x, 64);
		check_short_rate(nextafter(x, 0) * 1e9, 64);
		check_short_rate(nextafter(x, 1e9) * 1e9, 64);
	}
	/* exact halves: round to even on the exact value */
	check_short_rate(2.125e9, 64);
	check_short_rate(2.375e9, 64);
	check_short_rate(10.25e9, 64);
	check_short_rate(0.0, 64);
	check_short_rate(999.5e9, 64);
	check_short_rate(9.995e9, 64);
	check_short_rate(99.95e6, 64);
	check_short_rate(1e12, 64);
	for (size_t len = 1; len < 12; len++)
		check_short_rate(12.3e9, len);
}

/* units_short_rate() keeps its last results: a rate asked again, after
 * others that share its slot or not, and a kept rate asked into a buffer
 * too short for it, still print as "%.3g" does. */
static void test_short_rate_memo(void **state)
{
	double v[200];
	uint64_t r = 0x2545F4914F6CDD1DULL;

	(void)state;
	for (size_t i = 0; i < 200; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		/* a few values again and again, among many once */
		v[i] = i % 4 ? (double)(r % 100000) * 1e5 : 2.5e9 + (i % 3);
	}
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < 200; i++)
			check_short_rate(v[(i * 7 + (size_t)round) % 200], 64);
	check_short_rate(12.3e9, 64);
	for (size_t len = 1; len < 12; len++) {
		check_short_rate(12.3e9, len);
		check_short_rate(12.3e9, 64);
	}
	check_short_rate(-0.0, 64);
	check_short_rate(0.0, 64);
	check_short_rate(-0.0, 64);
}

/* units_fmt_g(x, prec) is printf's "%.<prec>g" of x, or -1 (then never
 * the value's text by another rounding), for every precision it takes,
 * over every magnitude it takes and beyond, both signs, ties and their
 * neighbours; it answers almost always. */
static size_t fmt_g_declined;

static void check_g(double x, int prec)
{
	char want[64], got[64];
	int n;

	snprintf(want, sizeof(want), "%.*g", prec, x);
	n = units_fmt_g(x, prec, got, sizeof(got));
	if (n < 0) {
		fmt_g_declined++;
		return;
	}
	if (strcmp(want, got) || (size_t)n != strlen(got))
		fail_msg("%.17g: printf %%.%dg %s, units_fmt_g %s", x, prec,
			 want, got);
}

static void test_fmt_g_like_printf(void **state)
{
	static const double edge[] = {
		0.0,	    -0.0,     1.0,     1.125,	0.125,	  2.675,
		9.995,	    99.95,    999.5,   1e3,	999.4999, 0.0001,
		0.00099995, 0.000123, 1.0e-5,  123456., 1e21,	  1e22,
		9.9951e22,  1e-22,    1.5e-23, 5e300,	1e-300,	  INFINITY,
		-INFINITY,  NAN,      1e15,    12.25,	1.05,	  -3.14159,
		99999.5,    999999.5, 9.99995, 1234.5,	0.99995,  199.9996};
	uint64_t r = 0x2545F4914F6CDD1DULL;
	char small[8], got[64];
	size_t total = 0;

	(void)state;
	for (int prec = 1; prec <= 6; prec++) {
		for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
			check_g(edge[i], prec);
			check_g(nextafter(edge[i], 0), prec);
			check_g(nextafter(edge[i], INFINITY), prec);
			total += 3;
		}
		/* random values from 1e-20 to 1e20: almost all answered */
		fmt_g_declined = 0;
		for (int i = 0; i < 100000; i++) {
			double u, x;

			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			u = (double)(r >> 11) / 9007199254740992.0;
			x = pow(10, -20 + 40 * u);
			check_g((r & 1) ? -x : x, prec);
			total++;
		}
		print_message("# units_fmt_g %%.%dg: %zu of 100000 random "
			      "values left to printf\n",
			      prec, fmt_g_declined);
		assert_true(fmt_g_declined < 100);
		/* every prec-digit value and the halves between them, at
		 * several scales: the ties decline, the rest match */
		for (int k = 1000; k < 20000; k++) {
			check_g(k / 20.0, prec);
			check_g(k / 2e5, prec);
			check_g(k * 5e3, prec);
			check_g(k * 10.5 + 0.5, prec);
			total += 4;
		}
	}
	print_message("# units_fmt_g: %zu values compared with printf\n",
		      total);
	/* a buffer too small for any answer, or a precision it does not
	 * make: declined */
	assert_int_equal(units_fmt_g(1.5, 3, small, sizeof(small)), -1);
	assert_int_equal(units_fmt_g(1.5, 0, got, sizeof(got)), -1);
	assert_int_equal(units_fmt_g(1.5, 7, got, sizeof(got)), -1);
	assert_int_equal(units_fmt_g(2.5, 6, got, sizeof(got)), 3);
	assert_string_equal(got, "2.5");
}

/* units_format() writes what snprintf() writes: the conversions it makes
 * itself, the ones it leaves to vsnprintf(), and every truncation. */
#define CHECK_FORMAT(len, ...)                             \
	do {                                               \
		char w_[256], g_[256];                     \
		int n_ = snprintf(w_, (len), __VA_ARGS__); \
		size_t m_;                                 \
                                                           \
		memset(g_, 'x', sizeof(g_));               \
		m_ = units_format(g_, (len), __VA_ARGS__); \
		assert_string_equal(g_, w_);               \
		assert_int_equal(m_, strlen(w_));          \
		assert_true(n_ >= 0);                      \
	} while (0)

static void test_format_like_snprintf(void **state)
{
	/* volatile: the compiler sees no NULL argument to warn about */
	const char *volatile null = NULL;

	(void)state;
	for (size_t len = 1; len < 80; len++) {
		CHECK_FORMAT(len, "plain text, no conversion");
		CHECK_FORMAT(len, "%s on %zu node%s > %u (%%)", "N-1 I/O",
			     (size_t)1024, "s", 512u);
		CHECK_FORMAT(len, "peak %.3gGB/s over %.0f s, %.4gGiB", 6.4,
			     33.6, 200.0);
		CHECK_FORMAT(len, "%.1g %.2g %.5g %.6g", 0.15, 123.456, 1e-7,
			     98765.4321);
		CHECK_FORMAT(len, "%s", null);
		/* left to vsnprintf: other conversions, a tie for %.0f */
		CHECK_FORMAT(len, "%d jobs, %x, %.2f", -3, 255u, 1.005);
		CHECK_FORMAT(len, "%.0f and %.0f", 2.5, 3.5);
		CHECK_FORMAT(len, "%.0f", 1e20);
	}
}

/* units_put_dec() writes what printf's %0*llu would. */
static void test_put_dec_like_printf(void **state)
{
	static const uint64_t v[] = {0,
				     7,
				     9,
				     10,
				     42,
				     99,
				     100,
				     101,
				     99999,
				     123456,
				     1000000007ULL,
				     UINT64_MAX};
	static const int w[] = {0, 1, 3, 5, 25};
	char got[64], want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (size_t j = 0; j < sizeof(w) / sizeof(w[0]); j++) {
			char *end = units_put_dec(got, v[i], w[j]);

			*end = '\0';
			snprintf(want, sizeof(want), "%0*llu", w[j],
				 (unsigned long long)v[i]);
			assert_string_equal(got, want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_fraction),
		cmocka_unit_test(test_null_error),
		cmocka_unit_test(test_format_exact),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_format_truncates),
		cmocka_unit_test(test_short_rate_like_printf),
		cmocka_unit_test(test_short_rate_memo),
		cmocka_unit_test(test_put_dec_like_printf),
		cmocka_unit_test(test_fmt_g_like_printf),
		cmocka_unit_test(test_format_like_snprintf),
	};

	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
