/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

int verrprintf(fwd_error_t *e, const char *fmt, va_list ap)
{
	int saved = errno;

	if (e)
		vsnprintf(e->text, sizeof(e->text), fmt, ap);
	errno = saved;
	return -1;
}

int errprintf(fwd_error_t *e, const char *fmt, ...)
{
	va_list ap;
	int rv;

	va_start(ap, fmt);
	rv = verrprintf(e, fmt, ap);
	va_end(ap);
	return rv;
}

int errprefix(fwd_error_t *e, const char *fmt, ...)
{
	int saved = errno;
	char old[sizeof(e->text)];
	size_t n, cap = sizeof(e->text);
	va_list ap;

	if (e) {
		memcpy(old, e->text, sizeof(old));
		old[sizeof(old) - 1] = '\0';
		va_start(ap, fmt);
		vsnprintf(e->text, cap, fmt, ap);
		va_end(ap);
		/* Append ": <old>", truncating the old message if needed. */
		n = strlen(e->text);
		if (n + 2 < cap) {
			memcpy(e->text + n, ": ", 2);
			n += 2;
			size_t rest = strlen(old);
			if (rest > cap - 1 - n)
				rest = cap - 1 - n;
			memcpy(e->text + n, old, rest);
			e->text[n + rest] = '\0';
		}
	}
	errno = saved;
	return -1;
}
