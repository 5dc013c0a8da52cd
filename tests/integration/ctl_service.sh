#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The controller service (fwdallocd) on a real local Slurm cluster with its
# MariaDB, reached through the installed hooks (the static prolog-slurmctld
# and epilog-slurmctld): real `sbatch --io-upgrade` jobs are decided by the
# service, in batches, on one kept connection, with profiles read once; it
# refuses callers that are neither its account nor root and requests it
# cannot read, and goes on serving; it reloads a changed policy and keeps
# the old one when the new one is broken; stopped (SIGSTOP) it costs a job
# the hook's budget and nothing else (the job falls back, recorded, and the
# service commits nothing for it afterwards); kept waiting for the decision
# lock past the budget it leaves the job's record to the hook (one record,
# the same in file and table); killed, the hooks decide themselves.  Every job completes.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
command -v python3 >/dev/null || skip_all "python3 not installed"
export FWDALLOC_MC_SERVICE=1 FWDALLOC_MC_SERVICE_BUDGET_MS=2000
mc_cleanup_extra() {
	[ -f "$M/fwdallocd.pid" ] && kill -CONT "$(cat "$M/fwdallocd.pid")" 2>/dev/null
	return 0
}
# Ports of its own: 240 above the base when one is given.
mc_start ctl-service $((${FWDALLOC_MC_PORT_BASE:-17000} + 240))
fwdctl() { "$top_builddir/fwdctl" "$@"; }
sock=$M/fwdallocd.sock
status() { "$top_builddir/fwdallocd" --status --socket "$sock" 2>&1; }
count() { status | sed -n "s/^$1 //p"; }
svc_pid=$(cat "$M/fwdallocd.pid")

fwdctl profile import "$top_srcdir/tests/fixtures/minicluster/history.json" \
	>"$T/import.out" 2>&1
check_eq "history imported" 0 "$?"
check "the service listens" test -S "$sock"
check_eq "its socket: this account only" 600 "$(stat -c %a "$sock")"

# wait_done JOB...: every job ended and its release recorded.
wait_done() {
	local i
	for i in $(seq 1 600); do
		[ -z "$(squeue -h -j "$(echo "$@" | tr ' ' ,)" -o %i 2>/dev/null)" ] &&
			{ mc_settle "$@"; return; }
		sleep 0.1
	done
	diag "jobs still queued: $*"
	return 1
}
job_state() { sacct -n -X -j "$1" -o State 2>/dev/null | tr -d ' ' | head -1; }
state_of() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
file_record() { grep "\"job_id\":\"$1\"" "$M/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
held() { sql "SELECT COUNT(*) FROM allocations WHERE job_id = $1 AND released_at IS NULL"; }

# 1. A burst of real jobs, half with --io-upgrade, decided by the service.
# The server's count of connections opened (this query's own included).
conns() { sql "SHOW GLOBAL STATUS LIKE 'Connections'" | awk '{ print $2 }'; }
conns0=$(conns)
jobs=
for i in $(seq 1 8); do
	case $((i % 3)) in 0) n=bwapp ;; 1) n=n1app ;; *) n=small ;; esac
	if [ $((i % 2)) = 0 ]; then
		j=$(sbatch --parsable -N1 -J "$n" --io-upgrade=auto --wrap 'sleep 1')
	else
		j=$(sbatch --parsable -N1 -J "$n" --wrap 'sleep 1')
	fi
	jobs="$jobs $j"
done
wait_done $jobs
bad=0
for j in $jobs; do
	st=$(state_of "$j")
	[ "$st" = COMPLETED ] || { diag "job $j: $st"; bad=$((bad + 1)); }
done
check_eq "burst: every job completed" 0 "$bad"
check_eq "burst: the service decided all 8" 8 "$(count decided)" ||
	diag "$(tail -n 20 "$M/log/fwdallocd.log")"
check_eq "burst: none fell back" 0 "$(count fell_back)"
check_eq "burst: one database connection" 1 "$(count connects)"
check "burst: batches ($(count batches)) at most the jobs" \
	test "$(count batches)" -le 8
check_eq "burst: each launch's profile read or served from the cache" 8 \
	"$(( $(count profile_reads) + $(count profile_hits) ))"
check "burst: the cache served some ($(count profile_hits) of 8)" \
	test "$(count profile_hits)" -ge 1
check_eq "burst: every job has its prolog record" 8 \
	"$(for j in $jobs; do file_record "$j"; done | grep -c '"event":"prolog"')"
check_eq "burst: every release went through the service" 8 "$(count epilogs)"
# The decisions' connection, the release thread's, this count's own and
# the check's reads above: not one a job (a worker that connects for
# each release would make it 8 more).
n=$(($(conns) - conns0))
check "burst: $n connections opened for 8 jobs and their releases" \
	test "$n" -le 6
check_eq "burst: nothing held after the releases" 0 \
	"$(sql "SELECT COUNT(*) FROM allocations WHERE released_at IS NULL")"
check_eq "burst: the release queue is empty" 0 \
	"$(ls "$M/release-queue" 2>/dev/null | wc -l)"

# 2. Requests it must refuse, and serve on.
chmod 666 "$sock"
# (a copy nobody may run, wherever the build tree is)
install -m 755 "$top_builddir/cli/prolog-slurmctld" "$T/prolog-hook"
out=$(runuser -u nobody -- env SLURM_JOB_ID=999001 \
	"$T/prolog-hook" "$sock" 2000 /bin/echo one-process 2>&1)
check_match "a caller that is not its account or root: refused" \
	'refused the job: not root or the service' "$out"
check_match "... and the hook decides itself" 'one-process' "$out"
check_eq "refusal counted" 1 "$(count refused)"
check_match "refusal logged with the uid" "refused a request from uid $(id -u nobody)" \
	"$(cat "$M/log/fwdallocd.log")"
chmod 600 "$sock"
send() {
	python3 - "$sock" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(sys.argv[2].encode().decode('unicode_escape').encode('latin-1'))
s.settimeout(5)
print(s.recv(65536).decode(errors='replace').split('\n')[0])
EOF
}
check_match "garbage: refused" '^FWDALLOC1 R not a fwdalloc request' "$(send 'hello')"
check_match "a damaged head: refused" '^FWDALLOC1 R damaged request head' \
	"$(send 'FWDALLOC1 P -5\n')"
check_match "an unknown variable: refused, named" \
	'^FWDALLOC1 R damaged: "LD_PRELOAD=/x": not a job variable' \
	"$(send 'FWDALLOC1 P 9999999999\nSLURM_JOB_ID=7\x00LD_PRELOAD=/x\x00')"
check_match "a bad job id: refused, named" \
	'^FWDALLOC1 R SLURM_JOB_ID="0x10": not a job id' \
	"$(send 'FWDALLOC1 P 9999999999\nSLURM_JOB_ID=0x10\x00')"
check_match "a cut variable: refused" '^FWDALLOC1 R damaged: the last variable is cut' \
	"$(send 'FWDALLOC1 E 1\nSLURM_JOB_ID=7')"
check_match "still serving after all of that" '^decided 8$' "$(status)"

# 3. Reload: a changed policy is picked up; a broken one is not.
cp "$M/policy.yaml" "$T/policy.good"
sed -i 's/^  mode: opt-in/  mode: off/' "$M/policy.yaml"
grep -q '^  mode: off' "$M/policy.yaml" || diag "policy has no access.mode opt-in line"
j=$(sbatch --parsable -N1 -J small --io-upgrade=auto --wrap true)
wait_done "$j"
check_match "reload: announced" "reloaded $M/policy.yaml" "$(cat "$M/log/fwdallocd.log")"
check_eq "reload: access.mode off, no decision recorded" "" "$(file_record "$j")"
printf 'decision: [\n' >"$M/policy.yaml"
j=$(sbatch --parsable -N1 -J small --io-upgrade=auto --wrap true)
wait_done "$j"
check_match "broken policy: the reload failure is logged" \
	"reload of $M/policy.yaml failed; still deciding with the policy loaded before" \
	"$(cat "$M/log/fwdallocd.log")"
check_eq "broken policy: the job completed" COMPLETED "$(state_of "$j")"
cp "$T/policy.good" "$M/policy.yaml"
j=$(sbatch --parsable -N1 -J small --io-upgrade=auto --wrap true)
wait_done "$j"
check_match "good policy again: decided" '"event":"prolog"' "$(file_record "$j")"

# 4. Stopped: the job waits the budget, falls back, and runs.
decided=$(count decided)
kill -STOP "$svc_pid"
j=$(sbatch --parsable -N2 -J bwapp --io-upgrade=scale --wrap true)
wait_done "$j"
check_eq "service stopped: the job completed" COMPLETED "$(state_of "$j")"
check_match "service stopped: it fell back, saying why" \
	'fallback: controller service .*no answer within the hook.s budget of 2s' \
	"$(file_record "$j" | jq -r .outcome)"
kill -CONT "$svc_pid"
for _ in $(seq 1 300); do
	grep -q "prolog job $j: its hook's deadline passed" "$M/log/fwdallocd.log" && break
	sleep 0.1
done
check_match "service resumed: it knows the hook gave up" \
	"prolog job $j: its hook's deadline passed" "$(cat "$M/log/fwdallocd.log")"
check_eq "service resumed: it decided nothing for it" "$decided" "$(count decided)"
check_eq "service resumed: nothing held for that job" 0 "$(held "$j")"

# 4b. The decision lock held elsewhere past the hook's budget: the hook
# gives up and its `fwdctl prolog --abandoned` waits for the lock too; when
# the lock is free the service finds the hook gone and writes no record of
# its own.  One record for the job, the hook's, the same in the file and in
# the table, and nothing held.
"$top_srcdir/scripts/testdb" sql "$M/db" -N --unbuffered fwdalloc -e "SELECT CONNECTION_ID(); BEGIN; SELECT id FROM decision_lock WHERE id = 1 FOR UPDATE; SELECT SLEEP(120); COMMIT" \
	>"$T/locker.out" 2>&1 &
locker=$!
locker_id=
for _ in $(seq 1 100); do
	locker_id=$(head -1 "$T/locker.out")
	[ -n "$locker_id" ] &&
		[ "$(sql "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = $locker_id AND trx_query LIKE 'SELECT SLEEP%'")" = 1 ] && break
	sleep 0.1
done
check_match "lock held elsewhere: the decision lock is taken" '^[0-9]+$' "$locker_id"
# The session that ends the locker's, connected now: its KILL must land
# within the hook's release budget (database.timeout, 2 s) after the
# hook gives up, however slow a new client is to start on a loaded host.
mkfifo "$T/kill.fifo"
"$top_srcdir/scripts/testdb" sql "$M/db" -N --unbuffered fwdalloc \
	<"$T/kill.fifo" >"$T/killer.out" 2>&1 &
killer=$!
exec 7>"$T/kill.fifo"
echo "SELECT 'ready';" >&7
for _ in $(seq 1 100); do
	grep -q ready "$T/killer.out" && break
	sleep 0.1
done
check_match "lock held elsewhere: the killing session is connected" ready \
	"$(cat "$T/killer.out")"
j=$(sbatch --parsable -N1 -J n1app --io-upgrade=scale --wrap true)
gone=
for _ in $(seq 1 1500); do
	# This cluster's hook only (its service's socket is in the reason):
	# the matrix runs another release's cluster beside this one, whose
	# hooks give up too.
	pgrep -f -- "prolog --abandoned controller service $sock:" \
		>/dev/null && { gone=1; break; }
	sleep 0.02
done
check_eq "lock held elsewhere: the hook gave up" 1 "$gone"
echo "KILL $locker_id;" >&7
exec 7>&-
wait "$killer" 2>/dev/null
wait "$locker" 2>/dev/null
wait_done "$j"
for _ in $(seq 1 100); do
	grep -q "prolog $j: .*its hook had stopped waiting" "$M/log/fwdallocd.log" && break
	sleep 0.1
done
check_eq "lock held elsewhere: the job completed" COMPLETED "$(state_of "$j")"
check_match "lock held elsewhere: the service left the record to the hook" \
	"prolog $j: .*its hook had stopped waiting, and records the fallback itself" \
	"$(cat "$M/log/fwdallocd.log")"
check_eq "lock held elsewhere: one record in the file" 1 \
	"$(grep "\"job_id\":\"$j\"" "$M/audit.jsonl" | grep -c '"event":"prolog"')"
check_eq "lock held elsewhere: one record in the table" 1 \
	"$(sql "SELECT COUNT(*) FROM audit WHERE job_id = $j AND JSON_VALUE(record, '\$.event') = 'prolog'")"
check_match "lock held elsewhere: the hook's, saying why" \
	"^fallback: controller service .*no answer within the hook.s budget of 2s" \
	"$(file_record "$j" | jq -r .outcome)"
check_eq "lock held elsewhere: the same outcome in the table" \
	"$(file_record "$j" | jq -r .outcome)" \
	"$(sql "SELECT outcome FROM audit WHERE job_id = $j AND JSON_VALUE(record, '\$.event') = 'prolog'")"
check_eq "lock held elsewhere: nothing held" 0 "$(held "$j")"
# The service's wait outlived the hook's deadline, which opens the
# database breaker as any timed-out decision does: closed again for 5.
rm -f "$M/db-breaker"

# 5. Killed: the hooks decide themselves.
kill -KILL "$svc_pid"
j=$(sbatch --parsable -N1 -J n1app --io-upgrade=isolate --wrap true)
wait_done "$j"
check_eq "service killed: the job completed" COMPLETED "$(state_of "$j")"
check_match "service killed: fwdctl decided it" '^(applied|default)$' \
	"$(file_record "$j" | jq -r .outcome)"
check_eq "service killed: released" 0 "$(held "$j")"
tap_done
