/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Audit file writer: one record, one write(2), O_APPEND.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "controller/audit.h"

void audit_time(double t, char *buf, size_t len)
{
	time_t sec = (time_t)t;
	int ms = (int)((t - (double)sec) * 1000.0);
	struct tm tm;

	if (ms < 0)
		ms = 0;
	if (ms > 999)
		ms = 999;
	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ms);
}

static int ensure_dir(const char *path, fwd_error_t *err)
{
	char copy[PATH_MAX];
	char *dir;

	if (strlen(path) >= sizeof(copy)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "audit file %s: path too long", path);
	}
	strcpy(copy, path);
	dir = dirname(copy);
	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		return errprintf(err, "audit directory %s: %s", dir,
				 strerror(errno));
	return 0;
}

int audit_append_line(const char *path, const char *line, fwd_error_t *err)
{
	size_t n = strlen(line);
	char *buf = NULL;
	ssize_t w;
	int fd = -1, rv = -1;

	if (!path || !*path) {
		errno = EINVAL;
		return errprintf(err, "audit file: no path configured");
	}
	if (memchr(line, '\n', n)) {
		errno = EINVAL;
		return errprintf(err, "audit record contains a newline");
	}
	if (!(buf = malloc(n + 2))) {
		errprintf(err, "audit record: %s", strerror(errno));
		goto out;
	}
	memcpy(buf, line, n);
	buf[n] = '\n';
	buf[n + 1] = '\0';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0 && errno == ENOENT) {
		if (ensure_dir(path, err) < 0)
			goto out;
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			  0640);
	}
	if (fd < 0) {
		errprintf(err, "audit file %s: %s", path, strerror(errno));
		goto out;
	}
	/* One write: never loop, a second write could land after another
	 * writer's record and split this one. */
	w = write(fd, buf, n + 1);
	if (w < 0) {
		errprintf(err, "audit file %s: write: %s", path,
			  strerror(errno));
		goto out;
	}
	if ((size_t)w != n + 1) {
		errno = EIO;
		errprintf(err, "audit file %s: short write (%zd of %zu bytes)",
			  path, w, n + 1);
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0 && close(fd) < 0 && rv == 0)
		rv = errprintf(err, "audit file %s: close: %s", path,
			       strerror(errno));
	free(buf);
	return rv;
}

int audit_append(const char *path, const json_t *record, fwd_error_t *err)
{
	char *line = json_dumps(record, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rv;

	if (!line) {
		errno = ENOMEM;
		return errprintf(err, "audit record: cannot serialise");
	}
	rv = audit_append_line(path, line, err);
	free(line);
	return rv;
}
