#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl prolog / epilog fail open on every input, against a private
# MariaDB: a SPANK_IO_UPGRADE that is not a mode (a word, empty, 300 bytes,
# bytes that are not UTF-8) and job names that are not UTF-8 or longer
# than jobs.name.  Even under access.fail: closed both exit 0; a bad
# request leaves the job on its default mapping with an audit record (file
# and table) that quotes the value escaped and cut; an odd name is escaped
# and cut, and the job is decided as usual.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start

fw db init
check_eq "db init" 0 "$rc"

P=$d/policy-failopen.yaml
{
	cat "$policy"
	cat <<EOF
topology: $(cd "$top_srcdir" && pwd)/tests/fixtures/minicluster/topology.yaml
access:
  mode: opt-in
  fail: closed
decision:
  decide_timeout: 20s
audit:
  file: $d/audit.jsonl
  database: true
EOF
} >"$P"

# hook EVENT JOB REQUEST NAME: run fwdctl EVENT in a PrologSlurmctld
# environment; sets $rc and $err.
hook() {
	env -i PATH="$PATH" SLURM_JOB_ID="$2" SLURM_JOB_USER=alice \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME="$4" SPANK_IO_UPGRADE="$3" \
		"$fwdctl" --policy "$P" "$1" >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
	err=$(cat "$d/hook.err")
	[ "$rc" = 0 ] || diag "fwdctl $1 job $2: $err"
}
# The job's latest file record for EVENT.
file_rec() { grep "\"job_id\":\"$1\"" "$d/audit.jsonl" | grep "\"event\":\"$2\"" | tail -1; }
field() { printf '%s\n' "$1" | jq -r "$2"; }
# (the client doubles backslashes in its output)
db_outcome() { q "SELECT outcome FROM audit WHERE job_id = $1 AND JSON_VALUE(record, '\$.event') = 'prolog' ORDER BY id DESC LIMIT 1" | sed 's/\\\\/\\/g'; }
held() { q "SELECT COUNT(*) FROM allocations WHERE job_id = $1 AND released_at IS NULL"; }

choices="(auto, scale, isolate, off, shadow)"
long=$(printf '%0300d' 0 | tr 0 y)
cut61=$(printf '%061d' 0 | tr 0 y)

# bad_request JOB VALUE WANT-QUOTED
bad_request() {
	hook prolog "$1" "$2" app
	check_eq "request \"$3\": prolog exits 0 under fail: closed" 0 "$rc"
	want="fallback: SPANK_IO_UPGRADE=\"$3\" is not a mode $choices"
	r=$(file_rec "$1" prolog)
	check_eq "request \"$3\": the file record says why" "$want" \
		"$(field "$r" .outcome)"
	check_eq "request \"$3\": default mapping" default \
		"$(field "$r" .action)"
	check_eq "request \"$3\": request shown as invalid" invalid \
		"$(field "$r" .request)"
	check_eq "request \"$3\": the audit table says the same" "$want" \
		"$(db_outcome "$1")"
	check_eq "request \"$3\": nothing held" 0 "$(held "$1")"
	check_eq "request \"$3\": the job is recorded" 1 \
		"$(q "SELECT COUNT(*) FROM jobs WHERE job_id = $1")"
	hook epilog "$1" "$2" app
	check_eq "request \"$3\": epilog exits 0" 0 "$rc"
	check_match "request \"$3\": epilog released" '^released 0 allocation' \
		"$(field "$(file_rec "$1" epilog)" .outcome)"
}

bad_request 101 bogus 'bogus'
bad_request 102 '' ''
bad_request 103 "$long" "$cut61..."
bad_request 104 "$(printf 'sc\377\376ale')" 'sc\xff\xfeale'

# A name that is not UTF-8: escaped in the records and in jobs.name; the
# job is decided as usual (no fallback).
hook prolog 111 scale "$(printf 'r\351sum\351.sh')"
check_eq "non-UTF-8 name: prolog exits 0" 0 "$rc"
r=$(file_rec 111 prolog)
check_eq "non-UTF-8 name: escaped in the file record" 'r\xe9sum\xe9.sh' \
	"$(field "$r" .name)"
check_match "non-UTF-8 name: decided, no fallback" \
	'^(applied|default|shadow)$' "$(field "$r" .outcome)"
check_eq "non-UTF-8 name: escaped in jobs.name" 'r\xe9sum\xe9.sh' \
	"$(q 'SELECT name FROM jobs WHERE job_id = 111' | sed 's/\\\\/\\/g')"
check_eq "non-UTF-8 name: the audit table has the decision" \
	"$(field "$r" .outcome)" "$(db_outcome 111)"
hook epilog 111 scale "$(printf 'r\351sum\351.sh')"
check_eq "non-UTF-8 name: epilog exits 0" 0 "$rc"

# 300 characters: cut to jobs.name's 255.
hook prolog 112 scale "$(printf '%0300d' 0 | tr 0 n)"
check_eq "300-character name: prolog exits 0" 0 "$rc"
r=$(file_rec 112 prolog)
check_match "300-character name: decided, no fallback" \
	'^(applied|default|shadow)$' "$(field "$r" .outcome)"
check_eq "300-character name: 255 characters in jobs.name" 255 \
	"$(q 'SELECT CHAR_LENGTH(name) FROM jobs WHERE job_id = 112')"
check_match "300-character name: cut with ..." '^n{252}\.\.\.$' \
	"$(field "$r" .name)"
hook epilog 112 scale x
check_eq "300-character name: epilog exits 0" 0 "$rc"

# Job ids Slurm never gives (the command line refuses them too): usage
# error, nothing recorded, no row, no file, no queued release.
rows_before=$(q 'SELECT COUNT(*) FROM jobs')
lines_before=$(wc -l <"$d/audit.jsonl")
for bad in -1 4294967296 ' 5' 05 18446744073709551615 0x10; do
	for ev in prolog epilog; do
		hook "$ev" "$bad" scale app
		check_eq "SLURM_JOB_ID=\"$bad\": $ev exits 2" 2 "$rc"
		check_eq "SLURM_JOB_ID=\"$bad\": $ev says why" \
			"fwdctl $ev: SLURM_JOB_ID=\"$bad\": not a job id (1..4294967295)" "$err"
	done
done
check_eq "bad job ids: no job row" "$rows_before" "$(q 'SELECT COUNT(*) FROM jobs')"
check_eq "bad job ids: no audit record" "$lines_before" "$(wc -l <"$d/audit.jsonl")"
check_eq "bad job ids: no decision file" "" \
	"$(ls "$d" | grep -E '^(18446744073709551615|4294967296|-1)\.decision$')"

# Every line of the audit file is a whole JSON object.
bad=$(jq -c . "$d/audit.jsonl" 2>&1 >/dev/null)
check_eq "the audit file parses" "" "$bad"

tap_done
