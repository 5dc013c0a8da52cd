/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_ERROR_H
#define FWD_COMMON_ERROR_H

/*
 * Error reporting for libraries: a function that fails returns -1 (or NULL)
 * with errno set and, when the caller passed a fwd_error_t, a human message
 * that names the offending value.  Libraries never print; the CLI and the
 * SPANK plugin decide where the message goes.
 */

#include <stdarg.h>
#include <stddef.h>

typedef struct fwd_error {
	char text[1024];
} fwd_error_t;

/*
 * Format a message into e (if not NULL) and return -1.  errno is preserved,
 * so `return errprintf(e, "...")` keeps the cause set by the failed call.
 */
int errprintf(fwd_error_t *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* errprintf() with a va_list, for functions that take a format of their
 * own. */
int verrprintf(fwd_error_t *e, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Prefix an existing message: "<prefix>: <old message>".  Returns -1 and
 * preserves errno, like errprintf().
 */
int errprefix(fwd_error_t *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
