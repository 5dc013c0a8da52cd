#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end on a real local Slurm cluster with a real MariaDB: sbatch
# --io-upgrade -> SPANK -> PrologSlurmctld (fwdctl prolog: profile, lock,
# decision, allocation rows, audit) -> every node's SPANK job prolog
# (remap apply through the exec driver, which records into files) -> job
# -> job epilog (revert) -> EpilogSlurmctld (release).
#
# Topology (tests/fixtures/minicluster): c[1-4] -> fwd1, c[5-8] -> fwd2,
# fwd3..fwd8 idle backups.  Policy: opt-in, small thresholds.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
# The cluster's test policy, with a connect timeout of 3 s: what is checked
# here is where jobs go and when they are released, and a connection that
# takes longer than 0.9 s on a loaded machine (the release matrix runs two
# roots beside the host's suite) would make a release fall back to
# reconcile (tests of slow databases: reliability.sh, ctl_truth.sh).
tpl=$(mktemp /tmp/fwd-alloc-policy.XXXXXX)
sed -e 's/^  timeout: 2s$/  timeout: 2s\n  connect_timeout: 3s/' \
	"$top_srcdir/tests/fixtures/minicluster/policy.yaml.in" >"$tpl"
export FWDALLOC_MC_POLICY=$tpl
mc_cleanup_extra() {
	rm -f "$tpl"
	[ -n "${lockpid:-}" ] && kill "$lockpid" 2>/dev/null
}
# Ports of its own: 80 above slurm_basic's when a base is given.
mc_start slurm-alloc $((${FWDALLOC_MC_PORT_BASE:-17120} + 80))
fwdctl() { "$top_builddir/fwdctl" "$@"; }
check_match "the policy waits 3 s for a connection" '^  connect_timeout: 3s$' \
	"$(cat "$M/policy.yaml")"

now=$(date +%s)
# History: three applications (bandwidth-heavy N-N, disruptive N-1, small).
fwdctl profile import "$top_srcdir/tests/fixtures/minicluster/history.json" \
	>"$T/import.out" 2>&1
check_eq "history imported" 0 "$?"
check_eq "history loaded" 3 "$(sql 'SELECT COUNT(*) FROM profiles')"

# wait_gone JOB...: bounded wait until Slurm no longer lists the jobs.
wait_gone() {
	local i left
	for i in $(seq 1 600); do
		left=$(squeue -h -j "$(echo "$@" | tr ' ' ,)" -o %i 2>/dev/null | wc -l)
		[ "$left" -eq 0 ] && { mc_settle "$@"; return 0; }
		sleep 0.1
	done
	diag "jobs still queued: $*"
	return 1
}
# wait_running JOB: bounded wait until the job runs.
wait_running() {
	local i
	for i in $(seq 1 300); do
		[ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ] && return 0
		sleep 0.1
	done
	diag "job $1 not running: $(squeue -h -j "$1" -o %T 2>&1)"
	return 1
}
audit_db() { sql "SELECT $2 FROM audit WHERE job_id = $1 AND JSON_VALUE(record, '\$.event') = 'prolog' ORDER BY id DESC LIMIT 1"; }
# fwds JOB COND: the job's forwarders of allocation rows where COND holds
fwds() { sql "SELECT IFNULL(GROUP_CONCAT(forwarder ORDER BY forwarder), '') FROM allocations WHERE job_id = $1 AND $2"; }
held_fwds() { fwds "$1" "released_at IS NULL"; }
private_fwds() { fwds "$1" "is_private = 1"; }
held_private() { fwds "$1" "is_private = 1 AND released_at IS NULL"; }
file_record() { grep "\"job_id\":\"$1\"" "$M/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

# until_go TAG: a job script that runs until the test lets it end (go
# TAG), at most 300 s.  What a running job holds is checked while it
# runs for sure: a job of a fixed length can end first on a loaded
# machine (a 1 s job ended before its holdings were read).
until_go() {
	printf 'for i in $(seq 1 1500); do [ -e %s/go.%s ] && exit 0; sleep 0.2; done' \
		"$T" "$1"
}
go() { touch "$T/go.$1"; }

# 1. Scale: bandwidth-heavy N-N history, S = ceil(4 * 2.5 / 2.5) = 4 > N_f = 1.
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade=scale \
	--wrap "$(until_go scale)" 2>&1)
check_match "scale job submitted" '^[0-9]+$' "$j"
wait_running "$j"
check_eq "scale: decision action" scale "$(audit_db "$j" action)"
check_eq "scale: S > N_f forwarders held" "fwd1,fwd3,fwd4,fwd5" "$(held_fwds "$j")"
# While it still runs (the checks below wait on logs).
check_match "scale: fwdctl alloc list shows it" "^$j +scale +fwd3 +private" \
	"$(fwdctl alloc list | grep "^$j ")"
# From the driver's log, not the nodes' current state: a node whose part
# of the job ended has reverted already.
check_eq "scale: all 4 node prologs applied a mapping" 4 \
	"$(mc_file_count 4 " apply $j " "$M/remap.log")"
check_eq "scale: every node prolog read the published decision file" 4 \
	"$(mc_log_count 4 "job_prolog: job $j node c[1-4]: .*applied forwarders .*read from the decision file")"
check_eq "scale: nodes spread over 4 forwarders" 4 \
	"$(awk -v j="$j" '$2 == "apply" && $3 == j { print $5 }' "$M/remap.log" | sort -u | wc -l)"
# The forwarders' addresses come from the topology (fwdN = 10.0.0.N),
# mirrored into the database by `fwdctl db init`.
check_eq "scale: the driver got each forwarder's address" 4 \
	"$(awk -v j="$j" '$2 == "apply" && $3 == j { a = $5; sub(/^fwd/, "10.0.0.", a); if (a == $6) n++ } END { print n + 0 }' "$M/remap.log")"
check_match "scale: audit file says applied with 4 forwarders" \
	'"action":"scale".*"forwarders_before":\["fwd1"\],"forwarders_after":\["fwd1","fwd[3-8]","fwd[3-8]","fwd[3-8]"\].*"outcome":"applied"' \
	"$(file_record "$j")"
go scale
wait_gone "$j"
check_eq "scale: job completed" COMPLETED "$(job_state "$j")"
check_eq "scale: epilogs reverted every node" 0 \
	"$(ls "$M"/remap/ | wc -l)"
check_eq "scale: 4 revert records" 4 \
	"$(grep -c " revert $j " "$M/remap.log")"
check_eq "scale: epilog released the allocation" "" "$(held_fwds "$j")"
check_eq "scale: the release stamped the 4 forwarders' last_used_at" 4 \
	"$(sql "SELECT COUNT(*) FROM forwarders WHERE name IN (SELECT forwarder FROM allocations WHERE job_id = $j) AND last_used_at = (SELECT MAX(released_at) FROM allocations WHERE job_id = $j)")"
check_match "scale: audit has the release" '"event":"epilog".*"outcome":"released 4 allocation row' \
	"$(grep "\"job_id\":\"$j\"" "$M/audit.jsonl" | grep '"event":"epilog"')"
check_eq "scale: file and DB audit records agree" "$(file_record "$j")" \
	"$(audit_db "$j" record)"

# 1b. The job sees what it got: FWDALLOC_ACTION and FWDALLOC_FORWARDERS in
#     the batch script and in its steps (each node its own forwarders), and
#     one line on the batch script's stderr because it asked.
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade=scale \
	-o "$T/seen.%j" --wrap 'echo "batch $FWDALLOC_ACTION $FWDALLOC_FORWARDERS"
srun -N1 -n1 -w c2 sh -c "echo step \$FWDALLOC_ACTION \$FWDALLOC_FORWARDERS"' 2>&1)
check_match "seen: job submitted" '^[0-9]+$' "$j"
wait_gone "$j"
fw_of() { awk -v j="$j" -v n="$1" '$2 == "apply" && $3 == j && $4 == n { print $5 }' "$M/remap.log" | paste -sd ,; }
check_match "seen: c1 and c2 were given forwarders" '^fwd[0-9]+ fwd[0-9]+$' \
	"$(fw_of c1) $(fw_of c2)"
check_eq "seen: the note, the batch script's and the step's environment" \
	"fwdalloc: job $j: --io-upgrade=scale: scale, forwarders $(fw_of c1)
batch scale $(fw_of c1)
step scale $(fw_of c2)" "$(cat "$T/seen.$j" 2>&1)"
check_eq "seen: the job epilogs removed the notes" "" \
	"$(ls "$M/remap-state" 2>/dev/null | grep "^job-$j\.")"

# 2. N-1 disruptive job gets a private forwarder; a neighbour asking for
#    more forwarders meanwhile is not put on it.
j1=$(sbatch --parsable -N2 -w 'c[5-6]' -J n1app --io-upgrade --wrap "$(until_go n1)")
wait_running "$j1"
check_eq "N-1: action isolate" isolate "$(audit_db "$j1" action)"
p1=$(private_fwds "$j1")
check_match "N-1: one private forwarder from the pool" '^fwd[3-8]$' "$p1"
j2=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade --wrap "$(until_go neighbour)")
wait_running "$j2"
h2=$(held_fwds "$j2")
check_match "neighbour scaled meanwhile" '^fwd1(,fwd[3-8]){3}$' "$h2"
case ",$h2," in *",$p1,"*) fail "neighbour not on the N-1 job's private forwarder ($h2 vs $p1)" ;;
*) pass "neighbour not on the N-1 job's private forwarder" ;; esac
go n1
go neighbour
wait_gone "$j1" "$j2"

# 3. Opt-in: no option -> default mapping, "not requested".
j=$(sbatch --parsable -N2 -w 'c[1-2]' -J bwapp --wrap true)
wait_gone "$j"
check_eq "no option: action default" default "$(audit_db "$j" action)"
check_match "no option: audit says not requested" \
	'"request":"not requested".*"outcome":"default"' "$(file_record "$j")"
check_eq "no option: nothing applied" 0 "$(grep -c " apply $j " "$M/remap.log")"

# 3b. Opt-out policy: a job without the option is treated as auto;
#     --io-upgrade=off opts out.  (sbatch and the controller re-read it.)
sed -i 's/^  mode: opt-in$/  mode: opt-out/' "$M/policy.yaml"
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --wrap true)
wait_gone "$j"
check_match "opt-out: no option means auto" '"request":"auto","action":"scale"' \
	"$(file_record "$j")"
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade=off --wrap true)
wait_gone "$j"
check_match "opt-out: --io-upgrade=off keeps the default" \
	'"request":"off","action":"default"' "$(file_record "$j")"
check_eq "opt-out: off applied nothing" 0 "$(grep -c " apply $j " "$M/remap.log")"
sed -i 's/^  mode: opt-out$/  mode: opt-in/' "$M/policy.yaml"

# 4. Shadow: decision recorded, nothing applied.
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade=shadow --wrap true)
wait_gone "$j"
check_eq "shadow: action shadow" shadow "$(audit_db "$j" action)"
check_match "shadow: audit outcome shadow" '"outcome":"shadow"' \
	"$(file_record "$j")"
check_eq "shadow: nothing applied" 0 "$(grep -c " apply $j " "$M/remap.log")"
check_match "shadow: node prolog logged it" "job $j node c1: request shadow: action shadow: nothing to apply" \
	"$(cat "$M/log/slurmd-c1.log")"

# 5. An excluded default forwarder is avoided.
sql "INSERT INTO health (kind, name, state, since, reason, source, updated_at)
	VALUES ('fwd', 'fwd1', 'excluded', $now, 'test', 'admin', $now)"
j=$(sbatch --parsable -N2 -w 'c[1-2]' -J small --wrap "$(until_go excluded)")
wait_running "$j"
check_eq "excluded fwd1: action avoid-anomaly" avoid-anomaly "$(audit_db "$j" action)"
h=$(held_fwds "$j")
check_match "excluded fwd1: replaced by a healthy backup" '^fwd[3-8]$' "$h"
mc_file_count 1 " apply $j c1 " "$M/remap.log" >/dev/null
check_eq "excluded fwd1: nodes applied the replacement" "$h" \
	"$(awk -v j="$j" '$2 == "apply" && $3 == j && $4 == "c1" { print $5 }' "$M/remap.log")"
go excluded
wait_gone "$j"
sql "DELETE FROM health WHERE name = 'fwd1'"

# 6. Simultaneous submissions never share a private forwarder.  Both
#    jobs are N-1 (isolate) on different default forwarders; each runs
#    until both are seen running, so what they hold is compared while
#    both hold it (one that ended first may hand its forwarder on).
shared=0 both=0 rounds=10
for r in $(seq 1 $rounds); do
	sbatch --parsable -N2 -w 'c[5-6]' -J n1app --io-upgrade --wrap "$(until_go sim$r)" >"$T/a" &
	sbatch --parsable -N2 -w 'c[1-2]' -J n1app --io-upgrade --wrap "$(until_go sim$r)" >"$T/b" &
	wait
	a=$(cat "$T/a") b=$(cat "$T/b")
	wait_running "$a"
	wait_running "$b"
	pa=$(held_private "$a") pb=$(held_private "$b")
	[ -n "$pa" ] && [ -n "$pb" ] && both=$((both + 1))
	dup=$(sql "SELECT forwarder FROM allocations WHERE is_private = 1 AND released_at IS NULL AND job_id IN ($a, $b) GROUP BY forwarder HAVING COUNT(DISTINCT job_id) > 1")
	[ -n "$dup" ] && { shared=$((shared + 1)); diag "round $r: jobs $a $b share $dup"; }
	go sim$r
	wait_gone "$a" "$b"
done
check_eq "simultaneous: both jobs isolated in every round" "$rounds" "$both"
check_eq "simultaneous: never a shared private forwarder ($rounds rounds)" 0 "$shared"

# 7. Database down: jobs still run, on the default mapping, audit says fallback.
"$top_srcdir/scripts/testdb" stop "$M/db" >/dev/null 2>&1
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade --wrap true)
wait_gone "$j"
check_eq "DB down: job still completed" COMPLETED "$(job_state "$j")"
check_match "DB down: audit file says fallback" '"outcome":"fallback: ' "$(file_record "$j")"
check_eq "DB down: nothing applied" 0 "$(grep -c " apply $j " "$M/remap.log")"
# The controller published its fallback: the nodes keep their defaults
# without asking the database, and say why.
check_match "DB down: node prolog logged why" "job $j node c1: request auto: the controller fell back; keeping the default mapping" \
	"$(cat "$M/log/slurmd-c1.log")"
check_match "DB down: the epilog's record: all 4 nodes did as the fallback said" \
	'"event":"epilog".*"node_outcomes":\{"applied":4,"fell_back":0,"silent":0,' \
	"$(grep "\"job_id\":\"$j\"" "$M/audit.jsonl" | grep '"event":"epilog"')"
# 7b. Policy fail: closed: a fallback stops the job instead (Slurm
#     requeues it when PrologSlurmctld fails).
sed -i 's/^  fail: open$/  fail: closed/' "$M/policy.yaml"
j=$(sbatch --parsable -N1 -w c1 -J bwapp --io-upgrade --wrap true)
for i in $(seq 1 300); do
	restarts=$(scontrol show job "$j" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
	[ "${restarts:-0}" -ge 1 ] && break
	sleep 0.1
done
check "fail closed: the job was requeued, not run" test "${restarts:-0}" -ge 1
# A requeued job passes through COMPLETING on its way back to PENDING.
# Wait up to 30 s: a loaded 2-core CI machine is slow to get there.
for i in $(seq 1 300); do
	case $(job_state "$j") in COMPLETING | CONFIGURING | '') ;; *) break ;; esac
	sleep 0.1
done
check_eq "fail closed: the job is not running" PENDING "$(job_state "$j")"
check_match "fail closed: audit says fallback" '"outcome":"fallback: ' \
	"$(file_record "$j")"
scancel "$j"
wait_gone "$j"
sed -i 's/^  fail: closed$/  fail: open/' "$M/policy.yaml"

"$top_srcdir/scripts/testdb" start "$M/db" >/dev/null 2>&1
check "database back" eval "sql 'SELECT 1' >/dev/null"
# The failures tripped the database breaker (database.breaker): prologs
# skip the database for 30 s.  The operator who repaired it closes the
# breaker at once by removing its state file.
check "DB down: the database breaker was tripped" test -s "$M/db-breaker"
rm -f "$M/db-breaker"

# 8. Controller prolog killed mid-way: the job runs on the default mapping.
#    Hold the decision lock so the prolog waits (until its worker is
#    found, however long a loaded machine takes to start it), then kill
#    the worker, then end the holder.
"$top_srcdir/scripts/testdb" sql "$M/db" fwdalloc \
	-e "START TRANSACTION; SELECT id FROM decision_lock FOR UPDATE; SELECT SLEEP(300)" >/dev/null 2>&1 &
lockpid=$!
# the holder's session, once it sits in its SLEEP
holder() { sql "SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(300)%'"; }
for i in $(seq 1 100); do
	[ -n "$(holder)" ] && break
	sleep 0.1
done
j=$(sbatch --parsable -N2 -w 'c[1-2]' -J bwapp --io-upgrade --wrap true)
worker=
for i in $(seq 1 600); do
	# The worker is the prolog fwdctl whose parent is also fwdctl.
	worker=$(ps -eo pid=,ppid=,args= | awk -v p="$M/policy.yaml" '
		$3 ~ /fwdctl$/ && index($0, p) && $NF == "prolog" { pid[$1] = $2 }
		END { for (c in pid) if (pid[c] in pid) print c }')
	[ -n "$worker" ] && break
	sleep 0.1
done
check_match "prolog worker found waiting on the lock" '^[0-9]+$' "$worker"
[ -n "$worker" ] && kill -KILL "$worker"
for id in $(holder); do
	sql "KILL $id" 2>/dev/null || true
done
wait "$lockpid"; lockpid=
wait_gone "$j"
check_eq "killed prolog: job still completed" COMPLETED "$(job_state "$j")"
check_match "killed prolog: audit says fallback, killed" \
	'"outcome":"fallback: controller prolog killed by signal 9"' "$(file_record "$j")"
check_eq "killed prolog: nothing held" "" "$(held_fwds "$j")"
check_eq "killed prolog: the audit table has the same record" \
	"$(file_record "$j")" "$(audit_db "$j" record)"

# 9. Epilog lost: an allocation left held by a finished job is freed by
#    fwdctl reconcile (asks slurmctld through libslurm).
jl=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade=scale --wrap true)
wait_gone "$jl"
sql "UPDATE allocations SET released_at = NULL, release_reason = NULL WHERE job_id = $jl"
check_match "lost epilog simulated" '^fwd1,' "$(held_fwds "$jl")"
jr=$(sbatch --parsable -N2 -w 'c[5-6]' -J n1app --io-upgrade --wrap "$(until_go running)")
wait_running "$jr"
out=$(fwdctl reconcile)
check_match "reconcile frees the finished job" "freed job $jl" "$out"
check_eq "reconcile: nothing held by the finished job" "" "$(held_fwds "$jl")"
check_match "reconcile keeps the running job" '^fwd[3-8]$' "$(held_fwds "$jr")"
check_match "reconcile is audited" '"event":"reconcile"' \
	"$(grep "\"job_id\":\"$jl\"" "$M/audit.jsonl" | tail -1)"
check_match "reconcile again frees nothing" '^0 allocation\(s\) freed' \
	"$(fwdctl reconcile | tail -1)"
go running
wait_gone "$jr"

# A decision spool others can write into (remap.decision_dir): a user
# could plant <job>.decision (here: directories for the next job ids) and
# make other users' jobs fall back.  The controller refuses to publish
# there, the nodes refuse to read there: both use the database, and the
# job gets its forwarders all the same.
last=$(sbatch --parsable -N1 -w c1 --wrap true)
wait_gone "$last"
for k in 1 2 3; do mkdir -p "$M/spool/$((last + k)).decision"; done
chmod 1777 "$M/spool"
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade --wrap 'sleep 1')
wait_running "$j"
check_eq "unsafe spool: still scaled" scale "$(audit_db "$j" action)"
check_match "unsafe spool: the record says why no file was published" \
	'"decision_file":"publishing the decision of job [0-9]+: directory .*/spool: mode 1777 lets others write into it: refusing it' \
	"$(file_record "$j")"
check_eq "unsafe spool: all 4 node prologs applied the mapping" 4 \
	"$(mc_file_count 4 " apply $j " "$M/remap.log")"
check_eq "unsafe spool: the nodes read the database" 4 \
	"$(mc_log_count 4 "job_prolog: job $j node c[1-4]: .*applied forwarders .*read from the database")"
check_eq "unsafe spool: each node said why" 4 \
	"$(mc_log_count 4 "job_prolog: job $j node c[1-4]: directory .*/spool: mode 1777 lets others write into it: refusing it \(chmod go-w .*\): read the decision from the database instead")"
wait_gone "$j"
check_eq "unsafe spool: released" "" "$(held_fwds "$j")"
chmod 755 "$M/spool"
for k in 1 2 3; do rmdir "$M/spool/$((last + k)).decision"; done

check_match "fwdctl audit --job filters" "^[^ ]+ +prolog +$jl " \
	"$(fwdctl audit --job "$jl" | sed -n 2p)"
check_eq "fwdctl audit --user filters" 1 "$(fwdctl audit --user nobody | wc -l)"
check_eq "fwdctl audit --since the future: an empty JSON array" "[]" \
	"$(fwdctl audit --since "$(($(date +%s) + 3600))" --json | jq -c .)"
check_eq "fwdctl audit --since 1h --json: every record" \
	"$(wc -l <"$M/audit.jsonl")" "$(fwdctl audit --since 1h --json | jq length)"
out=$(fwdctl audit --since yesterday-ish 2>&1)
check_eq "fwdctl audit --since garbage: exit 2" 2 "$?"
check_match "fwdctl audit --since garbage: says why" \
	"--since yesterday-ish: not a time" "$out"
out=$(fwdctl alloc show 999999 2>&1)
check_eq "fwdctl alloc show unknown job: exit 1" 1 "$?"
check_match "fwdctl alloc show unknown job: says so" \
	"no allocation recorded for job 999999" "$out"
check_match "fwdctl alloc show --json" '"action": "scale"' \
	"$(fwdctl alloc show "$jl" --json)"
check_match "fwdctl reconcile --dry-run --json" '"freed": \[\]' \
	"$(fwdctl reconcile --dry-run --json)"

tap_done
