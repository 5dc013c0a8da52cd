# SPDX-License-Identifier: GPL-2.0-or-later
# common/: the error type, units, SHA-256, the YAML tree reader.
noinst_LTLIBRARIES += libfwdcommon.la
libfwdcommon_la_SOURCES = \
	common/error.c common/error.h \
	common/units.c common/units.h \
	common/sha256.c common/sha256.h \
	common/yamldoc.c common/yamldoc.h
libfwdcommon_la_LIBADD = $(YAML_LIBS) $(JANSSON_LIBS) $(LIBM)
libfwdcommon_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)

check_PROGRAMS += tests/unit/test_units tests/unit/test_sha256 \
	tests/unit/test_yamldoc
TESTS += tests/unit/test_units tests/unit/test_sha256 tests/unit/test_yamldoc
tests_unit_test_units_SOURCES = tests/unit/test_units.c
tests_unit_test_units_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_units_LDADD = libfwdcommon.la $(CMOCKA_LIBS)
tests_unit_test_sha256_SOURCES = tests/unit/test_sha256.c
tests_unit_test_sha256_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_sha256_LDADD = libfwdcommon.la $(CMOCKA_LIBS)
tests_unit_test_yamldoc_SOURCES = tests/unit/test_yamldoc.c \
	tests/unit/wrap_eacces.c
tests_unit_test_yamldoc_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_yamldoc_LDADD = libfwdcommon.la $(CMOCKA_LIBS)
tests_unit_test_yamldoc_LDFLAGS = -Wl,--wrap=open
