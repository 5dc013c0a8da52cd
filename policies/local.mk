# SPDX-License-Identifier: GPL-2.0-or-later
# policies/: the admin policy (YAML loader, validation, defaults).
noinst_LTLIBRARIES += libfwdpolicy.la
FWD_POLICY_LIB = libfwdpolicy.la
libfwdpolicy_la_SOURCES = \
	policies/policy.c policies/policy.h
libfwdpolicy_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
libfwdpolicy_la_SOURCES += policies/policy_load.c
fwdctl_SOURCES += cli/cmd_policy.c

check_PROGRAMS += tests/unit/test_policy
TESTS += tests/unit/test_policy
tests_unit_test_policy_SOURCES = tests/unit/test_policy.c \
	tests/unit/wrap_eacces.c
tests_unit_test_policy_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_policy_LDADD = $(FWD_TEST_LIBS)
tests_unit_test_policy_LDFLAGS = -Wl,--wrap=open

TESTS += tests/integration/cli_policy.sh
EXTRA_DIST += tests/integration/cli_policy.sh
