/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl alloc list | show JOBID: the allocation ledger as stored.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/audit.h"
#include "cli/fwdctl.h"
#include "db/db.h"
#include "policies/policy.h"

/* clang-format off */
static void alloc_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl alloc list [--json]\n"
"       fwdctl alloc show JOBID [--json]\n"
"\n"
"The forwarder allocations the controller prolog recorded.\n"
"\n"
"list        every allocation still held (jobs running now), one line per\n"
"            job and forwarder: job, action, forwarder, private or shared,\n"
"            the nodes it serves, since when\n"
"show JOBID  every allocation row of that job, held or released, and the\n"
"            decision that made it (from the audit table)\n"
"\n"
"Options:\n"
"  --json      machine-readable output\n"
"  -h, --help  this help\n"
"\n"
"Examples:\n"
"  fwdctl alloc list\n"
"  fwdctl alloc show 4242 --json\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  no allocation recorded for JOBID\n"
"  2  usage error\n"
"  3  the database is unavailable\n");
}
/* clang-format on */

static int exit_for(int errnum)
{
	return db_err_unavailable(errnum) ? FWD_EXIT_SERVICE : FWD_EXIT_INVALID;
}

static json_t *row_json(struct db_stmt *st, bool with_release)
{
	json_t *o = json_pack(
		"{s:I,s:s,s:s,s:b,s:s,s:I,s:I}", "job_id",
		(json_int_t)db_col_uint64(st, 0), "action", db_col_text(st, 1),
		"forwarder", db_col_text(st, 2), "private",
		db_col_int64(st, 3) != 0, "nodes", db_col_text(st, 4),
		"node_count", (json_int_t)db_col_uint64(st, 5), "acquired_at",
		(json_int_t)db_col_int64(st, 6));

	if (with_release) {
		json_object_set_new(
			o, "released_at",
			db_col_null(st, 7) ? json_null()
					   : json_integer(db_col_int64(st, 7)));
		json_object_set_new(o, "release_reason",
				    db_col_null(st, 8)
					    ? json_null()
					    : json_string(db_col_text(st, 8)));
	}
	return o;
}

static int alloc_list(struct db *db, bool json)
{
	struct db_stmt *st;
	fwd_error_t err;
	json_t *arr = json_array();
	int r, rc = FWD_EXIT_OK, n = 0;

	st = db_prepare(db,
			"SELECT job_id, action, forwarder, is_private, nodes, "
			"node_count, acquired_at FROM allocations "
			"WHERE released_at IS NULL ORDER BY job_id, id",
			&err);
	if (!st || db_exec(st, &err) < 0) {
		fwdctl_err("%s", err.text);
		rc = exit_for(errno);
		goto out;
	}
	if (!json)
		printf("%-10s %-14s %-10s %-8s %-6s %-20s %s\n", "JOB",
		       "ACTION", "FORWARDER", "HOLD", "NODES", "NODELIST",
		       "SINCE");
	while ((r = db_fetch(st, &err)) > 0) {
		char when[40];

		n++;
		if (json) {
			json_array_append_new(arr, row_json(st, false));
			continue;
		}
		audit_time((double)db_col_int64(st, 6), when, sizeof(when));
		printf("%-10s %-14s %-10s %-8s %-6llu %-20s %s\n",
		       db_col_text(st, 0), db_col_text(st, 1),
		       db_col_text(st, 2),
		       db_col_int64(st, 3) ? "private" : "shared",
		       (unsigned long long)db_col_uint64(st, 5),
		       db_col_text(st, 4), when);
	}
	if (r < 0) {
		fwdctl_err("%s", err.text);
		rc = exit_for(errno);
		goto out;
	}
	if (json) {
		json_dumpf(arr, stdout, JSON_INDENT(2));
		putchar('\n');
	} else if (n == 0) {
		printf("(no allocation held)\n");
	}
out:
	json_decref(arr);
	db_stmt_close(st);
	return rc;
}

static int alloc_show(struct db *db, const char *id, bool json)
{
	struct db_stmt *st = NULL;
	fwd_error_t err;
	json_t *arr = json_array(), *dec = NULL;
	unsigned long long job;
	char *end;
	int r, rc = FWD_EXIT_OK, n = 0;

	errno = 0;
	job = strtoull(id, &end, 10);
	if (errno || *end || !*id || job == 0) {
		fwdctl_err("alloc show: '%s' is not a job id", id);
		rc = FWD_EXIT_USAGE;
		goto out;
	}
	st = db_prepare(db,
			"SELECT job_id, action, forwarder, is_private, nodes, "
			"node_count, acquired_at, released_at, release_reason "
			"FROM allocations WHERE job_id = ? ORDER BY id",
			&err);
	if (!st)
		goto dberr;
	db_bind_uint64(st, 0, job);
	if (db_exec(st, &err) < 0)
		goto dberr;
	while ((r = db_fetch(st, &err)) > 0) {
		n++;
		json_array_append_new(arr, row_json(st, true));
	}
	if (r < 0)
		goto dberr;
	db_stmt_close(st);
	st = db_prepare(db,
			"SELECT record FROM audit WHERE job_id = ? AND "
			"JSON_VALUE(record, '$.event') = 'prolog' "
			"ORDER BY id DESC LIMIT 1",
			&err);
	if (!st)
		goto dberr;
	db_bind_uint64(st, 0, job);
	if (db_exec(st, &err) < 0)
		goto dberr;
	if ((r = db_fetch(st, &err)) < 0)
		goto dberr;
	if (r > 0 && db_col_text(st, 0))
		dec = json_loads(db_col_text(st, 0), 0, NULL);
	if (n == 0 && !dec) {
		fwdctl_err("alloc show: no allocation recorded for job %llu",
			   job);
		rc = FWD_EXIT_INVALID;
		goto out;
	}
	if (json) {
		json_t *o = json_pack("{s:I,s:O,s:O}", "job_id",
				      (json_int_t)job, "allocations", arr,
				      "audit", dec ? dec : json_null());

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
		goto out;
	}
	printf("job %llu\n", job);
	if (dec) {
		json_t *rs = json_object_get(dec, "reasons"), *v;
		size_t i;

		printf("  request:  %s\n  action:   %s\n  outcome:  %s\n",
		       json_string_value(json_object_get(dec, "request")),
		       json_string_value(json_object_get(dec, "action")),
		       json_string_value(json_object_get(dec, "outcome")));
		json_array_foreach(rs, i, v)
			printf("  reason:   %s\n", json_string_value(v));
	}
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *o = json_array_get(arr, i);
		json_t *rel = json_object_get(o, "released_at");

		printf("  %-10s %-8s %-20s %s\n",
		       json_string_value(json_object_get(o, "forwarder")),
		       json_is_true(json_object_get(o, "private")) ? "private"
								   : "shared",
		       json_string_value(json_object_get(o, "nodes")),
		       json_is_null(rel) ? "held" : "released");
	}
	goto out;
dberr:
	fwdctl_err("%s", err.text);
	rc = exit_for(errno);
out:
	json_decref(dec);
	json_decref(arr);
	db_stmt_close(st);
	return rc;
}

static int cmd_alloc(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = ctx->json;
	struct policy *p;
	struct db *db;
	fwd_error_t err;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			alloc_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("alloc");
			return FWD_EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		fwdctl_err("alloc: missing action (list or show); see 'fwdctl "
			   "alloc --help'");
		return FWD_EXIT_USAGE;
	}
	if (strcmp(argv[0], "list") && strcmp(argv[0], "show")) {
		fwdctl_err("alloc: unknown action '%s'; see 'fwdctl alloc "
			   "--help'",
			   argv[0]);
		return FWD_EXIT_USAGE;
	}
	if (!strcmp(argv[0], "show") && argc < 2) {
		fwdctl_err("alloc show: JOBID missing; see 'fwdctl alloc "
			   "--help'");
		return FWD_EXIT_USAGE;
	}
	if (argc > (!strcmp(argv[0], "show") ? 2 : 1)) {
		fwdctl_err("alloc %s: unexpected argument '%s'", argv[0],
			   argv[!strcmp(argv[0], "show") ? 2 : 1]);
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx)))
		return FWD_EXIT_USAGE;
	if (!(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err))) {
		fwdctl_err("%s", err.text);
		return exit_for(errno);
	}
	rc = !strcmp(argv[0], "list") ? alloc_list(db, json)
				      : alloc_show(db, argv[1], json);
	db_close(db);
	return rc;
}

FWDCTL_COMMAND(cmd_alloc_def, .name = "alloc",
	       .summary = "list held allocations, show one job's allocation",
	       .order = 40, .run = cmd_alloc);
