#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# History never slows a launch.  With a year's worth of rows in the
# tables that grow (a million released allocations, audit rows, ended
# jobs, per-minute rollups), every statement that a controller prolog, an
# epilog, a node prolog, `fwdctl reconcile` and `fwdctl health scan` send
# is caught in the server's general log and EXPLAINed: none may read a
# big table whole (type ALL, or a full index scan).  Then `fwdctl db
# prune` deletes by the policy's retention, in batches, while prologs and
# epilogs run; they must all decide (no fallback, which a prolog that
# outlived its timeout would be) and the held rows must stay.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

node_read=$top_builddir/tests/tools/node_read
topo=$top_srcdir/tests/fixtures/minicluster/topology.yaml
audit=$d/audit.jsonl
# A table this big read whole is a full scan (the seeded ones hold 10^5 to
# 10^6 rows; the small ones -- locks, forwarders, health -- fewer).
BIG=10000

write_policy() { # FILE [RETENTION LINES]
	{
		cat <<EOT
topology: $topo
access:
  mode: opt-in
  fail: open
decision:
  decide_timeout: 20s
EOT
		sed -n '/^database:/,$p' "$FWDALLOC_TESTDB_POLICY"
		cat <<EOT
audit:
  file: $audit
  database: true
EOT
		[ -n "${2:-}" ] && printf '%s\n' "$2"
	} >"$1"
}
write_policy "$d/policy.yaml"
policy=$d/policy.yaml

fw --topology "$topo" db init
check_eq "db init exits 0" 0 "$rc"

# ---- a year of history ------------------------------------------------------
# Sequence-engine rows (seq_1_to_N), a statement per table: seconds.
now=$(date +%s)
day=86400
old=$((now - 500 * day)) # 500 to 465 days ago: past 400 days
old=$((old - old % 60)) # on a minute, as the reports' ranges
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes,
	node_count, action, acquired_at, released_at, release_reason)
	SELECT seq, CONCAT('fwd', 1 + seq % 8), 0, 'c[1-4]', 4, 'scale',
	$old + seq * 3, $old + seq * 3 + 2, 'epilog' FROM seq_1_to_1000000"
q "INSERT INTO audit (ts, job_id, user, action, outcome, record)
	SELECT $old + seq * 3, seq, 'alice', 'scale', 'ok', '{}'
	FROM seq_1_to_300000"
q "INSERT INTO jobs (job_id, user, name, node_count, start_at, end_at,
	state, updated_at) SELECT seq, CONCAT('u', seq % 500), 'app', 4,
	$old + seq * 3, $old + seq * 3 + 2, 'COMPLETED', $old + seq * 3
	FROM seq_1_to_300000"
q "INSERT INTO rollups_minute (kind, name, minute, samples, read_bytes,
	write_bytes) SELECT 'fwd', CONCAT('fwd', 1 + seq % 8),
	$now - 400 * $day + (seq DIV 8) * 60, 1, 1000, 1000
	FROM seq_1_to_300000"
q "INSERT INTO health_history (kind, name, state, start_at, end_at, reason)
	SELECT 'fwd', CONCAT('fwd', 1 + seq % 8), 'suspect',
	$old + seq * 60, $old + seq * 60 + 30, 'seeded' FROM seq_1_to_100000"
q "INSERT INTO jobstats_raw (kind, target, lustre_job_id, job_id, ts, op,
	samples) SELECT 'ost', 'lustre-OST0000', seq, seq, $old + seq, 'write', 1
	FROM seq_1_to_100000"
q "INSERT INTO job_io (job_id, source, updated_at)
	SELECT seq, 'jobstats', $old + seq FROM seq_1_to_100000"
# Jobs that ended in the last day, for the health scan's peer detector,
# with their (released) allocations and job_stats.
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
	end_at, state, updated_at) SELECT 2000000 + seq, 'bob', 'peer',
	'c[1-8]', 8, $now - 7200 - seq * 60, $now - 3600 - seq * 60,
	'COMPLETED', $now FROM seq_1_to_20"
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at, released_at, release_reason) SELECT 2000000 + seq, 'fwd1',
	'c[1-4]', 4, 'scale', $now - 7200, $now - 3600 - seq * 60, 'epilog'
	FROM seq_1_to_20"
q "INSERT INTO jobstats_raw (kind, target, lustre_job_id, job_id, ts, op,
	samples) SELECT 'ost', 'lustre-OST0001', 2000000 + seq, 2000000 + seq,
	$now - 4000, 'write', 1 FROM seq_1_to_20"
q "ANALYZE TABLE allocations, audit, jobs, rollups_minute, health_history,
	jobstats_raw, job_io" >/dev/null
check_eq "a million released allocations seeded" 1000020 \
	"$(q 'SELECT COUNT(*) FROM allocations WHERE released_at IS NOT NULL')"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# hook prolog|epilog JOB NODES: run the controller hook as slurmctld
# would; sets $rc and $ms.
hook() {
	t0=$(now_ms)
	env SLURM_JOB_ID="$2" SLURM_JOB_NODELIST="$3" SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_USER=alice SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		FWDALLOC_PROLOG_TIMING=1 \
		"$fwdctl" --policy "$policy" "$1" >"$d/hook.out" 2>&1
	rc=$?
	ms=$(($(now_ms) - t0))
}
record() { # EVENT JOB: the job's last audit line of that event
	grep "\"event\":\"$1\",\"job_id\":\"$2\"" "$audit" | tail -n 1
}

# ---- every launch-path statement, EXPLAINed ---------------------------------
q "SET GLOBAL log_output = 'TABLE'"
q "TRUNCATE mysql.general_log"
q "SET GLOBAL general_log = 1"
hook prolog 3000001 'c[1-4]'
check_eq "prolog with a year of history exits 0" 0 "$rc"
check_match "and decides" '"outcome":"default".*"decision":\{"job_id":"3000001"' \
	"$(record prolog 3000001)"
diag "prolog: ${ms} ms"
# The first prolog compiles the topology into its cache, beside the audit
# file, and prints its phases (FWDALLOC_PROLOG_TIMING).
phases='policy=[0-9.]+ topology=[0-9.]+ topology_cache=written:.* load=[0-9.]+ nodes=[0-9.]+ connect=[0-9.]+ record=[0-9.]+ lock=[0-9.]+ ledger=[0-9.]+ decide=[0-9.]+ persist=[0-9.]+ audit=[0-9.]+ commit=[0-9.]+ publish=[0-9.]+ total=[0-9.]+$'
check_match "the prolog prints its phases; the topology cache is written" \
	"^fwdctl prolog: timing ms: $phases" "$(cat "$d/hook.out")"
check "the topology cache is beside the audit file" test -s "$d/topology.cache"
"$node_read" "$policy" 3000001 c2 >"$d/node.out" 2>&1
check_eq "node prolog reads the decision" 0 "$?"
hook epilog 3000001 'c[1-4]'
check_eq "epilog exits 0" 0 "$rc"
"$fwdctl" --policy "$policy" reconcile --dry-run >/dev/null 2>&1 # no Slurm here
"$fwdctl" --policy "$policy" health scan >"$d/scan.out" 2>&1
check_eq "health scan exits 0" 0 "$?"
# The controller service: its first batch reads the ledger whole, the
# next ones what changed since (the epilog's release among it).
"$top_builddir/fwdallocd" --policy "$policy" --socket "$d/svc.sock" \
	</dev/null >"$d/fwdallocd.log" 2>&1 &
svc=$!
wait_socket "$d/svc.sock"
for j in 3000002 3000003 3000004; do
	env SLURM_JOB_ID=$j SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_USER=alice SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		"$top_builddir/cli/prolog-slurmctld" "$d/svc.sock" 5000 \
		"$fwdctl" --policy "$policy" prolog >"$d/svc-hook.out" 2>&1
	[ $j = 3000003 ] && hook epilog 3000002 'c[1-4]'
done
check_eq "the service decided its three jobs" "3 1" \
	"$("$top_builddir/fwdallocd" --status --socket "$d/svc.sock" |
		awk '$1 == "decided" { d = $2 } $1 == "ledger_loads" { l = $2 }
		END { print d, l }')"
kill "$svc"
wait "$svc" 2>/dev/null
q "SET GLOBAL general_log = 0"

# The statements fwdalloc's accounts sent (prepared ones are logged with
# their parameters), once each, plus the body of the node account's
# procedure, which the log shows as a CALL.
q "SELECT DISTINCT argument FROM mysql.general_log
	WHERE command_type IN ('Query', 'Execute')
	AND user_host LIKE 'fwdalloc%'" |
	grep -E '^(SELECT|UPDATE|DELETE|INSERT INTO [a-z_]+ (\([^)]*\) )?SELECT|REPLACE)' |
	grep -v -E '^SELECT (@@|RELEASE_LOCK|GET_LOCK|IS_USED_LOCK|1$|VERSION)' \
		>"$d/stmts"
q "SELECT REPLACE(SUBSTRING_INDEX(SUBSTRING(ROUTINE_DEFINITION,
	LOCATE('SELECT forwarder', ROUTINE_DEFINITION)), ';', 1),
	'p_job_id', '3000001') FROM information_schema.ROUTINES
	WHERE ROUTINE_SCHEMA = 'fwdalloc'
	AND ROUTINE_NAME = 'node_allocations_for'" | tr '\n' ' ' |
	sed 's/  */ /g; s/$/\n/' >>"$d/stmts"
n=$(wc -l <"$d/stmts")
diag "$n distinct statements to EXPLAIN"
check_match "the ledger's held-row read is among them" \
	'FROM allocations WHERE released_at IS NULL ORDER BY job_id, id' \
	"$(cat "$d/stmts")"
check_match "the ledger's least-recently-used read is among them" \
	'FROM forwarders WHERE last_used_at IS NOT NULL' "$(cat "$d/stmts")"
check_eq "no launch-path statement groups the released history" "" \
	"$(grep 'GROUP BY forwarder' "$d/stmts")"
check_match "the node prolog's read is among them" \
	'FROM node_allocations +WHERE job_id = 3000001' "$(cat "$d/stmts")"
check_match "the health scan's rollup read is among them" \
	'FROM rollups_minute WHERE kind' "$(cat "$d/stmts")"
check_match "the epilog's release is among them" \
	'^UPDATE allocations SET released_at' "$(cat "$d/stmts")"
check_match "the service's read of the ledger's changes is among them" \
	'FROM allocations WHERE released_seq > [0-9]+ OR \(released_seq IS NULL AND released_at >= [0-9]+\) OR \(id > [0-9]+ AND released_at IS NULL\)' \
	"$(cat "$d/stmts")"
: >"$d/scans"
while IFS= read -r s; do
	printf 'EXPLAIN %s\n' "$s" |
		"$testdb" sql "$d" -N --batch fwdalloc >"$d/plan" 2>"$d/plan.err" || {
		printf 'cannot EXPLAIN: %s: %s\n' "$s" "$(cat "$d/plan.err")" >>"$d/scans"
		continue
	}
	# id select_type table type possible_keys key key_len ref rows Extra
	awk -F '\t' -v big=$BIG -v s="$s" '
		($4 == "ALL" || $4 == "index") && $9 + 0 >= big {
			printf "%s scan of %s (%s rows): %s\n", $4, $3, $9, s
		}' "$d/plan" >>"$d/scans"
done <"$d/stmts"
check_eq "no launch-path statement scans a big table whole" "" \
	"$(cat "$d/scans")"

# ---- reports on a past hour read what overlaps it, not what came after ------
# The machine's allocations of an hour among the million, and the report
# of a job then: the allocations overlapping it, not every one released
# since (half a million).  Among them, one acquired 20 days before and
# still held; then one held 10 days and released in the hour (the longest
# hold widens the acquisitions read to 10 days: still not the history).
mid=$((old + 450000)) # job 150000 starts here
# reads_bounded TABLE WHAT: of the statements in the slow log, none read
# $BIG rows of TABLE or more, and the range's read (a UNION ALL) is there.
reads_bounded() {
	check_eq "no report statement reads $BIG $2 or more" "" \
		"$(q "SELECT rows_examined, LEFT(sql_text, 200) FROM mysql.slow_log
		WHERE sql_text LIKE '%FROM $1%' AND rows_examined >= $BIG")"
	check_match "the reports' read of the range's $2 is among them" \
		"^[1-9]" "$(q "SELECT COUNT(*) FROM mysql.slow_log
		WHERE sql_text LIKE '%FROM $1%UNION ALL%'")"
}
held_in() { # the jobs held in [$mid, $mid + 3600), by a plain scan
	q "SELECT DISTINCT job_id FROM allocations WHERE (released_at IS NULL
	OR released_at >= $mid) AND acquired_at < $((mid + 3600)) ORDER BY job_id"
}
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at) VALUES (3100002, 'fwd4', 'c[5-8]', 4, 'default',
	$((mid - 20 * day)))"
q "SET GLOBAL log_output = 'TABLE'"
q "SET GLOBAL long_query_time = 0"
q "TRUNCATE mysql.slow_log"
q "SET GLOBAL slow_query_log = 1"
fw report machine --since $mid --until $((mid + 3600)) --json
q "SET GLOBAL slow_query_log = 0"
check_eq "report machine of a past hour: exit 0" 0 "$rc" || diag "$err"
want=$(held_in)
check_eq "its allocations: every job held in the hour, as a plain scan finds" \
	"$want" "$(printf '%s' "$out" | jq -r '.allocations[].job_id')"
check_eq "they are jobs 150000 to 151199 and the one held since 20 days" \
	"1201 150000 151199 3100002" "$(printf '%s\n' "$want" |
	awk '{ v[NR] = $0 } END { print NR, v[1], v[1200], v[1201] }')"
q "SET GLOBAL slow_query_log = 1"
fw report job 150000 --json
q "SET GLOBAL slow_query_log = 0"
check_eq "report job of a past job: exit 0" 0 "$rc" || diag "$err"
check_eq "its allocation" "fwd$((1 + 150000 % 8))" \
	"$(printf '%s' "$out" | jq -r '.decision.allocations[].forwarder')"
reads_bounded allocations allocations
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at, released_at, release_reason) VALUES (3100001, 'fwd3',
	'c[1-4]', 4, 'scale', $((mid - 10 * day)), $((mid + 600)), 'epilog')"
fw report machine --since $mid --until $((mid + 3600)) --json
want=$(held_in)
check_eq "with a 10-day hold released in the hour: still what a plain scan finds" \
	"$want" "$(printf '%s' "$out" | jq -r '.allocations[].job_id')"
check_eq "the 10-day hold among them" "1202 3100001" \
	"$(printf '%s\n' "$want" | awk '{ v[NR] = $0 } END { print NR, v[1201] }')"
q "DELETE FROM allocations WHERE job_id IN (3100001, 3100002)"
# A hold of 30 days released before the first of the million (a row that
# reconcile released late, say) is no reason to read the month before
# every range: the reads go by duration class.
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at, released_at, release_reason) VALUES (3100003, 'fwd5',
	'c[1-4]', 4, 'scale', $((old - 30 * day)), $old, 'epilog')"
q "TRUNCATE mysql.slow_log"
q "SET GLOBAL slow_query_log = 1"
fw report machine --since $mid --until $((mid + 3600)) --json
q "SET GLOBAL slow_query_log = 0"
check_eq "beside a 30-day hold released before: what a plain scan finds" \
	"$(held_in)" "$(printf '%s' "$out" | jq -r '.allocations[].job_id')"
reads_bounded allocations 'allocations beside a 30-day hold'
q "DELETE FROM allocations WHERE job_id = 3100003"
# The health episodes of an hour 58 days after the first of 100,000
# (83,000 before it): the 61 seeded ones that overlap it, one open since 30
# days and, once added, one that lasted 10 days and ended in it.
hmid=$((old + 5000000))
episodes_in() {
	q "SELECT COUNT(*) FROM health_history WHERE state <> 'ok' AND start_at
	< $((hmid + 3600)) AND (end_at IS NULL OR end_at > $hmid)"
}
q "INSERT INTO health_history (kind, name, state, start_at, reason) VALUES
	('fwd', 'fwd5', 'excluded', $((hmid - 30 * day)), 'open')"
q "TRUNCATE mysql.slow_log"
q "SET GLOBAL slow_query_log = 1"
fw report machine --since $hmid --until $((hmid + 3600)) --json
q "SET GLOBAL slow_query_log = 0"
check_eq "report machine of a past hour's health: exit 0" 0 "$rc" || diag "$err"
check_eq "its episodes: 61 seeded and the open one, as a plain scan counts" \
	"62 62" "$(episodes_in) $(printf '%s' "$out" | jq '.health | length')"
reads_bounded health_history 'health periods'
q "INSERT INTO health_history (kind, name, state, start_at, end_at, reason)
	VALUES ('fwd', 'fwd6', 'suspect', $((hmid - 10 * day)), $((hmid + 100)),
	'ten days')"
fw report machine --since $hmid --until $((hmid + 3600)) --json
check_eq "with a 10-day period ended in the hour: 63, as a plain scan counts" \
	"63 63 ten days" "$(episodes_in) $(printf '%s' "$out" |
	jq -r '"\(.health | length) \([.health[] | select(.name == "fwd6")][0].reason)"')"
q "DELETE FROM health_history WHERE reason IN ('open', 'ten days')"
q "INSERT INTO health_history (kind, name, state, start_at, end_at, reason)
	VALUES ('fwd', 'fwd7', 'excluded', $((hmid - 70 * day)),
	$((hmid - 5 * day)), 'long ago')"
q "TRUNCATE mysql.slow_log"
q "SET GLOBAL slow_query_log = 1"
fw report machine --since $hmid --until $((hmid + 3600)) --json
q "SET GLOBAL slow_query_log = 0"
check_eq "beside a 65-day period ended before: 61, as a plain scan counts" \
	"61 61" "$(episodes_in) $(printf '%s' "$out" | jq '.health | length')"
reads_bounded health_history 'health periods beside a 65-day one'
q "DELETE FROM health_history WHERE reason = 'long ago'"

# ---- prune, while prologs run -------------------------------------------------
# 1000 jobs hold forwarders meanwhile; the prologs below are among them.
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at) SELECT 4000000 + seq, 'fwd2', 'c[5-8]', 4, 'default', $now
	FROM seq_1_to_1000"
write_policy "$d/prune.yaml" "retention:
  allocations: 400d
  audit: 400d
  jobs: 400d"
"$fwdctl" --policy "$d/prune.yaml" --json db prune >"$d/prune.out" \
	2>"$d/prune.err" &
prune_pid=$!
i=0
during=0
bad=""
while [ $i -lt 60 ]; do
	i=$((i + 1))
	alive=0
	kill -0 $prune_pid 2>/dev/null && alive=1
	job=$((5000000 + i))
	hook prolog $job 'c[1-4]'
	grep -q 'topology_cache=hit ' "$d/hook.out" ||
		bad="$bad prolog $job: topology cache not used: $(cat "$d/hook.out");"
	r=$(record prolog $job)
	case $r in
	*'"outcome":"fallback'*) bad="$bad prolog $job (exit $rc, ${ms} ms): $r;" ;;
	*"\"decision\":{\"job_id\":\"$job\""*) ;;
	*) bad="$bad prolog $job (exit $rc, ${ms} ms): $r;" ;;
	esac
	hook epilog $job 'c[1-4]'
	[ "$rc" = 0 ] || bad="$bad epilog $job exit $rc;"
	if [ $alive = 1 ] && kill -0 $prune_pid 2>/dev/null; then
		during=$((during + 1))
	fi
	[ $alive = 1 ] || break
done
diag "$during prologs and epilogs during the prune"
wait $prune_pid
check_eq "prune exits 0" 0 "$?"
check_eq "prune: no error" "" "$(cat "$d/prune.err")"
check_match "prologs and epilogs ran during the prune" '^[1-9]' "$during"
check_eq "each of them decided (none fell back) and released" "" "$bad"
check_match "prune deleted the released allocations past retention" \
	'"table": "allocations", "rows": 1000000, "batches": [0-9]+' \
	"$(tr -d '\n' <"$d/prune.out" | sed 's/  */ /g; s/{ /{/g')"
batches=$(tr -d '\n' <"$d/prune.out" | sed 's/  */ /g' |
	sed -n 's/.*"table": "allocations", "rows": [0-9]*, "batches": \([0-9]*\).*/\1/p')
check_match "in many batches, not one statement" '^[0-9]{3,}$' "$batches"
check_eq "held and recent rows stay; old released rows are gone" \
	"1000	0	20" \
	"$(q "SELECT SUM(released_at IS NULL AND job_id > 4000000),
		SUM(released_at < $now - 400 * $day), SUM(job_id > 2000000
		AND job_id <= 2000020) FROM allocations")"
check_eq "audit and jobs past retention are gone, recent ones stay" "0	20" \
	"$(q "SELECT (SELECT COUNT(*) FROM audit WHERE ts < $now - 400 * $day),
		(SELECT COUNT(*) FROM jobs WHERE job_id > 2000000
		AND job_id <= 2000020)")"
check_eq "job_io under its default retention (800 days) stays" 100000 \
	"$(q 'SELECT COUNT(*) FROM job_io')"

tap_done
