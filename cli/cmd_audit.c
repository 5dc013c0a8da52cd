/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl audit: list and filter the audit trail (the JSON lines file,
 * read by controller/audit.h; the database table holds the same records).
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
#include "common/timeutil.h"
#include "controller/audit.h"
#include "policies/policy.h"

/* clang-format off */
static void audit_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl audit [--job ID] [--user USER] [--since TIME] [--file PATH]\n"
"                    [--json]\n"
"\n"
"Every decision the controller took (and every release), oldest first, from\n"
"the audit file named by the policy (audit.file).  Each record says when,\n"
"which job and user, what was requested, the action, why, the forwarders\n"
"before and after, and the outcome: applied, default, shadow, released, or\n"
"fallback: <error> when the job was left on its default mapping.\n"
"\n"
"Options:\n"
"  --job ID       only this job\n"
"  --user USER    only this user's jobs\n"
"  --since TIME   only records at or after TIME: epoch seconds,\n"
"                 YYYY-MM-DD[THH:MM[:SS]][Z] (UTC), now-7days, or an age\n"
"                 such as 30m, 2h, -7d\n"
"  --file PATH    read this audit file instead of the policy's\n"
"  --json         print the matching records as JSON lines, unchanged\n"
"  -h, --help     this help\n"
"\n"
"Examples:\n"
"  fwdctl audit --job 4242\n"
"  fwdctl audit --user alice --since 1d --json\n"
"\n"
"Exit status:\n"
"  0  success (also when nothing matches)\n"
"  2  usage error, or the audit file cannot be read\n");
}
/* clang-format on */

static void print_row(const json_t *r)
{
	json_t *after = json_object_get(r, "forwarders_after"), *v;
	char fw[256] = "";
	size_t i, off = 0;

	json_array_foreach (after, i, v)
		if (off < sizeof(fw))
			off += (size_t)snprintf(fw + off, sizeof(fw) - off,
						"%s%s", i ? "," : "",
						json_string_value(v));
	printf("%-24s %-8s %-8s %-10s %-14s %-14s %-16s %s\n",
	       json_string_value(json_object_get(r, "time")),
	       json_string_value(json_object_get(r, "event")),
	       json_string_value(json_object_get(r, "job_id")),
	       json_string_value(json_object_get(r, "user")),
	       json_string_value(json_object_get(r, "request")),
	       json_string_value(json_object_get(r, "action")),
	       fw[0] ? fw : "-",
	       json_string_value(json_object_get(r, "outcome")));
}

struct show {
	const char *file;
	bool json;
	bool header; /* the table's header is printed */
};

/* The table's header, once the file is open. */
static void show_header(struct show *sh)
{
	if (sh->json || sh->header)
		return;
	printf("%-24s %-8s %-8s %-10s %-14s %-14s %-16s %s\n", "TIME", "EVENT",
	       "JOB", "USER", "REQUEST", "ACTION", "FORWARDERS", "OUTCOME");
	sh->header = true;
}

static int show_record(void *arg, unsigned long lineno, const char *line,
		       const json_t *rec)
{
	struct show *sh = arg;

	show_header(sh);
	if (!rec)
		fwdctl_err("audit: %s:%lu: not a JSON record; skipped",
			   sh->file, lineno);
	else if (sh->json)
		printf("%s\n", line);
	else
		print_row(rec);
	return 0;
}

static int cmd_audit(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"job", required_argument, NULL, 'J'},
		{"user", required_argument, NULL, 'u'},
		{"since", required_argument, NULL, 's'},
		{"file", required_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct audit_filter f = {NULL};
	struct show sh = {NULL};
	bool json = ctx->json;
	fwd_error_t err;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
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
	if (!sh.file) {
		struct policy *p = fwdctl_policy(ctx);

		if (!p)
			return FWD_EXIT_USAGE;
		sh.file = p->audit.file;
	}
	sh.json = json;
	if (audit_read(sh.file, &f, show_record, &sh, &err) < 0) {
		if (errno == ENOENT) {
			/* No decision taken yet. */
			if (!json)
				printf("(no audit record in %s)\n", sh.file);
			return FWD_EXIT_OK;
		}
		fwdctl_err("audit: %s", err.text);
		return FWD_EXIT_USAGE;
	}
	show_header(&sh);
	return FWD_EXIT_OK;
}

FWDCTL_COMMAND(
	cmd_audit_def, .name = "audit",
	.summary = "list the audit trail of decisions, filter by job/user/time",
	.order = 41, .run = cmd_audit);
