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
		"fwdctl: $c: missing action ($acts); see 'fwdctl $c --help'" $c
done
usage_err "profile show bad option" \
	"show: unrecognized option '--bogus'${nl}fwdctl: see 'fwdctl profile --help'" \
	profile show --bogus
for a in compress expand summarize ingest; do
	usage_err "trace $a bad option" \
		"$a: unrecognized option '--bogus'${nl}fwdctl: see 'fwdctl trace --help'" \
		trace $a --bogus
done
for c in prolog epilog; do
	usage_err "$c with an argument" \
		"fwdctl: $c: unexpected argument 'extra'; see 'fwdctl $c --help'" \
		$c extra
done
usage_err "alloc without an action" \
	"fwdctl: alloc: missing action (list or show); see 'fwdctl alloc --help'" \
	alloc
usage_err "alloc unknown action" \
	"fwdctl: alloc: unknown action 'frob'; see 'fwdctl alloc --help'" \
	alloc frob
usage_err "alloc show without a job" \
	"fwdctl: alloc show: JOBID missing; see 'fwdctl alloc --help'" \
	alloc show
usage_err "alloc list with an argument" \
	"fwdctl: alloc list: unexpected argument '7'" alloc list 7
usage_err "alloc show with two jobs" \
	"fwdctl: alloc show: unexpected argument '8'" alloc show 7 8
for c in alloc audit reconcile; do
	usage_err "$c bad option" \
		"$c: unrecognized option '--bogus'${nl}fwdctl: see 'fwdctl $c --help'" \
		$c --bogus
done

# --help is complete: synopsis, examples where there are any, exit status.
for c in profile trace prolog epilog alloc audit reconcile; do
	"$fwdctl" $c --help >"$d/out" 2>"$d/err"
	check_eq "$c --help: exit 0" 0 $?
	check_eq "$c --help: nothing on stderr" "" "$(cat "$d/err")"
	check_match "$c --help: synopsis" "^Usage: fwdctl " "$(head -1 "$d/out")"
	check_match "$c --help: exit status" "^Exit status" "$(cat "$d/out")"
done

tap_done
