/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_DB_BREAKER_H
#define FWD_DB_BREAKER_H

/*
 * A circuit breaker for database failures, for the launch path (the
 * controller prolog and node prologs): after a connection to the database
 * failed (refused, timed out), callers skip the database for a short
 * interval (the policy's database.breaker) and fail open at once, so a
 * hung server costs one timeout per interval instead of one per job.
 *
 * The state is one small file per caller kind, holding the wall-clock
 * time of the last failure (epoch seconds, decimal, one line), replaced
 * atomically (a temporary file in the same directory, then rename(2)), so
 * concurrent prologs read either the old or the new time, never a torn
 * one.  Reading never fails: a missing, unreadable or corrupt file, or a
 * time in the future (the clock was set back), means "closed" (use the
 * database).  Each process decides on its own; no lock is needed (two
 * failures racing to trip it write nearly the same time).
 */

#include "common/error.h"

/*
 * Is the breaker at `path` open at `now` (epoch seconds, fwd_clock_real):
 * did a failure happen less than `interval` seconds ago?  1 (open; *ago,
 * which may be NULL, receives the seconds since the failure) or 0
 * (closed; also for interval <= 0 or path NULL).
 */
int db_breaker_open(const char *path, double interval, double now, double *ago);

/*
 * Record a database failure at `now`: the file at `path` is replaced.  0,
 * or -1 with errno and err (the caller fails open anyway: a breaker it
 * cannot write only means the next caller pays the timeout again).
 */
int db_breaker_trip(const char *path, double now, fwd_error_t *err);

#endif
