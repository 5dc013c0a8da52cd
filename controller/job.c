/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job from slurmctld's prolog/epilog environment (controller/job.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/job.h"

/* Slurm writes "(null)" for unset job fields (e.g. no account). */
static const char *env_str(const char *name)
{
	const char *s = getenv(name);

	return s && *s && strcmp(s, "(null)") ? s : NULL;
}

int ctl_job_from_env(struct ctl_job *j, fwd_error_t *err)
{
	const char *id = env_str("SLURM_JOB_ID");
	const char *req = env_str("SPANK_IO_UPGRADE");
	const char *nn = env_str("SLURM_JOB_NUM_NODES");
	char *end;

	memset(j, 0, sizeof(*j));
	if (!id) {
		errno = EINVAL;
		return errprintf(err,
				 "SLURM_JOB_ID is not set: this command "
				 "is run by slurmctld as PrologSlurmctld or "
				 "EpilogSlurmctld");
	}
	errno = 0;
	j->job_num = strtoull(id, &end, 10);
	if (errno || *end || j->job_num == 0) {
		errno = EINVAL;
		return errprintf(err, "SLURM_JOB_ID=%s: not a job id", id);
	}
	snprintf(j->job_id, sizeof(j->job_id), "%llu",
		 (unsigned long long)j->job_num);
	j->user = env_str("SLURM_JOB_USER");
	if (!j->user)
		j->user = "";
	j->account = env_str("SLURM_JOB_ACCOUNT");
	j->name = env_str("SLURM_JOB_NAME");
	if (!j->name)
		j->name = "";
	j->partition = env_str("SLURM_JOB_PARTITION");
	j->nodes = env_str("SLURM_JOB_NODELIST");
	if (nn)
		j->n_nodes = (uint32_t)strtoul(nn, NULL, 10);
	j->request = FWD_REQ_NONE;
	j->request_name = "not requested";
	if (req) {
		if (fwd_request_parse(req, &j->request) < 0 ||
		    j->request == FWD_REQ_NONE) {
			errno = EINVAL;
			return errprintf(err,
					 "SPANK_IO_UPGRADE=%s: unknown "
					 "mode",
					 req);
		}
		j->request_name = fwd_request_name(j->request);
	}
	return 0;
}
