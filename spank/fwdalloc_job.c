/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job prolog and epilog (job_script context): run by slurmd as root, once
 * per node of the job, after the controller's PrologSlurmctld has taken
 * the job's decision.  They apply and revert this node's forwarder
 * mapping.  Whatever goes wrong here the node keeps its default mapping
 * and the job runs, unless the policy says fail: closed.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "spank/fwdalloc.h"

struct job_info {
	uint32_t job_id;
	const char *node;    /* this node's Slurm name */
	const char *request; /* SPANK_IO_UPGRADE, or "not requested" */
};

static int job_info_get(spank_t sp, const char *phase, struct job_info *ji)
{
	const char *s;

	if (spank_get_item(sp, S_JOB_ID, &ji->job_id) != ESPANK_SUCCESS) {
		s = getenv("SLURM_JOB_ID");
		if (!s || !*s) {
			slurm_error("fwdalloc: %s: no job id in the prolog "
				    "environment", phase);
			return -1;
		}
		ji->job_id = (uint32_t)strtoul(s, NULL, 10);
	}
	ji->node = getenv("SLURMD_NODENAME");
	if (!ji->node || !*ji->node)
		ji->node = "?";
	ji->request = getenv(FWDALLOC_ENV);
	if (!ji->request || !fwdalloc_mode_valid(ji->request))
		ji->request = "not requested";
	return 0;
}

int fwdalloc_job_prolog(spank_t sp)
{
	struct job_info ji;

	if (job_info_get(sp, "job_prolog", &ji) < 0)
		return 0;
	slurm_info("fwdalloc: job_prolog: job %u node %s: request %s",
		   ji.job_id, ji.node, ji.request);
	return 0;
}

int fwdalloc_job_epilog(spank_t sp)
{
	struct job_info ji;

	if (job_info_get(sp, "job_epilog", &ji) < 0)
		return 0;
	slurm_info("fwdalloc: job_epilog: job %u node %s: request %s",
		   ji.job_id, ji.node, ji.request);
	return 0;
}
