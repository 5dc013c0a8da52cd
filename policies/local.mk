# SPDX-License-Identifier: GPL-2.0-or-later
# policies/: the admin policy (YAML loader, validation, defaults).
noinst_LTLIBRARIES += libfwdpolicy.la
FWD_POLICY_LIB = libfwdpolicy.la
libfwdpolicy_la_SOURCES = \
	policies/policy.c policies/policy.h
libfwdpolicy_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
