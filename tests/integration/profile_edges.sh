#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl profile import and show at the edges of what an entry may say:
# the node count from 1 to 2^32-1, a curve point at k = 2^32-1 (the most
# forwarders a count holds) and past it.  Table-driven: each row an
# entry's nodes and curve, whether the import takes it, and the curve
# points profile show then gives.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
fw db init
check_eq "db init" 0 "$rc"

n=0
# nodes | bandwidth_by_forwarders | imported: yes, or why not | the k
# shown
while IFS='|' read -r nodes bw ok ks; do
	n=$((n + 1))
	cat >"$d/p.json" <<EOF
{"user": "u$n", "name": "app", "nodes": $nodes,
 "profile": {"io_volume_bytes": 1000, "io_nodes": 1,
  "node_bandwidth_bps": 1e6, "peak_bandwidth_bps": 1e6, "iops": 1,
  "mdops": 1, "io_mode": "N-N", "runs": 1,
  "bandwidth_by_forwarders": $bw}}
EOF
	fw profile import "$d/p.json"
	if [ "$ok" = yes ]; then
		check_eq "nodes $nodes, curve $bw: imported" 0 "$rc" ||
			diag "$err"
	else
		check_eq "nodes $nodes, curve $bw: refused (exit 2)" 2 "$rc"
		check_match "nodes $nodes, curve $bw: says why" \
			"entry 1: $ok \\(nothing imported\\)" "$err"
		continue
	fi
	key=$(q "SELECT profile_key FROM profiles WHERE profile_key LIKE 'user=u$n;%'")
	fw profile show "$key" --json
	check_eq "nodes $nodes, curve $bw: the curve's counts" "$ks" \
		"$(printf '%s' "$out" |
			jq -r '[.profile.bandwidth_by_forwarders // {} | keys[] | tonumber] | sort | map(tostring) | join(" ")')" ||
		diag "$out" "$err"
done <<'EOF'
1|{"1": 1e9}|yes|1
0|{"1": 1e9}|"nodes" must be a node count >= 1|
4294967295|{"1": 1e9}|yes|1
4294967296|{"1": 1e9}|"nodes" must be a node count >= 1|
2|{"1": 1e9, "4294967295": 2e9}|yes|1 4294967295
2|{"1": 1e9, "4294967296": 2e9}|profile: bandwidth_by_forwarders: "4294967296": not a forwarder count|
EOF

tap_done
