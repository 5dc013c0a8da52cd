#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The packages' maintainer scripts and metadata (issue 29, item 8), run
# against a scratch root through $DPKG_ROOT (deb-maintscripts): the
# postinst makes the directories and units follow SlurmUser without
# systemd and says so when it cannot (no silent `|| true`); purge removes
# logs, state, node notes, /etc/fwdalloc and what `fwdctl setup`
# generated, and only that; jq is recommended; a changelog version that is
# not configure.ac's fails the build (fwdctl --version would lie); the RPM
# has its tmpfiles and systemd scriptlets.
. "$top_srcdir/tests/integration/tap.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (chown)"
S=$top_srcdir
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
# The package's fwdctl, as dpkg would have unpacked it into the root.
mkdir -p "$R/usr/bin"
ln -s "$(cd "$top_builddir" && pwd)/fwdctl" "$R/usr/bin/fwdctl"
printf 'SlurmUser=daemon\n' >"$R/slurm.conf"

# postinst configure: no systemd here, only the scratch root.
out=$(DPKG_ROOT=$R SLURM_CONF=$R/slurm.conf sh "$S/debian/fwdalloc.postinst" configure 2>"$R/err")
check_eq "postinst: exit 0" 0 "$?"
check_eq "postinst: quiet on stderr" "" "$(cat "$R/err")"
check_eq "postinst: the log directory, SlurmUser's" "daemon daemon 750" \
	"$(stat -c '%U %G %a' "$R/var/log/fwdalloc")"
check_eq "postinst: the state directory, root's" "root root 700" \
	"$(stat -c '%U %G %a' "$R/var/lib/fwdalloc")"
check_eq "postinst: the units' drop-ins" 4 \
	"$(ls "$R"/etc/systemd/system/*.service.d/slurm-user.conf | wc -l)"

# postinst when SlurmUser cannot be told: installs (exit 0), and says why.
rm -rf "$R/var/log/fwdalloc"
DPKG_ROOT=$R SLURM_CONF=$R/none.conf sh "$S/debian/fwdalloc.postinst" configure >/dev/null 2>"$R/err"
check_eq "postinst without slurm.conf: exit 0" 0 "$?"
check_eq "postinst without slurm.conf: the cause and the fix on stderr" \
	"fwdctl setup: cannot tell SlurmUser: $R/none.conf: No such file or directory; pass --slurm-user NAME
fwdalloc: 'fwdctl setup' failed (above): the audit and state directories do not follow SlurmUser yet; fix what it says, then run 'fwdctl setup' (or 'fwdctl setup --slurm-user NAME') as root" \
	"$(cat "$R/err")"
DPKG_ROOT=$R SLURM_CONF=$R/slurm.conf sh "$S/debian/fwdalloc.postinst" configure >/dev/null 2>&1

# What a running fwdalloc leaves, and a site's own drop-in.
mkdir -p "$R/etc/fwdalloc" "$R/var/log/fwdalloc/release-queue"
: >"$R/var/log/fwdalloc/audit.jsonl"
: >"$R/var/log/fwdalloc/audit.jsonl.1"
: >"$R/var/lib/fwdalloc/job-7.c1.note"
: >"$R/etc/fwdalloc/db.password"
printf '[Service]\nNice=5\n' >"$R/etc/systemd/system/fwdalloc-history.service.d/site.conf"

DPKG_ROOT=$R sh "$S/debian/fwdalloc.postrm" remove
check_eq "postrm remove: logs and state kept" "yes yes" \
	"$([ -e "$R/var/log/fwdalloc/audit.jsonl" ] && echo yes) $([ -e "$R/var/lib/fwdalloc/job-7.c1.note" ] && echo yes)"
DPKG_ROOT=$R sh "$S/debian/fwdalloc.postrm" purge
check_eq "postrm purge: exit 0" 0 "$?"
check_eq "postrm purge: logs, state, notes, /etc/fwdalloc, tmpfiles override gone" \
	"" "$(cd "$R" && ls -d var/log/fwdalloc var/lib/fwdalloc etc/fwdalloc etc/tmpfiles.d/fwdalloc.conf 2>/dev/null)"
check_eq "postrm purge: the drop-ins gone, the site's own kept" \
	"etc/systemd/system/fwdalloc-history.service.d/site.conf" \
	"$(cd "$R" && find etc/systemd -type f | sort)"
mkdir -p "$R/var/lib/fwdalloc" && : >"$R/var/lib/fwdalloc/job-8.c2.note"
DPKG_ROOT=$R sh "$S/debian/slurm-spank-fwdalloc.postrm" purge
check_eq "plugin purge: the node notes gone" "" "$(ls -d "$R/var/lib/fwdalloc" 2>/dev/null)"

check_match "jq is recommended (completion needs it)" \
	'^Recommends:.*\bjq\b' "$(grep '^Recommends:' "$S/debian/control")"

# A changelog that is not configure.ac's version fails the build.
mkdir "$R/src"
cp -r "$S/debian" "$S/configure.ac" "$R/src/"
sed -i '1s/([^)]*)/(9.9.9)/' "$R/src/debian/changelog"
out=$(cd "$R/src" && make -f debian/rules override_dh_auto_configure 2>&1)
check_eq "changelog 9.9.9, configure.ac $(sed -n 's/^AC_INIT.\[fwdalloc\], \[\([^]]*\)\].*/\1/p' "$S/configure.ac"): the build fails, saying so" \
	"debian/changelog says 9.9.9 but configure.ac $(sed -n 's/^AC_INIT.\[fwdalloc\], \[\([^]]*\)\].*/\1/p' "$S/configure.ac"): fwdctl --version would say $(sed -n 's/^AC_INIT.\[fwdalloc\], \[\([^]]*\)\].*/\1/p' "$S/configure.ac"); make them agree" \
	"$(printf '%s\n' "$out" | grep changelog)"

# The RPM's scriptlets.
if command -v rpmspec >/dev/null; then
	sed 's/@PACKAGE_VERSION@/0.1.0/' "$S/rpm/fwdalloc.spec.in" >"$R/f.spec"
	spec=$(rpmspec -P "$R/f.spec" 2>/dev/null)
	check_match "RPM %post runs fwdctl setup" \
		"^if ! /usr/bin/fwdctl setup; then" "$spec"
	check_match "RPM: tmpfiles and systemd scriptlets" \
		'^%\{\?tmpfiles_create:%tmpfiles_create %\{_tmpfilesdir\}/fwdalloc.conf\}$' \
		"$(sed -n '/^%post$/,/^%preun$/p' "$S/rpm/fwdalloc.spec.in")"
	check_match "RPM %postun removes the generated drop-ins on erase" \
		'rm -f /etc/systemd/system/\$u.service.d/slurm-user.conf' "$spec"
fi

tap_done
