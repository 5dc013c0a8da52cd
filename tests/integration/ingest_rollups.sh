#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-minute rollups kept by addition (monitor/ingest_rollup.c): whatever
# the batches, re-ingests, overlapping files, two ingests at once or a
# prune in between, rollups_minute holds exactly the aggregate of the raw
# rows of each minute (the numbers the old recomputation gave), and
# rollups_15min exactly the aggregate of the minutes of each quarter hour
# (also after a prune of the rollups, and after migration 11 filled it).
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

fw db init
check_eq "schema created" 0 "$rc"

# 30 series (fwd, ost and mdt) with counters every 7 s, so minutes are
# split between batches; a queue length (halves: exact sums) on two
# lines in three.  gen FROM TO START: points FROM..TO-1.
gen() {
	awk -v from="$1" -v to="$2" -v t0="$3" 'BEGIN {
		for (p = from; p < to; p++) for (s = 0; s < 30; s++) {
			v = p * (s + 1); k = s % 3
			m = k == 0 ? "fwd,node=f" : k == 1 ? "ost,target=o" : "mdt,target=m"
			q = p % 3 ? sprintf(",queue_len=%.1f", (p * 7 + s) % 23 / 2) : ""
			printf "%s%02d read_bytes=%di,write_bytes=%di,read_ops=%di,md_ops=%di%s %d000000000\n",
				m, s, v * 4096, v * 2048 + (p % 5) * s, v * 3, v % 17 + p, q, t0 + p * 7
		}
	}'
}

# The rollups as stored, and as the raw rows give them.
ROLLUP_COLS="kind, name, minute, samples, read_bytes, write_bytes, read_ops, write_ops, md_ops, read_bps_max, write_bps_max, queue_len_avg, queue_len_max, queue_len_sum, queue_len_samples"
stored() {
	q "SELECT $ROLLUP_COLS FROM rollups_minute ORDER BY kind, name, minute"
}
from_raw() {
	q "SELECT kind, name, ts - MOD(ts, 60) AS m, COUNT(*), COALESCE(SUM(read_bytes), 0), COALESCE(SUM(write_bytes), 0), COALESCE(SUM(read_ops), 0), COALESCE(SUM(write_ops), 0), COALESCE(SUM(md_ops), 0), MAX(read_bytes / NULLIF(dt, 0)), MAX(write_bytes / NULLIF(dt, 0)), AVG(queue_len), MAX(queue_len), SUM(queue_len), COUNT(queue_len) FROM samples_raw GROUP BY kind, name, m ORDER BY kind, name, m"
}
clear() {
	q "DELETE FROM samples_raw; DELETE FROM rollups_minute; DELETE FROM rollups_15min; DELETE FROM counter_state"
}
# The quarter hours as stored, and as the minute rows give them (doubles
# to 6 decimals: sums of the same numbers in another order).
Q_COLS="samples, read_bytes, write_bytes, read_ops, write_ops, md_ops, read_bps_max, write_bps_max"
quarters() {
	q "SELECT kind, name, minute, $Q_COLS, ROUND(queue_len_avg, 6), queue_len_max, ROUND(queue_len_sum, 6), queue_len_samples FROM rollups_15min ORDER BY kind, name, minute"
}
quarters_from_minutes() {
	q "SELECT kind, name, minute DIV 900 * 900 AS m, SUM(samples), SUM(read_bytes), SUM(write_bytes), SUM(read_ops), SUM(write_ops), SUM(md_ops), MAX(read_bps_max), MAX(write_bps_max), ROUND(SUM(queue_len_sum) / NULLIF(SUM(queue_len_samples), 0), 6), MAX(queue_len_max), ROUND(SUM(queue_len_sum), 6), SUM(queue_len_samples) FROM rollups_minute GROUP BY kind, name, m ORDER BY kind, name, m"
}
check_quarters() {
	check_eq "$1: rollups_15min = the sums of the minutes" "$(quarters_from_minutes)" "$(quarters)"
}

t0=1472292803 # 23 s into a minute
gen 0 200 $t0 >"$d/a.lp"
gen 0 300 $t0 >"$d/b.lp"

# ---- many small batches: minutes added to from several transactions ----
fw ingest --format influx --batch 7 "$d/a.lp"
check_eq "batches of 7: summary" \
	"read 6000 lines, stored 5970 samples, rejected 0 lines (30 already stored or baselines, 0 ignored)" "$out"
check_eq "batches of 7: rollups are the raw rows' aggregate" "$(from_raw)" "$(stored)"
check_quarters "batches of 7"
# 24 minutes x 30 series; 199 deltas a series, 133 of them with a queue
# length; read_bytes grows by 4096 x (s + 1) a point: 199 x 465 x 4096.
check_eq "batches of 7: minutes, samples, queue samples and sums" \
	"720	5970	3990	379023360" \
	"$(q "SELECT COUNT(*), SUM(samples), SUM(queue_len_samples), SUM(read_bytes) FROM rollups_minute")"
# f00 from 1472292900: points 14..22; md_ops 28 30 32 17 19 ... 27 (a
# restart at 17: that delta is 17); queue lengths of points 14 16 17 19
# 20 22: 3 10 2 9 1 8; 4096 bytes in 7 s.
check_eq "batches of 7: one minute's numbers" \
	"9	36864	33	33	6	5.5	10	585.1428571428571" \
	"$(q "SELECT samples, read_bytes, md_ops, queue_len_sum, queue_len_samples, queue_len_avg, queue_len_max, read_bps_max FROM rollups_minute WHERE name = 'f00' AND minute = 1472292900")"
ref_a=$(stored)

# ---- re-ingest: nothing stored twice, nothing added twice ----
fw ingest --format influx --batch 7 "$d/a.lp"
check_eq "re-ingest: nothing stored" \
	"read 6000 lines, stored 0 samples, rejected 0 lines (6000 already stored or baselines, 0 ignored)" "$out"
check_eq "re-ingest: rollups unchanged" "$ref_a" "$(stored)"
check_quarters "re-ingest"

# Baselines lost (counter_state emptied): the same deltas again, now
# written over stored rows; the rollups stay those of one ingest.
q "DELETE FROM counter_state"
fw ingest --format influx "$d/a.lp"
check_eq "re-ingest without baselines: rows already stored" \
	"read 6000 lines, stored 5970 samples, rejected 0 lines (30 already stored or baselines, 0 ignored)" "$out"
check_eq "re-ingest without baselines: rollups unchanged" "$ref_a" "$(stored)"
check_quarters "re-ingest without baselines"
check_eq "re-ingest without baselines: no row twice" 5970 \
	"$(q "SELECT COUNT(*) FROM samples_raw")"

# ---- an overlapping longer file: the new part added, the rest kept ----
fw ingest --format influx "$d/b.lp"
check_eq "overlapping file: summary" \
	"read 9000 lines, stored 3000 samples, rejected 0 lines (6000 already stored or baselines, 0 ignored)" "$out"
check_eq "overlapping file: rollups are the raw rows' aggregate" "$(from_raw)" "$(stored)"
check_quarters "overlapping file"
after_overlap=$(stored)
clear
fw ingest --format influx "$d/b.lp"
ref_b=$(stored)
check_eq "the longer file alone: the same rollups" "$ref_b" "$after_overlap"

# ---- two ingests at once of overlapping files ----
# In one transaction each (--batch 100000), both find no baseline and
# write the same deltas: the second waits for the first's rows, finds
# them stored and recomputes instead of adding.  In batches of 300 they
# interleave.
for batch in 100000 100000 300 300; do
	clear
	"$fwdctl" --policy "$policy" ingest --format influx --batch $batch "$d/a.lp" >"$d/c1" 2>&1 &
	p1=$!
	"$fwdctl" --policy "$policy" ingest --format influx --batch $batch "$d/b.lp" >"$d/c2" 2>&1 &
	p2=$!
	wait $p1
	r1=$?
	wait $p2
	r2=$?
	check_eq "concurrent ingests, batch $batch: both exit 0" "0 0" "$r1 $r2"
	check_eq "concurrent ingests, batch $batch: rows of one ingest" 8970 \
		"$(q "SELECT COUNT(*) FROM samples_raw")"
	check_eq "concurrent ingests, batch $batch: exactly the rollups of one ingest" \
		"$ref_b" "$(stored)"
	check_eq "concurrent ingests, batch $batch: rollups are the raw rows' aggregate" \
		"$(from_raw)" "$(stored)"
	check_quarters "concurrent ingests, batch $batch"
done

# ---- Telegraf lustre2_lctl: an OST's calls and bytes on two lines ----
clear
awk 'BEGIN { for (p = 0; p < 30; p++) {
	t = 1472292807 + p * 10
	printf "lustre2_lctl_ost,host=oss1,volume=OST0009 stats_read_bytes_samples=%du %d000000000\n", p * 3, t
	printf "lustre2_lctl_ost,host=oss1,unit=bytes,volume=OST0009 stats_read_bytes_max=4096u,stats_read_bytes_min=4096u,stats_read_bytes_sum=%du,stats_read_bytes_sumsq=0u %d000000000\n", p * 3 * 4096, t
} }' >"$d/lctl.lp"
fw ingest --format influx "$d/lctl.lp"
check_eq "lctl: one raw row a time, with both counters" "29	29	29	87	356352" \
	"$(q "SELECT COUNT(*), COUNT(read_ops), COUNT(read_bytes), SUM(read_ops), SUM(read_bytes) FROM samples_raw WHERE name = 'OST0009'")"
check_eq "lctl: rollups are the raw rows' aggregate" "$(from_raw)" "$(stored)"
check_quarters "lctl"

# ---- LWFS (beacon-lwfs): histograms and the forwarders' raw rows ----
# 6 forwarders, a line of each histogram and the queue length every 25 s
genb() {
	awk -v rounds="$1" 'BEGIN {
		split("Meta exe,Meta wait,Read exe,Read wait,Write exe,Write wait", st, ",")
		for (r = 0; r < rounds; r++) {
			t = 1472292813 + r * 25
			iso = strftime("%Y-%m-%dT%H:%M:%SZ", t, 1)
			for (f = 1; f <= 6; f++) {
				for (k = 1; k <= 6; k++) {
					printf "10.0.0.%d [x]  [Trace]: %s:", f, st[k]
					for (b = 0; b < 8; b++) printf " %d", r * (8 - b) * k + f * b
					printf " %s\n", iso
				}
				printf "10.0.0.%d [x]  [Trace]: queue length: %d %s\n", f, (r * 7 + f) % 16, iso
			}
		}
	}'
}
HIST_COLS="kind, name, minute, op, phase, b0, b1, b2, b3, b4, b5, b6, b7"
hist_stored() {
	q "SELECT $HIST_COLS FROM rollups_hist_minute ORDER BY kind, name, minute, op, phase"
}
hist_from_raw() {
	q "SELECT kind, name, ts - MOD(ts, 60) AS m, op, phase, SUM(b0), SUM(b1), SUM(b2), SUM(b3), SUM(b4), SUM(b5), SUM(b6), SUM(b7) FROM samples_hist GROUP BY kind, name, m, op, phase ORDER BY kind, name, m, op, phase"
}
clear
q "DELETE FROM samples_hist; DELETE FROM rollups_hist_minute"
genb 40 >"$d/b.log"
fw ingest --format beacon-lwfs --batch 13 "$d/b.log"
check_eq "beacon, batches of 13: summary" \
	"read 1680 lines, stored 1644 samples, rejected 0 lines (36 already stored or baselines, 0 ignored)" "$out"
check_eq "beacon: histogram rollups are the raw rows' aggregate" "$(hist_from_raw)" "$(hist_stored)"
check_eq "beacon: forwarder rollups are the raw rows' aggregate" "$(from_raw)" "$(stored)"
check_quarters "beacon"
# Read exe (the 3rd histogram) of 10.0.0.1 from 1472292840: rounds 2
# and 3 (at 50 and 75 s); b0 grows by 8 x 3 a round; the raw row's
# read_ops is the sum of the deltas, (8 + 7 + ... + 1) x 3 = 108 a round;
# queue lengths 15 and 6
check_eq "beacon: one minute's numbers" "48	216	2	10.5" \
	"$(q "SELECT h.b0, r.read_ops, r.samples, r.queue_len_avg FROM rollups_hist_minute h JOIN rollups_minute r ON r.kind = h.kind AND r.name = h.name AND r.minute = h.minute WHERE h.name = '10.0.0.1' AND h.minute = 1472292840 AND h.op = 'read' AND h.phase = 'exe'")"
ref_h=$(hist_stored)
ref_r=$(stored)
q "DELETE FROM counter_state"
fw ingest --format beacon-lwfs "$d/b.log"
check_eq "beacon re-ingest without baselines: histogram rollups unchanged" "$ref_h" "$(hist_stored)"
check_eq "beacon re-ingest without baselines: forwarder rollups unchanged" "$ref_r" "$(stored)"
clear
q "DELETE FROM samples_hist; DELETE FROM rollups_hist_minute"
"$fwdctl" --policy "$policy" ingest --format beacon-lwfs --batch 100000 "$d/b.log" >"$d/c1" 2>&1 &
p1=$!
"$fwdctl" --policy "$policy" ingest --format beacon-lwfs --batch 100000 "$d/b.log" >"$d/c2" 2>&1 &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
check_eq "beacon, two ingests at once: both exit 0" "0 0" "$r1 $r2"
check_eq "beacon, two ingests at once: the histogram rollups of one" "$ref_h" "$(hist_stored)"
check_eq "beacon, two ingests at once: the forwarder rollups of one" "$ref_r" "$(stored)"
check_quarters "beacon, two ingests at once"

# ---- a prune removed raw rows of minutes that keep their rollups ----
# Recent data (a prune keeps 2 days of raw rows, all rollups), baselines
# lost, the file ingested again: the pruned minutes are recomputed from
# the rows now present, never added to.
now=$(date +%s)
t1=$((now - 3 * 86400 - 3 * 86400 % 60 + 23))
gen 0 200 $t1 >"$d/old.lp"
# 7 s steps over 3 days: spread the points out (every 1200 s).
awk -v t1="$t1" '{ n = split($0, f, " "); ts = (f[n] / 1000000000 - t1) / 7 * 1200 + t1; printf "%s %s %d000000000\n", f[1], f[2], ts }' \
	"$d/old.lp" >"$d/spread.lp"
clear
fw ingest --format influx "$d/spread.lp"
check_eq "spread file: stored" 5970 "$(q "SELECT COUNT(*) FROM samples_raw")"
before=$(stored)
cat >"$d/policy-prune.yaml" <<EOF
$(cat "$policy")
retention:
  raw_samples: 2d
  rollups: 400d
EOF
"$fwdctl" --policy "$d/policy-prune.yaml" db prune >"$d/prune" 2>&1
check_eq "prune: exit 0" 0 "$?"
# Points 1..71 are more than 2 days old: 128 points x 30 series stay.
check_eq "prune: the raw rows of the first 71 points are gone" 3840 \
	"$(q "SELECT COUNT(*) FROM samples_raw")"
check_eq "prune: the horizon is the cutoff's next minute" 1 \
	"$(q "SELECT before_ts % 60 = 0 AND before_ts BETWEEN $now - 2 * 86400 AND $now - 2 * 86400 + 120 FROM ingest_horizon")"
q "DELETE FROM counter_state"
fw ingest --format influx "$d/spread.lp"
check_eq "after the prune: every row again" 5970 "$(q "SELECT COUNT(*) FROM samples_raw")"
check_eq "after the prune: rollups not added to twice" "$before" "$(stored)"
check_quarters "after the raw prune"

# ---- a prune of the rollups: whole quarter hours go from both tables ----
cat >"$d/policy-prune-rollups.yaml" <<EOF
$(cat "$policy")
retention:
  raw_samples: 2d
  rollups: 2d
EOF
minutes_before=$(q "SELECT COUNT(*) FROM rollups_minute")
"$fwdctl" --policy "$d/policy-prune-rollups.yaml" --json db prune >"$d/prune" 2>&1
check_eq "rollups prune: exit 0" 0 "$?"
cut=$(jq -r '[.. | objects | select(.table? == "rollups_15min") | .cutoff][0]' "$d/prune")
check_eq "rollups prune: both tables cut at the same quarter hour" \
	"$cut 0" "$(jq -r '[.. | objects | select(.table? == "rollups_minute") | .cutoff][0]' "$d/prune") $((cut % 900))"
check_eq "rollups prune: the minutes before the cutoff are gone, later ones kept" "0	1" \
	"$(q "SELECT (SELECT COUNT(*) FROM rollups_minute WHERE minute < $cut) + (SELECT COUNT(*) FROM rollups_15min WHERE minute < $cut), (SELECT COUNT(*) FROM rollups_minute) BETWEEN 1 AND $minutes_before - 1")"
check_quarters "after a rollups prune"
q "DELETE FROM counter_state"
fw ingest --format influx "$d/spread.lp"
check_eq "rollups prune, then the file again: exit 0" 0 "$rc"
check_eq "rollups prune, then the file again: rollups are the raw rows' aggregate" "$(from_raw)" "$(stored)"
check_quarters "after a rollups prune and a re-ingest"

# ---- migration 11 fills rollups_15min from the minutes stored ----
q "DROP TABLE rollups_15min; DELETE FROM schema_version WHERE version >= 11"
fw db migrate
check_eq "migration 11: exit 0" 0 "$rc"
check_eq "migration 11: a quarter hour row per quarter hour with minutes" \
	"$(q "SELECT COUNT(DISTINCT kind, name, minute DIV 900) FROM rollups_minute")" \
	"$(q "SELECT COUNT(*) FROM rollups_15min")"
check_quarters "migration 11"

# ---- LOAD DATA LOCAL, or INSERTs where the server refuses LOCAL ----
# The rows go to the server as LOAD DATA text where it allows LOCAL, as
# multi-row INSERTs where it does not (local_infile = OFF): the same rows
# and rollups either way, to the last bit of a double and byte of a name
# (f, a backslash, x, an e acute: 66 5C 78 C3A9), NULL where a line has
# no value (the first line of a series: its queue length only).
printf '%s\n' \
	'fwd,node=f\x'"$(printf '\303\251')"' read_bytes=100i,queue_len=0.1 1472292803000000000' \
	'fwd,node=f\x'"$(printf '\303\251')"' read_bytes=300i,queue_len=0.3 1472292810000000000' \
	'fwd,node=f\x'"$(printf '\303\251')"' read_bytes=700i,write_bytes=5i 1472292817000000000' \
	'fwd,node=f\x'"$(printf '\303\251')"' read_bytes=900i,write_bytes=9i,queue_len=2.7 1472292824000000000' >"$d/odd.lp"
RAW_COLS="kind, HEX(name), ts, dt, read_bytes, write_bytes, read_ops, write_ops, md_ops, queue_len"
raw_rows() {
	q "SELECT $RAW_COLS FROM samples_raw ORDER BY kind, name, ts"
}
com_load() {
	q "SHOW GLOBAL STATUS LIKE 'Com_load'" | cut -f2
}
cat "$d/b.lp" "$d/odd.lp" >"$d/both.lp"
clear
loads=$(com_load)
fw ingest --format influx "$d/both.lp"
check_eq "LOAD DATA LOCAL: exit 0" 0 "$rc"
check_eq "LOAD DATA LOCAL: the rows were sent as LOAD DATA" 1 \
	"$(( $(com_load) > loads ))"
check_eq "LOAD DATA LOCAL: the name, NULLs and doubles as sent" \
	"fwd	665C78C3A9	1472292803	NULL	NULL	NULL	NULL	NULL	NULL	0.1
fwd	665C78C3A9	1472292810	7	200	NULL	NULL	NULL	NULL	0.3
fwd	665C78C3A9	1472292817	7	400	NULL	NULL	NULL	NULL	NULL
fwd	665C78C3A9	1472292824	7	200	4	NULL	NULL	NULL	2.7" \
	"$(q "SELECT $RAW_COLS FROM samples_raw WHERE name LIKE 'f%' AND name NOT LIKE 'f0%' AND name NOT LIKE 'f1%' AND name NOT LIKE 'f2%' ORDER BY ts")"
via_load_raw=$(raw_rows)
via_load_rollups=$(stored)
check_eq "LOAD DATA LOCAL: rollups are the raw rows' aggregate" "$(from_raw)" "$via_load_rollups"
check_quarters "LOAD DATA LOCAL"
clear
q "SET GLOBAL local_infile = 0"
fw ingest --format influx "$d/both.lp"
q "SET GLOBAL local_infile = 1"
check_eq "LOCAL refused: exit 0, nothing said" "0 " "$rc $err"
check_eq "LOCAL refused: the same rows, written by INSERTs" "$via_load_raw" "$(raw_rows)"
check_eq "LOCAL refused: the same rollups" "$via_load_rollups" "$(stored)"
check_quarters "LOCAL refused"

tap_done
