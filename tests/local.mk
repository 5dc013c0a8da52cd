# SPDX-License-Identifier: GPL-2.0-or-later
# tests/: every test speaks TAP (cmocka with CMOCKA_MESSAGE_OUTPUT=TAP,
# shell tests through tests/integration/tap.sh), so `make check` counts
# individual test cases, not programs.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
AM_TESTS_ENVIRONMENT += CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT;
# A sanitized build (scripts/test --sanitize): libslurm's own leaks are
# not ours (tests/lsan.supp).
AM_TESTS_ENVIRONMENT += \
	LSAN_OPTIONS=suppressions=$(abs_top_srcdir)/tests/lsan.supp:print_suppressions=0; \
	export LSAN_OPTIONS;
EXTRA_DIST += tests/integration/tap.sh tests/fixtures tests/lsan.supp \
	tests/unit/xorshift.h
# The installation test in a fresh Debian root (scripts/release-matrix).
EXTRA_DIST += tests/install/debian_root.sh
# automake does not distribute the TAP driver autogen.sh copies in.
EXTRA_DIST += build-aux/tap-driver.sh

# No test may hang the suite: each gets a wall-clock limit (a hung server
# client is killed, the test fails, the run goes on).  25 minutes: the
# longest test (reliability.sh) took 15 on a loaded 2-core machine whose
# process starts cost 25 ms each.
FWD_TEST_TIMEOUT = timeout --kill-after=15 1500
LOG_COMPILER = $(FWD_TEST_TIMEOUT)
SH_LOG_COMPILER = $(FWD_TEST_TIMEOUT) $(SHELL)

# ---- unit tests: each links the library it tests and what lies below it --
# common/
UNIT_COMMON = tests/unit/test_units tests/unit/test_sha256 \
	tests/unit/test_yamldoc tests/unit/test_common tests/unit/test_run \
	tests/unit/test_slurm_compat
tests_unit_test_slurm_compat_SOURCES = tests/unit/test_slurm_compat.c
tests_unit_test_slurm_compat_LDADD = $(SLURM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_common_SOURCES = tests/unit/test_common.c
tests_unit_test_common_LDADD = $(FWD_COMMON_LIBS) $(CMOCKA_LIBS)
tests_unit_test_units_SOURCES = tests/unit/test_units.c
tests_unit_test_units_LDADD = $(FWD_COMMON_LIBS) $(CMOCKA_LIBS)
tests_unit_test_sha256_SOURCES = tests/unit/test_sha256.c
tests_unit_test_sha256_LDADD = $(FWD_COMMON_LIBS) $(CMOCKA_LIBS)
tests_unit_test_yamldoc_SOURCES = tests/unit/test_yamldoc.c \
	tests/unit/wrap_eacces.c
tests_unit_test_yamldoc_LDADD = $(FWD_COMMON_LIBS) $(CMOCKA_LIBS)
tests_unit_test_yamldoc_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=open
tests_unit_test_run_SOURCES = tests/unit/test_run.c
tests_unit_test_run_LDADD = $(FWD_COMMON_LIBS) $(CMOCKA_LIBS)

# db/
UNIT_DB = tests/unit/test_db tests/unit/test_breaker
tests_unit_test_breaker_SOURCES = tests/unit/test_breaker.c
tests_unit_test_breaker_LDADD = $(FWD_DB_LIBS) $(CMOCKA_LIBS)
tests_unit_test_db_SOURCES = tests/unit/test_db.c
tests_unit_test_db_LDADD = $(FWD_DB_LIBS) $(CMOCKA_LIBS)

# topology/
UNIT_TOPOLOGY = tests/unit/test_topology tests/unit/test_topology_load \
	tests/unit/test_topo_cache
tests_unit_test_topo_cache_SOURCES = tests/unit/test_topo_cache.c
tests_unit_test_topo_cache_LDADD = $(FWD_TOPOLOGY_LIBS) $(CMOCKA_LIBS)
tests_unit_test_topology_SOURCES = tests/unit/test_topology.c
tests_unit_test_topology_LDADD = $(FWD_TOPOLOGY_LIBS) $(CMOCKA_LIBS)
tests_unit_test_topology_load_SOURCES = tests/unit/test_topology_load.c \
	tests/unit/wrap_eacces.c
tests_unit_test_topology_load_LDADD = $(FWD_TOPOLOGY_LIBS) $(CMOCKA_LIBS)
tests_unit_test_topology_load_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=open

# policies/
UNIT_POLICY = tests/unit/test_policy
tests_unit_test_policy_SOURCES = tests/unit/test_policy.c \
	tests/unit/wrap_eacces.c
tests_unit_test_policy_LDADD = $(FWD_POLICY_LIBS) $(CMOCKA_LIBS)
tests_unit_test_policy_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=open

# allocator/
UNIT_ALLOCATOR = tests/unit/test_decide tests/unit/test_curve \
	tests/unit/test_nodeset tests/unit/test_pool \
	tests/unit/test_isolate_sweep tests/unit/test_batch_reuse
tests_unit_test_batch_reuse_SOURCES = tests/unit/test_batch_reuse.c
tests_unit_test_batch_reuse_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_isolate_sweep_SOURCES = tests/unit/test_isolate_sweep.c
tests_unit_test_isolate_sweep_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS) \
	$(LIBM)
tests_unit_test_decide_SOURCES = tests/unit/test_decide.c
tests_unit_test_decide_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_curve_SOURCES = tests/unit/test_curve.c
tests_unit_test_curve_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS) $(LIBM)
tests_unit_test_nodeset_SOURCES = tests/unit/test_nodeset.c
tests_unit_test_nodeset_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_pool_SOURCES = tests/unit/test_pool.c
tests_unit_test_pool_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS)

# sim/
UNIT_SIM = tests/unit/test_sim
tests_unit_test_sim_SOURCES = tests/unit/test_sim.c
tests_unit_test_sim_LDADD = $(FWD_SIM_LIBS) $(CMOCKA_LIBS)

# monitor/
UNIT_MONITOR = tests/unit/test_ingest_beacon tests/unit/test_ingest_influx \
	tests/unit/test_ingest_jobstats tests/unit/test_ingest_series \
	tests/unit/test_dbscan tests/unit/test_anomaly tests/unit/test_health
tests_unit_test_ingest_beacon_SOURCES = tests/unit/test_ingest_beacon.c
tests_unit_test_ingest_beacon_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_ingest_influx_SOURCES = tests/unit/test_ingest_influx.c
tests_unit_test_ingest_influx_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_ingest_jobstats_SOURCES = tests/unit/test_ingest_jobstats.c
tests_unit_test_ingest_jobstats_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_ingest_series_SOURCES = tests/unit/test_ingest_series.c
tests_unit_test_ingest_series_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_dbscan_SOURCES = tests/unit/test_dbscan.c
tests_unit_test_dbscan_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_anomaly_SOURCES = tests/unit/test_anomaly.c
tests_unit_test_anomaly_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_health_SOURCES = tests/unit/test_health.c
tests_unit_test_health_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)

# profiler/
UNIT_PROFILER = tests/unit/test_trace tests/unit/test_summary \
	tests/unit/test_profile tests/unit/test_profile_db
tests_unit_test_trace_SOURCES = tests/unit/test_trace.c
tests_unit_test_trace_LDADD = $(FWD_PROFILER_LIBS) $(CMOCKA_LIBS)
tests_unit_test_summary_SOURCES = tests/unit/test_summary.c
tests_unit_test_summary_LDADD = $(FWD_PROFILER_LIBS) $(CMOCKA_LIBS)
tests_unit_test_profile_SOURCES = tests/unit/test_profile.c
tests_unit_test_profile_LDADD = $(FWD_PROFILER_LIBS) $(CMOCKA_LIBS)
# the database failing during a lookup and a rebuild (controller/
# profile_ctl.c over the profile store), faked (the working paths run
# against a real MariaDB in tests/integration/profile_db.sh)
tests_unit_test_profile_db_SOURCES = tests/unit/test_profile_db.c
tests_unit_test_profile_db_LDADD = $(FWD_CONTROLLER_LIBS) $(CMOCKA_LIBS)
tests_unit_test_profile_db_LDFLAGS = $(AM_LDFLAGS) \
	-Wl,--wrap=db_prepare,--wrap=db_exec,--wrap=db_fetch \
	-Wl,--wrap=db_stmt_close \
	-Wl,--wrap=db_bind_int64,--wrap=db_bind_uint64,--wrap=db_bind_double \
	-Wl,--wrap=db_bind_text,--wrap=db_bind_null

# controller/: the pieces that need neither Slurm nor MariaDB.
UNIT_CONTROLLER = tests/unit/test_ctl tests/unit/test_release_queue \
	tests/unit/test_service tests/unit/test_query \
	tests/unit/test_node_release
# Users' report requests: their text and the service's checks.
tests_unit_test_query_SOURCES = tests/unit/test_query.c \
	service/query.c service/query_client.c service/query.h \
	service/protocol.h
tests_unit_test_query_CPPFLAGS = $(AM_CPPFLAGS) $(MUNGE_CFLAGS)
tests_unit_test_query_LDADD = $(FWD_COMMON_LIBS) $(MUNGE_LIBS) $(CMOCKA_LIBS)
# The nodes' releases: the service's check, the node's munged and call.
tests_unit_test_node_release_SOURCES = tests/unit/test_node_release.c \
	service/node_release.c service/node_release.h \
	service/query.c service/query_client.c service/query.h \
	service/protocol.h
tests_unit_test_node_release_CPPFLAGS = $(AM_CPPFLAGS) $(MUNGE_CFLAGS)
tests_unit_test_node_release_LDADD = $(FWD_COMMON_LIBS) $(MUNGE_LIBS) \
	$(CMOCKA_LIBS)
tests_unit_test_service_SOURCES = tests/unit/test_service.c \
	service/client.c service/client.h service/protocol.h
tests_unit_test_service_LDADD = $(FWD_CONTROLLER_LIBS) $(CMOCKA_LIBS)
tests_unit_test_release_queue_SOURCES = tests/unit/test_release_queue.c
tests_unit_test_release_queue_LDADD = $(FWD_CONTROLLER_LIBS) $(CMOCKA_LIBS)
tests_unit_test_ctl_SOURCES = tests/unit/test_ctl.c \
	tests/unit/wrap_short_write.c
# write(2) and ftruncate(2) are wrapped to fill the disk on demand.
tests_unit_test_ctl_LDFLAGS = $(AM_LDFLAGS) \
	-Wl,--wrap=write,--wrap=ftruncate
tests_unit_test_ctl_LDADD = $(FWD_CONTROLLER_LIBS) $(CMOCKA_LIBS)

# spank/: the remap drivers.
UNIT_SPANK = tests/unit/test_remap tests/unit/test_remap_verbs
tests_unit_test_remap_SOURCES = tests/unit/test_remap.c
# rename(2) is wrapped to simulate a crash between link and rename.
tests_unit_test_remap_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=rename
tests_unit_test_remap_LDADD = $(FWD_REMAP_LIBS) $(CMOCKA_LIBS)
# Every rdma-core call of the verbs driver is faked through its seam.
tests_unit_test_remap_verbs_SOURCES = tests/unit/test_remap_verbs.c
tests_unit_test_remap_verbs_LDFLAGS = $(AM_LDFLAGS) \
	-Wl,--wrap=remap_rdma_get_device_list \
	-Wl,--wrap=remap_rdma_free_device_list \
	-Wl,--wrap=remap_rdma_get_device_name \
	-Wl,--wrap=remap_rdma_open_device \
	-Wl,--wrap=remap_rdma_close_device \
	-Wl,--wrap=remap_rdma_query_device \
	-Wl,--wrap=remap_rdma_query_port \
	-Wl,--wrap=remap_rdma_create_event_channel \
	-Wl,--wrap=remap_rdma_destroy_event_channel \
	-Wl,--wrap=remap_rdma_create_id \
	-Wl,--wrap=remap_rdma_destroy_id \
	-Wl,--wrap=remap_rdma_resolve_addr \
	-Wl,--wrap=remap_rdma_resolve_route \
	-Wl,--wrap=remap_rdma_get_cm_event \
	-Wl,--wrap=remap_rdma_ack_cm_event \
	-Wl,--wrap=remap_rdma_create_qp \
	-Wl,--wrap=remap_rdma_destroy_qp \
	-Wl,--wrap=remap_rdma_connect \
	-Wl,--wrap=remap_rdma_disconnect
tests_unit_test_remap_verbs_LDADD = $(FWD_REMAP_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS = $(UNIT_COMMON) $(UNIT_DB) $(UNIT_TOPOLOGY) $(UNIT_POLICY) \
	$(UNIT_ALLOCATOR) $(UNIT_SIM) $(UNIT_MONITOR) $(UNIT_PROFILER) \
	$(UNIT_CONTROLLER) $(UNIT_SPANK)
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)

# Tests the mutation list (tests/mutation/) asked for: reconcile over
# every Slurm job state, slurmctld's answer and the ledger's rows faked;
# the allocator's and the monitor's thresholds at equality, the caps.
UNIT_MUTATION = tests/unit/test_reconcile tests/unit/test_alloc_edges \
	tests/unit/test_monitor_edges
tests_unit_test_monitor_edges_SOURCES = tests/unit/test_monitor_edges.c
tests_unit_test_monitor_edges_LDADD = $(FWD_MONITOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_alloc_edges_SOURCES = tests/unit/test_alloc_edges.c
tests_unit_test_alloc_edges_LDADD = $(FWD_ALLOCATOR_LIBS) $(CMOCKA_LIBS)
tests_unit_test_reconcile_SOURCES = tests/unit/test_reconcile.c
tests_unit_test_reconcile_LDADD = $(FWD_CONTROLLER_LIBS) $(CMOCKA_LIBS)
tests_unit_test_reconcile_LDFLAGS = $(AM_LDFLAGS) \
	-Wl,--wrap=db_connect_current,--wrap=db_close,--wrap=db_commit \
	-Wl,--wrap=db_rollback,--wrap=ledger_store_lock \
	-Wl,--wrap=ledger_store_held_jobs,--wrap=ledger_store_held \
	-Wl,--wrap=ledger_store_rows_free,--wrap=ledger_store_release \
	-Wl,--wrap=ledger_store_job_end,--wrap=slurm_init \
	-Wl,--wrap=slurm_load_jobs,--wrap=slurm_free_job_info_msg
check_PROGRAMS += $(UNIT_MUTATION)
TESTS += $(UNIT_MUTATION)

# ---- integration tests: shell scripts that start their own servers -------
INTEGRATION_TESTS = tests/integration/tap_selftest.sh \
	tests/integration/cli_policy.sh tests/integration/policy_caps.sh \
	tests/integration/cli_decide.sh \
	tests/integration/cli_sim.sh tests/integration/cli_usage.sh \
	tests/integration/cli_audit.sh tests/integration/cli_metrics.sh \
	tests/integration/cli_grammar.sh \
	tests/integration/remap_cli.sh tests/integration/cli_trace_damage.sh \
	tests/integration/bench_table.sh \
	tests/integration/db_schema.sh tests/integration/db_locks.sh \
	tests/integration/db_retire.sh tests/integration/db_stream.sh \
	tests/integration/node_fanout.sh \
	tests/integration/db_ingest.sh tests/integration/db_galera.sh \
	tests/integration/ingest_lustre.sh tests/integration/history_loop.sh \
	tests/integration/ingest_rollups.sh tests/integration/history_procname.sh \
	tests/integration/jobstats_resets.sh \
	tests/integration/health_scan.sh tests/integration/health_admin.sh \
	tests/integration/health_job.sh tests/integration/health_ingest.sh \
	tests/integration/profile_db.sh tests/integration/ctl_failopen.sh \
	tests/integration/ctl_no_policy.sh tests/integration/ctl_fallback_count.sh \
	tests/integration/ctl_shadow.sh \
	tests/integration/profile_curve.sh \
	tests/integration/slurm_basic.sh tests/integration/slurm_alloc.sh \
	tests/integration/slurm_direct.sh tests/integration/slurm_fallback.sh \
	tests/integration/tree_layout.sh tests/integration/install_layout.sh \
	tests/integration/man_pages.sh tests/integration/cli_completion.sh \
	tests/integration/cli_help_examples.sh \
	tests/integration/units_security.sh tests/integration/setup_slurm_user.sh \
	tests/integration/pkg_scripts.sh \
	tests/integration/ctl_truth.sh tests/integration/ctl_breaker.sh \
	tests/integration/ctl_pool.sh tests/integration/slurm_pool.sh \
	tests/integration/ledger_lru.sh tests/integration/ctl_ledger_kept.sh \
	tests/integration/reliability.sh tests/integration/slurm_history.sh \
	tests/integration/db_history.sh tests/integration/history_bad_jobs.sh \
	tests/integration/ctl_requeue.sh tests/integration/ctl_service.sh \
	tests/integration/ctl_decision_file.sh \
	tests/integration/node_release.sh \
	tests/integration/ctl_reconcile.sh tests/integration/slurm_package.sh \
	tests/integration/ingest_property.sh \
	tests/integration/report_job.sh tests/integration/report_html.sh \
	tests/integration/report_grafana.sh tests/integration/report_identity.sh
# Boundaries and shared cases the mutation list (tests/mutation/) found
# untested.
INTEGRATION_TESTS += tests/integration/policy_edges.sh \
	tests/integration/audit_edges.sh tests/integration/ledger_rows.sh \
	tests/integration/profile_edges.sh tests/integration/sacct_edges.sh
TESTS += $(INTEGRATION_TESTS)

# A database whose COMMIT answers late (LD_PRELOAD), for ctl_truth.sh.
check_LTLIBRARIES = tests/tools/slow_commit.la
tests_tools_slow_commit_la_SOURCES = tests/tools/slow_commit.c
tests_tools_slow_commit_la_LDFLAGS = -module -avoid-version -shared \
	-rpath /nowhere
tests_tools_slow_commit_la_LIBADD = -ldl

# kill -9 at the Nth database step of a hook's worker (LD_PRELOAD), and a
# database slowed down by a relaying proxy, for reliability.sh.
check_LTLIBRARIES += tests/tools/kill_at.la
tests_tools_kill_at_la_SOURCES = tests/tools/kill_at.c
tests_tools_kill_at_la_LDFLAGS = -module -avoid-version -shared \
	-rpath /nowhere
tests_tools_kill_at_la_LIBADD = -ldl
check_PROGRAMS += tests/tools/slow_proxy
tests_tools_slow_proxy_SOURCES = tests/tools/slow_proxy.c

# Seeded random input of every ingest format and the rows it must give,
# for ingest_property.sh.
check_PROGRAMS += tests/tools/ingest_gen
tests_tools_ingest_gen_SOURCES = tests/tools/ingest_gen.c

# Rows through db_queryf() or db_queryf_stream(), run by db_stream.sh.
check_PROGRAMS += tests/tools/db_query
tests_tools_db_query_SOURCES = tests/tools/db_query.c
tests_tools_db_query_LDADD = $(FWD_ALL_LIBS)
# What the SPANK job prolog reads, run by db_locks.sh with the node account.
check_PROGRAMS += tests/tools/node_read
tests_tools_node_read_SOURCES = tests/tools/node_read.c
tests_tools_node_read_LDADD = libfwdnode.la $(FWD_ALL_LIBS)
# A job's node prologs at once (bench/fanout.c), run by node_fanout.sh.
check_PROGRAMS += tests/tools/node_fanout
tests_tools_node_fanout_SOURCES = tests/tools/node_fanout.c bench/fanout.c \
	bench/fanout.h bench/report.c bench/report.h
tests_tools_node_fanout_LDADD = libfwdnode.la $(FWD_ALL_LIBS)
# A plugin of another Slurm release refused by this one's slurmd: not in
# TESTS (it needs FWDALLOC_FOREIGN_PLUGIN); scripts/release-matrix runs it.
EXTRA_DIST += tests/integration/slurm_foreign_plugin.sh
EXTRA_DIST += $(INTEGRATION_TESTS) tests/integration/db_lib.sh tests/integration/report_lib.sh \
	tests/integration/mc_lib.sh \
	tests/integration/health_common.sh
