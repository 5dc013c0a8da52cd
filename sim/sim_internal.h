/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SIM_SIM_INTERNAL_H
#define FWD_SIM_SIM_INTERNAL_H

/*
 * Between the simulator's engine (sim.c) and its adapter to the production
 * decision code (sim_dfra.c).  Not installed, not for other modules.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

/* One job starting, as the adapter needs it. */
struct sim_dfra_job {
	const struct sim_job *job;
	const struct sim_app *app;
	size_t app_index;
	double volume;		  /* bytes, for the profile's V */
	const uint32_t *node_ids; /* placement, topology node ids */
	size_t n_nodes;
};

/* What the decision gave the job: forwarders with the share of the job's
 * nodes each serves (weights sum to 1), malloc'd arrays. */
struct sim_grant {
	uint32_t *fwd;
	double *w;
	size_t n;
	bool upgraded; /* scale or isolate */
	bool refused;
	bool use_default; /* keep the default mapping (fwd NULL) */
	bool private_all; /* every forwarder held privately (or none) */
	/* n == 0 and !use_default: direct file-system access */
};

struct sim_dfra;

/* NULL with err when the decision engine is unavailable or fails. */
struct sim_dfra *sim_dfra_create(const struct topology *t,
				 const struct policy *p,
				 struct sim_history *history, fwd_error_t *err);
void sim_dfra_destroy(struct sim_dfra *d);

/* Decide for jobs starting together at `now` (one batch, production's
 * alloc_decide_batch) and record them in the ledger.  out[i] answers
 * jobs[i].  0 or -1 with err. */
int sim_dfra_start(struct sim_dfra *d, const struct sim_dfra_job *jobs,
		   size_t n, double now, struct sim_grant *out,
		   fwd_error_t *err);

/* The job ended: release its ledger entry. */
void sim_dfra_end(struct sim_dfra *d, const char *job_id, double now);

/*
 * The exact bound of one batch (sim_exact.c, SIM.md "Exact"): each item
 * takes exactly one of its options; the takes sum to at most `pool`; the
 * sum of the items' values under the simulator's sharing model is
 * maximised by branch and bound.  An item with one option is a job
 * already running: its option is given, its value counts.
 */
struct sim_exact_opt {
	uint32_t take; /* pool forwarders */
	double d;      /* demand when it stays on shared forwarders, else its
			* value */
	double phi;    /* stay: the factor its other forwarders allow, <= 1 */
	uint32_t n_sh; /* shared forwarders it loads (0: a value of its own) */
	size_t sh_off; /* into sh_idx / sh_load */
	int tag;       /* the caller's: what the option is */
	uint32_t k;    /* the caller's: forwarders it holds */
};

struct sim_exact_item {
	enum sim_class cls;
	size_t opt_off, n_opt; /* into opts */
};

struct sim_exact {
	/* in */
	struct sim_exact_item *items;
	size_t n_items;
	struct sim_exact_opt *opts; /* reordered and pruned per item */
	size_t n_opts;
	uint32_t *sh_idx; /* shared forwarder, 0 .. n_shared - 1 */
	double *sh_load;  /* d * w / rate there */
	size_t n_shared;
	uint32_t pool;
	const double (*slowdown)[SIM_N_CLASSES];
	uint64_t max_nodes; /* search nodes before giving up */
	uint64_t max_cells; /* or bound (b)'s knapsack cells (0: any) */
	/* out: pick[i] indexes items[i]'s options (as reordered) */
	size_t *pick;
	double value;
	bool proven; /* false: stopped at max_nodes, value is a lower bound */
	uint64_t nodes;
};

/* 0, or -1 with errno (ENOMEM; EINVAL: an item without options). */
int sim_exact_solve(struct sim_exact *x);

#endif
