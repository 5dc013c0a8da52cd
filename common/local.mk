# SPDX-License-Identifier: GPL-2.0-or-later
# common/: the shared vocabulary, errors, units, time, the clock, running a
# function under a time limit, SHA-256, the strict YAML reader, checked
# directories, and the Slurm compatibility header (header-only:
# libfwdcommon does not link libslurm).
noinst_LTLIBRARIES += libfwdcommon.la
libfwdcommon_la_SOURCES = \
	common/error.c common/error.h \
	common/units.c common/units.h \
	common/vocab.c common/vocab.h \
	common/timeutil.c common/timeutil.h \
	common/array.c common/array.h \
	common/run.c common/run.h \
	common/sha256.c common/sha256.h \
	common/yamldoc.c common/yamldoc.h \
	common/safedir.c common/safedir.h \
	common/plausible.c common/plausible.h \
	common/slurm_conf.c common/slurm_conf.h \
	common/xml.c common/xml.h \
	common/slurm_compat.h
