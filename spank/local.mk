# SPDX-License-Identifier: GPL-2.0-or-later

# ---- remap: node-side remap drivers (libfwdremap) -------------------------
# The remap library, `fwdctl remap` and their unit tests.  The SPANK plugin
# itself has its own block below this one.
noinst_LTLIBRARIES += libfwdremap.la
FWD_REMAP_LIB = libfwdremap.la
libfwdremap_la_SOURCES = \
	spank/remap.h spank/remap_priv.h spank/remap.c spank/remap_util.c \
	spank/remap_exec.c spank/remap_lwfs.c spank/remap_lnet.c \
	spank/remap_verbs.c spank/remap_rdma.c spank/remap_rdma.h
libfwdremap_la_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS)

fwdctl_SOURCES += cli/cmd_remap.c

# The remap tests need only the remap library, so they link it alone.
REMAP_TEST_LIBS = $(FWD_REMAP_LIB) libfwdcommon.la $(IBVERBS_LIBS) \
	$(RDMACM_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test_remap tests/unit/test_remap_verbs
TESTS += tests/unit/test_remap tests/unit/test_remap_verbs
tests_unit_test_remap_SOURCES = tests/unit/test_remap.c
tests_unit_test_remap_CFLAGS = $(FWD_TEST_CFLAGS)
# rename(2) is wrapped to simulate a crash between link and rename.
tests_unit_test_remap_LDFLAGS = -Wl,--wrap=rename
tests_unit_test_remap_LDADD = $(REMAP_TEST_LIBS)

# Every rdma-core call of the verbs driver is faked through its seam.
tests_unit_test_remap_verbs_SOURCES = tests/unit/test_remap_verbs.c
tests_unit_test_remap_verbs_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_remap_verbs_LDFLAGS = \
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
tests_unit_test_remap_verbs_LDADD = $(REMAP_TEST_LIBS)

TESTS += tests/integration/remap_cli.sh
EXTRA_DIST += tests/integration/remap_cli.sh
# ---- end remap -------------------------------------------------------------

# The SPANK plugin fwdalloc.so: one dispatch file routing by context to one
# file per process kind; only Slurm's symbols are exported (fwdalloc.lds).
# libslurm is not linked: its symbols come from the loading process.
slurm_plugin_LTLIBRARIES = spank/fwdalloc.la
spank_fwdalloc_la_SOURCES = \
	spank/fwdalloc.h \
	spank/fwdalloc_dispatch.c \
	spank/fwdalloc_args.c \
	spank/fwdalloc_alloc.c \
	spank/fwdalloc_remote.c \
	spank/fwdalloc_job.c \
	spank/fwdalloc_node.c
# Never built with sanitizers (PLUGIN_HARDEN_*, see configure.ac): their
# runtime must be the first library of the process, and slurmd, slurmstepd
# (which also runs the node prolog with an environment of its own, so
# LD_PRELOAD cannot reach it) and the Slurm clients are not built with it.
spank_fwdalloc_la_CFLAGS = $(WARN_CFLAGS) $(PLUGIN_HARDEN_CFLAGS) \
	$(FWD_EXT_CFLAGS)
spank_fwdalloc_la_LDFLAGS = $(PLUGIN_HARDEN_LDFLAGS) -module -avoid-version \
	-shared -Wl,--version-script=$(srcdir)/spank/fwdalloc.lds
# Convenience libraries go into a shared object whole, so the plugin takes
# only the database client it needs from monitor/, not the monitor library.
spank_fwdalloc_la_SOURCES += monitor/db.c monitor/db.h
if SANITIZERS
# The libraries are built with sanitizers: the plugin compiles its own
# copies of their sources instead (the unit tests cover them sanitized).
spank_fwdalloc_la_SOURCES += $(libfwdremap_la_SOURCES) \
	$(libfwdpolicy_la_SOURCES) $(libfwdcommon_la_SOURCES)
PLUGIN_FWD_LIBS =
else
PLUGIN_FWD_LIBS = $(FWD_REMAP_LIB) $(FWD_POLICY_LIB) libfwdcommon.la
endif
spank_fwdalloc_la_LIBADD = $(PLUGIN_FWD_LIBS) $(YAML_LIBS) $(MARIADB_LIBS) \
	$(JANSSON_LIBS) $(IBVERBS_LIBS) $(RDMACM_LIBS) $(LIBM)
EXTRA_DIST += spank/fwdalloc.lds spank/SLURM.md
EXTRA_spank_fwdalloc_la_DEPENDENCIES = spank/fwdalloc.lds

# Slurm integration tests: a real local cluster (scripts/minicluster).
TESTS += tests/integration/slurm_basic.sh
EXTRA_DIST += tests/integration/slurm_basic.sh

# Controller side of the Slurm integration: fwdctl prolog/epilog (run by
# slurmctld through the wrappers below), alloc, audit, reconcile.
fwdctl_SOURCES += \
	cli/audit.c cli/audit.h \
	cli/bounded.c cli/bounded.h \
	cli/ctl_store.c cli/ctl_store.h \
	cli/cmd_prolog.c \
	cli/cmd_alloc.c \
	cli/cmd_audit.c \
	cli/cmd_reconcile.c

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

# Controller and node prolog timings (make bench).
EXTRA_PROGRAMS += bench/bench_prolog
BENCHES += bench/bench_prolog
bench_bench_prolog_SOURCES = bench/bench_prolog.c spank/fwdalloc_node.c
bench_bench_prolog_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"' -DTOP_BUILDDIR='"$(abs_top_builddir)"'
bench_bench_prolog_LDADD = $(FWD_ALL_LIBS)

# Unit tests of the controller pieces that need neither Slurm nor MariaDB.
check_PROGRAMS += tests/unit/test_ctl
TESTS += tests/unit/test_ctl
tests_unit_test_ctl_SOURCES = tests/unit/test_ctl.c cli/audit.c \
	cli/bounded.c cli/ctl_store.c
tests_unit_test_ctl_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_ctl_LDADD = $(FWD_TEST_LIBS)

# Integration on the local cluster with MariaDB (every scenario of the
# Slurm integration).
TESTS += tests/integration/slurm_alloc.sh
EXTRA_DIST += tests/integration/slurm_alloc.sh
