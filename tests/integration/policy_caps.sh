#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl policy check against the topology (issue 29, item 4): a warning
# (exit 0, the policy is valid) when the caps leave no backup forwarder to
# any job, so that every upgrade would be refused on this machine:
# decision.caps.reserve not below the number of backup forwarders, or
# max_pool_share of them less than one.  The mini-cluster's topology has
# six backups (fwd3..fwd8).
. "$top_srcdir/tests/integration/tap.sh"
fwdctl=$top_builddir/fwdctl
topo=$(cd "$top_srcdir/tests/fixtures/minicluster" && pwd)/topology.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# pol FILE RESERVE SHARE [TOPOLOGY]
pol() {
	cat >"$1" <<EOF2
topology: ${4:-$topo}
decision:
  caps:
    reserve: $2
    max_pool_share: $3
EOF2
}
run() {
	out=$(env -u SLURM_CONF SLURM_CONF=/nonexistent "$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}

pol "$tmp/r5.yaml" 5 50%
run "$fwdctl" policy check "$tmp/r5.yaml"
check_eq "reserve 5 of 6 backups: exit 0" 0 "$rc"
check_eq "reserve 5 of 6 backups: no warning" "" "$err"

pol "$tmp/r6.yaml" 6 50%
run "$fwdctl" policy check "$tmp/r6.yaml"
check_eq "reserve 6 of 6 backups: still valid (exit 0)" 0 "$rc"
check_match "reserve 6 of 6 backups: says valid" "^$tmp/r6.yaml: valid" "$out"
check_eq "reserve 6 of 6 backups: the warning names the cap and the fix" \
	"fwdctl policy: $tmp/r6.yaml: warning: decision.caps.reserve 6 keeps all 6 backup forwarders of topology $topo in reserve: every upgrade is refused on this machine; set decision.caps.reserve below 6" \
	"$err"
run "$fwdctl" --json policy check "$tmp/r6.yaml"
check_eq "--json: the warning in warnings[]" \
	"decision.caps.reserve 6 keeps all 6 backup forwarders of topology $topo in reserve: every upgrade is refused on this machine; set decision.caps.reserve below 6" \
	"$(printf '%s' "$out" | jq -r '.warnings[0]')"

pol "$tmp/s10.yaml" 0 10%
run "$fwdctl" policy check "$tmp/s10.yaml"
check_eq "share 10% of 6 backups: exit 0" 0 "$rc"
check_match "share 10% of 6 backups: names max_pool_share and the least value" \
	"warning: decision.caps.max_pool_share 0.1 of the 6 backup forwarders of topology $topo is less than one: every upgrade is refused on this machine; set it to at least 0.166667\$" \
	"$err"

# The same policy against another topology (the global --topology).
pol "$tmp/r4.yaml" 4 50%
run "$fwdctl" policy check "$tmp/r4.yaml"
check_eq "reserve 4 (shipped) with 6 backups: no warning" "" "$err"
grep -v 'name: fwd[5-8],' "$topo" >"$tmp/four.yaml"
check_eq "a topology with 2 backups" 2 "$(grep -c 'role: backup' "$tmp/four.yaml")"
run "$fwdctl" --topology "$tmp/four.yaml" policy check "$tmp/r4.yaml"
check_match "reserve 4 with 2 backups (--topology): the warning" \
	"warning: decision.caps.reserve 4 keeps all 2 backup forwarders of topology $tmp/four.yaml in reserve" \
	"$err"

# A topology that is not there: checked elsewhere, no warning; named on
# the command line, said.
pol "$tmp/gone.yaml" 6 50% "$tmp/none.yaml"
run "$fwdctl" policy check "$tmp/gone.yaml"
check_eq "policy's topology missing: exit 0" 0 "$rc"
check_eq "policy's topology missing: no warning" "" "$err"
run "$fwdctl" --topology "$tmp/none.yaml" policy check "$tmp/gone.yaml"
check_match "--topology missing: said" \
	"warning: caps not checked against the topology: $tmp/none.yaml" "$err"

# The controller prolog's first run (the one that writes the topology
# cache) says it once, in slurmctld's log (its stderr); later prologs,
# reading the cache, do not; a changed topology says it again.
mkdir -p "$tmp/log"
cp "$topo" "$tmp/topo.yaml"
cat >"$tmp/p6.yaml" <<EOF2
topology: $tmp/topo.yaml
decision:
  caps:
    reserve: 6
database:
  socket: $tmp/no-such.sock
  breaker: 0
audit:
  file: $tmp/log/audit.jsonl
  database: false
EOF2
prolog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-2]' SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NAME=app SPANK_IO_UPGRADE=auto \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$tmp/p6.yaml" prolog >"$tmp/out" 2>"$tmp/err"
	rc=$?
	warned=$(grep -c 'prolog: warning: decision.caps.reserve 6 keeps all 6 backup forwarders of topology' "$tmp/err")
}
w6="prolog: warning: decision.caps.reserve 6 keeps all 6 backup forwarders of topology $tmp/topo.yaml in reserve: every upgrade is refused on this machine; set decision.caps.reserve below 6"
prolog 901
check_eq "first prolog: exit 0" 0 "$rc"
check_eq "first prolog: the warning once" 1 "$warned"
check_eq "first prolog: the warning names the cap and the fix" "$w6" \
	"$(grep 'prolog: warning:' "$tmp/err" | sed 's/^fwdctl //')"
check "first prolog: it wrote the topology cache" test -s "$tmp/log/topology.cache"
prolog 902
check_eq "second prolog: exit 0" 0 "$rc"
check_eq "second prolog (cache read): no warning" 0 "$warned"
echo "# changed" >>"$tmp/topo.yaml"
touch -d '+2 seconds' "$tmp/topo.yaml"
prolog 903
check_eq "after a topology change: the warning again" 1 "$warned"
sed -i 's/reserve: 6/reserve: 5/' "$tmp/p6.yaml"
echo "# changed again" >>"$tmp/topo.yaml"
touch -d '+4 seconds' "$tmp/topo.yaml"
prolog 904
check_eq "reserve 5 of 6: no warning at the first run" 0 "$warned"

tap_done
