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
	cli/cmd_remap.c cli/table.c cli/table.h cli/cmd_metrics.c \
	cli/cmd_setup.c cli/cmd_report.c \
	service/query.c service/query_client.c service/query.h
fwdctl_CPPFLAGS = $(AM_CPPFLAGS) $(MUNGE_CFLAGS) \
	-DFWD_SERVICE_QUERY_SOCKET='"$(FWD_SERVICE_QUERY_SOCKET_PATH)"'
fwdctl_LDADD = $(FWD_ALL_LIBS) $(MUNGE_LIBS)

fwdallocexecdir = $(libexecdir)/fwdalloc

# PrologSlurmctld: a static program that hands the job to the controller
# service, or runs `fwdctl prolog` when there is none
# (cli/prolog_slurmctld.c).
FWD_HOOK_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFWD_SERVICE_SOCKET='"$(FWD_SERVICE_SOCKET_PATH)"'
fwdallocexec_PROGRAMS = cli/prolog-slurmctld
cli_prolog_slurmctld_SOURCES = cli/prolog_slurmctld.c \
	service/client.c service/client.h service/protocol.h
cli_prolog_slurmctld_CPPFLAGS = $(FWD_HOOK_CPPFLAGS) \
	-DFWD_HOOK_FWDCTL='"$(bindir)/fwdctl"' \
	-DFWD_HOOK_POLICY='"$(sysconfdir)/fwdalloc/fwdalloc.yaml"'
cli_prolog_slurmctld_CFLAGS = $(WARN_CFLAGS) $(PLUGIN_HARDEN_CFLAGS)
cli_prolog_slurmctld_LDFLAGS = -all-static

# EpilogSlurmctld: a static program that starts the release in the
# background and returns (cli/epilog_slurmctld.c).  Never built with
# sanitizers: their runtimes do not link statically.
fwdallocexec_PROGRAMS += cli/epilog-slurmctld
cli_epilog_slurmctld_SOURCES = cli/epilog_slurmctld.c \
	service/client.c service/client.h service/protocol.h
cli_epilog_slurmctld_CPPFLAGS = $(FWD_HOOK_CPPFLAGS) \
	-DFWD_EPILOG_FWDCTL='"$(bindir)/fwdctl"' \
	-DFWD_EPILOG_POLICY='"$(sysconfdir)/fwdalloc/fwdalloc.yaml"'
cli_epilog_slurmctld_CFLAGS = $(WARN_CFLAGS) $(PLUGIN_HARDEN_CFLAGS)
cli_epilog_slurmctld_LDFLAGS = -all-static
