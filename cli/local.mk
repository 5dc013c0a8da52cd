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

# PrologSlurmctld's wrapper: Slurm passes no arguments.
fwdallocexecdir = $(libexecdir)/fwdalloc
fwdallocexec_SCRIPTS = cli/prolog-slurmctld
CLEANFILES += $(fwdallocexec_SCRIPTS)
EXTRA_DIST += cli/slurmctld-wrapper.in
cli/prolog-slurmctld: $(srcdir)/cli/slurmctld-wrapper.in Makefile
	$(AM_V_GEN)mkdir -p cli && \
	sed -e 's|@bindir[@]|$(bindir)|g' \
	    -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    -e "s|@sub[@]|prolog|g" -e "s|@Sub[@]|Prolog|g" \
	    $(srcdir)/cli/slurmctld-wrapper.in >$@.tmp && \
	chmod 755 $@.tmp && mv $@.tmp $@

# EpilogSlurmctld: a static program that starts the release in the
# background and returns (cli/epilog_slurmctld.c).  Never built with
# sanitizers: their runtimes do not link statically.
fwdallocexec_PROGRAMS = cli/epilog-slurmctld
cli_epilog_slurmctld_SOURCES = cli/epilog_slurmctld.c
cli_epilog_slurmctld_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFWD_EPILOG_FWDCTL='"$(bindir)/fwdctl"' \
	-DFWD_EPILOG_POLICY='"$(sysconfdir)/fwdalloc/fwdalloc.yaml"'
cli_epilog_slurmctld_CFLAGS = $(WARN_CFLAGS) $(PLUGIN_HARDEN_CFLAGS)
cli_epilog_slurmctld_LDFLAGS = -all-static
