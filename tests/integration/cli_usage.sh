#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Usage errors of the controller commands (profile, trace, prolog, epilog,
# alloc, audit, reconcile): one line naming the problem and a pointer to
# --help, exit 2, not the whole usage text burying that line; --help stays
# complete on stdout.  None of these reach the database or the policy.
. "$top_srcdir/tests/integration/tap.sh"

fwdctl="$top_builddir/fwdctl"
[ -x "$fwdctl" ] || skip_all "fwdctl not built"

d=$(mktemp -d /tmp/cli_usage.XXXXXX)
trap 'rm -rf "$d"' EXIT

# usage_err NAME WANT ARGS...: exit 2, empty stdout, stderr exactly WANT.
usage_err() {
	name=$1 want=$2
	shift 2
	"$fwdctl" "$@" >"$d/out" 2>"$d/err"
	check_eq "$name: exit 2" 2 $?
	check_eq "$name: nothing on stdout" "" "$(cat "$d/out")"
	check_eq "$name: message" "$want" "$(cat "$d/err")"
}

nl='
'
for c in profile trace; do
	case $c in
	profile) acts="show, rebuild or import" ;;
	trace) acts="compress, expand, summarize or ingest" ;;
	esac
	usage_err "$c without an action" \
		"fwdctl $c: missing action ($acts); see 'fwdctl $c --help'" $c
done
usage_err "profile show bad option" \
	"fwdctl profile show: unrecognized option '--bogus'${nl}fwdctl profile: see 'fwdctl profile --help'" \
	profile show --bogus
for a in compress expand summarize ingest; do
	usage_err "trace $a bad option" \
		"fwdctl trace $a: unrecognized option '--bogus'${nl}fwdctl trace: see 'fwdctl trace --help'" \
		trace $a --bogus
done
for c in prolog epilog; do
	usage_err "$c with an argument" \
		"fwdctl $c: unexpected argument 'extra'; see 'fwdctl $c --help'" \
		$c extra
done
usage_err "alloc without an action" \
	"fwdctl alloc: missing action (list or show); see 'fwdctl alloc --help'" \
	alloc
usage_err "alloc unknown action" \
	"fwdctl alloc: unknown action 'frob'; see 'fwdctl alloc --help'" \
	alloc frob
usage_err "alloc show without a job" \
	"fwdctl alloc show: JOBID missing; see 'fwdctl alloc --help'" \
	alloc show
usage_err "alloc list with an argument" \
	"fwdctl alloc list: unexpected argument '7'" alloc list 7
usage_err "alloc show with two jobs" \
	"fwdctl alloc show: unexpected argument '8'" alloc show 7 8
for c in alloc audit reconcile; do
	usage_err "$c bad option" \
		"fwdctl $c: unrecognized option '--bogus'${nl}fwdctl $c: see 'fwdctl $c --help'" \
		$c --bogus
done
for c in "health list" "db status" "ingest"; do
	usage_err "$c bad option" \
		"fwdctl $c: unrecognized option '--bogus'${nl}fwdctl ${c%% *}: see 'fwdctl ${c%% *} --help'" \
		$c --bogus
done

# GNU option permutation everywhere: options after the files too.
raw=$d/c1.trace
i=0
while [ $i -lt 100 ]; do
	printf '[2016-08-27 10:14:44] T lwfs-fuse: 69745: WRITE (0x200095032d0, size=4096, offset=%d, count=1)  \n' $((i * 4096))
	i=$((i + 1))
done >"$raw"
out=$("$fwdctl" trace compress "$raw" "$d/c1.ctrace" --node c1 2>&1)
check_eq "trace compress IN OUT --node: option after the files; the runs written" \
	"$raw: 100 records in 1 runs" "$(printf '%s' "$out" | cut -d, -f1)"
check_eq "the file holds that one run" "#end records=100 runs=1" "$(tail -1 "$d/c1.ctrace")"
cp "$raw" "$d/c2.trace"
out=$("$fwdctl" trace summarize "$d/c1.ctrace" "$d/c2.trace" --json 2>&1)
check_eq "trace summarize F1 F2 --json: JSON over both nodes" "2 200" \
	"$(printf '%s' "$out" | jq -r '"\(.nodes) \(.write_ops)"' 2>&1)"
"$fwdctl" trace expand "$d/c1.ctrace" "$d/back" --bogus >/dev/null 2>"$d/err"
check_eq "trace expand IN OUT --bogus: the option is seen" \
	"fwdctl trace expand: unrecognized option '--bogus'" "$(head -1 "$d/err")"

# --help is complete: synopsis, examples where there are any, exit status.
for c in profile trace prolog epilog alloc audit reconcile; do
	"$fwdctl" $c --help >"$d/out" 2>"$d/err"
	check_eq "$c --help: exit 0" 0 $?
	check_eq "$c --help: nothing on stderr" "" "$(cat "$d/err")"
	check_match "$c --help: synopsis" "^Usage: fwdctl " "$(head -1 "$d/out")"
	check_match "$c --help: exit status" "^Exit status" "$(cat "$d/out")"
done

tap_done
