/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/timeutil.h"

static double clock_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double fwd_clock_mono(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

double fwd_clock_real(void)
{
	return clock_of(CLOCK_REALTIME);
}

static int bad(void)
{
	errno = EINVAL;
	return -1;
}

/* n decimal digits at s, into *out; -1 if any is not a digit. */
static int digits(const char *s, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static long days_from_civil(int y, int m, int d)
{
	static const int before[] = {0,	  31,  59,  90,	 120, 151,
				     181, 212, 243, 273, 304, 334};
	long days = 0;

	for (int yy = 1970; yy < y; yy++)
		days += leap(yy) ? 366 : 365;
	days += before[m - 1] + (m > 2 && leap(y)) + d - 1;
	return days;
}

int fwd_time_parse_iso(const char *s, size_t len, unsigned flags, double *out)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31};
	int y, mo, d, h = 0, mi = 0, sec = 0;
	double frac = 0;
	bool strict = flags & FWD_TIME_STRICT;
	size_t i = 10;

	if (!s || len < 10 || digits(s, 4, &y) || s[4] != '-' ||
	    digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d))
		return bad();
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return bad();
	if (i < len && (s[i] == 'T' || s[i] == ' ')) {
		if (len < 16 || digits(s + 11, 2, &h) || s[13] != ':' ||
		    digits(s + 14, 2, &mi) || h > 23 || mi > 59)
			return bad();
		i = 16;
		if (i < len && s[i] == ':') {
			if (len < 19 || digits(s + 17, 2, &sec) || sec > 59)
				return bad();
			i = 19;
			if (i < len && (s[i] == '.' || s[i] == ',')) {
				double scale = 0.1;

				if (++i >= len || s[i] < '0' || s[i] > '9')
					return bad();
				for (; i < len && s[i] >= '0' && s[i] <= '9';
				     i++, scale /= 10)
					frac += (s[i] - '0') * scale;
			}
		} else if (strict) {
			return bad();
		}
	} else if (strict) {
		return bad();
	}
	if (len - i == 1 && s[i] == 'Z')
		;
	else if (len - i == 6 &&
		 (!strncmp(s + i, "+00:00", 6) || !strncmp(s + i, "-00:00", 6)))
		;
	else if (len != i || strict)
		return bad();
	*out = (double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 +
	       mi * 60.0 + sec + frac;
	return 0;
}

int fwd_time_parse_epoch(const char *s, double *out)
{
	size_t n = strspn(s, "0123456789");
	char *end;
	double v;

	if (!n)
		return bad();
	if (s[n] == '.' && s[n + 1] >= '0' && s[n + 1] <= '9')
		n += 1 + strspn(s + n + 1, "0123456789");
	if (s[n])
		return bad();
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v > FWD_TIME_MAX)
		return bad();
	*out = v;
	return 0;
}

/* A count and a unit ("30d", "2hours", with `bare` a plain "90"), as
 * seconds. */
static int parse_span(const char *s, bool bare, double *out)
{
	static const struct {
		const char *name;
		double secs;
	} units[] = {
		{"s", 1},	  {"sec", 1},	     {"second", 1},
		{"seconds", 1},	  {"m", 60},	     {"min", 60},
		{"minute", 60},	  {"minutes", 60},   {"h", 3600},
		{"hour", 3600},	  {"hours", 3600},   {"d", 86400},
		{"day", 86400},	  {"days", 86400},   {"w", 604800},
		{"week", 604800}, {"weeks", 604800},
	};
	size_t n = strspn(s, "0123456789");
	char *end;
	double v;

	if (!n || n > 12)
		return bad();
	v = strtod(s, &end);
	if (end != s + n) /* digits only: no exponent, no fraction */
		return bad();
	if (!*end && bare) {
		*out = v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].name)) {
			*out = v * units[i].secs;
			return 0;
		}
	}
	return bad();
}

int fwd_time_parse(const char *s, double now, double *out)
{
	double span, t;

	if (!s || !*s)
		return bad();
	if (!strncmp(s, "now", 3)) {
		if (!s[3]) {
			*out = now;
			return 0;
		}
		if ((s[3] != '-' && s[3] != '+') ||
		    parse_span(s + 4, true, &span) < 0)
			return bad();
		t = s[3] == '-' ? now - span : now + span;
	} else if (s[0] == '-') {
		if (parse_span(s + 1, false, &span) < 0)
			return bad();
		t = now - span;
	} else if (strlen(s) >= 10 && s[4] == '-') {
		return fwd_time_parse_iso(s, strlen(s), 0, out);
	} else if (!s[strspn(s, "0123456789.")]) {
		return fwd_time_parse_epoch(s, out);
	} else {
		if (parse_span(s, false, &span) < 0)
			return bad();
		t = now - span;
	}
	if (!(t >= 0) || t > FWD_TIME_MAX)
		return bad();
	*out = t;
	return 0;
}

static void format(double t, bool ms, char *buf, size_t len)
{
	time_t sec = (time_t)t;
	int milli = (int)((t - (double)sec) * 1000.0 + 0.5);
	struct tm tm;

	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	if (milli < 0)
		milli = 0;
	if (milli > 999)
		milli = 999;
	if (ms)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void fwd_time_format(double t, char *buf, size_t len)
{
	if (t <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	format(t, false, buf, len);
}

void fwd_time_format_ms(double t, char *buf, size_t len)
{
	format(t, true, buf, len);
}

int fwd_time_local(double wall, double *out)
{
	time_t w = (time_t)wall, t;
	struct tm tm;

	if (wall < 0 || !gmtime_r(&w, &tm)) {
		errno = EINVAL;
		return -1;
	}
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1 || t < 0) {
		errno = EINVAL;
		return -1;
	}
	*out = (double)t + (wall - (double)w);
	return 0;
}

bool fwd_timezone_known(const char *zone)
{
	const char *dir = getenv("TZDIR");
	char path[4096];
	struct stat st;

	if (!zone || !*zone || *zone == '/' || *zone == ':' ||
	    strstr(zone, ".."))
		return false;
	if (!strcmp(zone, "UTC"))
		return true;
	if (!dir || !*dir)
		dir = "/usr/share/zoneinfo";
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, zone) >=
	    sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
