#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The reliability suite: faults injected under a real local Slurm cluster
# and its MariaDB, the controller prolog and epilog run as slurmctld runs
# them (PrologSlurmctld's environment, synthetic job ids Slurm never ran)
# plus real `sbatch --io-upgrade` jobs under the worst faults.  For each
# condition it prints one row:
#
#   condition | launches | added launch delay p50 / max (ms) | jobs failed |
#   forwarders leaked | records that disagree with the ledger
#
# - added delay: a launch's prolog time minus the median of the healthy
#   condition's.
# - jobs failed: a prolog that did not exit 0 (Slurm would requeue or
#   fail the job), or a real job that did not complete with exit 0.
# - forwarders leaked: allocation rows of the condition's jobs still held
#   after their epilogs and, where epilogs were lost, the reconcile the
#   timer runs.
# - fell back (for information): launches whose record is a fallback
#   (default mapping), whatever the cause.
# - records that disagree: a job whose last prolog record (the file's, or
#   the audit table's when the file could not be written) is missing or
#   says other forwarders than the ledger holds, whose file and table
#   records differ, or a private forwarder held by two jobs.
#
# The faults: the database stopped, frozen (SIGSTOP), slowed by a relaying
# proxy (tests/tools/slow_proxy), the audit file's disk full (/dev/full),
# 20 prologs at once on the slowed database, 100 prologs and epilogs at
# once, and kill -9 of the prolog's and the epilog's worker at each of
# their database steps, before and after the call (tests/tools/kill_at.so).
# Every figure except the delay must be 0.  The delays are printed, not
# judged (a loaded machine stretches them); what bounds them is judged
# instead: a hung database (frozen) ends the first launch's wait at
# database.connect_timeout and trips the circuit breaker, so the later
# launches skip it.
#
# Then the same through the controller service (fwdallocd) and the
# installed hooks (the static prolog-slurmctld and epilog-slurmctld,
# budget 1.5 s): the service healthy, 100 prologs and epilogs at once
# through it, two services deciding at once on one database, the
# database frozen under it, the service killed (the hooks
# decide themselves), and the service hung (SIGSTOP: the hooks give up
# after their budget and the job falls back; once it runs again it
# commits nothing for them).
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
shim=$top_builddir/tests/tools/.libs/kill_at.so
proxy=$top_builddir/tests/tools/slow_proxy
[ -f "$shim" ] && [ -x "$proxy" ] || skip_all "tests/tools not built"
proxy_pid=
mc_cleanup_extra() {
	[ -n "${db_pid:-}" ] && kill -CONT "$db_pid" 2>/dev/null
	[ -n "${svc_pid:-}" ] && kill -CONT "$svc_pid" 2>/dev/null &&
		kill "$svc_pid" 2>/dev/null
	[ -n "${svc2_pid:-}" ] && kill "$svc2_pid" 2>/dev/null
	[ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
}
# Ports of its own: 40 above slurm_basic/slurm_alloc's when a base is
# given (slurm_pool.sh takes +20).
mc_start reliab $((${FWDALLOC_MC_PORT_BASE:-17300} + 40))
fwdctl=$top_builddir/fwdctl
testdb=$top_srcdir/scripts/testdb
db_pid=$(cat "$M/db/mysqld.pid")

"$fwdctl" profile import "$top_srcdir/tests/fixtures/minicluster/history.json" \
	>"$T/import.out" 2>&1
check_eq "history imported" 0 "$?"

# Policies: the cluster's, one through the slowing proxy, one whose
# audit file sits on a full disk.  Each writes its own audit file.
cp "$FWDALLOC_POLICY" "$T/base.yaml"
sed -e "s|^  socket: .*|  socket: $T/slow.sock|" "$T/base.yaml" >"$T/slow.yaml"
mkdir -p "$T/full"
ln -s /dev/full "$T/full/audit.jsonl"
sed -e "s|^  file: .*audit.jsonl|  file: $T/full/audit.jsonl|" \
	"$T/base.yaml" >"$T/full.yaml"
audit_file() {
	sed -n 's/^  file: \(.*audit.jsonl\)$/\1/p' "$1"
}
check_eq "the disk-full policy writes to /dev/full" "$T/full/audit.jsonl" \
	"$(audit_file "$T/full.yaml")"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# launch JOB NODES NAME REQUEST POLICY [ENV...]: the controller prolog as
# slurmctld runs it; "rc ms" in $T/res/JOB.
mkdir -p "$T/res" "$T/once"
launch() {
	local job=$1 nodes=$2 name=$3 req=$4 pol=$5 t0 rc
	shift 5
	t0=$(now_ms)
	env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" SLURM_JOB_ID="$job" \
		SLURM_JOB_USER=root SLURM_JOB_ACCOUNT=phys \
		SLURM_JOB_PARTITION=debug SLURM_JOB_NODELIST="$nodes" \
		SLURM_JOB_NUM_NODES=2 SLURM_JOB_NAME="$name" \
		SPANK_IO_UPGRADE="$req" \
		ASAN_OPTIONS=verify_asan_link_order=0 \
		LSAN_OPTIONS="${LSAN_OPTIONS:-}" "$@" \
		"$fwdctl" --policy "$pol" prolog >"$T/res/$job.out" 2>&1
	rc=$?
	echo "$rc $(($(now_ms) - t0))" >"$T/res/$job"
}
# finish JOB POLICY [ENV...]: the controller epilog.
finish() {
	local job=$1 pol=$2
	shift 2
	env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" SLURM_JOB_ID="$job" \
		ASAN_OPTIONS=verify_asan_link_order=0 \
		LSAN_OPTIONS="${LSAN_OPTIONS:-}" "$@" \
		"$fwdctl" --policy "$pol" epilog >"$T/res/$job.epi" 2>&1
}
# A mix of requests on two-node jobs: scaled, isolated, default.
node_of() { echo "c[$((($1 % 4) * 2 + 1))-$((($1 % 4) * 2 + 2))]"; }
name_of() { case $(($1 % 3)) in 0) echo bwapp ;; 1) echo n1app ;; *) echo small ;; esac; }
req_of() { case $(($1 % 3)) in 0) echo scale ;; 1) echo isolate ;; *) echo auto ;; esac; }
launch_mix() {
	local j=$1
	shift
	launch "$j" "$(node_of "$j")" "$(name_of "$j")" "$(req_of "$j")" "$@"
}

file_rec() {
	[ -f "$2" ] || return 0
	grep "\"job_id\":\"$1\"" "$2" | grep '"event":"prolog"' | tail -1
}
# load_records AUDITFILE JOB...: each job's last prolog record in the
# audit file and in the audit table, and what the ledger holds for it, in
# three reads for all the jobs, not a dozen processes per job (a loaded
# 2-core machine pays tens of ms for each).  Per job: REC_F/REC_D the four
# fields file and table must agree on (as JSON), OUT_F/OUT_D the outcome,
# AFTER_F/AFTER_D its forwarders_after sorted and joined, HELD what the
# ledger holds (not shadow rows).
declare -A REC_F REC_D OUT_F OUT_D AFTER_F AFTER_D HELD
# rec_fields SRC: JSON records on stdin, one line per prolog record out:
# job, SRC, the four fields, outcome (one line), forwarders_after.
rec_fields() {
	jq -Rr --arg src "$1" 'fromjson? // empty | select(.event == "prolog" and .job_id != null)
		| [.job_id, $src,
		   ({action, outcome, forwarders_before, forwarders_after} | tojson),
		   (.outcome // "" | tostring | gsub("[\n\u001f]"; " ")),
		   ((.forwarders_after // []) | sort | join(","))]
		| join("\u001f")'
}
load_records() {
	local file=$1 ids j src keys out after
	shift
	REC_F=() REC_D=() OUT_F=() OUT_D=() AFTER_F=() AFTER_D=() HELD=()
	ids=$(printf '%s,' "$@")
	ids=${ids%,}
	while IFS=$'\x1f' read -r j src keys out after; do
		if [ "$src" = file ]; then
			REC_F[$j]=$keys OUT_F[$j]=$out AFTER_F[$j]=$after
		else
			REC_D[$j]=$keys OUT_D[$j]=$out AFTER_D[$j]=$after
		fi
	done < <(
		{ [ -f "$file" ] && grep -F '"event":"prolog"' "$file"; } | rec_fields file
		sql "SELECT record FROM audit WHERE job_id IN ($ids) AND JSON_VALUE(record, '\$.event') = 'prolog' ORDER BY id" |
			sed 's/\\\\/\\/g' | rec_fields db)
	while IFS=$'\t' read -r j after; do
		HELD[$j]=$after
	done < <(sql "SELECT job_id, COALESCE(GROUP_CONCAT(DISTINCT forwarder ORDER BY forwarder), '') FROM allocations WHERE job_id IN ($ids) AND released_at IS NULL AND action <> 'shadow' GROUP BY job_id")
}
# outcome_of JOB: its recorded outcome (the file's, else the table's),
# from the last load_records.
outcome_of() {
	if [ -n "${REC_F[$1]:-}" ]; then echo "${OUT_F[$1]}"; else echo "${OUT_D[$1]:-}"; fi
}
# disagree_loaded JOB: DISAGREE=1 (and why, as a diagnostic) when the
# job's records, as load_records read them, and the ledger differ.
disagree_loaded() {
	local j=$1 want got out
	DISAGREE=1
	if [ -z "${REC_F[$j]:-}" ] && [ -z "${REC_D[$j]:-}" ]; then
		diag "job $j: no prolog record at all"
		return
	fi
	if [ -n "${REC_F[$j]:-}" ] && [ -n "${REC_D[$j]:-}" ] &&
		[ "${REC_F[$j]}" != "${REC_D[$j]}" ]; then
		diag "job $j: file and table differ:" "file:  ${REC_F[$j]}" \
			"table: ${REC_D[$j]}"
		return
	fi
	if [ -n "${REC_F[$j]:-}" ]; then
		out=${OUT_F[$j]} want=${AFTER_F[$j]}
	else
		out=${OUT_D[$j]} want=${AFTER_D[$j]}
	fi
	case $out in 'fallback: '*) want= ;; esac
	got=${HELD[$j]:-}
	if [ "$want" != "$got" ]; then
		diag "job $j: the record says '$want', the ledger holds '$got'"
		return
	fi
	DISAGREE=0
}
# disagree JOB AUDITFILE: DISAGREE=1 when the job's records and the
# ledger differ.
disagree() {
	load_records "$2" "$1"
	disagree_loaded "$1"
}
# Private forwarders held by more than one job.
doubles() {
	sql "SELECT COUNT(*) FROM (SELECT forwarder FROM allocations WHERE released_at IS NULL AND is_private GROUP BY forwarder HAVING COUNT(DISTINCT job_id) > 1) d"
}

median() { sort -n | awk '{a[NR] = $1} END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
maxof() { sort -n | tail -1; }

# Rows of the table, and the figures the checks look at.
rows=
base_ms=0
# row NAME AUDITFILE JOBS...: the records are compared now (while the
# jobs hold what they were given); call settle afterwards.
pending_disagree=0
judge_records() {
	local file=$1 j n=0
	audit=$file
	shift
	load_records "$file" "$@"
	for j in "$@"; do
		disagree_loaded "$j"
		n=$((n + DISAGREE))
	done
	n=$((n + $(doubles)))
	pending_disagree=$n
}
# row NAME EXTRA_FAILED JOBS...: delays, failures, leaks (after epilogs).
row() {
	local name=$1 extra=$2 j rc ms failed=$2 ids p50 mx leaked fb=0
	shift 2
	: >"$T/delays"
	load_records "$audit" "$@"
	for j in "$@"; do
		read -r rc ms <"$T/res/$j"
		[ "$rc" -eq 0 ] || { failed=$((failed + 1)); diag "$name: job $j prolog exit $rc: $(cat "$T/res/$j.out")"; }
		echo $((ms - base_ms)) >>"$T/delays"
		case $(outcome_of "$j") in
		fallback:*) fb=$((fb + 1)) ;;
		esac
	done
	p50=$(median <"$T/delays")
	mx=$(maxof <"$T/delays")
	ids=$(printf '%s,' "$@")
	leaked=$(sql "SELECT COUNT(*) FROM allocations WHERE job_id IN (${ids%,}) AND released_at IS NULL")
	[ "$leaked" -eq 0 ] || diag "$name: still held: $(sql "SELECT job_id, forwarder, action FROM allocations WHERE job_id IN (${ids%,}) AND released_at IS NULL" | tr '\n\t' '; ')"
	rows="$rows$(printf '%-44s %8s %14s %7s %7s %9s %9s' "$name" "$#" "$p50 / $mx" "$failed" "$leaked" "$pending_disagree" "$fb")
"
	check_eq "$name: no job failed" 0 "$failed"
	check_eq "$name: no forwarder leaked" 0 "$leaked"
	check_eq "$name: every record agrees with the ledger" 0 "$pending_disagree"
}
# The breaker's state (next to each audit file): closed between
# conditions, as an admin does once the database is repaired.
close_breaker() { rm -f "$M/db-breaker" "$T/full/db-breaker"; }
# A real job: submitted, run to the end; prints its final state.
real_job() {
	local j i st
	j=$(sbatch --parsable -N2 -J "$1" --io-upgrade="$2" --wrap 'true' 2>"$T/sbatch.err") ||
		{ diag "sbatch: $(cat "$T/sbatch.err")"; echo FAILED; return; }
	for i in $(seq 1 300); do
		st=$(scontrol -o show job "$j" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/\1|\2/p' | head -1)
		case $st in COMPLETED* | FAILED* | CANCELLED* | TIMEOUT* | NODE_FAIL* | OUT_OF_MEMORY*) mc_settle "$j" >&2; break ;; esac
		sleep 0.2
	done
	echo "$st"
}
real_failed() {
	case $1 in COMPLETED\|0:0) echo 0 ;; *) diag "real job: $1"; echo 1 ;; esac
}

# ---- healthy database: the reference -------------------------------
jobs=$(seq 1001 1010)
for j in $jobs; do launch_mix "$j" "$T/base.yaml"; done
base_all=$(for j in $jobs; do cut -d' ' -f2 "$T/res/$j"; done)
base_ms=$(median <<<"$base_all")
judge_records "$M/audit.jsonl" $jobs
for j in $jobs; do finish "$j" "$T/base.yaml"; done
row "healthy database (reference: ${base_ms} ms)" 0 $jobs

# ---- database stopped ----------------------------------------------
"$testdb" stop "$M/db" >/dev/null 2>&1
jobs=$(seq 1101 1110)
for j in $jobs; do launch_mix "$j" "$T/base.yaml"; done
st=$(real_job n1app isolate)
"$testdb" start "$M/db" >/dev/null 2>&1
db_pid=$(cat "$M/db/mysqld.pid")
judge_records "$M/audit.jsonl" $jobs
close_breaker
for j in $jobs; do finish "$j" "$T/base.yaml"; done
row "database stopped (+1 real job)" "$(real_failed "$st")" $jobs

# ---- database frozen -----------------------------------------------
kill -STOP "$db_pid"
jobs=$(seq 1201 1220)
for j in $jobs; do launch_mix "$j" "$T/base.yaml"; done
st=$(real_job bwapp scale)
kill -CONT "$db_pid"
judge_records "$M/audit.jsonl" $jobs
close_breaker
for j in $jobs; do finish "$j" "$T/base.yaml"; done
row "database frozen, SIGSTOP (+1 real job)" "$(real_failed "$st")" $jobs
# What bounds a frozen database's cost is the deadline that ended the
# wait (its time is in the table): the first launch gives up at
# database.connect_timeout, not at the read timeout nor the hook's, and
# trips the breaker, so that no other launch waits.
waited=0
for j in $jobs; do
	case $(outcome_of "$j") in *'(database.connect_timeout)'*) waited=$((waited + 1)) ;; esac
done
check_match "database frozen: the first launch gave up at database.connect_timeout" \
	'^fallback: .*no answer within 0\.9s \(database\.connect_timeout\)' "$(outcome_of 1201)"
check_eq "database frozen: only the first launch waited for the database" 1 "$waited"
check_match "database frozen: later launches skip the database" \
	'database skipped' "$(file_rec 1210 "$M/audit.jsonl" | jq -r .outcome)"

# ---- database slowed -----------------------------------------------
"$proxy" "$T/slow.sock" "$M/db/mysql.sock" 10 &
proxy_pid=$!
for i in $(seq 1 50); do [ -S "$T/slow.sock" ] && break; sleep 0.1; done
jobs=$(seq 1301 1310)
for j in $jobs; do launch_mix "$j" "$T/slow.yaml"; done
judge_records "$M/audit.jsonl" $jobs
for j in $jobs; do finish "$j" "$T/slow.yaml"; done
row "database slowed, +10 ms per round trip" 0 $jobs
check_match "database slowed: decided, not fallen back" '^(applied|default)$' \
	"$(file_rec 1301 "$M/audit.jsonl" | jq -r .outcome)"

# ---- 20 prologs at once on the slowed database ---------------------
jobs=$(seq 1401 1420)
pids=
for j in $jobs; do launch_mix "$j" "$T/slow.yaml" & pids="$pids $!"; done
wait $pids
judge_records "$M/audit.jsonl" $jobs
lockfb=0
for j in $jobs; do
	case ${OUT_F[$j]:-} in
	fallback:*lock*) lockfb=$((lockfb + 1)) ;;
	esac
done
pids=
for j in $jobs; do finish "$j" "$T/slow.yaml" & pids="$pids $!"; done
wait $pids
row "20 prologs at once, slowed database" 0 $jobs
check_eq "20 prologs at once on the slowed database: none fell back on the lock" \
	0 "$lockfb"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
proxy_pid=

# ---- the audit file's disk is full ---------------------------------
jobs=$(seq 1501 1505)
for j in $jobs; do launch_mix "$j" "$T/full.yaml"; done
judge_records "$T/full/audit.jsonl" $jobs
for j in $jobs; do finish "$j" "$T/full.yaml"; done
row "audit disk full (/dev/full)" 0 $jobs
check_match "audit disk full: fwdctl says the record could not be written" \
	'No space left on device' "$(cat "$T/res/1501.out")"

# ---- 100 jobs at once ----------------------------------------------
jobs=$(seq 1601 1700)
for j in $jobs; do launch_mix "$j" "$T/base.yaml" & done
wait
judge_records "$M/audit.jsonl" $jobs
for j in $jobs; do finish "$j" "$T/base.yaml" & done
wait
row "100 prologs and epilogs at once" 0 $jobs

# ---- kill -9 of the prolog's worker at each step -------------------
# Job 1700+N (before the call) and 1800+N (after it) die at database
# step N, until a prolog finishes without reaching step N.
kill_prolog_jobs=
for mode in 0 1; do
	for n in $(seq 1 40); do
		j=$((1700 + mode * 100 + n))
		launch "$j" 'c[1-2]' n1app isolate "$T/base.yaml" \
			LD_PRELOAD="$shim" FWD_TEST_KILL_AT="$n" \
			FWD_TEST_KILL_AFTER="$mode" FWD_TEST_KILL_ONCE="$T/once/$j"
		kill_prolog_jobs="$kill_prolog_jobs $j"
		# Each job is decided alone: it gives back what it got.
		disagree "$j" "$M/audit.jsonl"
		pending_kp=$((${pending_kp:-0} + DISAGREE))
		finish "$j" "$T/base.yaml"
		[ -e "$T/once/$j" ] || break
		diag "prolog $j: worker killed at step $n ($(cat "$T/once/$j"), $([ "$mode" = 1 ] && echo after || echo before) the call)"
	done
done
pending_disagree=${pending_kp:-0}
row "kill -9, prolog worker, every step" 0 $kill_prolog_jobs
steps_p=$(ls "$T/once" | wc -l)
check "kill -9 of the prolog worker: at least 4 steps covered ($steps_p)" \
	test "$steps_p" -ge 4

# ---- kill -9 of the epilog's worker at each step -------------------
# The epilog dies; its job holds its forwarders (as after a lost epilog)
# until reconcile, which the timer runs every minute, frees them.
rm -f "$T/once"/*
kill_epi_jobs=
pending_disagree=0
for mode in 0 1; do
	for n in $(seq 1 40); do
		j=$((1900 + mode * 50 + n))
		launch "$j" 'c[3-4]' n1app isolate "$T/base.yaml"
		disagree "$j" "$M/audit.jsonl"
		pending_disagree=$((pending_disagree + DISAGREE))
		finish "$j" "$T/base.yaml" \
			LD_PRELOAD="$shim" FWD_TEST_KILL_AT="$n" \
			FWD_TEST_KILL_AFTER="$mode" FWD_TEST_KILL_ONCE="$T/once/$j"
		kill_epi_jobs="$kill_epi_jobs $j"
		[ -e "$T/once/$j" ] || break
		diag "epilog $j: worker killed at step $n ($(cat "$T/once/$j"))"
		# Reconcile under the real slurmctld, which never ran the job.
		"$fwdctl" reconcile >"$T/reconcile.out" 2>&1 ||
			diag "reconcile: $(cat "$T/reconcile.out")"
	done
done
row "kill -9, epilog worker, every step (+reconcile)" 0 $kill_epi_jobs
steps_e=$(ls "$T/once" | wc -l)
check "kill -9 of the epilog worker: at least 2 steps covered ($steps_e)" \
	test "$steps_e" -ge 2

# ---- the controller service ----------------------------------------
svc_sock=$T/fwdallocd.sock
svc_budget=1500
# run_svc SOCK LOG [OPTION...]: a service on SOCK, its pid in $started;
# returns once it answers a status request (at most 30 s: a loaded
# machine may take seconds to start it).
run_svc() {
	local sock=$1 log=$2 i
	shift 2
	"$top_builddir/fwdallocd" --policy "$T/base.yaml" --socket "$sock" \
		"$@" </dev/null >>"$log" 2>&1 &
	started=$!
	for i in $(seq 1 300); do
		"$top_builddir/fwdallocd" --status --socket "$sock" \
			>/dev/null 2>&1 && return
		kill -0 "$started" 2>/dev/null || break
		sleep 0.1
	done
	diag "fwdallocd on $sock: no answer to a status request"
	svc_logs
}
# svc_logs: the end of each service's log.
svc_logs() {
	local f
	for f in "$T"/fwdallocd*.log; do
		diag "$f ends:" "$(tail -n 8 "$f")"
	done
}
start_svc() {
	run_svc "$svc_sock" "$T/fwdallocd.log" --query-socket none
	svc_pid=$started
}
# launch_svc JOB...: launch_mix through the installed prolog hook.
launch_svc() {
	local j t0 rc
	for j in "$@"; do
		t0=$(now_ms)
		env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" SLURM_JOB_ID="$j" \
			SLURM_JOB_USER=root SLURM_JOB_ACCOUNT=phys \
			SLURM_JOB_PARTITION=debug \
			SLURM_JOB_NODELIST="$(node_of "$j")" \
			SLURM_JOB_NUM_NODES=2 SLURM_JOB_NAME="$(name_of "$j")" \
			SPANK_IO_UPGRADE="$(req_of "$j")" \
			ASAN_OPTIONS=verify_asan_link_order=0 \
			LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
			"$top_builddir/cli/prolog-slurmctld" "$svc_sock" "$svc_budget" \
			"$fwdctl" --policy "$T/base.yaml" prolog \
			>"$T/res/$j.out" 2>&1
		rc=$?
		echo "$rc $(($(now_ms) - t0))" >"$T/res/$j"
	done
}
# finish_svc JOB...: the installed epilog hook, then wait (bounded) for
# each release's record: the hook only hands it over.
finish_svc() {
	local j i
	for j in "$@"; do
		env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" SLURM_JOB_ID="$j" \
			"$top_builddir/cli/epilog-slurmctld" --socket "$svc_sock" \
			"$fwdctl" --policy "$T/base.yaml" epilog --queue
	done
	for j in "$@"; do
		for i in $(seq 1 300); do
			grep -q "\"event\":\"epilog\",\"job_id\":\"$j\"" \
				"$M/audit.jsonl" && continue 2
			sleep 0.1
		done
		diag "job $j: no release recorded after 30 s"
	done
}
svc_count() {
	local out
	if ! out=$("$top_builddir/fwdallocd" --status --socket "$svc_sock" \
		2>"$T/status.err"); then
		# (to stderr: the caller reads the count from stdout)
		{
			diag "fwdallocd --status --socket $svc_sock: $(cat "$T/status.err")"
			svc_logs
		} >&2
		return
	fi
	printf '%s\n' "$out" | sed -n "s/^$1 //p"
}
# outcomes JOB...: each job's recorded outcome, one line each (empty
# without a record).
outcomes() {
	local j
	load_records "$M/audit.jsonl" "$@"
	for j in "$@"; do
		echo "${OUT_F[$j]:-}"
	done
}
# gave_up: of the outcomes on stdin, how many went past the hook's budget:
# the hook gave up on the service (no answer, or the service closed
# without one: the hook's deadline had passed, the hook records it), or
# the service, its batch not decided by the hook's deadline, fell back for
# all of the batch's jobs.
# A hook that found the breaker open (database skipped) is counted with
# them: the breaker opens only on a database step that failed, and with
# the database up that is one that outlived its timeout, the budget, in
# the same burst.
gave_up() {
	local n
	n=$(grep -c -e "^fallback: controller service .*: no answer within the hook's budget" \
		-e "^fallback: controller service .*: closed without answering within the hook's budget" \
		-e "^fallback: not decided before the hook's deadline" \
		-e '^fallback: database skipped: failed [0-9]*s ago$')
	echo "${n:-0}"
}
close_breaker
start_svc
check "the controller service listens" test -S "$svc_sock"

jobs=$(seq 2001 2010)
launch_svc $jobs
judge_records "$M/audit.jsonl" $jobs
finish_svc $jobs
row "service: healthy" 0 $jobs
check_eq "service: it decided every job" 10 "$(svc_count decided)"
check_eq "service: one database connection for all" 1 "$(svc_count connects)"

jobs=$(seq 2101 2200)
pids=
for j in $jobs; do launch_svc "$j" & pids="$pids $!"; done
wait $pids
judge_records "$M/audit.jsonl" $jobs
pids=
for j in $jobs; do finish_svc "$j" & pids="$pids $!"; done
wait $pids
row "service: 100 prologs and epilogs at once" 0 $jobs
# Each was decided by the service or, past the hook's budget on a loaded
# machine, fell back saying so (and the rows agree: the row's checks).
# Counted from each job's record: a decision the service made just as
# its hook gave up is both in the service's count and past the budget.
outs=$(outcomes $jobs)
gaveup=$(gave_up <<<"$outs")
# and the decided ones: any outcome but a fallback
ok_n=$(grep -vc -e '^fallback' -e '^$' <<<"$outs")
accounted=$((gaveup + ${ok_n:-0}))
diag "service: of 100 at once, $(( $(svc_count decided) - 10 )) decided by the service, $gaveup past the budget"
[ "$accounted" -eq 100 ] ||
	diag "service: the 100 records' outcomes (count, outcome):" \
		"$(sed 's/[0-9][0-9.]*/N/g' <<<"$outs" | sort | uniq -c)"
check_eq "service: each of the 100 decided by the service or past its budget" \
	100 "$accounted"
check "service: it decided all that did not go past the budget" \
	test "$(( $(svc_count decided) - 10 ))" -ge $((100 - gaveup))
check "service: the 100 came in fewer batches ($(svc_count batches))" \
	test "$(svc_count batches)" -lt 100

# Two services on one database (a primary and a backup controller, or a
# failover while the old one still runs): decisions stay serialized by
# the decision lock, and no private forwarder is held twice.
run_svc "$T/fwdallocd2.sock" "$T/fwdallocd2.log" --query-socket none
svc2_pid=$started
jobs=$(seq 2501 2540)
pids=
for j in $jobs; do
	if [ $((j % 2)) = 0 ]; then
		launch_svc "$j" & pids="$pids $!"
	else
		(svc_sock=$T/fwdallocd2.sock; launch_svc "$j") & pids="$pids $!"
	fi
done
wait $pids
judge_records "$M/audit.jsonl" $jobs
pids=
for j in $jobs; do finish_svc "$j" & pids="$pids $!"; done
wait $pids
row "two services, 40 prologs at once" 0 $jobs
# Each of the second's half was decided by it or, past the hook's budget
# on a loaded machine, fell back saying so.
late=$(outcomes $(for j in $jobs; do [ $((j % 2)) = 1 ] && echo "$j"; done) |
	gave_up)
decided2=$(svc_sock=$T/fwdallocd2.sock svc_count decided)
diag "two services: the second decided $decided2 of its 20, $late past the budget"
check "two services: the second decided its half but what went past the budget" \
	test "${decided2:-0}" -ge $((20 - late)) -a "${decided2:-0}" -le 20
kill "$svc2_pid"
wait "$svc2_pid" 2>/dev/null

# Users' reports are not the launch path: a query socket that cannot be
# made leaves the service deciding jobs, and its log says why.
run_svc "$T/fwdallocd3.sock" "$T/fwdallocd3.log" \
	--query-socket "$T/no-such-dir/query.sock"
svc3_pid=$started
check "no query socket: the service still listens for the hooks" \
	test -S "$T/fwdallocd3.sock"
check_eq "no query socket: it answers a status request" 0 \
	"$(svc_sock=$T/fwdallocd3.sock svc_count decided)"
check_match "no query socket: its log says reports are not answered" \
	"users' report requests are not answered: no query socket" \
	"$(cat "$T/fwdallocd3.log")"
kill "$svc3_pid"
wait "$svc3_pid" 2>/dev/null

# The socket's path: a stale socket of an earlier run is replaced, the
# socket appears only once it listens (bound under a temporary name, then
# renamed) and nothing else at that path is touched.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$T/stale.sock"
run_svc "$T/stale.sock" "$T/fwdallocd4.log" --query-socket none
check_eq "stale socket: replaced, the new service answers" 0 \
	"$(svc_sock=$T/stale.sock svc_count decided)"
check_eq "stale socket: no temporary name left beside it" "" \
	"$(cd "$T" && ls -A | grep '^\.fwdallocd-')"
kill "$started"
wait "$started" 2>/dev/null
check "a stopped service removes its socket" test ! -e "$T/stale.sock"
echo 'not a socket' >"$T/file.sock"
"$top_builddir/fwdallocd" --policy "$T/base.yaml" --socket "$T/file.sock" \
	--query-socket none </dev/null >"$T/file.out" 2>&1
check_eq "a file at the socket's path: the service does not start" 1 "$?"
check_match "a file at the socket's path: it says why" \
	"$T/file.sock exists and is not this account's socket" "$(cat "$T/file.out")"
check_eq "a file at the socket's path: left as it was" "not a socket" \
	"$(cat "$T/file.sock")"

db_pid=$(cat "$M/db/mysqld.pid")
kill -STOP "$db_pid"
jobs=$(seq 2201 2210)
launch_svc $jobs
kill -CONT "$db_pid"
sleep 1
judge_records "$M/audit.jsonl" $jobs
close_breaker
finish_svc $jobs
row "service: database frozen" 0 $jobs
check_match "service, database frozen: later launches skip the database" \
	'database skipped' "$(file_rec 2210 "$M/audit.jsonl" | jq -r .outcome)"

kill -KILL "$svc_pid"
wait "$svc_pid" 2>/dev/null
jobs=$(seq 2301 2310)
launch_svc $jobs
judge_records "$M/audit.jsonl" $jobs
finish_svc $jobs
row "service killed (the hooks decide)" 0 $jobs
check_match "service killed: the hooks decided themselves" '^(applied|default)$' \
	"$(file_rec 2301 "$M/audit.jsonl" | jq -r .outcome)"

rm -f "$svc_sock"
start_svc
kill -STOP "$svc_pid"
jobs=$(seq 2401 2405)
launch_svc $jobs
kill -CONT "$svc_pid"
# What it took while stopped is past its deadline now: it must decide
# none of it.  Its answer to a status request says it has gone past them.
svc_count jobs >/dev/null
sleep 1
judge_records "$M/audit.jsonl" $jobs
finish_svc $jobs
row "service hung, SIGSTOP (the hooks give up)" 0 $jobs
check_match "service hung: the job fell back, saying why" \
	'fallback: controller service .*no answer within the hook.s budget' \
	"$(file_rec 2401 "$M/audit.jsonl" | jq -r .outcome)"
check_eq "service hung: it decided nothing after it ran again" 0 \
	"$(svc_count decided)"
kill "$svc_pid"
wait "$svc_pid" 2>/dev/null

{
	printf '%-44s %8s %14s %7s %7s %9s %9s\n' condition launches "delay p50/max" failed leaked disagree "fell back"
	printf '%s' "$rows"
} | sed 's/^/# /'
tap_done
