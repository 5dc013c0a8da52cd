/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The allocator's node sets (allocator/nodeset.c): the job's hostlist
 * resolved through the context's number index must give exactly the ids
 * and errors of the per-host path (alloc_job_nodes()), and the mapping's
 * ranged hostlists must be exactly what libslurm prints for the same
 * names pushed in the same order (slurm_hostlist_push_host() then
 * fwd_hostlist_ranged()), on many random node sequences over names with
 * several prefixes, zero-padded and natural widths, widths
 * that change inside a range (gpu99 -> gpu100, d08 -> d10), names without
 * a number, and numbers too sparse for a table.
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
#include "common/slurm_compat.h"
#include "tests/unit/xorshift.h"
#include "topology/topology.h"

struct fix {
	struct topology *t;
	struct alloc_ctx *cx;
};

static int setup(void **state)
{
	static const char *nodes[] = {
		"c[1-700]", "n[0001-0300]", "gpu[01-99]", "gpu[100-130]",
		"d[08-12]", "d[1-9]",	    "r1n[1-40]",  "login",
		"head",	    "x1",	    "x1000",	  "x100000",
		"z0",	    "z00",	    "z[000-003]", "io-[5-25]",
		"7",	    "[8-9]",
	};
	struct fix *f = calloc(1, sizeof(*f));
	struct topo_forwarder fw = {.name = (char *)"fwd1",
				    .bandwidth_bps = 1e9,
				    .group = (char *)"g",
				    .role = TOPO_ROLE_SERVICE};
	fwd_error_t err;

	assert_non_null(f);
	assert_non_null(f->t = topo_create());
	for (int i = 1; i <= 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "fwd%d", i);
		fw.name = name;
		assert_int_equal(topo_add_forwarder(f->t, &fw, &err), 0);
	}
	for (size_t i = 0; i < sizeof(nodes) / sizeof(*nodes); i++)
		assert_int_equal(topo_add_compute_nodes(f->t, nodes[i], &err),
				 0);
	assert_int_equal(topo_map_per_forwarder(f->t, 100000, &err), 0);
	assert_int_equal(topo_finalize(f->t, &err), 0);
	assert_non_null(f->cx = alloc_ctx_create(f->t, &err));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	alloc_ctx_destroy(f->cx);
	topo_destroy(f->t);
	free(f);
	return 0;
}

/* A random sequence of node ids: runs of consecutive ids (ascending or
 * descending), single random nodes, optionally repeating some. */
static size_t random_ids(const struct topology *t, uint32_t *ids, size_t max,
			 bool dups)
{
	size_t n = 0, want = 1 + rnd((uint32_t)(max < t->n_nodes / 2
							? max
							: t->n_nodes / 2));
	uint8_t *used = calloc(t->n_nodes, 1);

	assert_non_null(used);
	while (n < want) {
		uint32_t a = rnd((uint32_t)t->n_nodes);
		uint32_t len = rnd(4) ? 1 + rnd(40) : 1;
		bool down = rnd(5) == 0;

		for (uint32_t k = 0; k < len && n < want; k++) {
			long id = down ? (long)a - k : (long)a + k;

			if (id < 0 || (size_t)id >= t->n_nodes)
				break;
			if (used[id] && !dups)
				continue;
			used[id] = 1;
			ids[n++] = (uint32_t)id;
		}
	}
	free(used);
	return n;
}

static char *slurm_render(const struct topology *t, const uint32_t *ids,
			  size_t n)
{
	fwd_hostlist_t hl = slurm_hostlist_create(NULL);
	char *s;

	assert_non_null(hl);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(
			slurm_hostlist_push_host(hl, t->node_names[ids[i]]), 0);
	s = fwd_hostlist_ranged(hl);
	slurm_hostlist_destroy(hl);
	assert_non_null(s);
	return s;
}

static char *our_render(const struct alloc_ctx *cx, const uint32_t *ids,
			size_t n)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	assert_int_equal(alloc_render_ids(cx, ids, n, &buf, &len, &cap), 0);
	assert_non_null(buf);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* Fixed cases whose libslurm output is known, so that the comparison
 * below cannot agree on something both get wrong. */
static void test_render_known(void **state)
{
	struct fix *f = *state;
	static const struct {
		const char *in, *out;
	} tab[] = {
		{"c[1-3],c5", "c[1-3,5]"},
		{"c5,c3,c4", "c[5,3-4]"},
		{"gpu[98-99],gpu100", "gpu[98-100]"},
		{"d08,d09,d10", "d[08-10]"},
		{"d9,d10", "d[9-10]"},
		{"login,head", "login,head"},
		{"c7", "c7"},
		{"n0001,n0002,c1", "n[0001-0002],c1"},
		{"z0,z00,z000", "z[0,00,000]"},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(*tab); i++) {
		uint32_t *ids;
		size_t n;
		fwd_error_t err;
		char *s;

		assert_int_equal(
			alloc_ctx_job_nodes(f->cx, tab[i].in, &ids, &n, &err),
			0);
		s = our_render(f->cx, ids, n);
		assert_string_equal(s, tab[i].out);
		free(s);
		s = slurm_render(f->t, ids, n);
		assert_string_equal(s, tab[i].out);
		free(s);
		free(ids);
	}
}

static void test_render_random(void **state)
{
	struct fix *f = *state;
	uint32_t *ids = malloc(f->t->n_nodes * sizeof(*ids));

	assert_non_null(ids);
	for (int trial = 0; trial < 3000; trial++) {
		size_t n = random_ids(f->t, ids, trial % 10 ? 60 : 1200,
				      trial % 7 == 0);
		char *ref = slurm_render(f->t, ids, n);
		char *got = our_render(f->cx, ids, n);

		if (strcmp(ref, got))
			fail_msg("trial %d: libslurm \"%s\", ours \"%s\"",
				 trial, ref, got);
		free(ref);
		free(got);
	}
	free(ids);
}

/* Appending: a second rendering goes after the first in the same buffer,
 * growing it from a small start. */
static void test_render_appends(void **state)
{
	struct fix *f = *state;
	uint32_t ids[700];
	char *buf = malloc(4);
	size_t len = 2, cap = 4;

	assert_non_null(buf);
	memcpy(buf, "x=", 3);
	for (uint32_t i = 0; i < 700; i++)
		ids[i] = 699 - i; /* c700 .. c1, no two ranges join */
	assert_int_equal(alloc_render_ids(f->cx, ids, 700, &buf, &len, &cap),
			 0);
	assert_int_equal(strncmp(buf, "x=c[700,699,698", 15), 0);
	assert_int_equal(strlen(buf), len);
	assert_true(cap > len);
	free(buf);
}

/* The decision's mapping (alloc_render(): blocks of the job's positions,
 * runs of consecutive names joined) against libslurm on each forwarder's
 * nodes in block order. */
static void test_render_mapping_random(void **state)
{
	struct fix *f = *state;
	uint32_t *ids = malloc(f->t->n_nodes * sizeof(*ids));
	uint32_t *mine = malloc(f->t->n_nodes * sizeof(*mine));

	assert_non_null(ids);
	assert_non_null(mine);
	for (int trial = 0; trial < 1000; trial++) {
		struct alloc_decision *d = calloc(1, sizeof(*d));
		size_t n = random_ids(f->t, ids, trial % 10 ? 80 : 1000, false);

		assert_non_null(d);
		d->n_forwarders = 4;
		assert_non_null(d->forwarders = malloc(4 * sizeof(uint32_t)));
		for (uint32_t k = 0; k < 4; k++)
			d->forwarders[k] = k;
		assert_non_null(d->blocks = malloc(n * sizeof(*d->blocks)));
		for (size_t i = 0; i < n;) {
			size_t c = 1 + rnd(trial % 2 ? 8 : 300);

			if (c > n - i)
				c = n - i;
			d->blocks[d->n_blocks++] =
				(struct alloc_block){i, c, rnd(4)};
			i += c;
		}
		assert_int_equal(alloc_render(f->cx, ids, d), 0);
		assert_int_equal(d->n_mapping, 4);
		for (uint32_t k = 0; k < 4; k++) {
			size_t m = 0;
			char *ref;

			for (size_t b = 0; b < d->n_blocks; b++)
				if (d->blocks[b].forwarder == k)
					for (size_t i = 0;
					     i < d->blocks[b].count; i++)
						mine[m++] =
							ids[d->blocks[b].first +
							    i];
			assert_int_equal(d->mapping[k].forwarder, k);
			if (!m) {
				assert_string_equal(d->mapping[k].nodes, "");
				continue;
			}
			ref = slurm_render(f->t, mine, m);
			if (strcmp(ref, d->mapping[k].nodes))
				fail_msg("trial %d fwd %u: libslurm \"%s\", "
					 "ours \"%s\"",
					 trial, k, ref, d->mapping[k].nodes);
			free(ref);
		}
		alloc_decision_destroy(d);
	}
	free(ids);
	free(mine);
}

static void check_same_nodes(const struct fix *f, const char *hl)
{
	uint32_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	fwd_error_t ea = {0}, eb = {0};
	int ra = alloc_job_nodes(f->t, hl, &a, &na, &ea);
	int rb = alloc_ctx_job_nodes(f->cx, hl, &b, &nb, &eb);

	if (ra != rb)
		fail_msg("\"%s\": per-host %d (%s), indexed %d (%s)", hl, ra,
			 ea.text, rb, eb.text);
	if (ra == 0) {
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++)
			if (a[i] != b[i])
				fail_msg("\"%s\": node %zu: %u vs %u", hl, i,
					 a[i], b[i]);
		free(a);
		free(b);
	} else {
		assert_string_equal(ea.text, eb.text);
	}
}

static void test_job_nodes_fixed(void **state)
{
	struct fix *f = *state;
	static const char *tab[] = {
		"c[1-700]",
		"c[3,2,1]",
		"c[5,1-3]",
		"gpu[90-110]",
		"gpu[099-101]",
		"d[8-10]",
		"d[08-12],d[1-7]",
		"z[0,00,000-003]",
		"x[1,1000,100000]",
		"x1000,login,head,7,io-[5-7]",
		"n[0001-0300],c[1-700],gpu[01-130]",
		/* errors: unknown, duplicate, malformed, empty */
		"c[1-701]",
		"c[1-3],c2",
		"x[1-2]",
		"nope",
		"c[1-",
		"",
		"gpu[01-99],gpu[099-100]",
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(*tab); i++)
		check_same_nodes(f, tab[i]);
}

/* The index resolves by ranges (no per-host fallback) every valid list
 * over names it has tables for, and leaves errors and sparse numbers to
 * the per-host path. */
static void test_job_nodes_fast_path(void **state)
{
	struct fix *f = *state;
	static const struct {
		const char *nodes;
		int rv;
		size_t n;
	} tab[] = {
		{"c[1-700]", 0, 700},
		{"c[700,1-699]", 0, 700},
		{"gpu[90-110],d[08-12],d9", 0, 27},
		{"z[0,00,000-003],login,x1000", 0, 8},
		{"io-[5-25],7,8,9", 0, 24},
		{"x[1,1000,100000]", 0, 3}, /* singles: looked up by name */
		{"x[1-2]", -1, 0},
		{"c[1-3],c2", -1, 0},
		{"c[1-701]", -1, 0},
		{"", -1, 0},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(*tab); i++) {
		uint32_t *ids = NULL;
		size_t n = 0;

		int rv =
			alloc_ctx_job_nodes_fast(f->cx, tab[i].nodes, &ids, &n);

		if (rv != tab[i].rv)
			fail_msg("\"%s\": %d", tab[i].nodes, rv);
		if (tab[i].rv == 0) {
			assert_int_equal(n, tab[i].n);
			assert_string_equal(
				f->t->node_names[ids[0]],
				tab[i].nodes[0] == 'c' && tab[i].nodes[2] == '7'
					? "c700"
				: tab[i].nodes[0] == 'c' ? "c1"
				: tab[i].nodes[0] == 'g' ? "gpu90"
				: tab[i].nodes[0] == 'z' ? "z0"
				: tab[i].nodes[0] == 'i' ? "io-5"
							 : "x1");
		}
		free(ids);
	}
}

static void test_job_nodes_random(void **state)
{
	struct fix *f = *state;
	uint32_t *ids = malloc(f->t->n_nodes * sizeof(*ids));

	assert_non_null(ids);
	for (int trial = 0; trial < 2000; trial++) {
		size_t n = random_ids(f->t, ids, trial % 10 ? 60 : 1200,
				      trial % 9 == 0);
		char *s;

		if (trial % 2) {
			s = slurm_render(f->t, ids, n);
		} else { /* plain names, comma separated */
			size_t cap = 1, len = 0;

			for (size_t i = 0; i < n; i++)
				cap += strlen(f->t->node_names[ids[i]]) + 1;
			assert_non_null(s = malloc(cap));
			for (size_t i = 0; i < n; i++)
				len += (size_t)sprintf(
					s + len, "%s%s", i ? "," : "",
					f->t->node_names[ids[i]]);
		}
		check_same_nodes(f, s);
		free(s);
	}
	free(ids);
}

/* The bitmap node set. */
static void test_nodeset_bits(void **state)
{
	struct alloc_nodeset s;

	(void)state;
	assert_int_equal(alloc_nodeset_init(&s, 130), 0);
	assert_false(alloc_nodeset_test_set(&s, 0));
	assert_false(alloc_nodeset_test_set(&s, 63));
	assert_false(alloc_nodeset_test_set(&s, 64));
	assert_false(alloc_nodeset_test_set(&s, 129));
	assert_true(alloc_nodeset_test_set(&s, 63));
	assert_true(alloc_nodeset_test_set(&s, 64));
	assert_true(alloc_nodeset_test_set(&s, 129));
	assert_false(alloc_nodeset_test_set(&s, 65));
	assert_int_equal(s.w[0], 0x8000000000000001ULL);
	assert_int_equal(s.w[1], 0x3ULL);
	assert_int_equal(s.w[2], 0x2ULL);
	alloc_nodeset_free(&s);
	assert_null(s.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeset_bits),
		cmocka_unit_test(test_render_known),
		cmocka_unit_test(test_render_random),
		cmocka_unit_test(test_render_appends),
		cmocka_unit_test(test_render_mapping_random),
		cmocka_unit_test(test_job_nodes_fixed),
		cmocka_unit_test(test_job_nodes_fast_path),
		cmocka_unit_test(test_job_nodes_random),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
