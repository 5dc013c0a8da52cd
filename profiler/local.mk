# SPDX-License-Identifier: GPL-2.0-or-later
# profiler/: compute-node trace parsing, first-pass compression, job I/O
# summaries and per-application profiles (profiler/README.md).
noinst_LTLIBRARIES += libfwdprofiler.la
libfwdprofiler_la_SOURCES = \
	profiler/trace.c profiler/trace.h \
	profiler/trace_zstd.c profiler/trace_zstd.h \
	profiler/summary.c profiler/summary.h \
	profiler/synth.c profiler/synth.h \
	profiler/profile.c profiler/profile.h \
	profiler/profile_priv.h profiler/history.c profiler/profile_store.c \
	profiler/job_io.c profiler/job_io.h profiler/darshan.c profiler/darshan.h
EXTRA_DIST += profiler/README.md
