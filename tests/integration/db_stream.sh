#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# db_queryf_stream() (db/db.h), against a private MariaDB: the rows read as
# they arrive equal the buffered ones and the server's own, values at their
# declared length (multibyte text, NULLs, large integers) included; a
# column declared longer than a streamed row holds is refused by name; a
# statement closed before its last row leaves the connection usable.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
dbq=$top_builddir/tests/tools/db_query
[ -x "$dbq" ] || skip_all "tests/tools/db_query not built"
db_start
run() { out=$("$@" 2>"$d/err"); rc=$?; err=$(cat "$d/err"); }

# 3,000 rows: a name at its declared length in 4-byte characters, NULLs
# every seventh row, the largest unsigned value, doubles
q "CREATE TABLE s (id INT PRIMARY KEY, name VARCHAR(8) NOT NULL,
	note VARCHAR(300) NULL, big BIGINT UNSIGNED NOT NULL, x DOUBLE NOT NULL)
	DEFAULT CHARSET=utf8mb4"
q "INSERT INTO s SELECT seq, IF(seq = 1500, REPEAT(UNHEX('F09F9880'), 8),
	CONCAT('n', seq)), IF(seq % 7 = 0, NULL, REPEAT('ab', seq % 150)),
	IF(seq = 3000, 18446744073709551615, seq * 1000003), seq / 8
	FROM seq_1_to_3000"
sql="SELECT id, name, note, big, x FROM s ORDER BY id"
run "$dbq" "$policy" stream "$sql"
check_eq "stream: exit 0" 0 "$rc" || diag "$err"
stream=$out
run "$dbq" "$policy" buffered "$sql"
check_eq "buffered: exit 0" 0 "$rc" || diag "$err"
check_eq "stream: the rows of the buffered read" "$out" "$stream"
check_eq "stream: every row, then the count" "rows 3000" \
	"$(printf '%s\n' "$stream" | tail -n 1)"
want=$(q "SELECT id, name, IFNULL(note, '-'), big FROM s WHERE id <> 1500
	ORDER BY id")
check_eq "stream: ids, names, notes and integers as the server has them" \
	"$want" "$(printf '%s\n' "$stream" | sed '$d' | awk -F '\t' -v OFS='\t' \
		'$1 != 1500 { if ($3 == "\\N") $3 = "-"; print $1, $2, $3, $4 }')"
check_eq "stream: the name of 8 four-byte characters whole" \
	"$(q "SELECT HEX(name) FROM s WHERE id = 1500")" \
	"$(printf '%s\n' "$stream" | awk -F '\t' '$1 == 1500 { printf "%s", $2 }' |
		od -An -v -tx1 | tr -d ' \n' | tr a-f A-F)"
check_eq "stream: 2^64 - 1" 18446744073709551615 \
	"$(printf '%s\n' "$stream" | awk -F '\t' '$1 == 3000 { print $4 }')"
check_eq "stream: NULL notes" 428 \
	"$(printf '%s\n' "$stream" | awk -F '\t' '$3 == "\\N"' | wc -l)"

# nothing to read
run "$dbq" "$policy" stream "SELECT id FROM s WHERE id > 5000"
check_eq "stream of no row: exit 0, rows 0" "0 rows 0" "$rc $out"

# a TEXT column (65,535 bytes declared): refused, by name; buffered reads it
run "$dbq" "$policy" stream "SELECT id, CAST(note AS CHAR(70000)) AS long_note FROM s"
check_eq "stream of a TEXT column: exit 1" 1 "$rc"
check_match "stream of a TEXT column: the column named" \
	"column long_note is declared [0-9]+ bytes long, over the 4096" "$err"
q "CREATE TABLE t (id INT PRIMARY KEY, body TEXT)"
q "INSERT INTO t VALUES (1, REPEAT('z', 5000))"
run "$dbq" "$policy" stream "SELECT body FROM t"
check_match "stream of a TEXT table column: refused, named" "column body is declared" "$err"
run "$dbq" "$policy" buffered "SELECT LENGTH(body), body = REPEAT('z', 5000) FROM t"
check_eq "buffered: the TEXT column read" "$(printf '5000\t1\nrows 1')" "$out"

# closed after 5 of 3,000 rows: the rest is dropped, the connection
# answers the next statement
run "$dbq" "$policy" stream "$sql" 5
check_eq "stream closed early: exit 0" 0 "$rc" || diag "$err"
check_eq "stream closed early: 5 rows, then the next statement answers" \
	"$(printf '%s\n' "$stream" | head -n 5)
rows 5
after 42" "$out"
# a syntax error: the server's message
run "$dbq" "$policy" stream "SELECT id FROM s WHERE"
check_eq "stream of bad SQL: exit 1" 1 "$rc"
check_match "stream of bad SQL: the server's error" "SQL syntax" "$err"

tap_done
