# SPDX-License-Identifier: GPL-2.0-or-later
# allocator/: topology, the decision engine, the ledger, the simulator.
noinst_LTLIBRARIES += libfwdalloc.la
FWD_ALLOCATOR_LIB = libfwdalloc.la
libfwdalloc_la_SOURCES = \
	allocator/topology.c allocator/topology.h \
	allocator/decide.c allocator/decide.h \
	allocator/ledger.c allocator/ledger.h \
	allocator/jobio.c allocator/jobio.h
libfwdalloc_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)

check_PROGRAMS += tests/unit/test_topology
TESTS += tests/unit/test_topology
tests_unit_test_topology_SOURCES = tests/unit/test_topology.c
tests_unit_test_topology_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_topology_LDADD = $(FWD_TEST_LIBS)

check_PROGRAMS += tests/unit/test_decide
TESTS += tests/unit/test_decide
tests_unit_test_decide_SOURCES = tests/unit/test_decide.c
tests_unit_test_decide_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_decide_LDADD = $(FWD_TEST_LIBS)

fwdctl_SOURCES += cli/cmd_decide.c

TESTS += tests/integration/cli_decide.sh
EXTRA_DIST += tests/integration/cli_decide.sh allocator/README.md

EXTRA_PROGRAMS += bench/bench_decide
BENCHES += bench/bench_decide
bench_bench_decide_SOURCES = bench/bench_decide.c
bench_bench_decide_CFLAGS = $(FWD_TEST_CFLAGS) -DTOPSRCDIR='"$(abs_top_srcdir)"'
bench_bench_decide_LDADD = $(FWD_ALL_LIBS)

# The topology YAML loader and its command (policies/ worker's part).
libfwdalloc_la_SOURCES += allocator/topology_load.c
fwdctl_SOURCES += cli/cmd_topology.c
check_PROGRAMS += tests/unit/test_topology_load
TESTS += tests/unit/test_topology_load
tests_unit_test_topology_load_SOURCES = tests/unit/test_topology_load.c \
	tests/unit/wrap_eacces.c
tests_unit_test_topology_load_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_topology_load_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_topology_load_LDFLAGS = -Wl,--wrap=open

EXTRA_PROGRAMS += bench/bench_topology
BENCHES += bench/bench_topology
bench_bench_topology_SOURCES = bench/bench_topology.c
bench_bench_topology_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS) \
	-DETCDIR='"$(abs_top_srcdir)/etc"'
bench_bench_topology_LDADD = $(FWD_ALL_LIBS)

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

TESTS += tests/integration/cli_sim.sh
EXTRA_DIST += tests/integration/cli_sim.sh allocator/SIM.md
# ---- end of simulator ----------------------------------------------------
