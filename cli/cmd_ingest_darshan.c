/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl ingest --format darshan FILE...: darshan-parser output into job
 * summaries (profiler/darshan.h, controller/history_run.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cmd_ingest.h"
#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "common/plausible.h"
#include "controller/history_run.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/darshan.h"

#define REASONS 8

/* Refused files by reason (FWD_REASON_*; the last slot: others). */
struct tally {
	struct {
		const char *reason;
		unsigned long n;
	} why[REASONS + 1];
};

static void tally_add(struct tally *t, const char *reason)
{
	size_t i;

	for (i = 0; i < REASONS && t->why[i].reason; i++)
		if (!strcmp(t->why[i].reason, reason))
			break;
	if (i == REASONS)
		reason = "other";
	t->why[i].reason = reason;
	t->why[i].n++;
}

int ingest_darshan_files(struct fwdctl_ctx *ctx, char **files, int n, bool json)
{
	unsigned long stored = 0, rejected = 0;
	struct tally why = {0};
	json_t *errs = json ? json_array() : NULL;
	struct policy *p = fwdctl_policy(ctx);
	struct db *db;
	int rc = FWD_EXIT_OK;

	if (!p)
		return FWD_EXIT_USAGE;
	if (n < 1) {
		fwdctl_err("ingest: --format darshan needs one or more files "
			   "(darshan-parser output)");
		return FWD_EXIT_USAGE;
	}
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	for (int i = 0; i < n; i++) {
		const char *path = files[i];
		struct darshan_summary s;
		fwd_error_t err = {{0}};
		FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
		int r;

		if (!f) {
			fwdctl_err("%s: %s", path, strerror(errno));
			tally_add(&why, "unreadable");
			rejected++;
			continue;
		}
		fwd_reason_clear();
		r = darshan_parse(f, &s, &err);
		if (f != stdin)
			fclose(f);
		if (r == 0 &&
		    darshan_check(&s, (int64_t)time(NULL),
				  p->ingest.max_bandwidth, &err) < 0) {
			/* "line N: ..." like the parser's messages */
			fwd_error_t e = err;

			errprintf(&err, "line %ld: %s", s.lines, e.text);
			r = -1;
		}
		if (r == 0 &&
		    ctl_history_store_darshan(db, p, &s, (int64_t)time(NULL),
					      &err) < 0) {
			if (errno != EINVAL) {
				fwdctl_err("%s: %s", path, err.text);
				rc = fwdctl_exit_code(errno);
				break;
			}
			r = -1;
		}
		if (r < 0) {
			/* "line N: ..." -> "path:N: ..." */
			const char *reason = fwd_reason_take();
			long line = 0;
			const char *m = err.text;

			tally_add(&why, reason ? reason : FWD_REASON_MALFORMED);
			if (sscanf(err.text, "line %ld:", &line) == 1)
				m = strchr(err.text, ':') + 2;
			if (line)
				fwdctl_err("%s:%ld: %s", path, line, m);
			else
				fwdctl_err("%s: %s", path, m);
			if (errs)
				json_array_append_new(
					errs,
					json_pack("{ss sI ss}", "file", path,
						  "line", (json_int_t)line,
						  "error", m));
			rejected++;
			continue;
		}
		stored++;
		if (!json)
			printf("%s: job %" PRIu64 ": %" PRIu64
			       " B read, %" PRIu64 " B written, %" PRIu64
			       " metadata operations, %" PRIu64
			       " processes, %s\n",
			       path, s.job_id, s.read_bytes, s.write_bytes,
			       s.md_ops, s.nprocs,
			       s.io_mode == FWD_IO_NONE
				       ? "I/O mode unknown"
				       : fwd_io_mode_name(s.io_mode));
	}
	db_close(db);
	if (rejected && !json) {
		char by[256] = "";
		size_t used = 0;

		for (size_t k = 0; k <= REASONS && used < sizeof(by); k++)
			if (why.why[k].n)
				used += (size_t)snprintf(
					by + used, sizeof(by) - used,
					"%s%lu %s", used ? ", " : "",
					why.why[k].n, why.why[k].reason);
		fwdctl_err("rejected %lu files: %s", rejected, by);
	}
	if (json) {
		json_t *by = json_object();
		json_t *o;

		for (size_t k = 0; k <= REASONS && by; k++)
			if (why.why[k].n)
				json_object_set_new(
					by, why.why[k].reason,
					json_integer((json_int_t)why.why[k].n));
		o = json_pack("{sI sI so so*}", "stored", (json_int_t)stored,
			      "rejected", (json_int_t)rejected, "errors", errs,
			      "rejected_by_reason", by);
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		printf("read %d files, stored %lu job summaries, rejected %lu "
		       "files\n",
		       n, stored, rejected);
	}
	if (rc == FWD_EXIT_OK && rejected)
		rc = FWD_EXIT_USAGE;
	return rc;
}
