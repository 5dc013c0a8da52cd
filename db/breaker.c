/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The database circuit breaker's state file (db/breaker.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/breaker.h"

/* Longer than any time we write: "1234567890.123\n". */
#define BREAKER_MAX 64

int db_breaker_open(const char *path, double interval, double now, double *ago)
{
	char buf[BREAKER_MAX + 1], *end;
	ssize_t n;
	double t;
	int fd;

	if (!path || !(interval > 0))
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;
	n = read(fd, buf, BREAKER_MAX);
	close(fd);
	if (n <= 0 || n == BREAKER_MAX)
		return 0;
	buf[n] = '\0';
	errno = 0;
	t = strtod(buf, &end);
	if (errno || end == buf || (*end && strcmp(end, "\n")) ||
	    !isfinite(t) || t <= 0)
		return 0;
	/* In the future (the clock went back): do not trust it. */
	if (t > now + 1)
		return 0;
	if (now - t >= interval)
		return 0;
	if (ago)
		*ago = now > t ? now - t : 0;
	return 1;
}

int db_breaker_trip(const char *path, double now, fwd_error_t *err)
{
	char tmp[4096], line[BREAKER_MAX];
	int fd, len;
	ssize_t w;

	if (!path) {
		errno = EINVAL;
		return errprintf(err, "database breaker: no state file");
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "database breaker %s: %s", path,
				 strerror(errno));
	}
	len = snprintf(line, sizeof(line), "%.3f\n", now);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return errprintf(err, "database breaker %s: %s", tmp,
				 strerror(errno));
	w = write(fd, line, (size_t)len);
	if (w != len || fchmod(fd, 0644) < 0) {
		int e = w < 0 || w == len ? errno : ENOSPC;

		close(fd);
		unlink(tmp);
		errno = e;
		return errprintf(err, "database breaker %s: %s", tmp,
				 strerror(e));
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		errno = e;
		return errprintf(err, "database breaker %s: %s", path,
				 strerror(e));
	}
	return 0;
}
