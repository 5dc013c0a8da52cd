/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_RUN_H
#define FWD_COMMON_RUN_H

/*
 * Run a piece of work in a child process under a deadline.  The
 * controller prolog must end in bounded time and must always leave an
 * audit record, whatever happens to the work: a hung database, a crash, a
 * kill.  The parent only waits; the child does the work and hands its
 * result (one line) back through a pipe.
 */

#include "common/error.h"

/*
 * fork(); in the child call fn(arg, fd) and _exit() with its return value
 * (0 = success); fn writes its result to fd (a pipe; any size).  The
 * parent collects what the child wrote until it exits or `timeout`
 * seconds pass; then the child is killed (SIGKILL) and reaped.
 *
 * Returns 0 when the child exited 0, with *out the text it wrote
 * (malloc'd, NUL-terminated, possibly empty).  Otherwise -1 with err
 * describing why ("timed out after 10 s", "killed by signal 9", "exited
 * with status 3") and *out still set to whatever the child wrote (may be
 * NULL).
 */
int ctl_run_bounded(double timeout, int (*fn)(void *arg, int fd), void *arg,
		    char **out, fwd_error_t *err);

#endif
