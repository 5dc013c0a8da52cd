# SPDX-License-Identifier: GPL-2.0-or-later
# profiler/: compute-node trace parsing, first-pass compression, job I/O
# summaries and per-application profiles.
noinst_LTLIBRARIES += libfwdprofiler.la
FWD_PROFILER_LIB = libfwdprofiler.la
libfwdprofiler_la_SOURCES = \
	profiler/trace.c profiler/trace.h \
	profiler/summary.c profiler/summary.h \
	profiler/synth.c profiler/synth.h \
	profiler/profile.c profiler/profile.h
libfwdprofiler_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MARIADB_CFLAGS)
EXTRA_DIST += profiler/README.md

check_PROGRAMS += tests/unit/test_trace tests/unit/test_summary
TESTS += tests/unit/test_trace tests/unit/test_summary
tests_unit_test_trace_SOURCES = tests/unit/test_trace.c
tests_unit_test_trace_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_trace_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_summary_SOURCES = tests/unit/test_summary.c
tests_unit_test_summary_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_summary_LDADD = $(FWD_TEST_LIBS)
check_PROGRAMS += tests/unit/test_profile
TESTS += tests/unit/test_profile
tests_unit_test_profile_SOURCES = tests/unit/test_profile.c
tests_unit_test_profile_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_profile_LDADD = $(FWD_TEST_LIBS)
fwdctl_SOURCES += cli/cmd_trace.c cli/cmd_trace.h

EXTRA_PROGRAMS += bench/bench_trace
BENCHES += bench/bench_trace
bench_bench_trace_SOURCES = bench/bench_trace.c
bench_bench_trace_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS)
bench_bench_trace_LDADD = $(FWD_ALL_LIBS)
