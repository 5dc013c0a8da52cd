/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * EpilogSlurmctld (controller/hooks.h): release the job's forwarders, in
 * the bounded child.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/hook_run.h"
#include "controller/ledger_store.h"
#include "controller/publish.h"
#include "db/db.h"
#include "policies/policy.h"

/* The hook, and the policy's load error when the epilog runs without
 * one (ctl_epilog_no_policy()). */
struct epilog_hook {
	struct ctl_hook h; /* first: ctl_hook_run() passes &h */
	const char *policy_error;
};

/*
 * The release of j on db (NULL: connect): its rows, its end, its record
 * (returned; NULL when out of memory), which says why a release failed
 * (*failed set to the errno of the failure, else 0; reconcile frees the
 * rows later).  Stored in the audit table unless failed; the audit file
 * is the caller's.
 */
static json_t *release(struct db *db, const struct policy *p,
		       const struct ctl_job *j, double t0,
		       const char *policy_error, int *failed)
{
	struct db *own = NULL;
	uint64_t released = 0;
	fwd_error_t err = {""};
	json_t *rec;
	double now = fwd_clock_real();

	*failed = 0;
	if (!db)
		db = own = db_connect_current(&p->database, DB_ROLE_CONTROLLER,
					      &err);
	if (!db ||
	    ledger_store_release(db, j->job_num, "epilog", now, &released,
				 &err) < 0 ||
	    ledger_store_job_end(db, j->job_num, "COMPLETED", now, &err) < 0)
		*failed = errno ? errno : EIO;
	rec = audit_record_release(j, now, released, *failed ? err.text : NULL,
				   (uint64_t)((fwd_clock_real() - t0) * 1e6));
	if (rec && policy_error)
		json_object_set_new(rec, "policy_error",
				    json_string(policy_error));
	ctl_publish_collect(p, j, rec);
	if (!*failed && p->audit.database)
		audit_store(db, rec, &err);
	db_close(own);
	return rec;
}

static int epilog_child(void *arg, int fd)
{
	struct epilog_hook *e = arg;
	struct ctl_hook *h = &e->h;
	int failed, rc;
	json_t *rec =
		release(NULL, h->p, h->j, h->t0, e->policy_error, &failed);

	rc = ctl_hook_send(fd, failed != 0, rec) < 0 ? 1 : 0;
	json_decref(rec);
	return rc;
}

void ctl_epilog(const struct policy *p, const struct ctl_job *j, double t0,
		struct ctl_outcome *out)
{
	struct epilog_hook e = {.h = {.p = p, .j = j, .t0 = t0}};

	ctl_hook_run(&e.h, epilog_child, "epilog", out);
}

void ctl_epilog_no_policy(const struct policy *lp, const struct ctl_job *j,
			  const char *why, double t0, struct ctl_outcome *out)
{
	struct epilog_hook e = {.h = {.p = lp, .j = j, .t0 = t0},
				.policy_error = why};

	ctl_hook_run(&e.h, epilog_child, "epilog", out);
}

void ctl_epilog_on(struct db *db, const struct policy *p,
		   const struct ctl_job *j, double t0, struct ctl_outcome *out)
{
	fwd_error_t aerr;
	int failed;
	json_t *rec = release(db, p, j, t0, NULL, &failed);

	/* The kept connection is gone (the server restarted, a timeout):
	 * once more on a connection of its own (releasing is idempotent). */
	if (failed && db_err_unavailable(failed)) {
		json_decref(rec);
		rec = release(NULL, p, j, t0, NULL, &failed);
	}
	memset(out, 0, sizeof(*out));
	out->fallback = failed != 0;
	if (!rec) {
		ctl_note(out, "epilog %s: audit record: out of memory",
			 j->job_id);
		return;
	}
	if (audit_append(p->audit.file, rec, &aerr) < 0) {
		ctl_note(out, "epilog %s: %s", j->job_id, aerr.text);
		out->lost_record =
			json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	}
	json_decref(rec);
}
