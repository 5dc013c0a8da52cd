/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_UNITS_H
#define FWD_COMMON_UNITS_H

/*
 * Strict unit parsing for the policy, topology and command line.
 *
 *   size      "20GiB", "512MB", "4096", "1.5TB"   -> bytes
 *             (k/M/G/T/P = powers of 1000, Ki/Mi/Gi/Ti/Pi = powers of 1024,
 *              trailing "B" optional, a bare number is bytes)
 *   rate      "2.5GB/s", "800MiB/s", "100"        -> bytes per second
 *   duration  "60m", "1h30m", "90s", "7d", "250ms", "3600" -> seconds
 *   fraction  "0.3", "30%"                        -> [0, 1]
 *
 * Anything else (empty, trailing garbage, negative, overflow, NaN, an
 * unknown suffix) is an error whose message quotes the value and lists
 * what is allowed.  Return 0 or -1 (errno EINVAL or ERANGE).
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

int units_parse_size(const char *s, uint64_t *out, fwd_error_t *e);
int units_parse_rate(const char *s, double *out, fwd_error_t *e);
int units_parse_duration(const char *s, double *out, fwd_error_t *e);
int units_parse_fraction(const char *s, double *out, fwd_error_t *e);

/* Human forms that the parsers above accept back ("20GiB", "2.5GB/s",
 * "1h30m", "30%").  Always NUL-terminate buf. */
void units_format_size(uint64_t v, char *buf, size_t len);
void units_format_rate(double v, char *buf, size_t len);
void units_format_duration(double v, char *buf, size_t len);
void units_format_fraction(double v, char *buf, size_t len);

/*
 * The decimal digits of v at p, zero-padded to at least width digits, no
 * NUL (room: 20 bytes, or width); returns the end.  For hot paths that
 * format many numbers (printf costs ten times as much).
 */
char *units_put_dec(char *p, uint64_t v, int width);

/* A rate in three significant digits, GB/s, MB/s or B/s ("2.5GB/s"):
 * short enough for a sentence, such as a decision's reason; returns buf. */
const char *units_short_rate(double bps, char *buf, size_t len);

/*
 * x as printf's "%.<prec>g" writes it (prec 1 to 6), without printf's
 * floating-point conversion (a decision's reasons print many): x scaled
 * by an exact power of ten to prec digits before the point and rounded,
 * which is what printf does to the exact value unless the scaled value
 * lies within rounding error of a half.  The length written, or -1 for
 * such an x, x beyond 1e+-40, a non-finite x, another prec or len < 16:
 * the caller then asks snprintf.
 */
int units_fmt_g(double x, int prec, char *buf, size_t len);

/*
 * snprintf() into buf (len > 0) for a format that converts only %s, %u,
 * %zu, %.<1-6>g and %.0f (and writes %%), nearly every sentence a
 * decision gives: the same bytes (a NULL string reads "(null)", as glibc
 * prints it) without printf's cost; any other format, or a number whose
 * rounding only printf can tell, goes to vsnprintf().  Returns the length
 * written (truncated as snprintf truncates).
 */
size_t units_format(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t units_vformat(char *buf, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
