# SPDX-License-Identifier: GPL-2.0-or-later
# bench/: benchmarks, built and run only by `make bench`; each prints its
# figures next to a reference measured in the same run.
BENCH_CFLAGS = $(AM_CFLAGS) -DTOP_SRCDIR='"$(abs_top_srcdir)"' \
	-DTOP_BUILDDIR='"$(abs_top_builddir)"'
BENCH_DB = bench/bench_testdb.c bench/testdb.h
# Every benchmark reports its figures with bench_figure().
BENCH_REPORT = bench/report.c bench/report.h
# A batch decision timed against the same jobs decided one at a time.
BENCH_BATCH = bench/batch.c bench/batch.h

BENCH_BINS = bench/bench_topology bench/bench_decide bench/bench_sim \
	bench/bench_ingest bench/bench_db bench/bench_health \
	bench/bench_trace bench/bench_prolog bench/bench_fanout bench/bench_forge \
	bench/bench_report
# Shell benchmarks: bench/NAME.sh with this tree's paths filled in.
BENCH_SHELL = bench/bench_burst
BENCHES += $(BENCH_BINS) $(BENCH_SHELL)
EXTRA_PROGRAMS += $(BENCH_BINS) bench/hook_timer
CLEANFILES += $(BENCHES) bench/hook_timer

bench_bench_topology_SOURCES = bench/bench_topology.c $(BENCH_REPORT)
bench_bench_topology_CFLAGS = $(BENCH_CFLAGS)
bench_bench_topology_LDADD = $(FWD_ALLOCATOR_LIBS)
bench_bench_decide_SOURCES = bench/bench_decide.c $(BENCH_BATCH) \
	$(BENCH_REPORT)
bench_bench_decide_CFLAGS = $(BENCH_CFLAGS)
bench_bench_decide_LDADD = $(FWD_ALLOCATOR_LIBS)
bench_bench_sim_SOURCES = bench/bench_sim.c $(BENCH_REPORT)
bench_bench_sim_CFLAGS = $(BENCH_CFLAGS)
bench_bench_sim_LDADD = $(FWD_SIM_LIBS)
# FORGE measurements (bench/data): static, dfra, oracle; batch decision time.
bench_bench_forge_SOURCES = bench/bench_forge.c $(BENCH_BATCH) \
	$(BENCH_REPORT)
bench_bench_forge_CFLAGS = $(BENCH_CFLAGS)
bench_bench_forge_LDADD = $(FWD_SIM_LIBS)
bench_bench_ingest_SOURCES = bench/bench_ingest.c $(BENCH_DB) $(BENCH_REPORT)
bench_bench_ingest_CFLAGS = $(BENCH_CFLAGS)
bench_bench_ingest_LDADD = $(FWD_MONITOR_LIBS)
bench_bench_db_SOURCES = bench/bench_db.c $(BENCH_DB) $(BENCH_REPORT)
bench_bench_db_CFLAGS = $(BENCH_CFLAGS)
bench_bench_db_LDADD = $(FWD_ALL_LIBS)
bench_bench_health_SOURCES = bench/bench_health.c $(BENCH_DB) $(BENCH_REPORT)
bench_bench_health_CFLAGS = $(BENCH_CFLAGS)
bench_bench_health_LDADD = $(FWD_CONTROLLER_LIBS)
bench_bench_trace_SOURCES = bench/bench_trace.c $(BENCH_REPORT)
bench_bench_trace_CFLAGS = $(BENCH_CFLAGS)
bench_bench_trace_LDADD = $(FWD_PROFILER_LIBS)
# The reports on a TaihuLight-scale store (report/).
bench_bench_report_SOURCES = bench/bench_report.c $(BENCH_DB) $(BENCH_REPORT)
bench_bench_report_CFLAGS = $(BENCH_CFLAGS)
bench_bench_report_LDADD = $(FWD_REPORT_LIBS)
# Controller and node prolog timings.
bench_bench_prolog_SOURCES = bench/bench_prolog.c $(BENCH_DB) $(BENCH_REPORT)
bench_bench_prolog_CFLAGS = $(BENCH_CFLAGS)
bench_bench_prolog_LDADD = libfwdnode.la $(FWD_ALL_LIBS)
# One job's node prologs at once: decision file and database.
bench_bench_fanout_SOURCES = bench/bench_fanout.c bench/fanout.c \
	bench/fanout.h $(BENCH_DB) $(BENCH_REPORT)
bench_bench_fanout_CFLAGS = $(BENCH_CFLAGS)
bench_bench_fanout_LDADD = libfwdnode.la $(FWD_ALL_LIBS)
# A burst of short jobs on scripts/minicluster: Slurm alone against
# fwdalloc's controller hooks, with Slurm's own scheduling; hook_timer
# times each hook as slurmctld runs it.
bench_hook_timer_SOURCES = bench/hook_timer.c
bench/bench_burst: bench/bench_burst.sh bench/hook_timer
	$(AM_V_GEN)sed -e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g' \
		-e 's|@abs_top_builddir[@]|$(abs_top_builddir)|g' \
		$(srcdir)/bench/bench_burst.sh >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
EXTRA_DIST += bench/bench_burst.sh bench/run.sh bench/data/README.md \
	bench/data/forge-mn4.csv bench/data/forge-sdumont.csv bench/data/forge.py
CLEANFILES += bench-results.json bench-results.md
