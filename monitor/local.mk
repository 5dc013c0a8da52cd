# SPDX-License-Identifier: GPL-2.0-or-later
# monitor/: the MariaDB store (connection, schema, migrations) and the
# ingestion parsers for forwarder/OST/MDT statistics.
noinst_LTLIBRARIES += libfwdmonitor.la
FWD_MONITOR_LIB = libfwdmonitor.la
libfwdmonitor_la_SOURCES = \
	monitor/db.c monitor/db.h \
	monitor/schema.c monitor/schema.h \
	monitor/ingest.h monitor/ingest_util.c monitor/ingest_series.c \
	monitor/ingest_beacon.c monitor/ingest_influx.c \
	monitor/ingest_jobstats.c monitor/ingest_store.c \
	monitor/topo_sync.c
libfwdmonitor_la_CFLAGS = $(AM_CFLAGS) $(MARIADB_CFLAGS) $(YAML_CFLAGS) \
	$(JANSSON_CFLAGS)
EXTRA_DIST += monitor/SCHEMA.md

fwdctl_SOURCES += cli/cmd_db.c cli/cmd_ingest.c cli/fwdctl_db.c cli/fwdctl_db.h

MONITOR_UNIT_TESTS = tests/unit/test_db tests/unit/test_ingest_beacon \
	tests/unit/test_ingest_influx tests/unit/test_ingest_jobstats \
	tests/unit/test_ingest_series
check_PROGRAMS += $(MONITOR_UNIT_TESTS)
TESTS += $(MONITOR_UNIT_TESTS)
tests_unit_test_db_SOURCES = tests/unit/test_db.c
tests_unit_test_db_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_db_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_ingest_beacon_SOURCES = tests/unit/test_ingest_beacon.c
tests_unit_test_ingest_beacon_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_ingest_beacon_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_ingest_influx_SOURCES = tests/unit/test_ingest_influx.c
tests_unit_test_ingest_influx_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_ingest_influx_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_ingest_jobstats_SOURCES = tests/unit/test_ingest_jobstats.c
tests_unit_test_ingest_jobstats_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_ingest_jobstats_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_ingest_series_SOURCES = tests/unit/test_ingest_series.c
tests_unit_test_ingest_series_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_ingest_series_LDADD = $(FWD_TEST_LIBS)

TESTS += tests/integration/db_schema.sh tests/integration/db_ingest.sh
EXTRA_DIST += tests/integration/db_lib.sh tests/integration/db_schema.sh \
	tests/integration/db_ingest.sh

EXTRA_PROGRAMS += bench/bench_ingest bench/bench_db
BENCHES += bench/bench_ingest bench/bench_db
MONITOR_BENCH_CFLAGS = $(FWD_TEST_CFLAGS) -DTOP_SRCDIR='"$(abs_top_srcdir)"'
bench_bench_ingest_SOURCES = bench/bench_ingest.c bench/bench_testdb.c \
	bench/testdb.h
bench_bench_ingest_CFLAGS = $(MONITOR_BENCH_CFLAGS)
bench_bench_ingest_LDADD = $(FWD_ALL_LIBS)
bench_bench_db_SOURCES = bench/bench_db.c bench/bench_testdb.c \
	bench/testdb.h
bench_bench_db_CFLAGS = $(MONITOR_BENCH_CFLAGS)
bench_bench_db_LDADD = $(FWD_ALL_LIBS)

# ---- anomaly detection and health (begin) ----
libfwdmonitor_la_SOURCES += \
	monitor/anomaly.c monitor/anomaly.h \
	monitor/dbscan.c monitor/dbscan.h \
	monitor/health.c monitor/health.h \
	monitor/health_db.c
fwdctl_SOURCES += cli/cmd_health.c

check_PROGRAMS += tests/unit/test_dbscan tests/unit/test_anomaly \
	tests/unit/test_health
TESTS += tests/unit/test_dbscan tests/unit/test_anomaly \
	tests/unit/test_health
tests_unit_test_dbscan_SOURCES = tests/unit/test_dbscan.c
tests_unit_test_dbscan_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_dbscan_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_anomaly_SOURCES = tests/unit/test_anomaly.c
tests_unit_test_anomaly_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_anomaly_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_health_SOURCES = tests/unit/test_health.c
tests_unit_test_health_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_health_LDADD = $(FWD_TEST_LIBS)
TESTS += tests/integration/health_scan.sh tests/integration/health_admin.sh \
	tests/integration/health_job.sh tests/integration/health_ingest.sh
EXTRA_DIST += tests/integration/health_scan.sh \
	tests/integration/health_admin.sh tests/integration/health_job.sh \
	tests/integration/health_ingest.sh \
	tests/integration/health_common.sh monitor/HEALTH.md

# Scan time for 288 forwarders + 432 OSTs over a day of rollups, in memory
# and against a private MariaDB (scripts/testdb).
EXTRA_PROGRAMS += bench/bench_health
BENCHES += bench/bench_health
bench_bench_health_SOURCES = bench/bench_health.c bench/bench_testdb.c \
	bench/testdb.h
bench_bench_health_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"' \
	-DTESTDB='"$(abs_top_srcdir)/scripts/testdb"'
bench_bench_health_LDADD = $(FWD_ALL_LIBS)

# systemd units for the periodic scan, installed under the prefix (copy or
# link them into /etc/systemd/system when the prefix is not /usr).
healthunitdir = $(prefix)/lib/systemd/system
healthunit_DATA = etc/fwdalloc-health-scan.service \
	etc/fwdalloc-health-scan.timer
EXTRA_DIST += etc/fwdalloc-health-scan.service.in \
	etc/fwdalloc-health-scan.timer
CLEANFILES += etc/fwdalloc-health-scan.service
etc/fwdalloc-health-scan.service: etc/fwdalloc-health-scan.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && sed -e 's|@bindir[@]|$(bindir)|g' \
		$(srcdir)/etc/fwdalloc-health-scan.service.in >$@.tmp && \
		mv $@.tmp $@
# ---- anomaly detection and health (end) ----
