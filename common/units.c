/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict unit parsing and formatting (see units.h).
 *
 * Numbers are plain decimals ("20", "2.5", ".5" is refused): no sign, no
 * exponent, no hex, no inf/nan, so a typo never turns into a surprising
 * value.  The formatters pick the shortest form that parses back to exactly
 * the same value, which is checked by parsing it back.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct unit {
	const char *name;
	double mult;
};

/* Longest names first so "Ki" is not read as "K" followed by garbage. */
static const struct unit size_units[] = {
	{"Ki", 1024.0},
	{"Mi", 1048576.0},
	{"Gi", 1073741824.0},
	{"Ti", 1099511627776.0},
	{"Pi", 1125899906842624.0},
	{"k", 1e3},
	{"K", 1e3},
	{"M", 1e6},
	{"G", 1e9},
	{"T", 1e12},
	{"P", 1e15},
	{"", 1},
};

/*
 * A plain decimal at the start of s: digits, optionally '.' and digits.
 * Returns the number of characters used (0 if s does not start with a
 * digit) and the value in *v.
 */
static size_t scan_number(const char *s, double *v)
{
	size_t n = 0;
	char buf[64];

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0)
		return 0;
	if (s[n] == '.' && s[n + 1] >= '0' && s[n + 1] <= '9') {
		n++;
		while (s[n] >= '0' && s[n] <= '9')
			n++;
	}
	if (n >= sizeof(buf)) {
		*v = HUGE_VAL;
		return n;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	*v = strtod(buf, NULL);
	return n;
}

/* Match a size unit prefix at s; returns its length (0 for none). */
static size_t scan_size_unit(const char *s, double *mult)
{
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]);
	     i++) {
		size_t n = strlen(size_units[i].name);

		if (!strncmp(s, size_units[i].name, n)) {
			*mult = size_units[i].mult;
			return n;
		}
	}
	return 0;
}

static int bad(fwd_error_t *e, int errnum, const char *s, const char *what,
	       const char *allowed)
{
	errno = errnum;
	return errprintf(e, "value '%s': %s; %s", s, what, allowed);
}

/* Common checks before the number: empty and signed values. */
static int check_start(const char *s, fwd_error_t *e, const char *allowed)
{
	if (!s || !*s) {
		errno = EINVAL;
		return errprintf(e, "value '': empty; %s", allowed);
	}
	if (*s == '-')
		return bad(e, EINVAL, s, "negative values are not allowed",
			   allowed);
	if (*s < '0' || *s > '9')
		return bad(e, EINVAL, s, "not a number", allowed);
	return 0;
}

int units_parse_size(const char *s, uint64_t *out, fwd_error_t *e)
{
	double num, mult = 1, v;
	size_t n;
	const char *p;

	if (check_start(s, e, SIZE_ALLOWED))
		return -1;
	n = scan_number(s, &num);
	p = s + n;
	p += scan_size_unit(p, &mult);
	if (*p == 'B')
		p++;
	if (*p)
		return bad(e, EINVAL, s,
			   *p == '/' ? "a rate is not a size" : "unknown unit",
			   SIZE_ALLOWED);
	/* Integers without a unit go through strtoull: exact to 2^64-1. */
	if (mult == 1 && !strchr(s, '.')) {
		unsigned long long u;
		char *end;

		errno = 0;
		u = strtoull(s, &end, 10);
		if (errno == ERANGE || (*end && *end != 'B'))
			return bad(e, ERANGE, s, "too large", SIZE_ALLOWED);
		*out = u;
		return 0;
	}
	v = num * mult;
	if (!isfinite(v) || v >= 18446744073709551616.0)
		return bad(e, ERANGE, s, "too large", SIZE_ALLOWED);
	if (v != floor(v))
		return bad(e, EINVAL, s, "not a whole number of bytes",
			   SIZE_ALLOWED);
	*out = (uint64_t)v;
	return 0;
}

int units_parse_rate(const char *s, double *out, fwd_error_t *e)
{
	double num, mult = 1, v;
	size_t n, u;
	const char *p;

	if (check_start(s, e, RATE_ALLOWED))
		return -1;
	n = scan_number(s, &num);
	p = s + n;
	u = scan_size_unit(p, &mult);
	p += u;
	if (!strcmp(p, "B/s")) {
		p += 3;
	} else if (*p == 'B' && !p[1]) {
		return bad(e, EINVAL, s, "a size is not a rate (add /s)",
			   RATE_ALLOWED);
	} else if (u || *p) {
		return bad(e, EINVAL, s, "unknown unit", RATE_ALLOWED);
	}
	v = num * mult;
	if (!isfinite(v) || v > 1e300)
		return bad(e, ERANGE, s, "too large", RATE_ALLOWED);
	*out = v;
	return 0;
}

static const struct unit duration_units[] = {
	/* In the order they must appear; "ms" before "m" for matching. */
	{"d", 86400}, {"h", 3600}, {"ms", 0.001}, {"m", 60}, {"s", 1},
};

/* Rank in the required order d > h > m > s > ms. */
static int duration_rank(double mult)
{
	return mult == 86400  ? 0
	       : mult == 3600 ? 1
	       : mult == 60   ? 2
	       : mult == 1    ? 3
			      : 4;
}

int units_parse_duration(const char *s, double *out, fwd_error_t *e)
{
	const char *p;
	double total = 0, num;
	int last = -1;
	size_t n;

	if (check_start(s, e, DURATION_ALLOWED))
		return -1;
	n = scan_number(s, &num);
	if (!s[n]) {
		if (!isfinite(num))
			return bad(e, ERANGE, s, "too large", DURATION_ALLOWED);
		*out = num;
		return 0;
	}
	for (p = s; *p;) {
		const struct unit *unit = NULL;
		int rank;

		n = scan_number(p, &num);
		if (n == 0)
			return bad(e, EINVAL, s, "expected a number",
				   DURATION_ALLOWED);
		p += n;
		for (size_t i = 0;
		     i < sizeof(duration_units) / sizeof(duration_units[0]);
		     i++) {
			size_t l = strlen(duration_units[i].name);

			if (!strncmp(p, duration_units[i].name, l)) {
				unit = &duration_units[i];
				p += l;
				break;
			}
		}
		if (unit &&
		    ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			unit = NULL; /* "5min": not "5m" then "in" */
		if (!unit)
			return bad(e, EINVAL, s,
				   *p ? "unknown unit"
				      : "a number without a unit must stand "
					"alone",
				   DURATION_ALLOWED);
		rank = duration_rank(unit->mult);
		if (rank <= last)
			return bad(e, EINVAL, s, "units out of order",
				   DURATION_ALLOWED);
		last = rank;
		/* Divide for milliseconds: 250 / 1000 is exactly the double
		 * nearest 0.25, 250 * 0.001 is not always. */
		total += rank == 4 ? num / 1000 : num * unit->mult;
	}
	if (!isfinite(total) || total > 1e15)
		return bad(e, ERANGE, s, "too large", DURATION_ALLOWED);
	*out = total;
	return 0;
}

int units_parse_fraction(const char *s, double *out, fwd_error_t *e)
{
	double num;
	size_t n;

	if (check_start(s, e, FRACTION_ALLOWED))
		return -1;
	n = scan_number(s, &num);
	if (s[n] == '%' && !s[n + 1]) {
		num /= 100;
	} else if (s[n]) {
		return bad(e, EINVAL, s, "not a number or percentage",
			   FRACTION_ALLOWED);
	}
	if (!(num <= 1))
		return bad(e, ERANGE, s, "out of range", FRACTION_ALLOWED);
	*out = num;
	return 0;
}

/* Shortest "%.Nf" of x that reads back (strtod) as exactly x. */
static void shortest_fixed(double x, char *buf, size_t len)
{
	for (int prec = 0; prec <= 20; prec++) {
		snprintf(buf, len, "%.*f", prec, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

void units_format_size(uint64_t v, char *buf, size_t len)
{
	/* Binary units first: sizes are usually powers of two. */
	static const struct {
		const char *name;
		uint64_t mult;
	} units[] = {
		{"PiB", 1ULL << 50},	  {"TiB", 1ULL << 40},
		{"GiB", 1ULL << 30},	  {"MiB", 1ULL << 20},
		{"KiB", 1ULL << 10},	  {"PB", 1000000000000000ULL},
		{"TB", 1000000000000ULL}, {"GB", 1000000000ULL},
		{"MB", 1000000ULL},	  {"kB", 1000ULL},
	};

	char best[32];

	if (!len)
		return;
	/* The exact form with the fewest digits (binary units on a tie):
	 * 21474836480 -> 20GiB, 512000000 -> 512MB. */
	snprintf(best, sizeof(best), "%llu", (unsigned long long)v);
	for (size_t i = 0; v && i < sizeof(units) / sizeof(units[0]); i++) {
		char cand[32];
		int n;

		if (v % units[i].mult)
			continue;
		n = snprintf(cand, sizeof(cand), "%llu",
			     (unsigned long long)(v / units[i].mult));
		if (n < (int)strcspn(best, "KMGTPk")) {
			snprintf(cand + n, sizeof(cand) - (size_t)n, "%s",
				 units[i].name);
			memcpy(best, cand, sizeof(best));
		}
	}
	snprintf(buf, len, "%s", best);
}

void units_format_rate(double v, char *buf, size_t len)
{
	/* Decimal units first: bandwidth is quoted in GB/s. */
	static const struct unit units[] = {
		{"PB/s", 1e15},
		{"TB/s", 1e12},
		{"GB/s", 1e9},
		{"MB/s", 1e6},
		{"kB/s", 1e3},
		{"PiB/s", 1125899906842624.0},
		{"TiB/s", 1099511627776.0},
		{"GiB/s", 1073741824.0},
		{"MiB/s", 1048576.0},
		{"KiB/s", 1024.0},
	};
	char best[64], cand[64];
	size_t best_num;
	double back;

	if (!len)
		return;
	if (!isfinite(v) || v < 0) {
		snprintf(buf, len, "0");
		return;
	}
	/* The form with the shortest exact number wins (decimal units on a
	 * tie): 2500000000 -> 2.5GB/s, 1048576 -> 1MiB/s, 100 -> 100. */
	shortest_fixed(v, best, sizeof(best));
	best_num = strlen(best);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double x = v / units[i].mult;
		size_t n;

		if (x < 1)
			continue;
		shortest_fixed(x, cand, sizeof(cand) - 6);
		n = strlen(cand);
		/* Must parse back to v exactly, as the parser computes it. */
		back = strtod(cand, NULL) * units[i].mult;
		if (back != v || n >= best_num)
			continue;
		snprintf(cand + n, sizeof(cand) - n, "%s", units[i].name);
		snprintf(best, sizeof(best), "%s", cand);
		best_num = n;
	}
	snprintf(buf, len, "%s", best);
}

void units_format_duration(double v, char *buf, size_t len)
{
	static const struct {
		const char *name;
		unsigned long long secs;
	} units[] = {{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}};
	char out[128] = "";
	size_t n = 0;
	double back;

	if (!len)
		return;
	if (!isfinite(v) || v < 0)
		v = 0;
	if (v < 1e15) {
		unsigned long long whole = (unsigned long long)v;
		double ms = (v - (double)whole) * 1000;
		unsigned long long rest = whole;

		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (rest >= units[i].secs) {
				n += snprintf(out + n, sizeof(out) - n,
					      "%llu%s", rest / units[i].secs,
					      units[i].name);
				rest %= units[i].secs;
			}
		}
		if (ms != 0) {
			char num[64];

			shortest_fixed(round(ms * 1e6) / 1e6, num, sizeof(num));
			n += snprintf(out + n, sizeof(out) - n, "%sms", num);
		}
		if (!n)
			snprintf(out, sizeof(out), "0s");
		if (!units_parse_duration(out, &back, NULL) && back == v) {
			snprintf(buf, len, "%s", out);
			return;
		}
	}
	shortest_fixed(v, out, sizeof(out));
	snprintf(buf, len, "%s", out);
}

void units_format_fraction(double v, char *buf, size_t len)
{
	char num[64];
	double back;

	if (!len)
		return;
	if (!(v >= 0) || v > 1)
		v = v > 1 ? 1 : 0;
	/* A percentage with at most two decimals, when that is exact. */
	for (int prec = 0; prec <= 2; prec++) {
		snprintf(num, sizeof(num) - 1, "%.*f", prec, v * 100);
		back = strtod(num, NULL) / 100;
		if (back == v) {
			snprintf(buf, len, "%s%%", num);
			return;
		}
	}
	shortest_fixed(v, buf, len);
}

int units_fmt_g(double x, int prec, char *buf, size_t len)
{
	static const double p10[] = {1e0,  1e1,	 1e2,  1e3,  1e4,  1e5,
				     1e6,  1e7,	 1e8,  1e9,  1e10, 1e11,
				     1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
				     1e18, 1e19, 1e20, 1e21, 1e22};
	double a = fabs(x), sc, fl, fr, lo, hi;
	uint64_t m, bits;
	size_t n = 0;
	int e, s, k;
	char dig[8];

	if (prec < 1 || prec > 6 || len < 16 || !isfinite(x))
		return -1;
	if (x == 0) {
		/* "0", or "-0" for a negative zero, as printf */
		memcpy(buf, signbit(x) ? "-0" : "0", signbit(x) ? 3 : 2);
		return signbit(x) ? 2 : 1;
	}
	lo = p10[prec - 1];
	hi = p10[prec];
	/* floor(log10(a)), or one less: a is in [2^b, 2^(b+1)), b its binary
	 * exponent (a subnormal's is below any a answered) */
	memcpy(&bits, &a, sizeof(bits));
	e = (int)(bits >> 52) - 1023;
	e = (int)floor(e * 0.30102999566398120);
	for (k = 0; k < 2; k++) {
		/* a scaled to [10^(prec-1), 10^prec): exact powers of ten */
		s = prec - 1 - e;
		if (s > 44 || s < -44)
			return -1;
		/* one or two exact powers of ten: at most two roundings */
		if (s >= 0)
			sc = s <= 22 ? a * p10[s] : a * p10[22] * p10[s - 22];
		else
			sc = -s <= 22 ? a / p10[-s]
				      : a / p10[22] / p10[-s - 22];
		if (sc < lo)
			e--;
		else if (sc >= hi)
			e++;
		else
			break;
	}
	if (k == 2)
		return -1;
	fl = floor(sc);
	fr = sc - fl;
	if (fabs(fr - 0.5) < 1e-9) /* within rounding error of a tie */
		return -1;
	m = (uint64_t)fl + (fr > 0.5);
	if (m >= (uint64_t)hi) { /* 999.5 -> 1.00e+03 */
		m = (uint64_t)lo;
		e++;
	}
	for (int d = prec - 1; d >= 0; d--, m /= 10)
		dig[d] = (char)('0' + m % 10);
	/* significant digits after the first: trailing zeros dropped */
	for (k = prec - 1; k > 0 && dig[k] == '0'; k--)
		;
	if (x < 0)
		buf[n++] = '-';
	if (e >= -4 && e < prec) {
		/* fixed: e + 1 digits before the point (or "0." and -e-1
		 * zeros), the rest after it */
		if (e < 0) {
			buf[n++] = '0';
			buf[n++] = '.';
			for (int z = 0; z < -e - 1; z++)
				buf[n++] = '0';
			for (int d = 0; d <= k; d++)
				buf[n++] = dig[d];
		} else {
			for (int d = 0; d <= e; d++)
				buf[n++] = dig[d];
			if (k > e) {
				buf[n++] = '.';
				for (int d = e + 1; d <= k; d++)
					buf[n++] = dig[d];
			}
		}
	} else {
		buf[n++] = dig[0];
		if (k) {
			buf[n++] = '.';
			for (int d = 1; d <= k; d++)
				buf[n++] = dig[d];
		}
		buf[n++] = 'e';
		buf[n++] = e < 0 ? '-' : '+';
		n = (size_t)(units_put_dec(buf + n, (uint64_t)abs(e), 2) - buf);
	}
	buf[n] = '\0';
	return (int)n;
}

/* x printed as "%.3g" followed by suffix (units_fmt_g(); -1 as it). */
static int rate_3g(double x, const char *suffix, char *buf, size_t len)
{
	size_t sl = strlen(suffix);
	int n;

	if (len < 16 + sl || (n = units_fmt_g(x, 3, buf, len - sl)) < 0)
		return -1;
	memcpy(buf + n, suffix, sl + 1);
	return 0;
}

/* units_short_rate()'s last results, per thread: a batch's reasons
 * name the same few rates again and again (a forwarder's, a node's, a
 * job's need).  A slot whose text is empty holds nothing. */
#define RATE_MEMO 16 /* 2^4: the hash below keeps its top 4 bits */
static __thread struct rate_memo {
	uint64_t bits;
	char text[24];
} rate_memo[RATE_MEMO];

const char *units_short_rate(double bps, char *buf, size_t len)
{
	struct rate_memo *m;
	uint64_t bits;
	size_t n;

	memcpy(&bits, &bps, sizeof(bits));
	m = &rate_memo[(bits * 0x9E3779B97F4A7C15ULL) >> 60];
	if (m->text[0] && m->bits == bits && (n = strlen(m->text)) < len) {
		memcpy(buf, m->text, n + 1);
		return buf;
	}
	if (bps >= 1e9) {
		if (rate_3g(bps / 1e9, "GB/s", buf, len) < 0)
			snprintf(buf, len, "%.3gGB/s", bps / 1e9);
	} else if (bps >= 1e6) {
		if (rate_3g(bps / 1e6, "MB/s", buf, len) < 0)
			snprintf(buf, len, "%.3gMB/s", bps / 1e6);
	} else if (rate_3g(bps, "B/s", buf, len) < 0) {
		snprintf(buf, len, "%.3gB/s", bps);
	}
	if (len && (n = strlen(buf)) < sizeof(m->text) && n + 1 < len) {
		m->bits = bits;
		memcpy(m->text, buf, n + 1);
	}
	return buf;
}

char *units_put_dec(char *p, uint64_t v, int width)
{
	/* two digits a step: half the divisions */
	static const char pairs[] = "00010203040506070809"
				    "10111213141516171819"
				    "20212223242526272829"
				    "30313233343536373839"
				    "40414243444546474849"
				    "50515253545556575859"
				    "60616263646566676869"
				    "70717273747576777879"
				    "80818283848586878889"
				    "90919293949596979899";
	char tmp[20];
	int n = (int)sizeof(tmp);

	while (v >= 100) {
		const char *d = &pairs[2 * (v % 100)];

		v /= 100;
		tmp[--n] = d[1];
		tmp[--n] = d[0];
	}
	if (v >= 10) {
		tmp[--n] = pairs[2 * v + 1];
		tmp[--n] = pairs[2 * v];
	} else {
		tmp[--n] = (char)('0' + v);
	}
	for (int k = (int)sizeof(tmp) - n; width > k; width--)
		*p++ = '0';
	memcpy(p, tmp + n, sizeof(tmp) - (size_t)n);
	return p + (sizeof(tmp) - (size_t)n);
}

/* Append the n bytes at p to buf (len bytes) at *at, as far as they fit
 * with the closing NUL (vsnprintf's truncation). */
static void put(char *buf, size_t len, size_t *at, const char *p, size_t n)
{
	if (*at + 1 >= len)
		return;
	if (n > len - 1 - *at)
		n = len - 1 - *at;
	memcpy(buf + *at, p, n);
	*at += n;
}

static void put_uint(char *buf, size_t len, size_t *at, uint64_t v)
{
	char d[20];

	put(buf, len, at, d, (size_t)(units_put_dec(d, v, 1) - d));
}

/* units_vformat() without vsnprintf(): the length written, or SIZE_MAX at
 * a conversion it does not make or a number whose rounding only printf can
 * tell. */
static size_t plain_vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	size_t at = 0;
	const char *s = fmt, *pc, *str;

	while ((pc = strchr(s, '%'))) {
		put(buf, len, &at, s, (size_t)(pc - s));
		if (pc[1] == '%') {
			put(buf, len, &at, "%", 1);
			s = pc + 2;
		} else if (pc[1] == 's') {
			str = va_arg(ap, const char *);
			if (!str)
				str = "(null)";
			put(buf, len, &at, str, strlen(str));
			s = pc + 2;
		} else if (pc[1] == 'u') {
			put_uint(buf, len, &at, va_arg(ap, unsigned int));
			s = pc + 2;
		} else if (pc[1] == 'z' && pc[2] == 'u') {
			put_uint(buf, len, &at, va_arg(ap, size_t));
			s = pc + 3;
		} else if (pc[1] == '.' && pc[2] >= '1' && pc[2] <= '6' &&
			   pc[3] == 'g') {
			char t[32];
			int n = units_fmt_g(va_arg(ap, double), pc[2] - '0', t,
					    sizeof(t));

			if (n < 0)
				return SIZE_MAX;
			put(buf, len, &at, t, (size_t)n);
			s = pc + 4;
		} else if (pc[1] == '.' && pc[2] == '0' && pc[3] == 'f') {
			double v = va_arg(ap, double), fl, fr;

			/* rounded to the nearest integer, as printf unless
			 * within rounding error of a half */
			if (!(v >= 0 && v < 1e15))
				return SIZE_MAX;
			fl = floor(v);
			fr = v - fl;
			if (fabs(fr - 0.5) < 1e-9)
				return SIZE_MAX;
			put_uint(buf, len, &at, (uint64_t)fl + (fr > 0.5));
			s = pc + 4;
		} else {
			return SIZE_MAX;
		}
	}
	put(buf, len, &at, s, strlen(s));
	buf[at] = '\0';
	return at;
}

size_t units_vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	va_list again;
	size_t n;
	int w;

	va_copy(again, ap);
	if ((n = plain_vformat(buf, len, fmt, ap)) == SIZE_MAX) {
		w = vsnprintf(buf, len, fmt, again);
		n = w < 0 ? 0 : strlen(buf);
		if (w < 0)
			buf[0] = '\0';
	}
	va_end(again);
	return n;
}

size_t units_format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = units_vformat(buf, len, fmt, ap);
	va_end(ap);
	return n;
}
