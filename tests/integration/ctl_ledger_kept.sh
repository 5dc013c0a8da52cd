#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The controller service keeps the ledger across batches and reads only
# what changed since (ledger_store_load_changes()): releases made by
# other processes (`fwdctl epilog`) and allocations made by other
# deciders (`fwdctl prolog`, as a hook does when the service is away)
# reach its next decision as they would through a whole read, and it
# reads the whole ledger once however many jobs hold forwarders.  A
# release without the ledger_version row still releases (unnumbered, read
# as such); the service's whole read then falls back saying why.  Jobs asking
# for isolation on the mini-cluster's pool (reserve 4: two private
# forwarders), through the installed prolog hook (prolog-slurmctld),
# without Slurm.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/kept.yaml
mc_policy "$P" 's/^    reserve: .*/    reserve: 4/'
mc_init "$P"
sock=$d/fwdallocd.sock
hook=$top_builddir/cli/prolog-slurmctld

"$top_builddir/fwdallocd" --policy "$P" --socket "$sock" \
	</dev/null >"$d/fwdallocd.log" 2>&1 &
svc=$!
stop_svc() { kill "$svc" 2>/dev/null; wait "$svc" 2>/dev/null; [ -n "${KEEP:-}" ] || db_cleanup; }
trap stop_svc EXIT
wait_socket "$sock"
check "the service listens" test -S "$sock"
count() {
	"$top_builddir/fwdallocd" --status --socket "$sock" 2>/dev/null |
		sed -n "s/^$1 //p"
}

# job_env JOB NODES COMMAND...: COMMAND with the variables slurmctld
# gives a prolog, for an N-1 job of 2 nodes asking for isolation.
job_env() {
	_job=$1 _nodes=$2
	shift 2
	env -i PATH="$PATH" SLURM_JOB_ID="$_job" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$_nodes" SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NAME=n1app SPANK_IO_UPGRADE=isolate \
		SLURM_CONF=/nonexistent/slurm.conf "$@"
}
# svc_prolog JOB NODES: through the hook, decided by the service.
svc_prolog() {
	job_env "$1" "$2" "$hook" "$sock" 5000 "$fwdctl" --policy "$P" \
		prolog >"$d/hook.out" 2>&1
	rc=$?
}
# own_prolog JOB NODES / own_epilog JOB NODES: `fwdctl` deciding and
# releasing on its own, beside the service.
own_prolog() {
	job_env "$1" "$2" "$fwdctl" --policy "$P" prolog >"$d/own.out" 2>&1
	rc=$?
}
own_epilog() {
	job_env "$1" "$2" "$fwdctl" --policy "$P" epilog >"$d/own.out" 2>&1
	rc=$?
}
action_of() {
	grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' |
		tail -1 | jq -r .action
}
private_of() {
	q "SELECT IFNULL(GROUP_CONCAT(forwarder ORDER BY forwarder), '')
		FROM allocations WHERE job_id = $1 AND is_private
		AND released_at IS NULL"
}

# Held by many jobs: the service reads them whole once, then only the
# changes (1,000 jobs on the service forwarders, shared, as running jobs
# with the default mapping hold them).
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at) SELECT 100000 + seq, IF(seq % 2, 'fwd1', 'fwd2'),
	IF(seq % 2, 'c1', 'c5'), 1, 'default', UNIX_TIMESTAMP()
	FROM seq_1_to_1000"

# 1. The service takes the pool: two jobs isolated, the third refused.
svc_prolog 401 'c[5-6]'
check_eq "job 401 (service): isolated" isolate "$(action_of 401)"
svc_prolog 402 'c[7-8]'
check_eq "job 402 (service): isolated" isolate "$(action_of 402)"
svc_prolog 403 'c[1-2]'
check_eq "job 403 (service): refused, the pool is held" refused \
	"$(action_of 403)"
check_eq "the ledger read whole once for three batches" 1 \
	"$(count ledger_loads)"

# 2. Released by another process: the service's next decision has a
# forwarder of the pool again.
own_epilog 401 'c[5-6]'
check_eq "job 401 released by fwdctl epilog" 0 "$rc"
check_eq "job 401 holds nothing" "0" \
	"$(q "SELECT COUNT(*) FROM allocations WHERE job_id = 401 AND released_at IS NULL")"
check "the release has its number" \
	test "$(q "SELECT COUNT(*) FROM allocations WHERE job_id = 401 AND released_seq > 0")" -gt 0
svc_prolog 404 'c[1-2]'
check_eq "job 404 (service): isolated, job 401's share of the pool free" \
	isolate "$(action_of 404)"
f404=$(private_of 404)
check_match "job 404 holds one private forwarder" '^fwd[3-8]$' "$f404"

# 3. Taken by another decider: the service's next decision does not
# hand the pool out again.
own_epilog 402 'c[7-8]'
own_prolog 405 'c[7-8]'
check_eq "job 405 (fwdctl prolog): isolated, job 402's share of the pool" \
	isolate "$(action_of 405)"
svc_prolog 406 'c[3-4]'
check_eq "job 406 (service): refused, job 405 holds the pool's last" \
	refused "$(action_of 406)"
check_eq "no forwarder held privately twice" "" \
	"$(q "SELECT forwarder FROM allocations WHERE is_private AND released_at IS NULL GROUP BY forwarder HAVING COUNT(*) > 1")"
check_eq "still one whole read, for six batches" 1 "$(count ledger_loads)"
check_eq "the service decided its five jobs" 5 "$(count decided)"
check_eq "none fell back" 0 "$(count fell_back)"

# 4. Without the ledger_version row a release still releases, its rows
# not numbered, and the kept ledger reads it among the releases not
# numbered yet; the next release once the row is back numbers both.
q "DELETE FROM ledger_version"
own_epilog 404 'c[1-2]'
check_eq "release without the row: job 404 released" "" "$(private_of 404)"
check_eq "release without the row: its rows not numbered" 0 \
	"$(q "SELECT COUNT(*) FROM allocations WHERE job_id = 404 AND released_seq IS NOT NULL")"
svc_prolog 407 'c[1-2]'
check_eq "job 407 (service): isolated, job 404's unnumbered release read" \
	isolate "$(action_of 407)"
q "INSERT INTO ledger_version (id, version) VALUES (1, 1000)"
own_epilog 405 'c[7-8]'
check_eq "the row restored: the next release numbers 404's rows and its own" \
	"1001 1001" \
	"$(q "SELECT MIN(released_seq), MAX(released_seq) FROM allocations WHERE job_id IN (404, 405)" | tr '\t' ' ')"
check_eq "still one whole read" 1 "$(count ledger_loads)"

# 5. The service restarted without the row: its whole read falls back,
# saying why; restored, it decides again.
kill "$svc"
wait "$svc" 2>/dev/null
q "DELETE FROM ledger_version"
"$top_builddir/fwdallocd" --policy "$P" --socket "$sock" \
	</dev/null >>"$d/fwdallocd.log" 2>&1 &
svc=$!
for i in $(seq 1 100); do
	count batches >/dev/null 2>&1 && [ -n "$(count batches)" ] && break
	sleep 0.1
done
svc_prolog 408 'c[3-4]'
check_eq "no row: job 408 falls back, saying why" \
	"default fallback: loading the allocation ledger: the ledger_version row is missing (see db/SCHEMA.md)" \
	"$(grep '"job_id":"408"' "$d/audit.jsonl" | tail -1 |
		jq -r '.action + " " + .reasons[0]')"
q "INSERT INTO ledger_version (id, version) VALUES (1, 2000)"
svc_prolog 409 'c[3-4]'
check_eq "row restored: job 409 decided (isolated: job 405 released)" isolate \
	"$(action_of 409)"

tap_done
