/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job summaries in the database (job_io): written from traces or from
 * Lustre job_stats, read back as the runs of a profile key.  Every
 * statement is prepared; the only SQL assembled at run time is the WHERE
 * clause of the runs query, from constant fragments chosen by which key
 * fields the policy names (never from values), so the jobs_app index is
 * usable for the default key.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "profiler/profile.h"
#include "profiler/profile_priv.h"

enum trace_io_mode profile_mode_of(const char *s)
{
	enum trace_io_mode m = TRACE_IO_NONE;

	if (s)
		trace_io_mode_parse(s, &m);
	return m;
}

/* ---- jobs ---- */

void profile_copy_col(const struct db_stmt *st, unsigned c, char *dst,
		      size_t len, bool *has)
{
	const char *v = db_col_null(st, c) ? NULL : db_col_text(st, c);

	if (has)
		*has = v != NULL;
	snprintf(dst, len, "%s", v ? v : "");
}

void profile_jobrow_free(struct profile_jobrow *row)
{
	if (!row)
		return;
	free(row->nodelist);
	row->nodelist = NULL;
}

int profile_db_job(struct db *db, uint64_t job_id, struct profile_jobrow *row,
		   fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1, r;

	memset(row, 0, sizeof(*row));
	st = db_prepare(db,
			"SELECT job_id, user, account, name, partition_name,"
			" nodelist, node_count, start_at, end_at FROM jobs"
			" WHERE job_id = ?",
			err);
	if (!st)
		return -1;
	db_bind_uint64(st, 0, job_id);
	if (db_exec(st, err) < 0)
		goto out;
	r = db_fetch(st, err);
	if (r <= 0) {
		rv = r;
		goto out;
	}
	row->job_id = db_col_uint64(st, 0);
	profile_copy_col(st, 1, row->user, sizeof(row->user), NULL);
	profile_copy_col(st, 2, row->account, sizeof(row->account),
			 &row->has_account);
	profile_copy_col(st, 3, row->name, sizeof(row->name), NULL);
	profile_copy_col(st, 4, row->partition, sizeof(row->partition),
			 &row->has_partition);
	if (!db_col_null(st, 5) &&
	    !(row->nodelist = strdup(db_col_text(st, 5)))) {
		errprintf(err, "out of memory");
		goto out;
	}
	row->node_count = (uint32_t)db_col_uint64(st, 6);
	row->start_at = db_col_int64(st, 7);
	row->end_at = db_col_int64(st, 8);
	rv = 1;
out:
	db_stmt_close(st);
	return rv;
}

/* ---- runs ---- */

void profile_read_run(const struct db_stmt *st, struct profile_run *r,
		      uint64_t *job_id)
{
	memset(r, 0, sizeof(*r));
	*job_id = db_col_uint64(st, 0);
	r->nodes = (uint32_t)db_col_uint64(st, 1);
	r->end_time = db_col_int64(st, 2);
	r->read_bytes = db_col_uint64(st, 3);
	r->write_bytes = db_col_uint64(st, 4);
	r->io_volume_bytes = r->read_bytes + r->write_bytes;
	r->io_nodes = (uint32_t)db_col_uint64(st, 5);
	r->node_bandwidth_bps = db_col_double(st, 6);
	r->peak_bandwidth_bps = db_col_double(st, 7);
	r->iops = db_col_double(st, 8);
	r->mdops = db_col_double(st, 9);
	/* the column is NOT NULL DEFAULT 0: 0 means not measured */
	r->metadata_queue =
		db_col_double(st, 10) > 0 ? db_col_double(st, 10) : -1;
	r->io_mode = profile_mode_of(db_col_text(st, 11));
	r->forwarders = (uint32_t)db_col_uint64(st, 12);
	r->achieved_bps = db_col_double(st, 13);
	r->runtime = db_col_double(st, 14);
}

void profile_runs_free(struct profile_runs *r)
{
	free(r->v);
	free(r->job_ids);
	memset(r, 0, sizeof(*r));
}

int profile_runs_push(struct profile_runs *r, const struct profile_run *run,
		      uint64_t job_id)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct profile_run *v = realloc(r->v, cap * sizeof(*v));
		uint64_t *ids;

		if (!v)
			return -1;
		r->v = v;
		ids = realloc(r->job_ids, cap * sizeof(*ids));
		if (!ids)
			return -1;
		r->job_ids = ids;
		r->cap = cap;
	}
	r->v[r->n] = *run;
	r->job_ids[r->n] = job_id;
	r->n++;
	return 0;
}

/* The finished runs of job's key, newest first. */
int profile_key_runs(struct db *db, const struct policy *p,
		     const struct profile_job *job, int64_t now,
		     struct profile_runs *out, fwd_error_t *err)
{
	char sql[1024];
	struct db_stmt *st;
	unsigned idx = 0;
	int rv = -1, r;
	int64_t since = p->history.max_age > 0
				? now - (int64_t)p->history.max_age
				: INT64_MIN;

	snprintf(sql, sizeof(sql),
		 "SELECT " RUN_COLS " FROM jobs j JOIN job_io i"
		 " ON i.job_id = j.job_id"
		 " WHERE j.end_at IS NOT NULL AND j.end_at >= ?");
	for (size_t i = 0; i < p->history.key.count; i++) {
		const char *f = p->history.key.items[i];
		const char *frag = NULL;

		if (!strcmp(f, "user"))
			frag = " AND j.user = ?";
		else if (!strcmp(f, "account"))
			frag = " AND j.account <=> ?";
		else if (!strcmp(f, "name"))
			frag = " AND j.name = ?";
		else if (!strcmp(f, "partition"))
			frag = " AND j.partition_name <=> ?";
		else if (!strcmp(f, "node_bucket"))
			frag = " AND j.node_count >= ? AND j.node_count < ?";
		if (!frag) {
			errno = EINVAL;
			return errprintf(err,
					 "history.key: unknown field "
					 "\"%s\"",
					 f);
		}
		strncat(sql, frag, sizeof(sql) - strlen(sql) - 1);
	}
	strncat(sql, " ORDER BY j.end_at DESC LIMIT 500",
		sizeof(sql) - strlen(sql) - 1);

	if (!(st = db_prepare(db, sql, err)))
		return -1;
	db_bind_int64(st, idx++, since);
	for (size_t i = 0; i < p->history.key.count; i++) {
		const char *f = p->history.key.items[i];

		if (!strcmp(f, "user")) {
			db_bind_text(st, idx++, job->user ? job->user : "");
		} else if (!strcmp(f, "account")) {
			db_bind_text(st, idx++, job->account);
		} else if (!strcmp(f, "name")) {
			db_bind_text(st, idx++, job->name ? job->name : "");
		} else if (!strcmp(f, "partition")) {
			db_bind_text(st, idx++, job->partition);
		} else {
			uint64_t lo = profile_bucket(job->nodes,
						     p->history.bucket_base);
			uint64_t base = p->history.bucket_base < 2
						? 2
						: p->history.bucket_base;

			db_bind_uint64(st, idx++, lo);
			db_bind_uint64(st, idx++, lo ? lo * base : 1);
		}
	}
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		struct profile_run run;
		uint64_t id;

		profile_read_run(st, &run, &id);
		if (profile_runs_push(out, &run, id)) {
			errno = ENOMEM;
			errprintf(err, "out of memory");
			goto out;
		}
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

/* ---- job summaries ---- */

int profile_db_store_summary(struct db *db, uint64_t job_id,
			     const struct trace_summary *s, double runtime,
			     int64_t now, fwd_error_t *err)
{
	json_t *ph = json_array();
	char *phases = NULL;
	int64_t n;

	for (size_t i = 0; ph && i < s->n_phases; i++) {
		const struct trace_phase *x = &s->phases[i];

		if (json_array_append_new(
			    ph,
			    json_pack("{sI sI sI sI sI}", "start",
				      (json_int_t)x->start, "end",
				      (json_int_t)x->end, "read_bytes",
				      (json_int_t)x->read_bytes, "write_bytes",
				      (json_int_t)x->write_bytes, "mdops",
				      (json_int_t)x->mdops)))
			break;
	}
	if (!ph || !(phases = json_dumps(ph, JSON_COMPACT))) {
		json_decref(ph);
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	json_decref(ph);
	/* k = the forwarders the ledger gave the job (shadow decisions hold
	 * none); the bandwidth it achieved with them is its bandwidth in
	 * I/O phases.  Without ledger rows an earlier k is kept. */
	n = db_execf(
		db, err,
		"INSERT INTO job_io (job_id, read_bytes, write_bytes,"
		" io_nodes, procs, io_mode, node_bandwidth_bps,"
		" peak_bandwidth_bps, iops, mdops, mdops_rate, runtime,"
		" phases, forwarders_held, bandwidth_achieved_bps, source,"
		" updated_at)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,"
		" (SELECT COUNT(DISTINCT a.forwarder) FROM allocations a"
		"  WHERE a.job_id = ? AND a.action <> 'shadow'),"
		" ?,'traces',?)"
		" ON DUPLICATE KEY UPDATE read_bytes = VALUES(read_bytes),"
		" write_bytes = VALUES(write_bytes),"
		" io_nodes = VALUES(io_nodes), procs = VALUES(procs),"
		" io_mode = VALUES(io_mode),"
		" node_bandwidth_bps = VALUES(node_bandwidth_bps),"
		" peak_bandwidth_bps = VALUES(peak_bandwidth_bps),"
		" iops = VALUES(iops), mdops = VALUES(mdops),"
		" mdops_rate = VALUES(mdops_rate), runtime = VALUES(runtime),"
		" phases = VALUES(phases),"
		" forwarders_held = IF(VALUES(forwarders_held) > 0,"
		"  VALUES(forwarders_held), forwarders_held),"
		" bandwidth_achieved_bps = VALUES(bandwidth_achieved_bps),"
		" source = 'traces', updated_at = VALUES(updated_at)",
		"uuuuusddduddsudi", job_id, s->read_bytes, s->write_bytes,
		(uint64_t)s->io_nodes, (uint64_t)s->io_procs,
		trace_io_mode_name(s->io_mode), s->node_bandwidth_bps,
		s->peak_bandwidth_bps, s->iops, s->mdops, s->mdops_rate,
		runtime, phases, job_id, s->phase_bandwidth_bps, now);
	free(phases);
	return n < 0 ? -1 : 0;
}

/* ---- Lustre job_stats ---- */

static int jobstats_one(struct db *db, uint64_t job_id, uint32_t nodes,
			double runtime, int64_t now, fwd_error_t *err)
{
	struct db_stmt *st;
	uint64_t rb = 0, wb = 0, rops = 0, wops = 0, md = 0;
	int rv = -1, r;
	double vol, t = runtime > 1 ? runtime : 1;

	/* the newest snapshot of each (target, Lustre job id, op) holds the
	 * job's totals on that target */
	st = db_prepare(
		db,
		"SELECT r.kind, r.op, SUM(r.samples), SUM(r.sum_value)"
		" FROM jobstats_raw r JOIN (SELECT kind, target,"
		"  lustre_job_id, op, MAX(ts) AS ts FROM jobstats_raw"
		"  WHERE job_id = ? GROUP BY kind, target, lustre_job_id, op) m"
		" ON m.kind = r.kind AND m.target = r.target"
		" AND m.lustre_job_id = r.lustre_job_id AND m.op = r.op"
		" AND m.ts = r.ts WHERE r.job_id = ? GROUP BY r.kind, r.op",
		err);
	if (!st)
		return -1;
	db_bind_uint64(st, 0, job_id);
	db_bind_uint64(st, 1, job_id);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const char *kind = db_col_text(st, 0), *op = db_col_text(st, 1);

		if (!kind || !op)
			continue;
		if (!strcmp(kind, "mdt")) {
			md += db_col_uint64(st, 2);
		} else if (!strcmp(op, "read_bytes")) {
			rops += db_col_uint64(st, 2);
			rb += db_col_uint64(st, 3);
		} else if (!strcmp(op, "write_bytes")) {
			wops += db_col_uint64(st, 2);
			wb += db_col_uint64(st, 3);
		}
	}
	if (r < 0)
		goto out;
	vol = (double)(rb + wb);
	if (db_execf(db, err,
		     "INSERT INTO job_io (job_id, read_bytes, write_bytes,"
		     " io_nodes, procs, io_mode, node_bandwidth_bps,"
		     " peak_bandwidth_bps, iops, mdops, mdops_rate, runtime,"
		     " source, updated_at) VALUES"
		     " (?,?,?,?,0,'none',?,?,?,?,?,?,'jobstats',?)",
		     "uuuuddduddi", job_id, rb, wb,
		     (uint64_t)(rb + wb ? nodes : 0),
		     nodes ? vol / t / nodes : 0, vol / t,
		     (double)(rops + wops) / t, md, (double)md / t, runtime,
		     now) < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int profile_db_jobstats(struct db *db, int64_t now, uint64_t *made,
			fwd_error_t *err)
{
	struct db_stmt *st;
	uint64_t *ids = NULL;
	uint32_t *nodes = NULL;
	double *rt = NULL;
	size_t n = 0, cap = 0;
	int rv = -1, r;

	*made = 0;
	st = db_prepare(
		db,
		"SELECT j.job_id, j.node_count,"
		" GREATEST(COALESCE(j.end_at - j.start_at, 0), 0) FROM jobs j"
		" WHERE j.end_at IS NOT NULL"
		" AND NOT EXISTS (SELECT 1 FROM job_io i"
		"  WHERE i.job_id = j.job_id)"
		" AND EXISTS (SELECT 1 FROM jobstats_raw r"
		"  WHERE r.job_id = j.job_id)"
		" ORDER BY j.job_id LIMIT 100000",
		err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			void *a = realloc(ids, c * sizeof(*ids));

			if (!a)
				goto nomem;
			ids = a;
			if (!(a = realloc(nodes, c * sizeof(*nodes))))
				goto nomem;
			nodes = a;
			if (!(a = realloc(rt, c * sizeof(*rt))))
				goto nomem;
			rt = a;
			cap = c;
		}
		ids[n] = db_col_uint64(st, 0);
		nodes[n] = (uint32_t)db_col_uint64(st, 1);
		rt[n] = db_col_double(st, 2);
		n++;
	}
	if (r < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	for (size_t i = 0; i < n; i++) {
		if (jobstats_one(db, ids[i], nodes[i], rt[i], now, err))
			goto out;
		(*made)++;
	}
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	errprintf(err, "out of memory");
out:
	db_stmt_close(st);
	free(ids);
	free(nodes);
	free(rt);
	return rv;
}
