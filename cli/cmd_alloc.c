/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl alloc list | show JOBID: the allocation ledger as stored
 * (controller/ledger_store.h) and the decision that made it (the audit
 * table).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "cli/table.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "policies/policy.h"

/* clang-format off */
static void alloc_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl alloc list [--json | -P] [-n]\n"
"       fwdctl alloc show JOBID [--json]\n"
"\n"
"The forwarder allocations the controller prolog recorded.\n"
"\n"
"list        every allocation still held (jobs running now), one line per\n"
"            job and forwarder: job, action, forwarder, private or shared,\n"
"            the nodes it serves, since when\n"
"show JOBID  every allocation row of that job, held or released, the\n"
"            decision that made it (from the audit table) and, once the job\n"
"            ended, what its node prologs did: how many applied it, fell\n"
"            back or never reported (the plugin not loaded there), and\n"
"            which nodes did not apply\n"
"\n"
"Options:\n"
"  --json          machine-readable output\n"
FWDCTL_TABLE_HELP
"  -h, --help      this help\n"
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

static json_t *row_json(const struct ledger_row *w, bool with_release)
{
	json_t *o = json_pack("{s:I,s:s,s:s,s:b,s:s,s:I,s:I}", "job_id",
			      (json_int_t)w->job_id, "action", w->action,
			      "forwarder", w->forwarder, "private",
			      w->is_private, "nodes", w->nodes, "node_count",
			      (json_int_t)w->node_count, "acquired_at",
			      (json_int_t)w->acquired_at);

	if (with_release) {
		json_object_set_new(o, "released_at",
				    w->released ? json_integer(w->released_at)
						: json_null());
		json_object_set_new(o, "release_reason",
				    w->release_reason
					    ? json_string(w->release_reason)
					    : json_null());
	}
	return o;
}

static const char *const alloc_head[] = {
	"JOB", "ACTION", "FORWARDER", "HOLD", "NODES", "NODELIST", "SINCE",
};
static const int alloc_width[] = {10, 14, 10, 8, 6, 20};

static int alloc_list(struct db *db, bool json, struct fwdctl_table *t)
{
	struct ledger_row *rows;
	size_t n;
	fwd_error_t err;

	if (ledger_store_held(db, &rows, &n, &err) < 0) {
		int cause = errno;

		fwdctl_err("%s", err.text);
		return fwdctl_exit_code(cause);
	}
	if (json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, row_json(&rows[i], false));
		json_dumpf(arr, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(arr);
		goto out;
	}
	fwdctl_table_header(t);
	for (size_t i = 0; i < n; i++) {
		const struct ledger_row *w = &rows[i];
		char id[24], when[40], count[24];
		const char *cells[7];

		snprintf(id, sizeof(id), "%llu", (unsigned long long)w->job_id);
		snprintf(count, sizeof(count), "%llu",
			 (unsigned long long)w->node_count);
		fwd_time_format((double)w->acquired_at, when, sizeof(when));
		cells[0] = id;
		cells[1] = w->action;
		cells[2] = w->forwarder;
		cells[3] = w->is_private ? "private" : "shared";
		cells[4] = count;
		cells[5] = w->nodes;
		cells[6] = when;
		fwdctl_table_row(t, cells);
	}
	if (n == 0 && !t->parsable && !t->noheader)
		printf("(no allocation held)\n");
out:
	ledger_store_rows_free(rows, n);
	return FWD_EXIT_OK;
}

/* What the job's node prologs did, from its epilog record. */
static void print_nodes(const json_t *rel)
{
	const json_t *o = json_object_get(rel, "node_outcomes");
	const json_t *fb = json_object_get(rel, "node_fallbacks");
	const json_t *v;
	size_t i;

	if (!o)
		return;
	printf("  nodes:    %lld applied, %lld fell back",
	       (long long)json_integer_value(json_object_get(o, "applied")),
	       (long long)json_integer_value(json_object_get(o, "fell_back")));
	if (json_is_integer(json_object_get(o, "silent")))
		printf(", %lld never reported",
		       (long long)json_integer_value(
			       json_object_get(o, "silent")));
	printf("\n");
	json_array_foreach (json_object_get(fb, "nodes"), i, v)
		printf("  fell back: %s\n", json_string_value(v));
	json_array_foreach (json_object_get(o, "silent_nodes"), i, v)
		printf("  no report: %s (fwdalloc plugin not loaded there?)\n",
		       json_string_value(v));
}

static int alloc_show(struct db *db, uint64_t job, bool json)
{
	struct ledger_row *rows = NULL;
	size_t n = 0;
	fwd_error_t err;
	json_t *dec = NULL, *rel = NULL;
	int rc = FWD_EXIT_OK;

	if (ledger_store_job_rows(db, job, &rows, &n, &err) < 0 ||
	    audit_store_job_decision(db, job, &dec, &err) < 0 ||
	    audit_store_job_event(db, job, "epilog", &rel, &err) < 0) {
		int cause = errno;

		fwdctl_err("%s", err.text);
		rc = fwdctl_exit_code(cause);
		goto out;
	}
	if (n == 0 && !dec) {
		fwdctl_err("alloc show: no allocation recorded for job %llu",
			   (unsigned long long)job);
		rc = FWD_EXIT_INVALID;
		goto out;
	}
	if (json) {
		json_t *arr = json_array(), *o;

		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, row_json(&rows[i], true));
		o = json_pack("{s:I,s:o,s:O,s:O}", "job_id", (json_int_t)job,
			      "allocations", arr, "audit",
			      dec ? dec : json_null(), "release",
			      rel ? rel : json_null());
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
		goto out;
	}
	printf("job %llu\n", (unsigned long long)job);
	if (dec) {
		json_t *rs = json_object_get(dec, "reasons"), *v;
		size_t i;

		printf("  request:  %s\n  action:   %s\n  outcome:  %s\n",
		       json_string_value(json_object_get(dec, "request")),
		       json_string_value(json_object_get(dec, "action")),
		       json_string_value(json_object_get(dec, "outcome")));
		json_array_foreach (rs, i, v)
			printf("  reason:   %s\n", json_string_value(v));
	}
	for (size_t i = 0; i < n; i++)
		printf("  %-10s %-8s %-20s %s\n", rows[i].forwarder,
		       rows[i].is_private ? "private" : "shared", rows[i].nodes,
		       rows[i].released ? "released" : "held");
	print_nodes(rel);
out:
	json_decref(rel);
	json_decref(dec);
	ledger_store_rows_free(rows, n);
	return rc;
}

static int cmd_alloc(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		FWDCTL_TABLE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct fwdctl_table table = {
		.head = alloc_head, .width = alloc_width, .ncols = 7};
	bool json = ctx->json;
	struct db *db;
	uint64_t job = 0;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h" FWDCTL_TABLE_SHORTOPTS, opts,
				NULL)) != -1) {
		if (fwdctl_table_option(&table, c))
			continue;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			alloc_usage(stdout);
			return FWD_EXIT_OK;
		default:
			if (fwdctl_negative_job_id("alloc", argc, argv))
				return FWD_EXIT_USAGE;
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
	/* a bad JOBID is a usage error, whatever the database says */
	if (argc == 2 && fwdctl_job_id("alloc show", argv[1], &job) < 0)
		return FWD_EXIT_USAGE;
	/* The schema is checked as for every command; a refused password
	 * file is "unavailable" (exit 3), as everywhere. */
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	rc = !strcmp(argv[0], "list") ? alloc_list(db, json, &table)
				      : alloc_show(db, job, json);
	db_close(db);
	return rc;
}

FWDCTL_COMMAND(cmd_alloc_def, .name = "alloc",
	       .summary = "list held allocations, show one job's allocation",
	       .order = 40, .run = cmd_alloc);
