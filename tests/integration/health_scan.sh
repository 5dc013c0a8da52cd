#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl health scan against a private MariaDB with generated statistics:
# Beacon's LAMMPS case (one of 3 forwarders at 1/20 speed, found by the
# peer detector, excluded, handed out no more, back after recovery), the
# Shentu case (5 of 400 OSTs lagging, excluded, OST command run), a
# healthy but unevenly loaded job, a lightly used forwarder, a transient
# dip, a sustained slowdown with recovery, idempotent rescans, history
# and the Table 2 report.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/health_common.sh"

# ---- LAMMPS: 768 nodes on fwd01..fwd03, three checkpointing runs.  Each
# forwarder writes 60 GB per run: fwd01 and fwd03 at 1 GB/s in a minute,
# fwd02 at 50 MB/s in 20 minutes (never the 60 minutes the sustained
# detector needs: only the peer detector can see it).
for k in 0 1 2; do
	s=$((30 * k))
	echo "fwd fwd01 $s 1 1000000000 100 NULL"
	echo "fwd fwd03 $s 1 1000000000 100 NULL"
	echo "fwd fwd02 $s 20 50000000 100 NULL"
done | rollups
job 1001 'c[1-768]' 768 0 25
job 1002 'c[1-768]' 768 30 55
job 1003 'c[1-768]' 768 60 85

scan_until 30 >"$d/scan1.out" 2>&1
check_eq "scan to m30 exits 0" 0 $?
check_match "scan prints the change with the peer figures" \
	"forwarder fwd02: ok -> suspect at .*job 1001: average 5e\+07 B/s and peak 5e\+07 B/s under 50% of the 3 members' mean peak" \
	"$(cat "$d/scan1.out")"
check_eq "LAMMPS: slow forwarder suspect after one bad window" suspect \
	"$(health_state fwd fwd02)"
check_eq "LAMMPS: fast peer fwd01 ok" ok "$(health_state fwd fwd01)"
check_eq "LAMMPS: fast peer fwd03 ok" ok "$(health_state fwd fwd03)"

scan_until 90 >"$d/scan2.out" 2>&1
check_eq "scan to m90 exits 0" 0 $?
check_eq "LAMMPS: excluded after the third bad window" excluded \
	"$(health_state fwd fwd02)"
check_eq "LAMMPS: peers still ok" "ok ok" \
	"$(health_state fwd fwd01) $(health_state fwd fwd03)"
check_eq "alert command ran for both changes, component in env" \
	"forwarder fwd02 ok suspect
forwarder fwd02 suspect excluded" "$(cat "$d/alerts")"

# ---- idempotent: the same scan again applies nothing, changes nothing
before=$(q "SELECT kind, name, state, since, bad_windows, good_windows, last_scan_at, updated_at FROM health ORDER BY kind, name")
hist_before=$(q "SELECT COUNT(*) FROM health_history")
out=$("$fwdctl" --json health scan --since "$T0" --until "$(m 90)" 2>&1)
check_eq "rescan exits 0" 0 $?
check_match "rescan applies no window" '"windows": 0,' "$out"
check_match "rescan changes nothing" '"state_changes": 0,' "$out"
check_eq "rescan leaves the health table as it was" "$before" \
	"$(q "SELECT kind, name, state, since, bad_windows, good_windows, last_scan_at, updated_at FROM health ORDER BY kind, name")"
check_eq "rescan adds no history" "$hist_before" \
	"$(q "SELECT COUNT(*) FROM health_history")"
check_eq "no second alert" 2 "$(wc -l <"$d/alerts" | tr -d ' ')"

# ---- feedback into decisions
"$fwdctl" health export >"$d/health.json"
check_eq "export exits 0" 0 $?
check_match "HEALTH.json lists fwd02 excluded" \
	'\{"kind":"forwarder","name":"fwd02","state":"excluded"\}' \
	"$(cat "$d/health.json")"
cat >"$d/job.json" <<EOF
{"job_id": "9001", "user": "bob", "account": "a", "name": "solver",
 "partition": "batch", "nodes": "c[257-512]", "request": "auto"}
EOF
if "$fwdctl" decide --help >/dev/null 2>&1; then
	dec=$("$fwdctl" decide --job "$d/job.json" --health "$d/health.json" \
		--compact 2>&1)
	check_match "decide: job on fwd02's nodes avoids it" \
		'"action":"avoid-anomaly"' "$dec"
	case $dec in
	*'"forwarder":"fwd02"'*) fail "decide: fwd02 no longer handed out"
		diag "got: $dec" ;;
	*) pass "decide: fwd02 no longer handed out" ;;
	esac
else
	skip_one "decide: job on fwd02's nodes avoids it" "fwdctl decide not built"
	skip_one "decide: fwd02 no longer handed out" "fwdctl decide not built"
fi

# ---- recovery: probe traffic at full speed in three windows
printf 'fwd fwd02 100 1 2000000000 100 NULL\nfwd fwd02 110 1 2000000000 100 NULL\nfwd fwd02 120 1 2000000000 100 NULL\n' |
	rollups
scan_until 120 >/dev/null 2>&1
check_eq "two good windows are not enough" excluded "$(health_state fwd fwd02)"
scan_until 130 >/dev/null 2>&1
check_eq "recovered after three good windows" ok "$(health_state fwd fwd02)"
check_eq "history: suspect, excluded, ok with window times" \
	"suspect	1200	3600
excluded	4800	1200
ok	6000	NULL" \
	"$(q "SELECT state, start_at - $T0, duration FROM health_history WHERE name = 'fwd02' ORDER BY id")"
"$fwdctl" health export >"$d/health.json"
check_match "HEALTH.json has fwd02 ok again" \
	'\{"kind":"forwarder","name":"fwd02","state":"ok"\}' \
	"$(cat "$d/health.json")"
if "$fwdctl" decide --help >/dev/null 2>&1; then
	dec=$("$fwdctl" decide --job "$d/job.json" --health "$d/health.json" \
		--compact 2>&1)
	check_match "decide: fwd02 handed out again after recovery" \
		'"mapping":\[\{"nodes":"c\[257-512\]","forwarder":"fwd02"\}\]' \
		"$dec"
else
	skip_one "decide: fwd02 handed out again after recovery" \
		"fwdctl decide not built"
fi

# ---- Shentu: three runs reading evenly from 400 OSTs; 5 lag (100 MB/s
# for 12 minutes where the others do 500 MB/s for 2).
lag=" 7 100 250 333 399 "
for k in 0 1 2; do
	s=$((200 + 30 * k))
	i=0
	while [ $i -lt 400 ]; do
		n=$(printf 'lustre-OST%04d' $i)
		case $lag in
		*" $i "*) echo "ost $n $s 12 100000000 50 NULL" ;;
		*) echo "ost $n $s 2 500000000 50 NULL" ;;
		esac
		i=$((i + 1))
	done
done | rollups
for k in 0 1 2; do
	id=$((2001 + k))
	s=$((200 + 30 * k))
	job $id '' 4096 $s $((s + 15))
	awk -v id=$id -v ts="$(m $((s + 15)))" 'BEGIN {
		printf "INSERT INTO jobstats_raw (kind, target, lustre_job_id, job_id, ts, op, samples, unit, sum_value) VALUES "
		for (i = 0; i < 400; i++)
			printf "%s(\x27ost\x27,\x27lustre-OST%04d\x27,\x27%d\x27,%d,%d,\x27read_bytes\x27,100,\x27bytes\x27,60000000000)", i ? "," : "", i, id, id, ts
		print ";"
	}' | sql
done
scan_until 280 >"$d/scan3.out" 2>&1
check_eq "scan to m280 exits 0" 0 $?
check_eq "Shentu: exactly the 5 lagging OSTs excluded" \
	"lustre-OST0007
lustre-OST0100
lustre-OST0250
lustre-OST0333
lustre-OST0399" \
	"$(q "SELECT name FROM health WHERE kind = 'ost' AND state <> 'ok' ORDER BY name")"
check_eq "Shentu: OST exclusion command run once per OST, name appended" \
	"exclude lustre-OST0007
exclude lustre-OST0100
exclude lustre-OST0250
exclude lustre-OST0333
exclude lustre-OST0399" "$(sort "$d/ost.log")"
check_match "Shentu: reason names the job and figures" \
	'job 2003: average 1e\+08 B/s and peak 1e\+08 B/s under 50% of the 400 members' \
	"$(q "SELECT reason FROM health WHERE name = 'lustre-OST0100'")"

# ---- healthy but unevenly loaded: one job on fwd04..fwd06 (120 GB at
# 1 GB/s, 108 GB at 0.6 GB/s, 12 GB at 0.2 GB/s), then fwd06 lightly used
# for two hours (50 MB/s, requests served at once: queue 0.1).
cat <<EOF | rollups
fwd fwd04 300 2 1000000000 100 NULL
fwd fwd05 300 3 600000000 100 NULL
fwd fwd06 300 1 200000000 100 0.1
fwd fwd06 302 120 50000000 20 0.1
EOF
job 3001 'c[769-1536]' 768 300 305
# ---- transient dip (30 min) on fwd07; sustained slowdown (90 min) with
# requests waiting on fwd08, then both at full speed.
cat <<EOF | rollups
fwd fwd07 400 30 100000000 100 5
fwd fwd07 430 30 2000000000 100 1
fwd fwd08 400 90 100000000 100 5
fwd fwd08 490 40 2000000000 100 1
EOF
scan_until 490 >/dev/null 2>&1
check_eq "unevenly loaded job: no forwarder flagged" "ok ok ok" \
	"$(health_state fwd fwd04) $(health_state fwd fwd05) $(health_state fwd fwd06)"
check_eq "unevenly loaded: no history rows for fwd04..fwd06" 0 \
	"$(q "SELECT COUNT(*) FROM health_history WHERE name IN ('fwd04', 'fwd05', 'fwd06')")"
check_eq "transient dip shorter than the duration: not flagged" ok \
	"$(health_state fwd fwd07)"
check_eq "transient dip: no history" 0 \
	"$(q "SELECT COUNT(*) FROM health_history WHERE name = 'fwd07'")"
check_eq "sustained slowdown: excluded" excluded "$(health_state fwd fwd08)"
check_match "sustained: reason gives the figures" \
	'^bandwidth at most 1e\+08 B/s, under 30% of the 2.5e\+09 B/s peak, for at least 70 min while loaded$' \
	"$(q "SELECT reason FROM health WHERE name = 'fwd08'")"
scan_until 530 >/dev/null 2>&1
check_eq "sustained: cleared after three good windows" ok \
	"$(health_state fwd fwd08)"
check_eq "sustained: history from the 60th minute to recovery" \
	"suspect	27600
excluded	28800
ok	29400" \
	"$(q "SELECT state, start_at - $T0 FROM health_history WHERE name = 'fwd08' ORDER BY id")"
check_eq "idle components never leave ok" ok "$(health_state fwd fwd10)"

# ---- report: fwd02 80 min (1-4h), fwd08 30 min (<1h); the 5 OSTs are
# still excluded, about 20 h so far (12-96h).
rep=$("$fwdctl" --json health report | tr -d ' \n')
check_eq "report exits 0" 0 $?
check_match "report: forwarder episodes by Table 2 bins" \
	'"forwarder":\{"ended":\[1,1,0,0,0\],"ongoing":\[0,0,0,0,0\],"excluded_now":0,"suspect_now":0\}' \
	"$rep"
check_match "report: OST episodes ongoing in 12-96h" \
	'"ost":\{"ended":\[0,0,0,0,0\],"ongoing":\[0,0,0,5,0\],"excluded_now":5,"suspect_now":0\}' \
	"$rep"
txt=$("$fwdctl" health report)
check_match "text report has the bins" '1-4h +1 +0' "$txt"

tap_done
