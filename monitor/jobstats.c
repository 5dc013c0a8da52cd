/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-job figures from jobstats_raw; see monitor/jobstats.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/jobstats.h"

int jobstats_job_ids(struct db *db, uint64_t **ids, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	uint64_t *v = NULL;
	size_t cnt = 0;
	int rv = -1;

	*ids = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT DISTINCT job_id FROM jobstats_raw"
			" WHERE job_id IS NOT NULL ORDER BY job_id",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	if (db_fetch_uint64s(st, &v, &cnt, err) < 0)
		goto out;
	*ids = v;
	*n = cnt;
	v = NULL;
	rv = 0;
out:
	free(v);
	db_stmt_close(st);
	return rv;
}

/* Data-on-MDT: an MDT's read_bytes / write_bytes are data (and its read /
 * write / punch the same requests' times), not metadata. */
static void add_op(struct jobstats_sums *out, const char *kind, const char *op,
		   uint64_t samples, uint64_t sum)
{
	if (!strcmp(op, "read_bytes")) {
		out->read_ops += samples;
		out->read_bytes += sum;
	} else if (!strcmp(op, "write_bytes")) {
		out->write_ops += samples;
		out->write_bytes += sum;
	} else if (!strcmp(kind, "mdt") && strcmp(op, "read") != 0 &&
		   strcmp(op, "write") != 0 && strcmp(op, "punch") != 0) {
		out->md_ops += samples;
	}
}

int jobstats_job_sums(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		      struct jobstats_sums *out, fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1, r;

	memset(out, 0, sizeof(*out));
	/* the newest snapshot of each (target, Lustre job id, op) holds the
	 * job's totals on that target */
	st = db_prepare(
		db,
		"SELECT r.kind, r.op, SUM(r.samples), SUM(r.sum_value),"
		" COUNT(*)"
		" FROM jobstats_raw r JOIN (SELECT kind, target,"
		"  lustre_job_id, op, MAX(ts) AS ts FROM jobstats_raw"
		"  WHERE job_id = ? AND ts BETWEEN ? AND ?"
		"  GROUP BY kind, target, lustre_job_id, op) m"
		" ON m.kind = r.kind AND m.target = r.target"
		" AND m.lustre_job_id = r.lustre_job_id AND m.op = r.op"
		" AND m.ts = r.ts WHERE r.job_id = ? GROUP BY r.kind, r.op",
		err);
	if (!st)
		return -1;
	db_bind_uint64(st, 0, job_id);
	db_bind_int64(st, 1, from);
	db_bind_int64(st, 2, to);
	db_bind_uint64(st, 3, job_id);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const char *kind = db_col_text(st, 0), *op = db_col_text(st, 1);

		if (!kind || !op)
			continue;
		out->rows += db_col_uint64(st, 4);
		add_op(out, kind, op, db_col_uint64(st, 2),
		       db_col_uint64(st, 3));
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int fwd_samples_sums(struct db *db, char *const *names, size_t n, int64_t from,
		     int64_t to, struct fwd_samples_sums *out, fwd_error_t *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t at = 0; at < n; at += 100) {
		size_t k = n - at < 100 ? n - at : 100;
		char sql[512 + 2 * 100];
		struct db_stmt *st;
		int r;

		snprintf(sql, sizeof(sql),
			 "SELECT COALESCE(SUM(read_bytes), 0),"
			 " COALESCE(SUM(write_bytes), 0),"
			 " COALESCE(SUM(read_ops), 0),"
			 " COALESCE(SUM(write_ops), 0),"
			 " COALESCE(SUM(md_ops), 0), COUNT(dt)"
			 " FROM samples_raw WHERE kind = 'fwd'"
			 " AND ts > ? AND ts <= ? AND dt IS NOT NULL"
			 " AND name IN (");
		db_append_placeholders(sql, sizeof(sql), k);
		strncat(sql, ")", sizeof(sql) - strlen(sql) - 1);
		if (!(st = db_prepare(db, sql, err)))
			return -1;
		db_bind_int64(st, 0, from);
		db_bind_int64(st, 1, to);
		for (size_t i = 0; i < k; i++)
			db_bind_text(st, (unsigned)(2 + i), names[at + i]);
		if (db_exec(st, err) < 0) {
			db_stmt_close(st);
			return -1;
		}
		r = db_fetch(st, err);
		if (r > 0) {
			out->read_bytes += db_col_uint64(st, 0);
			out->write_bytes += db_col_uint64(st, 1);
			out->read_ops += db_col_uint64(st, 2);
			out->write_ops += db_col_uint64(st, 3);
			out->md_ops += db_col_uint64(st, 4);
			out->samples += db_col_uint64(st, 5);
		}
		db_stmt_close(st);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* The newest snapshot of each (kind, target, op) of a Lustre id with no
 * Slurm job in [from, to]. */
static const char name_snap_sql[] =
	"SELECT r.kind, r.target, r.op, r.samples, r.sum_value"
	" FROM jobstats_raw r JOIN (SELECT kind, target, op, MAX(ts) AS ts"
	"  FROM jobstats_raw WHERE lustre_job_id = ? AND job_id IS NULL"
	"  AND ts BETWEEN ? AND ? GROUP BY kind, target, op) m"
	" ON m.kind = r.kind AND m.target = r.target AND m.op = r.op"
	" AND m.ts = r.ts WHERE r.lustre_job_id = ? AND r.job_id IS NULL";

struct snap {
	char key[200]; /* kind \t target \t op */
	char kind[8], op[32];
	uint64_t samples, sum;
};

static int name_snaps(struct db *db, const char *id, int64_t from, int64_t to,
		      struct snap **v, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st = db_prepare(db, name_snap_sql, err);
	size_t cap = 0;
	int r;

	*v = NULL;
	*n = 0;
	if (!st)
		return -1;
	db_bind_text(st, 0, id);
	db_bind_int64(st, 1, from);
	db_bind_int64(st, 2, to);
	db_bind_text(st, 3, id);
	if (db_exec(st, err) < 0) {
		db_stmt_close(st);
		return -1;
	}
	while ((r = db_fetch(st, err)) > 0) {
		const char *kind = db_col_text(st, 0), *tg = db_col_text(st, 1);
		const char *op = db_col_text(st, 2);
		struct snap *x;

		if (!kind || !tg || !op)
			continue;
		if (FWD_GROW(*v, cap, *n + 1, 16) < 0) {
			errprintf(err, "out of memory");
			r = -1;
			break;
		}
		x = &(*v)[(*n)++];
		snprintf(x->key, sizeof(x->key), "%s\t%s\t%s", kind, tg, op);
		snprintf(x->kind, sizeof(x->kind), "%s", kind);
		snprintf(x->op, sizeof(x->op), "%s", op);
		x->samples = db_col_uint64(st, 3);
		x->sum = db_col_uint64(st, 4);
	}
	db_stmt_close(st);
	return r < 0 ? -1 : 0;
}

int jobstats_name_sums(struct db *db, const char *lustre_job_id, int64_t from,
		       int64_t to, int64_t before, struct jobstats_sums *out,
		       fwd_error_t *err)
{
	struct snap *now = NULL, *old = NULL;
	size_t n_now = 0, n_old = 0;
	int rv = -1;

	memset(out, 0, sizeof(*out));
	if (name_snaps(db, lustre_job_id, from, to, &now, &n_now, err) < 0 ||
	    name_snaps(db, lustre_job_id, 0, before - 1, &old, &n_old, err) < 0)
		goto out;
	for (size_t i = 0; i < n_now; i++) {
		const struct snap *a = &now[i];
		uint64_t samples = a->samples, sum = a->sum;

		for (size_t j = 0; j < n_old; j++) {
			if (strcmp(old[j].key, a->key) != 0)
				continue;
			if (old[j].samples <= samples && old[j].sum <= sum) {
				samples -= old[j].samples;
				sum -= old[j].sum;
			}
			break;
		}
		out->rows++;
		add_op(out, a->kind, a->op, samples, sum);
	}
	rv = 0;
out:
	free(now);
	free(old);
	return rv;
}

int ingest_arrivals_take(struct db *db, struct ingest_arrivals *out,
			 fwd_error_t *err)
{
	struct db_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	if (db_begin(db, err) < 0)
		return -1;
	st = db_prepare(db,
			"SELECT source, min_ts, max_ts FROM ingest_arrivals"
			" FOR UPDATE",
			err);
	if (!st || db_exec(st, err) < 0)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		const char *src = db_col_text(st, 0);

		if (src && !strcmp(src, "samples")) {
			out->has_samples = true;
			out->samples_from = db_col_int64(st, 1);
			out->samples_to = db_col_int64(st, 2);
		} else if (src && !strcmp(src, "jobstats")) {
			out->has_jobstats = true;
			out->jobstats_from = db_col_int64(st, 1);
			out->jobstats_to = db_col_int64(st, 2);
		}
	}
	if (r < 0)
		goto fail;
	db_stmt_close(st);
	st = NULL;
	if (db_execf(db, err, "DELETE FROM ingest_arrivals", "") < 0 ||
	    db_commit(db, err) < 0)
		goto fail;
	return 0;
fail:
	db_stmt_close(st);
	db_rollback(db);
	return -1;
}
