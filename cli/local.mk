# SPDX-License-Identifier: GPL-2.0-or-later
# cli/: fwdctl.  Every folder adds its own cli/cmd_*.c to fwdctl_SOURCES in
# its local.mk and defines FWD_<FOLDER>_LIB; the link order below is the
# layering order (a library only uses those to its right).
bin_PROGRAMS += fwdctl
fwdctl_SOURCES += cli/fwdctl.c cli/fwdctl.h
fwdctl_CFLAGS = $(AM_CFLAGS) $(FWD_EXT_CFLAGS)
fwdctl_LDADD += $(FWD_ALL_LIBS)

# Usage errors of the controller commands: one line and a pointer to --help.
TESTS += tests/integration/cli_usage.sh
EXTRA_DIST += tests/integration/cli_usage.sh
