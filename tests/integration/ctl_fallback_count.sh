#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every fallback counted (issue 29, item 3), against a private MariaDB.
# A controller prolog that cannot use the database (its password file is
# group-readable, so refused) falls back with a record in the audit file
# only; fwdctl metrics stores such records in the audit table before it
# counts, once each, so fwdalloc_fallbacks_total counts them with the
# others.  --textfile DIR writes DIR/fwdalloc.prom atomically.
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
db_start
P=$d/good.yaml
mc_policy "$P"
mc_init "$P"
# The same policy with a password file others may read: refused.
cp -p "$d/db.pass" "$d/db-0640.pass"
chmod 0640 "$d/db-0640.pass"
B=$d/refused.yaml
sed "s|password_file: $d/db.pass|password_file: $d/db-0640.pass|" "$P" >"$B"
check_eq "the refused policy names the 0640 file" 1 \
	"$(grep -c "db-0640.pass" "$B")"

# prolog POLICY JOB: run the controller prolog; sets $rc
prolog() {
	env -i PATH="$PATH" SLURM_JOB_ID="$2" SLURM_JOB_USER=root \
		SLURM_JOB_ACCOUNT=phys SLURM_JOB_PARTITION=batch \
		SLURM_JOB_NODELIST='c[1-2]' SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NAME=n1app SPANK_IO_UPGRADE=isolate \
		SLURM_CONF=/nonexistent/slurm.conf \
		"$fwdctl" --policy "$1" prolog >"$d/hook.out" 2>"$d/hook.err"
	rc=$?
}
fallbacks() { sed -n 's/^fwdalloc_fallbacks_total //p'; }
rows() { q "SELECT COUNT(*) FROM audit WHERE job_id = $1"; }

"$fwdctl" --policy "$P" metrics >"$d/m0" 2>"$d/m0.err"
check_eq "metrics at first: exit 0" 0 "$?"
before=$(fallbacks <"$d/m0")
check_match "metrics at first: a count" '^[0-9]+$' "$before"

prolog "$B" 801
check_eq "refused password file: the prolog exits 0" 0 "$rc"
r=$(grep '"job_id":"801"' "$d/audit.jsonl" | tail -1)
check_match "the file record is a fallback naming the password file" \
	"^fallback: .*db-0640.pass" "$(printf '%s' "$r" | jq -r .outcome)"
check_eq "the table has nothing for it yet" 0 "$(rows 801)"

"$fwdctl" --policy "$P" metrics >"$d/m1" 2>"$d/m1.err"
check_eq "metrics: exit 0" 0 "$?"
check_eq "metrics: nothing on stderr" "" "$(cat "$d/m1.err")"
check_eq "metrics: fwdalloc_fallbacks_total counts it" $((before + 1)) \
	"$(fallbacks <"$d/m1")"
check_eq "the table holds the record now" 1 "$(rows 801)"
check_eq "the table's outcome is the file's" \
	"$(printf '%s' "$r" | jq -r .outcome)" \
	"$(q "SELECT outcome FROM audit WHERE job_id = 801")"
check_eq "the replay state is beside the audit file" yes \
	"$([ -s "$d/audit.replayed" ] && echo yes)"

# Counted once: again, and again after the state is lost.
"$fwdctl" --policy "$P" metrics >"$d/m2" 2>&1
check_eq "metrics again: the same count" $((before + 1)) "$(fallbacks <"$d/m2")"
rm -f "$d/audit.replayed"
"$fwdctl" --policy "$P" metrics >"$d/m3" 2>&1
check_eq "metrics without its state: still the same count" \
	$((before + 1)) "$(fallbacks <"$d/m3")"
check_eq "still one row" 1 "$(rows 801)"

# A second one, after logrotate moved the file (create, delaycompress).
prolog "$B" 802
mv "$d/audit.jsonl" "$d/audit.jsonl.1"
prolog "$B" 803
"$fwdctl" --policy "$P" metrics >"$d/m4" 2>&1
check_eq "across a rotation: both counted" $((before + 3)) \
	"$(fallbacks <"$d/m4")"
check_eq "across a rotation: rows for both" "1 1" "$(rows 802) $(rows 803)"

# --textfile DIR: the same figures in DIR/fwdalloc.prom, nothing else.
mkdir "$d/textfile"
"$fwdctl" --policy "$P" metrics --textfile "$d/textfile" >"$d/t.out" 2>&1
check_eq "--textfile: exit 0" 0 "$?"
check_eq "--textfile: nothing on stdout" "" "$(cat "$d/t.out")"
check_eq "--textfile: only fwdalloc.prom in DIR" fwdalloc.prom \
	"$(ls -A "$d/textfile")"
check_eq "--textfile: mode 0644" 644 "$(stat -c %a "$d/textfile/fwdalloc.prom")"
check_eq "--textfile: the count" $((before + 3)) \
	"$(fallbacks <"$d/textfile/fwdalloc.prom")"
check_eq "--textfile: ends in # EOF" "# EOF" "$(tail -1 "$d/textfile/fwdalloc.prom")"
"$fwdctl" --policy "$P" metrics --textfile "$d/nonexistent" >"$d/t.out" 2>&1
check_eq "--textfile to a missing directory: exit 1" 1 "$?"
check_match "--textfile to a missing directory: says which" \
	"^fwdctl metrics: --textfile $d/nonexistent: No such file or directory" \
	"$(cat "$d/t.out")"

tap_done
