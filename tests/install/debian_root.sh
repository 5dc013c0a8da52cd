#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The packages as a site's admin meets them (issue 29's "done when"): run
# as root inside a fresh, disposable Debian root that has Slurm, munge
# and MariaDB but no fwdalloc (scripts/release-matrix's install phase
# makes one), with DEBS holding 1/ (this tree's fwdalloc and
# slurm-spank-fwdalloc .debs) and 2/ (the next version: the upgrade).
#
#   FWDALLOC_DISPOSABLE_ROOT=1 tests/install/debian_root.sh DEBS
#
# It follows README "Installing on a cluster" step by step as root, with
# SlurmUser=slurmadm (not `slurm`) and a site that already has its own
# PrologFlags and PrologSlurmctld: apt installs the packages (fwdctl
# setup follows SlurmUser), the admin writes the topology and the policy,
# creates the database and its accounts, runs `fwdctl db init` as root,
# merges the slurm.conf lines, starts munged, mariadbd, slurmctld, two
# slurmd and fwdallocd as their units would, and submits jobs with and
# without --io-upgrade.  Then the wrong steps of the issue, each with its
# clear error: a controller password file at 0640 (the job falls back and
# sees it, metrics count it, the audit table gets it), a reserve that
# leaves no upgrade (policy check names it, the job is refused naming
# it), a broken policy at the epilog (the job's forwarders are released
# all the same), a node without the plugin (the controller says it never
# reported), a topology change (db init retires what left), and
# access.mode off (sbatch says --io-upgrade is ignored).  Then apt
# upgrades to DEBS/2 (the admin's edits stay, the new default beside
# them as .dpkg-dist, --version says the new one) and `apt purge` leaves
# nothing but the database.
#
# Every daemon here is this root's own (its /run, its /var/lib/mysql);
# Slurm listens on FWDALLOC_INSTALL_PORT_BASE..+2 (default 24650).  It
# changes the root it runs in for good: it refuses to run unless
# FWDALLOC_DISPOSABLE_ROOT=1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/tap.sh" ]; then
	. "$here/tap.sh"
else
	. "$here/../integration/tap.sh"
fi

[ "${FWDALLOC_DISPOSABLE_ROOT:-0}" = 1 ] ||
	skip_all "changes the system it runs on: only in a disposable root" \
		"(FWDALLOC_DISPOSABLE_ROOT=1, scripts/release-matrix)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
debs=${1:-}
[ -n "$debs" ] && ls "$debs"/1/fwdalloc_*.deb "$debs"/2/fwdalloc_*.deb >/dev/null 2>&1 ||
	{ echo "Bail out! usage: $0 DEBS (DEBS/1/*.deb, DEBS/2/*.deb)"; exit 1; }
debs=$(cd "$debs" && pwd)
port=${FWDALLOC_INSTALL_PORT_BASE:-24650}
su=slurmadm
export DEBIAN_FRONTEND=noninteractive
T=/root/install/work
rm -rf "$T" && mkdir -p "$T"

# ---- helpers --------------------------------------------------------------
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}
stop_pid() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 0
	case $pid in '' | *[!0-9]*) return 0 ;; esac
	kill -TERM "$pid" 2>/dev/null || return 0
	wait_for 15 sh -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null
	return 0
}
stop_all() {
	local n
	for n in c1 c2; do stop_pid /run/slurm/slurmd-$n.pid; done
	stop_pid /run/slurm/slurmctld.pid
	stop_pid /run/fwdalloc/fwdallocd.pid
	stop_pid /run/mysqld/mysqld.pid
	stop_pid /run/munge/munged.pid
}
trap stop_all EXIT
sql() { mariadb -N -B -e "$1" 2>&1; }
# job_state ID: COMPLETED, FAILED, ... from scontrol (the job stays
# MinJobAge seconds after it ends).
job_state() {
	scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}
job_done() {
	case $(job_state "$1") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) return 0 ;; esac
	return 1
}
# submit NAME SBATCH-ARGS...: a 2-node job that writes what fwdalloc told
# it to $T/NAME.env; sets $job, waits for its end and its epilog.  Its
# Slurm job name is bwapp (the application of the imported history)
# unless SBATCH-ARGS say another.
submit() {
	local name=$1 out
	shift
	out=$(cd "$T" && sbatch --parsable -N 2 -J bwapp -o "$T/$name.out" \
		-e "$T/$name.err" "$@" --wrap "env | grep '^FWDALLOC_' | sort >$T/$name.env
srun -N 2 --ntasks-per-node=1 sh -c 'echo \$SLURMD_NODENAME \${FWDALLOC_ACTION:-} \${FWDALLOC_FORWARDERS:-}' | sort >$T/$name.nodes" \
		2>"$T/$name.sbatch.err")
	job=${out%%;*}
	case $job in '' | *[!0-9]*)
		diag "sbatch $*: $out $(cat "$T/$name.sbatch.err")"; job=0; return 1 ;;
	esac
	wait_for 90 job_done "$job" || diag "job $job ($name) not done in 90 s: $(job_state "$job")"
	# The epilog's record (EpilogSlurmctld runs as the job completes).
	[ "${no_epilog:-0}" = 1 ] ||
		wait_for 30 epilog_seen "$job" || diag "job $job: no epilog record in 30 s"
}
epilog_seen() { [ -n "$(rec "$1" epilog .event)" ]; }
# rec JOB EVENT FILTER: jq FILTER on the job's last record of EVENT in the
# audit file.
rec() {
	grep "\"job_id\":\"$1\"" /var/log/fwdalloc/audit.jsonl |
		jq -r "select(.event == \"$2\") | $3" 2>/dev/null | tail -n 1
}
# mapped JOB: "node forwarder" per node of the job's prolog record.
mapped() {
	grep "\"job_id\":\"$1\"" /var/log/fwdalloc/audit.jsonl |
		jq -c 'select(.event == "prolog")' | tail -n 1 |
		jq -r '.mapping[] | "\(.nodes) \(.forwarder)"' |
		while read -r nodes fwd; do
			for n in $(scontrol show hostnames "$nodes"); do echo "$n $fwd"; done
		done | sort
}
fallbacks() { sed -n 's/^fwdalloc_fallbacks_total //p'; }
envof() { sed -n "s/^$2=//p" "$T/$1.env" 2>/dev/null; }

# ---- the site before fwdalloc: Slurm with SlurmUser=slurmadm -------------
useradd --system --user-group --home-dir /var/lib/slurmadm --shell /usr/sbin/nologin $su ||
	{ echo "Bail out! useradd $su failed"; exit 1; }
mkdir -p /var/spool/slurmctld /var/log/slurm /run/slurm /etc/slurm
chown $su: /var/spool/slurmctld /var/log/slurm /run/slurm
ver=$(slurmctld -V | sed -n 's/^[^0-9]*\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $ver
ver=$((10#$1 * 100 + 10#$2))
none_plugins=
[ "$ver" -ge 2311 ] || none_plugins="TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none"
[ "$ver" -lt 2405 ] || echo "CgroupPlugin=disabled" >/etc/slurm/cgroup.conf
# The site's own controller prolog, kept and chaining fwdalloc's as the
# README says.
cat >/usr/local/sbin/site-prolog-slurmctld <<'EOF'
#!/bin/sh
echo "$SLURM_JOB_ID" >>/var/log/slurm/site-prolog.log
exec /usr/libexec/fwdalloc/prolog-slurmctld
EOF
chmod 755 /usr/local/sbin/site-prolog-slurmctld
cat >/etc/slurm/slurm.conf <<EOF
ClusterName=site
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmUser=$su
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd-%n
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd-%n.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
ProctrackType=proctrack/linuxproc
SelectType=select/cons_tres
$none_plugins
ReturnToService=2
MinJobAge=300
KillWait=5
MailProg=/bin/true
PrologFlags=Serial
PrologSlurmctld=/usr/local/sbin/site-prolog-slurmctld
NodeName=c[1-2] NodeHostname=localhost CPUs=1 RealMemory=100 Port=$((port + 1))-$((port + 2)) State=UNKNOWN
PartitionName=debug Nodes=c[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF

# ---- README step 1: the packages ------------------------------------------
v1=$(dpkg-deb -f "$(ls "$debs"/1/fwdalloc_*.deb)" Version)
v2=$(dpkg-deb -f "$(ls "$debs"/2/fwdalloc_*.deb)" Version)
apt-get install -y "$debs"/1/fwdalloc_*.deb "$debs"/1/slurm-spank-fwdalloc_*.deb \
	>"$T/apt1.log" 2>&1
check_eq "apt install of both packages: exit 0" 0 "$?" || diag "$(tail -n 30 "$T/apt1.log")"
check_eq "fwdalloc is installed at $v1" "install ok installed $v1" \
	"$(dpkg-query -W -f '${Status} ${Version}' fwdalloc 2>&1)"
check_eq "fwdctl --version says the package's version" "$v1" \
	"$(fwdctl --version 2>&1 | grep -Eo '[0-9]+\.[0-9]+\.[0-9][^ ]*' | head -n 1)"
check_eq "/var/log/fwdalloc: $su's, 0750" "$su $su 750" \
	"$(stat -c '%U %G %a' /var/log/fwdalloc 2>&1)"
check_eq "/var/lib/fwdalloc: root's, 0700" "root root 700" \
	"$(stat -c '%U %G %a' /var/lib/fwdalloc 2>&1)"
check_match "tmpfiles.d override names $su" \
	"^d +/var/log/fwdalloc +0750 +$su +$su" "$(grep -v '^#' /etc/tmpfiles.d/fwdalloc.conf 2>&1)"
check_eq "fwdallocd's drop-in: User=$su" "User=$su" \
	"$(grep '^User=' /etc/systemd/system/fwdallocd.service.d/slurm-user.conf 2>&1)"
check_eq "no unit, tmpfiles line or logrotate file names 'slurm' as a user" "" \
	"$(grep -lwE '(User|Group)=slurm|su slurm|create [0-9]+ slurm' /etc/logrotate.d/fwdalloc \
		/etc/systemd/system/*.d/*.conf /etc/tmpfiles.d/fwdalloc.conf 2>/dev/null)"
check_eq "the plugin's line is in plugstack.conf.d" 1 \
	"$(grep -c '^optional .*fwdalloc.so policy=/etc/fwdalloc/fwdalloc.yaml' \
		/etc/slurm/plugstack.conf.d/fwdalloc.conf 2>&1)"
check "the examples are under /usr/share/doc/fwdalloc/examples" \
	test -f /usr/share/doc/fwdalloc/examples/topology-taihulight.yaml
check_match "/etc/fwdalloc/fwdalloc.yaml is short: what a site sets" '^[1-5]?[0-9]$' \
	"$(wc -l </etc/fwdalloc/fwdalloc.yaml)"
check_match "the commented reference of every key is an example" 'decision\.caps|caps:' \
	"$(cat /usr/share/doc/fwdalloc/examples/fwdalloc.yaml 2>&1)"
check_eq "no example is a conffile" "" \
	"$(dpkg-query -W -f '${Conffiles}\n' fwdalloc | grep -E 'taihulight|sim-|examples' || true)"

# ---- README step 2: topology and policy ------------------------------------
cat >/usr/local/sbin/site-remap <<EOF
#!/bin/sh
# The site's remap command (remap.exec.command).
mkdir -p /var/lib/site-remap
echo "\$FWD_ACTION \$FWD_JOB_ID \$FWD_NODE \$FWD_FORWARDERS" >>/var/lib/site-remap/log
EOF
chmod 755 /usr/local/sbin/site-remap
cat >/etc/fwdalloc/topology.yaml <<'EOF'
# The site's machine: 2 compute nodes, 1 service forwarder, 4 backups.
forwarders:
  - {name: fwd1, address: 10.0.0.1, bandwidth: 2.5GB/s, group: g0, role: service}
  - {name: fwd2, address: 10.0.0.2, bandwidth: 2.5GB/s, group: g0, role: backup}
  - {name: fwd3, address: 10.0.0.3, bandwidth: 2.5GB/s, group: g0, role: backup}
  - {name: fwd4, address: 10.0.0.4, bandwidth: 2.5GB/s, group: g0, role: backup}
  - {name: fwd5, address: 10.0.0.5, bandwidth: 2.5GB/s, group: g0, role: backup}
compute_nodes: c[1-2]
mapping:
  - {nodes: "c[1-2]", forwarder: fwd1}
EOF
policy() {
	cat <<EOF
# The site's policy.
topology: topology.yaml
access:
  mode: opt-in
decision:
  scale:
    min_volume: 1GiB
    min_io_nodes: 1
  caps:
    max_forwarders_per_job: 2
    max_pool_share: 1.0
    reserve: $1
learn:
  enabled: true
  pool_share: 100%
database:
  socket: /run/mysqld/mysqld.sock
  password_file: /etc/fwdalloc/db.password
  node_password_file: /etc/fwdalloc/node.password
  timeout: 2s
remap:
  driver: exec
  decision_dir: /var/spool/fwdalloc-decisions
  exec:
    command: [/usr/local/sbin/site-remap]
EOF
}
# The decisions' directory the controller shares with the nodes (here
# one host): SlurmUser's, readable by all.
install -d -m 0755 -o $su -g $su /var/spool/fwdalloc-decisions
policy 4 >/etc/fwdalloc/fwdalloc.yaml
fwdctl policy check /etc/fwdalloc/fwdalloc.yaml >"$T/pc.out" 2>&1
check_match "reserve 4 of 4 backups: policy check names decision.caps.reserve" \
	'decision\.caps\.reserve' "$(cat "$T/pc.out")"
policy 0 >/etc/fwdalloc/fwdalloc.yaml
fwdctl policy check /etc/fwdalloc/fwdalloc.yaml >"$T/pc.out" 2>&1
check_eq "the site's policy: policy check exit 0" 0 "$?" || diag "$(cat "$T/pc.out")"
check_eq "the site's policy: no warning" "" "$(grep -i warn "$T/pc.out")"
fwdctl topology check /etc/fwdalloc/topology.yaml >"$T/tc.out" 2>&1
check_eq "topology check: exit 0" 0 "$?" || diag "$(cat "$T/tc.out")"

# ---- README step 3: the database -------------------------------------------
mkdir -p /run/mysqld && chown mysql: /run/mysqld
[ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql >"$T/db-install.log" 2>&1
(setsid mariadbd --user=mysql --skip-networking --socket=/run/mysqld/mysqld.sock \
	--pid-file=/run/mysqld/mysqld.pid --log-error=/var/log/mysql-error.log \
	</dev/null >/dev/null 2>&1 &)
check "mariadbd answers" wait_for 60 mariadb-admin --connect-timeout=2 ping
sql "CREATE DATABASE fwdalloc;
CREATE USER 'fwdalloc'@'localhost' IDENTIFIED BY 'ctl-secret';
GRANT ALL ON fwdalloc.* TO 'fwdalloc'@'localhost' WITH GRANT OPTION;
CREATE USER 'fwdalloc_node'@'localhost' IDENTIFIED BY 'node-secret';" >"$T/sql.out"
check_eq "the database and its two accounts (db/SCHEMA.md)" "" "$(cat "$T/sql.out")"
install -m 0600 -o $su -g $su /dev/null /etc/fwdalloc/db.password
echo ctl-secret >/etc/fwdalloc/db.password
install -m 0600 -o root -g root /dev/null /etc/fwdalloc/node.password
echo node-secret >/etc/fwdalloc/node.password
fwdctl db init >"$T/init0.out" 2>&1
rc=$?
check "db init without --node-host: not 0 (the node account's grant fails)" \
	test "$rc" -ne 0
check_match "db init without --node-host: says why" "node|grant" "$(cat "$T/init0.out")"
fwdctl db init --node-host localhost >"$T/init.out" 2>&1
check_eq "root runs db init with $su's 0600 password file: exit 0" 0 "$?" ||
	diag "$(cat "$T/init.out")"
check_eq "the forwarders are in the database" 5 \
	"$(sql 'SELECT COUNT(*) FROM fwdalloc.forwarders')"
fwdctl db status >"$T/status.out" 2>&1
check_eq "root runs db status: exit 0" 0 "$?" || diag "$(cat "$T/status.out")"
runuser -u $su -- fwdctl db status >"$T/status-su.out" 2>&1
check_eq "$su runs db status: exit 0" 0 "$?" || diag "$(cat "$T/status-su.out")"

# ---- README step 4: slurm.conf, the daemons --------------------------------
# Merge, not append: PrologFlags gets Alloc beside the site's Serial, the
# site's PrologSlurmctld stays (it calls fwdalloc's), the rest is added.
while IFS= read -r line; do
	case $line in
	'#'* | '') ;;
	PrologFlags=*) sed -i 's/^PrologFlags=\(.*\)/PrologFlags=Alloc,\1/' /etc/slurm/slurm.conf ;;
	PrologSlurmctld=*) ;;
	*) grep -qx "$line" /etc/slurm/slurm.conf || echo "$line" >>/etc/slurm/slurm.conf ;;
	esac
done </etc/fwdalloc/slurm.conf.fwdalloc
check_eq "merged: one PrologFlags, Alloc and the site's" "PrologFlags=Alloc,Serial" \
	"$(grep '^PrologFlags' /etc/slurm/slurm.conf)"
check_eq "merged: EpilogSlurmctld is fwdalloc's" \
	"EpilogSlurmctld=/usr/libexec/fwdalloc/epilog-slurmctld" \
	"$(grep '^EpilogSlurmctld' /etc/slurm/slurm.conf)"

mkdir -p /run/munge && chown munge: /run/munge
[ -s /etc/munge/munge.key ] || mungekey -c -k /etc/munge/munge.key
chown munge: /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
runuser -u munge -- munged --pid-file=/run/munge/munged.pid >"$T/munged.out" 2>&1
check "munged runs" wait_for 10 test -S /run/munge/munge.socket.2
# fwdallocd as its unit runs it: User= from the drop-in, RuntimeDirectory.
unit_user=$(sed -n 's/^User=//p' /etc/systemd/system/fwdallocd.service.d/slurm-user.conf)
install -d -m 0750 -o "$unit_user" -g "$unit_user" /run/fwdalloc
(setsid runuser -u "$unit_user" -- /usr/sbin/fwdallocd </dev/null \
	>>/var/log/slurm/fwdallocd.out 2>&1 & echo $! >/run/fwdalloc/fwdallocd.pid)
check "fwdallocd (User=$unit_user) listens" wait_for 10 sh -c 'ls /run/fwdalloc/*.sock'
slurmctld >"$T/slurmctld.out" 2>&1
check "slurmctld answers" wait_for 30 timeout 5 scontrol ping
for n in c1 c2; do slurmd -N $n >"$T/slurmd-$n.out" 2>&1; done
nodes_idle() { [ "$(sinfo -h -N -o '%T' | grep -c '^idle')" -eq 2 ]; }
check "both nodes idle" wait_for 60 nodes_idle ||
	diag "$(sinfo -N 2>&1)" "$(tail -n 5 /var/log/slurm/slurmd-c1.log 2>&1)"
check_eq "sbatch offers --io-upgrade (the plugin from plugstack.conf.d)" 1 \
	"$(sbatch --help 2>&1 | grep -c -- '--io-upgrade')"

# The application's history, as `fwdctl history run` keeps it from
# finished jobs: bandwidth-bound on 2 nodes, S = 2 > N_f = 1.
cat >"$T/history.json" <<'EOF'
[{"user": "root", "name": "bwapp", "nodes": 2,
  "profile": {"io_volume_bytes": 107374182400, "io_nodes": 2,
   "node_bandwidth_bps": 2.5e9, "peak_bandwidth_bps": 5e9, "iops": 200,
   "mdops": 10, "io_mode": "N-N", "runs": 5}}]
EOF
fwdctl profile import "$T/history.json" >"$T/import.out" 2>&1
check_eq "root imports the history: exit 0" 0 "$?" || diag "$(cat "$T/import.out")"

# ---- jobs --------------------------------------------------------------------
submit plain -J plainapp
j_plain=$job
check_eq "a job without --io-upgrade: COMPLETED" COMPLETED "$(job_state "$j_plain")"
check_eq "without --io-upgrade: FWDALLOC_ACTION=default" default "$(envof plain FWDALLOC_ACTION)"
check_eq "without --io-upgrade: audited as default" default "$(rec "$j_plain" prolog .outcome)"
check_eq "the site's own PrologSlurmctld ran for it" 1 \
	"$(grep -cx "$j_plain" /var/log/slurm/site-prolog.log 2>&1)"

submit up --io-upgrade
j_up=$job
check_eq "an --io-upgrade job: COMPLETED" COMPLETED "$(job_state "$j_up")"
check_match "--io-upgrade: FWDALLOC_ACTION says the upgrade" '^(scale|isolate)$' "$(envof up FWDALLOC_ACTION)"
check_eq "srun in a bare --io-upgrade job runs a task on each node" "c1 c2" \
	"$(awk '{ print $1 }' "$T/up.nodes" | tr '\n' ' ' | sed 's/ $//')" ||
	diag "$(cat "$T/up.err")"
check_eq "--io-upgrade: each node's FWDALLOC_FORWARDERS, as the record maps them" \
	"$(mapped "$j_up")" "$(awk '{ print $1, $3 }' "$T/up.nodes")"
check_match "--io-upgrade: one node on a backup forwarder" ' fwd[2-5]$' \
	"$(awk '{ print $1, $3 }' "$T/up.nodes")"
check_eq "--io-upgrade: audited as applied" applied "$(rec "$j_up" prolog .outcome)" ||
	diag "$(grep "\"job_id\":\"$j_up\"" /var/log/fwdalloc/audit.jsonl)"
check_eq "the audit file is $su's" "$su" "$(stat -c %U /var/log/fwdalloc/audit.jsonl 2>&1)"

submit shadow --io-upgrade=shadow
j_sh=$job
check_eq "--io-upgrade=shadow: audited as shadow" shadow "$(rec "$j_sh" prolog .outcome)"
check_match "--io-upgrade=shadow: the record says what it would do" 'shadow mode: would (scale|isolate)' \
	"$(rec "$j_sh" prolog '.reasons | join("; ")')"
check_eq "--io-upgrade=shadow: each node says shadow and names its default forwarder" \
	"c1 shadow fwd1
c2 shadow fwd1" "$(cat "$T/shadow.nodes")"
check_eq "the site's remap command applied on both nodes" 2 \
	"$(grep -c "^apply $j_up " /var/lib/site-remap/log 2>&1)"
check_eq "and reverted on both" 2 "$(grep -c "^revert $j_up " /var/lib/site-remap/log 2>&1)"
check_match "the epilog record: released" '^released' "$(rec "$j_up" epilog .outcome)"
fwdctl audit --db --job "$j_up" --json >"$T/adb.json" 2>"$T/adb.err"
check_eq "root runs audit --db: exit 0" 0 "$?" || diag "$(cat "$T/adb.err")"
check_eq "audit --db: the prolog record says applied" applied \
	"$(jq -r '[.[] | select(.event == "prolog")][0].outcome' "$T/adb.json" 2>&1)"
fwdctl alloc list --json >"$T/alloc.json" 2>"$T/alloc.err"
check_eq "root runs alloc list: exit 0" 0 "$?" || diag "$(cat "$T/alloc.err")"
check_eq "nothing is held after the jobs" 0 \
	"$(jq '[.[] | select(.released_at == null)] | length' "$T/alloc.json" 2>&1)"
fwdctl metrics >"$T/m0" 2>"$T/m0.err"
check_eq "root runs metrics: exit 0" 0 "$?" || diag "$(cat "$T/m0.err")"
f0=$(fallbacks <"$T/m0")
check_match "metrics: a fallback count" '^[0-9]+$' "$f0"

# ---- the wrong steps, with fwdallocd stopped (as after a crash) ------------
# The hooks then run fwdctl themselves, which reads the files anew for
# each job (the service keeps what it loaded at its start).
stop_pid /run/fwdalloc/fwdallocd.pid
check_eq "fwdallocd stopped" gone "$(kill -0 "$(cat /run/fwdalloc/fwdallocd.pid)" 2>/dev/null && echo running || echo gone)"

# A reserve that keeps every backup: the job is refused, and the audit
# names the cap.
cp /etc/fwdalloc/fwdalloc.yaml "$T/good.yaml"
policy 4 >/etc/fwdalloc/fwdalloc.yaml
submit reserve4 --io-upgrade
j_r4=$job
check_eq "reserve 4 of 4: the job runs" COMPLETED "$(job_state "$j_r4")"
check_eq "reserve 4 of 4: the job sees FWDALLOC_ACTION=refused" refused "$(envof reserve4 FWDALLOC_ACTION)"
check_match "reserve 4 of 4: the audit's reason names decision.caps.reserve" \
	'refused by decision\.caps\.reserve 4 \(4 idle healthy forwarders, 4 kept\)' \
	"$(rec "$j_r4" prolog '.reasons | join("; ")')"
cp "$T/good.yaml" /etc/fwdalloc/fwdalloc.yaml

# ---- wrong step: the controller's password file at 0640 ---------------------
chmod 0640 /etc/fwdalloc/db.password
fwdctl db status >"$T/st640.out" 2>&1
check_eq "0640 password file: db status exit 3" 3 "$?"
check_match "0640 password file: the error names the file and the fix" \
	'/etc/fwdalloc/db.password.*(0640|chmod)' "$(cat "$T/st640.out")"
submit bad640 --io-upgrade
j640=$job
check_eq "0640: the job still runs" COMPLETED "$(job_state "$j640")"
check_eq "0640: the job sees FWDALLOC_ACTION=fallback" fallback "$(envof bad640 FWDALLOC_ACTION)"
check_match "0640: the audit file's record is a fallback naming the file" \
	'^fallback: .*db.password' "$(rec "$j640" prolog .outcome)"
chmod 0600 /etc/fwdalloc/db.password
fwdctl metrics --textfile /var/lib/prometheus-textfile >"$T/tf.out" 2>&1
check_eq "metrics --textfile into a missing directory: exit 1" 1 "$?"
mkdir -p /var/lib/prometheus-textfile
fwdctl metrics --textfile /var/lib/prometheus-textfile >"$T/tf.out" 2>&1
check_eq "root runs metrics --textfile: exit 0" 0 "$?" || diag "$(cat "$T/tf.out")"
check_eq "metrics count the 0640 fallback" $((f0 + 1)) \
	"$(fallbacks </var/lib/prometheus-textfile/fwdalloc.prom)"
fwdctl audit --db --job "$j640" --json >"$T/a640.json" 2>&1
check_match "audit --db has the 0640 fallback too" '^fallback: .*db.password' \
	"$(jq -r '[.[] | select(.event == "prolog")][0].outcome' "$T/a640.json" 2>&1)"

# ---- wrong step: a broken policy while a job runs ---------------------------
(cd "$T" && sbatch --parsable -N 2 -J bwapp -o "$T/broken.out" --io-upgrade \
	--wrap "env | grep '^FWDALLOC_' | sort >$T/broken.env; sleep 4") >"$T/broken.id" 2>&1
j_br=$(cut -d';' -f1 "$T/broken.id")
running() { [ "$(job_state "$j_br")" = RUNNING ] && [ -s "$T/broken.env" ]; }
wait_for 60 running || diag "job $j_br did not start: $(job_state "$j_br")"
check_match "the job to break: upgraded" '^(scale|isolate)$' "$(envof broken FWDALLOC_ACTION)"
sed -i 's/^    reserve: 0$/    reserve: many/' /etc/fwdalloc/fwdalloc.yaml
wait_for 60 job_done "$j_br"
wait_for 30 epilog_seen "$j_br"
check_eq "broken policy: the epilog's record is an epilog record" epilog \
	"$(grep "\"job_id\":\"$j_br\"" /var/log/fwdalloc/audit.jsonl | tail -n 1 | jq -r .event 2>&1)"
check_match "broken policy: the epilog record names the parse error" \
	'fwdalloc.yaml:[0-9]+:[0-9]+' "$(grep "\"job_id\":\"$j_br\"" /var/log/fwdalloc/audit.jsonl | tail -n 1)"
cp "$T/good.yaml" /etc/fwdalloc/fwdalloc.yaml
fwdctl alloc show "$j_br" --json >"$T/alloc2.json" 2>&1
check_match "broken policy: the job held forwarders" '^[1-9]' \
	"$(jq '.allocations | length' "$T/alloc2.json" 2>&1)"
check_eq "broken policy: every one released all the same" 0 \
	"$(jq '[.allocations[] | select(.released_at == null)] | length' "$T/alloc2.json" 2>&1)" ||
	diag "$(grep "\"job_id\":\"$j_br\"" /var/log/fwdalloc/audit.jsonl | tail -n 1)"

# The service again, as its unit would restart it.
(setsid runuser -u "$unit_user" -- /usr/sbin/fwdallocd </dev/null \
	>>/var/log/slurm/fwdallocd.out 2>&1 & echo $! >/run/fwdalloc/fwdallocd.pid)
check "fwdallocd listens again" wait_for 10 sh -c 'ls /run/fwdalloc/*.sock'

# ---- wrong step: a node without the plugin ------------------------------------
# c2's slurmd reads a plugstack.conf without fwdalloc's line (a node the
# plugin package never reached): the controller learns that c2 never
# reported.
restart_slurmd() {
	stop_pid /run/slurm/slurmd-"$1".pid
	slurmd -N "$1" "${@:2}" >>"$T/slurmd-$1.out" 2>&1
	wait_for 60 nodes_idle
}
: >/etc/slurm/plugstack-none.conf
sed 's|^PlugStackConfig=.*|PlugStackConfig=/etc/slurm/plugstack-none.conf|' \
	/etc/slurm/slurm.conf >/etc/slurm/slurm-noplugin.conf
check_eq "c2's slurm.conf names an empty plugstack.conf" 1 \
	"$(grep -c '^PlugStackConfig=/etc/slurm/plugstack-none.conf$' /etc/slurm/slurm-noplugin.conf)"
restart_slurmd c2 -f /etc/slurm/slurm-noplugin.conf || diag "c2 not idle again: $(sinfo -N 2>&1)"
submit silent --io-upgrade
j_si=$job
check_eq "plugin not loaded on c2: the job runs" COMPLETED "$(job_state "$j_si")"
fwdctl alloc show "$j_si" >"$T/silent.show" 2>&1
check_match "plugin not loaded on c2: alloc show names it" \
	'no report: c2 \(fwdalloc plugin not loaded there\?\)' "$(cat "$T/silent.show")"
check_match "plugin not loaded on c2: the epilog record says so" \
	'1 never reported' "$(rec "$j_si" epilog .outcome)"
fwdctl metrics >"$T/m-silent" 2>&1
check_match "plugin not loaded on c2: metrics count it" \
	'^fwdalloc_node_outcomes_total\{outcome="silent"\} [1-9]' "$(cat "$T/m-silent")"
restart_slurmd c2 || diag "c2 not idle again: $(sinfo -N 2>&1)"

# ---- access.mode off: --io-upgrade is said to be ignored, at submission ------
sed -i 's/^  mode: opt-in$/  mode: off/' /etc/fwdalloc/fwdalloc.yaml
no_epilog=1 submit off --io-upgrade
check_eq "access.mode off: the job runs" COMPLETED "$(job_state "$job")"
check_eq "access.mode off: sbatch says --io-upgrade is ignored, and why" \
	"sbatch: fwdalloc: --io-upgrade=auto ignored: fwdalloc is off on this cluster (access.mode: off in /etc/fwdalloc/fwdalloc.yaml); the job keeps the default I/O forwarding" \
	"$(grep 'fwdalloc' "$T/off.sbatch.err")"
cp "$T/good.yaml" /etc/fwdalloc/fwdalloc.yaml

# ---- upgrade -------------------------------------------------------------------
policy 0 >"$T/edited.yaml"
echo "# the admin's own note" >>"$T/edited.yaml"
cp "$T/edited.yaml" /etc/fwdalloc/fwdalloc.yaml
cp /etc/fwdalloc/topology.yaml "$T/topology.yaml"
echo "# edited weekly" >>/etc/logrotate.d/fwdalloc
cp /etc/logrotate.d/fwdalloc "$T/logrotate"
apt-get install -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	"$debs"/2/fwdalloc_*.deb "$debs"/2/slurm-spank-fwdalloc_*.deb >"$T/apt2.log" 2>&1
check_eq "apt upgrade to $v2: exit 0" 0 "$?" || diag "$(tail -n 30 "$T/apt2.log")"
check_eq "fwdalloc is at $v2" "$v2" "$(dpkg-query -W -f '${Version}' fwdalloc)"
check_eq "fwdctl --version says $v2" "$v2" \
	"$(fwdctl --version 2>&1 | grep -Eo '[0-9]+\.[0-9]+\.[0-9][^ ]*' | head -n 1)"
check_eq "upgrade: the admin's policy kept" "" "$(diff "$T/edited.yaml" /etc/fwdalloc/fwdalloc.yaml)"
check_match "upgrade: the new default policy beside it" "line is new in the upgrade" \
	"$(cat /etc/fwdalloc/fwdalloc.yaml.dpkg-dist 2>&1)"
check_eq "upgrade: the topology kept" "" "$(diff "$T/topology.yaml" /etc/fwdalloc/topology.yaml)"
check_eq "upgrade: the edited logrotate file kept" "" "$(diff "$T/logrotate" /etc/logrotate.d/fwdalloc)"
check_eq "upgrade: the password files kept" "$su 600 root 600" \
	"$(stat -c '%U %a' /etc/fwdalloc/db.password /etc/fwdalloc/node.password | tr '\n' ' ' | sed 's/ $//')"
check_eq "upgrade: /var/log/fwdalloc still $su's" "$su" "$(stat -c %U /var/log/fwdalloc)"
check_eq "upgrade: the audit trail kept" yes \
	"$(grep -q "\"job_id\":\"$j_up\"" /var/log/fwdalloc/audit.jsonl && echo yes)"
submit after --io-upgrade
check_match "after the upgrade: an --io-upgrade job is upgraded" '^(scale|isolate)$' "$(envof after FWDALLOC_ACTION)"

# ---- wrong step: a topology change ----------------------------------------------
# fwd5 leaves the machine: db init retires it (kept for history).
grep -v 'name: fwd5,' /etc/fwdalloc/topology.yaml >"$T/topology-4.yaml"
cp "$T/topology-4.yaml" /etc/fwdalloc/topology.yaml
fwdctl db init --node-host localhost >"$T/init2.out" 2>&1
check_eq "db init after a topology change: exit 0" 0 "$?" || diag "$(cat "$T/init2.out")"
check_match "db init after a topology change: says what it retired" \
	'retired 1 forwarder' "$(cat "$T/init2.out")"
check_eq "the forwarder that left is retired, kept" "fwd5" \
	"$(sql 'SELECT GROUP_CONCAT(name) FROM fwdalloc.forwarders WHERE retired_at IS NOT NULL')"

# ---- purge -----------------------------------------------------------------------
stop_pid /run/fwdalloc/fwdallocd.pid
rows=$(sql 'SELECT COUNT(*) FROM fwdalloc.audit')
apt-get purge -y fwdalloc slurm-spank-fwdalloc >"$T/purge.log" 2>&1
check_eq "apt purge: exit 0" 0 "$?" || diag "$(tail -n 30 "$T/purge.log")"
for p in /etc/fwdalloc /var/log/fwdalloc /var/lib/fwdalloc /etc/tmpfiles.d/fwdalloc.conf \
	/etc/systemd/system/fwdallocd.service.d /etc/slurm/plugstack.conf.d/fwdalloc.conf \
	/etc/logrotate.d/fwdalloc /usr/bin/fwdctl; do
	check_eq "purge: $p gone" gone "$([ -e "$p" ] && echo present || echo gone)"
done
check_eq "purge: dpkg knows nothing of either" "" \
	"$(dpkg-query -W -f '${Package} ${Status}\n' fwdalloc slurm-spank-fwdalloc 2>/dev/null |
		grep -v 'not-installed' || true)"
check_match "purge: the database stays, with its audit rows" '^[1-9][0-9]*$' "$rows"
check_eq "purge: the audit table still holds them" "$rows" \
	"$(sql 'SELECT COUNT(*) FROM fwdalloc.audit')"

tap_done
