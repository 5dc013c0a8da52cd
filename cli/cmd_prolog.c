/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl prolog / fwdctl epilog: slurmctld's PrologSlurmctld and
 * EpilogSlurmctld (through the installed wrappers, since Slurm passes no
 * arguments).  The work is controller/hooks.h's; this file reads the
 * arguments, prints what the operator should see and picks the exit code.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "cli/fwdctl.h"
#include "common/timeutil.h"
#include "controller/hooks.h"
#include "controller/job.h"
#include "policies/policy.h"

/* clang-format off */
static void prolog_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl prolog\n"
"       fwdctl epilog\n"
"\n"
"slurmctld's PrologSlurmctld and EpilogSlurmctld.  Slurm runs them with no\n"
"arguments, so slurm.conf names the installed wrappers\n"
"(LIBEXECDIR/fwdalloc/prolog-slurmctld, epilog-slurmctld) which run\n"
"`fwdctl --policy FILE prolog|epilog`.  The job comes from the environment\n"
"(SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_USER, SLURM_JOB_ACCOUNT,\n"
"SLURM_JOB_NAME, SLURM_JOB_PARTITION, and SPANK_IO_UPGRADE set by the\n"
"plugin from --io-upgrade).\n"
"\n"
"prolog  records the job, loads its application's profile, takes the\n"
"        global decision lock, decides, writes the allocation and the\n"
"        audit record (file and database).  It ends within the policy's\n"
"        decision.decide_timeout.  On any failure the job keeps its default\n"
"        mapping and the audit record says \"fallback: <error>\".  A\n"
"        SPANK_IO_UPGRADE that is not a mode is such a fallback too, with\n"
"        the value quoted (escaped, cut to 64 characters).  Job, user,\n"
"        account and partition names are escaped and cut to what the\n"
"        database holds.\n"
"epilog  releases the job's allocation (idempotent) and records its end.\n"
"\n"
"Exit status:\n"
"  0  done, or failed open (the audit record says why)\n"
"  1  failed while the policy says access.fail: closed (Slurm then\n"
"     requeues the job); a bad SPANK_IO_UPGRADE is the user's, not a\n"
"     failure: exit 0\n"
"  2  not run by Slurm (no SLURM_JOB_ID) or bad usage\n");
}
/* clang-format on */

/*
 * An audit record that could not be written to the audit file (disk full,
 * unwritable): syslog keeps it, so no decision goes unrecorded.
 */
static void syslog_record(const char *event, const char *job_id,
			  const char *record)
{
	openlog("fwdalloc", LOG_PID, LOG_DAEMON);
	syslog(LOG_WARNING,
	       "%s job %s: audit record not written to the audit file: %s",
	       event, job_id, record);
	closelog();
}

static int cmd_prolog_epilog(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	const char *name = ctx->cmd; /* argv[0] is "fwdctl prolog" */
	bool epilog = !strcmp(name, "epilog");
	struct ctl_outcome out;
	struct ctl_job job;
	struct policy *p;
	fwd_error_t err;
	double t0 = fwd_clock_real();

	if (fwdctl_wants_help(argc, argv)) {
		prolog_usage(stdout);
		return FWD_EXIT_OK;
	}
	if (argc > 1) {
		/* Slurm passes no arguments: the job comes from the
		 * environment. */
		fwdctl_err("%s: unexpected argument '%s'; see 'fwdctl %s "
			   "--help'",
			   name, argv[1], name);
		return FWD_EXIT_USAGE;
	}
	if (ctl_job_from_env(&job, &err) < 0) {
		fwdctl_err("%s: %s", name, err.text);
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx))) {
		/* No policy: nothing to decide with; the job runs on the
		 * default mapping.  The built-in audit path records it. */
		if (ctl_no_policy(&job, t0, &err) < 0) {
			fwdctl_err("%s", err.text);
			openlog("fwdalloc", LOG_PID, LOG_DAEMON);
			syslog(LOG_WARNING,
			       "%s job %s: no policy, default mapping; "
			       "audit record not written: %s",
			       name, job.job_id, err.text);
			closelog();
		}
		return FWD_EXIT_OK;
	}
	if (epilog) {
		ctl_epilog(p, &job, t0, &out);
	} else {
		if (p->access.mode == POLICY_MODE_OFF)
			return FWD_EXIT_OK;
		/* NULL when it does not load: the prolog records the
		 * fallback. */
		ctl_prolog(p, fwdctl_topology(ctx), &job, t0, &out);
	}
	for (size_t i = 0; i < out.n_notes; i++)
		fwdctl_err("%s", out.notes[i].text);
	if (out.lost_record)
		syslog_record(name, job.job_id, out.lost_record);
	ctl_outcome_free(&out);
	return out.stop_job ? FWD_EXIT_INVALID : FWD_EXIT_OK;
}

FWDCTL_COMMAND(
	cmd_prolog, .name = "prolog",
	.summary = "PrologSlurmctld: decide and record a job's forwarders",
	.order = 60, .run = cmd_prolog_epilog);

FWDCTL_COMMAND(cmd_epilog, .name = "epilog",
	       .summary = "EpilogSlurmctld: release a job's forwarders",
	       .order = 60, .run = cmd_prolog_epilog);
