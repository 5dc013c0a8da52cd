/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl profile: show, rebuild and import application profiles.
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
#include "common/units.h"
#include "controller/history.h"
#include "controller/profile_ctl.h"
#include "policies/policy.h"
#include "profiler/job_io.h"
#include "profiler/profile.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fwdctl profile show KEY [--json]\n"
		"       fwdctl profile show --job ID [--json]\n"
		"       fwdctl profile rebuild\n"
		"       fwdctl profile import FILE.json\n"
		"\n"
		"Application profiles: what past runs of an application say "
		"about its\n"
		"I/O, used by the allocator at job launch.\n"
		"\n"
		"show KEY     the stored profile of KEY, e.g.\n"
		"             'user=alice;name=wrf;node_bucket=256' (the key "
		"fields are\n"
		"             policy history.key; values percent-encode ';', "
		"'=', '%%').\n"
		"show --job ID  the prediction for job ID as the controller "
		"would make it\n"
		"             now: the job's key from the jobs table, the "
		"median of the\n"
		"             last history.runs runs at the nearest scale, "
		"scaled to the\n"
		"             job's node count (else its stored profile).\n"
		"rebuild      summaries from Lustre job_stats for finished "
		"jobs without\n"
		"             trace summaries, then recompute every computed "
		"profile from\n"
		"             the stored summaries (one transaction; imported "
		"profiles are\n"
		"             kept unless runs now exist for their key).\n"
		"import FILE  load profiles from other tools: a JSON object or "
		"an array\n"
		"             of objects {\"user\", \"name\", \"nodes\", "
		"[\"account\"],\n"
		"             [\"partition\"], \"profile\": "
		"{\"io_volume_bytes\", \"io_nodes\",\n"
		"             \"node_bandwidth_bps\", \"peak_bandwidth_bps\", "
		"\"iops\",\n"
		"             \"mdops\", \"metadata_queue\", \"io_mode\", "
		"\"runs\",\n"
		"             \"bandwidth_by_forwarders\": {\"1\": bps, ...}}} "
		"(the profile\n"
		"             fields may also sit at the top level).  All or "
		"nothing: one\n"
		"             bad entry imports none.\n"
		"\n"
		"Options:\n"
		"  --job ID    show the prediction for a job\n"
		"  --json      machine-readable output\n"
		"  -h, --help  this help\n"
		"\n"
		"Examples:\n"
		"  fwdctl profile show 'user=alice;name=wrf;node_bucket=256'\n"
		"  fwdctl profile show --job 4711 --json\n"
		"  fwdctl profile import history.json && fwdctl profile "
		"rebuild\n"
		"\n"
		"Exit status: 0 success, 1 no such profile / no history, 2 "
		"usage or input\n"
		"error, 3 database unavailable.\n");
}

static int db_fail(const char *what, const fwd_error_t *err)
{
	int e = errno;

	fwdctl_err("profile %s: %s", what, err->text);
	return fwdctl_exit_code(e);
}

static void print_profile_text(const json_t *pr)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)pr, k, v) {
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

		printf("  %-20s %s\n", k, s ? s : "?");
		free(s);
	}
}

static int print_json(json_t *o)
{
	int rc = FWD_EXIT_OK;

	if (!o || json_dumpf(o, stdout, JSON_INDENT(2)) || putchar('\n') < 0) {
		fwdctl_err("profile: %s", strerror(errno ? errno : ENOMEM));
		rc = FWD_EXIT_USAGE;
	}
	return rc;
}

/* The curve as text, one line per k (profile_curve_json()'s array). */
static void print_curve_text(const json_t *curve)
{
	size_t i;
	json_t *x;

	printf("  curve (per k: median of the runs counted, how many, "
	       "spread):\n");
	json_array_foreach (curve, i, x) {
		char b[32], sp[32];
		json_int_t runs =
			json_integer_value(json_object_get(x, "runs"));

		printf("    k=%-4" JSON_INTEGER_FORMAT
		       " %-10s %" JSON_INTEGER_FORMAT
		       " run%s, spread %s (%s)\n",
		       json_integer_value(json_object_get(x, "k")),
		       units_short_rate(
			       json_number_value(json_object_get(x, "bps")), b,
			       sizeof(b)),
		       runs, runs == 1 ? "" : "s",
		       units_short_rate(json_number_value(json_object_get(
						x, "spread_bps")),
					sp, sizeof(sp)),
		       json_string_value(json_object_get(x, "forwarders")));
	}
}

static int show_job(struct fwdctl_ctx *ctx, struct db *db, uint64_t id,
		    bool json)
{
	struct history_job row;
	struct profile_result res;
	struct profile_job job;
	fwd_error_t err;
	json_t *o, *runs = NULL;
	int r, rc;

	r = history_job(db, id, &row, &err);
	if (r < 0)
		return db_fail("show", &err);
	if (r == 0) {
		fwdctl_err("profile show: job %" PRIu64 " is not in the jobs "
			   "table",
			   id);
		return FWD_EXIT_INVALID;
	}
	job.user = row.user;
	job.account = row.has_account ? row.account : NULL;
	job.name = row.name;
	job.partition = row.has_partition ? row.partition : NULL;
	job.nodes = row.node_count;
	r = profile_lookup(db, fwdctl_policy(ctx), &job, time(NULL), &res,
			   &err);
	if (r > 0) {
		/* where the figures come from: the summaries of the runs of
		 * the key (newest first), each with its source */
		struct profile_jobref *refs = NULL;
		uint64_t *ids = NULL;
		size_t n = 0;

		r = history_key_jobs(db, fwdctl_policy(ctx), &job, time(NULL),
				     0, &refs, &n, &err);
		if (r >= 0 && n && !(ids = calloc(n, sizeof(*ids))))
			r = -1;
		for (size_t i = 0; r >= 0 && i < n; i++)
			ids[i] = refs[i].job_id;
		if (r >= 0)
			r = job_io_sources(db, ids, n, &runs, &err) < 0 ? -1
									: 1;
		free(refs);
		free(ids);
	}
	history_job_free(&row);
	if (r < 0)
		return db_fail("show", &err);
	if (r == 0) {
		fwdctl_err("profile show: job %" PRIu64 ": no history for key "
			   "%s",
			   id, res.key);
		return FWD_EXIT_INVALID;
	}
	o = json_pack("{sI ss ss so so so}", "job_id", (json_int_t)id, "key",
		      res.key, "source", profile_source_name(res.source),
		      "profile", profile_to_json(&res.profile), "curve",
		      profile_curve_json(&res.profile), "runs", runs);
	if (!o) {
		fwdctl_err("profile show: out of memory");
		return FWD_EXIT_INVALID;
	}
	if (json) {
		rc = print_json(o);
	} else {
		size_t i;
		json_t *x;

		printf("job %" PRIu64 "\n  %-20s %s\n  %-20s %s\n", id, "key",
		       res.key, "source", profile_source_name(res.source));
		print_profile_text(json_object_get(o, "profile"));
		print_curve_text(json_object_get(o, "curve"));
		printf("  runs (where the figures come from):\n");
		json_array_foreach (runs, i, x) {
			printf("    job %-10" JSON_INTEGER_FORMAT
			       " %-10s read %" JSON_INTEGER_FORMAT
			       " B, written %" JSON_INTEGER_FORMAT
			       " B, %" JSON_INTEGER_FORMAT
			       " metadata ops, k=%" JSON_INTEGER_FORMAT
			       ", %.0f B/s\n",
			       json_integer_value(json_object_get(x, "job_id")),
			       json_string_value(json_object_get(x, "source")),
			       json_integer_value(
				       json_object_get(x, "read_bytes")),
			       json_integer_value(
				       json_object_get(x, "write_bytes")),
			       json_integer_value(json_object_get(x, "mdops")),
			       json_integer_value(
				       json_object_get(x, "forwarders_held")),
			       json_real_value(json_object_get(
				       x, "bandwidth_achieved_bps")));
		}
		rc = FWD_EXIT_OK;
	}
	json_decref(o);
	return rc;
}

static int show_key(struct db *db, const char *key, bool json)
{
	fwd_error_t err;
	json_t *o;
	int r, rc = FWD_EXIT_OK;

	r = profile_db_show(db, key, &o, &err);
	if (r < 0)
		return db_fail("show", &err);
	if (r == 0) {
		fwdctl_err("profile show: no profile with key \"%s\"", key);
		return FWD_EXIT_INVALID;
	}
	if (json) {
		rc = print_json(o);
	} else {
		const char *k;
		json_t *v;

		json_object_foreach (o, k, v) {
			char *s;

			if (!strcmp(k, "profile") || !strcmp(k, "curve"))
				continue;
			if (!strcmp(k, "updated_at") && json_is_number(v)) {
				/* a time as every command prints one */
				char when[32];

				fwd_time_format(json_number_value(v), when,
						sizeof(when));
				printf("%-22s %s\n", k, when);
				continue;
			}
			s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			printf("%-22s %s\n", k, s ? s : "?");
			free(s);
		}
		printf("profile:\n");
		print_profile_text(json_object_get(o, "profile"));
		if (json_array_size(json_object_get(o, "curve")))
			print_curve_text(json_object_get(o, "curve"));
	}
	json_decref(o);
	return rc;
}

static int do_show(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"job", required_argument, NULL, 'J'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = ctx->json, by_job = false;
	uint64_t id = 0;
	struct db *db;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
			if (fwdctl_job_id("profile show: --job", optarg, &id))
				return FWD_EXIT_USAGE;
			by_job = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("profile");
			return FWD_EXIT_USAGE;
		}
	}
	if (by_job == (optind < argc) || argc - optind > 1) {
		fwdctl_err("profile show: give either KEY or --job ID; see "
			   "'fwdctl profile --help'");
		return FWD_EXIT_USAGE;
	}
	if (!by_job && strlen(argv[optind]) > PROFILE_KEY_MAX) {
		fwdctl_err("profile show: key longer than %d bytes",
			   PROFILE_KEY_MAX);
		return FWD_EXIT_USAGE;
	}
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	rc = by_job ? show_job(ctx, db, id, json)
		    : show_key(db, argv[optind], json);
	db_close(db);
	return rc;
}

static int do_rebuild(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	struct profile_rebuild_stats st;
	struct policy *p;
	fwd_error_t err;
	struct db *db;
	int rc;

	if (fwdctl_wants_help(argc, argv)) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	if (argc > 1) {
		fwdctl_err("profile rebuild: takes no arguments");
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx)))
		return FWD_EXIT_USAGE;
	/* a rebuild reads every summary: allow it a minute per statement */
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 60, true, &rc)))
		return rc;
	if (ctl_profile_rebuild(db, p, time(NULL), &st, &err)) {
		rc = db_fail("rebuild", &err);
	} else {
		for (size_t i = 0; i < st.skipped.n; i++)
			fwdctl_err("profile rebuild: job %" PRIu64
				   ": skipped: %s",
				   st.skipped.v[i].job_id, st.skipped.v[i].why);
		if (st.skipped.count > st.skipped.n)
			fwdctl_err("profile rebuild: %" PRIu64
				   " more jobs skipped",
				   st.skipped.count - st.skipped.n);
		printf("profile rebuild: %" PRIu64 " summaries from job_stats, "
		       "%" PRIu64 " runs read, %" PRIu64 " profiles written "
		       "(%" PRIu64 " computed profiles cleared first)",
		       st.jobstats, st.runs, st.profiles, st.removed);
		if (st.skipped.count)
			printf("; %" PRIu64 " jobs skipped (see above)",
			       st.skipped.count);
		putchar('\n');
		rc = FWD_EXIT_OK;
	}
	db_close(db);
	return rc;
}

static int do_import(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	struct policy *p;
	json_error_t jerr;
	fwd_error_t err;
	json_t *doc;
	struct db *db = NULL;
	size_t n;
	int rc = FWD_EXIT_USAGE;

	if (fwdctl_wants_help(argc, argv)) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	if (argc != 2) {
		fwdctl_err("profile import: need one FILE.json");
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx)))
		return FWD_EXIT_USAGE;
	doc = strcmp(argv[1], "-") ? json_load_file(argv[1], 0, &jerr)
				   : json_loadf(stdin, 0, &jerr);
	if (!doc) {
		fwdctl_err("profile import: %s:%d:%d: %s", argv[1], jerr.line,
			   jerr.column, jerr.text);
		return FWD_EXIT_USAGE;
	}
	if (!json_is_array(doc)) {
		json_t *a = json_array();

		json_array_append_new(a, doc);
		doc = a;
	}
	n = json_array_size(doc);
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		goto out;
	if (db_begin(db, &err)) {
		rc = db_fail("import", &err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char key[PROFILE_KEY_MAX + 1];

		if (profile_db_import(db, p, json_array_get(doc, i), time(NULL),
				      key, sizeof(key), &err)) {
			int e = errno;

			db_rollback(db);
			fwdctl_err("profile import: %s: entry %zu: %s "
				   "(nothing imported)",
				   argv[1], i + 1, err.text);
			rc = e == EINVAL ? FWD_EXIT_USAGE : fwdctl_exit_code(e);
			goto out;
		}
		printf("imported %s\n", key);
	}
	if (db_commit(db, &err)) {
		db_rollback(db);
		rc = db_fail("import", &err);
		goto out;
	}
	printf("profile import: %zu profiles\n", n);
	rc = FWD_EXIT_OK;
out:
	db_close(db);
	json_decref(doc);
	return rc;
}

static int cmd_profile(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	const char *action = argc > 1 ? argv[1] : NULL;

	if (!action) {
		fwdctl_err("profile: missing action (show, rebuild or import); "
			   "see 'fwdctl profile --help'");
		return FWD_EXIT_USAGE;
	}
	if (!strcmp(action, "-h") || !strcmp(action, "--help")) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	argv[1] = (char *)fwdctl_prog_name("profile", action);
	if (!strcmp(action, "show"))
		return do_show(ctx, argc - 1, argv + 1);
	if (!strcmp(action, "rebuild"))
		return do_rebuild(ctx, argc - 1, argv + 1);
	if (!strcmp(action, "import"))
		return do_import(ctx, argc - 1, argv + 1);
	fwdctl_err("profile: unknown action '%s'; see 'fwdctl profile "
		   "--help'",
		   action);
	return FWD_EXIT_USAGE;
}

FWDCTL_COMMAND(profile_command, .name = "profile",
	       .summary = "show, rebuild and import application I/O "
			  "profiles",
	       .order = 61, .run = cmd_profile)
