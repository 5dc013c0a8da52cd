#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Derive bench/data/forge-mn4.csv from the FORGE MareNostrum 4 results.

Input: the two results files of https://github.com/jeanbez/forge-evaluation
(commit 42c44d0f607f5f45981fad8bd1b7139817028a45):
  run/output/marenostrum-4/results/results.csv       forwarders 1, 2, 4, 8
  run/output/marenostrum-4-gpfs/results/results.csv  forwarders 0 (direct
                                                      GPFS access)
both ';'-separated, written by that repository's results/parse.py.

A pattern is the scenario key of the repository's figure-2-complete.Rmd:
processes-clients-layout-spatiality-request-odirect (layout 0 = file per
process, 1 = shared file; spatiality 0 = contiguous, 1 = strided; request in
bytes; all 189 patterns are writes).  For each pattern and forwarder count
the output gives the number of repetitions, the median, minimum and maximum
bandwidth (MB/s, as FORGE prints it) and the median data moved (MB) in the
60 s stonewall run.

Usage: forge-mn4.py MN4_RESULTS.csv MN4_GPFS_RESULTS.csv > forge-mn4.csv
"""
import csv
import statistics
import sys
from collections import defaultdict


def main():
    runs = defaultdict(list)
    for path in sys.argv[1:3]:
        with open(path, newline="") as f:
            for r in csv.DictReader(f, delimiter=";"):
                if r["operation"] != "write":
                    continue
                key = "-".join(r[k] for k in ("processes", "clients", "layout",
                                             "spatiality", "request", "odirect"))
                runs[key, int(r["forwarders"])].append(
                    (float(r["bandwidth"]), float(r["transfered"])))
    out = sys.stdout
    out.write("# FORGE MareNostrum 4 write bandwidth per access pattern and "
              "forwarder count\n"
              "# source: github.com/jeanbez/forge-evaluation@42c44d0f "
              "run/output/marenostrum-4{,-gpfs}/results/results.csv\n"
              "# derived by bench/data/forge-mn4.py (see README.md here)\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["pattern", "processes", "clients", "layout", "spatiality",
                "request", "odirect", "forwarders", "runs", "median_mbps",
                "min_mbps", "max_mbps", "median_mb"])
    for (key, k) in sorted(runs, key=lambda x: (
            [int(v) for v in x[0].split("-")], x[1])):
        v = runs[key, k]
        bw = [x[0] for x in v]
        mb = [x[1] for x in v]
        w.writerow([key] + key.split("-") + [
            k, len(v), "%.3f" % statistics.median(bw), "%.3f" % min(bw),
            "%.3f" % max(bw), "%.3f" % statistics.median(mb)])


if __name__ == "__main__":
    main()
