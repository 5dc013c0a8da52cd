/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbatch/salloc (allocator context) and srun (local context): pass the
 * user's request to the controller.  The job control environment is the
 * one channel Slurm offers from the submitting command to PrologSlurmctld:
 * "IO_UPGRADE" set here arrives there as SPANK_IO_UPGRADE.
 */
#include "config.h"

#include <stdlib.h>

#include <slurm/spank.h>

#include "spank/fwdalloc.h"

int fwdalloc_alloc_post_opt(spank_t sp)
{
	const char *mode = fwdalloc_option_mode();
	spank_err_t rc;

	/* A step launched inside an existing allocation cannot change the
	 * job's forwarders: the decision was taken at allocation time. */
	if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
		return 0;
	/* Absent option: the controller applies the policy's access mode
	 * (opt-in: not requested; opt-out: auto). */
	if (!mode)
		return 0;
	rc = spank_job_control_setenv(sp, FWDALLOC_ENV_NAME, mode, 1);
	if (rc != ESPANK_SUCCESS) {
		/* Fail-open: the job runs with the default mapping. */
		slurm_error("fwdalloc: init_post_opt: passing --io-upgrade=%s "
			    "to the controller: %s; the job keeps the default "
			    "I/O forwarding", mode, spank_strerror(rc));
	}
	return 0;
}
