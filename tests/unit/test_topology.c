/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Topology builder: mapping, index, coverage and overlap errors; node
 * sets and their default forwarders. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/xorshift.h"
#include "topology/topology.h"

static struct topology *make(size_t n_service, size_t n_backup)
{
	struct topology *t = topo_create();
	char name[32];

	assert_non_null(t);
	for (size_t i = 0; i < n_service + n_backup; i++) {
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 2.5e9,
			.group = (char *)(i % 2 ? "g1" : "g0"),
			.role = i < n_service ? TOPO_ROLE_SERVICE
					      : TOPO_ROLE_BACKUP,
		};
		snprintf(name, sizeof(name), "fwd%02zu", i + 1);
		assert_int_equal(topo_add_forwarder(t, &f, NULL), 0);
	}
	return t;
}

static void test_explicit_mapping(void **state)
{
	struct topology *t = make(2, 1);
	fwd_error_t err;

	assert_int_equal(topo_add_compute_nodes(t, "c[1-8]", &err), 0);
	assert_int_equal(topo_add_mapping(t, "c[1-4]", 0, &err), 0);
	assert_int_equal(topo_add_mapping(t, "c[5-8]", 1, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	assert_int_equal(t->n_nodes, 8);
	assert_int_equal(topo_node_default(t, "c3"), 0);
	assert_int_equal(topo_node_default(t, "c8"), 1);
	assert_int_equal(topo_node_default(t, "c9"), -1);
	assert_int_equal(topo_node_id(t, "c1"), 0);
	assert_string_equal(t->mapping[1].nodes, "c[5-8]");
	assert_int_equal(t->mapping[1].count, 4);
	assert_int_equal(topo_forwarder_index(t, "fwd03"), 2);
	assert_int_equal(topo_forwarder_index(t, "nope"), -1);
	topo_destroy(t);
}

static void test_per_forwarder_rule(void **state)
{
	struct topology *t = make(3, 2);
	fwd_error_t err;

	assert_int_equal(topo_add_compute_nodes(t, "n[0001-1500]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 512, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	assert_int_equal(t->n_mapping, 3);
	assert_string_equal(t->mapping[0].nodes, "n[0001-0512]");
	assert_string_equal(t->mapping[2].nodes, "n[1025-1500]");
	assert_int_equal(t->mapping[2].count, 476);
	assert_int_equal(topo_node_default(t, "n0513"), 1);
	topo_destroy(t);
}

static void test_large_index(void **state)
{
	struct topology *t = make(80, 160);
	fwd_error_t err;
	char name[32];

	assert_int_equal(topo_add_compute_nodes(t, "cn[00000-40959]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 512, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	for (long i = 0; i < 40960; i += 97) {
		snprintf(name, sizeof(name), "cn%05ld", i);
		assert_int_equal(topo_node_id(t, name), i);
		assert_int_equal(topo_node_default(t, name), i / 512);
	}
	topo_destroy(t);
}

struct err_case {
	const char *what;
	const char *declare;
	const char *map_a, *map_b;
	size_t per_fwd;
	const char *want;
};

static const struct err_case err_cases[] = {
	{"overlap", "c[1-8]", "c[1-5]", "c[5-8]", 0,
	 "node 'c5' is mapped to both 'fwd01' and 'fwd02'"},
	{"uncovered", "c[1-8]", "c[1-4]", "c[5-7]", 0,
	 "1 compute node is not covered by the mapping, first 'c8'"},
	{"undeclared", "c[1-8]", "c[1-4]", "c[5-9]", 0,
	 "node 'c9' is not a declared compute node"},
	{"declared twice", "c[1-8],c3", NULL, NULL, 0,
	 "compute node 'c3' is declared twice"},
	{"bad hostlist", "c[1-", NULL, NULL, 0,
	 "invalid node list 'c[1-' (want a Slurm hostlist such as "
	 "c[1-512])"},
	{"too few service", "c[1-20]", NULL, NULL, 4,
	 "12 compute nodes from 'c9' on are left unmapped: not enough "
	 "service forwarders at 4 nodes each"},
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *c = &err_cases[i];
		struct topology *t = make(2, 2);
		fwd_error_t err = {""};
		int rv = topo_add_compute_nodes(t, c->declare, &err);

		if (rv == 0 && c->map_a)
			rv = topo_add_mapping(t, c->map_a, 0, &err);
		if (rv == 0 && c->map_b)
			rv = topo_add_mapping(t, c->map_b, 1, &err);
		if (rv == 0 && c->per_fwd)
			rv = topo_map_per_forwarder(t, c->per_fwd, &err);
		if (rv == 0)
			rv = topo_finalize(t, &err);
		if (rv != -1 || strcmp(err.text, c->want) != 0)
			fail_msg("%s: rv %d, got '%s', want '%s'", c->what, rv,
				 err.text, c->want);
		topo_destroy(t);
	}
}

static void test_duplicate_forwarder(void **state)
{
	struct topology *t = make(1, 0);
	struct topo_forwarder f = {.name = (char *)"fwd01", .bandwidth_bps = 1};
	struct topo_forwarder z = {.name = (char *)"fwd09", .bandwidth_bps = 0};
	fwd_error_t err;

	assert_int_equal(topo_add_forwarder(t, &f, &err), -1);
	assert_string_equal(err.text, "forwarder 'fwd01' is defined twice");
	assert_int_equal(topo_add_forwarder(t, &z, &err), -1);
	assert_string_equal(err.text,
			    "forwarder 'fwd09': bandwidth must be positive");
	topo_destroy(t);
}

static void test_json(void **state)
{
	struct topology *t = make(1, 1);
	struct topo_ost o = {.name = (char *)"lustre-OST0000",
			     .bandwidth_bps = 1e9};
	char *s;

	assert_int_equal(topo_add_mapping(t, "c[1-2]", 0, NULL), 0);
	assert_int_equal(topo_add_ost(t, &o, NULL), 0);
	assert_int_equal(topo_finalize(t, NULL), 0);
	s = topo_to_json(t);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"nodes\": \"c[1-2]\""));
	assert_non_null(strstr(s, "\"role\": \"backup\""));
	assert_non_null(strstr(s, "\"name\": \"lustre-OST0000\""));
	free(s);
	topo_destroy(t);
	topo_destroy(NULL);
}

/* ---- node sets -------------------------------------------------------- */

/* fwd01..fwd04 serve c[1-16], four nodes each; fwd05 is a backup. */
static struct topology *make_sets(void)
{
	struct topology *t = make(4, 1);

	assert_int_equal(topo_add_compute_nodes(t, "c[1-16]", NULL), 0);
	assert_int_equal(topo_map_per_forwarder(t, 4, NULL), 0);
	assert_int_equal(topo_finalize(t, NULL), 0);
	return t;
}

/* "fwd03 fwd01", "3 1": the forwarders listed and their node counts. */
static void join(const struct topology *t, const uint32_t *fwd, size_t n,
		 const uint32_t *count, char *names, char *counts, size_t len)
{
	size_t a = 0, b = 0;

	names[0] = counts[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		a += (size_t)snprintf(names + a, len - a, "%s%s", i ? " " : "",
				      t->forwarders[fwd[i]].name);
		if (count)
			b += (size_t)snprintf(counts + b, len - b, "%s%u",
					      i ? " " : "", count[fwd[i]]);
	}
}

static void test_hostlist_nodes(void **state)
{
	static const struct {
		const char *nodes;
		long rv;
		const char *want; /* ids, or the error */
	} tab[] = {
		{"c[1-3]", 0, "0 1 2"},
		{"c16,c[2-3],c9", 0, "15 1 2 8"},
		{"c[15-17]", -1, "node c17 is not in the topology"},
		{"x1", -1, "node x1 is not in the topology"},
		{"c[1-3],c2", -1, "node c2 listed twice"},
		{"", -1, "empty node list"},
		{NULL, -1, "empty node list"},
		{",", -1, "\",\": not a valid Slurm hostlist"},
		{"c[2-1]", -1, "\"c[2-1]\": not a valid Slurm hostlist"},
	};
	struct topology *t = make_sets();

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		uint32_t *ids = NULL;
		size_t n = 0, off = 0;
		fwd_error_t err = {""};
		char got[256] = "";
		int rv;

		errno = 0;
		rv = topo_hostlist_nodes(t, tab[i].nodes, &ids, &n, &err);
		if (rv == 0)
			for (size_t k = 0; k < n; k++)
				off += (size_t)snprintf(
					got + off, sizeof(got) - off, "%s%u",
					k ? " " : "", ids[k]);
		else
			snprintf(got, sizeof(got), "%s", err.text);
		if (rv != tab[i].rv || strcmp(got, tab[i].want) ||
		    (rv < 0 && (errno != EINVAL || ids)))
			fail_msg("%s: rv %d errno %d, got '%s', want '%s'",
				 tab[i].nodes ? tab[i].nodes : "(null)", rv,
				 errno, got, tab[i].want);
		free(ids);
	}
	topo_destroy(t);
}

static void test_default_forwarders(void **state)
{
	static const struct {
		const char *nodes; /* the first set */
		const char *more;  /* a second set added after it, or NULL */
		const char *fwd;   /* forwarders, in first-appearance order */
		const char *count; /* nodes each serves */
	} tab[] = {
		{"c[1-4]", NULL, "fwd01", "4"},
		{"c[3-6]", NULL, "fwd01 fwd02", "2 2"},
		{"c[9-10],c1,c11,c16", NULL, "fwd03 fwd01 fwd04", "3 1 1"},
		{"c16,c1", NULL, "fwd04 fwd01", "1 1"},
		{"c[1-16]", NULL, "fwd01 fwd02 fwd03 fwd04", "4 4 4 4"},
		{"c1,c5", "c6,c9", "fwd01 fwd02 fwd03", "1 2 1"},
		{"c9", "c[10-12]", "fwd03", "4"},
	};
	struct topology *t = make_sets();

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		uint32_t count[5] = {0}, fwd[5] = {0}, *ids;
		char names[128], counts[128];
		size_t n_ids, n = 0;
		fwd_error_t err;

		assert_int_equal(topo_hostlist_nodes(t, tab[i].nodes, &ids,
						     &n_ids, &err),
				 0);
		assert_int_equal(topo_default_forwarders(t, ids, n_ids, count,
							 fwd, &n, &err),
				 0);
		free(ids);
		if (tab[i].more) {
			assert_int_equal(topo_hostlist_nodes(t, tab[i].more,
							     &ids, &n_ids,
							     &err),
					 0);
			assert_int_equal(topo_default_forwarders(t, ids, n_ids,
								 count, fwd, &n,
								 &err),
					 0);
			free(ids);
		}
		join(t, fwd, n, count, names, counts, sizeof(names));
		if (strcmp(names, tab[i].fwd) || strcmp(counts, tab[i].count))
			fail_msg("%s: got '%s' / '%s', want '%s' / '%s'",
				 tab[i].nodes, names, counts, tab[i].fwd,
				 tab[i].count);
		/* Forwarders no node maps to stay uncounted. */
		assert_int_equal(count[4], 0);
	}
	topo_destroy(t);
}

/* topo_default_forwarders() and topo_forwarder_run() against a node by
 * node count, on node sets made of runs (ascending, descending, single
 * nodes) over a mapping whose forwarder changes at random places, so that
 * runs longer than eight nodes start, cross and end at every position
 * of a boundary. */
static void test_default_forwarders_random(void **state)
{
	enum { N = 700, F = 9 };
	struct topology *t = make(F, 0);
	uint32_t ids[N], count[F], fwd[F], want[F], wfwd[F];
	char hl[32];
	size_t n_ids, n, wn;
	fwd_error_t err;

	(void)state;
	assert_int_equal(topo_add_compute_nodes(t, "c[1-700]", &err), 0);
	for (uint32_t a = 1; a <= N;) {
		uint32_t len = rnd(3) ? 1 + rnd(40) : 1 + rnd(4);
		uint32_t b = a + len - 1 > N ? N : a + len - 1;

		snprintf(hl, sizeof(hl), "c[%u-%u]", a, b);
		assert_int_equal(topo_add_mapping(t, hl, rnd(F), &err), 0);
		a = b + 1;
	}
	assert_int_equal(topo_finalize(t, &err), 0);
	for (int trial = 0; trial < 2000; trial++) {
		uint8_t used[N] = {0};

		n_ids = 0;
		for (size_t want_n = 1 + rnd(trial % 10 ? 60 : 600);
		     n_ids < want_n;) {
			uint32_t a = rnd(N), len = rnd(4) ? 1 + rnd(50) : 1;
			bool down = rnd(5) == 0;

			for (uint32_t k = 0; k < len && n_ids < want_n; k++) {
				long id = down ? (long)a - k : (long)a + k;

				if (id < 0 || id >= N)
					break;
				if (!used[id]) {
					used[id] = 1;
					ids[n_ids++] = (uint32_t)id;
				}
			}
		}
		memset(count, 0, sizeof(count));
		memset(want, 0, sizeof(want));
		n = wn = 0;
		assert_int_equal(topo_default_forwarders(t, ids, n_ids, count,
							 fwd, &n, &err),
				 0);
		for (size_t i = 0; i < n_ids; i++) {
			uint32_t f = (uint32_t)t->node_forwarder[ids[i]];
			size_t j = i + 1;

			if (want[f]++ == 0)
				wfwd[wn++] = f;
			while (j < n_ids && ids[j] == ids[i] + (j - i) &&
			       t->node_forwarder[ids[j]] == (int32_t)f)
				j++;
			if (topo_forwarder_run(t, ids, n_ids, i) != j - i)
				fail_msg("trial %d, position %zu: run %zu, "
					 "want %zu",
					 trial, i,
					 topo_forwarder_run(t, ids, n_ids, i),
					 j - i);
		}
		assert_int_equal(n, wn);
		assert_memory_equal(fwd, wfwd, wn * sizeof(*fwd));
		assert_memory_equal(count, want, sizeof(count));
	}
	topo_destroy(t);
}

/* topo_name_run() against a name by name walk, over names whose numbers
 * jump and whose widths change (gpu99 -> gpu100), in runs of every
 * length. */
static void test_name_run_random(void **state)
{
	static const char *nodes[] = {"c[1-200]", "gpu[01-99]",	 "gpu[100-130]",
				      "d[08-12]", "d[1-9]",	 "c[202-260]",
				      "login",	  "x[0001-0040]"};
	struct topology *t = make(1, 0);
	const struct topo_names *nm;
	uint32_t ids[600];
	fwd_error_t err;

	(void)state;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(*nodes); i++)
		assert_int_equal(topo_add_compute_nodes(t, nodes[i], &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 100000, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	assert_non_null(nm = topo_names(t));
	for (int trial = 0; trial < 2000; trial++) {
		size_t n_ids = 0, want_n = 1 + rnd(200);

		while (n_ids < want_n) {
			uint32_t a = rnd((uint32_t)t->n_nodes);
			uint32_t len = rnd(4) ? 1 + rnd(60) : 1;

			for (uint32_t k = 0;
			     k < len && n_ids < want_n && a + k < t->n_nodes;
			     k++)
				ids[n_ids++] = a + k;
		}
		for (size_t i = 0; i < n_ids; i++) {
			size_t j = i + 1;

			while (j < n_ids && ids[j] == ids[j - 1] + 1 &&
			       nm->follow[ids[j - 1]])
				j++;
			if (topo_name_run(t, nm, ids, n_ids, i) != j - i)
				fail_msg("trial %d, position %zu: run %zu, "
					 "want %zu",
					 trial, i,
					 topo_name_run(t, nm, ids, n_ids, i),
					 j - i);
		}
	}
	topo_destroy(t);
}

static void test_default_forwarders_errors(void **state)
{
	struct topology *t = make_sets();
	struct topology *u = make(1, 0);
	uint32_t bad[] = {0, 4, 16, 5};
	uint32_t unmapped[] = {0, 1};
	uint32_t count[5] = {0}, fwd[5] = {0};
	fwd_error_t err = {""};
	size_t n = 0;

	/* Nodes before the bad id are counted, the rest are not. */
	errno = 0;
	assert_int_equal(
		topo_default_forwarders(t, bad, 4, count, fwd, &n, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "node id 16 outside the topology (16 "
				      "nodes)");
	assert_int_equal(n, 2);
	assert_int_equal(fwd[0], 0);
	assert_int_equal(fwd[1], 1);
	assert_int_equal(count[0] + count[1] + count[2], 2);

	/* A declared node without a mapping (before topo_finalize()). */
	assert_int_equal(topo_add_compute_nodes(u, "c[1-2]", NULL), 0);
	assert_int_equal(topo_add_mapping(u, "c1", 0, NULL), 0);
	memset(count, 0, sizeof(count));
	n = 0;
	errno = 0;
	assert_int_equal(
		topo_default_forwarders(u, unmapped, 2, count, fwd, &n, &err),
		-1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "node c2 has no default forwarder");
	assert_int_equal(n, 1);
	assert_int_equal(count[0], 1);
	topo_destroy(u);
	topo_destroy(t);
}

static void test_hostlist_default_forwarders(void **state)
{
	static const struct {
		const char *nodes;
		int rv;
		const char *want; /* forwarders, or the error */
		size_t unknown;
	} tab[] = {
		{"c[3-6]", 0, "fwd01 fwd02", 0},
		{"c[7-8],c[1-3]", 0, "fwd02 fwd01", 0},
		{"c[15-18]", 0, "fwd04", 2},
		{"x1,c9,c9,c13", 0, "fwd03 fwd04", 1},
		{"x[1-3]", 0, "", 3},
		{"", -1, "empty node list", 0},
		{NULL, -1, "empty node list", 0},
		{",", -1, "\",\": not a valid Slurm hostlist", 0},
		{"c[2-1]", -1, "\"c[2-1]\": not a valid Slurm hostlist", 0},
	};
	struct topology *t = make_sets();

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		uint32_t *fwd = NULL;
		size_t n = 99, unknown = 99;
		char names[128], counts[128];
		fwd_error_t err = {""};
		int rv;

		errno = 0;
		rv = topo_hostlist_default_forwarders(t, tab[i].nodes, &fwd, &n,
						      &unknown, &err);
		if (rv == 0)
			join(t, fwd, n, NULL, names, counts, sizeof(names));
		else
			snprintf(names, sizeof(names), "%s", err.text);
		if (rv != tab[i].rv || strcmp(names, tab[i].want) ||
		    (rv == 0 && unknown != tab[i].unknown) ||
		    (rv < 0 && (errno != EINVAL || fwd)))
			fail_msg("%s: rv %d errno %d, got '%s' (%zu unknown), "
				 "want '%s' (%zu)",
				 tab[i].nodes ? tab[i].nodes : "(null)", rv,
				 errno, names, unknown, tab[i].want,
				 tab[i].unknown);
		free(fwd);
	}
	/* n_unknown may be NULL. */
	{
		uint32_t *fwd = NULL;
		size_t n = 0;

		assert_int_equal(topo_hostlist_default_forwarders(
					 t, "c[4-5],y9", &fwd, &n, NULL, NULL),
				 0);
		assert_int_equal(n, 2);
		assert_int_equal(fwd[0], 0);
		assert_int_equal(fwd[1], 1);
		free(fwd);
	}
	topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit_mapping),
		cmocka_unit_test(test_per_forwarder_rule),
		cmocka_unit_test(test_large_index),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_duplicate_forwarder),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_hostlist_nodes),
		cmocka_unit_test(test_default_forwarders),
		cmocka_unit_test(test_default_forwarders_random),
		cmocka_unit_test(test_name_run_random),
		cmocka_unit_test(test_default_forwarders_errors),
		cmocka_unit_test(test_hostlist_default_forwarders),
	};
	return cmocka_run_group_tests_name("topology", tests, NULL, NULL);
}
