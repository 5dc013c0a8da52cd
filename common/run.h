/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_RUN_H
#define FWD_COMMON_RUN_H

/*
 * Child processes under a deadline: a piece of our own work
 * (ctl_run_bounded) or an external command (fwd_run_cmd).  Whatever the
 * child does (hangs, crashes, floods its output), the caller gets control
 * back at the deadline with the child killed and reaped, and a message
 * saying how it ended.  Both share one supervision loop: it waits on a
 * pidfd when the kernel has them (else it polls the status every 10 ms),
 * reads the child's output pipe without blocking, and reports a status
 * lost to SIGCHLD being ignored instead of guessing.
 *
 * The messages describe the ending without naming the child, so that the
 * caller can prefix its own name for it:
 *   "exited with status N", "killed by signal N",
 *   "timed out after T s"  (T as given by the caller),
 *   "ended but its exit status was lost (SIGCHLD is ignored)"  (ECHILD),
 *   "could not be started: fork: ..." and the like.
 * errno is EIO for an exit status other than 0 or a death by signal,
 * ETIMEDOUT for a timeout, ECHILD for a lost status, else the cause.
 */

#include "common/error.h"

/*
 * fork(); in the child call fn(arg, fd) and _exit() with its return value
 * (0 = success); fn writes its result to fd (a pipe; any size).  The
 * parent collects what the child wrote until it exits or `timeout`
 * seconds pass; then the child is killed (SIGKILL) and reaped.  The child
 * stays in our process group.
 *
 * Returns 0 when the child exited 0, with *out the text it wrote
 * (malloc'd, NUL-terminated, possibly empty).  Otherwise -1 with err
 * describing why ("timed out after 10 s", "killed by signal 9", "exited
 * with status 3") and *out still set to whatever the child wrote (may be
 * NULL).
 */
int ctl_run_bounded(double timeout, int (*fn)(void *arg, int fd), void *arg,
		    char **out, fwd_error_t *err);

/* fwd_run_cmd() flags: where the command's stdout and stderr go. */
/* Both to our stderr (the default): a daemon's journal, never our stdout,
 * which may carry a result such as JSON. */
#define FWD_RUN_PASS_OUTPUT 0x0u
/* stdout to /dev/null; stderr captured: its last FWD_RUN_TAIL_MAX bytes,
 * made one printable line, end the error message as ": <tail>". */
#define FWD_RUN_CAPTURE_STDERR 0x1u

#define FWD_RUN_TAIL_MAX 512

/*
 * Run an external command: execve(argv[0], argv, envp), argv[0] an
 * absolute path (no PATH search, no shell), exactly the environment envp,
 * stdin from /dev/null, stdout and stderr as `flags` say, no other of our
 * descriptors, signal dispositions at their defaults and no signal
 * blocked, in a process group of its own.  Between fork and execve the
 * child makes only async-signal-safe calls: the caller may have threads.
 *
 * The command may run until `deadline` (CLOCK_MONOTONIC seconds), or when
 * deadline is 0 for `timeout` seconds from now; then its whole process
 * group (whatever it started and did not move out of the group) gets
 * SIGKILL and the command is reaped.  `timeout` is the figure the
 * timed-out message quotes.
 *
 * Returns 0 when the command exited 0.  Otherwise -1 with err as above
 * (ending with the stderr tail with FWD_RUN_CAPTURE_STDERR), a timeout
 * reading "timed out after T s (killed)", and an exit status of 127
 * reading "could not be executed (exit 127)": the child exits 127 when
 * execve fails, after writing "execve <argv[0]> failed: errno N" to the
 * command's stderr.  argv[0] not absolute: -1, EINVAL.
 */
int fwd_run_cmd(char *const argv[], char *const envp[], double timeout,
		double deadline, unsigned flags, fwd_error_t *err);

/*
 * fwd_run_cmd() for a command whose output is the answer (a "show"):
 * stdout collected into *out (malloc'd, NUL-terminated, possibly empty;
 * set, possibly NULL, on failure too), stderr to /dev/null.
 */
int fwd_run_cmd_output(char *const argv[], char *const envp[], double timeout,
		       double deadline, char **out, fwd_error_t *err);

#endif
