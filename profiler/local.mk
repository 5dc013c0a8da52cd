# SPDX-License-Identifier: GPL-2.0-or-later
# profiler/: compute-node trace parsing, first-pass compression, job I/O
# summaries and per-application profiles (profiler/README.md).
noinst_LTLIBRARIES += libfwdprofiler.la
FWD_PROFILER_LIB = libfwdprofiler.la
libfwdprofiler_la_SOURCES = \
	profiler/trace.c profiler/trace.h \
	profiler/summary.c profiler/summary.h \
	profiler/synth.c profiler/synth.h \
	profiler/profile.c profiler/profile.h \
	profiler/profile_db.c
libfwdprofiler_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MARIADB_CFLAGS)
EXTRA_DIST += profiler/README.md

# fwdctl trace ..., fwdctl profile ...
fwdctl_SOURCES += cli/cmd_trace.c cli/cmd_trace.h cli/cmd_trace_ingest.c \
	cli/cmd_profile.c

check_PROGRAMS += tests/unit/test_trace tests/unit/test_summary \
	tests/unit/test_profile tests/unit/test_profile_db
TESTS += tests/unit/test_trace tests/unit/test_summary \
	tests/unit/test_profile tests/unit/test_profile_db
tests_unit_test_trace_SOURCES = tests/unit/test_trace.c
tests_unit_test_trace_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_trace_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_summary_SOURCES = tests/unit/test_summary.c
tests_unit_test_summary_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_summary_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_profile_SOURCES = tests/unit/test_profile.c
tests_unit_test_profile_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_profile_LDADD = $(FWD_TEST_LIBS)
# the database failing during a lookup, faked (the working paths run
# against a real MariaDB in tests/integration/profile_db.sh)
tests_unit_test_profile_db_SOURCES = tests/unit/test_profile_db.c
tests_unit_test_profile_db_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_profile_db_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_profile_db_LDFLAGS = $(AM_LDFLAGS) \
	-Wl,--wrap=db_prepare,--wrap=db_exec,--wrap=db_fetch \
	-Wl,--wrap=db_stmt_close \
	-Wl,--wrap=db_bind_int64,--wrap=db_bind_uint64,--wrap=db_bind_double \
	-Wl,--wrap=db_bind_text,--wrap=db_bind_null

TESTS += tests/integration/profile_db.sh
EXTRA_DIST += tests/integration/profile_db.sh

EXTRA_PROGRAMS += bench/bench_trace
BENCHES += bench/bench_trace
bench_bench_trace_SOURCES = bench/bench_trace.c
bench_bench_trace_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS)
bench_bench_trace_LDADD = $(FWD_ALL_LIBS)
