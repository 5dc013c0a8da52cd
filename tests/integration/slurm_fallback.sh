#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A fallback whose cause is the controller's configuration (issue 29, item
# 3), on a real slurmctld/slurmd cluster: the controller's password file
# is group-readable, so the controller prolog refuses it and the job runs
# on its default mapping.  The job is told (FWDALLOC_ACTION=fallback in
# its batch script and its steps, through the published decision file),
# the audit file says why, and once the database can be used again
# fwdctl metrics counts the fallback (stored from the audit file).
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
mc_start slurm-fallback $((${FWDALLOC_MC_PORT_BASE:-17120} + 200))

wait_gone() {
	local i left
	for i in $(seq 1 600); do
		left=$(squeue -h -j "$1" -o %i 2>/dev/null | wc -l)
		[ "$left" -eq 0 ] && { mc_settle "$1"; return 0; }
		sleep 0.1
	done
	diag "job still queued: $1"
	return 1
}
fallbacks() {
	"$top_builddir/fwdctl" --policy "$M/policy.yaml" metrics >"$T/metrics.out" 2>"$T/metrics.err"
	[ -s "$T/metrics.err" ] && diag "metrics: $(cat "$T/metrics.err")"
	sed -n 's/^fwdalloc_fallbacks_total //p' "$T/metrics.out"
}

before=$(fallbacks)
check_match "metrics at first: a count" '^[0-9]+$' "$before"

chmod 0640 "$M/db/db.pass"
j=$(sbatch --parsable -N2 -w 'c[1-2]' -J bwapp --io-upgrade=scale \
	-o "$T/seen.%j" --wrap 'echo "batch $FWDALLOC_ACTION"
srun -N1 -n1 -w c2 sh -c "echo step \$FWDALLOC_ACTION"' 2>&1)
check_match "job submitted" '^[0-9]+$' "$j"
wait_gone "$j"
rec=$(grep "\"job_id\":\"$j\"" "$M/audit.jsonl" | grep '"event":"prolog"' | tail -1)
check_match "the prolog fell back, naming the password file" \
	"^fallback: .*$M/db/db.pass" "$(printf '%s' "$rec" | jq -r .outcome)"
check_eq "the job was told: batch script and step" \
	"batch fallback
step fallback" "$(grep -v '^fwdalloc: ' "$T/seen.$j" 2>&1)"
check_match "the batch script's note says fallback" \
	"^fwdalloc: job $j: --io-upgrade=scale: fallback" \
	"$(grep '^fwdalloc: ' "$T/seen.$j" 2>&1)"
check_eq "both node prologs said the controller fell back" 2 \
	"$(mc_log_count 2 "job_prolog: job $j node c[12]: .*the controller fell back")"
erec=$(grep "\"job_id\":\"$j\"" "$M/audit.jsonl" | grep '"event":"epilog"' | tail -1)
check_eq "the epilog record: both node prologs reported (kept defaults as told)" \
	"2 0 0" \
	"$(printf '%s' "$erec" | jq -r '.node_outcomes | "\(.applied) \(.fell_back) \(.silent)"')"
check_eq "the epilog removed the decision file" "" \
	"$(ls "$M/spool" 2>/dev/null | grep "^$j\.")"

chmod 0600 "$M/db/db.pass"
check_eq "metrics: fwdalloc_fallbacks_total counts it" $((before + 1)) \
	"$(fallbacks)"
check_eq "the audit table has the job's prolog and epilog fallbacks" \
	"epilog,prolog" \
	"$(sql "SELECT GROUP_CONCAT(JSON_VALUE(record, '\$.event') ORDER BY 1) FROM audit WHERE job_id = $j AND outcome LIKE 'fallback:%'")"

tap_done
