/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The health report: episodes of health_history counted by Beacon's
 * Table 2 bins.  See monitor/health.h; tables in db/SCHEMA.md.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "monitor/health.h"
#include "monitor/health_priv.h"

int health_db_report(struct db *db, double since, double now,
		     struct health_report *r, fwd_error_t *err)
{
	struct db_stmt *st;
	char cur_kind[8] = "", cur_name[HEALTH_NAME_MAX] = "";
	bool open = false;
	double ep_start = 0, ep_end = 0;
	bool ep_ongoing = false;
	enum health_kind ep_kind = HEALTH_FORWARDER;
	int rv = -1, f;

	memset(r, 0, sizeof(*r));

#define CLOSE_EPISODE()                                                  \
	do {                                                             \
		if (open && ep_start >= since) {                         \
			int b = health_duration_bin(                     \
				(ep_ongoing ? now : ep_end) - ep_start); \
			if (ep_ongoing)                                  \
				r->ongoing[ep_kind][b]++;                \
			else                                             \
				r->count[ep_kind][b]++;                  \
		}                                                        \
		open = false;                                            \
	} while (0)

	st = db_prepare(db,
			"SELECT kind, name, state, start_at, end_at"
			" FROM health_history WHERE kind IN ('fwd', 'ost')"
			" ORDER BY kind, name, start_at, id LIMIT 10000000",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		const char *kind = db_col_text(st, 0);
		const char *name = db_col_text(st, 1);
		bool ok = !strcmp(db_col_text(st, 2), "ok");
		enum health_kind k;

		if (health_db_parse_kind(kind, &k) < 0)
			continue;
		if (strcmp(kind, cur_kind) || strcmp(name, cur_name)) {
			CLOSE_EPISODE();
			snprintf(cur_kind, sizeof(cur_kind), "%s", kind);
			snprintf(cur_name, sizeof(cur_name), "%s", name);
		}
		if (ok) {
			CLOSE_EPISODE();
			continue;
		}
		if (!open) {
			open = true;
			ep_kind = k;
			ep_start = (double)db_col_int64(st, 3);
		}
		ep_ongoing = db_col_null(st, 4);
		ep_end = (double)db_col_int64(st, 4);
	}
	if (f < 0)
		goto out;
	CLOSE_EPISODE();
#undef CLOSE_EPISODE
	db_stmt_close(st);
	st = db_prepare(db,
			"SELECT kind, state, COUNT(*) FROM health"
			" WHERE kind IN ('fwd', 'ost') AND state <> 'ok'"
			" GROUP BY kind, state LIMIT 100",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		enum health_kind k;
		unsigned cnt = (unsigned)db_col_uint64(st, 2);

		if (health_db_parse_kind(db_col_text(st, 0), &k) < 0)
			continue;
		if (!strcmp(db_col_text(st, 1), "excluded"))
			r->excluded_now[k] = cnt;
		else
			r->suspect_now[k] = cnt;
	}
	if (f < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}
