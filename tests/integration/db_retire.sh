#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl db init after a topology change (issue 29, item 7), against a
# private MariaDB: forwarders and OSTs that left the topology are retired
# (their rows kept, with retired_at), the health scan skips them, and one
# that comes back is active again.  A grant of the node account that
# fails makes db init fail, after the schema and the topology are synced.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start
fix=$(cd "$top_srcdir/tests/fixtures/minicluster" && pwd)
# T1: the mini-cluster's 8 forwarders and three OSTs; T2 without fwd7,
# fwd8 and lustre-OST0002.
T1=$d/t1.yaml
T2=$d/t2.yaml
{
	cat "$fix/topology.yaml"
	printf 'osts:\n'
	for o in 0 1 2; do
		printf '  - {name: lustre-OST000%s, bandwidth: 1.2GB/s}\n' $o
	done
} >"$T1"
grep -v 'name: fwd[78],\|OST0002' "$T1" >"$T2"
P=$d/p.yaml
{
	echo "topology: $T1"
	sed -n '/^database:/,$p' "$policy"
	printf 'audit:\n  file: %s/audit.jsonl\n' "$d"
} >"$P"
retired() { q "SELECT IFNULL(GROUP_CONCAT(name ORDER BY name), '') FROM $1 WHERE retired_at IS NOT NULL"; }

run() { out=$("$@" 2>"$d/err"); rc=$?; err=$(cat "$d/err"); }
run "$fwdctl" --policy "$P" db init
check_eq "init with T1: exit 0" 0 "$rc"
check_match "init with T1: synced" "synced 8 forwarders and 3 OSTs from $T1" "$out"
check_eq "init with T1: nothing retired" "|" "$(retired forwarders)|$(retired osts)"

# A scan with T1 gives every forwarder its health row.
run "$fwdctl" --policy "$P" health scan
check_eq "scan with T1: exit 0" 0 "$rc"
scan7=$(q "SELECT IFNULL(last_scan_at, 0) FROM health WHERE name = 'fwd7'")
check_match "scan with T1: fwd7 scanned" '^[1-9][0-9]*$' "$scan7"

run "$fwdctl" --policy "$P" --topology "$T2" db init
check_eq "init with T2: exit 0" 0 "$rc"
check_eq "init with T2: says what it retired" \
	"synced 6 forwarders and 2 OSTs from $T2
retired 2 forwarder(s) and 1 OST(s) no longer in it (kept for history, never scanned or allocated)" \
	"$(printf '%s\n' "$out" | grep -v '^schema ')"
check_eq "init with T2: fwd7, fwd8 retired" "fwd7,fwd8" "$(retired forwarders)"
check_eq "init with T2: lustre-OST0002 retired" "lustre-OST0002" "$(retired osts)"
check_eq "init with T2: every row kept" "8 3" \
	"$(q "SELECT COUNT(*) FROM forwarders") $(q "SELECT COUNT(*) FROM osts")"
run "$fwdctl" --policy "$P" --topology "$T2" db init
check_eq "init with T2 again: nothing more retired" "" \
	"$(printf '%s\n' "$out" | grep '^retired')"

# The health scan under T2 does not scan the retired fwd7 (its row
# stays as it was), and still scans fwd1.
sleep 1
q "UPDATE health SET last_scan_at = 1 WHERE name IN ('fwd1', 'fwd7')"
run "$fwdctl" --policy "$P" --topology "$T2" health scan
check_eq "scan with T2: exit 0" 0 "$rc"
check_eq "scan with T2: fwd7 (retired) not scanned" 1 \
	"$(q "SELECT last_scan_at FROM health WHERE name = 'fwd7'")"
check_match "scan with T2: fwd1 scanned" '^[1-9][0-9]+$' \
	"$(q "SELECT last_scan_at FROM health WHERE name = 'fwd1'")"

# Back into the topology: active again.
run "$fwdctl" --policy "$P" db init
check_eq "init with T1 again: exit 0" 0 "$rc"
check_eq "init with T1 again: nothing retired" "|" \
	"$(retired forwarders)|$(retired osts)"

# A grant that fails: the node account does not exist for this host.
run "$fwdctl" --policy "$P" db init --node-host 192.0.2.1
check_eq "grant to a missing account: exit 1" 1 "$rc"
check_match "grant to a missing account: says so, and how to fix it" \
	"^fwdctl db: granting the node account: .*192.0.2.1.*; create the node account \(see db/SCHEMA.md; --node-host HOST for its host part\), then run \`fwdctl db init\` again, or pass --no-grant\$" \
	"$err"
run "$fwdctl" --policy "$P" db init --no-grant
check_eq "--no-grant: exit 0" 0 "$rc"

tap_done
