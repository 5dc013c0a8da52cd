#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl health job: Beacon's job-level check (DBSCAN on the duration and
# volume of I/O phases against the same application's past runs at the
# same scale) with the run's neighbours on shared forwarders, against a
# private MariaDB.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/health_common.sh"

# jobio ID IO_MODE MDOPS_RATE PEAK_BPS PHASES_JSON|NULL
jobio() {
	ph=$5
	[ "$ph" = NULL ] || ph="'$ph'"
	q "INSERT INTO job_io (job_id, io_mode, mdops_rate, peak_bandwidth_bps, phases, source, updated_at) VALUES ($1, '$2', $3, $4, $ph, 'traces', $T0)"
}
# phases READ_S READ_GB CKPT_S CKPT_GB: an input read then a checkpoint
phases() {
	echo "[{\"start\": 0, \"end\": $1, \"read_bytes\": $(($2 * 1000000000)), \"write_bytes\": 0, \"mdops\": 10}, {\"start\": 600, \"end\": $((600 + $3)), \"read_bytes\": 0, \"write_bytes\": $(($4 * 1000000000)), \"mdops\": 5}]"
}

# Five past runs of alice's app4000 on 256-300 nodes (bucket 256..511).
k=0
for spec in "100 50 300 200" "104 51 296 198" "98 49 305 202" "102 50 299 201" "101 50 301 199"; do
	id=$((4100 + k))
	s=$((k * 100))
	q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at, end_at, state, updated_at) VALUES ($id, 'alice', 'app4000', 'c[1-256]', $((256 + k * 10)), $(m $s), $(m $((s + 30))), 'COMPLETED', $T0)"
	# shellcheck disable=SC2086
	jobio $id N-N 1 1e9 "$(phases $spec)"
	k=$((k + 1))
done
# Two new runs on c[1-256] (default forwarder fwd01): 4001 with a
# checkpoint ten times slower, 4002 as usual.
job 4001 'c[1-256]' 256 600 700
q "UPDATE jobs SET user = 'alice', name = 'app4000' WHERE job_id = 4001"
jobio 4001 N-N 1 1e9 "$(phases 100 50 3000 200)"
job 4002 'c[1-256]' 256 800 830
q "UPDATE jobs SET user = 'alice', name = 'app4000' WHERE job_id = 4002"
jobio 4002 N-N 1 1e9 "$(phases 103 51 302 200)"
# Neighbours of 4001: an N-1 job on 512 nodes sharing fwd01 by its default
# mapping; a benign job holding fwd01 through the ledger; a metadata-heavy
# job elsewhere (fwd05); a disruptive job on fwd01 that ended before.
job 5001 'c[1-512]' 512 650 720
jobio 5001 N-1 10 1e9 NULL
job 5002 'c[1025-1100]' 76 610 690
jobio 5002 N-N 5 1e8 NULL
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, node_count, action, acquired_at, released_at) VALUES (5002, 'fwd01', 0, 'c[1025-1100]', 76, 'scale', $(m 610), $(m 690))"
job 5003 'c[1025-1280]' 256 600 700
jobio 5003 N-N 900 1e9 NULL
job 5004 'c[1-256]' 256 500 590
jobio 5004 N-1 900 9e9 NULL
# A job with no phases, and another application with no history.
job 6001 'c[1-64]' 64 0 10
job 6002 'c[1-64]' 64 0 10
jobio 6002 N-N 1 1e9 "$(phases 10 1 10 1)"

out=$("$fwdctl" health job 4001 2>&1)
check_eq "anomalous run: exit 1" 1 $?
check_match "anomalous run: verdict and reason" \
	'^job 4001 \(alice/app4000, 256 nodes\): ANOMALOUS: 1 of 2 I/O phase\(s\) outside the 2 cluster\(s\) of 10 past phase\(s\)' \
	"$out"
check_match "the slow checkpoint is the outlier" \
	'phase 2: 3000 s, 2e\+11 bytes  <- outlier' "$out"
check_match "N-1 neighbour on the shared forwarder is interference-prone" \
	'neighbour job 5001 on fwd01: interference-prone: N-1 on 512 nodes \(limit 64\)' \
	"$out"
check_match "neighbour through the ledger, benign" \
	'neighbour job 5002 on fwd01: not interference-prone' "$out"
case $out in
*"job 5003"*|*"job 5004"*) fail "jobs on other forwarders or earlier are not neighbours"
	diag "$out" ;;
*) pass "jobs on other forwarders or earlier are not neighbours" ;;
esac
js=$("$fwdctl" health job 4001 --json | tr -d '\n' | sed 's/  */ /g')
check_match "json: neighbours with shared forwarder and flag" \
	'"neighbours": \[ \{ "job_id": 5001, "shared_forwarder": "fwd01", "disruptive": true, "reasons": "N-1 on 512 nodes \(limit 64\)" \}, \{ "job_id": 5002, "shared_forwarder": "fwd01", "disruptive": false, "reasons": "" \} \]' \
	"$js"
check_match "json: history used" '"history_runs": 5, "history_phases": 10, "clusters": 2' "$js"

out=$("$fwdctl" health job 4002 2>&1)
check_eq "usual run: exit 0" 0 $?
check_match "usual run: normal" '^job 4002 .*: normal: 0 of 2 I/O phase' "$out"

out=$("$fwdctl" health job 6002 2>&1)
check_eq "no history: exit 0" 0 $?
check_match "no history: not checked, says why" \
	'not checked: 0 past I/O phase\(s\), need 3 to form a cluster' "$out"

out=$("$fwdctl" health job 6001 2>&1)
check_eq "no phases recorded: exit 1" 1 $?
check_eq "  message" "fwdctl health job: job 6001: no I/O phases recorded (job_io.phases is empty)" "$out"
out=$("$fwdctl" health job 999 2>&1)
check_eq "unknown job: exit 1" 1 $?
check_eq "  message" "fwdctl health job: job 999: not in the jobs table" "$out"
out=$("$fwdctl" health job 12x 2>&1)
check_eq "bad job id: exit 2" 2 $?
check_eq "  message" "fwdctl health job: '12x' is not a job id (1..4294967295)" "$out"

tap_done
