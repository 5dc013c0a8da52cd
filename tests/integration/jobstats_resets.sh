#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lustre job_stats entries that start again: a target drops a job's entry
# once it has been idle (twice its job_cleanup_interval) or when job_stats
# is cleared, and the job's next operation there starts a new entry from
# zero.  A job's totals are the sums of its snapshots' increments, a
# snapshot below the previous one (samples or bytes) counted whole, so
# the history loop's summary (job_io), the report's totals and its
# series agree, and none is the newest entry's counts alone.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null || skip_all "jq not installed"
uid=$(id -u nobody 2>/dev/null) || skip_all "no user nobody"
db_start
fw db init
check_eq "schema created" 0 "$rc"
printf 'history:\n  max_age: 36500d\n' >>"$policy"

# 7001: an hour of job 7001 (Slurm's id as the Lustre id, jobid_name %j);
# 7002: nobody's cp, matched by program name
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (7001, 'ann', 'wrf', 'n[1-2]', 2, 1700500000, 1700503600, 'COMPLETED', 0),
   (7002, 'nobody', 'cp', 'n3', 1, 1700600000, 1700600600, 'COMPLETED', 0)"

entry() { # id time op samples sum [op samples sum]...
	local id=$1 t=$2
	shift 2
	printf -- '- job_id:          %s\n  snapshot_time:   %s\n' "$id" "$t"
	while [ $# -ge 3 ]; do
		printf '  %-16s { samples: %11s, unit: bytes, min:    4096, max: 1048576, sum: %15s }\n' "$1:" "$2" "$3"
		shift 3
	done
}
md() { # id time open_samples
	printf -- '- job_id:          %s\n  snapshot_time:   %s\n' "$1" "$2"
	printf '  open:            { samples: %11s, unit:  reqs }\n' "$3"
}
{
	echo "obdfilter.lustre-OST0000.job_stats="
	echo "job_stats:"
	# both counters fall: the entry expired in the quiet half hour
	entry 7001 1700500060 read_bytes 10 10000 write_bytes 20 200000
	entry 7001 1700500120 read_bytes 30 30000 write_bytes 40 400000
	entry 7001 1700502000 read_bytes 2 2000 write_bytes 5 50000
	entry 7001 1700502060 read_bytes 4 4000 write_bytes 9 90000
	# before cp's run: what an earlier cp of nobody left
	entry "cp.$uid" 1700599990 read_bytes 50 5000
	entry "cp.$uid" 1700600100 read_bytes 60 6000
	entry "cp.$uid" 1700600400 read_bytes 5 700
	entry "cp.$uid" 1700600500 read_bytes 8 900
	echo "obdfilter.lustre-OST0001.job_stats="
	echo "job_stats:"
	# a new entry of many small writes: more requests, fewer bytes
	entry 7001 1700500060 write_bytes 100 1000000
	entry 7001 1700501000 write_bytes 300 600000
	entry 7001 1700501060 write_bytes 310 610000
	echo "obdfilter.lustre-OST0002.job_stats="
	echo "job_stats:"
	# a new entry that outgrew the old one between two snapshots: an
	# increase, short by the old entry's counts
	entry 7001 1700500060 write_bytes 1 100
	entry 7001 1700502000 write_bytes 50 5000000
	echo "mdt.lustre-MDT0000.job_stats="
	echo "job_stats:"
	md 7001 1700500060 5
	md 7001 1700500120 8
	md 7001 1700502000 3
	md 7001 1700502060 4
} >"$d/js.txt"
fw ingest --format lustre-jobstats "$d/js.txt"
check_eq "job_stats ingested" 0 "$rc" || diag "$err"
check_eq "the snapshots stored" 21 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw")"

# read: OST0000 10 + 20 + 2 (new) + 2, 10000 + 20000 + 2000 + 2000.
# write: OST0000 20 + 20 + 5 (new) + 4, 200000 +
# 200000 + 50000 + 40000; OST0001 100 + 300 (new) + 10, 1000000 +
# 600000 + 10000; OST0002 1 + 49, 100 + 4999900.  open: 5 + 3 + 3 (new)
# + 1.
want_r=34 want_rb=34000 want_w=$((49 + 410 + 50))
want_wb=$((490000 + 1610000 + 5000000)) want_md=12

fw history run --now 1700700000
check_eq "history run: exit 0" 0 "$rc" || diag "$err"
check_eq "job 7001: the sums of the increments, every entry counted" \
	"jobstats	$want_rb	$want_wb	$want_md" \
	"$(q "SELECT source, read_bytes, write_bytes, mdops FROM job_io WHERE job_id = 7001")"
fw report job 7001 --json
check_eq "report job 7001: exit 0" 0 "$rc" || diag "$err"
J=$out
jqr() { printf '%s' "$J" | jq -r "$1"; }
check_eq "report: job_stats totals = the history loop's" \
	"$want_rb	$want_wb	$want_r	$want_w	$want_md" \
	"$(jqr '[.jobstats.read_bytes, .jobstats.write_bytes, .jobstats.read_ops, .jobstats.write_ops, .jobstats.md_ops] | @tsv')"
check_eq "report: the series adds up to the totals" \
	"$want_rb	$want_wb" \
	"$(jqr '[(.series.read_bytes | add), (.series.write_bytes | add)] | @tsv')"
check_eq "report: each target's totals" \
	"ost	lustre-OST0000	34000	490000
ost	lustre-OST0001	0	1610000
ost	lustre-OST0002	0	5000000" \
	"$(jqr '.components[] | select(.kind == "ost") | [.kind, .name, .job.read_bytes, .job.write_bytes] | @tsv' | sort)"
# each snapshot's increments in the bucket of its time
bucket=$(jqr .range.bucket) from=$(jqr .range.from)
want=$(printf '%s\n' \
	"1700500060 10000 1200100" "1700500120 20000 200000" \
	"1700501000 0 600000" "1700501060 0 10000" \
	"1700502000 2000 5049900" "1700502060 2000 40000" |
	awk -v f="$from" -v b="$bucket" '{ k = f + int(($1 - f) / b) * b
		r[k] += $2; w[k] += $3 } END { for (k in r) print k "\t" r[k] "\t" w[k] }' |
	sort -n)
check_eq "report: the series, bucket by bucket" "$want" \
	"$(jqr '.series | [.t, .read_bytes, .write_bytes] | transpose[] | select(.[1] + .[2] > 0) | @tsv')"

# cp's ids name the process (Lustre's procname_uid, %e.%u): looked at
# again history_loop.late (1h) later under that jobid_name
printf 'jobstats:\n  jobid_name: "%%e.%%u"\n' >>"$policy"
fw history run --now $((1700700000 + 3601))
check_eq "history run, jobid_name %e.%u: exit 0" 0 "$rc" || diag "$err"
# 6000 - 5000 (less the earlier run's), then 700 (new entry) + 200
check_eq "cp by program name: from the earlier run's counts, then a new entry" \
	"jobstats	1900	0" \
	"$(q "SELECT source, read_bytes, write_bytes FROM job_io WHERE job_id = 7002")"

tap_done
