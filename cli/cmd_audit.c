/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl audit: list and filter the audit trail (the JSON lines file; the
 * database table holds the same records).
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
"                 YYYY-MM-DD[THH:MM[:SS]] (UTC), or an age such as 30m,\n"
"                 2h, 7d\n"
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

/* Epoch seconds from "1700000000", "2026-11-22[THH:MM[:SS]]" or "2h". */
static int parse_since(const char *s, double *out)
{
	static const char *const fmts[] = {
		"%Y-%m-%dT%H:%M:%S",
		"%Y-%m-%d %H:%M:%S",
		"%Y-%m-%dT%H:%M",
		"%Y-%m-%d",
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!errno && end != s && *s != '-') {
		double mult = 0;

		if (!*end)
			mult = -1;
		else if (!strcmp(end, "s"))
			mult = 1;
		else if (!strcmp(end, "m"))
			mult = 60;
		else if (!strcmp(end, "h"))
			mult = 3600;
		else if (!strcmp(end, "d"))
			mult = 86400;
		if (mult < 0) {
			*out = v;
			return 0;
		}
		if (mult > 0) {
			*out = (double)time(NULL) - v * mult;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct tm tm;
		const char *e;

		memset(&tm, 0, sizeof(tm));
		e = strptime(s, fmts[i], &tm);
		if (e && !*e) {
			*out = (double)timegm(&tm);
			return 0;
		}
	}
	return -1;
}

static void print_row(const json_t *r)
{
	json_t *after = json_object_get(r, "forwarders_after"), *v;
	char fw[256] = "";
	size_t i, off = 0;

	json_array_foreach(after, i, v) if (off < sizeof(fw)) off +=
		(size_t)snprintf(fw + off, sizeof(fw) - off, "%s%s",
				 i ? "," : "", json_string_value(v));
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
	const char *job = NULL, *user = NULL, *file = NULL;
	bool json = ctx->json, have_since = false;
	double since = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int c, lineno = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
			job = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 's':
			if (parse_since(optarg, &since) < 0) {
				fwdctl_err("audit: --since %s: not a time; use "
					   "epoch seconds, YYYY-MM-DD[THH:MM"
					   "[:SS]] or an age like 2h",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			have_since = true;
			break;
		case 'f':
			file = optarg;
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
	if (!file) {
		struct policy *p = fwdctl_policy(ctx);

		if (!p)
			return FWD_EXIT_USAGE;
		file = p->audit.file;
	}
	if (!(f = fopen(file, "r"))) {
		if (errno == ENOENT) {
			/* No decision taken yet. */
			if (!json)
				printf("(no audit record in %s)\n", file);
			return FWD_EXIT_OK;
		}
		fwdctl_err("audit: %s: %s", file, strerror(errno));
		return FWD_EXIT_USAGE;
	}
	if (!json)
		printf("%-24s %-8s %-8s %-10s %-14s %-14s %-16s %s\n", "TIME",
		       "EVENT", "JOB", "USER", "REQUEST", "ACTION",
		       "FORWARDERS", "OUTCOME");
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *r;
		const char *v;

		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!(r = json_loads(line, 0, NULL))) {
			fwdctl_err("audit: %s:%d: not a JSON record; skipped",
				   file, lineno);
			continue;
		}
		if ((job &&
		     (!(v = json_string_value(json_object_get(r, "job_id"))) ||
		      strcmp(v, job))) ||
		    (user &&
		     (!(v = json_string_value(json_object_get(r, "user"))) ||
		      strcmp(v, user))) ||
		    (have_since && json_number_value(json_object_get(r, "ts")) <
					   since - 0.5)) {
			json_decref(r);
			continue;
		}
		if (json)
			printf("%s\n", line);
		else
			print_row(r);
		json_decref(r);
	}
	free(line);
	fclose(f);
	return FWD_EXIT_OK;
}

FWDCTL_COMMAND(
	cmd_audit_def, .name = "audit",
	.summary = "list the audit trail of decisions, filter by job/user/time",
	.order = 41, .run = cmd_audit);
