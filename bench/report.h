/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_BENCH_REPORT_H
#define FWD_BENCH_REPORT_H

/*
 * One measured figure of a benchmark, next to the reference measured in the
 * same run.  bench_figure() prints a human line and a machine line
 * ("@bench" and tab-separated fields) that bench/run.sh gathers into
 * bench-results.json and bench-results.md, so runs can be compared and the
 * README's figures table regenerated.
 *
 *   bench    the benchmark ("decide", "prolog", ...)
 *   name     what was measured ("40960-node job, p50")
 *   value    the figure, in unit
 *   ref      the reference figure, in the same unit (0: none)
 *   ref_name what the reference is ("LOAD DATA", "zstd -3", ...)
 *
 * The ratio printed is value / ref.  Strings must not hold tabs or
 * newlines (they are replaced by spaces).
 */
void bench_figure(const char *bench, const char *name, double value,
		  const char *unit, double ref, const char *ref_name);

#endif
