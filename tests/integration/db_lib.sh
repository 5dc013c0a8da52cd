# SPDX-License-Identifier: GPL-2.0-or-later
# Shared set-up for the db_*.sh integration tests: a private MariaDB from
# scripts/testdb in a temporary directory, removed on exit.
#   db_start            start it (skip_all when it cannot run) and export
#                       FWDALLOC_TESTDB_* ; sets $d, $policy, $fwdctl
#   q SQL               run SQL as the server's root, print rows (no header)
#   fw ARGS...          run fwdctl with the test policy; sets $out, $err, $rc
#   mc_policy FILE [SED]
#                       write FILE: the mini-cluster's topology and decision
#                       settings (tests/fixtures/minicluster; SED edits
#                       them), history keyed by user, name and node bucket,
#                       this server, the audit in $d/audit.jsonl and the
#                       audit table; sets $fix (the fixtures' directory)
#   mc_init FILE        db init, then import $fix/history.json with FILE
#   wait_socket SOCK    wait up to 10 s for SOCK to exist (a service
#                       starting); false when it does not

fwdctl=$top_builddir/fwdctl
testdb=$top_srcdir/scripts/testdb

db_cleanup() {
	if [ -n "${d:-}" ]; then
		"$testdb" stop "$d" >/dev/null 2>&1 || true
		rm -rf "$d"
	fi
}

db_start() {
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
		skip_all "mariadbd not installed (Debian package mariadb-server)"
	[ -x "$fwdctl" ] || skip_all "fwdctl not built"
	d=$(mktemp -d /tmp/fwd-dbtest.XXXXXX)
	trap db_cleanup EXIT
	if ! env_lines=$("$testdb" start "$d" 2>"$d/start.err"); then
		cat "$d/start.err" >&2
		skip_all "cannot start a private MariaDB"
	fi
	eval "$env_lines"
	policy=$FWDALLOC_TESTDB_POLICY
}

q() {
	"$testdb" sql "$d" -N fwdalloc -e "$1"
}

fw() {
	out=$("$fwdctl" --policy "$policy" "$@" 2>"$d/fw.err")
	rc=$?
	err=$(cat "$d/fw.err")
}

mc_policy() {
	fix=$(cd "$top_srcdir/tests/fixtures/minicluster" && pwd)
	{
		echo "topology: $fix/topology.yaml"
		sed -n '/^access:/,/^history:/p' "$fix/policy.yaml.in" |
			sed '$d' | sed "${2:-}"
		echo "history:"
		echo "  key: [user, name, node_bucket]"
		sed -n '/^database:/,$p' "$policy"
		cat <<EOF2
audit:
  file: $d/audit.jsonl
  database: true
EOF2
	} >"$1"
}

mc_init() {
	fw db init
	check_eq "db init" 0 "$rc"
	"$fwdctl" --policy "$1" profile import "$fix/history.json" >/dev/null 2>&1
	check_eq "history imported" 0 "$?"
}

wait_socket() {
	for _ in $(seq 1 100); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
