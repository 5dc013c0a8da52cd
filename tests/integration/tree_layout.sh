#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The layout DESIGN.md and db/README.md promise, checked on the sources:
# each table's SQL in its one owning folder (db/ holds only the schema),
# and #include arrows that point down the layers only.
set -u
. "$top_srcdir/tests/integration/tap.sh"
cd "$top_srcdir" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The library and program folders (tests/ and bench/ seed and inspect
# tables directly and may include anything).
FOLDERS="common db topology policies allocator sim monitor profiler controller report service spank cli"

# table owner: keep in step with the table in db/README.md.
OWNERS="
forwarders monitor
osts monitor
samples_raw monitor
samples_hist monitor
rollups_minute monitor
rollups_15min monitor
rollups_hist_minute monitor
jobstats_raw monitor
counter_state monitor
health monitor
health_history monitor
health_lock monitor
ingest_horizon monitor
ingest_arrivals monitor
ingest_lock monitor
history_examined controller
jobs controller
allocations controller
decision_lock controller
ledger_version controller
audit controller
job_io profiler
profiles profiler
node_allocations db
node_allocations_for spank
schema_version db
"

# Folders whose C sources name table (or procedure) $1 in SQL (FROM, INTO,
# UPDATE, JOIN, TABLE, VIEW, CALL); db/schema.c, the DDL, is left out.
sql_folders() {
	for d in $FOLDERS; do
		grep -rlE --include='*.c' --include='*.h' \
			"(FROM|INTO|UPDATE|JOIN|TABLE|VIEW|CALL)[[:space:]]+\`?$1\`?([[:space:](,;\"]|$)" \
			"$d" 2>/dev/null | grep -v '^db/schema\.c$' |
			sed 's|/.*||'
	done | sort -u | tr '\n' ' ' | sed 's/ $//'
}

printf '%s\n' "$OWNERS" >"$tmp/owners"
while read -r table owner; do
	[ -n "$table" ] || continue
	got=$(sql_folders "$table")
	# What only the DDL names (schema_version; the view only the
	# node_allocations_for procedure reads) belongs to db/.
	[ "$owner" = db ] && got=${got:-db}
	check_eq "table $table: SQL only in $owner/" "$owner" "$got"
done <"$tmp/owners"
rm -f "$tmp/owners"

# Every table, view and procedure the schema creates has an owner above.
for t in $(grep -oE 'CREATE (TABLE IF NOT EXISTS|OR REPLACE [A-Z ]*VIEW|VIEW|OR REPLACE PROCEDURE) [a-z_][a-z0-9_]*' db/schema.c |
	awk '{print $NF}' | sort -u); do
	if printf '%s\n' "$OWNERS" | grep -q "^$t "; then pass "table $t has an owner"
	else fail "table $t has an owner"; fi
done

# cli/ parses, prints and exits: no SQL of its own, not even built at run
# time; report/ reads through the owners; service/ serves, controller/
# does the work; spank/ has only the
# node's read of its view.
sql=$(grep -nE '"(SELECT|INSERT|UPDATE|DELETE|REPLACE) ' cli/*.c report/*.c service/*.c spank/*.c |
	grep -v '^spank/fwdalloc_node\.c:')
check_eq "cli/, report/, service/ and spank/ hold no SQL" "" "$sql"

# The layers, bottom up: a folder may include itself and those listed.
allowed() {
	case $1 in
	common) echo "common" ;;
	db) echo "common db" ;;
	topology) echo "common topology" ;;
	policies) echo "common db topology policies" ;;
	allocator | monitor | profiler)
		echo "common db topology policies $1" ;;
	controller | sim)
		echo "common db topology policies allocator monitor profiler $1" ;;
	report)
		echo "common db topology policies allocator monitor profiler controller sim report" ;;
	service)
		echo "common db topology policies allocator monitor profiler controller sim report service" ;;
	cli | spank)
		echo "$FOLDERS" ;;
	esac
}
for d in $FOLDERS; do
	bad=
	for inc in $(grep -ohE '#include "[a-z_]+/' "$d"/*.c "$d"/*.h 2>/dev/null |
		sed 's|#include "||; s|/$||' | sort -u); do
		case " $(allowed "$d") " in
		*" $inc "*) ;;
		*) bad="$bad $inc" ;;
		esac
	done
	check_eq "$d/ includes only the layers below it" "" "${bad# }"
done

# One style (.clang-format) on every C file, the same from every
# clang-format major the project builds on (see .clang-format).
if command -v clang-format >/dev/null 2>&1; then
	diag "$(clang-format --version)"
	drift=
	for f in $(find $FOLDERS tests bench -name '*.[ch]' | sort); do
		clang-format --dry-run -Werror "$f" >/dev/null 2>&1 ||
			drift="$drift $f"
	done
	check_eq "every C file is clang-format clean" "" "${drift# }" || {
		set -- $drift
		diag "what clang-format would change in $1:" \
			"$(clang-format "$1" | diff -u "$1" - | head -n 30)"
	}
else
	fail "every C file is clang-format clean: no clang-format installed"
fi

tap_done
