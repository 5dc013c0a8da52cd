/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl history run: the history loop (controller/history_run.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "common/timeutil.h"
#include "controller/history_run.h"
#include "db/db.h"

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl history run [--now EPOCH] [--json]\n"
"\n"
"Turn finished jobs into history: for every job that ended in the last\n"
"history_loop.lookback (policy), write its I/O summary (job_io) from the\n"
"best source there is -- compute-node traces and Darshan summaries (kept\n"
"as `fwdctl trace ingest` / `fwdctl ingest --format darshan` wrote them),\n"
"else the Lustre job_stats of its job id taken inside its run time +-\n"
"jobstats.grace, else the samples of the forwarders it held while it ran\n"
"-- with the forwarders it held (k) and the bandwidth it achieved, then\n"
"recompute its application's profile (history.key), so the next job of\n"
"that application is decided from it.  A job that ended less than\n"
"history_loop.late ago is looked at again on every run (statistics that\n"
"arrive late).  A job that cannot be processed (the database refuses its\n"
"summary or profile) is skipped, counted and named on stderr with why;\n"
"the others are done in the same run.\n"
"Run by fwdalloc-history.timer; safe to run by hand at any\n"
"time: a second run changes nothing, and a run while another holds the\n"
"database lock returns at once.\n"
"\n"
"Options:\n"
"  --now EPOCH  the time to run at (seconds; default now), for replays\n"
"  --json       print the counts as JSON\n"
"  -h, --help   this help\n"
"\n"
"Example:\n"
"  fwdctl history run\n"
"\n"
"Exit status:\n"
"  0  done (or another run was in progress)\n"
"  1  the schema is missing or of another version\n"
"  2  usage error\n"
"  3  the database is unavailable\n");
}
/* clang-format on */

static int cmd_history(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"now", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct history_run_stats st;
	bool json = ctx->json;
	int64_t now = (int64_t)time(NULL);
	fwd_error_t err = {{0}};
	struct policy *p;
	struct db *db;
	int c, rc;

	optind = 0;
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "run") != 0) {
		fwdctl_err(
			"history: expected 'run'; see fwdctl history --help");
		return FWD_EXIT_USAGE;
	}
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': {
			double t;

			/* whole seconds only */
			if (fwd_time_parse_epoch(optarg, &t) < 0 || t <= 0 ||
			    t != (double)(int64_t)t) {
				fwdctl_err("history run: --now '%s': expected "
					   "seconds since the epoch",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			now = (int64_t)t;
			break;
		}
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("history");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("history run: unexpected argument '%s'",
			   argv[optind]);
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx)))
		return FWD_EXIT_USAGE;
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	if (ctl_history_run(db, p, now, &st, &err) < 0) {
		fwdctl_err("history run: %s", err.text);
		rc = fwdctl_exit_code(errno);
		db_close(db);
		return rc;
	}
	db_close(db);
	/* which jobs were gone past, and why (the others are done) */
	for (size_t i = 0; i < st.skipped.n; i++)
		fwdctl_err("history run: job %" PRIu64 ": skipped: %s",
			   st.skipped.v[i].job_id, st.skipped.v[i].why);
	if (st.skipped.count > st.skipped.n)
		fwdctl_err("history run: %" PRIu64 " more jobs skipped",
			   st.skipped.count - st.skipped.n);
	if (json) {
		json_t *o = json_pack(
			"{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			"s:I, s:I}",
			"busy", st.busy, "examined", (json_int_t)st.examined,
			"from_jobstats", (json_int_t)st.from_jobstats,
			"from_forwarders", (json_int_t)st.from_forwarders,
			"kept", (json_int_t)st.kept, "unchanged",
			(json_int_t)st.unchanged, "no_data",
			(json_int_t)st.no_data, "profiles",
			(json_int_t)st.profiles, "by_program",
			(json_int_t)st.by_program, "unmatched_ambiguous",
			(json_int_t)st.unmatched_ambiguous, "unmatched_user",
			(json_int_t)st.unmatched_user, "not_reexamined",
			(json_int_t)st.not_reexamined);

		json_object_set_new(o, "skipped",
				    json_integer((json_int_t)st.skipped.count));
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else if (st.busy) {
		printf("another history run is in progress: nothing done\n");
	} else {
		printf("examined %" PRIu64 " finished jobs: %" PRIu64
		       " summaries from job_stats, %" PRIu64
		       " from forwarder samples, %" PRIu64
		       " kept (traces, Darshan), %" PRIu64
		       " unchanged, %" PRIu64 " without statistics; %" PRIu64
		       " profiles updated",
		       st.examined, st.from_jobstats, st.from_forwarders,
		       st.kept, st.unchanged, st.no_data, st.profiles);
		if (st.skipped.count)
			printf("; %" PRIu64 " jobs skipped (see above)",
			       st.skipped.count);
		putchar('\n');
		if (st.not_reexamined)
			printf("of the jobs without statistics, %" PRIu64
			       " were found so less than history_loop.late "
			       "ago and nothing of their run arrived since: "
			       "not looked at again\n",
			       st.not_reexamined);
		if (st.by_program || st.unmatched_ambiguous ||
		    st.unmatched_user)
			printf("job_stats ids of program.uid: %" PRIu64
			       " matched to their job, unmatched: %" PRIu64
			       " (another job of the same user and name ran "
			       "then), %" PRIu64 " (user without a uid on "
			       "this host)\n",
			       st.by_program, st.unmatched_ambiguous,
			       st.unmatched_user);
	}
	return FWD_EXIT_OK;
}

FWDCTL_COMMAND(history_command, .name = "history",
	       .summary = "turn finished jobs into I/O history (history run)",
	       .order = 62, .run = cmd_history)
