#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl setup (issue 29, item 2): what fwdalloc writes on the controller
# follows SlurmUser, read from slurm.conf or given once, in a scratch root
# (--root): the log directory and the files in it, the state directory,
# the tmpfiles.d override (which systemd-tmpfiles applies) and the units'
# User= drop-ins; SlurmUser=root and an unset SlurmUser give root; clear
# errors for a slurm.conf that cannot be read, an account that does not
# exist and a symbolic link where fwdalloc writes; warnings for the
# password file.  SlurmUser here is "daemon", not "slurm".
. "$top_srcdir/tests/integration/tap.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (chown)"
fwdctl=$top_builddir/fwdctl
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
run() { out=$("$@" 2>"$R/err"); rc=$?; err=$(cat "$R/err"); }
owner() { stat -c '%U %G %a' "$@"; }
P=$R/none.yaml # no policy file: nothing to check

printf 'ClusterName=c\nSlurmUser=daemon   # not slurm\nSlurmdUser=root\n' >"$R/slurm.conf"
# What a package built for SlurmUser "slurm" left: root's here.
mkdir -p "$R/var/log/fwdalloc/release-queue" "$R/var/lib"
: >"$R/var/log/fwdalloc/audit.jsonl"
: >"$R/var/log/fwdalloc/release-queue/42"
chmod 0755 "$R/var/log/fwdalloc"

run env SLURM_CONF="$R/slurm.conf" "$fwdctl" --policy "$P" setup --root "$R" --dry-run
check_eq "dry run: exit 0" 0 "$rc"
check_match "dry run: SlurmUser from slurm.conf" "^SlurmUser: daemon \(uid 1, gid 1\), from slurm.conf$" "$out"
check_eq "dry run: nothing changed" "root root 755" "$(owner "$R/var/log/fwdalloc")"
check_eq "dry run: nothing written" "" "$(ls "$R" | grep -v 'var\|slurm.conf\|err')"

run env SLURM_CONF="$R/slurm.conf" "$fwdctl" --policy "$P" setup --root "$R"
check_eq "setup: exit 0" 0 "$rc"
check_eq "setup: nothing on stderr" "" "$err"
check_eq "log directory: SlurmUser's, 0750" "daemon daemon 750" "$(owner "$R/var/log/fwdalloc")"
check_eq "the audit file and the queue follow" "daemon daemon
daemon daemon
daemon daemon" \
	"$(stat -c '%U %G' "$R/var/log/fwdalloc/audit.jsonl" "$R/var/log/fwdalloc/release-queue" "$R/var/log/fwdalloc/release-queue/42")"
check_eq "state directory: root's, 0700" "root root 700" "$(owner "$R/var/lib/fwdalloc")"
check_eq "tmpfiles.d override" "d /var/log/fwdalloc 0750 daemon daemon - -
d /var/lib/fwdalloc 0700 root root - -" \
	"$(grep -v '^#' "$R/etc/tmpfiles.d/fwdalloc.conf")"
for u in fwdalloc-reconcile fwdalloc-history fwdalloc-health-scan fwdallocd; do
	check_eq "$u.service runs as SlurmUser (drop-in)" "[Service]
User=daemon" "$(grep -v '^#' "$R/etc/systemd/system/$u.service.d/slurm-user.conf")"
done
run env SLURM_CONF="$R/slurm.conf" "$fwdctl" --policy "$P" setup --root "$R"
check_eq "again: exit 0" 0 "$rc"
check_match "again: nothing to change" "nothing to change$" "$out"

# systemd-tmpfiles reads the override as written (tmpfiles.d(5)).
if command -v systemd-tmpfiles >/dev/null; then
	rm -rf "$R/var/log/fwdalloc"
	# (with --root it resolves accounts from the root's own files)
	cp /etc/passwd /etc/group "$R/etc/"
	systemd-tmpfiles --create --root="$R" "$R/etc/tmpfiles.d/fwdalloc.conf" 2>"$R/err"
	check_eq "systemd-tmpfiles applies it" "0|daemon daemon 750" \
		"$?|$(owner "$R/var/log/fwdalloc")"
fi

# SlurmUser=root, and no SlurmUser at all (Slurm's default: root).
printf 'SlurmUser=root\n' >"$R/root.conf"
run env SLURM_CONF="$R/root.conf" "$fwdctl" --policy "$P" setup --root "$R"
check_eq "SlurmUser=root: exit 0" 0 "$rc"
check_eq "SlurmUser=root: the log directory is root's" "root root 750" "$(owner "$R/var/log/fwdalloc")"
check_eq "SlurmUser=root: units run as root" "User=root" \
	"$(grep '^User=' "$R/etc/systemd/system/fwdalloc-reconcile.service.d/slurm-user.conf")"
printf 'ClusterName=c\n' >"$R/unset.conf"
run env SLURM_CONF="$R/unset.conf" "$fwdctl" --policy "$P" setup --root "$R" --dry-run
check_match "no SlurmUser in slurm.conf: root" "^SlurmUser: root \(uid 0, gid 0\), from slurm.conf$" "$out"

# --slurm-user: configured once, slurm.conf not read.
run env SLURM_CONF=/nonexistent "$fwdctl" --policy "$P" setup --root "$R" --slurm-user daemon
check_eq "--slurm-user: exit 0" 0 "$rc"
check_eq "--slurm-user: followed" "daemon daemon 750" "$(owner "$R/var/log/fwdalloc")"

# Errors.
run env SLURM_CONF=/nonexistent "$fwdctl" --policy "$P" setup --root "$R"
check_eq "unreadable slurm.conf: exit 1" 1 "$rc"
check_eq "unreadable slurm.conf: says so and what to do" \
	"fwdctl setup: cannot tell SlurmUser: /nonexistent: No such file or directory; pass --slurm-user NAME" "$err"
printf 'SlurmUser=nosuchuser\n' >"$R/nosuch.conf"
run env SLURM_CONF="$R/nosuch.conf" "$fwdctl" --policy "$P" setup --root "$R"
check_eq "unknown account: exit 1" 1 "$rc"
check_eq "unknown account: named" \
	"fwdctl setup: SlurmUser nosuchuser (slurm.conf): no such account here; create it (Slurm needs it on every node) or pass --slurm-user NAME" "$err"
printf 'SlurmUser=bad/name\n' >"$R/bad.conf"
run env SLURM_CONF="$R/bad.conf" "$fwdctl" --policy "$P" setup --root "$R"
check_eq "not a user name: exit 1 and said" \
	"1|fwdctl setup: cannot tell SlurmUser: $R/bad.conf: SlurmUser=bad/name: not a user name; pass --slurm-user NAME" "$rc|$err"
ln -s /etc/passwd "$R/var/log/fwdalloc/audit.jsonl.1"
run env SLURM_CONF="$R/slurm.conf" "$fwdctl" --policy "$P" setup --root "$R"
check_eq "a symbolic link in the log directory: exit 1" 1 "$rc"
check_eq "a symbolic link: named, not followed" \
	"fwdctl setup: $R/var/log/fwdalloc/audit.jsonl.1: a symbolic link where fwdalloc writes: remove it|root root" \
	"$err|$(stat -c '%U %G' /etc/passwd)"
rm "$R/var/log/fwdalloc/audit.jsonl.1"

# The password file: not SlurmUser's, readable by the group.
: >"$R/db.pass"
chmod 0640 "$R/db.pass"
printf 'database:\n  password_file: %s\n' "$R/db.pass" >"$R/p.yaml"
run env SLURM_CONF="$R/slurm.conf" "$fwdctl" --policy "$R/p.yaml" setup --root "$R"
check_eq "password file: exit 0 (warnings)" 0 "$rc"
check_eq "password file: both warnings, with the fix" \
	"fwdctl setup: warning: database.password_file $R/db.pass is not owned by SlurmUser daemon, who runs PrologSlurmctld: chown daemon $R/db.pass
fwdctl setup: warning: database.password_file $R/db.pass is mode 0640: others may read it, so it is refused: chmod 0600 $R/db.pass" \
	"$err"

tap_done
