/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake open() for tests linked with -Wl,--wrap=open.  The suite runs as
 * root, where chmod 000 does not stop open(); to check the message for an
 * unreadable file anyway, any path ending in "/eacces.yaml" fails with
 * EACCES and everything else goes to the real open().  The integration
 * tests check a really unreadable file as an unprivileged user.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);

int __wrap_open(const char *path, int flags, ...)
{
	size_t n = strlen(path);
	mode_t mode = 0;
	va_list ap;

	if (n >= 12 && !strcmp(path + n - 12, "/eacces.yaml")) {
		errno = EACCES;
		return -1;
	}
	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return __real_open(path, flags, mode);
}
