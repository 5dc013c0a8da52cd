# SPDX-License-Identifier: GPL-2.0-or-later
# Minimal TAP helpers for shell integration tests.  Source it, record
# results with the helpers below, end with `tap_done` (it prints the plan,
# counted as the tests ran, and fails if any test failed).
#
#   pass DESC / fail DESC    record one result
#   diag LINE...             print diagnostic lines (each line of a
#                            multi-line argument too: a program's output
#                            never reads as a TAP result or plan)
#   check DESC CMD...        run CMD; pass if it exits 0
#   check_eq DESC WANT GOT   pass if the strings are equal (shows both)
#   check_match DESC RE STR  pass if STR matches the extended regex RE
#   check_json DESC WANT FILTER JSON
#                            pass if jq's FILTER on the text JSON gives
#                            one value equal to WANT (JSON) as a value:
#                            numbers as numbers, so 1 == 1.0 whatever a
#                            jq release prints (1.6 "1", 1.7 "1.0")
#   skip_all REASON          skip the whole file (a TAP "1..0 # SKIP"
#                            plan, exit 0), unless FWDALLOC_NO_SKIP=1:
#                            then it is one failed test
#
# Every helper that records a result returns 0 when it passed and 1 when
# it failed (counted once either way), so a handler can follow it:
#   check_eq "server starts" 0 "$rc" || { diag "$log"; tap_done; exit 1; }
# A failed check does not stop the script by itself: the test scripts do
# not run under `set -e`, and must not (tests/integration/tap_selftest.sh
# checks the helpers).

_tap_n=0
_tap_failed=0

pass() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() {
	_tap_n=$((_tap_n + 1)); _tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $*"
	return 1
}
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

check() {
	local desc=$1; shift
	if "$@"; then pass "$desc"; else
		fail "$desc"; diag "command failed: $*"; return 1; fi
}

check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else
		fail "$1"; diag "want: $2" "got:  $3"; return 1; fi
}

check_match() {
	# check_match DESC REGEX STRING
	if printf '%s' "$3" | grep -Eq -- "$2"; then pass "$1"; else
		fail "$1"; diag "want match: $2" "got: $3"; return 1; fi
}

check_json() {
	# check_json DESC WANT FILTER JSON
	if printf '%s' "$4" | jq -e --argjson want "$2" "[$3] == [\$want]" \
		>/dev/null 2>&1; then pass "$1"; else
		fail "$1"; diag "want: $2 (compared as JSON: $3)" \
			"got:  $(printf '%s' "$4" | jq -c "$3" 2>&1)"; return 1; fi
}

skip_all() {
	if [ "${FWDALLOC_NO_SKIP:-0}" = 1 ]; then
		echo "1..1"; echo "not ok 1 - cannot run: $*"; exit 1
	fi
	echo "1..0 # SKIP $*"; exit 0
}

tap_done() {
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}
