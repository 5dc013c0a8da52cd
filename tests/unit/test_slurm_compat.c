/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common/slurm_compat.h against the libslurm this tree is built with, on
 * every release of the test matrix: ranged strings far longer than any
 * fixed buffer (and longer than the first buffer the compat call tries),
 * empty lists, a TaihuLight-size list of 40,960 nodes, and the errno
 * wrapper.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/slurm_compat.h"

#define MACHINE_NODES 40960

/* "c[1,3,5,...]": every other node of a prefix, written by hand. */
static char *every_other(const char *prefix, int n)
{
	size_t cap = strlen(prefix) + 3 + (size_t)n * 7, len;
	char *s = malloc(cap);

	assert_non_null(s);
	len = (size_t)snprintf(s, cap, "%s[", prefix);
	for (int i = 1; i <= n; i += 2)
		len += (size_t)snprintf(s + len, cap - len, "%s%d",
					i > 1 ? "," : "", i);
	snprintf(s + len, cap - len, "]");
	return s;
}

static void test_empty_list(void **state)
{
	fwd_hostlist_t hl = slurm_hostlist_create(NULL);
	char *s;

	(void)state;
	assert_non_null(hl);
	assert_int_equal(slurm_hostlist_count(hl), 0);
	s = fwd_hostlist_ranged(hl);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	assert_null(slurm_hostlist_shift(hl));
	slurm_hostlist_destroy(hl);
}

static void test_no_list(void **state)
{
	(void)state;
	errno = 0;
	assert_null(fwd_hostlist_ranged(NULL));
	assert_int_equal(errno, EINVAL);
}

static void test_one_node(void **state)
{
	fwd_hostlist_t hl = slurm_hostlist_create("c7");
	char *s;

	(void)state;
	assert_non_null(hl);
	s = fwd_hostlist_ranged(hl);
	assert_string_equal(s, "c7");
	free(s);
	slurm_hostlist_destroy(hl);
}

/* Every node of the machine pushed one by one collapses to one range;
 * shifting gives them back in order and find() sees the last one. */
static void test_machine_range(void **state)
{
	fwd_hostlist_t hl = slurm_hostlist_create(NULL);
	char name[32], *s, *h;
	int i;

	(void)state;
	assert_non_null(hl);
	for (i = 1; i <= MACHINE_NODES; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		assert_int_not_equal(slurm_hostlist_push_host(hl, name), 0);
	}
	assert_int_equal(slurm_hostlist_count(hl), MACHINE_NODES);
	s = fwd_hostlist_ranged(hl);
	assert_string_equal(s, "c[1-40960]");
	free(s);
	assert_int_equal(slurm_hostlist_find(hl, "c40960"), MACHINE_NODES - 1);
	assert_true(slurm_hostlist_find(hl, "c40961") < 0);
	for (i = 1; (h = slurm_hostlist_shift(hl)); i++) {
		snprintf(name, sizeof(name), "c%d", i);
		assert_string_equal(h, name);
		free(h);
	}
	assert_int_equal(i - 1, MACHINE_NODES);
	assert_int_equal(slurm_hostlist_count(hl), 0);
	slurm_hostlist_destroy(hl);
}

/* Half the machine with no two names adjacent: a ranged string of about
 * 110 kB, which the call grows its buffer for several times. */
static void test_ranged_longer_than_any_buffer(void **state)
{
	char *want = every_other("c", MACHINE_NODES), *got;
	fwd_hostlist_t hl = slurm_hostlist_create(want);

	(void)state;
	assert_non_null(hl);
	assert_int_equal(slurm_hostlist_count(hl), MACHINE_NODES / 2);
	assert_true(strlen(want) > 100000);
	got = fwd_hostlist_ranged(hl);
	assert_non_null(got);
	assert_int_equal(strlen(got), strlen(want));
	assert_string_equal(got, want);
	slurm_hostlist_destroy(hl);
	/* ...and it reads back as the same set. */
	hl = slurm_hostlist_create(got);
	assert_int_equal(slurm_hostlist_count(hl), MACHINE_NODES / 2);
	assert_true(slurm_hostlist_find(hl, "c40959") >= 0);
	assert_true(slurm_hostlist_find(hl, "c40960") < 0);
	slurm_hostlist_destroy(hl);
	free(got);
	free(want);
}

/* Lengths around each buffer size the call tries (256, then x4): the
 * string whose terminating NUL lands on the last byte is whole. */
static void test_ranged_at_buffer_edges(void **state)
{
	static const size_t lengths[] = {250,  253,  254,  255,	 256,  257, 258,
					 1021, 1022, 1023, 1024, 1025, 1030};

	(void)state;
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		size_t target = lengths[i];
		char name[1100], *got;
		fwd_hostlist_t hl;

		/* One host name of exactly `target` characters. */
		memset(name, 'n', target);
		name[target] = '\0';
		hl = slurm_hostlist_create(name);
		assert_non_null(hl);
		got = fwd_hostlist_ranged(hl);
		assert_non_null(got);
		assert_int_equal(strlen(got), target);
		assert_string_equal(got, name);
		free(got);
		slurm_hostlist_destroy(hl);
	}
}

static void test_errno_wrapper(void **state)
{
	(void)state;
	errno = ESLURM_INVALID_JOB_ID;
	assert_int_equal(fwd_slurm_errno(), ESLURM_INVALID_JOB_ID);
	errno = 0;
	assert_int_equal(fwd_slurm_errno(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_list),
		cmocka_unit_test(test_no_list),
		cmocka_unit_test(test_one_node),
		cmocka_unit_test(test_machine_range),
		cmocka_unit_test(test_ranged_longer_than_any_buffer),
		cmocka_unit_test(test_ranged_at_buffer_edges),
		cmocka_unit_test(test_errno_wrapper),
	};

	printf("# built with Slurm %d.%02d headers\n",
	       (int)SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
	       (int)SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
