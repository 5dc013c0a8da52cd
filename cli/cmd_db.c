/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl db: create, migrate, inspect and prune the fwdalloc database.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "cli/table.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "db/schema.h"
#include "monitor/ingest.h"
#include "monitor/inventory.h"
#include "policies/policy.h"
#include "profiler/profile.h"
#include "topology/topology.h"

/* Long statements (pruning millions of rows) need more than the policy's
 * per-round-trip timeout meant for job launch. */
#define ADMIN_TIMEOUT 600.0

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl db init [--node-host HOST] [--no-grant] [--json]\n"
"       fwdctl db migrate [--node-host HOST] [--no-grant] [--json]\n"
"       fwdctl db status [--json | -P] [-n]\n"
"       fwdctl db prune [--dry-run] [--json]\n"
"\n"
"Manage the fwdalloc MariaDB database named by the policy's `database:`\n"
"section (see db/SCHEMA.md).\n"
"\n"
"  init      create the schema, or bring it to this version; then grant the\n"
"            read-only node account (database.node_user) EXECUTE on the\n"
"            `node_allocations_for` procedure only (a job's held\n"
"            allocations, the columns node prologs read), revoking the\n"
"            SELECT grants of older versions; and,\n"
"            when a topology is available (--topology, or the policy's\n"
"            `topology:` file exists), mirror its forwarders and OSTs into\n"
"            the `forwarders` and `osts` tables; those no longer in the\n"
"            topology are retired (kept, since the ledger, the audit and\n"
"            the health history name them, but never scanned by `fwdctl\n"
"            health scan` nor allocated).  Idempotent; run it again after\n"
"            changing the topology.  A grant that fails (e.g. MariaDB's\n"
"            error 1410: the node account does not exist for that host)\n"
"            fails the command, after the schema and the topology are in\n"
"            place.\n"
"  migrate   bring an existing schema up to this version and grant the\n"
"            node account as init does.  Idempotent.  A database with a\n"
"            newer schema than this fwdctl is refused.\n"
"  status    print the server, the schema version and the row count of\n"
"            every table, the last as a table TABLE ROWS (with -P, the\n"
"            table alone).\n"
"  prune     delete the rows past the policy's `retention:` of each\n"
"            table: raw samples (samples_raw, samples_hist, jobstats_raw)\n"
"            older than retention.raw_samples, rollups older than\n"
"            retention.rollups, audit rows older than retention.audit,\n"
"            allocations released before retention.allocations (held\n"
"            ones never), jobs ended before retention.jobs, job_io and\n"
"            profiles last updated before retention.job_io and\n"
"            retention.profiles; print how many rows went.  Deletes in\n"
"            batches of %d rows, each its own short transaction, so job\n"
"            launches running meanwhile never wait long for it; run by\n"
"            fwdalloc-health-scan.service.  Health is kept.\n"
"\n"
"Options:\n"
"  --node-host HOST  host part of the node account to grant (default '%%');\n"
"                    letters, digits, '.', '-', '_', ':' and '%%'\n"
"  --no-grant        init, migrate: do not grant the node account\n"
"  --dry-run         prune: count what would be deleted, delete nothing\n"
"  --json            machine-readable output (prune: also the number of\n"
"                    batches per table)\n"
"  -P, --parsable    status: fields separated by '|', unpadded (for\n"
"                    scripts); only the table of row counts\n"
"  -n, --noheader    status: no header line\n"
"  -h, --help        this help\n"
"\n"
"The controller account (database.user) and its owner-only password file\n"
"(database.password_file) are used.\n"
"\n"
"Examples:\n"
"  fwdctl db init --node-host '10.1.%%'\n"
"  fwdctl --json db status\n"
"  fwdctl db prune --dry-run\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  the schema is missing, older or newer than this fwdctl (status);\n"
"     the node account could not be granted (init, migrate)\n"
"  2  usage error, or the policy does not load\n"
"  3  the database is unavailable (message names host or socket, error\n"
"     code and the server's text); also a refused password file\n",
	DB_PRUNE_CHUNK);
}
/* clang-format on */

struct opts {
	const char *node_host;
	bool no_grant;
	bool dry_run;
	bool json;
	struct fwdctl_table table; /* -P, -n of `status` */
};

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{"node-host", required_argument, NULL, 'H'},
		{"no-grant", no_argument, NULL, 'G'},
		{"dry-run", no_argument, NULL, 'D'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		FWDCTL_TABLE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	const char *action = argv[0];
	int c;

	optind = 0;
	argv[0] = (char *)fwdctl_prog_name("db", action);
	while ((c = getopt_long(argc, argv, "h" FWDCTL_TABLE_SHORTOPTS, lopts,
				NULL)) != -1) {
		if (fwdctl_table_option(&o->table, c))
			continue;
		switch (c) {
		case 'H':
			o->node_host = optarg;
			break;
		case 'G':
			o->no_grant = true;
			break;
		case 'D':
			o->dry_run = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fwdctl_usage_hint("db");
			return -1;
		}
	}
	if (optind != argc) {
		fwdctl_err("db %s: unexpected argument '%s'", action,
			   argv[optind]);
		return -1;
	}
	return 0;
}

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

static int do_migrate(struct fwdctl_ctx *ctx, const struct opts *o, bool init)
{
	struct policy *p = fwdctl_policy(ctx);
	fwd_error_t err = {{0}};
	const char *grant_warning = NULL;
	const struct topology *topo = NULL;
	uint64_t retired_fwd = 0, retired_ost = 0;
	char grant_msg[1100] = "";
	struct db *db;
	int from = 0, to = 0;
	int rc;

	if (!p)
		return FWD_EXIT_USAGE;
	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, ADMIN_TIMEOUT, false,
			       &rc);
	if (!db)
		return rc;
	if (!init) {
		/* migrate upgrades an existing schema; creating one is
		 * init's job, so an empty database is reported. */
		int cur = 0;

		if (schema_current_version(db, &cur, &err) < 0) {
			fwdctl_err("%s", err.text);
			rc = fwdctl_exit_code(errno);
			goto out;
		}
	}
	if (db_migrate(db, &from, &to, &err) < 0) {
		fwdctl_err("%s", err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	if (!o->no_grant && p->database.node_user) {
		const char *host = o->node_host ? o->node_host : "%";

		if (db_grant_node(db, p->database.node_user, host, &err) < 0) {
			if (errno == EINVAL) {
				fwdctl_err("%s", err.text);
				rc = FWD_EXIT_USAGE;
				goto out;
			}
			/* The schema is in place (and the topology is
			 * synced below), but the node prologs cannot read
			 * their rows: the command fails, saying so. */
			snprintf(grant_msg, sizeof(grant_msg),
				 "%.900s; create the node account (see "
				 "db/SCHEMA.md; --node-host HOST for its "
				 "host part), then run `fwdctl db init` "
				 "again, or pass --no-grant",
				 err.text);
			grant_warning = grant_msg;
		}
	}
	if (init && (ctx->topology_path ||
		     (p->topology && access(p->topology, R_OK) == 0))) {
		/* Keep the SQL mirror of the topology current. */
		topo = fwdctl_topology(ctx);
		if (!topo) {
			rc = FWD_EXIT_USAGE;
			goto out;
		}
		if (inventory_sync(db, topo, &retired_fwd, &retired_ost, &err) <
		    0) {
			fwdctl_err("%s", err.text);
			rc = fwdctl_exit_code(errno);
			goto out;
		}
	}
	if (o->json || ctx->json) {
		json_t *j = json_pack("{s:s, s:i, s:i, s:i}", "database",
				      db_where(db), "from_version", from,
				      "to_version", to, "latest",
				      schema_latest_version());

		if (j && topo) {
			json_object_set_new(j, "topology",
					    json_string(topo->path));
			json_object_set_new(
				j, "forwarders",
				json_integer((json_int_t)topo->n_forwarders));
			json_object_set_new(
				j, "osts",
				json_integer((json_int_t)topo->n_osts));
			json_object_set_new(
				j, "retired_forwarders",
				json_integer((json_int_t)retired_fwd));
			json_object_set_new(
				j, "retired_osts",
				json_integer((json_int_t)retired_ost));
		}
		if (j)
			json_object_set_new(
				j, "node_grant",
				grant_warning
					? json_string(grant_warning)
					: json_string(o->no_grant ? "skipped"
								  : "ok"));
		print_json(j);
	} else if (from == to) {
		printf("schema at version %d, nothing to do\n", to);
	} else {
		printf("schema migrated from version %d to %d\n", from, to);
	}
	if (topo && !(o->json || ctx->json)) {
		printf("synced %zu forwarders and %zu OSTs from %s\n",
		       topo->n_forwarders, topo->n_osts, topo->path);
		if (retired_fwd || retired_ost)
			printf("retired %llu forwarder(s) and %llu OST(s) no "
			       "longer in it (kept for history, never "
			       "scanned or allocated)\n",
			       (unsigned long long)retired_fwd,
			       (unsigned long long)retired_ost);
	}
	if (grant_warning) {
		fwdctl_err("granting the node account: %s", grant_warning);
		rc = FWD_EXIT_INVALID;
		goto out;
	}
	rc = FWD_EXIT_OK;
out:
	db_close(db);
	return rc;
}

static int do_status(struct fwdctl_ctx *ctx, const struct opts *o)
{
	static const char *const head[] = {"TABLE", "ROWS"};
	static const int width[] = {20};
	struct fwdctl_table t = o->table;
	const char *const *tables = schema_table_names();
	fwd_error_t err = {{0}};
	json_t *counts = NULL;
	struct db *db;
	int cur = 0;
	int latest = schema_latest_version();
	int rc;

	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, ADMIN_TIMEOUT, false,
			       &rc);
	if (!db)
		return rc;
	if (schema_current_version(db, &cur, &err) < 0) {
		if (db_err_unavailable(errno)) {
			fwdctl_err("%s", err.text);
			rc = FWD_EXIT_SERVICE;
			goto out;
		}
		cur = 0; /* no schema_version table: nothing created yet */
	}
	counts = json_object();
	if (!counts) {
		rc = FWD_EXIT_SERVICE;
		goto out;
	}
	if (cur > 0 && cur <= latest) {
		for (size_t i = 0; tables[i]; i++) {
			int64_t n = 0;

			if (db_table_rows(db, tables[i], &n, &err) < 0) {
				fwdctl_err("%s", err.text);
				rc = fwdctl_exit_code(errno);
				goto out;
			}
			json_object_set_new(counts, tables[i], json_integer(n));
		}
	}
	if (o->json || ctx->json) {
		json_t *j = json_pack("{s:s, s:i, s:i, s:s, s:O}", "database",
				      db_where(db), "schema_version", cur,
				      "latest", latest, "state",
				      cur == 0	     ? "missing"
				      : cur < latest ? "older"
				      : cur > latest ? "newer"
						     : "current",
				      "tables", counts);
		print_json(j);
	} else {
		const char *k;
		json_t *v;

		t.head = head, t.width = width, t.ncols = 2;
		if (!t.parsable) {
			printf("database: %s\n", db_where(db));
			if (cur == 0)
				printf("schema:   missing (run `fwdctl db "
				       "init`)\n");
			else if (cur < latest)
				printf("schema:   version %d, older than %d "
				       "(run `fwdctl db migrate`)\n",
				       cur, latest);
			else if (cur > latest)
				printf("schema:   version %d, newer than this "
				       "fwdctl knows (%d): upgrade fwdalloc\n",
				       cur, latest);
			else
				printf("schema:   version %d (current)\n", cur);
		}
		json_object_foreach (counts, k, v) {
			char n[32];
			const char *cells[2] = {k, n};

			snprintf(n, sizeof(n), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(v));
			fwdctl_table_row(&t, cells);
		}
	}
	rc = cur == latest ? FWD_EXIT_OK : FWD_EXIT_INVALID;
out:
	json_decref(counts);
	db_close(db);
	return rc;
}

static int do_prune(struct fwdctl_ctx *ctx, const struct opts *o)
{
	struct policy *p = fwdctl_policy(ctx);
	fwd_error_t err = {{0}};
	struct db_pruned pruned[INGEST_PRUNE_TABLES + 1 +
				LEDGER_STORE_PRUNE_TABLES +
				PROFILE_PRUNE_TABLES];
	json_t *out = NULL;
	struct db *db;
	int64_t now = (int64_t)time(NULL);
	size_t n = 0;
	int rc;

	if (!p)
		return FWD_EXIT_USAGE;
	db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, ADMIN_TIMEOUT, true,
			       &rc);
	if (!db)
		return rc;
	/* Each table is pruned by its owner: the statistics by the monitor,
	 * the audit trail and the ledger by the controller, the job
	 * summaries and profiles by the profiler. */
	if (ingest_prune(db, &p->retention, now, o->dry_run, pruned, &n, &err) <
		    0 ||
	    audit_prune(db, &p->retention, now, o->dry_run, pruned, &n, &err) <
		    0 ||
	    ledger_store_prune(db, &p->retention, now, o->dry_run, pruned, &n,
			       &err) < 0 ||
	    profile_db_prune(db, &p->retention, now, o->dry_run, pruned, &n,
			     &err) < 0) {
		fwdctl_err("%s", err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	out = json_array();
	for (size_t i = 0; i < n; i++) {
		char when[32];

		fwd_time_format((double)pruned[i].cutoff, when, sizeof(when));
		if (o->json || ctx->json)
			json_array_append_new(
				out,
				json_pack("{s:s, s:I, s:I, s:s, s:I, s:b}",
					  "table", pruned[i].table, "rows",
					  (json_int_t)pruned[i].rows, "batches",
					  (json_int_t)pruned[i].batches,
					  "older_than", when, "cutoff",
					  (json_int_t)pruned[i].cutoff,
					  "dry_run", o->dry_run));
		else
			printf("%s %" PRId64 " rows from %s (older than %s)\n",
			       o->dry_run ? "would remove" : "removed",
			       pruned[i].rows, pruned[i].table, when);
	}
	if (o->json || ctx->json) {
		print_json(out);
		out = NULL;
	}
	rc = FWD_EXIT_OK;
out:
	json_decref(out);
	db_close(db);
	return rc;
}

static int cmd_db(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	struct opts o = {0};
	const char *sub;
	int r;

	if (argc < 2) {
		usage(stderr);
		return FWD_EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	r = parse_opts(argc - 1, argv + 1, &o);
	if (r)
		return r > 0 ? FWD_EXIT_OK : FWD_EXIT_USAGE;
	if ((o.node_host || o.no_grant) && strcmp(sub, "init") != 0) {
		fwdctl_err("db %s: --node-host and --no-grant apply to init",
			   sub);
		return FWD_EXIT_USAGE;
	}
	if (o.dry_run && strcmp(sub, "prune") != 0) {
		fwdctl_err("db %s: --dry-run applies to prune", sub);
		return FWD_EXIT_USAGE;
	}
	if (!strcmp(sub, "init"))
		return do_migrate(ctx, &o, true);
	if (!strcmp(sub, "migrate"))
		return do_migrate(ctx, &o, false);
	if (!strcmp(sub, "status"))
		return do_status(ctx, &o);
	if (!strcmp(sub, "prune"))
		return do_prune(ctx, &o);
	fwdctl_err("db: unknown subcommand '%s'; see 'fwdctl db --help'", sub);
	return FWD_EXIT_USAGE;
}

FWDCTL_COMMAND(db_command, .name = "db",
	       .summary = "create, migrate, inspect and prune the database",
	       .order = 60, .run = cmd_db)
