/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl metrics: the state of fwdalloc in the OpenMetrics text format
 * (OpenMetrics 1.0, prometheus/docs docs/specs/om/open_metrics_spec.md),
 * for node_exporter's textfile collector or a scrape through a wrapper.
 * Every figure is read from the database and the topology; the queries
 * belong to the tables' owners (controller/audit.c, ledger_store.c,
 * monitor/health_store.c, monitor/freshness.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "common/timeutil.h"
#include "common/vocab.h"
#include "controller/audit.h"
#include "controller/ledger_store.h"
#include "monitor/health.h"
#include "monitor/ingest.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* clang-format off */
static void metrics_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl metrics [--textfile DIR]\n"
"\n"
"Print fwdalloc's state in the OpenMetrics text format, ending in \"# EOF\":\n"
"  fwdalloc_decisions_total{action}        controller prolog decisions by\n"
"                                          action (audit table)\n"
"  fwdalloc_fallbacks_total                decisions that fell back to the\n"
"                                          default mapping\n"
"  fwdalloc_node_outcomes_total{outcome}   nodes of ended jobs whose prolog\n"
"                                          fell back, or never reported\n"
"                                          (silent: the plugin not loaded)\n"
"  fwdalloc_prolog_seconds                 histogram of the controller\n"
"                                          prolog's decision time\n"
"  fwdalloc_forwarders{state}              held (by a job now), idle (backup,\n"
"                                          free, not excluded), excluded\n"
"  fwdalloc_health_components{kind,state}  the health table\n"
"  fwdalloc_newest_sample_age_seconds{source}\n"
"                                          age of the newest stored sample of\n"
"                                          fwd, ost, mdt statistics and Lustre\n"
"                                          job_stats (NaN: none stored)\n"
"The counters count what the audit table holds (retention lowers them).\n"
"Fallback records that only the audit file holds (the controller hook\n"
"could not reach the database: a refused password file, a server down)\n"
"are stored in the table first, so every fallback is counted; how far the\n"
"file was read is kept in audit.replayed beside it.\n"
"\n"
"  --textfile DIR  write DIR/fwdalloc.prom (mode 0644) instead of standard\n"
"                  output, atomically (a temporary file in DIR, renamed),\n"
"                  for node_exporter's textfile collector; run it as root\n"
"                  (or any account that reads the password file and\n"
"                  writes DIR)\n"
"etc/grafana-fwdalloc.json is a dashboard over these.\n"
"\n"
"Examples:\n"
"  fwdctl metrics --textfile /var/lib/prometheus/node-exporter\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  the topology or the database schema is not usable, or DIR cannot\n"
"     be written\n"
"  2  usage error\n"
"  3  the database is unavailable\n");
}
/* clang-format on */

static void family(const char *name, const char *type, const char *unit,
		   const char *help)
{
	printf("# TYPE %s %s\n", name, type);
	if (unit)
		printf("# UNIT %s %s\n", name, unit);
	printf("# HELP %s %s\n", name, help);
}

/* A label value as OpenMetrics escapes it (\\, \", \n). */
static void label_value(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
}

static int held_index(char **held, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(held[i], name))
			return (int)i;
	return -1;
}

static int print_metrics(struct db *db, const struct policy *p,
			 const struct topology *t, fwd_error_t *err)
{
	static const char *const states[] = {"ok", "suspect", "excluded"};
	struct audit_metrics am;
	struct ledger_row *rows = NULL;
	struct health_entry *h = NULL;
	double newest[MONITOR_N_SOURCES], now = fwd_clock_real();
	size_t n_rows = 0, n_h = 0, n_held = 0;
	char **held = NULL;
	unsigned n_idle = 0, n_excl = 0, counts[2][3] = {{0}};
	int rv = -1;

	if (audit_metrics(db, &am, err) < 0 ||
	    ledger_store_held(db, &rows, &n_rows, err) < 0 ||
	    health_db_load(db, p->anomaly.window, &h, &n_h, err) < 0 ||
	    monitor_newest_samples(db, newest, err) < 0)
		goto out;
	if (!(held = calloc(n_rows + 1, sizeof(*held))))
		goto out;
	for (size_t i = 0; i < n_rows; i++)
		if (held_index(held, n_held, rows[i].forwarder) < 0)
			held[n_held++] = rows[i].forwarder;
	for (size_t i = 0; i < n_h; i++)
		counts[h[i].kind == HEALTH_OST][h[i].state]++;
	for (size_t i = 0; i < t->n_forwarders; i++) {
		const struct topo_forwarder *f = &t->forwarders[i];
		long k = health_find(h, n_h, HEALTH_FORWARDER, f->name);
		bool excl = k >= 0 && h[k].state == FWD_HEALTH_EXCLUDED;

		if (excl)
			n_excl++;
		else if (f->role == TOPO_ROLE_BACKUP &&
			 held_index(held, n_held, f->name) < 0)
			n_idle++;
	}
	/* Components without a health row are ok. */
	counts[0][FWD_HEALTH_OK] +=
		(unsigned)t->n_forwarders -
		(counts[0][0] + counts[0][1] + counts[0][2]);
	counts[1][FWD_HEALTH_OK] +=
		(unsigned)t->n_osts -
		(counts[1][0] + counts[1][1] + counts[1][2]);

	family("fwdalloc_decisions", "counter", NULL,
	       "Controller prolog decisions in the audit table, by action.");
	for (size_t i = 0; i < am.n_actions; i++) {
		printf("fwdalloc_decisions_total{action=\"");
		label_value(am.action[i]);
		printf("\"} %llu\n", (unsigned long long)am.by_action[i]);
	}
	family("fwdalloc_fallbacks", "counter", NULL,
	       "Decisions that left the job on its default mapping because "
	       "fwdalloc failed.");
	printf("fwdalloc_fallbacks_total %llu\n",
	       (unsigned long long)am.fallbacks);
	family("fwdalloc_node_outcomes", "counter", NULL,
	       "Compute nodes of ended jobs whose prolog did not apply the "
	       "decision: fell back, or never reported (plugin not loaded).");
	printf("fwdalloc_node_outcomes_total{outcome=\"fell_back\"} %llu\n",
	       (unsigned long long)am.node_fell_back);
	printf("fwdalloc_node_outcomes_total{outcome=\"silent\"} %llu\n",
	       (unsigned long long)am.node_silent);
	family("fwdalloc_prolog_seconds", "histogram", "seconds",
	       "Time the controller prolog took to decide.");
	for (int b = 0; b < AUDIT_LATENCY_BUCKETS; b++)
		printf("fwdalloc_prolog_seconds_bucket{le=\"%s\"} %llu\n",
		       b == 0	? "0.001"
		       : b == 1 ? "0.005"
		       : b == 2 ? "0.01"
		       : b == 3 ? "0.05"
		       : b == 4 ? "0.1"
		       : b == 5 ? "0.5"
		       : b == 6 ? "1.0"
		       : b == 7 ? "5.0"
				: "10.0",
		       (unsigned long long)am.le[b]);
	printf("fwdalloc_prolog_seconds_bucket{le=\"+Inf\"} %llu\n",
	       (unsigned long long)am.decisions);
	printf("fwdalloc_prolog_seconds_count %llu\n",
	       (unsigned long long)am.decisions);
	printf("fwdalloc_prolog_seconds_sum %.6f\n", am.elapsed_sum);
	family("fwdalloc_forwarders", "gauge", NULL,
	       "Forwarders held by running jobs, idle in the backup pool, and "
	       "excluded as fail-slow.");
	printf("fwdalloc_forwarders{state=\"held\"} %zu\n", n_held);
	printf("fwdalloc_forwarders{state=\"idle\"} %u\n", n_idle);
	printf("fwdalloc_forwarders{state=\"excluded\"} %u\n", n_excl);
	family("fwdalloc_health_components", "gauge", NULL,
	       "Forwarders and OSTs by health state.");
	for (int k = 0; k < 2; k++)
		for (int s = 0; s < 3; s++)
			printf("fwdalloc_health_components{kind=\"%s\",state="
			       "\"%"
			       "s\"} %u\n",
			       k ? "ost" : "forwarder", states[s],
			       counts[k][s]);
	family("fwdalloc_newest_sample_age_seconds", "gauge", "seconds",
	       "Age of the newest stored statistics sample, by source (NaN: "
	       "none stored).");
	for (int i = 0; i < MONITOR_N_SOURCES; i++) {
		printf("fwdalloc_newest_sample_age_seconds{source=\"%s\"} ",
		       monitor_source_names[i]);
		if (newest[i] > 0)
			printf("%.3f\n", now - newest[i]);
		else
			printf("NaN\n");
	}
	printf("# EOF\n");
	rv = 0;
out:
	free(held);
	free(h);
	ledger_store_rows_free(rows, n_rows);
	return rv;
}

/*
 * Fallback records only the audit file holds (the hook could not reach the
 * database) go to the audit table first, so that the counters count them
 * (controller/audit.h audit_replay()); how far the file was read is kept
 * in audit.replayed beside it.  A failure is said, and the figures are
 * printed from what the table holds.
 */
static void replay_fallbacks(struct db *db, const struct policy *p)
{
	const char *slash = p->audit.file ? strrchr(p->audit.file, '/') : NULL;
	char state[4096];
	fwd_error_t err;
	uint64_t n;
	int len;

	if (!slash)
		return;
	len = snprintf(state, sizeof(state), "%.*s/audit.replayed",
		       (int)(slash - p->audit.file), p->audit.file);
	if (len < 0 || (size_t)len >= sizeof(state))
		return;
	if (audit_replay(db, p->audit.file, state, &n, &err) < 0)
		fwdctl_err("metrics: fallbacks from the audit file not "
			   "counted: %s",
			   err.text);
}

/*
 * --textfile DIR: stdout goes to a new file in DIR, renamed to
 * DIR/fwdalloc.prom once complete, so node_exporter's textfile collector
 * never reads half of it.  0, or -1 after saying why.
 */
static int textfile_begin(const char *dir, char *tmp, size_t n)
{
	int fd, len = snprintf(tmp, n, "%s/.fwdalloc.prom.XXXXXX", dir);

	if (len < 0 || (size_t)len >= n) {
		fwdctl_err("metrics: --textfile %s: path too long", dir);
		return -1;
	}
	if ((fd = mkstemp(tmp)) < 0) {
		fwdctl_err("metrics: --textfile %s: %s", dir, strerror(errno));
		return -1;
	}
	/* node_exporter reads it under its own account. */
	if (fchmod(fd, 0644) < 0 || fflush(stdout) != 0 ||
	    dup2(fd, STDOUT_FILENO) < 0) {
		fwdctl_err("metrics: %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	return 0;
}

static int textfile_end(const char *dir, const char *tmp, bool ok)
{
	char final[4096];
	int len = snprintf(final, sizeof(final), "%s/fwdalloc.prom", dir);

	if (ok && (fflush(stdout) != 0 || fsync(STDOUT_FILENO) != 0)) {
		fwdctl_err("metrics: %s: %s", tmp, strerror(errno));
		ok = false;
	}
	if (ok && (len < 0 || (size_t)len >= sizeof(final) ||
		   rename(tmp, final) < 0)) {
		fwdctl_err("metrics: %s: %s", final, strerror(errno));
		ok = false;
	}
	if (!ok)
		unlink(tmp);
	return ok ? 0 : -1;
}

static int cmd_metrics(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"textfile", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *textfile = NULL;
	struct topology *t;
	struct policy *p;
	fwd_error_t err;
	struct db *db;
	char tmp[4096];
	int c, rc = FWD_EXIT_OK;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			textfile = optarg;
			break;
		case 'h':
			metrics_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("metrics");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("metrics: unexpected argument '%s'", argv[optind]);
		return FWD_EXIT_USAGE;
	}
	if (!(p = fwdctl_policy(ctx)) || !(t = fwdctl_topology(ctx)))
		return FWD_EXIT_USAGE;
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	replay_fallbacks(db, p);
	if (textfile && textfile_begin(textfile, tmp, sizeof(tmp)) < 0) {
		db_close(db);
		return FWD_EXIT_INVALID;
	}
	if (print_metrics(db, p, t, &err) < 0) {
		int cause = errno;

		fwdctl_err("metrics: %s", err.text);
		rc = fwdctl_exit_code(cause);
	}
	if (textfile && textfile_end(textfile, tmp, rc == FWD_EXIT_OK) < 0 &&
	    rc == FWD_EXIT_OK)
		rc = FWD_EXIT_INVALID;
	db_close(db);
	return rc;
}

FWDCTL_COMMAND(cmd_metrics_def, .name = "metrics",
	       .summary = "print fwdalloc's state as OpenMetrics for "
			  "Prometheus",
	       .order = 43, .run = cmd_metrics);
