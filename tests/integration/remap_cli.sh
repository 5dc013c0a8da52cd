#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl remap apply|revert|probe end to end: a real policy and topology
# file, the exec, lwfs and lnet drivers with scripts standing in for the
# site command, the remount command and lnetctl, and the real libibverbs
# (this machine has no RDMA device).
. "$top_srcdir/tests/integration/tap.sh"

fwdctl="$top_builddir/fwdctl"
[ -x "$fwdctl" ] || skip_all "fwdctl not built"

d=$(mktemp -d /tmp/remap_cli.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir "$d/state" "$d/lwfs"

cat >"$d/topology.yaml" <<EOF
forwarders:
  - {name: fwd01, address: 10.1.0.11, bandwidth: 2.5GB/s, role: service,
     nid: 10.1.0.11@o2ib}
  - {name: fwd02, address: 10.1.0.12, bandwidth: 2.5GB/s, role: backup,
     nid: 10.1.0.12@o2ib}
compute_nodes: "c[1-4]"
mapping:
  - {nodes: "c[1-4]", forwarder: fwd01}
EOF

# The site command logs what it was given.
cat >"$d/site-remap" <<EOF
#!/bin/sh
echo "\$FWD_ACTION \$FWD_JOB_ID \$FWD_NODE \$FWD_FORWARDERS \$FWD_ADDRESSES" >>"$d/exec.log"
[ "\$FWD_NODE" = c4 ] && { echo "c4: fabric says no" >&2; exit 5; }
exit 0
EOF
# lnetctl: upstream's option table and route show, routes in $d/lnet
mkdir "$d/lnet"
cat >"$d/lnetctl" <<EOF
#!/bin/sh
LNETCTL_STATE=$d/lnet; export LNETCTL_STATE
exec /bin/sh $(cd "$top_srcdir" && pwd)/tests/fixtures/lnetctl-fake "\$@"
EOF
cat >"$d/remount" <<EOF
#!/bin/sh
echo "\$FWD_ACTION \$FWD_VOLFILE" >>"$d/remount.log"
EOF
chmod 755 "$d/site-remap" "$d/lnetctl" "$d/remount"
echo "volume default" >"$d/lwfs/lwfs_fwd01.vol"
echo "volume backup" >"$d/lwfs/lwfs_fwd02.vol"
ln -s lwfs_fwd01.vol "$d/lwfs/lwfs.vol"

cat >"$d/policy.yaml" <<EOF
topology: $d/topology.yaml
remap:
  driver: exec
  timeout: 10s
  exec:
    command: [$d/site-remap]
  lwfs:
    volfile_dir: $d/lwfs
    link_name: lwfs.vol
    state_dir: $d/state
    remount_command: [$d/remount]
  lnet:
    lnetctl: $d/lnetctl
    net: o2ib
    hops: 1
EOF

run() { "$fwdctl" --policy "$d/policy.yaml" remap "$@"; }

# --help
out=$(run --help); rc=$?
check_eq "remap --help exits 0" 0 "$rc"
check_match "remap --help documents exit status" "Exit status" "$out"
run apply --job 1 >/dev/null 2>&1; rc=$?
check_eq "apply without --forwarders is a usage error" 2 "$rc"
err=$(run apply --job x --forwarders fwd01 2>&1); rc=$?
check_eq "bad job id: exit 2" 2 "$rc"
check_eq "bad job id: message" \
	'fwdctl remap apply: --job "x": not a job id (1..4294967295)' "$err"

# exec: addresses from the topology; idempotent; revert.
out=$(run apply --job 42 --node c1 --forwarders 'fwd[01-02]'); rc=$?
check_eq "exec apply exits 0" 0 "$rc"
check_eq "exec apply output" \
	"remap apply: job 42 node c1 driver exec: fwd01,fwd02: ok" "$out"
run apply --job 42 --node c1 --forwarders fwd01,fwd02 >/dev/null
out=$(run revert --job 42 --node c1 --json); rc=$?
check_eq "exec revert exits 0" 0 "$rc"
check_eq "exec revert json" \
	'{"action":"revert","driver":"exec","job_id":42,"node":"c1","forwarders":[],"ok":true,"error":null}' \
	"$out"
run revert --job 42 --node c1 >/dev/null
check_eq "exec ran once per change, with topology addresses" \
	"apply 42 c1 fwd01,fwd02 10.1.0.11,10.1.0.12
revert 42 c1 fwd01,fwd02 10.1.0.11,10.1.0.12" "$(cat "$d/exec.log")"

err=$(run apply --job 43 --node c4 --forwarders fwd02 2>&1); rc=$?
check_eq "exec failure exits 1" 1 "$rc"
check_eq "exec failure names driver, forwarder and stderr" \
	"fwdctl remap apply: exec: apply fwd02: $d/site-remap exited with status 5: c4: fabric says no" \
	"$err"

err=$(run apply --job 44 --node c1 --forwarders fwd01,fwd99 2>&1); rc=$?
check_eq "unknown forwarder exits 1" 1 "$rc"
check_eq "unknown forwarder message" \
	"fwdctl remap: forwarder fwd99 is not in the topology $d/topology.yaml" \
	"$err"

# libslurm is lenient with malformed brackets ("fwd[01-" yields "fwd]"):
# the list is refused as given.
err=$(run apply --job 45 --node c1 --forwarders 'fwd[01-' 2>&1); rc=$?
check_eq "malformed list exits 2" 2 "$rc"
check_eq "malformed list message quotes the list" \
	'fwdctl remap: --forwarders: invalid list "fwd[01-"' "$err"

# lwfs: the link moves and comes back.
run apply --driver lwfs --job 50 --node c2 --forwarders fwd02 >/dev/null
check_eq "lwfs apply repoints the link" lwfs_fwd02.vol \
	"$(readlink "$d/lwfs/lwfs.vol")"
run revert --driver lwfs --job 50 --node c2 >/dev/null
check_eq "lwfs revert restores the link" lwfs_fwd01.vol \
	"$(readlink "$d/lwfs/lwfs.vol")"
check_eq "lwfs remounted twice" "apply lwfs_fwd02.vol
revert lwfs_fwd01.vol" "$(cat "$d/remount.log")"

# lnet: gateway NIDs from the topology.
run apply --driver lnet --job 60 --node c3 --forwarders fwd02 >/dev/null
run revert --driver lnet --job 60 --node c3 >/dev/null
check_eq "lnet adds and deletes the route through the NID" \
	"route add --net o2ib --gateway 10.1.0.12@o2ib --hop-count 1
route del --net o2ib --gateway 10.1.0.12@o2ib" "$(cat "$d/lnet/log")"
check_eq "lnet reads the route back after add and del" \
	"route show --net o2ib --gateway 10.1.0.12@o2ib --verbose
route show --net o2ib --gateway 10.1.0.12@o2ib --verbose" \
	"$(cat "$d/lnet/show-log")"
check_eq "lnet leaves no route" "" "$(cat "$d/lnet/routes")"

# verbs and probe on a machine without RDMA hardware.
err=$(run apply --driver verbs --job 70 --node c1 --forwarders fwd01 2>&1)
rc=$?
check_eq "verbs apply without a device exits 3" 3 "$rc"
check_match "verbs apply says there is no device" \
	"^fwdctl remap apply: verbs: no RDMA device found" "$err"
out=$(run probe --forwarders fwd01 2>"$d/probe.err"); rc=$?
check_eq "probe without a device exits 3" 3 "$rc"
check_match "probe lists no devices" "^RDMA devices: none" "$out"
check_match "probe reports the forwarder" \
	"fwd01 \(10.1.0.11\): FAILED: verbs: no RDMA device found" "$out"
check_match "probe error on stderr" \
	"^fwdctl remap probe: verbs: no RDMA device found" \
	"$(cat "$d/probe.err")"
out=$(run probe --json 2>/dev/null)
check_match "probe --json" '^\{"devices":\[\],"forwarders":\[\],"error":"verbs: no RDMA device found' "$out"

tap_done
