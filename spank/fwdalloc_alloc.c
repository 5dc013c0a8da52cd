/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbatch/salloc (allocator context) and srun (local context): pass the
 * user's request to the controller.  The job control environment is the
 * one channel Slurm offers from the submitting command to PrologSlurmctld:
 * "IO_UPGRADE" set here arrives there as SPANK_IO_UPGRADE.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "policies/policy.h"
#include "spank/fwdalloc.h"

/* The policy, as the controller will read it; NULL (said at debug level)
 * when it cannot be read here: the controller, which reads it too, still
 * applies it.  The policy file is world-readable (nothing secret in it). */
static struct policy *policy_here(const char **path)
{
	fwd_error_t err;
	struct policy *p;

	*path = fwdalloc_conf.policy[0] ? fwdalloc_conf.policy
					: POLICY_DEFAULT_PATH;
	if (!(p = policy_load(*path, &err)))
		slurm_debug("fwdalloc: init_post_opt: %s; the controller "
			    "applies the policy's access mode",
			    err.text);
	return p;
}

/*
 * The mode a job gets without --io-upgrade: "auto" under the policy's
 * access.mode opt-out, else none (the controller records "not
 * requested").
 */
static const char *default_mode(void)
{
	const char *path;
	struct policy *p = policy_here(&path);
	const char *mode = NULL;

	if (p && p->access.mode == POLICY_MODE_OPT_OUT)
		mode = "auto";
	policy_destroy(p);
	return mode;
}

/* An --io-upgrade asked for under access.mode off is said to be ignored,
 * at submission; the job is submitted all the same. */
static void say_if_off(const char *mode)
{
	const char *path;
	struct policy *p;

	if (!strcmp(mode, "off") || !(p = policy_here(&path)))
		return;
	if (p->access.mode == POLICY_MODE_OFF)
		slurm_info("fwdalloc: --io-upgrade=%s ignored: fwdalloc is "
			   "off on this cluster (access.mode: off in %s); "
			   "the job keeps the default I/O forwarding",
			   mode, path);
	policy_destroy(p);
}

int fwdalloc_alloc_post_opt(spank_t sp)
{
	const char *mode = fwdalloc_option_mode();
	spank_err_t rc;

	/* A step launched inside an existing allocation cannot change the
	 * job's forwarders: the decision was taken at allocation time. */
	if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
		return 0;
	if (mode)
		say_if_off(mode);
	else
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
