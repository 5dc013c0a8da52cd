/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_TIMEUTIL_H
#define FWD_COMMON_TIMEUTIL_H

/*
 * Time in fwdalloc: the clocks, the one parser of times given by people and
 * files, and the one timestamp style printed (ISO 8601, UTC, "Z").  Times
 * are seconds since the epoch as a double.
 */

#include <stdbool.h>
#include <stddef.h>

/* The latest time accepted anywhere: 9999-12-31T23:59:59Z. */
#define FWD_TIME_MAX 253402300799.0

/* Seconds on the monotonic clock (for durations and deadlines). */
double fwd_clock_mono(void);
/* Seconds since the epoch, with the sub-second part. */
double fwd_clock_real(void);

/* Flags of fwd_time_parse_iso(). */
#define FWD_TIME_STRICT                                   \
	1u /* date, 'T' or ' ', HH:MM:SS and a UTC suffix \
	    * ("Z", "+00:00" or "-00:00") all required */

/*
 * ISO 8601 in UTC: YYYY-MM-DD[(T| )HH:MM[:SS[(.|,)frac]]][Z|+00:00|-00:00],
 * the `len` bytes of s (s need not end there).  Fields are range-checked
 * (no 31 February), years 1970 to 9999.  0, or -1 with errno EINVAL.
 */
int fwd_time_parse_iso(const char *s, size_t len, unsigned flags, double *out);

/* Epoch seconds: digits with an optional fraction, nothing else (no sign,
 * exponent, nan, inf or hex), at most FWD_TIME_MAX.  0, or -1 (EINVAL). */
int fwd_time_parse_epoch(const char *s, double *out);

/*
 * A time as an administrator types it, the forms of sacct(1) included:
 *   1700000000[.5]                 epoch seconds (digits only)
 *   2026-11-22, 2026-11-22T10:00[:00][Z]   ISO 8601 in UTC (above)
 *   now, now-30days, now+1hour     relative to `now`
 *   -30d, 30d, 2h, 90m, 10s, 1w    that long before `now`
 * Units: s m h d w, or seconds minutes hours days weeks (singular too);
 * after "now" a bare number is seconds.  0, or -1 with errno EINVAL.
 */
int fwd_time_parse(const char *s, double now, double *out);

/*
 * A wall-clock time of the local time zone (TZ), given as the seconds it
 * would be in UTC (fwd_time_parse_iso() of "2023-03-26T01:30:00"), to
 * epoch seconds, by the zone's rules at that date (mktime(), daylight
 * saving decided by the zone).  A time a spring-forward skips moves on by
 * the gap ("02:30" of a one-hour gap is 03:30); a fall-back's repeated
 * hour is one of its two instants, as the C library chooses.  0, or -1
 * with errno EINVAL (before 1970 or unrepresentable).
 */
int fwd_time_local(double wall, double *out);

/* True when zone names time-zone data: "UTC", or a file of $TZDIR
 * (default /usr/share/zoneinfo) such as "Europe/Paris".  A name glibc
 * does not know would silently be read as UTC. */
bool fwd_timezone_known(const char *zone);

/* "2026-11-22T02:30:00Z" into buf (>= 21 bytes); "-" for t <= 0. */
void fwd_time_format(double t, char *buf, size_t len);
/* "2026-11-22T02:30:00.123Z" into buf (>= 25 bytes). */
void fwd_time_format_ms(double t, char *buf, size_t len);

#endif
