#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run each benchmark given as an argument, show its output, and gather the
# "@bench" figure lines of all of them into bench-results.json (an array of
# objects) and bench-results.md (the README's figures table), in the
# current directory.  Stops at the first benchmark that fails.
set -eu
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for b in "$@"; do
	echo "== $b"
	if ! "./$b" >"$out.one" 2>&1; then
		grep -v '^@bench	' "$out.one" || true
		rm -f "$out.one"
		echo "$b failed" >&2
		exit 1
	fi
	grep -v '^@bench	' "$out.one" || true
	grep '^@bench	' "$out.one" >>"$out" || true
	rm -f "$out.one"
done
awk -F '\t' '
function js(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
BEGIN { print "[" }
{
	printf "%s  {\"bench\": %s, \"name\": %s, \"value\": %s, \"unit\": %s, " \
	       "\"ref\": %s, \"ref_name\": %s, \"ratio\": %s}", \
	       (NR > 1 ? ",\n" : ""), js($2), js($3), $4, js($5), $6, js($7), $8
}
END { print "\n]" }' "$out" >bench-results.json
awk -F '\t' '
BEGIN {
	print "| benchmark | figure | measured | reference | ratio |"
	print "|---|---|---|---|---|"
}
{
	ref = ($6 > 0) ? sprintf("%.4g %s (%s)", $6, $5, $7) : "-"
	ratio = ($6 > 0) ? sprintf("%.3g", $8) : "-"
	printf "| %s | %s | %.4g %s | %s | %s |\n", $2, $3, $4, $5, ref, ratio
}' "$out" >bench-results.md
echo "figures: bench-results.json, bench-results.md ($(wc -l <"$out") figures)"
