# SPDX-License-Identifier: GPL-2.0-or-later
# profiler/: compute-node trace parsing, first-pass compression, job I/O
# summaries and per-application profiles.
noinst_LTLIBRARIES += libfwdprofiler.la
FWD_PROFILER_LIB = libfwdprofiler.la
libfwdprofiler_la_SOURCES = \
	profiler/trace.c profiler/trace.h \
	profiler/summary.c profiler/summary.h
libfwdprofiler_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MARIADB_CFLAGS)
EXTRA_DIST += profiler/README.md
