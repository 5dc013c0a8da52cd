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

#include "policies/policy.h"
#include "spank/fwdalloc.h"

/*
 * The mode a job gets without --io-upgrade: "auto" under the policy's
 * access.mode opt-out, else none (the controller records "not
 * requested").  The policy file is world-readable (nothing secret in it);
 * if it cannot be read here the controller, which reads it too, still
 * applies the same rule.
 */
static const char *default_mode(void)
{
	const char *path = fwdalloc_conf.policy[0] ? fwdalloc_conf.policy
						   : POLICY_DEFAULT_PATH;
	fwd_error_t err;
	struct policy *p = policy_load(path, &err);
	const char *mode = NULL;

	if (!p) {
		slurm_debug("fwdalloc: init_post_opt: %s; the controller "
			    "applies the policy's access mode",
			    err.text);
		return NULL;
	}
	if (p->access.mode == POLICY_MODE_OPT_OUT)
		mode = "auto";
	policy_destroy(p);
	return mode;
}

int fwdalloc_alloc_post_opt(spank_t sp)
{
	const char *mode = fwdalloc_option_mode();
	spank_err_t rc;

	/* A step launched inside an existing allocation cannot change the
	 * job's forwarders: the decision was taken at allocation time. */
	if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
		return 0;
	if (!mode)
		mode = default_mode();
	if (!mode)
		return 0;
	rc = spank_job_control_setenv(sp, FWDALLOC_ENV_NAME, mode, 1);
	if (rc != ESPANK_SUCCESS) {
		/* Fail-open: the job runs with the default mapping. */
		slurm_error("fwdalloc: init_post_opt: passing --io-upgrade=%s "
			    "to the controller: %s; the job keeps the default "
			    "I/O forwarding",
			    mode, spank_strerror(rc));
	}
	return 0;
}
