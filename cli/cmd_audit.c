/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl audit: list and filter the audit trail: the JSON lines file and
 * its rotated copies, or the database table holding the same records
 * (both read by controller/audit.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "cli/table.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "policies/policy.h"

/* clang-format off */
static void audit_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl audit [--job ID] [--user USER] [--since TIME]\n"
"                    [--file PATH | --db] [--json | -P] [-n]\n"
"\n"
"Every decision the controller took (and every release), oldest first, from\n"
"the audit file named by the policy (audit.file) and the copies logrotate\n"
"left of it (audit.jsonl.N, audit.jsonl.N.gz), or from the database's audit\n"
"table (--db).  Each record says when, which job and user, what was\n"
"requested, the action, why, the forwarders before and after, and the\n"
"outcome: applied, default, shadow, released, or fallback: <error> when the\n"
"job was left on its default mapping.\n"
"\n"
"Options:\n"
"  --job ID        only this job (1..4294967295)\n"
"  --user USER     only this user's jobs\n"
"  --since TIME    only records at or after TIME: epoch seconds,\n"
"                  YYYY-MM-DD[THH:MM[:SS]][Z] (UTC), now-7days, or an age\n"
"                  such as 30m, 2h, -7d\n"
"  --file PATH     read this one file (plain or gzip-compressed) instead\n"
"  --db            read the database's audit table (audit.database: true)\n"
"  --json          print the matching records as one JSON array\n"
FWDCTL_TABLE_HELP
"  -h, --help      this help\n"
"\n"
"Examples:\n"
"  fwdctl audit --job 4242\n"
"  fwdctl audit --user alice --since 1d --json\n"
"  fwdctl audit --db --since -30d -P\n"
"\n"
"Exit status:\n"
"  0  success (also when nothing matches)\n"
"  2  usage error, or the audit file cannot be read\n"
"  3  --db: the database is unavailable\n");
}
/* clang-format on */

static const char *const audit_head[] = {
	"TIME",	   "EVENT",  "JOB",	   "USER",
	"REQUEST", "ACTION", "FORWARDERS", "OUTCOME",
};
static const int audit_width[] = {20, 8, 8, 10, 14, 14, 16};

struct show {
	const char *file;
	bool json;
	json_t *all;		   /* --json: the records */
	struct fwdctl_table table; /* otherwise */
};

static void print_row(struct show *sh, const json_t *r)
{
	json_t *after = json_object_get(r, "forwarders_after"), *v;
	char fw[256] = "", when[32];
	size_t i, off = 0;
	const char *cells[8];

	json_array_foreach (after, i, v)
		if (off < sizeof(fw))
			off += (size_t)snprintf(fw + off, sizeof(fw) - off,
						"%s%s", i ? "," : "",
						json_string_value(v));
	fwd_time_format(json_number_value(json_object_get(r, "ts")), when,
			sizeof(when));
	cells[0] = when;
	cells[1] = json_string_value(json_object_get(r, "event"));
	cells[2] = json_string_value(json_object_get(r, "job_id"));
	cells[3] = json_string_value(json_object_get(r, "user"));
	cells[4] = json_string_value(json_object_get(r, "request"));
	cells[5] = json_string_value(json_object_get(r, "action"));
	cells[6] = fw[0] ? fw : "-";
	cells[7] = json_string_value(json_object_get(r, "outcome"));
	fwdctl_table_row(&sh->table, cells);
}

static int show_record(void *arg, unsigned long lineno, const char *line,
		       const json_t *rec)
{
	struct show *sh = arg;

	if (!rec)
		fwdctl_err("audit: %s:%lu: not a JSON record; skipped",
			   sh->file, lineno);
	else if (sh->json)
		json_array_append(sh->all, (json_t *)rec);
	else
		print_row(sh, rec);
	return 0;
}

static int audit_from_db(struct fwdctl_ctx *ctx, const struct audit_filter *f,
			 struct show *sh)
{
	fwd_error_t err;
	struct db *db;
	int rc = FWD_EXIT_OK;

	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc);
	if (!db)
		return rc;
	sh->file = "audit table";
	if (audit_read_db(db, f, show_record, sh, &err) < 0) {
		int cause = errno;

		fwdctl_err("audit: %s", err.text);
		rc = fwdctl_exit_code(cause);
	}
	db_close(db);
	return rc;
}

static int cmd_audit(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"job", required_argument, NULL, 'J'},
		{"user", required_argument, NULL, 'u'},
		{"since", required_argument, NULL, 's'},
		{"file", required_argument, NULL, 'f'},
		{"db", no_argument, NULL, 'D'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		FWDCTL_TABLE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct audit_filter f = {NULL};
	struct show sh = {
		.table = {.head = audit_head, .width = audit_width, .ncols = 8},
	};
	bool json = ctx->json, from_db = false;
	fwd_error_t err;
	uint64_t job;
	int c, rc = FWD_EXIT_OK;

	while ((c = getopt_long(argc, argv, "h" FWDCTL_TABLE_SHORTOPTS, opts,
				NULL)) != -1) {
		if (fwdctl_table_option(&sh.table, c))
			continue;
		switch (c) {
		case 'J':
			if (fwdctl_job_id("audit: --job", optarg, &job) < 0)
				return FWD_EXIT_USAGE;
			f.job_id = optarg;
			break;
		case 'u':
			f.user = optarg;
			break;
		case 's':
			if (fwd_time_parse(optarg, fwd_clock_real(), &f.since) <
			    0) {
				fwdctl_err("audit: --since %s: not a time; use "
					   "epoch seconds, YYYY-MM-DD[THH:MM"
					   "[:SS]][Z], now-7days or an age "
					   "like 2h",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			f.have_since = true;
			break;
		case 'f':
			sh.file = optarg;
			break;
		case 'D':
			from_db = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			audit_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("audit");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("audit: unexpected argument '%s'", argv[optind]);
		return FWD_EXIT_USAGE;
	}
	if (from_db && sh.file) {
		fwdctl_err("audit: --db and --file exclude each other");
		return FWD_EXIT_USAGE;
	}
	sh.json = json;
	if (json && !(sh.all = json_array())) {
		fwdctl_err("audit: %s", strerror(errno));
		return FWD_EXIT_USAGE;
	}
	if (from_db) {
		rc = audit_from_db(ctx, &f, &sh);
	} else if (sh.file) {
		if (audit_read(sh.file, &f, show_record, &sh, &err) < 0) {
			fwdctl_err("audit: %s", err.text);
			rc = FWD_EXIT_USAGE;
		}
	} else {
		struct policy *p = fwdctl_policy(ctx);

		if (!p) {
			json_decref(sh.all);
			return FWD_EXIT_USAGE;
		}
		sh.file = p->audit.file;
		/* No file yet: no decision taken yet, an empty trail. */
		if (audit_read_all(sh.file, &f, show_record, &sh, &err) < 0 &&
		    errno != ENOENT) {
			fwdctl_err("audit: %s", err.text);
			rc = FWD_EXIT_USAGE;
		}
	}
	if (rc == FWD_EXIT_OK) {
		if (json) {
			json_dumpf(sh.all, stdout,
				   JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			putchar('\n');
		} else {
			fwdctl_table_header(&sh.table);
		}
	}
	json_decref(sh.all);
	return rc;
}

FWDCTL_COMMAND(
	cmd_audit_def, .name = "audit",
	.summary = "list the audit trail of decisions, filter by job/user/time",
	.order = 41, .run = cmd_audit);
