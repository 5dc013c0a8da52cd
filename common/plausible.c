/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Plausibility of ingested data; see common/plausible.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "common/plausible.h"

static _Thread_local const char *last_reason;

int fwd_plaus_fail(const char *reason)
{
	last_reason = reason;
	errno = EINVAL;
	return -1;
}

void fwd_reason_clear(void)
{
	last_reason = NULL;
}

const char *fwd_reason_take(void)
{
	const char *r = last_reason;

	last_reason = NULL;
	return r;
}

int fwd_plaus_time(const char *what, int64_t t, int64_t now, fwd_error_t *err)
{
	if (t >= FWD_PLAUS_EPOCH && t <= now + FWD_PLAUS_AHEAD)
		return 0;
	errprintf(err,
		  "%s %" PRId64 " is %s (accepted: 2000-01-01 to a day "
		  "from now)",
		  what, t,
		  t < FWD_PLAUS_EPOCH ? "before 2000" : "in the future");
	return fwd_plaus_fail(FWD_REASON_TIME);
}

int fwd_plaus_interval(const char *what_start, int64_t start,
		       const char *what_end, int64_t end, int64_t now,
		       fwd_error_t *err)
{
	if (fwd_plaus_time(what_start, start, now, err) < 0 ||
	    fwd_plaus_time(what_end, end, now, err) < 0)
		return -1;
	if (end >= start)
		return 0;
	errprintf(err, "%s %" PRId64 " is before %s %" PRId64, what_end, end,
		  what_start, start);
	return fwd_plaus_fail(FWD_REASON_ORDER);
}

int fwd_plaus_counter(const char *what, uint64_t v, fwd_error_t *err)
{
	if (v <= FWD_PLAUS_COUNTER_MAX)
		return 0;
	errprintf(err,
		  "%s %" PRIu64 " is over 2^63-1 (an unset or wrapped "
		  "counter)",
		  what, v);
	return fwd_plaus_fail(FWD_REASON_VALUE);
}

int fwd_plaus_count(const char *what, uint64_t v, uint64_t min, uint64_t max,
		    fwd_error_t *err)
{
	if (v >= min && v <= max)
		return 0;
	errprintf(err,
		  "%s %" PRIu64 " is out of range (%" PRIu64 " to %" PRIu64 ")",
		  what, v, min, max);
	return fwd_plaus_fail(FWD_REASON_VALUE);
}

int fwd_plaus_rate(const char *what, uint64_t total, double seconds,
		   double max_per_s, const char *unit, fwd_error_t *err)
{
	double secs = seconds > 1 ? seconds : 1;

	if (!(max_per_s > 0) || !isfinite(max_per_s) ||
	    (double)total <= max_per_s * secs)
		return 0;
	errprintf(err, "%s %" PRIu64 " in %.0f s is over %.4g %s/s", what,
		  total, seconds > 0 ? seconds : 0, max_per_s, unit);
	return fwd_plaus_fail(FWD_REASON_RATE);
}

int fwd_plaus_dtoi64(double d, int64_t *out)
{
	/* -2^63 is exact as a double, 2^63 is the first value out */
	if (!isfinite(d) || d < -9223372036854775808.0 ||
	    d >= 9223372036854775808.0)
		return fwd_plaus_fail(FWD_REASON_VALUE);
	*out = (int64_t)d;
	return 0;
}

int fwd_plaus_dtou64(double d, uint64_t *out)
{
	if (!isfinite(d) || d < 0 || d >= 9223372036854775808.0)
		return fwd_plaus_fail(FWD_REASON_VALUE);
	*out = (uint64_t)d;
	return 0;
}

size_t fwd_utf8_char(const unsigned char *s, size_t n, uint32_t *cp_out)
{
	unsigned c = n ? s[0] : 0;
	size_t len;
	uint32_t cp;

	if (!n)
		return 0;
	if (c < 0x80) {
		len = 1;
		cp = c;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	/* A NUL is no continuation byte: a terminated string is never read
	 * past its end. */
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	/* shortest form, no surrogate, at most U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	if (cp_out)
		*cp_out = cp;
	return len;
}

bool fwd_utf8_valid(const char *str, size_t n, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, len;

	while (i < n) {
		if (!(len = fwd_utf8_char(s + i, n - i, NULL))) {
			if (bad)
				*bad = i;
			return false;
		}
		i += len;
	}
	return true;
}

int fwd_plaus_name(const char *what, const char *s, fwd_error_t *err)
{
	size_t n = strlen(s), at;

	if (!n) {
		errprintf(err, "empty %s", what);
		return fwd_plaus_fail(FWD_REASON_MALFORMED);
	}
	if (!fwd_utf8_valid(s, n, &at)) {
		errprintf(err,
			  "%s is not valid UTF-8 (byte 0x%02x at offset "
			  "%zu)",
			  what, (unsigned char)s[at], at);
		return fwd_plaus_fail(FWD_REASON_UTF8);
	}
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			errprintf(err,
				  "%s '%.60s' contains a control character",
				  what, s);
			return fwd_plaus_fail(FWD_REASON_MALFORMED);
		}
	}
	return 0;
}
