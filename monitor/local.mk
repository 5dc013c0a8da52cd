# SPDX-License-Identifier: GPL-2.0-or-later
# monitor/: the MariaDB store (connection, schema, migrations) and the
# ingestion parsers for forwarder/OST/MDT statistics.
noinst_LTLIBRARIES += libfwdmonitor.la
FWD_MONITOR_LIB = libfwdmonitor.la
libfwdmonitor_la_SOURCES = \
	monitor/db.c monitor/db.h \
	monitor/schema.c monitor/schema.h
libfwdmonitor_la_CFLAGS = $(AM_CFLAGS) $(MARIADB_CFLAGS) $(YAML_CFLAGS) \
	$(JANSSON_CFLAGS)
EXTRA_DIST += monitor/SCHEMA.md

fwdctl_SOURCES += cli/cmd_db.c cli/fwdctl_db.c cli/fwdctl_db.h

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
	tests/integration/health_job.sh
EXTRA_DIST += tests/integration/health_scan.sh \
	tests/integration/health_admin.sh tests/integration/health_job.sh \
	tests/integration/health_common.sh monitor/HEALTH.md

# Scan time for 288 forwarders + 432 OSTs over a day of rollups, in memory
# and against a private MariaDB (scripts/testdb).
EXTRA_PROGRAMS += bench/bench_health
BENCHES += bench/bench_health
bench_bench_health_SOURCES = bench/bench_health.c
bench_bench_health_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS) \
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
