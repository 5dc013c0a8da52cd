/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job prolog and epilog (job_script context): run by slurmd as root, once
 * per node of the job, after the controller's PrologSlurmctld has taken
 * and stored the job's decision.  They apply and revert this node's
 * forwarder mapping with the policy's remap driver.
 *
 * The node reads only its job's unreleased allocation rows (and the
 * forwarders' addresses), with the read-only node database account whose
 * password file only root can read.  Whatever goes wrong here, the node
 * keeps its default mapping and the job runs: a missing decision, an
 * unreachable database and a failing driver are logged, and the prolog
 * fails (Slurm then drains the node and requeues the job) only when the
 * policy says access.fail: closed.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "common/slurm_compat.h"
#include "common/slurm_conf.h"
#include "common/timeutil.h"
#include "common/vocab.h"
#include "controller/publish.h"
#include "policies/policy.h"
#include "service/client.h"
#include "service/node_release.h"
#include "service/protocol.h"
#include "spank/fwdalloc.h"
#include "spank/remap.h"

struct fa_job {
	uint32_t job_id;
	const char *node;    /* this node's Slurm name */
	const char *request; /* SPANK_IO_UPGRADE, or "not requested" */
};

static int job_info_get(spank_t sp, const char *phase, struct fa_job *fj)
{
	const char *s;

	if (spank_get_item(sp, S_JOB_ID, &fj->job_id) != ESPANK_SUCCESS) {
		s = getenv("SLURM_JOB_ID");
		if (!s || !*s) {
			slurm_error("fwdalloc: %s: no job id in the prolog "
				    "environment",
				    phase);
			return -1;
		}
		if (fwd_job_id_parse(s, &fj->job_id) < 0) {
			slurm_error("fwdalloc: %s: SLURM_JOB_ID=\"%.32s\" is "
				    "not a job id (" FWD_JOB_ID_RANGE ")",
				    phase, s);
			return -1;
		}
	}
	fj->node = getenv("SLURMD_NODENAME");
	if (!fj->node || !*fj->node)
		fj->node = "?";
	fj->request = getenv(FWDALLOC_ENV);
	if (!fj->request || !fwdalloc_mode_valid(fj->request))
		fj->request = "not requested";
	return 0;
}

static struct policy *load_policy(const char *phase, uint32_t job)
{
	const char *path = fwdalloc_conf.policy[0] ? fwdalloc_conf.policy
						   : POLICY_DEFAULT_PATH;
	fwd_error_t err;
	struct policy *p = policy_load(path, &err);

	if (!p)
		slurm_error("fwdalloc: %s: job %u: %s; keeping the default "
			    "mapping",
			    phase, job, err.text);
	return p;
}

/* What the job's tasks will be told (fwdalloc_note.c); a failure to
 * write it is logged and changes nothing else. */
static void note(const struct policy *p, const struct fa_job *fj,
		 const char *action, const char *names)
{
	const char *req =
		strcmp(fj->request, "not requested") ? fj->request : NULL;
	fwd_error_t err;

	if (fwdalloc_note_write(p, fj->job_id, fj->node, req, action, names,
				&err) < 0)
		slurm_error("fwdalloc: job_prolog: job %u node %s: telling "
			    "the job: %s",
			    fj->job_id, fj->node, err.text);
}

/*
 * Keep this prolog inside what slurmd allows it (slurm.conf's
 * PrologTimeout / PrologEpilogTimeout, read once per prolog): past it
 * slurmd kills the prolog, drains the node and requeues the job held,
 * even under access.fail: open.  The database waits get at most half of
 * the budget (a tenth of it kept as margin), the remap driver what is left
 * when it starts (fit_remap()).  Returns the budget's end on the monotonic
 * clock, 0 when slurmd waits forever (or slurm.conf cannot be read).
 */
static double fit_budget(struct policy *p, double t0, uint32_t job,
			 const char *node)
{
	const char *key = NULL;
	fwd_error_t err;
	uint32_t secs = 0;
	double budget, worst = policy_node_prolog_worst(p);
	int r = fwd_slurm_prolog_timeout(NULL, &secs, &key, &err);

	if (r < 0)
		slurm_info("fwdalloc: job_prolog: job %u node %s: reading "
			   "the prolog's time limit: %s",
			   job, node, err.text);
	if (r <= 0)
		return 0;
	budget = secs * 0.9;
	if (worst >= budget)
		slurm_info("fwdalloc: job_prolog: job %u node %s: the "
			   "policy's node timeouts (%gs in all) do not fit "
			   "in %s=%u: cut to fit",
			   job, node, worst, key, secs);
	if (p->database.connect_timeout + 2 * p->database.timeout >
	    budget / 2) {
		double f =
			budget / 2 /
			(p->database.connect_timeout + 2 * p->database.timeout);

		p->database.connect_timeout *= f;
		p->database.timeout *= f;
	}
	return t0 + budget;
}

/* The remap's timeout cut to what the budget has left; -1 when nothing
 * is left. */
static int fit_remap(struct policy *p, double end)
{
	double left;

	if (end <= 0)
		return 0;
	left = end - fwd_clock_mono();
	if (left <= 0.1)
		return -1;
	if (p->remap.timeout > left)
		p->remap.timeout = left;
	return 0;
}

/* This node did what the decision says: tell EpilogSlurmctld. */
static void reported(const struct policy *p, const struct fa_job *fj,
		     const char *action)
{
	fwd_error_t err;

	if (fwdalloc_node_applied_note(p, fj->job_id, fj->node, action, &err) <
	    0)
		slurm_error("fwdalloc: job_prolog: job %u node %s: recording "
			    "the outcome: %s",
			    fj->job_id, fj->node, err.text);
}

int fwdalloc_job_prolog(spank_t sp)
{
	struct fa_job fj;
	struct policy *p = NULL;
	struct remap *r = NULL;
	struct fwdalloc_node_decision nd;
	fwd_error_t err;
	char names[1024], why[sizeof(err.text) + 32];
	double t0 = fwd_clock_mono(), end;
	int rv = 0, found;

	if (job_info_get(sp, "job_prolog", &fj) < 0)
		return 0;
	if (!(p = load_policy("job_prolog", fj.job_id)))
		return 0;
	if (p->access.mode == POLICY_MODE_OFF)
		goto out;
	end = fit_budget(p, t0, fj.job_id, fj.node);
	found = fwdalloc_node_decision(p, fj.job_id, fj.node, &nd, &err);
	if (nd.file_refused[0])
		slurm_error(
			"fwdalloc: job_prolog: job %u node %s: %s: read the "
			"decision from the database instead",
			fj.job_id, fj.node, nd.file_refused);
	if (found < 0) {
		slurm_error("fwdalloc: job_prolog: job %u node %s: request %s: "
			    "reading the decision: %s; keeping the default "
			    "mapping",
			    fj.job_id, fj.node, fj.request, err.text);
		snprintf(why, sizeof(why), "reading the decision: %s",
			 err.text);
		goto fail;
	}
	if (found == 0) {
		slurm_info("fwdalloc: job_prolog: job %u node %s: request %s: "
			   "no decision for this job; keeping the default "
			   "mapping",
			   fj.job_id, fj.node, fj.request);
		note(p, &fj, "default", NULL);
		reported(p, &fj, "default");
		goto out;
	}
	if (!strcmp(nd.action, FWD_ACTION_FALLBACK)) {
		/* The controller's decision failed (its audit record says
		 * why): nothing to apply, and the job is told. */
		slurm_info("fwdalloc: job_prolog: job %u node %s: request %s: "
			   "the controller fell back; keeping the default "
			   "mapping",
			   fj.job_id, fj.node, fj.request);
		note(p, &fj, FWD_ACTION_FALLBACK, NULL);
		reported(p, &fj, FWD_ACTION_FALLBACK);
		goto out;
	}
	if (fit_remap(p, end) < 0) {
		slurm_error("fwdalloc: job_prolog: job %u node %s: no time "
			    "left before slurmd's prolog time limit; keeping "
			    "the default mapping",
			    fj.job_id, fj.node);
		snprintf(why, sizeof(why), "no time left for the remap");
		goto fail;
	}
	if (nd.direct) {
		if (!(r = remap_create(&p->remap, &err)) ||
		    remap_direct(r, fj.node, fj.job_id, &err) < 0) {
			slurm_error("fwdalloc: job_prolog: job %u node %s: "
				    "applying direct file-system access: %s; "
				    "keeping the default mapping",
				    fj.job_id, fj.node, err.text);
			snprintf(why, sizeof(why), "applying direct: %s",
				 err.text);
			goto fail;
		}
		slurm_info("fwdalloc: job_prolog: job %u node %s: request %s: "
			   "action direct: applied direct file-system access, "
			   "no forwarder (driver %s, read from the %s)",
			   fj.job_id, fj.node, fj.request, remap_driver_name(r),
			   nd.source == FWDALLOC_SOURCE_FILE ? "decision file"
							     : "database");
		note(p, &fj, "direct", "");
		reported(p, &fj, "direct");
		goto out;
	}
	fwdalloc_node_names(&nd, names, sizeof(names));
	if (strcmp(nd.action, "scale") && strcmp(nd.action, "isolate") &&
	    strcmp(nd.action, "avoid-anomaly")) {
		slurm_info("fwdalloc: job_prolog: job %u node %s: request %s: "
			   "action %s: nothing to apply (forwarders %s)",
			   fj.job_id, fj.node, fj.request, nd.action, names);
		note(p, &fj, nd.action, names);
		reported(p, &fj, nd.action);
		goto out;
	}
	if (nd.n == 0) {
		slurm_error("fwdalloc: job_prolog: job %u node %s: the "
			    "decision maps no forwarder to this node; keeping "
			    "the default mapping",
			    fj.job_id, fj.node);
		snprintf(why, sizeof(why), "no forwarder for this node");
		goto fail;
	}
	if (!(r = remap_create(&p->remap, &err)) ||
	    remap_apply(r, fj.node, fj.job_id, nd.t, nd.n, &err) < 0) {
		slurm_error("fwdalloc: job_prolog: job %u node %s: applying "
			    "%s: %s; keeping the default mapping",
			    fj.job_id, fj.node, names, err.text);
		snprintf(why, sizeof(why), "applying: %s", err.text);
		goto fail;
	}
	slurm_info("fwdalloc: job_prolog: job %u node %s: request %s: "
		   "action %s: applied forwarders %s (driver %s, read from "
		   "the %s)",
		   fj.job_id, fj.node, fj.request, nd.action, names,
		   remap_driver_name(r),
		   nd.source == FWDALLOC_SOURCE_FILE ? "decision file"
						     : "database");
	note(p, &fj, nd.action, names);
	reported(p, &fj, nd.action);
	goto out;
fail:
	note(p, &fj, "fallback", NULL);
	/* Counted into the job's audit record by EpilogSlurmctld. */
	if (fwdalloc_node_fallback_note(p, fj.job_id, fj.node, why, &err) < 0)
		slurm_error("fwdalloc: job_prolog: job %u node %s: recording "
			    "the fallback: %s",
			    fj.job_id, fj.node, err.text);
	if (p->access.fail == POLICY_FAIL_CLOSED)
		rv = -1;
out:
	remap_destroy(r);
	policy_destroy(p);
	return rv;
}

/* The job's variables as the release carries them: the node epilog's
 * environment, whose node list is SLURM_NODELIST on 22.05 (24.11 sets
 * SLURM_JOB_NODELIST too; prep_script_slurmd.c). */
static const char *release_var(const char *name)
{
	const char *v = getenv(name);

	if (!v && !strcmp(name, "SLURM_JOB_NODELIST"))
		v = getenv("SLURM_NODELIST");
	return v;
}

/* Whether this node is the first of the job's nodes: 1, 0, or -1 (no
 * list, or one libslurm cannot read). */
static int first_node(const char *node)
{
	const char *list = release_var("SLURM_JOB_NODELIST");
	fwd_hostlist_t hl;
	char *first;
	int r;

	if (!list || !(hl = slurm_hostlist_create(list)))
		return -1;
	first = slurm_hostlist_shift(hl);
	r = first && !strcmp(first, node);
	free(first);
	slurm_hostlist_destroy(hl);
	return r;
}

/* Where the release goes: release.controllers, else the slurmctld hosts
 * of this node's slurm.conf; NULL (said in slurmd's log) when slurm.conf
 * names none that can be used. */
static const char *const *controllers(const struct policy *p,
				      const struct fa_job *fj, size_t *n)
{
	static char hosts[FWD_SLURM_CTLD_MAX][FWD_SLURM_HOST_LEN];
	static const char *list[FWD_SLURM_CTLD_MAX];
	fwd_error_t err;
	int k;

	if (p->release.controllers.count) {
		*n = p->release.controllers.count;
		return (const char *const *)p->release.controllers.items;
	}
	if ((k = fwd_slurm_controllers(NULL, hosts, &err)) < 0) {
		slurm_error("fwdalloc: job_epilog: job %u node %s: %s; the "
			    "release is left to fwdctl reconcile",
			    fj->job_id, fj->node, err.text);
		return NULL;
	}
	for (int i = 0; i < k; i++)
		list[i] = hosts[i];
	*n = (size_t)k;
	return list;
}

/*
 * Under release.port, the job's first node sends the job's release to
 * fwdallocd (service/node_release.h), so that slurmctld runs no
 * EpilogSlurmctld.  Whatever fails is logged and left to reconcile; the
 * epilog never fails for it.
 */
static void send_release(const struct policy *p, const struct fa_job *fj,
			 double t0)
{
	static char req[FWD_SVC_MSG_MAX];
	char msock[4096];
	const char *to = NULL;
	const char *const *hosts;
	fwd_error_t err;
	size_t len, n;
	int first, ms;

	if (!p->release.port)
		return;
	if ((first = first_node(fj->node)) <= 0) {
		if (first < 0)
			slurm_error("fwdalloc: job_epilog: job %u node %s: no "
				    "node list in the epilog's environment "
				    "(SLURM_JOB_NODELIST, SLURM_NODELIST): "
				    "the release is left to fwdctl reconcile",
				    fj->job_id, fj->node);
		return;
	}
	if (!(len = svc_request('E', t0, release_var, req, sizeof(req)))) {
		slurm_error("fwdalloc: job_epilog: job %u node %s: the job's "
			    "variables exceed %d bytes: the release is left to "
			    "fwdctl reconcile",
			    fj->job_id, fj->node, FWD_SVC_MSG_MAX);
		return;
	}
	/* The munged slurmd uses (AuthInfo=socket=...). */
	if ((ms = fwd_slurm_munge_socket(NULL, msock, sizeof(msock), &err)) <
	    0) {
		slurm_error("fwdalloc: job_epilog: job %u node %s: %s; the "
			    "release is left to fwdctl reconcile",
			    fj->job_id, fj->node, err.text);
		return;
	}
	if (!(hosts = controllers(p, fj, &n)))
		return;
	if (nrel_send(hosts, n, p->release.port, req, len, p->release.timeout,
		      ms ? msock : NULL, &to, &err) < 0) {
		slurm_error("fwdalloc: job_epilog: job %u node %s: release: "
			    "%s; left to fwdctl reconcile",
			    fj->job_id, fj->node, err.text);
		return;
	}
	slurm_info("fwdalloc: job_epilog: job %u node %s: release sent to "
		   "fwdallocd on %s",
		   fj->job_id, fj->node, to);
}

int fwdalloc_job_epilog(spank_t sp)
{
	struct fa_job fj;
	struct policy *p = NULL;
	struct remap *r = NULL;
	fwd_error_t err;
	int rv = 0;

	double t0 = fwd_clock_real();

	if (job_info_get(sp, "job_epilog", &fj) < 0)
		return 0;
	if (!(p = load_policy("job_epilog", fj.job_id)))
		return 0;
	fwdalloc_note_remove(p, fj.job_id, fj.node);
	/* Before the revert, which may take the driver's whole timeout: the
	 * controller releases while this node reverts. */
	send_release(p, &fj, t0);
	/* Revert unconditionally: it is a no-op where nothing was applied,
	 * and the decision may already be released by EpilogSlurmctld. */
	if (!(r = remap_create(&p->remap, &err)) ||
	    remap_revert(r, fj.node, fj.job_id, &err) < 0) {
		slurm_error("fwdalloc: job_epilog: job %u node %s: reverting: "
			    "%s",
			    fj.job_id, fj.node, err.text);
		if (p->access.fail == POLICY_FAIL_CLOSED)
			rv = -1;
		goto out;
	}
	slurm_info("fwdalloc: job_epilog: job %u node %s: request %s: "
		   "reverted (driver %s)",
		   fj.job_id, fj.node, fj.request, remap_driver_name(r));
out:
	remap_destroy(r);
	policy_destroy(p);
	return rv;
}
