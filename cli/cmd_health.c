/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl health: scan for fail-slow forwarders and OSTs, list and export
 * their states, admin overrides, Beacon Table 2 report.
 */
#include "config.h"

#include <ctype.h>
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
#include "cli/table.h"
#include "common/timeutil.h"
#include "controller/health_ctl.h"
#include "db/db.h"
#include "monitor/health.h"
#include "monitor/ingest.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* Each feedback command gets this long before it is killed. */
#define COMMAND_TIMEOUT 30.0
/* A scan reads a day of rollups: more than the launch-path timeout. */
#define SCAN_TIMEOUT 300.0
/* Statistics arrive late (ingestion runs every minute or so): by default
 * a scan stops this far before now. */
#define DEFAULT_GRACE 300.0

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fwdctl health scan [--since TIME] [--until TIME] "
		"[--json]\n"
		"       fwdctl health list [--state STATE] [--json | -P] "
		"[-n]\n"
		"       fwdctl health export\n"
		"       fwdctl health exclude NAME --reason TEXT [--kind "
		"forwarder|ost]\n"
		"       fwdctl health clear NAME --reason TEXT [--kind "
		"forwarder|ost]\n"
		"       fwdctl health release NAME [--reason TEXT] [--kind "
		"forwarder|ost]\n"
		"       fwdctl health report [--since TIME] [--json | -P] "
		"[-n]\n"
		"       fwdctl health job JOBID [--json]\n"
		"\n"
		"Find fail-slow forwarders and OSTs in the stored statistics "
		"and keep the\n"
		"health table the allocator reads: a component goes ok -> "
		"suspect ->\n"
		"excluded after consecutive bad scan windows and back to ok "
		"after\n"
		"consecutive good ones (policy `anomaly:` section).  Excluded "
		"forwarders\n"
		"are not handed out and are replaced as defaults; excluded "
		"OSTs are\n"
		"listed in decisions and the policy's ost_exclude_command "
		"runs.\n"
		"\n"
		"  scan      apply the scan windows not yet applied, up to "
		"--until: the\n"
		"            sustained detector (bandwidth under "
		"anomaly.sustained.\n"
		"            peak_fraction of the topology's peak for "
		"anomaly.sustained.\n"
		"            duration while loaded) on the per-minute rollups, "
		"and the\n"
		"            peer detector on the jobs that finished in each "
		"window.\n"
		"            Idempotent: windows already applied are never "
		"applied\n"
		"            again.  Runs the alert (and OST) commands on "
		"state changes.\n"
		"            Meant for a timer (fwdalloc-health-scan.timer).\n"
		"  list      the health table: kind, name, state, since, who "
		"set it,\n"
		"            bad/good window streaks, reason.\n"
		"  export    HEALTH.json for `fwdctl decide --health`: "
		"[{\"kind\",\n"
		"            \"name\", \"state\"}].\n"
		"  exclude   pin a component excluded (an admin override: the "
		"scanner\n"
		"            cannot bring it back).\n"
		"  clear     pin a component ok (the scanner cannot exclude "
		"it).\n"
		"  release   end an admin override: the scanner decides again, "
		"starting\n"
		"            from ok with empty streaks.\n"
		"  report    anomaly episodes (time away from ok) by duration, "
		"binned as\n"
		"            Beacon's Table 2: <1h, 1-4h, 4-12h, 12-96h, "
		">=96h.\n"
		"            Table: DURATION FORWARDERS OSTS "
		"ONGOING_FORWARDERS "
		"ONGOING_OSTS\n"
		"            (ended episodes, then those still going on).\n"
		"  job       job-level check of one job (Beacon Appendix B): "
		"DBSCAN\n"
		"            (anomaly.dbscan) on the duration and volume of "
		"its I/O\n"
		"            phases and those of the same application's past "
		"runs at the\n"
		"            same scale; for phases outside the clusters, the "
		"jobs that\n"
		"            shared its forwarders meanwhile and whether they "
		"were\n"
		"            interference-prone (decision.interference).\n"
		"\n"
		"Options:\n"
		"  --since TIME  scan: first window for components never "
		"scanned (default\n"
		"                24 h before --until); report: episodes "
		"starting then or\n"
		"                later (default all)\n"
		"  --until TIME  scan: last window end (default now - 5 min, "
		"for late\n"
		"                statistics); not in the future\n"
		"  --state STATE list: only the components in this state (ok,\n"
		"                suspect, excluded)\n"
		"  --kind KIND   forwarder or ost; needed only when the "
		"topology does\n"
		"                not know NAME\n"
		"  --reason TEXT why (recorded in the history and given to the "
		"alert\n"
		"                command as FWD_REASON)\n"
		"  --json        machine-readable output\n"
		"  -P, --parsable  list, report: fields separated by '|', "
		"unpadded; report:\n"
		"                no title and no closing `now:` line\n"
		"  -n, --noheader  list, report: no header (nor title) line\n"
		"  -h, --help    this help\n"
		"\n"
		"TIME is Unix seconds, ISO 8601 UTC (2026-11-21T08:00:00Z, or "
		"a\n"
		"date), now-1days, or a time before now (-24h, -90m, 7d).\n"
		"\n"
		"Examples:\n"
		"  fwdctl health scan\n"
		"  fwdctl health exclude lustre-OST0003 --reason 'RAID "
		"rebuild'\n"
		"  fwdctl health release lustre-OST0003\n"
		"  fwdctl health export > /run/fwdalloc/HEALTH.json\n"
		"  fwdctl --json health report --since -30d\n"
		"  fwdctl health job 4711\n"
		"\n"
		"Exit status:\n"
		"  0  success (a failed feedback command is reported, not "
		"fatal)\n"
		"  1  unknown component or job; `job`: the job's I/O was "
		"anomalous\n"
		"  2  usage error, or the policy or topology does not load\n"
		"  3  the database is unavailable\n");
}

struct opts {
	double since, until;
	const char *since_arg, *until_arg; /* as given, for messages */
	bool has_since, has_until;
	const char *kind;
	const char *state;
	const char *reason;
	bool json;
	const char *name;
	struct fwdctl_table table; /* -P, -n of `list` */
};

static int parse_opts(int argc, char **argv, struct opts *o, bool want_name)
{
	static const struct option lopts[] = {
		{"since", required_argument, NULL, 's'},
		{"until", required_argument, NULL, 'u'},
		{"kind", required_argument, NULL, 'k'},
		{"state", required_argument, NULL, 'S'},
		{"reason", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		FWDCTL_TABLE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	const char *action = argv[0];
	int c;

	optind = 0;
	argv[0] = (char *)fwdctl_prog_name("health", action);
	while ((c = getopt_long(argc, argv, "h" FWDCTL_TABLE_SHORTOPTS, lopts,
				NULL)) != -1) {
		if (fwdctl_table_option(&o->table, c))
			continue;
		switch (c) {
		case 's':
			if (fwd_time_parse(optarg, fwd_clock_real(),
					   &o->since) < 0)
				goto bad_time;
			o->has_since = true;
			o->since_arg = optarg;
			break;
		case 'u':
			if (fwd_time_parse(optarg, fwd_clock_real(),
					   &o->until) < 0)
				goto bad_time;
			o->has_until = true;
			o->until_arg = optarg;
			break;
		case 'k':
			o->kind = optarg;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'r':
			o->reason = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		default:
			if (!strcmp(action, "job") &&
			    fwdctl_negative_job_id("health job", argc, argv))
				return -1;
			fwdctl_usage_hint("health");
			return -1;
		}
	}
	if (want_name) {
		if (optind >= argc) {
			fwdctl_err("health %s: %s missing; see 'fwdctl "
				   "health --help'",
				   action,
				   strcmp(action, "job") ? "NAME" : "JOBID");
			return -1;
		}
		o->name = argv[optind++];
	}
	if (optind < argc) {
		fwdctl_err("health %s: unexpected argument '%s'", action,
			   argv[optind]);
		return -1;
	}
	return 0;
bad_time:
	fwdctl_err("health %s: time '%s': use Unix seconds, ISO 8601 UTC "
		   "(2026-11-21T08:00:00Z), now-1days or an age (-90m, 7d)",
		   action, optarg);
	return -1;
}

static void print_json(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;

	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

static json_t *change_json(const struct health_entry *e,
			   const struct health_change *c, const char *cmd_err)
{
	char when[32];

	fwd_time_format(c->time, when, sizeof(when));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:s, s:s?}",
			 "kind", health_kind_name(e->kind), "name", e->name,
			 "from", fwd_health_name(c->from), "to",
			 fwd_health_name(c->to), "time", when, "unix",
			 (json_int_t)c->time, "admin", c->admin, "reason",
			 c->reason, "command_error", cmd_err);
}

struct scan_out {
	bool json;
	json_t *changes;
};

static void on_change(void *arg, const struct health_entry *e,
		      const struct health_change *c, const char *cmd_err)
{
	struct scan_out *so = arg;
	char when[32];

	if (so->json) {
		json_array_append_new(so->changes, change_json(e, c, cmd_err));
		return;
	}
	fwd_time_format(c->time, when, sizeof(when));
	printf("%s %s: %s -> %s at %s: %s\n", health_kind_name(e->kind),
	       e->name, fwd_health_name(c->from), fwd_health_name(c->to), when,
	       c->reason);
	if (cmd_err)
		fwdctl_err("%s %s: %s", health_kind_name(e->kind), e->name,
			   cmd_err);
}

/*
 * Statistics of components the topology does not know (a Beacon record
 * from an unlisted IP is stored under the IP) are never scanned: name
 * them, from the last day, on stderr.
 */
static void warn_unknown(struct db *db, const struct topology *t, double now)
{
	static const char *const kinds[] = {"fwd", "ost"};
	fwd_error_t err;

	for (int k = 0; k < 2; k++) {
		char **names, list[512] = "";
		size_t n, unknown = 0, off = 0;

		if (monitor_sample_names(db, kinds[k], now - 86400, &names, &n,
					 &err) < 0) {
			fwdctl_err("health scan: warning: %s", err.text);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			if ((k == 0 ? topo_forwarder_index(t, names[i])
				    : topo_ost_index(t, names[i])) >= 0)
				continue;
			if (unknown++ < 8 && off < sizeof(list))
				off += (size_t)snprintf(
					list + off, sizeof(list) - off, "%s%s",
					off ? ", " : "", names[i]);
		}
		if (unknown)
			fwdctl_err("health scan: warning: %zu %s name(s) with "
				   "statistics are not in the topology and are "
				   "never scanned: %s%s",
				   unknown, k ? "OST" : "forwarder", list,
				   unknown > 8 ? ", ..." : "");
		monitor_names_free(names, n);
	}
}

/*
 * A scan over no data looks like a healthy system: say when the statistics
 * of the forwarders or OSTs are missing or older than two scan windows
 * past the grace (a dead feed), on stderr; the exit status stays 0.
 */
static void warn_stale(struct db *db, const struct policy *p,
		       const struct topology *t, double now)
{
	double newest[MONITOR_N_SOURCES], limit;
	fwd_error_t err;

	if (monitor_newest_samples(db, newest, &err) < 0) {
		fwdctl_err("health scan: warning: %s", err.text);
		return;
	}
	warn_unknown(db, t, now);
	limit = 2 * p->anomaly.window + DEFAULT_GRACE;
	for (int i = MONITOR_SOURCE_FWD; i <= MONITOR_SOURCE_OST; i++) {
		const char *what =
			i == MONITOR_SOURCE_FWD ? "forwarder" : "OST";

		if ((i == MONITOR_SOURCE_FWD ? t->n_forwarders : t->n_osts) ==
		    0)
			continue;
		if (newest[i] <= 0)
			fwdctl_err("health scan: warning: no %s statistics "
				   "stored: nothing was scanned (is `fwdctl "
				   "ingest` fed?)",
				   what);
		else if (now - newest[i] > limit)
			fwdctl_err("health scan: warning: the newest %s sample "
				   "is %.0f s old (more than %.0f s): the "
				   "statistics feed looks stale",
				   what, now - newest[i], limit);
	}
}

static int do_scan(struct fwdctl_ctx *ctx, struct policy *p, struct opts *o)
{
	struct scan_out so = {.json = o->json};
	struct health_scan_opts so_opts = {.command_timeout = COMMAND_TIMEOUT,
					   .on_change = on_change,
					   .arg = &so};
	struct health_scan_stats st;
	struct topology *t;
	fwd_error_t err;
	struct db *db;
	double now;
	int rc = FWD_EXIT_OK;

	t = fwdctl_topology(ctx);
	if (!t)
		return FWD_EXIT_USAGE;
	if (!p->anomaly.enabled) {
		if (o->json)
			print_json(json_pack("{s:b}", "enabled", 0));
		else
			printf("anomaly detection is disabled by the policy "
			       "(anomaly.enabled: false)\n");
		return FWD_EXIT_OK;
	}
	now = (double)time(NULL);
	/* A window is applied once: one in the future would be marked
	 * scanned before its statistics arrive and never looked at again. */
	if (o->has_until && o->until > now) {
		fwdctl_err("health scan: --until '%s' is in the future: its "
			   "windows are not complete yet",
			   o->until_arg);
		return FWD_EXIT_USAGE;
	}
	so_opts.until = o->has_until ? o->until : now - DEFAULT_GRACE;
	if (o->has_since && o->since >= so_opts.until) {
		fwdctl_err("health scan: --since '%s' is not before --until "
			   "'%s'",
			   o->since_arg, o->has_until ? o->until_arg : "now");
		return FWD_EXIT_USAGE;
	}
	so_opts.since = o->has_since ? o->since : 0;
	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, SCAN_TIMEOUT, true,
			       &rc);
	if (!db)
		return rc;
	if (o->json)
		so.changes = json_array();
	if (ctl_health_scan(db, p, t, &so_opts, &st, &err) < 0) {
		fwdctl_err("health scan: %s", err.text);
		rc = fwdctl_exit_code(errno);
		json_decref(so.changes);
		goto out;
	}
	warn_stale(db, p, t, now);
	if (o->json) {
		char a[32], b[32];

		fwd_time_format(st.first_window, a, sizeof(a));
		fwd_time_format(st.last_window, b, sizeof(b));
		print_json(json_pack(
			"{s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			" s:s, s:s, s:o}",
			"components", (json_int_t)st.components, "windows",
			(json_int_t)st.windows, "bad_windows",
			(json_int_t)st.bad_windows, "jobs", (json_int_t)st.jobs,
			"jobs_compared", (json_int_t)st.jobs_eligible,
			"state_changes", (json_int_t)st.changes,
			"command_errors", (json_int_t)st.command_errors, "from",
			a, "to", b, "changes", so.changes));
	} else {
		printf("scanned %zu components, %zu windows (%zu bad), %zu "
		       "finished jobs (%zu compared), %zu state changes\n",
		       st.components, st.windows, st.bad_windows, st.jobs,
		       st.jobs_eligible, st.changes);
	}
out:
	db_close(db);
	return rc;
}

static json_t *entry_json(const struct health_entry *e)
{
	char since[32], scanned[32];

	fwd_time_format(e->since, since, sizeof(since));
	fwd_time_format(e->scanned_until, scanned, sizeof(scanned));
	return json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s}", "kind",
		health_kind_name(e->kind), "name", e->name, "state",
		fwd_health_name(e->state), "since", since, "source",
		e->override == HEALTH_OVERRIDE_NONE ? "scanner" : "admin",
		"bad_windows", (int)e->bad_streak, "good_windows",
		(int)e->good_streak, "scanned_until", scanned, "reason",
		e->reason);
}

static int do_list(struct fwdctl_ctx *ctx, struct policy *p, struct opts *o,
		   bool export)
{
	struct health_entry *h = NULL;
	fwd_error_t err;
	size_t n = 0;
	struct db *db;
	enum fwd_health only = FWD_HEALTH_OK;
	int rc = FWD_EXIT_OK;

	if (o->state && fwd_health_parse(o->state, &only) < 0) {
		fwdctl_err("health list: --state '%s': use ok, suspect or "
			   "excluded",
			   o->state);
		return FWD_EXIT_USAGE;
	}
	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc);
	if (!db)
		return rc;
	if (health_db_load(db, p->anomaly.window, &h, &n, &err) < 0) {
		fwdctl_err("health: %s", err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	if (o->state) {
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (h[i].state == only)
				h[k++] = h[i];
		n = k;
	}
	if (export) {
		char *s = health_to_json(h, n);

		if (!s) {
			fwdctl_err("health export: %s", strerror(errno));
			rc = FWD_EXIT_INVALID;
			goto out;
		}
		puts(s);
		free(s);
	} else if (o->json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, entry_json(&h[i]));
		print_json(arr);
	} else {
		static const char *const head[] = {
			"KIND",	  "NAME", "STATE", "SINCE",
			"SOURCE", "BAD",  "GOOD",  "REASON",
		};
		static const int width[] = {9, 20, 8, 20, 7, -4, -4};
		struct fwdctl_table t = o->table;

		t.head = head;
		t.width = width;
		t.ncols = 8;
		fwdctl_table_header(&t);
		for (size_t i = 0; i < n; i++) {
			char since[32], bad[16], good[16];
			const char *cells[8];

			fwd_time_format(h[i].since, since, sizeof(since));
			snprintf(bad, sizeof(bad), "%u", h[i].bad_streak);
			snprintf(good, sizeof(good), "%u", h[i].good_streak);
			cells[0] = health_kind_name(h[i].kind);
			cells[1] = h[i].name;
			cells[2] = fwd_health_name(h[i].state);
			cells[3] = since;
			cells[4] = h[i].override == HEALTH_OVERRIDE_NONE
					   ? "scanner"
					   : "admin";
			cells[5] = bad;
			cells[6] = good;
			cells[7] = h[i].reason;
			fwdctl_table_row(&t, cells);
		}
	}
out:
	free(h);
	db_close(db);
	return rc;
}

static int resolve_kind(struct fwdctl_ctx *ctx, struct opts *o,
			enum health_kind *kind)
{
	struct topology *t;
	bool fwd, ost;

	if (o->kind) {
		if (health_kind_parse(o->kind, kind) < 0) {
			fwdctl_err("health: --kind '%s': use forwarder or ost",
				   o->kind);
			return FWD_EXIT_USAGE;
		}
		return FWD_EXIT_OK;
	}
	t = fwdctl_topology(ctx);
	if (!t)
		return FWD_EXIT_USAGE;
	fwd = topo_forwarder_index(t, o->name) >= 0;
	ost = topo_ost_index(t, o->name) >= 0;
	if (fwd && ost) {
		fwdctl_err("health: '%s' is both a forwarder and an OST in "
			   "%s: give --kind",
			   o->name, t->path ? t->path : "the topology");
		return FWD_EXIT_USAGE;
	}
	if (!fwd && !ost) {
		fwdctl_err("health: '%s' is neither a forwarder nor an OST of "
			   "%s (give --kind to name it anyway)",
			   o->name, t->path ? t->path : "the topology");
		return FWD_EXIT_INVALID;
	}
	*kind = fwd ? HEALTH_FORWARDER : HEALTH_OST;
	return FWD_EXIT_OK;
}

/* Index of the first control character (or space, with no_space) in s,
 * else -1. */
static long first_control(const char *s, bool no_space)
{
	for (const char *c = s; *c; c++) {
		unsigned char u = (unsigned char)*c;

		if (u < 0x20 || u == 0x7f || (no_space && u == ' '))
			return (long)(c - s);
	}
	return -1;
}

static int do_admin(struct fwdctl_ctx *ctx, struct policy *p, struct opts *o,
		    enum health_override action)
{
	const char *verb = action == HEALTH_OVERRIDE_EXCLUDE ? "exclude"
			   : action == HEALTH_OVERRIDE_CLEAR ? "clear"
							     : "release";
	struct health_change chg;
	fwd_error_t err, cmd_err;
	enum health_kind kind;
	const char *reason = o->reason;
	char buf[HEALTH_REASON_MAX];
	struct db *db;
	long bad;
	int rc, r;

	if (!reason && action != HEALTH_OVERRIDE_NONE) {
		fwdctl_err("health %s: --reason is required", verb);
		return FWD_EXIT_USAGE;
	}
	if (!reason)
		reason = "released to the scanner";
	if (strlen(o->name) >= HEALTH_NAME_MAX || !*o->name) {
		fwdctl_err("health %s: name '%.40s': 1 to %d characters", verb,
			   o->name, HEALTH_NAME_MAX - 1);
		return FWD_EXIT_USAGE;
	}
	/* Both are stored, printed one per line by `list` and handed to the
	 * alert commands: no control characters, and no silent cut. */
	if ((bad = first_control(o->name, true)) >= 0) {
		fwdctl_err("health %s: name: a space or control character "
			   "(0x%02x) at byte %ld",
			   verb, (unsigned char)o->name[bad], bad + 1);
		return FWD_EXIT_USAGE;
	}
	if ((bad = first_control(reason, false)) >= 0) {
		fwdctl_err("health %s: --reason: a control character (0x%02x) "
			   "at byte %ld",
			   verb, (unsigned char)reason[bad], bad + 1);
		return FWD_EXIT_USAGE;
	}
	if (strlen("admin : ") + strlen(verb) + strlen(reason) >=
	    HEALTH_REASON_MAX) {
		fwdctl_err("health %s: --reason: %zu characters, at most %zu",
			   verb, strlen(reason),
			   HEALTH_REASON_MAX - 1 - strlen("admin : ") -
				   strlen(verb));
		return FWD_EXIT_USAGE;
	}
	rc = resolve_kind(ctx, o, &kind);
	if (rc != FWD_EXIT_OK)
		return rc;
	snprintf(buf, sizeof(buf), "admin %s: %s", verb, reason);
	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc);
	if (!db)
		return rc;
	r = health_db_admin(db, p, kind, o->name, action, buf,
			    (double)time(NULL), COMMAND_TIMEOUT, &chg, &cmd_err,
			    &err);
	if (r < 0) {
		fwdctl_err("health %s: %s", verb, err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	if (o->json) {
		struct health_entry e;

		health_entry_init(&e, kind, o->name);
		print_json(
			r ? change_json(&e, &chg,
					cmd_err.text[0] ? cmd_err.text : NULL)
			  : json_pack("{s:s, s:s, s:b}", "kind",
				      health_kind_name(kind), "name", o->name,
				      "changed", 0));
	} else if (r) {
		printf("%s %s: %s -> %s\n", health_kind_name(kind), o->name,
		       fwd_health_name(chg.from), fwd_health_name(chg.to));
	} else {
		printf("%s %s: state unchanged\n", health_kind_name(kind),
		       o->name);
	}
	if (cmd_err.text[0])
		fwdctl_err("health %s: %s", verb, cmd_err.text);
out:
	db_close(db);
	return rc;
}

static int do_report(struct fwdctl_ctx *ctx, struct opts *o)
{
	struct health_report r;
	fwd_error_t err;
	struct db *db;
	int rc = FWD_EXIT_OK;

	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc);
	if (!db)
		return rc;
	if (health_db_report(db, o->has_since ? o->since : 0,
			     (double)time(NULL), &r, &err) < 0) {
		fwdctl_err("health report: %s", err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	if (o->json) {
		json_t *bins = json_array();
		json_t *kinds = json_object();

		for (int b = 0; b < HEALTH_N_BINS; b++)
			json_array_append_new(bins,
					      json_string(health_bin_name(b)));
		for (int k = 0; k < 2; k++) {
			json_t *ended = json_array(), *ongoing = json_array();

			for (int b = 0; b < HEALTH_N_BINS; b++) {
				json_array_append_new(
					ended, json_integer(r.count[k][b]));
				json_array_append_new(
					ongoing, json_integer(r.ongoing[k][b]));
			}
			json_object_set_new(
				kinds, health_kind_name((enum health_kind)k),
				json_pack("{s:o, s:o, s:i, s:i}", "ended",
					  ended, "ongoing", ongoing,
					  "excluded_now",
					  (int)r.excluded_now[k], "suspect_now",
					  (int)r.suspect_now[k]));
		}
		print_json(json_pack("{s:o, s:o}", "bins", bins, "episodes",
				     kinds));
	} else {
		static const char *const head[] = {"DURATION", "FORWARDERS",
						   "OSTS", "ONGOING_FORWARDERS",
						   "ONGOING_OSTS"};
		static const int width[] = {10, -10, -10, -18};
		struct fwdctl_table t = o->table;
		char v[4][16];

		t.head = head, t.width = width, t.ncols = 5;
		if (!t.parsable && !t.noheader)
			printf("Anomaly episodes by duration (Beacon Table "
			       "2)\n");
		for (int b = 0; b < HEALTH_N_BINS; b++) {
			const char *cells[5] = {health_bin_name(b), v[0], v[1],
						v[2], v[3]};

			snprintf(v[0], sizeof(v[0]), "%u", r.count[0][b]);
			snprintf(v[1], sizeof(v[1]), "%u", r.count[1][b]);
			snprintf(v[2], sizeof(v[2]), "%u", r.ongoing[0][b]);
			snprintf(v[3], sizeof(v[3]), "%u", r.ongoing[1][b]);
			fwdctl_table_row(&t, cells);
		}
		if (t.parsable)
			goto out;
		printf("now: %u forwarder(s) and %u OST(s) excluded, %u and "
		       "%u suspect\n",
		       r.excluded_now[0], r.excluded_now[1], r.suspect_now[0],
		       r.suspect_now[1]);
	}
out:
	db_close(db);
	return rc;
}

static int do_job(struct fwdctl_ctx *ctx, struct policy *p, struct opts *o)
{
	struct health_job_report r;
	struct topology *t;
	fwd_error_t err;
	uint64_t id;
	struct db *db;
	int rc = FWD_EXIT_OK;

	if (fwdctl_job_id("health job", o->name, &id) < 0)
		return FWD_EXIT_USAGE;
	t = fwdctl_topology(ctx);
	if (!t)
		return FWD_EXIT_USAGE;
	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc);
	if (!db)
		return rc;
	if (ctl_health_job_check(db, p, t, id, &r, &err) < 0) {
		fwdctl_err("health job: %s", err.text);
		rc = errno == ENOENT ? FWD_EXIT_INVALID
				     : fwdctl_exit_code(errno);
		goto out;
	}
	if (o->json) {
		json_t *ph = json_array(), *nb = json_array(),
		       *fw = json_array();

		for (size_t i = 0; i < r.n_phases; i++)
			json_array_append_new(
				ph, json_pack("{s:f, s:f, s:b}", "duration",
					      r.phases[i].duration, "volume",
					      r.phases[i].volume, "outlier",
					      r.outlier ? r.outlier[i] : 0));
		for (size_t i = 0; i < r.n_forwarders; i++)
			json_array_append_new(fw, json_string(r.forwarders[i]));
		for (size_t i = 0; i < r.n_neighbours; i++)
			json_array_append_new(
				nb,
				json_pack("{s:I, s:s, s:b, s:s}", "job_id",
					  (json_int_t)r.neighbours[i].job_id,
					  "shared_forwarder",
					  r.neighbours[i].shared, "disruptive",
					  r.neighbours[i].disruptive, "reasons",
					  r.neighbours[i].reasons));
		print_json(json_pack(
			"{s:I, s:s, s:s, s:i, s:b, s:b, s:s,"
			" s:i, s:i, s:i, s:o, s:o, s:o}",
			"job_id", (json_int_t)r.job_id, "user", r.user, "name",
			r.name, "nodes", (int)r.nodes, "checked", r.checked,
			"anomalous", r.anomalous, "reason", r.reason,
			"history_runs", (int)r.n_history_runs, "history_phases",
			(int)r.n_history_phases, "clusters", (int)r.n_clusters,
			"phases", ph, "forwarders", fw, "neighbours", nb));
	} else {
		printf("job %" PRIu64 " (%s/%s, %u nodes): %s: %s\n", id,
		       r.user, r.name, r.nodes,
		       !r.checked    ? "not checked"
		       : r.anomalous ? "ANOMALOUS"
				     : "normal",
		       r.reason);
		for (size_t i = 0; i < r.n_phases; i++)
			printf("  phase %zu: %.0f s, %.3g bytes%s\n", i + 1,
			       r.phases[i].duration, r.phases[i].volume,
			       r.outlier && r.outlier[i] ? "  <- outlier" : "");
		for (size_t i = 0; i < r.n_neighbours; i++)
			printf("  neighbour job %llu on %s: %s%s\n",
			       (unsigned long long)r.neighbours[i].job_id,
			       r.neighbours[i].shared,
			       r.neighbours[i].disruptive
				       ? "interference-prone: "
				       : "not interference-prone",
			       r.neighbours[i].reasons);
	}
	if (r.anomalous)
		rc = FWD_EXIT_INVALID;
	health_job_report_free(&r);
out:
	db_close(db);
	return rc;
}

static int cmd_health(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	struct opts o = {.json = ctx->json};
	const char *sub;
	struct policy *p;
	bool want_name;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? FWD_EXIT_USAGE : FWD_EXIT_OK;
	}
	sub = argv[1];
	if (fwdctl_wants_help(argc - 1, argv + 1)) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	want_name = !strcmp(sub, "exclude") || !strcmp(sub, "clear") ||
		    !strcmp(sub, "release") || !strcmp(sub, "job");
	if (strcmp(sub, "scan") && strcmp(sub, "list") &&
	    strcmp(sub, "export") && strcmp(sub, "report") && !want_name) {
		fwdctl_err("health: unknown subcommand '%s'; see 'fwdctl "
			   "health --help'",
			   sub);
		return FWD_EXIT_USAGE;
	}
	if (parse_opts(argc - 1, argv + 1, &o, want_name) < 0)
		return FWD_EXIT_USAGE;
	p = fwdctl_policy(ctx);
	if (!p)
		return FWD_EXIT_USAGE;
	if (!strcmp(sub, "scan"))
		return do_scan(ctx, p, &o);
	if (!strcmp(sub, "list"))
		return do_list(ctx, p, &o, false);
	if (!strcmp(sub, "export"))
		return do_list(ctx, p, &o, true);
	if (!strcmp(sub, "report"))
		return do_report(ctx, &o);
	if (!strcmp(sub, "job"))
		return do_job(ctx, p, &o);
	if (!strcmp(sub, "exclude"))
		return do_admin(ctx, p, &o, HEALTH_OVERRIDE_EXCLUDE);
	if (!strcmp(sub, "clear"))
		return do_admin(ctx, p, &o, HEALTH_OVERRIDE_CLEAR);
	return do_admin(ctx, p, &o, HEALTH_OVERRIDE_NONE);
}

FWDCTL_COMMAND(health_command, .name = "health",
	       .summary = "find fail-slow forwarders/OSTs; list, override",
	       .order = 70, .run = cmd_health)
