#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The record is the truth: a controller prolog whose worker committed the
# allocation but was killed at decide_timeout before it could report it
# (the server answered COMMIT late: tests/tools/slow_commit.so) leaves no
# allocation held, and the audit file, the audit table and the ledger say
# the same thing: fallback, action default, the job's default forwarders
# before and after.  (The shim slows the first commit only, the one of the
# worker that decides, unless given a delay for each commit in turn.)
# Under access.fail: closed the job is then stopped (exit 1) with nothing
# held.  The same when the release's own commit answers past its bound
# (the file gets the record the table has), and when the controller
# service's commit answers past the hook's budget (the hook's release and
# fallback come after the service's file and record).  A prolog that is
# not slowed decides as usual (the control).
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
shim=$top_builddir/tests/tools/.libs/slow_commit.so
[ -f "$shim" ] || skip_all "tests/tools/slow_commit.so not built"
db_start

fw db init
check_eq "db init" 0 "$rc"

# write_policy FILE FAIL
write_policy() {
	# No circuit breaker: each prolog goes to the database (the
	# breaker has its own test, ctl_breaker.sh).  Database calls time
	# out after 2 s.
	{
		sed -e '/^  timeout:/d' -e '/^  connect_timeout:/d' \
			-e 's/^database:$/database:\n  breaker: 0s\n  timeout: 2s\n  connect_timeout: 2s/' \
			"$policy"
		cat <<EOF2
topology: $(cd "$top_srcdir" && pwd)/tests/fixtures/minicluster/topology.yaml
access:
  mode: opt-in
  fail: $2
decision:
  decide_timeout: 1s
audit:
  file: $d/audit.jsonl
  database: true
EOF2
	} >"$1"
}
write_policy "$d/open.yaml" open
write_policy "$d/closed.yaml" closed

# prolog POLICY JOB DELAY: sets $rc
prolog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$2" SLURM_JOB_USER=alice \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		ASAN_OPTIONS=verify_asan_link_order=0 \
		LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
		LD_PRELOAD="$shim" FWD_TEST_COMMIT_DELAY="$3" \
		FWD_TEST_COMMIT_ONCE="$d/slow-commit.$2" \
		"$fwdctl" --policy "$1" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
	diag "prolog job $2 (commit delay ${3:-0}s): exit $rc: $(cat "$d/hook.err")"
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
db_rec() { q "SELECT record FROM audit WHERE job_id = $1 AND JSON_VALUE(record, '\$.event') = 'prolog' ORDER BY id DESC LIMIT 1" | sed 's/\\\\/\\/g'; }
field() { printf '%s\n' "$1" | jq -c "$2"; }
held() { q "SELECT COALESCE(GROUP_CONCAT(DISTINCT forwarder ORDER BY forwarder), '') FROM allocations WHERE job_id = $1 AND released_at IS NULL AND action <> 'shadow'"; }

# agree JOB LABEL: the file record, the table record and the ledger agree.
agree() {
	f=$(file_rec "$1")
	t=$(db_rec "$1")
	for k in .action .outcome .forwarders_before .forwarders_after; do
		check_eq "$2: file and table agree on $k" \
			"$(field "$f" "$k")" "$(field "$t" "$k")"
	done
	# The ledger holds the forwarders the record says the job runs
	# on, or nothing when it fell back.
	case $(field "$f" .outcome) in
	'"fallback: '*) want="" ;;
	*) want=$(field "$f" '.forwarders_after | join(",")' | tr -d '"') ;;
	esac
	check_eq "$2: the ledger holds what the record says" "$want" \
		"$(held "$1")"
}

# Control: no delay, the decision is applied.
prolog "$d/open.yaml" 201 ""
check_eq "control: exit 0" 0 "$rc"
check_match "control: decided, no fallback" '^"(applied|default)"$' \
	"$(field "$(file_rec 201)" .outcome)"
agree 201 "control"
env -i PATH="$PATH" SLURM_JOB_ID=201 "$fwdctl" --policy "$d/open.yaml" epilog \
	>/dev/null 2>&1

# A controller whose clock ran a day ahead decided job 205 (its rows say
# so); the epilog on a right clock must not store a negative holding
# time or an end before the start.
prolog "$d/open.yaml" 205 ""
ahead=$(($(date +%s) + 86400))
q "UPDATE allocations SET acquired_at = $ahead WHERE job_id = 205"
q "UPDATE jobs SET start_at = $ahead WHERE job_id = 205"
env -i PATH="$PATH" SLURM_JOB_ID=205 "$fwdctl" --policy "$d/open.yaml" epilog \
	>/dev/null 2>&1
check_eq "clock ahead: released" "" "$(held 205)"
check_eq "clock ahead: no negative holding time" 0 \
	"$(q 'SELECT COUNT(*) FROM allocations WHERE job_id = 205 AND released_at < acquired_at')"
check_eq "clock ahead: the job does not end before it starts" 0 \
	"$(q 'SELECT COUNT(*) FROM jobs WHERE job_id = 205 AND end_at < start_at')"

# The commit answers 3 s late, decide_timeout is 1 s.
prolog "$d/open.yaml" 202 3
check_eq "late commit, fail open: exit 0" 0 "$rc"
r=$(file_rec 202)
check_match "late commit: the file record is a fallback" '^"fallback: ' \
	"$(field "$r" .outcome)"
check_eq "late commit: action default" '"default"' "$(field "$r" .action)"
check_eq "late commit: the default forwarders before" '["fwd1"]' \
	"$(field "$r" .forwarders_before)"
check_eq "late commit: the default forwarders after" '["fwd1"]' \
	"$(field "$r" .forwarders_after)"
agree 202 "late commit"

# Same under fail: closed: Slurm requeues the job, which holds nothing.
prolog "$d/closed.yaml" 203 3
check_eq "late commit, fail closed: exit 1 (job requeued)" 1 "$rc"
agree 203 "late commit, fail closed"
check_eq "late commit, fail closed: nothing held" "" "$(held 203)"

# The release's own commit answers late too (3 s, past its
# database.timeout of 2 s): the release and its record are in the table,
# but the worker was killed before it could say so.  The file must carry
# the record the table has, not one that says the release failed.
prolog "$d/open.yaml" 206 "1.5 3"
check_eq "late release commit: exit 0" 0 "$rc"
check_eq "late release commit: the release's commit was the slowed one" yes \
	"$([ -e "$d/slow-commit.206.2" ] && echo yes || echo no)"
r=$(file_rec 206)
check_match "late release commit: the file record says the allocation was released" \
	'^"fallback: controller prolog timed out after 1 s; the allocation it committed late \([0-9]+ allocation row\(s\)\) was released"$' \
	"$(field "$r" .outcome)"
agree 206 "late release commit"
check_eq "late release commit: nothing held" "" "$(held 206)"
check_eq "late release commit: one prolog record in the file" 1 \
	"$(grep "\"job_id\":\"206\"" "$d/audit.jsonl" | grep -c '"event":"prolog"')"
check_match "late release commit: the hook says the record may be missing from the table" \
	'prolog 206: the release timed out after 2 s while committing' "$(cat "$d/hook.err")"

# The controller service commits job 207's decision, then hears back from
# the server 2 s later, past the hook's budget (1.5 s): the hook gives up
# (fwdctl prolog --abandoned) and releases the allocation while the
# service, once its commit returns, still writes the decision file and
# its record.  The release and its record come after those (the audit
# order lock), and the fallback decision file after the release: the
# file, the table, the ledger and what the nodes read all say fallback.
{
	cat "$d/open.yaml"
	printf 'remap:\n  driver: none\n  decision_dir: %s\n' "$d/spool"
} >"$d/svc.yaml"
mkdir -m 0755 "$d/spool"
: >"$d/svc-commit" # no commit is slowed until the hook runs
env ASAN_OPTIONS=verify_asan_link_order=0 LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
	LD_PRELOAD="$shim" FWD_TEST_COMMIT_DELAY=2 \
	FWD_TEST_COMMIT_ONCE="$d/svc-commit" \
	"$top_builddir/fwdallocd" --policy "$d/svc.yaml" --socket "$d/svc.sock" \
	</dev/null >"$d/fwdallocd.log" 2>&1 &
svc=$!
wait_socket "$d/svc.sock"
check "the service listens" test -S "$d/svc.sock"
rm -f "$d/svc-commit"
env -i PATH="$PATH" SLURM_JOB_ID=207 SLURM_JOB_USER=alice \
	SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
	SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
	SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
	ASAN_OPTIONS=verify_asan_link_order=0 LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
	"$top_builddir/cli/prolog-slurmctld" "$d/svc.sock" 1500 \
	"$fwdctl" --policy "$d/svc.yaml" prolog >"$d/hook.out" 2>"$d/hook.err"
rc=$?
diag "prolog job 207 (the service's commit answers after 2 s): exit $rc: $(cat "$d/hook.err")"
# The service is done with the job once its line is in the audit file.
for _ in $(seq 1 100); do
	[ "$(grep -c '"job_id":"207"' "$d/audit.jsonl")" -ge 2 ] && break
	sleep 0.1
done
check_eq "service's late commit: exit 0" 0 "$rc"
check "service's late commit: the service committed it (the slowed commit)" \
	test -e "$d/svc-commit"
check_match "service's late commit: the record says the allocation was released" \
	'^"fallback: .*was released"$' "$(field "$(file_rec 207)" .outcome)"
agree 207 "service's late commit"
check_eq "service's late commit: nothing held" "" "$(held 207)"
# What the nodes read: no forwarder to apply, at most the fallback row.
check_eq "service's late commit: the decision file names no forwarder" \
	'[{"forwarder":null,"action":"fallback"}]' \
	"$(jq -c '[.rows[] | {forwarder, action}]' "$d/spool/207.decision" 2>/dev/null || echo missing)"
kill "$svc" 2>/dev/null
wait "$svc" 2>/dev/null

# The database stops answering after the late commit: the release cannot
# be done, and the record says so instead of claiming the job holds
# nothing.
prolog_bg() {
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=alice \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		ASAN_OPTIONS=verify_asan_link_order=0 \
		LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
		LD_PRELOAD="$shim" FWD_TEST_COMMIT_DELAY=3 \
		FWD_TEST_COMMIT_ONCE="$d/slow-commit.$1" \
		"$fwdctl" --policy "$d/open.yaml" prolog >"$d/hook.out" 2>"$d/hook.err"
}
pid=$(cat "$d/mysqld.pid")
trap 'kill -CONT "$pid" 2>/dev/null; db_cleanup' EXIT
prolog_bg 204 &
bg=$!
# Frozen once the late commit is on the server (the shim marks it),
# however long a loaded machine takes to get there.
for _ in $(seq 1 500); do
	[ -e "$d/slow-commit.204" ] && break
	sleep 0.02
done
kill -STOP "$pid"
wait "$bg"
rc=$?
kill -CONT "$pid"
diag "prolog job 204 (commit delay 3s, database frozen after the commit): exit $rc: $(cat "$d/hook.err")"
check_eq "release impossible: exit 0 (fail: open)" 0 "$rc"
r=$(file_rec 204)
check_match "release impossible: the record says the allocation may be held" \
	'^"fallback: controller prolog timed out after 1 s; its allocation may be committed and could not be released: .+"$' \
	"$(field "$r" .outcome)"
check_eq "release impossible: the ledger does hold it" fwd1 "$(held 204)"
# Bounded at 2 s either way: by the release's own limit
# (database.timeout) or, when the frozen server holds the handshake, by
# database.connect_timeout, also 2 s here; which one fires first is a race.
check_match "release impossible: the release waited at most 2 s" \
	'could not be released: (timed out after 2 s|database socket [^ ]+: no answer within 2s \(database\.connect_timeout\))"$' \
	"$(field "$r" .outcome)"

tap_done
