/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_JOB_VARS_H
#define FWD_CONTROLLER_JOB_VARS_H

/*
 * The variables of slurmctld's PrologSlurmctld / EpilogSlurmctld
 * environment that describe a job to fwdalloc (controller/job.h reads
 * them).  Whatever carries a job elsewhere (the release queue, the hooks'
 * messages to the controller service) carries these and only these.
 * Plain C, no other header: the static hook programs use it too.
 */
#define CTL_JOB_VARS                                                          \
	"SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_USER",               \
		"SLURM_JOB_ACCOUNT", "SLURM_JOB_NAME", "SLURM_JOB_PARTITION", \
		"SLURM_JOB_NUM_NODES", "SPANK_IO_UPGRADE"

#endif
