#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end through the real ingestion path: cumulative counters in
# InfluxDB line protocol (what Telegraf emits) -> fwdctl ingest ->
# rollups_minute -> fwdctl health scan -> fwdctl health export.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/health_common.sh"

# 100 minutes of samples every 30 s: fwd01 at 2 GB/s with a short queue,
# fwd02 at 100 MB/s with requests waiting (queue 4), both at 100 ops/s.
awk -v t0="$T0" 'BEGIN {
	for (k = 0; k <= 200; k++) {
		ts = sprintf("%d000000000", t0 + k * 30)
		printf "fwd,node=fwd01 read_bytes=0i,write_bytes=%.0fi,read_ops=0i,write_ops=%di,md_ops=0i,queue_len=1 %s\n", k * 30 * 2e9, k * 3000, ts
		printf "fwd,node=fwd02 read_bytes=0i,write_bytes=%.0fi,read_ops=0i,write_ops=%di,md_ops=0i,queue_len=4 %s\n", k * 30 * 1e8, k * 3000, ts
	}
}' >"$d/stats.influx"
out=$("$fwdctl" ingest --format influx "$d/stats.influx" 2>&1)
check_eq "ingest exits 0" 0 $?
check_match "ingest stored the samples" 'stored 402 samples, rejected 0 lines' "$out"
check_eq "rollups: minutes 0-100 per forwarder" "fwd01	101
fwd02	101" \
	"$(q "SELECT name, COUNT(*) FROM rollups_minute GROUP BY name ORDER BY name")"

scan_until 100 >"$d/scan.out" 2>&1
check_eq "scan exits 0" 0 $?
check_eq "slow forwarder excluded from ingested statistics" excluded \
	"$(health_state fwd fwd02)"
check_eq "fast forwarder ok" ok "$(health_state fwd fwd01)"
check_eq "history: suspect from the 60th minute, excluded two windows later" \
	"suspect	3600
excluded	4800" \
	"$(q "SELECT state, start_at - $T0 FROM health_history WHERE name = 'fwd02' ORDER BY id")"
check_match "export feeds the allocator" \
	'\{"kind":"forwarder","name":"fwd02","state":"excluded"\}' \
	"$("$fwdctl" health export)"

tap_done
