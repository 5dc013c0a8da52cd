/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PrologSlurmctld (controller/hooks.h): the decision for one job at
 * launch, in the bounded child.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/hook_run.h"
#include "controller/ledger_store.h"
#include "controller/profile_ctl.h"
#include "controller/publish.h"
#include "controller/reconcile.h"
#include "db/db.h"
#include "monitor/health.h"
#include "policies/policy.h"
#include "topology/topology.h"

int ctl_load_health(struct db *db, const struct policy *p,
		    const struct topology *t, enum fwd_health **fwd,
		    enum fwd_health **ost, fwd_error_t *err)
{
	struct health_entry *h = NULL;
	size_t n = 0;
	int rv = -1;

	*fwd = calloc(t->n_forwarders ? t->n_forwarders : 1, sizeof(**fwd));
	*ost = calloc(t->n_osts ? t->n_osts : 1, sizeof(**ost));
	if (!*fwd || !*ost) {
		errprintf(err, "health: %s", strerror(errno));
		goto out;
	}
	if (health_db_load(db, p->anomaly.window, &h, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		enum fwd_health s = h[i].state;
		long k;

		if (s == FWD_HEALTH_OK)
			continue;
		if (h[i].kind == HEALTH_FORWARDER &&
		    (k = topo_forwarder_index(t, h[i].name)) >= 0)
			(*fwd)[k] = s;
		else if (h[i].kind == HEALTH_OST &&
			 (k = topo_ost_index(t, h[i].name)) >= 0)
			(*ost)[k] = s;
	}
	rv = 0;
out:
	if (rv < 0) {
		errprefix(err, "loading forwarder health");
		free(*fwd);
		free(*ost);
		*fwd = *ost = NULL;
	}
	free(h);
	return rv;
}

/*
 * How long a prolog refused for lack of pool waits for slurmctld to say
 * which jobs still run (controller/reconcile.h): short, it is the launch
 * path and the decision lock is held.
 */
#define POOL_ASK_TIMEOUT 1.0

bool ctl_pool_refused(const struct alloc_decision *d)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		if (!strncmp(d->reasons[i], "scale refused: ", 15) ||
		    !strncmp(d->reasons[i], "isolation refused: ", 19))
			return true;
	return false;
}

void ctl_note_pool_holders(struct db *db, const struct alloc_ledger *l,
			   const struct ctl_job *j, json_t *rec)
{
	char buf[1024];
	fwd_error_t err;
	json_t *reasons = json_object_get(rec, "reasons");

	if (ctl_pool_holders(db, l, j->job_num, POOL_ASK_TIMEOUT,
			     fwd_clock_real(), buf, sizeof(buf), &err) < 0)
		snprintf(buf, sizeof(buf), "pool: holders unknown: %.900s",
			 err.text);
	if (json_is_array(reasons))
		json_array_append_new(reasons, json_string(buf));
}

/*
 * The prolog's phases (ctl_outcome.timing), measured only when
 * FWDALLOC_PROLOG_TIMING is set.  A phase entered again (a retried
 * transaction) adds up.
 */
enum phase {
	PH_LOAD,
	PH_NODES,
	PH_CONNECT,
	PH_RECORD,
	PH_LOCK,
	PH_LEDGER,
	PH_DECIDE,
	PH_PERSIST,
	PH_AUDIT,
	PH_COMMIT,
	PH_PUBLISH,
	PH_N
};
static const char *const phase_names[PH_N] = {
	"load",	  "nodes",   "connect", "record", "lock",    "ledger",
	"decide", "persist", "audit",	"commit", "publish",
};

struct phases {
	bool on;
	double t0, last, ms[PH_N];
};

/* The time since the last mark goes to phase k. */
static void mark(struct phases *ph, enum phase k)
{
	double now;

	if (!ph->on)
		return;
	now = fwd_clock_real();
	ph->ms[k] += (now - ph->last) * 1e3;
	ph->last = now;
}

static void send_phases(const struct phases *ph, int fd)
{
	char buf[sizeof(((struct ctl_outcome *)0)->timing)];
	size_t off = 0;

	if (!ph->on)
		return;
	for (int k = 0; k < PH_N && off < sizeof(buf); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"%s=%.3f ", phase_names[k], ph->ms[k]);
	if (off < sizeof(buf))
		snprintf(buf + off, sizeof(buf) - off, "total=%.3f",
			 (fwd_clock_real() - ph->t0) * 1e3);
	ctl_hook_send_timing(fd, buf);
}

static int prolog_child(void *arg, int fd)
{
	struct ctl_hook *h = arg;
	const struct policy *p = h->p;
	const struct topology *t = h->t;
	struct ctl_job job = *h->j, *j = &job;
	struct alloc_ctx *cx = NULL;
	struct alloc_ledger *l = NULL;
	struct alloc_decision *d = NULL;
	struct alloc_profile prof;
	struct alloc_bw_point bw[PROFILE_MAX_BW];
	struct profile_job pj;
	struct profile_result pres;
	struct alloc_health health = {NULL, NULL};
	enum fwd_health *hf = NULL, *ho = NULL;
	struct alloc_job aj;
	/* d's rows, written in the transaction (NULL: none written) */
	struct ledger_alloc_row *rows = NULL;
	size_t n_rows = 0;
	struct db *db = NULL;
	uint32_t *ids = NULL;
	size_t n_ids = 0;
	json_t *rec = NULL;
	fwd_error_t err = {""};
	int have_prof = 0, in_tx = 0, rc = 1, cause;
	int committing = 0, r;
	/* Only a failure of the database trips its breaker: not a job
	 * refused before any connection (its nodes, the topology). */
	bool db_tried = false;
	unsigned int attempt = 1;
	double now;
	struct phases ph = {.on = getenv("FWDALLOC_PROLOG_TIMING") != NULL};

	memset(&prof, 0, sizeof(prof));
	ph.t0 = ph.last = h->t0;
	mark(&ph, PH_LOAD);
	if (j->bad_request[0]) {
		/* The user's value, not fwdalloc, is at fault: no decision,
		 * the default mapping, and a record saying why (the job is
		 * recorded too when the database answers). */
		if ((db = db_connect_current(&p->database, DB_ROLE_CONTROLLER,
					     &err)))
			ledger_store_job_start(db, j, fwd_clock_real(), &err);
		errprintf(&err, "%s", j->bad_request);
		errno = EINVAL;
		goto fallback;
	}
	if (!t) {
		errprintf(&err, "topology %s could not be loaded", p->topology);
		goto fallback;
	}
	if (!j->nodes) {
		errprintf(&err, "SLURM_JOB_NODELIST is not set");
		goto fallback;
	}
	if (!(cx = alloc_ctx_create(t, &err)) ||
	    !(l = alloc_ledger_create(t))) {
		if (!err.text[0])
			errprintf(&err, "allocator: %s", strerror(errno));
		goto fallback;
	}
	if (alloc_ctx_job_nodes(cx, j->nodes, &ids, &n_ids, &err) < 0)
		goto fallback;
	if (!j->n_nodes)
		j->n_nodes = (uint32_t)n_ids;
	mark(&ph, PH_NODES);
	db_tried = true;
	if (!(db = db_connect_current(&p->database, DB_ROLE_CONTROLLER, &err)))
		goto fallback;
	mark(&ph, PH_CONNECT);
again:
	now = fwd_clock_real();
	if (ledger_store_job_start(db, j, now, &err) < 0)
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
	mark(&ph, PH_RECORD);
	/* Health states before the lock: they change by scans minutes
	 * apart, and every round trip under the lock delays every other
	 * job's launch. */
	if (ctl_load_health(db, p, t, &hf, &ho, &err) < 0)
		goto fallback;
	health.forwarder = hf;
	health.ost = ho;
	/* The decision's transaction, holding the decision lock. */
retry:
	if (ledger_store_lock(db, p->database.lock_timeout, &err) < 0)
		goto fallback;
	in_tx = 1;
	mark(&ph, PH_LOCK);
	if (ledger_store_load(db, l, NULL, &err) < 0)
		goto fallback;
	mark(&ph, PH_LEDGER);

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
	/* A requeued job that still holds rows for the same nodes gets
	 * them back as they are (alloc_decide answers from the ledger);
	 * nothing new is written.  Run again for other nodes, it is
	 * decided again: its rows are released and the new ones written in
	 * this transaction, so the ledger and the decision file (published
	 * from the rows) map the nodes it has now. */
	now = fwd_clock_real();
	if (!(d = alloc_decide(cx, p, l, &health, &aj, now, &err)))
		goto fallback;
	d->elapsed_us = (uint64_t)((fwd_clock_real() - h->t0) * 1e6);
	mark(&ph, PH_DECIDE);
	if (d->redecided &&
	    ledger_store_release(db, j->job_num, "redecided: other nodes", now,
				 NULL, &err) < 0)
		goto fallback;
	if ((d->redecided || !alloc_ledger_find(l, j->job_id)) &&
	    (ledger_store_decision_rows(t, d, j, &rows, &n_rows, &err) < 0 ||
	     ledger_store_write(db, d, j, rows, n_rows, now, &err) < 0))
		goto fallback;
	mark(&ph, PH_PERSIST);
	rec = audit_record_decision(j, t, d, now);
	if (rec && ctl_pool_refused(d))
		ctl_note_pool_holders(db, l, j, rec);
	if (p->audit.database && audit_store(db, rec, &err) < 0)
		goto fallback;
	mark(&ph, PH_AUDIT);
	if (ctl_hook_mark_commit(fd) < 0) {
		errprintf(&err, "result pipe: %s", strerror(errno));
		goto fallback;
	}
	committing = 1;
	if (db_commit(db, &err) < 0)
		goto fallback;
	in_tx = 0;
	mark(&ph, PH_COMMIT);
	/* Without the file the node prologs read the database instead. */
	if (ctl_publish_decision(
		    db, p, j, d->action == FWD_ACT_DIRECT,
		    rows ? &(struct ctl_pub_written){t, d, rows, n_rows} : NULL,
		    &err) < 0)
		json_object_set_new(rec, "decision_file",
				    json_string(err.text));
	mark(&ph, PH_PUBLISH);
	send_phases(&ph, fd);
	if (ctl_hook_send(fd, false, rec) < 0)
		goto out;
	rc = 0;
	goto out;

fallback:
	cause = errno; /* what failed, before cleanup can change errno */
	/* A cluster: the server was lost; go on through another one (all
	 * that ran before the transaction may run again).  Lost at COMMIT,
	 * the rows tell whether the decision took effect; if they are not
	 * there, fall back. */
	r = db && db_err_unavailable(cause)
		    ? ledger_store_tx_reconnect(&db, &p->database, cause,
						&attempt, &err)
		    : 0;
	if (r < 0) {
		in_tx = 0;
		cause = errno;
	} else if (r > 0) {
		/* The lost connection held the lock and the transaction. */
		if (committing) {
			in_tx = 0;
			if (ledger_store_has_rows(db, j->job_num, &err) > 0) {
				if (ctl_hook_send(fd, false, rec) < 0)
					goto out;
				rc = 0;
				goto out;
			}
			errprefix(&err, "lost at COMMIT, not in the ledger");
		}
	}
	if ((r > 0 && !committing) ||
	    (in_tx && ledger_store_tx_retry(db, cause, &attempt, &err))) {
		/* Rolled back after a conflict, or lost with the server it
		 * ran on: decide again afresh. */
		in_tx = committing = 0;
		json_decref(rec);
		rec = NULL;
		ledger_store_decision_rows_free(d, rows, n_rows);
		rows = NULL;
		n_rows = 0;
		alloc_decision_destroy(d);
		d = NULL;
		alloc_ledger_destroy(l);
		memset(&err, 0, sizeof(err));
		if ((l = alloc_ledger_create(t)) && r > 0) {
			/* A new connection: everything is read again. */
			free(hf);
			free(ho);
			hf = ho = NULL;
			health.forwarder = health.ost = NULL;
			goto again;
		}
		if (l)
			goto retry;
		errprintf(&err, "allocator: %s", strerror(errno));
		cause = errno;
	}
	if (in_tx)
		db_rollback(db);
	in_tx = 0;
	ctl_publish_withdraw(p, j);
	json_decref(rec);
	now = fwd_clock_real();
	rec = audit_record_fallback(j, t, "prolog",
				    err.text[0] ? err.text : "unknown error",
				    now, (uint64_t)((now - h->t0) * 1e6));
	/* The database row is best effort: the database may be the very
	 * thing that failed.  The file record is written by the parent. */
	/* The database did not answer: the next prologs skip it for a
	 * while (database.breaker) instead of each waiting as long. */
	if (db_tried && db_err_unavailable(cause) && !j->bad_request[0])
		ctl_breaker_trip(p);
	if (db && p->audit.database && !db_err_unavailable(cause)) {
		fwd_error_t e2;

		audit_store(db, rec, &e2);
	}
	rc = ctl_hook_send(fd, true, rec) < 0 ? 1 : 0;
out:
	db_close(db);
	json_decref(rec);
	ledger_store_decision_rows_free(d, rows, n_rows);
	alloc_decision_destroy(d);
	alloc_ledger_destroy(l);
	alloc_ctx_destroy(cx);
	free(hf);
	free(ho);
	free(ids);
	return rc;
}

void ctl_prolog(const struct policy *p, const struct topology *t,
		const struct ctl_job *j, double t0, struct ctl_outcome *out)
{
	struct ctl_hook h = {.p = p, .t = t, .j = j, .t0 = t0};

	if (ctl_hook_skip_db(&h, "prolog", out))
		return;
	ctl_hook_run(&h, prolog_child, "prolog", out);
}
