#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The controller hooks with a policy that does not load (issue 29, items 5
# and 3), against a private MariaDB.  The epilog, direct or queued (what
# the installed epilog-slurmctld runs), still releases what the job holds
# from the ledger, with the database, audit file and decision directory
# the broken file names; its record is an "epilog" one that carries the
# parse error, and the job's decision and node fallback files are gone.
# The prolog's fallback is counted: in the audit table as well as the
# file, and in fwdctl metrics' fwdalloc_fallbacks_total.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/good.yaml
mc_policy "$P"
printf 'remap:\n  driver: none\n  decision_dir: %s\n' "$d/spool" >>"$P"
mkdir -m 0755 "$d/spool"
mc_init "$P"
# The same policy with one unknown key: it does not load.
B=$d/broken.yaml
sed 's/^access:$/access:\n  bogus: 1/' "$P" >"$B"
bline=$(grep -n '^  bogus: 1$' "$B" | cut -d: -f1)
perr="$B:$bline:3: access.bogus: unknown key; allowed keys: mode, fail, allow_users, deny_users, allow_accounts, deny_accounts, allow_partitions, deny_partitions"

# hook POLICY EVENT JOB [ARG]: run fwdctl as slurmctld would; sets $rc, $err
hook() {
	env -i PATH="$PATH" SLURM_JOB_ID="$3" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-2]' SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NAME=n1app SPANK_IO_UPGRADE=isolate \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$1" "$2" ${4:+"$4"} >"$d/hook.out" \
		2>"$d/hook.err"
	rc=$?
	err=$(cat "$d/hook.err")
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep "\"event\":\"$2\"" | tail -1; }
held() { q "SELECT COUNT(*) FROM allocations WHERE job_id = $1 AND released_at IS NULL"; }
fallbacks() { "$fwdctl" --policy "$P" metrics | sed -n 's/^fwdalloc_fallbacks_total //p'; }

run_check_broken() {
	check_eq "the broken policy does not load" 1 \
		"$("$fwdctl" --policy "$B" policy check >/dev/null 2>&1; echo $?)"
}
run_check_broken

# epilog_case JOB [--queue]: a job decided under the good policy, ended
# under the broken one.
epilog_case() {
	what="epilog${2:+ $2}"
	hook "$P" prolog "$1"
	check_eq "$what: job $1 isolated" isolate \
		"$(file_rec "$1" prolog | jq -r .action)"
	check_eq "$what: job $1 holds its forwarder" 1 "$(held "$1")"
	check_eq "$what: the decision file is there" yes \
		"$([ -f "$d/spool/$1.decision" ] && echo yes)"
	# c2's node prolog kept its defaults and said so; c1's applied the
	# decision (job 701) or never reported (job 702: no plugin there).
	printf 'c2 applying: lnetctl failed\n' >"$d/spool/$1.fallbacks"
	[ "$1" = 701 ] && printf 'c1 isolate\n' >"$d/spool/$1.applied"
	hook "$B" epilog "$1" $2
	check_eq "$what: exits 0" 0 "$rc"
	r=$(file_rec "$1" epilog)
	check_eq "$what: an epilog record (not a prolog one)" epilog \
		"$(printf '%s' "$r" | jq -r .event)"
	check_eq "$what: the record carries the parse error" "$perr" \
		"$(printf '%s' "$r" | jq -r .policy_error)"
	if [ "$1" = 701 ]; then
		silent=0 silent_nodes=""
	else
		silent=1 silent_nodes=c1
	fi
	check_eq "$what: released from the ledger; the nodes that did not apply said" \
		"released 1 allocation row(s); nodes: 1 did not apply (fell back), $silent never reported (fwdalloc plugin not loaded there?)" \
		"$(printf '%s' "$r" | jq -r .outcome)"
	check_eq "$what: node outcomes: applied, fell back, silent (which)" \
		"$((1 - silent)) 1 $silent [$silent_nodes]" \
		"$(printf '%s' "$r" | jq -r '.node_outcomes | "\(.applied) \(.fell_back) \(.silent) [\(.silent_nodes | join(","))]"')"
	check_eq "$what: nothing held" 0 "$(held "$1")"
	check_eq "$what: the node fallback is in the record" "1 c2" \
		"$(printf '%s' "$r" | jq -r '"\(.node_fallbacks.count) \(.node_fallbacks.nodes[0])"')"
	check_eq "$what: decision, fallback and applied files removed" "" \
		"$(ls "$d/spool" | grep "^$1\.")"
	check_eq "$what: the audit table has the record" "$perr" \
		"$(q "SELECT JSON_VALUE(record, '\$.policy_error') FROM audit WHERE job_id = $1 AND JSON_VALUE(record, '\$.event') = 'epilog'")"
}
epilog_case 701
epilog_case 702 --queue
check_eq "metrics: the nodes that did not apply, by outcome" \
	'fwdalloc_node_outcomes_total{outcome="fell_back"} 2
fwdalloc_node_outcomes_total{outcome="silent"} 1' \
	"$("$fwdctl" --policy "$P" metrics | grep '^fwdalloc_node_outcomes_total')"
check_eq "fwdctl alloc show: what the node prologs did, and where not" \
	"  nodes:    0 applied, 1 fell back, 1 never reported
  fell back: c2
  no report: c1 (fwdalloc plugin not loaded there?)" \
	"$("$fwdctl" --policy "$P" alloc show 702 | grep -E '^  (nodes|fell back|no report):')"
check_eq "fwdctl alloc show --json: the release record" "1 c1" \
	"$("$fwdctl" --policy "$P" alloc show 702 --json | jq -r '"\(.release.node_outcomes.silent) \(.release.node_outcomes.silent_nodes[0])"')"
check_match "fwdctl audit shows them in the outcome" \
	"never reported" "$("$fwdctl" --policy "$P" audit --job 702 2>&1)"

# The prolog under the broken policy: a fallback, counted everywhere.
before=$(fallbacks)
check_match "metrics before: a count" '^[0-9]+$' "$before"
hook "$B" prolog 703
check_eq "prolog: exits 0" 0 "$rc"
want="fallback: the policy could not be loaded: $perr"
check_eq "prolog: the file record says why" "$want" \
	"$(file_rec 703 prolog | jq -r .outcome)"
check_eq "prolog: the audit table says the same" "$want" \
	"$(q "SELECT outcome FROM audit WHERE job_id = 703")"
check_eq "prolog: fwdalloc_fallbacks_total counts it" $((before + 1)) \
	"$(fallbacks)"
check_eq "prolog: nothing held" 0 "$(held 703)"

tap_done
