/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The simulator's `dfra` policy: the production decision (alloc_decide /
 * alloc_decide_batch) and ledger, driven with profiles built from the
 * curves file.  Nothing here decides anything itself: what the simulator
 * reports for a policy is what the controller would have done.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "policies/policy.h"
#include "sim/sim_internal.h"
#include "topology/topology.h"

struct sim_dfra {
	const struct topology *t;
	const struct policy *p;
	struct alloc_ctx *cx;
	struct alloc_ledger *l;
	struct sim_history *h; /* NULL: the exact curves */
};

struct sim_dfra *sim_dfra_create(const struct topology *t,
				 const struct policy *p,
				 struct sim_history *history, fwd_error_t *err)
{
	struct sim_dfra *d = calloc(1, sizeof(*d));

	if (!d) {
		errprintf(err, "out of memory");
		return NULL;
	}
	d->t = t;
	d->p = p;
	d->h = history;
	if (!(d->cx = alloc_ctx_create(t, err)))
		goto fail;
	if (!(d->l = alloc_ledger_create(t))) {
		errprintf(err, "ledger: %s", strerror(errno));
		goto fail;
	}
	return d;
fail:
	sim_dfra_destroy(d);
	return NULL;
}

void sim_dfra_destroy(struct sim_dfra *d)
{
	int saved = errno;

	if (!d)
		return;
	alloc_ledger_destroy(d->l);
	alloc_ctx_destroy(d->cx);
	free(d);
	errno = saved;
}

static enum fwd_io_mode io_mode(enum fwd_io_mode m)
{
	switch (m) {
	case FWD_IO_N_N:
		return FWD_IO_N_N;
	case FWD_IO_N_1:
		return FWD_IO_N_1;
	case FWD_IO_N_M:
		return FWD_IO_N_M;
	case FWD_IO_1_1:
		return FWD_IO_1_1;
	default:
		return FWD_IO_NONE;
	}
}

/* The profile production would have read from history (SIM.md "dfra"):
 * the exact curve, or what the simulated history holds (false: nothing
 * yet, no profile). */
static bool make_profile(const struct sim_dfra *d,
			 const struct sim_dfra_job *sj,
			 struct alloc_profile *pr, struct alloc_bw_point *bw)
{
	const struct sim_app *a = sj->app;
	double peak = sim_curve_peak(a), direct = a->direct_bps;
	struct sim_point pts[64];
	size_t n = a->n_pts;

	if (d->h) {
		n = sim_history_curve(d->h, sj->app_index, pts, 64, &direct);
		if (!n)
			return false;
		peak = 0;
		for (size_t i = 0; i < n; i++)
			if (pts[i].bps > peak)
				peak = pts[i].bps;
	}

	memset(pr, 0, sizeof(*pr));
	pr->io_volume_bytes = (uint64_t)sj->volume;
	pr->io_nodes = a->io_mode == FWD_IO_1_1 ? 1 : (uint32_t)sj->n_nodes;
	pr->node_bandwidth_bps = peak / pr->io_nodes;
	pr->peak_bandwidth_bps = peak;
	pr->iops = a->iops;
	pr->mdops = a->mdops;
	pr->io_mode = io_mode(a->io_mode);
	pr->runs = 1;
	pr->direct_bps = direct;
	for (size_t i = 0; i < n; i++) {
		bw[i].k = d->h ? pts[i].k : a->pts[i].k;
		bw[i].bps = d->h ? pts[i].bps : a->pts[i].bps;
		if (d->h)
			bw[i].runs = (uint32_t)sim_history_runs(
				d->h, sj->app_index, bw[i].k);
	}
	pr->bw = bw;
	pr->n_bw = n;
	return true;
}

/* Weights from the decision's node blocks. */
static int grant_from(const struct alloc_decision *d, size_t n_nodes,
		      struct sim_grant *g)
{
	g->fwd = calloc(d->n_forwarders ? d->n_forwarders : 1, sizeof(*g->fwd));
	g->w = calloc(d->n_forwarders ? d->n_forwarders : 1, sizeof(*g->w));
	if (!g->fwd || !g->w)
		return -1;
	g->n = d->n_forwarders;
	for (size_t i = 0; i < d->n_forwarders; i++)
		g->fwd[i] = d->forwarders[i];
	for (size_t b = 0; b < d->n_blocks; b++) {
		for (size_t i = 0; i < d->n_forwarders; i++) {
			if (d->forwarders[i] == d->blocks[b].forwarder) {
				g->w[i] += (double)d->blocks[b].count /
					   (double)n_nodes;
				break;
			}
		}
	}
	return 0;
}

int sim_dfra_start(struct sim_dfra *d, const struct sim_dfra_job *jobs,
		   size_t n, double now, struct sim_grant *out,
		   fwd_error_t *err)
{
	struct alloc_job *aj = calloc(n, sizeof(*aj));
	struct alloc_profile *pr = calloc(n, sizeof(*pr));
	struct alloc_bw_point **bw = calloc(n, sizeof(*bw));
	struct alloc_decision **dec = calloc(n, sizeof(*dec));
	int rv = -1;

	if (!aj || !pr || !bw || !dec) {
		errprintf(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sim_dfra_job *sj = &jobs[i];

		bw[i] = calloc(sj->app->n_pts > 64 ? sj->app->n_pts : 64,
			       sizeof(*bw[i]));
		if (!bw[i]) {
			errprintf(err, "out of memory");
			goto out;
		}
		bool has = make_profile(d, sj, &pr[i], bw[i]);

		aj[i] = (struct alloc_job){
			.job_id = sj->job->id,
			.user = "sim",
			.account = "sim",
			.name = sj->app->name,
			.partition = "sim",
			.nodes = "",
			.node_ids = sj->node_ids,
			.n_nodes = sj->n_nodes,
			.request = FWD_REQ_AUTO,
			.profile = has ? &pr[i] : NULL,
			/* grants come from the blocks */
			.no_render = true,
		};
	}
	if (n == 1) {
		dec[0] =
			alloc_decide(d->cx, d->p, d->l, NULL, &aj[0], now, err);
		if (!dec[0])
			goto out;
	} else if (alloc_decide_batch(d->cx, d->p, d->l, NULL, aj, n, now, dec,
				      err) < 0) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct alloc_decision *x = dec[i];
		struct sim_grant *g = &out[i];

		memset(g, 0, sizeof(*g));
		if (alloc_ledger_acquire(d->l, x, jobs[i].n_nodes, now, err) <
		    0) {
			errprefix(err, "job '%s'", jobs[i].job->id);
			goto out;
		}
		g->upgraded = x->action == FWD_ACT_SCALE ||
			      x->action == FWD_ACT_ISOLATE ||
			      x->action == FWD_ACT_DIRECT;
		g->refused = x->action == FWD_ACT_REFUSED;
		g->private_all = true;
		for (size_t k = 0; k < x->n_forwarders; k++)
			g->private_all &= x->private_fwd[k];
		if (!(x->action == FWD_ACT_SCALE ||
		      x->action == FWD_ACT_ISOLATE ||
		      x->action == FWD_ACT_DIRECT))
			g->private_all = false;
		if (x->action == FWD_ACT_DIRECT) {
			/* no forwarder: fwd NULL, n 0 */
		} else if (x->action == FWD_ACT_SCALE ||
			   x->action == FWD_ACT_ISOLATE ||
			   x->action == FWD_ACT_AVOID_ANOMALY) {
			if (grant_from(x, jobs[i].n_nodes, g) < 0) {
				errprintf(err, "out of memory");
				goto out;
			}
		} else {
			g->use_default = true;
		}
	}
	rv = 0;
out:
	if (rv < 0) {
		for (size_t i = 0; out && i < n; i++) {
			free(out[i].fwd);
			free(out[i].w);
			memset(&out[i], 0, sizeof(out[i]));
		}
	}
	for (size_t i = 0; dec && i < n; i++)
		alloc_decision_destroy(dec[i]);
	for (size_t i = 0; bw && i < n; i++)
		free(bw[i]);
	free(dec);
	free(bw);
	free(pr);
	free(aj);
	return rv;
}

void sim_dfra_end(struct sim_dfra *d, const char *job_id, double now)
{
	alloc_ledger_release(d->l, job_id, now);
}
