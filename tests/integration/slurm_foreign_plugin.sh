#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A fwdalloc.so built against another Slurm release, loaded by this one:
# Slurm's plugin loader compares the plugin's `plugin_version` with its
# own and refuses it ("Incompatible Slurm plugin ... version"), so a site
# that upgrades Slurm without rebuilding fwdalloc gets a line in slurmd's
# log, not a crash.  Listed `optional` in plugstack.conf, slurmd runs
# without it, jobs still run, and `--io-upgrade` is an unknown option
# rather than silently ignored.
#
# FWDALLOC_FOREIGN_PLUGIN names the foreign plugin (scripts/release-matrix
# sets it to the host's Debian 12 / Slurm 22.05 build inside a Debian 13
# or testing root).  Without it the test is skipped; it is not in `make
# check`'s list: run it with `make check TESTS=...`.
#
# Ports: FWDALLOC_MC_PORT_BASE + 180 (default 17180) .. +188.
. "$top_srcdir/tests/integration/tap.sh"

plugin=${FWDALLOC_FOREIGN_PLUGIN:-}
[ -n "$plugin" ] || skip_all "FWDALLOC_FOREIGN_PLUGIN not set"
[ -f "$plugin" ] || skip_all "$plugin: no such file"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (slurmd, job prologs)"
command -v slurmctld >/dev/null || skip_all "slurmctld not installed"

T=$(mktemp -d /tmp/fwd-slurm-foreign.XXXXXX)
chmod 755 "$T"
mc="$top_srcdir/scripts/minicluster"
cleanup() {
	FWDALLOC_BUILDDIR=$top_builddir "$mc" stop "$T/mc" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# The controller hooks are not what this test is about: trivial ones.
printf '#!/bin/sh\nexit 0\n' >"$T/hook"
chmod 755 "$T/hook"

out=$(FWDALLOC_BUILDDIR=$top_builddir \
	FWDALLOC_MC_PORT_BASE=$((${FWDALLOC_MC_PORT_BASE:-17000} + 180)) \
	FWDALLOC_MC_NO_DB=1 FWDALLOC_MC_PLUGIN=$plugin FWDALLOC_MC_PLUGIN_OPTIONAL=1 \
	FWDALLOC_MC_PROLOG_SLURMCTLD=$T/hook FWDALLOC_MC_EPILOG_SLURMCTLD=$T/hook \
	"$mc" start "$T/mc" 2>&1)
rc=$?
check_eq "minicluster starts with the foreign plugin listed optional" 0 "$rc"
[ "$rc" -eq 0 ] || { diag "$out"; tap_done; exit 1; }
eval "$(printf '%s\n' "$out" | grep '^export ')"
cd "$T" || exit 1

ver=$(slurmctld -V 2>/dev/null)
log=$T/mc/log/slurmd-c1.log
refused=$(grep -E "Incompatible Slurm plugin $plugin version \([0-9]+\.[0-9]+\.[0-9]+\)" "$log" | head -n 1)
check_match "slurmd ($ver) logs the plugin as incompatible, with its version" \
	"Incompatible Slurm plugin .* version \([0-9.]+\)" "$refused"
[ -n "$refused" ] || diag "$(tail -n 20 "$log")"
diag "slurmd-c1: ${refused#*] }"

alive=0
for n in c1 c2 c3 c4 c5 c6 c7 c8; do
	pid=$(cat "$T/mc/slurmd-$n.pid" 2>/dev/null)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
done
check_eq "all 8 slurmd run without it" 8 "$alive"

job=$(sbatch --parsable -N2 -o "$T/job.out" --wrap 'echo ran on $SLURM_JOB_NUM_NODES nodes' 2>"$T/sbatch.err")
check_match "sbatch without --io-upgrade submits" '^[0-9]+$' "$job"
state=
for _ in $(seq 1 600); do
	state=$(timeout 5 squeue -h -j "$job" -o %T 2>/dev/null)
	[ -z "$state" ] && break
	sleep 0.1
done
check_eq "the job ran to its end" "ran on 2 nodes" "$(cat "$T/job.out" 2>/dev/null)"

check "srun runs a step" timeout 60 srun -N1 true

bad=$(timeout 30 sbatch --parsable -N1 --io-upgrade=scale --wrap true 2>&1)
rc=$?
check "sbatch --io-upgrade is refused, not ignored (plugin not loaded)" \
	test "$rc" -ne 0
[ "$rc" -ne 0 ] || diag "$bad"

# A node may still be completing the last job for a moment: wait for the
# eight to be idle (up to 30 s), then none may be drained or down.
for _ in $(seq 1 300); do
	nodes=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null)
	idle=$(printf '%s\n' "$nodes" | grep -c ' idle$')
	[ "$idle" -eq 8 ] && break
	sleep 0.1
done
check_eq "no node drained or down: all 8 idle" 8 "$idle"
[ "$idle" -eq 8 ] || diag "$nodes"

tap_done
