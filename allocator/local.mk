# SPDX-License-Identifier: GPL-2.0-or-later
# allocator/: topology, the decision engine, the ledger, the simulator.
noinst_LTLIBRARIES += libfwdalloc.la
FWD_ALLOCATOR_LIB = libfwdalloc.la
libfwdalloc_la_SOURCES = \
	allocator/topology.c allocator/topology.h
libfwdalloc_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)

check_PROGRAMS += tests/unit/test_topology
TESTS += tests/unit/test_topology
tests_unit_test_topology_SOURCES = tests/unit/test_topology.c
tests_unit_test_topology_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_topology_LDADD = $(FWD_TEST_LIBS)
