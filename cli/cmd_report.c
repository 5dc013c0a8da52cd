/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl report job JOBID | machine: the reports of report/ (one job's
 * I/O and advice, the machine's I/O weather), as text, JSON or one
 * self-contained HTML file.  This file reads the database directly (the
 * admin path, like `fwdctl alloc show`): report_direct() is that path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "common/timeutil.h"
#include "db/db.h"
#include "policies/policy.h"
#include "report/report.h"
#include "service/protocol.h"
#include "service/query.h"

/* The controller service refused the request (its reason printed). */
#define FWD_EXIT_REFUSED 4

/* clang-format off */
static void report_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl report job JOBID [--json | --html FILE]\n"
"       fwdctl report machine [--since TIME] [--until TIME]\n"
"                             [--json | --html FILE]\n"
"\n"
"What the I/O system did: one job's I/O and what fwdalloc made of it, or\n"
"the whole machine's I/O weather over a time range.  Text on stdout by\n"
"default; --json prints the same figures as one JSON document; --html\n"
"writes one self-contained page (charts as inline SVG, no network access\n"
"needed) to FILE.\n"
"\n"
"job JOBID   the job's I/O over time (read and write bandwidth, IOPS,\n"
"            metadata operations: from its Lustre job_stats, else the\n"
"            phases of its trace or Darshan summary) and its forwarders'\n"
"            load meanwhile; its forwarders, OSTs and MDTs during the run\n"
"            against their usual load (the hourly median of the week\n"
"            before for forwarders, of the day before for OSTs and MDTs)\n"
"            and its own bytes there; this run against the application's\n"
"            past runs at the same scale (same user and job name, node\n"
"            count in the same power-of-two bucket: quantiles); what\n"
"            fwdalloc decided and why, the bandwidth it expected and the\n"
"            bandwidth achieved; health episodes of its components and\n"
"            the jobs that shared its forwarders during the run\n"
"            (disruptive: N-1, or over 300 metadata operations per second,\n"
"            by their decision's figures); advice (see ADVICE below)\n"
"machine     per forwarder and per OST bandwidth and queue length over\n"
"            time (heat maps in HTML), metadata (MDT) load, health\n"
"            episodes and fwdalloc's allocations in the range\n"
"\n"
"Options:\n"
"  --json          machine-readable output\n"
"  --html FILE     write the report as one HTML page to FILE (- for\n"
"                  stdout), replacing FILE if it exists\n"
"  --since TIME    machine: start of the range (default: 24 hours before\n"
"                  --until); epoch seconds, YYYY-MM-DD[THH:MM[:SS]][Z],\n"
"                  now-7days or an age like 2h\n"
"  --until TIME    machine: end of the range (default: now)\n"
"  --service SOCKET\n"
"                  ask the controller service (fwdallocd) listening at\n"
"                  SOCKET instead of the database.  Without it, fwdctl\n"
"                  asks the service at " FWD_SERVICE_QUERY_SOCKET "\n"
"                  when it cannot read the policy's\n"
"                  database.password_file (a user, not an admin): the\n"
"                  service checks who asks with a MUNGE credential and\n"
"                  answers for the user's own jobs only (admins: any job\n"
"                  and the machine report).  FWDALLOC_MUNGE_SOCKET names\n"
"                  munged's socket when it is not libmunge's default\n"
"  -h, --help      this help\n"
"\n"
"ADVICE (job): each piece of advice comes from one rule on the stored\n"
"figures of the run:\n"
"  n-1-small-writes  the run's I/O mode is N-1 (many processes, one\n"
"                    file) and its mean write request (job_stats: bytes\n"
"                    written over write requests) is below 1 MiB:\n"
"                    aggregate writes (collective I/O, MPI-IO hints) or\n"
"                    write one file per process or group\n"
"  metadata-heavy    metadata operations exceeded 300 per second during\n"
"                    the run's I/O phases (its summary; without one, its\n"
"                    job_stats over the run time; Beacon's threshold):\n"
"                    keep small-file and open/stat-heavy work off the\n"
"                    parallel file system (node-local storage, fewer\n"
"                    files)\n"
"  scale-not-paying  the application's curve (the median achieved\n"
"                    bandwidth of its runs at this scale, this one\n"
"                    included, by forwarders held) holds a smaller count\n"
"                    within 10 %% of this run's count: the extra\n"
"                    forwarders did not pay; ask for --io-upgrade=off or\n"
"                    a smaller job\n"
"  slow-component    a forwarder or OST the job used was suspect or\n"
"                    excluded during the run: its bandwidth says more\n"
"                    about the machine than about the application\n"
"\n"
"Examples:\n"
"  fwdctl report job 4242\n"
"  fwdctl report job 4242 --html job-4242.html\n"
"  fwdctl report machine --since 2026-11-22 --until 2026-11-23 --json\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  no such job\n"
"  2  usage error\n"
"  3  the database or the service is unavailable\n"
"  4  the service refused (its reason follows)\n");
}
/* clang-format on */

/* What the command line asked for. */
struct report_args {
	bool machine;	 /* machine, else job */
	uint64_t job_id; /* job */
	int64_t since, until;
	enum report_format fmt;
	const char *html; /* --html FILE, or NULL */
};

/* Write text to the --html file (or stdout for "-"). */
static int write_out(const struct report_args *a, const char *text)
{
	size_t len = strlen(text);
	FILE *f;

	if (!a->html || !strcmp(a->html, "-")) {
		if (fwrite(text, 1, len, stdout) != len ||
		    (len && text[len - 1] != '\n' && putchar('\n') == EOF)) {
			fwdctl_err("report: writing stdout: %s",
				   strerror(errno));
			return FWD_EXIT_INVALID;
		}
		return FWD_EXIT_OK;
	}
	f = fopen(a->html, "w");
	if (!f) {
		fwdctl_err("report: --html %s: %s", a->html, strerror(errno));
		return FWD_EXIT_USAGE;
	}
	if (fwrite(text, 1, len, f) != len) {
		fwdctl_err("report: writing %s: %s", a->html, strerror(errno));
		fclose(f);
		return FWD_EXIT_INVALID;
	}
	if (fclose(f) == EOF) {
		fwdctl_err("report: writing %s: %s", a->html, strerror(errno));
		return FWD_EXIT_INVALID;
	}
	return FWD_EXIT_OK;
}

/*
 * The admin path: connect to the database with the policy's credentials,
 * render the report and write it out.  Returns an exit code.
 */
static int report_direct(struct fwdctl_ctx *ctx, const struct report_args *a)
{
	struct db *db;
	fwd_error_t err;
	char *text = NULL;
	int rc, r;

	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	if (a->machine)
		r = report_machine(db, a->since, a->until, a->fmt, &text, &err);
	else
		r = report_job(db, a->job_id, a->fmt, &text, &err);
	if (r < 0) {
		int cause = errno;

		fwdctl_err("report: %s", err.text);
		rc = fwdctl_exit_code(cause);
	} else if (r == REPORT_NOT_FOUND) {
		fwdctl_err("report job: no job %llu recorded",
			   (unsigned long long)a->job_id);
		rc = FWD_EXIT_INVALID;
	} else {
		rc = write_out(a, text);
	}
	free(text);
	db_close(db);
	return rc;
}

/*
 * The user's path: ask the controller service at `sock`, which checks the
 * caller's MUNGE credential (or, for tests, the one in cred_file) and
 * answers with what the caller may see.  Returns an exit code.
 */
static int report_service(const struct report_args *a, const char *sock,
			  const char *cred_file)
{
	static const enum svcq_format fmts[] = {
		[REPORT_TEXT] = SVCQ_TEXT,
		[REPORT_JSON] = SVCQ_JSON,
		[REPORT_HTML] = SVCQ_HTML,
	};
	struct svcq_request r = {
		.kind = a->machine ? SVCQ_MACHINE : SVCQ_JOB,
		.format = fmts[a->fmt],
		.job_id = a->job_id,
		.since = a->since,
		.until = a->until,
	};
	char cred[FWD_SVC_QUERY_MAX + 1], why[1024], *text = NULL;
	size_t len;
	int rc;

	if (cred_file) {
		FILE *f = fopen(cred_file, "r");
		size_t n = f ? fread(cred, 1, sizeof(cred) - 1, f) : 0;

		if (!f) {
			fwdctl_err("report: --credential %s: %s", cred_file,
				   strerror(errno));
			return FWD_EXIT_USAGE;
		}
		fclose(f);
		cred[n] = '\0';
		cred[strcspn(cred, "\n")] = '\0';
	}
	switch (svcq_call(sock, getenv("FWDALLOC_MUNGE_SOCKET"), &r,
			  cred_file ? cred : NULL, 30, &text, &len, why,
			  sizeof(why))) {
	case SVCQ_ANSWERED:
		rc = write_out(a, text);
		break;
	case SVCQ_REFUSED:
		fwdctl_err("report: the controller service refused: %s", why);
		rc = FWD_EXIT_REFUSED;
		break;
	case SVCQ_ABSENT:
		fwdctl_err("report: %s (the controller service, fwdallocd, "
			   "answers users' report requests; is it running?)",
			   why);
		rc = FWD_EXIT_SERVICE;
		break;
	case SVCQ_NO_CRED:
		fwdctl_err("report: %s", why);
		rc = FWD_EXIT_SERVICE;
		break;
	default:
		fwdctl_err("report: the controller service at %s: %s", sock,
			   why);
		rc = FWD_EXIT_SERVICE;
		break;
	}
	free(text);
	return rc;
}

/* Whether the caller cannot read the database password: then the
 * service answers.  root, and whoever reads the policy's password file,
 * go direct; anyone else (no password file named, or a policy it cannot
 * read) asks the service. */
static bool report_needs_service(struct fwdctl_ctx *ctx)
{
	struct policy *p;
	bool svc;

	if (geteuid() == 0)
		return false;
	if (!(p = policy_load_locations(ctx->policy_path)))
		return true;
	svc = !p->database.password_file ||
	      access(p->database.password_file, R_OK) < 0;
	policy_destroy(p);
	return svc;
}

static int parse_time(const char *opt, const char *s, int64_t *out)
{
	double t;

	if (fwd_time_parse(s, fwd_clock_real(), &t) < 0) {
		fwdctl_err("report: %s %s: not a time; use epoch seconds, "
			   "YYYY-MM-DD[THH:MM[:SS]][Z], now-7days or an age "
			   "like 2h",
			   opt, s);
		return -1;
	}
	*out = (int64_t)t;
	return 0;
}

static int cmd_report(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"html", required_argument, NULL, 'H'},
		{"since", required_argument, NULL, 's'},
		{"until", required_argument, NULL, 'u'},
		{"service", required_argument, NULL, 'S'},
		/* tests only: send this credential, as is */
		{"credential", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct report_args a = {.fmt = REPORT_TEXT};
	bool json = ctx->json, have_since = false, have_until = false;
	const char *service = NULL, *cred_file = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'H':
			a.html = optarg;
			break;
		case 's':
			if (parse_time("--since", optarg, &a.since) < 0)
				return FWD_EXIT_USAGE;
			have_since = true;
			break;
		case 'u':
			if (parse_time("--until", optarg, &a.until) < 0)
				return FWD_EXIT_USAGE;
			have_until = true;
			break;
		case 'S':
			service = optarg;
			break;
		case 'C':
			cred_file = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return FWD_EXIT_OK;
		default:
			if (fwdctl_negative_job_id("report", argc, argv))
				return FWD_EXIT_USAGE;
			fwdctl_usage_hint("report");
			return FWD_EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (json && a.html) {
		fwdctl_err("report: --json and --html exclude each other");
		return FWD_EXIT_USAGE;
	}
	if (a.html && !*a.html) {
		fwdctl_err("report: --html: empty file name");
		return FWD_EXIT_USAGE;
	}
	a.fmt = a.html ? REPORT_HTML : json ? REPORT_JSON : REPORT_TEXT;
	if (argc < 1) {
		fwdctl_err("report: missing report (job or machine); see "
			   "'fwdctl report --help'");
		return FWD_EXIT_USAGE;
	}
	if (!strcmp(argv[0], "job")) {
		if (argc < 2) {
			fwdctl_err("report job: JOBID missing; see 'fwdctl "
				   "report --help'");
			return FWD_EXIT_USAGE;
		}
		if (argc > 2) {
			fwdctl_err("report job: unexpected argument '%s'",
				   argv[2]);
			return FWD_EXIT_USAGE;
		}
		if (have_since || have_until) {
			fwdctl_err("report job: --since and --until are for "
				   "'report machine' (a job's range is its "
				   "run)");
			return FWD_EXIT_USAGE;
		}
		if (fwdctl_job_id("report job", argv[1], &a.job_id) < 0)
			return FWD_EXIT_USAGE;
	} else if (!strcmp(argv[0], "machine")) {
		if (argc > 1) {
			fwdctl_err("report machine: unexpected argument '%s'",
				   argv[1]);
			return FWD_EXIT_USAGE;
		}
		a.machine = true;
		if (!have_until)
			a.until = (int64_t)fwd_clock_real();
		if (!have_since)
			a.since = a.until - 86400;
		if (a.since >= a.until) {
			fwdctl_err("report machine: --since %lld is not before "
				   "--until %lld",
				   (long long)a.since, (long long)a.until);
			return FWD_EXIT_USAGE;
		}
	} else {
		fwdctl_err("report: unknown report '%s' (job or machine); "
			   "see 'fwdctl report --help'",
			   argv[0]);
		return FWD_EXIT_USAGE;
	}
	if (service || cred_file || report_needs_service(ctx))
		return report_service(
			&a, service ? service : FWD_SERVICE_QUERY_SOCKET,
			cred_file);
	return report_direct(ctx, &a);
}

FWDCTL_COMMAND(cmd_report_def, .name = "report",
	       .summary = "a job's I/O report, the machine's I/O weather",
	       .order = 45, .run = cmd_report);
