# SPDX-License-Identifier: GPL-2.0-or-later
# controller/: what runs on the controller at job start and end: decide a
# job, the ledger (owns the allocations and jobs tables), audit (owns the
# audit table), release, reconcile.
noinst_LTLIBRARIES += libfwdcontroller.la
libfwdcontroller_la_SOURCES = \
	controller/job.c controller/job.h controller/job_vars.h \
	controller/launcher.c controller/launcher.h \
	controller/ledger_store.c controller/ledger_store.h \
	controller/audit.c controller/audit.h \
	controller/hooks.c controller/hooks.h controller/hook_run.h \
	controller/prolog.c controller/epilog.c \
	controller/release_queue.c controller/release_queue.h \
	controller/publish.c controller/publish.h \
	controller/reconcile.c controller/reconcile.h \
	controller/history.c controller/history.h \
	controller/history_run.c controller/history_run.h \
	controller/sacct.c controller/sacct.h \
	controller/health_ctl.c controller/health_ctl.h \
	controller/profile_ctl.c controller/profile_ctl.h
