#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The TAP helpers themselves (tests/integration/tap.sh): each one that
# records a result returns 0 when it passed and non-zero when it failed,
# prints exactly one "ok"/"not ok" line and counts a failure exactly once,
# so that `check ... || { diag ...; tap_done; exit 1; }` bails out when it
# should and a failed check alone never stops a script.  Each case runs
# in a fresh shell (bash, and dash when installed: tap.sh is also sourced
# by /bin/sh scripts) with its output captured.
set -u
. "$top_srcdir/tests/integration/tap.sh"
# The cases below say themselves whether skips are failures (CI sets
# FWDALLOC_NO_SKIP=1 for the whole suite).
unset FWDALLOC_NO_SKIP
tap=$top_srcdir/tests/integration/tap.sh

shells=bash
command -v dash >/dev/null && shells="$shells dash"

# run SHELL CODE: CODE after sourcing tap.sh in a new SHELL; prints CODE's
# output, then "rc=N tests=N failed=N" (rc: CODE's last status).
run() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	"$1" -c '. "$1"; eval "$2"; echo "rc=$? tests=$_tap_n failed=$_tap_failed"' \
		selftest "$tap" "$2" 2>&1
}

# case SHELL NAME CODE WANT: the whole output of `run SHELL CODE` is WANT
case_is() {
	check_eq "$1: $2" "$4" "$(run "$1" "$3")"
}

for sh in $shells; do
	# ---- each helper: success, then failure
	case_is "$sh" "pass returns 0" 'pass one' \
		"ok 1 - one
rc=0 tests=1 failed=0"
	case_is "$sh" "fail returns 1, counted once" 'fail one' \
		"not ok 1 - one
rc=1 tests=1 failed=1"
	case_is "$sh" "check on a command that succeeds" 'check one true' \
		"ok 1 - one
rc=0 tests=1 failed=0"
	case_is "$sh" "check on a command that fails" 'check one false' \
		"not ok 1 - one
# command failed: false
rc=1 tests=1 failed=1"
	case_is "$sh" "check passes the arguments as given" \
		'check "two words" test "a b" = "a b"' \
		"ok 1 - two words
rc=0 tests=1 failed=0"
	case_is "$sh" "check_eq, equal" 'check_eq one "a b" "a b"' \
		"ok 1 - one
rc=0 tests=1 failed=0"
	case_is "$sh" "check_eq, different" 'check_eq one 1 1.0' \
		"not ok 1 - one
# want: 1
# got:  1.0
rc=1 tests=1 failed=1"
	case_is "$sh" "check_eq, empty against text" 'check_eq one "" x' \
		"not ok 1 - one
# want: 
# got:  x
rc=1 tests=1 failed=1"
	case_is "$sh" "check_match, matching" 'check_match one "^a+b$" aab' \
		"ok 1 - one
rc=0 tests=1 failed=0"
	case_is "$sh" "check_match, not matching" 'check_match one "^b" abc' \
		"not ok 1 - one
# want match: ^b
# got: abc
rc=1 tests=1 failed=1"
	case_is "$sh" "check_match, a regex starting with --" \
		'check_match one "--x=y" "a --x=y"' \
		"ok 1 - one
rc=0 tests=1 failed=0"
	case_is "$sh" "diag returns 0 and counts nothing" 'diag a b' \
		"# a
# b
rc=0 tests=0 failed=0"
	case_is "$sh" "diag comments out every line of a multi-line text" \
		'diag "$(printf "ok 7 - x\\n1..3\\n\\nend")"' \
		"# ok 7 - x
# 1..3
# 
# end
rc=0 tests=0 failed=0"
	case_is "$sh" "check_eq shows a multi-line value as comments" \
		'check_eq one "a" "$(printf "ok 1 - b\\nnot ok 2")"' \
		"not ok 1 - one
# want: a
# got:  ok 1 - b
# not ok 2
rc=1 tests=1 failed=1"

	# ---- check_json: JSON values compared, numbers as numbers
	if command -v jq >/dev/null; then
		case_is "$sh" "check_json: 1.0 equals 1, whatever jq prints" \
			"check_json one '[1, 2, \"x\"]' '.a' '{\"a\": [1.0, 2e0, \"x\"]}'" \
			"ok 1 - one
rc=0 tests=1 failed=0"
		case_is "$sh" "check_json: a different value" \
			"check_json one 1 '.a' '{\"a\": 2}'" \
			"not ok 1 - one
# want: 1 (compared as JSON: .a)
# got:  2
rc=1 tests=1 failed=1"
		case_is "$sh" "check_json: two values for one" \
			"check_json one 1 '.[]' '[1, 1]'" \
			"not ok 1 - one
# want: 1 (compared as JSON: .[])
# got:  1
# 1
rc=1 tests=1 failed=1"
		check_match "$sh: check_json: not JSON" \
			"^not ok 1 - one
.*
rc=1 tests=1 failed=1\$" "$(run "$sh" "check_json one 1 . 'not json'")"
	else
		pass "$sh: check_json # SKIP jq not installed"
	fi

	# ---- handlers: run on failure only; the script goes on otherwise
	case_is "$sh" "a handler after a passed check does not run" \
		'check_eq one a a || echo handler' \
		"ok 1 - one
rc=0 tests=1 failed=0"
	case_is "$sh" "a handler after a failed check runs" \
		'check_eq one a b || echo handler' \
		"not ok 1 - one
# want: a
# got:  b
handler
rc=0 tests=1 failed=1"
	case_is "$sh" "a failed check does not stop the script" \
		'check one false; pass two' \
		"not ok 1 - one
# command failed: false
ok 2 - two
rc=0 tests=2 failed=1"
	case_is "$sh" "the bail-out: plan printed, exit 1, nothing after" \
		'check_eq "server starts" 0 3 || { diag log; tap_done; exit 1; }
		pass never' \
		"not ok 1 - server starts
# want: 0
# got:  3
# log
1..1"
	check_eq "$sh: the bail-out exits 1" 1 \
		"$(run "$sh" 'check_eq x 0 3 || { tap_done; exit 1; }' >/dev/null; echo $?)"

	# ---- the plan and the script's status
	case_is "$sh" "tap_done after passes: plan, 0" 'pass a; pass b; tap_done' \
		"ok 1 - a
ok 2 - b
1..2
rc=0 tests=2 failed=0"
	case_is "$sh" "tap_done after a failure: plan, 1" 'pass a; fail b; tap_done' \
		"ok 1 - a
not ok 2 - b
1..2
rc=1 tests=2 failed=1"
	case_is "$sh" "skip_all: a skipped plan, exit 0" 'skip_all no tool; pass never' \
		"1..0 # SKIP no tool"
	check_eq "$sh: skip_all exits 0" 0 \
		"$(FWDALLOC_NO_SKIP=0 run "$sh" 'skip_all x' >/dev/null; echo $?)"
	out=$(FWDALLOC_NO_SKIP=1 run "$sh" 'skip_all no tool; pass never')
	rc=$?
	check_eq "$sh: skip_all under FWDALLOC_NO_SKIP=1: one failure, exit 1" \
		"1..1
not ok 1 - cannot run: no tool
exit 1" "$out
exit $rc"
done

# A test script under `set -e` would stop at its first failed check (the
# helpers return 1 then) without printing the plan: none may use it.
errexit=$(grep -lE '^[[:space:]]*set[[:space:]]+(-[a-zA-Z]*e|-o[[:space:]]+errexit)' \
	"$top_srcdir"/tests/integration/*.sh "$top_srcdir"/tests/fuzz/run.sh)
check_eq "no TAP test script runs under set -e" "" "$errexit"

tap_done
