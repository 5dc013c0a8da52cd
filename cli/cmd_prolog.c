/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl prolog / fwdctl epilog: slurmctld's PrologSlurmctld and
 * EpilogSlurmctld (through the installed wrappers, since Slurm passes no
 * arguments).  The work is controller/hooks.h's; this file reads the
 * arguments, prints what the operator should see and picks the exit code.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cli/fwdctl.h"
#include "common/timeutil.h"
#include "controller/hooks.h"
#include "controller/job.h"
#include "controller/publish.h"
#include "controller/release_queue.h"
#include "policies/caps_room.h"
#include "policies/policy.h"
#include "topology/topo_cache.h"

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
"fwdctl prolog --abandoned REASON\n"
"        what the installed prolog-slurmctld runs when the controller\n"
"        service (fwdallocd(8)) took the job but did not answer within\n"
"        the hook's budget: whatever the service may have committed for\n"
"        the job is released (within database.timeout) and the job falls\n"
"        back, with REASON in its audit record.\n"
"\n"
"fwdctl epilog --queue\n"
"        what the installed epilog-slurmctld runs, in the background: it\n"
"        queues the release (a file named by the job id in\n"
"        release-queue/ beside the audit file) and releases what is\n"
"        queued unless another epilog already does.  slurmctld keeps a job\n"
"        COMPLETING until EpilogSlurmctld ends, and one that ends after the\n"
"        nodes' own epilogs leaves pending jobs waiting for the next\n"
"        scheduling pass (sched_interval, 60 s): so the wrapper returns at\n"
"        once and the release follows within milliseconds.  Messages go\n"
"        to syslog (LOG_DAEMON, \"fwdalloc\"); `fwdctl reconcile` releases\n"
"        what a queue left behind.\n"
"\n"
"A policy that does not load: the prolog leaves the job on its default\n"
"mapping with the record \"fallback: the policy could not be loaded:\n"
"<error>\" (audit file and table, counted by fwdctl metrics); the epilog\n"
"(with --queue too, then without queueing) still releases what the job\n"
"holds and removes its decision files, its record carrying\n"
"\"policy_error\".  Both use the database, audit and remap.decision_dir\n"
"settings of the file where these sections are valid, else the built-in\n"
"defaults.\n"
"\n"
"Exit status:\n"
"  0  done, or failed open (the audit record says why)\n"
"  1  failed while the policy says access.fail: closed (Slurm then\n"
"     requeues the job); a bad SPANK_IO_UPGRADE is the user's, not a\n"
"     failure: exit 0\n"
"  2  not run by Slurm (no SLURM_JOB_ID) or bad usage\n"
"\n"
"The prolog reads the topology from its compiled cache, topology.cache in\n"
"the audit file's directory, rebuilt (atomically) whenever the topology\n"
"YAML changes; a cache that does not match the YAML is ignored.\n"
"\n"
"Environment: FWDALLOC_PROLOG_TIMING, when set, makes the prolog print the\n"
"time of each phase on stderr (\"fwdctl prolog: timing ms: policy=...\n"
"topology=... topology_cache=hit|written|unused[:why] load=... nodes=...\n"
"connect=... record=... lock=... ledger=... decide=... persist=...\n"
"audit=... commit=... publish=... total=...\"), for benchmarks.\n");
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

static const char *const cache_use_names[] = {
	[TOPO_CACHE_HIT] = "hit",
	[TOPO_CACHE_WRITTEN] = "written",
	[TOPO_CACHE_YAML] = "unused",
};

/*
 * The controller prolog runs once per job: the topology comes from its
 * compiled cache (topology/topo_cache.h), topology.cache in the audit
 * file's directory (written by the controller's account, as the breaker's
 * state), rebuilt whenever the YAML changes; the YAML itself when there is
 * no such directory or the cache cannot be used.  *how and cerr: what
 * happened to the cache.
 */
static struct topology *prolog_topology(struct fwdctl_ctx *ctx,
					const struct policy *p,
					enum topo_cache_use *how,
					fwd_error_t *cerr)
{
	fwd_error_t err;

	char caps[1024];

	ctx->topology =
		ctl_topology_load(p, ctx->topology_path, how, cerr, &err);
	if (!ctx->topology)
		fwdctl_err("%s", err.text);
	/* The first prolog after the topology changed (it writes the
	 * cache) says once when the caps leave no upgrade on it. */
	else if (*how == TOPO_CACHE_WRITTEN &&
		 policy_caps_room(p, ctx->topology,
				  ctx->topology_path ? ctx->topology_path
						     : p->topology,
				  caps, sizeof(caps)))
		fwdctl_err("prolog: warning: %s", caps);
	return ctx->topology;
}

/* What a queued release says goes to syslog: nobody reads its stderr. */
static void log_daemon(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void log_daemon(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	openlog("fwdalloc", LOG_PID, LOG_DAEMON);
	vsyslog(prio, fmt, ap);
	closelog();
	va_end(ap);
}

/* relq_release_all()'s messages: syslog, nobody reads stderr. */
static void log_queued(void *arg, int prio, const char *msg)
{
	(void)arg;
	log_daemon(prio, "%s", msg);
}

/*
 * No policy loads: why (the loader's error, which fwdctl_policy() printed)
 * and where the hook records and releases anyway
 * (policy_load_locations()).  NULL only when out of memory.
 */
static struct policy *no_policy_locations(struct fwdctl_ctx *ctx,
					  fwd_error_t *why)
{
	struct policy *p = policy_load(ctx->policy_path, why);

	if (p) {
		/* It loads now (edited meanwhile): still not this run's. */
		policy_destroy(p);
		snprintf(why->text, sizeof(why->text), "%s: not loaded",
			 ctx->policy_path);
	}
	return policy_load_locations(ctx->policy_path);
}

/*
 * fwdctl epilog --queue: queue this job's release, then release what the
 * queue holds unless another epilog is doing it.  Run in the background
 * by the epilog-slurmctld wrapper (controller/release_queue.h).
 */
static int epilog_queued(struct fwdctl_ctx *ctx, double t0)
{
	struct ctl_outcome out;
	struct ctl_job job;
	size_t done = 0, failed = 0;
	fwd_error_t err;
	char dir[4096];
	struct policy *p;

	/* Out of slurmctld's process group: a script it kills on
	 * shutdown is the wrapper, not a release under way. */
	setsid();
	if (ctl_job_from_env(&job, &err) < 0) {
		log_daemon(LOG_WARNING, "epilog: %s", err.text);
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx))) {
		/* No queue without a policy: this process releases its own
		 * job, with the database and audit trail the file names. */
		struct policy *lp = no_policy_locations(ctx, &err);
		struct ctl_outcome lout;

		if (!lp) {
			log_daemon(LOG_WARNING, "epilog job %s: no policy: %s",
				   job.job_id, strerror(errno));
			return FWD_EXIT_OK;
		}
		log_daemon(LOG_WARNING,
			   "epilog job %s: no policy (%s); releasing it now",
			   job.job_id, err.text);
		ctl_epilog_no_policy(lp, &job, err.text, t0, &lout);
		for (size_t i = 0; i < lout.n_notes; i++)
			log_daemon(LOG_WARNING, "%s", lout.notes[i].text);
		if (lout.lost_record)
			syslog_record("epilog", job.job_id, lout.lost_record);
		ctl_outcome_free(&lout);
		policy_destroy(lp);
		return FWD_EXIT_OK;
	}
	if (relq_dir(p, dir, sizeof(dir), &err) < 0 ||
	    relq_put(dir, t0, &err) < 0) {
		/* No queue: this process releases its own job. */
		log_daemon(LOG_WARNING, "epilog job %s: %s; releasing it now",
			   job.job_id, err.text);
		ctl_epilog(p, &job, t0, &out);
		for (size_t i = 0; i < out.n_notes; i++)
			log_daemon(LOG_WARNING, "%s", out.notes[i].text);
		if (out.lost_record)
			syslog_record("epilog", job.job_id, out.lost_record);
		ctl_outcome_free(&out);
		return FWD_EXIT_OK;
	}
	if (relq_release_all(NULL, p, dir, log_queued, NULL, &done, &failed,
			     &err) < 0)
		log_daemon(LOG_WARNING, "epilog: release queue: %s", err.text);
	return FWD_EXIT_OK;
}

static int cmd_prolog_epilog(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	const char *name = ctx->cmd; /* argv[0] is "fwdctl prolog" */
	bool epilog = !strcmp(name, "epilog");
	struct ctl_outcome out;
	struct ctl_job job;
	struct policy *p, *lp = NULL;
	fwd_error_t err, cerr = {""};
	enum topo_cache_use how = TOPO_CACHE_YAML;
	double t0 = fwd_clock_real(), t_pol = t0, t_topo = t0;
	const char *abandoned = NULL;
	char pre[768] = "";

	if (fwdctl_wants_help(argc, argv)) {
		prolog_usage(stdout);
		return FWD_EXIT_OK;
	}
	if (epilog && argc == 2 && !strcmp(argv[1], "--queue"))
		return epilog_queued(ctx, t0);
	if (!epilog && argc == 3 && !strcmp(argv[1], "--abandoned"))
		abandoned = argv[2];
	else if (argc > 1) {
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
	p = fwdctl_policy(ctx);
	t_pol = fwd_clock_real();
	if (!p) {
		/* No policy: nothing to decide with; the job runs on the
		 * default mapping, and the epilog still releases what it
		 * holds.  Recorded where the file says, else where the
		 * built-in defaults do. */
		if (!(lp = no_policy_locations(ctx, &err))) {
			fwdctl_err("%s job %s: no policy: %s", name, job.job_id,
				   strerror(errno));
			return FWD_EXIT_OK;
		}
		if (epilog)
			ctl_epilog_no_policy(lp, &job, err.text, t0, &out);
		else
			ctl_no_policy(lp, &job, err.text, t0, &out);
	} else if (epilog) {
		ctl_epilog(p, &job, t0, &out);
	} else {
		if (p->access.mode == POLICY_MODE_OFF)
			return FWD_EXIT_OK;
		/* NULL when it does not load: the prolog records the
		 * fallback. */
		prolog_topology(ctx, p, &how, &cerr);
		t_topo = fwd_clock_real();
		snprintf(pre, sizeof(pre),
			 "policy=%.3f topology=%.3f topology_cache=%s%s%s ",
			 (t_pol - t0) * 1e3, (t_topo - t_pol) * 1e3,
			 cache_use_names[how], cerr.text[0] ? ":" : "",
			 cerr.text);
		if (abandoned)
			ctl_prolog_abandon(p, ctx->topology, &job, abandoned,
					   t0, &out);
		else
			ctl_prolog(p, ctx->topology, &job, t0, &out);
	}
	/* Whatever failed, the job's nodes keep their defaults and tell the
	 * job so (FWDALLOC_ACTION=fallback), through remap.decision_dir. */
	if (!epilog && out.fallback &&
	    ctl_publish_fallback(p ? p : lp, &job, &err) < 0)
		fwdctl_err("prolog %s: %s", job.job_id, err.text);
	for (size_t i = 0; i < out.n_notes; i++)
		fwdctl_err("%s", out.notes[i].text);
	/* FWDALLOC_PROLOG_TIMING: the phases, for benchmarks. */
	if (out.timing[0])
		fwdctl_err("timing ms: %s%s", pre, out.timing);
	if (out.lost_record)
		syslog_record(name, job.job_id, out.lost_record);
	ctl_outcome_free(&out);
	policy_destroy(lp);
	return out.stop_job ? FWD_EXIT_INVALID : FWD_EXIT_OK;
}

FWDCTL_COMMAND(
	cmd_prolog, .name = "prolog",
	.summary = "PrologSlurmctld: decide and record a job's forwarders",
	.order = 60, .run = cmd_prolog_epilog);

FWDCTL_COMMAND(cmd_epilog, .name = "epilog",
	       .summary = "EpilogSlurmctld: release a job's forwarders",
	       .order = 60, .run = cmd_prolog_epilog);
