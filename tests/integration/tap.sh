# SPDX-License-Identifier: GPL-2.0-or-later
# Minimal TAP helpers for shell integration tests.  Source it, record
# results with the helpers below, end with `tap_done` (it prints the plan,
# counted as the tests ran, and fails if any test failed).
#
#   pass DESC / fail DESC    record one result
#   diag LINE...             print diagnostic lines
#   check DESC CMD...        run CMD; pass if it exits 0
#   check_eq DESC WANT GOT   pass if the strings are equal (shows both)
#   check_match DESC RE STR  pass if STR matches the extended regex RE
#   skip_all REASON          skip the whole file (a TAP "1..0 # SKIP"
#                            plan, exit 0), unless FWDALLOC_NO_SKIP=1:
#                            then it is one failed test

_tap_n=0
_tap_failed=0

pass() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() { _tap_n=$((_tap_n + 1)); _tap_failed=$((_tap_failed + 1)); echo "not ok $_tap_n - $*"; }
diag() { printf '# %s\n' "$@"; }

check() {
	local desc=$1; shift
	if "$@"; then pass "$desc"; else fail "$desc"; diag "command failed: $*"; fi
}

check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else
		fail "$1"; diag "want: $2" "got:  $3"; fi
}

check_match() {
	# check_match DESC REGEX STRING
	if printf '%s' "$3" | grep -Eq -- "$2"; then pass "$1"; else
		fail "$1"; diag "want match: $2" "got: $3"; fi
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
