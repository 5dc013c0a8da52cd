#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A node side that scales: one job of 2,048 nodes, all its node prologs at
# once (tests/tools/node_fanout: one process per node, released together,
# each calling fwdalloc_node_decision() as the SPANK job prolog does).
# With remap.decision_dir the controller prolog publishes the decision
# once and no node needs a database connection: none falls back and every
# node gets its own forwarder.  The database path, each node with a
# connection of its own, runs in the same test as the reference (the
# server allows 200 connections).  Nodes that fall back are counted into
# the job's audit record by the epilog; a damaged or planted decision file
# keeps the nodes on their defaults and says why.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
db_start

fanout=$top_builddir/tests/tools/node_fanout
NODES=2048
PER=128 # nodes per forwarder
spool=$d/spool
audit=$d/audit.jsonl

{
	echo "forwarders:"
	for k in $(seq 1 16); do
		echo "  - {name: fwd$k, address: 10.0.0.$k, bandwidth: 2.5GB/s, group: g0, role: service}"
	done
	echo "compute_nodes: c[1-$NODES]"
	echo "mapping:"
	for k in $(seq 1 16); do
		echo "  - {nodes: \"c[$(((k - 1) * PER + 1))-$((k * PER))]\", forwarder: fwd$k}"
	done
} >"$d/topology.yaml"
{
	cat <<EOT
topology: $d/topology.yaml
access:
  mode: opt-in
  fail: open
decision:
  decide_timeout: 30s
audit:
  file: $audit
  database: true
remap:
  driver: none
  decision_dir: $spool
EOT
	sed -n '/^database:/,$p' "$FWDALLOC_TESTDB_POLICY" |
		sed -e "s/^  timeout: .*/  timeout: 2s/"
} >"$d/policy.yaml"
policy=$d/policy.yaml

fw db init
check_eq "db init exits 0" 0 "$rc"

hook() { # prolog|epilog JOB NODELIST N
	env SLURM_JOB_ID="$2" SLURM_JOB_NODELIST="$3" SLURM_JOB_NUM_NODES="$4" \
		SLURM_JOB_USER=alice SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
		"$fwdctl" --policy "$policy" "$1" >"$d/hook.out" 2>&1
	rc=$?
}
record() { # EVENT JOB: the job's last audit line of that event
	grep "\"event\":\"$1\",\"job_id\":\"$2\"" "$audit" | tail -n 1
}
summary() { sed -n 's/^fanout: //p' "$1"; }
field() { # NAME SUMMARY
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# What every node must read: c1..c128 fwd1, c129..c256 fwd2, ...
for i in $(seq 1 $NODES); do
	k=$(((i - 1) / PER + 1))
	echo "c$i file default fwd$k=10.0.0.$k"
done >"$d/want.file"
sed 's/ file / db /' "$d/want.file" >"$d/want.db"

# 1. The controller prolog publishes the decision once.
hook prolog 501 "c[1-$NODES]" $NODES
check_eq "prolog of the 2048-node job exits 0" 0 "$rc"
check_match "prolog decided" '"outcome":"default"' "$(record prolog 501)"
f=$spool/501.decision
check "decision file published" test -f "$f"
check_eq "decision file mode 0644, owned by the controller's user" \
	"644 $(id -u)" "$(stat -c '%a %u' "$f" 2>/dev/null)"
check_match "decision file: version 1, job 501, 16 rows as the node read returns them, digest" \
	'^\{"version":1,"job":501,"rows":\[\{"forwarder":"fwd1","nodes":"c\[1-128\]","action":"default","address":"10.0.0.1"\},.*\{"forwarder":"fwd16","nodes":"c\[1921-2048\]","action":"default","address":"10.0.0.16"\}\],"digest":"[0-9a-f]{64}"\}$' \
	"$(cat "$f" 2>/dev/null)"
check_eq "no temporary file left in the spool" "501.decision" "$(ls "$spool" 2>/dev/null)"

# 2. 2,048 node prologs at once from the file.
t0=$(date +%s)
"$fanout" "$policy" 501 $NODES c 30 >"$d/file.out" 2>"$d/file.err"
check_eq "fan-out (file) ran" 0 "$?"
s=$(summary "$d/file.out")
diag "decision file: $s ($(($(date +%s) - t0)) s)"
check_eq "file path: 2048 nodes read the file" $NODES "$(field file "$s")"
check_eq "file path: 0 fallbacks" 0 "$(field fallbacks "$s")"
check_eq "file path: none timed out" 0 "$(field timed_out "$s")"
grep -v '^fanout: ' "$d/file.out" >"$d/got.file"
check "file path: every node got its own forwarder and address" \
	cmp -s "$d/want.file" "$d/got.file"
check "file path: no fallback line written" test ! -e "$spool/501.fallbacks"

# 3. The reference: the same 2,048 reads from the database, one
# connection each (the file withdrawn).
mv "$f" "$d/501.decision.saved"
t0=$(date +%s)
"$fanout" "$policy" 501 $NODES c 30 >"$d/db.out" 2>"$d/db.err"
check_eq "fan-out (database) ran" 0 "$?"
s=$(summary "$d/db.out")
diag "database:      $s ($(($(date +%s) - t0)) s)"
dbfb=$(field fallbacks "$s")
[ "$dbfb" -gt 0 ] && diag "e.g. $(grep -m 1 ' fallback ' "$d/db.out")"
check_eq "db path: every node either read the database or fell back" \
	$NODES "$(($(field db "$s") + $(field timed_out "$s")))"
# Those that read it got the right rows; the others fell back.
grep -v '^fanout: ' "$d/db.out" | grep -v ' fallback ' >"$d/got.db"
check_eq "db path: nodes that did not fall back got their rows" "" \
	"$(grep -vxF -f "$d/want.db" "$d/got.db")"
check_eq "db path: read + fell back = 2048" $NODES \
	"$(($(wc -l <"$d/got.db") + dbfb))"
# One line "<node> <why>" per node that fell back.  A node killed at the
# limit (a loaded machine) is counted as fallen back without a line, as a
# prolog that Slurm kills would be, unless it was killed after writing
# it: the lines name every node that fell back by itself, and only nodes
# that fell back.  The epilog counts the lines.
nfb=$(wc -l <"$spool/501.fallbacks" 2>/dev/null || echo 0)
grep ' fallback ' "$d/db.out" >"$d/fb.out"
grep -v ' fallback killed after ' "$d/fb.out" | cut -d' ' -f1 | sort >"$d/fb.self"
cut -d' ' -f1 "$d/fb.out" | sort >"$d/fb.all"
cut -d' ' -f1 "$spool/501.fallbacks" 2>/dev/null | sort >"$d/fb.lines"
check_eq "db path: a fallback line for each node that fell back by itself" "" \
	"$(comm -23 "$d/fb.self" "$d/fb.lines" | head -n 3)"
check_eq "db path: fallback lines only for nodes that fell back, one each" "" \
	"$(comm -13 "$d/fb.all" "$d/fb.lines" | head -n 3)"

# 4. The epilog counts the node fallbacks into the job's audit record and
# removes the job's files.
cp "$d/501.decision.saved" "$f"
hook epilog 501 "c[1-$NODES]" $NODES
check_eq "epilog exits 0" 0 "$rc"
check_match "epilog record: node_fallbacks counts the database path's fallback lines" \
	"\"node_fallbacks\":\\{\"count\":$nfb," "$(record epilog 501)"
check_eq "epilog removed the decision and fallback files" "" "$(ls "$spool")"
check_match "the audit table has the same count" "\"count\":$nfb" \
	"$(q "SELECT record FROM audit WHERE job_id = 501 AND action = 'release'")"

# 5. Damaged or planted files keep the nodes on their defaults, say why,
# and are counted; the nodes do not go to the database instead.  An
# empty file is no decision yet: the database has it.
hook prolog 502 "c[1-4]" 4
check_eq "prolog of job 502 exits 0" 0 "$rc"
f=$spool/502.decision
sed 's/fwd1/fwd9/' "$f" >"$f.new" && mv "$f.new" "$f" && chmod 644 "$f"
"$fanout" "$policy" 502 4 c 10 >"$d/bad.out" 2>&1
check_eq "altered rows: 4 fallbacks" 4 "$(field fallbacks "$(summary "$d/bad.out")")"
check_match "altered rows: digest mismatch" '^c1 fallback decision file: .*digest mismatch' \
	"$(head -n 1 "$d/bad.out")"
: >"$f"
"$fanout" "$policy" 502 1 c 10 >"$d/bad.out" 2>&1
check_match "empty file (what a crash leaves of an unsynced one): the node reads the database" \
	'^c1 db ' "$(head -n 1 "$d/bad.out")"
check_eq "empty file: no fallback line" 4 "$(wc -l <"$spool/502.fallbacks")"
printf '{"version":1,"job":502,"rows":[],"digest":"x","extra":1}\n' >"$f"
"$fanout" "$policy" 502 1 c 10 >"$d/bad.out" 2>&1
check_match "unknown member: refused" '^c1 fallback decision file: .*not a version 1 decision of job 502' \
	"$(head -n 1 "$d/bad.out")"
rm -f "$f"
echo '{"version":1,"job":502}' >"$d/elsewhere"
ln -s "$d/elsewhere" "$f"
"$fanout" "$policy" 502 1 c 10 >"$d/bad.out" 2>&1
check_match "symbolic link: not followed" '^c1 fallback decision file: .*(symbolic links|Too many levels)' \
	"$(head -n 1 "$d/bad.out")"
rm -f "$f"
printf 'x' >"$f"
chmod 666 "$f"
"$fanout" "$policy" 502 1 c 10 >"$d/bad.out" 2>&1
check_match "world-writable file: refused" '^c1 fallback decision file: .*writable by it alone' \
	"$(head -n 1 "$d/bad.out")"
check_eq "fallback lines: 4 + 3" 7 "$(wc -l <"$spool/502.fallbacks")"
hook epilog 502 "c[1-4]" 4
r=$(record epilog 502)
check_match "epilog record: 7 node fallbacks" '"node_fallbacks":\{"count":7,' "$r"
# In the order the nodes wrote them, which is any order.
check_eq "epilog record: the nodes named" "c1 c1 c1 c1 c2 c3 c4" \
	"$(printf '%s' "$r" | sed -n 's/.*"node_fallbacks":{"count":7,"nodes":\[\([^]]*\)\]}.*/\1/p' |
		tr ',' '\n' | tr -d '"' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "epilog removed job 502's files" "" "$(ls "$spool")"

# 6. A job whose prolog fell back has a decision file that says so (one
# row, no forwarder, action fallback): the nodes keep their defaults and
# tell the job FWDALLOC_ACTION=fallback, without asking the database; a
# stale decision from an earlier run of the same job id is replaced.
hook prolog 503 "c[1-4]" 4
check "job 503 published" test -f "$spool/503.decision"
hook prolog 503 "c[1-4]" 4 # requeued: holds its rows, republished
check "requeued job 503 republished" test -f "$spool/503.decision"
hook prolog 504 "c[1-4,9999]" 5 # a node outside the topology: fallback
check_match "job 504 fell back" '"outcome":"fallback' "$(record prolog 504)"
check "job 504: a job refused for its nodes leaves the database breaker closed" \
	test ! -e "$d/db-breaker"
check_eq "job 504's decision file: the fallback row" \
	'[{"forwarder":null,"nodes":"c[1-4,9999]","action":"fallback","address":null}]' \
	"$(jq -c .rows "$spool/504.decision" 2>&1)"
"$fanout" "$policy" 504 2 c 10 >"$d/fb.out" 2>&1
check_eq "job 504's nodes read the fallback from the file" \
	"c1 file fallback -" "$(head -n 1 "$d/fb.out")"

# 7. A decision that cannot be published: the record says so and the
# nodes read the database (the spool's parent does not exist: mkdir
# fails, and there is no file for the nodes).
sed "s|^  decision_dir: .*|  decision_dir: $d/missing/spool|" "$policy" >"$d/policy-bad.yaml"
env SLURM_JOB_ID=505 SLURM_JOB_NODELIST="c[1-4]" SLURM_JOB_NUM_NODES=4 \
	SLURM_JOB_USER=alice SLURM_JOB_NAME=app SPANK_IO_UPGRADE=scale \
	"$fwdctl" --policy "$d/policy-bad.yaml" prolog >"$d/hook.out" 2>&1
check_eq "unpublishable decision: prolog exits 0" 0 "$?"
r=$(record prolog 505)
check_match "unpublishable decision: still decided" '"outcome":"default"' "$r"
check_match "unpublishable decision: the record says why" \
	'"decision_file":"publishing the decision of job 505: .*missing/spool: No such file or directory"' "$r"
"$fanout" "$d/policy-bad.yaml" 505 1 c 10 >"$d/np.out" 2>&1
check_eq "unpublishable decision: the node reads the database" \
	"c1 db default fwd1=10.0.0.1" "$(head -n 1 "$d/np.out")"

# 8. Action direct: one row without a forwarder, alone, covering the
# job's nodes; a null forwarder anywhere else is refused.
node_read=$top_builddir/tests/tools/node_read
plant() { # JOB ROWS: a decision file with the rows' digest
	printf '{"version":1,"job":%s,"rows":%s,"digest":"%s"}\n' "$1" "$2" \
		"$(printf '%s' "$2" | sha256sum | cut -d' ' -f1)" >"$spool/$1.decision"
	chmod 644 "$spool/$1.decision"
}
plant 506 '[{"forwarder":null,"nodes":"c[1-4]","action":"direct","address":null}]'
check_eq "direct: a node of the job reads direct, no forwarder" \
	"direct (no forwarder)" "$("$node_read" "$policy" 506 c2 2>&1)"
check_eq "direct: a node outside the job reads nothing to apply" "" \
	"$("$node_read" "$policy" 506 c9 2>&1)"
plant 507 '[{"forwarder":null,"nodes":"c[1-4]","action":"scale","address":null}]'
check_match "null forwarder in a scale row: refused" \
	'row 1: not \{forwarder, nodes, action, address\} with bounded strings \(forwarder null only in a direct or fallback row\)' \
	"$("$node_read" "$policy" 507 c2 2>&1)"
plant 508 '[{"forwarder":null,"nodes":"c[1-4]","action":"direct","address":null},{"forwarder":"fwd1","nodes":"c[1-4]","action":"scale","address":null}]'
check_match "direct row with another row: refused" \
	'row 1: .*forwarder null only in a direct or fallback row' \
	"$("$node_read" "$policy" 508 c2 2>&1)"
rm -f "$spool"/50[678].decision

tap_done
