#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Derive bench/data/forge-<platform>.csv from the FORGE results of a platform.

Input: two results files of https://github.com/jeanbez/forge-evaluation
(commit 42c44d0f607f5f45981fad8bd1b7139817028a45), both ';'-separated,
written by that repository's results/parse.py:
  marenostrum-4:  run/output/marenostrum-4/results/results.csv
                  (forwarders 1, 2, 4, 8) and
                  run/output/marenostrum-4-gpfs/results/results.csv
                  (forwarders 0: direct GPFS access)
  santos-dumont:  run/output/santos-dumont/results/results.csv and
                  run/output/santos-dumont-lustre/results/results.csv
                  (forwarders 0: direct Lustre access)

A pattern is the scenario key of the repository's figure-2-complete.Rmd:
processes-clients-layout-spatiality-request-odirect (layout 0 = file per
process, 1 = shared file; spatiality 0 = contiguous, 1 = strided; request in
bytes; only writes are kept).  For each pattern and forwarder count the
output gives the number of repetitions, the median, minimum and maximum
bandwidth (MB/s, as FORGE prints it) and the median data moved (MB) in the
60 s stonewall run.

Usage: forge.py PLATFORM FORWARDED_RESULTS.csv DIRECT_RESULTS.csv
  e.g. forge.py marenostrum-4 MN4.csv MN4_GPFS.csv > forge-mn4.csv
       forge.py santos-dumont SD.csv SD_LUSTRE.csv > forge-sdumont.csv
"""
import csv
import statistics
import sys
from collections import defaultdict


# platform: its name, and its two results directories (forwarded, then
# direct access) as a brace pattern for the header
PLATFORMS = {
    "marenostrum-4": ("MareNostrum 4", "marenostrum-4{,-gpfs}"),
    "santos-dumont": ("Santos Dumont", "santos-dumont{,-lustre}"),
}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in PLATFORMS:
        sys.exit("usage: forge.py {%s} FORWARDED.csv DIRECT.csv"
                 % ",".join(sorted(PLATFORMS)))
    name, dirs = PLATFORMS[sys.argv[1]]
    runs = defaultdict(list)
    for path in sys.argv[2:4]:
        with open(path, newline="") as f:
            for r in csv.DictReader(f, delimiter=";"):
                if r["operation"] != "write":
                    continue
                key = "-".join(r[k] for k in ("processes", "clients", "layout",
                                             "spatiality", "request", "odirect"))
                runs[key, int(r["forwarders"])].append(
                    (float(r["bandwidth"]), float(r["transfered"])))
    out = sys.stdout
    out.write("# FORGE %s write bandwidth per access pattern and "
              "forwarder count\n"
              "# source: github.com/jeanbez/forge-evaluation@42c44d0f "
              "run/output/%s/results/results.csv\n"
              "# derived by bench/data/forge.py (see README.md here)\n"
              % (name, dirs))
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
