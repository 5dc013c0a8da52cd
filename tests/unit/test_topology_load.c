/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The topology YAML loader: the shipped examples load with the right
 * mapping, and every bad input gives its exact file:line:column message.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "topology/topology.h"

#define ETC FIXTURES "/../../etc"

/* open() is wrapped by tests/unit/wrap_eacces.c: paths ending in
 * "/eacces.yaml" fail with EACCES, since the suite runs as root. */

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/topo-test.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	return path;
}

static const char *fwd_of(const struct topology *t, const char *node)
{
	long f = topo_node_default(t, node);

	return f < 0 ? "(none)" : t->forwarders[f].name;
}

static void test_example(void **state)
{
	fwd_error_t err;
	struct topology *t = topo_load(ETC "/topology.yaml", &err);

	if (!t)
		fail_msg("%s", err.text);
	assert_int_equal(t->n_nodes, 1024);
	assert_int_equal(t->n_forwarders, 12);
	assert_int_equal(t->n_osts, 4);
	assert_int_equal(t->n_mapping, 4);
	assert_string_equal(t->mapping[2].nodes, "c[513-768]");
	assert_int_equal(t->mapping[2].count, 256);
	assert_string_equal(fwd_of(t, "c1"), "fwd01");
	assert_string_equal(fwd_of(t, "c256"), "fwd01");
	assert_string_equal(fwd_of(t, "c257"), "fwd02");
	assert_string_equal(fwd_of(t, "c1024"), "fwd04");
	assert_string_equal(fwd_of(t, "c1025"), "(none)");
	assert_int_equal(t->forwarders[4].role, TOPO_ROLE_BACKUP);
	assert_string_equal(t->forwarders[4].group, "rack1");
	assert_string_equal(t->forwarders[4].nid, "10.1.0.15@o2ib");
	assert_true(t->forwarders[0].bandwidth_bps == 2.5e9);
	assert_true(t->osts[3].bandwidth_bps == 1.2e9);
	assert_string_equal(t->path, ETC "/topology.yaml");
	topo_destroy(t);
}

static void test_taihulight(void **state)
{
	fwd_error_t err;
	struct topology *t = topo_load(ETC "/topology-taihulight.yaml", &err);
	size_t service = 0;

	if (!t)
		fail_msg("%s", err.text);
	assert_int_equal(t->n_nodes, 40960);
	assert_int_equal(t->n_forwarders, 240);
	for (size_t i = 0; i < t->n_forwarders; i++) {
		service += t->forwarders[i].role == TOPO_ROLE_SERVICE;
		assert_true(t->forwarders[i].bandwidth_bps == 2.5e9);
	}
	assert_int_equal(service, 80);
	assert_int_equal(t->n_mapping, 80);
	for (size_t i = 0; i < t->n_mapping; i++)
		assert_int_equal(t->mapping[i].count, 512);
	/* Six forwarders per cabinet, the first two in service. */
	assert_string_equal(fwd_of(t, "c1"), "fwd001");
	assert_string_equal(fwd_of(t, "c512"), "fwd001");
	assert_string_equal(fwd_of(t, "c513"), "fwd002");
	assert_string_equal(fwd_of(t, "c1025"), "fwd007");
	assert_string_equal(fwd_of(t, "c40960"), "fwd236");
	assert_string_equal(t->forwarders[topo_node_default(t, "c40960")].group,
			    "cab39");
	assert_string_equal(t->mapping[79].nodes, "c[40449-40960]");
	topo_destroy(t);
}

/* Explicit entries first, then the rule for the rest; node list as a
 * list of hostlists; no OSTs. */
static void test_mixed_mapping(void **state)
{
	static const char text[] =
		"forwarders:\n"
		"  - {name: a, bandwidth: 1GB/s, role: service}\n"
		"  - {name: b, bandwidth: 1GB/s, role: backup}\n"
		"  - {name: c, bandwidth: 1GB/s, role: service}\n"
		"compute_nodes: [\"n[1-4]\", \"m[1-2]\"]\n"
		"mapping:\n"
		"  - {nodes: \"n[2-3]\", forwarder: b}\n"
		"nodes_per_forwarder: 3\n";
	fwd_error_t err;
	struct topology *t = topo_load(write_file("mixed.yaml", text), &err);

	if (!t)
		fail_msg("%s", err.text);
	assert_int_equal(t->n_nodes, 6);
	assert_int_equal(t->n_osts, 0);
	assert_string_equal(fwd_of(t, "n2"), "b");
	assert_string_equal(fwd_of(t, "n1"), "a");
	assert_string_equal(fwd_of(t, "n4"), "a");
	assert_string_equal(fwd_of(t, "m1"), "a");
	assert_string_equal(fwd_of(t, "m2"), "c");
	/* The address defaults to the name, the group to "default". */
	assert_string_equal(t->forwarders[0].address, "a");
	assert_string_equal(t->forwarders[0].group, "default");
	assert_null(t->forwarders[0].nid);
	topo_destroy(t);
}

#define FWD2                                                  \
	"forwarders:\n"                                       \
	"  - {name: f1, bandwidth: 2.5GB/s, role: service}\n" \
	"  - {name: f2, bandwidth: 2.5GB/s, role: service}\n"
#define TOP_KEYS "forwarders, osts, compute_nodes, mapping, nodes_per_forwarder"

static const struct {
	const char *name;
	const char *text;
	const char *msg;
} bad[] = {
	{"unknown top key", FWD2 "compute_nodes: c[1-2]\nnodes: 2\n",
	 "FILE:5:1: nodes: unknown key; allowed keys: " TOP_KEYS},
	{"unknown forwarder key",
	 "forwarders:\n  - {name: f1, bw: 1GB/s, role: service}\n",
	 "FILE:2:16: forwarders[0].bw: unknown key; allowed keys: name, "
	 "address, bandwidth, group, role, nid"},
	{"duplicate yaml key",
	 "forwarders: []\ncompute_nodes: c1\nforwarders: []\n",
	 "FILE:3:1: forwarders: duplicate key 'forwarders' (first at line "
	 "1)"},
	{"duplicate forwarder name",
	 "forwarders:\n"
	 "  - {name: f1, bandwidth: 1GB/s, role: service}\n"
	 "  - {name: f1, bandwidth: 1GB/s, role: backup}\n"
	 "compute_nodes: c1\n",
	 "FILE:3:12: forwarders[1].name: forwarder 'f1' is defined twice"},
	{"missing role", "forwarders:\n  - {name: f1, bandwidth: 1GB/s}\n",
	 "FILE:2:5: forwarders[0]: missing key 'role' (service or backup)"},
	{"bad role",
	 "forwarders:\n  - {name: f1, bandwidth: 1GB/s, role: spare}\n",
	 "FILE:2:40: forwarders[0].role: value 'spare': expected one of "
	 "service, backup"},
	{"missing name", "forwarders:\n  - {bandwidth: 1GB/s, role: backup}\n",
	 "FILE:2:5: forwarders[0]: missing key 'name'"},
	{"bandwidth not a rate",
	 "forwarders:\n  - {name: f1, bandwidth: 2.5GB, role: service}\n",
	 "FILE:2:27: forwarders[0].bandwidth: value '2.5GB': a size is not a "
	 "rate (add /s); a rate is a number of bytes per second with an "
	 "optional unit k, M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi "
	 "(powers of 1024) followed by B/s, e.g. 2.5GB/s or 800MiB/s"},
	{"zero bandwidth",
	 "forwarders:\n  - {name: f1, bandwidth: 0, role: service}\n",
	 "FILE:2:27: forwarders[0].bandwidth: value '0': expected a rate "
	 "greater than 0"},
	{"forwarders not a list", "forwarders: f1\ncompute_nodes: c1\n",
	 "FILE:1:13: forwarders: value 'f1': expected a non-empty list of "
	 "forwarders {name, address, bandwidth, group, role}"},
	{"no forwarders", "compute_nodes: c1\n",
	 "FILE:1:1: missing key 'forwarders' (a list of {name, address, "
	 "bandwidth, group, role})"},
	{"no compute nodes", FWD2,
	 "FILE:1:1: missing key 'compute_nodes' (a Slurm hostlist such as "
	 "c[1-1024], or a list of them)"},
	{"bad hostlist", FWD2 "compute_nodes: \"c[1-\"\n",
	 "FILE:4:16: compute_nodes: invalid node list 'c[1-' (want a Slurm "
	 "hostlist such as c[1-512])"},
	{"unknown forwarder in mapping",
	 FWD2 "compute_nodes: c[1-4]\n"
	      "mapping:\n  - {nodes: \"c[1-4]\", forwarder: f9}\n",
	 "FILE:6:34: mapping[0].forwarder: value 'f9': unknown forwarder; "
	 "expected the name of a forwarder defined under forwarders"},
	{"overlapping ranges",
	 FWD2 "compute_nodes: c[1-4]\n"
	      "mapping:\n"
	      "  - {nodes: \"c[1-3]\", forwarder: f1}\n"
	      "  - {nodes: \"c[3-4]\", forwarder: f2}\n",
	 "FILE:7:13: mapping[1].nodes: node 'c3' is mapped to both 'f1' and "
	 "'f2'"},
	{"uncovered nodes",
	 FWD2 "compute_nodes: c[1-10]\n"
	      "mapping:\n"
	      "  - {nodes: \"c[1-8]\", forwarder: f1}\n",
	 "FILE:4:16: compute_nodes: 2 compute nodes are not covered by the "
	 "mapping, first 'c9'"},
	{"one node uncovered",
	 FWD2 "compute_nodes: [\"c[1-2]\", d7]\n"
	      "mapping:\n  - {nodes: \"c[1-2]\", forwarder: f2}\n",
	 "FILE:4:16: compute_nodes: 1 compute node is not covered by the "
	 "mapping, first 'd7'"},
	{"mapping names an undeclared node",
	 FWD2 "compute_nodes: c[1-2]\n"
	      "mapping:\n  - {nodes: \"c[2-3]\", forwarder: f1}\n",
	 "FILE:6:13: mapping[0].nodes: node 'c3' is not a declared compute "
	 "node"},
	{"node declared twice", FWD2 "compute_nodes: [\"c[1-2]\", c2]\n",
	 "FILE:4:27: compute_nodes[1]: compute node 'c2' is declared twice"},
	{"not enough service forwarders",
	 FWD2 "compute_nodes: c[1-10]\nnodes_per_forwarder: 4\n",
	 "FILE:5:22: nodes_per_forwarder: 2 compute nodes from 'c9' on are "
	 "left unmapped: not enough service forwarders at 4 nodes each"},
	{"zero per forwarder",
	 FWD2 "compute_nodes: c1\nnodes_per_forwarder: 0\n",
	 "FILE:5:22: nodes_per_forwarder: value '0': expected a whole number "
	 "from 1 to 100000000"},
	{"per forwarder not a number",
	 FWD2 "compute_nodes: c1\nnodes_per_forwarder: many\n",
	 "FILE:5:22: nodes_per_forwarder: value 'many': expected a whole "
	 "number from 1 to 100000000"},
	{"duplicate OST",
	 FWD2 "osts:\n  - {name: o1, bandwidth: 1GB/s}\n"
	      "  - {name: o1, bandwidth: 1GB/s}\ncompute_nodes: c1\n",
	 "FILE:6:12: osts[1].name: OST 'o1' is defined twice"},
	{"unknown OST key", FWD2 "osts:\n  - {name: o1, speed: 1GB/s}\n",
	 "FILE:5:16: osts[0].speed: unknown key; allowed keys: name, "
	 "bandwidth"},
	{"forwarder name with a space",
	 "forwarders:\n  - {name: \"fwd 1\", bandwidth: 1GB/s, role: "
	 "service}\n",
	 "FILE:2:12: forwarders[0].name: value 'fwd 1': expected a name of at "
	 "most 64 letters, digits, '.', '_' and '-'"},
	{"address with a newline",
	 "forwarders:\n  - {name: f1, address: \"10.0.0.1\\nprevious=/x\", "
	 "bandwidth: 1GB/s, role: service}\n",
	 "FILE:2:25: forwarders[0].address: value '10.0.0.1\nprevious=/x': "
	 "expected an IP address or host name of at most 253 letters, "
	 "digits, '.', '-', '_', ':' and '%', not starting with '-'"},
	{"address like an option",
	 "forwarders:\n  - {name: f1, address: -oX, bandwidth: 1GB/s, "
	 "role: service}\n",
	 "FILE:2:25: forwarders[0].address: value '-oX': expected an IP "
	 "address or host name of at most 253 letters, digits, '.', '-', "
	 "'_', ':' and '%', not starting with '-'"},
	{"group with a tab",
	 "forwarders:\n  - {name: f1, group: \"a\\tb\", bandwidth: 1GB/s, "
	 "role: service}\n",
	 "FILE:2:23: forwarders[0].group: value 'a\tb': expected a name of at "
	 "most 64 letters, digits, '.', '_' and '-'"},
	{"NID with a space",
	 "forwarders:\n  - {name: f1, nid: \"1@o2ib 2\", bandwidth: 1GB/s, "
	 "role: service}\n",
	 "FILE:2:21: forwarders[0].nid: value '1@o2ib 2': expected an LNet "
	 "NID of at most 128 letters, digits, '.', '@', ':', '_' and '-', "
	 "not starting with '-'"},
	{"OST name with a semicolon",
	 FWD2 "osts:\n  - {name: \"o1;rm\", bandwidth: 1GB/s}\n",
	 "FILE:5:12: osts[0].name: value 'o1;rm': expected a name of at most "
	 "64 letters, digits, '.', '_' and '-'"},
	{"root a list", "- f1\n",
	 "FILE:1:1: the topology must be a mapping with keys " TOP_KEYS},
	{"empty file", "", "FILE:1:1: file is empty"},
	{"invalid utf-8", FWD2 "compute_nodes: c\xff\n",
	 "FILE:4:17: invalid UTF-8: invalid leading UTF-8 octet (byte "
	 "0xff)"},
};

static void test_bad(void **state)
{
	fwd_error_t err;
	int failed = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *path = write_file("bad.yaml", bad[i].text);
		struct topology *t;
		char full[2048];

		memset(&err, 0, sizeof(err));
		errno = 0;
		t = topo_load(path, &err);
		if (t) {
			print_error("%s: loaded\n", bad[i].name);
			topo_destroy(t);
			failed++;
			continue;
		}
		if (!errno) {
			print_error("%s: errno not set\n", bad[i].name);
			failed++;
		}
		snprintf(full, sizeof(full), "%s%s", path, bad[i].msg + 4);
		if (strcmp(err.text, full)) {
			print_error("%s:\n got  %s\n want %s\n", bad[i].name,
				    err.text, full);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void test_file_errors(void **state)
{
	fwd_error_t err;
	char path[256], want[512];

	snprintf(path, sizeof(path), "%s/none.yaml", tmpdir);
	assert_null(topo_load(path, &err));
	assert_int_equal(errno, ENOENT);
	snprintf(want, sizeof(want),
		 "%s: cannot open: No such file or directory", path);
	assert_string_equal(err.text, want);

	/* Simulated EACCES (see __wrap_open). */
	snprintf(path, sizeof(path), "%s/eacces.yaml", tmpdir);
	assert_null(topo_load(path, &err));
	assert_int_equal(errno, EACCES);
	snprintf(want, sizeof(want), "%s: cannot open: Permission denied",
		 path);
	assert_string_equal(err.text, want);

	assert_null(topo_load(tmpdir, &err));
	assert_int_equal(errno, EISDIR);
	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", tmpdir);
	assert_string_equal(err.text, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_taihulight),
		cmocka_unit_test(test_mixed_mapping),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_file_errors),
	};

	return cmocka_run_group_tests_name("topology_load", tests, setup,
					   teardown);
}
