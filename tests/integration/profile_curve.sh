#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Learning in production, against a private MariaDB: every finished run
# records (application, k, private or shared, achieved bandwidth) in
# job_io through the history loop; the application's curve counts, per k,
# the runs that had their forwarders alone (else the shared ones), with
# their number and spread; profile show --job prints that curve, and the
# profile the controller hands the allocator (the same lookup) carries it.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

fw db init
check_eq "schema created" 0 "$rc"
printf 'history:\n  max_age: 36500d\n  runs: 10\n' >>"$policy"

# kim's ior on 2 nodes, five runs of 100 s: three on 2 private forwarders
# (10, 30 and 20 MB/s), one on 2 shared ones (80 MB/s: a shared run does
# not count where private runs measured k = 2), one on 4 shared ones
# (40 MB/s)
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (5001, 'kim', 'ior', 'n[1-2]', 2, 1700000000, 1700000100, 'COMPLETED', 0),
   (5002, 'kim', 'ior', 'n[1-2]', 2, 1700001000, 1700001100, 'COMPLETED', 0),
   (5003, 'kim', 'ior', 'n[1-2]', 2, 1700002000, 1700002100, 'COMPLETED', 0),
   (5004, 'kim', 'ior', 'n[1-2]', 2, 1700003000, 1700003100, 'COMPLETED', 0),
   (5005, 'kim', 'ior', 'n[1-2]', 2, 1700004000, 1700004100, 'COMPLETED', 0)"
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, node_count,
   action, acquired_at, released_at) VALUES
   (5001, 'fwd11', 1, 'n1', 1, 'isolate', 1700000000, 1700000100),
   (5001, 'fwd12', 1, 'n2', 1, 'isolate', 1700000000, 1700000100),
   (5002, 'fwd13', 1, 'n1', 1, 'isolate', 1700001000, 1700001100),
   (5002, 'fwd14', 1, 'n2', 1, 'isolate', 1700001000, 1700001100),
   (5003, 'fwd15', 1, 'n1', 1, 'scale', 1700002000, 1700002100),
   (5003, 'fwd16', 1, 'n2', 1, 'scale', 1700002000, 1700002100),
   (5004, 'fwd17', 0, 'n1', 1, 'scale', 1700003000, 1700003100),
   (5004, 'fwd18', 1, 'n2', 1, 'scale', 1700003000, 1700003100),
   (5005, 'fwd21', 0, 'n1', 1, 'default', 1700004000, 1700004100),
   (5005, 'fwd22', 0, 'n1', 1, 'default', 1700004000, 1700004100),
   (5005, 'fwd23', 0, 'n2', 1, 'default', 1700004000, 1700004100),
   (5005, 'fwd24', 0, 'n2', 1, 'default', 1700004000, 1700004100)"
# what each forwarder wrote during its job's run (Telegraf line protocol,
# as the monitor ingests it): half of the job's volume each, split in two
# for the job on 4
sample() { # forwarder start bytes
	printf 'fwd,node=%s read_bytes=0i,write_bytes=0i,md_ops=0i %s000000000\n' "$1" "$2"
	printf 'fwd,node=%s read_bytes=0i,write_bytes=%si,md_ops=0i %s000000000\n' "$1" "$3" "$(($2 + 100))"
}
{
	sample fwd11 1700000000 500000000
	sample fwd12 1700000000 500000000
	sample fwd13 1700001000 1500000000
	sample fwd14 1700001000 1500000000
	sample fwd15 1700002000 1000000000
	sample fwd16 1700002000 1000000000
	sample fwd17 1700003000 4000000000
	sample fwd18 1700003000 4000000000
	for f in fwd21 fwd22 fwd23 fwd24; do
		sample $f 1700004000 1000000000
	done
} >"$d/fwd.lp"
fw ingest --format influx "$d/fwd.lp"
check_eq "forwarder samples ingested" 0 "$rc"

fw history run --now 1700005000
check_eq "history run: exit 0" 0 "$rc"
check_eq "every run recorded: k, private or shared, achieved bandwidth" \
	"$(printf '5001\t2\t1\t10000000\n5002\t2\t1\t30000000\n5003\t2\t1\t20000000\n5004\t2\t0\t80000000\n5005\t4\t0\t40000000')" \
	"$(q "SELECT job_id, forwarders_held, forwarders_private, ROUND(bandwidth_achieved_bps) FROM job_io ORDER BY job_id")"

fw profile show --job 5005
check_eq "profile show --job: exit 0" 0 "$rc"
check_match "k = 2: the median of the 3 private runs, their spread" \
	'k=2 +20MB/s +3 runs, spread 20MB/s \(private\)' "$out"
check_match "k = 4: one shared run" \
	'k=4 +40MB/s +1 run, spread 0B/s \(shared\)' "$out"

fw profile show --job 5005 --json
check_eq "profile show --job --json: exit 0" 0 "$rc"
one=$(printf '%s' "$out" | tr -d ' \n')
check_match "curve in JSON: k = 2" \
	'"curve":\[\{"k":2,"bps":20000000\.0,"runs":3,"spread_bps":20000000\.0,"forwarders":"private"\}' "$one"
check_match "curve in JSON: k = 4" \
	'\{"k":4,"bps":40000000\.0,"runs":1,"spread_bps":0\.0,"forwarders":"shared"\}\]' "$one"
# the profile the prolog gives the allocator is this lookup's
check_match "the allocator's input: bandwidth_by_forwarders from that curve" \
	'"bandwidth_by_forwarders":\{"2":20000000\.0,"4":40000000\.0\}' "$one"

# the stored profile of the key (written by the history loop) shows it too
key=$(printf '%s' "$one" | sed 's/.*"key":"\([^"]*\)".*/\1/')
fw profile show "$key"
check_eq "profile show KEY: exit 0" 0 "$rc"
check_match "profile show KEY: the curve with its run counts" \
	'k=2 +20MB/s +3 runs, spread 20MB/s \(private\)' "$out"
fw profile show --json "$key"
check_match "profile show KEY --json: the curve" \
	'"curve":\[\{"k":2,"bps":20000000\.0,"runs":3,"spread_bps":20000000\.0,"forwarders":"private"\},\{"k":4,"bps":40000000\.0,"runs":1,"spread_bps":0\.0,"forwarders":"shared"\}\]' \
	"$(printf '%s' "$out" | tr -d ' \n')"

# the next decision values its options from those medians: 20 MB/s at
# k = 2 (not the 80 MB/s of the shared run)
printf '%s' "$one" | sed 's/.*"profile":\({[^}]*}[^}]*}\).*/\1/' >"$d/profile.json"
cat >"$d/job.json" <<EOF
{"job_id": "6000", "user": "kim", "name": "ior", "nodes": "c[1-2]",
 "request": "auto", "profile": $(cat "$d/profile.json")}
EOF
fw --topology "$top_srcdir/etc/topology.yaml" decide --now 1700005000 \
	--compact --job "$d/job.json"
check_eq "decide with the learned profile: exit 0" 0 "$rc"
check_match "the decision read k = 2 at 20 MB/s" \
	'"bandwidth_by_forwarders": ?\{"2": ?20000000\.0, ?"4": ?40000000\.0\}' "$out"
check_match "and valued its options from the curve" \
	'curve: [0-9.]+MB/s with the default mapping' "$out"

# direct file-system access: kim's ior run 5006 was decided direct (its
# audit row; no forwarder held), 5007 has no audit row (no forwarder, no
# decision known).  Their Lustre job_stats, as Telegraf's lustre2 input
# reports them (the same line form as history_loop.sh): 5006 wrote 3 GB
# in 100 s, 5007 wrote 5 GB.
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (5006, 'kim', 'ior', 'n[1-2]', 2, 1700005000, 1700005100, 'COMPLETED', 0),
   (5007, 'kim', 'ior', 'n[1-2]', 2, 1700006000, 1700006100, 'COMPLETED', 0)"
q "INSERT INTO audit (ts, job_id, action, outcome, record) VALUES
   (1700005000, 5006, 'direct', 'applied',
    '{\"event\":\"prolog\",\"job_id\":\"5006\",\"action\":\"direct\"}')"
printf '%s\n' \
	'lustre2,host=oss1,jobid=5006,name=lustre-OST0001 jobstats_read_bytes=0i,jobstats_read_calls=0i,jobstats_write_bytes=3000000000i,jobstats_write_calls=30i 1700005100000000000' \
	'lustre2,host=oss1,jobid=5007,name=lustre-OST0001 jobstats_read_bytes=0i,jobstats_read_calls=0i,jobstats_write_bytes=5000000000i,jobstats_write_calls=50i 1700006100000000000' \
	>"$d/direct.lp"
fw ingest --format influx "$d/direct.lp"
check_eq "job_stats of the direct runs ingested" 0 "$rc"
fw history run --now 1700007000
check_eq "history run with a direct run: exit 0" 0 "$rc"
check_eq "the direct run: k = 0, direct, volume / runtime; without an audit row: as before" \
	"$(printf '5006\tjobstats\t0\t1\t30000000\n5007\tjobstats\t0\t0\t0')" \
	"$(q "SELECT job_id, source, forwarders_held, direct, ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id >= 5006 ORDER BY job_id")"
check_eq "the other runs unchanged" \
	"$(printf '5001\t2\t1\t0\t10000000\n5002\t2\t1\t0\t30000000\n5003\t2\t1\t0\t20000000\n5004\t2\t0\t0\t80000000\n5005\t4\t0\t0\t40000000')" \
	"$(q "SELECT job_id, forwarders_held, forwarders_private, direct, ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id < 5006 ORDER BY job_id")"

fw profile show --job 5007
check_eq "profile show --job after the direct run: exit 0" 0 "$rc"
check_match "k = 0: the direct run, shown as direct" \
	'k=0 +30MB/s +1 run, spread 0B/s \(direct\)' "$out"
check_match "k = 2 still the private runs" \
	'k=2 +20MB/s +3 runs, spread 20MB/s \(private\)' "$out"
fw profile show --job 5007 --json
one=$(printf '%s' "$out" | tr -d ' \n')
check_match "curve in JSON: k = 0 direct, one run" \
	'"curve":\[\{"k":0,"bps":30000000\.0,"runs":1,"spread_bps":0\.0,"forwarders":"direct"\},\{"k":2,' "$one"
check_match "the allocator's input: bandwidth_by_forwarders \"0\" from the direct run" \
	'"bandwidth_by_forwarders":\{"0":30000000\.0,"2":20000000\.0,"4":40000000\.0\}' "$one"
fw profile show --json "$key"
one=$(printf '%s' "$out" | tr -d ' \n')
check_match "the stored profile: bandwidth_by_forwarders \"0\"" \
	'"bandwidth_by_forwarders":\{"0":30000000\.0,"2":20000000\.0,"4":40000000\.0\}' "$one"
check_match "the stored profile's curve: k = 0 direct" \
	'"curve":\[\{"k":0,"bps":30000000\.0,"runs":1,"spread_bps":0\.0,"forwarders":"direct"\}' "$one"

tap_done
