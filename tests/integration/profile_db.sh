#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Profiles against a private MariaDB: import -> show -> lookup at launch
# (`profile show --job`), trace ingest -> job_io -> profile, job_stats
# summaries, rebuild, and bad input leaving stored data intact.
# JSON is checked with grep on exact "key": value pairs (no jq needed).
. "$top_srcdir/tests/integration/tap.sh"

fwdctl="$top_builddir/fwdctl"
testdb="$top_srcdir/scripts/testdb"
[ -x "$fwdctl" ] || skip_all "fwdctl not built"
[ -x "$testdb" ] || skip_all "scripts/testdb missing"

d=$(mktemp -d /tmp/profile_db.XXXXXX)
trap '"$testdb" stop "$d/db" >/dev/null 2>&1; rm -rf "$d"' EXIT
eval "$("$testdb" start "$d/db" 2>"$d/testdb.err")" ||
	{ cat "$d/testdb.err" >&2; skip_all "cannot start a private MariaDB"; }

pol="$d/policy.yaml"
cat "$FWDALLOC_TESTDB_POLICY" >"$pol"
cat >>"$pol" <<'EOF'
history:
  runs: 5
  bucket_base: 2
  max_age: 36500d   # the traces are from 2016
EOF
fw() { "$fwdctl" --policy "$pol" "$@"; }
sql() { "$testdb" sql "$d/db" -N -B "$FWDALLOC_TESTDB_NAME" -e "$1"; }

check "db init" sh -c "\"$fwdctl\" --policy \"$pol\" db init >/dev/null"

# ---- import -> show -> lookup ----
cat >"$d/import.json" <<'EOF'
[{"user": "alice", "name": "wrf", "nodes": 256,
  "profile": {"io_volume_bytes": 64000000000, "io_nodes": 256,
              "node_bandwidth_bps": 200000000, "peak_bandwidth_bps": 5.0e10,
              "iops": 1200, "mdops": 40, "metadata_queue": 0.5,
              "io_mode": "N-N", "runs": 7,
              "bandwidth_by_forwarders": {"1": 2.4e9, "4": 8.8e9}}},
 {"user": "carol", "name": "awp", "nodes": 1024, "io_volume_bytes": 1e12,
  "io_nodes": 1024, "node_bandwidth_bps": 1e8, "io_mode": "N-1"}]
EOF
out=$(fw profile import "$d/import.json" 2>&1)
check_eq "import exit" 0 $?
check_match "import names the key" 'imported user=alice;name=wrf;node_bucket=256' "$out"
check_match "import counts" 'profile import: 2 profiles' "$out"

out=$(fw profile show --json 'user=alice;name=wrf;node_bucket=256')
check_eq "show exit" 0 $?
check_match "show: mode" '"io_mode": "N-N"' "$out"
check_match "show: io_nodes" '"io_nodes": 256' "$out"
check_match "show: runs" '"runs": 7' "$out"
check_match "show: source import" '"source": "import"' "$out"
check_match "show: volume" '"io_volume_bytes": 64000000000' "$out"
check_match "show: bw k=4" '"4": 8800000000' "$out"
out=$(fw profile show 'user=alice;name=nothing;node_bucket=256' 2>&1)
check_eq "show unknown key exits 1" 1 $?
check_match "show unknown key message" 'no profile with key "user=alice;name=nothing;node_bucket=256"' "$out"

# A job of 320 nodes about to start: the stored profile scaled by 320/256.
sql "INSERT INTO jobs (job_id, user, account, name, partition_name, nodelist,
     node_count, start_at, state, updated_at) VALUES (100, 'alice', 'p1',
     'wrf', 'batch', 'c[1-320]', 320, 1472292880, 'RUNNING', 0)"
out=$(fw profile show --job 100 --json)
check_eq "lookup exit" 0 $?
check_match "lookup: stored source" '"source": "stored"' "$out"
check_match "lookup: key" '"key": "user=alice;name=wrf;node_bucket=256"' "$out"
check_match "lookup: io_nodes scaled" '"io_nodes": 320' "$out"
check_match "lookup: volume scaled" '"io_volume_bytes": 80000000000' "$out"
check_match "lookup: B_c not scaled" '"node_bandwidth_bps": 200000000' "$out"
check_match "lookup: runs kept" '"runs": 7' "$out"
sql "INSERT INTO jobs (job_id, user, name, node_count, state, updated_at)
     VALUES (101, 'dave', 'new', 8, 'RUNNING', 0)"
out=$(fw profile show --job 101 2>&1)
check_eq "no history exits 1" 1 $?
check_match "no history message" 'job 101: no history for key user=dave;name=new;node_bucket=8' "$out"
out=$(fw profile show --job 999 2>&1)
check_eq "unknown job exits 1" 1 $?

# ---- trace ingest ----
# 4 nodes write one shared file (N-1) from 10:14:44 for 5 s, 8 x 1 MiB per
# node per second; an earlier job's write on c1 (10:00:00) is outside.
mk_trace() { # node index, file
	i=$1
	{
		echo "[2016-08-27 10:00:00] T lwfs-fuse: 9: WRITE (0x99, size=4096, offset=0, count=1)"
		echo "[2016-08-27 10:14:44] T lwfs-fuse: 500: OPEN() /scratch/out.dat => 0x2000"
		for s in 44 45 46 47 48; do
			for r in 0 1 2 3 4 5 6 7; do
				off=$(( ( (i * 5 + s - 44) * 8 + r) * 1048576 ))
				echo "[2016-08-27 10:14:$s] T lwfs-fuse: 500: WRITE (0x2000, size=1048576, offset=$off, count=1)"
			done
		done
		echo "this line is broken"
		echo "[2016-08-27 10:14:49] T lwfs-fuse: 500: RELEASE 0x2000"
	} >"$2"
}
for i in 0 1 2 3; do mk_trace $i "$d/c$((i + 1)).trace"; done
mk_trace 0 "$d/c9.trace"
# 2016-08-27 10:14:40 UTC = 1472292880
sql "INSERT INTO jobs (job_id, user, account, name, partition_name, nodelist,
     node_count, start_at, end_at, state, updated_at) VALUES (200, 'bob',
     'p2', 'lmp', 'batch', 'c[1-4]', 4, 1472292880, 1472292980,
     'COMPLETED', 0)"
# the ledger gave it two forwarders (and a shadow row that holds none)
sql "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
     acquired_at, released_at) VALUES (200, 'fwd01', 'c[1-2]', 2, 'scale',
     1472292880, 1472292980), (200, 'fwd02', 'c[3-4]', 2, 'scale',
     1472292880, 1472292980), (200, 'fwd09', 'c[1-4]', 4, 'shadow',
     1472292880, 1472292980)"
fw trace compress "$d/c4.trace" "$d/c4.ctrace" >/dev/null 2>&1
out=$(fw trace ingest --job 200 "$d/c1.trace" "$d/c2.trace" "$d/c3.trace" "$d/c4.ctrace" 2>&1)
check_eq "ingest exit" 0 $?
check_match "ingest reports" 'job 200: stored N-1 summary: 4 of 4 nodes did I/O, 0 bytes read, 167772160 written, 4 records outside' "$out"
check_match "ingest reports broken lines" 'skipped .*c1.trace:43: ' "$out"
row=$(sql "SELECT io_mode, io_nodes, procs, write_bytes, read_bytes, source, runtime FROM job_io WHERE job_id = 200")
check_eq "job_io row" "$(printf 'N-1\t4\t4\t167772160\t0\ttraces\t100')" "$row"
bw=$(sql "SELECT ROUND(node_bandwidth_bps), ROUND(peak_bandwidth_bps), ROUND(iops) FROM job_io WHERE job_id = 200")
# 160 MiB over the 6 s phase (10:14:44 to the RELEASE at :49) / 4 nodes
check_eq "job_io rates" "$(printf '6990507\t33554432\t27')" "$bw"
check_eq "forwarders held, bandwidth achieved" "$(printf '2\t27962027')" \
	"$(sql "SELECT forwarders_held, ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id = 200")"
check_match "phases stored" '"write_bytes": ?167772160' "$(sql "SELECT phases FROM job_io WHERE job_id = 200")"
prof=$(sql "SELECT runs, io_mode, io_nodes, write_bytes, last_job_id FROM profiles WHERE profile_key = 'user=bob;name=lmp;node_bucket=4'")
check_eq "ingest refreshed the profile" "$(printf '1\tN-1\t4\t167772160\t200')" "$prof"

out=$(fw trace ingest --job 200 "$d/c1.trace" "$d/c9.trace" 2>&1)
check_eq "foreign node exits 2" 2 $?
check_match "foreign node message" 'c9.trace: node c9 is not a node of job 200 \(c\[1-4\]\)' "$out"
out=$(fw trace ingest --job 4242 "$d/c1.trace" 2>&1)
check_eq "ingest unknown job exits 1" 1 $?
check_match "ingest unknown job message" 'job 4242 is not in the jobs table' "$out"
check_eq "job_io unchanged after refusals" "$row" \
	"$(sql "SELECT io_mode, io_nodes, procs, write_bytes, read_bytes, source, runtime FROM job_io WHERE job_id = 200")"

# a second run of the same application, half the volume, then the lookup
# for a new 4-node job is the median of the two
for i in 0 1 2 3; do mk_trace $i "$d/c$((i + 1)).trace"; done
sed -i '/10:14:4[78]/d' "$d/c1.trace" "$d/c2.trace" "$d/c3.trace" "$d/c4.trace"
sql "INSERT INTO jobs (job_id, user, account, name, partition_name, nodelist,
     node_count, start_at, end_at, state, updated_at) VALUES (201, 'bob',
     'p2', 'lmp', 'batch', 'c[1-4]', 4, 1472292880, 1472292990,
     'COMPLETED', 0)"
fw trace ingest --job 201 "$d/c1.trace" "$d/c2.trace" "$d/c3.trace" "$d/c4.trace" >"$d/ingest2.out" 2>&1
check_eq "ingest second run" 0 $?
sql "INSERT INTO jobs (job_id, user, name, nodelist, node_count, state,
     updated_at) VALUES (202, 'bob', 'lmp', 'c[1-4]', 4, 'RUNNING', 0)"
out=$(fw --json profile show --job 202)
check_match "lookup from history" '"source": "history"' "$out"
check_match "lookup: 2 runs" '"runs": 2' "$out"
# volumes 160 MiB and 96 MiB: median 128 MiB
check_match "lookup: median volume" '"io_volume_bytes": 134217728' "$out"
check_match "lookup: mode" '"io_mode": "N-1"' "$out"
# only job 200 held forwarders (2): its phase bandwidth, 160 MiB / 6 s
check_match "lookup: bandwidth by forwarders" '"2": 27962026\.6' "$out"

# ---- job_stats summaries and rebuild ----
sql "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
     end_at, state, updated_at) VALUES (300, 'erin', 'cesm', 'c[1-2]', 2,
     1000, 1100, 'COMPLETED', 0)"
sql "INSERT INTO jobstats_raw (kind, target, lustre_job_id, job_id, ts, op,
     samples, unit, min_value, max_value, sum_value) VALUES
     ('ost', 'lustre-OST0000', '300', 300, 1050, 'write_bytes', 10, 'bytes', 1, 1, 1000),
     ('ost', 'lustre-OST0000', '300', 300, 1090, 'write_bytes', 20, 'bytes', 1, 1, 3000),
     ('ost', 'lustre-OST0001', '300', 300, 1090, 'write_bytes', 5, 'bytes', 1, 1, 500),
     ('ost', 'lustre-OST0001', '300', 300, 1090, 'read_bytes', 4, 'bytes', 1, 1, 800),
     ('mdt', 'lustre-MDT0000', '300', 300, 1090, 'open', 30, 'usecs', 1, 1, 1),
     ('mdt', 'lustre-MDT0000', '300', 300, 1090, 'close', 30, 'usecs', 1, 1, 1)"
sql "DELETE FROM profiles WHERE profile_key = 'user=bob;name=lmp;node_bucket=4'"
out=$(fw profile rebuild 2>&1)
check_eq "rebuild exit" 0 $?
check_match "rebuild counts" '1 summaries from job_stats, 3 runs read, 2 profiles written' "$out"
check_eq "job_stats summary" "$(printf '800\t3500\t2\tjobstats\t60\t0.6')" \
	"$(sql "SELECT read_bytes, write_bytes, io_nodes, source, mdops, mdops_rate FROM job_io WHERE job_id = 300")"
check_eq "rebuilt profile" "$(printf '2\tN-1\t201')" \
	"$(sql "SELECT runs, io_mode, last_job_id FROM profiles WHERE profile_key = 'user=bob;name=lmp;node_bucket=4'")"
check_eq "imported profiles kept" "2" \
	"$(sql "SELECT COUNT(*) FROM profiles WHERE JSON_VALUE(figures, '$.source') = 'import'")"

# ---- bad input leaves stored data intact ----
before=$(sql "SELECT profile_key, runs, io_nodes FROM profiles ORDER BY profile_key")
cat >"$d/bad.json" <<'EOF'
[{"user": "alice", "name": "wrf", "nodes": 256, "io_volume_bytes": 1,
  "io_nodes": 1, "node_bandwidth_bps": 1, "io_mode": "1-1", "runs": 1},
 {"user": "zed", "name": "x", "nodes": 8, "io_volume_bytes": -5,
  "io_nodes": 1, "node_bandwidth_bps": 1, "io_mode": "N-N"}]
EOF
out=$(fw profile import "$d/bad.json" 2>&1)
check_eq "bad import exits 2" 2 $?
check_match "bad import message" 'bad.json: entry 2: profile: "io_volume_bytes": -5: must be a number >= 0 \(nothing imported\)' "$out"
check_eq "bad import left profiles intact" "$before" \
	"$(sql "SELECT profile_key, runs, io_nodes FROM profiles ORDER BY profile_key")"
printf '{"user": "a", ' >"$d/trunc.json"
out=$(fw profile import "$d/trunc.json" 2>&1)
check_eq "unparsable import exits 2" 2 $?
check_match "unparsable import names the file" 'trunc.json:1:' "$out"

# ---- database down: exit 3 ----
# The same traces for runs that held no forwarder: 301 was decided direct
# (its audit row says so), 302 has no audit row.  The direct run's phase
# bandwidth (the traces' 8 x 4 MiB/s, as job 200's above) is the curve's
# k = 0 point; the other run stays out of the curve.
sql "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
     end_at, state, updated_at) VALUES
     (301, 'eve', 'dio', 'c[1-4]', 4, 1472292880, 1472292980, 'COMPLETED', 0),
     (302, 'eve', 'nodio', 'c[1-4]', 4, 1472292880, 1472292980, 'COMPLETED', 0)"
sql "INSERT INTO audit (ts, job_id, action, outcome, record) VALUES
     (1472292880, 301, 'direct', 'applied',
      '{\"event\":\"prolog\",\"job_id\":\"301\",\"action\":\"direct\"}')"
mkdir "$d/direct"
for i in 0 1 2 3; do mk_trace $i "$d/direct/c$((i + 1)).trace"; done
for j in 301 302; do
	out=$(fw trace ingest --job $j "$d"/direct/c[1-4].trace 2>&1)
	check_eq "trace ingest of job $j (no forwarder held): exit 0" 0 $?
done
check_eq "traces of a direct run: k = 0, direct, its phase bandwidth" \
	"$(printf '301\t0\t1\t27962027\n302\t0\t0\t27962027')" \
	"$(sql "SELECT job_id, forwarders_held, direct, ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id IN (301, 302) ORDER BY job_id")"
check_eq "the direct run is the curve's k = 0 point" 27962027 \
	"$(sql "SELECT ROUND(JSON_VALUE(bandwidth_by_forwarders, '\$.\"0\"')) FROM profiles WHERE profile_key = 'user=eve;name=dio;node_bucket=4'")"
check_eq "the run without an audit row gives no k = 0 point" "1 0" \
	"$(sql "SELECT COUNT(*), COALESCE(SUM(JSON_EXISTS(bandwidth_by_forwarders, '\$.\"0\"')), 0) FROM profiles WHERE profile_key = 'user=eve;name=nodio;node_bucket=4'" | tr '\t' ' ')"

# A launch looks at the newest PROFILE_LAUNCH_RUNS (500) finished jobs of
# its key only, however many the key has: 4,000's one summarised run
# ended before 500 newer runs without statistics, so a launch does not
# see it; one of those fewer, and it does.
sql "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
     end_at, state, updated_at) SELECT 4000 + seq, 'fay', 'busy', 'c[1-4]',
     4, 1472292880 + seq, 1472292980 + seq, 'COMPLETED', 0
     FROM seq_0_to_500"
sql "INSERT INTO job_io (job_id, io_mode, io_nodes, write_bytes, runtime,
     node_bandwidth_bps, source, updated_at)
     VALUES (4000, 'N-N', 4, 8000000000, 100, 20000000, 'traces', 0)"
sql "INSERT INTO jobs (job_id, user, name, node_count, state, updated_at)
     VALUES (4999, 'fay', 'busy', 4, 'RUNNING', 0)"
out=$(fw profile show --job 4999 2>&1)
check_eq "a run behind 500 newer ones: no history at launch (exit 1)" 1 $?
check_match "and says so" 'job 4999: no history for key user=fay;name=busy;node_bucket=4' "$out"
sql "DELETE FROM jobs WHERE job_id = 4500"
out=$(fw profile show --job 4999 --json 2>&1)
check_eq "among the newest 500: exit 0" 0 $?
check_match "among the newest 500: from history" '"source": "history"' "$out"
check_match "among the newest 500: its volume" '"io_volume_bytes": 8000000000' "$out"

"$testdb" stop "$d/db" >/dev/null 2>&1
out=$(fw profile show --job 100 2>&1)
check_eq "database down exits 3" 3 $?

tap_done
