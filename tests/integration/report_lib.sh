# SPDX-License-Identifier: GPL-2.0-or-later
# The store the report tests read (report_job.sh, report_html.sh), after
# db_lib.sh's db_start:
#   report_seed   ingest Lustre job_stats (tests/fixtures/lustre, and
#                 Telegraf lustre2 lines of job 4242's run), forwarder
#                 samples (InfluxDB lines: job 4242's two forwarders during
#                 its run and the week before), and the controller's rows
#                 of the jobs (jobs, allocations, audit), job summaries and
#                 a health episode.
# Job 4242: ann's wrf on 2 nodes, 1700000000 .. 1700000650, scaled to
# fwd01 + fwd02; job 5000 (bob, N-1, metadata-heavy by its decision)
# shared fwd01 during the run; 4100 .. 4105 are earlier wrf runs at 2 or
# 3 nodes (1 and 2 forwarders); 4300 has a hostile name.
fx=$top_srcdir/tests/fixtures/lustre
JOB_START=1700000000
JOB_END=1700000650
HOSTILE_NAME='<script>alert("x")</script>'"'"'&amp;<img src=x onerror=alert(1)>'
# 255 bytes: the longest name the jobs table holds
HOSTILE_NAME=$HOSTILE_NAME$(printf 'y%.0s' $(seq 1 $((255 - ${#HOSTILE_NAME}))))

report_seed() {
	local sql_name
	sql_name=$(printf '%s' "$HOSTILE_NAME" | sed "s/'/''/g")
	fw db init
	check_eq "schema created" 0 "$rc"
	fw ingest --format lustre-jobstats "$fx/jobstats-2.15.txt"
	check_eq "job_stats fixture ingested" 0 "$rc"
	fw ingest --format influx "$fx/telegraf-lustre2.lp"
	check_eq "Telegraf lustre2 fixture ingested" 0 "$rc"
	# job 4242 on OST0001 through Telegraf: small writes, cumulative
	{
		t=$((JOB_START + 30)); wb=0; wc=0; rb=0; rcalls=0
		for i in 1 2 3 4 5 6 7 8 9 10; do
			wb=$((wb + i * 40960)); wc=$((wc + i * 10))
			rb=$((rb + 65536 * (i % 3))); rcalls=$((rcalls + i % 3))
			echo "lustre2,host=oss1,jobid=4242,name=lustre-OST0001 jobstats_read_bytes=${rb}i,jobstats_read_calls=${rcalls}i,jobstats_write_bytes=${wb}i,jobstats_write_calls=${wc}i ${t}000000000"
			t=$((t + 55))
		done
	} >"$d/js.lp"
	fw ingest --format influx "$d/js.lp"
	check_eq "job 4242's Telegraf job_stats ingested" 0 "$rc"
	# forwarder samples: during the run every 30 s, and hourly the week
	# before (fwd01 busier then)
	{
		for f in fwd01 fwd02; do
			r=0; w=0; m=0
			t=$((JOB_START - 7 * 86400 + 1800))
			while [ "$t" -lt "$JOB_START" ]; do
				r=$((r + 1000000)); w=$((w + (t / 3600 % 5) * 3000000))
				echo "fwd,node=$f read_bytes=${r}i,write_bytes=${w}i,md_ops=${m}i,queue_len=1 ${t}000000000"
				echo "fwd,node=$f read_bytes=${r}i,write_bytes=$((w + 1200000))i,md_ops=${m}i,queue_len=2 $((t + 60))000000000"
				w=$((w + 1200000))
				t=$((t + 3600))
			done
			t=$JOB_START; i=0
			while [ "$t" -le "$JOB_END" ]; do
				i=$((i + 1))
				r=$((r + 7000000 * (i % 4))); w=$((w + 13000000 * (i % 5)))
				[ "$f" = fwd02 ] && w=$((w + 1000000))
				m=$((m + 40 * i))
				echo "fwd,node=$f read_bytes=${r}i,write_bytes=${w}i,md_ops=${m}i,queue_len=$((i % 7)) ${t}000000000"
				t=$((t + 30))
			done
		done
		# the OSTs' and the MDT's own counters the day before (every
		# 130 s, busier some hours: their usual load) and during the run
		t=$((JOB_START - 86400 + 70)); i=0
		while [ "$t" -lt "$JOB_START" ]; do
			i=$((i + 1 + t / 3600 % 4))
			echo "ost,target=lustre-OST0000 read_bytes=$((i * 300000))i,write_bytes=$((i * 800000))i,queue_len=$((i % 4)) ${t}000000000"
			echo "ost,target=lustre-OST0001 read_bytes=$((i * 100000))i,write_bytes=$((i * 50000))i,queue_len=2 ${t}000000000"
			echo "mdt,target=lustre-MDT0000 md_ops=$((i * 11))i ${t}000000000"
			t=$((t + 130))
		done
		t=$JOB_START; i=0
		while [ "$t" -le "$JOB_END" ]; do
			i=$((i + 1))
			echo "ost,target=lustre-OST0000 read_bytes=$((i * 5000000))i,write_bytes=$((i * i * 900000))i,queue_len=$((i % 3)) ${t}000000000"
			echo "ost,target=lustre-OST0001 read_bytes=$((i * 2000000))i,write_bytes=$((i * 700000))i,queue_len=1 ${t}000000000"
			echo "mdt,target=lustre-MDT0000 md_ops=$((i * i * 37))i ${t}000000000"
			t=$((t + 30))
		done
	} >"$d/fwd.lp"
	fw ingest --format influx "$d/fwd.lp"
	check_eq "forwarder samples ingested" 0 "$rc"
	q "INSERT INTO jobs (job_id, user, account, name, nodelist, node_count,
	   start_at, end_at, state, request, updated_at) VALUES
	   (4242, 'ann', 'phys', 'wrf', 'n[1-2]', 2, $JOB_START, $JOB_END, 'COMPLETED', 'auto', 0),
	   (5000, 'bob', 'chem', 'ckpt', 'n[3-4]', 2, $((JOB_START - 100)), $((JOB_END + 100)), 'COMPLETED', NULL, 0),
	   (4100, 'ann', 'phys', 'wrf', 'n[1-2]', 2, 1690000000, 1690000600, 'COMPLETED', 'auto', 0),
	   (4101, 'ann', 'phys', 'wrf', 'n[1-3]', 3, 1690100000, 1690100700, 'COMPLETED', 'auto', 0),
	   (4102, 'ann', 'phys', 'wrf', 'n[1-2]', 2, 1690200000, 1690200500, 'COMPLETED', 'auto', 0),
	   (4103, 'ann', 'phys', 'wrf', 'n[1-2]', 2, 1690300000, 1690300800, 'COMPLETED', 'auto', 0),
	   (4104, 'ann', 'phys', 'wrf', 'n[1-3]', 3, 1690400000, 1690400600, 'COMPLETED', 'auto', 0),
	   (4105, 'ann', 'phys', 'wrf', 'n[1-8]', 8, 1690500000, 1690500600, 'COMPLETED', 'auto', 0),
	   (4300, 'eve', NULL, '$sql_name', 'n9', 1, $JOB_START, $JOB_END, 'COMPLETED', NULL, 0)"
	q "INSERT INTO allocations (job_id, forwarder, is_private, nodes,
	   node_count, action, acquired_at, released_at, release_reason,
	   io_mode, mdops_rate, bandwidth_bps, iops) VALUES
	   (4242, 'fwd01', 0, 'n1', 1, 'scale', $JOB_START, $JOB_END, 'epilog', 'N-1', 450, 5000000000, 2000),
	   (4242, 'fwd02', 1, 'n2', 1, 'scale', $JOB_START, $JOB_END, 'epilog', 'N-1', 450, 5000000000, 2000),
	   (5000, 'fwd01', 0, 'n[3-4]', 2, 'default', $((JOB_START - 100)), $((JOB_END + 100)), 'epilog', 'N-1', 800, 100000000, 50),
	   (4300, 'fwd03', 0, 'n9', 1, 'default', $JOB_START, $JOB_END, 'epilog', 'none', 0, 0, 0)"
	q "INSERT INTO audit (ts, job_id, user, request, action, reasons,
	   forwarders_before, forwarders_after, outcome, record) VALUES
	   ($JOB_START, 4242, 'ann', 'auto', 'scale',
	    '[\"S = 2 > N_f = 1\"]', '[\"fwd01\"]', '[\"fwd01\",\"fwd02\"]', 'applied',
	    '{\"event\":\"prolog\",\"job_id\":\"4242\",\"user\":\"ann\",\"request\":\"auto\",\"action\":\"scale\",\"reasons\":[\"S = 2 > N_f = 1\"],\"forwarders_before\":[\"fwd01\"],\"forwarders_after\":[\"fwd01\",\"fwd02\"],\"outcome\":\"applied\"}')"
	# summaries: 4242 from Darshan (N-1, metadata-heavy); the earlier
	# runs with 1 or 2 forwarders (1 pays as well as 2)
	q "INSERT INTO job_io (job_id, read_bytes, write_bytes, io_nodes, procs,
	   io_mode, node_bandwidth_bps, peak_bandwidth_bps, iops, mdops,
	   mdops_rate, metadata_queue, forwarders_held, forwarders_private,
	   bandwidth_achieved_bps, runtime, source, updated_at) VALUES
	   (4242, 1073741824, 3221225472, 2, 64, 'N-1', 3300000, 9000000, 1500, 292500, 450, 2.5, 2, 0, 6607000, 650, 'darshan', 0),
	   (4100, 1000000000, 3000000000, 2, 64, 'N-1', 3000000, 8000000, 1400, 1000, 2, 1, 1, 0, 6500000, 600, 'darshan', 0),
	   (4101, 1000000000, 3000000000, 3, 96, 'N-1', 3000000, 8000000, 1400, 1000, 2, 1, 2, 0, 6800000, 700, 'darshan', 0),
	   (4102, 1000000000, 3000000000, 2, 64, 'N-1', 3000000, 8000000, 1400, 1000, 2, 1, 1, 0, 6300000, 500, 'darshan', 0),
	   (4103, 1000000000, 3000000000, 2, 64, 'N-1', 3000000, 8000000, 1400, 1000, 2, 1, 2, 0, 7000000, 800, 'darshan', 0),
	   (4104, 1000000000, 3000000000, 3, 96, 'N-1', 3000000, 8000000, 1400, 1000, 2, 1, 1, 0, 6100000, 600, 'darshan', 0),
	   (4105, 1000000000, 3000000000, 8, 256, 'N-N', 3000000, 8000000, 1400, 1000, 2, 1, 4, 0, 26000000, 600, 'darshan', 0)"
	q "INSERT INTO health_history (kind, name, state, start_at, end_at,
	   duration, reason, source) VALUES
	   ('fwd', 'fwd02', 'suspect', $((JOB_START + 200)), $((JOB_START + 400)), 200, 'slow: <b>10 MB/s</b> against 2.5 GB/s', 'scanner'),
	   ('fwd', 'fwd07', 'excluded', $((JOB_START - 5000)), NULL, NULL, 'admin: broken', 'admin')"
}

# want_series FROM TO BUCKET: job 4242's job_stats increments per bucket
# of the axis (bucket start, read bytes, written bytes, read and write
# operations, metadata operations; buckets with I/O only), computed here
# with window functions: the previous snapshot of the same (target, id,
# operation), the first one and a counter that went back counting whole.
want_series() {
	q "SELECT b, SUM(IF(op = 'read_bytes', dv, 0)),
	SUM(IF(op = 'write_bytes', dv, 0)),
	SUM(IF(op IN ('read_bytes', 'write_bytes'), ds, 0)),
	SUM(IF(kind = 'mdt' AND op NOT IN ('read_bytes', 'write_bytes',
		'read', 'write', 'punch'), ds, 0))
	FROM (SELECT kind, op,
		$1 + FLOOR((LEAST(GREATEST(ts, $1), $2 - 1) - $1) / $3) * $3 AS b,
		IF(LAG(sum_value) OVER w IS NULL OR sum_value < LAG(sum_value) OVER w,
		   sum_value, sum_value - LAG(sum_value) OVER w) AS dv,
		IF(LAG(samples) OVER w IS NULL OR samples < LAG(samples) OVER w,
		   samples, samples - LAG(samples) OVER w) AS ds
		FROM jobstats_raw WHERE job_id = 4242
		AND ts BETWEEN $((JOB_START - 600)) AND $((JOB_END + 600))
		WINDOW w AS (PARTITION BY kind, target, lustre_job_id, op ORDER BY ts)) x
	GROUP BY b HAVING SUM(dv) + SUM(ds) > 0 ORDER BY b"
}

# want_heat KIND FROM TO BUCKET: name, bucket start, bytes (read +
# written) of each component of KIND per bucket with rollups.
want_heat() {
	q "SELECT name, $2 + FLOOR((minute - $2) / $4) * $4, SUM(read_bytes + write_bytes)
	FROM rollups_minute WHERE kind = '$1' AND minute >= $2 AND minute < $3
	GROUP BY 1, 2 ORDER BY 1, 2"
}
