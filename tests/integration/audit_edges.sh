#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl audit at the edges: --since at a second's boundary (records at or
# after TIME, to the half second the table's whole seconds stand for), the
# live file missing beside its rotated copies, copies numbered past a gap,
# and a filter that keeps nothing; the database's table (--db) at the same
# boundaries.  Table-driven: each row a filter and the job ids it must
# list, oldest first.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"

fwdctl=$top_builddir/fwdctl
[ -x "$fwdctl" ] || skip_all "fwdctl not built"
T=$(mktemp -d)
trap 'rm -rf "$T"; db_cleanup' EXIT
unset FWDALLOC_POLICY

# rec TS JOB USER: one record as the controller writes it.
rec() {
	printf '{"time": "%s", "ts": %s, "event": "prolog", "job_id": "%s", "user": "%s", "request": "upgrade", "action": "default", "forwarders_after": ["fwd01"], "outcome": "default"}\n' \
		"$(date -u -d "@${1%.*}" +%Y-%m-%dT%H:%M:%S.000Z)" "$1" "$2" "$3"
}
A=$T/audit.jsonl
cat >"$T/policy.yaml" <<EOP
topology: $top_srcdir/etc/topology.yaml
audit:
  file: $A
EOP
# ids JSON: the job ids of fwdctl audit --json, space-separated
ids() { printf '%s' "$1" | jq -r '[.[].job_id] | join(" ")'; }
run() {
	out=$("$fwdctl" --policy "$T/policy.yaml" audit "$@" --json 2>"$T/err")
	rc=$?
}

# Around t0 = 1700000000 (2023-11-14T22:13:20Z), in the rotated copy .1
# and the live file.
t0=1700000000
{
	rec $((t0 - 1)) 11 alice
	rec "$((t0 - 1)).4" 12 bob
	rec "$((t0 - 1)).5" 13 alice
} >"$A.1"
{
	rec "$t0" 14 bob
	rec "$t0.4" 15 alice
	rec $((t0 + 1)) 16 bob
} >"$A"

# filter | ids wanted
while IFS='|' read -r filter want; do
	# shellcheck disable=SC2086
	run $filter
	check_eq "audit $filter: exit 0" 0 "$rc" || diag "$(cat "$T/err")"
	check_eq "audit $filter: jobs" "$want" "$(ids "$out")"
done <<EOF
|11 12 13 14 15 16
--since $t0|13 14 15 16
--since $((t0 + 1))|16
--since $((t0 - 1))|11 12 13 14 15 16
--since 2023-11-14T22:13:20Z|13 14 15 16
--since 2023-11-14T22:13:21Z|16
--since $((t0 + 2))|
--since $t0 --user alice|13 15
--since $t0 --user carol|
--job 12|12
--job 12 --since $t0|
EOF

# The live file missing (rotated just now): the copies still count.
mv "$A" "$A.0"
run --since "$t0"
check_eq "live file missing: exit 0" 0 "$rc"
check_eq "live file missing: the rotated copy's records" "13" "$(ids "$out")"

# .1 and .2.gz: read oldest first; a copy numbered past a gap (.4 with no
# .3) is not part of the trail.
rec $((t0 - 100)) 21 alice | gzip >"$A.2.gz"
rec $((t0 - 200)) 41 alice >"$A.4"
mv "$A.0" "$A"
run
check_eq "rotated .2.gz, .1, live: oldest first, .4 past the gap left out" \
	"21 11 12 13 14 15 16" "$(ids "$out")"
run --since $((t0 - 100))
check_eq "--since the .2.gz record's second" "21 11 12 13 14 15 16" \
	"$(ids "$out")"
run --since $((t0 - 99))
check_eq "--since one second after it" "11 12 13 14 15 16" "$(ids "$out")"

# Nothing but rotated copies, the live file never written.
rm -f "$A"
run --user alice
check_eq "only rotated copies: exit 0" 0 "$rc"
check_eq "only rotated copies: their records" "21 11 13" "$(ids "$out")"

# ---- --db: the table holds whole seconds ---------------------------------
db_start
fw db init
check_eq "db init" 0 "$rc"
# job 13's record is at t0 - 0.5, its row at the whole second below, as
# the controller stores it
for j in 11 13 14 16; do
	case $j in
	11) ts=$((t0 - 1)) col=$ts ;;
	13) ts=$((t0 - 1)).5 col=$((t0 - 1)) ;;
	14) ts=$t0 col=$ts ;;
	16) ts=$((t0 + 1)) col=$ts ;;
	esac
	q "INSERT INTO audit (ts, job_id, user, action, outcome, record)
	   VALUES ($col, $j, 'alice', 'default', 'default',
	   '$(rec "$ts" "$j" alice)')"
done
while IFS='|' read -r filter want; do
	# shellcheck disable=SC2086
	fw audit --db $filter --json
	check_eq "audit --db $filter: jobs" "$want" "$(ids "$out")" ||
		diag "$err"
done <<EOF
|11 13 14 16
--since $t0|13 14 16
--since $((t0 + 1))|16
--since $((t0 - 1))|11 13 14 16
--since $((t0 + 2))|
EOF

tap_done
