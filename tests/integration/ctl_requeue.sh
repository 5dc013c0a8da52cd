#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A controller prolog run again for the same job on other nodes (a
# requeue after a lost epilog, or a second controller of an HA pair)
# while the job still holds its rows: it is decided again for the nodes
# it has now, its old rows released and the new ones written in the same
# transaction, and the decision file maps the new nodes, as the ledger
# does.  Run again on the same nodes, the held decision comes back as it
# is (nothing rewritten).
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/requeue.yaml
mc_policy "$P"
printf 'remap:\n  driver: none\n  decision_dir: %s\n' "$d/spool" >>"$P"
mkdir -m 0755 "$d/spool"
mc_init "$P"

# prolog JOB NODES: an N-1 job asking for isolation; sets $rc
prolog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$2" SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NAME=n1app SPANK_IO_UPGRADE=isolate \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$P" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
	diag "prolog job $1 on $2: exit $rc: $(cat "$d/hook.err")"
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
# the job's unreleased rows: forwarder nodes, one a line
rows() { q "SELECT CONCAT(forwarder, ' ', nodes) FROM allocations WHERE job_id = $1 AND released_at IS NULL ORDER BY forwarder"; }
# the decision file's rows the same way
file_rows() { jq -r '.rows[] | "\(.forwarder) \(.nodes)"' "$d/spool/$1.decision" | sort; }

prolog 601 'c[1-2]'
check_eq "first run: exit 0" 0 "$rc"
check_eq "first run: isolated" isolate "$(file_rec 601 | jq -r .action)"
first=$(rows 601)
check_match "first run: the rows map c[1-2]" 'c\[1-2\]' "$first"
check_eq "first run: the decision file maps what the ledger holds" \
	"$first" "$(file_rows 601)"
acq=$(q "SELECT GROUP_CONCAT(id ORDER BY id) FROM allocations WHERE job_id = 601")

# The same nodes again (a second controller): the held decision as it is.
prolog 601 'c[1-2]'
check_eq "same nodes: exit 0" 0 "$rc"
check_match "same nodes: returned as held" \
	'job already holds an allocation: returning it' \
	"$(file_rec 601 | jq -c .reasons)"
check_eq "same nodes: no row rewritten" "$acq" \
	"$(q "SELECT GROUP_CONCAT(id ORDER BY id) FROM allocations WHERE job_id = 601")"

# Requeued onto other nodes with its rows still held (the epilog lost).
prolog 601 'c[7-8]'
check_eq "other nodes: exit 0" 0 "$rc"
r=$(file_rec 601)
check_eq "other nodes: no fallback" isolate "$(printf '%s' "$r" | jq -r .action)"
check_match "other nodes: decided again, saying why" \
	'job already holds an allocation for other nodes \(c\[1-2\]\): decided again' \
	"$(printf '%s' "$r" | jq -c .reasons)"
now=$(rows 601)
check_match "other nodes: the ledger maps c[7-8]" 'c\[7-8\]' "$now"
check_eq "other nodes: nothing held for c[1-2] any more" "" \
	"$(printf '%s\n' "$now" | grep 'c\[1-2\]')"
check_eq "other nodes: the old rows released, with the reason" \
	"$(printf '%s\n' "$first" | wc -l)" \
	"$(q "SELECT COUNT(*) FROM allocations WHERE job_id = 601 AND release_reason = 'redecided: other nodes'")"
check_eq "other nodes: the decision file maps what the ledger holds" \
	"$now" "$(file_rows 601)"
check_eq "other nodes: one private forwarder held, not two" 1 \
	"$(q "SELECT COUNT(*) FROM allocations WHERE job_id = 601 AND released_at IS NULL AND is_private")"
tap_done
