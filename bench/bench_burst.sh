#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench_burst: what a burst of short jobs pays, Slurm's own scheduling
# included.  Each burst is `sbatch --array=0-(N-1) -N1 --wrap true` on a
# private 8-node cluster (scripts/minicluster; its slurm.conf as is:
# sched/builtin, no SchedulerParameters, so sched_interval 60 s and
# batch_sched_delay 3 s).  Configurations, one cluster each, alternated
# within the run (A B ... G, A B ... G, ...) so that the machine's drift
# hits all alike:
#   A  Slurm alone: no plugin, no PrologSlurmctld/EpilogSlurmctld
#      (FWDALLOC_MC_NO_FWDALLOC=1) -- the reference of every ratio
#   B  fwdalloc as installed (the controller service, fwdallocd, and the
#      static hooks that hand it each job), jobs without --io-upgrade
#   C  the same, every job --io-upgrade
#   D  no fwdalloc; PrologSlurmctld /bin/true, EpilogSlurmctld a shell
#      script `sleep 0.03`: shows whether this Slurm stalls a burst when
#      EpilogSlurmctld ends after the nodes' epilogs
#   E  fwdalloc with the old synchronous epilog (`fwdctl epilog`, no
#      --queue), jobs without --io-upgrade: the figure before the change
#   H  no fwdalloc; /bin/true as PrologSlurmctld and EpilogSlurmctld: the
#      reference of a site that runs controller hooks at all (each job's
#      end then reaches slurmctld as MESSAGE_EPILOG_COMPLETE, which
#      schedules at once); figures print their ratio to it too
#   F  fwdalloc without the service (the same hooks find none and run
#      `fwdctl prolog` and the release queue themselves), no --io-upgrade
#   G  the same, every job --io-upgrade
#   N  fwdalloc with releases from the nodes (policy release.port): the
#      service and its prolog hook, no EpilogSlurmctld; each job's first
#      node sends its release to the service; no --io-upgrade
#   U  the same, every job --io-upgrade
#   W  U on a busy machine: FWDALLOC_BURST_HELD (default 2,000) other
#      jobs hold forwarders (shared rows of the ledger, seeded before the
#      bursts, never released), as running jobs do; the service reads
#      that ledger whole once and then only what changed
#   O  N with the policy's access.mode off: the service answers each
#      prolog at once, deciding nothing and reading no database: the
#      least a hook that asks the service can cost on this machine
#      under the same burst (PrologSlurmctld figures print their ratio
#      to it too)
#
# Per configuration and size it prints the wall time (the first sbatch to
# the last job's end, slurmctld's "_job_complete ... done"), jobs/s,
# start - eligible p50/p99, stalls, and the ratio to A; and the hooks'
# own times.  Method:
#   eligible  slurmctld's log time of the array's submission (ms): the
#             tasks have no dependency or begin time, so each is eligible
#             when submitted (checked against scontrol's EligibleTime,
#             whole seconds, for the tasks still in memory at the end)
#   start     slurmd's "Launching batch job N" log time (ms; from 26.05
#             "Launching batch JobId=N ...", src/slurmd/slurmd/req.c's
#             %pI): the job really
#             starts, after PrologSlurmctld
#   stall     a gap of more than 20 s with jobs pending and none starting:
#             between the submission and the first start, between two
#             consecutive starts, or (burst cut at the cap) between the
#             last start and the cap
#   hooks     bench/hook_timer is each hook (no shell): it forks and
#             execs the command and appends its time (fork to waitpid) to
#             a file; the timer's own exec by slurmctld is outside it.
#             The reference is D's /bin/true prolog through the same timer
#   drain     B, C, F, G, N, U, W, O: the time from the last job's end until the release
#             queue (controller/release_queue.h) is empty
# A burst still running after the cap (FWDALLOC_BURST_CAP; by default
# 300 s or 0.5 s a job, whichever is more) is cancelled and reported
# incomplete: wall time = the cap, jobs/s and percentiles over the jobs
# that finished or started.  Each burst also prints sdiag's count of
# scheduler passes and of MESSAGE_EPILOG_COMPLETE messages.
#
# On Slurm 22.05 the reference A is itself not free: most of its nodes
# answer slurmctld's terminate request with "already complete" (sdiag
# shows few MESSAGE_EPILOG_COMPLETE); that path (agent.c) only queues a
# scheduling pass, which the background loop runs batch_sched_delay (3 s)
# after the previous one, so A starts its jobs in waves about 3 s apart.
# A MESSAGE_EPILOG_COMPLETE schedules at once, unless EpilogSlurmctld is
# still running: then the job stays COMPLETING, nothing schedules when
# the epilog ends (prep_slurmctld.c), and pending jobs wait for another
# event or the periodic pass (sched_interval): the stall.
#
# Environment:
#   FWDALLOC_BURST_SIZES     burst sizes (default "200 1000"; empty: skip)
#   FWDALLOC_BURST_ROUNDS    rounds of the alternation (default 1); with
#                            more, the wall time is the median of the
#                            rounds and the percentiles pool all jobs
#   FWDALLOC_BURST_CAP       seconds before a burst is cut (default 300,
#                            or N/2 for a burst of N > 600 jobs)
#   FWDALLOC_BURST_CONFIGS   which configurations (default
#                            "A H B C N U W O F G D E")
#   FWDALLOC_BURST_HELD      W's jobs holding forwarders (default 2000)
#   FWDALLOC_BURST_PORT_BASE first cluster's port base (default 19000;
#                            the next ones +20 each)
#   FWDALLOC_BURST_KEEP=1    keep the clusters' directory (logs) at the end
#   FWDALLOC_BURST_CPUS      "shared" (the default): controller and nodes
#                            on every CPU this bench may use, one machine
#                            that is both.  "split" (two CPUs or more):
#                            the controller host's processes (slurmctld
#                            and its slurmscriptd, so the hooks they fork;
#                            mariadbd; fwdallocd) on the last CPU, the
#                            nodes' slurmd (so the jobs) on the others:
#                            no job competes with the controller, as on
#                            a cluster, but the controller has one CPU
#                            (munged serves both and is left where it is)
#
# Needs root, Slurm, mariadbd and the built tree; otherwise it says why
# it is skipped and exits 0.
set -u

top_srcdir=${top_srcdir:-@abs_top_srcdir@}
top_builddir=${top_builddir:-@abs_top_builddir@}
sizes=${FWDALLOC_BURST_SIZES-200 1000}
rounds=${FWDALLOC_BURST_ROUNDS:-1}
cap_set=${FWDALLOC_BURST_CAP:-}
configs=${FWDALLOC_BURST_CONFIGS:-A H B C N U W O F G D E}
held=${FWDALLOC_BURST_HELD:-2000}
port_base=${FWDALLOC_BURST_PORT_BASE:-19000}
cpus=${FWDALLOC_BURST_CPUS:-shared}
stall_gap=20
unmeasured=0
mc=$top_srcdir/scripts/minicluster

skip() {
	echo "burst: skipped ($*)"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root: slurmd and job prologs"
for c in slurmctld slurmd sbatch squeue scontrol scancel munged; do
	command -v "$c" >/dev/null || skip "$c not installed"
done
command -v mariadbd >/dev/null || skip "mariadbd not installed"
[ -f "$top_builddir/spank/.libs/fwdalloc.so" ] || skip "plugin not built"
[ -x "$top_builddir/fwdctl" ] && [ -x "$top_builddir/cli/epilog-slurmctld" ] &&
	[ -x "$top_builddir/bench/hook_timer" ] || skip "fwdctl not built"
[ -n "$sizes" ] || skip "FWDALLOC_BURST_SIZES is empty"

label() {
	case $1 in
	A) echo "Slurm alone" ;;
	B) echo "fwdalloc (no --io-upgrade)" ;;
	C) echo "fwdalloc (--io-upgrade)" ;;
	D) echo "true prolog + 30 ms sleep epilog, no fwdalloc" ;;
	E) echo "fwdalloc, old synchronous epilog (no --io-upgrade)" ;;
	F) echo "fwdalloc, no service (no --io-upgrade)" ;;
	G) echo "fwdalloc, no service (--io-upgrade)" ;;
	H) echo "true prolog + true epilog, no fwdalloc" ;;
	N) echo "fwdalloc, releases from the nodes (no --io-upgrade)" ;;
	U) echo "fwdalloc, releases from the nodes (--io-upgrade)" ;;
	W) echo "fwdalloc, releases from the nodes (--io-upgrade), $held jobs holding forwarders" ;;
	O) echo "fwdallocd answering at once (access.mode off)" ;;
	esac
}

# allowed_cpus: the CPUs this bench may run on, one per line.
allowed_cpus() {
	local list r
	list=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
	for r in ${list//,/ }; do
		case $r in
		*-*) seq "${r%-*}" "${r#*-}" ;;
		*) echo "$r" ;;
		esac
	done
}

mapfile -t allowed < <(allowed_cpus)
case $cpus in
split)
	[ "${#allowed[@]}" -ge 2 ] || {
		echo "burst: FWDALLOC_BURST_CPUS=split needs two CPUs or more;" \
			"this bench may use ${#allowed[@]}" >&2
		exit 2
	}
	command -v taskset >/dev/null || skip "taskset not installed (util-linux)"
	ctl_cpu=${allowed[-1]}
	node_cpus=$(IFS=,; echo "${allowed[*]:0:${#allowed[@]}-1}")
	;;
shared) ;;
*)
	echo "burst: FWDALLOC_BURST_CPUS=$cpus: use split or shared" >&2
	exit 2
	;;
esac

T=$(mktemp -d /tmp/fwd-burst.XXXXXX) || exit 1
chmod 755 "$T"
mkdir -p "$T/res"
started=

cleanup() {
	local k
	for k in $started; do
		"$mc" stop "$T/$k/mc" >/dev/null 2>&1
	done
	if [ "${FWDALLOC_BURST_KEEP:-0}" = 1 ]; then
		echo "burst: kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# hook KEY NAME ARG...: the timed hook $T/KEY/hooks/NAME runs ARG...
hook() {
	local f=$T/$1/hooks/$2
	shift 2
	cp "$top_builddir/bench/hook_timer" "$f"
	printf '%s\n' "$@" >"$f.cmd"
}

# pin CPULIST PID...: each PID, all its threads, on CPULIST.
pin() {
	local l=$1 pid
	shift
	for pid in "$@"; do
		taskset -a -p -c "$l" "$pid" >/dev/null ||
			{ echo "burst: cannot pin $pid to CPU $l" >&2; return 1; }
	done
}

# split_cpus KEY: configuration KEY's controller host on $ctl_cpu, its
# nodes on $node_cpus (FWDALLOC_BURST_CPUS split).
split_cpus() {
	local m=$T/$1/mc ctl pids n
	ctl=$(cat "$m/slurmctld.pid") || return 1
	# slurmctld's children now: slurmscriptd, which forks the hooks.
	pids="$ctl $(pgrep -P "$ctl" | tr '\n' ' ')"
	pids="$pids $(cat "$m/db/mysqld.pid" 2>/dev/null)"
	[ -f "$m/fwdallocd.pid" ] && pids="$pids $(cat "$m/fwdallocd.pid")"
	# shellcheck disable=SC2086
	pin "$ctl_cpu" $pids || return 1
	for n in 1 2 3 4 5 6 7 8; do
		pin "$node_cpus" "$(cat "$m/slurmd-c$n.pid")" || return 1
	done
}

# start_cluster KEY PORT: the cluster of configuration KEY in $T/KEY/mc.
start_cluster() {
	local k=$1 d=$T/$1 m=$T/$1/mc out
	mkdir -p "$d/hooks"
	chmod 755 "$d" "$d/hooks"
	(
		export FWDALLOC_MC_PORT_BASE=$2 FWDALLOC_BUILDDIR=$top_builddir
		unset FWDALLOC_MC_PROLOG_SLURMCTLD FWDALLOC_MC_EPILOG_SLURMCTLD \
			FWDALLOC_MC_NO_FWDALLOC FWDALLOC_MC_NO_DB SLURM_CONF \
			FWDALLOC_MC_SERVICE FWDALLOC_MC_NODE_RELEASE
		case $k in
		A) export FWDALLOC_MC_NO_FWDALLOC=1 FWDALLOC_MC_NO_DB=1 ;;
		D)
			export FWDALLOC_MC_NO_FWDALLOC=1 FWDALLOC_MC_NO_DB=1
			printf '#!/bin/sh\nsleep 0.03\n' >"$d/hooks/sleep-epilog"
			chmod 755 "$d/hooks/sleep-epilog"
			hook D prolog /bin/true
			hook D epilog "$d/hooks/sleep-epilog"
			;;
		H)
			export FWDALLOC_MC_NO_FWDALLOC=1 FWDALLOC_MC_NO_DB=1
			hook H prolog /bin/true
			hook H epilog /bin/true
			;;
		B | C | F | G)
			case $k in B | C) export FWDALLOC_MC_SERVICE=1 ;; esac
			# The minicluster's own hooks, without their shell.
			hook "$k" prolog "$top_builddir/cli/prolog-slurmctld" \
				"$m/fwdallocd.sock" 5000 \
				"$top_builddir/fwdctl" --policy "$m/policy.yaml" prolog
			hook "$k" epilog "$top_builddir/cli/epilog-slurmctld" \
				--socket "$m/fwdallocd.sock" \
				"$top_builddir/fwdctl" --policy "$m/policy.yaml" epilog --queue
			;;
		N | U | W | O)
			export FWDALLOC_MC_SERVICE=1 \
				FWDALLOC_MC_NODE_RELEASE=$(($2 + 9))
			hook "$k" prolog "$top_builddir/cli/prolog-slurmctld" \
				"$m/fwdallocd.sock" 5000 \
				"$top_builddir/fwdctl" --policy "$m/policy.yaml" prolog
			;;
		E)
			hook E prolog "$top_builddir/fwdctl" --policy "$m/policy.yaml" prolog
			hook E epilog "$top_builddir/fwdctl" --policy "$m/policy.yaml" epilog
			;;
		esac
		if [ -f "$d/hooks/prolog" ]; then
			export FWDALLOC_MC_PROLOG_SLURMCTLD=$d/hooks/prolog
			export FWDALLOC_MC_EPILOG_SLURMCTLD=$d/hooks/epilog
		fi
		out=$("$mc" start "$m" 2>&1) || {
			printf '%s\n' "$out" >&2
			exit 1
		}
	) || return 1
	if [ "$k" = O ]; then
		sed -i 's/^  mode: .*/  mode: off/' "$m/policy.yaml" &&
			kill -HUP "$(cat "$m/fwdallocd.pid")" ||
			{ echo "burst: O: cannot turn the policy off" >&2; return 1; }
	fi
	if [ "$k" = W ] && [ "$held" -gt 0 ]; then
		# Jobs Slurm does not know (ids past its own), holding the
		# service forwarders shared, as default mappings do.
		"$top_srcdir/scripts/testdb" sql "$m/db" -N fwdalloc -e "
		INSERT INTO allocations (job_id, forwarder, nodes, node_count,
		action, acquired_at) SELECT 90000000 + seq,
		IF(seq % 2, 'fwd1', 'fwd2'), IF(seq % 2, 'c1', 'c5'), 1,
		'default', UNIX_TIMESTAMP() FROM seq_1_to_$held" ||
			{ echo "burst: W: cannot seed the ledger" >&2; return 1; }
	fi
	if [ "$cpus" = split ]; then
		split_cpus "$k" || return 1
	fi
	started="$started $k"
	: >>"$d/hooks/times.log"
}

# jobs_left: jobs of the current cluster not yet over.
jobs_left() { timeout 10 squeue -h -o %i 2>/dev/null | head -n 1; }

# wait_empty SECONDS: until no job is pending, running or completing.
wait_empty() {
	local end=$((SECONDS + $1))
	while [ -n "$(jobs_left)" ]; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.5
	done
}

# queue_left DIR: entries of a release queue not yet released.
queue_left() { ls -A "$1" 2>/dev/null | grep -v '^\.lock$' | head -n 1; }

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# burst KEY N ROUND: one burst; appends its figures under $T/res.
burst() {
	local k=$1 n=$2 r=$3 d=$T/$1 m=$T/$1/mc opt= arr t_sub t_end
	local off_ctld off_hook i complete=1 start deadline f sched
	local res=$T/res/$k.$n cap
	cap=$(cap_of "$n")
	export SLURM_CONF=$m/slurm.conf
	case $k in C | G | U | W) opt=--io-upgrade ;; esac
	wait_empty 60 || echo "burst: $k: jobs of an earlier burst still there" >&2
	off_ctld=$(size_of "$m/log/slurmctld.log")
	off_hook=$(size_of "$d/hooks/times.log")
	for i in 1 2 3 4 5 6 7 8; do
		eval "local off_c$i=$(size_of "$m/log/slurmd-c$i.log")"
	done
	cd "$T" || return 1
	svc_status "$k" >"$T/svc0"
	timeout 10 sdiag -r >/dev/null 2>&1
	t_sub=$(date +%Y-%m-%dT%H:%M:%S.%N)
	start=$SECONDS
	arr=$(sbatch --parsable $opt --array=0-$((n - 1)) -N1 -o /dev/null \
		-J burst --wrap true 2>"$T/sbatch.err") || {
		echo "burst: $k: sbatch failed: $(cat "$T/sbatch.err")" >&2
		return 1
	}
	deadline=$((start + cap))
	while [ -n "$(jobs_left)" ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			complete=0
			timeout 10 scancel "$arr" 2>/dev/null
			wait_empty 120 ||
				echo "burst: $k: jobs left 120 s after scancel" >&2
			break
		fi
		sleep 1
	done
	# Slurm's own counters: scheduler passes, epilog-complete messages.
	sched=$(timeout 10 sdiag 2>/dev/null | awk '
		/Total cycles:/ && !c { c = $3 }
		/MESSAGE_EPILOG_COMPLETE/ { sub(/.*count:/, ""); e = $1 + 0 }
		END { printf "%s scheduler passes, %d MESSAGE_EPILOG_COMPLETE", c, e }')
	# Tasks still in memory: their EligibleTime against SubmitTime.
	timeout 30 scontrol show job -o "$arr" 2>/dev/null |
		sed -n 's/.*SubmitTime=\([^ ]*\) EligibleTime=\([^ ]*\) .*/\1 \2/p' \
			>"$T/elig"
	# The release queue behind the epilog (B, C): until it is empty.
	if case $k in B | C | F | G | N | U | W | O) true ;; *) false ;; esac; then
		i=0
		while [ -n "$(queue_left "$m/release-queue")" ] && [ "$i" -lt 1200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		t_end=$(date +%Y-%m-%dT%H:%M:%S.%N)
		[ "$i" -lt 1200 ] || t_end=-
	else
		t_end=-
	fi
	# The logs of this burst alone: from the offsets taken before it.
	tail -c +$((off_ctld + 1)) "$m/log/slurmctld.log" >"$T/ctld"
	for i in 1 2 3 4 5 6 7 8; do
		eval "f=\$off_c$i"
		tail -c +$((f + 1)) "$m/log/slurmd-c$i.log"
	done >"$T/slurmd"
	tail -c +$((off_hook + 1)) "$d/hooks/times.log" >"$T/hooks"
	awk -v k="$k" -v n="$n" -v r="$r" -v t_sub="$t_sub" -v t_end="$t_end" \
		-v complete="$complete" -v cap="$cap" -v gap="$stall_gap" \
		-v res="$res" -v sched="$sched" '
	function ts(s,   y, mo, d, days) {
		sub(/^\[/, "", s); sub(/\].*/, "", s)
		y = substr(s, 1, 4) + 0; mo = substr(s, 6, 2) + 0
		d = substr(s, 9, 2) + 0
		if (mo <= 2) { y--; mo += 12 }
		days = 365 * y + int(y / 4) - int(y / 100) + int(y / 400) + \
			int((153 * (mo - 3) + 2) / 5) + d
		return days * 86400 + substr(s, 12, 2) * 3600 + \
			substr(s, 15, 2) * 60 + substr(s, 18)
	}
	FILENAME ~ /ctld$/ && /_slurm_rpc_submit_batch_job: JobId=/ && !sub_ts {
		sub_ts = ts($1)
	}
	FILENAME ~ /ctld$/ && /_job_complete: JobId=.* done$/ {
		t = ts($1); n_done++
		if (t > last_end) last_end = t
	}
	FILENAME ~ /slurmd$/ && /Launching batch (job |JobId=)/ {
		starts[++n_start] = ts($1)
	}
	FILENAME ~ /hooks$/ {
		ms = ($4 - $3) * 1000
		if ($2 == "-" || $5 != 0) hook_bad++
		print ms >> (res "." $1)
	}
	FILENAME ~ /elig$/ {
		n_elig++
		if ($2 ~ /^[0-9]/ && ts($2) - ts($1) > 1) elig_late++
	}
	END {
		t0 = ts(t_sub)
		if (!sub_ts) sub_ts = t0
		# Starts in time order (slurmd logs are per node).
		for (i = 2; i <= n_start; i++) {
			v = starts[i]
			for (j = i - 1; j >= 1 && starts[j] > v; j--)
				starts[j + 1] = starts[j]
			starts[j + 1] = v
		}
		prev = sub_ts; stalls = 0; stalled = 0; maxgap = 0
		for (i = 1; i <= n_start; i++) {
			print starts[i] - sub_ts >> (res ".se")
			g = starts[i] - prev
			if (g > maxgap) maxgap = g
			if (g > gap) { stalls++; stalled += g }
			prev = starts[i]
		}
		if (!complete && n_start < n) {
			g = t0 + cap - prev
			if (g > maxgap) maxgap = g
			if (g > gap) { stalls++; stalled += g }
		}
		wall = complete ? last_end - t0 : cap
		drain = (t_end == "-" || !complete) ? -1 : ts(t_end) - last_end
		printf "%s %d %d %d %.3f %d %d %.1f %.2f %.3f %d %d %d\n", k, n, r,
			complete, wall, n_done, stalls, stalled, maxgap, drain,
			n_elig, elig_late, hook_bad >> (res ".bursts")
		if (n_done && !n_start)
			printf "burst: %s: %d jobs done but no start found in " \
				"slurmd'"'"'s logs (has its \"Launching batch\" " \
				"message changed?): start times and stalls " \
				"cannot be measured\n", k, n_done > "/dev/stderr"
		printf "  round %d, %s, %d jobs: %s %.2f s, %d done, %d started, " \
			"%d stalls (%.0f s), longest start gap %.2f s%s; %s\n", r, k,
			n, complete ? "wall" : "INCOMPLETE after", wall, n_done,
			n_start, stalls, stalled, maxgap,
			((drain >= 0) ? sprintf(", releases done %.2f s after", drain) : ""),
			sched
		if (elig_late)
			printf "  note: %d of %d tasks became eligible more than " \
				"1 s after submission\n", elig_late, n_elig
		if (hook_bad)
			printf "  note: %d hook runs without a job id or failed\n", hook_bad
	}' "$T/ctld" "$T/slurmd" "$T/hooks" "$T/elig"
	svc_status "$k" >"$T/svc1"
	svc_phases "$T/svc0" "$T/svc1"
	# A burst whose starts could not be read measured nothing.
	if ! grep -Eq 'Launching batch (job |JobId=)' "$T/slurmd" &&
		grep -q . "$T/slurmd"; then
		unmeasured=1
	fi
}

# svc_status KEY: the counters of configuration KEY's service (B, C, N,
# U), if any.
svc_status() {
	case $1 in
	B | C | N | U | W | O) timeout 10 "$top_builddir/fwdallocd" --status \
		--socket "$T/$1/mc/fwdallocd.sock" 2>/dev/null ;;
	esac
}

# svc_phases BEFORE AFTER: where the service's time went during the burst
# (fwdallocd --status before and after): batches, jobs a batch, and each
# phase's mean time a batch.
svc_phases() {
	[ -s "$1" ] && [ -s "$2" ] || return 0
	awk 'FNR == 1 { f++ } f == 1 { a[$1] = $2 } f == 2 { b[$1] = $2 }
	END {
		nb = b["batches"] - a["batches"]; nj = b["jobs"] - a["jobs"]
		if (nb <= 0) exit
		printf "  service: %d batches, %.1f jobs a batch; a batch: " \
			"decide %.1f ms (rows and profiles %.1f, health %.1f, " \
			"transaction %.1f, files %.1f), longest %.1f ms\n", nb,
			nj / nb, (b["decide_ms"] - a["decide_ms"]) / nb,
			(b["rows_ms"] - a["rows_ms"]) / nb,
			(b["health_ms"] - a["health_ms"]) / nb,
			(b["tx_ms"] - a["tx_ms"]) / nb,
			(b["publish_ms"] - a["publish_ms"]) / nb, b["decide_ms_max"]
	}' "$1" "$2"
}

# cap_of N: the cap of a burst of N jobs, in seconds.
cap_of() {
	if [ -n "$cap_set" ]; then
		echo "$cap_set"
	elif [ "$1" -gt 600 ]; then
		echo $(($1 / 2))
	else
		echo 300
	fi
}

# pct FILE P: the P-th percentile (nearest rank) of the numbers in FILE.
pct() {
	[ -s "$1" ] || { echo 0; return; }
	sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 }
		END { i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; print v[i] }'
}

# figure NAME VALUE UNIT REF REF_NAME: one figure, as bench/report.c.
figure() {
	awk -v name="$1" -v v="$2" -v unit="$3" -v ref="$4" -v rn="$5" 'BEGIN {
		ratio = ref > 0 ? v / ref : 0
		if (ref > 0)
			printf "  %-44s %12.6g %-8s ref %12.6g (%s)  ratio %.3g\n",
				name, v, unit, ref, rn, ratio
		else
			printf "  %-44s %12.6g %s\n", name, v, unit
		printf "@bench\tburst\t%s\t%.9g\t%s\t%.9g\t%s\t%.9g\n", name, v,
			unit, ref, (ref > 0 ? rn : ""), ratio
	}'
}

# median_wall KEY N: the median wall time of the rounds, and whether all
# were complete ("WALL COMPLETE DONE_TOTAL STALLS DRAIN_MEDIAN").
summary_of() {
	local f=$T/res/$1.$2.bursts
	[ -s "$f" ] || { echo "0 0 0 0 -1"; return; }
	awk '{ w[NR] = $5; c += $4; done += $6; st += $7
		if ($10 >= 0) dr[++nd] = $10 }
	END {
		for (i = 2; i <= NR; i++) { v = w[i]
			for (j = i - 1; j >= 1 && w[j] > v; j--) w[j + 1] = w[j]
			w[j + 1] = v }
		for (i = 2; i <= nd; i++) { v = dr[i]
			for (j = i - 1; j >= 1 && dr[j] > v; j--) dr[j + 1] = dr[j]
			dr[j + 1] = v }
		printf "%.3f %d %d %d %.3f\n", w[int((NR + 1) / 2)], c == NR,
			done, st, nd ? dr[int((nd + 1) / 2)] : -1
	}' "$f"
}

echo "burst: Slurm $(slurmctld -V | awk '{print $2}'), sizes $sizes," \
	"$rounds round(s), configurations $configs"
if [ "$cpus" = split ]; then
	echo "burst: CPUs split (FWDALLOC_BURST_CPUS): the controller host" \
		"(slurmctld, its hooks, mariadbd, fwdallocd) on CPU $ctl_cpu," \
		"the nodes' slurmd and jobs on CPU $node_cpus"
else
	echo "burst: CPUs shared (FWDALLOC_BURST_CPUS): controller and nodes" \
		"on all ${#allowed[@]} CPU(s) this bench may use"
fi
port=$port_base
for k in $configs; do
	echo "burst: starting cluster $k ($(label "$k")) on port $port"
	start_cluster "$k" "$port" || { echo "burst: cluster $k did not start" >&2; exit 1; }
	port=$((port + 20))
	# Warm-up: one job per node, so caches and connections are made.
	(
		export SLURM_CONF=$T/$k/mc/slurm.conf
		cd "$T" && sbatch -Q $(case $k in C | U | W) echo --io-upgrade ;; esac) \
			--array=0-7 -N1 -o /dev/null --wrap true >/dev/null &&
			wait_empty 120
	) || echo "burst: $k: warm-up did not finish within 120 s" >&2
done
echo "burst: $(timeout 5 env SLURM_CONF="$T/A/mc/slurm.conf" scontrol show config 2>/dev/null |
	awk '/^SchedulerType|^SchedulerParameters/ { printf "%s=%s ", $1, $3 }')" \
	"(sched_interval 60 s, batch_sched_delay 3 s: Slurm's defaults)"

for r in $(seq 1 "$rounds"); do
	for n in $sizes; do
		for k in $configs; do
			burst "$k" "$n" "$r"
		done
	done
done
unset SLURM_CONF

echo "burst: figures (start = slurmd's batch launch; eligible = submission;" \
	"stall = over ${stall_gap} s with no job starting while some pend)"
for n in $sizes; do
	set -- $(summary_of A "$n")
	a_wall=$1 a_ok=$2 cap=$(cap_of "$n")
	a_p50=$(pct "$T/res/A.$n.se" 50)
	a_p99=$(pct "$T/res/A.$n.se" 99)
	# The hooks' reference: /bin/true through the same timer (D's or H's).
	hk_ref=D
	[ -s "$T/res/D.$n.prolog" ] || hk_ref=H
	d_pro50=$(pct "$T/res/$hk_ref.$n.prolog" 50)
	d_pro99=$(pct "$T/res/$hk_ref.$n.prolog" 99)
	set -- $(summary_of H "$n")
	h_wall=0
	[ "$2" = 1 ] && h_wall=$1
	[ "$a_ok" = 1 ] || a_wall=0
	for k in $configs; do
		set -- $(summary_of "$k" "$n")
		wall=$1 ok=$2 done_n=$3 stalls=$4 drain=$5
		p50=$(pct "$T/res/$k.$n.se" 50)
		p99=$(pct "$T/res/$k.$n.se" 99)
		jps=$(awk -v d="$done_n" -v w="$wall" -v r="$rounds" \
			'BEGIN { printf "%.1f", (w > 0) ? d / r / w : 0 }')
		what="$n jobs, $(label "$k")"
		if [ "$ok" = 1 ]; then
			tail=$(awk -v w="$wall" -v a="$a_wall" -v k="$k" 'BEGIN {
				if (k == "A") print "the reference"
				else if (a > 0) printf "%.2fx Slurm alone\n", w / a
				else print "no Slurm-alone figure" }')
			[ "$h_wall" = 0 ] || [ "$k" = H ] ||
				tail="$tail, $(awk -v w="$wall" -v h="$h_wall" 'BEGIN { printf "%.2fx true hooks", w / h }')"
			line="$wall s"
		else
			tail="incomplete: $done_n of $((n * rounds)) jobs done in ${cap} s"
			line=">= $cap s"
		fi
		hk=
		if [ -s "$T/res/$k.$n.prolog" ]; then
			hk=$(printf '; PrologSlurmctld p50 %.1f ms p99 %.1f ms' \
				"$(pct "$T/res/$k.$n.prolog" 50)" "$(pct "$T/res/$k.$n.prolog" 99)")
			if [ -s "$T/res/$k.$n.epilog" ]; then
				hk="$hk$(printf ', EpilogSlurmctld p50 %.1f ms p99 %.1f ms' \
					"$(pct "$T/res/$k.$n.epilog" 50)" "$(pct "$T/res/$k.$n.epilog" 99)")"
			else
				hk="$hk, no EpilogSlurmctld"
			fi
		fi
		printf 'burst %d jobs: %s %s, %s jobs/s, start-eligible p50 %.2f s p99 %.2f s, %d stalls, %s%s\n' \
			"$n" "$(label "$k")" "$line" "$jps" "$p50" "$p99" "$stalls" "$tail" "$hk"
		if [ "$k" = A ] || [ "$a_wall" = 0 ]; then
			ref=0
		else
			ref=$a_wall
		fi
		if [ "$ok" = 1 ]; then
			figure "$what: wall time" "$wall" s "$ref" "Slurm alone, same run"
			[ "$h_wall" = 0 ] || [ "$k" = H ] ||
				figure "$what: wall time" "$wall" s "$h_wall" \
					"true hooks, same run"
		else
			figure "$what: wall time (cut at the cap)" "$wall" s "$ref" \
				"Slurm alone, same run"
			figure "$what: jobs done by the cap" "$done_n" jobs 0 ""
		fi
		[ "$k" = A ] && ref=0 || ref=$a_p50
		figure "$what: start-eligible p50" "$p50" s "$ref" "Slurm alone, same run"
		[ "$k" = A ] && ref=0 || ref=$a_p99
		figure "$what: start-eligible p99" "$p99" s "$ref" "Slurm alone, same run"
		figure "$what: stalls (> ${stall_gap} s, no start)" "$stalls" stalls 0 ""
		if [ -s "$T/res/$k.$n.prolog" ]; then
			[ "$k" = "$hk_ref" ] && ref=0 || ref=$d_pro50
			figure "$what: PrologSlurmctld p50" \
				"$(pct "$T/res/$k.$n.prolog" 50)" ms "$ref" \
				"/bin/true through the same timer"
			[ "$k" = "$hk_ref" ] && ref=0 || ref=$d_pro99
			figure "$what: PrologSlurmctld p99" \
				"$(pct "$T/res/$k.$n.prolog" 99)" ms "$ref" \
				"/bin/true through the same timer"
			if [ "$k" != O ] && [ -s "$T/res/O.$n.prolog" ]; then
				figure "$what: PrologSlurmctld p50" \
					"$(pct "$T/res/$k.$n.prolog" 50)" ms \
					"$(pct "$T/res/O.$n.prolog" 50)" \
					"the service answering at once"
				figure "$what: PrologSlurmctld p99" \
					"$(pct "$T/res/$k.$n.prolog" 99)" ms \
					"$(pct "$T/res/O.$n.prolog" 99)" \
					"the service answering at once"
			fi
			if [ -s "$T/res/$k.$n.epilog" ]; then
				[ "$k" = "$hk_ref" ] && ref=0 || ref=$d_pro50
				figure "$what: EpilogSlurmctld p50" \
					"$(pct "$T/res/$k.$n.epilog" 50)" ms "$ref" \
					"/bin/true through the same timer"
				[ "$k" = "$hk_ref" ] && ref=0 || ref=$d_pro99
				figure "$what: EpilogSlurmctld p99" \
					"$(pct "$T/res/$k.$n.epilog" 99)" ms "$ref" \
					"/bin/true through the same timer"
			fi
		fi
		if case $k in B | C | F | G | N | U | W | O) true ;; *) false ;; esac; then
			[ "$drain" = -1.000 ] ||
				figure "$what: releases done after the last job" \
					"$drain" s 0 ""
		fi
	done
done
[ "$unmeasured" -eq 0 ] || {
	echo "burst: some bursts had no job start in slurmd's logs: failed" >&2
	exit 1
}
exit 0
