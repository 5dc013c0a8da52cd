/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The health store: the health and health_history tables (load, write,
 * admin overrides).  See monitor/health.h; tables in db/SCHEMA.md.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/health.h"
#include "monitor/health_priv.h"

const char *health_db_kind(enum health_kind k)
{
	return k == HEALTH_OST ? "ost" : "fwd";
}

int health_db_parse_kind(const char *s, enum health_kind *k)
{
	if (!strcmp(s, "fwd")) {
		*k = HEALTH_FORWARDER;
		return 0;
	}
	if (!strcmp(s, "ost")) {
		*k = HEALTH_OST;
		return 0;
	}
	return -1; /* mdt: not tracked by the scanner */
}

int health_cmp_entry(const void *a, const void *b)
{
	const struct health_entry *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

long health_find(const struct health_entry *entries, size_t n,
		 enum health_kind kind, const char *name)
{
	struct health_entry key;
	const struct health_entry *hit;

	if (!n)
		return -1;
	key.kind = kind;
	snprintf(key.name, sizeof(key.name), "%s", name);
	hit = bsearch(&key, entries, n, sizeof(*entries), health_cmp_entry);
	return hit ? hit - entries : -1;
}

/* Fill e from the current row of a SELECT of ROW_COLUMNS. */
#define ROW_COLUMNS                                               \
	"kind, name, state, since, COALESCE(reason, ''), source," \
	" bad_windows, good_windows, COALESCE(last_scan_at, 0)"

static int row_to_entry(struct db_stmt *st, double window,
			struct health_entry *e)
{
	enum health_kind kind;
	enum fwd_health state;

	if (health_db_parse_kind(db_col_text(st, 0), &kind) < 0)
		return -1;
	health_entry_init(e, kind, db_col_text(st, 1));
	if (fwd_health_parse(db_col_text(st, 2), &state) < 0)
		state = FWD_HEALTH_OK;
	e->state = state;
	e->since = (double)db_col_int64(st, 3);
	snprintf(e->reason, sizeof(e->reason), "%s", db_col_text(st, 4));
	if (!strcmp(db_col_text(st, 5), "admin"))
		e->override = state == FWD_HEALTH_EXCLUDED
				      ? HEALTH_OVERRIDE_EXCLUDE
				      : HEALTH_OVERRIDE_CLEAR;
	e->bad_streak = (uint32_t)db_col_uint64(st, 6);
	e->good_streak = (uint32_t)db_col_uint64(st, 7);
	e->scanned_until = (double)db_col_int64(st, 8);
	/* Not stored: estimated from the streaks (exact unless windows
	 * without evidence interleaved). */
	e->bad_since = e->scanned_until - e->bad_streak * window;
	e->good_since = e->scanned_until - e->good_streak * window;
	e->episode_start = state == FWD_HEALTH_OK ? 0 : e->since;
	return 0;
}

int health_db_load(struct db *db, double window, struct health_entry **entries,
		   size_t *n, fwd_error_t *err)
{
	struct health_entry *v = NULL;
	struct db_stmt *st;
	size_t cnt = 0, cap = 0;
	int rv = -1, r;

	*entries = NULL;
	*n = 0;
	st = db_queryf(db, err,
		       "SELECT " ROW_COLUMNS " FROM health"
		       " WHERE kind IN ('fwd', 'ost') LIMIT 1000000",
		       "");
	if (!st)
		return -1;
	while ((r = db_fetch(st, err)) > 0) {
		if (FWD_GROW(v, cap, cnt + 1, 64) < 0) {
			errprintf(err, "health table: out of memory");
			goto out;
		}
		if (row_to_entry(st, window, &v[cnt]) == 0)
			cnt++;
	}
	if (r < 0)
		goto out;
	if (cnt)
		qsort(v, cnt, sizeof(*v), health_cmp_entry);
	*entries = v;
	*n = cnt;
	v = NULL;
	rv = 0;
out:
	free(v);
	db_stmt_close(st);
	return rv;
}

/* ---- writing ---------------------------------------------------------- */

int health_write_entry(struct db *db, const struct health_entry *e, double now,
		       fwd_error_t *err)
{
	return db_execf(db, err,
			"INSERT INTO health (kind, name, state, since, reason,"
			" source, bad_windows, good_windows, last_scan_at,"
			" updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
			" ON DUPLICATE KEY UPDATE state = VALUES(state),"
			" since = VALUES(since), reason = VALUES(reason),"
			" source = VALUES(source),"
			" bad_windows = VALUES(bad_windows),"
			" good_windows = VALUES(good_windows),"
			" last_scan_at = VALUES(last_scan_at),"
			" updated_at = VALUES(updated_at)",
			"sssissuuii", health_db_kind(e->kind), e->name,
			fwd_health_name(e->state), (int64_t)e->since, e->reason,
			e->override != HEALTH_OVERRIDE_NONE ? "admin"
							    : "scanner",
			(uint64_t)e->bad_streak, (uint64_t)e->good_streak,
			(int64_t)e->scanned_until, (int64_t)now) < 0
		       ? -1
		       : 0;
}

/* Rows per statement of health_write_entries(). */
#define ENTRY_CHUNK 200

static struct db_stmt *prepare_entries(struct db *db, size_t k,
				       fwd_error_t *err)
{
	static const char row[] = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	size_t len = 512 + k * (sizeof(row) + 1);
	char *sql = malloc(len);
	struct db_stmt *st;

	if (!sql) {
		errprintf(err, "health table: out of memory");
		return NULL;
	}
	/* Placeholders only: every value is bound. */
	snprintf(sql, len,
		 "INSERT INTO health (kind, name, state, since, reason,"
		 " source, bad_windows, good_windows, last_scan_at,"
		 " updated_at) VALUES %s",
		 row);
	for (size_t i = 1; i < k; i++) {
		strcat(sql, ",");
		strcat(sql, row);
	}
	strcat(sql, " ON DUPLICATE KEY UPDATE state = VALUES(state),"
		    " since = VALUES(since), reason = VALUES(reason),"
		    " source = VALUES(source),"
		    " bad_windows = VALUES(bad_windows),"
		    " good_windows = VALUES(good_windows),"
		    " last_scan_at = VALUES(last_scan_at),"
		    " updated_at = VALUES(updated_at)");
	st = db_prepare(db, sql, err);
	free(sql);
	return st;
}

int health_write_entries(struct db *db, const struct health_entry *e, size_t n,
			 double now, fwd_error_t *err)
{
	struct db_stmt *full = NULL, *st;
	int rv = -1;

	for (size_t off = 0; off < n; off += ENTRY_CHUNK) {
		size_t k = n - off < ENTRY_CHUNK ? n - off : ENTRY_CHUNK;
		unsigned p = 0;

		if (k == ENTRY_CHUNK) {
			if (!full && !(full = prepare_entries(db, k, err)))
				goto out;
			st = full;
		} else if (!(st = prepare_entries(db, k, err))) {
			goto out;
		}
		for (size_t i = off; i < off + k; i++) {
			db_bind_text(st, p++, health_db_kind(e[i].kind));
			db_bind_text(st, p++, e[i].name);
			db_bind_text(st, p++, fwd_health_name(e[i].state));
			db_bind_int64(st, p++, (int64_t)e[i].since);
			db_bind_text(st, p++, e[i].reason);
			db_bind_text(st, p++,
				     e[i].override != HEALTH_OVERRIDE_NONE
					     ? "admin"
					     : "scanner");
			db_bind_uint64(st, p++, (uint64_t)e[i].bad_streak);
			db_bind_uint64(st, p++, (uint64_t)e[i].good_streak);
			db_bind_int64(st, p++, (int64_t)e[i].scanned_until);
			db_bind_int64(st, p++, (int64_t)now);
		}
		if (db_exec(st, err) < 0) {
			if (st != full)
				db_stmt_close(st);
			goto out;
		}
		if (st != full)
			db_stmt_close(st);
	}
	rv = 0;
out:
	db_stmt_close(full);
	return rv;
}

/* Close the component's open history row and open one for the new state. */
int health_write_change(struct db *db, const struct health_entry *e,
			const struct health_change *c, fwd_error_t *err)
{
	if (db_execf(db, err,
		     "UPDATE health_history SET end_at = GREATEST(start_at, ?),"
		     " duration = GREATEST(start_at, ?) - start_at"
		     " WHERE kind = ? AND name = ? AND end_at IS NULL",
		     "iiss", (int64_t)c->time, (int64_t)c->time,
		     health_db_kind(e->kind), e->name) < 0)
		return -1;
	if (db_execf(db, err,
		     "INSERT INTO health_history (kind, name, state, start_at,"
		     " reason, source) VALUES (?, ?, ?, ?, ?, ?)",
		     "sssiss", health_db_kind(e->kind), e->name,
		     fwd_health_name(c->to), (int64_t)c->time, c->reason,
		     c->admin ? "admin" : "scanner") < 0)
		return -1;
	return 0;
}

void health_run_change_commands(const struct policy *p,
				const struct health_entry *final,
				const struct health_change *chg, double timeout,
				fwd_error_t *cmd_err, size_t *failed)
{
	struct health_entry at = *final;

	/* The component as the change left it. */
	at.state = chg->to;
	snprintf(at.reason, sizeof(at.reason), "%s", chg->reason);
	cmd_err->text[0] = '\0';
	if (health_run_commands(&p->anomaly, &at, chg, timeout, cmd_err) < 0 &&
	    failed)
		(*failed)++;
}

/* ---- admin ------------------------------------------------------------------
 */

int health_lock(struct db *db, const struct policy *p, fwd_error_t *err)
{
	return db_begin_locked(db,
			       "SELECT id FROM health_lock WHERE id = 1 "
			       "FOR UPDATE",
			       "health lock", p->database.lock_timeout, err);
}

int health_db_admin(struct db *db, const struct policy *p,
		    enum health_kind kind, const char *name,
		    enum health_override action, const char *reason, double now,
		    double command_timeout, struct health_change *chg,
		    fwd_error_t *cmd_err, fwd_error_t *err)
{
	struct health_entry *rows = NULL, e;
	struct health_change c;
	size_t n = 0;
	bool in_tx = false;
	long i;
	int rv = -1, r;

	if (cmd_err)
		cmd_err->text[0] = '\0';
	if (strlen(name) >= HEALTH_NAME_MAX) {
		errno = EINVAL;
		return errprintf(err,
				 "component name %.40s...: longer than "
				 "%d characters",
				 name, HEALTH_NAME_MAX - 1);
	}
	if (health_lock(db, p, err) < 0)
		return -1;
	in_tx = true;
	if (health_db_load(db, p->anomaly.window, &rows, &n, err) < 0)
		goto out;
	i = health_find(rows, n, kind, name);
	if (i >= 0)
		e = rows[i];
	else
		health_entry_init(&e, kind, name);
	switch (action) {
	case HEALTH_OVERRIDE_EXCLUDE:
		r = health_admin_exclude(&e, now, reason, &c);
		break;
	case HEALTH_OVERRIDE_CLEAR:
		r = health_admin_clear(&e, now, reason, &c);
		break;
	default:
		r = health_admin_release(&e, now, reason, &c);
		break;
	}
	if (r == 1 && health_write_change(db, &e, &c, err) < 0)
		goto out;
	if (health_write_entry(db, &e, now, err) < 0)
		goto out;
	if (db_commit(db, err) < 0)
		goto out;
	in_tx = false;
	if (r == 1) {
		fwd_error_t ce;

		health_run_change_commands(p, &e, &c, command_timeout, &ce,
					   NULL);
		if (cmd_err)
			*cmd_err = ce;
		if (chg)
			*chg = c;
	}
	free(rows);
	return r;
out:
	if (in_tx)
		db_rollback(db);
	free(rows);
	return rv;
}
