/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pool (DESIGN.md "The decision" step 6, selection): the idle
 * forwarders in the order they are handed out to a job.  Groups serving
 * most of the job's nodes come first (then group name), then the least
 * recently released (ledger), then the name: deterministic, and near the
 * job's nodes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "topology/topology.h"

struct order {
	const struct alloc_ctx *cx;
	const uint64_t *gweight; /* per group: job nodes served by default */
	const double *released;	 /* per forwarder: last release (ledger) */
};

/* The selection order; a total order (forwarder names are unique). */
static int pool_cmp(const struct order *o, uint32_t x, uint32_t y)
{
	const struct alloc_ctx *cx = o->cx;
	uint32_t gx = cx->group[x], gy = cx->group[y];
	double rx = o->released[x], ry = o->released[y];

	if (o->gweight[gx] != o->gweight[gy])
		return o->gweight[gx] > o->gweight[gy] ? -1 : 1;
	if (gx != gy)
		return cx->group_rank[gx] < cx->group_rank[gy] ? -1 : 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return cx->name_rank[x] < cx->name_rank[y]   ? -1
	       : cx->name_rank[x] > cx->name_rank[y] ? 1
						     : 0;
}

typedef int (*order_cmp)(const struct order *o, uint32_t x, uint32_t y);

static void sift_down(const struct order *o, order_cmp cmp, uint32_t *a,
		      size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		uint32_t v;

		if (c >= n)
			return;
		if (c + 1 < n && cmp(o, a[c + 1], a[c]) > 0)
			c++;
		if (cmp(o, a[i], a[c]) >= 0)
			return;
		v = a[i];
		a[i] = a[c];
		a[c] = v;
		i = c;
	}
}

/* Heap sort: O(n log n) whatever the input order, and no context-less
 * qsort comparator (no globals here). */
static void heap_sort(const struct order *o, order_cmp cmp, uint32_t *a,
		      size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(o, cmp, a, i, n);
	for (; n > 1; n--) {
		uint32_t v = a[0];

		a[0] = a[n - 1];
		a[n - 1] = v;
		sift_down(o, cmp, a, 0, n - 1);
	}
}

/* Groups: more of the job's nodes first, then name. */
static int group_cmp(const struct order *o, uint32_t x, uint32_t y)
{
	if (o->gweight[x] != o->gweight[y])
		return o->gweight[x] > o->gweight[y] ? -1 : 1;
	return o->cx->group_rank[x] < o->cx->group_rank[y]   ? -1
	       : o->cx->group_rank[x] > o->cx->group_rank[y] ? 1
							     : 0;
}

void alloc_pool_fill_sorted(struct alloc_pool *pl, const struct alloc_ctx *cx,
			    const struct alloc_ledger *l,
			    const struct alloc_health *h,
			    const uint64_t *gweight)
{
	const struct order o = {cx, gweight, pl->released};
	const struct topology *t = cx->t;

	pl->n = pl->next = 0;
	pl->unplaced = false;
	for (size_t f = 0; f < t->n_forwarders; f++) {
		if (!alloc_fwd_idle(t, l, h, (uint32_t)f))
			continue;
		pl->fwd[pl->n++] = (uint32_t)f;
		/* Read once: the sort compares it O(n log n) times. */
		pl->released[f] = alloc_ledger_last_release(l, (uint32_t)f);
	}
	heap_sort(&o, pool_cmp, pl->fwd, pl->n);
}

/*
 * The ledger keeps the backups in (last release, name) order, so the idle
 * ones come out in that order with one pass; a stable placement by group
 * (groups in job order) gives the selection order without comparing
 * forwarders.
 */
void alloc_pool_fill(struct alloc_pool *pl, const struct alloc_ctx *cx,
		     const struct alloc_ledger *l, const struct alloc_health *h,
		     const uint64_t *gweight)
{
	const struct topology *t = cx->t;
	size_t n_b, n_g = cx->n_groups;
	struct alloc_pool_cache *pc = pl->cache;

	pl->unplaced = false;
	pl->cached = false;
	if (!l) {
		alloc_pool_fill_sorted(pl, cx, l, h, gweight);
		return;
	}
	pl->n = pl->next = 0;
	pl->cached = pc != NULL;
	if (pc && pc->valid && pc->l == l && pc->h == h &&
	    pc->released == pl->released &&
	    pc->version == alloc_ledger_version(l)) {
		/* the same pool as the last decision read */
		memcpy(pl->fwd, pc->idle, pc->n * sizeof(*pc->idle));
		pl->n = pc->n;
	} else {
		/* unheld backups in release order, then the healthy ones */
		n_b = alloc_ledger_unheld_backups(l, pl->fwd, pl->released);
		for (size_t i = 0; i < n_b; i++) {
			uint32_t f = pl->fwd[i];

			if (t->forwarders[f].role == TOPO_ROLE_BACKUP &&
			    alloc_fwd_health(h, f) == FWD_HEALTH_OK)
				pl->fwd[pl->n++] = f;
		}
		if (pc) {
			memcpy(pc->idle, pl->fwd, pl->n * sizeof(*pc->idle));
			pc->n = pl->n;
			pc->l = l;
			pc->h = h;
			pc->released = pl->released;
			pc->version = alloc_ledger_version(l);
			pc->valid = true;
			pc->b_valid = false;
		}
	}
	/* placed by group when a forwarder is first taken: a decision that
	 * takes none reads only how many there are */
	pl->cx = cx;
	pl->gweight = gweight;
	pl->unplaced = !(n_g < 2 || pl->n < 2 || pl->count_only);
}

void alloc_pool_cache_acquired(struct alloc_pool_cache *pc,
			       const struct alloc_ctx *cx,
			       const struct alloc_ledger *l,
			       const struct alloc_decision *d, uint64_t before)
{
	const struct topology *t = cx->t;
	const uint32_t *group = cx->group;
	const uint32_t *held;
	size_t n_held;

	if (!pc->valid || pc->l != l || pc->version != before)
		return;
	if (alloc_ledger_version(l) == before)
		return; /* not added (the job was there already) */
	if (alloc_ledger_version(l) != before + 1) {
		pc->valid = false;
		return;
	}
	/* what alloc_ledger_acquire() records the job on: the defaults for
	 * shadow, else its forwarders; held now, so no longer idle */
	held = d->action == FWD_ACT_SHADOW ? d->defaults : d->forwarders;
	n_held = d->action == FWD_ACT_SHADOW ? d->n_defaults : d->n_forwarders;
	for (size_t i = 0; i < n_held; i++) {
		uint32_t f = held[i];
		size_t k = 0;

		if (f >= t->n_forwarders ||
		    t->forwarders[f].role != TOPO_ROLE_BACKUP)
			continue;
		while (k < pc->n && pc->idle[k] != f)
			k++;
		if (k == pc->n)
			continue;
		memmove(&pc->idle[k], &pc->idle[k + 1],
			(pc->n - k - 1) * sizeof(*pc->idle));
		pc->n--;
		if (pc->b_valid && pc->bucket) {
			uint32_t g = group[f], *b = &pc->bucket[pc->b_off[g]];

			for (k = 0; k < pc->b_n[g] && b[k] != f; k++)
				;
			if (k < pc->b_n[g]) {
				memmove(&b[k], &b[k + 1],
					(pc->b_n[g] - k - 1) * sizeof(*b));
				pc->b_n[g]--;
			} else {
				pc->b_valid = false;
			}
		}
	}
	pc->version = before + 1;
}

/* The groups that have idle forwarders (cnt[g] of them) in placement
 * order into gorder: those serving the job's nodes first, sorted (there
 * are few), then the others by name, the order the context keeps.  How
 * many. */
static size_t group_order(const struct order *o, const uint32_t *cnt,
			  uint32_t *gorder)
{
	const struct alloc_ctx *cx = o->cx;
	size_t n_used = 0;

	for (size_t k = 0; k < cx->n_groups; k++)
		if (cnt[k] && o->gweight[k])
			gorder[n_used++] = (uint32_t)k;
	if (n_used <= 16) {
		for (size_t i = 1; i < n_used; i++) {
			uint32_t v = gorder[i];
			size_t k = i;

			for (; k && group_cmp(o, gorder[k - 1], v) > 0; k--)
				gorder[k] = gorder[k - 1];
			gorder[k] = v;
		}
	} else {
		heap_sort(o, group_cmp, gorder, n_used);
	}
	for (size_t r = 0; r < cx->n_groups; r++) {
		uint32_t g = cx->groups_by_name[r];

		if (cnt[g] && !o->gweight[g])
			gorder[n_used++] = g;
	}
	return n_used;
}

/* The cached idle forwarders by group, each group's in release order. */
static void buckets_build(struct alloc_pool_cache *pc,
			  const struct alloc_ctx *cx)
{
	uint32_t off = 0;

	memset(pc->b_n, 0, cx->n_groups * sizeof(*pc->b_n));
	for (size_t i = 0; i < pc->n; i++)
		pc->b_n[cx->group[pc->idle[i]]]++;
	for (size_t g = 0; g < cx->n_groups; g++) {
		pc->b_off[g] = off;
		off += pc->b_n[g];
		pc->b_n[g] = 0;
	}
	for (size_t i = 0; i < pc->n; i++) {
		uint32_t g = cx->group[pc->idle[i]];

		pc->bucket[pc->b_off[g] + pc->b_n[g]++] = pc->idle[i];
	}
	pc->b_valid = true;
}

/* alloc_pool_place() from the cache's groups: the same order (groups in
 * the job's order, each group's forwarders in release order) without
 * going through the pool forwarder by forwarder. */
static void place_buckets(struct alloc_pool *pl)
{
	const struct alloc_ctx *cx = pl->cx;
	struct alloc_pool_cache *pc = pl->cache;
	const struct order o = {cx, pl->gweight, pl->released};
	uint32_t *gorder = pc->place;
	size_t n_used, at = 0;

	if (!pc->b_valid)
		buckets_build(pc, cx);
	n_used = group_order(&o, pc->b_n, gorder);
	for (size_t k = 0; k < n_used; k++) {
		uint32_t g = gorder[k];

		memcpy(&pl->fwd[at], &pc->bucket[pc->b_off[g]],
		       pc->b_n[g] * sizeof(*pl->fwd));
		at += pc->b_n[g];
	}
}

void alloc_pool_place(struct alloc_pool *pl)
{
	const struct alloc_ctx *cx = pl->cx;
	const uint64_t *gweight = pl->gweight;
	struct alloc_pool_cache *pc = pl->cache;
	const struct order o = {cx, gweight, pl->released};
	size_t n_g, n_used = 0;
	uint32_t *cnt, *gorder, *tmp;

	if (!pl->unplaced)
		return;
	pl->unplaced = false;
	n_g = cx->n_groups;
	if (pl->cached && pc->valid && pc->n == pl->n && pc->bucket) {
		place_buckets(pl);
		return;
	}
	cnt = pc ? pc->place : calloc(2 * n_g + pl->n, sizeof(*cnt));
	if (!cnt) { /* no memory for the placement: sort instead */
		heap_sort(&o, pool_cmp, pl->fwd, pl->n);
		return;
	}
	if (pc)
		memset(cnt, 0, n_g * sizeof(*cnt));
	gorder = cnt + n_g;
	tmp = gorder + n_g;
	for (size_t i = 0; i < pl->n; i++)
		cnt[cx->group[pl->fwd[i]]]++;
	n_used = group_order(&o, cnt, gorder);
	if (n_used > 1) {
		uint32_t off = 0;

		for (size_t k = 0; k < n_used; k++) { /* counts -> offsets */
			uint32_t c = cnt[gorder[k]];

			cnt[gorder[k]] = off;
			off += c;
		}
		for (size_t i = 0; i < pl->n; i++)
			tmp[cnt[cx->group[pl->fwd[i]]]++] = pl->fwd[i];
		memcpy(pl->fwd, tmp, pl->n * sizeof(*tmp));
	}
	if (!pc)
		free(cnt);
}

uint32_t alloc_pool_take_group(struct alloc_pool *pl,
			       const struct alloc_ctx *cx, uint32_t group)
{
	size_t k;

	alloc_pool_place(pl);
	k = pl->next;

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
