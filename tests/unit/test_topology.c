/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Topology builder: mapping, index, coverage and overlap errors. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit_mapping),
		cmocka_unit_test(test_per_forwarder_rule),
		cmocka_unit_test(test_large_index),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_duplicate_forwarder),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests_name("topology", tests, NULL, NULL);
}
