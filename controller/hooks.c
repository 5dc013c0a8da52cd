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
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/hook_run.h"
#include "db/db.h"
#include "policies/policy.h"

static uint64_t elapsed_us(double t0, double now)
{
	return (uint64_t)((now - t0) * 1e6);
}

int ctl_hook_send(int fd, bool fallback, const json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t n, off = 0;
	int rv = -1;

	if (!s)
		return -1;
	if (write(fd, fallback ? "F " : "A ", 2) != 2)
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

static void note(struct ctl_outcome *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct ctl_outcome *out, const char *fmt, ...)
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
	struct db *db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err);

	if (!db || audit_store(db, rec, &err) < 0)
		note(out, "audit table: %s", err.text);
	db_close(db);
}

void ctl_hook_run(struct ctl_hook *h, int (*child)(void *h, int fd),
		  const char *event, struct ctl_outcome *out)
{
	const struct policy *p = h->p;
	fwd_error_t err = {""}, aerr;
	char *res = NULL;
	json_t *rec = NULL;
	int rc, cause;

	memset(out, 0, sizeof(*out));
	out->fallback = true;
	rc = ctl_run_bounded(p->decision.decide_timeout, child, h, &res, &err);
	cause = errno;
	if (rc == 0 && res && (res[0] == 'A' || res[0] == 'F') &&
	    res[1] == ' ') {
		out->fallback = res[0] == 'F';
		if (audit_append_line(p->audit.file, res + 2, &aerr) < 0) {
			note(out, "%s %s: %s", event, h->j->job_id, aerr.text);
			out->lost_record = strdup(res + 2);
		}
	} else {
		char why[1100];
		double now = fwd_clock_real();

		snprintf(why, sizeof(why), "controller %s %s", event,
			 err.text[0] ? err.text : "produced no result");
		rec = audit_record_fallback(h->j, NULL, event, why, now,
					    elapsed_us(h->t0, now));
		if (audit_append(p->audit.file, rec, &aerr) < 0) {
			note(out, "%s %s: %s", event, h->j->job_id, aerr.text);
			out->lost_record = json_dumps(
				rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
		}
		/* The worker died (not hung): the database is likely fine,
		 * so it gets the same record.  After a timeout it may be
		 * the database that hangs: the file record must do. */
		if (cause != ETIMEDOUT && p->audit.database)
			audit_db_best_effort(p, rec, out);
		note(out, "%s %s: %s", event, h->j->job_id, why);
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

void ctl_outcome_free(struct ctl_outcome *out)
{
	free(out->lost_record);
	out->lost_record = NULL;
}

int ctl_no_policy(const struct ctl_job *j, double t0, fwd_error_t *err)
{
	struct policy *def = policy_defaults();
	double now = fwd_clock_real();
	json_t *rec;
	int rv;

	/* Not even the built-in defaults: nowhere to write. */
	if (!def)
		return 0;
	rec = audit_record_fallback(j, NULL, "prolog",
				    "the policy could not be loaded", now,
				    elapsed_us(t0, now));
	rv = audit_append(def->audit.file, rec, err);
	json_decref(rec);
	policy_destroy(def);
	return rv;
}
