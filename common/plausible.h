/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_PLAUSIBLE_H
#define FWD_COMMON_PLAUSIBLE_H

/*
 * What every ingest format (Lustre job_stats, influx line protocol,
 * Beacon, sacct, Darshan) accepts: one set of rules, so that a value no
 * system can produce (a counter of 2^64-1, a time in 2999, a node count
 * of -5 read as 4294967291, a negative runtime) is refused and counted
 * by reason, never stored.  Each check returns 0, or -1 with errno
 * EINVAL, err naming the value, and the reason (one of FWD_REASON_*)
 * kept for fwd_reason_take().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Reasons a record is refused (fwd_reason_take()). */
#define FWD_REASON_MALFORMED "malformed"
#define FWD_REASON_UTF8 "not valid UTF-8"
#define FWD_REASON_TIME "time out of range"
#define FWD_REASON_ORDER "end before start"
#define FWD_REASON_VALUE "value out of range"
#define FWD_REASON_RATE "implausible rate"

/* Times: from 2000-01-01T00:00:00Z to a day ahead of now (clock skew,
 * time zones); a time outside is a wrong unit or a corrupt record. */
#define FWD_PLAUS_EPOCH 946684800
#define FWD_PLAUS_AHEAD 86400
/* Counters (bytes, operations): what a signed 64-bit column and a
 * double-based rate can hold; 2^64-1 is an unset or wrapped value. */
#define FWD_PLAUS_COUNTER_MAX ((uint64_t)INT64_MAX)
/* Node and process counts when nothing better is known. */
#define FWD_PLAUS_NODES_MAX 1000000u
#define FWD_PLAUS_PROCS_MAX 100000000u

/*
 * The reason of the last refusal in this thread: fwd_plaus_fail() (every
 * check here, and the parsers that refuse a value) sets it; a caller that
 * counts refusals clears it before a call and takes it after a failure
 * (NULL: the failure gave none, e.g. malformed text).
 */
int fwd_plaus_fail(const char *reason); /* -1, errno EINVAL */
void fwd_reason_clear(void);
const char *fwd_reason_take(void);

/* A time t (s) in [FWD_PLAUS_EPOCH, now + FWD_PLAUS_AHEAD]; `what`
 * names it in the message ("snapshot_time"). */
int fwd_plaus_time(const char *what, int64_t t, int64_t now, fwd_error_t *err);

/* Both times plausible and end >= start. */
int fwd_plaus_interval(const char *what_start, int64_t start,
		       const char *what_end, int64_t end, int64_t now,
		       fwd_error_t *err);

/* A counter at most FWD_PLAUS_COUNTER_MAX. */
int fwd_plaus_counter(const char *what, uint64_t v, fwd_error_t *err);

/* A count (nodes, processes) in [min, max]. */
int fwd_plaus_count(const char *what, uint64_t v, uint64_t min, uint64_t max,
		    fwd_error_t *err);

/* At most max_per_s per second over `seconds` (at least one second
 * counted: a total done within the first second is allowed).  max_per_s
 * <= 0 or not finite: no bound. */
int fwd_plaus_rate(const char *what, uint64_t total, double seconds,
		   double max_per_s, const char *unit, fwd_error_t *err);

/* Checked conversions (a double out of range converted to an integer is
 * undefined behaviour): 0 with *out, or -1 (EINVAL, reason
 * FWD_REASON_VALUE) for NaN, infinities and values out of range. */
int fwd_plaus_dtoi64(double d, int64_t *out);
int fwd_plaus_dtou64(double d, uint64_t *out); /* [0, COUNTER_MAX] */

/* True when s[0..n) is well-formed UTF-8 (no overlong forms, surrogates
 * or code points over U+10FFFF); *bad (may be NULL) gets the offset of
 * the first bad byte. */
bool fwd_utf8_valid(const char *s, size_t n, size_t *bad);

/*
 * The length (1 to 4) of the whole, shortest-form UTF-8 character at s,
 * which has n bytes left, and its code point in *cp (may be NULL); 0 when
 * it is not one (a stray byte, a surrogate, past U+10FFFF, cut short).
 */
size_t fwd_utf8_char(const unsigned char *s, size_t n, uint32_t *cp);

/* A name to store (component, job id, tag): not empty, UTF-8, no
 * control characters. */
int fwd_plaus_name(const char *what, const char *s, fwd_error_t *err);

#endif
