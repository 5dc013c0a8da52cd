/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision's pool (allocator/pool.c): read from the ledger's release
 * order (kept sorted as forwarders are released), it must be exactly the
 * pool the selection order's comparator sorts (alloc_pool_fill_sorted()),
 * on random ledgers: holds, releases at random (and tied) times, health,
 * group weights, one group and many; and the ledger's order must stay
 * sorted through releases, explicit release times and clones; a batch's
 * overlay of a ledger (its entries borrowed) must hold what a clone holds,
 * through releases and additions, and leave the ledger as it was.  A pool
 * cache kept across changes of the ledger (as a batch keeps it) must give
 * the same pool after every change.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "topology/topology.h"
#define XORSHIFT_SEED 0x2545f4914f6cdd1dULL
#include "tests/unit/xorshift.h"

/* 8 service forwarders and n_backup backups in n_groups groups; names
 * deliberately not in index order (b-names shuffled by a stride). */
static struct topology *make_topo(int n_backup, int n_groups)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[32], group[16];

	assert_non_null(t);
	for (int i = 0; i < 8 + n_backup; i++) {
		bool svc = i < 8;
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 1e9,
			.group = group,
			.role = svc ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};

		if (svc)
			snprintf(name, sizeof(name), "s%02d", i);
		else
			snprintf(name, sizeof(name), "b%03d",
				 (i * 37) % (n_backup + 8));
		snprintf(group, sizeof(group), "g%d", (i * 7) % n_groups);
		assert_int_equal(topo_add_forwarder(t, &f, &err), 0);
	}
	assert_int_equal(topo_add_compute_nodes(t, "c[1-64]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 8, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	return t;
}

static void check_order_sorted(const struct alloc_ledger *l,
			       const struct topology *t)
{
	size_t n;
	const uint32_t *o = alloc_ledger_backups_by_release(l, &n);
	size_t backups = 0;

	for (size_t f = 0; f < t->n_forwarders; f++)
		backups += t->forwarders[f].role == TOPO_ROLE_BACKUP;
	assert_int_equal(n, backups);
	for (size_t i = 0; i + 1 < n; i++) {
		double a = alloc_ledger_last_release(l, o[i]);
		double b = alloc_ledger_last_release(l, o[i + 1]);

		assert_true(a <= b);
		if (a == b)
			assert_true(strcmp(t->forwarders[o[i]].name,
					   t->forwarders[o[i + 1]].name) < 0);
	}
}

static void compare_pools(const struct alloc_ctx *cx,
			  const struct alloc_ledger *l,
			  const struct alloc_health *h, const uint64_t *gw,
			  struct alloc_pool_cache *cache, double *released)
{
	const struct topology *t = alloc_ctx_topology(cx);
	size_t nf = t->n_forwarders;
	struct alloc_pool a = {.cache = cache}, b = {0};

	a.fwd = malloc(nf * sizeof(*a.fwd));
	a.released = cache ? released : malloc(nf * sizeof(*a.released));
	b.fwd = malloc(nf * sizeof(*b.fwd));
	b.released = malloc(nf * sizeof(*b.released));
	assert_true(a.fwd && a.released && b.fwd && b.released);
	alloc_pool_fill(&a, cx, l, h, gw);
	alloc_pool_place(&a); /* deferred to the first forwarder taken */
	alloc_pool_fill_sorted(&b, cx, l, h, gw);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++)
		if (a.fwd[i] != b.fwd[i])
			fail_msg("pool position %zu: %s vs %s", i,
				 t->forwarders[a.fwd[i]].name,
				 t->forwarders[b.fwd[i]].name);
	free(a.fwd);
	if (!cache)
		free(a.released);
	free(b.fwd);
	free(b.released);
}

/* Two ledgers hold the same: entries in order, each forwarder's holders
 * in order and flags, release times and order (and the version, when
 * both were made the same way). */
static void assert_same_ledger(const struct alloc_ledger *a,
			       const struct alloc_ledger *b,
			       const struct topology *t, bool version)
{
	uint32_t *fa = malloc(t->n_forwarders * sizeof(*fa));
	uint32_t *fb = malloc(t->n_forwarders * sizeof(*fb));
	double *ra = malloc(t->n_forwarders * sizeof(*ra));
	double *rb = malloc(t->n_forwarders * sizeof(*rb));
	size_t na, nb;

	assert_true(fa && fb && ra && rb);
	assert_int_equal(alloc_ledger_count(a), alloc_ledger_count(b));
	if (version)
		assert_int_equal(alloc_ledger_version(a),
				 alloc_ledger_version(b));
	for (size_t i = 0; i < alloc_ledger_count(a); i++) {
		const struct alloc_ledger_entry *x =
			alloc_ledger_entry_at(a, i);

		assert_string_equal(x->job_id,
				    alloc_ledger_entry_at(b, i)->job_id);
		assert_ptr_equal(alloc_ledger_find(a, x->job_id), x);
		assert_non_null(alloc_ledger_find(b, x->job_id));
	}
	for (uint32_t f = 0; f < t->n_forwarders; f++) {
		const struct alloc_ledger_entry *const *ha, *const *hb;
		size_t n = alloc_ledger_holders(a, f, &ha);

		assert_int_equal(alloc_ledger_holders(b, f, &hb), n);
		for (size_t k = 0; k < n; k++)
			assert_string_equal(ha[k]->job_id, hb[k]->job_id);
		assert_int_equal(alloc_ledger_held_private(a, f),
				 alloc_ledger_held_private(b, f));
		assert_true(alloc_ledger_last_release(a, f) ==
			    alloc_ledger_last_release(b, f));
	}
	na = alloc_ledger_unheld_backups(a, fa, ra);
	nb = alloc_ledger_unheld_backups(b, fb, rb);
	assert_int_equal(na, nb);
	assert_memory_equal(fa, fb, na * sizeof(*fa));
	free(fa);
	free(fb);
	free(ra);
	free(rb);
}

/* A batch's overlay of l (its entries borrowed) holds what a clone
 * holds; changed (a borrowed entry released, one of its own added) and
 * destroyed, it leaves l as it was. */
static void check_overlay(const struct alloc_ledger *l,
			  const struct topology *t, int step)
{
	struct alloc_ledger *o = alloc_ledger_overlay(l);
	struct alloc_ledger *c = alloc_ledger_clone(l);
	struct alloc_ledger *c2 = alloc_ledger_clone(l);
	fwd_error_t err;

	assert_non_null(o);
	assert_non_null(c);
	assert_non_null(c2);
	assert_same_ledger(o, c, t, true);
	for (int k = 0; k < 3; k++) {
		size_t n = alloc_ledger_count(o);
		uint32_t f = 8 + rnd((uint32_t)(t->n_forwarders - 8));
		bool pv = true;
		char id[32];
		struct alloc_ledger_entry e = {.job_id = id,
					       .forwarders = &f,
					       .private_fwd = &pv,
					       .n_forwarders = 1};

		if (n) {
			snprintf(id, sizeof(id), "%s",
				 alloc_ledger_entry_at(o, rnd((uint32_t)n))
					 ->job_id);
			assert_int_equal(alloc_ledger_release(o, id, 7), 1);
			assert_int_equal(alloc_ledger_release(c, id, 7), 1);
		}
		snprintf(id, sizeof(id), "overlay-%d-%d", step, k);
		if (alloc_ledger_holders(o, f, NULL) == 0) {
			assert_int_equal(alloc_ledger_add(o, &e, &err), 0);
			assert_int_equal(alloc_ledger_add(c, &e, &err), 0);
		}
		assert_same_ledger(o, c, t, true);
	}
	alloc_ledger_destroy(o);
	alloc_ledger_destroy(c);
	/* l itself: as before (its entries still its own, still there) */
	assert_same_ledger(l, c2, t, false);
	alloc_ledger_destroy(c2);
}

static void run_random(int n_backup, int n_groups, int steps)
{
	struct topology *t = make_topo(n_backup, n_groups);
	fwd_error_t err;
	struct alloc_ctx *cx = alloc_ctx_create(t, &err);
	struct alloc_ledger *l = alloc_ledger_create(t);
	enum fwd_health *hf = calloc(t->n_forwarders, sizeof(*hf));
	uint64_t *gw = calloc(n_groups + 1, sizeof(*gw));
	/* a cache kept from step to step, as a batch keeps it from job to
	 * job: it must follow every change of the ledger */
	struct alloc_pool_cache cache = {0};
	double *released = malloc(t->n_forwarders * sizeof(*released));
	int next_job = 0;

	cache.idle = malloc(t->n_forwarders * sizeof(*cache.idle));
	cache.place = malloc((2 * (size_t)n_groups + t->n_forwarders) *
			     sizeof(*cache.place));
	assert_true(cx && l && hf && gw && released && cache.idle &&
		    cache.place);
	check_order_sorted(l, t);
	for (int s = 0; s < steps; s++) {
		struct alloc_health h = {.forwarder = hf};
		uint32_t r = rnd(10);

		if (r < 4) { /* a job takes a random backup privately */
			uint32_t f = 8 + rnd((uint32_t)n_backup);
			bool pv = true;
			char id[16];
			struct alloc_ledger_entry e = {.job_id = id,
						       .forwarders = &f,
						       .private_fwd = &pv,
						       .n_forwarders = 1};

			snprintf(id, sizeof(id), "%d", next_job++);
			if (alloc_ledger_holders(l, f, NULL) == 0)
				assert_int_equal(alloc_ledger_add(l, &e, &err),
						 0);
		} else if (r < 7 && alloc_ledger_count(l)) {
			const struct alloc_ledger_entry *e =
				alloc_ledger_entry_at(
					l,
					rnd((uint32_t)alloc_ledger_count(l)));
			char id[16];

			snprintf(id, sizeof(id), "%s", e->job_id);
			/* Coarse times: many ties, broken by name. */
			assert_int_equal(
				alloc_ledger_release(l, id, (double)rnd(6)), 1);
		} else if (r < 8) {
			alloc_ledger_set_last_release(
				l, rnd((uint32_t)t->n_forwarders),
				(double)rnd(6));
		} else {
			hf[rnd((uint32_t)t->n_forwarders)] =
				rnd(3) ? FWD_HEALTH_OK : FWD_HEALTH_SUSPECT;
			cache.valid = false; /* health is fixed while cached */
		}
		for (int g = 0; g < n_groups; g++)
			gw[g] = rnd(3);
		check_order_sorted(l, t);
		compare_pools(cx, l, &h, gw, NULL, NULL);
		compare_pools(cx, l, &h, gw, &cache, released);
		compare_pools(cx, l, &h, gw, &cache, released); /* a hit */
		if (s % 50 == 0) {
			struct alloc_ledger *c = alloc_ledger_clone(l);

			assert_non_null(c);
			check_order_sorted(c, t);
			compare_pools(cx, c, &h, gw, NULL, NULL);
			alloc_ledger_destroy(c);
			check_overlay(l, t, s);
		}
	}
	free(hf);
	free(gw);
	free(released);
	free(cache.idle);
	free(cache.place);
	alloc_ledger_destroy(l);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
}

static void test_pool_one_group(void **state)
{
	(void)state;
	run_random(40, 1, 2000);
}

static void test_pool_groups(void **state)
{
	(void)state;
	run_random(40, 4, 2000);
	run_random(60, 60, 1000); /* a group per forwarder */
}

/* A ledger created with the context's name ranks (as a batch creates its
 * scratch ledger) starts with the same backup order as one that sorts the
 * names, and so does its clone; names are out of index order. */
static void test_ledger_ranked(void **state)
{
	struct topology *t = make_topo(40, 4);
	fwd_error_t err;
	struct alloc_ctx *cx = alloc_ctx_create(t, &err);
	struct alloc_ledger *a, *b, *c;
	uint32_t fa[64], fb[64], fc[64];
	double rel[64];
	size_t na, nb, nc;
	bool moved = false;

	(void)state;
	assert_non_null(cx);
	a = alloc_ledger_create(t);
	b = alloc_ledger_create_ranked(t, cx->name_rank);
	assert_non_null(a);
	assert_non_null(b);
	c = alloc_ledger_clone(b);
	assert_non_null(c);
	na = alloc_ledger_unheld_backups(a, fa, rel);
	nb = alloc_ledger_unheld_backups(b, fb, rel);
	nc = alloc_ledger_unheld_backups(c, fc, rel);
	assert_int_equal(na, 40);
	assert_int_equal(nb, na);
	assert_int_equal(nc, na);
	assert_memory_equal(fa, fb, na * sizeof(*fa));
	assert_memory_equal(fa, fc, na * sizeof(*fa));
	for (size_t i = 0; i < na; i++)
		moved |= fa[i] != 8 + i;
	assert_true(moved); /* the order is the names', not the indexes' */
	alloc_ledger_destroy(a);
	alloc_ledger_destroy(b);
	alloc_ledger_destroy(c);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_one_group),
		cmocka_unit_test(test_pool_groups),
		cmocka_unit_test(test_ledger_ranked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
