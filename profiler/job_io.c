/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job summaries from any source, ranked, and the history loop's marks
 * (job_io.profiled_at); see profiler/job_io.h.  Every statement is
 * prepared; the IN lists of by-id reads are assembled from constant
 * placeholders only.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "profiler/job_io.h"

#define IN_CHUNK 100

/* clang-format off */
static const char *const source_names[JOB_IO_N_SOURCES] = {
	"", "sacct", "forwarders", "jobstats", "darshan", "traces",
};
/* clang-format on */

const char *job_io_source_name(enum job_io_source s)
{
	return s > JOB_IO_NONE && s < JOB_IO_N_SOURCES ? source_names[s] : "";
}

enum job_io_source job_io_source_parse(const char *s)
{
	for (int i = 1; s && i < JOB_IO_N_SOURCES; i++)
		if (!strcmp(s, source_names[i]))
			return (enum job_io_source)i;
	return JOB_IO_NONE;
}

/*
 * The job_io rows of the jobs ids[0..k) (k <= IN_CHUNK): "SELECT <cols>
 * FROM job_io WHERE job_id IN (?, ...)<tail>", executed.  NULL with err
 * on failure.
 */
static struct db_stmt *select_ids(struct db *db, const char *cols,
				  const char *tail, const uint64_t *ids,
				  size_t k, fwd_error_t *err)
{
	char sql[1024 + 2 * IN_CHUNK];
	struct db_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT %s FROM job_io WHERE job_id IN (",
		 cols);
	db_append_placeholders(sql, sizeof(sql), k);
	snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), ")%s", tail);
	if (!(st = db_prepare(db, sql, err)))
		return NULL;
	for (size_t i = 0; i < k; i++)
		db_bind_uint64(st, (unsigned)i, ids[i]);
	if (db_exec(st, err) < 0) {
		db_stmt_close(st);
		return NULL;
	}
	return st;
}

int job_io_status(struct db *db, const uint64_t *ids, size_t n,
		  struct job_io_state *out, fwd_error_t *err)
{
	memset(out, 0, n * sizeof(*out));
	for (size_t at = 0; at < n; at += IN_CHUNK) {
		size_t k = n - at < IN_CHUNK ? n - at : IN_CHUNK;
		struct db_stmt *st;
		int r;

		if (!(st = select_ids(db,
				      "job_id, source, updated_at,"
				      " COALESCE(profiled_at, -1)",
				      "", ids + at, k, err)))
			return -1;
		while ((r = db_fetch(st, err)) > 0) {
			uint64_t id = db_col_uint64(st, 0);

			for (size_t i = at; i < at + k; i++) {
				if (ids[i] != id)
					continue;
				out[i].source =
					job_io_source_parse(db_col_text(st, 1));
				out[i].updated_at = db_col_int64(st, 2);
				out[i].profiled_at = db_col_int64(st, 3);
			}
		}
		db_stmt_close(st);
		if (r < 0)
			return -1;
	}
	return 0;
}

int job_io_store_totals(struct db *db, uint64_t job_id,
			enum job_io_source source,
			const struct job_io_totals *t, int64_t now,
			fwd_error_t *err)
{
	uint64_t rb = t->read_bytes, wb = t->write_bytes;
	double vol = (double)(rb + wb);
	double rt = t->runtime > 1 ? t->runtime : 1;
	bool direct = t->direct && !t->forwarders_held;
	double achieved = t->forwarders_held || direct ? vol / rt : 0;
	int64_t n;

	/* A weaker source never replaces a stronger one; updated_at moves
	 * only when a figure changed, so the loop's mark (profiled_at)
	 * stays valid for an unchanged summary.  updated_at is assigned
	 * first: the comparisons see the old values. */
	n = db_execf(
		db, err,
		"INSERT INTO job_io (job_id, read_bytes, write_bytes,"
		" io_nodes, procs, io_mode, node_bandwidth_bps,"
		" peak_bandwidth_bps, iops, mdops, mdops_rate, runtime,"
		" forwarders_held, bandwidth_achieved_bps, forwarders_private,"
		" direct, source, updated_at)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
		" ON DUPLICATE KEY UPDATE"
		" updated_at = IF((@fwd_take := NOT (FIELD(source, 'sacct',"
		"  'forwarders', 'jobstats', 'darshan', 'traces')"
		"  > FIELD(VALUES(source), 'sacct', 'forwarders', 'jobstats',"
		"  'darshan', 'traces')"
		"  OR (read_bytes <=> VALUES(read_bytes)"
		"  AND write_bytes <=> VALUES(write_bytes)"
		"  AND mdops <=> VALUES(mdops) AND io_mode <=> VALUES(io_mode)"
		"  AND forwarders_held <=> VALUES(forwarders_held)"
		"  AND forwarders_private <=> VALUES(forwarders_private)"
		"  AND direct <=> VALUES(direct)"
		"  AND runtime <=> VALUES(runtime)"
		"  AND source <=> VALUES(source)))), VALUES(updated_at),"
		"  updated_at),"
		" read_bytes = IF(@fwd_take, VALUES(read_bytes), read_bytes),"
		" write_bytes = IF(@fwd_take, VALUES(write_bytes), "
		"write_bytes),"
		" io_nodes = IF(@fwd_take, VALUES(io_nodes), io_nodes),"
		" procs = IF(@fwd_take, VALUES(procs), procs),"
		" io_mode = IF(@fwd_take, VALUES(io_mode), io_mode),"
		" node_bandwidth_bps = IF(@fwd_take, "
		"VALUES(node_bandwidth_bps), node_bandwidth_bps),"
		" peak_bandwidth_bps = IF(@fwd_take, "
		"VALUES(peak_bandwidth_bps), peak_bandwidth_bps),"
		" iops = IF(@fwd_take, VALUES(iops), iops),"
		" mdops = IF(@fwd_take, VALUES(mdops), mdops),"
		" mdops_rate = IF(@fwd_take, VALUES(mdops_rate), mdops_rate),"
		" runtime = IF(@fwd_take, VALUES(runtime), runtime),"
		" forwarders_held = IF(@fwd_take, VALUES(forwarders_held), "
		"forwarders_held),"
		" bandwidth_achieved_bps = IF(@fwd_take, "
		"VALUES(bandwidth_achieved_bps), bandwidth_achieved_bps),"
		" forwarders_private = IF(@fwd_take, "
		"VALUES(forwarders_private), forwarders_private),"
		" direct = IF(@fwd_take, VALUES(direct), direct),"
		" source = IF(@fwd_take, VALUES(source), source)",
		"uuuuusdddudduduusi", job_id, rb, wb,
		(uint64_t)(rb + wb ? t->io_nodes : 0), (uint64_t)t->procs,
		fwd_io_mode_name(t->io_mode),
		t->io_nodes ? vol / rt / t->io_nodes : 0, vol / rt,
		(double)(t->read_ops + t->write_ops) / rt, t->md_ops,
		(double)t->md_ops / rt, t->runtime,
		(uint64_t)t->forwarders_held, achieved,
		(uint64_t)(t->forwarders_held && t->forwarders_private),
		(uint64_t)direct, job_io_source_name(source), now);
	return n < 0 ? -1 : 0;
}

int job_io_mark_profiled(struct db *db, uint64_t job_id, int64_t now,
			 fwd_error_t *err)
{
	return db_execf(db, err,
			"UPDATE job_io SET profiled_at = ? WHERE job_id = ?",
			"iu", now, job_id) < 0
		       ? -1
		       : 0;
}

int job_io_sources(struct db *db, const uint64_t *ids, size_t n, json_t **out,
		   fwd_error_t *err)
{
	json_t *a = json_array();

	*out = NULL;
	if (!a) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	for (size_t at = 0; at < n; at += IN_CHUNK) {
		size_t k = n - at < IN_CHUNK ? n - at : IN_CHUNK;
		struct db_stmt *st;
		int r;

		if (!(st = select_ids(db,
				      "job_id, source, read_bytes, write_bytes,"
				      " mdops, forwarders_held,"
				      " bandwidth_achieved_bps, runtime",
				      " ORDER BY job_id DESC", ids + at, k,
				      err)))
			goto fail;
		while ((r = db_fetch(st, err)) > 0)
			json_array_append_new(
				a,
				json_pack("{sI ss sI sI sI sI sf sf}", "job_id",
					  (json_int_t)db_col_uint64(st, 0),
					  "source",
					  db_col_text(st, 1)
						  ? db_col_text(st, 1)
						  : "",
					  "read_bytes",
					  (json_int_t)db_col_uint64(st, 2),
					  "write_bytes",
					  (json_int_t)db_col_uint64(st, 3),
					  "mdops",
					  (json_int_t)db_col_uint64(st, 4),
					  "forwarders_held",
					  (json_int_t)db_col_uint64(st, 5),
					  "bandwidth_achieved_bps",
					  db_col_double(st, 6), "runtime",
					  db_col_double(st, 7)));
		db_stmt_close(st);
		if (r < 0)
			goto fail;
	}
	*out = a;
	return 0;
fail:
	json_decref(a);
	return -1;
}

static double col_num(struct db_stmt *st, unsigned int col)
{
	return db_col_null(st, col) ? NAN : db_col_double(st, col);
}

int job_io_rows(struct db *db, const uint64_t *ids, size_t n,
		struct job_io_row **out, size_t *n_out, fwd_error_t *err)
{
	size_t cap = 0;

	*out = NULL;
	*n_out = 0;
	for (size_t at = 0; at < n; at += IN_CHUNK) {
		size_t k = n - at < IN_CHUNK ? n - at : IN_CHUNK;
		struct db_stmt *st;
		int r;

		if (!(st = select_ids(
			      db,
			      "job_id, source, read_bytes, write_bytes,"
			      " mdops, io_nodes, procs, forwarders_held,"
			      " io_mode, node_bandwidth_bps,"
			      " peak_bandwidth_bps, iops, mdops_rate,"
			      " metadata_queue, bandwidth_achieved_bps,"
			      " runtime, forwarders_private, direct,"
			      " phases",
			      " ORDER BY job_id", ids + at, k, err)))
			goto fail;
		while ((r = db_fetch(st, err)) > 0) {
			struct job_io_row *w;
			const char *src = db_col_text(st, 1),
				   *mode = db_col_text(st, 8);

			if (FWD_GROW(*out, cap, *n_out + 1, 16) < 0) {
				errprintf(err, "%s", strerror(errno));
				db_stmt_close(st);
				goto fail;
			}
			w = &(*out)[(*n_out)++];
			memset(w, 0, sizeof(*w));
			w->job_id = db_col_uint64(st, 0);
			snprintf(w->source, sizeof(w->source), "%s",
				 src ? src : "");
			w->read_bytes = db_col_uint64(st, 2);
			w->write_bytes = db_col_uint64(st, 3);
			w->mdops = db_col_uint64(st, 4);
			w->io_nodes = (uint32_t)db_col_uint64(st, 5);
			w->procs = (uint32_t)db_col_uint64(st, 6);
			w->forwarders_held = (uint32_t)db_col_uint64(st, 7);
			snprintf(w->io_mode, sizeof(w->io_mode), "%s",
				 mode ? mode : "none");
			w->node_bandwidth_bps = col_num(st, 9);
			w->peak_bandwidth_bps = col_num(st, 10);
			w->iops = col_num(st, 11);
			w->mdops_rate = col_num(st, 12);
			w->metadata_queue = col_num(st, 13);
			w->bandwidth_achieved_bps = col_num(st, 14);
			w->runtime = col_num(st, 15);
			w->forwarders_private = db_col_int64(st, 16) != 0;
			w->direct = db_col_int64(st, 17) != 0;
			if (!db_col_null(st, 18) && db_col_text(st, 18) &&
			    !(w->phases = strdup(db_col_text(st, 18)))) {
				errprintf(err, "%s", strerror(errno));
				db_stmt_close(st);
				goto fail;
			}
		}
		db_stmt_close(st);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	job_io_rows_free(*out, *n_out);
	*out = NULL;
	*n_out = 0;
	return errprefix(err, "reading job summaries");
}

void job_io_rows_free(struct job_io_row *v, size_t n)
{
	int saved = errno;

	for (size_t i = 0; v && i < n; i++)
		free(v[i].phases);
	free(v);
	errno = saved;
}
