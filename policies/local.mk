# SPDX-License-Identifier: GPL-2.0-or-later
# policies/: the admin policy (YAML loader, validation, defaults) and the
# readings of its thresholds shared by the modules above it.
noinst_LTLIBRARIES += libfwdpolicy.la
libfwdpolicy_la_SOURCES = \
	policies/policy.c policies/policy.h \
	policies/policy_load.c policies/classify.c policies/classify.h \
	policies/caps_room.c policies/caps_room.h
