#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fwdctl db against a private MariaDB: init/migrate idempotent, a newer
# schema refused, node account grants, password file permissions, prune,
# and the database being down.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start
# The newest migration this fwdctl knows: the last entry of db/schema.c's
# migrations[] (renumbered at merges, so never written here).
latest=$(sed -n '/^static const struct schema_migration migrations/,/^};/p' \
	"$top_srcdir/db/schema.c" | sed -n 's/^	{ \([0-9]*\), .*/\1/p' | tail -n 1)

fw db status
check_eq "status before init exits 1" 1 "$rc"
check_match "status says the schema is missing" \
	'schema: +missing \(run `fwdctl db init`\)' "$out"

fw db migrate
check_eq "migrate on an empty database exits 1" 1 "$rc"
check_match "and says to run db init" \
	"Table 'fwdalloc.schema_version' doesn't exist: the fwdalloc schema is missing: run \`fwdctl db init\`" "$err"

fw db init
check_eq "init exits 0" 0 "$rc"
check_eq "init creates version $latest" "schema migrated from version 0 to $latest" "$out"
check_eq "init grants the node account silently" "" "$err"

fw db init
check_eq "init again is a no-op" "schema at version $latest, nothing to do" "$out"
fw db migrate
check_eq "migrate on a current schema is a no-op" \
	"schema at version $latest, nothing to do" "$out"
check_eq "schema_version has a row per migration" "1	initial schema
2	node_allocations view for the node account
3	decision and health lock rows; node_allocations_for procedure" \
	"$(q 'SELECT version, description FROM schema_version WHERE version <= 3')"
check_eq "schema_version: one row per migration up to the newest" \
	"$latest	$latest" "$(q 'SELECT COUNT(*), MAX(version) FROM schema_version')"

fw --json db status
check_eq "status --json exits 0" 0 "$rc"
check_match "status --json reports current" '"state": "current"' "$out"
n=$(printf '%s\n' "$out" | grep -c '": 0,\{0,1\}$')
check_eq "status --json counts all 16 tables" 16 "$n"
fw db status --json
check_match "--json is accepted after the subcommand" '"schema_version": '"$latest" "$out"

tables=$(q "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'fwdalloc' AND table_type = 'BASE TABLE'")
check_eq "24 tables exist (16 + schema_version + decision_lock + health_lock + ingest_horizon, ingest_lock, ingest_arrivals, history_examined + ledger_version)" 24 "$tables"
check_eq "one view, run with its definer's rights" "node_allocations	DEFINER	fwdalloc@%" \
	"$(q "SELECT table_name, security_type, definer FROM information_schema.views WHERE table_schema = 'fwdalloc'")"
check_eq "one procedure, run with its definer's rights" "node_allocations_for	PROCEDURE	DEFINER	fwdalloc@%" \
	"$(q "SELECT routine_name, routine_type, security_type, definer FROM information_schema.routines WHERE routine_schema = 'fwdalloc'")"
check_eq "the decision lock has its one row" 1 "$(q 'SELECT id FROM decision_lock')"
check_eq "the health lock has its one row" 1 "$(q 'SELECT id FROM health_lock')"
check_eq "the ledger's release number has its one row, at 0" "1	0" \
	"$(q 'SELECT id, version FROM ledger_version')"

# The node account runs node_allocations_for and reads no table or view:
# it can hold no row lock.
node() {
	mariadb --no-defaults --socket="$FWDALLOC_TESTDB_SOCKET" -N --batch \
		-ufwdalloc_node -p"$(cat "$FWDALLOC_TESTDB_NODE_PASSFILE")" \
		fwdalloc -e "$1" 2>&1
}
node_denied() {
	for t in "$@"; do
		check_match "node account may not read $t" \
			"SELECT command denied to user 'fwdalloc_node'@'localhost' for table \`fwdalloc\`.\`$t\`" \
			"$(node "SELECT COUNT(*) FROM $t")"
	done
}
check_eq "node account may run node_allocations_for (no rows yet)" "" \
	"$(node 'CALL node_allocations_for(1)')"
node_denied node_allocations allocations forwarders audit jobs profiles decision_lock health_lock
check_match "node account may not lock through the view" \
	"SELECT command denied to user 'fwdalloc_node'@'localhost' for table \`fwdalloc\`.\`node_allocations\`" \
	"$(node 'SELECT id FROM node_allocations FOR UPDATE')"
check_match "node account may not write allocations" "INSERT command denied" \
	"$(node "INSERT INTO allocations (job_id, forwarder, nodes, action, acquired_at) VALUES (1, 'f', 'c1', 'scale', 1)")"
check_match "node account may not write through the view" "INSERT command denied" \
	"$(node "INSERT INTO node_allocations (job_id, forwarder, nodes, action) VALUES (1, 'f', 'c1', 'scale')")"
check_eq "node account grants: the procedure only" "GRANT USAGE ON *.* TO \`fwdalloc_node\`@\`%\`
GRANT EXECUTE ON PROCEDURE \`fwdalloc\`.\`node_allocations_for\` TO \`fwdalloc_node\`@\`%\`" \
	"$(node 'SHOW GRANTS' | sed 's/ IDENTIFIED BY PASSWORD .*//')"

# A node account the DB admin has not created yet: the node prologs could
# not read their rows, so db init fails (exit 1) after doing the rest,
# saying what to do (issue 29: it used to warn and exit 0).
sed 's/node_user: fwdalloc_node/node_user: nosuch/' "$policy" >"$d/nonode.yaml"
out=$("$fwdctl" --policy "$d/nonode.yaml" db init 2>"$d/fw.err"); rc=$?
check_eq "init with a missing node account: exit 1" 1 "$rc"
check_match "and an error saying what to do" \
	"^fwdctl db: granting the node account: granting node_allocations_for to 'nosuch'@'%': .*create the node account \(see db/SCHEMA.md; --node-host HOST for its host part\), then run \`fwdctl db init\` again, or pass --no-grant$" \
	"$(cat "$d/fw.err")"
out=$("$fwdctl" --policy "$d/nonode.yaml" db init --no-grant 2>"$d/fw.err"); rc=$?
check_eq "the same with --no-grant: exit 0" 0 "$rc"

# The topology's forwarders and OSTs are mirrored into the database.
fw --topology "$top_srcdir/etc/topology.yaml" db init
check_eq "init with a topology: exit 0" 0 "$rc"
check_eq "init with a topology: output" "schema at version $latest, nothing to do
synced 12 forwarders and 4 OSTs from $top_srcdir/etc/topology.yaml" "$out"
check_eq "forwarders mirrored" "fwd01	10.1.0.11	rack1	service	2500000000
fwd08	10.1.0.18	rack4	backup	2500000000" \
	"$(q "SELECT name, address, net_group, role, bandwidth_bps FROM forwarders WHERE name IN ('fwd01', 'fwd08') ORDER BY name")"
check_eq "OSTs mirrored" "4" "$(q "SELECT COUNT(*) FROM osts WHERE kind = 'ost'")"
q "UPDATE forwarders SET last_used_at = 1234 WHERE name = 'fwd05'"
fw --topology "$top_srcdir/etc/topology.yaml" db init
check_eq "re-sync keeps the ledger's last_used_at" "1234	12" \
	"$(q "SELECT (SELECT last_used_at FROM forwarders WHERE name = 'fwd05'), (SELECT COUNT(*) FROM forwarders)")"

# The ledger itself refuses two holders of one private forwarder.
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, action, acquired_at) VALUES (1, 'fwd9', 1, 'c[1-4]', 'scale', 10)"
dup=$(q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, action, acquired_at) VALUES (2, 'fwd9', 1, 'c[5-8]', 'isolate', 11)" 2>&1)
check_match "a second private holder is a duplicate key" \
	"Duplicate entry 'fwd9' for key 'allocations_private'" "$dup"
q "UPDATE allocations SET released_at = 20 WHERE job_id = 1"
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, action, acquired_at) VALUES (2, 'fwd9', 1, 'c[5-8]', 'isolate', 21)"
check_eq "after release the forwarder can be held again" 2 \
	"$(q 'SELECT COUNT(*) FROM allocations')"

# The node account sees held rows only, with the forwarder's address.
q "INSERT INTO allocations (job_id, forwarder, is_private, nodes, action, acquired_at) VALUES (3, 'fwd03', 0, 'c[9-12]', 'scale', 22)"
check_eq "node_allocations holds only held rows" "2	fwd9	c[5-8]	isolate	NULL
3	fwd03	c[9-12]	scale	10.1.0.13" \
	"$(q 'SELECT job_id, forwarder, nodes, action, address FROM node_allocations ORDER BY id')"
check_eq "node_allocations_for: a job's held rows, the columns prologs read" "fwd03	c[9-12]	scale	10.1.0.13" \
	"$(node 'CALL node_allocations_for(3)')"
check_eq "node_allocations_for: nothing of a released row" "" \
	"$(node 'CALL node_allocations_for(1)')"
check_match "node_allocations_for refuses to run in a transaction" \
	"node_allocations_for: call it with autocommit on, outside a transaction" \
	"$(node 'START TRANSACTION; CALL node_allocations_for(3)')"
check_eq "node_allocations has only the columns prologs read" "id job_id nodes action forwarder address" \
	"$(q "SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position SEPARATOR ' ') FROM information_schema.columns WHERE table_schema = 'fwdalloc' AND table_name = 'node_allocations'")"
q "UPDATE allocations SET released_at = 23 WHERE job_id = 3"
check_eq "a released row leaves the view" "2" \
	"$(q 'SELECT job_id FROM node_allocations')"
check_eq "and node_allocations_for" "" "$(node 'CALL node_allocations_for(3)')"

# A version 2 database (SELECT on the view for the node account, no
# procedure, no decision lock row) migrates forward: the procedure and the
# row appear, the node account runs the one and loses the view.
q "DROP PROCEDURE node_allocations_for"
q "DROP TABLE decision_lock"
q "DROP TABLE health_lock"
q "DELETE FROM schema_version WHERE version >= 3"
q "GRANT SELECT ON node_allocations TO 'fwdalloc_node'@'%'"
check_eq "version 2: node account reads the view" 2 \
	"$(node 'SELECT job_id FROM node_allocations')"
fw db migrate
check_eq "migrate from version 2: exit 0" 0 "$rc"
check_eq "migrate from version 2: output" "schema migrated from version 2 to $latest" "$out"
check_eq "migrate from version 2: no warning" "" "$err"
node_denied node_allocations
check_eq "migrate from version 2: the procedure only" "GRANT USAGE ON *.* TO \`fwdalloc_node\`@\`%\`
GRANT EXECUTE ON PROCEDURE \`fwdalloc\`.\`node_allocations_for\` TO \`fwdalloc_node\`@\`%\`" \
	"$(node 'SHOW GRANTS' | sed 's/ IDENTIFIED BY PASSWORD .*//')"
check_eq "migrate from version 2: the node read works" "fwd9	c[5-8]	isolate	NULL" \
	"$(node 'CALL node_allocations_for(2)')"
check_eq "migrate from version 2: the lock rows" "1 1" \
	"$(q 'SELECT (SELECT id FROM decision_lock), (SELECT id FROM health_lock)' | tr '\t' ' ')"

# A version 1 database (table grants for the node account, no view)
# migrates forward: the view and the procedure appear and the table
# grants go.
q "DROP PROCEDURE node_allocations_for"
q "DROP TABLE decision_lock"
q "DROP TABLE health_lock"
q "DROP VIEW node_allocations"
q "DELETE FROM schema_version WHERE version >= 2"
q "GRANT SELECT ON allocations TO 'fwdalloc_node'@'%'"
q "GRANT SELECT ON forwarders TO 'fwdalloc_node'@'%'"
check_eq "version 1: node account reads allocations" 3 \
	"$(node 'SELECT COUNT(*) FROM allocations')"
fw db migrate
check_eq "migrate from version 1: exit 0" 0 "$rc"
check_eq "migrate from version 1: output" "schema migrated from version 1 to $latest" "$out"
check_eq "migrate from version 1: no warning" "" "$err"
node_denied allocations forwarders
node_denied node_allocations
check_eq "after migrate the node account runs the procedure" "fwd9	c[5-8]	isolate	NULL" \
	"$(node 'CALL node_allocations_for(2)')"
fw --json db migrate
check_match "migrate again: grant is idempotent" '"node_grant": "ok"' "$out"

# A newer schema is refused everywhere.
q "INSERT INTO schema_version VALUES (99, 'from the future', 0)"
fw db migrate
check_eq "migrate refuses a newer schema (exit 1)" 1 "$rc"
check_eq "with a clear message" \
	"fwdctl db: database schema version 99 is newer than this fwdalloc knows ($latest): upgrade fwdalloc before using this database" "$err"
fw db status
check_eq "status on a newer schema exits 1" 1 "$rc"
check_match "status names both versions" "version 99, newer than this fwdctl knows \($latest\)" "$out"
fw ingest --format influx "$top_srcdir/tests/fixtures/monitor/influx.lp"
check_eq "ingest refuses a newer schema (exit 1)" 1 "$rc"
# The controller's commands too: the hooks fall back (exit 0, the
# reason in the audit file) and write nothing into the database.
mc_policy "$d/hooks.yaml"
rows_before=$(q 'SELECT (SELECT COUNT(*) FROM jobs) + (SELECT COUNT(*) FROM allocations) + (SELECT COUNT(*) FROM audit)')
newer="database schema version 99 is newer than this fwdalloc knows ($latest): upgrade fwdalloc"
for ev in prolog epilog; do
	env -i PATH="$PATH" SLURM_JOB_ID=777 SLURM_JOB_USER=alice \
		SLURM_JOB_NODELIST='c[1-4]' SLURM_JOB_NUM_NODES=4 \
		SLURM_JOB_NAME=bwapp SPANK_IO_UPGRADE=scale \
		"$fwdctl" --policy "$d/hooks.yaml" "$ev" >"$d/hook.out" 2>&1
	check_eq "newer schema: $ev fails open (exit 0)" 0 "$?"
	check_match "newer schema: $ev's record says why" \
		"\"event\":\"$ev\",\"job_id\":\"777\".*\"outcome\":\"fallback: .*$(printf '%s' "$newer" | sed 's/[().]/\\&/g')" \
		"$(grep "\"event\":\"$ev\",\"job_id\":\"777\"" "$d/audit.jsonl" | tail -1)"
done
fw reconcile
check_eq "newer schema: reconcile refuses (exit 1)" 1 "$rc"
check_match "newer schema: reconcile says why" "$(printf '%s' "$newer" | sed 's/[().]/\\&/g')" "$err"
fw alloc list
check_eq "newer schema: alloc list refuses (exit 1)" 1 "$rc"
check_match "newer schema: alloc list says why" "$(printf '%s' "$newer" | sed 's/[().]/\\&/g')" "$err"
check_eq "newer schema: nothing written by any of them" "$rows_before" \
	"$(q 'SELECT (SELECT COUNT(*) FROM jobs) + (SELECT COUNT(*) FROM allocations) + (SELECT COUNT(*) FROM audit)')"
check_eq "schema_version untouched" "$(seq 1 "$latest")
99" "$(q 'SELECT version FROM schema_version ORDER BY version')"
q "DELETE FROM schema_version WHERE version = 99"

# Password files must be owner-only.
chmod 640 "$FWDALLOC_TESTDB_PASSFILE"
fw db status
check_eq "group-readable password file: exit 3" 3 "$rc"
check_eq "group-readable password file: message" \
	"fwdctl db: password file $FWDALLOC_TESTDB_PASSFILE: mode 0640 gives access to group or others: refusing it (chmod 600 $FWDALLOC_TESTDB_PASSFILE)" "$err"
chmod 604 "$FWDALLOC_TESTDB_PASSFILE"
fw db init
check_eq "world-readable password file refused for init too" 3 "$rc"
chmod 600 "$FWDALLOC_TESTDB_PASSFILE"
fw db status
check_eq "owner-only password file works again" 0 "$rc"

# A wrong password is "unavailable" with the server's text.
cp "$FWDALLOC_TESTDB_PASSFILE" "$d/saved.pass"
printf 'wrong\n' >"$FWDALLOC_TESTDB_PASSFILE"
fw db status
check_eq "wrong password: exit 3" 3 "$rc"
check_match "wrong password: code and message" \
	"^fwdctl db: database socket $FWDALLOC_TESTDB_SOCKET: \(1045\) Access denied for user 'fwdalloc'@'localhost'" "$err"
cat "$d/saved.pass" >"$FWDALLOC_TESTDB_PASSFILE"

# Prune: raw rows older than retention.raw_samples go, rollups stay.
now=$(date +%s)
old=$((now - 10 * 86400))
q "INSERT INTO samples_raw (kind, name, ts, read_bytes) VALUES ('fwd', 'f1', $old, 1), ('fwd', 'f1', $((old + 1)), 1), ('fwd', 'f1', $now, 1)"
q "INSERT INTO samples_hist (kind, name, ts, op, phase, dt, b0, b1, b2, b3, b4, b5, b6, b7) VALUES ('fwd', 'f1', $old, 'read', 'exe', 30, 1, 0, 0, 0, 0, 0, 0, 0)"
q "INSERT INTO jobstats_raw (kind, target, lustre_job_id, ts, op, samples) VALUES ('ost', 'lustre-OST0000', '1', $old, 'open', 1), ('ost', 'lustre-OST0000', '1', $now, 'open', 2)"
q "INSERT INTO rollups_minute (kind, name, minute, samples) VALUES ('fwd', 'f1', $((old - old % 60)), 2)"
cat >"$d/prune.yaml" <<EOT
$(cat "$policy")
retention:
  raw_samples: 86400
EOT
out=$("$fwdctl" --policy "$d/prune.yaml" db prune --dry-run 2>&1)
check_match "dry run counts 2 raw samples" "would remove 2 rows from samples_raw" "$out"
check_eq "dry run deletes nothing" 3 "$(q 'SELECT COUNT(*) FROM samples_raw')"
out=$("$fwdctl" --policy "$d/prune.yaml" db prune 2>&1)
rc=$?
check_eq "prune exits 0" 0 "$rc"
check_match "prune reports samples_raw" "removed 2 rows from samples_raw \(older than 20[0-9-]+T[0-9:]+Z\)" "$out"
check_match "prune reports samples_hist" "removed 1 rows from samples_hist" "$out"
check_match "prune reports jobstats_raw" "removed 1 rows from jobstats_raw" "$out"
check_match "prune reports rollups (none old enough)" "removed 0 rows from rollups_minute" "$out"
check_eq "the recent raw sample is kept" "$now" "$(q 'SELECT ts FROM samples_raw')"
check_eq "rollups are kept" 1 "$(q 'SELECT COUNT(*) FROM rollups_minute')"
check_match "prune reports the released allocations (1970)" "removed 2 rows from allocations" "$out"
check_eq "the held allocation is kept" "2	NULL" \
	"$(q 'SELECT job_id, released_at FROM allocations')"

# Database down.
"$testdb" stop "$d" >/dev/null
fw db status
check_eq "db status with the server down: exit 3" 3 "$rc"
check_match "names the socket, code and message" \
	"^fwdctl db: database socket $FWDALLOC_TESTDB_SOCKET: \(2002\) Can't connect to local server through socket" "$err"
fw ingest --format influx "$top_srcdir/tests/fixtures/monitor/influx.lp"
check_eq "ingest with the server down: exit 3" 3 "$rc"
fw db init
check_eq "init with the server down: exit 3" 3 "$rc"

# It comes back with the data intact.
"$testdb" start "$d" >/dev/null
fw db status
check_eq "after restart status is 0" 0 "$rc"
check_eq "data survived" "1 2" "$(q 'SELECT COUNT(*), MAX(job_id) FROM allocations' | tr '\t' ' ')"

tap_done
