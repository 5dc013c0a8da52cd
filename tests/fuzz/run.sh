#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run every libFuzzer target (tests/fuzz/fuzz_*.c, built by fuzz.mk) for a
# bounded time over its seed corpus (corpus/TARGET), then replay the
# inputs that once crashed it (regressions/TARGET).  One TAP result per
# target and per regression input; a failure names the crashing input,
# kept in $top_builddir/tests/fuzz/crashes/TARGET/.
#
# FWDALLOC_FUZZ_TIME: seconds per target (default 5).  Inputs listed in
# PENDING (a fix not merged yet) are replayed as TODO and their target is
# not fuzzed: once the fix is in, the TODO passes unexpectedly and make
# check says so; then delete the line.

. "$top_srcdir/tests/integration/tap.sh"

src=$top_srcdir/tests/fuzz
out=$top_builddir/tests/fuzz
secs=${FWDALLOC_FUZZ_TIME:-5}

[ -n "$FUZZ_CC" ] ||
	skip_all "fuzz targets not built: no clang with libFuzzer" \
		"(Debian: clang libclang-rt-14-dev; configure --enable-fuzz)"

work=$(mktemp -d "${TMPDIR:-/tmp}/fwdfuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# the targets that take a path write their input under TMPDIR
TMPDIR=$work
export TMPDIR
UBSAN_OPTIONS=print_stacktrace=1
LSAN_OPTIONS=suppressions=$src/../lsan.supp:print_suppressions=0
export UBSAN_OPTIONS LSAN_OPTIONS

pending() { # pending TARGET/FILE: its reason, or nothing
	sed -n "s|^$1[[:space:]][[:space:]]*||p" "$src/PENDING" 2>/dev/null
}

target_pending() {
	grep -q "^$1/" "$src/PENDING" 2>/dev/null
}

todo_n=0
for c in "$src"/fuzz_*.c; do
	t=$(basename "$c" .c)
	t=${t#fuzz_}
	bin=$out/bin/fuzz_$t
	if [ ! -x "$bin" ]; then
		fail "$t: fuzz target not built ($bin)"
		continue
	fi
	if [ ! -d "$src/corpus/$t" ]; then
		fail "$t: no seed corpus ($src/corpus/$t)"
		continue
	fi
	crashes=$out/crashes/$t
	rm -rf "$crashes"
	mkdir -p "$crashes" "$work/new-$t"

	if target_pending "$t"; then
		diag "$t: not fuzzed while $src/PENDING lists its inputs"
	else
		# new inputs go to a scratch directory (the first one named),
		# never into the seed corpus
		start=$(date +%s)
		"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix="$crashes/" \
			"$work/new-$t" "$src/corpus/$t" >"$work/$t.log" 2>&1
		rc=$?
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' \
			"$work/$t.log")
		took=$(($(date +%s) - start))
		if [ "$rc" -eq 0 ]; then
			pass "$t: ${runs:-?} inputs in ${took}s, no crash"
		else
			fail "$t: crashed (exit $rc) after ${took}s"
			diag "$(grep -m1 'Seed:' "$work/$t.log")"
			for a in "$crashes"/*; do
				[ -e "$a" ] && diag "crash input: $a" \
					"replay: $bin $a"
			done
			tail -n 40 "$work/$t.log" | sed 's/^/# /'
		fi
	fi

	[ -d "$src/regressions/$t" ] || continue
	for r in "$src/regressions/$t"/*; do
		[ -f "$r" ] || continue
		name=$t/$(basename "$r")
		why=$(pending "$name")
		"$bin" -runs=1 "$r" >"$work/replay.log" 2>&1
		rc=$?
		if [ -n "$why" ]; then
			# TODO results count neither way (TAP): reported only
			_tap_n=$((_tap_n + 1))
			todo_n=$((todo_n + 1))
			if [ "$rc" -eq 0 ]; then
				echo "ok $_tap_n - regression $name # TODO $why"
			else
				echo "not ok $_tap_n - regression $name # TODO $why"
			fi
		elif [ "$rc" -eq 0 ]; then
			pass "regression $name"
		else
			fail "regression $name crashes again (exit $rc)"
			diag "crash input: $r"
			tail -n 40 "$work/replay.log" | sed 's/^/# /'
		fi
	done
done
tap_done
