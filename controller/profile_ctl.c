/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profiles over the job history; see controller/profile_ctl.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "controller/history.h"
#include "controller/ledger_store.h"
#include "controller/profile_ctl.h"
#include "db/db.h"
#include "monitor/jobstats.h"
#include "policies/policy.h"

/* Jobs whose summaries are made per run of ctl_profile_jobstats(). */
#define MAX_JOBSTATS 100000

void profile_to_alloc(const struct profile *src, struct alloc_profile *dst,
		      struct alloc_bw_point *bw)
{
	memset(dst, 0, sizeof(*dst));
	dst->io_volume_bytes = src->io_volume_bytes;
	dst->io_nodes = src->io_nodes;
	dst->node_bandwidth_bps = src->node_bandwidth_bps;
	dst->peak_bandwidth_bps = src->peak_bandwidth_bps;
	dst->iops = src->iops;
	dst->mdops = src->mdops;
	dst->metadata_queue = src->metadata_queue;
	switch (src->io_mode) {
	case FWD_IO_N_N:
		dst->io_mode = FWD_IO_N_N;
		break;
	case FWD_IO_N_1:
		dst->io_mode = FWD_IO_N_1;
		break;
	case FWD_IO_N_M:
		dst->io_mode = FWD_IO_N_M;
		break;
	case FWD_IO_1_1:
		dst->io_mode = FWD_IO_1_1;
		break;
	default:
		dst->io_mode = FWD_IO_NONE;
		break;
	}
	dst->runs = src->runs;
	dst->runtime = src->runtime;
	/* k = 0 is direct file-system access (no forwarder), the curve's
	 * other end: the allocator keeps it apart. */
	for (size_t i = 0; i < src->n_bw && i < PROFILE_MAX_BW; i++) {
		if (src->bw[i].k == 0) {
			dst->direct_bps = src->bw[i].bps;
			continue;
		}
		bw[dst->n_bw].k = src->bw[i].k;
		bw[dst->n_bw].bps = src->bw[i].bps;
		bw[dst->n_bw].runs = src->bw[i].runs;
		bw[dst->n_bw].spread_bps = src->bw[i].spread_bps;
		dst->n_bw++;
	}
	dst->bw = dst->n_bw ? bw : NULL;
}

int profile_lookup(struct db *db, const struct policy *p,
		   const struct profile_job *job, int64_t now,
		   struct profile_result *res, fwd_error_t *err)
{
	struct profile_jobref *jobs = NULL;
	size_t n = 0;
	int rv;

	memset(res, 0, sizeof(*res));
	if (profile_key(p, job, res->key, sizeof(res->key), err))
		return -1;
	/* At launch: the newest runs only, however many the key has. */
	if (history_key_jobs(db, p, job, now, PROFILE_LAUNCH_RUNS, &jobs, &n,
			     err) < 0)
		return -1;
	rv = profile_lookup_runs(db, p, job, jobs, n, now, res, err);
	free(jobs);
	return rv;
}

int ctl_profile_store_summary(struct db *db, const struct policy *p,
			      const struct history_job *job,
			      const struct trace_summary *s, double runtime,
			      int64_t now, bool *stored, fwd_error_t *err)
{
	struct profile_job pj = {
		job->user,	 job->has_account ? job->account : NULL,
		job->name,	 job->has_partition ? job->partition : NULL,
		job->node_count,
	};
	struct profile_jobref *jobs = NULL;
	char **held = NULL;
	size_t n_held = 0, n = 0;
	bool priv = false, direct = false;
	int rv = -1;

	*stored = false;
	if (ledger_store_job_forwarders(db, job->job_id, &held, &n_held, err) <
	    0)
		return -1;
	ledger_store_names_free(held, n_held);
	if (history_job_forwarding(db, job->job_id, n_held, &priv, &direct,
				   err) < 0)
		return -1;
	if (profile_db_store_summary(db, job->job_id, s, runtime,
				     (uint32_t)n_held, priv, direct, now, err))
		return -1;
	*stored = true;
	if (!job->end_at)
		return 0;
	if (history_key_jobs(db, p, &pj, now, 0, &jobs, &n, err) < 0)
		return -1;
	rv = profile_db_update(db, p, &pj, jobs, n, now, err) < 0 ? -1 : 0;
	free(jobs);
	return rv;
}

int ctl_profile_jobstats(struct db *db, const struct policy *p, int64_t now,
			 uint64_t *made, struct profile_skips *skipped,
			 fwd_error_t *err)
{
	uint64_t *ids = NULL;
	bool *has = NULL;
	struct history_job *jobs = NULL;
	size_t n = 0, k = 0, n_jobs = 0;
	int rv = -1;

	*made = 0;
	/* finished jobs with job_stats rows and no summary */
	if (jobstats_job_ids(db, &ids, &n, err) < 0)
		return -1;
	if (n && !(has = calloc(n, sizeof(*has)))) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	if (profile_db_has_summary(db, ids, n, has, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!has[i])
			ids[k++] = ids[i];
	if (history_jobs_by_id(db, ids, k, true, &jobs, &n_jobs, err) < 0)
		goto out;
	for (size_t i = 0; i < n_jobs && i < MAX_JOBSTATS; i++) {
		const struct history_job *j = &jobs[i];
		struct jobstats_sums sums;
		struct profile_io_totals tot;
		/* GREATEST(COALESCE(end_at - start_at, 0), 0) */
		int64_t rt = j->has_start ? j->end_at - j->start_at : 0;

		if (rt < 0)
			rt = 0;
		int64_t grace = (int64_t)p->jobstats.grace;
		int64_t from = j->has_start ? j->start_at - grace : 0;
		int64_t to = (j->end_at ? j->end_at : now) + grace;

		if (jobstats_job_sums(db, j->job_id, from, to, &sums, err) <
		    0) {
			if (!skipped || db_err_unavailable(errno) ||
			    errno == ENOMEM)
				goto out;
			profile_skips_add(skipped, j->job_id, err->text);
			memset(err, 0, sizeof(*err));
			continue;
		}
		tot.read_bytes = sums.read_bytes;
		tot.write_bytes = sums.write_bytes;
		tot.read_ops = sums.read_ops;
		tot.write_ops = sums.write_ops;
		tot.md_ops = sums.md_ops;
		if (profile_db_store_jobstats(db, j->job_id, j->node_count,
					      (double)rt, &tot, now, err)) {
			/* the database refused this job's summary: go on
			 * with the others */
			if (!skipped || db_err_unavailable(errno) ||
			    errno == ENOMEM)
				goto out;
			profile_skips_add(skipped, j->job_id, err->text);
			memset(err, 0, sizeof(*err));
			continue;
		}
		(*made)++;
	}
	rv = 0;
out:
	free(ids);
	free(has);
	history_jobs_free(jobs, n_jobs);
	return rv;
}

int ctl_profile_rebuild(struct db *db, const struct policy *p, int64_t now,
			struct profile_rebuild_stats *st, fwd_error_t *err)
{
	uint64_t *ids = NULL;
	struct history_job *jobs = NULL;
	struct profile_jobref *refs = NULL;
	size_t n = 0, n_jobs = 0;
	int rv = -1;

	memset(st, 0, sizeof(*st));
	struct profile_skips skipped = {0};

	if (ctl_profile_jobstats(db, p, now, &st->jobstats, &skipped, err))
		return -1;
	/* the finished jobs that have a summary, with their key fields */
	if (profile_db_summary_ids(db, &ids, &n, err) < 0)
		return -1;
	if (history_jobs_by_id(db, ids, n, true, &jobs, &n_jobs, err) < 0)
		goto out;
	if (n_jobs && !(refs = calloc(n_jobs, sizeof(*refs)))) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_jobs; i++) {
		refs[i].job_id = jobs[i].job_id;
		refs[i].end_at = jobs[i].end_at;
		refs[i].job.user = jobs[i].user;
		refs[i].job.account =
			jobs[i].has_account ? jobs[i].account : NULL;
		refs[i].job.name = jobs[i].name;
		refs[i].job.partition =
			jobs[i].has_partition ? jobs[i].partition : NULL;
		refs[i].job.nodes = jobs[i].node_count;
	}
	rv = profile_db_rebuild(db, p, refs, n_jobs, now, st, err);
	if (rv == 0) {
		/* the summaries skipped first, then the profiles */
		struct profile_skips rb = st->skipped;

		st->skipped = skipped;
		for (size_t i = 0; i < rb.n; i++)
			profile_skips_add(&st->skipped, rb.v[i].job_id,
					  rb.v[i].why);
		st->skipped.count += rb.count - rb.n;
	}
out:
	free(refs);
	free(ids);
	history_jobs_free(jobs, n_jobs);
	return rv;
}
