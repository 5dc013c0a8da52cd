#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The decision file the controller publishes for a job's node prologs
# holds the rows the job holds, as the node account's node_allocations_for
# returns them (forwarder, nodes, action, address; in the rows' order),
# whether the prolog ran in one process (fwdctl prolog) or in the
# controller service (fwdallocd, through the hook's client).  A decision
# that wrote its rows builds the file from them, without asking the
# database again (the general log shows no read of node_allocations for
# the job); a run that kept the rows it held (the same job on the same
# nodes again) reads them back.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/file.yaml
mc_policy "$P" 's/^    reserve: .*/    reserve: 0/'
printf 'remap:\n  driver: none\n  decision_dir: %s\n' "$d/spool" >>"$P"
mkdir -m 0755 "$d/spool"
mc_init "$P"
# db init with the topology: the forwarders' rows (their addresses) mirror it
"$fwdctl" --policy "$P" db init >/dev/null 2>"$d/init.err"
check_eq "db init with the topology" 0 "$?" || diag "$(cat "$d/init.err")"
q "SET GLOBAL log_output = 'TABLE'"
check_eq "the forwarders' addresses are in the database" 8 \
	"$(q "SELECT COUNT(*) FROM forwarders WHERE address LIKE '10.0.0.%'")"

# prolog HOW JOB NODES COUNT NAME REQUEST: HOW is "one" (fwdctl prolog) or
# "svc" (the service, through the hook's client); sets $rc
prolog() {
	how=$1
	shift
	set -- env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST="$2" SLURM_JOB_NUM_NODES="$3" \
		SLURM_JOB_NAME="$4" SPANK_IO_UPGRADE="$5" \
		SLURM_CONF=/nonexistent/slurm.conf \
		ASAN_OPTIONS=verify_asan_link_order=0 \
		LSAN_OPTIONS="${LSAN_OPTIONS:-}"
	# Through the service, the one-process command is /bin/false: a job
	# the service did not decide fails the exit check.
	if [ "$how" = svc ]; then
		set -- "$@" "$top_builddir/cli/prolog-slurmctld" "$d/svc.sock" \
			5000 /bin/false
	else
		set -- "$@" "$fwdctl" --policy "$P" prolog
	fi
	"$@" >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
# the job's rows in the decision file, and as the view gives them
file_rows() {
	jq -r '.rows[] | "\(.forwarder) \(.nodes) \(.action) \(.address)"' \
		"$d/spool/$1.decision" 2>&1
}
view_rows() {
	q "SELECT CONCAT_WS(' ', forwarder, nodes, action, IFNULL(address, 'null'))
	   FROM node_allocations WHERE job_id = $1 ORDER BY id"
}
# logged CMD...: CMD with the general log on, cleared before
logged() {
	q "TRUNCATE mysql.general_log"
	q "SET GLOBAL general_log = 1"
	"$@"
	q "SET GLOBAL general_log = 0"
}
# reads of node_allocations for job $1 in the general log
reads() {
	q "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Execute'
	   AND argument LIKE '%FROM node_allocations WHERE job_id = $1 %'"
}
# decide HOW JOB NODES COUNT NAME REQUEST ACTION: the job decided with
# ACTION; its file is the view's rows, built without reading them back
decide() {
	what="$1 job $2 ($7)"
	logged prolog "$@"
	check_eq "$what: exit 0" 0 "$rc" || diag "$(cat "$d/hook.err")"
	check_eq "$what: the record's action" "$7" \
		"$(file_rec "$2" | jq -r .action)" || diag "$(file_rec "$2")"
	v=$(view_rows "$2")
	check_match "$what: the job holds rows with the topology's addresses" \
		'^fwd[0-9]+ c[^ ]* [a-z]+ 10\.0\.0\.[0-9]+$' "$v"
	check_eq "$what: the decision file holds the rows the view returns" \
		"$v" "$(file_rows "$2")"
	check_eq "$what: its rows were not read back" 0 "$(reads "$2")"
}

# cases: HOW JOB NODES COUNT NAME REQUEST ACTION (fwd1 serves c[1-4], fwd2
# c[5-8]; bwapp is scaled out to several forwarders)
cases() {
	cat <<EOF
$1 ${2}01 c[1-4] 4 bwapp scale scale
$1 ${2}02 c[5-6] 2 n1app isolate isolate
EOF
}
run_cases() {
	cases "$1" "$2" >"$d/cases"
	while read -r how job nodes count name req action; do
		decide "$how" "$job" "$nodes" "$count" "$name" "$req" "$action"
	done <"$d/cases"
	n=$(view_rows "${2}01" | wc -l)
	check_match "$1: the scaled job holds several rows" '^[2-9]$' "$n"
	# The same job on the same nodes again: the rows it holds come back
	# as they are, read from the database for its file.
	rm -f "$d/spool/${2}02.decision"
	logged prolog "$1" "${2}02" 'c[5-6]' 2 n1app isolate
	check_eq "$1 job ${2}02 again: exit 0" 0 "$rc"
	check_match "$1 job ${2}02 again: returned as held" \
		'job already holds an allocation: returning it' \
		"$(file_rec "${2}02" | jq -c .reasons)"
	check_eq "$1 job ${2}02 again: its rows read back once" 1 \
		"$(reads "${2}02")"
	check_eq "$1 job ${2}02 again: the file holds what the view returns" \
		"$(view_rows "${2}02")" "$(file_rows "${2}02")"
}

run_cases one 7
q "DELETE FROM allocations"

env ASAN_OPTIONS=verify_asan_link_order=0 LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
	"$top_builddir/fwdallocd" --policy "$P" --socket "$d/svc.sock" \
	</dev/null >"$d/fwdallocd.log" 2>&1 &
svc=$!
wait_socket "$d/svc.sock"
check "the service listens" test -S "$d/svc.sock"
run_cases svc 8
kill "$svc" 2>/dev/null
wait "$svc" 2>/dev/null
tap_done
