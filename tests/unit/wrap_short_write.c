/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake write() and ftruncate() for tests linked with
 * -Wl,--wrap=write,--wrap=ftruncate: a full disk on demand.  Set
 * wrap_write_short to 1: the next write to a regular file writes only the
 * first half of the buffer and returns that count (the short write a
 * filling disk gives), and the disk is full (2): further writes fail with
 * ENOSPC, as the kernel's would, until an ftruncate frees space (back to
 * 1).  0 turns it off.  While
 * wrap_ftruncate_fail is set, ftruncate() fails with EIO.  Pipes, sockets
 * and terminals, and descriptors 0-2 (the test's own output may be a
 * file), always get the real calls.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

extern volatile int wrap_write_short;
extern volatile bool wrap_ftruncate_fail;

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __real_ftruncate(int fd, off_t len);
int __wrap_ftruncate(int fd, off_t len);

volatile int wrap_write_short;
volatile bool wrap_ftruncate_fail;

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	struct stat st;

	/* Not 0-2 either: the test's own output may be a file. */
	if (!wrap_write_short || fd <= STDERR_FILENO || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return __real_write(fd, buf, n);
	if (wrap_write_short == 2) {
		errno = ENOSPC;
		return -1;
	}
	wrap_write_short = 2;
	return __real_write(fd, buf, n / 2);
}

int __wrap_ftruncate(int fd, off_t len)
{
	if (wrap_ftruncate_fail) {
		errno = EIO;
		return -1;
	}
	if (wrap_write_short == 2)
		wrap_write_short = 1;
	return __real_ftruncate(fd, len);
}
