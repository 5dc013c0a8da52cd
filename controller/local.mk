# SPDX-License-Identifier: GPL-2.0-or-later
# controller/: what runs on the controller at job start and end: decide a
# job, the ledger, audit, release, reconcile.
noinst_LTLIBRARIES += libfwdcontroller.la
libfwdcontroller_la_SOURCES = \
	controller/audit.c controller/audit.h \
	controller/ctl_store.c controller/ctl_store.h \
	controller/history.c controller/history.h \
	controller/health_ctl.c controller/health_ctl.h \
	controller/profile_ctl.c controller/profile_ctl.h
