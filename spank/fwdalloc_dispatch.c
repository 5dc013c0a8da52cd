/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fwdalloc SPANK plugin's exported entry points.  Each routes by
 * spank_context() to the file for that kind of process; nothing else is
 * visible outside fwdalloc.so.
 */
#include "config.h"

#include <slurm/spank.h>

#include "common/slurm_compat.h"
#include "spank/fwdalloc.h"

SPANK_PLUGIN(fwdalloc, 1);

/* fwdalloc never drains a node for itself (Slurm >= 25.05). */
FWD_SPANK_INIT_FAILS_JOB;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	fwdalloc_args_parse(ac, av);
	switch (ctx) {
	case S_CTX_ALLOCATOR:
	case S_CTX_LOCAL:
	case S_CTX_JOB_SCRIPT:
		return fwdalloc_option_register(sp);
	case S_CTX_REMOTE:
		if (fwdalloc_option_register(sp) < 0)
			return -1;
		return fwdalloc_remote_init(sp);
	default:
		return 0;
	}
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_ALLOCATOR:
	case S_CTX_LOCAL:
		return fwdalloc_alloc_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	return fwdalloc_remote_task_init_privileged(sp);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	return fwdalloc_remote_task_init(sp);
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	/* slurm_spank_init is not called before the job prolog/epilog:
	 * the plugstack.conf arguments come with this call. */
	fwdalloc_args_parse(ac, av);
	return fwdalloc_job_prolog(sp);
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	fwdalloc_args_parse(ac, av);
	return fwdalloc_job_epilog(sp);
}
