/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_SAFEDIR_H
#define FWD_COMMON_SAFEDIR_H

/*
 * Directories that hold files a privileged fwdalloc process (root on the
 * nodes, SlurmUser on the controller) creates or trusts: the node's remap
 * state and notes, the controller's release queue, the decision spool.
 * Such a directory is used only when nobody else can put a file or a link
 * into it: it is a directory itself (not a link to one), owned by the
 * expected account, and neither group- nor other-writable.  The files in
 * it are then opened with O_NOFOLLOW (or openat() on the returned fd)
 * and written with fwd_write_all().
 */

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

/* No particular owner: any account, as long as only it can write. */
#define FWD_DIR_ANY_OWNER ((uid_t)(-1))

/*
 * Open directory `path` after checking it as above; `owner` is the
 * account that must own it (FWD_DIR_ANY_OWNER: any).  With create_mode
 * non-zero, a missing directory is created with that mode first.
 * Returns an O_DIRECTORY | O_CLOEXEC descriptor, or -1 with errno (EPERM
 * for an unsafe directory, ENOTDIR for a link or a file) and err naming
 * the path, what is wrong and the fix.
 */
int fwd_dir_open_checked(const char *path, mode_t create_mode, uid_t owner,
			 fwd_error_t *err);

/* The same check, closing the descriptor: 0, or -1 with errno and err. */
int fwd_dir_check(const char *path, mode_t create_mode, uid_t owner,
		  fwd_error_t *err);

/* Write all n bytes of buf to fd, through short writes and EINTR: 0, or
 * -1 with errno (0 from write(2) is EIO). */
int fwd_write_all(int fd, const char *buf, size_t n);

#endif
