#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every example of `fwdctl --help` and of every `fwdctl CMD --help` runs,
# as written, on a site set up from the shipped configuration: etc/ as
# /etc/fwdalloc (the policy's database and audit file pointed at a private
# MariaDB and a scratch directory, nothing else changed), a local Slurm
# cluster (scripts/minicluster) for what asks slurmctld, and the files a
# site has (LWFS traces and server logs, Telegraf, lctl and darshan-parser
# output from tests/fixtures, which reproduce those programs' output).
# Absolute paths of the examples (/etc, /var, /run, /tmp) are taken under
# a scratch root; nothing else of an example is changed.
#
# The site's state before the examples: job 4242 running (alice, wrf on
# c[1-256], --io-upgrade) and job 4711 finished (alice, wrf), both
# through `fwdctl prolog`/`epilog` with the environment slurmctld gives
# PrologSlurmctld; job 1 running in the cluster (its PrologSlurmctld is
# fwdctl with the same policy); alice's wrf profile imported.
#
# For each example: the exit status and the values it prints.  An example
# this test does not know fails (a new example must be added here), and so
# does an example known here that the help no longer prints.  Examples
# that need an RDMA device must say there is none (exit 3).
#
# Timestamps: every date in every example's output (tables and JSON) is
# in the one style, ISO 8601 in UTC: 2026-11-22T02:30:00Z (audit records
# .mmm before the Z); text output never shows a time as epoch seconds
# (JSON carries epoch numbers next to them, as numbers: *_at, ts, start).
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require

S=$top_srcdir
fwdctl=$top_builddir/fwdctl
T=$(mktemp -d /tmp/fwd-help.XXXXXX)
chmod 755 "$T"
R=$T/root W=$T/work B=$T/bin D=$T/db
cleanup() {
	"$S/scripts/minicluster" stop "$T/mc" >/dev/null 2>&1
	"$S/scripts/testdb" stop "$D" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$R/etc/fwdalloc" "$R/var/log/lwfs" "$R/var/log/fwdalloc" \
	"$R/run/fwdalloc" "$R/var/lib/prometheus/node-exporter" "$R/tmp" \
	"$W/traces/job4711" "$B" "$D"

# ---- the site ---------------------------------------------------------------
env_lines=$("$S/scripts/testdb" start "$D" 2>"$T/db.err") || {
	cat "$T/db.err" >&2
	skip_all "cannot start a private MariaDB"
}
eval "$env_lines"
cp "$S/etc/topology.yaml" "$R/etc/fwdalloc/"
# The examples, where the packages put them (DOCDIR/examples).
mkdir -p "$R/usr/share/doc/fwdalloc/examples"
cp "$S/etc/topology-taihulight.yaml" "$S/etc/sim-jobs.csv" \
	"$S/etc/sim-curves.csv" "$R/usr/share/doc/fwdalloc/examples/"
# The shipped policy; only the database and the audit file's place change.
awk -v sock="$FWDALLOC_TESTDB_SOCKET" -v pass="$FWDALLOC_TESTDB_PASSFILE" \
	-v np="$FWDALLOC_TESTDB_NODE_PASSFILE" -v audit="$R/var/log/fwdalloc/audit.jsonl" '
	/^[a-z]/ { db = /^database:/; au = /^audit:/ }
	db && /^  socket:/ { print "  socket: " sock; next }
	db && /^  password_file:/ { print "  password_file: " pass; next }
	db && /^  node_password_file:/ { print "  node_password_file: " np; next }
	au && /^  file:/ { print "  file: " audit; next }
	{ print }' "$S/etc/fwdalloc.yaml" >"$R/etc/fwdalloc/fwdalloc.yaml"
check_eq "the test policy is the shipped one but for 4 lines" 4 \
	"$(diff "$S/etc/fwdalloc.yaml" "$R/etc/fwdalloc/fwdalloc.yaml" | grep -c '^>')"
policy=$R/etc/fwdalloc/fwdalloc.yaml
export FWDALLOC_POLICY=$policy

# fwdctl and the site's other programs on PATH: Telegraf, lctl and
# darshan-parser print what the real ones print (tests/fixtures).
ln -s "$fwdctl" "$B/fwdctl"
printf '#!/bin/sh\n[ "$*" = --once ] || exit 64\nexec cat %s\n' \
	"$S/tests/fixtures/lustre/telegraf-lustre2.lp" >"$B/telegraf"
printf '#!/bin/sh\n[ "$*" = "get_param obdfilter.*.job_stats" ] || exit 64\nexec cat %s\n' \
	"$S/tests/fixtures/lustre/jobstats-2.15.txt" >"$B/lctl"
printf '#!/bin/sh\n[ "$*" = "--total --perf app.darshan" ] && [ -f app.darshan ] || exit 64\nexec cat %s\n' \
	"$S/tests/fixtures/darshan/darshan-total-perf.txt" >"$B/darshan-parser"
chmod +x "$B"/*
export PATH="$B:$PATH"

# The working directory's files the examples name.
cd "$W" || exit 1
cp "$policy" test.yaml
cp "$policy" p.yaml
cp "$policy" new.yaml
# a stricter policy for sim --compare: a job takes at most 25% of the pool
sed 's/^    max_pool_share: .*/    max_pool_share: 25%/' "$policy" >strict.yaml
cp "$R/etc/fwdalloc/topology.yaml" topology.yaml # `topology: topology.yaml`
# a site's week of jobs: the shipped trace's that fit its 1024 nodes
awk -F, '/^#/ || $3 == "nodes" || $3 <= 1024' "$S/etc/sim-jobs.csv" >week.csv
cp "$S/etc/sim-curves.csv" curves.csv
cat >job.json <<'EOF'
{"job_id": "4800", "user": "alice", "account": "climate", "name": "wrf",
 "partition": "batch", "nodes": "c[1-256]", "request": "auto",
 "profile": {"io_volume_bytes": 107374182400, "io_nodes": 256,
   "node_bandwidth_bps": 2.5e8, "peak_bandwidth_bps": 6.4e10, "iops": 200,
   "mdops": 10, "io_mode": "N-N", "runs": 5}}
EOF
cp "$S/tests/fixtures/decide/state.json" "$S/tests/fixtures/decide/health.json" .
: >app.darshan
# LWFS client traces (raw lines as lwfs-fuse writes them, times in UTC):
# trace PROC TIME
trace() {
	for i in 0 1 2 3; do
		printf '[%s] T lwfs-fuse: 6974%d: WRITE (0x200095032d0, size=4096, offset=%d, count=1)  \n' \
			"$2" "$1" $((i * 4096))
	done
}
trace 1 '2016-08-27 10:14:44' >c1.trace
# a forwarder's server log, Beacon's format, from a forwarder of the topology
sed 's/^10\.0\.1\.17 /10.1.0.17 /' "$S/tests/fixtures/monitor/beacon-lwfs.txt" \
	>"$R/var/log/lwfs/server-stats.log"
cat >history.json <<'EOF'
[
 {"user": "alice", "name": "wrf", "nodes": 256,
  "profile": {"io_volume_bytes": 107374182400, "io_nodes": 256,
   "node_bandwidth_bps": 2.5e8, "peak_bandwidth_bps": 6.4e10, "iops": 200,
   "mdops": 10, "io_mode": "N-N", "runs": 5}}
]
EOF

out=$(fwdctl db init 2>&1)
check_eq "db init" 0 "$?" || diag "$out"
# The node account for the hosts of `db init --node-host '10.1.%'`: db
# init grants it, and fails when it does not exist.
"$S/scripts/testdb" sql "$D" -N fwdalloc -e \
	"CREATE USER IF NOT EXISTS 'fwdalloc_node'@'10.1.%' IDENTIFIED BY 'x'"
check_eq "node account for 10.1.%" 0 "$?"
out=$(fwdctl profile import history.json 2>&1)
check_eq "alice's wrf profile imported" "imported user=alice;name=wrf;node_bucket=256
profile import: 1 profiles" "$out"

# hook JOB prolog|epilog: the hook as slurmctld runs it (its environment)
hook() {
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=alice \
		SLURM_JOB_ACCOUNT=climate SLURM_JOB_NAME=wrf \
		SLURM_JOB_PARTITION=batch SLURM_JOB_NUM_NODES=256 \
		SLURM_JOB_NODELIST='c[1-256]' SPANK_IO_UPGRADE=auto \
		"$fwdctl" --policy "$policy" "$2" >"$T/hook.out" 2>&1
}
hook 4711 prolog
check_eq "job 4711: prolog" 0 "$?" || diag "$(cat "$T/hook.out")"
# job 4711's traces on c1 and c2, written while it runs
sleep 1
now=$(date -u '+%Y-%m-%d %H:%M:%S')
trace 1 "$now" >traces/job4711/c1.trace
trace 2 "$now" >traces/job4711/c2.trace
cp traces/job4711/c1.trace traces/job4711/c2.trace "$R/var/log/lwfs/"
sleep 1
hook 4711 epilog
check_eq "job 4711: epilog" 0 "$?" || diag "$(cat "$T/hook.out")"
hook 4242 prolog
check_eq "job 4242: prolog" 0 "$?" || diag "$(cat "$T/hook.out")"
check_eq "job 4242 holds fwd01 and backup forwarders (scale)" "scale" \
	"$("$S/scripts/testdb" sql "$D" -N fwdalloc -e "SELECT DISTINCT action FROM allocations WHERE job_id = 4242 AND released_at IS NULL")"

# The cluster: slurmctld for reconcile; its PrologSlurmctld is fwdctl with
# this policy, so job 1 holds forwarders as a real job.
cat >"$T/prolog" <<EOF
#!/bin/sh
exec "$fwdctl" --policy "$policy" prolog
EOF
cat >"$T/epilog" <<EOF
#!/bin/sh
exec "$fwdctl" --policy "$policy" epilog
EOF
chmod +x "$T/prolog" "$T/epilog"
export FWDALLOC_BUILDDIR=$top_builddir
mc_out=$(cd "$T" && FWDALLOC_MC_PORT_BASE=$((${FWDALLOC_MC_PORT_BASE:-17400} + 120)) \
	FWDALLOC_MC_NO_DB=1 FWDALLOC_MC_PROLOG_SLURMCTLD=$T/prolog \
	FWDALLOC_MC_EPILOG_SLURMCTLD=$T/epilog "$S/scripts/minicluster" start "$T/mc" 2>&1)
check_eq "minicluster starts" 0 "$?" || { diag "$mc_out"; tap_done; exit 1; }
SLURM_CONF=$(printf '%s\n' "$mc_out" | sed -n 's/^export SLURM_CONF=//p')
export SLURM_CONF
job1=$(sbatch --parsable -N2 -w 'c[1-2]' -J sleeper --wrap 'sleep 300' 2>&1)
check_match "a job submitted to the cluster" '^[0-9]+$' "$job1"
for _ in $(seq 1 300); do
	[ "$(squeue -h -j "$job1" -o %T 2>/dev/null)" = RUNNING ] && break
	sleep 0.1
done
check_eq "it runs" RUNNING "$(squeue -h -j "$job1" -o %T 2>/dev/null)"
check_eq "it holds its default forwarder" 1 \
	"$("$S/scripts/testdb" sql "$D" -N fwdalloc -e "SELECT COUNT(*) FROM allocations WHERE job_id = $job1 AND released_at IS NULL")"

# ---- the examples -------------------------------------------------------------
# One per line, continuation lines ('\' or a trailing '&&') joined.
examples() {
	"$fwdctl" "$@" --help | awk '/^Examples?:/ { f = 1; next }
		f && /^$/ { exit }
		f { sub(/^ +/, ""); line = line $0
		    if (line ~ /\\$/) { sub(/ *\\$/, " ", line); next }
		    if (line ~ /&&$/) { line = line " "; next }
		    print line; line = "" }'
}
cmds=$("$fwdctl" --help | awk '/^Commands:/ { f = 1; next }
	f && /^  [a-z]/ { print $1 } f && /^$/ { exit }')
check "fwdctl --help lists commands" test "$(printf '%s\n' "$cmds" | wc -w)" -ge 15
: >"$T/examples"
examples >>"$T/examples" # the global help's own (none today)
for c in $cmds; do
	examples "$c" >>"$T/examples"
done

# ISO 8601 in UTC, seconds (audit records: milliseconds)
style='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3})?Z$'
# times TEXT: every date in TEXT (a table or JSON) and what follows it up
# to a separator must be in the style; in text that is not JSON, no epoch
# seconds (2001-09-09 .. 2033-05-18: ten digits from 1, not a size "N B");
# prints the ones that are not.
times() {
	printf '%s\n' "$1" | grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:]+(\.[0-9]+)?)?[^] ",|).]*' |
		grep -vE "$style"
	case $1 in
	[\[{]*) ;;
	*) printf '%s\n' "$1" | grep -oE '(^|[^0-9a-zA-Z.]|\.\.)1[0-9]{9}( B)?([^0-9a-zA-Z]|$)' |
		grep -vE '[0-9] B' | sed 's/^/epoch: /' ;;
	esac
}
n_times=0
check_times() {
	local bad
	bad=$(times "$2")
	check_eq "$1: every timestamp in the one style" "" "$bad"
	n_times=$((n_times + $(printf '%s\n' "$2" | grep -cE '[0-9]{4}-[0-9]{2}-[0-9]{2}T')))
}

# Helpers on the example's $rc, $out (stdout), $err (stderr).
exits() { check_eq "$ex: exit $1" "$1" "$rc" || diag "stderr: $(tail -3 <<<"$err")"; }
has() { check_match "$ex: prints $1" "$1" "$out"; }
is() { check_eq "$ex: prints" "$1" "$out"; }
jqv() { check_eq "$ex: $1" "$2" "$(printf '%s' "${3:-$out}" | jq -r "$1" 2>&1)"; }
errhas() { check_match "$ex: says $1" "$1" "$err"; }
sql() { "$S/scripts/testdb" sql "$D" -N fwdalloc -e "$1"; }

# verify EX: what EX must do.  1 when this test does not know EX.
verify() {
	case $1 in
	# ---- policy
	'fwdctl policy check /etc/fwdalloc/fwdalloc.yaml')
		exits 0
		has "^$R/etc/fwdalloc/fwdalloc.yaml: valid \(sha256 [0-9a-f]{64}\)$" ;;
	'fwdctl policy show --json | jq .decision.scale')
		exits 0
		check_json "$ex: enabled, min_volume, min_io_nodes, max_metadata_rate" \
			"[true, 21474836480, 32, 300]" \
			'[.enabled, .min_volume, .min_io_nodes, .max_metadata_rate]' "$out" ;;
	'fwdctl --policy test.yaml policy show')
		exits 0
		has '^# source: test\.yaml$'
		has '^topology: '"$W"'/topology\.yaml$'
		has '^    min_volume: 20GiB$' ;;
	'fwdctl policy keys -n | grep ^decision.caps')
		exits 0
		check_eq "$ex: the three caps keys, no header" \
			"decision.caps.max_forwarders_per_job decision.caps.max_pool_share decision.caps.reserve" \
			"$(awk '{ print $1 }' <<<"$out" | paste -sd' ')" ;;
	# ---- topology
	'fwdctl topology check /etc/fwdalloc/topology.yaml')
		exits 0
		has "^$R/etc/fwdalloc/topology.yaml: valid: 1024 compute nodes, 12 forwarders \(4 service, 8 backup\), 4 OSTs" ;;
	'fwdctl --policy /etc/fwdalloc/fwdalloc.yaml topology show')
		exits 0
		has '^fwd05 +10\.1\.0\.15 +2\.5GB/s +rack1 +backup +0$'
		has '^c\[1-256\] +256 +fwd01$' ;;
	"fwdctl topology show --json | jq '.mapping | length'")
		exits 0
		is 4 ;;
	# ---- decide
	'fwdctl decide --policy /etc/fwdalloc/fwdalloc.yaml --topology /etc/fwdalloc/topology.yaml --job job.json')
		exits 0
		# 64 GB/s needed; 4 of the 8 backups (max_pool_share 0.5)
		jqv '"\(.job_id) \(.action) \(.forwarders | join(","))"' \
			"4800 scale fwd01,fwd05,fwd09,fwd06,fwd10" ;;
	'fwdctl --policy p.yaml decide --job job.json --state state.json --health health.json --compact')
		exits 0
		check_eq "$ex: one line" 1 "$(wc -l <<<"$out")"
		# fwd09 held privately by job 901, fwd06 suspect: 3 of the 6 left
		jqv '"\(.job_id) \(.action) \(.forwarders | join(",")) \(.excluded_osts | join(","))"' \
			"4800 scale fwd01,fwd05,fwd10 lustre-OST0002" ;;
	# ---- alloc
	'fwdctl alloc list')
		exits 0
		has '^JOB +ACTION +FORWARDER +HOLD +NODES +NODELIST +SINCE$'
		has "^4242 +scale +fwd01 +shared +52 +c\[1-52\] +[0-9T:-]+Z$"
		check_eq "$ex: job 4242 on five forwarders" 5 "$(grep -c '^4242 ' <<<"$out")"
		has "^$job1 +default +fwd01 +shared +2 +c\[1-2\] "
		check_eq "$ex: no row of the finished job" "" "$(grep '^4711 ' <<<"$out")" ;;
	'fwdctl alloc show 4242 --json')
		exits 0
		jqv '"\(.job_id) \(.allocations[0].action) \(.audit.user) \(.audit.event)"' \
			"4242 scale alice prolog" ;;
	# ---- audit
	'fwdctl audit --job 4242')
		exits 0
		has '^TIME +EVENT +JOB +USER +REQUEST +ACTION +FORWARDERS +OUTCOME$'
		has '^[0-9T:-]+Z +prolog +4242 +alice +auto +scale +fwd01,'
		check_eq "$ex: only job 4242" "" "$(sed 1d <<<"$out" | awk '$3 != 4242')" ;;
	'fwdctl audit --user alice --since 1d --json')
		exits 0
		jqv '[.[] | "\(.job_id):\(.event)"] | join(" ")' \
			"4711:prolog 4711:epilog 4242:prolog" ;;
	'fwdctl audit --db --since -30d -P')
		exits 0
		check_eq "$ex: header and the four records, '|'-separated" \
			"TIME|EVENT|JOB|USER|REQUEST|ACTION|FORWARDERS|OUTCOME 4711|prolog 4711|epilog 4242|prolog $job1|prolog" \
			"$(awk -F'|' 'NR == 1 { printf "%s", $0; next } { printf " %s|%s", $3, $2 }' <<<"$out")" ;;
	# ---- report
	'fwdctl report job 4242')
		exits 0
		has '4242' ;;
	'fwdctl report job 4242 --html job-4242.html')
		exits 0
		check "$ex: writes job-4242.html" test -s job-4242.html ;;
	'fwdctl report machine --since 2026-11-22 --until 2026-11-23 --json')
		exits 0
		jqv '"\(.since) \(.until)"' "$(date -ud 2026-11-22 +%s) $(date -ud 2026-11-23 +%s)" ;;
	# ---- reconcile
	'fwdctl reconcile --dry-run')
		exits 0
		is "would free job 4242
1 allocation(s) to free, 1 kept (job still running)"
		check_eq "$ex: nothing freed (dry run)" 0 \
			"$(sql "SELECT COUNT(*) FROM allocations WHERE job_id = 4242 AND released_at IS NOT NULL")" ;;
	# ---- metrics
	'fwdctl metrics --textfile /var/lib/prometheus/node-exporter')
		exits 0
		is ""
		local prom=$R/var/lib/prometheus/node-exporter
		check_eq "$ex: only fwdalloc.prom left" "fwdalloc.prom" "$(ls "$prom")"
		check_eq "$ex: OpenMetrics, ending in # EOF" "# EOF" "$(tail -1 "$prom/fwdalloc.prom")"
		check_match "$ex: the forwarders held" '^fwdalloc_forwarders\{state="held"\} 5$' \
			"$(cat "$prom/fwdalloc.prom")" ;;
	# ---- setup
	'fwdctl setup --dry-run')
		exits 0
		has '^SlurmUser: [a-z_][a-z0-9_.-]* \(uid [0-9]+, gid [0-9]+\), from slurm.conf$' ;;
	'fwdctl setup --slurm-user slurm --root /tmp/pkgroot')
		exits 0
		has '^SlurmUser: slurm \(uid [0-9]+, gid [0-9]+\)$'
		check_eq "$ex: the log directory is slurm's" "slurm 750" \
			"$(stat -c '%U %a' "$R/tmp/pkgroot/var/log/fwdalloc")"
		check_eq "$ex: the units run as slurm" "User=slurm" \
			"$(grep '^User=' "$R/tmp/pkgroot/etc/systemd/system/fwdalloc-history.service.d/slurm-user.conf")" ;;
	# ---- db
	"fwdctl db init --node-host '10.1.%'")
		exits 0
		has '^synced 12 forwarders and 4 OSTs from '"$R"'/etc/fwdalloc/topology\.yaml$' ;;
	'fwdctl --json db status')
		exits 0
		jqv '"\(.state) \(.tables.forwarders) \(.tables.osts)"' "current 12 4" ;;
	'fwdctl db prune --dry-run')
		exits 0
		has '^would remove 0 rows from samples_raw \(older than [0-9T:-]+Z\)$' ;;
	# ---- remap
	'fwdctl remap apply --job 4242 --node c17 --forwarders fwd05,fwd06')
		exits 0 # the shipped policy's driver: none
		is "remap apply: job 4242 node c17 driver none: fwd05,fwd06: ok" ;;
	'fwdctl remap revert --job 4242 --node c17')
		exits 0
		is "remap revert: job 4242 node c17 driver none: ok" ;;
	"fwdctl --topology /etc/fwdalloc/topology.yaml remap probe --forwarders 'fwd[05-08]'")
		exits 3
		has '^RDMA devices: none$'
		check_eq "$ex: each forwarder: no RDMA device" 4 \
			"$(grep -cE '^  fwd0[5-8] \(10\.1\.0\.1[5-8]\): FAILED: verbs: no RDMA device found' <<<"$out")"
		errhas '^fwdctl remap probe: verbs: no RDMA device found' ;;
	# ---- trace
	'fwdctl trace compress c1.trace c1.ctrace')
		exits 0
		is "c1.trace: 4 records in 1 runs, 394 -> 216 bytes, ratio 1.8x (0 broken lines skipped)" ;;
	'fwdctl trace expand c1.ctrace c1.trace')
		exits 0
		is "c1.ctrace: 1 runs -> 4 records, 216 -> 386 bytes" ;;
	'fwdctl trace summarize --json traces/job4711/*.trace')
		exits 0
		jqv '"\(.io_mode) \(.nodes) \(.write_bytes) \(.write_ops)"' "N-N 2 32768 8" ;;
	'fwdctl trace ingest --job 4711 /var/log/lwfs/c*.trace')
		exits 0
		is "job 4711: stored N-M summary: 2 of 256 nodes did I/O, 0 bytes read, 32768 written, 0 records outside the job's time" ;;
	# ---- ingest
	'fwdctl ingest --format beacon-lwfs /var/log/lwfs/server-stats.log')
		exits 0
		is "read 14 lines, stored 9 samples, rejected 0 lines (5 already stored or baselines, 0 ignored)" ;;
	'telegraf --once | fwdctl ingest --format influx -')
		exits 0
		is "read 2 lines, stored 2 samples, rejected 0 lines" ;;
	'lctl get_param obdfilter.*.job_stats | fwdctl ingest -f lustre-jobstats')
		exits 0
		is "read 53 lines, stored 3 samples, rejected 0 lines" ;;
	'darshan-parser --total --perf app.darshan > a.txt && fwdctl ingest --format darshan a.txt')
		exits 0
		has '^a\.txt: job 4245: 1073741824 B read, 4294967296 B written, 256 metadata operations, 64 processes, N-1$' ;;
	# ---- profile
	"fwdctl profile show 'user=alice;name=wrf;node_bucket=256'")
		exits 0
		has '^key +"user=alice;name=wrf;node_bucket=256"$'
		has '^last_job_id +4711$'
		has '^updated_at +[0-9T:-]+Z$'
		has '^  runs +1$' ;;
	'fwdctl profile show --job 4711 --json')
		exits 0
		jqv '"\(.key) \(.runs[0].source) \(.runs[0].write_bytes) \(.runs[0].forwarders_held)"' \
			"user=alice;name=wrf;node_bucket=256 traces 32768 5" ;;
	'fwdctl profile import history.json && fwdctl profile rebuild')
		exits 0
		has '^imported user=alice;name=wrf;node_bucket=256$'
		has '^profile rebuild: 0 summaries from job_stats, 1 runs read, 1 profiles written ' ;;
	# ---- history
	'fwdctl history run')
		exits 0
		is "examined 1 finished jobs: 0 summaries from job_stats, 0 from forwarder samples, 1 kept (traces, Darshan), 0 unchanged, 0 without statistics; 1 profiles updated" ;;
	# ---- health
	'fwdctl health scan')
		exits 0
		is "scanned 16 components, 2304 windows (0 bad), 0 finished jobs (0 compared), 0 state changes"
		errhas 'warning: no OST statistics stored' ;;
	"fwdctl health exclude lustre-OST0003 --reason 'RAID rebuild'")
		exits 0
		is "ost lustre-OST0003: ok -> excluded"
		check_eq "$ex: the reason stored" "excluded|admin exclude: RAID rebuild" \
			"$(sql "SELECT CONCAT(state, '|', reason) FROM health WHERE name = 'lustre-OST0003'")" ;;
	'fwdctl health release lustre-OST0003')
		exits 0
		is "ost lustre-OST0003: excluded -> ok" ;;
	'fwdctl health export > /run/fwdalloc/HEALTH.json')
		exits 0
		is ""
		check_eq "$ex: every component's state, as JSON" "16 forwarder:fwd01:ok" \
			"$(jq -r '"\(length) \(.[0].kind):\(.[0].name):\(.[0].state)"' "$R/run/fwdalloc/HEALTH.json" 2>&1)"
		check_times "$ex (the file)" "$(cat "$R/run/fwdalloc/HEALTH.json")" ;;
	'fwdctl --json health report --since -30d')
		exits 0
		jqv '"\(.bins | join(",")) \(.episodes.ost.ended[0])"' \
			"<1h,1-4h,4-12h,12-96h,>=96h 1" ;;
	'fwdctl health job 4711')
		exits 0 # one run of wrf: too few to compare it with
		is "job 4711 (alice/wrf, 256 nodes): not checked: 0 past I/O phase(s), need 3 to form a cluster
  phase 1: 0 s, 3.28e+04 bytes" ;;
	# ---- sim
	'fwdctl sim --topology /usr/share/doc/fwdalloc/examples/topology-taihulight.yaml --jobs /usr/share/doc/fwdalloc/examples/sim-jobs.csv --curves /usr/share/doc/fwdalloc/examples/sim-curves.csv')
		exits 0
		has '^328 jobs \(328 placed\)'
		has '^static +' ;;
	'fwdctl sim --policy new.yaml --jobs week.csv --curves curves.csv --compare static,dfra,strict.yaml,oracle --out /tmp/report --json')
		exits 0
		jqv '[.policies[].name] | join(",")' "static,dfra,strict,oracle"
		jqv '.policies[2].aggregate_bandwidth_bps < .policies[1].aggregate_bandwidth_bps' true
		check_eq "$ex: the report written under /tmp/report" \
			"report.json speedup.svg utilisation.svg" "$(ls "$R/tmp/report" | paste -sd' ')"
		jqv '.jobs' 318 ;;
	*) return 1 ;;
	esac
	return 0
}

# Every forwarder (also in hostlists), OST and compute node an example
# names exists in the shipped topology (examples once named fwd081 and
# lustre-OST0004, which it lacks).
expand() { # fwd[05-08] -> fwd05 .. fwd08
	case $1 in
	*\[*-*\]) local a b
		a=${1#*[}; a=${a%-*}; b=${1#*-}; b=${b%]}
		for i in $(seq -w "$a" "$b"); do echo "${1%%[*}$i"; done ;;
	*) echo "$1" ;;
	esac
}
topo_json=$(fwdctl --json topology show)
fwds=$(jq -r '.forwarders[].name' <<<"$topo_json")
osts=$(jq -r '.osts[].name' <<<"$topo_json")
n_names=0 unknown=
while IFS= read -r ex; do
	for f in $(grep -oE 'fwd[0-9]+|fwd\[[-0-9,]+\]' <<<"$ex"); do
		for one in $(expand "$f"); do
			n_names=$((n_names + 1))
			grep -qx "$one" <<<"$fwds" || unknown="$unknown $one"
		done
	done
	for o in $(grep -oE 'lustre-OST[0-9a-f]{4}' <<<"$ex"); do
		n_names=$((n_names + 1))
		grep -qx "$o" <<<"$osts" || unknown="$unknown $o"
	done
	for nd in $(grep -oE -- "--node c[0-9]+" <<<"$ex" | cut -c9-); do
		n_names=$((n_names + 1))
		[ "$nd" -ge 1 ] && [ "$nd" -le 1024 ] || unknown="$unknown c$nd"
	done
done <"$T/examples"
check_eq "every name an example gives is in the shipped topology" "" "$unknown"
check "forwarder, OST and node names checked" test "$n_names" -ge 10

n_run=0
while IFS= read -r ex; do
	[ -n "$ex" ] || continue
	cmd=$(printf '%s\n' "$ex" | sed -E 's#(^| |>)/(etc|var|run|tmp|usr/share/doc)/#\1'"$R"'/\2/#g')
	(eval "$cmd") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	n_run=$((n_run + 1))
	if ! verify "$ex"; then
		fail "an example this test does not check (add it here): $ex"
		continue
	fi
	check_times "$ex" "$out"
done <"$T/examples"
check_eq "every example printed by the help ran" "$(grep -c . "$T/examples")" "$n_run"

# Examples checked here that the help no longer prints.
stale=$(sed -n '/^verify() {/,/^}/p' "$S/tests/integration/cli_help_examples.sh" |
	sed -n "s/^	'\(.*\)')$/\1/p; s/^	\"\(.*\)\")$/\1/p" | grep -vxF -f "$T/examples")
check_eq "no example checked here is missing from the help" "" "$stale"

# ---- the timestamps of the other commands that print times ------------------
fwdctl health exclude fwd07 --reason test >/dev/null 2>&1
for c in "alloc list" "alloc list --json" "alloc show 4242" "audit" \
	"audit --json" "audit --db" "audit --db --json" "health list" \
	"health list --json" "health report" "health job 4711 --json" \
	"db prune --dry-run --json" "profile show --job 4711" \
	"trace summarize traces/job4711/c1.trace" "health scan --json" \
	"history run --json"; do
	# shellcheck disable=SC2086 # the words of $c are arguments
	out=$(fwdctl $c 2>&1)
	check_eq "fwdctl $c: exit 0" 0 "$?" || diag "$out"
	check_times "fwdctl $c" "$out"
done
check "timestamps were seen" test "$n_times" -ge 20

tap_done
