# SPDX-License-Identifier: GPL-2.0-or-later
# cli/: fwdctl, the one admin command, which is also the PrologSlurmctld /
# EpilogSlurmctld program (through the wrappers below).  Argument parsing,
# printing and exit codes only: the work is done by the libraries.
bin_PROGRAMS += fwdctl
fwdctl_SOURCES = \
	cli/fwdctl.c cli/fwdctl.h \
	cli/fwdctl_db.c cli/fwdctl_db.h \
	cli/cmd_policy.c cli/cmd_topology.c \
	cli/cmd_decide.c cli/cmd_sim.c \
	cli/cmd_db.c cli/cmd_ingest.c cli/cmd_ingest.h cli/cmd_ingest_darshan.c \
	cli/cmd_ingest_sacct.c \
	cli/cmd_health.c \
	cli/cmd_trace.c cli/cmd_trace.h cli/cmd_trace_ingest.c \
	cli/cmd_profile.c cli/cmd_history.c \
	cli/cmd_prolog.c cli/cmd_alloc.c cli/cmd_audit.c cli/cmd_reconcile.c \
	cli/cmd_remap.c cli/table.c cli/table.h cli/cmd_metrics.c
fwdctl_LDADD = $(FWD_ALL_LIBS)

# PrologSlurmctld / EpilogSlurmctld wrappers: Slurm passes no arguments.
fwdallocexecdir = $(libexecdir)/fwdalloc
fwdallocexec_SCRIPTS = cli/prolog-slurmctld cli/epilog-slurmctld
CLEANFILES += $(fwdallocexec_SCRIPTS)
EXTRA_DIST += cli/slurmctld-wrapper.in
cli/prolog-slurmctld cli/epilog-slurmctld: $(srcdir)/cli/slurmctld-wrapper.in Makefile
	$(AM_V_GEN)mkdir -p cli && sub=$$(basename $@ -slurmctld) && \
	Sub=$$(echo $$sub | sed 's/^p/P/; s/^e/E/') && \
	sed -e 's|@bindir[@]|$(bindir)|g' \
	    -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    -e "s|@sub[@]|$$sub|g" -e "s|@Sub[@]|$$Sub|g" \
	    $(srcdir)/cli/slurmctld-wrapper.in >$@.tmp && \
	chmod 755 $@.tmp && mv $@.tmp $@
