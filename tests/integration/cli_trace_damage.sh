#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Damaged compressed traces through `fwdctl trace compress|expand|summarize`:
# one error line naming the file, the line and what is wrong, exit 2, and no
# crash (a damaged header used to close the file twice).  Under valgrind
# when it is installed, so a double free is an error even where glibc does
# not abort.  No database.
. "$top_srcdir/tests/integration/tap.sh"

fwdctl="$top_builddir/fwdctl"
[ -x "$fwdctl" ] || skip_all "fwdctl not built"

d=$(mktemp -d /tmp/cli_trace_damage.XXXXXX)
trap 'rm -rf "$d"' EXIT

run=""
# Under valgrind, unless fwdctl carries a sanitizer of its own
# (scripts/test --sanitize): the two cannot share a process.
if command -v valgrind >/dev/null 2>&1 &&
	! ldd "$fwdctl" 2>/dev/null | grep -q 'libasan'; then
	run="valgrind -q --error-exitcode=99 --leak-check=full"
	run="$run --errors-for-leak-kinds=definite"
fi

# damaged NAME CONTENT WANT: every action exits 2 with WANT on stderr.
damaged() {
	name=$1 want=$3
	printf '%b' "$2" >"$d/$name.ctrace"
	for a in compress expand summarize; do
		case $a in
		summarize) set -- summarize "$d/$name.ctrace" ;;
		*) set -- "$a" "$d/$name.ctrace" "$d/out" ;;
		esac
		$run "$fwdctl" trace "$@" >"$d/out.txt" 2>"$d/err"
		rc=$?
		check_eq "$name: trace $a exits 2" 2 "$rc"
		[ "$rc" = 2 ] || diag "$(cat "$d/err")"
		check_match "$name: trace $a names file:line and the problem" \
			"^fwdctl trace[ :].*$d/$name\.ctrace:$want\$" "$(cat "$d/err")"
	done
}

damaged header-end '#fwdtrace-compressed 1\n#end records=x\n' \
	'2: malformed compressed trace: bad #end trailer'
damaged header-node '#fwdtrace-compressed 1\n#node \n' \
	'2: malformed compressed trace: bad #node'
damaged after-end \
	'#fwdtrace-compressed 1\n#end records=0 runs=0\nW 1472292884 T 1 0x10 1 0 1 1\n' \
	'3: malformed compressed trace: record after #end'

tap_done
