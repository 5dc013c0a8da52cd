#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl audit: the trail with the copies logrotate left (plain and
# gzip-compressed), one compressed file by --file, the database table by
# --db; --json always one valid JSON array; -P/-n tables; job ids checked.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"; db_cleanup' EXIT

# Records as the controller writes them (controller/audit.c record_base),
# the fields the table shows.
rec() { # ts job user action forwarder outcome
	printf '{"time": "%s", "ts": %s, "event": "prolog", "job_id": "%s", "user": "%s", "request": "upgrade", "action": "%s", "forwarders_after": ["%s"], "outcome": "%s"}\n' \
		"$(date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.000Z)" "$1" "$2" "$3" "$4" "$5" "$6"
}
now=$(date +%s)
old=$((now - 40 * 86400)) mid=$((now - 10 * 86400)) new=$((now - 60))
A=$T/log/audit.jsonl
mkdir -p "$T/log"
rec "$old" 101 alice upgrade fwd05 applied | gzip >"$A.2.gz"
rec "$mid" 102 bob isolate fwd06 applied >"$A.1"
rec "$new" 103 alice default fwd01 default >"$A"
cat >"$T/policy.yaml" <<EOP
topology: $top_srcdir/etc/topology.yaml
audit:
  file: $A
EOP
f() { out=$("$top_builddir/fwdctl" --policy "$T/policy.yaml" "$@" 2>"$T/err"); rc=$?; err=$(cat "$T/err"); }

f audit --json
check_eq "the trail: rotated .gz, rotated plain, live file, oldest first" \
	"101 102 103" "$(printf '%s' "$out" | jq -r '[.[].job_id] | join(" ")')"
f audit --file "$A.2.gz" --json
check_eq "--file reads a gzip-compressed file" "101" \
	"$(printf '%s' "$out" | jq -r '.[].job_id')"
f audit --since -30d --json
check_eq "--since -30d (sacct's form)" "102 103" \
	"$(printf '%s' "$out" | jq -r '[.[].job_id] | join(" ")')"
f audit --since "$(date -u -d "@$((mid - 1))" +%Y-%m-%dT%H:%M:%SZ)" --json
check_eq "--since ISO 8601 with Z" "102 103" \
	"$(printf '%s' "$out" | jq -r '[.[].job_id] | join(" ")')"
f audit --user nobody --json
check_eq "--json with nothing matching: an empty JSON array" "[]" "$out"
f --json audit --user nobody
check_eq "global --json too" "[]" "$out"
f audit --job 103 -P
check_eq "-P: the header and the row, '|'-separated, unpadded" \
	"TIME|EVENT|JOB|USER|REQUEST|ACTION|FORWARDERS|OUTCOME
$(date -u -d "@$new" +%Y-%m-%dT%H:%M:%SZ)|prolog|103|alice|upgrade|default|fwd01|default" "$out"
f audit --job 103 --parsable --noheader
check_eq "--parsable --noheader: the row alone" \
	"$(date -u -d "@$new" +%Y-%m-%dT%H:%M:%SZ)|prolog|103|alice|upgrade|default|fwd01|default" "$out"
f audit --job 103 -n
check_match "-n: the padded row alone" "^[^ ]+Z +prolog +103 +alice " "$out"
check_eq "-n: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
for bad in abc 0 -5 12x 99999999999; do
	f audit --job "$bad"
	check_eq "--job $bad: exit 2" 2 "$rc"
	check_match "--job $bad: says why" \
		"audit: --job: '$bad' is not a job id \\(1\\.\\.4294967295\\)" "$err"
done
rm -f "$A" "$A.1" "$A.2.gz"
f audit --json
check_eq "no audit file yet: an empty JSON array, exit 0" "0 []" "$rc $out"

# ---- --db: the audit table ----------------------------------------------
db_start
fw db init
check_eq "db init" 0 "$rc"
q "INSERT INTO audit (ts, job_id, user, action, outcome, record) VALUES
  ($mid, 202, 'bob', 'isolate', 'applied', '$(rec "$mid" 202 bob isolate fwd06 applied)'),
  ($new, 203, 'alice', 'upgrade', 'applied', '$(rec "$new" 203 alice upgrade fwd07 applied)'),
  ($old, 201, 'alice', 'upgrade', 'applied', '$(rec "$old" 201 alice upgrade fwd05 applied)')"
fw audit --db --json
check_eq "--db: every row, oldest first" "201 202 203" \
	"$(printf '%s' "$out" | jq -r '[.[].job_id] | join(" ")')"
fw audit --db --user alice --since -30d -P -n
check_eq "--db with filters, parsable" \
	"$(date -u -d "@$new" +%Y-%m-%dT%H:%M:%SZ)|prolog|203|alice|upgrade|upgrade|fwd07|applied" "$out"
fw audit --db --job 202 --json
check_eq "--db --job" "202" "$(printf '%s' "$out" | jq -r '.[].job_id')"

# The other tables take -P and -n the same way.
fw alloc list -P
check_eq "alloc list -P with nothing held: the header alone" \
	"JOB|ACTION|FORWARDER|HOLD|NODES|NODELIST|SINCE" "$out"
fw alloc list -P -n
check_eq "alloc list -P -n with nothing held: nothing" "" "$out"
fw alloc list --json
check_eq "alloc list --json with nothing held: []" "[]" "$out"
fw alloc show abc
check_eq "alloc show abc: exit 2 and why" \
	"2 fwdctl alloc show: 'abc' is not a job id (1..4294967295)" "$rc $err"
fw health list -P
check_eq "health list -P on an empty table: the header alone" \
	"KIND|NAME|STATE|SINCE|SOURCE|BAD|GOOD|REASON" "$out"

tap_done
