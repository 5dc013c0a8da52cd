/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pool (DESIGN.md "The decision" step 6, selection): the idle
 * forwarders in the order they are handed out to a job.  Groups serving
 * most of the job's nodes come first (then group name), then the least
 * recently released (ledger), then the name: deterministic, and near the
 * job's nodes.
 */
#include "config.h"

#include <string.h>

#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "topology/topology.h"

struct order {
	const struct alloc_ctx *cx;
	const uint64_t *gweight; /* per group: job nodes served by default */
	const double *released;	 /* per forwarder: last release (ledger) */
};

static int pool_cmp(const struct order *o, uint32_t x, uint32_t y)
{
	uint32_t gx = o->cx->group[x], gy = o->cx->group[y];
	double rx = o->released[x], ry = o->released[y];
	int c;

	if (o->gweight[gx] != o->gweight[gy])
		return o->gweight[gx] > o->gweight[gy] ? -1 : 1;
	if (gx != gy) {
		c = strcmp(o->cx->group_names[gx], o->cx->group_names[gy]);
		if (c)
			return c;
	}
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(o->cx->t->forwarders[x].name,
		      o->cx->t->forwarders[y].name);
}

void alloc_pool_fill(struct alloc_pool *pl, const struct alloc_ctx *cx,
		     const struct alloc_ledger *l, const struct alloc_health *h,
		     const uint64_t *gweight)
{
	const struct order o = {cx, gweight, pl->released};
	const struct topology *t = cx->t;

	pl->n = pl->next = 0;
	for (size_t f = 0; f < t->n_forwarders; f++) {
		if (!alloc_fwd_idle(t, l, h, (uint32_t)f))
			continue;
		pl->fwd[pl->n++] = (uint32_t)f;
		/* Read once: the sort compares it O(n^2) times. */
		pl->released[f] = alloc_ledger_last_release(l, (uint32_t)f);
	}
	/* Insertion sort: the pool is at most the forwarder count, and
	 * qsort has no context argument (no globals here). */
	for (size_t i = 1; i < pl->n; i++) {
		uint32_t v = pl->fwd[i];
		size_t j = i;

		while (j > 0 && pool_cmp(&o, pl->fwd[j - 1], v) > 0) {
			pl->fwd[j] = pl->fwd[j - 1];
			j--;
		}
		pl->fwd[j] = v;
	}
}

uint32_t alloc_pool_take_group(struct alloc_pool *pl,
			       const struct alloc_ctx *cx, uint32_t group)
{
	size_t k = pl->next;

	for (size_t i = pl->next; i < pl->n; i++) {
		if (cx->group[pl->fwd[i]] == group) {
			k = i;
			break;
		}
	}
	/* Rotate it to the front, keeping the others' order. */
	for (uint32_t v = pl->fwd[k]; k > pl->next; k--) {
		pl->fwd[k] = pl->fwd[k - 1];
		pl->fwd[k - 1] = v;
	}
	return alloc_pool_take(pl);
}
