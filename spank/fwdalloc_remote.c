/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurmstepd (remote context).  The mapping is applied once per node by
 * the job prolog, before any step starts, so steps only tell the job what
 * it got: FWDALLOC_ACTION and FWDALLOC_FORWARDERS in the environment of
 * every task, and one line on the batch script's stderr when the job
 * asked for --io-upgrade (fwdalloc_note.c).  slurm_spank_init
 * (fwdalloc_dispatch.c) also registers the option in this context,
 * because Slurm forwards the job's SPANK options to every step and
 * rejects unknown ones.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "common/slurm_compat.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"

/* The policy's state directory, read in slurm_spank_init (once per
 * step, before the tasks fork); the job's notes, read by each task as
 * root; this node's, once the task's environment names the node. */
#define MAX_NOTES 16
static struct {
	char state_dir[PATH_MAX];
	uint32_t job;
	struct fwdalloc_note notes[MAX_NOTES];
	size_t n;
} told;

int fwdalloc_remote_init(spank_t sp)
{
	const char *path = fwdalloc_conf.policy[0] ? fwdalloc_conf.policy
						   : POLICY_DEFAULT_PATH;
	struct policy *p;
	fwd_error_t err;

	if (!(p = policy_load(path, &err)))
		return 0; /* the job prolog has said why */
	if (p->remap.lwfs.state_dir)
		snprintf(told.state_dir, sizeof(told.state_dir), "%s",
			 p->remap.lwfs.state_dir);
	policy_destroy(p);
	return 0;
}

int fwdalloc_remote_task_init_privileged(spank_t sp)
{
	int n;

	/* Still root: the state directory may be closed to the user.  The
	 * task's environment does not name this node yet. */
	if (!told.state_dir[0] ||
	    spank_get_item(sp, S_JOB_ID, &told.job) != ESPANK_SUCCESS)
		return 0;
	n = fwdalloc_note_read_job(told.state_dir, told.job, told.notes,
				   MAX_NOTES);
	told.n = n > 0 ? (size_t)n : 0;
	return 0;
}

int fwdalloc_remote_task_init(spank_t sp)
{
	const struct fwdalloc_note *me = NULL;
	char node[256];
	uint32_t step;

	if (!told.n || spank_getenv(sp, "SLURMD_NODENAME", node,
				    sizeof(node)) != ESPANK_SUCCESS)
		return 0;
	for (size_t i = 0; i < told.n && !me; i++)
		if (!strcmp(told.notes[i].node, node))
			me = &told.notes[i];
	if (!me)
		return 0;
	spank_setenv(sp, "FWDALLOC_ACTION", me->action, 1);
	if (me->forwarders[0])
		spank_setenv(sp, "FWDALLOC_FORWARDERS", me->forwarders, 1);
	else
		spank_unsetenv(sp, "FWDALLOC_FORWARDERS");
	/* One line, in the batch script's output, for a job that asked. */
	if (me->request[0] &&
	    spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS &&
	    step == SLURM_BATCH_SCRIPT) {
		fprintf(stderr, "fwdalloc: job %u: --io-upgrade=%s: %s%s%s\n",
			told.job, me->request, me->action,
			me->forwarders[0] ? ", forwarders " : "",
			me->forwarders);
		fflush(stderr);
	}
	return 0;
}
