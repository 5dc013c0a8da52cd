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
	monitor/ingest_jobstats.c monitor/ingest_store.c
libfwdmonitor_la_CFLAGS = $(AM_CFLAGS) $(MARIADB_CFLAGS) $(YAML_CFLAGS) \
	$(JANSSON_CFLAGS)
EXTRA_DIST += monitor/SCHEMA.md

fwdctl_SOURCES += cli/cmd_db.c cli/cmd_ingest.c cli/fwdctl_db.c cli/fwdctl_db.h
