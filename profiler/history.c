/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job summaries in the database (job_io): written from traces or from
 * Lustre job_stats, read back as the runs of a profile key and as the
 * figures the health checks need.  Which jobs to read comes from the
 * caller (the jobs table belongs to controller/): rows are selected by
 * job id, in chunks whose IN lists are assembled from constant
 * placeholders only.  Every statement is prepared.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "profiler/profile.h"
#include "profiler/profile_priv.h"

/* Job ids per statement of a by-id read. */
#define IN_CHUNK 100
/* ... and of the runs read (a launch's PROFILE_LAUNCH_RUNS in one). */
#define RUNS_CHUNK PROFILE_LAUNCH_RUNS

enum fwd_io_mode profile_mode_of(const char *s)
{
	enum fwd_io_mode m = FWD_IO_NONE;

	if (s)
		fwd_io_mode_parse(s, &m);
	return m;
}

/*
 * "SELECT cols FROM job_io WHERE job_id IN (?, ...)" for ids[0..n)
 * (0 < n <= RUNS_CHUNK), bound and executed; NULL on error.
 */
static struct db_stmt *io_select(struct db *db, const char *cols,
				 const uint64_t *ids, size_t n,
				 fwd_error_t *err)
{
	char sql[1024 + 3 * RUNS_CHUNK];
	struct db_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT %s FROM job_io WHERE job_id IN (",
		 cols);
	db_append_placeholders(sql, sizeof(sql), n);
	strncat(sql, ")", sizeof(sql) - strlen(sql) - 1);
	if (!(st = db_prepare(db, sql, err)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		db_bind_uint64(st, (unsigned)i, ids[i]);
	if (db_exec(st, err) < 0) {
		db_stmt_close(st);
		return NULL;
	}
	return st;
}

/* ---- runs ---- */

void profile_read_run(const struct db_stmt *st, struct profile_run *r,
		      uint64_t *job_id)
{
	memset(r, 0, sizeof(*r));
	*job_id = db_col_uint64(st, 0);
	r->read_bytes = db_col_uint64(st, 1);
	r->write_bytes = db_col_uint64(st, 2);
	r->io_volume_bytes = r->read_bytes + r->write_bytes;
	r->io_nodes = (uint32_t)db_col_uint64(st, 3);
	r->node_bandwidth_bps = db_col_double(st, 4);
	r->peak_bandwidth_bps = db_col_double(st, 5);
	r->iops = db_col_double(st, 6);
	r->mdops = db_col_double(st, 7);
	/* the column is NOT NULL DEFAULT 0: 0 means not measured */
	r->metadata_queue =
		db_col_double(st, 8) > 0 ? db_col_double(st, 8) : -1;
	r->io_mode = profile_mode_of(db_col_text(st, 9));
	r->forwarders = (uint32_t)db_col_uint64(st, 10);
	r->achieved_bps = db_col_double(st, 11);
	r->runtime = db_col_double(st, 12);
	r->private_fwd = db_col_uint64(st, 13) != 0;
	r->direct = db_col_uint64(st, 14) != 0 && r->forwarders == 0;
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

struct id_at {
	uint64_t id;
	size_t at;
};

static int cmp_id_at(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int profile_db_runs(struct db *db, const struct profile_jobref *jobs, size_t n,
		    size_t max, struct profile_runs *out, fwd_error_t *err)
{
	uint64_t ids[RUNS_CHUNK];
	struct id_at idx[RUNS_CHUNK];
	struct profile_run *got;
	bool have[RUNS_CHUNK];
	int rv = -1;

	if (!n || out->n >= max)
		return 0;
	if (!(got = malloc(RUNS_CHUNK * sizeof(*got)))) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	/* One statement per RUNS_CHUNK jobs, newest first: a launch
	 * (PROFILE_LAUNCH_RUNS jobs at most) reads its runs in one. */
	for (size_t at = 0; at < n && out->n < max; at += RUNS_CHUNK) {
		size_t k = n - at < RUNS_CHUNK ? n - at : RUNS_CHUNK;
		struct db_stmt *st;
		int r;

		for (size_t i = 0; i < k; i++) {
			ids[i] = jobs[at + i].job_id;
			idx[i].id = ids[i];
			idx[i].at = i;
			have[i] = false;
		}
		qsort(idx, k, sizeof(*idx), cmp_id_at);
		if (!(st = io_select(db, PROFILE_IO_RUN_COLS, ids, k, err)))
			goto out;
		while ((r = db_fetch(st, err)) > 0) {
			struct profile_run run;
			struct id_at key, *hit;

			profile_read_run(st, &run, &key.id);
			hit = bsearch(&key, idx, k, sizeof(*idx), cmp_id_at);
			if (hit && !have[hit->at]) {
				got[hit->at] = run;
				have[hit->at] = true;
			}
		}
		db_stmt_close(st);
		if (r < 0)
			goto out;
		for (size_t i = 0; i < k && out->n < max; i++) {
			if (!have[i])
				continue;
			got[i].nodes = jobs[at + i].job.nodes;
			got[i].end_time = jobs[at + i].end_at;
			if (profile_runs_push(out, &got[i], ids[i])) {
				errno = ENOMEM;
				errprintf(err, "out of memory");
				goto out;
			}
		}
	}
	rv = 0;
out:
	free(got);
	return rv;
}

/* ---- what the health checks read ---- */

void profile_io_free(struct profile_io *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].phases);
		v[i].phases = NULL;
	}
}

int profile_db_io(struct db *db, const uint64_t *ids, size_t n,
		  struct profile_io *out, fwd_error_t *err)
{
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].io_mode, sizeof(out[i].io_mode), "none");
	}
	for (size_t at = 0; at < n; at += IN_CHUNK) {
		size_t k = n - at < IN_CHUNK ? n - at : IN_CHUNK;
		struct db_stmt *st;
		int r;

		if (!(st = io_select(db,
				     "job_id, io_mode, mdops_rate,"
				     " peak_bandwidth_bps, phases",
				     ids + at, k, err)))
			goto fail;
		while ((r = db_fetch(st, err)) > 0) {
			uint64_t id = db_col_uint64(st, 0);

			for (size_t i = at; i < at + k; i++) {
				struct profile_io *o = &out[i];

				if (ids[i] != id || o->found)
					continue;
				o->found = true;
				snprintf(o->io_mode, sizeof(o->io_mode), "%s",
					 db_col_null(st, 1)
						 ? "none"
						 : db_col_text(st, 1));
				o->mdops_rate = db_col_double(st, 2);
				o->peak_bandwidth_bps = db_col_double(st, 3);
				if (!db_col_null(st, 4) &&
				    !(o->phases = strdup(db_col_text(st, 4)))) {
					db_stmt_close(st);
					errno = ENOMEM;
					errprintf(err, "out of memory");
					goto fail;
				}
				break;
			}
		}
		db_stmt_close(st);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	profile_io_free(out, n);
	return -1;
}

int profile_db_summary_ids(struct db *db, uint64_t **ids, size_t *n,
			   fwd_error_t *err)
{
	struct db_stmt *st;
	uint64_t *v = NULL;
	size_t cnt = 0;
	int rv = -1;

	*ids = NULL;
	*n = 0;
	st = db_prepare(db, "SELECT job_id FROM job_io ORDER BY job_id", err);
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

int profile_db_has_summary(struct db *db, const uint64_t *ids, size_t n,
			   bool *has, fwd_error_t *err)
{
	for (size_t i = 0; i < n; i++)
		has[i] = false;
	for (size_t at = 0; at < n; at += IN_CHUNK) {
		size_t k = n - at < IN_CHUNK ? n - at : IN_CHUNK;
		struct db_stmt *st;
		int r;

		if (!(st = io_select(db, "job_id", ids + at, k, err)))
			return -1;
		while ((r = db_fetch(st, err)) > 0) {
			uint64_t id = db_col_uint64(st, 0);

			for (size_t i = at; i < at + k; i++)
				if (ids[i] == id)
					has[i] = true;
		}
		db_stmt_close(st);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* ---- job summaries ---- */

int profile_db_store_summary(struct db *db, uint64_t job_id,
			     const struct trace_summary *s, double runtime,
			     uint32_t forwarders_held, bool forwarders_private,
			     bool direct, int64_t now, fwd_error_t *err)
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
	/* k = the forwarders the ledger gave the job (the caller counts
	 * them); the bandwidth it achieved with them is its bandwidth in
	 * I/O phases.  Without ledger rows (k = 0) an earlier k is kept. */
	n = db_execf(
		db, err,
		"INSERT INTO job_io (job_id, read_bytes, write_bytes,"
		" io_nodes, procs, io_mode, node_bandwidth_bps,"
		" peak_bandwidth_bps, iops, mdops, mdops_rate, runtime,"
		" phases, forwarders_held, bandwidth_achieved_bps,"
		" forwarders_private, direct, source, updated_at)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'traces',?)"
		" ON DUPLICATE KEY UPDATE read_bytes = VALUES(read_bytes),"
		" write_bytes = VALUES(write_bytes),"
		" io_nodes = VALUES(io_nodes), procs = VALUES(procs),"
		" io_mode = VALUES(io_mode),"
		" node_bandwidth_bps = VALUES(node_bandwidth_bps),"
		" peak_bandwidth_bps = VALUES(peak_bandwidth_bps),"
		" iops = VALUES(iops), mdops = VALUES(mdops),"
		" mdops_rate = VALUES(mdops_rate), runtime = VALUES(runtime),"
		" phases = VALUES(phases),"
		" forwarders_private = IF(VALUES(forwarders_held) > 0,"
		"  VALUES(forwarders_private), forwarders_private),"
		" forwarders_held = IF(VALUES(forwarders_held) > 0,"
		"  VALUES(forwarders_held), forwarders_held),"
		" bandwidth_achieved_bps = VALUES(bandwidth_achieved_bps),"
		" direct = VALUES(direct),"
		" source = 'traces', updated_at = VALUES(updated_at)",
		"uuuuusddduddsuduui", job_id, s->read_bytes, s->write_bytes,
		(uint64_t)s->io_nodes, (uint64_t)s->io_procs,
		fwd_io_mode_name(s->io_mode), s->node_bandwidth_bps,
		s->peak_bandwidth_bps, s->iops, s->mdops, s->mdops_rate,
		runtime, phases, (uint64_t)forwarders_held,
		s->phase_bandwidth_bps,
		(uint64_t)(forwarders_held && forwarders_private),
		(uint64_t)(!forwarders_held && direct), now);
	free(phases);
	return n < 0 ? -1 : 0;
}

/* ---- Lustre job_stats ---- */

int profile_db_store_jobstats(struct db *db, uint64_t job_id, uint32_t nodes,
			      double runtime,
			      const struct profile_io_totals *tot, int64_t now,
			      fwd_error_t *err)
{
	uint64_t rb = tot->read_bytes, wb = tot->write_bytes;
	uint64_t rops = tot->read_ops, wops = tot->write_ops, md = tot->md_ops;
	double vol, t = runtime > 1 ? runtime : 1;

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
		return -1;
	return 0;
}

int profile_db_prune(struct db *db, const struct policy_retention *r,
		     int64_t now, bool dry_run, struct db_pruned *out,
		     size_t *n, fwd_error_t *err)
{
	const struct {
		const char *table;
		double keep;
	} t[PROFILE_PRUNE_TABLES] = {
		{"job_io", r->job_io},
		{"profiles", r->profiles},
	};

	for (size_t i = 0; i < PROFILE_PRUNE_TABLES; i++) {
		struct db_pruned *p = &out[*n];

		if (t[i].keep <= 0)
			continue; /* keep forever */
		p->table = t[i].table;
		p->cutoff = now - (int64_t)t[i].keep;
		if (db_prune_before(db, p, "updated_at", dry_run, err) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}
