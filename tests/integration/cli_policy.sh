#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The real fwdctl on the shipped examples and on bad fixtures: `policy
# check|show` and `topology check|show`, exit codes and exact messages.
set -u
. "$top_srcdir/tests/integration/tap.sh"

fwdctl=$top_builddir/fwdctl
etc=$top_srcdir/etc
fx=$top_srcdir/tests/fixtures
[ -x "$fwdctl" ] || skip_all "fwdctl not built"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A policy file of the environment must not leak into the test.
unset FWDALLOC_POLICY

# run CMD...: sets $rc, $out (stdout) and $err (stderr).
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# --- help -----------------------------------------------------------------
run "$fwdctl" --help
check_eq "fwdctl --help exits 0" 0 "$rc"
check_match "fwdctl --help lists policy" '^  policy +validate the policy' "$out"
check_match "fwdctl --help lists topology" '^  topology +validate the topology' "$out"
run "$fwdctl" policy --help
check_eq "policy --help exits 0" 0 "$rc"
check_match "policy --help has a synopsis" '^Usage: fwdctl policy check \[FILE\] \[--json\]' "$out"
check_match "policy --help has exit status" '^  1  the policy is invalid, missing or unreadable' "$out"
run "$fwdctl" topology --help
check_eq "topology --help exits 0" 0 "$rc"
check_match "topology --help has examples" 'fwdctl topology show --json' "$out"

# --- usage errors ---------------------------------------------------------
run "$fwdctl" policy
check_eq "policy without action exits 2" 2 "$rc"
check_match "policy without action says so" '^fwdctl policy: missing action \(check or show\)' "$err"
run "$fwdctl" policy frob x
check_eq "unknown policy action exits 2" 2 "$rc"
check_eq "unknown policy action message" \
	"fwdctl policy: unknown action 'frob' (check, show or keys)" "$err"
run "$fwdctl" topology check a b
check_eq "extra argument exits 2" 2 "$rc"
check_eq "extra argument message" \
	"fwdctl topology check: unexpected argument 'b'" "$err"
# A bad option: getopt's line naming it and a pointer to the help, not
# the whole usage burying it.
nl='
'
run "$fwdctl" policy check --bogus
check_eq "unknown option exits 2" 2 "$rc"
check_eq "unknown option: named, then the help pointer" \
	"fwdctl policy: unrecognized option '--bogus'${nl}fwdctl policy: see 'fwdctl policy --help'" \
	"$err"
run "$fwdctl" --policy
check_eq "global option without its value exits 2" 2 "$rc"
check_eq "missing value: named, then the help pointer" \
	"fwdctl: option '--policy' requires an argument${nl}fwdctl: see 'fwdctl --help'" \
	"$err"

# --- policy check / show on the example -----------------------------------
digest=$(sha256sum "$etc/fwdalloc.yaml" | cut -d' ' -f1)
run "$fwdctl" policy check "$etc/fwdalloc.yaml"
check_eq "example policy is valid" 0 "$rc"
check_eq "check prints the file's SHA-256" \
	"$etc/fwdalloc.yaml: valid (sha256 $digest)" "$out"

run "$fwdctl" policy check "$etc/fwdalloc.yaml" --json
check_eq "check --json" \
	"{\"path\": \"$etc/fwdalloc.yaml\", \"valid\": true, \"digest\": \"$digest\"}" "$out"

run "$fwdctl" policy show "$etc/fwdalloc.yaml"
check_eq "policy show exits 0" 0 "$rc"
check_match "show names the digest" "^# digest: $digest\$" "$out"
check_match "show fills defaults" '^    min_volume: 20GiB$' "$out"
check_match "show resolves the topology path" "^topology: /.*/etc/topology.yaml\$" "$out"
printf '%s\n' "$out" >"$tmp/shown.yaml"
run "$fwdctl" policy check "$tmp/shown.yaml"
check_eq "policy show output is a valid policy" 0 "$rc"
run "$fwdctl" policy show "$tmp/shown.yaml"
printf '%s\n' "$out" | grep -v '^#' >"$tmp/shown2.yaml"
grep -v '^#' "$tmp/shown.yaml" >"$tmp/shown1.yaml"
check "show of the shown policy is identical" cmp -s "$tmp/shown1.yaml" "$tmp/shown2.yaml"

run "$fwdctl" --json policy show "$etc/fwdalloc.yaml"
check_eq "global --json policy show exits 0" 0 "$rc"
check_match "JSON has raw units" '"min_volume": 21474836480' "$out"
check_match "JSON has the digest" "\"digest\": \"$digest\"" "$out"

# Without a file and with no policy installed: the built-in defaults.
run "$fwdctl" --policy "$etc/fwdalloc.yaml" policy show
check_eq "policy show from --policy" 0 "$rc"
check_match "policy show from --policy names it" "^# source: $etc/fwdalloc.yaml\$" "$out"
run env FWDALLOC_POLICY="$tmp/none.yaml" "$fwdctl" policy show
check_eq "an explicit but missing policy fails" 1 "$rc"
check_eq "missing policy message" \
	"fwdctl policy: $tmp/none.yaml: cannot open: No such file or directory" "$err"

# --- bad policies ---------------------------------------------------------
# bad_policy FIXTURE MESSAGE-AFTER-PATH
bad_policy() {
	run "$fwdctl" policy check "$fx/$1"
	check_eq "$1: exit 1" 1 "$rc"
	check_eq "$1: message" "fwdctl policy: $fx/$1$2" "$err"
	check_eq "$1: nothing on stdout" "" "$out"
}
bad_policy policy-unknown-key.yaml ":3:3: access.allow_user: unknown key; allowed keys: mode, fail, allow_users, deny_users, allow_accounts, deny_accounts, allow_partitions, deny_partitions"
bad_policy policy-wrong-type.yaml ":3:14: decision.scale.enabled: value 'yes': expected true or false"
bad_policy policy-out-of-range.yaml ":3:21: decision.caps.max_pool_share: value '150%': out of range; a fraction is a number from 0 to 1 or a percentage from 0% to 100%, e.g. 0.3 or 30%"
bad_policy policy-duplicate-key.yaml ":4:3: database.port: duplicate key 'port' (first at line 2)"
bad_policy policy-bad-utf8.yaml ":2:21: invalid UTF-8: invalid trailing UTF-8 octet (byte 0x5d)"
bad_policy policy-empty.yaml ":1:1: file is empty"
bad_policy policy-command-string.yaml ":2:18: anomaly.alert_command: value '/usr/bin/mail -s fwdalloc root': a command is a YAML list [program, arg, ...] run without a shell, e.g. [/usr/local/sbin/fwd-alert, --severity, high]"
bad_policy policy-exec-no-command.yaml ":2:11: remap.driver: value 'exec': the exec driver needs remap.exec.command, a command is a YAML list [program, arg, ...] run without a shell, e.g. [/usr/local/sbin/fwd-alert, --severity, high]"

run "$fwdctl" policy check "$tmp/missing.yaml"
check_eq "missing policy: exit 1" 1 "$rc"
check_eq "missing policy: message" \
	"fwdctl policy: $tmp/missing.yaml: cannot open: No such file or directory" "$err"
run "$fwdctl" policy check "$tmp"
check_eq "directory as policy: exit 1" 1 "$rc"
check_eq "directory as policy: message" "fwdctl policy: $tmp: cannot read: Is a directory" "$err"
run "$fwdctl" policy check "$fx/policy-bad-utf8.yaml" --json
check_eq "check --json on a bad file" \
	"{\"path\": \"$fx/policy-bad-utf8.yaml\", \"valid\": false, \"error\": \"$fx/policy-bad-utf8.yaml:2:21: invalid UTF-8: invalid trailing UTF-8 octet (byte 0x5d)\"}" "$out"

# A really unreadable file needs an unprivileged user: root reads anything.
if [ "$(id -u)" -ne 0 ]; then
	cp "$etc/fwdalloc.yaml" "$tmp/secret.yaml"
	chmod 000 "$tmp/secret.yaml"
	run "$fwdctl" policy check "$tmp/secret.yaml"
	check_eq "unreadable policy: exit 1" 1 "$rc"
	check_eq "unreadable policy: message" \
		"fwdctl policy: $tmp/secret.yaml: cannot open: Permission denied" "$err"
elif command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	# The binary and the file go to a directory nobody can enter, with
	# the file itself mode 000.
	chmod 755 "$tmp"
	cp "$fwdctl" "$tmp/fwdctl"
	cp "$etc/fwdalloc.yaml" "$tmp/secret.yaml"
	chmod 000 "$tmp/secret.yaml"
	run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$tmp/fwdctl" policy check "$tmp/secret.yaml"
	check_eq "unreadable policy (as nobody): exit 1" 1 "$rc"
	check_eq "unreadable policy (as nobody): message" \
		"fwdctl policy: $tmp/secret.yaml: cannot open: Permission denied" "$err"
else
	fail "cannot check an unreadable file: root without setpriv/nobody"
fi

# --- topology -------------------------------------------------------------
run "$fwdctl" topology check "$etc/topology.yaml"
check_eq "example topology is valid" 0 "$rc"
check_eq "topology check summary" \
	"$etc/topology.yaml: valid: 1024 compute nodes, 12 forwarders (4 service, 8 backup), 4 OSTs" "$out"
run "$fwdctl" topology check "$etc/topology-taihulight.yaml"
check_eq "TaihuLight topology is valid" 0 "$rc"
check_eq "TaihuLight summary" \
	"$etc/topology-taihulight.yaml: valid: 40960 compute nodes, 240 forwarders (80 service, 160 backup), 144 OSTs" "$out"
run sh "$top_srcdir/scripts/gen-taihulight-topology"
printf '%s\n' "$out" >"$tmp/taihulight.yaml"
check "committed TaihuLight topology matches its generator" \
	cmp -s "$tmp/taihulight.yaml" "$etc/topology-taihulight.yaml"

run "$fwdctl" topology show "$etc/topology.yaml" --json
check_eq "topology show --json exits 0" 0 "$rc"
check_eq "topology show --json is exactly the expected document" \
	"$(cat "$fx/topology-example.json")" "$out"
run "$fwdctl" --json topology show "$etc/topology.yaml"
check_eq "global --json works for topology show" \
	"$(cat "$fx/topology-example.json")" "$out"

run "$fwdctl" topology show "$etc/topology.yaml"
check_eq "topology show exits 0" 0 "$rc"
check_match "table header" '^FORWARDER +ADDRESS +BANDWIDTH +GROUP +ROLE +NODES$' "$out"
check_match "table row" '^fwd05 +10\.1\.0\.15 +2\.5GB/s +rack1 +backup +0$' "$out"
check_match "mapping row" '^c\[769-1024\] +256 +fwd04$' "$out"

# FILE defaults: --topology, then the policy's topology key.
run "$fwdctl" --topology "$etc/topology-taihulight.yaml" topology check
check_match "--topology is the default FILE" '^/.*topology-taihulight.yaml: valid: 40960' "$out"
run "$fwdctl" --policy "$etc/fwdalloc.yaml" topology check
check_eq "the policy's topology key is the fallback" 0 "$rc"
check_match "the policy's topology resolves next to it" '/etc/topology.yaml: valid: 1024 compute nodes' "$out"
run "$fwdctl" --policy "$fx/policy-empty.yaml" topology check
check_eq "a bad policy stops topology check" 1 "$rc"
check_eq "a bad policy is reported" "fwdctl topology: $fx/policy-empty.yaml:1:1: file is empty" "$err"

# bad_topology FIXTURE MESSAGE-AFTER-PATH
bad_topology() {
	run "$fwdctl" topology check "$fx/$1"
	check_eq "$1: exit 1" 1 "$rc"
	check_eq "$1: message" "fwdctl topology: $fx/$1$2" "$err"
}
bad_topology topology-overlap.yaml ":7:13: mapping[1].nodes: node 'c5' is mapped to both 'fwd1' and 'fwd2'"
bad_topology topology-uncovered.yaml ":3:16: compute_nodes: 2 compute nodes are not covered by the mapping, first 'c7'"
bad_topology topology-unknown-forwarder.yaml ":5:34: mapping[0].forwarder: value 'fwd9': unknown forwarder; expected the name of a forwarder defined under forwarders"
bad_topology topology-bad-unit.yaml ":2:29: forwarders[0].bandwidth: value '2.5Gb/s': unknown unit; a rate is a number of bytes per second with an optional unit k, M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi (powers of 1024) followed by B/s, e.g. 2.5GB/s or 800MiB/s"
bad_topology policy-unknown-key.yaml ":1:1: access: unknown key; allowed keys: forwarders, osts, compute_nodes, mapping, nodes_per_forwarder"
run "$fwdctl" topology check "$tmp/none.yaml"
check_eq "missing topology: exit 1" 1 "$rc"
check_eq "missing topology: message" \
	"fwdctl topology: $tmp/none.yaml: cannot open: No such file or directory" "$err"

# Control characters in an offending value reach the terminal escaped.
printf '%s\n' 'forwarders:' \
	'  - {name: f1, address: "a\tb\x1b[2J", bandwidth: 1GB/s, role: service}' \
	'compute_nodes: c1' >"$tmp/ctl.yaml"
run "$fwdctl" topology check "$tmp/ctl.yaml"
check_eq "control characters in a value: exit 1" 1 "$rc"
check_eq "control characters in a value: escaped" \
	"fwdctl topology: $tmp/ctl.yaml:2:25: forwarders[0].address: value 'a\\tb\\x1b[2J': expected an IP address or host name of at most 253 letters, digits, '.', '-', '_', ':' and '%', not starting with '-'" \
	"$err"

# --- the node prolog's worst case against slurmd's prolog time limit --------
# slurmd kills a node prolog that runs past PrologTimeout (25.05+) or
# PrologEpilogTimeout, drains the node and requeues the job even under
# access.fail: open: policy check says when the policy's node timeouts
# (database.connect_timeout + 2 x database.timeout + remap.timeout) can
# reach it.  The shipped example: 0.9 + 2 x 5 + 30 = 40.9 s.
printf 'SlurmctldHost=h\nPrologEpilogTimeout=20 # seconds\n' >"$tmp/slurm-20.conf"
SLURM_CONF=$tmp/slurm-20.conf run "$fwdctl" policy check "$etc/fwdalloc.yaml"
check_eq "prolog budget over PrologEpilogTimeout: still valid (exit 0)" 0 "$rc"
check_match "prolog budget over PrologEpilogTimeout: a warning naming both" \
	"warning: the node prolog may take 40.9s \(database.connect_timeout 0.9s \+ 2 x database.timeout 5s \+ remap.timeout 30s\), not less than PrologEpilogTimeout=20 in $tmp/slurm-20.conf" \
	"$err"
SLURM_CONF=$tmp/slurm-20.conf run "$fwdctl" --json policy check "$etc/fwdalloc.yaml"
check_match "the warning in --json" '"warnings": ?\["the node prolog may take 40.9s' "$out"
# 25.05+: PrologTimeout wins over PrologEpilogTimeout
printf 'prologepilogtimeout=300\nPrologTimeout=40 EpilogTimeout=60\n' >"$tmp/slurm-40.conf"
SLURM_CONF=$tmp/slurm-40.conf run "$fwdctl" policy check "$etc/fwdalloc.yaml"
check_match "PrologTimeout is the limit when set" "not less than PrologTimeout=40" "$err"
printf 'PrologEpilogTimeout=120\n' >"$tmp/slurm-120.conf"
SLURM_CONF=$tmp/slurm-120.conf run "$fwdctl" policy check "$etc/fwdalloc.yaml"
check_eq "within PrologEpilogTimeout: no warning" "0|" "$rc|$err"
printf 'PrologEpilogTimeout=65534\n' >"$tmp/slurm-forever.conf"
SLURM_CONF=$tmp/slurm-forever.conf run "$fwdctl" policy check "$etc/fwdalloc.yaml"
check_eq "slurmd waits forever (65534): no warning" "0|" "$rc|$err"

# --- where the nodes send releases (release.port, no controllers) --------------
# They read their slurm.conf's SlurmctldHost: policy check warns when this
# host's names none they could use, and not when it does, or when the
# policy lists the controllers.
printf 'release:\n  port: 6830\n' >"$tmp/rel.yaml"
printf 'ClusterName=c\nPrologEpilogTimeout=120\n' >"$tmp/slurm-noctl.conf"
SLURM_CONF=$tmp/slurm-noctl.conf run "$fwdctl" policy check "$tmp/rel.yaml"
check_eq "release.port, slurm.conf without SlurmctldHost: still valid" 0 "$rc"
check_match "release.port, slurm.conf without SlurmctldHost: a warning saying why" \
	"rel.yaml: warning: release.port 6830 with no release.controllers: the nodes send releases to slurm.conf's slurmctld hosts, but $tmp/slurm-noctl.conf: no SlurmctldHost \(nor ControlMachine\)" \
	"$err"
printf 'SlurmctldHost=ctl(10.0.0.1\n' >"$tmp/slurm-badctl.conf"
SLURM_CONF=$tmp/slurm-badctl.conf run "$fwdctl" policy check "$tmp/rel.yaml"
check_match "release.port, a malformed SlurmctldHost: the warning names it" \
	"SlurmctldHost=ctl\(10.0.0.1: not a host name" "$err"
printf 'SlurmctldHost=ctl1(10.0.0.1)\nSlurmctldHost=ctl2\nPrologEpilogTimeout=120\n' >"$tmp/slurm-ctl.conf"
SLURM_CONF=$tmp/slurm-ctl.conf run "$fwdctl" policy check "$tmp/rel.yaml"
check_eq "release.port, slurm.conf with SlurmctldHost: no warning" "0|" "$rc|$err"
printf 'release:\n  port: 6830\n  controllers: [ctl1]\n' >"$tmp/rel-ctl.yaml"
SLURM_CONF=$tmp/slurm-noctl.conf run "$fwdctl" policy check "$tmp/rel-ctl.yaml"
check_eq "release.controllers listed: slurm.conf not needed, no warning" "0|" "$rc|$err"
SLURM_CONF=$tmp/absent.conf run "$fwdctl" policy check "$tmp/rel.yaml"
check_eq "no slurm.conf on this host: no warning" "0|" "$rc|$err"

tap_done
