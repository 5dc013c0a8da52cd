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

# ---- what-if simulator (allocator/sim*, cli/cmd_sim.c) -------------------
libfwdalloc_la_SOURCES += \
	allocator/sim.c allocator/sim.h allocator/sim_internal.h \
	allocator/sim_input.c allocator/sim_dfra.c allocator/sim_report.c
fwdctl_SOURCES += cli/cmd_sim.c

check_PROGRAMS += tests/unit/test_sim
TESTS += tests/unit/test_sim
tests_unit_test_sim_SOURCES = tests/unit/test_sim.c
tests_unit_test_sim_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_sim_LDADD = $(FWD_TEST_LIBS)

EXTRA_PROGRAMS += bench/bench_sim
BENCHES += bench/bench_sim
bench_bench_sim_SOURCES = bench/bench_sim.c
bench_bench_sim_CFLAGS = $(FWD_TEST_CFLAGS)
bench_bench_sim_LDADD = $(FWD_ALL_LIBS)
# ---- end of simulator ----------------------------------------------------
