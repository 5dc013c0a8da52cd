#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shadow mode applies nothing (issue 29, item 9), against a private
# MariaDB: the controller prolog of a job in shadow (the policy's
# access.mode, or --io-upgrade=shadow) audits what the job would get, but
# its allocation rows, which the nodes read (the decision file and the
# database) and the ledger and metrics count, are the job's default
# mapping, shared: each node's FWDALLOC_FORWARDERS then names the
# forwarder it really uses, and no backup reads as held.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/good.yaml
mc_policy "$P"
printf 'remap:\n  driver: none\n  decision_dir: %s\n' "$d/spool" >>"$P"
mkdir -m 0755 "$d/spool"
mc_init "$P"
S=$d/shadow.yaml
sed 's/^  mode: opt-in$/  mode: shadow/' "$P" >"$S"
check_eq "the shadow policy says shadow" 1 "$(grep -c '^  mode: shadow$' "$S")"

# prolog POLICY JOB NODES REQUEST: the controller prolog, as slurmctld
# runs it, for an N-N bandwidth job (bwapp: S = 4 on 4 nodes).
prolog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$2" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$3" SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME=bwapp ${4:+SPANK_IO_UPGRADE=$4} \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$1" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
}
rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
rows() { q "SELECT CONCAT(forwarder, ' ', is_private, ' ', nodes, ' ', node_count) FROM allocations WHERE job_id = $1 AND released_at IS NULL ORDER BY forwarder"; }
# The node's view: the rows of the job's decision file (its "rows").
filerows() { jq -r '.rows[] | "\(.forwarder) \(.nodes)"' "$d/spool/$1.decision" 2>&1 | sort; }

# The same job without shadow: scaled onto backups (the control).
prolog "$P" 951 'c[1-4]' scale
check_eq "opt-in, scale: exit 0" 0 "$rc"
check_eq "opt-in, scale: the record scales" scale "$(rec 951 | jq -r .action)"
check_match "opt-in, scale: backups held" 'fwd[3-8] ' "$(rows 951)"

for c in "policy:$S:952:" "request:$P:953:shadow"; do
	what=${c%%:*}
	rest=${c#*:}
	pol=${rest%%:*}
	rest=${rest#*:}
	job=${rest%%:*}
	req=${rest#*:}
	prolog "$pol" "$job" 'c[5-8]' "$req"
	check_eq "shadow ($what): exit 0" 0 "$rc"
	r=$(rec "$job")
	check_eq "shadow ($what): action shadow" shadow "$(printf '%s' "$r" | jq -r .action)"
	check_eq "shadow ($what): the record says what it would do" \
		"shadow mode: would scale; nothing applied" \
		"$(printf '%s' "$r" | jq -r '.reasons[]' | grep '^shadow mode')"
	check_match "shadow ($what): the would-be forwarders are in the record" \
		'fwd[3-8]' "$(printf '%s' "$r" | jq -c .decision)"
	check_eq "shadow ($what): forwarders_after: the defaults" '["fwd2"]' \
		"$(printf '%s' "$r" | jq -c .forwarders_after)"
	check_eq "shadow ($what): the rows held are the default mapping, shared" \
		"fwd2 0 c[5-8] 4" "$(rows "$job")"
	check_eq "shadow ($what): the nodes read their default forwarder" \
		"fwd2 c[5-8]" "$(filerows "$job")"
done

# fwdctl metrics: held forwarders are the control job's and the defaults.
held=$("$fwdctl" --policy "$P" alloc list --json |
	jq -r '[.[] | select(.job_id == 952 or .job_id == 953) | .forwarder] | unique | join(" ")')
check_eq "alloc list: the shadow jobs hold only fwd2" "fwd2" "$held"

tap_done
