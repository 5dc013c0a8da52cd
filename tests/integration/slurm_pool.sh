#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lost epilogs on a real local Slurm cluster: private forwarders held by
# jobs Slurm does not run (prologs run by hand for job ids slurmctld never
# saw, as a lost EpilogSlurmctld leaves them) and one held by a running
# job fill the pool; a prolog refused for lack of pool then says in its
# audit record (file and table) how many are held by jobs Slurm no longer
# runs, and which.  fwdctl reconcile frees exactly those.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
# Ports of its own (base .. base+8), 20 above slurm_basic/slurm_alloc's
# when a base is given, so the three can run at once (make -j).
mc_start slurm-pool $((${FWDALLOC_MC_PORT_BASE:-17280} + 20))
fwdctl() { "$top_builddir/fwdctl" "$@"; }
file_record() { grep "\"job_id\":\"$1\"" "$M/audit.jsonl" | grep '"event":"prolog"' | tail -1; }

fwdctl profile import "$top_srcdir/tests/fixtures/minicluster/history.json" \
	>"$T/import.out" 2>&1
check_eq "history imported" 0 "$?"

wait_running() {
	local i
	for i in $(seq 1 300); do
		[ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ] && return 0
		sleep 0.1
	done
	diag "job $1 not running: $(squeue -h -j "$1" -o %T 2>&1)"
	return 1
}

# One real job holds a private forwarder while it runs.
j=$(sbatch --parsable -N2 -w 'c[5-6]' -J n1app --io-upgrade --wrap 'sleep 60')
wait_running "$j"
check_eq "running job: isolated" isolate "$(file_record "$j" | jq -r .action)"

# prolog JOB NODES: the controller prolog run by hand for a job slurmctld
# does not know (an N-1 job asking for isolation).
prolog() {
	env SLURM_JOB_ID="$1" SLURM_JOB_USER=root SLURM_JOB_NAME=n1app \
		SLURM_JOB_NODELIST="$2" SLURM_JOB_NUM_NODES=2 \
		SPANK_IO_UPGRADE=isolate \
		"$top_builddir/fwdctl" prolog >"$T/hook.out" 2>&1
	rc=$?
}
# The 5 other idle forwarders go to jobs Slurm never ran (lost epilogs).
for g in 990001 990002 990003 990004 990005; do
	prolog $g 'c[7-8]'
	check_eq "gone job $g: isolated" isolate \
		"$(file_record $g | jq -r .action)"
done
check_eq "6 private forwarders held" 6 \
	"$(sql 'SELECT COUNT(*) FROM allocations WHERE released_at IS NULL AND is_private')"

prolog 990006 'c[1-2]'
check_eq "refused job: exit 0" 0 "$rc"
r=$(file_record 990006)
check_eq "refused job: refused" refused "$(printf '%s' "$r" | jq -r .action)"
pool=$(printf '%s' "$r" | jq -r '.reasons[] | select(startswith("pool: "))')
diag "refused job: $pool"
check_eq "refused job: the record names the gone jobs" \
	"pool: 5 of 6 private forwarders held by other jobs are held by jobs Slurm no longer runs (jobs 990001, 990002, 990003, 990004, 990005; fwdctl reconcile frees them)" \
	"$pool"
check_eq "refused job: the audit table says the same" \
	"$(printf '%s' "$r" | jq -c .reasons)" \
	"$(sql "SELECT JSON_EXTRACT(record, '\$.reasons') FROM audit WHERE job_id = 990006 ORDER BY id DESC LIMIT 1" | jq -c .)"

fwdctl reconcile >"$T/reconcile.out" 2>&1
check_eq "reconcile: exit 0" 0 "$?"
check_eq "reconcile freed the gone jobs' forwarders, kept the running one's" 1 \
	"$(sql 'SELECT COUNT(*) FROM allocations WHERE released_at IS NULL AND is_private')"
scancel "$j"

tap_done
