/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The history loop; see controller/history_run.h.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "controller/history.h"
#include "controller/history_run.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "monitor/ingest.h"
#include "monitor/jobstats.h"
#include "policies/policy.h"
#include "profiler/darshan.h"
#include "profiler/job_io.h"
#include "profiler/profile.h"

#define LOCK_NAME "fwdalloc.history"

/* 1 locked, 0 held by another session, -1 error. */
static int get_lock(struct db *db, fwd_error_t *err)
{
	struct db_stmt *st = db_prepare(db, "SELECT GET_LOCK(?, 0)", err);
	int r, got = -1;

	if (!st)
		return -1;
	db_bind_text(st, 0, LOCK_NAME);
	if (db_exec(st, err) == 0 && (r = db_fetch(st, err)) > 0)
		got = !db_col_null(st, 0) && db_col_int64(st, 0) == 1;
	db_stmt_close(st);
	return got;
}

static void release_lock(struct db *db)
{
	fwd_error_t e;
	struct db_stmt *st = db_prepare(db, "SELECT RELEASE_LOCK(?)", &e);

	if (!st)
		return;
	db_bind_text(st, 0, LOCK_NAME);
	if (db_exec(st, &e) == 0)
		while (db_fetch(st, &e) > 0)
			;
	db_stmt_close(st);
}

/* The profile of j's key, recomputed (once per key and run). */
static int refresh_profile(struct db *db, const struct policy *p,
			   const struct history_job *j, int64_t now,
			   char ***done, size_t *n_done,
			   struct history_run_stats *st, fwd_error_t *err)
{
	struct profile_job pj = {
		j->user,       j->has_account ? j->account : NULL,
		j->name,       j->has_partition ? j->partition : NULL,
		j->node_count,
	};
	struct profile_jobref *jobs = NULL;
	char key[PROFILE_KEY_MAX + 1], **v;
	size_t n = 0;
	int r;

	if (profile_key(p, &pj, key, sizeof(key), err))
		return -1;
	for (size_t i = 0; i < *n_done; i++)
		if (!strcmp((*done)[i], key))
			return 0;
	if (history_key_jobs(db, p, &pj, now, 0, &jobs, &n, err) < 0)
		return -1;
	r = profile_db_update(db, p, &pj, jobs, n, now, err);
	free(jobs);
	if (r < 0)
		return -1;
	st->profiles += r > 0;
	v = realloc(*done, (*n_done + 1) * sizeof(*v));
	if (!v || !(v[*n_done] = strdup(key))) {
		if (v)
			*done = v;
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	*done = v;
	(*n_done)++;
	return 0;
}

/* The uid of a user name on this host: 1, 0 unknown, -1 error. */
static int uid_of(const char *user, uint32_t *uid, fwd_error_t *err)
{
	struct passwd pw, *res = NULL;
	long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	char *buf;
	int r;

	if (sz < 1024)
		sz = 16384;
	if (!(buf = malloc((size_t)sz))) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	r = getpwnam_r(user, &pw, buf, (size_t)sz, &res);
	if (r == 0 && res)
		*uid = (uint32_t)pw.pw_uid;
	free(buf);
	if (r != 0 && r != ENOENT && r != ESRCH && r != EBADF && r != EPERM)
		return errprintf(err, "user %s: %s", user, strerror(r));
	return res ? 1 : 0;
}

/* Other jobs of j's user whose name is j's as the kernel keeps it (15
 * bytes) and whose run meets [from, to]: 1 some, 0 none. */
static int same_program_around(struct db *db, const struct history_job *j,
			       int64_t from, int64_t to, fwd_error_t *err)
{
	int64_t n = 0;

	if (db_query_int64(db, err, &n,
			   "SELECT COUNT(*) FROM jobs WHERE user = ?"
			   " AND LEFT(name, 15) = LEFT(?, 15) AND job_id <> ?"
			   " AND start_at IS NOT NULL AND start_at <= ?"
			   " AND (end_at IS NULL OR end_at >= ?)",
			   "ssuii", j->user, j->name, j->job_id, to, from) < 0)
		return -1;
	return n > 0;
}

/*
 * j's job_stats under a jobid_name that names the process (%e.%u): the
 * rows of the id its name and its user's uid give, in its run + grace,
 * when no other job of that user and name ran then.  1 found, 0 not.
 */
static int by_program(struct db *db, const struct policy *p,
		      const struct history_job *j, int64_t start,
		      struct jobstats_sums *js, struct history_run_stats *st,
		      fwd_error_t *err)
{
	int64_t grace = (int64_t)p->jobstats.grace;
	char id[256];
	uint32_t uid = 0;
	int r;

	if (!p->jobstats.jobid_name || !*j->name)
		return 0;
	r = jobstats_proc_id(p->jobstats.jobid_name, j->name, 0, id,
			     sizeof(id));
	if (r <= 0)
		return 0; /* not a process pattern (or a name too long) */
	if ((r = uid_of(j->user, &uid, err)) < 0)
		return -1;
	if (r == 0) {
		st->unmatched_user++;
		return 0;
	}
	if (jobstats_proc_id(p->jobstats.jobid_name, j->name, uid, id,
			     sizeof(id)) <= 0)
		return 0;
	/* their statistics windows (run +- grace) and j's meet */
	r = same_program_around(db, j, start - 2 * grace, j->end_at + 2 * grace,
				err);
	if (r < 0)
		return -1;
	if (r > 0) {
		st->unmatched_ambiguous++;
		return 0;
	}
	if (jobstats_name_sums(db, id, start, j->end_at + grace, js, err) < 0)
		return -1;
	if (!js->rows)
		return 0;
	st->by_program++;
	return 1;
}

/* The best summary there is now for j: 1 stored, 0 no statistics. */
static int summarise(struct db *db, const struct policy *p,
		     const struct history_job *j, int64_t now,
		     struct history_run_stats *st, fwd_error_t *err)
{
	int64_t grace = (int64_t)p->jobstats.grace;
	int64_t start = j->has_start ? j->start_at : j->end_at;
	struct job_io_totals t = {0};
	struct jobstats_sums js;
	enum job_io_source src;

	t.runtime = j->end_at > start ? (double)(j->end_at - start) : 0;
	t.io_nodes = j->node_count;
	t.io_mode = FWD_IO_NONE;
	t.forwarders_held = (uint32_t)j->n_held;
	if (history_job_forwarding(db, j->job_id, j->n_held,
				   &t.forwarders_private, &t.direct, err) < 0)
		return -1;
	if (jobstats_job_sums(db, j->job_id, start - grace, j->end_at + grace,
			      &js, err) < 0)
		return -1;
	if (!js.rows && by_program(db, p, j, start, &js, st, err) < 0)
		return -1;
	if (js.rows) {
		t.read_bytes = js.read_bytes;
		t.write_bytes = js.write_bytes;
		t.read_ops = js.read_ops;
		t.write_ops = js.write_ops;
		t.md_ops = js.md_ops;
		src = JOB_IO_JOBSTATS;
	} else {
		struct fwd_samples_sums fs = {0};

		if (j->n_held && fwd_samples_sums(db, j->held, j->n_held, start,
						  j->end_at, &fs, err) < 0)
			return -1;
		if (!fs.samples)
			return 0;
		t.read_bytes = fs.read_bytes;
		t.write_bytes = fs.write_bytes;
		t.read_ops = fs.read_ops;
		t.write_ops = fs.write_ops;
		t.md_ops = fs.md_ops;
		src = JOB_IO_FORWARDERS;
	}
	if (job_io_store_totals(db, j->job_id, src, &t, now, err) < 0)
		return -1;
	/* counted once stored: a refused summary is a skipped job */
	if (src == JOB_IO_JOBSTATS)
		st->from_jobstats++;
	else
		st->from_forwarders++;
	return 1;
}

/* The jobs found without statistics, and when (history_examined). */
struct examined {
	uint64_t job_id;
	int64_t at;
};

static int load_examined(struct db *db, int64_t since, struct examined **v,
			 size_t *n, fwd_error_t *err)
{
	struct db_stmt *st =
		db_prepare(db,
			   "SELECT job_id, examined_at FROM history_examined"
			   " WHERE examined_at >= ? ORDER BY job_id",
			   err);
	size_t cap = 0;
	int r;

	*v = NULL;
	*n = 0;
	if (!st)
		return -1;
	db_bind_int64(st, 0, since);
	if (db_exec(st, err) < 0) {
		db_stmt_close(st);
		return -1;
	}
	while ((r = db_fetch(st, err)) > 0) {
		if (FWD_GROW(*v, cap, *n + 1, 64) < 0) {
			errprintf(err, "out of memory");
			r = -1;
			break;
		}
		(*v)[*n].job_id = db_col_uint64(st, 0);
		(*v)[*n].at = db_col_int64(st, 1);
		(*n)++;
	}
	db_stmt_close(st);
	return r < 0 ? -1 : 0;
}

static int cmp_examined(const void *a, const void *b)
{
	uint64_t x = ((const struct examined *)a)->job_id;
	uint64_t y = ((const struct examined *)b)->job_id;

	return x < y ? -1 : x > y;
}

/* When j was last found without statistics, 0 never. */
static int64_t examined_at(const struct examined *v, size_t n, uint64_t job)
{
	struct examined key = {.job_id = job};
	const struct examined *e =
		n ? bsearch(&key, v, n, sizeof(*v), cmp_examined) : NULL;

	return e ? e->at : 0;
}

/* Did statistics of j's run arrive since the last run? */
static bool arrived_for(const struct ingest_arrivals *a,
			const struct history_job *j, int64_t start,
			int64_t grace)
{
	if (a->has_jobstats && a->jobstats_from <= j->end_at + grace &&
	    a->jobstats_to >= start - grace)
		return true;
	return a->has_samples && a->samples_from <= j->end_at &&
	       a->samples_to > start;
}

/*
 * j could not be processed: 0 when the run goes on without it (counted in
 * st->skipped with why, err cleared), -1 when the run must end (the
 * database is unavailable: every other job would fail the same way).
 */
static int skip_job(const struct history_job *j, struct history_run_stats *st,
		    fwd_error_t *err)
{
	if (db_err_unavailable(errno) || errno == ENOMEM)
		return -1;
	profile_skips_add(&st->skipped, j->job_id, err->text);
	memset(err, 0, sizeof(*err));
	return 0;
}

int ctl_history_run(struct db *db, const struct policy *p, int64_t now,
		    struct history_run_stats *st, fwd_error_t *err)
{
	int64_t keep_examined = now - (int64_t)p->history_loop.lookback -
				(int64_t)p->history_loop.late;
	struct ingest_arrivals arr;
	struct examined *ex = NULL;
	size_t n_ex = 0;
	struct history_job *jobs = NULL;
	struct job_io_state *state = NULL;
	uint64_t *ids = NULL;
	char **done = NULL;
	size_t n = 0, n_done = 0;
	int rv = -1, r;

	memset(st, 0, sizeof(*st));
	r = get_lock(db, err);
	if (r <= 0) {
		st->busy = r == 0;
		return r == 0 ? 0 : -1;
	}
	/* statistics that arrived since the last run, and the jobs found
	 * without any before */
	if (ingest_arrivals_take(db, &arr, err) < 0 ||
	    load_examined(db, keep_examined, &ex, &n_ex, err) < 0)
		goto out;
	if (history_jobs_ended(db, (double)(now - p->history_loop.lookback),
			       (double)now + 1, 1, &jobs, &n, err) < 0)
		goto out;
	if (n && (!(ids = calloc(n, sizeof(*ids))) ||
		  !(state = calloc(n, sizeof(*state))))) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = jobs[i].job_id;
	if (n && job_io_status(db, ids, n, state, err) < 0)
		goto out;
	/* first every summary, then the profiles of the keys that changed
	 * (so a key's profile sees all of this run's summaries) */
	for (size_t i = 0; i < n; i++) {
		const struct history_job *j = &jobs[i];
		bool late = j->end_at >= now - (int64_t)p->history_loop.late;

		st->examined++;
		if (state[i].source >= JOB_IO_DARSHAN) {
			st->kept++;
		} else if (state[i].source == JOB_IO_NONE || late) {
			int64_t at = examined_at(ex, n_ex, j->job_id);

			/* found without statistics less than `late` ago and
			 * none of its run arrived since: not again yet */
			if (!late && state[i].source == JOB_IO_NONE && at &&
			    now - at < (int64_t)p->history_loop.late &&
			    !arrived_for(&arr, j,
					 j->has_start ? j->start_at : j->end_at,
					 (int64_t)p->jobstats.grace)) {
				st->no_data++;
				st->not_reexamined++;
				continue;
			}
			r = summarise(db, p, j, now, st, err);
			if (r < 0) {
				state[i].source = JOB_IO_NONE;
				if (skip_job(j, st, err) < 0)
					goto out;
				continue;
			}
			if (r == 0 && state[i].source == JOB_IO_NONE) {
				st->no_data++;
				if (db_execf(db, err,
					     "INSERT INTO history_examined"
					     " (job_id, examined_at) VALUES "
					     "(?, ?)"
					     " ON DUPLICATE KEY UPDATE"
					     " examined_at = "
					     "VALUES(examined_at)",
					     "ui", j->job_id, now) < 0 &&
				    skip_job(j, st, err) < 0)
					goto out;
				continue;
			}
			if ((r > 0 && job_io_status(db, &j->job_id, 1,
						    &state[i], err) < 0) ||
			    (r > 0 && at &&
			     db_execf(db, err,
				      "DELETE FROM history_examined"
				      " WHERE job_id = ?",
				      "u", j->job_id) < 0)) {
				state[i].source = JOB_IO_NONE;
				if (skip_job(j, st, err) < 0)
					goto out;
				continue;
			}
		}
		if (state[i].profiled_at >= state[i].updated_at) {
			st->unchanged++;
			state[i].source = JOB_IO_NONE; /* nothing to refresh */
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (state[i].source == JOB_IO_NONE)
			continue;
		if ((refresh_profile(db, p, &jobs[i], now, &done, &n_done, st,
				     err) < 0 ||
		     job_io_mark_profiled(db, jobs[i].job_id, now, err) < 0) &&
		    skip_job(&jobs[i], st, err) < 0)
			goto out;
	}
	if (db_execf(db, err,
		     "DELETE FROM history_examined WHERE examined_at < ?", "i",
		     keep_examined) < 0)
		goto out;
	rv = 0;
out:
	free(ex);
	release_lock(db);
	for (size_t i = 0; i < n_done; i++)
		free(done[i]);
	free(done);
	free(ids);
	free(state);
	history_jobs_free(jobs, n);
	return rv;
}

int ctl_history_store_darshan(struct db *db, const struct policy *p,
			      const struct darshan_summary *s, int64_t now,
			      fwd_error_t *err)
{
	struct job_io_totals t = {0};
	struct history_job row;
	char **held = NULL;
	size_t n_held = 0;
	int r;

	r = history_job(db, s->job_id, &row, err);
	if (r < 0)
		return -1;
	if (r > 0) {
		int64_t grace = (int64_t)p->jobstats.grace;
		bool outside =
			(row.has_start && s->start < row.start_at - grace) ||
			(row.end_at && s->end > row.end_at + grace);

		t.io_nodes = row.node_count;
		history_job_free(&row);
		if (outside) {
			errno = EINVAL;
			return errprintf(err,
					 "the log's run (%lld to %lld) is not "
					 "that of job %llu in the jobs table "
					 "(a reused job id?)",
					 (long long)s->start, (long long)s->end,
					 (unsigned long long)s->job_id);
		}
	}
	if (ledger_store_job_forwarders(db, s->job_id, &held, &n_held, err) < 0)
		return -1;
	ledger_store_names_free(held, n_held);
	t.read_bytes = s->read_bytes;
	t.write_bytes = s->write_bytes;
	t.read_ops = s->reads;
	t.write_ops = s->writes;
	t.md_ops = s->md_ops;
	t.procs = (uint32_t)s->nprocs;
	t.io_mode = s->io_mode;
	t.runtime = (double)(s->end - s->start + 1);
	t.forwarders_held = (uint32_t)n_held;
	if (history_job_forwarding(db, s->job_id, n_held, &t.forwarders_private,
				   &t.direct, err) < 0)
		return -1;
	return job_io_store_totals(db, s->job_id, JOB_IO_DARSHAN, &t, now, err);
}
