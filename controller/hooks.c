/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the controller prolog and epilog share: the bounded child and the
 * audit line (controller/hook_run.h), and the record of a job that ran
 * without a policy.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/run.h"
#include "common/safedir.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/hook_run.h"
#include "controller/ledger_store.h"
#include "controller/publish.h"
#include "db/breaker.h"
#include "db/db.h"
#include "policies/policy.h"
#include "topology/topo_cache.h"

static uint64_t elapsed_us(double t0, double now)
{
	return (uint64_t)((now - t0) * 1e6);
}

/* "<tag><record><end>" to the parent (tag ends in its space). */
static int send_record(int fd, const char *tag, const json_t *rec,
		       const char *end)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rv = -1;

	if (s && !fwd_write_all(fd, tag, strlen(tag)) &&
	    !fwd_write_all(fd, s, strlen(s)) &&
	    !fwd_write_all(fd, end, strlen(end)))
		rv = 0;
	free(s);
	return rv;
}

int ctl_hook_send(int fd, bool fallback, const json_t *rec)
{
	return send_record(fd, fallback ? "F " : "A ", rec, "");
}

int ctl_hook_send_timing(int fd, const char *text)
{
	char line[sizeof(((struct ctl_outcome *)0)->timing) + 3];
	int n = snprintf(line, sizeof(line), "P %s\n", text);

	if (n < 0 || (size_t)n >= sizeof(line))
		return -1;
	return write(fd, line, (size_t)n) == n ? 0 : -1;
}

int ctl_hook_mark_commit(int fd)
{
	return write(fd, "C", 1) == 1 ? 0 : -1;
}

void ctl_note(struct ctl_outcome *out, const char *fmt, ...)
{
	va_list ap;

	if (out->n_notes == CTL_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(out->notes[out->n_notes].text,
		  sizeof(out->notes[out->n_notes].text), fmt, ap);
	va_end(ap);
	out->n_notes++;
}

/* One connection, one insert, each bounded by database.timeout. */
static void audit_db_best_effort(const struct policy *p, const json_t *rec,
				 struct ctl_outcome *out)
{
	fwd_error_t err;
	struct db *db =
		db_connect_current(&p->database, DB_ROLE_CONTROLLER, &err);

	if (!db || audit_store(db, rec, &err) < 0)
		ctl_note(out, "audit table: %s", err.text);
	db_close(db);
}

int ctl_breaker_path(const struct policy *p, char *buf, size_t n)
{
	const char *slash = p->audit.file ? strrchr(p->audit.file, '/') : NULL;
	int len;

	if (!slash)
		return -1;
	len = snprintf(buf, n, "%.*s/db-breaker", (int)(slash - p->audit.file),
		       p->audit.file);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

void ctl_breaker_trip(const struct policy *p)
{
	char path[4096];
	fwd_error_t err;

	/* Best effort: a breaker that cannot be written only means the
	 * next prolog tries the database again. */
	if (p->database_breaker > 0 && !ctl_breaker_path(p, path, sizeof(path)))
		db_breaker_trip(path, fwd_clock_real(), &err);
}

/*
 * The prolog's worker was stopped (timed out, killed) after it began to
 * commit: the allocation may be in the ledger although the parent never
 * heard of it.  Node prologs would apply it while the record says
 * "fallback", and under access.fail: closed Slurm would requeue a job
 * holding a private forwarder.  So, before Slurm hears the answer, a
 * second bounded worker (its own connection, database.timeout) releases
 * whatever the job holds and stores the fallback record in the same
 * transaction: the job then sits on its defaults, as every record says.
 * (Releasing rather than keeping the late decision: the parent has no
 * record of what was decided, nothing has applied it yet, and a database
 * that answers this late is better not waited on again at launch.)
 * The same for a hook that gave up on the controller service
 * (ctl_prolog_abandon()).  The worker holds the decision lock, so a
 * batch the service is committing is committed first and released here,
 * and it commits and appends its record under audit_order_lock(), so
 * the table and the file show the service's records and this one in the
 * same order.
 */
struct settle {
	struct ctl_hook *h;
	const char *why;
};

static int settle_child(void *arg, int fd)
{
	struct settle *s = arg;
	const struct ctl_hook *h = s->h;
	const struct policy *p = h->p;
	fwd_error_t err = {""}, aerr;
	uint64_t released = 0;
	struct db *db;
	json_t *rec = NULL;
	char why[1100];
	double now = fwd_clock_real();
	bool appended = false;
	int rc = 1, order = -1;

	/* Under the decision lock: a decision the controller service is
	 * committing for the job is committed first, and released here. */
	if (!(db = db_connect_current(&p->database, DB_ROLE_CONTROLLER,
				      &err)) ||
	    ledger_store_lock(db, p->database.lock_timeout, &err) < 0 ||
	    ledger_store_release(db, h->j->job_num, "prolog timed out", now,
				 &released, &err) < 0)
		goto out;
	if (released)
		snprintf(
			why, sizeof(why),
			"%s; the allocation it committed late (%llu allocation "
			"row(s)) was released",
			s->why, (unsigned long long)released);
	else
		snprintf(why, sizeof(why), "%s", s->why);
	now = fwd_clock_real();
	rec = audit_record_fallback(h->j, h->t, "prolog", why, now,
				    elapsed_us(h->t0, now));
	if (!rec || (p->audit.database && audit_store(db, rec, &err) < 0))
		goto out;
	/* The row and the line in the order the service's are in
	 * (audit_order_lock()): whichever writer is later in the table is
	 * later in the file too. */
	order = audit_order_lock(p->audit.file);
	/* The record first: a worker stopped after its COMMIT reached the
	 * server has the record in the table, and the parent then puts the
	 * same one in the file (settle()). */
	if (send_record(fd, "R ", rec, "\n") < 0 || db_commit(db, &err) < 0)
		goto out;
	appended = audit_append(p->audit.file, rec, &aerr) == 0;
	audit_order_unlock(order);
	order = -1;
	if (ctl_hook_send(fd, true, rec) == 0 &&
	    (!appended || write(fd, "\n+", 2) == 2))
		rc = 0;
out:
	audit_order_unlock(order);
	if (rc) {
		if (db)
			db_rollback(db);
		dprintf(fd, "E %s", err.text);
	}
	json_decref(rec);
	db_close(db);
	return rc;
}

/*
 * The allocation may be committed although nobody will hear of it: withdraw
 * the decision file and release the job's rows in a bounded worker that
 * stores the fallback record (why) in the same transaction.  True when it
 * did (*rec: that record); else false and why (n bytes) says that the
 * allocation could not be released.
 *
 * The worker sends "R <record>\n" before its COMMIT and "F <record>" (and
 * "\n+" once the record is in the audit file) after it.  A worker stopped
 * in between may have committed: then the table has that record, so it
 * is the one the file gets too (true, *rec set, *in_file false), with a
 * note for the operator; when the commit did not reach the server, the
 * table has no record and the file's is the only one.  A COMMIT that
 * failed ("E <error>" after the "R" line) stored nothing.
 */
static bool settle(struct ctl_hook *h, char *why, size_t n, json_t **rec,
		   bool *in_file, struct ctl_outcome *out)
{
	struct settle s = {.h = h, .why = why};
	fwd_error_t serr = {""};
	char *sres = NULL, *line, *nl;
	json_t *committing = NULL;
	bool stored = false;
	size_t len;

	*in_file = false;
	/* A decision file the worker may have published goes too: the
	 * nodes keep their defaults. */
	ctl_publish_withdraw(h->p, h->j);
	ctl_run_bounded(h->p->database.timeout, settle_child, &s, &sres, &serr);
	line = sres;
	if (line && line[0] == 'R' && line[1] == ' ' &&
	    (nl = strchr(line, '\n'))) {
		*nl = '\0';
		committing = json_loads(line + 2, 0, NULL);
		line = nl + 1;
	}
	/* A whole "F" record: committed, whether or not the worker lived
	 * on to exit. */
	if (line && line[0] == 'F' && line[1] == ' ') {
		/* "\n+" after the record: the worker appended it to the
		 * audit file already. */
		len = strlen(line);
		if (len > 4 && !strcmp(line + len - 2, "\n+")) {
			line[len - 2] = '\0';
			*in_file = true;
		}
		stored = (*rec = json_loads(line + 2, 0, NULL)) != NULL;
		if (!stored)
			*in_file = false;
	}
	if (!stored && committing && !(line && line[0] == 'E')) {
		ctl_note(
			out,
			"prolog %s: the release %s while committing: the audit "
			"table has its record only if the commit reached the "
			"server",
			h->j->job_id, serr.text[0] ? serr.text : "failed");
		*rec = committing;
		committing = NULL;
		stored = true;
	}
	if (!stored) {
		len = strlen(why);
		snprintf(why + len, n - len,
			 "; its allocation may be committed and could not be "
			 "released: %s",
			 line && line[0] == 'E' ? line + 2 : serr.text);
	}
	json_decref(committing);
	free(sres);
	return stored;
}

/*
 * The hook's answer when its work produced none: the fallback record
 * (rec when settle() stored one, else a new one for why) in the audit
 * file unless it is there already (in_file), and in the table unless it
 * is there already (stored) or the database may be what hangs (hung);
 * the operator's note.
 */
static void record_fallback(struct ctl_hook *h, const char *event,
			    const char *why, json_t *rec, bool stored,
			    bool in_file, bool hung, struct ctl_outcome *out)
{
	const struct policy *p = h->p;
	fwd_error_t aerr;
	double now = fwd_clock_real();
	bool mine = !rec;
	const char *o;

	if (!rec)
		rec = audit_record_fallback(h->j, h->t, event, why, now,
					    elapsed_us(h->t0, now));
	if (!in_file && audit_append(p->audit.file, rec, &aerr) < 0) {
		ctl_note(out, "%s %s: %s", event, h->j->job_id, aerr.text);
		out->lost_record =
			json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	}
	/* The worker died (not hung): the database is likely fine, so it
	 * gets the same record.  After a timeout it may be the database
	 * that hangs: the file record must do. */
	if (!stored && !hung && p->audit.database)
		audit_db_best_effort(p, rec, out);
	o = json_string_value(json_object_get(rec, "outcome"));
	if (o && !strncmp(o, "fallback: ", 10))
		o += 10;
	ctl_note(out, "%s %s: %s", event, h->j->job_id, o ? o : why);
	if (mine)
		json_decref(rec);
}

void ctl_hook_run(struct ctl_hook *h, int (*child)(void *h, int fd),
		  const char *event, struct ctl_outcome *out)
{
	const struct policy *p = h->p;
	fwd_error_t err = {""}, aerr;
	char *res = NULL, *line = NULL;
	json_t *rec = NULL;
	int rc, cause;
	bool committing = false, stored = false, in_file = false;

	memset(out, 0, sizeof(*out));
	out->fallback = true;
	rc = ctl_run_bounded(p->decision.decide_timeout, child, h, &res, &err);
	cause = errno;
	/* One 'C' for each COMMIT the worker began: a transaction retried
	 * after a conflict (a cluster) begins it again. */
	for (line = res; line && *line == 'C'; line++)
		committing = true;
	if (line && line[0] == 'P' && line[1] == ' ') {
		char *nl = strchr(line, '\n');

		if (nl) {
			snprintf(out->timing, sizeof(out->timing), "%.*s",
				 (int)(nl - line - 2), line + 2);
			line = nl + 1;
		}
	}
	if (rc == 0 && line && (line[0] == 'A' || line[0] == 'F') &&
	    line[1] == ' ') {
		out->fallback = line[0] == 'F';
		if (audit_append_line(p->audit.file, line + 2, &aerr) < 0) {
			ctl_note(out, "%s %s: %s", event, h->j->job_id,
				 aerr.text);
			out->lost_record = strdup(line + 2);
		}
	} else {
		char why[1100];

		snprintf(why, sizeof(why), "controller %s %s", event,
			 err.text[0] ? err.text : "produced no result");
		/* A worker that hung: most likely on the database.  The
		 * next prologs skip it for a while (database.breaker). */
		if (cause == ETIMEDOUT && !strcmp(event, "prolog"))
			ctl_breaker_trip(p);
		if (committing)
			stored = settle(h, why, sizeof(why), &rec, &in_file,
					out);
		record_fallback(h, event, why, rec, stored, in_file,
				cause == ETIMEDOUT, out);
	}
	json_decref(rec);
	free(res);
	/* Only the prolog can fail closed: a failed release leaves rows
	 * that reconcile frees, and failing the epilog would not undo
	 * anything.  And only when fwdalloc is broken: a bad value the user
	 * passed (bad_request) leaves the job on its default mapping, which
	 * is what it runs on anyway. */
	out->stop_job = out->fallback && p->access.fail == POLICY_FAIL_CLOSED &&
			!strcmp(event, "prolog") && !h->j->bad_request[0];
}

bool ctl_breaker_open(const struct policy *p, double now, double *ago)
{
	char path[4096];
	double a;

	return ctl_breaker_path(p, path, sizeof(path)) == 0 &&
	       db_breaker_open(path, p->database_breaker, now, ago ? ago : &a);
}

int ctl_hook_skip_db(struct ctl_hook *h, const char *event,
		     struct ctl_outcome *out)
{
	const struct policy *p = h->p;
	char why[1100];
	fwd_error_t aerr;
	json_t *rec;
	double ago, now = fwd_clock_real();

	if (!ctl_breaker_open(p, now, &ago))
		return 0;
	memset(out, 0, sizeof(*out));
	out->fallback = true;
	if (h->j->bad_request[0])
		snprintf(why, sizeof(why),
			 "%s (database skipped: failed %.0fs ago)",
			 h->j->bad_request, ago);
	else
		snprintf(why, sizeof(why), "database skipped: failed %.0fs ago",
			 ago);
	rec = audit_record_fallback(h->j, h->t, event, why, now,
				    elapsed_us(h->t0, now));
	if (!rec || audit_append(p->audit.file, rec, &aerr) < 0) {
		ctl_note(out, "%s %s: %s", event, h->j->job_id,
			 rec ? aerr.text : "out of memory");
		out->lost_record =
			rec ? json_dumps(rec,
					 JSON_COMPACT | JSON_PRESERVE_ORDER)
			    : NULL;
	}
	ctl_note(out, "%s %s: %s", event, h->j->job_id, why);
	json_decref(rec);
	out->stop_job = p->access.fail == POLICY_FAIL_CLOSED &&
			!strcmp(event, "prolog") && !h->j->bad_request[0];
	return 1;
}

void ctl_outcome_free(struct ctl_outcome *out)
{
	free(out->lost_record);
	out->lost_record = NULL;
}

void ctl_no_policy(const struct policy *lp, const struct ctl_job *j,
		   const char *why, double t0, struct ctl_outcome *out)
{
	double now = fwd_clock_real();
	fwd_error_t aerr;
	char buf[1100];
	json_t *rec;

	memset(out, 0, sizeof(*out));
	out->fallback = true;
	snprintf(buf, sizeof(buf), "the policy could not be loaded: %s", why);
	rec = audit_record_fallback(j, NULL, "prolog", buf, now,
				    elapsed_us(t0, now));
	if (!rec) {
		ctl_note(out, "prolog %s: %s", j->job_id, strerror(ENOMEM));
		return;
	}
	if (audit_append(lp->audit.file, rec, &aerr) < 0) {
		ctl_note(out, "prolog %s: %s", j->job_id, aerr.text);
		out->lost_record =
			json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	}
	/* The database is as reachable as ever: the fallback is counted
	 * there too (fwdctl metrics). */
	if (lp->audit.database)
		audit_db_best_effort(lp, rec, out);
	ctl_note(out, "prolog %s: %s", j->job_id, buf);
	json_decref(rec);
}

void ctl_prolog_abandon(const struct policy *p, const struct topology *t,
			const struct ctl_job *j, const char *why, double t0,
			struct ctl_outcome *out)
{
	struct ctl_hook h = {.p = p, .t = t, .j = j, .t0 = t0};
	json_t *rec = NULL;
	char buf[1100];
	bool stored, in_file;

	memset(out, 0, sizeof(*out));
	out->fallback = true;
	snprintf(buf, sizeof(buf), "%s", why);
	stored = settle(&h, buf, sizeof(buf), &rec, &in_file, out);
	record_fallback(&h, "prolog", buf, rec, stored, in_file, !stored, out);
	json_decref(rec);
	out->stop_job =
		p->access.fail == POLICY_FAIL_CLOSED && !j->bad_request[0];
}

struct topology *ctl_topology_load(const struct policy *p, const char *path,
				   enum topo_cache_use *how,
				   fwd_error_t *cache_err, fwd_error_t *err)
{
	const char *slash = p->audit.file ? strrchr(p->audit.file, '/') : NULL;
	char cache[4096];
	int n = -1;

	if (slash)
		n = snprintf(cache, sizeof(cache), "%.*s/topology.cache",
			     (int)(slash - p->audit.file), p->audit.file);
	return topo_load_cached(path ? path : p->topology,
				n > 0 && (size_t)n < sizeof(cache) ? cache
								   : NULL,
				how, cache_err, err);
}
