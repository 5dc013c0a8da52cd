/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_JOB_H
#define FWD_CONTROLLER_JOB_H

/*
 * The job a controller prolog or epilog works on, as slurmctld describes
 * it in the environment of PrologSlurmctld / EpilogSlurmctld.
 */

#include <stdint.h>

#include "allocator/decide.h"
#include "common/error.h"

struct ctl_job {
	uint64_t job_num;
	char job_id[24];
	const char *user;
	const char *account;
	const char *name;
	const char *partition;
	const char *nodes; /* SLURM_JOB_NODELIST */
	uint32_t n_nodes;
	enum fwd_request request;
	const char *request_name; /* "scale", ..., or "not requested" */
};

/*
 * Fill j from the Slurm prolog/epilog environment.  SLURM_JOB_ID is
 * required; a SPANK_IO_UPGRADE that is not a known mode is an error (it
 * can only come from outside the plugin).  Strings point into environ.
 * 0, or -1 with errno EINVAL and err.
 */
int ctl_job_from_env(struct ctl_job *j, fwd_error_t *err);

#endif
