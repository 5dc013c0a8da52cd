#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fwdctl ingest against a private MariaDB: every format, deltas and
# restarts, duplicates, bad lines, pipes, baselines across runs, rollups.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start
fx=$top_srcdir/tests/fixtures/monitor

fw db init
check_eq "schema created" 0 "$rc"

# ---- beacon-lwfs ----
fw ingest --format beacon-lwfs "$fx/beacon-lwfs.txt"
check_eq "beacon-lwfs: exit 0" 0 "$rc"
check_eq "beacon-lwfs: summary" \
	"read 14 lines, stored 9 samples, rejected 0 lines (5 already stored or baselines, 0 ignored)" "$out"
check_eq "beacon-lwfs: histogram deltas (Read exe, 30 s)" \
	"30	100	50	1	0	0	0	0	0" \
	"$(q "SELECT dt, b0, b1, b2, b3, b4, b5, b6, b7 FROM samples_hist WHERE name = '10.0.1.17' AND ts = 1472292870 AND op = 'read' AND phase = 'exe'")"
check_eq "beacon-lwfs: a counter going backwards is a restart" \
	"20	5	0" \
	"$(q "SELECT b0, b1, b2 FROM samples_hist WHERE name = '10.0.1.17' AND ts = 1472292930 AND op = 'read'")"
check_eq "beacon-lwfs: no negative or wrapped delta anywhere" 0 \
	"$(q "SELECT COUNT(*) FROM samples_hist WHERE b0 > 1000000 OR b1 > 1000000")"
check_eq "beacon-lwfs: exe deltas give read/write/md ops and the queue gauge" \
	"151	31	12	7" \
	"$(q "SELECT read_ops, write_ops, md_ops, queue_len FROM samples_raw WHERE name = '10.0.1.17' AND ts = 1472292870")"
check_eq "beacon-lwfs: the first sample keeps only the gauge" "NULL	NULL	3" \
	"$(q "SELECT IFNULL(dt, 'NULL'), IFNULL(read_ops, 'NULL'), queue_len FROM samples_raw WHERE name = '10.0.1.17' AND ts = 1472292840")"
check_eq "beacon-lwfs: per-minute rollups" \
	"1472292840	2	151	31	12	5	7
1472292900	2	85	0	0	NULL	NULL" \
	"$(q "SELECT minute, samples, read_ops, write_ops, md_ops, IFNULL(queue_len_avg, 'NULL'), IFNULL(queue_len_max, 'NULL') FROM rollups_minute WHERE name = '10.0.1.17' ORDER BY minute")"
check_eq "beacon-lwfs: per-minute histogram rollup" "70	15" \
	"$(q "SELECT b0, b1 FROM rollups_hist_minute WHERE name = '10.0.1.17' AND minute = 1472292900 AND op = 'read'")"
before=$(q "SELECT (SELECT COUNT(*) FROM samples_raw), (SELECT COUNT(*) FROM samples_hist), (SELECT SUM(read_ops) FROM rollups_minute)")

fw ingest --format beacon-lwfs "$fx/beacon-lwfs.txt"
check_eq "beacon-lwfs: re-ingest stores nothing" \
	"read 14 lines, stored 0 samples, rejected 0 lines (14 already stored or baselines, 0 ignored)" "$out"
check_eq "beacon-lwfs: re-ingest leaves rows and rollups as they were" \
	"$before" \
	"$(q "SELECT (SELECT COUNT(*) FROM samples_raw), (SELECT COUNT(*) FROM samples_hist), (SELECT SUM(read_ops) FROM rollups_minute)")"

# Bad lines: reported with line numbers, first five in full, never abort.
{
	cat "$fx/beacon-bad.txt"
	echo "10.0.1.99 [x]  [Trace]: Read exe: 1 2 3 4 5 6 7 8 2016-08-27T10:20:00Z"
	echo "10.0.1.99 [x]  [Trace]: Read exe: 1 2 3 4 5 6 7 8"
	echo "10.0.1.99 [x]  [Trace]: Read exe: 2 2 3 4 5 6 7 8 2016-08-27T10:20:30Z"
} >"$d/bad.log"
fw ingest --format beacon-lwfs "$d/bad.log"
check_eq "bad lines: exit 2" 2 "$rc"
check_eq "bad lines: summary" \
	"read 11 lines, stored 1 samples, rejected 6 lines (3 already stored or baselines, 1 ignored)" "$out"
check_eq "bad lines: the first five in full, then a count" \
	"fwdctl ingest: $d/bad.log:2: expected 8 histogram counters, got 7
fwdctl ingest: $d/bad.log:3: counter 4 'x' is not a non-negative integer
fwdctl ingest: $d/bad.log:4: unknown statistic 'Open': expected Meta, Read, Write or 'queue length'
fwdctl ingest: $d/bad.log:5: bad time 'yesterday': expected ISO-8601 UTC such as 2016-08-27T10:14:44Z
fwdctl ingest: $d/bad.log:7: expected '[<local time>]' after address 'garbage'
fwdctl ingest: $d/bad.log: 1 more rejected lines not shown
fwdctl: $d/bad.log: rejected 6 lines: 6 malformed" "$err"
check_eq "bad lines: the good lines around them were stored" "1	0	0" \
	"$(q "SELECT b0, b1, b2 FROM samples_hist WHERE name = '10.0.1.99'")"
check_eq "bad lines: no partial rows from rejected lines" 0 \
	"$(q "SELECT COUNT(*) FROM samples_raw WHERE name NOT IN ('10.0.1.17', '10.0.1.18', '10.0.1.99')")"

# Over-long line.
awk 'BEGIN { s = "10.0.1.17 ["; for (i = 0; i < 70000; i++) s = s "x"; print s; print "" }' >"$d/long.log"
fw ingest --format beacon-lwfs "$d/long.log"
check_eq "over-long line rejected" "fwdctl ingest: $d/long.log:1: line longer than 65535 bytes
fwdctl: $d/long.log: rejected 1 lines: 1 malformed" "$err"

# A terminal escape in a rejected line reaches stderr escaped.
printf '\033[31mRED [x]\n' >"$d/esc.log"
fw ingest --format beacon-lwfs "$d/esc.log"
check_eq "escape in a rejected line shown escaped" \
	"fwdctl ingest: $d/esc.log:1: bad forwarder address '\\x1b[31mRED': expected an IP address or host name
fwdctl: $d/esc.log: rejected 1 lines: 1 malformed" \
	"$err"

# ---- influx ----
fw ingest --format influx "$fx/influx.lp"
check_eq "influx: exit 0" 0 "$rc"
check_eq "influx: summary" \
	"read 10 lines, stored 5 samples, rejected 0 lines (3 already stored or baselines, 2 ignored)" "$out"
check_eq "influx: counters to deltas over 30 s" "30	60000	0	60	0	4	5" \
	"$(q "SELECT dt, read_bytes, write_bytes, read_ops, write_ops, md_ops, queue_len FROM samples_raw WHERE kind = 'fwd' AND name = 'fwd012' AND ts = 1472292870")"
check_eq "influx: ost deltas (unsigned fields, extra tags)" "60	3000	1000" \
	"$(q "SELECT dt, read_bytes, write_bytes FROM samples_raw WHERE kind = 'ost' AND name = 'lustre-OST0004'")"
check_eq "influx: mdt counter going backwards is a restart" 40 \
	"$(q "SELECT md_ops FROM samples_raw WHERE kind = 'mdt'")"
check_eq "influx: escaped tag value" "10" \
	"$(q "SELECT read_bytes FROM samples_raw WHERE name = 'fwd 13'")"
check_eq "influx: rollup bandwidth peak" "2000" \
	"$(q "SELECT read_bps_max FROM rollups_minute WHERE name = 'fwd012'")"
fw ingest --format influx "$fx/influx.lp"
check_eq "influx: re-ingest stores nothing" \
	"read 10 lines, stored 0 samples, rejected 0 lines (8 already stored or baselines, 2 ignored)" "$out"

# Baselines carry across runs and pipes: a series split over two runs gives
# the same deltas as one run; a restart between runs is seen.
printf 'ost,target=lustre-OST0009 read_bytes=100i 1472300000000000000\nost,target=lustre-OST0009 read_bytes=250i 1472300010000000000\n' |
	"$fwdctl" --policy "$policy" ingest --format influx - >"$d/o1" 2>&1
check_eq "pipe: first run" "read 2 lines, stored 1 samples, rejected 0 lines (1 already stored or baselines, 0 ignored)" "$(cat "$d/o1")"
printf 'ost,target=lustre-OST0009 read_bytes=400i 1472300020000000000\nost,target=lustre-OST0009 read_bytes=30i 1472300030000000000\n' |
	"$fwdctl" --policy "$policy" ingest --format influx >"$d/o2" 2>&1
check_eq "pipe: second run continues from the stored baseline" \
	"read 2 lines, stored 2 samples, rejected 0 lines" "$(cat "$d/o2")"
check_eq "pipe: deltas 150, 150, then restart 30" "150
150
30" "$(q "SELECT read_bytes FROM samples_raw WHERE name = 'lustre-OST0009' AND dt IS NOT NULL ORDER BY ts")"

echo "10.0.1.50 [x]  [Trace]: Write wait: 5 5 5 5 5 5 5 5 2016-09-01T00:00:00Z" |
	"$fwdctl" --policy "$policy" ingest --format beacon-lwfs - >"$d/o3" 2>&1
check_eq "beacon-lwfs: first run keeps its baseline" \
	"read 1 lines, stored 0 samples, rejected 0 lines (1 already stored or baselines, 0 ignored)" "$(cat "$d/o3")"
echo "10.0.1.50 [x]  [Trace]: Write wait: 6 7 8 9 10 11 12 13 2016-09-01T00:00:10Z" |
	"$fwdctl" --policy "$policy" ingest --format beacon-lwfs - >"$d/o3" 2>&1
check_eq "beacon-lwfs: second run stores its delta" \
	"read 1 lines, stored 1 samples, rejected 0 lines" "$(cat "$d/o3")"
check_eq "beacon-lwfs: histogram baseline carries across runs" \
	"10	1	2	3	4	5	6	7	8" \
	"$(q "SELECT dt, b0, b1, b2, b3, b4, b5, b6, b7 FROM samples_hist WHERE name = '10.0.1.50'")"

# With a topology, forwarder IPs become forwarder names.
printf '%s\n' \
	"10.1.0.17 [x]  [Trace]: Read exe: 1 0 0 0 0 0 0 0 2016-09-02T00:00:00Z" \
	"10.1.0.17 [x]  [Trace]: Read exe: 4 0 0 0 0 0 0 0 2016-09-02T00:00:30Z" \
	"10.9.9.9 [x]  [Trace]: queue length: 2 2016-09-02T00:00:30Z" |
	"$fwdctl" --policy "$policy" --topology "$top_srcdir/etc/topology.yaml" \
		ingest --format beacon-lwfs - >"$d/o4" 2>&1
check_eq "beacon-lwfs: with a topology: summary" \
	"read 3 lines, stored 2 samples, rejected 0 lines (1 already stored or baselines, 0 ignored)" "$(cat "$d/o4")"
check_eq "beacon-lwfs: known IP stored under the forwarder's name" "3" \
	"$(q "SELECT read_ops FROM samples_raw WHERE name = 'fwd07'")"
check_eq "beacon-lwfs: unknown IP stored as the IP" "2" \
	"$(q "SELECT queue_len FROM samples_raw WHERE name = '10.9.9.9'")"
printf 'x: [\n' >"$d/bad-topo.yaml"
fw --topology "$d/bad-topo.yaml" ingest --format beacon-lwfs "$fx/beacon-lwfs.txt"
check_eq "beacon-lwfs: a topology that does not load: exit 2" 2 "$rc"

# poll_q SQL N: wait (up to 30 s) until the count SQL gives reaches N,
# then print it.
poll_q() {
	for _ in $(seq 1 300); do
		n=$(q "$1")
		[ "${n:-0}" -ge "$2" ] && break
		sleep 0.1
	done
	echo "$n"
}

# committed NAME N: wait until NAME has N rows in samples_raw, then print
# how many it has.  The writer commits before it waits for input; a
# server stopped before that commit ends is another case (the batch
# dropped, below), so the restarts wait for it.
committed() {
	poll_q "SELECT COUNT(*) FROM samples_raw WHERE name = '$1'" "$2"
}

# lock_raw: another session takes samples_raw's write lock and keeps it
# (60 s, or until the server goes), in the background (lock_pid).
lock_raw() {
	"$testdb" sql "$d" fwdalloc -e \
		"LOCK TABLES samples_raw WRITE; SELECT SLEEP(60)" >/dev/null 2>&1 &
	lock_pid=$!
	poll_q "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(60)%'" 1 >/dev/null
}

# held_at_insert: wait until a writer waits for that lock, then print how
# many do.
held_at_insert() {
	poll_q "SELECT COUNT(*) FROM information_schema.processlist WHERE state LIKE 'Waiting for table%lock' AND info NOT LIKE '%processlist%'" 1
}

# A slow stream: rows are committed while the writer waits for input.
{
	echo 'ost,target=lustre-OST0010 read_bytes=1i 1472400000000000000'
	echo 'ost,target=lustre-OST0010 read_bytes=5i 1472400010000000000'
	# the stream stays open while the first sample is looked for
	committed lustre-OST0010 1 >"$d/mid"
	echo 'ost,target=lustre-OST0010 read_bytes=9i 1472400020000000000'
} | "$fwdctl" --policy "$policy" ingest --format influx - >/dev/null 2>&1
check_eq "slow pipe: the first sample was visible before the stream ended" 1 "$(cat "$d/mid")"
check_eq "slow pipe: all samples stored" 2 \
	"$(q "SELECT COUNT(*) FROM samples_raw WHERE name = 'lustre-OST0010'")"

# A burst already in the pipe is one transaction: the writer commits when
# no whole line is left to read and the pipe has nothing more, not for
# each line it had read ahead.
commits() {
	"$testdb" sql "$d" -N -e "SHOW GLOBAL STATUS LIKE 'Com_commit'" | cut -f2
}
for i in $(seq 1 1000); do
	echo "fwd,node=burst$i read_bytes=${i}i 1472600000000000000"
done >"$d/burst.lp"
mkfifo "$d/burst.fifo"
exec 3<>"$d/burst.fifo"
cat "$d/burst.lp" >&3 # 40 KB: the whole burst waits in the pipe
c0=$(commits)
"$fwdctl" --policy "$policy" ingest --format influx "$d/burst.fifo" 3>&- \
	>"$d/o10" 2>&1 &
burst_pid=$!
poll_q "SELECT COUNT(*) FROM counter_state WHERE name LIKE 'burst%'" 1000 >/dev/null
c1=$(commits)
exec 3>&-
wait "$burst_pid"
check_eq "burst in the pipe: committed while the pipe waits" 1000 \
	"$(q "SELECT COUNT(*) FROM counter_state WHERE name LIKE 'burst%'")"
check_eq "burst in the pipe: one transaction" 1 $((c1 - c0))
check_eq "burst in the pipe: summary" \
	"read 1000 lines, stored 0 samples, rejected 0 lines (1000 already stored or baselines, 0 ignored)" \
	"$(cat "$d/o10")"

# A pipe idle past the server's wait_timeout, and a server restart while
# the pipe waits: the writer reconnects and continues from the baselines.
q "SET GLOBAL wait_timeout = 2"
{
	echo 'ost,target=lustre-OST0011 read_bytes=10i 1472500000000000000'
	echo 'ost,target=lustre-OST0011 read_bytes=30i 1472500010000000000'
	sleep 4
	echo 'ost,target=lustre-OST0011 read_bytes=70i 1472500020000000000'
	# the restart comes while the pipe waits, after the line is stored
	committed lustre-OST0011 2 >"$d/mid5"
	"$testdb" stop "$d" >/dev/null 2>&1
	"$testdb" start "$d" >/dev/null 2>&1
	echo 'ost,target=lustre-OST0011 read_bytes=150i 1472500030000000000'
} | "$fwdctl" --policy "$policy" ingest --format influx - >"$d/o5" 2>"$d/e5"
check_eq "idle pipe and server restart: the line after the idle spell stored before the restart" \
	2 "$(cat "$d/mid5")"
check_eq "idle pipe and server restart: all deltas stored" \
	"read 4 lines, stored 3 samples, rejected 0 lines (1 already stored or baselines, 0 ignored)" \
	"$(cat "$d/o5")"
check_eq "idle pipe and server restart: deltas continue" "20
40
80" "$(q "SELECT read_bytes FROM samples_raw WHERE name = 'lustre-OST0011' ORDER BY ts")"
check_eq "idle pipe and server restart: not given up" 0 \
	"$(grep -c "giving up" "$d/e5")"

# A batch the server drops while it is being committed (a restart, a
# failover): the writer connects again and stores the batch's lines again
# from the committed baselines; nothing lost, nothing twice.  The batch is
# held at its insert by another session's table lock until the server is
# killed.
{
	echo 'ost,target=lustre-OST0014 read_bytes=10i 1472500000000000000'
	echo 'ost,target=lustre-OST0014 read_bytes=30i 1472500010000000000'
	committed lustre-OST0014 1 >/dev/null
	lock_raw
	echo 'ost,target=lustre-OST0014 read_bytes=70i 1472500020000000000'
	held_at_insert >"$d/held8"
	# killed, not shut down: a shutdown may end the lock first and let
	# the batch commit
	kill -KILL "$(cat "$d/mysqld.pid")"
	wait "$lock_pid"
	"$testdb" stop "$d" >/dev/null 2>&1
	"$testdb" start "$d" >/dev/null 2>&1
	committed lustre-OST0014 2 >/dev/null
	echo 'ost,target=lustre-OST0014 read_bytes=150i 1472500030000000000'
} | "$fwdctl" --policy "$policy" ingest --format influx - >"$d/o8" 2>"$d/e8"
rc8=$?
check_eq "batch dropped at its commit: the writer was held at its insert" 1 \
	"$(cat "$d/held8")"
check_eq "batch dropped at its commit: exit 0" 0 "$rc8"
check_eq "batch dropped at its commit: every line stored once" \
	"read 4 lines, stored 3 samples, rejected 0 lines (1 already stored or baselines, 0 ignored)" \
	"$(cat "$d/o8")"
check_eq "batch dropped at its commit: the deltas as without the restart" "20
40
80" "$(q "SELECT read_bytes FROM samples_raw WHERE name = 'lustre-OST0014' ORDER BY ts")"
check_eq "batch dropped at its commit: the rollup counts each sample once" "3	140" \
	"$(q "SELECT SUM(samples), SUM(read_bytes) FROM rollups_minute WHERE name = 'lustre-OST0014'")"
check_match "batch dropped at its commit: says which lines it stores again" \
	"<stdin>: line 3 was not committed: .*; storing it again on a new connection" \
	"$(cat "$d/e8")"

# The same for a whole file in one transaction, histograms and gauges
# (beacon-lwfs): after the server is killed at the commit every line is
# stored again, and the rows equal those of the same lines stored without
# the loss (another address).
lwfs() {
	for t in 00 10 20 30; do
		n=${t#0}
		echo "$1 [x]  [Trace]: Read exe: $((n * 3)) $n 1 0 0 0 0 0 2016-09-03T00:00:${t}Z"
		echo "$1 [x]  [Trace]: Write wait: $((n * 2)) 0 $n 0 0 0 0 0 2016-09-03T00:00:${t}Z"
		echo "$1 [x]  [Trace]: queue length: $((n + 1)) 2016-09-03T00:00:${t}Z"
	done
}
lwfs 10.0.2.1 >"$d/ref.lwfs"
lwfs 10.0.2.2 >"$d/lost.lwfs"
"$fwdctl" --policy "$policy" ingest --format beacon-lwfs "$d/ref.lwfs" >"$d/o9ref" 2>&1
lock_raw
"$fwdctl" --policy "$policy" ingest --format beacon-lwfs "$d/lost.lwfs" >"$d/o9" 2>"$d/e9" &
ingest_pid=$!
check_eq "file dropped at its commit: the writer was held at its insert" 1 \
	"$(held_at_insert)"
kill -KILL "$(cat "$d/mysqld.pid")"
wait "$lock_pid"
"$testdb" stop "$d" >/dev/null 2>&1
"$testdb" start "$d" >/dev/null 2>&1
wait "$ingest_pid"
check_eq "file dropped at its commit: exit 0" 0 "$?"
check_eq "file dropped at its commit: the summary of the run without the loss" \
	"$(cat "$d/o9ref")" "$(cat "$d/o9")"
check_match "file dropped at its commit: says which lines it stores again" \
	"$d/lost.lwfs: lines 1 to [0-9]+ were not committed: .*; storing them again on a new connection" \
	"$(cat "$d/e9")"
for t in "samples_raw:ts, dt, read_ops, write_ops, md_ops, queue_len" \
	"samples_hist:ts, op, phase, dt, b0, b1, b2, b3, b4, b5, b6, b7" \
	"rollups_minute:minute, samples, read_ops, write_ops, md_ops, queue_len_avg, queue_len_max" \
	"rollups_hist_minute:minute, op, phase, b0, b1, b2"; do
	table=${t%%:*} cols=${t#*:}
	ref=$(q "SELECT $cols FROM $table WHERE name = '10.0.2.1' ORDER BY $cols")
	check_eq "file dropped at its commit: $table as without the loss" \
		"$ref" "$(q "SELECT $cols FROM $table WHERE name = '10.0.2.2' ORDER BY $cols")"
	check_match "file dropped at its commit: $table has rows" '[0-9]' "$ref"
done

# The server still down when the next line comes: the writer says so once,
# tries again (ingest.reconnect, 1m by default) and goes on when the
# server is back, storing the line it held.
{
	echo 'ost,target=lustre-OST0012 read_bytes=10i 1472500000000000000'
	echo 'ost,target=lustre-OST0012 read_bytes=30i 1472500010000000000'
	committed lustre-OST0012 1 >/dev/null
	sleep 1.5
	"$testdb" stop "$d" >/dev/null 2>&1
	(
		sleep 3
		"$testdb" start "$d" >/dev/null 2>&1
	) &
	echo 'ost,target=lustre-OST0012 read_bytes=70i 1472500020000000000'
	wait
	echo 'ost,target=lustre-OST0012 read_bytes=150i 1472500030000000000'
} | "$fwdctl" --policy "$policy" ingest --format influx - >"$d/o6" 2>"$d/e6"
rc6=$?
check_eq "server down for 3 s: exit 0" 0 "$rc6"
check_eq "server down for 3 s: every line stored" \
	"read 4 lines, stored 3 samples, rejected 0 lines (1 already stored or baselines, 0 ignored)" \
	"$(cat "$d/o6")"
check_eq "server down for 3 s: the held line and the next stored" "20
40
80" "$(q "SELECT read_bytes FROM samples_raw WHERE name = 'lustre-OST0012' ORDER BY ts")"
check_eq "server down for 3 s: said once that it tries again" 1 \
	"$(grep -c "<stdin>: database socket .*; trying again for up to 60s (ingest.reconnect), the lines read are held" "$d/e6")"
check_match "server down for 3 s: said when it went on" \
	"<stdin>: the database answers again; going on" "$(cat "$d/e6")"

# It gives up after ingest.reconnect (exit 3), or at once under 0; what
# was committed stays.
for wait in 0 1s; do
	{ cat "$policy"; echo "ingest: {reconnect: $wait}"; } >"$d/p-rc.yaml"
	ost=lustre-OST0013-$wait
	{
		echo "ost,target=$ost read_bytes=10i 1472500000000000000"
		echo "ost,target=$ost read_bytes=30i 1472500010000000000"
		committed "$ost" 1 >/dev/null
		sleep 1.5
		"$testdb" stop "$d" >/dev/null 2>&1
		echo "ost,target=$ost read_bytes=70i 1472500020000000000"
	} | "$fwdctl" --policy "$d/p-rc.yaml" ingest --format influx - \
		>"$d/o7" 2>"$d/e7"
	rc7=$?
	"$testdb" start "$d" >/dev/null 2>&1
	check_eq "reconnect $wait, server down: exit 3" 3 "$rc7"
	check_match "reconnect $wait, server down: says it gave up" \
		"<stdin>: giving up after the database connection was lost" \
		"$(cat "$d/e7")"
	check_match "reconnect $wait, server down: says why" \
		"database socket .*" "$(head -n 1 "$d/e7")"
	check_eq "reconnect $wait, server down: the committed sample kept" 20 \
		"$(q "SELECT read_bytes FROM samples_raw WHERE name = '$ost' AND read_bytes IS NOT NULL")"
done
check_eq "reconnect 1s: tried again before giving up" 1 \
	"$(grep -c "trying again for up to 1s" "$d/e7")"

printf 'fwd,node=f1 read_bytes=-1i 1\nfwd,node=f2 read_bytes=1i 1\n' >"$d/bad.lp"
fw ingest --format influx --json "$d/bad.lp"
check_eq "influx --json: exit 2 with a rejected line" 2 "$rc"
check_match "influx --json: counts" '"lines": 2,' "$out"
check_match "influx --json: error with its line" \
	"\"line\": 1,.*\"error\": \"field 'read_bytes': a cumulative counter must be a non-negative integer\"" \
	"$(printf '%s' "$out" | tr -d '\n')"

# ---- lustre-jobstats ----
fw ingest --format lustre-jobstats "$fx/jobstats.yaml"
check_eq "jobstats: exit 0" 0 "$rc"
check_eq "jobstats: summary" "read 23 lines, stored 3 samples, rejected 0 lines" "$out"
check_eq "jobstats: one row per job, target and operation" 9 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw")"
check_eq "jobstats: values as Lustre printed them" \
	"ost	12345	1472292840	7	bytes	4096	1048576	7340032" \
	"$(q "SELECT kind, job_id, ts, samples, unit, min_value, max_value, sum_value FROM jobstats_raw WHERE target = 'lustre-OST0000' AND lustre_job_id = '12345' AND op = 'read_bytes'")"
check_eq "jobstats: non-numeric job ids keep a NULL Slurm id" "NULL" \
	"$(q "SELECT DISTINCT IFNULL(job_id, 'NULL') FROM jobstats_raw WHERE lustre_job_id = 'dd.0'")"
check_eq "jobstats: mdt operations" "open	300" \
	"$(q "SELECT op, samples FROM jobstats_raw WHERE kind = 'mdt' AND op = 'open'")"
check_eq "jobstats: targets recorded" "lustre-MDT0000	mdt
lustre-OST0000	ost" "$(q "SELECT name, kind FROM osts ORDER BY name")"
fw ingest --format lustre-jobstats "$fx/jobstats.yaml"
check_eq "jobstats: re-ingest stores nothing" \
	"read 23 lines, stored 0 samples, rejected 0 lines (3 already stored or baselines, 0 ignored)" "$out"
check_eq "jobstats: no duplicate rows" 9 "$(q "SELECT COUNT(*) FROM jobstats_raw")"

printf 'job_stats:\n- job_id: 77\n  snapshot_time: 1472300000\n  open: { samples: 4, unit: reqs }\n' |
	"$fwdctl" --policy "$policy" ingest -f lustre-jobstats --target lustre-MDT0003 - >"$d/o3" 2>&1
check_eq "jobstats: lctl -n output from a pipe with --target" \
	"read 4 lines, stored 1 samples, rejected 0 lines" "$(cat "$d/o3")"
check_eq "jobstats: --target gives the kind" "mdt	4" \
	"$(q "SELECT kind, samples FROM jobstats_raw WHERE target = 'lustre-MDT0003'")"
printf 'job_stats:\n- job_id: 77\n' >"$d/nt.yaml"
fw ingest -f lustre-jobstats "$d/nt.yaml"
check_eq "jobstats: no target line and no --target: exit 2" 2 "$rc"
check_match "jobstats: says what is missing" \
	"nt.yaml:1: expected a target line such as 'obdfilter.lustre-OST0000.job_stats='" "$err"

# ---- implausible data ----
# A gauge of 1e308, counters jumping near 2^62, a delta above 4 x a known
# peak and an absurd operation rate are rejected, counted by kind, listed
# with their line numbers and never stored; the next normal sample gives
# the delta from the last plausible value.  Two consistent samples after a
# jump are a counter that really moved: the series goes on from there.
q "INSERT INTO osts (name, kind, bandwidth_bps, updated_at) VALUES ('lustre-OST0021', 'ost', 1000000000, 0)"
cat >"$d/implausible.lp" <<'EOF'
ost,target=lustre-OST0020 read_bytes=1000i,write_bytes=0i 1472600000000000000
ost,target=lustre-OST0020 read_bytes=4611686018427387904i,write_bytes=10i 1472600002000000000
ost,target=lustre-OST0020 read_bytes=3000i,write_bytes=20i 1472600004000000000
fwd,node=fwd030 queue_len=1e308 1472600000000000000
fwd,node=fwd030 queue_len=7 1472600002000000000
ost,target=lustre-OST0021 write_bytes=0i 1472800000000000000
ost,target=lustre-OST0021 write_bytes=10000000000i 1472800002000000000
ost,target=lustre-OST0021 write_bytes=14000000000i 1472800004000000000
ost,target=lustre-OST0022 read_bytes=100i 1472700000000000000
ost,target=lustre-OST0022 read_bytes=4611686018427387904i 1472700002000000000
ost,target=lustre-OST0022 read_bytes=4611686018427388904i 1472700004000000000
ost,target=lustre-OST0022 read_bytes=4611686018427389404i 1472700006000000000
mdt,target=lustre-MDT0020 md_ops=0i 1472700000000000000
mdt,target=lustre-MDT0020 md_ops=1000000000000i 1472700002000000000
EOF
fw ingest --format influx "$d/implausible.lp"
check_eq "implausible: exit 2" 2 "$rc"
check_eq "implausible: counted by kind in the summary" \
	"rejected 5 implausible samples: 3 byte counter deltas over the bandwidth bound, 1 operation counter deltas over ingest.max_ops_rate, 1 queue lengths over ingest.max_queue_len
read 14 lines, stored 5 samples, rejected 5 lines (4 already stored or baselines, 0 ignored)" "$out"
check_eq "implausible: listed with their line numbers" \
	"fwdctl ingest: $d/implausible.lp:2: ost lustre-OST0020: implausible read_bytes delta 4611686018427386904 in 2 s (2.31e+18 B/s): over 1TB/s (ingest.max_bandwidth; peak bandwidth unknown)
fwdctl ingest: $d/implausible.lp:4: fwd fwd030: implausible queue_len 1e+308: over 1000000 (ingest.max_queue_len)
fwdctl ingest: $d/implausible.lp:7: ost lustre-OST0021: implausible write_bytes delta 10000000000 in 2 s (5e+09 B/s): over 4GB/s (ingest.max_rate_factor 4 x peak 1GB/s)
fwdctl ingest: $d/implausible.lp:10: ost lustre-OST0022: implausible read_bytes delta 4611686018427387804 in 2 s (2.31e+18 B/s): over 1TB/s (ingest.max_bandwidth; peak bandwidth unknown)
fwdctl ingest: $d/implausible.lp:14: mdt lustre-MDT0020: implausible md_ops delta 1000000000000 in 2 s (5e+11 ops/s): over 10000000 ops/s (ingest.max_ops_rate)
fwdctl: $d/implausible.lp: rejected 5 lines: 5 implausible rate" "$err"
check_eq "implausible: the next sample's delta is from the last plausible value" \
	"1472600004	4	2000	20" \
	"$(q "SELECT ts, dt, read_bytes, write_bytes FROM samples_raw WHERE name = 'lustre-OST0020'")"
check_eq "implausible: the gauge is not stored, the next one is" "1472600002	7" \
	"$(q "SELECT ts, queue_len FROM samples_raw WHERE name = 'fwd030'")"
check_eq "implausible: 4 x the known peak bounds the rate" "1472800004	4	14000000000" \
	"$(q "SELECT ts, dt, write_bytes FROM samples_raw WHERE name = 'lustre-OST0021'")"
check_eq "implausible: a jump confirmed by the next sample starts the series again" \
	"1472700004	2	1000
1472700006	2	500" \
	"$(q "SELECT ts, dt, read_bytes FROM samples_raw WHERE name = 'lustre-OST0022' ORDER BY ts")"
check_eq "implausible: no operation rate stored for the mdt" 0 \
	"$(q "SELECT COUNT(*) FROM samples_raw WHERE name = 'lustre-MDT0020'")"
check_eq "implausible: no such value in samples or rollups" "0	0" \
	"$(q "SELECT (SELECT COUNT(*) FROM samples_raw WHERE read_bytes > 1e15 OR write_bytes > 1e15 OR md_ops > 1e15 OR queue_len > 1e6), (SELECT COUNT(*) FROM rollups_minute WHERE read_bytes > 1e15 OR write_bytes > 1e15 OR md_ops > 1e15 OR read_bps_max > 1e12 OR queue_len_max > 1e6)")"
check_eq "implausible: rollups hold the plausible deltas" "2000	20	500	7" \
	"$(q "SELECT (SELECT read_bytes FROM rollups_minute WHERE name = 'lustre-OST0020'), (SELECT write_bytes FROM rollups_minute WHERE name = 'lustre-OST0020'), (SELECT read_bps_max FROM rollups_minute WHERE name = 'lustre-OST0022'), (SELECT queue_len_max FROM rollups_minute WHERE name = 'fwd030')")"
# Again: the samples already stored are skipped; the gauge and the mdt
# delta are judged again, the same way.
fw ingest --format influx --json "$d/implausible.lp"
check_match "implausible --json: counts by kind" \
	'"implausible": \{ *"samples": 2, *"bytes": 0, *"ops": 1, *"queue_len": 1 *\}' \
	"$(printf '%s' "$out" | tr -d '\n')"

# beacon-lwfs: a histogram jumping near 2^62 and a queue length of 2^64-1.
printf '%s\n' \
	"10.0.1.60 [x]  [Trace]: Read exe: 10 0 0 0 0 0 0 0 2016-09-03T00:00:00Z" \
	"10.0.1.60 [x]  [Trace]: Read exe: 4611686018427387904 0 0 0 0 0 0 0 2016-09-03T00:00:02Z" \
	"10.0.1.60 [x]  [Trace]: Read exe: 25 1 0 0 0 0 0 0 2016-09-03T00:00:04Z" \
	"10.0.1.60 [x]  [Trace]: queue length: 18446744073709551615 2016-09-03T00:00:04Z" \
	"10.0.1.60 [x]  [Trace]: queue length: 12 2016-09-03T00:00:06Z" >"$d/implausible.log"
fw ingest --format beacon-lwfs "$d/implausible.log"
check_eq "beacon implausible: exit 2" 2 "$rc"
check_eq "beacon implausible: summary" \
	"rejected 2 implausible samples: 1 operation counter deltas over ingest.max_ops_rate, 1 queue lengths over ingest.max_queue_len
read 5 lines, stored 2 samples, rejected 2 lines (1 already stored or baselines, 0 ignored)" "$out"
check_eq "beacon implausible: listed with their line numbers" \
	"fwdctl ingest: $d/implausible.log:2: fwd 10.0.1.60: implausible read exe requests delta 4611686018427387894 in 2 s (2.31e+18 ops/s): over 10000000 ops/s (ingest.max_ops_rate)
fwdctl ingest: $d/implausible.log:4: fwd 10.0.1.60: implausible queue length 1.84e+19: over 1000000 (ingest.max_queue_len)
fwdctl: $d/implausible.log: rejected 2 lines: 2 implausible rate" "$err"
check_eq "beacon implausible: one histogram delta, from the last plausible value" \
	"1472860804	4	15	1" \
	"$(q "SELECT ts, dt, b0, b1 FROM samples_hist WHERE name = '10.0.1.60'")"
check_eq "beacon implausible: requests and queue lengths stored" \
	"1472860804	16	NULL
1472860806	NULL	12" \
	"$(q "SELECT ts, IFNULL(read_ops, 'NULL'), IFNULL(queue_len, 'NULL') FROM samples_raw WHERE name = '10.0.1.60' ORDER BY ts")"

# The bounds come from the policy.
cp "$policy" "$d/strict.yaml"
printf 'ingest:\n  max_queue_len: 5\n' >>"$d/strict.yaml"
printf 'fwd,node=fwd031 queue_len=7 1472600000000000000\nfwd,node=fwd031 queue_len=5 1472600002000000000\n' |
	"$fwdctl" --policy "$d/strict.yaml" ingest --format influx - >"$d/o6" 2>"$d/e6"
check_eq "policy bound: queue_len over ingest.max_queue_len rejected" \
	"<stdin>:1: fwd fwd031: implausible queue_len 7: over 5 (ingest.max_queue_len)
fwdctl: <stdin>: rejected 1 lines: 1 implausible rate" \
	"$(sed 's/^fwdctl ingest: //' "$d/e6")"
check_eq "policy bound: a value at the bound is stored" "5" \
	"$(q "SELECT queue_len FROM samples_raw WHERE name = 'fwd031'")"

# ---- many components across runs ----
# 40 OSTs (more than are read one at a time: the rest of the baselines
# come in one statement) continue in a second run from the first run's
# baselines; a queue length alone is counted when it is written, and as
# already stored when ingested again.
awk 'BEGIN { for (i = 0; i < 40; i++) for (p = 0; p < 2; p++)
	printf "ost,target=lfs-OST%04d read_bytes=%di,queue_len=%d %d000000000\n", i, (i + 1) * 1000 * (p + 1), p + 1, 1472700000 + p * 10 }' >"$d/many1.lp"
awk 'BEGIN { for (i = 0; i < 40; i++)
	printf "ost,target=lfs-OST%04d read_bytes=%di %d000000000\n", i, (i + 1) * 5000, 1472700020 }' >"$d/many2.lp"
fw ingest --format influx "$d/many1.lp"
check_eq "many components, run 1: summary" \
	"read 80 lines, stored 80 samples, rejected 0 lines" "$out"
fw ingest --format influx "$d/many2.lp"
check_eq "many components, run 2: every line a delta from run 1's baseline" \
	"read 40 lines, stored 40 samples, rejected 0 lines" "$out"
check_eq "many components: the deltas of the first and the last OST" \
	"lfs-OST0000	10	3000
lfs-OST0039	10	120000" \
	"$(q "SELECT name, dt, read_bytes FROM samples_raw WHERE ts = 1472700020 AND name IN ('lfs-OST0000', 'lfs-OST0039') ORDER BY name")"
check_eq "many components: the first run's baselines hold only the queue length" \
	"40	NULL	1" \
	"$(q "SELECT COUNT(*), IFNULL(MAX(read_bytes), 'NULL'), MAX(queue_len) FROM samples_raw WHERE ts = 1472700000 AND name LIKE 'lfs-OST%'")"
fw ingest --format influx "$d/many1.lp"
check_eq "many components, again: the queue lengths alone already stored" \
	"read 80 lines, stored 0 samples, rejected 0 lines (80 already stored or baselines, 0 ignored)" "$out"
check_eq "many components, again: rollups unchanged" "120	40	80" \
	"$(q "SELECT SUM(samples), COUNT(*), SUM(queue_len_samples) FROM rollups_minute WHERE name LIKE 'lfs-OST%'")"

# ---- usage ----
fw ingest "$fx/influx.lp"
check_eq "missing --format: exit 2" 2 "$rc"
fw ingest --format csv "$fx/influx.lp"
check_eq "unknown format: exit 2" 2 "$rc"
check_eq "unknown format: message" \
	"fwdctl ingest: unknown format 'csv': expected beacon-lwfs, influx, lustre-jobstats, darshan or sacct" "$err"
fw ingest --format influx "$d/none.lp"
check_eq "missing file: exit 2" 2 "$rc"
check_eq "missing file: message" "fwdctl ingest: $d/none.lp: No such file or directory" "$err"
fw ingest --help
check_match "--help documents the exit status" "Exit status:" "$out"

tap_done
