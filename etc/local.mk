# SPDX-License-Identifier: GPL-2.0-or-later
# etc/: examples installed to $(sysconfdir)/fwdalloc.
fwdallocconfdir = $(sysconfdir)/fwdalloc
dist_fwdallocconf_DATA =
dist_fwdallocconf_DATA += etc/sim-jobs.csv etc/sim-curves.csv
