# SPDX-License-Identifier: GPL-2.0-or-later

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
	spank/fwdalloc_job.c
spank_fwdalloc_la_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS)
spank_fwdalloc_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-Wl,--version-script=$(srcdir)/spank/fwdalloc.lds
spank_fwdalloc_la_LIBADD = libfwdcommon.la
EXTRA_DIST += spank/fwdalloc.lds
EXTRA_spank_fwdalloc_la_DEPENDENCIES = spank/fwdalloc.lds

# Slurm integration tests: a real local cluster (scripts/minicluster).
TESTS += tests/integration/slurm_basic.sh
EXTRA_DIST += tests/integration/slurm_basic.sh
