#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Releases from the nodes (policy release.port) on a real local Slurm
# cluster with its munged and MariaDB: slurm.conf sets no EpilogSlurmctld;
# the epilog of each job's first node, and only that node's, sends the
# job's release to fwdallocd over TCP in a MUNGE credential, and the
# service releases and records it as it does a hook's.  The service
# refuses what is not a root's credential for an epilog request (another
# uid, a replay, garbage, an overlong or silent connection, another
# request) and releases nothing for it; without the service a job still
# completes, its node says why, and reconcile frees what it held.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
command -v python3 >/dev/null || skip_all "python3 not installed"
command -v munge >/dev/null || skip_all "munge (the client) not installed"
command -v setpriv >/dev/null || skip_all "setpriv not installed"
base=$((${FWDALLOC_MC_PORT_BASE:-17000} + 440))
port=$((base + 9))
export FWDALLOC_MC_SERVICE=1 FWDALLOC_MC_NODE_RELEASE=$port
mc_cleanup_extra() {
	[ -f "$M/fwdallocd.pid" ] && kill -CONT "$(cat "$M/fwdallocd.pid")" 2>/dev/null
	return 0
}
mc_start node-release "$base"
fwdctl() { "$top_builddir/fwdctl" "$@"; }
sock=$M/fwdallocd.sock
count() {
	"$top_builddir/fwdallocd" --status --socket "$sock" 2>&1 |
		sed -n "s/^$1 //p"
}
held() { sql "SELECT COUNT(*) FROM allocations WHERE job_id = $1 AND released_at IS NULL"; }
state_of() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
epilog_records() { grep -c "\"event\":\"epilog\",\"job_id\":\"$1\"" "$M/audit.jsonl"; }
wait_gone() {
	local i
	for i in $(seq 1 600); do
		[ -z "$(squeue -h -j "$(echo "$@" | tr ' ' ,)" -o %i 2>/dev/null)" ] &&
			return 0
		sleep 0.1
	done
	diag "jobs still queued: $*"
	return 1
}
# send FILE: FILE's bytes to the service's TCP port; prints its answer
send() {
	python3 - "$port" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("localhost", int(sys.argv[1])), timeout=10)
out = b""
try:
    s.sendall(open(sys.argv[2], "rb").read())
    s.shutdown(socket.SHUT_WR)
    while True:
        b = s.recv(4096)
        if not b:
            break
        out += b
except OSError as e:
    # the service closes on what it refuses, unread bytes and all
    out += b"[%s]" % e.__class__.__name__.encode()
sys.stdout.write(out.decode(errors="replace"))
EOF
}
# cred AS PAYLOADFILE: a credential of this cluster's munged, made by AS
cred() {
	if [ "$1" = root ]; then
		munge -S "$M/munge.sock" -i "$2"
	else
		setpriv --reuid="$1" --regid="$1" --clear-groups \
			munge -S "$M/munge.sock" -i "$2"
	fi
}
# payload JOBID: the epilog request a node sends for job JOBID
payload() { printf 'FWDALLOC1 E %s.000000\nSLURM_JOB_ID=%s\0' "$(date +%s)" "$1"; }

check "slurm.conf sets no EpilogSlurmctld" \
	sh -c "! grep -qi '^EpilogSlurmctld' '$M/slurm.conf'"
check_eq "the policy names the port" "$port" \
	"$(fwdctl policy show --json "$M/policy.yaml" | jq -r .release.port)"
check "fwdallocd says where it takes the nodes' releases" \
	grep -q "taking the nodes' releases on TCP port $port" "$M/log/fwdallocd.log"

# 1. Real jobs, one and two nodes, with and without --io-upgrade.
fwdctl profile import "$top_srcdir/tests/fixtures/minicluster/history.json" \
	>"$T/import.out" 2>&1
# No release.controllers: the nodes send to slurm.conf's SlurmctldHost
# (localhost here).
check "the policy lists no controllers" \
	sh -c "! grep -q controllers '$M/policy.yaml'"
j0=$(sbatch --parsable -N1 -J bwapp --io-upgrade=auto --wrap 'sleep 1')
wait_gone "$j0"
mc_settle "$j0"
check_eq "no controllers listed: the job completed, released, one record" \
	"COMPLETED 0 1" "$(state_of "$j0") $(held "$j0") $(epilog_records "$j0")"
check_eq "no controllers listed: sent to slurm.conf's SlurmctldHost" 1 \
	"$(mc_log_count 1 "job $j0 node c[0-9]: release sent to fwdallocd on localhost")"
# The node's epilog has no SLURM_JOB_NAME: the record takes the name the
# prolog stored, in the file and in the table alike.
check_eq "the release record names the job, as its prolog's" "bwapp bwapp" \
	"$(grep "\"event\":\"epilog\",\"job_id\":\"$j0\"" "$M/audit.jsonl" | jq -r .name) $(sql "SELECT JSON_VALUE(record, '\$.name') FROM audit WHERE job_id = $j0 AND JSON_VALUE(record, '\$.event') = 'epilog'")"
# The first controller listed is down (an address of TEST-NET-1, RFC
# 5737): the nodes pass to the next.
sed -i "s/^  port: $port\$/&\n  controllers: [192.0.2.1, localhost]/" \
	"$M/policy.yaml"
check "the policy lists a controller that is down first" \
	grep -q 'controllers: \[192.0.2.1, localhost\]' "$M/policy.yaml"
jobs=
for i in 1 2 3 4; do
	if [ $((i % 2)) = 0 ]; then up=--io-upgrade=auto; else up=--io-upgrade=off; fi
	j=$(sbatch --parsable -N$(((i + 1) / 2)) -J bwapp "$up" --wrap 'sleep 1')
	jobs="$jobs $j"
done
wait_gone $jobs
mc_settle $jobs
bad=0
for j in $jobs; do
	st=$(state_of "$j")
	[ "$st" = COMPLETED ] || { diag "job $j: $st"; bad=$((bad + 1)); }
	[ "$(held "$j")" = 0 ] || { diag "job $j: rows still held"; bad=$((bad + 1)); }
	[ "$(epilog_records "$j")" = 1 ] ||
		{ diag "job $j: $(epilog_records "$j") epilog records"; bad=$((bad + 1)); }
done
check_eq "4 jobs completed, released, one epilog record each" 0 "$bad"
check_eq "the service took 5 releases from the nodes" 5 "$(count node_releases)"
check_eq "and refused none" 0 "$(count node_refused)"
j2=$(echo $jobs | awk '{ print $4 }')
check_eq "a two-node job: one node sent its release" 1 \
	"$(mc_log_count 1 "job $j2 node c[0-9]: release sent to fwdallocd on localhost")"
check_eq "a two-node job: the other did not" 1 \
	"$(grep -h "job $j2 node" "$M"/log/slurmd-c*.log | grep -c "release sent")"
rows=$(sql "SELECT COUNT(*) FROM allocations WHERE job_id = $j2")
check "the two-node job held forwarders ($rows rows)" test "$rows" -gt 0
check_eq "its record says the node's release freed them" \
	"released $rows allocation row(s)" \
	"$(grep "\"event\":\"epilog\",\"job_id\":\"$j2\"" "$M/audit.jsonl" | jq -r .outcome)"

# A site that kept EpilogSlurmctld: its hand-over is still taken, and
# the service says to remove it, once.
for i in 1 2; do
	SLURM_JOB_ID=$((4000000010 + i)) "$top_builddir/cli/epilog-slurmctld" \
		--socket "$sock" "$top_builddir/fwdctl" --policy "$M/policy.yaml" \
		epilog --queue
done
mc_settle 4000000011 4000000012
check_eq "a leftover EpilogSlurmctld: the service says to remove it, once" 1 \
	"$(grep -c "remove EpilogSlurmctld from slurm.conf" "$M/log/fwdallocd.log")"

# 2. What the service refuses; a running job keeps its rows throughout.
run=$(sbatch --parsable -N1 -J bwapp --io-upgrade=auto --wrap 'sleep 60')
for i in $(seq 1 100); do [ "$(held "$run")" -gt 0 ] && break; sleep 0.1; done
rows=$(held "$run")
check "a running job holds rows ($rows)" test "$rows" -gt 0
refused0=$(count node_refused)
payload "$run" >"$T/payload"
cred 65534 "$T/payload" >"$T/cred.nobody"
printf '\n' >>"$T/cred.nobody"
ans=$(send "$T/cred.nobody")
check_eq "another uid's credential: refused" \
	"FWDALLOC1 R credential made by uid 65534: a node's release is made by root (slurmd's epilog)" \
	"$ans"
printf 'FWDALLOC1 P 1.0\n' >"$T/prolog.payload"
cred root "$T/prolog.payload" >"$T/cred.prolog"
printf '\n' >>"$T/cred.prolog"
ans=$(send "$T/cred.prolog")
case $ans in "FWDALLOC1 R credential payload is not an epilog request"*) ok=1 ;; *) ok=0 ;; esac
check_eq "root's credential for a prolog request: refused ($ans)" 1 "$ok"
printf 'hello\n' >"$T/garbage"
ans=$(send "$T/garbage")
case $ans in "FWDALLOC1 R credential invalid"*) ok=1 ;; *) ok=0 ;; esac
check_eq "garbage: refused as an invalid credential ($ans)" 1 "$ok"
head -c 40000 /dev/zero | tr '\0' A >"$T/long"
send "$T/long" >/dev/null
check_eq "40000 bytes without a newline: refused" 1 \
	"$(mc_file_count 1 "refused: request too long \(a release is one MUNGE credential and a newline\)" "$M/log/fwdallocd.log")"
# A root credential for a job that never ran: taken once, then replayed.
payload 4000000001 >"$T/payload.none"
cred root "$T/payload.none" >"$T/cred.root"
printf '\n' >>"$T/cred.root"
check_eq "root's credential for an epilog request: taken" "FWDALLOC1 0 A" \
	"$(send "$T/cred.root")"
ans=$(send "$T/cred.root")
case $ans in "FWDALLOC1 R credential replayed"*) ok=1 ;; *) ok=0 ;; esac
check_eq "the same credential again: refused as replayed ($ans)" 1 "$ok"
# A connection that sends nothing is closed; launches go on meanwhile.
python3 - "$port" >"$T/silent.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.create_connection(("localhost", int(sys.argv[1])))
s.settimeout(20)
t = time.time()
b = s.recv(4096)
print("%.0f %s" % (time.time() - t, b.decode(errors="replace").strip()))
EOF
silent=$!
quick=$(sbatch --parsable -N1 -J small --wrap 'true')
wait_gone "$quick"
check_eq "a job launched and ended while a node's connection was silent" \
	COMPLETED "$(state_of "$quick")"
wait "$silent"
read -r secs rest <"$T/silent.out"
check "the silent connection: closed after about 5 s ($secs s)" \
	test "${secs:-0}" -ge 4 -a "${secs:-0}" -le 12
check_eq "and told why" \
	"FWDALLOC1 R no whole credential within 5 s" "$rest"
check_eq "the running job still holds its rows" "$rows" "$(held "$run")"
check_eq "the service counted 6 refusals" 6 \
	$(($(count node_refused) - refused0))
check "the service says why it refused" \
	grep -q "a node's release refused: credential made by uid 65534" \
	"$M/log/fwdallocd.log"
scancel "$run"
wait_gone "$run"
mc_settle "$run"
check_eq "cancelled, the job is released from its node" 0 "$(held "$run")"

# A hung service (SIGSTOP): the node waits its budget, says so, and the
# job completes; resumed, the service still releases what the node sent.
svc=$(cat "$M/fwdallocd.pid")
j=$(sbatch --parsable -N1 -J bwapp --io-upgrade=auto --wrap 'sleep 2')
for i in $(seq 1 100); do [ "$(held "$j")" -gt 0 ] && break; sleep 0.1; done
rows=$(held "$j")
kill -STOP "$svc"
wait_gone "$j"
check_eq "hung service: the job completed" COMPLETED "$(state_of "$j")"
check_eq "hung service: its node waited its budget and said so" 1 \
	"$(mc_log_count 1 "job $j node c[0-9]: release: no controller took the release within 2.0 s: .*no answer in time.*left to fwdctl reconcile")"
check "hung service: the job's rows still held ($rows)" test "$(held "$j")" -gt 0
kill -CONT "$svc"
mc_settle "$j"
check_eq "resumed, the service released what the node had sent" 0 "$(held "$j")"

# 3. Without the service: the job completes, its node says why, and
# reconcile frees what it held.
kill "$(cat "$M/fwdallocd.pid")"
for i in $(seq 1 50); do kill -0 "$(cat "$M/fwdallocd.pid")" 2>/dev/null || break; sleep 0.1; done
j=$(sbatch --parsable -N1 -J bwapp --io-upgrade=auto --wrap 'sleep 1')
wait_gone "$j"
check_eq "no service: the job completed" COMPLETED "$(state_of "$j")"
check_eq "its node said why" 1 \
	"$(mc_log_count 1 "job $j node c[0-9]: release: no controller took the release within 2.0 s: .*left to fwdctl reconcile")"
fwdctl reconcile >"$T/reconcile.out" 2>&1
check_eq "reconcile ran" 0 "$?" || diag "$(cat "$T/reconcile.out")"
check_eq "reconcile freed its rows" 0 "$(held "$j")"

tap_done
