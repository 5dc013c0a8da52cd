#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The database circuit breaker of the controller prolog: with the private
# MariaDB frozen (SIGSTOP), the first prolog waits out the database
# connect timeout (2 s here; 1 s by default) and falls back; the next ones skip the database
# (database.breaker) and fall back at once, "database skipped: failed Ns
# ago", without waiting (their delays are printed); all exit 0 (fail: open) and keep the job's
# default forwarders.  Without the breaker (breaker: 0s) every prolog pays
# the timeout.  Once the server runs again and the interval is over, the
# next prolog decides as usual.  Prints the launch delays.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
pid=$(cat "$d/mysqld.pid")
# Whatever happens, the server runs again before it is stopped.
trap 'kill -CONT "$pid" 2>/dev/null; db_cleanup' EXIT

fw db init
check_eq "db init" 0 "$rc"

# write_policy FILE BREAKER
write_policy() {
	{
		cat <<EOF2
topology: $(cd "$top_srcdir" && pwd)/tests/fixtures/minicluster/topology.yaml
access:
  mode: opt-in
  fail: open
decision:
  decide_timeout: 10s
EOF2
		sed -n '/^database:/,$p' "$policy" |
			sed -e "s/^  timeout: .*/  timeout: 2s/" |
			grep -v '^  breaker:\|^  connect_timeout:'
		echo "  breaker: $2"
		echo "  connect_timeout: 2s"
		cat <<EOF2
audit:
  file: $d/log/audit.jsonl
  database: true
EOF2
	} >"$1"
}
write_policy "$d/off.yaml" 0s
write_policy "$d/on.yaml" 30s
write_policy "$d/short.yaml" 1s
grep -q '^  timeout: 2s' "$d/on.yaml" || { fail "policy has no database timeout"; tap_done; exit 1; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# prolog POLICY JOB: sets $rc, $ms
prolog() {
	t0=$(now_ms)
	env -i PATH="$PATH" SLURM_JOB_ID="$2" SLURM_JOB_USER=alice \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		"$fwdctl" --policy "$1" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
	ms=$(($(now_ms) - t0))
	diag "prolog job $2 ($(basename "$1")): ${ms} ms, exit $rc: $(cat "$d/hook.err")"
}
file_rec() { grep "\"job_id\":\"$1\"" "$d/log/audit.jsonl" | grep '"event":"prolog"' | tail -1; }
outcome() { file_rec "$1" | jq -r .outcome; }

kill -STOP "$pid"

# Without the breaker: every launch waits out the timeout.
for job in 301 302; do
	prolog "$d/off.yaml" $job
	check_eq "breaker off, job $job: exit 0" 0 "$rc"
	check "breaker off, job $job: waited the timeout (${ms} ms >= 1500)" \
		test "$ms" -ge 1500
	before="${before:+$before }$ms"
done
check_eq "breaker off: no state file" no \
	"$(test -e "$d/log/db-breaker" && echo yes || echo no)"

# With it: the first pays, the next ones do not.
prolog "$d/on.yaml" 311
check_eq "breaker on, first job: exit 0" 0 "$rc"
check "breaker on, first job: waited the timeout (${ms} ms >= 1500)" \
	test "$ms" -ge 1500
check_match "breaker on, first job: falls back on the database" \
	'^fallback: ' "$(outcome 311)"
check "breaker on: state file written" test -s "$d/log/db-breaker"
after=$ms
for job in 312 313 314 315; do
	prolog "$d/on.yaml" $job
	check_eq "breaker on, job $job: exit 0" 0 "$rc"
	check_match "breaker on, job $job: the record says why" \
		'^fallback: database skipped: failed [0-9]+s ago$' "$(outcome $job)"
	check_eq "breaker on, job $job: default mapping" default \
		"$(file_rec $job | jq -r .action)"
	check_eq "breaker on, job $job: its default forwarders" '["fwd1"]' \
		"$(file_rec $job | jq -c .forwarders_after)"
	after="$after $ms"
done

kill -CONT "$pid"
diag "launch delay with the database frozen (ms): breaker off: $before; breaker on: $after"

# The server answers again; once the interval is over the database is
# used again.
sleep 1.2
prolog "$d/short.yaml" 321
check_eq "after the interval: exit 0" 0 "$rc"
check_match "after the interval: decided, no fallback" '^(applied|default)$' \
	"$(outcome 321)"

tap_done
