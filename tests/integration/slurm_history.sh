#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The history loop end to end on a real local Slurm cluster with a real
# MariaDB, no imported profile: an application runs once without
# --io-upgrade, the Lustre statistics of that run arrive as a Lustre site
# emits them (Telegraf inputs.lustre2 lines for the OSTs, `lctl get_param
# mdt.*.job_stats` of Lustre 2.15 for the MDT; job id = the Slurm job
# id), `fwdctl history run` (what fwdalloc-history.timer starts) turns the
# finished job into history, and the next run of the same application with
# --io-upgrade is decided from it (the audit says how many runs).  A second
# application has Darshan as its only source.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
# Ports of its own: 60 above slurm_basic/slurm_alloc's when a base is
# given (slurm_pool.sh takes +20, reliability.sh +40).
mc_start slurm-history $((${FWDALLOC_MC_PORT_BASE:-17300} + 60))
fwdctl() { "$top_builddir/fwdctl" "$@"; }
wait_gone() {
	local i
	for i in $(seq 1 600); do
		[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && { mc_settle "$1"; return 0; }
		sleep 0.1
	done
	diag "job $1 still queued"
	return 1
}
wait_running() {
	local i
	for i in $(seq 1 300); do
		[ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ] && return 0
		sleep 0.1
	done
	diag "job $1 not running"
	return 1
}
# the job's end, as the epilog recorded it (bounded wait)
wait_ended() {
	local i
	for i in $(seq 1 100); do
		[ "$(sql "SELECT end_at IS NOT NULL FROM jobs WHERE job_id = $1")" = 1 ] && return 0
		sleep 0.1
	done
	diag "job $1 has no end_at"
	return 1
}
audit_db() { sql "SELECT $2 FROM audit WHERE job_id = $1 AND JSON_VALUE(record, '\$.event') = 'prolog' ORDER BY id DESC LIMIT 1"; }
held_fwds() { sql "SELECT IFNULL(GROUP_CONCAT(forwarder ORDER BY forwarder), '') FROM allocations WHERE job_id = $1 AND released_at IS NULL"; }

check_eq "no profile to start with" 0 "$(sql 'SELECT COUNT(*) FROM profiles')"

# ---- bwapp: Lustre statistics as the only history ----
j1=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --wrap 'sleep 1' 2>&1)
check_match "first bwapp run submitted (no --io-upgrade)" '^[0-9]+$' "$j1"
wait_gone "$j1"
wait_ended "$j1"
check_eq "first run: not requested, so not scaled" "" \
	"$(sql "SELECT IFNULL(GROUP_CONCAT(forwarder), '') FROM allocations WHERE job_id = $j1 AND action = 'scale'")"
read -r start end <<<"$(sql "SELECT start_at, end_at FROM jobs WHERE job_id = $j1")"
snap=$((end + 5))
# what the OSS's Telegraf (inputs.lustre2) emitted after the run: the
# job's cumulative totals on each OST, 1 GiB written on each (about 1 GB/s
# for its second of I/O on its one default forwarder)
{
	for o in 0000 0001; do
		printf 'lustre2,host=oss1,jobid=%s,name=lustre-OST%s jobstats_ost_setattr=0i,jobstats_ost_sync=4i,jobstats_punch=0i,jobstats_read_bytes=0i,jobstats_read_calls=0i,jobstats_read_max_size=0i,jobstats_read_min_size=0i,jobstats_write_bytes=1073741824i,jobstats_write_calls=1024i,jobstats_write_max_size=1048576i,jobstats_write_min_size=1048576i %s000000000\n' \
			"$j1" "$o" "$snap"
	done
} >"$T/telegraf.lp"
fwdctl ingest --format influx "$T/telegraf.lp" >"$T/i1.out" 2>&1
check_eq "Telegraf lustre2 lines ingested" \
	"read 2 lines, stored 2 samples, rejected 0 lines" "$(cat "$T/i1.out")"
# and the MDT's job_stats as Lustre 2.15 prints them
{
	echo "mdt.lustre-MDT0000.job_stats="
	echo "job_stats:"
	printf -- '- %-16s %s\n' "job_id:" "$j1"
	printf '  %-16s %d.%09d secs.nsecs\n' "snapshot_time:" "$snap" 0
	printf '  %-16s %d.%09d secs.nsecs\n' "start_time:" "$start" 0
	printf '  %-16s %d.%09d secs.nsecs\n' "elapsed_time:" "$((snap - start))" 0
	printf '  %s:%*s { samples: %11d, unit: %5s, min: %8d, max: %8d, sum: %16d }\n' \
		open $((15 - 4)) "" 8 usecs 10 40 200 \
		close $((15 - 5)) "" 8 usecs 5 20 100
} >"$T/mdt.txt"
fwdctl ingest --format lustre-jobstats "$T/mdt.txt" >"$T/i2.out" 2>&1
check_match "Lustre 2.15 MDT job_stats ingested" "stored 1 samples, rejected 0 lines" "$(cat "$T/i2.out")"

fwdctl history run >"$T/h1.out" 2>&1
check_match "history run: the finished job summarised from job_stats" \
	"1 summaries from job_stats, .* 1 profiles updated" "$(cat "$T/h1.out")"
check_eq "history: job_io of the first run (k = 1: its default forwarder)" "jobstats	2147483648	16	1" \
	"$(sql "SELECT source, write_bytes, mdops, forwarders_held FROM job_io WHERE job_id = $j1")"
check_eq "history: the profile of root/bwapp from 1 run" 1 \
	"$(sql "SELECT runs FROM profiles WHERE name = 'bwapp'")"
fwdctl history run >"$T/h2.out" 2>&1
check_match "history run again: nothing changes" "0 profiles updated" "$(cat "$T/h2.out")"

j2=$(sbatch --parsable -N4 -w 'c[1-4]' -J bwapp --io-upgrade --wrap 'sleep 2' 2>&1)
check_match "second bwapp run submitted with --io-upgrade" '^[0-9]+$' "$j2"
wait_running "$j2"
check_eq "second run: scaled because of the first" scale "$(audit_db "$j2" action)"
check_eq "second run: the audit says 1 run of history" 1 \
	"$(audit_db "$j2" "JSON_VALUE(record, '\$.inputs.runs')")"
check_eq "second run: 4 forwarders held" 4 \
	"$(sql "SELECT COUNT(DISTINCT forwarder) FROM allocations WHERE job_id = $j2")"
out=$(fwdctl profile show --job "$j2")
check_match "profile show --job: the run the figures come from" \
	"job $j1 +jobstats +read 0 B, written 2147483648 B" "$out"
wait_gone "$j2"
wait_ended "$j2"
read -r start end <<<"$(sql "SELECT start_at, end_at FROM jobs WHERE job_id = $j2")"
sed -e "s/jobid=$j1,/jobid=$j2,/" -e "s/ [0-9]*000000000\$/ $((end + 5))000000000/" \
	"$T/telegraf.lp" >"$T/telegraf2.lp"
fwdctl ingest --format influx "$T/telegraf2.lp" >"$T/i3.out" 2>&1
fwdctl history run >"$T/h3.out" 2>&1
check_eq "the scaled run becomes history with k = 4" 4 \
	"$(sql "SELECT forwarders_held FROM job_io WHERE job_id = $j2")"
check_match "and bandwidth_by_forwarders has a point for k = 4" '"4"' \
	"$(sql "SELECT bandwidth_by_forwarders FROM profiles WHERE name = 'bwapp'")"

# ---- dapp: Darshan as the only source ----
j3=$(sbatch --parsable -N2 -w 'c[5-6]' -J dapp --wrap 'sleep 1' 2>&1)
check_match "first dapp run submitted" '^[0-9]+$' "$j3"
wait_gone "$j3"
wait_ended "$j3"
read -r start end <<<"$(sql "SELECT start_at, end_at FROM jobs WHERE job_id = $j3")"
# darshan-parser --total --perf of that run: 64 processes, one shared file
sed -e "s/^# jobid: .*/# jobid: $j3/" -e "s/^# start_time: .*/# start_time: $start/" \
	-e "s/^# end_time: .*/# end_time: $end/" \
	"$top_srcdir/tests/fixtures/darshan/darshan-total-perf.txt" >"$T/dapp.txt"
fwdctl ingest --format darshan "$T/dapp.txt" >"$T/d.out" 2>&1
check_match "Darshan summary ingested" "stored 1 job summaries, rejected 0 files" "$(cat "$T/d.out")"
fwdctl history run >"$T/h4.out" 2>&1
check_match "history run: the Darshan summary kept, its profile made" \
	"1 profiles updated" "$(cat "$T/h4.out")"
check_eq "dapp profile: N-1 from Darshan, 1 run" "N-1	1" \
	"$(sql "SELECT io_mode, runs FROM profiles WHERE name = 'dapp'")"
j4=$(sbatch --parsable -N2 -w 'c[5-6]' -J dapp --io-upgrade --wrap 'sleep 2' 2>&1)
wait_running "$j4"
check_eq "second dapp run: decided from its Darshan history (not 'default')" \
	scale "$(audit_db "$j4" action)"
check_eq "second dapp run: the audit says 1 run of history" 1 \
	"$(audit_db "$j4" "JSON_VALUE(record, '\$.inputs.runs')")"
wait_gone "$j4"

tap_done
