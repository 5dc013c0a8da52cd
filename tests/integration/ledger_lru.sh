#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Least recent load first, read from forwarders.last_used_at: migration 9
# fills it from the released allocations (shadow decisions included, a row
# for forwarders never mirrored, never moving a time backwards); a prolog
# picks the forwarders whose last_used_at is oldest, whatever the
# allocations' history says; every release (epilog) stamps the forwarders
# of the rows it released, a shadow decision's and an unmirrored one's
# included; `db init --topology` keeps those times.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/lru.yaml
mc_policy "$P"
mc_init "$P"

# ---- migration 9 ---------------------------------------------------------
# A ledger from before: released rows only (no forwarder mirrored), one
# of them a shadow decision's, two releases of fwd5.
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at, released_at, release_reason) VALUES
	(1, 'fwd1', 'c[1-4]', 4, 'default', 10, 800, 'epilog'),
	(2, 'fwd2', 'c[5-8]', 4, 'default', 10, 700, 'epilog'),
	(3, 'fwd3', 'c[1-4]', 4, 'scale', 10, 600, 'epilog'),
	(4, 'fwd4', 'c[1-4]', 4, 'scale', 10, 500, 'epilog'),
	(5, 'fwd5', 'c[1-4]', 4, 'scale', 10, 90, 'epilog'),
	(6, 'fwd5', 'c[1-4]', 4, 'scale', 10, 100, 'reconcile'),
	(7, 'fwd6', 'c[1-4]', 4, 'scale', 10, 400, 'epilog'),
	(8, 'fwd7', 'c[5-8]', 4, 'scale', 10, 200, 'epilog'),
	(9, 'fwd8', 'c[5-8]', 4, 'shadow', 10, 300, 'epilog')"
q "DELETE FROM forwarders"
q "DELETE FROM schema_version WHERE version >= 9"
fw db migrate
check_eq "migrate to 9: exit 0" 0 "$rc"
# (from 8 through 9 to the newest version, whichever that is)
check_match "migrate from 8 through 9: output" \
	'^schema migrated from version 8 to (9|[1-9][0-9]+)$' \
	"$(printf '%s\n' "$out" | grep -v '^schema migrated from version 9')"
check_eq "each forwarder's last release, shadow included, a row for each" \
	"fwd1 800 NULL
fwd2 700 NULL
fwd3 600 NULL
fwd4 500 NULL
fwd5 100 NULL
fwd6 400 NULL
fwd7 200 NULL
fwd8 300 NULL" \
	"$(q "SELECT name, last_used_at, address FROM forwarders ORDER BY name" | tr '\t' ' ')"
q "UPDATE forwarders SET last_used_at = 5000 WHERE name = 'fwd3'"
q "DELETE FROM schema_version WHERE version >= 9"
fw db migrate
check_eq "migration 9 again: exit 0" 0 "$rc"
check_eq "migration 9 never moves a time backwards" "5000 8" \
	"$(q "SELECT (SELECT last_used_at FROM forwarders WHERE name = 'fwd3'), COUNT(*) FROM forwarders" | tr '\t' ' ')"

# ---- the prolog's order ----------------------------------------------------
# fwd4's time says it is the least recently used, though the allocations
# say 500: the order comes from forwarders.last_used_at.
q "UPDATE forwarders SET last_used_at = 50 WHERE name = 'fwd4'"
hook() { # prolog|epilog JOB NODES USER NAME
	env -i PATH="$PATH" SLURM_JOB_ID="$2" SLURM_JOB_USER="$4" \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$3" SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME="$5" SPANK_IO_UPGRADE=scale \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$P" "$1" >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
}
record() { grep "\"event\":\"$1\",\"job_id\":\"$2\"" "$d/audit.jsonl" | tail -n 1; }
hook prolog 101 'c[1-4]' root bwapp
check_eq "prolog 101 exits 0" 0 "$rc"
check_eq "101 scales to 4 forwarders" '"scale"' \
	"$(record prolog 101 | jq -c .action)"
# The default fwd1, then the least recently used: fwd4 (50), fwd5 (100),
# fwd7 (200); not fwd8 (300), fwd6 (400), fwd2 (700) nor fwd3 (5000).
check_eq "101 holds its default and the three least recently used" \
	"fwd1,fwd4,fwd5,fwd7" \
	"$(q "SELECT GROUP_CONCAT(forwarder ORDER BY forwarder) FROM allocations WHERE job_id = 101 AND released_at IS NULL")"

# ---- releases stamp last_used_at --------------------------------------------
hook epilog 101 'c[1-4]' root bwapp
check_eq "epilog 101 exits 0" 0 "$rc"
rel101=$(q "SELECT MAX(released_at) FROM allocations WHERE job_id = 101")
check_eq "101's release stamped its 4 forwarders" "fwd1 $rel101
fwd4 $rel101
fwd5 $rel101
fwd7 $rel101" \
	"$(q "SELECT name, last_used_at FROM forwarders WHERE name IN (SELECT forwarder FROM allocations WHERE job_id = 101) ORDER BY name" | tr '\t' ' ')"
# A time in the future is not moved back.
q "UPDATE forwarders SET last_used_at = 4000000000 WHERE name = 'fwd1'"
# A shadow decision on fwd2 and a row on a forwarder never mirrored.
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at) VALUES (102, 'fwd1', 'c[1-4]', 4, 'default', 10),
	(102, 'fwd2', 'c[5-8]', 4, 'shadow', 10),
	(102, 'fwdgone', 'c[5-8]', 4, 'default', 10)"
hook epilog 102 'c[1-8]' root other
check_eq "epilog 102 exits 0" 0 "$rc"
rel=$(q "SELECT MAX(released_at) FROM allocations WHERE job_id = 102")
check_eq "102's release: shadow and unmirrored stamped, no time moved back" \
	"fwd1 4000000000 NULL
fwd2 $rel NULL
fwdgone $rel NULL" \
	"$(q "SELECT name, last_used_at, address FROM forwarders WHERE name IN ('fwd1', 'fwd2', 'fwdgone') ORDER BY name" | tr '\t' ' ')"
check_eq "a second epilog releases nothing and stamps nothing" \
	"0 $rel" \
	"$(hook epilog 102 'c[1-8]' root other
	   q "SELECT (SELECT COUNT(*) FROM allocations WHERE job_id = 102 AND released_at <> $rel), (SELECT last_used_at FROM forwarders WHERE name = 'fwd2')" | tr '\t' ' ')"

# ---- mirroring keeps the times ----------------------------------------------
out=$("$fwdctl" --policy "$P" --topology "$fix/topology.yaml" db init 2>&1)
check_eq "db init --topology: exit 0" 0 "$?"
check_eq "mirrored: addresses filled, last_used_at kept" \
	"fwd1 10.0.0.1 4000000000
fwd2 10.0.0.2 $rel
fwd5 10.0.0.5 $rel101
fwdgone NULL $rel" \
	"$(q "SELECT name, address, last_used_at FROM forwarders WHERE name IN ('fwd1', 'fwd2', 'fwd5', 'fwdgone') ORDER BY name" | tr '\t' ' ')"

tap_done
