#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Users see their own jobs' reports and nothing else, with the site's
# identity (MUNGE), on a real local Slurm cluster with its MariaDB, munged
# and the controller service (fwdallocd): user A and user B each run a job
# whose Lustre statistics arrive as Telegraf's lustre2 lines; each gets
# the report of its own job through `fwdctl report job` (which cannot read
# the database password and so asks the service's query socket with a
# MUNGE credential), and is refused the other's; a forged credential (one
# byte changed), a replayed one (sent twice), one made for another request
# and one sent by another uid are refused, saying why; an admin (a member
# of reports.admin_group, once the policy names it) and root get both, and
# the machine report, which a user is refused.  The users and the group
# are made for the test and removed at its end.
. "$top_srcdir/tests/integration/tap.sh"

. "$top_srcdir/tests/integration/mc_lib.sh"
mc_require
command -v munge >/dev/null || skip_all "munge (the client program) not installed"
command -v useradd >/dev/null || skip_all "useradd not installed"
command -v runuser >/dev/null || skip_all "runuser not installed"
export FWDALLOC_MC_SERVICE=1

# Users and a group of the test's own, removed on exit.
ua=fwdrep-a ub=fwdrep-b uc=fwdrep-adm grp=fwdrep-admins
made_users= made_group=
mc_cleanup_extra() {
	local u
	for u in $made_users; do userdel "$u" >/dev/null 2>&1; done
	[ -n "$made_group" ] && groupdel "$grp" >/dev/null 2>&1
	return 0
}
# Ports of its own: 300 above the base when one is given.
mc_start report-identity $((${FWDALLOC_MC_PORT_BASE:-17000} + 300))
for u in $ua $ub $uc; do
	if ! id "$u" >/dev/null 2>&1; then
		useradd -M -d /nonexistent -s /usr/sbin/nologin "$u" ||
			{ diag "useradd $u failed"; tap_done; exit 1; }
		made_users="$made_users $u"
	fi
done
if ! getent group "$grp" >/dev/null; then
	groupadd "$grp" && made_group=1
fi
usermod -a -G "$grp" "$uc"

qsock=$M/fwdallocd-query.sock
# fwdctl where every user may run it, wherever the build tree is
install -m 755 "$top_builddir/fwdctl" "$T/fwdctl"
fwdctl() { "$top_builddir/fwdctl" --policy "$M/policy.yaml" "$@"; }
# as USER: fwdctl report ... through the service; stdout and stderr, then
# "exit N" on a line of its own
as() {
	local u=$1
	shift
	runuser -u "$u" -- env FWDALLOC_MUNGE_SOCKET="$M/munge.sock" \
		"$T/fwdctl" --policy "$M/policy.yaml" "$@" 2>&1 |
		tee -a "$T/users-saw"
	echo "exit ${PIPESTATUS[0]}"
}
report() { as "$1" report job "$2" --json --service "$qsock"; }
json_of() { printf '%s\n' "$1" | sed '$d' | jq -r "$2" 2>/dev/null; }
# a job report's own fields: under "job" (or at the top)
jf() { json_of "$1" "(.job // .).$2"; }
status() { "$top_builddir/fwdallocd" --status --socket "$M/fwdallocd.sock" 2>&1; }
count() { status | sed -n "s/^$1 //p"; }
# a MUNGE credential made by USER with PAYLOAD, in FILE (readable by all)
cred() {
	runuser -u "$1" -- munge -S "$M/munge.sock" -s "$2" >"$3"
	chmod 644 "$3"
}

check_eq "query socket: any local user may connect" 666 "$(stat -c %a "$qsock")"
check_eq "the hooks' socket: still this account only" 600 \
	"$(stat -c %a "$M/fwdallocd.sock")"
out=$(runuser -u "$ua" -- cat "$M/db/db.pass" 2>&1)
check_match "user A cannot read the database password" 'Permission denied' "$out"

# ---- a job of each user, with Lustre statistics ----
wait_ended() {
	local i
	for i in $(seq 1 300); do
		[ "$(sql "SELECT end_at IS NOT NULL FROM jobs WHERE job_id = $1")" = 1 ] && return 0
		sleep 0.1
	done
	diag "job $1 has no end_at"
	return 1
}
submit() {
	runuser -u "$1" -- sbatch --parsable -N1 -J "$2" --chdir /tmp \
		-o /dev/null --wrap 'sleep 1' 2>&1
}
ja=$(submit "$ua" appa)
check_match "user A's job submitted" '^[0-9]+$' "$ja"
jb=$(submit "$ub" appb)
check_match "user B's job submitted" '^[0-9]+$' "$jb"
wait_ended "$ja"
wait_ended "$jb"
check_eq "the jobs' owners recorded" "$ua $ub" \
	"$(sql "SELECT user FROM jobs WHERE job_id IN ($ja, $jb) ORDER BY job_id" | tr '\n' ' ' | sed 's/ $//')"
# what the OSS's Telegraf (inputs.lustre2) emitted after the runs
: >"$T/telegraf.lp"
# (each job its own figures: A wrote 3 MiB + 1, B 5 MiB + 2)
wa=3145729 wb=5242882
for j in $ja $jb; do
	end=$(sql "SELECT end_at FROM jobs WHERE job_id = $j")
	[ "$j" = "$ja" ] && w=$wa || w=$wb
	printf 'lustre2,host=oss1,jobid=%s,name=lustre-OST0000 jobstats_read_bytes=%di,jobstats_read_calls=64i,jobstats_write_bytes=%di,jobstats_write_calls=512i %s000000000\n' \
		"$j" $((w / 2)) "$w" $((end + 5)) >>"$T/telegraf.lp"
done
fwdctl ingest --format influx "$T/telegraf.lp" >"$T/ingest.out" 2>&1
check_eq "Telegraf lustre2 lines of both jobs ingested" \
	"read 2 lines, stored 2 samples, rejected 0 lines" "$(cat "$T/ingest.out")"

# ---- each user: its own report, not the other's ----
out=$(report "$ua" "$ja")
check_match "A: its own report answered" 'exit 0$' "$out" || diag "$out"
check_eq "A: the report's job id" "$ja" "$(jf "$out" job_id)"
check_eq "A: the report's user" "$ua" "$(jf "$out" user)"
check_eq "A: the report's job name" appa "$(jf "$out" name)"
check_eq "A: its job's Lustre writes, as ingested" "$wa" \
	"$(json_of "$out" .jobstats.write_bytes)"
check_eq "A: nothing of B's statistics" 0 \
	"$(printf '%s\n' "$out" | grep -c "$wb")"
out=$(report "$ub" "$jb")
check_match "B: its own report answered" 'exit 0$' "$out" || diag "$out"
check_eq "B: the report's job id" "$jb" "$(jf "$out" job_id)"
check_eq "B: the report's user" "$ub" "$(jf "$out" user)"
check_eq "B: its job's Lustre writes, as ingested" "$wb" \
	"$(json_of "$out" .jobstats.write_bytes)"
check_eq "B: nothing of A's statistics" 0 \
	"$(printf '%s\n' "$out" | grep -c "$wa")"
mkdir "$T/out-a" && chown "$ua" "$T/out-a"
out=$(as "$ua" report job "$ja" --html "$T/out-a/a.html" --service "$qsock")
check_match "A: its own report as HTML" 'exit 0$' "$out" || diag "$out"
check_match "A: the HTML page is a page" '<html' "$(head -c 2000 "$T/out-a/a.html")"
check "A: the HTML page names its job" grep -q "$ja" "$T/out-a/a.html"
out=$(report "$ua" "$jb")
check_match "A: B's job refused, saying why" \
	"the controller service refused: job $jb is not yours: $ua \\(uid $(id -u "$ua")\\) may see only the reports of its own jobs" "$out"
check_match "A: refused with exit 4" 'exit 4$' "$out"
check "A: nothing of B's job printed" test -z "$(printf '%s\n' "$out" | grep -F "$ub")"
out=$(report "$ub" "$ja")
check_match "B: A's job refused" "job $ja is not yours: $ub" "$out"
out=$(report "$ua" 4000000000)
check_match "A: a job fwdalloc never saw: no such job" \
	"refused: job 4000000000: no such job in fwdalloc's records" "$out"
out=$(as "$ua" report machine --json --service "$qsock")
check_match "A: the machine report is for admins" \
	"the machine report is for admins: $ua \\(uid $(id -u "$ua")\\) is not root and the policy names no reports.admin_group" "$out"

# Without --service, a user who cannot read the password asks the
# installed service (absent here), not the database.
out=$(as "$ua" report job "$ja" --json)
check_match "A without --service: the installed query socket, not the database" \
	'no service at .*/fwdalloc/fwdallocd-query.sock.*is it running' "$out"
check_match "... exit 3" 'exit 3$' "$out"

# ---- credentials that must not pass ----
cred "$ua" "FWDALLOC1 Q job $ja json" "$T/good.cred"
# one byte of the credential's body changed (a base64 letter for another)
c=$(cat "$T/good.cred")
i=$((${#c} / 2))
ch=${c:$i:1}
[ "$ch" = A ] && nch=B || nch=A
printf '%s%s%s\n' "${c:0:$i}" "$nch" "${c:$((i + 1))}" >"$T/forged.cred"
check "the forged credential differs from the good one by one byte" \
	test "$(cmp -l "$T/good.cred" "$T/forged.cred" | wc -l)" = 1
out=$(as "$ua" report job "$ja" --json --service "$qsock" --credential "$T/forged.cred")
check_match "forged: refused as invalid" \
	'refused: credential invalid \(forged or damaged\)' "$out"
out=$(as "$ua" report job "$ja" --json --service "$qsock" --credential "$T/good.cred")
check_eq "the good credential, first use: answered" "$ja" "$(jf "$out" job_id)"
out=$(as "$ua" report job "$ja" --json --service "$qsock" --credential "$T/good.cred")
check_match "the same credential again: refused as replayed" \
	'refused: credential replayed: munged has decoded it before' "$out"
cred "$ua" "FWDALLOC1 Q job $ja json" "$T/other-req.cred"
out=$(as "$ua" report job "$ja" --html - --service "$qsock" --credential "$T/other-req.cred")
check_match "a credential made for another request (json, sent for html): refused" \
	"refused: credential made for another request \\(its payload is not \"FWDALLOC1 Q job $ja html\"\\)" "$out"
cred "$ub" "FWDALLOC1 Q job $ja json" "$T/b.cred"
out=$(as "$ua" report job "$ja" --json --service "$qsock" --credential "$T/b.cred")
check_match "B's credential sent by A: refused" \
	"refused: credential made by uid $(id -u "$ub") but sent by uid $(id -u "$ua")" "$out"
cred "$ub" "FWDALLOC1 Q job $ja json" "$T/b2.cred"
check_match "B's credential for A's job, sent by B: refused as not B's job" \
	"job $ja is not yours: $ub" \
	"$(as "$ub" report job "$ja" --json --service "$qsock" --credential "$T/b2.cred")"

# ---- admins ----
out=$(report "$uc" "$ja")
check_match "the admin group's member, before the policy names it: refused" \
	"job $ja is not yours: $uc" "$out"
printf 'reports:\n  admin_group: %s\n' "$grp" >>"$M/policy.yaml"
n=$(grep -c "reloaded $M/policy.yaml" "$M/log/fwdallocd.log")
kill -HUP "$(cat "$M/fwdallocd.pid")"
for i in $(seq 1 100); do
	[ "$(grep -c "reloaded $M/policy.yaml" "$M/log/fwdallocd.log")" -gt "$n" ] && break
	sleep 0.1
done
check "the service reloaded the policy" \
	test "$(grep -c "reloaded $M/policy.yaml" "$M/log/fwdallocd.log")" -gt "$n"
for j in $ja $jb; do
	out=$(report "$uc" "$j")
	check_eq "admin (group $grp): job $j's report" "$j" "$(jf "$out" job_id)" ||
		diag "$out"
done
check_eq "admin: A's job is A's" "$ua" "$(jf "$(report "$uc" "$ja")" user)"
out=$(as "$uc" report machine --json --service "$qsock")
check_match "admin: the machine report answered" 'exit 0$' "$out" || diag "$out"
check "admin: the machine report is JSON" test -n "$(json_of "$out" 'keys[0]')"
out=$(report "$ua" "$jb")
check_match "A, with the admin group named: still refused B's job" \
	"job $jb is not yours: $ua" "$out"
out=$(as "$ua" report machine --json --service "$qsock")
check_match "A: the machine report refused, naming the group" \
	"is neither root nor in group $grp" "$out"
for j in $ja $jb; do
	out=$(FWDALLOC_MUNGE_SOCKET=$M/munge.sock "$top_builddir/fwdctl" \
		report job "$j" --json --service "$qsock" 2>&1)
	check_eq "root through the service: job $j's report" "$j" \
		"$(printf '%s\n' "$out" | jq -r '(.job // .).job_id' 2>/dev/null)" ||
		diag "$out"
done

# ---- what the service says about it ----
check_eq "reports answered, counted" 10 "$(count reports)"
check_eq "report requests refused, counted" 12 "$(count reports_refused)"
check_match "the log names who got what" \
	"report job $jb for $uc \\(uid $(id -u "$uc"), admin\\): answered" \
	"$(cat "$M/log/fwdallocd.log")"
check_match "the log names the refusals" \
	"refused a report job $jb for uid $(id -u "$ua"): job $jb is not yours" \
	"$(cat "$M/log/fwdallocd.log")"
check "the users saw reports" test -s "$T/users-saw"
check_eq "no database password in anything the users saw" 0 \
	"$(grep -cF "$(head -n 1 "$M/db/db.pass")" "$T/users-saw")"
tap_done
