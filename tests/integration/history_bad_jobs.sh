#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One bad job costs only itself: finished jobs whose names percent-encode
# past 512 bytes (161 x ';', 200 x '%', 170 CJK characters), a user name
# of 64 CJK characters, and a job the database refuses to summarise (a
# constraint standing in for any job that cannot be processed) are each
# profiled or skipped and counted, and `fwdctl history run` and
# `fwdctl profile rebuild` still profile every other job in the same run
# and exit 0.  The long names get keys of at most 512 bytes, distinct and
# stable.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

fw db init
check_eq "schema created" 0 "$rc"
printf 'history:\n  max_age: 36500d\n' >>"$policy"

semi=$(printf '%161s' '' | tr ' ' ';')
pct=$(printf '%200s' '' | tr ' ' '%')
cjk=$(i=0; while [ $i -lt 170 ]; do printf '\346\260\243'; i=$((i + 1)); done)
pct2=$(printf '%199sx' '' | tr ' ' '%')
cuser=$(i=0; while [ $i -lt 64 ]; do printf '\346\260\243'; i=$((i + 1)); done)
check_eq "the CJK name is 510 bytes" 510 "$(printf '%s' "$cjk" | wc -c)"

# jobs 5001..5009 ended between 1700000100 and 1700000900
q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at,
   end_at, state, updated_at) VALUES
   (5001, 'alice', '$semi', 'n1', 1, 1700000000, 1700000100, 'COMPLETED', 0),
   (5002, 'alice', '$pct', 'n1', 1, 1700000000, 1700000200, 'COMPLETED', 0),
   (5003, 'alice', '$cjk', 'n1', 1, 1700000000, 1700000300, 'COMPLETED', 0),
   (5004, 'alice', '$pct2', 'n1', 1, 1700000000, 1700000400, 'COMPLETED', 0),
   (5005, '$cuser', 'wrf', 'n1', 1, 1700000000, 1700000500, 'COMPLETED', 0),
   (5006, 'ann', 'refused', 'n1', 1, 1700000000, 1700000600, 'COMPLETED', 0),
   (5007, 'bob', 'wrf', 'n1', 1, 1700000000, 1700000700, 'COMPLETED', 0),
   (5008, 'bob', 'wrf', 'n1', 1, 1700000000, 1700000800, 'COMPLETED', 0),
   (5009, 'cy', 'lammps', 'n1', 1, 1700000000, 1700000900, 'COMPLETED', 0)"
check_eq "the names are stored whole" "161 200 510 170" \
	"$(q "SELECT CHAR_LENGTH(name) FROM jobs WHERE job_id = 5001") $(q "SELECT CHAR_LENGTH(name) FROM jobs WHERE job_id = 5002") $(q "SELECT LENGTH(name), CHAR_LENGTH(name) FROM jobs WHERE job_id = 5003" | tr '\t' ' ')"
: >"$d/js.lp"
for j in 5001 5002 5003 5004 5005 5006 5007 5008 5009; do
	printf 'lustre2,host=oss1,jobid=%s,name=lustre-OST0001 jobstats_read_bytes=%si,jobstats_read_calls=2i,jobstats_write_bytes=8000000i,jobstats_write_calls=8i 1700000050000000000\n' \
		"$j" "$j" >>"$d/js.lp"
done
fw ingest --format influx "$d/js.lp"
check_eq "job_stats ingested" 0 "$rc"
# any job that cannot be processed: the database refuses its summary (a
# CHECK constraint here)
q "ALTER TABLE job_io ADD CONSTRAINT test_refuse_5006 CHECK (job_id <> 5006)"

fw history run --now 1700001000
check_eq "history run: exit 0" 0 "$rc"
diag "out: $out"
diag "err: $err"
check_match "history run: 9 examined, 8 summaries, 1 skipped" \
	"examined 9 finished jobs: 8 summaries from job_stats.*; 7 profiles updated; 1 jobs skipped" "$out"
check_match "history run: says which job and why" \
	"job 5006: skipped: .*test_refuse_5006" "$err"
check_eq "every other job has its summary" 8 \
	"$(q "SELECT COUNT(*) FROM job_io WHERE job_id BETWEEN 5001 AND 5009")"
check_eq "7 profiles: bob/wrf, cy/lammps, the CJK user, the 4 long names" 7 \
	"$(q "SELECT COUNT(*) FROM profiles")"
check_eq "bob/wrf from its 2 runs" 2 \
	"$(q "SELECT runs FROM profiles WHERE user = 'bob' AND name = 'wrf'")"
check_eq "no key longer than 512 bytes, 4 of them cut" "1	4" \
	"$(q "SELECT MAX(LENGTH(profile_key)) <= 512, SUM(profile_key LIKE '%\\%~%') FROM profiles")"
check_eq "the two '%' names that differ at the end: two profiles" 2 \
	"$(q "SELECT COUNT(DISTINCT profile_key) FROM profiles WHERE name LIKE '\\%\\%\\%%'")"
check_eq "the CJK user's profile has the user whole" 64 \
	"$(q "SELECT CHAR_LENGTH(user) FROM profiles WHERE name = 'wrf' AND user <> 'bob'")"
keys=$(q "SELECT profile_key FROM profiles ORDER BY profile_key")

fw history run --now 1700001000
check_eq "second run: exit 0" 0 "$rc"
check_match "second run: nothing to profile again, the bad job skipped again" \
	"0 profiles updated; 1 jobs skipped" "$out"
check_eq "second run: the same keys" "$keys" \
	"$(q "SELECT profile_key FROM profiles ORDER BY profile_key")"

# profile rebuild: the same jobs (5006's summary still refused); a
# profile the database refuses is one key skipped, not the rebuild
q "DELETE FROM profiles WHERE name = 'lammps'"
q "ALTER TABLE profiles ADD CONSTRAINT test_refuse_lammps
   CHECK (name IS NULL OR name <> 'lammps')"
fw profile rebuild
check_eq "profile rebuild: exit 0" 0 "$rc"
diag "out: $out"
diag "err: $err"
check_match "profile rebuild: the runs read, the others written, 2 skipped" \
	"8 runs read, 6 profiles written .*; 2 jobs skipped" "$out"
check_match "profile rebuild: the job whose summary is refused, and why" \
	"job 5006: skipped: .*test_refuse_5006" "$err"
check_match "profile rebuild: says which job and why" \
	"job 5009: skipped: .*test_refuse_lammps" "$err"
check_eq "profile rebuild: the same keys but lammps" \
	"$(printf '%s\n' "$keys" | grep -v 'name=lammps')" \
	"$(q "SELECT profile_key FROM profiles ORDER BY profile_key")"
tap_done
