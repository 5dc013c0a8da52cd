#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A prolog refused for lack of pool says in its audit record (file and
# table) who holds the pool: how many private forwarders other jobs hold
# and, when slurmctld answers, how many of them belong to jobs Slurm no
# longer runs (lost epilogs).  Here no slurmctld runs (the jobs are only
# in the ledger): the record says slurmctld could not be asked and how
# long the oldest has been held.
# (tests/integration/slurm_pool.sh checks the answer with a real
# slurmctld.)
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/pool.yaml
mc_policy "$P" 's/^    reserve: .*/    reserve: 4/'
mc_init "$P"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# prolog JOB NODES: an N-1 job asking for isolation; sets $rc, $ms
prolog() {
	t0=$(now_ms)
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$2" SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NAME=n1app SPANK_IO_UPGRADE=isolate \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$P" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
	ms=$(($(now_ms) - t0))
	diag "prolog job $1: ${ms} ms, exit $rc: $(cat "$d/hook.err")"
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
db_reasons() { q "SELECT JSON_EXTRACT(record, '\$.reasons') FROM audit WHERE job_id = $1 ORDER BY id DESC LIMIT 1" | jq -c .; }

# Two jobs take the pool (6 idle, 4 in reserve, 1 private each).
prolog 401 'c[5-6]'
check_eq "job 401: isolated" isolate "$(file_rec 401 | jq -r .action)"
prolog 402 'c[7-8]'
check_eq "job 402: isolated" isolate "$(file_rec 402 | jq -r .action)"
held=$(q "SELECT COUNT(*) FROM allocations WHERE released_at IS NULL AND is_private AND job_id IN (401, 402)")
check_eq "2 private forwarders held" 2 "$held"

# The third is refused; its record says who holds the pool.
prolog 403 'c[1-2]'
check_eq "job 403: exit 0" 0 "$rc"
r=$(file_rec 403)
check_eq "job 403: refused, default mapping" refused "$(printf '%s' "$r" | jq -r .action)"
check_match "job 403: refused for lack of pool" '"isolation refused: ' \
	"$(printf '%s' "$r" | jq -c .reasons)"
pool=$(printf '%s' "$r" | jq -r '.reasons[] | select(startswith("pool: "))')
diag "job 403: $pool"
check_match "job 403: the record counts the pool's holders" \
	'^pool: 2 private forwarders held by other jobs, the oldest for [0-9]+s; slurmctld could not be asked which of them still run \(.+\)$' \
	"$pool"
check_eq "job 403: the audit table has the same reasons" \
	"$(printf '%s' "$r" | jq -c .reasons)" "$(db_reasons 403)"

# The pool taken by a job holding every backup shared: the record says
# no private forwarder is held by another job (from the ledger the
# prolog read; neither the rows nor slurmctld are read again).
q "UPDATE allocations SET released_at = UNIX_TIMESTAMP() WHERE job_id IN (401, 402)"
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
	acquired_at) SELECT 500, CONCAT('fwd', seq), 'c[3-4]', 2, 'scale',
	UNIX_TIMESTAMP() FROM seq_3_to_8"
prolog 404 'c[1-2]'
check_eq "job 404: exit 0" 0 "$rc"
r=$(file_rec 404)
check_eq "job 404: refused" refused "$(printf '%s' "$r" | jq -r .action)"
check_eq "job 404: no private forwarder held by another job" \
	"pool: no private forwarder is held by another job" \
	"$(printf '%s' "$r" | jq -r '.reasons[] | select(startswith("pool: "))')"
check_eq "job 404: the audit table has the same reasons" \
	"$(printf '%s' "$r" | jq -c .reasons)" "$(db_reasons 404)"

tap_done
