/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl prolog / fwdctl epilog: slurmctld's PrologSlurmctld and
 * EpilogSlurmctld (through the installed wrappers, since Slurm passes no
 * arguments).  One decision per job, taken on the controller under a
 * global lock, persisted before any node prolog runs.
 *
 * Reliability: the work runs in a child process under the policy's
 * decide_timeout; the parent only waits and writes the audit line.  A
 * timeout, a crash, an unreachable database or any other error leaves the
 * job on its default mapping (no allocation rows: node prologs keep the
 * default) with an audit record "fallback: <error>", and exit 0, unless
 * the policy says fail: closed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "topology/topology.h"
#include "controller/audit.h"
#include "common/run.h"
#include "controller/ctl_store.h"
#include "cli/fwdctl.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/profile.h"

/* The named lock every controller decision takes (DESIGN.md). */
#define DECIDE_LOCK "decide" /* db_lock() scopes it: "<database>.decide" */

static double now_real(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The fields every record has, in the documented order. */
static json_t *record_base(const struct ctl_job *j, const char *event, double t)
{
	char when[40];
	json_t *r = json_object();

	audit_time(t, when, sizeof(when));
	json_object_set_new(r, "time", json_string(when));
	json_object_set_new(r, "ts", json_integer((json_int_t)t));
	json_object_set_new(r, "event", json_string(event));
	json_object_set_new(r, "job_id", json_string(j->job_id));
	json_object_set_new(r, "user", json_string(j->user));
	json_object_set_new(r, "account", str_or_null(j->account));
	json_object_set_new(r, "partition", str_or_null(j->partition));
	json_object_set_new(r, "name", json_string(j->name));
	json_object_set_new(r, "nodes", str_or_null(j->nodes));
	json_object_set_new(r, "request", json_string(j->request_name));
	return r;
}

static json_t *names_json(const struct topology *t, const uint32_t *idx,
			  size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      json_string(t->forwarders[idx[i]].name));
	return a;
}

/* Default forwarders of the job's nodes, for fallback records; empty when
 * the topology or node list is unusable. */
static json_t *defaults_json(const struct topology *t, const char *nodes)
{
	json_t *a = json_array();
	uint32_t *ids = NULL, *seen = NULL;
	size_t n = 0, ns = 0;

	if (!t || !nodes || alloc_job_nodes(t, nodes, &ids, &n, NULL) < 0)
		return a;
	seen = calloc(n ? n : 1, sizeof(*seen));
	for (size_t i = 0; seen && i < n; i++) {
		int32_t f = t->node_forwarder[ids[i]];
		bool dup = false;

		if (f < 0)
			continue;
		for (size_t k = 0; k < ns; k++)
			dup |= seen[k] == (uint32_t)f;
		if (!dup) {
			seen[ns++] = (uint32_t)f;
			json_array_append_new(
				a, json_string(t->forwarders[f].name));
		}
	}
	free(seen);
	free(ids);
	return a;
}

static json_t *fallback_record(const struct ctl_job *j,
			       const struct topology *t, const char *why,
			       double t0)
{
	double now = now_real();
	json_t *r = record_base(j, "prolog", now);
	char outcome[1100];
	json_t *defs = defaults_json(t, j->nodes);

	snprintf(outcome, sizeof(outcome), "fallback: %s", why);
	json_object_set_new(r, "action", json_string("default"));
	json_object_set_new(r, "reasons", json_pack("[s]", outcome));
	json_object_set_new(r, "inputs", json_null());
	json_object_set_new(r, "forwarders_before", json_deep_copy(defs));
	json_object_set_new(r, "forwarders_after", defs);
	json_object_set_new(r, "mapping", json_array());
	json_object_set_new(r, "outcome", json_string(outcome));
	json_object_set_new(r, "decision", json_null());
	json_object_set_new(r, "elapsed_us",
			    json_integer((json_int_t)((now - t0) * 1e6)));
	return r;
}

static const char *outcome_of(const struct alloc_decision *d)
{
	switch (d->action) {
	case ALLOC_ACT_SCALE:
	case ALLOC_ACT_ISOLATE:
	case ALLOC_ACT_AVOID_ANOMALY:
		return "applied";
	case ALLOC_ACT_SHADOW:
		return "shadow";
	default:
		return "default";
	}
}

static json_t *decision_record(const struct ctl_job *j,
			       const struct topology *t,
			       const struct alloc_decision *d, double now)
{
	json_t *r = record_base(j, "prolog", now);
	json_t *reasons = json_array(), *mapping = json_array();
	json_t *dec = NULL;
	char *djson = alloc_decision_to_json(d, 0);

	if (djson) {
		dec = json_loads(djson, 0, NULL);
		free(djson);
	}
	for (size_t i = 0; i < d->n_reasons; i++)
		json_array_append_new(reasons, json_string(d->reasons[i]));
	if (j->request == ALLOC_REQ_NONE)
		json_array_append_new(reasons,
				      json_string("upgrade not requested"));
	for (size_t i = 0; i < d->n_mapping; i++)
		json_array_append_new(
			mapping,
			json_pack("{s:s,s:s}", "nodes", d->mapping[i].nodes,
				  "forwarder",
				  t->forwarders[d->mapping[i].forwarder].name));
	json_object_set_new(r, "action",
			    json_string(alloc_action_name(d->action)));
	json_object_set_new(r, "reasons", reasons);
	json_object_set_new(
		r, "inputs",
		dec && json_object_get(dec, "profile")
			? json_incref(json_object_get(dec, "profile"))
			: json_null());
	json_object_set_new(r, "forwarders_before",
			    names_json(t, d->defaults, d->n_defaults));
	/* Shadow changes nothing: the job stays on its defaults. */
	if (d->action == ALLOC_ACT_SHADOW)
		json_object_set_new(r, "forwarders_after",
				    names_json(t, d->defaults, d->n_defaults));
	else
		json_object_set_new(
			r, "forwarders_after",
			names_json(t, d->forwarders, d->n_forwarders));
	json_object_set_new(r, "mapping", mapping);
	json_object_set_new(r, "outcome", json_string(outcome_of(d)));
	json_object_set_new(r, "policy_digest", json_string(d->policy_digest));
	json_object_set_new(r, "decision", dec ? dec : json_null());
	json_object_set_new(r, "elapsed_us",
			    json_integer((json_int_t)d->elapsed_us));
	return r;
}

struct run {
	struct fwdctl_ctx *ctx;
	struct policy *pol;
	struct ctl_job job;
	double t0;
};

/* Child result protocol: "A <json>" (decided) or "F <json>" (fallback). */
static int send_record(int fd, char kind, const json_t *r)
{
	char *s = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t n, off = 0;
	int rv = -1;

	if (!s)
		return -1;
	if (write(fd, kind == 'A' ? "A " : "F ", 2) != 2)
		goto out;
	n = strlen(s);
	while (off < n) {
		ssize_t w = write(fd, s + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto out;
		off += (size_t)w;
	}
	rv = 0;
out:
	free(s);
	return rv;
}

static int prolog_child(void *arg, int fd)
{
	struct run *rn = arg;
	const struct policy *p = rn->pol;
	struct ctl_job *j = &rn->job;
	struct topology *t;
	struct alloc_ctx *cx = NULL;
	struct alloc_ledger *l = NULL;
	struct alloc_decision *d = NULL;
	struct alloc_profile prof;
	struct alloc_bw_point bw[PROFILE_MAX_BW];
	struct profile_job pj;
	struct profile_result pres;
	struct alloc_health health = {NULL, NULL};
	enum alloc_health_state *hf = NULL, *ho = NULL;
	struct alloc_job aj;
	struct db *db = NULL;
	uint32_t *ids = NULL;
	size_t n_ids = 0;
	json_t *rec = NULL;
	fwd_error_t err = {""};
	int have_prof = 0, locked = 0, in_tx = 0, rc = 1, cause;
	double now;

	memset(&prof, 0, sizeof(prof));
	if (!(t = fwdctl_topology(rn->ctx))) {
		errprintf(&err, "topology %s could not be loaded", p->topology);
		goto fallback;
	}
	if (!j->nodes) {
		errprintf(&err, "SLURM_JOB_NODELIST is not set");
		goto fallback;
	}
	if (alloc_job_nodes(t, j->nodes, &ids, &n_ids, &err) < 0)
		goto fallback;
	if (!j->n_nodes)
		j->n_nodes = (uint32_t)n_ids;
	if (!(cx = alloc_ctx_create(t, &err)) ||
	    !(l = alloc_ledger_create(t))) {
		if (!err.text[0])
			errprintf(&err, "allocator: %s", strerror(errno));
		goto fallback;
	}
	if (!(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err)))
		goto fallback;
	now = now_real();
	if (ctl_store_job_start(db, j, now, &err) < 0)
		goto fallback;
	/* The profiler's prediction: the last runs at the nearest scale,
	 * else the stored (imported) profile, scaled to this job. */
	pj.user = j->user;
	pj.account = j->account;
	pj.name = j->name;
	pj.partition = j->partition;
	pj.nodes = j->n_nodes;
	have_prof = profile_lookup(db, p, &pj, (int64_t)now, &pres, &err);
	if (have_prof < 0)
		goto fallback;
	if (have_prof > 0 && pres.source != PROFILE_SOURCE_NONE)
		profile_to_alloc(&pres.profile, &prof, bw);
	else
		have_prof = 0;
	if (db_lock(db, DECIDE_LOCK, p->database.lock_timeout, &err) < 0)
		goto fallback;
	locked = 1;
	if (db_begin(db, &err) < 0)
		goto fallback;
	in_tx = 1;
	if (ctl_store_ledger(db, l, NULL, &err) < 0 ||
	    ctl_store_health(db, t, &hf, &ho, &err) < 0)
		goto fallback;
	health.forwarder = hf;
	health.ost = ho;

	memset(&aj, 0, sizeof(aj));
	aj.job_id = j->job_id;
	aj.user = j->user;
	aj.account = j->account;
	aj.name = j->name;
	aj.partition = j->partition;
	aj.nodes = j->nodes;
	aj.node_ids = ids;
	aj.n_nodes = n_ids;
	aj.request = j->request;
	aj.profile = have_prof ? &prof : NULL;
	/* A requeued job that still holds rows gets them back as they are
	 * (alloc_decide answers from the ledger); nothing new is written. */
	now = now_real();
	if (!(d = alloc_decide(cx, p, l, &health, &aj, now, &err)))
		goto fallback;
	d->elapsed_us = (uint64_t)((now_real() - rn->t0) * 1e6);
	if (!alloc_ledger_find(l, j->job_id) &&
	    ctl_store_allocation(db, t, d, j, now, &err) < 0)
		goto fallback;
	rec = decision_record(j, t, d, now);
	if (p->audit.database && ctl_store_audit(db, rec, &err) < 0)
		goto fallback;
	if (db_commit(db, &err) < 0)
		goto fallback;
	in_tx = 0;
	if (send_record(fd, 'A', rec) < 0)
		goto out;
	rc = 0;
	goto out;

fallback:
	cause = errno; /* what failed, before cleanup can change errno */
	if (in_tx)
		db_rollback(db);
	in_tx = 0;
	json_decref(rec);
	rec = fallback_record(j, t, err.text[0] ? err.text : "unknown error",
			      rn->t0);
	/* The database row is best effort: the database may be the very
	 * thing that failed.  The file record is written by the parent. */
	if (db && p->audit.database && !db_err_unavailable(cause)) {
		fwd_error_t e2;

		ctl_store_audit(db, rec, &e2);
	}
	rc = send_record(fd, 'F', rec) < 0 ? 1 : 0;
out:
	if (locked)
		db_unlock(db, DECIDE_LOCK, NULL);
	db_close(db);
	json_decref(rec);
	alloc_decision_destroy(d);
	alloc_ledger_destroy(l);
	alloc_ctx_destroy(cx);
	free(hf);
	free(ho);
	free(ids);
	return rc;
}

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
"        mapping and the audit record says \"fallback: <error>\".\n"
"epilog  releases the job's allocation (idempotent) and records its end.\n"
"\n"
"Exit status:\n"
"  0  done, or failed open (the audit record says why)\n"
"  1  failed while the policy says access.fail: closed (Slurm then\n"
"     requeues the job)\n"
"  2  not run by Slurm (no SLURM_JOB_ID) or bad usage\n");
}
/* clang-format on */

/* One connection, one insert, each bounded by database.timeout. */
static void audit_db_best_effort(const struct policy *p, const json_t *rec)
{
	fwd_error_t err;
	struct db *db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err);

	if (!db || ctl_store_audit(db, rec, &err) < 0)
		fwdctl_err("audit table: %s", err.text);
	db_close(db);
}

/* Parent half shared by prolog and epilog: run, then write the line. */
static int run_bounded_and_audit(struct run *rn, int (*child)(void *, int),
				 const char *event)
{
	const struct policy *p = rn->pol;
	fwd_error_t err = {""}, aerr;
	char *out = NULL;
	json_t *rec = NULL;
	int fallback = 1, rc, cause;

	rc = ctl_run_bounded(p->decision.decide_timeout, child, rn, &out, &err);
	cause = errno;
	if (rc == 0 && out && (out[0] == 'A' || out[0] == 'F') &&
	    out[1] == ' ') {
		fallback = out[0] == 'F';
		if (audit_append_line(p->audit.file, out + 2, &aerr) < 0)
			fwdctl_err("%s %s: %s", event, rn->job.job_id,
				   aerr.text);
	} else {
		char why[1100];

		snprintf(why, sizeof(why), "controller %s %s", event,
			 err.text[0] ? err.text : "produced no result");
		rec = fallback_record(&rn->job, NULL, why, rn->t0);
		if (strcmp(event, "prolog"))
			json_object_set_new(rec, "event", json_string(event));
		if (audit_append(p->audit.file, rec, &aerr) < 0)
			fwdctl_err("%s %s: %s", event, rn->job.job_id,
				   aerr.text);
		/* The worker died (not hung): the database is likely fine,
		 * so it gets the same record.  After a timeout it may be
		 * the database that hangs: the file record must do. */
		if (cause != ETIMEDOUT && p->audit.database)
			audit_db_best_effort(p, rec);
		fwdctl_err("%s %s: %s", event, rn->job.job_id, why);
	}
	json_decref(rec);
	free(out);
	/* Only the prolog can fail closed: a failed release leaves rows
	 * that reconcile frees, and failing the epilog would not undo
	 * anything. */
	if (fallback && p->access.fail == POLICY_FAIL_CLOSED &&
	    !strcmp(event, "prolog"))
		return FWD_EXIT_INVALID;
	return FWD_EXIT_OK;
}

static int epilog_child(void *arg, int fd)
{
	struct run *rn = arg;
	const struct policy *p = rn->pol;
	struct ctl_job *j = &rn->job;
	struct db *db = NULL;
	uint64_t released = 0;
	fwd_error_t err = {""};
	json_t *rec = NULL;
	char outcome[1100];
	int rc = 1, failed = 0;
	double now = now_real();

	if (!(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err)) ||
	    ctl_store_release(db, j->job_num, "epilog", now, &released, &err) <
		    0 ||
	    ctl_store_job_end(db, j->job_num, "COMPLETED", now, &err) < 0)
		failed = 1;
	rec = record_base(j, "epilog", now);
	if (failed)
		snprintf(outcome, sizeof(outcome), "fallback: %s", err.text);
	else
		snprintf(outcome, sizeof(outcome),
			 "released %llu allocation "
			 "row(s)",
			 (unsigned long long)released);
	json_object_set_new(rec, "action", json_string("release"));
	json_object_set_new(rec, "reasons", json_array());
	json_object_set_new(rec, "inputs", json_null());
	json_object_set_new(rec, "forwarders_before", json_null());
	json_object_set_new(rec, "forwarders_after", json_null());
	json_object_set_new(rec, "mapping", json_null());
	json_object_set_new(rec, "outcome", json_string(outcome));
	json_object_set_new(rec, "decision", json_null());
	json_object_set_new(
		rec, "elapsed_us",
		json_integer((json_int_t)((now_real() - rn->t0) * 1e6)));
	if (!failed && p->audit.database)
		ctl_store_audit(db, rec, &err);
	rc = send_record(fd, failed ? 'F' : 'A', rec) < 0 ? 1 : 0;
	json_decref(rec);
	db_close(db);
	return rc;
}

static int cmd_prolog_epilog(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	bool epilog = !strcmp(argv[0], "epilog");
	struct run rn = {.ctx = ctx, .t0 = now_real()};
	fwd_error_t err;

	if (fwdctl_wants_help(argc, argv)) {
		prolog_usage(stdout);
		return FWD_EXIT_OK;
	}
	if (argc > 1) {
		/* Slurm passes no arguments: the job comes from the
		 * environment. */
		fwdctl_err("%s: unexpected argument '%s'; see 'fwdctl %s "
			   "--help'",
			   argv[0], argv[1], argv[0]);
		return FWD_EXIT_USAGE;
	}
	if (ctl_job_from_env(&rn.job, &err) < 0) {
		fwdctl_err("%s: %s", argv[0], err.text);
		return FWD_EXIT_USAGE;
	}
	rn.pol = fwdctl_policy(ctx);
	if (!rn.pol) {
		/* No policy: nothing to decide with; the job runs on the
		 * default mapping.  The built-in audit path records it. */
		struct policy *def = policy_defaults();
		json_t *rec;
		fwd_error_t aerr;

		if (!def)
			return FWD_EXIT_OK;
		rec = fallback_record(&rn.job, NULL,
				      "the policy could not be loaded", rn.t0);
		if (audit_append(def->audit.file, rec, &aerr) < 0)
			fwdctl_err("%s", aerr.text);
		json_decref(rec);
		policy_destroy(def);
		return FWD_EXIT_OK;
	}
	if (rn.pol->access.mode == POLICY_MODE_OFF && !epilog)
		return FWD_EXIT_OK;
	return run_bounded_and_audit(&rn, epilog ? epilog_child : prolog_child,
				     argv[0]);
}

FWDCTL_COMMAND(
	cmd_prolog, .name = "prolog",
	.summary = "PrologSlurmctld: decide and record a job's forwarders",
	.order = 60, .run = cmd_prolog_epilog);

FWDCTL_COMMAND(cmd_epilog, .name = "epilog",
	       .summary = "EpilogSlurmctld: release a job's forwarders",
	       .order = 60, .run = cmd_prolog_epilog);
