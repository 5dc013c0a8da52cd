#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Lustre job_stats under a jobid_name that names the process, not the job
# (Lustre's default procname_uid, "%e.%u": ids like dd.500): the history
# loop gives them to the job of that user whose name is the program and
# that ran then (+ jobstats.grace), when it is the only one; otherwise
# they stay unmatched, counted by why.  Jobs found without statistics are
# looked at again when statistics of their run arrive, or
# history_loop.late later, not on every run.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

fw db init
check_eq "schema created" 0 "$rc"
printf 'history:\n  max_age: 36500d\n' >>"$policy"
uid=$(id -u nobody 2>/dev/null) || skip_all "no user nobody"

# 6001: nobody's dd; 6002 and 6003: two tar jobs of nobody at the same
# time; 6004: a user this host does not know; 6005: a name longer than
# the kernel keeps (15 bytes).
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (6001, 'nobody', 'dd', 'n1', 1, 1700100000, 1700100600, 'COMPLETED', 0),
   (6002, 'nobody', 'tar', 'n1', 1, 1700200000, 1700200600, 'COMPLETED', 0),
   (6003, 'nobody', 'tar', 'n2', 1, 1700200300, 1700200900, 'COMPLETED', 0),
   (6004, 'nosuchuser-fwd', 'dd', 'n3', 1, 1700300000, 1700300100, 'COMPLETED', 0),
   (6005, 'nobody', 'averyveryverylongprogram', 'n1', 1, 1700310000, 1700310100, 'COMPLETED', 0)"

# job_stats as Lustre 2.12 prints them (tests/fixtures/lustre); dd.$uid
# has counts from an earlier run (1700099000, before 6001 started).
entry() { # id time read_samples read_sum write_samples write_sum
	printf -- '- job_id:          %s\n  snapshot_time:   %s\n' "$1" "$2"
	printf '  read_bytes:      { samples: %11s, unit: bytes, min:    4096, max: 1048576, sum: %15s }\n' "$3" "$4"
	printf '  write_bytes:     { samples: %11s, unit: bytes, min:    4096, max: 1048576, sum: %15s }\n' "$5" "$6"
}
{
	echo "obdfilter.lustre-OST0000.job_stats="
	echo "job_stats:"
	entry "dd.$uid" 1700099000 10 1000 5 500
	entry "dd.$uid" 1700100300 110 101000 25 20500
	entry "dd.$uid" 1700100590 210 201000 45 40500
	entry "tar.$uid" 1700200500 3 3000 0 0
	entry "dd.$uid" 1700300050 9 9000 0 0
	entry "averyveryverylo.$uid" 1700310050 4 4000 2 2000
	echo "mdt.lustre-MDT0000.job_stats="
	echo "job_stats:"
	printf -- '- job_id:          dd.%s\n  snapshot_time:   1700100590\n' "$uid"
	printf '  open:            { samples:           7, unit:  reqs }\n'
	printf '  close:           { samples:           7, unit:  reqs }\n'
	printf '  getattr:         { samples:           3, unit:  reqs }\n'
} >"$d/js.txt"
fw ingest --format lustre-jobstats "$d/js.txt"
check_eq "job_stats stored, no Slurm job named" 0 \
	"$(q "SELECT COUNT(*) FROM jobstats_raw WHERE job_id IS NOT NULL")"

# Under jobid_name %j (the default) the ids name no job.
fw history run --now 1700400000
check_eq "jobid_name %j: nothing matched" \
	"examined 5 finished jobs: 0 summaries from job_stats, 0 from forwarder samples, 0 kept (traces, Darshan), 0 unchanged, 5 without statistics; 0 profiles updated" "$out"

# A new jobid_name is not new statistics: the jobs found without any are
# looked at again history_loop.late (1h) later.
printf 'jobstats:\n  jobid_name: "%%e.%%u"\n' >>"$policy"
t2=$((1700400000 + 3601))
fw history run --now $t2
check_eq "jobid_name %e.%u: exit 0" 0 "$rc"
check_eq "jobid_name %e.%u: two jobs matched, three not, by why" \
	"examined 5 finished jobs: 2 summaries from job_stats, 0 from forwarder samples, 0 kept (traces, Darshan), 0 unchanged, 3 without statistics; 2 profiles updated
job_stats ids of program.uid: 2 matched to their job, unmatched: 2 (another job of the same user and name ran then), 1 (user without a uid on this host)" "$out"
# 201000 - 1000 read in 210 - 10 requests, 40500 - 500 written in
# 45 - 5; open + close + getattr on the MDT
check_eq "dd: its run's counts, less those of the earlier run" \
	"jobstats	200000	40000	17" \
	"$(q "SELECT source, read_bytes, write_bytes, mdops FROM job_io WHERE job_id = 6001")"
check_eq "the 15 bytes of a long name" "jobstats	4000	2000" \
	"$(q "SELECT source, read_bytes, write_bytes FROM job_io WHERE job_id = 6005")"
check_eq "two tar jobs at once, an unknown user: no summary" 0 \
	"$(q "SELECT COUNT(*) FROM job_io WHERE job_id IN (6002, 6003, 6004)")"

# ---- jobs found without statistics are not looked at on every run ----
fw history run --now $((t2 + 60))
check_eq "a minute later: the three not looked at again" \
	"examined 5 finished jobs: 0 summaries from job_stats, 0 from forwarder samples, 0 kept (traces, Darshan), 2 unchanged, 3 without statistics; 0 profiles updated
of the jobs without statistics, 3 were found so less than history_loop.late ago and nothing of their run arrived since: not looked at again" "$out"
check_eq "when each was found without statistics (the others have summaries)" \
	"6002	$t2
6003	$t2
6004	$t2" "$(q "SELECT job_id, examined_at FROM history_examined ORDER BY job_id")"
# samples of the forwarder 6002 held arrive during its run (before 6003
# started): 6002 is looked at again, 6003 and 6004 not
q "INSERT INTO allocations (job_id, forwarder, nodes, node_count, action,
   acquired_at, released_at) VALUES
   (6002, 'fwd09', 'n1', 1, 'default', 1700200000, 1700200600)"
printf '%s\n' \
	"fwd,node=fwd09 read_bytes=0i,write_bytes=0i,md_ops=0i 1700200050000000000" \
	"fwd,node=fwd09 read_bytes=1000i,write_bytes=3000i,md_ops=5i 1700200100000000000" \
	"fwd,node=fwd09 read_bytes=1500i,write_bytes=9000i,md_ops=6i 1700200200000000000" >"$d/fwd.lp"
fw ingest --format influx "$d/fwd.lp"
check_eq "the arrivals of the forwarder samples" "samples	1700200100	1700200200" \
	"$(q "SELECT source, min_ts, max_ts FROM ingest_arrivals")"
fw history run --now $((t2 + 120))
check_eq "after the samples: the job they meet looked at again" \
	"examined 5 finished jobs: 0 summaries from job_stats, 1 from forwarder samples, 0 kept (traces, Darshan), 2 unchanged, 2 without statistics; 1 profiles updated
of the jobs without statistics, 2 were found so less than history_loop.late ago and nothing of their run arrived since: not looked at again
job_stats ids of program.uid: 0 matched to their job, unmatched: 1 (another job of the same user and name ran then), 0 (user without a uid on this host)" "$out"
check_eq "6002 from its forwarder's samples" "forwarders	1500	9000	6" \
	"$(q "SELECT source, read_bytes, write_bytes, mdops FROM job_io WHERE job_id = 6002")"
check_eq "the arrivals were taken" 0 "$(q "SELECT COUNT(*) FROM ingest_arrivals")"
check_eq "6002 is no longer without statistics" \
	"6003	$t2
6004	$t2" "$(q "SELECT job_id, examined_at FROM history_examined ORDER BY job_id")"
# history_loop.late later: looked at again, whatever arrived
fw history run --now $((t2 + 3600))
check_eq "history_loop.late later: looked at again" \
	"examined 5 finished jobs: 0 summaries from job_stats, 0 from forwarder samples, 0 kept (traces, Darshan), 3 unchanged, 2 without statistics; 0 profiles updated
job_stats ids of program.uid: 0 matched to their job, unmatched: 1 (another job of the same user and name ran then), 1 (user without a uid on this host)" "$out"
fw history run --now $((t2 + 3600 + 120)) --json
check_match "--json: the counts" '"by_program": 0' "$out"
check_match "--json: the unmatched by why" '"unmatched_ambiguous": 0' "$out"
check_match "--json: not looked at again" '"not_reexamined": 2' "$out"

tap_done
