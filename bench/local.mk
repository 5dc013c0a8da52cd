# SPDX-License-Identifier: GPL-2.0-or-later
# bench/: benchmarks, built and run only by `make bench`.  A folder adds
#   EXTRA_PROGRAMS += bench/bench_x
#   BENCHES += bench/bench_x
CLEANFILES += $(BENCHES)
