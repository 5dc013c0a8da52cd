#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl metrics: OpenMetrics that Prometheus' own parser
# (python3-prometheus-client, openmetrics.parser) accepts, with the values
# the database holds: decisions by action, fallbacks, the decision time
# histogram, held/idle/excluded forwarders, health states and the age of
# the newest sample of each source (NaN with none: a dead feed shows).
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"

om() { /usr/bin/python3 -c '
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for f in text_string_to_metric_families(sys.stdin.read()):
    for s in f.samples:
        labels = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %s" % (s.name, labels, s.value))
'; }
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	skip_all "python3-prometheus-client not installed (scripts/install-deps)"

db_start
# This test's own audit file (metrics stores the fallbacks only the audit
# file holds): none.
printf 'audit:\n  file: %s/audit.jsonl\n' "$d" >>"$policy"
fw db init
check_eq "db init" 0 "$rc"
topo=$top_srcdir/etc/topology.yaml
m() { fw --topology "$topo" metrics; }

m
check_eq "empty database: exit 0" 0 "$rc"
check_eq "ends with # EOF" "# EOF" "$(printf '%s\n' "$out" | tail -1)"
parsed=$(printf '%s\n' "$out" | om 2>&1)
check_match "Prometheus' OpenMetrics parser accepts it" "fwdalloc_fallbacks_total" "$parsed"
check_eq "no sample stored: every source age is NaN" \
	"fwdalloc_newest_sample_age_seconds{source=fwd} nan
fwdalloc_newest_sample_age_seconds{source=jobstats} nan
fwdalloc_newest_sample_age_seconds{source=mdt} nan
fwdalloc_newest_sample_age_seconds{source=ost} nan" \
	"$(printf '%s\n' "$parsed" | grep newest_sample | sort)"
check_eq "idle: the 8 backups; nothing held or excluded" \
	"fwdalloc_forwarders{state=excluded} 0
fwdalloc_forwarders{state=held} 0
fwdalloc_forwarders{state=idle} 8" \
	"$(printf '%s\n' "$parsed" | grep '^fwdalloc_forwarders' | sort)"

# A health scan over no data says so (it looked like a healthy system).
"$fwdctl" --policy "$policy" --topology "$topo" health scan >"$d/scan.out" 2>"$d/scan.err"
check_eq "scan over no data: exit 0" 0 "$?"
check_eq "scan over no data: a warning per source" \
	"fwdctl health scan: warning: no forwarder statistics stored: nothing was scanned (is \`fwdctl ingest\` fed?)
fwdctl health scan: warning: no OST statistics stored: nothing was scanned (is \`fwdctl ingest\` fed?)" \
	"$(cat "$d/scan.err")"

now=$(date +%s)
rec() { printf '{"event": "prolog", "job_id": "%s", "action": "%s", "outcome": "%s"}' "$@"; }
q "INSERT INTO audit (ts, job_id, action, outcome, elapsed_us, record) VALUES
  ($now, 1, 'scale', 'applied', 800, '$(rec 1 scale applied)'),
  ($now, 2, 'scale', 'applied', 40000, '$(rec 2 scale applied)'),
  ($now, 3, 'default', 'fallback: database down', 2000000, '$(rec 3 default 'fallback: database down')'),
  ($now, 4, 'isolate', 'applied', 20000000, '$(rec 4 isolate applied)'),
  ($now, 4, '-', 'released 1 allocation row(s)', 0, '{\"event\": \"epilog\"}')"
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, action, acquired_at) VALUES
  (1, 'fwd05', 1, 'c[1-4]', 'scale', $now), (1, 'fwd01', 0, 'c[1-4]', 'scale', $now),
  (4, 'fwd06', 1, 'c[5-6]', 'isolate', $now)"
q "INSERT INTO health (kind, name, state, since, updated_at) VALUES
  ('fwd', 'fwd07', 'excluded', $now, $now), ('fwd', 'fwd02', 'suspect', $now, $now),
  ('ost', 'lustre-OST0001', 'suspect', $now, $now)
  ON DUPLICATE KEY UPDATE state = VALUES(state)"
q "INSERT INTO samples_raw (kind, name, ts) VALUES ('fwd', 'fwd01', $((now - 120))),
  ('fwd', 'fwd02', $((now - 60))), ('ost', 'lustre-OST0000', $((now - 7200))),
  ('fwd', '10.9.9.9', $((now - 90)))"

m
parsed=$(printf '%s\n' "$out" | om 2>&1)
check_eq "decisions by action (prolog records only)" \
	"fwdalloc_decisions_total{action=default} 1
fwdalloc_decisions_total{action=isolate} 1
fwdalloc_decisions_total{action=scale} 2" \
	"$(printf '%s\n' "$parsed" | grep '^fwdalloc_decisions' | sort)"
check_eq "fallbacks" "fwdalloc_fallbacks_total{} 1" \
	"$(printf '%s\n' "$parsed" | grep '^fwdalloc_fallbacks')"
check_eq "decision time histogram: cumulative buckets, count, sum" \
	"fwdalloc_prolog_seconds_bucket{le=0.001} 1
fwdalloc_prolog_seconds_bucket{le=0.005} 1
fwdalloc_prolog_seconds_bucket{le=0.01} 1
fwdalloc_prolog_seconds_bucket{le=0.05} 2
fwdalloc_prolog_seconds_bucket{le=0.1} 2
fwdalloc_prolog_seconds_bucket{le=0.5} 2
fwdalloc_prolog_seconds_bucket{le=1.0} 2
fwdalloc_prolog_seconds_bucket{le=5.0} 3
fwdalloc_prolog_seconds_bucket{le=10.0} 3
fwdalloc_prolog_seconds_bucket{le=+Inf} 4
fwdalloc_prolog_seconds_count{} 4
fwdalloc_prolog_seconds_sum{} 22.0408" \
	"$(printf '%s\n' "$parsed" | grep '^fwdalloc_prolog_seconds')"
check_eq "forwarders: 3 held, 5 idle backups, 1 excluded" \
	"fwdalloc_forwarders{state=excluded} 1
fwdalloc_forwarders{state=held} 3
fwdalloc_forwarders{state=idle} 5" \
	"$(printf '%s\n' "$parsed" | grep '^fwdalloc_forwarders' | sort)"
check_eq "health states (components without a row are ok)" \
	"fwdalloc_health_components{kind=forwarder,state=excluded} 1
fwdalloc_health_components{kind=forwarder,state=ok} 10
fwdalloc_health_components{kind=forwarder,state=suspect} 1
fwdalloc_health_components{kind=ost,state=excluded} 0
fwdalloc_health_components{kind=ost,state=ok} 3
fwdalloc_health_components{kind=ost,state=suspect} 1" \
	"$(printf '%s\n' "$parsed" | grep '^fwdalloc_health' | sort)"
age() { printf '%s\n' "$parsed" | sed -n "s/^fwdalloc_newest_sample_age_seconds{source=$1} //p"; }
check "fwd: the newest of its samples, about 60 s old" \
	awk -v a="$(age fwd)" 'BEGIN { exit !(a >= 60 && a < 600) }'
check "ost: about 2 h old" awk -v a="$(age ost)" 'BEGIN { exit !(a >= 7200 && a < 7800) }'
check_eq "mdt: none" nan "$(age mdt)"

"$fwdctl" --policy "$policy" --topology "$topo" health scan >"$d/scan.out" 2>"$d/scan.err"
check_eq "scan: names the Beacon IP the topology lacks" \
	"fwdctl health scan: warning: 1 forwarder name(s) with statistics are not in the topology and are never scanned: 10.9.9.9" \
	"$(head -1 "$d/scan.err")"
check_match "scan with a stale OST feed: warns about the OSTs only" \
	"^fwdctl health scan: warning: the newest OST sample is 7[0-9]{3} s old \\(more than 1500 s\\): the statistics feed looks stale\$" \
	"$(tail -n +2 "$d/scan.err")"

# The dashboard queries only these metrics.
dash=$top_srcdir/etc/grafana-fwdalloc.json
check "the Grafana dashboard is JSON" jq -e .panels "$dash"
missing=
for e in $(jq -r '.. | .expr? // empty' "$dash" | grep -oE 'fwdalloc_[a-z_]+' | sort -u); do
	printf '%s\n' "$out" | grep -q "^$e" || missing="$missing $e"
done
check_eq "every metric the dashboard queries is printed" "" "$missing"

# The dashboard against Grafana's dashboard schema (tests/fixtures/grafana:
# Grafana's Dashboard kind 0.0 as JSON Schema); a dashboard that breaks it
# (a panel 25 columns wide) is refused, so the check can fail.
schema=$top_srcdir/tests/fixtures/grafana/dashboard-kind-0.0.schema.json
validate() {
	python3 - "$schema" "$1" <<'EOF' 2>&1
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
doc = json.load(open(sys.argv[2]))
for e in jsonschema.Draft7Validator(schema).iter_errors(doc):
    print("/".join(str(p) for p in e.path) + ": " + e.message)
EOF
}
check_eq "the dashboard is valid against Grafana's dashboard schema" "" "$(validate "$dash")"
jq '.panels[0].gridPos.w = 25' "$dash" >"$d/bad-dash.json"
check_match "... which refuses a panel 25 columns wide" \
	'^panels/0: .* is not valid under any of the given schemas' "$(validate "$d/bad-dash.json")"

tap_done
