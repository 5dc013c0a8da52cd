/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl decide: the allocation decision for one job, offline (no
 * database): JOB.json + optional STATE.json (the ledger) and HEALTH.json.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "allocator/decide.h"
#include "allocator/decision_json.h"
#include "allocator/ledger.h"
#include "cli/fwdctl.h"
#include "common/timeutil.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* The help text is laid out as printed. */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl [--policy FILE] [--topology FILE] decide --job JOB.json\n"
"              [--state STATE.json] [--health HEALTH.json] [--now EPOCH]\n"
"              [--compact] [--json]\n"
"\n"
"Decide the I/O forwarders of one job, as the controller prolog would,\n"
"from files instead of the database, and print the decision as JSON:\n"
"  {\"job_id\", \"action\": default|scale|isolate|avoid-anomaly|shadow|\n"
"   refused, \"reasons\", \"n_f\", \"s\", \"forwarders\", \"mapping\":\n"
"   [{\"nodes\", \"forwarder\"}], \"excluded_osts\", \"profile\",\n"
"   \"policy_digest\", \"elapsed_us\"}\n"
"Nothing is applied or recorded.\n"
"\n"
"Options:\n"
"  --policy FILE      policy YAML (also accepted before `decide`)\n"
"  --topology FILE    topology YAML (default: the policy's `topology:`)\n"
"  --job FILE         the job: {\"job_id\", \"user\", \"account\", \"name\",\n"
"                     \"partition\", \"nodes\": \"<slurm hostlist>\",\n"
"                     \"request\": auto|scale|isolate|off|shadow,\n"
"                     \"profile\": {...} or absent for no history}\n"
"  --state FILE       current allocations: [{\"job_id\", \"forwarders\",\n"
"                     \"private\", \"io_mode\", \"mdops\", \"bandwidth_bps\",\n"
"                     \"iops\"}, ...] (default: none)\n"
"  --health FILE      [{\"kind\": forwarder|ost, \"name\", \"state\":\n"
"                     ok|suspect|excluded}, ...] (default: all ok)\n"
"  --now EPOCH        decision time, Unix seconds (default: the clock)\n"
"  --compact          print the JSON on one line\n"
"  --json             accepted for symmetry; the output is always JSON\n"
"  -h, --help         this help\n"
"\n"
"Unknown keys, unknown nodes or forwarders, negative numbers and bad\n"
"modes in the input files are errors that name the field and the value.\n"
"\n"
"Examples:\n"
"  fwdctl decide --policy /etc/fwdalloc/fwdalloc.yaml \\\n"
"      --topology /etc/fwdalloc/topology.yaml --job job.json\n"
"  fwdctl --policy p.yaml decide --job job.json --state state.json \\\n"
"      --health health.json --compact\n"
"\n"
"Exit status:\n"
"  0  the decision was printed\n"
"  2  usage error, or an input file is missing or invalid\n");
}
/* clang-format on */

static int run_decide(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"topology", required_argument, NULL, 't'},
		{"job", required_argument, NULL, 'J'},
		{"state", required_argument, NULL, 's'},
		{"health", required_argument, NULL, 'H'},
		{"now", required_argument, NULL, 'n'},
		{"compact", no_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *job_path = NULL, *state_path = NULL, *health_path = NULL;
	struct alloc_healthfile *hf = NULL;
	struct alloc_jobfile *jf = NULL;
	struct alloc_decision *d = NULL;
	struct alloc_ledger *l = NULL;
	struct alloc_ctx *cx = NULL;
	const struct topology *t;
	const struct policy *p;
	bool compact = false;
	double now = -1, t0;
	int c, rc = FWD_EXIT_USAGE;
	fwd_error_t err;
	char *json = NULL, *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			ctx->policy_path = optarg;
			ctx->policy_explicit = true;
			break;
		case 't':
			ctx->topology_path = optarg;
			break;
		case 'J':
			job_path = optarg;
			break;
		case 's':
			state_path = optarg;
			break;
		case 'H':
			health_path = optarg;
			break;
		case 'n':
			errno = 0;
			now = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(now) ||
			    now < 0 || now > 253402300799.0) {
				fwdctl_err("decide: --now %s: not a "
					   "non-negative epoch in seconds "
					   "(up to year 9999)",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			break;
		case 'c':
			compact = true;
			break;
		case 'j':
			break;
		case 'h':
			usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("decide");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("decide: unexpected argument '%s'", argv[optind]);
		return FWD_EXIT_USAGE;
	}
	if (!job_path) {
		fwdctl_err("decide: --job FILE is required; see 'fwdctl "
			   "decide --help'");
		return FWD_EXIT_USAGE;
	}
	if (now < 0)
		now = fwd_clock_real();
	if (!(p = fwdctl_policy(ctx)) || !(t = fwdctl_topology(ctx)))
		goto out;
	if (!(cx = alloc_ctx_create(t, &err)) ||
	    !(l = alloc_ledger_create(t))) {
		fwdctl_err("decide: %s", cx ? strerror(errno) : err.text);
		goto out;
	}
	if (!(jf = alloc_jobfile_load(t, job_path, &err))) {
		fwdctl_err("%s", err.text);
		goto out;
	}
	if (state_path && alloc_state_load(l, state_path, &err) < 0) {
		fwdctl_err("%s", err.text);
		goto out;
	}
	if (health_path &&
	    !(hf = alloc_healthfile_load(t, health_path, &err))) {
		fwdctl_err("%s", err.text);
		goto out;
	}
	t0 = fwd_clock_mono() * 1e6;
	d = alloc_decide(cx, p, l, hf ? &hf->health : NULL, &jf->job, now,
			 &err);
	if (!d) {
		fwdctl_err("decide: %s", err.text);
		goto out;
	}
	d->elapsed_us = (uint64_t)(fwd_clock_mono() * 1e6 - t0 + 0.5);
	json = alloc_decision_to_json(d,
				      compact ? JSON_COMPACT : JSON_INDENT(2));
	if (!json) {
		fwdctl_err("decide: cannot format the decision: %s",
			   strerror(errno ? errno : ENOMEM));
		goto out;
	}
	printf("%s\n", json);
	rc = fflush(stdout) == 0 ? FWD_EXIT_OK : FWD_EXIT_USAGE;
out:
	free(json);
	alloc_decision_destroy(d);
	alloc_healthfile_destroy(hf);
	alloc_jobfile_destroy(jf);
	alloc_ledger_destroy(l);
	alloc_ctx_destroy(cx);
	return rc;
}

FWDCTL_COMMAND(decide_command, .name = "decide",
	       .summary = "decide one job's forwarders from JSON files",
	       .order = 30, .run = run_decide)
