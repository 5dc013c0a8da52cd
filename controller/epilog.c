/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * EpilogSlurmctld (controller/hooks.h): release the job's forwarders, in
 * the bounded child.
 */
#include "config.h"

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

static int epilog_child(void *arg, int fd)
{
	struct epilog_hook *e = arg;
	struct ctl_hook *h = &e->h;
	const struct policy *p = h->p;
	const struct ctl_job *j = h->j;
	struct db *db = NULL;
	uint64_t released = 0;
	fwd_error_t err = {""};
	json_t *rec;
	int rc, failed = 0;
	double now = fwd_clock_real();

	if (!(db = db_connect_current(&p->database, DB_ROLE_CONTROLLER,
				      &err)) ||
	    ledger_store_release(db, j->job_num, "epilog", now, &released,
				 &err) < 0 ||
	    ledger_store_job_end(db, j->job_num, "COMPLETED", now, &err) < 0)
		failed = 1;
	rec = audit_record_release(
		j, now, released, failed ? err.text : NULL,
		(uint64_t)((fwd_clock_real() - h->t0) * 1e6));
	if (rec && e->policy_error)
		json_object_set_new(rec, "policy_error",
				    json_string(e->policy_error));
	ctl_publish_collect(p, j, rec);
	if (!failed && p->audit.database)
		audit_store(db, rec, &err);
	rc = ctl_hook_send(fd, failed, rec) < 0 ? 1 : 0;
	json_decref(rec);
	db_close(db);
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
