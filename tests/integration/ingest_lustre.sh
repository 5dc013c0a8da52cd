#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fwdctl ingest of what a Lustre site really emits (tests/fixtures/lustre,
# README.md there says where each fixture comes from): Telegraf lustre2
# and lustre2_lctl line protocol, job_stats of Lustre 2.12, 2.15.0,
# 2.15.2+ and 2.16; the stored numbers, what is ignored and why,
# precision, implausible times, --strict, bad lines, re-ingest.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start
fx=$top_srcdir/tests/fixtures/lustre

fw db init
check_eq "schema created" 0 "$rc"

# ---- Telegraf inputs.lustre2: the README's example output ----
fw ingest --format influx "$fx/telegraf-lustre2.lp"
check_eq "lustre2 README: exit 0" 0 "$rc"
check_eq "lustre2 README: summary" \
	"read 2 lines, stored 2 samples, rejected 0 lines" "$out"
check_eq "lustre2 README: OST job_stats write sum and calls, read" \
	"ost	42990218	1556525847	write_bytes	7423	8820	53048	310206488
ost	42990218	1556525847	read_bytes	1	4096	4096	4096" \
	"$(q "SELECT kind, job_id, ts, op, samples, min_value, max_value, sum_value FROM jobstats_raw WHERE target = 'wrk-OST0041' AND op IN ('read_bytes', 'write_bytes') ORDER BY op DESC")"
check_eq "lustre2 README: MDT job_stats operations" \
	"mdt	42992017	31797	31798	34146	658	1788" \
	"$(q "SELECT kind, job_id, SUM(IF(op='open', samples, 0)), SUM(IF(op='close', samples, 0)), SUM(IF(op='getattr', samples, 0)), SUM(IF(op='mkdir', samples, 0)), SUM(IF(op='setattr', samples, 0)) FROM jobstats_raw WHERE target = 'wrk-MDT0000' GROUP BY kind, job_id")"
check_eq "lustre2 README: ost_setattr is Lustre's setattr" "1" \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE target = 'wrk-OST0041' AND op = 'setattr'")"
fw ingest --format influx "$fx/telegraf-lustre2.lp"
check_eq "lustre2 README: re-ingest stores nothing" \
	"read 2 lines, stored 0 samples, rejected 0 lines (2 already stored or baselines, 0 ignored)" "$out"
check_eq "lustre2 README: no duplicate rows" 21 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE target LIKE 'wrk-%'")"

# ---- Telegraf inputs.lustre2: testcases/v2.12/expected.out ----
fw ingest --format influx --json "$fx/telegraf-lustre2-v2.12.out"
check_eq "lustre2 v2.12: exit 0" 0 "$rc"
check_match "lustre2 v2.12: brw_stats counted by kind" \
	'"lustre2 brw_stats": 24' "$out"
check_match "lustre2 v2.12: per-client export stats counted" \
	'"lustre2 per-client export stats": 1' "$out"
check_match "lustre2 v2.12: health without a name counted" \
	'"lustre2 without name=": 1' "$out"
check_match "lustre2 v2.12: MGS evictions counted" \
	'"lustre2 target without OST or MDT in its name": 1' "$out"
check_match "lustre2 v2.12: evictions of targets counted" \
	'"lustre2 fields other than the I/O counters": 2' "$out"
check_match "lustre2 v2.12: ids naming no Slurm job counted" \
	"\"job_stats ids naming no Slurm job under jobid_name '%j'\": 2" "$out"
check_eq "lustre2 v2.12: job_stats of cluster-testjob1 stored" \
	"ost	NULL	write_bytes	25	1048576	16777216	26214400" \
	"$(q "SELECT kind, IFNULL(job_id, 'NULL'), op, samples, min_value, max_value, sum_value FROM jobstats_raw WHERE lustre_job_id = 'cluster-testjob1' AND op = 'write_bytes'")"
check_eq "lustre2 v2.12: OST stats are the baseline of the counters" \
	"78026117632000	15201500833981	203238095	71893382" \
	"$(q "SELECT MAX(IF(metric='read_bytes', v0, NULL)), MAX(IF(metric='write_bytes', v0, NULL)), MAX(IF(metric='read_ops', v0, NULL)), MAX(IF(metric='write_ops', v0, NULL)) FROM counter_state WHERE name = 'OST0001'")"

fw ingest --format influx --strict "$fx/telegraf-lustre2-v2.12.out"
check_eq "lustre2 v2.12 --strict: exit 2" 2 "$rc"
check_match "lustre2 v2.12 --strict: the first unused line by number" \
	"telegraf-lustre2-v2.12.out:1: not used: job_stats ids naming no Slurm job" "$err"
check_match "lustre2 v2.12 --strict: a brw_stats line by number" \
	"telegraf-lustre2-v2.12.out:2: not used: lustre2 brw_stats \\(--strict\\)" "$err"

# ---- Telegraf inputs.lustre2_lctl (telegraf --test output) ----
fw ingest --format influx "$fx/telegraf-lustre2_lctl.lp"
check_eq "lustre2_lctl: exit 0" 0 "$rc"
check_eq "lustre2_lctl: samples and min/max/sum of two lines joined" \
	"ost	1306853	1693988320	169256	bytes	4096	4194304	62372188160" \
	"$(q "SELECT kind, job_id, ts, samples, unit, min_value, max_value, sum_value FROM jobstats_raw WHERE target = 'OST0000' AND lustre_job_id = '1306853' AND op = 'read_bytes'")"
check_eq "lustre2_lctl: one row per operation" 2 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE target = 'OST0000' AND lustre_job_id = '1306853'")"
check_eq "lustre2_lctl: OST stats counters" "606617630789632	1487077410" \
	"$(q "SELECT MAX(IF(metric='read_bytes', v0, NULL)), MAX(IF(metric='read_ops', v0, NULL)) FROM counter_state WHERE name = 'OST0000'")"
check_match "lustre2_lctl: capacity and recovery lines are said ignored" \
	"ignored 2 lines: lustre2_lctl_ost fields other than the I/O counters" "$err"

# ---- Telegraf inputs.lustre2_lctl md_stats: one operation a line ----
fw ingest --format influx --json "$fx/telegraf-lustre2_lctl-mdt.lp"
check_eq "lustre2_lctl md_stats: exit 0" 0 "$rc"
check_match "lustre2_lctl md_stats: the latency lines counted by kind" \
	'"lustre2_lctl_mdt md_stats min/max/sum \(latencies\)": 4' "$out"
check_eq "lustre2_lctl md_stats: the operations of each MDT summed into md_ops" \
	"THL9-MDT0000	1694140455	234767391543
thfs2-MDT0000	1694140455	969592050" \
	"$(q "SELECT name, ts, v0 FROM counter_state WHERE kind = 'mdt' AND metric = 'md_ops' AND name LIKE '%MDT0000' AND name NOT LIKE 'lustre-%' ORDER BY name")"
# The next gather of the same MDT: the delta of the summed operations.
sed -e 's/137391283844u/137391284844u/; s/97376107699u/97376107799u/; s/293759658u/293759668u/' \
	-e 's/1694140455000000000/1694140465000000000/' \
	"$fx/telegraf-lustre2_lctl-mdt.lp" >"$d/mdt2.lp"
fw ingest --format influx "$d/mdt2.lp"
check_eq "lustre2_lctl md_stats: the next gather stores one sample per MDT" \
	"read 8 lines, stored 2 samples, rejected 0 lines (0 already stored or baselines, 4 ignored)" "$(echo "$out" | head -1)"
check_eq "lustre2_lctl md_stats: metadata operations per interval" \
	"THL9-MDT0000	1100	10
thfs2-MDT0000	10	10" \
	"$(q "SELECT name, md_ops, dt FROM samples_raw WHERE kind = 'mdt' AND ts = 1694140465 ORDER BY name")"

# ---- precision and implausible times ----
printf 'lustre2,name=lfs-OST0007 read_bytes=1000i,write_bytes=0i 1700000000\nlustre2,name=lfs-OST0007 read_bytes=3000i,write_bytes=500i 1700000010\n' >"$d/s.lp"
fw ingest --format influx "$d/s.lp"
check_eq "seconds read as ns: exit 2" 2 "$rc"
check_match "seconds read as ns: error with file:line" \
	"s.lp:1: timestamp 1700000000 is 1970-01-01T00:00:01Z: before 2000 or in the future \\(wrong --precision\\?\\)" "$err"
check_eq "seconds read as ns: nothing stored" 0 \
	"$(q "SELECT COUNT(*) FROM samples_raw WHERE name = 'lfs-OST0007'")"
fw ingest --format influx --precision s "$d/s.lp"
check_eq "--precision s: exit 0" 0 "$rc"
check_eq "--precision s: the 10 s delta" "1700000010	10	2000	500" \
	"$(q "SELECT ts, dt, read_bytes, write_bytes FROM samples_raw WHERE name = 'lfs-OST0007' AND dt IS NOT NULL")"
printf 'lustre2,name=lfs-OST0007 read_bytes=9000i 4102444800000\n' >"$d/f.lp"
fw ingest --format influx --precision ms "$d/f.lp"
check_match "a time in the future: reported" \
	"f.lp:1: timestamp 4102444800000 is 2100-01-01T00:00:00Z: before 2000 or in the future" "$err"
fw ingest --format influx --precision m "$d/f.lp"
check_eq "--precision m: usage error" 2 "$rc"

# ---- Lustre job_stats 2.12 / 2.15.0 / 2.15.2+ / 2.16 ----
n=0
for v in 2.12 2.15.0 2.15 2.16; do
	q "DELETE FROM jobstats_raw WHERE target LIKE 'lustre-%'" >/dev/null
	fw ingest --format lustre-jobstats "$fx/jobstats-$v.txt"
	check_eq "job_stats $v: exit 0" 0 "$rc"
	check_eq "job_stats $v: OST totals of job 4242" \
		"1700000600	1024	1073741824	3072	3221225472" \
		"$(q "SELECT ts, SUM(IF(op='read_bytes', samples, 0)), SUM(IF(op='read_bytes', sum_value, 0)), SUM(IF(op='write_bytes', samples, 0)), SUM(IF(op='write_bytes', sum_value, 0)) FROM jobstats_raw WHERE target = 'lustre-OST0000' AND job_id = 4242 GROUP BY ts")"
	check_eq "job_stats $v: Data-on-MDT bytes stored" \
		"1700000601	16	524288	32	1048576" \
		"$(q "SELECT ts, SUM(IF(op='read_bytes', samples, 0)), SUM(IF(op='read_bytes', sum_value, 0)), SUM(IF(op='write_bytes', samples, 0)), SUM(IF(op='write_bytes', sum_value, 0)) FROM jobstats_raw WHERE target = 'lustre-MDT0000' AND job_id = 4242 GROUP BY ts")"
	check_match "job_stats $v: the procname_uid id is stored with no job and said" \
		"ignored 1 lines: job_stats ids naming no Slurm job under jobid_name '%j'" "$err"
	fw ingest --format lustre-jobstats "$fx/jobstats-$v.txt"
	check_match "job_stats $v: re-ingest stores nothing" \
		"stored 0 samples, rejected 0 lines" "$out"
	n=$((n + 1))
done
# Entries are written many at once: one missing among stored ones is
# stored and counted alone, the others counted as already stored.
q "DELETE FROM jobstats_raw WHERE target = 'lustre-OST0000' AND lustre_job_id = '4242'"
fw ingest --format lustre-jobstats "$fx/jobstats-2.16.txt"
check_match "job_stats: one entry missing among stored ones: stored alone" \
	"stored 1 samples, rejected 0 lines \\(2 already stored" "$out"
check_eq "job_stats: its rows back, none twice" "14	1" \
	"$(q "SELECT COUNT(*), COUNT(DISTINCT ts) FROM jobstats_raw WHERE target = 'lustre-OST0000' AND lustre_job_id = '4242'")"
check_eq "job_stats 2.16: a quoted, escaped id" "1" \
	"$(q "SELECT COUNT(DISTINCT lustre_job_id) FROM jobstats_raw WHERE lustre_job_id = 'dd 500'")"

# ---- jobid_name mapping ----
sed 's/^jobstats:.*//' "$policy" >"$d/p2.yaml"
printf 'jobstats:\n  jobid_name: "%%e.%%u"\n' >>"$d/p2.yaml"
q "DELETE FROM jobstats_raw" >/dev/null
out=$("$fwdctl" --policy "$d/p2.yaml" ingest --format lustre-jobstats "$fx/jobstats-2.15.txt" 2>&1)
check_match "jobid_name %e.%u names no job" \
	"ignored 3 lines: job_stats ids naming no Slurm job under jobid_name '%e.%u'" "$out"
check_eq "jobid_name %e.%u: no job ids stored" 0 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE job_id IS NOT NULL")"
sed 's/^jobstats:.*//' "$policy" >"$d/p3.yaml"
printf 'jobstats:\n  jobid_name: "%%q"\n' >>"$d/p3.yaml"
out=$("$fwdctl" --policy "$d/p3.yaml" ingest --format lustre-jobstats "$fx/jobstats-2.15.txt" 2>&1)
check_match "jobid_name with an unknown code: refused" \
	"jobstats.jobid_name '%q': unknown format code" "$out"

# ---- bad input: file:line, nothing stored lost ----
before=$(q "SELECT COUNT(*) FROM jobstats_raw")
{
	sed -n 1,3p "$fx/jobstats-2.15.txt"
	echo '  snapshot_time:   yesterday secs.nsecs'
	sed -n 4,100p "$fx/jobstats-2.15.txt"
} >"$d/bad.txt"
fw ingest --format lustre-jobstats "$d/bad.txt"
check_eq "bad job_stats: exit 2" 2 "$rc"
check_match "bad job_stats: file:line" "bad.txt:[0-9]*: .*snapshot_time 'yesterday secs.nsecs' is not a time" "$err"
check_eq "bad job_stats: stored rows kept" "$before" \
	"$(q "SELECT COUNT(*) FROM jobstats_raw")"
printf 'lustre2,jobid=77,name=lfs-OST0001 jobstats_write_bytes=-5i 1700000000000000000\n' >"$d/bad.lp"
fw ingest --format influx "$d/bad.lp"
check_match "bad lustre2 job_stats: file:line" \
	"bad.lp:1: field 'jobstats_write_bytes': a cumulative counter must be a non-negative integer" "$err"

# ---- many rows: the multi-row statements (500, 64, 8, 1 rows) ----
awk 'BEGIN { for (p = 0; p < 617; p++) for (s = 0; s < 3; s++)
	printf "lustre2,name=bulk-OST%04d read_bytes=%di,write_bytes=%di,read_calls=%di %d\n",
		s, p * 1000 * (s + 1), p * 10, p, 1700100000 + p * 10 }' >"$d/bulk.lp"
fw ingest --format influx --precision s --batch 100000 "$d/bulk.lp"
check_eq "bulk: summary" "read 1851 lines, stored 1848 samples, rejected 0 lines (3 already stored or baselines, 0 ignored)" "$out"
check_eq "bulk: every delta row, with its values" \
	"1848	$((616 * 1000 * 6))	$((616 * 10 * 3))	$((616 * 3))	$((1848 * 10))" \
	"$(q "SELECT COUNT(*), SUM(read_bytes), SUM(write_bytes), SUM(read_ops), SUM(dt) FROM samples_raw WHERE name LIKE 'bulk-%'")"
check_eq "bulk: rollups sum to the raw rows" \
	"1848	$((616 * 1000 * 6))" \
	"$(q "SELECT SUM(samples), SUM(read_bytes) FROM rollups_minute WHERE name LIKE 'bulk-%'")"
check_eq "bulk: the baselines are the last values" \
	"3	$((1700100000 + 616 * 10))	$((616 * 1000 * 3))" \
	"$(q "SELECT COUNT(*), MAX(ts), MAX(v0) FROM counter_state WHERE name LIKE 'bulk-%' AND metric = 'read_bytes'")"
fw ingest --format influx --precision s "$d/bulk.lp"
check_eq "bulk: re-ingest stores nothing" "read 1851 lines, stored 0 samples, rejected 0 lines (1851 already stored or baselines, 0 ignored)" "$out"

# ---- a job's sums: its run time only, Data-on-MDT bytes are data ----
q "DELETE FROM jobstats_raw" >/dev/null
fw ingest --format lustre-jobstats "$fx/jobstats-2.15.txt"
# job 4242 ran from 1700000000 to 1700000650; an older job with the same
# id (a reinstalled controller) left statistics in 2020
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES (4242, 'ann', 'wrf', 'n[1-2]', 2,
   1700000000, 1700000650, 'COMPLETED', 0)"
q "INSERT INTO jobstats_raw (kind, target, lustre_job_id, job_id, ts, op,
   samples, unit, min_value, max_value, sum_value) VALUES
   ('ost', 'lustre-OST0009', '4242', 4242, 1600000000, 'write_bytes', 9, 'bytes', 1, 1, 999999999999),
   ('mdt', 'lustre-MDT0009', '4242', 4242, 1600000000, 'open', 99999, 'usecs', 1, 1, 1)"
fw profile rebuild
check_eq "history: rebuild exit 0" 0 "$rc"
check_eq "history: job 4242 from its own snapshots, DoM bytes as data" \
	"$((1073741824 + 524288))	$((3221225472 + 1048576))	jobstats	1096" \
	"$(q "SELECT read_bytes, write_bytes, source, mdops FROM job_io WHERE job_id = 4242")"

# ---- a real capture: lctl get_param on DDN EXAScaler (2.14.0_ddn) ----
# The 2.15+ layout (secs.nsecs, start/elapsed, sumsq, hist), quoted ids,
# and two jobid_name settings in one output: "SLURM_JOB%j:%u:%H" and,
# later, "SLURM_JOB%j".  Sums are computed from the file itself.
xo=$fx/lctl-jobstats-exascaler-ost.txt
xm=$fx/lctl-jobstats-exascaler-mdt.txt
sed 's/^jobstats:.*//' "$policy" >"$d/p4.yaml"
printf 'jobstats:\n  jobid_name: "SLURM_JOB%%j:%%u:%%H"\n' >>"$d/p4.yaml"
out=$("$fwdctl" --policy "$d/p4.yaml" ingest --format lustre-jobstats "$xo" 2>&1); rc=$?
check_eq "EXAScaler OST capture: exit 0" 0 "$rc"
check_match "EXAScaler OST capture: 16 entries" "stored 16 samples" "$out"
check_match "EXAScaler OST capture: the ids of the other setting reported" \
	"ignored 8 lines: job_stats ids naming no Slurm job under jobid_name 'SLURM_JOB%j:%u:%H' \\(first at line 155\\)" \
	"$out"
out=$("$fwdctl" --policy "$d/p4.yaml" ingest --format lustre-jobstats "$xm" 2>&1); rc=$?
check_eq "EXAScaler MDT capture: exit 0" 0 "$rc"
check_match "EXAScaler MDT capture: 12 entries of two MDTs" "stored 12 samples" "$out"
want=$(awk '/^- job_id:/ { id = $3; gsub(/"/, "", id) }
	/^  snapshot_time:/ { ts = int($2) }
	/^  write_bytes:/ { s = $0; sub(/.*samples: */, "", s); n = s + 0
		s = $0; sub(/.* sum: */, "", s); printf "%s\t%d\t%d\t%d\n", id, ts, n, s + 0 }' "$xo" | sort)
check_eq "EXAScaler capture: every OST write_bytes entry, as the file says" "$want" \
	"$(q "SELECT lustre_job_id, ts, samples, sum_value FROM jobstats_raw WHERE target = 'es01a-OST0001' AND op = 'write_bytes' ORDER BY lustre_job_id")"
check_eq "EXAScaler capture: job 10 under SLURM_JOB%j:%u:%H, 10.3 GiB in 861 writes" \
	"10	861	24576	16777216	11025514496" \
	"$(q "SELECT job_id, samples, min_value, max_value, sum_value FROM jobstats_raw WHERE lustre_job_id = 'SLURM_JOB10:0:es18kxe-co-client' AND op = 'write_bytes'")"
check_eq "EXAScaler capture: the ids of the other setting name no job" 0 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE target = 'es01a-OST0001' AND lustre_job_id NOT LIKE '%:%' AND job_id IS NOT NULL")"
check_eq "EXAScaler capture: MDT opens of fio, both MDTs" \
	"es01a-MDT0000	123
es02a-MDT0000	$(awk '/^mdt.es02a/ { on = 1 } on && /^- job_id:.*"fio:/ { f = 1 } on && f && /^  open:/ { s = $0; sub(/.*samples: */, "", s); print s + 0; exit }' "$xm")" \
	"$(q "SELECT target, samples FROM jobstats_raw WHERE lustre_job_id = 'fio:0:es-2-virt3-cosp' AND op = 'open' ORDER BY target")"
out=$("$fwdctl" --policy "$d/p4.yaml" ingest --format lustre-jobstats "$xo" 2>&1)
check_match "EXAScaler capture: re-ingest stores nothing" "stored 0 samples" "$out"

# ---- adversarial input: one bad entry or line costs only itself ----
# Lustre 2.12 to 2.15 print job ids unquoted (lprocfs_jobstats_seq_show:
# "- %-16s %s") and users name their processes: ids YAML cannot read.
now=$(date +%s)
{ echo "obdfilter.adv-OST0109.job_stats="
  echo "job_stats:"
  i=0
  for id in 'a: b.1001' 9001 '{x.1001' 9002 '[a.1001' 9003 '*ali.1001' 9004 \
	'%p.1001' 9005 '@at.1001' 9006 '- d.1001' 9007 "$(printf 'caf\351.1001')" 9008; do
	i=$((i + 1))
	printf -- '- job_id:          %s\n' "$id"
	printf '  snapshot_time:   %s\n' "$((now - 100 + i))"
	printf '  write_bytes:     { samples:           1, unit: bytes, min:     4096, max:     4096, sum:             4096 }\n'
  done
} >"$d/adv-ids.txt"
fw ingest --format lustre-jobstats --json "$d/adv-ids.txt"
check_eq "job_stats ids that are not plain YAML: exit 2" 2 "$rc"
check_match "job_stats ids that are not plain YAML: the 8 good entries stored" '"stored": 8' "$out"
check_match "job_stats ids that are not plain YAML: the 8 bad ones counted" '"rejected": 8' "$out"
check_match "job_stats ids that are not plain YAML: by reason" '"malformed": 8' "$out"
check_eq "job_stats ids that are not plain YAML: every good entry's row" \
	"9001 9002 9003 9004 9005 9006 9007 9008" \
	"$(q "SELECT lustre_job_id FROM jobstats_raw WHERE target = 'adv-OST0109' ORDER BY lustre_job_id" | tr '\n' ' ' | sed 's/ $//')"
fw ingest --format lustre-jobstats "$d/adv-ids.txt"
check_match "job_stats ids that are not plain YAML: each with its line" \
	"adv-ids.txt:3: adv-OST0109 job_stats: mapping values are not allowed" "$err"

# implausible values and times are refused, never stored
{ echo "obdfilter.adv-OST0010.job_stats="
  echo "job_stats:"
  printf -- '- job_id:          9101\n  snapshot_time:   %s\n' "$now"
  echo '  write_bytes:     { samples: 18446744073709551615, unit: bytes, min: 1, max: 1, sum: 1 }'
  printf -- '- job_id:          9102\n  snapshot_time:   99999999999999\n'
  echo '  write_bytes:     { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }'
  printf -- '- job_id:          9103\n  snapshot_time:   32503680000.000000000 secs.nsecs\n'
  echo '  write_bytes:     { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }'
  printf -- '- job_id:          9104\n  snapshot_time:   %s.000000000 secs.nsecs\n  start_time:      %s.000000000 secs.nsecs\n' "$now" "$((now + 50))"
  echo '  write_bytes:     { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }'
  printf -- '- job_id:          9105\n  snapshot_time:   %s\n' "$now"
  echo '  write_bytes:     { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }'
} >"$d/adv-values.txt"
fw ingest --format lustre-jobstats --json "$d/adv-values.txt"
check_eq "job_stats implausible values: exit 2" 2 "$rc"
check_match "job_stats implausible values: by reason" \
	'"value out of range": 1,.*"time out of range": 2,.*"end before start": 1' "$(echo "$out" | tr -d '\n')"
check_eq "job_stats implausible values: only the plausible entry stored" "9105" \
	"$(q "SELECT DISTINCT lustre_job_id FROM jobstats_raw WHERE target = 'adv-OST0010'")"
check_eq "job_stats implausible values: no snapshot in the future" 0 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE ts > UNIX_TIMESTAMP() + 86400")"

# one influx tag that is not UTF-8: that line refused (exit 2, not 3),
# the lines after it read and stored, the counts true
{ i=0
  while [ $i -lt 150 ]; do
	i=$((i + 1))
	if [ $i -eq 50 ]; then
		printf 'fwd,node=adv\377 read_bytes=%di %d000000000\n' "$i" "$((now - 1000 + i))"
	else
		printf 'fwd,node=adv%d queue_len=%di %d000000000\n' "$((i % 3))" "$i" "$((now - 1000 + i))"
	fi
  done
} >"$d/adv-utf8.lp"
fw ingest --format influx "$d/adv-utf8.lp"
check_eq "influx tag not UTF-8: exit 2, not 3" 2 "$rc"
check_eq "influx tag not UTF-8: the summary is true" \
	"read 150 lines, stored 149 samples, rejected 1 lines" "$out"
check_match "influx tag not UTF-8: the line and reason" \
	"adv-utf8.lp:50: tag node is not valid UTF-8 \\(byte 0xff at offset 3\\)" "$err"
check_match "influx tag not UTF-8: counted by reason" "rejected 1 lines: 1 not valid UTF-8" "$err"
check_eq "influx tag not UTF-8: the 149 others stored" 149 \
	"$(q "SELECT COUNT(*) FROM samples_raw WHERE name LIKE 'adv%'")"

tap_done
