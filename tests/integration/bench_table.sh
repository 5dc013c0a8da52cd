#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/bench-table: the README's figures table between its markers is
# replaced by bench-results.md, the rest of the file kept byte for byte;
# a README without (or with misordered) markers is an error and is left
# unchanged.  No database.
. "$top_srcdir/tests/integration/tap.sh"

d=$(mktemp -d /tmp/bench_table.XXXXXX)
trap 'rm -rf "$d"' EXIT
bt="$top_srcdir/scripts/bench-table"

printf '%s\n' '| benchmark | figure | measured | reference | ratio |' \
	'|---|---|---|---|---|' \
	'| decide | 40960-node job, p50 | 264 us | 5.68 us (512-node job) | 46.5 |' \
	>"$d/results.md"
printf '%s\n' '# title' 'before' '<!-- bench-table begin -->' \
	'| old | table |' '<!-- bench-table end -->' 'after' >"$d/README.md"
printf '%s\n' '# title' 'before' '<!-- bench-table begin -->' \
	'| benchmark | figure | measured | reference | ratio |' \
	'|---|---|---|---|---|' \
	'| decide | 40960-node job, p50 | 264 us | 5.68 us (512-node job) | 46.5 |' \
	'<!-- bench-table end -->' 'after' >"$d/want.md"

sh "$bt" "$d/results.md" "$d/README.md"
check_eq "replaces the table and exits 0" 0 "$?"
check_eq "README is the old text with the new table" \
	"$(cat "$d/want.md")" "$(cat "$d/README.md")"
sh "$bt" "$d/results.md" "$d/README.md"
check_eq "running twice gives the same README" \
	"$(cat "$d/want.md")" "$(cat "$d/README.md")"

printf '%s\n' '# title' 'no markers' >"$d/bare.md"
sh "$bt" "$d/results.md" "$d/bare.md" 2>"$d/err"
check_eq "no markers: exit 1" 1 "$?"
check_match "no markers: says which" "needs exactly one" "$(cat "$d/err")"
check_eq "no markers: file unchanged" "$(printf '# title\nno markers')" \
	"$(cat "$d/bare.md")"

printf '%s\n' '<!-- bench-table end -->' '<!-- bench-table begin -->' \
	>"$d/swapped.md"
sh "$bt" "$d/results.md" "$d/swapped.md" 2>"$d/err"
check_eq "markers out of order: exit 1" 1 "$?"
check_match "markers out of order: says so" "comes before" "$(cat "$d/err")"

tap_done
