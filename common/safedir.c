/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Checked directories for files a privileged process trusts
 * (common/safedir.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/safedir.h"

int fwd_dir_open_checked(const char *path, mode_t create_mode, uid_t owner,
			 fwd_error_t *err)
{
	struct stat st;
	int fd;

	if (!path || path[0] != '/') {
		errno = EINVAL;
		return errprintf(err, "directory \"%s\": not an absolute path",
				 path ? path : "");
	}
	if (create_mode && mkdir(path, create_mode) < 0 && errno != EEXIST)
		return errprintf(err, "directory %s: %s", path,
				 strerror(errno));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			errno = ENOTDIR;
		return errprintf(err, "directory %s: %s", path,
				 errno == ENOTDIR
					 ? "not a directory (a link or a file)"
					 : strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		errprintf(err, "directory %s: %s", path, strerror(errno));
		goto bad;
	}
	if (owner != FWD_DIR_ANY_OWNER && st.st_uid != owner) {
		errno = EPERM;
		errprintf(err,
			  "directory %s: owned by uid %u, not uid %u: refusing "
			  "it (chown %u %s)",
			  path, (unsigned)st.st_uid, (unsigned)owner,
			  (unsigned)owner, path);
		goto bad;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		errno = EPERM;
		errprintf(err,
			  "directory %s: mode %04o lets others write into it: "
			  "refusing it (chmod go-w %s)",
			  path, (unsigned)(st.st_mode & 07777), path);
		goto bad;
	}
	return fd;
bad:
	close(fd);
	return -1;
}

int fwd_dir_check(const char *path, mode_t create_mode, uid_t owner,
		  fwd_error_t *err)
{
	int fd = fwd_dir_open_checked(path, create_mode, owner, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int fwd_write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}
