# SPDX-License-Identifier: GPL-2.0-or-later
# sim/: the what-if simulator over the production decision code.
noinst_LTLIBRARIES += libfwdsim.la
libfwdsim_la_SOURCES = \
	sim/sim.c sim/sim.h sim/sim_internal.h \
	sim/sim_input.c sim/sim_dfra.c sim/sim_learn.c sim/sim_report.c \
	sim/sim_exact.c
EXTRA_DIST += sim/SIM.md
