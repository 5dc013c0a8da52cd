# SPDX-License-Identifier: GPL-2.0-or-later
# monitor/: ingestion of forwarder/OST/MDT/job statistics, the component
# inventory, anomaly detection and health.
noinst_LTLIBRARIES += libfwdmonitor.la
libfwdmonitor_la_SOURCES = \
	monitor/ingest.h monitor/ingest_util.c monitor/ingest_series.c \
	monitor/ingest_beacon.c monitor/ingest_influx.c monitor/jobid.c \
	monitor/ingest_jobstats.c monitor/ingest_store.c \
	monitor/ingest_rollup.c monitor/ingest_rollup.h \
	monitor/inventory.c monitor/inventory.h monitor/freshness.c \
	monitor/anomaly.c monitor/anomaly.h \
	monitor/dbscan.c monitor/dbscan.h \
	monitor/jobstats.c monitor/jobstats.h \
	monitor/weather.c monitor/weather.h \
	monitor/health.c monitor/health.h \
	monitor/health_priv.h monitor/health_store.c \
	monitor/health_scan.c monitor/health_report.c monitor/health_job.c
EXTRA_DIST += monitor/HEALTH.md
