# SPDX-License-Identifier: GPL-2.0-or-later
# common/: the error type, units, small JSON and string helpers.
noinst_LTLIBRARIES += libfwdcommon.la
libfwdcommon_la_SOURCES = \
	common/error.c common/error.h
libfwdcommon_la_LIBADD = $(JANSSON_LIBS) $(LIBM)
libfwdcommon_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
