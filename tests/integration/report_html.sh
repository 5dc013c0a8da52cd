#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The HTML reports in headless Chromium (Debian's chromium): each page
# (job 4242, the machine over the job's day, the job with a hostile name)
# renders without a console message (the pages carry no script, so any
# message, a Content-Security-Policy refusal included, is an error), the
# data points of every chart in the rendered DOM equal the stored values
# (job_stats increments, rollups: computed here from the tables) and the
# JSON report's, and a screenshot of each view is kept in
# report_html.out/ of the build directory for people to look at.
# Without chromium the test fails under FWDALLOC_NO_SKIP and skips
# otherwise.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
. "$top_srcdir/tests/integration/report_lib.sh"
chromium=$(command -v chromium || command -v chromium-browser) ||
	skip_all "chromium not installed (Debian package chromium; scripts/install-deps)"
command -v jq >/dev/null || skip_all "jq not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
db_start
report_seed
shots=$top_builddir/tests/integration/report_html.out
rm -rf "$shots"
mkdir -p "$shots"

# browse PAGE NAME: the rendered DOM in $d/NAME.dom, the browser's log in
# $d/NAME.log and a screenshot in $shots/NAME.png
browse() {
	local url=file://$1 name=$2
	timeout 120 "$chromium" --headless --disable-gpu --no-sandbox \
		--user-data-dir="$d/chrome" --enable-logging=stderr --v=0 \
		--dump-dom "$url" >"$d/$name.dom" 2>"$d/$name.log"
	check_eq "$name: chromium renders it" 0 "$?" || diag "$(tail -5 "$d/$name.log")"
	check_eq "$name: no console message" "" "$(grep -E ':CONSOLE' "$d/$name.log")"
	timeout 120 "$chromium" --headless --disable-gpu --no-sandbox \
		--user-data-dir="$d/chrome" --hide-scrollbars \
		--window-size=1000,2400 --screenshot="$shots/$name.png" "$url" \
		>/dev/null 2>"$d/$name.shot.log"
	check_eq "$name: screenshot is a PNG" "89504e470d0a1a0a" \
		"$(head -c 8 "$shots/$name.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')"
}

# points DOM SVG-ID: "series t count v" of every chart point of that SVG
# in the rendered DOM; cells DOM SVG-ID: "name t count v" of a heat map.
py_points='
import html.parser, sys
want = sys.argv[2]
class P(html.parser.HTMLParser):
    svg = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg": self.svg = a.get("id")
        elif self.svg == want and tag in ("circle", "rect") and "data-t" in a:
            key = a.get("data-series", a.get("data-name", ""))
            print(key, a["data-t"], a.get("data-count", "-"), a.get("data-v", ""))
    def handle_endtag(self, tag):
        if tag == "svg": self.svg = None
P().feed(open(sys.argv[1], encoding="utf-8").read())
'
points() { python3 -c "$py_points" "$1" "$2"; }

# ---- a page with a console message: the check sees it ----------------------
printf '<!DOCTYPE html><html><body><script>console.error("report-test")</script></body></html>\n' >"$d/bad.html"
timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --user-data-dir="$d/chrome" \
	--enable-logging=stderr --v=0 --dump-dom "file://$d/bad.html" >/dev/null 2>"$d/bad.log"
check_match "control: a console message of a page is seen in the log" 'CONSOLE.*report-test' \
	"$(cat "$d/bad.log")"

# ---- job 4242 ----------------------------------------------------------------
fw report job 4242 --html "$d/job-4242.html"
check_eq "report job --html: exit 0" 0 "$rc" || diag "$err"
fw report job 4242 --json
J=$out
from=$(printf '%s' "$J" | jq .range.from) to=$(printf '%s' "$J" | jq .range.to)
bucket=$(printf '%s' "$J" | jq .range.bucket)
browse "$d/job-4242.html" job-4242
dom=$d/job-4242.dom
check_eq "job: the rendered heading" "Job 4242: wrf" \
	"$(grep -o '<h1>.*</h1>' "$dom" | sed 's/<[^>]*>//g')"
# the bandwidth and operations charts against the stored job_stats
pts=$(points "$dom" job-bandwidth)
check_eq "job bandwidth chart: one point per bucket and series" \
	$((2 * $(printf '%s' "$J" | jq '.series.t | length'))) "$(printf '%s\n' "$pts" | grep -c .)"
got=$(printf '%s\n' "$pts" | awk '$3 > 0 || 1 { c[$2] = c[$2] "\t" $3 } END { for (t in c) print t c[t] }' | sort -n)
want=$(want_series "$from" "$to" "$bucket" | cut -f1-3)
check_eq "job bandwidth chart: bytes read and written per point = the stored increments" "$want" \
	"$(printf '%s\n' "$got" | awk -F'\t' '$2 + $3 > 0')"
check_eq "job bandwidth chart: each point's rate = its bytes over the bucket" "" \
	"$(printf '%s\n' "$pts" | awk -v b="$bucket" '{ d = $3 / b - $4; if (d < 0) d = -d; if (d > 1e-6) print }')"
pts=$(points "$dom" job-ops)
got=$(printf '%s\n' "$pts" | awk '{ c[$2] = c[$2] "\t" $3 } END { for (t in c) print t c[t] }' | sort -n |
	awk -F'\t' '$2 + $3 > 0')
want=$(want_series "$from" "$to" "$bucket" | awk -F'\t' -v OFS='\t' '$4 + $5 > 0 { print $1, $4, $5 }')
check_eq "job operations chart: operations and metadata per point = the stored increments" "$want" "$got"
# the forwarders' chart and the history box against the JSON report
check_eq "forwarders chart = the report's forwarder series" \
	"$(printf '%s' "$J" | jq -r '.forwarder_series | [.t, .read_bytes, .write_bytes] | transpose[] | "read_bps \(.[0]) \(.[1])", "write_bps \(.[0]) \(.[2])"' | sort)" \
	"$(points "$dom" forwarder-bandwidth | awk '{ print $1, $2, $3 }' | sort)"
box=$(python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "history":
            print(" ".join("%.0f" % float(a["data-" + k]) for k in ("n", "min", "q1", "median", "q3", "max", "this")))
P().feed(open(sys.argv[1], encoding="utf-8").read())' "$dom")
check_eq "history box plot = the report's quantiles and this run" \
	"$(printf '%s' "$J" | jq -r '.history | [.bandwidth_bps.n, .bandwidth_bps.min, .bandwidth_bps.q1, .bandwidth_bps.median, .bandwidth_bps.q3, .bandwidth_bps.max, .this_bandwidth_bps] | map(. * 1 | round | tostring) | join(" ")')" \
	"$box"
check_eq "history box plot: this run = its stored achieved bandwidth" \
	"$(q "SELECT ROUND(bandwidth_achieved_bps) FROM job_io WHERE job_id = 4242")" "${box##* }"

# ---- the machine over the job's day --------------------------------------------
since=$((JOB_START - 43200)) until=$((JOB_START + 43200))
fw report machine --since "$since" --until "$until" --html "$d/machine.html"
check_eq "report machine --html: exit 0" 0 "$rc" || diag "$err"
fw report machine --since "$since" --until "$until" --json
M=$out
mfrom=$(printf '%s' "$M" | jq .range.from) mto=$(printf '%s' "$M" | jq .range.to)
mbucket=$(printf '%s' "$M" | jq .range.bucket)
browse "$d/machine.html" machine
cells=$(points "$d/machine.dom" heat-fwd-bps)
check_eq "forwarder heat map: a cell per forwarder and bucket" \
	$(($(printf '%s' "$M" | jq '.components.fwd | length') * $(printf '%s' "$M" | jq '.t | length'))) \
	"$(printf '%s\n' "$cells" | grep -c .)"
check_eq "forwarder heat map: bytes of each cell with I/O = the stored rollups" \
	"$(want_heat fwd "$mfrom" "$mto" "$mbucket" | awk -F'\t' '$3 > 0' | tr '\t' ' ')" \
	"$(printf '%s\n' "$cells" | awk '$3 > 0 { print $1, $2, $3 }')"
check_eq "forwarder queue heat map = the report's mean queue lengths" \
	"$(printf '%s' "$M" | jq -r '.t as $t | .components.fwd[] | .name as $n | [$t, .queue_len] | transpose[] | select(.[1] != null) | "\($n) \(.[0]) \(.[1] * 1000 | round)"')" \
	"$(points "$d/machine.dom" heat-fwd-queue | awk '$4 != "" { printf "%s %s %.0f\n", $1, $2, $4 * 1000 }')"
check_eq "allocations chart = forwarders held per bucket (the report's)" \
	"$(printf '%s' "$M" | jq -r '[.t, .forwarders_held] | transpose[] | "\(.[0]) \(.[1])"')" \
	"$(points "$d/machine.dom" allocations-held | awk '{ printf "%s %.0f\n", $2, $4 }')"

# ---- a hostile job name ----------------------------------------------------------
fw report job 4300 --html "$d/job-4300.html"
check_eq "report job 4300 --html: exit 0" 0 "$rc"
browse "$d/job-4300.html" job-hostile
check_eq "hostile name: no element made of it in the rendered DOM" "" \
	"$(grep -oiE '<(script|img)[ >]' "$d/job-hostile.dom")"
name=$(python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    inside = False; text = ""
    def handle_starttag(self, tag, attrs):
        if dict(attrs).get("id") == "job-name": self.inside = True
    def handle_endtag(self, tag):
        if self.inside and tag == "span": self.inside = False
    def handle_data(self, data):
        if self.inside: self.text += data
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read()); sys.stdout.write(p.text)' "$d/job-hostile.dom")
check_eq "hostile name: rendered as text, all 255 bytes" "$HOSTILE_NAME" "$name"
diag "screenshots: $shots"

tap_done
