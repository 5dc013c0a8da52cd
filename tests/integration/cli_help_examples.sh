#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The examples of every `fwdctl CMD --help`, against the shipped example
# configuration (etc/fwdalloc.yaml, etc/topology.yaml as /etc/fwdalloc):
#  - every forwarder, OST and compute node an example names exists in the
#    shipped topology (the remap examples named fwd081 and the health
#    examples lustre-OST0004, which it lacks);
#  - the examples that need neither a database nor Slurm nor a site's own
#    files run and exit 0.
# The others (alloc, audit, db, health, ingest, prolog, profile, reconcile,
# trace ingest, sim with a site's trace) are exercised by the db_*,
# health_*, ctl_* and slurm_* tests; they are listed here as not run.
set -u
. "$top_srcdir/tests/integration/tap.sh"

fwdctl=$top_builddir/fwdctl
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
etc=$top_srcdir/etc

# The shipped configuration where the examples look for it.
mkdir -p "$T/etc"
cp "$etc/topology.yaml" "$etc/topology-taihulight.yaml" "$etc/sim-jobs.csv" \
	"$etc/sim-curves.csv" "$T/etc/"
sed "s|^topology: .*|topology: $T/etc/topology.yaml|" "$etc/fwdalloc.yaml" \
	>"$T/etc/fwdalloc.yaml"
cp "$T/etc/fwdalloc.yaml" "$T/test.yaml"
# trace examples: c1.trace (raw LWFS client lines) in the working directory.
for i in 0 1 2 3; do
	printf '[2016-08-27 10:14:44] T lwfs-fuse: 69745: WRITE (0x200095032d0, size=4096, offset=%d, count=1)  \n' $((i * 4096))
done >"$T/c1.trace"

# fwd[05-08] -> fwd05 .. fwd08 (the hostlist forms the examples use).
expand() {
	case $1 in
	*\[*-*\]) local a b
		a=${1#*[}; a=${a%-*}; b=${1#*-}; b=${b%]}
		for i in $(seq -w "$a" "$b"); do echo "${1%%[*}$i"; done ;;
	*) echo "$1" ;;
	esac
}

fwds=$("$fwdctl" --topology "$etc/topology.yaml" --json topology show |
	jq -r '.forwarders[].name')

osts=$("$fwdctl" --topology "$etc/topology.yaml" --json topology show |
	jq -r '.osts[].name')

cmds=$("$fwdctl" --help | awk '/^Commands:/ { f = 1; next }
	f && /^  [a-z]/ { print $1 } f && /^$/ { exit }')
n_run=0 n_names=0 notrun=
for c in $cmds; do
	# One example per line, continuation lines joined.
	"$fwdctl" "$c" --help | awk '/^Examples?:/ { f = 1; next }
		f && /^$/ { exit }
		f { sub(/^ +/, ""); line = line $0
		    if (line ~ /\\$/) { sub(/\\$/, "", line); next }
		    print line; line = "" }' >"$T/ex.$c"
	while IFS= read -r ex; do
		[ -n "$ex" ] || continue
		# Names: forwarders (also in hostlists) and compute nodes.
		for f in $(printf '%s\n' "$ex" | grep -oE 'fwd[0-9]+|fwd\[[-0-9,]+\]'); do
			n_names=$((n_names + 1))
			for one in $(expand "$f"); do
				printf '%s\n' "$fwds" | grep -qx "$one" ||
					fail "$c example names $one, not in the shipped topology: $ex"
			done
		done
		for o in $(printf '%s\n' "$ex" | grep -oE 'lustre-OST[0-9a-f]{4}'); do
			n_names=$((n_names + 1))
			printf '%s\n' "$osts" | grep -qx "$o" ||
				fail "$c example names $o, not in the shipped topology: $ex"
		done
		for nd in $(printf '%s\n' "$ex" | grep -oE -- "--node c[0-9]+" | cut -c9-); do
			n_names=$((n_names + 1))
			[ "$nd" -ge 1 ] && [ "$nd" -le 1024 ] ||
				fail "$c example names node c$nd, not in the shipped topology"
		done
		# Run what needs no database, Slurm or site file.
		case " $ex " in
		*" policy "* | *" topology "* | *" decide "* | *" trace compress "* | \
		*" trace expand "* | *" remap probe "* | *" sim --topology "*) ;;
		*)
			notrun="$notrun
  $ex"
			continue
			;;
		esac
		case $ex in
		*job.json* | *traces/job4711* | *"remap probe"*) # site files / RDMA
			notrun="$notrun
  $ex"
			continue
			;;
		esac
		cmd=$(printf '%s\n' "$ex" | sed -e "s|/etc/fwdalloc/|$T/etc/|g" \
			-e "s|^fwdctl |\"$fwdctl\" |")
		(cd "$T" && FWDALLOC_POLICY=$T/etc/fwdalloc.yaml eval "$cmd") \
			>"$T/out" 2>&1
		rc=$?
		n_run=$((n_run + 1))
		check_eq "runs: $ex" 0 "$rc" || diag "$(tail -3 "$T/out")"
	done <"$T/ex.$c"
done
check "forwarder and node names checked" test "$n_names" -ge 5
check "examples run" test "$n_run" -ge 8
diag "not run here:$notrun"

tap_done
