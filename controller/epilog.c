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

/* The job's rows released and its end recorded on db: 0, or the errno of
 * the failure with err (reconcile frees the rows later). */
static int release_rows(struct db *db, const struct ctl_job *j, double now,
			uint64_t *released, fwd_error_t *err)
{
	if (ledger_store_release(db, j->job_num, "epilog", now, released, err) <
		    0 ||
	    ledger_store_job_end(db, j->job_num, "COMPLETED", now, err) < 0)
		return errno ? errno : EIO;
	return 0;
}

/*
 * The release's record (NULL when out of memory): what was released, or
 * why it failed (failed, err), the node prologs' outcomes (collected
 * once: their files are removed), stored in the audit table unless the
 * release failed; the audit file is the caller's.
 */
static json_t *release_record(struct db *db, const struct policy *p,
			      const struct ctl_job *j, double t0, double now,
			      uint64_t released, int failed, fwd_error_t *err,
			      const char *policy_error)
{
	json_t *rec = audit_record_release(
		j, now, released, failed ? err->text : NULL,
		(uint64_t)((fwd_clock_real() - t0) * 1e6));

	if (rec && policy_error)
		json_object_set_new(rec, "policy_error",
				    json_string(policy_error));
	ctl_publish_collect(p, j, rec);
	if (!failed && p->audit.database)
		audit_store(db, rec, err);
	return rec;
}

static int epilog_child(void *arg, int fd)
{
	struct epilog_hook *e = arg;
	struct ctl_hook *h = &e->h;
	const struct policy *p = h->p;
	uint64_t released = 0;
	fwd_error_t err = {""};
	double now = fwd_clock_real();
	struct db *db =
		db_connect_current(&p->database, DB_ROLE_CONTROLLER, &err);
	int failed = db ? release_rows(db, h->j, now, &released, &err)
			: (errno ? errno : EIO);
	json_t *rec = release_record(db, p, h->j, h->t0, now, released, failed,
				     &err, e->policy_error);
	int rc = ctl_hook_send(fd, failed != 0, rec) < 0 ? 1 : 0;

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

/* A node's release carries no job name (slurmd's epilog environment has
 * no SLURM_JOB_NAME): the one its prolog stored in `jobs`, into *copy, so
 * the record names the job as its prolog's does.  j itself when there is
 * no row or the read fails (the record then has an empty name). */
static const struct ctl_job *named(struct db *db, const struct ctl_job *j,
				   struct ctl_job *copy)
{
	struct ledger_job row;
	fwd_error_t err;

	if (ledger_store_job_get(db, j->job_num, &row, &err) != 0)
		return j;
	if (row.name[0]) {
		*copy = *j;
		snprintf(copy->name_buf, sizeof(copy->name_buf), "%s",
			 row.name);
		copy->name = copy->name_buf;
		j = copy;
	}
	ledger_store_job_clear(&row);
	return j;
}

void ctl_epilog_on(struct db *db, const struct policy *p,
		   const struct ctl_job *j, double t0, struct ctl_outcome *out)
{
	struct ctl_job copy;
	struct db *own = NULL;
	uint64_t released = 0;
	fwd_error_t err = {""}, aerr;
	double now = fwd_clock_real();
	int failed = release_rows(db, j, now, &released, &err);
	json_t *rec;

	/* The kept connection is gone (the server restarted, a timeout):
	 * once more on a connection of its own (releasing is idempotent). */
	if (failed && db_err_unavailable(failed)) {
		err.text[0] = '\0';
		released = 0;
		if ((db = own = db_connect_current(&p->database,
						   DB_ROLE_CONTROLLER, &err)))
			failed = release_rows(db, j, now, &released, &err);
	}
	if (!failed && (!j->name || !j->name[0]))
		j = named(db, j, &copy);
	rec = release_record(db, p, j, t0, now, released, failed, &err, NULL);
	db_close(own);
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
