#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fwdctl history run, the history loop, against a private MariaDB:
# finished jobs become summaries from the best source (job_stats in their
# run time, else the samples of the forwarders they held), with k and the
# achieved bandwidth; profiles fill in (bandwidth_by_forwarders);
# idempotent; late statistics; stronger sources kept; the lock; the
# sources shown by profile show --job.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start
fx=$top_srcdir/tests/fixtures/lustre

fw db init
check_eq "schema created" 0 "$rc"
# the jobs below ran in 2023: keep them in the profiles' history
printf 'history:\n  max_age: 36500d\n' >>"$policy"

# three runs of ann's wrf on 2 nodes, between 1700000000 and 1700003000
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (4242, 'ann', 'wrf', 'n[1-2]', 2, 1700000000, 1700000650, 'COMPLETED', 0),
   (4243, 'ann', 'wrf', 'n[1-2]', 2, 1700001000, 1700001100, 'COMPLETED', 0),
   (4244, 'ann', 'wrf', 'n[1-2]', 2, 1700002000, 1700002100, 'COMPLETED', 0)"
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
   acquired_at, released_at) VALUES
   (4242, 'fwd01', 'n1', 1, 'scale', 1700000000, 1700000650),
   (4242, 'fwd02', 'n2', 1, 'scale', 1700000000, 1700000650),
   (4243, 'fwd03', 'n[1-2]', 2, 'default', 1700001000, 1700001100)"
# job 4242: Lustre job_stats (2.15 format); job 4243: only the samples of
# the forwarder it held; job 4244: nothing yet
fw ingest --format lustre-jobstats "$fx/jobstats-2.15.txt"
check_eq "job_stats ingested" 0 "$rc"
printf '%s\n' \
	"fwd,node=fwd03 read_bytes=0i,write_bytes=0i,md_ops=0i 1700001000000000000" \
	"fwd,node=fwd03 read_bytes=100000000i,write_bytes=400000000i,md_ops=50i 1700001050000000000" \
	"fwd,node=fwd03 read_bytes=100000000i,write_bytes=900000000i,md_ops=60i 1700001100000000000" \
	"fwd,node=fwd03 read_bytes=100000000i,write_bytes=990000000i,md_ops=60i 1700001150000000000" >"$d/fwd.lp"
fw ingest --format influx "$d/fwd.lp"
check_eq "forwarder samples ingested" 0 "$rc"

fw history run --now 1700003000
check_eq "run: exit 0" 0 "$rc"
check_eq "run: counts" \
	"examined 3 finished jobs: 1 summaries from job_stats, 1 from forwarder samples, 0 kept (traces, Darshan), 0 unchanged, 1 without statistics; 1 profiles updated" "$out"
check_eq "job 4242 from job_stats: volumes, metadata, k, achieved bandwidth" \
	"jobstats	$((1073741824 + 524288))	$((3221225472 + 1048576))	1096	2	$(((1073741824 + 524288 + 3221225472 + 1048576) / 650))	650" \
	"$(q "SELECT source, read_bytes, write_bytes, mdops, forwarders_held, FLOOR(bandwidth_achieved_bps), runtime FROM job_io WHERE job_id = 4242")"
check_eq "job 4243 from its forwarder's samples during the run" \
	"forwarders	100000000	900000000	60	1	10000000" \
	"$(q "SELECT source, read_bytes, write_bytes, mdops, forwarders_held, ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id = 4243")"
check_eq "job 4244: no summary" 0 "$(q "SELECT COUNT(*) FROM job_io WHERE job_id = 4244")"
check_eq "profile of ann/wrf from 2 runs, bandwidth by forwarders filled" \
	"2	1" \
	"$(q "SELECT runs, JSON_LENGTH(bandwidth_by_forwarders) > 0 FROM profiles WHERE user = 'ann' AND name = 'wrf'")"
check_match "bandwidth_by_forwarders has k = 2 from job 4242" '"2"' \
	"$(q "SELECT bandwidth_by_forwarders FROM profiles WHERE user = 'ann' AND name = 'wrf'")"
before=$(q "SELECT job_id, updated_at, profiled_at FROM job_io ORDER BY job_id")
prof=$(q "SELECT runs, updated_at FROM profiles")

fw history run --now 1700003000
check_eq "second run: nothing changes" \
	"examined 3 finished jobs: 1 summaries from job_stats, 1 from forwarder samples, 0 kept (traces, Darshan), 2 unchanged, 1 without statistics; 0 profiles updated" "$out"
check_eq "second run: summaries untouched" "$before" \
	"$(q "SELECT job_id, updated_at, profiled_at FROM job_io ORDER BY job_id")"
check_eq "second run: profile untouched" "$prof" "$(q "SELECT runs, updated_at FROM profiles")"

# late statistics: job_stats of 4243 arrive after the first summary
printf 'lustre2,host=oss1,jobid=4243,name=lustre-OST0001 jobstats_read_bytes=2000i,jobstats_read_calls=2i,jobstats_write_bytes=8000000i,jobstats_write_calls=8i 1700001101000000000\n' >"$d/late.lp"
fw ingest --format influx "$d/late.lp"
fw history run --now 1700003005
check_eq "late job_stats replace the forwarder samples" \
	"jobstats	2000	8000000	1" \
	"$(q "SELECT source, read_bytes, write_bytes, forwarders_held FROM job_io WHERE job_id = 4243")"
check_match "and the profile is recomputed" "1 profiles updated" "$out"

# a stronger source is never replaced
q "UPDATE job_io SET source = 'traces', read_bytes = 7 WHERE job_id = 4242"
fw history run --now 1700003010
check_eq "a traces summary is kept" "traces	7" \
	"$(q "SELECT source, read_bytes FROM job_io WHERE job_id = 4242")"

# outside the lookback nothing is looked at
fw history run --now $((1700003000 + 8 * 86400))
check_match "after the lookback: no job examined" "^examined 0 finished jobs" "$out"

# profile show --job says where each figure comes from
fw profile show --job 4244 --json
check_match "profile show --job: the runs and their sources" \
	'"job_id": 4243,.*"source": "jobstats"' "$(printf '%s' "$out" | tr -d '\n')"
fw profile show --job 4244
check_match "profile show --job (text): a run's source and k" \
	"job 4242 +traces .* k=2" "$out"

# ---- Darshan (darshan-parser output, tests/fixtures/darshan) ----
dx=$top_srcdir/tests/fixtures/darshan
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (4245, 'ann', 'wrf', 'n[1-2]', 2, 1700004000, 1700004400, 'COMPLETED', 0)"
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
   acquired_at, released_at) VALUES
   (4245, 'fwd01', 'n1', 1, 'scale', 1700004000, 1700004400),
   (4245, 'fwd02', 'n1', 1, 'scale', 1700004000, 1700004400),
   (4245, 'fwd03', 'n2', 1, 'scale', 1700004000, 1700004400)"
fw ingest --format darshan "$dx/darshan-total-perf.txt" "$dx/darshan-base.txt"
check_eq "darshan: exit 0" 0 "$rc"
check_match "darshan: summary" "read 2 files, stored 2 job summaries, rejected 0 files" "$out"
check_eq "darshan --total --perf: job 4245, a shared file (N-1), k from the ledger" \
	"darshan	1073741824	4294967296	64	N-1	256	3	400	2" \
	"$(q "SELECT source, read_bytes, write_bytes, procs, io_mode, mdops, forwarders_held, runtime, io_nodes FROM job_io WHERE job_id = 4245")"
check_eq "darshan per-record dump: job 4246, a file per process (N-N)" \
	"darshan	0	1073741824	4	N-N	12	0	120" \
	"$(q "SELECT source, read_bytes, write_bytes, procs, io_mode, mdops, forwarders_held, runtime FROM job_io WHERE job_id = 4246")"
before=$(q "SELECT job_id, updated_at, read_bytes FROM job_io ORDER BY job_id")
fw ingest --format darshan "$dx/darshan-total-perf.txt"
check_eq "darshan: re-ingest changes nothing" "$before" \
	"$(q "SELECT job_id, updated_at, read_bytes FROM job_io ORDER BY job_id")"
sed 's/^total_POSIX_BYTES_WRITTEN: .*/total_POSIX_BYTES_WRITTEN: lots/' \
	"$dx/darshan-total-perf.txt" >"$d/bad-darshan.txt"
fw ingest --format darshan "$d/bad-darshan.txt"
check_eq "darshan, bad counter: exit 2" 2 "$rc"
check_match "darshan, bad counter: file:line" \
	"bad-darshan.txt:[0-9]+: not a number: 'lots'" "$err"
check_eq "darshan, bad counter: stored summaries kept" "$before" \
	"$(q "SELECT job_id, updated_at, read_bytes FROM job_io ORDER BY job_id")"
printf 'this is not darshan output\n' >"$d/not.txt"
fw ingest --format darshan "$d/not.txt"
check_match "darshan, other text: file:line" "not.txt:1: not darshan-parser output" "$err"
sed 's/^# jobid: .*/# jobid: 4242/' "$dx/darshan-base.txt" >"$d/reused.txt"
fw ingest --format darshan "$d/reused.txt"
check_match "darshan, a reused job id: refused" \
	"reused.txt: the log's run \(1700005000 to 1700005119\) is not that of job 4242" "$err"
fw history run --now 1700005000
check_match "history run after Darshan: the summary kept, the profile recomputed" \
	"2 kept \(traces, Darshan\).*1 profiles updated" "$out"
check_eq "the profile of ann/wrf now has 3 runs (4244 has no statistics)" 3 \
	"$(q "SELECT runs FROM profiles WHERE user = 'ann' AND name = 'wrf'")"

# A real capture: `darshan-parser` of NAMD on TACC Frontera (log format
# 3.21, tests/fixtures/darshan/README.md).  The figures are computed
# from the file: bytes and operations of POSIX and STDIO records, the
# metadata counters fwdalloc counts (-1: not monitored).
nx=$dx/frontera-namd2.txt
fw ingest --format darshan "$nx"
check_match "darshan, Frontera NAMD capture: stored" "stored 1 job summaries, rejected 0 files" "$out"
want=$(awk -F'\t' '
	/^# nprocs: / { np = $0; sub(/.*: /, "", np) }
	/^# run time: / { rt = $0; sub(/.*: /, "", rt) }
	($1 == "POSIX" || $1 == "STDIO") && $5 >= 0 {
		c = $4; sub(/^(POSIX|STDIO)_/, "", c)
		if (c == "BYTES_READ") rb += $5
		if (c == "BYTES_WRITTEN") wb += $5
		if (c == "OPENS" || c == "STATS" || c == "FSYNCS" || c == "FDSYNCS" ||
		    c == "RENAME_SOURCES" || c == "FLUSHES") md += $5 }
	END { printf "darshan\t%d\t%d\t%d\t%d\t%d\n", rb, wb, np, md, rt }' "$nx")
check_eq "darshan, Frontera NAMD capture: job 2135028's bytes, processes, metadata, run time" \
	"$want" \
	"$(q "SELECT source, read_bytes, write_bytes, procs, mdops, runtime FROM job_io WHERE job_id = 2135028")"
check_eq "darshan, Frontera NAMD capture: 6.0 GiB written, 32 processes (checked by hand)" \
	"6451205603	32" "$(q "SELECT write_bytes, procs FROM job_io WHERE job_id = 2135028")"

# ---- Slurm accounting (sacct --parsable2, tests/fixtures/slurm) ----
sx=$top_srcdir/tests/fixtures/slurm
out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct "$sx/sacct-parsable2.txt" 2>"$d/e"); rc=$?
check_eq "sacct: exit 0" 0 "$rc"
check_eq "sacct: summary" \
	"read 11 lines: 3 finished jobs (3 new), 2 summaries from fs/lustre usage, 1 profiles updated" "$out"
check_match "sacct: what was not used, by kind" \
	"ignored: 1 jobs that never started, 0 still running, 1 array or heterogeneous job components" "$(cat "$d/e")"
check_eq "sacct: the jobs rows (times in UTC, state without 'by')" \
	"5001	ann	wrf	2	1699610400	1699611600	COMPLETED
5002	ann	wrf	2	1699696800	1699697400	FAILED
5005	ann	wrf	2	1699786800	1699788600	CANCELLED" \
	"$(q "SELECT job_id, user, name, node_count, start_at, end_at, state FROM jobs WHERE job_id BETWEEN 5000 AND 5999 ORDER BY job_id")"
check_eq "sacct: fs/lustre of the steps summed (raw, and 1.50G / 2G)" \
	"5001	sacct	1074790400	4294967296	1200
5005	sacct	1610612736	2147483648	1800" \
	"$(q "SELECT job_id, source, read_bytes, write_bytes, runtime FROM job_io WHERE job_id BETWEEN 5000 AND 5999 ORDER BY job_id")"
before=$(q "SELECT COUNT(*), SUM(updated_at) FROM job_io")
out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct "$sx/sacct-parsable2.txt" 2>&1)
check_match "sacct: re-ingest adds no job" "3 finished jobs \\(0 new\\)" "$out"
check_eq "sacct: re-ingest changes no summary" "$before" "$(q "SELECT COUNT(*), SUM(updated_at) FROM job_io")"
{ sed -n 1,2p "$sx/sacct-parsable2.txt"; echo '5009|x|ann'; } >"$d/bad-sacct.txt"
out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct "$d/bad-sacct.txt" 2>&1); rc=$?
check_eq "sacct, short line: exit 2" 2 "$rc"
check_match "sacct, short line: file:line" "bad-sacct.txt:3: 3 fields, the header has 12" "$out"
check_eq "sacct, short line: stored summaries kept" "$before" "$(q "SELECT COUNT(*), SUM(updated_at) FROM job_io")"
q "UPDATE job_io SET source = 'darshan' WHERE job_id = 5001"
TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct "$sx/sacct-parsable2.txt" >/dev/null 2>&1
check_eq "sacct never replaces a better source" "darshan" \
	"$(q "SELECT source FROM job_io WHERE job_id = 5001")"

# sacct's times are wall-clock times of its host's zone: a job across
# the spring-forward of Europe/Paris (01:30 CET to 03:30 CEST, one hour)
{ sed -n 1p "$sx/sacct-parsable2.txt"
  echo '5101|dst|ann|proj|batch|1|n1|2023-03-26T01:30:00|2023-03-26T03:30:00|COMPLETED||'; } >"$d/dst.txt"
out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct --timezone Europe/Paris "$d/dst.txt" 2>&1); rc=$?
check_eq "sacct --timezone Europe/Paris: exit 0" 0 "$rc"
check_eq "sacct --timezone Europe/Paris: 00:30Z to 01:30Z, whatever TZ says" \
	"1679790600	1679794200" \
	"$(q "SELECT start_at, end_at FROM jobs WHERE job_id = 5101")"
q "DELETE FROM jobs WHERE job_id = 5101"
TZ=Europe/Paris "$fwdctl" --policy "$policy" ingest --format sacct "$d/dst.txt" >/dev/null 2>&1
check_eq "sacct under TZ=Europe/Paris: the zone's rules at each date" \
	"1679790600	1679794200" \
	"$(q "SELECT start_at, end_at FROM jobs WHERE job_id = 5101")"
q "DELETE FROM jobs WHERE job_id = 5101"
TZ=Europe/Paris "$fwdctl" --policy "$policy" ingest --format sacct --timezone UTC "$d/dst.txt" >/dev/null 2>&1
check_eq "sacct --timezone UTC: read as UTC" \
	"1679794200	1679801400" \
	"$(q "SELECT start_at, end_at FROM jobs WHERE job_id = 5101")"
q "DELETE FROM jobs WHERE job_id = 5101"
fw ingest --format sacct --timezone Mars/Olympus_Mons "$d/dst.txt"
check_eq "sacct --timezone of no zone: exit 2" 2 "$rc"
check_match "sacct --timezone of no zone: said" "no such time zone" "$err"
check_eq "sacct --timezone of no zone: nothing stored" 0 \
	"$(q "SELECT COUNT(*) FROM jobs WHERE job_id = 5101")"
fw ingest --format influx --timezone UTC "$d/dst.txt"
check_eq "--timezone with another format: exit 2" 2 "$rc"

# a concurrent run returns at once (the holder keeps the lock until the
# run has been tried, however slowly a loaded machine gets there)
"$testdb" sql "$d" -N fwdalloc -e "SELECT GET_LOCK('fwdalloc.history', 0), SLEEP(300)" >/dev/null 2>&1 &
lockpid=$!
for _ in $(seq 1 100); do
	[ "$(q "SELECT IS_USED_LOCK('fwdalloc.history') IS NOT NULL")" = 1 ] && break
	sleep 0.1
done
fw history run --now 1700003000
check_eq "while another run holds the lock: exit 0" 0 "$rc"
check_eq "and nothing done" "another history run is in progress: nothing done" "$out"
q "KILL $(q "SELECT IS_USED_LOCK('fwdalloc.history')")"
wait $lockpid

# ---- adversarial sacct and Darshan: one bad line or file costs itself ----
now=$(date +%s)
{ sed -n 1p "$sx/sacct-parsable2.txt"
  echo '5201|neg|ann|proj|batch|-5|n1|2023-11-10T10:00:00|2023-11-10T10:20:00|COMPLETED||'
  echo '5202|huge|ann|proj|batch|1|n1|2023-11-10T10:00:00|2023-11-10T10:20:00|COMPLETED||'
  echo '5202.0|x||proj||1|n1|2023-11-10T10:00:00|2023-11-10T10:20:00|COMPLETED|fs/lustre=18446744073709551615|fs/lustre=0'
  echo '5203|order|ann|proj|batch|1|n1|2023-11-10T10:20:00|2023-11-10T10:00:00|COMPLETED||'
  echo '5204|future|ann|proj|batch|1|n1|2999-01-01T00:00:00|2999-01-01T01:00:00|COMPLETED||'
  echo '5205|good|ann|proj|batch|1|n1|2023-11-10T10:00:00|2023-11-10T10:20:00|COMPLETED||'
  echo '5205.0|x||proj||1|n1|2023-11-10T10:00:00|2023-11-10T10:20:00|COMPLETED|fs/lustre=1048576|fs/lustre=2048'
} >"$d/adv-sacct.txt"
out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct "$d/adv-sacct.txt" 2>"$d/e"); rc=$?
check_eq "sacct adversarial: exit 2" 2 "$rc"
check_match "sacct adversarial: NNodes=-5 refused on its line" "adv-sacct.txt:2: bad NNodes: '-5'" "$(cat "$d/e")"
check_match "sacct adversarial: fs/lustre 2^64-1 refused" "adv-sacct.txt:4: fs/lustre TRES over 2\\^63-1" "$(cat "$d/e")"
check_match "sacct adversarial: end before start refused" "adv-sacct.txt:5: End .* is before Start" "$(cat "$d/e")"
check_match "sacct adversarial: year 2999 refused" "adv-sacct.txt:6: Start .* is in the future" "$(cat "$d/e")"
check_match "sacct adversarial: counted by reason" \
	"rejected 4 lines: 1 malformed, 1 value out of range, 1 end before start, 1 time out of range" "$(cat "$d/e")"
check_eq "sacct adversarial: the good job and its summary after the bad lines" \
	"5205	1048576	2048" "$(q "SELECT job_id, read_bytes, write_bytes FROM job_io WHERE job_id BETWEEN 5200 AND 5299")"
check_eq "sacct adversarial: no job row of a refused line but 5202 (its step refused)" \
	"5202 5205" "$(q "SELECT job_id FROM jobs WHERE job_id BETWEEN 5200 AND 5299 ORDER BY job_id" | tr '\n' ' ' | sed 's/ $//')"

for case in 'nprocs: 0' 'BYTES_WRITTEN: -5' 'BYTES_WRITTEN: 1e308'; do
	case $case in
	nprocs*) sed "s/^# nprocs: .*/# $case/" "$dx/darshan-total-perf.txt" ;;
	*) sed "s/^total_POSIX_BYTES_WRITTEN: .*/total_POSIX_$case/" "$dx/darshan-total-perf.txt" ;;
	esac | sed 's/^# jobid: .*/# jobid: 4299/' >"$d/adv.darshan.txt"
	fw ingest --format darshan "$d/adv.darshan.txt"
	check_eq "darshan '$case': refused (exit 2)" 2 "$rc"
	check_eq "darshan '$case': nothing stored" 0 "$(q "SELECT COUNT(*) FROM job_io WHERE job_id = 4299")"
done
check_match "darshan 1e308 bytes: said, not converted (undefined behaviour)" "adv.darshan.txt:[0-9]+: counter value out of range: '1e308'" "$err"

tap_done
