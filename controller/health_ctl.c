/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Health scan and job check over the job history; see
 * controller/health_ctl.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/health_ctl.h"
#include "controller/history.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/profile.h"

/* Past runs whose phases the job check clusters with the job's. */
#define MAX_PAST 50

static int nomem(fwd_error_t *err)
{
	errno = ENOMEM;
	return errprintf(err, "out of memory");
}

static void to_health_job(const struct history_job *h, double end,
			  struct health_job *j)
{
	j->id = h->job_id;
	j->nodes = h->node_count;
	j->start = (double)h->start_at;
	j->end = end;
	j->nodelist = h->nodelist ? h->nodelist : "";
	j->held = (const char *const *)h->held;
	j->n_held = h->n_held;
}

int ctl_health_scan(struct db *db, const struct policy *p,
		    const struct topology *t, const struct health_scan_opts *o,
		    struct health_scan_stats *st, fwd_error_t *err)
{
	struct health_scan_opts opts = *o;
	struct history_job *rows = NULL;
	struct health_job *jobs = NULL;
	size_t n = 0;
	double now = (double)time(NULL), since, end;
	int rv = -1;

	memset(st, 0, sizeof(*st));
	if (health_scan_span(p, o, now, &since, &end, err) < 0)
		return -1;
	/* the scan and the jobs read see the same `until` */
	if (!(opts.until > 0))
		opts.until = now;
	if (since < end &&
	    history_jobs_ended(db, since, end, p->anomaly.peer.min_job_nodes,
			       &rows, &n, err) < 0)
		return -1;
	if (n && !(jobs = calloc(n, sizeof(*jobs)))) {
		nomem(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		to_health_job(&rows[i], (double)rows[i].end_at, &jobs[i]);
	rv = health_db_scan(db, p, t, &opts, jobs, n, st, err);
out:
	free(jobs);
	history_jobs_free(rows, n);
	return rv;
}

static void bucket_range(uint32_t nodes, uint32_t base, uint64_t *lo,
			 uint64_t *hi)
{
	uint64_t b = 1;

	if (base < 2)
		base = 2;
	while (b * base <= nodes)
		b *= base;
	*lo = b;
	*hi = b * base - 1;
}

/* The newest MAX_PAST of ids (newest first) that have phases. */
static int past_runs(struct db *db, const uint64_t *ids, size_t n,
		     struct health_job_past *past, size_t *n_past,
		     struct profile_io *io, fwd_error_t *err)
{
	*n_past = 0;
	/* in chunks, newest first, until MAX_PAST runs have phases */
	for (size_t at = 0; at < n && *n_past < MAX_PAST; at += MAX_PAST) {
		size_t k = n - at < MAX_PAST ? n - at : MAX_PAST;

		if (profile_db_io(db, ids + at, k, io + at, err) < 0)
			return -1;
		for (size_t i = at; i < at + k && *n_past < MAX_PAST; i++) {
			if (!io[i].phases)
				continue;
			past[*n_past].job_id = ids[i];
			past[*n_past].phases = io[i].phases;
			(*n_past)++;
		}
	}
	return 0;
}

int ctl_health_job_check(struct db *db, const struct policy *p,
			 const struct topology *t, uint64_t job_id,
			 struct health_job_report *r, fwd_error_t *err)
{
	struct health_job_input in = {0};
	struct history_job job = {0}, *nbs = NULL;
	struct profile_io self = {0}, *past_io = NULL, *nb_io = NULL;
	struct health_job_past past[MAX_PAST];
	struct health_job_peer *peers = NULL;
	uint64_t *ids = NULL, *nb_ids = NULL, lo, hi;
	size_t n_ids = 0, n_nb = 0;
	double now = (double)time(NULL), start, end;
	int rv = -1, f;

	memset(r, 0, sizeof(*r));
	r->job_id = job_id;
	f = history_job(db, job_id, &job, err);
	if (f < 0)
		return -1;
	if (f == 0) {
		errno = ENOENT;
		return errprintf(err, "job %llu: not in the jobs table",
				 (unsigned long long)job_id);
	}
	start = (double)job.start_at;
	end = job.end_at ? (double)job.end_at : now;
	if (profile_db_io(db, &job_id, 1, &self, err) < 0)
		goto out;
	in.user = job.user;
	in.name = job.name;
	in.phases = self.phases;
	if (self.phases) {
		/* The same application's past runs at the same scale. */
		bucket_range(job.node_count, p->history.bucket_base, &lo, &hi);
		if (history_app_runs(db, job.user, job.name, lo, hi,
				     (int64_t)(start - p->history.max_age),
				     (int64_t)start, job_id, &ids, &n_ids,
				     err) < 0)
			goto out;
		if (n_ids && !(past_io = calloc(n_ids, sizeof(*past_io)))) {
			nomem(err);
			goto out;
		}
		if (past_runs(db, ids, n_ids, past, &in.n_past, past_io, err) <
		    0)
			goto out;
		in.past = past;
		if (ledger_store_job_forwarders(db, job_id, &job.held,
						&job.n_held, err) < 0)
			goto out;
		/* Jobs that ran at the same time. */
		if (history_jobs_overlapping(db, job_id, start, end, now, &nbs,
					     &n_nb, err) < 0)
			goto out;
		if (n_nb && (!(nb_ids = calloc(n_nb, sizeof(*nb_ids))) ||
			     !(nb_io = calloc(n_nb, sizeof(*nb_io))) ||
			     !(peers = calloc(n_nb, sizeof(*peers))))) {
			nomem(err);
			goto out;
		}
		for (size_t i = 0; i < n_nb; i++)
			nb_ids[i] = nbs[i].job_id;
		if (profile_db_io(db, nb_ids, n_nb, nb_io, err) < 0)
			goto out;
		if (history_fill_held(db, nbs, n_nb, err) < 0)
			goto out;
		for (size_t i = 0; i < n_nb; i++) {
			to_health_job(&nbs[i], (double)nbs[i].end_at,
				      &peers[i].job);
			peers[i].io_mode = nb_io[i].io_mode;
			peers[i].mdops_rate = nb_io[i].mdops_rate;
			peers[i].peak_bps = nb_io[i].peak_bandwidth_bps;
		}
		in.peers = peers;
		in.n_peers = n_nb;
	}
	to_health_job(&job, end, &in.job);
	rv = health_job_check(p, t, &in, r, err);
out:
	profile_io_free(&self, 1);
	profile_io_free(past_io, n_ids);
	free(past_io);
	profile_io_free(nb_io, n_nb);
	free(nb_io);
	free(nb_ids);
	free(peers);
	free(ids);
	history_jobs_free(nbs, n_nb);
	history_job_free(&job);
	return rv;
}
