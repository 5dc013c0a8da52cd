/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one place that knows which Slurm release fwdalloc is built against
 * (SLURM_VERSION_NUMBER, from <slurm/slurm_version.h>).  Every other file
 * includes this header instead of <slurm/slurm.h> and uses the names
 * below, whatever the release from 22.05 to 26.05:
 *
 *   fwd_hostlist_t          a libslurm hostlist handle: `hostlist_t` up to
 *                           23.02, `hostlist_t *` since 23.11 (where
 *                           `hostlist_t` became the opaque struct)
 *   fwd_hostlist_ranged()   the bracketed form ("c[1-4,7]") of a hostlist
 *                           in memory that free() releases; built on
 *                           slurm_hostlist_ranged_string(), the one form
 *                           every release has (23.11 removed
 *                           ..._ranged_string_malloc(), and the
 *                           ..._xmalloc() memory only libslurm's xfree()
 *                           may release)
 *   fwd_slurm_errno()       the error of the last failed libslurm call:
 *                           slurm_get_errno() until 24.05, errno since
 *                           24.11 (which removed slurm_get_errno())
 *   FWD_SPANK_INIT_FAILS_JOB  in the SPANK plugin, at file scope: a failed
 *                           slurm_spank_init() of a plugin the site made
 *                           `required` fails the job, never drains the
 *                           node (slurm_spank_init_failure_mode =
 *                           ESPANK_JOB_FAILURE, since 25.05; before it
 *                           Slurm has no such choice and this is empty)
 *
 * slurm_hostlist_shift() returns malloc()ed memory in every release
 * (src/common/hostlist.c hostrange_shift()): free() it.
 *
 * Header-only, so that only the objects that call libslurm link it.
 */
#ifndef FWD_SLURM_COMPAT_H
#define FWD_SLURM_COMPAT_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#define FWD_SLURM_AT_LEAST(major, minor) \
	(SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0))

_Static_assert(FWD_SLURM_AT_LEAST(22, 5),
	       "fwdalloc needs Slurm 22.05 or later (slurm/slurm_version.h)");

#if FWD_SLURM_AT_LEAST(23, 11)
typedef hostlist_t *fwd_hostlist_t;
#else
typedef hostlist_t fwd_hostlist_t;
#endif

/* The largest ranged string fwd_hostlist_ranged() builds (64 MiB: far
 * beyond any machine's node list, written as one name per node). */
#define FWD_HOSTLIST_RANGED_MAX ((size_t)1 << 26)

/*
 * The ranged string of `hl`, malloc()ed.  NULL with errno ENOMEM when
 * memory runs out, E2BIG past FWD_HOSTLIST_RANGED_MAX, EINVAL for no
 * list.  An empty list gives "".
 */
static inline char *fwd_hostlist_ranged(fwd_hostlist_t hl)
{
	size_t len = 256;

	if (!hl) {
		errno = EINVAL;
		return NULL;
	}
	for (;;) {
		char *buf = malloc(len);

		if (!buf)
			return NULL;
		/* -1 means truncated; a result that fills the buffer to
		 * its last byte is taken as truncated too, since older
		 * releases can end a truncated list without saying so. */
		if (slurm_hostlist_ranged_string(hl, len, buf) >= 0 &&
		    strlen(buf) + 1 < len)
			return buf;
		free(buf);
		if (len >= FWD_HOSTLIST_RANGED_MAX) {
			errno = E2BIG;
			return NULL;
		}
		len *= 4;
	}
}

#if FWD_SLURM_AT_LEAST(25, 5)
#define FWD_SPANK_INIT_FAILS_JOB \
	int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE
#else
#define FWD_SPANK_INIT_FAILS_JOB extern int fwd_spank_init_failure_mode_unused
#endif

static inline int fwd_slurm_errno(void)
{
#if FWD_SLURM_AT_LEAST(24, 11)
	return errno;
#else
	return slurm_get_errno();
#endif
}

#endif /* FWD_SLURM_COMPAT_H */
