/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurmstepd (remote context).  The mapping is applied once per node by
 * the job prolog, before any step starts, so steps have nothing to do.
 * slurm_spank_init (fwdalloc_dispatch.c) still registers the option in
 * this context before calling here, because Slurm forwards the job's
 * SPANK options to every step and rejects unknown ones.
 */
#include "config.h"

#include <slurm/spank.h>

#include "spank/fwdalloc.h"

int fwdalloc_remote_init(spank_t sp)
{
	return 0;
}
