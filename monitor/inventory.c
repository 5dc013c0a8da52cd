/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mirror the topology's forwarders and OSTs into the database, so that SQL
 * readers (node prologs reading forwarder addresses, reports, the anomaly
 * scanner) see the same names, roles and peaks as the allocator; and
 * record, for the ledger, when each forwarder was last used.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/inventory.h"
#include "topology/topology.h"

/* Forwarders touched per statement (a job holds a few dozen at most). */
#define TOUCH_ROWS 256

int inventory_sync(struct db *db, const struct topology *t,
		   uint64_t *retired_fwd, uint64_t *retired_ost,
		   fwd_error_t *err)
{
	struct db_stmt *fs = NULL, *os = NULL;
	int64_t now = (int64_t)time(NULL), rf, ro;
	int rv = -1;

	if (db_begin(db, err) < 0)
		return -1;
	/* Mark every active row (-1, inside this transaction only); the
	 * upserts clear the mark of those the topology holds. */
	if (db_execf(db, err,
		     "UPDATE forwarders SET retired_at = -1 WHERE retired_at "
		     "IS NULL",
		     "") < 0 ||
	    db_execf(db, err,
		     "UPDATE osts SET retired_at = -1 WHERE retired_at IS NULL",
		     "") < 0)
		goto out;
	/* last_used_at belongs to the ledger: never overwritten here. */
	fs = db_prepare(
		db,
		"INSERT INTO forwarders (name, address, net_group, role,"
		" bandwidth_bps, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
		" ON DUPLICATE KEY UPDATE address = VALUES(address),"
		" net_group = VALUES(net_group), role = VALUES(role),"
		" bandwidth_bps = VALUES(bandwidth_bps),"
		" updated_at = VALUES(updated_at), retired_at = NULL",
		err);
	os = fs ? db_prepare(db,
			     "INSERT INTO osts (name, kind, bandwidth_bps,"
			     " updated_at) VALUES (?, ?, ?, ?)"
			     " ON DUPLICATE KEY UPDATE kind = VALUES(kind),"
			     " bandwidth_bps = VALUES(bandwidth_bps),"
			     " updated_at = VALUES(updated_at),"
			     " retired_at = NULL",
			     err)
		: NULL;
	if (!fs || !os)
		goto out;
	for (size_t i = 0; i < t->n_forwarders; i++) {
		const struct topo_forwarder *f = &t->forwarders[i];

		db_bind_text(fs, 0, f->name);
		db_bind_text(fs, 1, f->address);
		db_bind_text(fs, 2, f->group ? f->group : "");
		db_bind_text(fs, 3,
			     f->role == TOPO_ROLE_BACKUP ? "backup"
							 : "service");
		db_bind_double(fs, 4, f->bandwidth_bps);
		db_bind_int64(fs, 5, now);
		if (db_exec(fs, err) < 0)
			goto out;
	}
	for (size_t i = 0; i < t->n_osts; i++) {
		const struct topo_ost *o = &t->osts[i];

		db_bind_text(os, 0, o->name);
		db_bind_text(os, 1, strstr(o->name, "-MDT") ? "mdt" : "ost");
		db_bind_double(os, 2, o->bandwidth_bps);
		db_bind_int64(os, 3, now);
		if (db_exec(os, err) < 0)
			goto out;
	}
	/* The upserts above cleared the mark of every row the topology
	 * holds: the rows still marked left it. */
	rf = db_execf(db, err,
		      "UPDATE forwarders SET retired_at = ? WHERE retired_at = "
		      "-1",
		      "i", now);
	ro = rf < 0 ? -1
		    : db_execf(db, err,
			       "UPDATE osts SET retired_at = ? WHERE "
			       "retired_at = -1",
			       "i", now);
	if (ro < 0 || db_commit(db, err) < 0)
		goto out;
	if (retired_fwd)
		*retired_fwd = (uint64_t)rf;
	if (retired_ost)
		*retired_ost = (uint64_t)ro;
	rv = 0;
out:
	if (rv < 0)
		db_rollback(db);
	db_stmt_close(fs);
	db_stmt_close(os);
	return rv;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void inventory_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int inventory_retired(struct db *db, bool ost, char ***names, size_t *n,
		      fwd_error_t *err)
{
	struct db_stmt *st;
	char **v = NULL;
	size_t cap = 0, len = 0;
	int r;

	*names = NULL;
	*n = 0;
	st = db_prepare(db,
			ost ? "SELECT name FROM osts WHERE retired_at IS NOT "
			      "NULL"
			    : "SELECT name FROM forwarders WHERE retired_at IS "
			      "NOT NULL",
			err);
	if (!st || db_exec(st, err) < 0)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		const char *name = db_col_text(st, 0);

		if (FWD_GROW(v, cap, len + 1, 16) < 0 ||
		    !(v[len] = strdup(name ? name : ""))) {
			errprintf(err, "retired components: %s",
				  strerror(errno));
			goto fail;
		}
		len++;
	}
	if (r < 0)
		goto fail;
	db_stmt_close(st);
	if (len)
		qsort(v, len, sizeof(*v), name_cmp);
	*names = v;
	*n = len;
	return 0;
fail:
	db_stmt_close(st);
	inventory_names_free(v, len);
	return -1;
}

int inventory_touch_forwarders(struct db *db, const char *const *names,
			       size_t n, double when, fwd_error_t *err)
{
	int64_t now = (int64_t)time(NULL);
	int rv = -1, r;

	/* One statement per batch of names; a name never mirrored gets a
	 * row of its own (no address, no peak: nothing reads those from it
	 * until `fwdctl topology sync` fills them in). */
	for (size_t at = 0; at < n; at += TOUCH_ROWS) {
		size_t k = n - at < TOUCH_ROWS ? n - at : TOUCH_ROWS;
		struct db_stmt *st = db_prepare_rows(
			db,
			"INSERT INTO forwarders (name, updated_at,"
			" last_used_at) VALUES ",
			"(?, ?, ?)", k,
			" ON DUPLICATE KEY UPDATE last_used_at ="
			" GREATEST(COALESCE(last_used_at, 0),"
			" VALUES(last_used_at))",
			err);

		if (!st)
			goto out;
		for (size_t i = 0; i < k; i++) {
			db_bind_text(st, (unsigned)(3 * i), names[at + i]);
			db_bind_int64(st, (unsigned)(3 * i + 1), now);
			db_bind_int64(st, (unsigned)(3 * i + 2), (int64_t)when);
		}
		r = db_exec(st, err);
		db_stmt_close(st);
		if (r < 0)
			goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		errprefix(err, "recording when forwarders were last used");
	return rv;
}

int inventory_last_used(struct db *db,
			void (*fn)(const char *name, double when, void *arg),
			void *arg, fwd_error_t *err)
{
	struct db_stmt *st;
	int r;

	st = db_queryf(db, err,
		       "SELECT name, last_used_at FROM forwarders"
		       " WHERE last_used_at IS NOT NULL",
		       "");
	if (!st)
		goto fail;
	while ((r = db_fetch(st, err)) > 0)
		fn(db_col_text(st, 0), (double)db_col_int64(st, 1), arg);
	db_stmt_close(st);
	if (r < 0)
		goto fail;
	return 0;
fail:
	return errprefix(err, "reading when forwarders were last used");
}

static int peak_cmp(const void *a, const void *b)
{
	const struct inventory_peak *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	return c ? c : strcmp(x->name, y->name);
}

int inventory_peaks(struct db *db, struct inventory_peak **out, size_t *n,
		    fwd_error_t *err)
{
	/* clang-format off */
	static const char sql[] =
		"SELECT 'fwd', name, bandwidth_bps FROM forwarders"
		" WHERE bandwidth_bps > 0"
		" UNION ALL"
		" SELECT kind, name, bandwidth_bps FROM osts"
		" WHERE bandwidth_bps > 0"
		" LIMIT 1000000";
	/* clang-format on */
	struct inventory_peak *v = NULL;
	size_t cap = 0, len = 0;
	struct db_stmt *st;
	int r;

	*out = NULL;
	*n = 0;
	st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		struct inventory_peak *p;

		if (FWD_GROW(v, cap, len + 1, 64) < 0) {
			errprintf(err, "inventory: %s", strerror(errno));
			goto fail;
		}
		p = &v[len++];
		snprintf(p->kind, sizeof(p->kind), "%s", db_col_text(st, 0));
		snprintf(p->name, sizeof(p->name), "%s", db_col_text(st, 1));
		p->bandwidth_bps = db_col_double(st, 2);
	}
	if (r < 0)
		goto fail;
	db_stmt_close(st);
	if (len)
		qsort(v, len, sizeof(*v), peak_cmp);
	*out = v;
	*n = len;
	return 0;
fail:
	db_stmt_close(st);
	free(v);
	return -1;
}

const struct inventory_peak *inventory_peak_find(const struct inventory_peak *p,
						 size_t n, const char *kind,
						 const char *name)
{
	struct inventory_peak key;

	if (!n || strlen(name) >= sizeof(key.name))
		return NULL;
	snprintf(key.kind, sizeof(key.kind), "%s", kind);
	snprintf(key.name, sizeof(key.name), "%s", name);
	return bsearch(&key, p, n, sizeof(*p), peak_cmp);
}
