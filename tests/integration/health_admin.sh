#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl health exclude|clear|release|list|export against a private
# MariaDB: admin overrides win over the scanner across scans until
# released, every change is in the history and runs the commands, bad
# input is refused with the documented exit codes.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/health_common.sh"

"$fwdctl" health --help >"$d/help" 2>&1
check_eq "health --help exits 0" 0 $?
check_match "help has a synopsis" 'Usage: fwdctl health scan' "$(cat "$d/help")"
check_match "help has exit status" 'Exit status:' "$(cat "$d/help")"

# Statistics first: fwd09 healthy for an hour, fwd10 slow and loaded for
# three hours.
printf 'fwd fwd09 0 60 2000000000 100 1\nfwd fwd10 0 180 100000000 100 5\n' |
	rollups
out=$("$fwdctl" health clear fwd10 --reason "known slow, benchmark" 2>&1)
check_eq "clear of an ok forwarder: unchanged, pinned" \
	"forwarder fwd10: state unchanged" "$out"

# ---- admin exclusion of a healthy forwarder survives good windows
out=$("$fwdctl" health exclude fwd09 --reason "firmware update" 2>&1)
check_eq "exclude exits 0" 0 $?
check_eq "exclude prints the change" "forwarder fwd09: ok -> excluded" "$out"
check_eq "alert ran for the admin exclusion" "forwarder fwd09 ok excluded" \
	"$(cat "$d/alerts")"
scan_until 60 >/dev/null 2>&1
check_eq "scan exits 0" 0 $?
check_eq "admin exclusion kept across a scan of good windows" excluded \
	"$(health_state fwd fwd09)"
check_eq "source admin, scanner's good streak still counted" "admin	6" \
	"$(q "SELECT source, good_windows FROM health WHERE name = 'fwd09'")"
check_eq "reason recorded" "admin exclude: firmware update" \
	"$(q "SELECT reason FROM health WHERE name = 'fwd09'")"
scan_until 70 >/dev/null 2>&1
check_eq "and across the next scan" excluded "$(health_state fwd fwd09)"
out=$("$fwdctl" health exclude fwd09 --reason "again" 2>&1)
check_eq "excluding again: unchanged" "forwarder fwd09: state unchanged" "$out"

# ---- admin clear pins a slow forwarder ok
scan_until 120 >/dev/null 2>&1
check_eq "pinned ok although slow for two hours" ok "$(health_state fwd fwd10)"
check_eq "scanner's bad streak counted meanwhile (windows 6-11)" "admin	6" \
	"$(q "SELECT source, bad_windows FROM health WHERE name = 'fwd10'")"

# ---- release: back to the scanner
out=$("$fwdctl" health release fwd09 2>&1)
check_eq "release of an excluded forwarder" "forwarder fwd09: excluded -> ok" \
	"$out"
check_eq "released: source scanner" "ok	scanner" \
	"$(q "SELECT state, source FROM health WHERE name = 'fwd09'")"
check_eq "history: admin exclusion closed, ok opened" \
	"excluded	admin	1
ok	admin	0" \
	"$(q "SELECT state, source, end_at IS NOT NULL FROM health_history WHERE name = 'fwd09' ORDER BY id")"
"$fwdctl" health release fwd10 >/dev/null 2>&1
scan_until 130 >/dev/null 2>&1
check_eq "released slow forwarder: the scanner flags it at once" suspect \
	"$(health_state fwd fwd10)"

# ---- OSTs: the exclusion command gets the OST name
"$fwdctl" health exclude lustre-OST0042 --reason "RAID rebuild" >/dev/null 2>&1
check_eq "OST exclude exits 0" 0 $?
"$fwdctl" health clear lustre-OST0042 --reason "rebuilt" >/dev/null 2>&1
check_eq "OST commands ran with the name as last argument" \
	"exclude lustre-OST0042
restore lustre-OST0042" "$(cat "$d/ost.log")"

# ---- list and export
lst=$("$fwdctl" health list)
check_match "list has a header" '^KIND +NAME +STATE +SINCE +SOURCE' "$lst"
check_match "list shows the suspect forwarder" \
	'forwarder +fwd10 +suspect +[0-9T:Z-]+ +scanner' "$lst"
check_eq "list --state suspect shows only fwd10" "fwd10" \
	"$("$fwdctl" health list --state suspect | awk 'NR > 1 { print $2 }')"
check_match "list --state suspect -P -n: the row, '|'-separated" \
	'^forwarder\|fwd10\|suspect\|[0-9T:-]+Z\|scanner\|[0-9]+\|[0-9]+\|' \
	"$("$fwdctl" health list --state suspect -P -n)"
check_eq "list -P -n: one line" 1 \
	"$("$fwdctl" health list --state suspect --parsable --noheader | wc -l)"
"$fwdctl" health list --state broken >"$d/e0" 2>&1
check_eq "list --state with a bad state: exit 2" 2 $?
check_eq "  message" \
	"fwdctl health list: --state 'broken': use ok, suspect or excluded" \
	"$(cat "$d/e0")"
js=$("$fwdctl" health list --json | tr -d '\n' | sed 's/  */ /g')
check_match "list --json has the fields" \
	'\{ "kind": "forwarder", "name": "fwd09", "state": "ok", "since": "[0-9T:Z-]+", "source": "scanner", "bad_windows": 0, "good_windows": [0-9]+, "scanned_until": "[0-9T:Z-]+", "reason": "admin release: released to the scanner" \}' \
	"$js"
exp=$("$fwdctl" health export)
check_match "export is HEALTH.json" \
	'^\[(\{"kind":"(forwarder|ost)","name":"[^"]+","state":"(ok|suspect|excluded)"\},?)+\]$' \
	"$exp"
check_match "export has the pinned OST" \
	'\{"kind":"ost","name":"lustre-OST0042","state":"ok"\}' "$exp"

# ---- bad input
"$fwdctl" health exclude fwd01 >"$d/e1" 2>&1
check_eq "exclude without --reason: exit 2" 2 $?
check_eq "  message" "fwdctl health exclude: --reason is required" \
	"$(cat "$d/e1")"
"$fwdctl" health exclude nosuch --reason x >"$d/e2" 2>&1
check_eq "unknown component: exit 1" 1 $?
check_match "  message names it" "'nosuch' is neither a forwarder nor an OST" \
	"$(cat "$d/e2")"
"$fwdctl" health exclude nosuch --reason x --kind router >"$d/e3" 2>&1
check_eq "bad --kind: exit 2" 2 $?
check_eq "  message" "fwdctl health: --kind 'router': use forwarder or ost" \
	"$(cat "$d/e3")"
"$fwdctl" health scan --since yesterday >"$d/e4" 2>&1
check_eq "bad time: exit 2" 2 $?
check_match "  message quotes it" "time 'yesterday': use Unix seconds" \
	"$(cat "$d/e4")"
# strtod alone would take these as times (nan, inf, hex, overflow).
for t in -nand -infd 1e999 99999999999999999999999 0x10 . -.h; do
	"$fwdctl" health scan --since "$t" >"$d/e4" 2>&1
	check_eq "bad time '$t': exit 2" 2 $?
	check_match "  message quotes it" "time '$t': use Unix seconds" \
		"$(cat "$d/e4")"
done
"$fwdctl" health report --since 253402300799 >"$d/e4" 2>&1
check_eq "last second of year 9999 is a time: exit 0" 0 $?
# Stored and printed one per line: no control characters, no silent cut.
long=$(printf '%0241d' 0)
"$fwdctl" health exclude fwd01 --reason "$long" >"$d/e7" 2>&1
check_eq "overlong reason: exit 2" 2 $?
check_eq "  message" \
	"fwdctl health exclude: --reason: 241 characters, at most 240" \
	"$(cat "$d/e7")"
"$fwdctl" health exclude fwd01 --reason "$(printf 'two\nlines')" \
	>"$d/e7" 2>&1
check_eq "newline in the reason: exit 2" 2 $?
check_eq "  message" \
	"fwdctl health exclude: --reason: a control character (0x0a) at byte 4" \
	"$(cat "$d/e7")"
"$fwdctl" health exclude "$(printf 'ost\033[2J')" --kind ost --reason x \
	>"$d/e7" 2>&1
check_eq "escape in a name: exit 2" 2 $?
check_eq "  message" \
	"fwdctl health exclude: name: a space or control character (0x1b) at byte 4" \
	"$(cat "$d/e7")"
# A window in the future would be marked scanned before its statistics
# arrive, and never looked at again.
future=$(($(date +%s) + 3600))
"$fwdctl" health scan --until "$future" >"$d/e8" 2>&1
check_eq "scan --until in the future: exit 2" 2 $?
check_eq "  message" \
	"fwdctl health scan: --until '$future' is in the future: its windows are not complete yet" \
	"$(cat "$d/e8")"
check_eq "  nothing marked scanned" 0 \
	"$(q "SELECT COUNT(*) FROM health WHERE last_scan_at > UNIX_TIMESTAMP()")"
"$fwdctl" health scan --since 2000 --until 1000 >"$d/e8" 2>&1
check_eq "scan --since after --until: exit 2" 2 $?
check_eq "  message" \
	"fwdctl health scan: --since '2000' is not before --until '1000'" \
	"$(cat "$d/e8")"
"$fwdctl" health frobnicate >"$d/e5" 2>&1
check_eq "unknown subcommand: exit 2" 2 $?
"$fwdctl" health exclude fwd01 fwd02 --reason x >"$d/e6" 2>&1
check_eq "extra argument: exit 2" 2 $?
check_eq "nothing stored for refused input" "0 scanner" \
	"$(q "SELECT COUNT(*) FROM health WHERE name = 'nosuch' OR name LIKE 'ost%'") $(q "SELECT source FROM health WHERE name = 'fwd01'")"

# ---- database unavailable: exit 3
sed "s|socket: .*|socket: $d/none.sock|" "$d/policy.yaml" >"$d/down.yaml"
"$fwdctl" --policy "$d/down.yaml" health list >"$d/e7" 2>&1
check_eq "database down: exit 3" 3 $?
"$fwdctl" --policy "$d/down.yaml" health scan >"$d/e8" 2>&1
check_eq "database down, scan: exit 3" 3 $?

# A read-only server (a replica after a failover) answers but takes no
# write: the database is unavailable for this command (exit 3), it is not
# the admin's input that is wrong; nothing changed.
q "SET GLOBAL read_only = ON"
before=$(q "SELECT COUNT(*) FROM health")
"$fwdctl" health exclude fwd02 --reason "read-only test" >"$d/e9" 2>&1
check_eq "read-only database: exclude exits 3" 3 $?
check_match "read-only database: says why" "read-only|--read-only" "$(cat "$d/e9")"
check_eq "read-only database: nothing changed" "$before" "$(q "SELECT COUNT(*) FROM health")"
q "SET GLOBAL read_only = OFF"

tap_done
