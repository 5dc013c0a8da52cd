#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Direct file-system access end to end on a real local Slurm cluster with
# a real MariaDB: a job whose history measured the file system directly
# (bandwidth_by_forwarders "0") faster than through forwarders gets action
# `direct` from PrologSlurmctld (policy decision.curve.direct, exec
# driver), no allocation row, a decision file row without a forwarder;
# every node's SPANK job prolog runs the exec driver's command with
# FWD_ACTION=direct and empty FWD_FORWARDERS/FWD_ADDRESSES, and the job
# epilog reverts it.  Under the lnet driver the same policy does not load
# (lnet cannot give direct access): the job keeps its default mapping.
#
# Topology (tests/fixtures/minicluster): c[1-4] -> fwd1, c[5-8] -> fwd2.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
# The cluster's test policy with direct access allowed.
tpl=$(mktemp /tmp/fwd-direct-policy.XXXXXX)
sed -e 's/^  contention: gain$/  contention: gain\n  curve:\n    direct: true/' \
	"$top_srcdir/tests/fixtures/minicluster/policy.yaml.in" >"$tpl"
export FWDALLOC_MC_POLICY=$tpl
mc_cleanup_extra() { rm -f "$tpl"; }
# Ports of its own: 120 above slurm_basic's when a base is given.
mc_start slurm-direct $((${FWDALLOC_MC_PORT_BASE:-17120} + 140))
fwdctl() { "$top_builddir/fwdctl" "$@"; }
check_match "the policy allows direct access" 'direct: true' \
	"$(grep -A2 '^  curve:' "$M/policy.yaml")"

# History: 8 GB/s straight to the file system, 1 GB/s through one
# forwarder, 1.5 GB/s through two.
cat >"$T/history.json" <<'EOT'
[
 {"user": "root", "name": "dirapp", "nodes": 4,
  "profile": {"io_volume_bytes": 107374182400, "io_nodes": 4,
   "node_bandwidth_bps": 2.5e9, "peak_bandwidth_bps": 8e9, "iops": 200,
   "mdops": 10, "io_mode": "N-N", "runs": 5,
   "bandwidth_by_forwarders": {"0": 8e9, "1": 1e9, "2": 1.5e9}}}
]
EOT
fwdctl profile import "$T/history.json" >"$T/import.out" 2>&1
check_eq "history imported" 0 "$?" || diag "$(cat "$T/import.out")"

wait_gone() {
	local i
	for i in $(seq 1 600); do
		[ "$(squeue -h -j "$1" -o %i 2>/dev/null | wc -l)" -eq 0 ] && { mc_settle "$1"; return 0; }
		sleep 0.1
	done
	diag "job still queued: $1"
	return 1
}
audit_db() { sql "SELECT $2 FROM audit WHERE job_id = $1 AND JSON_VALUE(record, '\$.event') = 'prolog' ORDER BY id DESC LIMIT 1"; }
rows() { sql "SELECT COUNT(*) FROM allocations WHERE job_id = $1"; }
# remap.log lines: "<time> <action> <job> <node> <forwarders> <addresses>";
# with empty forwarders and addresses a line has 4 fields.
logged() { # ACTION JOB: nodes whose command ran with no forwarder
	awk -v a="$1" -v j="$2" '$2 == a && $3 == j && NF == 4 { print $4 }' \
		"$M/remap.log" | sort | tr '\n' ' '
}

# 1. Direct: the curve's k = 0 point beats every forwarder count.
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J dirapp --io-upgrade=scale \
	--wrap 'sleep 1' 2>&1)
check_match "direct job submitted" '^[0-9]+$' "$j"
wait_gone "$j"
check_eq "direct: decision action" direct "$(audit_db "$j" action)"
check_match "direct: audit record says direct with no forwarder after" \
	'"action":"direct".*"forwarders_after":\[\].*"outcome":"applied"' \
	"$(audit_db "$j" record)"
check_eq "direct: the ledger holds no allocation row" 0 "$(rows "$j")"
check_eq "direct: every node's command ran with FWD_ACTION=direct and no forwarder" \
	"c1 c2 c3 c4 " "$(logged direct "$j")"
check_eq "direct: the command never ran with apply" "" \
	"$(awk -v j="$j" '$2 == "apply" && $3 == j' "$M/remap.log")"
check_eq "direct: every node prolog read it from the decision file" 4 \
	"$(mc_log_count 4 "job_prolog: job $j node c[1-4]: .*action direct: applied direct file-system access, no forwarder \(driver exec, read from the decision file\)")"
check_eq "direct: every job epilog reverted it (no forwarder)" \
	"c1 c2 c3 c4 " "$(logged revert "$j")"
check_eq "direct: no exec state left" 0 \
	"$(find "$M/remap-state" -name "exec.$j.*" | wc -l)"
check_eq "direct: the epilog removed the decision file" 0 \
	"$(find "$M/spool" -name "$j.*" | wc -l)"
check_match "direct: the controller epilog released nothing, no node fell back" \
	'"event":"epilog".*"outcome":"released 0 allocation row\(s\)".*"node_fallbacks":\{"count":0,' \
	"$(grep "\"job_id\":\"$j\"" "$M/audit.jsonl" | grep '"event":"epilog"')"

# 2. lnet: the same policy with the lnet driver does not load, so no
#    controller prolog decides direct and no node changes.
sed -i -e 's/^  driver: exec$/  driver: lnet/' "$M/policy.yaml"
out=$(fwdctl policy check "$M/policy.yaml" 2>&1)
check_match "lnet: the policy is refused, naming the driver" \
	"decision.curve.direct: value 'true': remap.driver 'lnet' cannot give a node direct file-system access" \
	"$out"
j=$(sbatch --parsable -N4 -w 'c[1-4]' -J dirapp --io-upgrade=scale \
	--wrap 'sleep 1' 2>&1)
check_match "lnet job submitted" '^[0-9]+$' "$j"
wait_gone "$j"
check_eq "lnet: no direct decision recorded" 0 \
	"$(sql "SELECT COUNT(*) FROM audit WHERE job_id = $j AND JSON_VALUE(record, '\$.action') = 'direct'")"
check_eq "lnet: no node command ran for the job" "" \
	"$(awk -v j="$j" '$3 == j' "$M/remap.log")"

tap_done
