#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The SPANK plugin in a real local Slurm cluster: --io-upgrade is accepted
# on the command line and as #SBATCH, a bad value is refused with the list
# of allowed values, the request reaches PrologSlurmctld as
# SPANK_IO_UPGRADE, and the plugin's job prolog runs on every allocated
# node only after PrologSlurmctld has finished.
#
# PrologSlurmctld is a probe here (not fwdctl): it records its environment
# and the time it finished, so the ordering can be checked against the
# node prologs' log lines.
. "$top_srcdir/tests/integration/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (slurmd, job prologs)"
command -v slurmctld >/dev/null || skip_all "slurmctld not installed"
[ -f "$top_builddir/spank/.libs/fwdalloc.so" ] ||
	skip_all "plugin not built"

T=$(mktemp -d /tmp/fwd-slurm-basic.XXXXXX)
chmod 755 "$T"
mc="$top_srcdir/scripts/minicluster"
cleanup() {
	FWDALLOC_BUILDDIR=$top_builddir "$mc" stop "$T/mc" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

mkdir -p "$T/ctld"
cat >"$T/probe" <<PROBE
#!/bin/sh
# \$0 prolog|epilog: record the environment, then the finishing time.
kind=\$(basename "\$0")
env >"$T/ctld/\$kind.\$SLURM_JOB_ID.env"
sleep 1
date +%s.%N >"$T/ctld/\$kind.\$SLURM_JOB_ID.done"
PROBE
chmod 755 "$T/probe"
ln -s "$T/probe" "$T/prolog"
ln -s "$T/probe" "$T/epilog"

export FWDALLOC_MC_PORT_BASE=${FWDALLOC_MC_PORT_BASE:-17100}
export FWDALLOC_MC_NO_DB=1
out=$(FWDALLOC_BUILDDIR=$top_builddir FWDALLOC_MC_PROLOG_SLURMCTLD=$T/prolog \
	FWDALLOC_MC_EPILOG_SLURMCTLD=$T/epilog "$mc" start "$T/mc" 2>&1)
rc=$?
check_eq "minicluster starts" 0 "$rc"
[ "$rc" -eq 0 ] || { diag "$out"; tap_done; exit 1; }
eval "$(printf '%s\n' "$out" | grep '^export ')"
check_match "start prints SLURM_CONF" "^export SLURM_CONF=$T/mc/slurm.conf" \
	"$(printf '%s\n' "$out" | grep SLURM_CONF)"
cd "$T"

help=$(sbatch --help 2>&1)
check_match "sbatch --help shows --io-upgrade with its modes" \
	'--io-upgrade=mode +Application-aware I/O forwarding.*auto' \
	"$(printf '%s\n' "$help" | tr '\n' ' ' | tr -s ' ')"

submit() { sbatch --parsable "$@" 2>"$T/sbatch.err"; }

jscale=$(submit -N2 --io-upgrade=scale --wrap 'true')
check_match "sbatch --io-upgrade=scale accepted" '^[0-9]+$' "$jscale"

cat >"$T/job.sh" <<'JOB'
#!/bin/sh
#SBATCH -N 1
#SBATCH --io-upgrade=isolate
true
JOB
jiso=$(submit "$T/job.sh")
check_match "#SBATCH --io-upgrade=isolate accepted" '^[0-9]+$' "$jiso"

jauto=$(submit -N1 --io-upgrade --wrap 'true')
check_match "bare --io-upgrade accepted" '^[0-9]+$' "$jauto"

jnone=$(submit -N1 --wrap 'true')
check_match "job without the option accepted" '^[0-9]+$' "$jnone"

bad=$(sbatch --parsable -N1 --io-upgrade=faster --wrap true 2>&1)
rc=$?
check "bad value refused (exit status)" test "$rc" -ne 0
check_match "bad value refused with the allowed values" \
	'fwdalloc: --io-upgrade=faster: invalid value; allowed values: auto, scale, isolate, off, shadow' \
	"$bad"

cat >"$T/bad.sh" <<'JOB'
#!/bin/sh
#SBATCH --io-upgrade=everything
true
JOB
bad=$(sbatch --parsable "$T/bad.sh" 2>&1)
rc=$?
check "bad #SBATCH value refused" test "$rc" -ne 0
check_match "bad #SBATCH value names it" \
	'--io-upgrade=everything: invalid value' "$bad"

# salloc and srun know the option too (same registration).
for cmd in salloc srun; do
	check_match "$cmd --help shows --io-upgrade" '--io-upgrade=mode' \
		"$($cmd --help 2>&1)"
done
bad=$(srun -N1 --io-upgrade=bogus true 2>&1)
check "srun refuses a bad value" test $? -ne 0
check_match "srun names the allowed values" \
	'--io-upgrade=bogus: invalid value; allowed values: auto, scale' "$bad"
jsrun=$(srun --quiet -N2 --io-upgrade=shadow sh -c 'echo $SLURM_JOB_ID' | head -1)
check_match "srun --io-upgrade=shadow runs" '^[0-9]+$' "$jsrun"

# Wait (bounded) until every job has left the queue.
all="$jscale $jiso $jauto $jnone"
for _ in $(seq 1 600); do
	left=$(squeue -h -o %i 2>/dev/null | wc -l)
	[ "$left" -eq 0 ] && break
	sleep 0.1
done
check_eq "all jobs finished" 0 "$left"

ctld_env() { grep "^$2=" "$T/ctld/prolog.$1.env" 2>/dev/null | cut -d= -f2-; }
check_eq "PrologSlurmctld sees SPANK_IO_UPGRADE=scale" scale \
	"$(ctld_env "$jscale" SPANK_IO_UPGRADE)"
check_eq "PrologSlurmctld sees SPANK_IO_UPGRADE=isolate (#SBATCH)" isolate \
	"$(ctld_env "$jiso" SPANK_IO_UPGRADE)"
check_eq "PrologSlurmctld sees SPANK_IO_UPGRADE=auto (bare option)" auto \
	"$(ctld_env "$jauto" SPANK_IO_UPGRADE)"
check_eq "no option: no SPANK_IO_UPGRADE" "" \
	"$(ctld_env "$jnone" SPANK_IO_UPGRADE)"
check_eq "PrologSlurmctld sees srun's SPANK_IO_UPGRADE=shadow" shadow \
	"$(ctld_env "$jsrun" SPANK_IO_UPGRADE)"
check_eq "EpilogSlurmctld sees SPANK_IO_UPGRADE too" scale \
	"$(grep '^SPANK_IO_UPGRADE=' "$T/ctld/epilog.$jscale.env" | cut -d= -f2-)"

# Node prologs: one per allocated node, each after PrologSlurmctld ended.
# slurmd logs "[YYYY-MM-DDTHH:MM:SS.mmm] fwdalloc: job_prolog: ...".
log_time() { date -d "$(printf '%s' "$1" | sed 's/^\[\([^]]*\)\].*/\1/')" +%s.%3N; }
later() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

for j in $jscale $jiso $jauto $jnone; do
	nodes=$(scontrol show hostnames "$(ctld_env "$j" SLURM_JOB_NODELIST)")
	done_t=$(cat "$T/ctld/prolog.$j.done" 2>/dev/null || echo 0)
	want=$(ctld_env "$j" SPANK_IO_UPGRADE)
	want=${want:-not requested}
	n_ok=0 n=0
	for node in $nodes; do
		n=$((n + 1))
		line=$(grep -h "fwdalloc: job_prolog: job $j node $node: request $want: " \
			"$T/mc/log/slurmd-$node.log")
		[ -n "$line" ] || { diag "no job_prolog line for $j on $node"; continue; }
		t=$(log_time "$line")
		if later "$t" "$done_t"; then
			n_ok=$((n_ok + 1))
		else
			diag "job $j node $node: prolog at $t, controller done at $done_t"
		fi
	done
	check "job $j: job_prolog on each of its $n node(s) after PrologSlurmctld ended" \
		test "$n" -ge 1 -a "$n_ok" -eq "$n"
	check "job $j: job_epilog ran on its nodes" test \
		"$(cat "$T"/mc/log/slurmd-c*.log | grep -c "fwdalloc: job_epilog: job $j node ")" -eq "$n"
done

tap_done
