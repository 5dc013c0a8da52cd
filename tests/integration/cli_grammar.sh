#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One CLI grammar across fwdctl (issue 19, item 7):
# - every command taking --json prints one valid JSON document of the
#   expected type when it succeeds, on an empty database and on a small one;
# - every table takes -P/--parsable and -n/--noheader, with the exact rows
#   on a small fixture (header, '|' separators, no padding);
# - every job id argument (--job or a positional JOBID) refuses abc, 0,
#   -5, 12x and 99999999999 with exit 2 and a message naming the value,
#   before any database or Slurm is reached.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"

command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
etc=$top_srcdir/etc

# ---- invalid job ids: no database needed (none is running yet) -----------
T=$(mktemp -d /tmp/cli_grammar.XXXXXX)
trap 'rm -rf "$T"; db_cleanup' EXIT
: >"$T/empty.trace"
g() { out=$("$fwdctl" --policy "$etc/fwdalloc.yaml" "$@" 2>"$T/err"); rc=$?; err=$(cat "$T/err"); }
for bad in abc 0 -5 12x 99999999999; do
	for cmd in "alloc show @" "alloc show --json @" "audit --job @" \
		"audit --db --job @" "profile show --job @" "health job @" \
		"health job --json @" "remap apply --job @ --forwarders fwd01" \
		"remap revert --job @" "trace ingest --job @ $T/empty.trace"; do
		# shellcheck disable=SC2086 # the words of $cmd are arguments
		set -- ${cmd/@/$bad}
		g "$@"
		check_eq "${cmd/@/$bad}: exit 2" 2 "$rc"
		check_match "${cmd/@/$bad}: the message names '$bad'" \
			"'$bad'|\"$bad\"" "$err"
		case $cmd in
		*--json*)
			check_eq "${cmd/@/$bad}: stdout the error as JSON, exit 2" \
				"$(printf '%s\n' "$err" | tail -1)|2" \
				"$(printf '%s' "$out" | jq -r '"\(.error)|\(.exit)"' 2>&1)"
			;;
		*) check_eq "${cmd/@/$bad}: nothing on stdout" "" "$out" ;;
		esac
	done
done

# ---- --json on every command that has it ----------------------------------
db_start
cat "$policy" >"$T/policy.yaml"
cat >>"$T/policy.yaml" <<EOP
topology: $etc/topology.yaml
audit:
  file: $T/audit.jsonl
EOP
fw() {
	out=$("$fwdctl" --policy "$T/policy.yaml" "$@" 2>"$T/err")
	rc=$?
	err=$(cat "$T/err")
}
# json_is TYPE ARGS...: exit 0 and stdout one JSON document of TYPE.
json_is() {
	want=$1
	shift
	fw "$@"
	check_eq "$*: exit 0" 0 "$rc"
	check_eq "$*: one JSON $want" "$want" \
		"$(printf '%s' "$out" | jq -s 'if length == 1 then .[0] | type else "\(length) documents" end' -r 2>&1)"
}

fw db status --json
check_eq "db status --json before db init: exit 1 (no schema)" 1 "$rc"
check_eq "  still one JSON object, state missing" "object missing" \
	"$(printf '%s' "$out" | jq -r '"\(type) \(.state)"')"
fw db init
check_eq "db init" 0 "$rc"

# every_json LABEL: the commands taking --json, each with the type it prints
every_json() {
	json_is object policy check --json
	json_is object policy show --json
	json_is array policy keys --json
	json_is object topology check --json
	json_is object topology show --json
	json_is object db status --json
	json_is object db migrate --json
	json_is array db prune --dry-run --json
	json_is array alloc list --json
	json_is array audit --json
	json_is array audit --db --json
	json_is array health list --json
	json_is object health report --json
	json_is object history run --json
	json_is object trace summarize --json "$T/empty.trace"
	json_is object --json policy show
	json_is array --json alloc list
	json_is object health scan --json
	json_is object db init --json
	json_is object ingest --format influx --json "$top_srcdir/tests/fixtures/monitor/influx.lp"
	json_is object decide --job "$top_srcdir/tests/fixtures/decide/job-lammps.json" --json
}

diag "empty database"
fw alloc list --json
check_eq "alloc list --json, nothing held: []" "[]" "$out"
fw audit --json
check_eq "audit --json, no trail file: []" "[]" "$out"
fw health list --json
check_eq "health list --json, no state yet: []" "[]" "$out"
every_json

# ---- a small database -----------------------------------------------------
t0=1795000000 # 2026-11-18T11:06:40Z
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, node_count, action, acquired_at) VALUES
  (7, 'fwd05', 1, 'c[1-4]', 4, 'scale', $t0), (7, 'fwd01', 0, 'c[1-4]', 4, 'scale', $t0)"
q "INSERT INTO health (kind, name, state, since, updated_at) VALUES
  ('fwd', 'fwd07', 'excluded', $t0, $t0)
  ON DUPLICATE KEY UPDATE state = VALUES(state), since = VALUES(since)"
q "INSERT INTO health_history (kind, name, state, start_at, end_at, reason)
  VALUES ('fwd', 'fwd02', 'suspect', $t0, $t0 + 7200, 'seeded'),
  ('ost', 'lustre-OST0001', 'excluded', $t0, NULL, 'seeded')"
cat >"$T/profile.json" <<'EOF'
[{"user": "alice", "name": "wrf", "nodes": 256, "io_volume_bytes": 1e12,
  "io_nodes": 256, "node_bandwidth_bps": 1e8, "io_mode": "N-N"}]
EOF
fw profile import "$T/profile.json"
check_eq "profile import: exit 0" 0 "$rc"
diag "small database"
every_json
fw alloc list --json
check_eq "alloc list --json: the two rows of job 7" "7 7" \
	"$(printf '%s' "$out" | jq -r '[.[].job_id] | join(" ")')"
json_is object alloc show 7 --json
json_is object profile show --json 'user=alice;name=wrf;node_bucket=256'

# ---- -P and -n on every table ---------------------------------------------
fw alloc list -P -n
check_eq "alloc list -P -n: exact rows" \
	"$(printf '%s\n' "7|scale|fwd05|private|4|c[1-4]|2026-11-18T11:06:40Z" "7|scale|fwd01|shared|4|c[1-4]|2026-11-18T11:06:40Z")" \
	"$out"
fw health list -P --state excluded
check_eq "health list -P: header and the excluded row" \
	"$(printf '%s\n' "KIND|NAME|STATE|SINCE|SOURCE|BAD|GOOD|REASON" "forwarder|fwd07|excluded|2026-11-18T11:06:40Z|scanner|0|0|")" \
	"$out"

fw health report -P
check_eq "health report -P: header, one row per bin, nothing else" \
	"$(printf '%s\n' "DURATION|FORWARDERS|OSTS|ONGOING_FORWARDERS|ONGOING_OSTS" \
		"<1h|0|0|0|0" "1-4h|1|0|0|0" "4-12h|0|0|0|0" "12-96h|0|0|0|0" ">=96h|0|0|0|1")" \
	"$out"
fw health report -n
check_eq "health report -n: no title, no header" \
	"1-4h                1          0                  0 0" \
	"$(printf '%s\n' "$out" | sed -n 2p)"
check_match "health report -n: still the 'now:' line" '^now: 1 forwarder' "$out"
fw health report
check_eq "health report: the title and the header first" \
	"$(printf '%s\n' "Anomaly episodes by duration (Beacon Table 2)" \
		"DURATION   FORWARDERS       OSTS ONGOING_FORWARDERS ONGOING_OSTS")" \
	"$(printf '%s\n' "$out" | sed -n 1,2p)"

fw topology show -P
check_eq "topology show -P: three tables, blank line between, no summary" \
	"$(printf '%s\n' "FORWARDER|ADDRESS|BANDWIDTH|GROUP|ROLE|NODES" \
		"fwd01|10.1.0.11|2.5GB/s|rack1|service|256" \
		"fwd02|10.1.0.12|2.5GB/s|rack2|service|256" \
		"fwd03|10.1.0.13|2.5GB/s|rack3|service|256" \
		"fwd04|10.1.0.14|2.5GB/s|rack4|service|256" \
		"fwd05|10.1.0.15|2.5GB/s|rack1|backup|0" \
		"fwd06|10.1.0.16|2.5GB/s|rack2|backup|0" \
		"fwd07|10.1.0.17|2.5GB/s|rack3|backup|0" \
		"fwd08|10.1.0.18|2.5GB/s|rack4|backup|0" \
		"fwd09|10.1.0.19|2.5GB/s|rack1|backup|0" \
		"fwd10|10.1.0.20|2.5GB/s|rack2|backup|0" \
		"fwd11|10.1.0.21|2.5GB/s|rack3|backup|0" \
		"fwd12|10.1.0.22|2.5GB/s|rack4|backup|0" "" \
		"NODES|COUNT|FORWARDER" "c[1-256]|256|fwd01" "c[257-512]|256|fwd02" \
		"c[513-768]|256|fwd03" "c[769-1024]|256|fwd04" "" \
		"OST|BANDWIDTH" "lustre-OST0000|1.2GB/s" "lustre-OST0001|1.2GB/s" \
		"lustre-OST0002|1.2GB/s" "lustre-OST0003|1.2GB/s")" \
	"$out"
fw topology show --noheader
check_eq "topology show --noheader: no header line" "" \
	"$(printf '%s\n' "$out" | grep -E '^(FORWARDER|NODES|OST) ')"
check_eq "topology show --noheader: rows and summary stay" \
	"fwd01     10.1.0.11 2.5GB/s    rack1 service 256|1024 compute nodes, 12 forwarders (4 service, 8 backup), 4 OSTs" \
	"$(printf '%s\n' "$out" | sed -n '1p;$p' | paste -sd'|')"

fw db status -P
check_eq "db status -P: the TABLE|ROWS header first" "TABLE|ROWS" \
	"$(printf '%s\n' "$out" | head -1)"
check_eq "db status -P: forwarders, OSTs, allocations of the fixture" \
	"forwarders|12 osts|4 allocations|2" \
	"$(printf '%s\n' "$out" | grep -E '^(forwarders|osts|allocations)\|' | paste -sd' ')"
check_eq "db status -P: nothing but TABLE|N rows, one per table of --json" \
	"$("$fwdctl" --policy "$T/policy.yaml" db status --json | jq '.tables | length')" \
	"$(printf '%s\n' "$out" | sed 1d | grep -cE '^[a-z][a-z0-9_]*\|[0-9]+$')"
check_eq "db status -P: as many lines" \
	"$(printf '%s\n' "$out" | sed 1d | wc -l)" \
	"$(printf '%s\n' "$out" | sed 1d | grep -cE '^[a-z][a-z0-9_]*\|[0-9]+$')"
fw db status -n
check_eq "db status -n: server and schema lines, then rows without header" \
	"schema:   version $("$fwdctl" --policy "$T/policy.yaml" db status --json | jq .latest) (current)|forwarders           12" \
	"$(printf '%s\n' "$out" | sed -n 2,3p | paste -sd'|')"
fw db status
check_match "db status: the header by default" '^TABLE +ROWS$' "$out"
fw db prune --dry-run
check_eq "db prune --dry-run (its own long option, not -n): exit 0" 0 "$rc"
check_match "  and counts only" '^would remove 0 rows from ' "$out"

fw policy keys -P
check_eq "policy keys -P: header, then KEY|TYPE|RANGE" \
	"$(printf '%s\n' "KEY|TYPE|RANGE" "topology|path|-" "access.mode|off|opt-in|opt-out|shadow|-")" \
	"$(printf '%s\n' "$out" | sed -n 1,3p)"
fw policy keys -n
check_eq "policy keys -n: as many rows as --json keys" \
	"$("$fwdctl" policy keys --json | jq length)" "$(printf '%s\n' "$out" | wc -l)"
check_match "policy keys: a header by default" '^KEY +TYPE +RANGE$' \
	"$("$fwdctl" policy keys | head -1)"

sim() {
	fw sim --topology "$etc/topology-taihulight.yaml" --jobs "$etc/sim-jobs.csv" \
		--curves "$etc/sim-curves.csv" --compare static --quiet "$@"
}
sim -P
check_eq "sim -P: header and the static row, no summary line" \
	"$(printf '%s\n' "policy|agg bw|peak bw|I/O time s|speed-up med/mean/max|upgraded|upg core-h|util|held|refused" \
		"static|42.91 GB/s|88.59 GB/s|184256|1.00/1.00/1.00|0 (0.0%)|0|7.2%|15.3%|0")" \
	"$out"
sim -P -n --cores-per-node 2
check_eq "sim -P -n (--cores-per-node still its own option): the row alone" \
	"static|42.91 GB/s|88.59 GB/s|184256|1.00/1.00/1.00|0 (0.0%)|0|7.2%|15.3%|0" "$out"
sim -n
check_eq "sim -n: summary line, blank line, the row" 3 "$(printf '%s\n' "$out" | wc -l)"
check_match "sim -n: the summary first" '^328 jobs \(328 placed\)' "$out"

# Every table command's help names both options.
for cmd in "alloc" "audit" "health" "topology" "policy" "sim" "db"; do
	h=$("$fwdctl" $cmd --help)
	check_match "$cmd --help: -P, --parsable" '-P, --parsable' "$h"
	check_match "$cmd --help: -n, --noheader" '-n, --noheader' "$h"
done
fw policy check -P "$T/policy.yaml"
check_eq "-P where there is no table: accepted (check prints no table)" 0 "$rc"

# ---- --json when the command fails: still one JSON document ------------------
# {"error": "<the last message on stderr>", "exit": N}, N the exit status.
# json_err N LABEL ARGS...: run fwdctl ARGS, expect exit N, a message on
# stderr, and stdout one JSON object whose .error is stderr's last line.
json_err() {
	want=$1 label=$2
	shift 2
	out=$("$fwdctl" "$@" 2>"$T/err")
	rc=$?
	err=$(cat "$T/err")
	check_eq "$label: exit $want" "$want" "$rc"
	check_eq "$label: stdout one JSON object {error, exit: $want}" \
		"object|$(printf '%s\n' "$err" | tail -1)|$want" \
		"$(printf '%s' "$out" | jq -sr 'if length == 1 then .[0] | "\(type)|\(.error)|\(.exit)" else "\(length) documents" end' 2>&1)"
}
sed "s|^  socket: .*|  socket: $T/no-such-server.sock|" "$T/policy.yaml" >"$T/down.yaml"
P=(--policy "$T/policy.yaml")
D=(--policy "$T/down.yaml")
# the database down: exit 3 from every --json command that needs it
for cmd in "db status --json" "db migrate --json" "db prune --dry-run --json" \
	"db init --json" "alloc list --json" "alloc show 7 --json" \
	"audit --db --json" "health list --json" "health report --json" \
	"health scan --json" "health job 7 --json" "history run --json" \
	"profile show --json --job 7" "reconcile --json" \
	"--json alloc list"; do
	# shellcheck disable=SC2086 # the words of $cmd are arguments
	json_err 3 "database down: $cmd" "${D[@]}" $cmd
done
# bad values and options: exit 2 from every command taking --json
for cmd in "policy check --json --bogus" "policy show --json --bogus" \
	"policy keys --json --bogus" "topology check --json --bogus" \
	"topology show --json --bogus" "db status --json --bogus" \
	"alloc list --json --bogus" "audit --json --since yesterdayish" \
	"audit --db --json --job abc" "health list --json --state bogus" \
	"health report --json --since never" "history run --json --now x" \
	"trace summarize --json" "ingest --format bogus --json -" \
	"decide --json" "sim --json --jobs" "remap probe --json --bogus" \
	"--json nosuchcommand" "--json --bogus alloc list"; do
	# shellcheck disable=SC2086 # the words of $cmd are arguments
	json_err 2 "bad value: $cmd" "${P[@]}" $cmd
done
# not found / invalid: exit 1
json_err 1 "unknown job: alloc show 99 --json" "${P[@]}" alloc show 99 --json
json_err 1 "unknown job: health job 99 --json" "${P[@]}" health job 99 --json
json_err 1 "unknown job: profile show --job 99 --json" "${P[@]}" profile show --job 99 --json
json_err 1 "unknown profile: profile show --json KEY" "${P[@]}" profile show --json 'user=x;name=y;node_bucket=1'
# the check commands' own result: {"path", "valid": false, "error"}, the
# message on stderr as well
for c in "policy $top_srcdir/tests/fixtures/policy-unknown-key.yaml" \
	"topology $top_srcdir/tests/fixtures/topology-overlap.yaml"; do
	out=$("$fwdctl" "${P[@]}" ${c% *} check --json "${c#* }" 2>"$T/err")
	rc=$?
	check_eq "invalid ${c% *}: ${c% *} check --json: exit 1" 1 "$rc"
	check_eq "  stdout {valid: false, error: stderr's message}" \
		"false|$(sed "s/^fwdctl ${c% *}: //" "$T/err")" \
		"$(printf '%s' "$out" | jq -r '"\(.valid)|\(.error)"' 2>&1)"
done
SLURM_CONF=/nonexistent/slurm.conf json_err 3 "Slurm's configuration missing: reconcile --json" "${P[@]}" reconcile --json

tap_done
