# SPDX-License-Identifier: GPL-2.0-or-later
# Shared set-up for the integration tests that run a private Slurm cluster
# with its MariaDB (scripts/minicluster), removed on exit.
#   mc_require          skip_all unless root, slurmctld, mariadbd and the
#                       built plugin (and jq) are there
#   mc_start NAME BASE  make $T (/tmp/fwd-NAME.XXXXXX, the working
#                       directory, where batch output lands), start the
#                       cluster in $T/mc on ports BASE..BASE+8, eval its
#                       export lines; sets $M, $mc; bails out on failure.
#                       Calls mc_cleanup_extra (if defined) on exit.
#   sql SQL             a query as the database's root, rows without header
#   mc_log_count N RE   the number of lines of the nodes' slurmd logs
#                       matching RE (grep -E), once it reaches N or after
#                       10 s: a node prolog's line can reach its log after
#                       the job is already running (Slurm calls a job
#                       running while its node prologs still run)
#   mc_file_count N RE FILE...  the same for FILEs (e.g. $M/remap.log)
#   mc_settle JOB...    wait (bounded) until each job's controller
#                       epilog has recorded its release in the audit
#                       file: the installed EpilogSlurmctld only queues
#                       the release and returns, so a job leaves squeue
#                       before it is released (controller/release_queue.h)
mc_require() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (slurmd, job prologs)"
	command -v slurmctld >/dev/null || skip_all "slurmctld not installed"
	command -v mariadbd >/dev/null || skip_all "mariadbd not installed"
	command -v jq >/dev/null || skip_all "jq not installed"
	[ -f "$top_builddir/spank/.libs/fwdalloc.so" ] ||
		skip_all "plugin not built"
}

mc_cleanup() {
	command -v mc_cleanup_extra >/dev/null && mc_cleanup_extra
	"$mc" stop "$T/mc" >/dev/null 2>&1
	[ "${FWDALLOC_KEEP_TMP:-0}" = 1 ] || rm -rf "$T"
}

mc_start() {
	local out rc
	T=$(mktemp -d "/tmp/fwd-$1.XXXXXX")
	chmod 755 "$T"
	mc="$top_srcdir/scripts/minicluster"
	export FWDALLOC_BUILDDIR=$top_builddir
	trap mc_cleanup EXIT
	cd "$T" || exit 1
	export FWDALLOC_MC_PORT_BASE=$2
	out=$("$mc" start "$T/mc" 2>&1)
	rc=$?
	check_eq "minicluster with database starts" 0 "$rc"
	[ "$rc" -eq 0 ] || { diag "$out"; tap_done; exit 1; }
	eval "$(printf '%s\n' "$out" | grep '^export ')"
	M=$T/mc
}

sql() { "$top_srcdir/scripts/testdb" sql "$M/db" -N fwdalloc -e "$1"; }

mc_settle() {
	local j i
	for j in "$@"; do
		for i in $(seq 1 300); do
			grep -q "\"event\":\"epilog\",\"job_id\":\"$j\"" \
				"$M/audit.jsonl" 2>/dev/null && continue 2
			sleep 0.1
		done
		diag "job $j: no epilog record in $M/audit.jsonl after 30 s"
		return 1
	done
	return 0
}

mc_log_count() {
	mc_file_count "$1" "$2" "$M"/log/slurmd-c*.log
}

# mc_file_count WANT ERE FILE...: the lines matching ERE, once there are
# WANT of them or after 60 s (the nodes' prologs and epilogs write them
# as they end: on a loaded machine that can take many seconds)
mc_file_count() {
	local want=$1 re=$2 n end=$((SECONDS + 60))
	shift 2
	while :; do
		n=$(cat "$@" 2>/dev/null | grep -cE -- "$re")
		[ "$n" -ge "$want" ] || [ "$SECONDS" -ge "$end" ] && break
		sleep 0.1
	done
	echo "$n"
}
