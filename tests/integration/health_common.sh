# SPDX-License-Identifier: GPL-2.0-or-later
# Shared set-up of the health_*.sh integration tests (sourced, not run):
# a private MariaDB (scripts/testdb), a topology of 10 forwarders and 400
# OSTs, a policy whose feedback commands log to files, and a generator of
# per-minute rollups, jobs and job_stats rows.
#
# Topology: c[1-1536], 256 nodes per service forwarder fwd01..fwd06,
# backups fwd07..fwd10, all 2.5 GB/s; OSTs lustre-OST0000..lustre-OST0399
# at 1.2 GB/s.  Times: T0 is a whole hour a day ago; m N = T0 + N minutes.

fwdctl=$top_builddir/fwdctl
testdb=$top_srcdir/scripts/testdb
[ -x "$fwdctl" ] || skip_all "fwdctl not built"

d=$(mktemp -d /tmp/fwdhealth.XXXXXX)
trap '"$testdb" stop "$d/db" >/dev/null 2>&1; [ "${FWDALLOC_KEEP_TMP:-0}" = 1 ] || rm -rf "$d"' EXIT
eval "$("$testdb" start "$d/db")" || skip_all "cannot start a private MariaDB"

T0=$(( $(date +%s) / 3600 * 3600 - 86400 ))
m() { echo $(( T0 + $1 * 60 )); }

{
	echo "forwarders:"
	for i in 01 02 03 04 05 06 07 08 09 10; do
		case $i in 07|08|09|10) role=backup ;; *) role=service ;; esac
		echo "  - {name: fwd$i, address: 10.0.0.$i, bandwidth: 2.5GB/s, group: g1, role: $role}"
	done
	echo "osts:"
	i=0
	while [ $i -lt 400 ]; do
		printf '  - {name: lustre-OST%04d, bandwidth: 1.2GB/s}\n' $i
		i=$((i + 1))
	done
	echo 'compute_nodes: "c[1-1536]"'
	echo 'nodes_per_forwarder: 256'
} >"$d/topology.yaml"

# Feedback commands: the program is /bin/sh with a fixed script; the
# component travels only in the environment (and, for the OST commands,
# as the appended last argument, $0 of the script).
{
	cat "$FWDALLOC_TESTDB_POLICY"
	cat <<EOF
topology: $d/topology.yaml
audit:
  file: $d/audit.jsonl
anomaly:
  window: 10m
  suspect_windows: 1
  exclude_windows: 3
  clear_windows: 3
  alert_command: [/bin/sh, -c, 'echo "\$FWD_COMPONENT_KIND \$FWD_COMPONENT \$FWD_PREVIOUS_STATE \$FWD_STATE" >> $d/alerts']
  ost_exclude_command: [/bin/sh, -c, 'echo "exclude \$0" >> $d/ost.log']
  ost_restore_command: [/bin/sh, -c, 'echo "restore \$0" >> $d/ost.log']
EOF
} >"$d/policy.yaml"
: >"$d/alerts"
: >"$d/ost.log"
FWDALLOC_POLICY=$d/policy.yaml
export FWDALLOC_POLICY

"$fwdctl" db init >"$d/init.out" 2>&1 || {
	cat "$d/init.out"
	skip_all "fwdctl db init failed"
}

sql() { "$testdb" sql "$d/db" "$FWDALLOC_TESTDB_NAME" "$@"; }
q() { sql -N -e "$1"; }

# rollups < SPEC: one line per load phase,
#   KIND NAME START_MIN MINUTES BYTES_PER_S OPS_PER_S QUEUE|NULL
# -> rows of rollups_minute (bytes as writes), inserted in batches.
rollups() {
	awk -v t0="$T0" '
	function flush() {
		if (n) { print sql ";"; n = 0 }
	}
	NF == 7 {
		for (k = 0; k < $4; k++) {
			minute = t0 + ($3 + k) * 60
			row = sprintf("(\x27%s\x27,\x27%s\x27,%d,6,0,%.0f,0,%.0f,0,NULL,%.3f,%s,%s)",
				$1, $2, minute, $5 * 60, $6 * 60, $5, $7, $7)
			if (n == 0)
				sql = "INSERT INTO rollups_minute (kind,name,minute,samples,read_bytes,write_bytes,read_ops,write_ops,md_ops,read_bps_max,write_bps_max,queue_len_avg,queue_len_max) VALUES " row
			else
				sql = sql "," row
			if (++n == 500)
				flush()
		}
	}
	END { flush() }' >"$d/rollups.sql"
	sql <"$d/rollups.sql"
}

# job ID NODELIST NODE_COUNT START_MIN END_MIN
job() {
	q "INSERT INTO jobs (job_id, user, name, nodelist, node_count, start_at, end_at, state, updated_at) VALUES ($1, 'alice', 'app$1', '$2', $3, $(m "$4"), $(m "$5"), 'COMPLETED', $(m "$5"))"
}

# health_state KIND NAME -> ok|suspect|excluded (ok when no row)
health_state() {
	s=$(q "SELECT state FROM health WHERE kind = '$1' AND name = '$2'")
	echo "${s:-ok}"
}

# scan_until MIN [ARGS...]: one scan up to T0 + MIN minutes, from T0.
scan_until() {
	u=$1
	shift
	"$fwdctl" health scan --since "$T0" --until "$(m "$u")" "$@"
}

# skip_one DESC REASON: a single skipped check (counts as a test, in TAP).
skip_one() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}
