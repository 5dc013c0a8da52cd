#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl report job / machine against a private MariaDB holding ingested
# Lustre job_stats (the 2.15 fixture, Telegraf lustre2 lines), forwarder
# samples and the controller's rows (tests/integration/report_lib.sh):
# every figure of the JSON reports is compared with the same figure
# computed here from the stored rows, by other means (window functions,
# awk); the text report names them; the HTML escapes hostile names.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
. "$top_srcdir/tests/integration/report_lib.sh"
command -v jq >/dev/null || skip_all "jq not installed"
db_start
fw db init
fw report machine --since $JOB_START --until $JOB_END --json
check_eq "machine report of an empty store: exit 0" 0 "$rc" || diag "$err"
check_eq "machine report of an empty store: no component, no allocation" "0 0 0 0" \
	"$(printf '%s' "$out" | jq -r '"\(.components.fwd | length) \(.components.ost | length) \(.components.mdt | length) \(.allocations | length)"')"
report_seed

fw report job 4242 --json
check_eq "report job --json: exit 0" 0 "$rc" || diag "$err"
J=$out
jqr() { printf '%s' "$J" | jq -r "$1"; }
from=$(jqr .range.from) to=$(jqr .range.to) bucket=$(jqr .range.bucket)
check_eq "the axis starts at the minute of the job's start" \
	$((JOB_START - JOB_START % 60)) "$from"
check "the axis covers the run in whole buckets" \
	test "$to" -ge "$JOB_END" -a $(((to - from) % bucket)) -eq 0 -a $((bucket % 60)) -eq 0
check_eq "job: user, name, nodes, state" "ann wrf 2 COMPLETED" \
	"$(jqr '"\(.job.user) \(.job.name) \(.job.node_count) \(.job.state)"')"

# ---- the I/O over time: job_stats increments per bucket -------------------
want=$(want_series "$from" "$to" "$bucket")
got=$(jqr '.series | [.t, .read_bytes, .write_bytes, .ops, .md_ops] | transpose[]
	| select(.[1] + .[2] + .[3] + .[4] > 0) | @tsv')
check_eq "series from job_stats" jobstats "$(jqr .series.source)"
check "series: several buckets with I/O" test "$(printf '%s\n' "$want" | wc -l)" -ge 5
check_eq "series: bytes read, written, operations, metadata per bucket = the stored increments" "$want" "$got"
check_eq "series: rates are the counts over the bucket" "" \
	"$(jqr ".series | [.read_bytes, .read_bps] | transpose[] | select((.[0] / $bucket - .[1]) | fabs > 1e-6) | @tsv")"
# totals: the newest snapshot of every (target, id, op)
want=$(q "SELECT SUM(IF(op = 'read_bytes', sum_value, 0)), SUM(IF(op = 'write_bytes', sum_value, 0)),
	SUM(IF(op = 'write_bytes', samples, 0))
	FROM jobstats_raw r WHERE job_id = 4242 AND ts = (SELECT MAX(ts) FROM jobstats_raw s
	WHERE s.target = r.target AND s.lustre_job_id = r.lustre_job_id AND s.op = r.op AND s.job_id = 4242)")
check_eq "job_stats totals" "$want" "$(jqr '[.jobstats.read_bytes, .jobstats.write_bytes, .jobstats.write_ops] | @tsv')"

# ---- components: during the run and the week before -----------------------
for f in fwd01 fwd02; do
	want=$(q "SELECT SUM(read_bytes), SUM(write_bytes), SUM(md_ops),
		ROUND(SUM(queue_len_sum) / SUM(queue_len_samples), 6)
		FROM rollups_minute WHERE kind = 'fwd' AND name = '$f'
		AND minute >= $from AND minute < $to")
	check_eq "$f during the run: bytes, metadata, mean queue" "$want" \
		"$(jqr ".components[] | select(.name == \"$f\") | [.read_bytes, .write_bytes, .md_ops, (.queue_len * 1e6 | round / 1e6)] | @tsv")"
	check_eq "$f during the run: bandwidth = bytes over the range" "true" \
		"$(jqr ".components[] | select(.name == \"$f\") | ((.read_bytes + .write_bytes) / ($to - $from) - .during_bps | fabs) < 1e-6")"
	cf=$(((from - 7 * 86400) - (from - 7 * 86400) % 3600))
	hours=$(q "SELECT SUM(read_bytes + write_bytes) FROM rollups_minute
		WHERE kind = 'fwd' AND name = '$f' AND minute >= $cf AND minute < $from
		GROUP BY minute DIV 3600 HAVING SUM(samples) > 0" | sort -n)
	med=$(printf '%s\n' "$hours" | awk '{ v[NR] = $1 / 3600 }
		END { p = (NR - 1) * 0.5; i = int(p) + 1; f = p - int(p);
		      m = (i < NR) ? v[i] + f * (v[i + 1] - v[i]) : v[NR]; printf "%.6f %d", m, NR }')
	check_eq "$f usual load: median of its hourly bandwidth the week before (and hours)" "$med" \
		"$(jqr ".components[] | select(.name == \"$f\") | \"\(.usual_bps.median * 1e6 | round / 1e6 | tostring | tonumber) \(.usual_bps.n)\"" | awk '{ printf "%.6f %d", $1, $2 }')"
done
check_eq "its OSTs and MDT: the targets of its job_stats" \
	"$(q "SELECT DISTINCT CONCAT(kind, ' ', target) FROM jobstats_raw WHERE job_id = 4242 ORDER BY 1")" \
	"$(jqr '.components[] | select(.kind != "fwd") | "\(.kind) \(.name)"' | sort)"

want=$(q "SELECT CONCAT(kind, ' ', target), SUM(IF(op = 'read_bytes', sum_value, 0)), SUM(IF(op = 'write_bytes', sum_value, 0))
	FROM jobstats_raw r WHERE job_id = 4242 AND ts = (SELECT MAX(ts) FROM jobstats_raw s
	WHERE s.target = r.target AND s.lustre_job_id = r.lustre_job_id AND s.op = r.op AND s.job_id = 4242)
	GROUP BY 1 ORDER BY 1")
check_eq "its OSTs and MDT: the job's own bytes there = its newest job_stats" "$want" \
	"$(jqr '.components[] | select(.kind != "fwd") | "\(.kind) \(.name)\t\(.job.read_bytes)\t\(.job.write_bytes)"' | sort)"

# OSTs and MDT: their totals over the run and their usual load over the
# day before, from the minute rows (the report reads whole quarter hours
# of rollups_15min and the minutes at either end)
check "its OSTs and MDT: rollups during the run to compare with" \
	test "$(q "SELECT COUNT(*) FROM rollups_minute WHERE kind <> 'fwd' AND minute >= $from AND minute < $to")" -gt 0
for kt in $(jqr '.components[] | select(.kind != "fwd") | "\(.kind):\(.name)"'); do
	kind=${kt%%:*} t=${kt#*:}
	want=$(q "SELECT COALESCE(SUM(read_bytes), 0), COALESCE(SUM(write_bytes), 0), COALESCE(SUM(md_ops), 0), COALESCE(SUM(samples), 0)
		FROM rollups_minute WHERE kind = '$kind' AND name = '$t' AND minute >= $from AND minute < $to")
	check_eq "$kind $t during the run: bytes, metadata, samples = its minutes" "$want" \
		"$(jqr ".components[] | select(.kind == \"$kind\" and .name == \"$t\") | [.read_bytes, .write_bytes, .md_ops, .samples] | @tsv")"
	cf=$(((from - 86400) - (from - 86400) % 3600))
	med=$(q "SELECT SUM(read_bytes + write_bytes) FROM rollups_minute
		WHERE kind = '$kind' AND name = '$t' AND minute >= $cf AND minute < $from
		GROUP BY minute DIV 3600 HAVING SUM(samples) > 0" | sort -n | awk '{ v[NR] = $1 / 3600 }
		END { if (!NR) { print "null 0"; exit } p = (NR - 1) * 0.5; i = int(p) + 1; f = p - int(p);
		      m = (i < NR) ? v[i] + f * (v[i + 1] - v[i]) : v[NR]; printf "%.6f %d\n", m, NR }')
	check_eq "$kind $t usual load: median of its hourly bandwidth the day before (and hours)" "$med" \
		"$(jqr ".components[] | select(.kind == \"$kind\" and .name == \"$t\") | .usual_bps | if .n > 0 then \"\(.median) \(.n)\" else \"null 0\" end" | awk '$1 != "null" { printf "%.6f %d\n", $1, $2; next } { print }')"
done

# forwarders' aggregate series
want=$(q "SELECT $from + FLOOR((minute - $from) / $bucket) * $bucket, SUM(read_bytes), SUM(write_bytes)
	FROM rollups_minute WHERE kind = 'fwd' AND name IN ('fwd01', 'fwd02')
	AND minute >= $from AND minute < $to GROUP BY 1 ORDER BY 1")
check_eq "forwarders' series per bucket = their rollups" "$want" \
	"$(jqr '.forwarder_series | [.t, .read_bytes, .write_bytes] | transpose[] | select(.[1] + .[2] > 0) | @tsv')"

# ---- history, decision, health, neighbours ---------------------------------
vals=$(q "SELECT bandwidth_achieved_bps FROM job_io i JOIN jobs j USING (job_id)
	WHERE j.user = 'ann' AND j.name = 'wrf' AND j.node_count BETWEEN 2 AND 3
	AND j.job_id <> 4242 ORDER BY 1")
qs=$(printf '%s\n' "$vals" | awk '{ v[NR] = $1 }
	function q(p,  x, i, f) { x = (NR - 1) * p; i = int(x) + 1; f = x - int(x);
		return (i < NR) ? v[i] + f * (v[i + 1] - v[i]) : v[NR] }
	END { printf "%d %.0f %.0f %.0f %.0f %.0f", NR, v[1], q(0.25), q(0.5), q(0.75), v[NR] }')
check_eq "history: quantiles of the earlier runs at 2-3 nodes" "$qs" \
	"$(jqr '.history.bandwidth_bps | "\(.n) \(.min) \(.q1) \(.median) \(.q3) \(.max)"' | awk '{ printf "%d %.0f %.0f %.0f %.0f %.0f", $1, $2, $3, $4, $5, $6 }')"
check_eq "history: the 8-node run is another scale" "" "$(jqr '.history.runs[] | select(.job_id == 4105) | .job_id')"
check_eq "history: this run" "$(q "SELECT ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id = 4242")" \
	"$(jqr '.history.this_bandwidth_bps | round')"
curve=$(q "SELECT forwarders_held, COUNT(*) FROM job_io i JOIN jobs j USING (job_id)
	WHERE j.user = 'ann' AND j.name = 'wrf' AND j.node_count BETWEEN 2 AND 3
	GROUP BY 1 ORDER BY 1")
check_eq "history: the curve's forwarder counts and runs (this run included)" "$curve" \
	"$(jqr '.history.curve | sort_by(.forwarders)[] | "\(.forwarders)\t\(.runs)"')"
check_eq "decision: action, outcome, reasons (audit)" "scale applied S = 2 > N_f = 1" \
	"$(jqr '"\(.decision.action) \(.decision.outcome) \(.decision.reasons | join(","))"')"
check_eq "decision: expected = the ledger's, achieved = the summary's" \
	"$(q "SELECT ROUND(MAX(bandwidth_bps)) FROM allocations WHERE job_id = 4242") $(q "SELECT ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id = 4242")" \
	"$(jqr '"\(.decision.expected_bps | round) \(.decision.achieved_bps | round)"')"
check_eq "decision: its allocations" "fwd01 false fwd02 true" \
	"$(jqr '[.decision.allocations[] | "\(.forwarder) \(.private)"] | join(" ")')"
check_eq "health: the episode of its forwarder during the run, not another's" \
	"$(q "SELECT CONCAT(name, ' ', state, ' ', start_at, ' ', end_at) FROM health_history
		WHERE name IN ('fwd01', 'fwd02') AND state <> 'ok' AND start_at < $JOB_END AND (end_at IS NULL OR end_at > $JOB_START)")" \
	"$(jqr '.health[] | "\(.name) \(.state) \(.start_at) \(.end_at)"')"
check_eq "neighbours: job 5000 shared fwd01 and is disruptive (N-1)" "5000 fwd01 true" \
	"$(jqr '.neighbours[] | "\(.job_id) \(.shared | join(",")) \(.disruptive)"')"

# ---- advice: each rule from the stored figures -----------------------------
mean_write=$(q "SELECT SUM(sum_value) / SUM(samples) FROM jobstats_raw r WHERE job_id = 4242 AND op = 'write_bytes'
	AND ts = (SELECT MAX(ts) FROM jobstats_raw s WHERE s.target = r.target AND s.lustre_job_id = r.lustre_job_id
	AND s.op = r.op AND s.job_id = 4242)")
mode=$(q "SELECT io_mode FROM job_io WHERE job_id = 4242")
mdrate=$(q "SELECT mdops_rate FROM job_io WHERE job_id = 4242")
rules=
awk -v m="$mean_write" 'BEGIN { exit !(m < 1048576) }' && [ "$mode" = N-1 ] && rules="$rules n-1-small-writes"
awk -v r="$mdrate" 'BEGIN { exit !(r > 300) }' && rules="$rules metadata-heavy"
# the curve: k = 1's median within 10 % of k = 2's
k1=$(q "SELECT bandwidth_achieved_bps FROM job_io i JOIN jobs j USING (job_id) WHERE j.user = 'ann'
	AND j.name = 'wrf' AND j.node_count BETWEEN 2 AND 3 AND forwarders_held = 1 ORDER BY 1" |
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
k2=$(q "SELECT bandwidth_achieved_bps FROM job_io i JOIN jobs j USING (job_id) WHERE j.user = 'ann'
	AND j.name = 'wrf' AND j.node_count BETWEEN 2 AND 3 AND forwarders_held = 2 ORDER BY 1" |
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
awk -v a="$k1" -v b="$k2" 'BEGIN { exit !(a >= 0.9 * b) }' && rules="$rules scale-not-paying"
rules="$rules slow-component"
check_eq "advice: the rules the stored figures meet" "${rules# }" "$(jqr '[.advice[].rule] | join(" ")')"

# ---- text ------------------------------------------------------------------
fw report job 4242
check_eq "report job (text): exit 0" 0 "$rc"
check_match "text: the job line" '^job 4242  wrf' "$out"
check_match "text: the decision" 'action scale, outcome applied' "$out"
check_match "text: the neighbour" 'job 5000 \(N-1, 800 md ops/s, 100MB/s\) disruptive on fwd01' "$out"
check_match "text: advice with its rule" 'metadata-heavy: 450 metadata operations per second' "$out"
check_eq "text: times in ISO 8601, no epoch seconds" "" \
	"$(printf '%s\n' "$out" | grep -oE '(^|[^0-9])1[0-9]{9}([^0-9]|$)')"
fw report job 4300
check_match "text: a hostile name's control characters cannot reach the terminal" '<script>' "$out"

# ---- not found, bad input --------------------------------------------------
fw report job 999999
check_eq "unknown job: exit 1" 1 "$rc"
check_match "unknown job: says so" "no job 999999 recorded" "$err"
fw report machine --since yesterdayish
check_eq "bad --since: exit 2" 2 "$rc"
check_match "bad --since: names the value" "yesterdayish" "$err"
fw report machine --since $JOB_END --until $JOB_START
check_eq "since after until: exit 2" 2 "$rc"
fw report job 4242 --since 1d
check_eq "report job --since: exit 2" 2 "$rc"

# ---- machine ---------------------------------------------------------------
fw report machine --since $JOB_START --until $JOB_END --json
check_eq "report machine --json: exit 0" 0 "$rc" || diag "$err"
J=$out
from=$(jqr .range.from) to=$(jqr .range.to) bucket=$(jqr .range.bucket)
check "machine: whole-minute buckets covering the range" \
	test "$from" -le "$JOB_START" -a "$to" -ge "$JOB_END" -a $((bucket % 60)) -eq 0
want=$(q "SELECT name, $from + FLOOR((minute - $from) / $bucket) * $bucket, SUM(read_bytes), SUM(write_bytes),
	SUM(md_ops), ROUND(SUM(queue_len_sum) / SUM(queue_len_samples), 6)
	FROM rollups_minute WHERE kind = 'fwd' AND minute >= $from AND minute < $to
	GROUP BY 1, 2 ORDER BY 1, 2")
got=$(jqr '.t as $t | .components.fwd[] | .name as $n | [$t, .read_bytes, .write_bytes, .md_ops, .queue_len] | transpose[]
	| select(.[4] != null) | [$n, .[0], .[1], .[2], .[3], (.[4] * 1e6 | round / 1e6)] | @tsv')
check_eq "machine: forwarder heat map cells = the rollups per bucket" \
	"$(printf '%s\n' "$want" | awk -F'\t' -v OFS='\t' '{ $6 = $6 + 0; print }')" \
	"$(printf '%s\n' "$got" | awk -F'\t' -v OFS='\t' '{ $6 = $6 + 0; print }')"
check_eq "machine: bandwidth = bytes over the bucket" "" \
	"$(jqr ".components.fwd[] | [.read_bytes, .write_bytes, .bps] | transpose[] | select(((.[0] + .[1]) / $bucket - .[2]) | fabs > 1e-6) | @tsv")"
check_eq "machine: health episodes overlapping the range" \
	"$(q "SELECT CONCAT(name, ' ', state) FROM health_history WHERE state <> 'ok' AND start_at < $to
		AND (end_at IS NULL OR end_at > $from) ORDER BY start_at")" \
	"$(jqr '.health[] | "\(.name) \(.state)"')"
check_eq "machine: the jobs holding forwarders in the range" \
	"$(q "SELECT job_id, GROUP_CONCAT(forwarder ORDER BY id) FROM allocations WHERE acquired_at < $to
		AND (released_at IS NULL OR released_at >= $from) GROUP BY job_id ORDER BY job_id")" \
	"$(jqr '.allocations[] | "\(.job_id)\t\(.forwarders | join(","))"')"
held=
for b in $(jqr '.t[]'); do
	held="$held $(q "SELECT COUNT(*) FROM allocations WHERE action <> 'shadow' AND acquired_at < $((b + bucket))
		AND COALESCE(released_at, $to) >= $b")"
done
check_eq "machine: forwarders held per bucket" "${held# }" "$(jqr '.forwarders_held | map(tostring) | join(" ")')"
fw report machine --since $JOB_START --until $JOB_END
check_eq "report machine (text): exit 0" 0 "$rc"
check_match "machine text: a forwarder line" '^  fwd01 ' "$out"

# ---- HTML: self-contained, escaped -----------------------------------------
fw report job 4300 --html "$d/hostile.html"
check_eq "report job --html: exit 0" 0 "$rc"
check_eq "html: no script or img element from the job name" "" \
	"$(grep -oiE '<(script|img)' "$d/hostile.html")"
name=$(python3 - "$d/hostile.html" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    inside = False; text = ""
    def handle_starttag(self, tag, attrs):
        if dict(attrs).get("id") == "job-name": self.inside = True
    def handle_endtag(self, tag):
        if self.inside and tag == "span": self.inside = False
    def handle_data(self, data):
        if self.inside: self.text += data
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read()); sys.stdout.write(p.text)
PY
)
check_eq "html: the 255-byte hostile name reads back whole as text" "$HOSTILE_NAME" "$name"
fw report job 4242 --html "$d/job.html"
check_eq "html: no network resource" "" "$(grep -oiE '(src|href)=|url\(|https?:' "$d/job.html")"
check_eq "html: one point per bucket and series in the bandwidth chart" \
	"$(($(printf '%s' "$J" | jq 'length') * 0 + 2 * $(fw report job 4242 --json; printf '%s' "$out" | jq '.series.t | length')))" \
	"$(grep -c 'data-series="\(read\|write\)_bps"' <(sed -n '/id="job-bandwidth"/,/<\/svg>/p' "$d/job.html"))"

# ---- a longer run: its OSTs' totals from whole quarter hours and minutes ----
# Job 4400 ran 3 hours the day before 4242, starting and ending off the
# quarter hours: the report reads the quarter hours inside its run from
# rollups_15min and the minutes at either end from rollups_minute; the
# figures must be those of the minute rows.
s4=$((JOB_START - 40000 + 17)) e4=$((JOB_START - 29200 + 5))
q "INSERT INTO jobs (job_id, user, account, name, nodelist, node_count,
   start_at, end_at, state, request, updated_at) VALUES
   (4400, 'ann', 'phys', 'long', 'n[1-2]', 2, $s4, $e4, 'COMPLETED', NULL, 0)"
q "INSERT INTO jobstats_raw (kind, target, lustre_job_id, job_id, ts, op, samples, unit, min_value, max_value, sum_value) VALUES
   ('ost', 'lustre-OST0000', '4400', 4400, $((s4 + 600)), 'write_bytes', 10, 'bytes', 1, 9, 40960),
   ('ost', 'lustre-OST0001', '4400', 4400, $((s4 + 900)), 'write_bytes', 20, 'bytes', 1, 9, 81920),
   ('mdt', 'lustre-MDT0000', '4400', 4400, $((s4 + 900)), 'open', 30, 'usecs', 1, 9, 300)"
fw report job 4400 --json
check_eq "report job 4400 --json: exit 0" 0 "$rc" || diag "$err"
J=$out
from=$(jqr .range.from) to=$(jqr .range.to)
check "job 4400: its run holds whole quarter hours, and minutes at both ends" \
	test $((from % 900)) -ne 0 -a $((to % 900)) -ne 0 -a $((to - from)) -gt 1800
check_eq "job 4400: its OSTs and MDT" "mdt:lustre-MDT0000 ost:lustre-OST0000 ost:lustre-OST0001" \
	"$(jqr '[.components[] | select(.kind != "fwd") | "\(.kind):\(.name)"] | sort | join(" ")')"
for kt in $(jqr '.components[] | select(.kind != "fwd") | "\(.kind):\(.name)"'); do
	kind=${kt%%:*} t=${kt#*:}
	want=$(q "SELECT SUM(read_bytes), SUM(write_bytes), SUM(md_ops), SUM(samples),
		ROUND(SUM(queue_len_sum) / SUM(queue_len_samples), 6), MAX(read_bps_max) + MAX(write_bps_max)
		FROM rollups_minute WHERE kind = '$kind' AND name = '$t' AND minute >= $from AND minute < $to")
	check "job 4400: $kind $t did I/O during the run" test "$(printf '%s' "$want" | cut -f4)" -gt 10
	check_eq "job 4400: $kind $t during the run: bytes, metadata, samples, mean queue, peak = its minutes" \
		"$(printf '%s\n' "$want" | awk -F'\t' -v OFS='\t' '{ $5 = ($5 == "NULL") ? "null" : $5 + 0; $6 = sprintf("%.3f", $6); print }')" \
		"$(jqr ".components[] | select(.kind == \"$kind\" and .name == \"$t\") | [.read_bytes, .write_bytes, .md_ops, .samples, (if .queue_len == null then \"null\" else (.queue_len * 1e6 | round / 1e6) end), .peak_bps] | @tsv" |
			awk -F'\t' -v OFS='\t' '{ $5 = ($5 == "null") ? "null" : $5 + 0; $6 = sprintf("%.3f", $6); print }')"
done

# ---- the machine over a day: whole quarter hours ---------------------------
# A day from a time off the quarter hours: buckets of 15 minutes from the
# quarter hour before it (read from rollups_15min), each cell the sums of
# the minute rows of its bucket.
since=$((JOB_START - 86400 + 7))
fw report machine --since $since --until $JOB_START --json
check_eq "machine, a day: exit 0" 0 "$rc" || diag "$err"
J=$out
from=$(jqr .range.from) to=$(jqr .range.to) bucket=$(jqr .range.bucket)
check_eq "machine, a day: quarter-hour buckets from the quarter hour before --since, covering the day" \
	"900 0 1 1 97" "$bucket $((from % 900)) $((from <= since && since - from < 900)) $((to >= JOB_START)) $(jqr '.t | length')"
for kind in ost mdt fwd; do
	want=$(q "SELECT name, $from + FLOOR((minute - $from) / $bucket) * $bucket, SUM(read_bytes), SUM(write_bytes), SUM(md_ops),
		ROUND(SUM(queue_len_sum) / SUM(queue_len_samples), 6)
		FROM rollups_minute WHERE kind = '$kind' AND minute >= $from AND minute < $to
		GROUP BY 1, 2 HAVING SUM(samples) > 0 ORDER BY 1, 2")
	check "machine, a day: $kind cells to compare" test "$(printf '%s\n' "$want" | grep -c .)" -gt 20
	check_eq "machine, a day: $kind heat map cells = the minute rows per bucket" \
		"$(printf '%s\n' "$want" | awk -F'\t' -v OFS='\t' '{ $6 = ($6 == "NULL") ? "null" : $6 + 0; print }')" \
		"$(jqr ".t as \$t | .components.$kind[] | .name as \$n | [\$t, .read_bytes, .write_bytes, .md_ops, .queue_len] | transpose[]
			| select(.[1] + .[2] + .[3] > 0 or .[4] != null) | [\$n, .[0], .[1], .[2], .[3], (if .[4] == null then \"null\" else (.[4] * 1e6 | round / 1e6) end)] | @tsv" |
			awk -F'\t' -v OFS='\t' '{ $6 = ($6 == "null") ? "null" : $6 + 0; print }')"
done

tap_done
