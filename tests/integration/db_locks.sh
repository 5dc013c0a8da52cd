#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Locks only the controller can hold: the compute-node account (whose
# password every compute node holds) does its worst -- the named locks an
# earlier fwdalloc used, locking reads of the ledger, long transactions --
# while controller prologs and epilogs run; they must finish in normal
# time without falling back.  The decision lock itself still serialises
# prologs and its wait is bounded by database.lock_timeout.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

node_read=$top_builddir/tests/tools/node_read
topo=$top_srcdir/tests/fixtures/minicluster/topology.yaml
audit=$d/audit.jsonl

write_policy() { # FILE LOCK_TIMEOUT [TIMEOUT]
	{
		cat <<EOT
topology: $topo
access:
  mode: opt-in
  fail: open
decision:
  decide_timeout: 20s
EOT
		sed -n '/^database:/,$p' "$FWDALLOC_TESTDB_POLICY" |
			sed -e "s/^  lock_timeout: .*/  lock_timeout: $2/" \
				-e "s/^  timeout: .*/  timeout: ${3:-5s}/"
		cat <<EOT
audit:
  file: $audit
  database: true
EOT
	} >"$1"
}
write_policy "$d/policy.yaml" 5s
write_policy "$d/policy-1s.yaml" 1s
# A read timeout under 2 s: the lock is polled rather than waited for.
write_policy "$d/policy-poll.yaml" 1s 1s
policy=$d/policy.yaml

fw --topology "$topo" db init
check_eq "db init exits 0" 0 "$rc"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# hook prolog|epilog JOB NODES [POLICY]: run the controller hook as
# slurmctld would; sets $ms (wall time) and $rc.
hook() {
	t0=$(now_ms)
	env SLURM_JOB_ID="$2" SLURM_JOB_NODELIST="$3" SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_USER=alice SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		"$fwdctl" --policy "${4:-$policy}" "$1" >"$d/hook.out" 2>&1
	rc=$?
	ms=$(($(now_ms) - t0))
	diag "$1 of job $2: ${ms} ms, exit $rc"
}
record() { # EVENT JOB: the job's last audit line of that event
	grep "\"event\":\"$1\",\"job_id\":\"$2\"" "$audit" | tail -n 1
}
held() { q "SELECT COUNT(*) FROM allocations WHERE job_id = $1 AND released_at IS NULL"; }
as_node() {
	mariadb --no-defaults --socket="$FWDALLOC_TESTDB_SOCKET" -N --batch \
		-ufwdalloc_node -p"$(cat "$FWDALLOC_TESTDB_NODE_PASSFILE")" \
		fwdalloc "$@"
}
as_ctl() {
	mariadb --no-defaults --socket="$FWDALLOC_TESTDB_SOCKET" -N --batch \
		-ufwdalloc -p"$(cat "$FWDALLOC_TESTDB_PASSFILE")" fwdalloc "$@"
}
# sleepers USER: how many sessions of USER sit in SLEEP() now.
sleepers() {
	q "SELECT COUNT(*) FROM information_schema.processlist WHERE user = '$1' AND info LIKE '%SLEEP(%'"
}
# wait_sleepers USER N: until N sessions of USER sit in SLEEP() (5 s).
wait_sleepers() {
	for _ in $(seq 1 50); do
		n=$(q "SELECT COUNT(*) FROM information_schema.processlist WHERE user = '$1' AND info LIKE '%SLEEP(%'")
		[ "$n" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# 1. Baseline: a prolog and an epilog with nobody in the way.
hook prolog 101 'c[1-4]'
base_prolog=$ms
check_eq "baseline prolog exits 0" 0 "$rc"
check_match "baseline prolog decided" '"outcome":"default"' "$(record prolog 101)"
hook prolog 102 'c[5-8]'
hook epilog 102 'c[5-8]'
base_epilog=$ms
check_eq "baseline epilog exits 0" 0 "$rc"
check_eq "baseline epilog released the rows" 0 "$(held 102)"

# 2. What the node prolog reads, with the node account.
out=$("$node_read" "$policy" 101 c2 2>&1)
check_eq "node read: the node's forwarder and its address" "default fwd1 10.0.0.1" "$out"
out=$("$node_read" "$policy" 101 c7 2>&1)
check_eq "node read: a node outside the job gets nothing" "" "$out"
out=$("$node_read" "$policy" 102 c5 2>&1)
check_eq "node read: a released job has no decision" "no decision" "$out"

# 3. The node account's worst, all at once, held while the hooks run:
#    the named locks (any account may take any named lock), locking
#    reads of the ledger, and the node read inside long transactions
#    (SERIALIZABLE turns its plain SELECT into a locking read).
as_node --force <<EOT >"$d/hostile1.out" 2>&1 &
SELECT GET_LOCK('fwdalloc.decide', 0), GET_LOCK('fwdalloc.fwdalloc.decide', 0),
       GET_LOCK('fwdalloc.fwdalloc.schema', 0), GET_LOCK('fwdalloc.fwdalloc.health', 0);
START TRANSACTION;
SELECT id FROM node_allocations FOR UPDATE;
SELECT id FROM allocations FOR UPDATE;
SELECT id FROM allocations LOCK IN SHARE MODE;
SELECT id FROM decision_lock FOR UPDATE;
SELECT SLEEP(120);
EOT
h1=$!
as_node --force <<EOT >"$d/hostile2.out" 2>&1 &
SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE;
SET autocommit = 0;
CALL node_allocations_for(101);
SELECT SLEEP(120);
EOT
h2=$!
as_node --force <<EOT >"$d/hostile3.out" 2>&1 &
START TRANSACTION;
CALL node_allocations_for(101);
SELECT SLEEP(120);
EOT
h3=$!
as_node --force <<EOT >"$d/hostile4.out" 2>&1 &
SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE;
DELIMITER //
BEGIN NOT ATOMIC CALL node_allocations_for(101); SELECT SLEEP(120); END//
EOT
h4=$!
check "the node account's sessions are holding on" wait_sleepers fwdalloc_node 4
check_eq "the node account holds the old decision lock name" 1 \
	"$(q "SELECT IS_USED_LOCK('fwdalloc.decide') IS NOT NULL")"

hook epilog 101 'c[1-4]'
att_epilog=$ms
check_eq "under attack: epilog exits 0" 0 "$rc"
check_eq "under attack: epilog released the rows" 0 "$(held 101)"
check_match "under attack: epilog record has no error" '"outcome":"released 1 allocation row' \
	"$(record epilog 101)"
check_eq "under attack: epilog done while the node account held on" 4 \
	"$(sleepers fwdalloc_node)"
hook prolog 103 'c[5-8]'
att_prolog=$ms
check_eq "under attack: prolog exits 0" 0 "$rc"
check_match "under attack: prolog decided, no fallback" '"outcome":"default"' \
	"$(record prolog 103)"
check_eq "under attack: the allocation is written" 1 "$(held 103)"
check_eq "under attack: prolog done while the node account held on" 4 \
	"$(sleepers fwdalloc_node)"
out=$("$node_read" "$policy" 103 c6 2>&1)
check_eq "under attack: the node read still works" "default fwd2 10.0.0.2" "$out"
hook epilog 103 'c[5-8]'
check_eq "under attack: second epilog done while the node account held on" 4 \
	"$(sleepers fwdalloc_node)"
check_eq "under attack: second epilog released the rows" 0 "$(held 103)"
# An operator excluding a failing forwarder, and the health scan, are not
# stalled either (they keep a forwarder that fails out of new launches).
for cmd in "health exclude fwd3 --reason failing" "health scan" \
	"health clear fwd3 --reason repaired"; do
	t0=$(now_ms)
	# shellcheck disable=SC2086 # the command's words
	out=$("$fwdctl" --policy "$policy" $cmd 2>&1)
	rc=$?
	ms=$(($(now_ms) - t0))
	diag "fwdctl $cmd: ${ms} ms, exit $rc: $out"
	check_eq "under attack: fwdctl $cmd exits 0" 0 "$rc"
	check_eq "under attack: fwdctl $cmd done while the node account held on" 4 \
		"$(sleepers fwdalloc_node)"
done
check_eq "under attack: the exclusion and the clearing are recorded" "excluded ok" \
	"$(q "SELECT GROUP_CONCAT(state ORDER BY id SEPARATOR ' ') FROM health_history WHERE name = 'fwd3'")"
diag "prolog ${base_prolog} ms -> ${att_prolog} ms, epilog ${base_epilog} ms -> ${att_epilog} ms with the node account hostile"
# The hostile sessions have shown what they can do: end them.
for id in $(q "SELECT id FROM information_schema.processlist WHERE user = 'fwdalloc_node'"); do
	q "KILL $id" 2>/dev/null || true
done
wait "$h1" "$h2" "$h3" "$h4"

denied() { # TABLE: the refusal of a read of TABLE to the node account
	echo "SELECT command denied to user 'fwdalloc_node'@'localhost' for table \`fwdalloc\`.\`$1\`"
}
h=$(cat "$d/hostile1.out")
check_match "node account: FOR UPDATE on node_allocations refused" "$(denied node_allocations)" "$h"
check_match "node account: FOR UPDATE on allocations refused" "$(denied allocations)" "$h"
check_match "node account: FOR UPDATE on decision_lock refused" "$(denied decision_lock)" "$h"
check_match "node account: the node read refuses a SERIALIZABLE autocommit-off session" \
	"node_allocations_for: call it with autocommit on, outside a transaction" \
	"$(cat "$d/hostile2.out")"
check_match "node account: the node read refuses an open transaction" \
	"node_allocations_for: call it with autocommit on, outside a transaction" \
	"$(cat "$d/hostile3.out")"
check_match "node account: a block around the node read gets the rows, locks nothing" \
	"^fwd1	c\[1-4\]	default	10\.0\.0\.1" "$(cat "$d/hostile4.out")"

# 4. The decision lock, held by the controller account, still serialises
#    prologs, and its wait is bounded by lock_timeout with a clear reason.
as_ctl -e "START TRANSACTION; SELECT id FROM decision_lock FOR UPDATE;
	SELECT SLEEP(3); COMMIT" >"$d/holder.out" 2>&1 &
hp=$!
check "the controller account holds the decision lock" wait_sleepers fwdalloc 1
hook prolog 104 'c[1-4]'
wait "$hp"
check_match "a prolog waits for the decision lock, then decides" \
	'"outcome":"default"' "$(record prolog 104)"
check "and it waited for the holder ($ms ms)" test "$ms" -ge 1000
hook epilog 104 'c[1-4]'

as_ctl -e "START TRANSACTION; SELECT id FROM decision_lock FOR UPDATE;
	SELECT SLEEP(60); COMMIT" >"$d/holder.out" 2>&1 &
hp=$!
check "the controller account holds the decision lock again" wait_sleepers fwdalloc 1
hook prolog 105 'c[1-4]' "$d/policy-1s.yaml"
check_eq "lock wait past lock_timeout: exit 0 (fail open)" 0 "$rc"
check_match "lock wait past lock_timeout: fallback names the decision lock" \
	'"outcome":"fallback: .*decision lock held elsewhere for more than 1s' \
	"$(record prolog 105)"
check_eq "lock wait past lock_timeout: gave up while the holder held on" 1 \
	"$(sleepers fwdalloc)"
check "lock wait past lock_timeout: waited it out ($ms ms)" test "$ms" -ge 900
check_eq "lock wait past lock_timeout: nothing held" 0 "$(held 105)"
hook prolog 106 'c[1-4]' "$d/policy-poll.yaml"
check_match "polled lock past lock_timeout: fallback names the decision lock" \
	'"outcome":"fallback: .*decision lock held elsewhere for more than 1s' \
	"$(record prolog 106)"
check_eq "polled lock past lock_timeout: gave up while the holder held on" 1 \
	"$(sleepers fwdalloc)"
check "polled lock past lock_timeout: waited it out ($ms ms)" test "$ms" -ge 900
# The holder has shown what it can do: end it (its transaction rolls back).
for id in $(q "SELECT id FROM information_schema.processlist WHERE user = 'fwdalloc' AND info LIKE '%SLEEP(%'"); do
	q "KILL $id" 2>/dev/null || true
done
wait "$hp"
# Polling still gets the lock once it is free.
hook prolog 106 'c[1-4]' "$d/policy-poll.yaml"
check_match "polled lock: decided once the lock is free" '"outcome":"default"' \
	"$(record prolog 106)"
check_eq "polled lock: the allocation is written" 1 "$(held 106)"

tap_done
