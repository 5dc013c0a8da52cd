#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl decide end to end on the fixtures in tests/fixtures/decide: the
# real binary, real policy and topology loaders, JSON files in, compact
# JSON out (checked with grep on exact "key":value pairs, no jq needed),
# and every kind of bad input refused with exit 2 and a message naming it.
. "$top_srcdir/tests/integration/tap.sh"

fwdctl=$top_builddir/fwdctl
fx=$top_srcdir/tests/fixtures/decide
[ -x "$fwdctl" ] || skip_all "fwdctl not built"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# decide NAME ARGS...: run, keep stdout/stderr/status in $tmp/NAME.*
decide() {
	name=$1; shift
	"$fwdctl" decide --policy "$fx/policy.yaml" \
		--topology "$fx/topology.yaml" --now 1700000000 --compact \
		"$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}

# has NAME DESC FRAGMENT: the compact JSON contains FRAGMENT literally.
has() {
	if grep -qF -- "$3" "$tmp/$1.out"; then pass "$2"; else
		fail "$2"; diag "want fragment: $3" "got: $(cat "$tmp/$1.out")" \
			"stderr: $(cat "$tmp/$1.err")"; fi
}

rc() { cat "$tmp/$1.rc"; }

# --- help
"$fwdctl" decide --help >"$tmp/help" 2>&1
check_eq "decide --help exits 0" 0 $?
check_match "help has a synopsis" "Usage: fwdctl .*decide --job JOB.json" \
	"$(cat "$tmp/help")"
check_match "help has exit status" "Exit status:" "$(cat "$tmp/help")"

# --- demanding job: S = ceil(256 x 30 MB/s / 2.5 GB/s) = 4 > N_f = 1
decide demanding --job "$fx/job-demanding.json"
check_eq "demanding: exit 0" 0 "$(rc demanding)"
has demanding "demanding: action scale" '"action":"scale"'
has demanding "demanding: n_f 1" '"n_f":1,'
has demanding "demanding: s 4" '"s":4,'
has demanding "demanding: same-rack backups first" \
	'"forwarders":["fwd01","fwd05","fwd06","fwd07"]'
has demanding "demanding: balanced contiguous blocks" \
	'"mapping":[{"nodes":"c[1-64]","forwarder":"fwd01"},{"nodes":"c[65-128]","forwarder":"fwd05"},{"nodes":"c[129-192]","forwarder":"fwd06"},{"nodes":"c[193-256]","forwarder":"fwd07"}]'
has demanding "demanding: profile echoed" '"io_nodes":256,'
has demanding "demanding: policy digest is the file's" \
	"\"policy_digest\":\"$(sha256sum "$fx/policy.yaml" | cut -c1-64)\""
check_match "demanding: fields in DESIGN order" \
	'^\{"job_id":"1001","action":"scale","reasons":\[.*\],"n_f":1,"s":4,"forwarders":\[.*\],"mapping":\[.*\],"excluded_osts":\[\],"profile":\{.*\},"policy_digest":"[0-9a-f]{64}","elapsed_us":[0-9]+\}$' \
	"$(cat "$tmp/demanding.out")"

# --- the issue's exact syntax: options after `decide`; and before it
"$fwdctl" --policy "$fx/policy.yaml" --topology "$fx/topology.yaml" \
	decide --job "$fx/job-demanding.json" --compact >"$tmp/global.out" \
	2>"$tmp/global.err"
check_eq "global --policy/--topology before decide" 0 $?
check_match "global options give the same decision" '"action":"scale"' \
	"$(cat "$tmp/global.out")"
"$fwdctl" decide --policy "$fx/policy.yaml" --topology "$fx/topology.yaml" \
	--job "$fx/job-demanding.json" >"$tmp/pretty.out" 2>&1
check_eq "pretty output by default exits 0" 0 $?
check_match "pretty output is indented" '^  "action": "scale",$' \
	"$(cat "$tmp/pretty.out")"

# --- disruptive N-1 job -> private forwarder in its rack
decide n1 --job "$fx/job-n1.json"
has n1 "N-1 on 256 nodes: isolate" '"action":"isolate"'
has n1 "N-1: private rack2 backup" \
	'"mapping":[{"nodes":"c[257-512]","forwarder":"fwd07"}]'
has n1 "N-1: reason names the rule" 'disruptive (N-1 I/O on 256 nodes > 64)'

# --- vulnerable job next to a disruptive neighbour from STATE.json
decide vuln --job "$fx/job-vulnerable.json" --state "$fx/state.json"
has vuln "vulnerable + N-1 neighbour: isolate" '"action":"isolate"'
has vuln "vulnerable: held backup fwd09 skipped" '"forwarders":["fwd10"]'
has vuln "vulnerable: neighbour named" 'neighbour job 900 on fwd03'
decide vuln0 --job "$fx/job-vulnerable.json"
has vuln0 "vulnerable without neighbours: default" '"action":"default"'

# --- Beacon's LAMMPS: a fail-slow forwarder (excluded) is replaced
decide lammps --job "$fx/job-lammps.json" --health "$fx/health.json"
has lammps "LAMMPS: avoid-anomaly" '"action":"avoid-anomaly"'
has lammps "LAMMPS: fwd02 replaced in place by a rack2 backup" \
	'"forwarders":["fwd01","fwd07","fwd03"]'
has lammps "LAMMPS: its nodes follow" \
	'{"nodes":"c[257-512]","forwarder":"fwd07"}'
has lammps "LAMMPS: excluded OST listed" \
	'"excluded_osts":["lustre-OST0002"]'

# --- no history, shadow, denied
decide nohist --job "$fx/job-nohistory.json"
has nohist "no history: default" '"action":"default"'
has nohist "no history: reason" 'no I/O history for this application'
has nohist "no history: numeric job id printed as a string" \
	'"job_id":"1005"'
has nohist "no history: profile null" '"profile":null'
decide shadow --job "$fx/job-shadow.json"
has shadow "shadow: action shadow" '"action":"shadow"'
has shadow "shadow: says what it would do" \
	'shadow mode: would scale; nothing applied'
decide denied --job "$fx/job-denied.json"
has denied "deny list: refused" '"action":"refused"'
has denied "deny list: reason" 'user mallory is denied by the policy'

# --- bad input: exit 2, message names the field and value
bad() {
	name=$1 desc=$2 want=$3; shift 3
	decide "$name" "$@"
	check_eq "$desc: exit 2" 2 "$(rc "$name")"
	check_match "$desc: message" "$want" "$(cat "$tmp/$name.err")"
}
bad unode "unknown node" \
	'job-unknown-node.json: nodes: node c1025 is not in the topology' \
	--job "$fx/job-unknown-node.json"
bad neg "negative number" \
	'job-negative.json: profile.io_volume_bytes: -5: must not be negative' \
	--job "$fx/job-negative.json"
bad mode "bad I/O mode" \
	'profile.io_mode: "N-X": must be one of N-N, N-1, N-M, 1-1' \
	--job "$fx/job-badmode.json"
bad ufwd "unknown forwarder in the state" \
	'state-bad.json: \[0\]\.forwarders\[0\]: "fwd99": unknown forwarder' \
	--job "$fx/job-n1.json" --state "$fx/state-bad.json"
bad hstate "bad health state" \
	'health-bad.json: \[0\]\.state: "sick": must be ok, suspect or excluded' \
	--job "$fx/job-n1.json" --health "$fx/health-bad.json"
bad nojob "missing --job" '--job FILE is required' --state "$fx/state.json"
bad nofile "missing job file" 'nope.json: No such file or directory' \
	--job "$fx/nope.json"
bad now "bad --now" '--now x: not a non-negative epoch' --now x \
	--job "$fx/job-n1.json"
bad nownan "--now nan" '--now nan: not a non-negative epoch' --now nan \
	--job "$fx/job-n1.json"
bad nowinf "--now inf" '--now inf: not a non-negative epoch' --now inf \
	--job "$fx/job-n1.json"
bad nowhuge "--now past year 9999" '--now 1e23: not a non-negative epoch' \
	--now 1e23 --job "$fx/job-n1.json"

# The shipped example policy and topology upgrade a demanding job (with 4
# backups and caps.reserve 4 they could not: every job was refused).
out=$("$fwdctl" decide --policy "$top_srcdir/etc/fwdalloc.yaml" \
	--topology "$top_srcdir/etc/topology.yaml" --now 1700000000 \
	--job "$fx/job-demanding.json" --compact 2>&1)
check_eq "shipped example: a demanding job is scaled to S = 4" "scale 4 4" \
	"$(printf '%s' "$out" | jq -r '"\(.action) \(.s) \(.forwarders | length)"')"
check_match "shipped example: the reserve is kept" \
	'scale: 4 forwarders \(1 default \+ 3 private\)' "$out"
out=$("$fwdctl" decide --policy "$top_srcdir/etc/fwdalloc.yaml" \
	--topology "$top_srcdir/etc/topology.yaml" --now 1700000000 \
	--job "$fx/job-n1.json" --compact 2>&1)
check_eq "shipped example: a disruptive N-1 job is isolated" "isolate" \
	"$(printf '%s' "$out" | jq -r .action)"

tap_done
