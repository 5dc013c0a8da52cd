#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Property test of every `fwdctl ingest` format against a real MariaDB:
# tests/tools/ingest_gen writes seeded random input, valid entries mixed
# with invalid ones (malformed, not UTF-8, times out of the window, end
# before start, values out of range, implausible rates), and the rows the
# valid ones must give.  After the ingest, the database must hold exactly
# those rows, each once (no refused entry stored, nothing lost after a
# refused one), the summary must count every refused entry by reason,
# the exit status must be 2 (input error, never 3), and ingesting the same
# input again must change nothing.
#
# FWDALLOC_PROPERTY_SEEDS: the seeds to run (default "1 2 3"); each is
# printed, and a failure is replayed with FWDALLOC_PROPERTY_SEEDS=SEED.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"

gen=$top_builddir/tests/tools/ingest_gen
[ -x "$gen" ] || skip_all "tests/tools/ingest_gen not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start

seeds=${FWDALLOC_PROPERTY_SEEDS:-1 2 3}
template=$top_srcdir/tests/fixtures/darshan/darshan-total-perf.txt

# q, with names of any UTF-8 (4-byte characters too) printed as stored
qq() {
	"$testdb" sql "$d" -N --default-character-set=utf8mb4 fwdalloc -e "$1"
}

# The rows of FORMAT, one a line as ingest_gen writes them, in byte order.
rows() {
	case $1 in
	beacon-lwfs)
		qq "SELECT name, ts, op, phase, dt, b0, b1, b2, b3, b4, b5, b6, b7
		   FROM samples_hist"
		qq "SELECT name, ts, 'ops', IFNULL(read_ops, 'NULL'),
		   IFNULL(write_ops, 'NULL'), IFNULL(md_ops, 'NULL')
		   FROM samples_raw WHERE queue_len IS NULL"
		qq "SELECT name, ts, 'queue', queue_len FROM samples_raw
		   WHERE queue_len IS NOT NULL OR read_bytes IS NOT NULL
		   OR write_bytes IS NOT NULL"
		;;
	influx)
		qq "SELECT kind, name, ts, IFNULL(dt, 'NULL'),
		   IFNULL(read_bytes, 'NULL'), IFNULL(write_bytes, 'NULL'),
		   IFNULL(read_ops, 'NULL'), IFNULL(write_ops, 'NULL'),
		   IFNULL(queue_len, 'NULL') FROM samples_raw"
		;;
	lustre-jobstats)
		qq "SELECT target, lustre_job_id, ts, op, samples, sum_value
		   FROM jobstats_raw"
		;;
	sacct)
		qq "SELECT job_id, 'job', name, user, node_count, start_at, end_at
		   FROM jobs"
		qq "SELECT job_id, 'io', source, read_bytes, write_bytes, runtime
		   FROM job_io"
		;;
	darshan)
		qq "SELECT job_id, source, read_bytes, write_bytes, procs, runtime
		   FROM job_io"
		;;
	esac | LC_ALL=C sort
}

# ingest FORMAT DIR: run fwdctl ingest --json on DIR's input.
ingest() {
	case $1 in
	darshan)
		# shellcheck disable=SC2046 # one file a line, no blanks
		fw ingest --format darshan --json $(cat "$2/input") ;;
	sacct)
		out=$(TZ=UTC "$fwdctl" --policy "$policy" ingest --format sacct \
			--json "$2/input" 2>"$d/fw.err")
		rc=$?
		err=$(cat "$d/fw.err") ;;
	*)
		fw ingest --format "$1" --json "$2/input" ;;
	esac
}

for seed in $seeds; do
	for fmt in beacon-lwfs influx lustre-jobstats sacct darshan; do
		t="$fmt seed $seed"
		diag "$t (replay: FWDALLOC_PROPERTY_SEEDS=$seed)"
		w=$d/$fmt.$seed
		mkdir -p "$w"
		if ! "$gen" "$fmt" "$seed" "$w" "$template"; then
			fail "$t: ingest_gen"
			continue
		fi
		# a fresh schema for every run: the rows are all this run's
		q "DROP DATABASE fwdalloc; CREATE DATABASE fwdalloc"
		fw db init
		check_eq "$t: db init" 0 "$rc" || continue
		want=$(cat "$w/want.json")
		nwant=$(wc -l <"$w/want.rows")

		ingest "$fmt" "$w"
		check_eq "$t: refused entries: exit 2 (input error)" 2 "$rc" ||
			diag "$err"
		check_json "$t: every refused entry counted by reason" \
			"$(printf '%s' "$want" | jq -c .rejected_by_reason)" \
			.rejected_by_reason "$out"
		case $fmt in
		sacct)
			check_json "$t: refused lines counted" \
				"$(printf '%s' "$want" | jq .rejected)" \
				.rejected_lines "$out" ;;
		*)
			check_json "$t: refused entries counted" \
				"$(printf '%s' "$want" | jq .rejected)" \
				.rejected "$out"
			check_json "$t: stored entries counted" \
				"$(printf '%s' "$want" | jq .stored)" \
				.stored "$out" ;;
		esac
		case $fmt in
		beacon-lwfs | influx)
			check_json "$t: first values counted as baselines" \
				"$(printf '%s' "$want" | jq .skipped)" \
				.skipped "$out" ;;
		esac
		rows "$fmt" >"$w/got.rows"
		if cmp -s "$w/want.rows" "$w/got.rows"; then
			pass "$t: every valid entry's rows, each once, and no other ($nwant rows)"
		else
			fail "$t: the rows differ from the valid entries'"
			diag "$(diff "$w/want.rows" "$w/got.rows" | head -20)"
		fi
		# no row twice: the keys are the tables' primary keys, so a
		# duplicate would be a second row of the same values
		check_eq "$t: no row twice" "" \
			"$(uniq -d "$w/got.rows" | head -3)"

		# again: what the parsers refuse is refused again; a counter
		# line at or before its series' stored baseline is skipped
		# before its rate is judged, so only the gauges' rates are
		ingest "$fmt" "$w"
		check_eq "$t: again: exit 2" 2 "$rc"
		check_json "$t: again: the same refusals by reason" \
			"$(printf '%s' "$want" |
				jq -c '.rejected_by_reason | del(."implausible rate")')" \
			'.rejected_by_reason | del(."implausible rate")' "$out"
		rows "$fmt" >"$w/again.rows"
		check "$t: again: the rows unchanged" \
			cmp -s "$w/want.rows" "$w/again.rows"

		# the format's help names every reason the run counted,
		# the summary's fields, and exit 2 for a refused entry
		"$fwdctl" ingest --format "$fmt" --help >"$w/help" 2>&1
		missing=
		for r in $(printf '%s' "$out" |
			jq -r '.rejected_by_reason | keys[] | @base64'); do
			r=$(printf '%s' "$r" | base64 -d)
			grep -qF -- "  $r " "$w/help" || missing="$missing '$r'"
		done
		for k in $(printf '%s' "$out" | jq -r 'keys[]'); do
			grep -qwF -- "$k" "$w/help" || missing="$missing $k"
		done
		check_eq "$t: --help names every reason and field printed" "" \
			"$missing"
		check_match "$t: --help: a refused entry is exit 2, not 3" \
			"2  usage error, unreadable input, or some lines, entries or files were" \
			"$(cat "$w/help")"
	done
done

tap_done
