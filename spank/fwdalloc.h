/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SPANK_FWDALLOC_H
#define FWD_SPANK_FWDALLOC_H

/*
 * Internals of the fwdalloc SPANK plugin.  fwdalloc_dispatch.c holds the
 * only exported entry points and routes each call by spank_context() to
 * the file for that process kind:
 *
 *   fwdalloc_alloc.c   sbatch/salloc (allocator) and srun (local): turn
 *                      --io-upgrade into SPANK_IO_UPGRADE for the
 *                      controller's PrologSlurmctld
 *   fwdalloc_remote.c  slurmstepd (remote): nothing but the option, which
 *                      must be known wherever the job's options travel
 *   fwdalloc_job.c     prolog/epilog (job_script, root, once per node):
 *                      apply and revert this node's forwarder mapping
 *
 * Nothing here is exported from fwdalloc.so (see fwdalloc.lds).
 */

#include <limits.h>
#include <slurm/spank.h>

/* Environment name as seen by PrologSlurmctld and the job prolog; the
 * plugin sets "IO_UPGRADE" and Slurm prefixes SPANK_. */
#define FWDALLOC_ENV_NAME "IO_UPGRADE"
#define FWDALLOC_ENV "SPANK_IO_UPGRADE"

/* plugstack.conf arguments.  Nothing secret belongs there: the file is
 * read by every user's sbatch. */
struct fwdalloc_conf {
	char policy[PATH_MAX]; /* policy=PATH; "" = the built-in default */
};

extern struct fwdalloc_conf fwdalloc_conf;

/* Parse the plugstack.conf arguments into fwdalloc_conf.  An unknown or
 * malformed argument is logged and ignored: a configuration slip must not
 * stop every job submission (fail-open).  Returns the number ignored. */
int fwdalloc_args_parse(int ac, char **av);

/* Register --io-upgrade in this context.  0 or -1 (logged). */
int fwdalloc_option_register(spank_t sp);

/* The validated --io-upgrade value, or NULL when the option was not
 * given.  A bare --io-upgrade means "auto". */
const char *fwdalloc_option_mode(void);

/* Is s one of auto|scale|isolate|off|shadow? */
int fwdalloc_mode_valid(const char *s);

/* The list of allowed values for messages: "auto, scale, ...". */
extern const char fwdalloc_modes_text[];

/* Per-context handlers; each returns a SPANK return code (0 or -1). */
int fwdalloc_alloc_post_opt(spank_t sp);
int fwdalloc_remote_init(spank_t sp);
int fwdalloc_job_prolog(spank_t sp);
int fwdalloc_job_epilog(spank_t sp);

#endif
