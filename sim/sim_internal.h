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

#endif
