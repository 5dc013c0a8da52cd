#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The store on a cluster: a 3-node MariaDB Galera cluster on loopback
# (three mariadbd with wsrep, rsync state transfer, everything under a
# temporary directory, stopped on exit), `fwdctl db init` against it, and
# controller prologs (`fwdctl prolog` with a Slurm-like environment) whose
# policies list the three servers in different orders, so that decisions
# on different servers conflict and are certified against each other.
#   wave A  18 concurrent prologs, no fault
#   wave B  18 concurrent prologs, one server killed -9 in the middle
#   wave C  12 prologs after the kill, every policy listing the dead server
#           first
# Checks: every prolog exits 0 and writes its audit record; no forwarder
# is held privately by two jobs; every job has its allocation rows or a
# fallback record (nothing lost, and no rows behind a fallback record);
# the survivors agree; after the kill, prologs still decide through the
# remaining servers.  Prints the prolog times and the certification
# conflicts (wsrep_local_cert_failures + wsrep_local_bf_aborts).
#
# The members declare a lost one gone after 3 to 4 s (evs.suspect_timeout,
# evs.inactive_timeout), below the policy's database.timeout (6 s), as
# db/SCHEMA.md asks: a COMMIT in flight then gets its real answer.  (With
# 1 s, a member starved of CPU or disk for a second on a loaded machine was
# declared gone during the fault-free wave.)  When a wave falls back, the
# test prints the members' view changes.
#
# Ports: FWDALLOC_GALERA_PORT_BASE (default FWDALLOC_MC_PORT_BASE + 600,
# else 17800) + 0..2 SQL, +10..12 group communication, +20..22 state
# transfer, +30..32 incremental state transfer; 127.0.0.1 only.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$top_srcdir/tests/integration/tap.sh"

fwdctl=$top_builddir/fwdctl
provider=/usr/lib/galera/libgalera_smm.so
[ -x "$fwdctl" ] || skip_all "fwdctl not built"
MARIADBD=$(command -v mariadbd || ls /usr/sbin/mariadbd 2>/dev/null) ||
	skip_all "mariadbd not installed (Debian package mariadb-server)"
[ -n "$MARIADBD" ] || skip_all "mariadbd not installed"
INSTALL_DB=$(command -v mariadb-install-db) ||
	skip_all "mariadb-install-db not installed"
[ -f "$provider" ] || skip_all "$provider missing (Debian package galera-4)"
command -v rsync >/dev/null || skip_all "rsync not installed (state transfer)"
command -v wsrep_sst_rsync >/dev/null ||
	skip_all "wsrep_sst_rsync missing (Debian package mariadb-server)"
command -v mariadb >/dev/null || skip_all "mariadb client not installed"

if [ -n "${FWDALLOC_GALERA_PORT_BASE:-}" ]; then
	base=$FWDALLOC_GALERA_PORT_BASE
elif [ -n "${FWDALLOC_MC_PORT_BASE:-}" ]; then
	base=$((FWDALLOC_MC_PORT_BASE + 600))
else
	base=17800
fi
# As root the servers run as `mysql` (the Debian package's account): the
# rsync daemon of a state transfer started by a root server would drop to
# `nobody`, which cannot write the joiner's datadir.
user_opt=
if [ "$(id -u)" -eq 0 ]; then
	id mysql >/dev/null 2>&1 || skip_all "no mysql account to run the servers"
	user_opt=--user=mysql
fi

T=$(mktemp -d /tmp/fwd-galera.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
	local i p
	for i in 1 2 3; do
		p=${pids[$i]:-}
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null
	done
	for i in 1 2 3; do
		p=${pids[$i]:-}
		[ -n "$p" ] && wait "$p" 2>/dev/null
	done
	[ "${FWDALLOC_KEEP_TMP:-0}" = 1 ] || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

now() { date +%s.%N; }
t_start=$(now)
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

sqlport() { echo $((base + $1 - 1)); }
gport() { echo $((base + 9 + $1)); }
q() { # q NODE SQL: as the server's root, over its unix socket, reading
	# what the cluster committed before (wsrep_sync_wait)
	mariadb --no-defaults --socket="$T/n$1/mysql.sock" -uroot -N -B \
		--connect-timeout=3 --init-command='SET SESSION wsrep_sync_wait = 1' \
		-e "$2" 2>/dev/null
}
status() { q "$1" "SHOW STATUS LIKE '$2'" | awk '{print $2}'; }

gcomm="gcomm://127.0.0.1:$(gport 1),127.0.0.1:$(gport 2),127.0.0.1:$(gport 3)"
start_node() { # start_node N [--wsrep-new-cluster]
	local n=$1 d=$T/n$1
	# shellcheck disable=SC2086
	"$MARIADBD" --no-defaults --datadir="$d/data" --tmpdir="$d/tmp" \
		--socket="$d/mysql.sock" --port="$(sqlport "$n")" \
		--bind-address=127.0.0.1 --skip-name-resolve \
		--pid-file="$d/mysqld.pid" --log-error="$d/err.log" $user_opt \
		--innodb-buffer-pool-size=32M --innodb-flush-log-at-trx-commit=2 \
		--innodb-autoinc-lock-mode=2 --binlog-format=ROW \
		--default-storage-engine=InnoDB --max-connections=200 \
		--wsrep-on=ON --wsrep-provider="$provider" \
		--wsrep-cluster-name=fwdalloc-test \
		--wsrep-cluster-address="$gcomm" \
		--wsrep-node-name="n$n" --wsrep-node-address=127.0.0.1 \
		--wsrep-sst-method=rsync \
		--wsrep-sst-receive-address="127.0.0.1:$((base + 19 + n))" \
		--wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(gport "$n");ist.recv_addr=127.0.0.1:$((base + 29 + n));gcache.size=32M;evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT4S;evs.install_timeout=PT4S" \
		"${@:2}" </dev/null >"$d/stdout" 2>&1 &
	pids[$n]=$!
}
# wait_synced N SIZE SECONDS: bounded wait until node N is Synced in a
# cluster of SIZE.
wait_synced() {
	local deadline
	deadline=$(awk -v t="$(now)" -v s="$3" 'BEGIN { printf "%.3f", t + s }')
	while awk -v t="$(now)" -v d="$deadline" 'BEGIN { exit !(t < d) }'; do
		if [ "$(status "$1" wsrep_local_state_comment)" = Synced ] &&
			[ "$(status "$1" wsrep_cluster_size)" = "$2" ]; then
			return 0
		fi
		kill -0 "${pids[$1]}" 2>/dev/null || break
		sleep 0.2
	done
	diag "node $1 not synced in a cluster of $2 within $3s:"
	tail -n 15 "$T/n$1/err.log" | sed 's/^/#   /'
	return 1
}

# ---- the cluster ----
for n in 1 2 3; do mkdir -p "$T/n$n/tmp" "$T/n$n/data"; done
[ -n "$user_opt" ] && chown -R mysql: "$T/n1" "$T/n2" "$T/n3"
# shellcheck disable=SC2086
"$INSTALL_DB" --no-defaults --datadir="$T/n1/data" --tmpdir="$T/n1/tmp" \
	--auth-root-authentication-method=normal --skip-test-db $user_opt \
	>"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; skip_all "mariadb-install-db failed"; }
mkdir -p "$T/n2/data" "$T/n3/data"
# The bounds are for a loaded 2-core machine (the release matrix runs two
# roots beside the host's suite): a joiner's rsync state transfer took
# more than 40 s there.  A healthy run waits only as long as the join.
start_node 1 --wsrep-new-cluster
wait_synced 1 1 90 || skip_all "the first Galera node did not start"
start_node 2
wait_synced 2 2 120 || { fail "node 2 joined"; tap_done; exit 1; }
start_node 3
wait_synced 3 3 120 || { fail "node 3 joined"; tap_done; exit 1; }
pass "3-node Galera cluster on loopback up in $(elapsed "$t_start")s"
check_eq "cluster size seen by node 1" 3 "$(status 1 wsrep_cluster_size)"

# Accounts (DDL: replicated to every node).
pw=$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$pw" >"$T/db.pass")
npw=$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$npw" >"$T/node.pass")
q 1 "DROP USER IF EXISTS ''@'localhost';
CREATE DATABASE fwdalloc;
CREATE USER 'fwdalloc'@'%' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON fwdalloc.* TO 'fwdalloc'@'%' WITH GRANT OPTION;
CREATE USER 'fwdalloc_node'@'%' IDENTIFIED BY '$npw';" ||
	fail "creating the database and accounts"

# One policy per first server: rotations of the three endpoints.
sed -e "s|@DIR@|$T|g" "$top_srcdir/tests/fixtures/minicluster/policy.yaml.in" |
	sed -e '/^database:/,$d' >"$T/policy.base"
cp "$top_srcdir/tests/fixtures/minicluster/topology.yaml" "$T/fwdalloc-topology.yaml"
ep() { echo "127.0.0.1:$(sqlport "$1")"; }
for first in 1 2 3; do
	a=$first b=$((first % 3 + 1)) c=$(((first + 1) % 3 + 1))
	{
		cat "$T/policy.base"
		cat <<EOF
database:
  hosts: [$(ep $a), $(ep $b), $(ep $c)]
  name: fwdalloc
  user: fwdalloc
  password_file: $T/db.pass
  node_user: fwdalloc_node
  node_password_file: $T/node.pass
  timeout: 6s
  lock_timeout: 5s
  # The failover itself is under test: no breaker skipping the cluster
  # after the prolog that met the dead member (ctl_breaker.sh tests it).
  breaker: 0s
audit:
  file: $T/audit.jsonl
  database: true
EOF
	} >"$T/policy$first.yaml"
done
fw() { "$fwdctl" --policy "$T/policy1.yaml" "$@"; }

out=$(fw db init 2>&1)
check_eq "fwdctl db init on the cluster" 0 "$?"
check_eq "db init granted the node account without a warning" "" \
	"$(printf '%s\n' "$out" | grep -i warning)"
check_eq "schema replicated to node 3" 1 \
	"$(q 3 'SELECT COUNT(*) FROM fwdalloc.schema_version WHERE version = 1')"
fw profile import "$top_srcdir/tests/fixtures/minicluster/history.json" \
	>"$T/import.out" 2>&1
check_eq "history imported" 3 "$(q 2 'SELECT COUNT(*) FROM fwdalloc.profiles')"
check_eq "policy check accepts the endpoint list" 0 \
	"$("$fwdctl" policy check "$T/policy2.yaml" >/dev/null 2>&1; echo $?)"

# prolog JOB FIRST: one controller prolog for a disruptive N-1 job (it asks
# for a private forwarder), its policy listing server FIRST first.
# Writes JOB's exit code and duration to $T/res/JOB.
mkdir -p "$T/res"
nodesets=("c[1-2]" "c[3-4]" "c[5-6]" "c[7-8]")
prolog() {
	local j=$1 first=$2 t0 rc
	t0=$(now)
	env -i PATH="$PATH" SLURM_JOB_ID="$j" SLURM_JOB_USER=root \
		SLURM_JOB_NAME=n1app SLURM_JOB_PARTITION=debug \
		SLURM_JOB_ACCOUNT=root SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NODELIST="${nodesets[$((j % 4))]}" \
		SPANK_IO_UPGRADE=auto \
		"$fwdctl" --policy "$T/policy$first.yaml" prolog \
		>"$T/res/$j.out" 2>"$T/res/$j.err"
	rc=$?
	echo "$rc $(elapsed "$t0")" >"$T/res/$j"
}
# epilog JOB FIRST: the job's EpilogSlurmctld (releases its allocation).
epilog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=root \
		SLURM_JOB_NODELIST="${nodesets[$(($1 % 4))]}" \
		"$fwdctl" --policy "$T/policy$2.yaml" epilog \
		>/dev/null 2>"$T/res/$1.epilog.err"
}
conflicts() { # certification failures + brute-force aborts on nodes "$@"
	local n s=0 v
	for n in "$@"; do
		for v in wsrep_local_cert_failures wsrep_local_bf_aborts; do
			s=$((s + $(status "$n" "$v")))
		done
	done
	echo "$s"
}
record() { grep "\"job_id\":\"$1\"" "$T/audit.jsonl" | grep '"event":"prolog"'; }
rows() { q "$1" "SELECT COUNT(*) FROM fwdalloc.allocations WHERE job_id = $2"; }
allrows() { q "$1" "SELECT COUNT(*), IFNULL(SUM(released_at IS NULL), 0) FROM fwdalloc.allocations"; }

# check_wave NAME NODE JOBS...: exit codes, audit records, and every job
# with either rows or a fallback record (read on server NODE).
check_wave() {
	local name=$1 node=$2 j rc bad=0 norec=0 lost=0 ghost=0 fb=0 r n
	shift 2
	wave_fb_records=()
	for j in "$@"; do
		read -r rc _ <"$T/res/$j" || rc=missing
		[ "$rc" = 0 ] || { bad=$((bad + 1)); diag "job $j: exit $rc: $(cat "$T/res/$j.err")"; }
		r=$(record "$j")
		[ "$(printf '%s\n' "$r" | grep -c .)" = 1 ] || {
			norec=$((norec + 1)); diag "job $j: audit records: $r"; }
		n=$(rows "$node" "$j")
		case $r in
		*'"outcome":"fallback'*)
			fb=$((fb + 1))
			wave_fb_records+=("$r")
			[ "$n" = 0 ] || { ghost=$((ghost + 1)); diag "job $j: fallback record but $n rows"; } ;;
		*)
			[ "$n" -gt 0 ] || { lost=$((lost + 1)); diag "job $j: no rows: $r"; } ;;
		esac
	done
	check_eq "$name: every prolog exited 0" 0 "$bad"
	check_eq "$name: every job has exactly one audit record" 0 "$norec"
	check_eq "$name: every decided job has its rows (nothing lost)" 0 "$lost"
	check_eq "$name: no rows behind a fallback record" 0 "$ghost"
	wave_fallbacks=$fb
}
double_private() {
	q "$1" "SELECT COUNT(*) FROM (SELECT forwarder FROM fwdalloc.allocations
		WHERE is_private = 1 AND released_at IS NULL GROUP BY forwarder
		HAVING COUNT(DISTINCT job_id) > 1) x"
}
times() { # min / median / max of the durations of jobs "$@"
	for j in "$@"; do awk '{print $2}' "$T/res/$j"; done | sort -n |
		awk '{ v[NR] = $1 } END { printf "min %.2fs median %.2fs max %.2fs", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

# membership: the wave's first fallback records, and each member's view
# changes and suspicions (its error log).
membership() {
	local n
	printf '%s\n' "${wave_fb_records[@]:0:3}" | sed 's/^/#   /'
	for n in 1 2 3; do
		diag "member $n:"
		grep -E 'suspect|NON_PRIM|non-Primary|partitioned|declaring' \
			"$T/n$n/err.log" | tail -n 8 | sed 's/^/#   /'
	done
}

# The servers are children of this shell too: wait for the wave's only.
wave=()
wait_wave() {
	local p
	for p in "${wave[@]}"; do wait "$p"; done
	wave=()
}

# ---- wave A: 18 concurrent prologs spread over the three servers ----
c0=$(conflicts 1 2 3)
jobsA=()
for k in $(seq 0 17); do
	j=$((100 + k))
	jobsA+=("$j")
	prolog "$j" $((k % 3 + 1)) &
	wave+=($!)
done
wait_wave
check_wave "wave A" 1 "${jobsA[@]}"
check_eq "wave A: no fallback without a fault" 0 "$wave_fallbacks" ||
	membership
check_eq "wave A: no forwarder held privately by two jobs" 0 "$(double_private 2)"
check_eq "wave A: the three servers hold the same rows" \
	"$(allrows 1)" "$(allrows 3)"
cA=$(( $(conflicts 1 2 3) - c0 ))
diag "wave A: prolog times $(times "${jobsA[@]}"); certification conflicts $cA"
isolated=$(q 2 "SELECT COUNT(DISTINCT job_id) FROM fwdalloc.allocations WHERE is_private = 1 AND released_at IS NULL")
check_eq "wave A: the 6 pool forwarders went to 6 jobs privately" 6 "$isolated"
# The epilogs all go through the first member, as with one controller
# whose policy lists the members in the same order as every other
# (db/SCHEMA.md): the release is not retried after a conflict.
for j in "${jobsA[@]}"; do
	epilog "$j" 1 &
	wave+=($!)
done
wait_wave
check_eq "wave A released" 0 \
	"$(q 3 "SELECT COUNT(*) FROM fwdalloc.allocations WHERE released_at IS NULL")"
cat "$T"/res/*.epilog.err | sed 's/^/# epilog: /' | head -n 5

# ---- wave B: 18 concurrent prologs, server 1 killed -9 in the middle ----
c0=$(conflicts 1 2 3)
jobsB=()
for k in $(seq 0 17); do
	j=$((200 + k))
	jobsB+=("$j")
	prolog "$j" $((k % 3 + 1)) &
	wave+=($!)
	if [ "$k" = 8 ]; then
		c1=$(conflicts 1)
		kill -9 "${pids[1]}"
		t_kill=$(now)
	fi
done
wait_wave
wait "${pids[1]}" 2>/dev/null
pids[1]=
check_wave "wave B" 2 "${jobsB[@]}"
diag "wave B: prolog times $(times "${jobsB[@]}"); fallbacks $wave_fallbacks"
check_eq "wave B: no forwarder held privately by two jobs" 0 "$(double_private 2)"
wait_synced 2 2 30 || fail "survivors form a 2-node primary component"
check_eq "wave B: the survivors hold the same rows" \
	"$(allrows 2)" "$(allrows 3)"

# ---- wave C: after the kill, every policy lists the dead server first ----
jobsC=()
for k in $(seq 0 11); do
	j=$((300 + k))
	jobsC+=("$j")
	prolog "$j" 1 &
	wave+=($!)
done
wait_wave
check_wave "wave C" 2 "${jobsC[@]}"
check_eq "wave C: decided through the remaining servers (no fallback)" 0 \
	"$wave_fallbacks"
check_eq "wave C: no forwarder held privately by two jobs" 0 "$(double_private 3)"
diag "wave C: prolog times $(times "${jobsC[@]}") (first endpoint dead)"
cB=$(($(conflicts 2 3) + c1 - c0))
diag "wave B+C: certification conflicts $cB (server 1 counted up to the kill)"
diag "kill at +$(awk -v a="$t_start" -v b="$t_kill" 'BEGIN { printf "%.1f", b - a }')s; whole test $(elapsed "$t_start")s"
tap_done
