/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl reconcile: free the allocations of jobs Slurm no longer runs
 * (the work is controller/reconcile.h's).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/fwdctl.h"
#include "controller/reconcile.h"
#include "db/db.h"

/* clang-format off */
static void reconcile_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl reconcile [--dry-run] [--json]\n"
"\n"
"Free every held allocation whose job Slurm no longer runs: its epilog was\n"
"lost, or the controller prolog or slurmctld died after the decision was\n"
"written.  Jobs Slurm reports as running, suspended, configuring or\n"
"completing keep their forwarders.  Each freed job gets an audit record\n"
"(event \"reconcile\").  Safe to run at any time, e.g. from a timer; it\n"
"takes the same lock as the controller prolog.\n"
"\n"
"Options:\n"
"  --dry-run   only list what would be freed\n"
"  --json      print {\"freed\": [job ids], \"kept\": [job ids]}\n"
"  -h, --help  this help\n"
"\n"
"Examples:\n"
"  fwdctl reconcile --dry-run\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  the database's schema is not the one this fwdctl knows (newer:\n"
"     upgrade fwdalloc; older: fwdctl db migrate); nothing was freed\n"
"  2  usage error\n"
"  3  the database or slurmctld is unavailable, or Slurm's configuration\n"
"     cannot be read (nothing was freed)\n");
}
/* clang-format on */

static json_t *ids_json(const uint64_t *ids, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)ids[i]));
	return a;
}

static int cmd_reconcile(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"dry-run", no_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = ctx->json, dry = false;
	struct ctl_reconcile r;
	struct policy *p;
	fwd_error_t err;
	int c, rc, failed, cause;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			reconcile_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("reconcile");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("reconcile: unexpected argument '%s'", argv[optind]);
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx)))
		return FWD_EXIT_USAGE;
	failed = ctl_reconcile(p, dry, &r, &err) < 0;
	cause = errno;
	for (size_t i = 0; i < r.n_notes; i++)
		fwdctl_err("reconcile: %s", r.notes[i].text);
	if (failed) {
		fwdctl_err("reconcile: %s", err.text);
		rc = r.unavailable ? FWD_EXIT_SERVICE : fwdctl_exit_code(cause);
		ctl_reconcile_free(&r);
		return rc;
	}
	if (json) {
		json_t *o = json_pack(
			"{s:o,s:o,s:b}", "freed", ids_json(r.freed, r.n_freed),
			"kept", ids_json(r.kept, r.n_kept), "dry_run", dry);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		for (size_t i = 0; i < r.n_freed; i++)
			printf("%s job %llu\n", dry ? "would free" : "freed",
			       (unsigned long long)r.freed[i]);
		printf("%zu allocation(s) %s, %zu kept (job still running)\n",
		       r.n_freed, dry ? "to free" : "freed", r.n_kept);
	}
	ctl_reconcile_free(&r);
	return FWD_EXIT_OK;
}

FWDCTL_COMMAND(cmd_reconcile_def, .name = "reconcile",
	       .summary = "free allocations of jobs Slurm no longer runs",
	       .order = 42, .run = cmd_reconcile);
