/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batches of controller prologs in a process that lives long
 * (controller/launcher.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/hook_run.h"
#include "controller/launcher.h"
#include "controller/ledger_store.h"
#include "controller/profile_ctl.h"
#include "controller/publish.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/profile.h"
#include "topology/topology.h"

/* Profiles kept (a power of two): the applications launched within
 * CTL_PROFILE_TTL, at their scales. */
#define PROFILE_SLOTS 1024

/* A connection unused this long is checked (one round trip) before use:
 * the server may have been restarted or have closed it meanwhile. */
#define IDLE_PING 30.0

struct cached_profile {
	bool used;
	int have; /* profile_lookup()'s 1 or 0 */
	uint32_t nodes;
	double at;
	struct profile_result res;
};

struct ctl_launcher {
	const struct policy *p;
	const struct topology *t;
	struct alloc_ctx *cx;
	struct db *db;
	double db_used;
	struct cached_profile *profiles;
	/* The health and the forwarders' last release times (the ledger's
	 * least-recently-used order) of the last batch, read at health_at
	 * (0: none). */
	enum fwd_health *hf, *ho;
	double *last_used;
	double health_at;
	/* The ledger as of its mark, brought up to date under the lock of
	 * each batch (ledger_store_load_changes()); read whole at ledger_at
	 * (0: not yet) and again once CTL_LEDGER_TTL has passed. */
	struct alloc_ledger *ledger;
	struct ledger_mark mark;
	double ledger_at;
	struct ctl_launcher_stats st;
};

/* One job of the batch being decided. */
struct slot {
	const struct ctl_launch *in;
	struct ctl_outcome *out;
	struct ctl_job job; /* in->job, n_nodes filled in */
	uint32_t *ids;
	size_t n_ids;
	bool live; /* still to be decided */
	bool have_prof;
	struct alloc_profile prof;
	struct alloc_bw_point bw[PROFILE_MAX_BW];
	struct alloc_decision *d;
	/* d's rows, written in the batch's transaction (NULL: none written) */
	struct ledger_alloc_row *rows;
	size_t n_rows;
	json_t *rec;
	struct ctl_pub pub; /* its decision file, until finished */
};

struct ctl_launcher *ctl_launcher_create(const struct policy *p,
					 const struct topology *t,
					 fwd_error_t *err)
{
	struct ctl_launcher *L = calloc(1, sizeof(*L));

	if (!L || !(L->profiles = calloc(PROFILE_SLOTS, sizeof(*L->profiles))))
		goto nomem;
	L->p = p;
	L->t = t;
	if (t && !(L->last_used = calloc(t->n_forwarders ? t->n_forwarders : 1,
					 sizeof(*L->last_used))))
		goto nomem;
	if (t && !(L->cx = alloc_ctx_create(t, err))) {
		ctl_launcher_destroy(L);
		return NULL;
	}
	return L;
nomem:
	errprintf(err, "launcher: %s", strerror(errno));
	ctl_launcher_destroy(L);
	return NULL;
}

void ctl_launcher_destroy(struct ctl_launcher *L)
{
	if (!L)
		return;
	db_close(L->db);
	alloc_ledger_destroy(L->ledger);
	alloc_ctx_destroy(L->cx);
	free(L->profiles);
	free(L->hf);
	free(L->ho);
	free(L->last_used);
	free(L);
}

void ctl_launcher_stats(const struct ctl_launcher *L,
			struct ctl_launcher_stats *st)
{
	*st = L->st;
}

/* Milliseconds since *t, which becomes now. */
static double lap(double *t)
{
	double now = fwd_clock_real(), ms = (now - *t) * 1e3;

	*t = now;
	return ms;
}

static uint64_t elapsed_us(double t0, double now)
{
	return now > t0 ? (uint64_t)((now - t0) * 1e6) : 0;
}

/* The job's hook has stopped waiting (or is about to): it records the
 * job itself (ctl_prolog_abandon()), so the launcher must not. */
static bool hook_gone(const struct slot *s)
{
	return s->in->hook_deadline > 0 &&
	       fwd_clock_real() >= s->in->hook_deadline;
}

/* No record for this job: its hook's is the one (launcher.h). */
static void leave_to_hook(struct slot *s, const char *why)
{
	ctl_note(s->out,
		 "prolog %s: %s; its hook had stopped waiting, and records "
		 "the fallback itself",
		 s->job.job_id, why);
	s->out->fallback = true;
	s->out->unanswered = true;
}

/* The job falls back for `why`: its record in the file (and, with
 * db_ok, the table), its outcome. */
static void fall_back(struct ctl_launcher *L, struct slot *s, const char *why,
		      bool db_ok)
{
	const struct policy *p = L->p;
	fwd_error_t aerr;
	double now = fwd_clock_real();
	json_t *rec;
	int order;

	s->live = false;
	L->st.fell_back++;
	if (hook_gone(s)) {
		leave_to_hook(s, why);
		return;
	}
	/* The nodes keep their defaults and tell the job so
	 * (FWDALLOC_ACTION=fallback), as after `fwdctl prolog`. */
	if (ctl_publish_fallback(p, &s->job, &aerr) < 0)
		ctl_note(s->out, "prolog %s: %s", s->job.job_id, aerr.text);
	rec = audit_record_fallback(&s->job, L->t, "prolog", why, now,
				    elapsed_us(s->in->t0, now));
	/* The job row (history), best effort: a failed batch's
	 * transaction took it back. */
	if (db_ok && L->db &&
	    ledger_store_job_start(L->db, &s->job, now, &aerr) < 0)
		ctl_note(s->out, "prolog %s: %s", s->job.job_id, aerr.text);
	/* The record, ordered against the hook's should it give up now. */
	order = audit_order_lock(p->audit.file);
	if (hook_gone(s)) {
		audit_order_unlock(order);
		json_decref(rec);
		leave_to_hook(s, why);
		return;
	}
	if (rec && db_ok && L->db && p->audit.database &&
	    audit_store(L->db, rec, &aerr) < 0)
		ctl_note(s->out, "audit table: %s", aerr.text);
	if (!rec || audit_append(p->audit.file, rec, &aerr) < 0) {
		ctl_note(s->out, "prolog %s: %s", s->job.job_id,
			 rec ? aerr.text : "out of memory");
		s->out->lost_record =
			rec ? json_dumps(rec,
					 JSON_COMPACT | JSON_PRESERVE_ORDER)
			    : NULL;
	}
	audit_order_unlock(order);
	ctl_note(s->out, "prolog %s: %s", s->job.job_id, why);
	json_decref(rec);
	s->out->fallback = true;
	s->out->stop_job =
		p->access.fail == POLICY_FAIL_CLOSED && !s->job.bad_request[0];
}

/* Every job still live falls back for `why`. */
static void fall_back_all(struct ctl_launcher *L, struct slot *sl, size_t n,
			  const char *why, bool db_ok)
{
	for (size_t i = 0; i < n; i++)
		if (sl[i].live)
			fall_back(L, &sl[i], why, db_ok);
}

/* A connection that works, kept across batches.  0, or -1 with err. */
static int ensure_db(struct ctl_launcher *L, double now, fwd_error_t *err)
{
	if (L->db && now - L->db_used > IDLE_PING && db_ping(L->db, err) < 0) {
		db_close(L->db);
		L->db = NULL;
	}
	if (!L->db) {
		L->db = db_connect_current(&L->p->database, DB_ROLE_CONTROLLER,
					   err);
		if (!L->db)
			return -1;
		db_stmt_cache(L->db, true);
		L->st.connects++;
	}
	L->db_used = now;
	return 0;
}

/* The kept ledger is read whole at the next batch. */
static void ledger_forget(struct ctl_launcher *L)
{
	alloc_ledger_destroy(L->ledger);
	L->ledger = NULL;
	L->ledger_at = 0;
}

/*
 * The kept ledger, current (the decision lock held): what changed since
 * its mark, or all of it when there is none, it is CTL_LEDGER_TTL old, or
 * the changes do not apply; the forwarders' last release times on it.
 * 0, or -1 with errno and err (and no kept ledger).
 */
static int ledger_current(struct ctl_launcher *L, double now, fwd_error_t *err)
{
	const struct topology *t = L->t;

	if (L->ledger && now >= L->ledger_at &&
	    now - L->ledger_at < CTL_LEDGER_TTL) {
		if (ledger_store_load_changes(L->db, L->ledger, &L->mark, NULL,
					      err) == 0)
			goto current;
		if (errno != EEXIST) {
			ledger_forget(L);
			return -1;
		}
	}
	ledger_forget(L);
	if (!(L->ledger = alloc_ledger_create(t))) {
		errprintf(err, "launcher: %s", strerror(errno));
		return -1;
	}
	if (ledger_store_load_marked(L->db, L->ledger, &L->mark, NULL, err) <
	    0) {
		int e = errno;

		ledger_forget(L);
		errno = e;
		return -1;
	}
	L->ledger_at = now;
	L->st.ledger_loads++;
current:
	alloc_ledger_set_last_releases(L->ledger, L->last_used);
	return 0;
}

/* The connection failed (errno cause): forget it when it is gone. */
static void db_failed(struct ctl_launcher *L, int cause)
{
	if (db_err_unavailable(cause)) {
		ledger_forget(L);
		db_close(L->db);
		L->db = NULL;
		ctl_breaker_trip(L->p);
	}
}

static uint32_t key_hash(const char *key, uint32_t nodes)
{
	uint32_t h = 2166136261u ^ nodes;

	for (const unsigned char *c = (const unsigned char *)key; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

/*
 * The job's profile: from the cache when read within CTL_PROFILE_TTL for
 * the same key and node count (CTL_PROFILE_NONE_TTL for "no history"),
 * else from the database (and kept).
 * 1 (profile filled), 0 (no history), -1 with errno and err.
 */
static int job_profile(struct ctl_launcher *L, struct slot *s, double now,
		       fwd_error_t *err)
{
	const struct ctl_job *j = &s->job;
	struct profile_job pj = {j->user, j->account, j->name, j->partition,
				 j->n_nodes};
	char key[PROFILE_KEY_MAX + 1];
	struct cached_profile *c;
	int have;

	if (profile_key(L->p, &pj, key, sizeof(key), err) < 0)
		return -1;
	c = &L->profiles[key_hash(key, j->n_nodes) & (PROFILE_SLOTS - 1)];
	if (c->used && c->nodes == j->n_nodes &&
	    now - c->at <
		    (c->have > 0 ? CTL_PROFILE_TTL : CTL_PROFILE_NONE_TTL) &&
	    now >= c->at && !strcmp(c->res.key, key)) {
		L->st.profile_hits++;
	} else {
		struct profile_result res;

		have = profile_lookup(L->db, L->p, &pj, (int64_t)now, &res,
				      err);
		if (have < 0)
			return -1;
		L->st.profile_reads++;
		if (!have || res.source == PROFILE_SOURCE_NONE)
			have = 0;
		c->used = true;
		c->have = have;
		c->nodes = j->n_nodes;
		c->at = now;
		c->res = res;
	}
	if (c->have > 0 && c->res.source != PROFILE_SOURCE_NONE) {
		profile_to_alloc(&c->res.profile, &s->prof, s->bw);
		return 1;
	}
	return 0;
}

/* The checks that need no database; a job that fails one falls back. */
static void check_jobs(struct ctl_launcher *L, struct slot *sl, size_t n)
{
	fwd_error_t err;

	for (size_t i = 0; i < n; i++) {
		struct slot *s = &sl[i];

		if (!s->live)
			continue;
		if (s->job.bad_request[0]) {
			/* The user's value: recorded (the job row too when
			 * the database answers), no decision. */
			fall_back(L, s, s->job.bad_request, true);
		} else if (!L->t) {
			char why[1100];

			snprintf(why, sizeof(why),
				 "topology %s could not be loaded",
				 L->p->topology);
			fall_back(L, s, why, true);
		} else if (!s->job.nodes) {
			fall_back(L, s, "SLURM_JOB_NODELIST is not set", true);
		} else if (alloc_ctx_job_nodes(L->cx, s->job.nodes, &s->ids,
					       &s->n_ids, &err) < 0) {
			fall_back(L, s, err.text, true);
		} else if (!s->job.n_nodes) {
			s->job.n_nodes = (uint32_t)s->n_ids;
		}
	}
}

/* s decides with d from now on (NULL: none): the decision before goes,
 * with its rows. */
static void slot_decision(struct slot *s, struct alloc_decision *d)
{
	if (s->d)
		ledger_store_decision_rows_free(s->d, s->rows, s->n_rows);
	s->rows = NULL;
	s->n_rows = 0;
	alloc_decision_destroy(s->d);
	s->d = d;
}

/* The earliest deadline of the live jobs. */
static double batch_deadline(const struct slot *sl, size_t n)
{
	double d = 0;

	for (size_t i = 0; i < n; i++)
		if (sl[i].live && (d == 0 || sl[i].in->deadline < d))
			d = sl[i].in->deadline;
	return d;
}

/* True (errno ETIMEDOUT, err) once the batch's deadline has passed. */
static bool past(double deadline, fwd_error_t *err)
{
	if (fwd_clock_real() <= deadline)
		return false;
	errno = ETIMEDOUT;
	errprintf(err, "not decided before the hook's deadline");
	return true;
}

/*
 * The batch's transaction: lock, ledger, decisions, rows and records,
 * commit.  0 with *order holding audit_order_lock() (the caller appends
 * the records to the file, then releases it), or -1 with errno and err
 * (rolled back, *order -1).
 */
static int decide_tx(struct ctl_launcher *L, struct slot *sl, size_t n,
		     const struct alloc_health *health, int *order,
		     fwd_error_t *err)
{
	const struct policy *p = L->p;
	struct db *db = L->db;
	struct alloc_ledger *l = NULL;
	struct alloc_job *aj = NULL;
	struct alloc_decision **ds = NULL;
	size_t *idx = NULL, m = 0;
	double now, deadline = batch_deadline(sl, n);
	int rv = -1, cause = 0;

	*order = -1;
	if (!(aj = calloc(n, sizeof(*aj))) || !(ds = calloc(n, sizeof(*ds))) ||
	    !(idx = calloc(n, sizeof(*idx)))) {
		cause = errno;
		errprintf(err, "launcher: %s", strerror(errno));
		goto out_nolock;
	}
	if (ledger_store_lock(db, p->database.lock_timeout, err) < 0) {
		cause = errno;
		goto out_nolock;
	}
	/* The kept ledger, current; the batch decides on a copy of it
	 * (what it adds is its own), which the commit makes true and the
	 * next batch reads back among the changes. */
	if (ledger_current(L, fwd_clock_real(), err) < 0)
		goto fail;
	if (!(l = alloc_ledger_overlay(L->ledger))) {
		errprintf(err, "launcher: %s", strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		const struct slot *s = &sl[i];

		if (!s->live)
			continue;
		if (ledger_store_job_start(db, &s->job, fwd_clock_real(), err) <
		    0)
			goto fail;
		aj[m].job_id = s->job.job_id;
		aj[m].user = s->job.user;
		aj[m].account = s->job.account;
		aj[m].name = s->job.name;
		aj[m].partition = s->job.partition;
		aj[m].nodes = s->job.nodes;
		aj[m].node_ids = s->ids;
		aj[m].n_nodes = s->n_ids;
		aj[m].request = s->job.request;
		aj[m].profile = s->have_prof ? &s->prof : NULL;
		idx[m++] = i;
	}
	now = fwd_clock_real();
	if (m == 1) {
		if (!(ds[0] = alloc_decide(L->cx, p, l, health, &aj[0], now,
					   err)))
			goto fail;
	} else if (alloc_decide_batch(L->cx, p, l, health, aj, m, now, ds,
				      err) < 0) {
		goto fail;
	}
	for (size_t k = 0; k < m; k++) {
		struct slot *s = &sl[idx[k]];
		struct alloc_decision *d = ds[k];

		if (past(deadline, err))
			goto fail;
		slot_decision(s, d);
		ds[k] = NULL;
		d->elapsed_us = elapsed_us(s->in->t0, fwd_clock_real());
		if (d->redecided &&
		    ledger_store_release(db, s->job.job_num,
					 "redecided: other nodes", now, NULL,
					 err) < 0)
			goto fail;
		if ((d->redecided || !alloc_ledger_find(l, s->job.job_id)) &&
		    (ledger_store_decision_rows(L->t, d, &s->job, &s->rows,
						&s->n_rows, err) < 0 ||
		     ledger_store_write(db, d, &s->job, s->rows, s->n_rows, now,
					err) < 0))
			goto fail;
		json_decref(s->rec);
		s->rec = audit_record_decision(&s->job, L->t, d, now);
		if (!s->rec) {
			errprintf(err, "audit record: %s", strerror(errno));
			goto fail;
		}
		if (ctl_pool_refused(d))
			ctl_note_pool_holders(db, l, &s->job, s->rec);
		if (p->audit.database && audit_store(db, s->rec, err) < 0)
			goto fail;
	}
	/* Committed before the earliest deadline, under the audit order
	 * lock: a hook that gives up later releases the allocation and
	 * records it after these records, in the table and in the file. */
	*order = audit_order_lock(p->audit.file);
	if (past(deadline, err) || db_commit(db, err) < 0)
		goto fail;
	rv = 0;
	goto out_nolock;
fail:
	cause = errno;
	db_rollback(db);
	audit_order_unlock(*order);
	*order = -1;
out_nolock:
	for (size_t k = 0; k < m; k++)
		alloc_decision_destroy(ds[k]);
	free(ds);
	free(aj);
	free(idx);
	alloc_ledger_destroy(l);
	errno = cause;
	return rv;
}

void ctl_launcher_prologs(struct ctl_launcher *L, const struct ctl_launch *jobs,
			  size_t n, struct ctl_outcome *outs)
{
	const struct policy *p = L->p;
	struct slot *sl = calloc(n ? n : 1, sizeof(*sl));
	enum fwd_health *hf = NULL, *ho = NULL;
	struct alloc_health health = {NULL, NULL};
	unsigned int attempt = 1;
	fwd_error_t err = {""};
	double now = fwd_clock_real(), t;
	size_t live = 0;
	int cause, r, order = -1;

	L->st.batches++;
	L->st.jobs += n;
	for (size_t i = 0; i < n; i++) {
		memset(&outs[i], 0, sizeof(outs[i]));
		outs[i].fallback = true;
	}
	if (!sl) {
		for (size_t i = 0; i < n; i++)
			ctl_note(&outs[i], "prolog %s: launcher: %s",
				 jobs[i].job.job_id, strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		sl[i].in = &jobs[i];
		sl[i].out = &outs[i];
		sl[i].job = jobs[i].job;
		/* The copy's strings point into the copy. */
		sl[i].job.user = jobs[i].job.user ? sl[i].job.user_buf : NULL;
		sl[i].job.account =
			jobs[i].job.account ? sl[i].job.account_buf : NULL;
		sl[i].job.name = jobs[i].job.name ? sl[i].job.name_buf : NULL;
		sl[i].job.partition =
			jobs[i].job.partition ? sl[i].job.partition_buf : NULL;
		sl[i].live = true;
	}
	/* The database failed a moment ago: do not wait on it again.  The
	 * records in the order of the hooks' own (fall_back()): none for a
	 * job whose hook has stopped waiting, which records it itself. */
	if (ctl_breaker_open(p, now, NULL)) {
		int lock = audit_order_lock(p->audit.file);

		for (size_t i = 0; i < n; i++) {
			struct ctl_hook h = {.p = p,
					     .t = L->t,
					     .j = &sl[i].job,
					     .t0 = jobs[i].t0};
			fwd_error_t perr;

			if (hook_gone(&sl[i])) {
				sl[i].live = false;
				L->st.fell_back++;
				leave_to_hook(&sl[i], "database skipped");
			} else if (ctl_hook_skip_db(&h, "prolog", &outs[i])) {
				sl[i].live = false;
				L->st.fell_back++;
				if (ctl_publish_fallback(p, &sl[i].job, &perr) <
				    0)
					ctl_note(&outs[i], "prolog %s: %s",
						 sl[i].job.job_id, perr.text);
			}
		}
		audit_order_unlock(lock);
	}
	if (ensure_db(L, now, &err) < 0) {
		cause = errno;
		check_jobs(L, sl, n);
		fall_back_all(L, sl, n, err.text, false);
		db_failed(L, cause);
		goto out;
	}
	check_jobs(L, sl, n);
	/* Before the lock: the profiles (the job rows are written in the
	 * batch's transaction), the health. */
	now = t = fwd_clock_real();
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &sl[i];

		if (!s->live)
			continue;
		if ((r = job_profile(L, s, now, &err)) < 0)
			goto db_error;
		s->have_prof = r > 0;
		live++;
	}
	if (!live)
		goto out;
	L->st.ms_rows += lap(&t);
	if (!L->health_at || now < L->health_at ||
	    now - L->health_at >= CTL_HEALTH_TTL) {
		if (ctl_load_health(L->db, p, L->t, &hf, &ho, &err) < 0 ||
		    ledger_store_last_used(L->db, L->t, L->last_used, &err) < 0)
			goto db_error;
		free(L->hf);
		free(L->ho);
		L->hf = hf;
		L->ho = ho;
		hf = ho = NULL;
		L->health_at = now;
	}
	health.forwarder = L->hf;
	health.ost = L->ho;
	L->st.ms_health += lap(&t);
	while (decide_tx(L, sl, n, &health, &order, &err) < 0) {
		cause = errno;
		/* Another controller's decision conflicted (a cluster):
		 * decide again with what it committed. */
		if (!ledger_store_tx_retry(L->db, cause, &attempt, &err))
			goto db_error_cause;
	}
	L->st.ms_tx += lap(&t);
	/* The decision files: all written, then all synced and renamed
	 * (one journal commit for the batch, not one a job).  Without its
	 * file a job's node prologs read the database. */
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &sl[i];
		struct ctl_pub_written w = {L->t, s->d, s->rows, s->n_rows};

		s->pub.fd = -1;
		if (s->live &&
		    ctl_publish_prepare(L->db, p, &s->job,
					s->d->action == FWD_ACT_DIRECT,
					s->rows ? &w : NULL, &s->pub, &err) < 0)
			json_object_set_new(s->rec, "decision_file",
					    json_string(err.text));
	}
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &sl[i];
		fwd_error_t aerr;

		if (!s->live)
			continue;
		if (ctl_publish_finish(p, &s->job, &s->pub, &aerr) < 0)
			json_object_set_new(s->rec, "decision_file",
					    json_string(aerr.text));
		if (audit_append(p->audit.file, s->rec, &aerr) < 0) {
			ctl_note(s->out, "prolog %s: %s", s->job.job_id,
				 aerr.text);
			s->out->lost_record = json_dumps(
				s->rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
		}
		s->out->fallback = false;
		s->live = false;
		L->st.decided++;
	}
	audit_order_unlock(order);
	L->st.ms_publish += lap(&t);
	goto out;
db_error:
	cause = errno;
db_error_cause:
	fall_back_all(L, sl, n, err.text[0] ? err.text : "unknown error",
		      !db_err_unavailable(cause));
	db_failed(L, cause);
out:
	for (size_t i = 0; i < n; i++) {
		free(sl[i].ids);
		slot_decision(&sl[i], NULL);
		json_decref(sl[i].rec);
	}
	free(hf);
	free(ho);
	free(sl);
}
