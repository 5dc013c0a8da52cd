#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The ledger as the controller prolog loads it from the allocations
# table, rows as they may be after a crash or a topology change: the same
# forwarder twice for one job (a repeated write), a forwarder the topology
# no longer has, a row without its node list.  The ledger still loads:
# the next job is decided (not failed open), around what the rows hold.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/rows.yaml
mc_policy "$P" 's/^    reserve: .*/    reserve: 0/'
mc_init "$P"

# prolog JOB NODES [NAME REQUEST NUM_NODES]: by default a 2-node N-1 job
# asking for isolation; sets $rc
prolog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$2" SLURM_JOB_NUM_NODES="${5:-2}" \
		SLURM_JOB_NAME="${3:-n1app}" SPANK_IO_UPGRADE="${4:-isolate}" \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$P" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
now=$(date +%s)
row() { # job forwarder private nodes node_count action
	q "INSERT INTO allocations (job_id, forwarder, is_private, nodes,
	   node_count, action, acquired_at) VALUES
	   ($1, '$2', $3, '$4', $5, '$6', $now)"
}

# case | rows (job forwarder private nodes count action; ...; nodes - for
#        none)
#      | the next job's forwarders may not include
while IFS='|' read -r what rows busy; do
	q "DELETE FROM allocations"
	: >"$d/audit.jsonl"
	echo "$rows" | tr ';' '\n' | while read -r j f p n c a; do
		[ "$n" = - ] && n= # no node list
		[ -n "$j" ] && row "$j" "$f" "$p" "$n" "$c" "$a"
	done
	# every row as the table holds it: job, action, forwarder, nodes
	fw alloc list -P -n
	check_eq "$what: alloc list shows each row" \
		"$(echo "$rows" | tr ';' '\n' | awk 'NF { print $1 "|" $6 "|" $2 }' | sort)" \
		"$(printf '%s\n' "$out" | cut -d'|' -f1-3 | sort)" ||
		diag "$err"
	prolog 601 'c[5-6]'
	r=$(file_rec 601)
	check_eq "$what: prolog exit 0" 0 "$rc"
	check_eq "$what: job 601 isolated (the ledger loaded)" isolate \
		"$(printf '%s' "$r" | jq -r .action)" ||
		diag "$(cat "$d/hook.err")" "$r"
	got=$(printf '%s' "$r" | jq -r '.forwarders_after | join(" ")')
	for f in $busy; do
		case " $got " in
		*" $f "*) fail "$what: job 601 got $f, held by another job" ;;
		*) pass "$what: job 601 did not get $f ($got)" ;;
		esac
	done
	q "DELETE FROM allocations WHERE job_id = 601"
done <<EOF
one row per forwarder|501 fwd3 0 c[1-2] 2 scale;503 fwd4 1 c[3] 1 isolate|fwd3 fwd4
the same forwarder twice for one job|501 fwd3 0 c[1-2] 2 scale;501 fwd3 0 c[1-2] 2 scale;503 fwd4 1 c[3] 1 isolate|fwd3 fwd4
a job on two forwarders, one repeated|501 fwd3 0 c[1] 1 scale;501 fwd5 0 c[2] 1 scale;501 fwd3 0 c[1] 1 scale|fwd3 fwd5
a forwarder the topology no longer has|502 gone9 1 c[3] 1 isolate;503 fwd4 1 c[4] 1 isolate|fwd4
a row without its node list|503 fwd4 1 - 0 isolate;504 fwd5 1 c[4] 1 isolate|fwd4 fwd5
EOF

# ---- a decision's rows: one INSERT, each row as the decision says ---------
# A bandwidth-bound job scaled out gets several forwarders: all its rows
# go in one statement (the general log counts the INSERTs the prolog
# sent), and each row holds the forwarder and the nodes the record gives.
# expand_nodes LIST: the names of a one-prefix ranged list ("c[1-2,5]"),
# one a line.
expand_nodes() {
	case $1 in
	*'['*) ;;
	*) echo "$1" && return ;;
	esac
	pre=${1%%\[*} body=${1#*\[}
	body=${body%]}
	for part in $(echo "$body" | tr ',' ' '); do
		case $part in
		*-*) seq -f "$pre%g" "${part%-*}" "${part#*-}" ;;
		*) echo "$pre$part" ;;
		esac
	done
}
q "DELETE FROM allocations"
: >"$d/audit.jsonl"
q "SET GLOBAL log_output = 'TABLE'"
q "TRUNCATE mysql.general_log"
q "SET GLOBAL general_log = 1"
prolog 701 'c[1-4]' bwapp scale 4
q "SET GLOBAL general_log = 0"
r=$(file_rec 701)
check_eq "scaled out: prolog exit 0" 0 "$rc"
n=$(printf '%s' "$r" | jq -r '.forwarders_after | length')
check_match "scaled out: more than one forwarder" '^([2-9]|[1-9][0-9]+)$' "$n" ||
	diag "$(cat "$d/hook.err")" "$r"
check_eq "scaled out: one INSERT for its $n rows" 1 \
	"$(q "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Execute'
		AND argument LIKE 'INSERT INTO allocations%'")"
check_eq "scaled out: the rows are the record's forwarders" \
	"$(printf '%s' "$r" | jq -r '.forwarders_after | sort | join(" ")')" \
	"$(q "SELECT GROUP_CONCAT(forwarder ORDER BY forwarder SEPARATOR ' ')
		FROM allocations WHERE job_id = 701")"
check_eq "scaled out: the rows' nodes are the job's 4, once each" \
	"c1 c2 c3 c4" \
	"$(q "SELECT nodes FROM allocations WHERE job_id = 701" |
		while read -r l; do expand_nodes "$l"; done | sort -V | xargs)"
bad=$(q "SELECT forwarder, nodes, node_count FROM allocations WHERE job_id = 701" |
	while read -r f l c; do
		[ "$(expand_nodes "$l" | wc -l)" -eq "$c" ] || echo "$f: $l counted $c"
	done)
check_eq "scaled out: each row's node count is its nodes'" "" "$bad"

tap_done
