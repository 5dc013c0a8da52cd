/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The simulator's engine: placement, the event loop, bandwidth sharing and
 * interference, the static / dfra / oracle runs and their statistics.
 * The model is documented in sim/SIM.md.
 *
 * Cost: placement keeps a sorted list of free node runs (first fit in
 * O(runs)); during a run each forwarder lists the jobs on it, so an event
 * only recomputes the jobs that share a forwarder with the job starting
 * or ending.  A 100,000-job trace on 40,960 nodes takes hundredths of a
 * second for static and oracle; dfra's seconds are the decisions'.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/array.h"
#include "common/timeutil.h"
#include "policies/policy.h"
#include "sim/sim.h"
#include "sim/sim_internal.h"
#include "topology/topology.h"

enum { EV_END = 0, EV_START = 1 };

struct event {
	double t;
	uint32_t type;
	uint32_t job;
};

struct run {
	uint32_t first, count;
};

/* Policy-independent facts about each job. */
struct jobinfo {
	bool placed;
	size_t run_off, n_runs; /* into sim->runs */
	size_t def_off, n_def;	/* into sim->def_fwd / def_w */
	enum sim_class cls;
	double core_hours;
};

struct sim {
	const struct sim_config *cfg;
	const struct sim_curves *c;
	const struct sim_jobs *j;
	const struct topology *t;
	struct jobinfo *ji;
	struct run *runs;
	size_t n_runs, cap_runs;
	uint32_t *def_fwd;
	double *def_w;
	size_t n_def, cap_def;
	struct event *ev;
	size_t n_ev;
	double t0, t1;
	double cap_total; /* sum of forwarder bandwidths */
	uint32_t pool;	  /* backup forwarders */
	size_t n_bins;
	/* static baseline, per job: integral of dt / bw */
	double *inv_static;
	double *volume; /* bytes per job (SIM.md) */
};

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/* ---- placement -------------------------------------------------------- */

struct freelist {
	struct run *r;
	size_t n, cap;
	size_t total;
};

static int fl_insert(struct freelist *fl, size_t at, struct run x)
{
	if (FWD_GROW(fl->r, fl->cap, fl->n + 1, 64) < 0)
		return -1;
	memmove(&fl->r[at + 1], &fl->r[at], (fl->n - at) * sizeof(x));
	fl->r[at] = x;
	fl->n++;
	return 0;
}

static void fl_remove(struct freelist *fl, size_t at)
{
	memmove(&fl->r[at], &fl->r[at + 1], (fl->n - at - 1) * sizeof(*fl->r));
	fl->n--;
}

/* Give a run back, merging with its neighbours. */
static int fl_free(struct freelist *fl, struct run x)
{
	size_t i = 0;

	while (i < fl->n && fl->r[i].first < x.first)
		i++;
	fl->total += x.count;
	if (i > 0 && fl->r[i - 1].first + fl->r[i - 1].count == x.first) {
		fl->r[i - 1].count += x.count;
		if (i < fl->n &&
		    fl->r[i - 1].first + fl->r[i - 1].count == fl->r[i].first) {
			fl->r[i - 1].count += fl->r[i].count;
			fl_remove(fl, i);
		}
		return 0;
	}
	if (i < fl->n && x.first + x.count == fl->r[i].first) {
		fl->r[i].first = x.first;
		fl->r[i].count += x.count;
		return 0;
	}
	return fl_insert(fl, i, x);
}

static int push_run(struct sim *s, struct run x)
{
	if (FWD_GROW(s->runs, s->cap_runs, s->n_runs + 1, 1024) < 0)
		return -1;
	s->runs[s->n_runs++] = x;
	return 0;
}

/*
 * Contiguous first fit over node ids; when no free run is long enough the
 * job takes the lowest free ids (fragmented); when the machine has too few
 * free nodes the job is not placed.  Returns 1 placed, 0 not, -1 ENOMEM.
 */
static int fl_alloc(struct sim *s, struct freelist *fl, uint32_t n,
		    struct jobinfo *ji)
{
	ji->run_off = s->n_runs;
	ji->n_runs = 0;
	if (fl->total < n)
		return 0;
	for (size_t i = 0; i < fl->n; i++) {
		if (fl->r[i].count < n)
			continue;
		if (push_run(s, (struct run){fl->r[i].first, n}) < 0)
			return -1;
		fl->r[i].first += n;
		fl->r[i].count -= n;
		if (!fl->r[i].count)
			fl_remove(fl, i);
		fl->total -= n;
		ji->n_runs = 1;
		return 1;
	}
	while (n) {
		struct run *r = &fl->r[0];
		uint32_t take = r->count < n ? r->count : n;

		if (push_run(s, (struct run){r->first, take}) < 0)
			return -1;
		r->first += take;
		r->count -= take;
		if (!r->count)
			fl_remove(fl, 0);
		fl->total -= take;
		n -= take;
		ji->n_runs++;
	}
	return 1;
}

/* Room for n more default forwarders in def_fwd / def_w. */
static int reserve_def(struct sim *s, size_t n)
{
	if (s->n_def + n > s->cap_def) {
		size_t ncap = s->cap_def ? s->cap_def * 2 : 1024;
		uint32_t *v;
		double *vw;

		while (ncap < s->n_def + n)
			ncap *= 2;
		v = realloc(s->def_fwd, ncap * sizeof(*v));
		if (!v)
			return -1;
		s->def_fwd = v;
		vw = realloc(s->def_w, ncap * sizeof(*vw));
		if (!vw)
			return -1;
		s->def_w = vw;
		s->cap_def = ncap;
	}
	return 0;
}

/* The job's default forwarders (first appearance order, from the
 * topology) and the share of its nodes each serves.  `count` (zeroed) and
 * `ids` (n_nodes entries) are scratch. */
static int default_mapping(struct sim *s, struct jobinfo *ji, uint32_t nodes,
			   uint32_t *count, uint32_t *ids, fwd_error_t *err)
{
	const struct topology *t = s->t;
	size_t n = 0;

	if (reserve_def(s, t->n_forwarders) < 0)
		return errprintf(err, "simulator: out of memory");
	for (size_t r = 0; r < ji->n_runs; r++) {
		const struct run *x = &s->runs[ji->run_off + r];

		for (uint32_t id = x->first; id < x->first + x->count; id++)
			ids[n++] = id;
	}
	ji->def_off = s->n_def;
	ji->n_def = 0;
	if (topo_default_forwarders(t, ids, n, count, &s->def_fwd[s->n_def],
				    &ji->n_def, err) < 0)
		return errprefix(err, "simulator");
	s->n_def += ji->n_def;
	for (size_t i = 0; i < ji->n_def; i++) {
		uint32_t f = s->def_fwd[ji->def_off + i];

		s->def_w[ji->def_off + i] = (double)count[f] / nodes;
		count[f] = 0;
	}
	return 0;
}

static int prepare(struct sim *s, fwd_error_t *err)
{
	const struct sim_jobs *j = s->j;
	const struct topology *t = s->t;
	struct freelist fl = {0};
	uint32_t *count = NULL, *ids = NULL;
	int rv = -1;

	s->ji = calloc(j->n ? j->n : 1, sizeof(*s->ji));
	s->ev = malloc(2 * (j->n ? j->n : 1) * sizeof(*s->ev));
	count = calloc(t->n_forwarders, sizeof(*count));
	ids = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*ids));
	if (!s->ji || !s->ev || !count || !ids)
		goto nomem;
	for (size_t i = 0; i < j->n; i++) {
		const struct sim_job *job = &j->jobs[i];

		if (job->nodes > t->n_nodes) {
			errno = EINVAL;
			errprintf(err,
				  "%s:%zu: job '%s' asks for %u nodes, the "
				  "topology has %zu",
				  j->path, job->line, job->id, job->nodes,
				  t->n_nodes);
			goto out;
		}
		s->ev[2 * i] =
			(struct event){job->start, EV_START, (uint32_t)i};
		s->ev[2 * i + 1] =
			(struct event){job->end, EV_END, (uint32_t)i};
	}
	s->n_ev = 2 * j->n;
	qsort(s->ev, s->n_ev, sizeof(*s->ev), cmp_event);
	if (t->n_nodes && fl_free(&fl, (struct run){0, (uint32_t)t->n_nodes}))
		goto nomem;
	for (size_t e = 0; e < s->n_ev; e++) {
		const struct event *ev = &s->ev[e];
		const struct sim_job *job = &j->jobs[ev->job];
		struct jobinfo *ji = &s->ji[ev->job];

		if (ev->type == EV_END) {
			for (size_t r = 0; ji->placed && r < ji->n_runs; r++)
				if (fl_free(&fl, s->runs[ji->run_off + r]))
					goto nomem;
			continue;
		}
		int p = fl_alloc(s, &fl, job->nodes, ji);

		if (p < 0)
			goto nomem;
		if (!p)
			continue;
		ji->placed = true;
		if (default_mapping(s, ji, job->nodes, count, ids, err) < 0)
			goto out;
		ji->cls = sim_classify(s->cfg->base, &s->c->apps[job->app],
				       job->nodes);
		ji->core_hours =
			(double)job->nodes * (job->end - job->start) / 3600.0 *
			(s->cfg->cores_per_node > 0 ? s->cfg->cores_per_node
						    : 1.0);
	}
	/* events of jobs that could not be placed are dropped */
	size_t k = 0;
	for (size_t e = 0; e < s->n_ev; e++)
		if (s->ji[s->ev[e].job].placed)
			s->ev[k++] = s->ev[e];
	s->n_ev = k;
	s->t0 = k ? s->ev[0].t : 0;
	s->t1 = k ? s->ev[k - 1].t : 0;
	for (size_t f = 0; f < t->n_forwarders; f++) {
		s->cap_total += t->forwarders[f].bandwidth_bps;
		if (t->forwarders[f].role == TOPO_ROLE_BACKUP)
			s->pool++;
	}
	rv = 0;
	goto out;
nomem:
	errprintf(err, "simulator: out of memory");
out:
	free(fl.r);
	free(count);
	free(ids);
	return rv;
}

/* ---- shared run state ------------------------------------------------- */

struct holder {
	uint32_t job;
	double w;
};

struct fwd_state {
	struct holder *h;
	size_t n, cap;
	double demand;	/* load: sum of d_j * w_jf / s_jf (1 = busy) */
	double carried; /* sum of b_j * w_jf */
	uint32_t n_class[SIM_N_CLASSES];
};

struct job_state {
	uint32_t *fwd;
	double *w;
	size_t n_fwd;
	bool own;    /* fwd/w malloc'd (not the default) */
	bool direct; /* direct file-system access: no forwarder */
	bool priv;   /* every forwarder its own (dfra's grant) */
	double demand;
	double sat; /* the app's per-forwarder rate, sim_curve_sat() */
	double bw;
	double last;
	double inv; /* integral of dt / bw */
	uint32_t stamp;
};

struct runner {
	struct sim *s;
	const struct sim_policy *pol;
	struct sim_policy_result *res;
	struct fwd_state *fs;
	struct job_state *js;
	uint32_t *touched; /* jobs to recompute */
	size_t n_touched;
	uint32_t stamp;
	double now;
	double agg;	/* sum of b_j */
	size_t held;	/* forwarders with a holder */
	double carried; /* sum over forwarders */
	/* integrals */
	double agg_int, util_int, held_int;
	double *bin_util, *bin_held;
};

static void advance(struct runner *r, double t)
{
	struct sim *s = r->s;
	double dt = t - r->now;
	double util = s->cap_total > 0 ? r->carried / s->cap_total : 0;
	double held = s->t->n_forwarders
			      ? (double)r->held / (double)s->t->n_forwarders
			      : 0;
	double span = s->t1 - s->t0;

	if (util > 1)
		util = 1;
	if (util < 0)
		util = 0;
	if (dt <= 0)
		return;
	r->agg_int += r->agg * dt;
	r->util_int += util * dt;
	r->held_int += held * dt;
	if (r->agg > r->res->agg_bw_peak)
		r->res->agg_bw_peak = r->agg;
	if (span > 0) {
		double width = span / (double)s->n_bins;
		double a = r->now;

		while (a < t) {
			size_t b = (size_t)((a - s->t0) / width);
			double bend;

			if (b >= s->n_bins)
				b = s->n_bins - 1;
			bend = s->t0 + (double)(b + 1) * width;
			if (bend > t || b == s->n_bins - 1)
				bend = t;
			if (bend <= a) /* rounding at a bin edge */
				bend = t;
			r->bin_util[b] += util * (bend - a);
			r->bin_held[b] += held * (bend - a);
			a = bend;
		}
	}
	r->now = t;
}

static int fs_add(struct fwd_state *f, uint32_t job, double w)
{
	if (FWD_GROW(f->h, f->cap, f->n + 1, 8) < 0)
		return -1;
	f->h[f->n++] = (struct holder){job, w};
	return 0;
}

static void fs_del(struct fwd_state *f, uint32_t job)
{
	for (size_t i = 0; i < f->n; i++) {
		if (f->h[i].job == job) {
			f->h[i] = f->h[--f->n];
			return;
		}
	}
}

static void touch(struct runner *r, uint32_t job)
{
	if (r->js[job].stamp == r->stamp)
		return;
	r->js[job].stamp = r->stamp;
	r->touched[r->n_touched++] = job;
}

static void touch_forwarders(struct runner *r, const struct job_state *j)
{
	for (size_t i = 0; i < j->n_fwd; i++) {
		const struct fwd_state *f = &r->fs[j->fwd[i]];

		for (size_t k = 0; k < f->n; k++)
			touch(r, f->h[k].job);
	}
}

/* Set a job's bandwidth from now on. */
static void set_bw(struct runner *r, uint32_t job, double bw)
{
	struct job_state *j = &r->js[job];

	if (bw == j->bw)
		return;
	if (j->bw > 0)
		j->inv += (r->now - j->last) / j->bw;
	else if (r->now > j->last) /* no bandwidth for a while: no end */
		j->inv = INFINITY;
	j->last = r->now;
	r->agg += bw - j->bw;
	for (size_t i = 0; i < j->n_fwd; i++) {
		r->fs[j->fwd[i]].carried += (bw - j->bw) * j->w[i];
		r->carried += (bw - j->bw) * j->w[i];
	}
	j->bw = bw;
}

/* The rate at which forwarder f serves a job whose app reaches `sat` per
 * forwarder at best: min(B_f, sat) (SIM.md "Bandwidth"). */
static double fwd_rate(const struct topology *t, uint32_t f, double sat)
{
	double bf = t->forwarders[f].bandwidth_bps;

	return sat > 0 && sat < bf ? sat : bf;
}

/* Bandwidth sharing and interference (SIM.md "Bandwidth"): the job gets
 * d_j times the worst, over its forwarders, of its share of the
 * forwarder's time there divided by the interference slowdown there. */
static double job_bw(const struct runner *r, uint32_t job)
{
	const struct sim *s = r->s;
	const struct job_state *j = &r->js[job];
	enum sim_class cls = s->ji[job].cls;
	double factor = 1;

	for (size_t i = 0; i < j->n_fwd; i++) {
		const struct fwd_state *f = &r->fs[j->fwd[i]];
		double share = f->demand > 1 ? 1 / f->demand : 1;
		double slow = 1;

		for (int c = 0; c < SIM_N_CLASSES; c++) {
			uint32_t n = f->n_class[c] - (c == (int)cls);

			if (n && s->c->slowdown[cls][c] > slow)
				slow = s->c->slowdown[cls][c];
		}
		if (share / slow < factor)
			factor = share / slow;
	}
	return j->demand * factor;
}

static void recompute(struct runner *r)
{
	for (size_t i = 0; i < r->n_touched; i++) {
		uint32_t job = r->touched[i];

		if (r->js[job].n_fwd || r->js[job].direct)
			set_bw(r, job, job_bw(r, job));
	}
	r->n_touched = 0;
	r->stamp++;
	if (r->stamp == 0) { /* wrapped: clear the marks */
		for (size_t i = 0; i < r->s->j->n; i++)
			r->js[i].stamp = 0;
		r->stamp = 1;
	}
}

static int attach(struct runner *r, uint32_t job)
{
	struct job_state *j = &r->js[job];
	enum sim_class cls = r->s->ji[job].cls;

	const struct sim_app *a = &r->s->c->apps[r->s->j->jobs[job].app];

	j->demand = sim_curve_bw(a, (uint32_t)j->n_fwd);
	j->sat = sim_curve_sat(a);
	j->bw = 0;
	j->last = r->now;
	if (j->direct) /* on no forwarder: its k = 0 point, unshared */
		touch(r, job);
	for (size_t i = 0; i < j->n_fwd; i++) {
		struct fwd_state *f = &r->fs[j->fwd[i]];

		if (fs_add(f, job, j->w[i]) < 0)
			return -1;
		if (f->n == 1)
			r->held++;
		f->demand += j->demand * j->w[i] /
			     fwd_rate(r->s->t, j->fwd[i], j->sat);
		f->n_class[cls]++;
	}
	touch_forwarders(r, j);
	return 0;
}

static void detach(struct runner *r, uint32_t job)
{
	struct job_state *j = &r->js[job];
	enum sim_class cls = r->s->ji[job].cls;

	set_bw(r, job, 0);
	for (size_t i = 0; i < j->n_fwd; i++) {
		struct fwd_state *f = &r->fs[j->fwd[i]];

		fs_del(f, job);
		if (f->n == 0) {
			r->held--;
			f->demand = 0; /* no drift left behind */
			f->carried = 0;
		} else {
			f->demand -= j->demand * j->w[i] /
				     fwd_rate(r->s->t, j->fwd[i], j->sat);
		}
		f->n_class[cls]--;
	}
	touch_forwarders(r, j);
	if (j->own) {
		free(j->fwd);
		free(j->w);
	}
	j->fwd = NULL;
	j->w = NULL;
	j->n_fwd = 0;
	j->own = false;
	j->direct = false;
	j->priv = false;
}

static void use_default(struct runner *r, uint32_t job)
{
	const struct jobinfo *ji = &r->s->ji[job];
	struct job_state *j = &r->js[job];

	j->fwd = &r->s->def_fwd[ji->def_off];
	j->w = &r->s->def_w[ji->def_off];
	j->n_fwd = ji->n_def;
	j->own = false;
}

static uint32_t *node_ids(const struct sim *s, uint32_t job)
{
	const struct jobinfo *ji = &s->ji[job];
	uint32_t *ids = malloc(s->j->jobs[job].nodes * sizeof(*ids));
	size_t n = 0;

	if (!ids)
		return NULL;
	for (size_t r = 0; r < ji->n_runs; r++) {
		const struct run *x = &s->runs[ji->run_off + r];

		for (uint32_t id = x->first; id < x->first + x->count; id++)
			ids[n++] = id;
	}
	return ids;
}

static void progress(struct runner *r, size_t done)
{
	const struct sim_config *cfg = r->s->cfg;
	size_t step = r->s->n_ev / 64 ? r->s->n_ev / 64 : 1;

	if (cfg->progress && (done % step == 0 || done == r->s->n_ev))
		cfg->progress(cfg->progress_arg, r->res->name, done,
			      r->s->n_ev);
}

/* A placement callback's choice, nodes spread evenly. */
static int place(struct runner *r, uint32_t job, fwd_error_t *err)
{
	const struct jobinfo *ji = &r->s->ji[job];
	struct job_state *j = &r->js[job];
	size_t nf = r->s->t->n_forwarders, n = 0;

	j->fwd = malloc((nf ? nf : 1) * sizeof(*j->fwd));
	j->w = malloc((nf ? nf : 1) * sizeof(*j->w));
	j->own = true;
	if (!j->fwd || !j->w)
		return errprintf(err, "simulator: out of memory");
	if (r->pol->place(r->pol->place_arg, job, &r->s->def_fwd[ji->def_off],
			  ji->n_def, j->fwd, &n) < 0)
		return errprintf(err, "policy '%s': placement failed",
				 r->pol->name);
	for (size_t i = 0; i < n; i++)
		j->w[i] = 1.0 / (double)n;
	j->n_fwd = n > nf ? nf : n;
	j->direct = !n;
	r->res->jobs[job].upgraded = true;
	return 0;
}

/*
 * Bez et al.'s STATIC (IPDPS'21): a job of C_a nodes gets ceil(C_a / R)
 * forwarders of its own, R = the topology's compute nodes per forwarder.
 * Its own default forwarders first, then idle backups, never one another
 * job holds (the oracle's resources, so its bound holds); none free: its
 * default mapping, shared.  Nodes spread evenly.
 */
static int place_bez(struct runner *r, uint32_t job, fwd_error_t *err)
{
	const struct sim *s = r->s;
	const struct topology *t = s->t;
	const struct jobinfo *ji = &s->ji[job];
	struct job_state *j = &r->js[job];
	double ratio = t->n_forwarders
			       ? (double)t->n_nodes / (double)t->n_forwarders
			       : 1;
	size_t want = (size_t)ceil(s->j->jobs[job].nodes / ratio), n = 0;

	if (!want)
		want = 1;
	j->fwd = malloc(want * sizeof(*j->fwd));
	j->w = malloc(want * sizeof(*j->w));
	j->own = true;
	if (!j->fwd || !j->w)
		return errprintf(err, "simulator: out of memory");
	for (size_t i = 0; i < ji->n_def && n < want; i++) {
		uint32_t f = s->def_fwd[ji->def_off + i];

		if (!r->fs[f].n)
			j->fwd[n++] = f;
	}
	for (size_t f = 0; f < t->n_forwarders && n < want; f++) {
		bool dup = false;

		if (t->forwarders[f].role != TOPO_ROLE_BACKUP || r->fs[f].n)
			continue;
		for (size_t i = 0; i < n; i++)
			dup |= j->fwd[i] == f;
		if (!dup)
			j->fwd[n++] = (uint32_t)f;
	}
	if (!n) {
		free(j->fwd);
		free(j->w);
		use_default(r, job);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		j->w[i] = 1.0 / (double)n;
	j->n_fwd = n;
	j->priv = true;
	return 0;
}

/* ---- exact -------------------------------------------------------------- */

enum { EX_FIXED = 0, EX_DEFAULT, EX_EXTRAS, EX_PRIVATE, EX_DIRECT };

/* Exact search nodes, and cells of its state bound's knapsacks, per batch
 * before it gives up (the figure is then the best found and the run counts
 * the batch as unproven).  The cells bound the time a large batch takes:
 * bench_forge's hardest set of 16 needs 6.1e7 of them. */
#define EXACT_MAX_NODES 20000000ULL
#define EXACT_MAX_CELLS 1000000000ULL

struct exact_build {
	struct sim_exact x;
	size_t cap_items, cap_opts, cap_sh, cap_sh_load, n_sh;
	uint32_t *sh_of;  /* forwarder -> shared index + 1, 0: not shared */
	uint32_t *shared; /* shared index -> forwarder */
};

static struct sim_exact_opt *ex_opt(struct exact_build *b, int tag, uint32_t k,
				    uint32_t take, double d, double phi)
{
	struct sim_exact_opt *o;

	if (FWD_GROW(b->x.opts, b->cap_opts, b->x.n_opts + 1, 64) < 0)
		return NULL;
	o = &b->x.opts[b->x.n_opts++];
	*o = (struct sim_exact_opt){.take = take,
				    .d = d,
				    .phi = phi,
				    .sh_off = b->n_sh,
				    .tag = tag,
				    .k = k};
	b->x.items[b->x.n_items - 1].n_opt++;
	return o;
}

static int ex_share(struct exact_build *b, struct sim_exact_opt *o, uint32_t f,
		    double load)
{
	if (FWD_GROW(b->x.sh_idx, b->cap_sh, b->n_sh + 1, 64) < 0)
		return -1;
	if (b->cap_sh > b->cap_sh_load) {
		double *l = realloc(b->x.sh_load, b->cap_sh * sizeof(*l));

		if (!l)
			return -1;
		b->x.sh_load = l;
		b->cap_sh_load = b->cap_sh;
	}
	b->x.sh_idx[b->n_sh] = b->sh_of[f] - 1;
	b->x.sh_load[b->n_sh++] = load;
	o->n_sh++;
	return 0;
}

static int ex_item(struct exact_build *b, enum sim_class cls)
{
	if (FWD_GROW(b->x.items, b->cap_items, b->x.n_items + 1, 32) < 0)
		return -1;
	b->x.items[b->x.n_items++] = (struct sim_exact_item){
		.cls = cls, .opt_off = b->x.n_opts, .n_opt = 0};
	return 0;
}

static void ex_free(struct exact_build *b)
{
	free(b->x.items);
	free(b->x.opts);
	free(b->x.sh_idx);
	free(b->x.sh_load);
	free(b->x.pick);
	free(b->sh_of);
	free(b->shared);
}

/* A running job on the batch's default forwarders: one option, its
 * mapping as it is (its other forwarders bound it by phi). */
static int ex_running(struct exact_build *b, struct runner *r, uint32_t job)
{
	const struct job_state *j = &r->js[job];
	enum sim_class cls = r->s->ji[job].cls;
	struct sim_exact_opt *o;
	double phi = 1;

	for (size_t i = 0; i < j->n_fwd; i++) {
		const struct fwd_state *f = &r->fs[j->fwd[i]];
		double share = f->demand > 1 ? 1 / f->demand : 1, slow = 1;

		if (b->sh_of[j->fwd[i]])
			continue;
		for (int c = 0; c < SIM_N_CLASSES; c++) {
			uint32_t n = f->n_class[c] - (c == (int)cls);

			if (n && r->s->c->slowdown[cls][c] > slow)
				slow = r->s->c->slowdown[cls][c];
		}
		if (share / slow < phi)
			phi = share / slow;
	}
	if (ex_item(b, cls) < 0 ||
	    !(o = ex_opt(b, EX_FIXED, (uint32_t)j->n_fwd, 0, j->demand, phi)))
		return -1;
	for (size_t i = 0; i < j->n_fwd; i++)
		if (b->sh_of[j->fwd[i]] &&
		    ex_share(b, o, j->fwd[i],
			     j->demand * j->w[i] /
				     fwd_rate(r->s->t, j->fwd[i], j->sat)) < 0)
			return -1;
	return 0;
}

/* A starting job's options: its default mapping, its defaults plus e
 * extras (nodes spread evenly over the k = N_f + e), k private pool
 * forwarders, direct access; up to k = kcap forwarders in all and `share`
 * pool forwarders (the policy's caps). */
static int ex_starting(struct exact_build *b, struct runner *r, uint32_t job,
		       uint32_t kcap, uint32_t share, double prate, bool direct)
{
	const struct sim *s = r->s;
	const struct jobinfo *ji = &s->ji[job];
	const struct sim_app *a = &s->c->apps[s->j->jobs[job].app];
	double sat = sim_curve_sat(a), best_priv = -1;
	uint32_t nd = (uint32_t)ji->n_def;
	struct sim_exact_opt *o;

	if (ex_item(b, ji->cls) < 0)
		return -1;
	o = ex_opt(b, EX_DEFAULT, nd, 0, sim_curve_bw(a, nd), 1);
	if (!o)
		return -1;
	for (uint32_t i = 0; i < nd; i++) {
		uint32_t f = s->def_fwd[ji->def_off + i];

		if (ex_share(b, o, f,
			     o->d * s->def_w[ji->def_off + i] /
				     fwd_rate(s->t, f, sat)) < 0)
			return -1;
	}
	for (uint32_t k = nd + 1; k <= kcap && k - nd <= share; k++) {
		double d = sim_curve_bw(a, k);
		double pl = d / k / (sat > 0 && sat < prate ? sat : prate);

		if (!(o = ex_opt(b, EX_EXTRAS, k, k - nd, d,
				 pl > 1 ? 1 / pl : 1)))
			return -1;
		for (uint32_t i = 0; i < nd; i++) {
			uint32_t f = s->def_fwd[ji->def_off + i];

			if (ex_share(b, o, f, d / k / fwd_rate(s->t, f, sat)) <
			    0)
				return -1;
		}
	}
	for (uint32_t k = 1; k <= kcap && k <= share; k++) {
		double d = sim_curve_bw(a, k);
		double pl = d / k / (sat > 0 && sat < prate ? sat : prate);
		double v = d * (pl > 1 ? 1 / pl : 1);

		if (v <= best_priv) /* more forwarders, no more bandwidth */
			continue;
		best_priv = v;
		if (!ex_opt(b, EX_PRIVATE, k, k, v, 1))
			return -1;
	}
	if (direct && a->direct_bps > 0 &&
	    !ex_opt(b, EX_DIRECT, 0, 0, a->direct_bps, 1))
		return -1;
	return 0;
}

/* The jobs of one batch placed as the exact search chose. */
static int exact_batch(struct runner *r, const uint32_t *bjob, size_t nb,
		       fwd_error_t *err)
{
	struct sim *s = r->s;
	const struct topology *t = s->t;
	const struct policy *p = r->pol->policy;
	struct exact_build b = {0};
	uint32_t *pool = NULL, n_pool = 0, usable, share, next = 0;
	double prate = 0;
	bool *seen = calloc(s->j->n + 1, sizeof(*seen));
	int rv = -1;

	b.sh_of = calloc(t->n_forwarders + 1, sizeof(*b.sh_of));
	b.shared = calloc(t->n_forwarders + 1, sizeof(*b.shared));
	pool = calloc(t->n_forwarders + 1, sizeof(*pool));
	if (!b.sh_of || !b.shared || !pool || !seen)
		goto nomem;
	for (size_t i = 0; i < nb; i++) {
		const struct jobinfo *ji = &s->ji[bjob[i]];

		for (size_t k = 0; k < ji->n_def; k++) {
			uint32_t f = s->def_fwd[ji->def_off + k];

			if (!b.sh_of[f]) {
				b.shared[b.x.n_shared] = f;
				b.sh_of[f] = (uint32_t)++b.x.n_shared;
			}
		}
	}
	for (size_t f = 0; f < t->n_forwarders; f++) {
		if (t->forwarders[f].role != TOPO_ROLE_BACKUP || r->fs[f].n ||
		    b.sh_of[f])
			continue;
		pool[n_pool++] = (uint32_t)f;
		if (t->forwarders[f].bandwidth_bps > prate)
			prate = t->forwarders[f].bandwidth_bps;
	}
	usable = n_pool;
	share = n_pool;
	if (p) {
		const struct policy_caps *c = &p->decision.caps;

		usable = n_pool > c->reserve ? n_pool - c->reserve : 0;
		share = (uint32_t)floor(c->max_pool_share * (double)n_pool);
	}
	/* the running jobs that hold a forwarder the batch may stay on */
	for (size_t si = 0; si < b.x.n_shared; si++) {
		const struct fwd_state *f = &r->fs[b.shared[si]];

		for (size_t h = 0; h < f->n; h++) {
			uint32_t job = f->h[h].job;

			if (seen[job])
				continue;
			seen[job] = true;
			if (ex_running(&b, r, job) < 0)
				goto nomem;
		}
	}
	for (size_t i = 0; i < nb; i++) {
		uint32_t nodes = s->j->jobs[bjob[i]].nodes, kcap = nodes;

		if (p && kcap > p->decision.caps.max_forwarders_per_job)
			kcap = p->decision.caps.max_forwarders_per_job;
		if (ex_starting(&b, r, bjob[i], kcap,
				share < usable ? share : usable, prate,
				!p || p->decision.curve.direct) < 0)
			goto nomem;
	}
	b.x.pool = usable;
	b.x.slowdown = (const double(*)[SIM_N_CLASSES])s->c->slowdown;
	b.x.max_nodes = EXACT_MAX_NODES;
	b.x.max_cells = EXACT_MAX_CELLS;
	if (!(b.x.pick = calloc(b.x.n_items + 1, sizeof(*b.x.pick))))
		goto nomem;
	if (sim_exact_solve(&b.x) < 0) {
		errprintf(err, "exact: %s", strerror(errno));
		goto out;
	}
	r->res->n_unproven += !b.x.proven;
	for (size_t i = 0; i < nb; i++) {
		const struct sim_exact_item *it =
			&b.x.items[b.x.n_items - nb + i];
		const struct sim_exact_opt *o =
			&b.x.opts[it->opt_off + b.x.pick[b.x.n_items - nb + i]];
		const struct jobinfo *ji = &s->ji[bjob[i]];
		struct job_state *j = &r->js[bjob[i]];
		uint32_t k = o->tag == EX_DIRECT ? 0 : o->k, n = 0;

		r->res->jobs[bjob[i]].upgraded = o->tag != EX_DEFAULT;
		if (o->tag == EX_DEFAULT) {
			use_default(r, bjob[i]);
			continue;
		}
		j->fwd = malloc((k ? k : 1) * sizeof(*j->fwd));
		j->w = malloc((k ? k : 1) * sizeof(*j->w));
		j->own = true;
		if (!j->fwd || !j->w)
			goto nomem;
		if (o->tag == EX_EXTRAS)
			for (; n < ji->n_def; n++)
				j->fwd[n] = s->def_fwd[ji->def_off + n];
		while (n < k && next < n_pool)
			j->fwd[n++] = pool[next++];
		for (uint32_t x = 0; x < n; x++)
			j->w[x] = 1.0 / (double)n;
		j->n_fwd = n;
		j->direct = !n;
		j->priv = o->tag == EX_PRIVATE;
	}
	rv = 0;
	goto out;
nomem:
	errprintf(err, "simulator: out of memory");
out:
	ex_free(&b);
	free(pool);
	free(seen);
	return rv;
}

/* Static, dfra and placement callbacks share the loop; `d` is NULL but
 * for dfra. */
static int run_mapped(struct runner *r, struct sim_dfra *d, fwd_error_t *err)
{
	struct sim *s = r->s;
	struct sim_dfra_job *batch = NULL;
	struct sim_grant *grants = NULL;
	uint32_t *bjob = NULL;
	int rv = -1;

	batch = calloc(s->j->n ? s->j->n : 1, sizeof(*batch));
	grants = calloc(s->j->n ? s->j->n : 1, sizeof(*grants));
	bjob = calloc(s->j->n ? s->j->n : 1, sizeof(*bjob));
	if (!batch || !grants || !bjob) {
		errprintf(err, "simulator: out of memory");
		goto out;
	}
	for (size_t e = 0; e < s->n_ev;) {
		double t = s->ev[e].t;
		size_t nb = 0;

		advance(r, t);
		for (;
		     e < s->n_ev && s->ev[e].t == t && s->ev[e].type == EV_END;
		     e++) {
			uint32_t job = s->ev[e].job;
			size_t k = r->js[job].n_fwd;
			bool priv = r->js[job].priv;

			detach(r, job);
			if (d)
				sim_dfra_end(d, s->j->jobs[job].id, t);
			/* what history would hold of the run */
			if (d && r->pol->history && r->js[job].inv > 0 &&
			    isfinite(r->js[job].inv) &&
			    sim_history_record(r->pol->history,
					       s->j->jobs[job].app, (uint32_t)k,
					       priv,
					       (s->j->jobs[job].end -
						s->j->jobs[job].start) /
						       r->js[job].inv) < 0) {
				errprintf(err, "simulator: out of memory");
				goto out;
			}
			progress(r, e + 1);
		}
		for (; e < s->n_ev && s->ev[e].t == t; e++) {
			uint32_t job = s->ev[e].job;

			bjob[nb++] = job;
			progress(r, e + 1);
		}
		if (r->pol->kind == SIM_POLICY_EXACT && nb &&
		    exact_batch(r, bjob, nb, err) < 0)
			goto out;
		if (d && nb) {
			for (size_t i = 0; i < nb; i++) {
				uint32_t job = bjob[i];
				const struct sim_job *sj = &s->j->jobs[job];

				batch[i] = (struct sim_dfra_job){
					.job = sj,
					.app = &s->c->apps[sj->app],
					.app_index = sj->app,
					.volume = s->volume[job],
					.node_ids = node_ids(s, job),
					.n_nodes = sj->nodes,
				};
				if (!batch[i].node_ids) {
					for (size_t k = 0; k < i; k++)
						free((void *)batch[k].node_ids);
					errprintf(err, "out of memory");
					goto out;
				}
			}
			int dr = sim_dfra_start(d, batch, nb, t, grants, err);

			for (size_t i = 0; i < nb; i++)
				free((void *)batch[i].node_ids);
			if (dr < 0)
				goto out;
		}
		for (size_t i = 0; i < nb; i++) {
			uint32_t job = bjob[i];
			struct job_state *j = &r->js[job];
			struct sim_job_result *jr = &r->res->jobs[job];

			if (r->pol->kind == SIM_POLICY_PLACE) {
				if (place(r, job, err) < 0)
					goto out;
			} else if (r->pol->kind == SIM_POLICY_STATIC_BEZ) {
				if (place_bez(r, job, err) < 0)
					goto out;
			} else if (r->pol->kind == SIM_POLICY_EXACT) {
				/* placed by exact_batch() */
			} else if (!d || grants[i].use_default) {
				use_default(r, job);
			} else {
				j->fwd = grants[i].fwd;
				j->w = grants[i].w;
				j->n_fwd = grants[i].n;
				j->own = true;
				j->direct = !grants[i].n;
				j->priv = grants[i].private_all;
			}
			if (d) {
				jr->upgraded = grants[i].upgraded;
				jr->refused = grants[i].refused;
				memset(&grants[i], 0, sizeof(grants[i]));
			}
			jr->n_fwd = (uint32_t)j->n_fwd;
			if (attach(r, job) < 0) {
				errprintf(err, "simulator: out of memory");
				goto out;
			}
		}
		recompute(r);
	}
	rv = 0;
out:
	free(batch);
	free(grants);
	free(bjob);
	return rv;
}

/* ---- oracle ----------------------------------------------------------- */

/* One running job's options in the oracle's relaxation. */
struct oracle_item {
	double ratio; /* gain over direct per unit of forwarder time */
	uint32_t job;
};

static int cmp_item(const void *x, const void *y)
{
	const struct oracle_item *a = x, *b = y;

	if (a->ratio != b->ratio)
		return a->ratio > b->ratio ? -1 : 1;
	return a->job < b->job ? -1 : a->job > b->job;
}

/* s: the rate one forwarder serves the app at, at most. */
static double oracle_rate(const struct sim_app *a, double bmax)
{
	double sat = sim_curve_sat(a);

	return sat > 0 && sat < bmax ? sat : bmax;
}

/* The fewest forwarders (<= u) at which the app reaches `best`. */
static uint32_t oracle_k(const struct sim_app *a, uint32_t u, double best)
{
	for (size_t i = 0; i < a->n_pts && a->pts[i].k <= u; i++)
		if (a->pts[i].bps >= best * (1 - 1e-12))
			return a->pts[i].k;
	return u;
}

/* What a job the oracle does not forward gets: direct access (its k = 0
 * point; when the oracle is given a policy, only where that policy allows
 * direct access), or, for an application with none, its default mapping alone
 * (never 0: an unmeasured direct access is no reason to stop its I/O).
 * *k: the forwarders that takes. */
static double oracle_floor(const struct runner *r, uint32_t job, uint32_t *k)
{
	const struct sim *s = r->s;
	const struct sim_app *a = &s->c->apps[s->j->jobs[job].app];
	const struct policy *p = r->pol->policy;

	*k = 0;
	if (a->direct_bps > 0 && (!p || p->decision.curve.direct))
		return a->direct_bps;
	*k = (uint32_t)s->ji[job].n_def;
	return sim_curve_bw(a, *k);
}

/*
 * The oracle (SIM.md "Oracle"): an upper bound of every policy that uses
 * the running jobs' default forwarders and the idle pool.  U = those
 * forwarders, each counted once, each with one unit of time.  A job
 * forwarded through k <= |U| of them gets at most F = its best curve value
 * with at most |U| forwarders and takes at least b / s of forwarder time
 * for b bytes/s, s = min(max B_f, its per-forwarder rate); a job on
 * direct access gets at most D = its k = 0 point and takes none.  The
 * bound is the optimum of the linear relaxation: jobs sorted by gain over
 * direct per unit of time, (F - D) * s / F, forwarded in that order while
 * the |U| units last (the last one in part), the rest direct.
 * Interference is ignored.  Recomputed at every start and end.
 */
static int run_oracle(struct runner *r, fwd_error_t *err)
{
	struct sim *s = r->s;
	const struct topology *t = s->t;
	size_t n = s->j->n ? s->j->n : 1, n_act = 0, n_u = 0;
	uint32_t *act = calloc(n, sizeof(*act));
	struct oracle_item *it = calloc(n, sizeof(*it));
	double bmax = 0;
	int rv = -1;

	if (!act || !it) {
		errprintf(err, "simulator: out of memory");
		goto out;
	}
	for (size_t f = 0; f < t->n_forwarders; f++)
		if (t->forwarders[f].bandwidth_bps > bmax)
			bmax = t->forwarders[f].bandwidth_bps;
	for (size_t i = 0; i < s->n_ev;) {
		double t_ev = s->ev[i].t, left;
		uint32_t u;
		size_t n_it = 0, extra = 0;

		advance(r, t_ev);
		for (; i < s->n_ev && s->ev[i].t == t_ev; i++) {
			uint32_t job = s->ev[i].job;
			struct job_state *j = &r->js[job];

			progress(r, i + 1);
			if (s->ev[i].type == EV_END) {
				set_bw(r, job, 0);
				for (size_t k = 0; k < j->n_fwd; k++)
					if (--r->fs[j->fwd[k]].n == 0)
						n_u--;
				for (size_t k = 0; k < n_act; k++) {
					if (act[k] == job) {
						act[k] = act[--n_act];
						break;
					}
				}
				j->n_fwd = 0;
				continue;
			}
			use_default(r, job);
			j->last = t_ev;
			for (size_t k = 0; k < j->n_fwd; k++)
				if (r->fs[j->fwd[k]].n++ == 0)
					n_u++;
			act[n_act++] = job;
		}
		u = (uint32_t)(n_u + s->pool);
		left = (double)u;
		for (size_t k = 0; k < n_act; k++) {
			const struct sim_app *a =
				&s->c->apps[s->j->jobs[act[k]].app];
			uint32_t k0;
			double f = sim_curve_best(a, u),
			       d = oracle_floor(r, act[k], &k0);
			double sr = oracle_rate(a, bmax);

			it[n_it++] = (struct oracle_item){
				f > d && f > 0 ? (f - d) * sr / f : -1, act[k]};
		}
		qsort(it, n_it, sizeof(*it), cmp_item);
		r->carried = 0;
		for (size_t k = 0; k < n_it; k++) {
			uint32_t job = it[k].job;
			const struct sim_app *a =
				&s->c->apps[s->j->jobs[job].app];
			struct job_state *j = &r->js[job];
			struct sim_job_result *jr = &r->res->jobs[job];
			uint32_t kb;
			double f = sim_curve_best(a, u),
			       d = oracle_floor(r, job, &kb), b = d;

			if (it[k].ratio > 0 && left > 0) {
				double need = f / oracle_rate(a, bmax);
				double x = need <= left ? 1 : left / need;

				b = x * f + (1 - x) * d;
				left -= x * need;
				r->carried += x * f;
				kb = oracle_k(a, u, f);
				if (kb > j->n_fwd)
					extra += kb - j->n_fwd;
			}
			if (b >
			    sim_curve_bw(a, (uint32_t)j->n_fwd) * (1 + 1e-9))
				jr->upgraded = true;
			if (s->j->jobs[job].start == t_ev)
				jr->n_fwd = kb;
			/* set_bw must not touch the forwarders' carried sums:
			 * the oracle keeps its own */
			size_t nf = j->n_fwd;

			j->n_fwd = 0;
			set_bw(r, job, b);
			j->n_fwd = nf;
		}
		r->held = n_u + (extra < s->pool ? extra : s->pool);
	}
	rv = 0;
out:
	free(act);
	free(it);
	return rv;
}

/* ---- statistics ------------------------------------------------------- */

static int finish(struct runner *r, bool is_static)
{
	struct sim *s = r->s;
	struct sim_policy_result *res = r->res;
	double span = s->t1 - s->t0;
	double *sp = malloc((s->j->n ? s->j->n : 1) * sizeof(*sp));
	size_t n_sp = 0, placed = 0;

	if (!sp)
		return -1;
	for (size_t i = 0; i < s->j->n; i++) {
		const struct sim_job *job = &s->j->jobs[i];
		struct sim_job_result *jr = &res->jobs[i];
		/* never any bandwidth: its I/O never ends */
		double inv = r->js[i].inv > 0 ? r->js[i].inv : INFINITY;

		if (!s->ji[i].placed)
			continue;
		placed++;
		jr->placed = true;
		jr->n_f = (uint32_t)s->ji[i].n_def;
		if (is_static) {
			s->inv_static[i] = inv;
			if (job->io_seconds > 0 &&
			    !(s->c->apps[job->app].volume > 0))
				s->volume[i] = job->io_seconds *
					       (job->end - job->start) / inv;
		}
		if (job->io_seconds > 0)
			jr->io_time = job->io_seconds * inv / s->inv_static[i];
		else
			jr->io_time =
				s->volume[i] * inv / (job->end - job->start);
		jr->bw = (job->end - job->start) / inv;
		jr->speedup =
			is_static
				? 1.0
				: (job->io_seconds > 0
					   ? job->io_seconds
					   : s->volume[i] * s->inv_static[i] /
						     (job->end - job->start)) /
					  jr->io_time;
		res->io_time_total += jr->io_time;
		sp[n_sp++] = jr->speedup;
		if (jr->upgraded) {
			res->n_upgraded++;
			res->upgraded_core_hours += s->ji[i].core_hours;
		}
		res->n_refused += jr->refused;
	}
	if (placed)
		res->upgraded_share = (double)res->n_upgraded / (double)placed;
	if (span > 0) {
		res->agg_bw_mean = r->agg_int / span;
		res->util_mean = r->util_int / span;
		res->held_mean = r->held_int / span;
	}
	if (n_sp) {
		double sum = 0;

		qsort(sp, n_sp, sizeof(*sp), fwd_cmp_double);
		for (size_t i = 0; i < n_sp; i++)
			sum += sp[i];
		res->speedup_mean = sum / (double)n_sp;
		res->speedup_min = sp[0];
		res->speedup_max = sp[n_sp - 1];
		res->speedup_median =
			n_sp % 2 ? sp[n_sp / 2]
				 : (sp[n_sp / 2 - 1] + sp[n_sp / 2]) / 2;
	}
	free(sp);
	res->series = calloc(s->n_bins, sizeof(*res->series));
	if (!res->series)
		return -1;
	res->n_series = span > 0 ? s->n_bins : 0;
	for (size_t b = 0; b < res->n_series; b++) {
		double width = span / (double)s->n_bins;

		res->series[b].t = s->t0 + ((double)b + 0.5) * width;
		res->series[b].util = r->bin_util[b] / width;
		res->series[b].held = r->bin_held[b] / width;
	}
	return 0;
}

static int run_policy(struct sim *s, const struct sim_policy *p,
		      struct sim_policy_result *res, bool baseline,
		      fwd_error_t *err)
{
	struct runner r = {.s = s, .res = res, .stamp = 1, .now = s->t0};
	double t0;
	struct sim_dfra *d = NULL;
	size_t n = s->j->n ? s->j->n : 1;
	int rv = -1;

	t0 = fwd_clock_mono();
	res->kind = p->kind;
	if (!(res->name = strdup(p->name)))
		goto nomem;
	res->jobs = calloc(n, sizeof(*res->jobs));
	r.fs = calloc(s->t->n_forwarders, sizeof(*r.fs));
	r.js = calloc(n, sizeof(*r.js));
	r.touched = calloc(n, sizeof(*r.touched));
	r.bin_util = calloc(s->n_bins, sizeof(double));
	r.bin_held = calloc(s->n_bins, sizeof(double));
	if (!res->jobs || !r.fs || !r.js || !r.touched || !r.bin_util ||
	    !r.bin_held)
		goto nomem;
	r.pol = p;
	switch (p->kind) {
	case SIM_POLICY_STATIC:
	case SIM_POLICY_STATIC_BEZ:
	case SIM_POLICY_EXACT:
		if (run_mapped(&r, NULL, err) < 0)
			goto out;
		break;
	case SIM_POLICY_PLACE:
		if (!p->place) {
			errno = EINVAL;
			errprintf(err, "policy '%s': no placement", p->name);
			goto out;
		}
		if (run_mapped(&r, NULL, err) < 0)
			goto out;
		break;
	case SIM_POLICY_DFRA:
		if (!p->policy) {
			errno = EINVAL;
			errprintf(err, "policy '%s': no policy given", p->name);
			goto out;
		}
		if (!(d = sim_dfra_create(s->t, p->policy, p->history, err))) {
			errprefix(err, "policy '%s'", p->name);
			goto out;
		}
		if (run_mapped(&r, d, err) < 0) {
			errprefix(err, "policy '%s'", p->name);
			goto out;
		}
		break;
	case SIM_POLICY_ORACLE:
		if (run_oracle(&r, err) < 0)
			goto out;
		break;
	}
	advance(&r, s->t1);
	if (finish(&r, baseline) < 0)
		goto nomem;
	res->elapsed_s = fwd_clock_mono() - t0;
	rv = 0;
	goto out;
nomem:
	errprintf(err, "simulator: out of memory");
out:
	sim_dfra_destroy(d);
	for (size_t f = 0; r.fs && f < s->t->n_forwarders; f++)
		free(r.fs[f].h);
	for (size_t i = 0; r.js && i < s->j->n; i++) {
		if (r.js[i].own) {
			free(r.js[i].fwd);
			free(r.js[i].w);
		}
	}
	free(r.fs);
	free(r.js);
	free(r.touched);
	free(r.bin_util);
	free(r.bin_held);
	return rv;
}

static void policy_result_free(struct sim_policy_result *p)
{
	free(p->name);
	free(p->jobs);
	free(p->series);
}

void sim_result_destroy(struct sim_result *r)
{
	int saved = errno;

	if (!r)
		return;
	for (size_t i = 0; i < r->n_pols; i++)
		policy_result_free(&r->pols[i]);
	free(r->pols);
	free(r);
	errno = saved;
}

struct sim_result *sim_run(const struct sim_config *cfg,
			   const struct sim_curves *c, const struct sim_jobs *j,
			   fwd_error_t *err)
{
	struct sim s = {.cfg = cfg, .c = c, .j = j};
	struct sim_result *res = NULL, *rv = NULL;
	struct sim_policy_result base = {0};
	size_t n;

	if (!cfg || !cfg->topo || !cfg->base || !c || !j) {
		errno = EINVAL;
		errprintf(err, "simulator: topology, base policy, curves and "
			       "jobs are required");
		return NULL;
	}
	s.t = cfg->topo;
	n = j->n ? j->n : 1;
	s.n_bins = cfg->max_series ? cfg->max_series : 512;
	s.inv_static = malloc(n * sizeof(*s.inv_static));
	s.volume = malloc(n * sizeof(*s.volume));
	res = calloc(1, sizeof(*res));
	if (!s.inv_static || !s.volume || !res)
		goto nomem;
	res->pols = calloc(cfg->n_policies ? cfg->n_policies : 1,
			   sizeof(*res->pols));
	if (!res->pols)
		goto nomem;
	for (size_t i = 0; i < j->n; i++) {
		s.inv_static[i] = -1;
		s.volume[i] = c->apps[j->jobs[i].app].volume;
	}
	if (prepare(&s, err) < 0)
		goto out;
	res->n_jobs = j->n;
	for (size_t i = 0; i < j->n; i++)
		res->n_placed += s.ji[i].placed;
	res->t0 = s.t0;
	res->t1 = s.t1;
	res->n_forwarders = s.t->n_forwarders;
	res->n_pool = s.pool;
	/* the static baseline first: the others are measured against it */
	{
		struct sim_policy st = {"static", SIM_POLICY_STATIC, NULL, NULL,
					NULL};

		if (run_policy(&s, &st, &base, true, err) < 0)
			goto out;
	}
	for (size_t i = 0; i < cfg->n_policies; i++) {
		if (run_policy(&s, &cfg->policies[i], &res->pols[i], false,
			       err) < 0)
			goto out;
		res->n_pols++;
	}
	rv = res;
	res = NULL;
	goto out;
nomem:
	errprintf(err, "simulator: out of memory");
out:
	policy_result_free(&base);
	sim_result_destroy(res);
	free(s.ji);
	free(s.runs);
	free(s.def_fwd);
	free(s.def_w);
	free(s.ev);
	free(s.inv_static);
	free(s.volume);
	return rv;
}
