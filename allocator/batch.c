/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batch arbitration (DESIGN.md "The decision" step 7): several jobs
 * starting together compete for the idle pool.  Each is decided alone
 * first, for its expected gain; the upgrades are then granted in rank
 * order against a scratch ledger, and a job that got less than it would
 * alone says why.  The rules themselves are decide.c's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "common/units.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* Forwarders the decision takes from the pool (none for shadow). */
static size_t pool_taken(const struct alloc_decision *d)
{
	size_t n = 0;

	if (d->action == FWD_ACT_SHADOW)
		return 0;
	for (size_t i = 0; i < d->n_forwarders; i++)
		n += d->private_fwd[i];
	return n;
}

/* Rank order: larger expected gain first, ties in input order (a stable
 * insertion sort); input order for fcfs. */
static void rank(const struct policy *p, struct alloc_decision *const *alone,
		 size_t *order, size_t n_jobs)
{
	for (size_t i = 0; i < n_jobs; i++)
		order[i] = i;
	if (p->decision.contention != POLICY_CONTENTION_GAIN)
		return;
	for (size_t i = 1; i < n_jobs; i++) {
		size_t v = order[i], j = i;

		while (j > 0 &&
		       alone[order[j - 1]]->gain_bps < alone[v]->gain_bps) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
}

int alloc_decide_batch(const struct alloc_ctx *cx, const struct policy *p,
		       const struct alloc_ledger *ledger,
		       const struct alloc_health *health,
		       const struct alloc_job *jobs, size_t n_jobs, double now,
		       struct alloc_decision **out, fwd_error_t *err)
{
	struct alloc_decision **alone = NULL;
	struct alloc_ledger *scratch = NULL;
	size_t *order = NULL, base = 0;
	int rv = -1;

	for (size_t i = 0; i < n_jobs; i++)
		out[i] = NULL;
	alone = calloc(n_jobs + 1, sizeof(*alone));
	order = malloc((n_jobs + 1) * sizeof(*order));
	scratch = ledger ? alloc_ledger_clone(ledger)
			 : alloc_ledger_create(cx->t);
	if (!alone || !order || !scratch) {
		errno = ENOMEM;
		errprintf(err, "batch: out of memory");
		goto out;
	}
	/* The pool at batch start: the share cap of every grant. */
	for (size_t f = 0; f < cx->t->n_forwarders; f++)
		base += alloc_fwd_idle(cx->t, scratch, health, (uint32_t)f);
	for (size_t i = 0; i < n_jobs; i++) {
		alone[i] = alloc_decide_base(cx, p, scratch, health, &jobs[i],
					     SIZE_MAX, err);
		if (!alone[i]) {
			errprefix(err, "job %zu", i);
			goto out;
		}
	}
	rank(p, alone, order, n_jobs);
	for (size_t r = 0; r < n_jobs; r++) {
		size_t i = order[r];
		struct alloc_decision *d;
		char g[32];

		d = alloc_decide_base(cx, p, scratch, health, &jobs[i], base,
				      err);
		if (!d) {
			errprefix(err, "job %s", jobs[i].job_id);
			goto out;
		}
		out[i] = d;
		if (pool_taken(d) < pool_taken(alone[i]) &&
		    alloc_reason(
			    d,
			    "pool contention: ranked %zu of %zu (%s, "
			    "expected gain %s); alone it would get %zu "
			    "pool forwarder%s, got %zu",
			    r + 1, n_jobs,
			    p->decision.contention == POLICY_CONTENTION_GAIN
				    ? "by expected gain"
				    : "first come, first served",
			    units_short_rate(alone[i]->gain_bps, g, sizeof(g)),
			    pool_taken(alone[i]),
			    alloc_plural(pool_taken(alone[i])),
			    pool_taken(d)) < 0) {
			errno = ENOMEM;
			errprintf(err, "batch: out of memory");
			goto out;
		}
		if (alloc_ledger_acquire(scratch, d, jobs[i].n_nodes, now,
					 err) < 0)
			goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		for (size_t i = 0; i < n_jobs; i++) {
			alloc_decision_destroy(out[i]);
			out[i] = NULL;
		}
	for (size_t i = 0; alone && i < n_jobs; i++)
		alloc_decision_destroy(alone[i]);
	free(alone);
	free(order);
	alloc_ledger_destroy(scratch);
	return rv;
}
