# SPDX-License-Identifier: GPL-2.0-or-later

# spank/: the SPANK plugin and the node side: the remap drivers
# (libfwdremap) and this node's part of a decision (libfwdnode).
noinst_LTLIBRARIES += libfwdremap.la
libfwdremap_la_SOURCES = \
	spank/remap.h spank/remap_priv.h spank/remap.c spank/remap_util.c \
	spank/remap_exec.c spank/remap_lwfs.c spank/remap_lnet.c \
	spank/remap_verbs.c spank/remap_rdma.c spank/remap_rdma.h

# This node's part of a job's decision (the job prolog), a library of its
# own so that bench/bench_prolog times exactly what the plugin runs.
noinst_LTLIBRARIES += libfwdnode.la
libfwdnode_la_SOURCES = spank/fwdalloc_node.c spank/fwdalloc.h

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
	spank/fwdalloc_note.c \
	service/client.c service/client.h \
	service/node_release.c service/node_release.h \
	service/query.c service/query_client.c service/query.h
# Never built with sanitizers (PLUGIN_HARDEN_*, see configure.ac): their
# runtime must be the first library of the process, and slurmd, slurmstepd
# (which also runs the node prolog with an environment of its own, so
# LD_PRELOAD cannot reach it) and the Slurm clients are not built with it.
spank_fwdalloc_la_CFLAGS = $(WARN_CFLAGS) $(PLUGIN_HARDEN_CFLAGS) \
	$(FWD_EXT_CFLAGS) $(MUNGE_CFLAGS)
spank_fwdalloc_la_LDFLAGS = $(PLUGIN_HARDEN_LDFLAGS) -module -avoid-version \
	-shared -Wl,--version-script=$(srcdir)/spank/fwdalloc.lds
# Convenience libraries go into a shared object whole, so the plugin links
# only the node side, the remap drivers, the policy, the database client
# and common/.
if SANITIZERS
# The libraries are built with sanitizers: the plugin compiles its own
# copies of their sources instead (the unit tests cover them sanitized).
spank_fwdalloc_la_SOURCES += $(libfwdnode_la_SOURCES) \
	$(libfwdremap_la_SOURCES) $(libfwdpolicy_la_SOURCES) \
	$(libfwddb_la_SOURCES) $(libfwdcommon_la_SOURCES)
PLUGIN_FWD_LIBS =
else
PLUGIN_FWD_LIBS = libfwdnode.la libfwdremap.la libfwdpolicy.la libfwddb.la \
	libfwdcommon.la
endif
spank_fwdalloc_la_LIBADD = $(PLUGIN_FWD_LIBS) $(YAML_LIBS) $(MARIADB_LIBS) \
	$(JANSSON_LIBS) $(IBVERBS_LIBS) $(RDMACM_LIBS) $(MUNGE_LIBS) $(LIBM)
EXTRA_DIST += spank/fwdalloc.lds spank/SLURM.md
EXTRA_spank_fwdalloc_la_DEPENDENCIES = spank/fwdalloc.lds

