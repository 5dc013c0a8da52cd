#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# etc/grafana-fwdalloc-io.json, the I/O weather board over the rollups
# through Grafana's MySQL data source: valid JSON, valid against Grafana's
# dashboard schema (tests/fixtures/grafana), and every panel's rawSql runs
# against this schema on the store of report_lib.sh, with Grafana's MySQL
# macros expanded as Grafana expands them (pkg/tsdb/mysql/macros.go:
# $__unixEpochFilter(c) is "c >= FROM AND c <= TO", $__unixEpochGroupAlias
# (c, '5m') is "c DIV 300 * 300 AS \"time\"", $__timeFrom() is
# "FROM_UNIXTIME(FROM)", $__unixEpochFrom() is FROM); each returns rows,
# and the forwarder bandwidth panel's figures are the stored minutes',
# per quarter hour from rollups_15min over a long range, per 5 minutes
# from rollups_minute over a short one.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
. "$top_srcdir/tests/integration/report_lib.sh"
command -v jq >/dev/null || skip_all "jq not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip_all "python3-jsonschema not installed"
dash=$top_srcdir/etc/grafana-fwdalloc-io.json
schema=$top_srcdir/tests/fixtures/grafana/dashboard-kind-0.0.schema.json

has_panels() { jq -e '.panels | length > 0' "$1" >/dev/null; }
check "the dashboard is JSON with panels" has_panels "$dash"
check_eq "the dashboard is valid against Grafana's dashboard schema" "" \
	"$(python3 - "$schema" "$dash" <<'PY' 2>&1
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
for e in jsonschema.Draft7Validator(schema).iter_errors(doc):
    print("/".join(str(p) for p in e.path) + ": " + e.message)
PY
)"
check_eq "every panel queries the MySQL data source in SQL" "" \
	"$(jq -r '.panels[] | select(.datasource.type != "mysql" or ([.targets[] | select(.rawSql == null)] | length) > 0) | .title' "$dash")"

db_start
report_seed
from=$((JOB_START - 8 * 86400)) to=$((JOB_END + 3600))

# expand FILE: "title<TAB>sql" per target, macros expanded for [from, to]
expand() {
	python3 - "$1" "$from" "$to" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1])); t0 = int(sys.argv[2]); t1 = int(sys.argv[3])
def secs(s):
    s = s.strip().strip("'\"")
    m = re.fullmatch(r"(\d+)([smhd]?)", s)
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
def macro(m):
    name, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    if name == "__unixEpochFilter":
        return "%s >= %d AND %s <= %d" % (args[0], t0, args[0], t1)
    if name in ("__unixEpochGroup", "__unixEpochGroupAlias"):
        g = "%s DIV %d * %d" % (args[0], secs(args[1]), secs(args[1]))
        return g + (' AS "time"' if name.endswith("Alias") else "")
    if name == "__timeFilter":
        return "%s BETWEEN FROM_UNIXTIME(%d) AND FROM_UNIXTIME(%d)" % (args[0], t0, t1)
    if name == "__timeFrom":
        return "FROM_UNIXTIME(%d)" % t0
    if name == "__timeTo":
        return "FROM_UNIXTIME(%d)" % t1
    if name == "__unixEpochFrom":
        return "%d" % t0
    if name == "__unixEpochTo":
        return "%d" % t1
    raise SystemExit("unknown macro " + name)
for p in doc["panels"]:
    for t in p.get("targets", []):
        sql = re.sub(r"\$([_a-zA-Z0-9]+)\(([^)]*)\)", macro, t["rawSql"])
        print(p["title"] + "\t" + sql.replace("\n", " "))
PY
}

n=0
while IFS=$'\t' read -r title sql; do
	n=$((n + 1))
	rows=$("$testdb" sql "$d" -N fwdalloc -e "$sql" 2>"$d/sql.err")
	check_eq "panel '$title': its SQL runs" 0 "$?" || diag "$(cat "$d/sql.err")" "$sql"
	check "panel '$title': returns rows on the store" test -n "$rows"
	printf '%s\n' "$rows" >"$d/panel-$n.rows"
done < <(expand "$dash")
check_eq "every panel's query ran" "$(jq '[.panels[].targets[]] | length' "$dash")" "$n"

# the forwarder bandwidth panel (the first): its values are the rollups
# (MariaDB prints a quotient with 4 decimals: each point within step x
# 1e-4), over the long range (8 days: quarter hours) and a short one (the
# run and an hour either side: 5 minutes)
panel1() { # FILE STEP LABEL
	local want
	want=$(q "SELECT SUM(read_bytes + write_bytes) FROM rollups_minute WHERE kind = 'fwd' AND name = 'fwd01' AND minute BETWEEN $from AND $to")
	check_eq "forwarder bandwidth panel, $3: fwd01's bytes = its stored minutes" "ok" \
		"$(awk -F'\t' -v want="$want" -v step="$2" '$2 == "fwd01" { s += $3 * step; n++ }
			END { d = s - want; if (d < 0) d = -d; print (n && d <= n * step * 1e-4) ? "ok" : "got " s " from " n " points" }' "$1")"
	check_eq "forwarder bandwidth panel, $3: one point per $2 s with rollups" \
		"$(q "SELECT COUNT(DISTINCT minute DIV $2) FROM rollups_minute WHERE kind = 'fwd' AND name = 'fwd01' AND minute BETWEEN $from AND $to")" \
		"$(awk -F'\t' '$2 == "fwd01"' "$1" | wc -l)"
}
check "the long range has fwd01's minutes off the quarter hours at neither end" \
	test "$(q "SELECT COUNT(*) FROM rollups_minute WHERE name = 'fwd01' AND (minute < $from - $from % 900 + 900 OR minute >= $to - $to % 900)")" -eq 0
panel1 "$d/panel-1.rows" 900 "8 days"
from=$((JOB_START - 3600)) to=$((JOB_END + 3600))
sql=$(expand "$dash" | head -1 | cut -f2)
"$testdb" sql "$d" -N fwdalloc -e "$sql" >"$d/panel-1-short.rows"
panel1 "$d/panel-1-short.rows" 300 "2 hours"

# a query naming a column the schema lacks fails the check
jq '.panels[0].targets[0].rawSql |= sub("read_bytes"; "read_bytez")' "$dash" >"$d/bad.json"
sql=$(expand "$d/bad.json" | head -1 | cut -f2)
"$testdb" sql "$d" -N fwdalloc -e "$sql" >/dev/null 2>&1
check "control: a query on a missing column fails" test "$?" -ne 0

tap_done
