#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl ingest --format sacct at the edges of its input: the last line
# without its newline is a line like the others; a line longer than the
# reader's 64 KiB is refused, not cut into two lines.  Table-driven: each
# row a way to write the capture and what the summary then says.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start
fw db init
check_eq "db init" 0 "$rc"
sx=$top_srcdir/tests/fixtures/slurm/sacct-parsable2.txt
want_ok="read 11 lines: 3 finished jobs (3 new), 2 summaries from fs/lustre usage"

# name | how the capture is made from the fixture | summary wanted
while IFS='|' read -r name how want; do
	sh -c "$how" <"$sx" >"$d/in.txt"
	q "DELETE FROM jobs WHERE job_id BETWEEN 5000 AND 5999"
	out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct \
		"$d/in.txt" 2>"$d/e")
	rc=$?
	check_eq "$name: exit 0" 0 "$rc" || diag "$(cat "$d/e")"
	# (the profiles updated depend on what the rows before left)
	check_eq "$name: summary" "$want" "${out%, * profiles updated}"
	check_eq "$name: the jobs rows" 3 \
		"$(q "SELECT COUNT(*) FROM jobs WHERE job_id BETWEEN 5000 AND 5999")"
done <<EOF
as captured|cat|$want_ok
the last line without its newline|head -c -1|$want_ok
EOF

# A line of 70000 bytes after the header: refused with its line number,
# the lines after it read as before (exit 2: a line was rejected).
{
	head -n 1 "$sx"
	awk 'BEGIN { s = sprintf("%70000s", ""); gsub(/ /, "x", s); print s }'
	tail -n +2 "$sx"
} >"$d/long.txt"
out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct \
	"$d/long.txt" 2>"$d/e")
rc=$?
check_eq "a 70000-byte line: exit 2" 2 "$rc"
check_eq "a 70000-byte line: the other lines read" \
	"read 12 lines: 3 finished jobs (0 new), 2 summaries from fs/lustre usage" \
	"${out%, * profiles updated}"
check "a 70000-byte line: named by its line" \
	grep -q "long.txt:2: line too long: 'xxxx" "$d/e"
check "a 70000-byte line: counted as one malformed line" \
	grep -q "rejected 1 lines: 1 malformed" "$d/e"

tap_done
