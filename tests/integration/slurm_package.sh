#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The packages.  From `make dist`: dpkg-buildpackage -b builds fwdalloc and
# slurm-spank-fwdalloc (depending on the libslurm it was built against),
# lintian finds no error, both install into a scratch root (dpkg --instdir:
# nothing of this machine changes) with their configuration as conffiles
# and tmpfiles.d run; an administrator's edits survive an upgrade (silently
# when the shipped file did not change, with --force-confold and a
# .dpkg-dist when it did); the installed plugin loads in the mini-cluster.
# rpmbuild -tb builds the RPMs with every configuration file
# %config(noreplace); installed into a scratch root (rpm --root), an edited
# configuration file survives `rpm -U` to a higher release, the new
# default left next to it as .rpmnew.  Every package names the same
# maintainer, the project's own address (not a placeholder).
#
# Slow-ish (two package builds side by side and a mini-cluster, about
# 1.5 min on 2 cores); a slurm_* test:
# run it alone (FWDALLOC_MC_PORT_BASE + 100, default 17500).
set -u
. "$top_srcdir/tests/integration/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (dpkg, slurmd)"
for p in dpkg-buildpackage dh lintian rpmbuild slurmctld; do
	command -v $p >/dev/null ||
		skip_all "$p not installed (scripts/install-deps installs it)"
done

T=$(mktemp -d /tmp/fwd-package.XXXXXX)
chmod 755 "$T"
mc=$top_srcdir/scripts/minicluster
cleanup() {
	[ -d "$T/mc" ] && FWDALLOC_BUILDDIR=$top_builddir "$mc" stop "$T/mc" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' "$top_builddir/config.h")

# ---- build ---------------------------------------------------------------
make --no-print-directory -s -C "$top_builddir" dist-gzip >"$T/dist.log" 2>&1
check "make dist" test -f "$top_builddir/fwdalloc-$version.tar.gz"
tar -C "$T" -xzf "$top_builddir/fwdalloc-$version.tar.gz"
src=$T/fwdalloc-$version
# The RPM builds alongside the .deb: one core each.
rpmbuild -tb --nodeps --define "_topdir $T/rpm" --define "_smp_mflags -j1" \
	"$top_builddir/fwdalloc-$version.tar.gz" >"$T/rpm.log" 2>&1 &
rpm_pid=$!
(cd "$src" && DEB_BUILD_OPTIONS=parallel=1 dpkg-buildpackage -b -uc -us) \
	>"$T/deb.log" 2>&1
check_eq "dpkg-buildpackage -b" 0 "$?" || true
deb=$T/fwdalloc_${version}_amd64.deb
plug=$T/slurm-spank-fwdalloc_${version}_amd64.deb
check "fwdalloc .deb built" test -f "$deb"
check "slurm-spank-fwdalloc .deb built" test -f "$plug"
[ -f "$deb" ] && [ -f "$plug" ] || {
	diag "$(tail -20 "$T/deb.log")"; wait; tap_done; exit 1; }

slurmlib=$(dpkg -S "$(readlink -f "$(cc -print-file-name=libslurm.so)")" | sed 's/[:,].*//')
check_match "the plugin depends on the libslurm it was built with ($slurmlib)" \
	"(^|, )$slurmlib \\(>= [0-9]" "$(dpkg-deb -f "$plug" Depends)"
check_eq "fwdalloc's conffiles" \
	"/etc/fwdalloc/fwdalloc.yaml
/etc/fwdalloc/sim-curves.csv
/etc/fwdalloc/sim-jobs.csv
/etc/fwdalloc/slurm.conf.fwdalloc
/etc/fwdalloc/topology-taihulight.yaml
/etc/fwdalloc/topology.yaml
/etc/logrotate.d/fwdalloc" \
	"$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | sort)"
check_eq "the plugin's conffile" "/etc/slurm/plugstack.conf.d/fwdalloc.conf" \
	"$(dpkg-deb --ctrl-tarfile "$plug" | tar -xO ./conffiles)"
lintian --no-tag-display-limit "$T"/fwdalloc_"$version"_amd64.changes >"$T/lintian.log" 2>&1
check_eq "lintian: no error" "" "$(grep '^E: ' "$T/lintian.log")"
maint=$(dpkg-deb -f "$deb" Maintainer)
check_eq "the maintainer: the project's address, not a placeholder" "" \
	"$(printf '%s\n' "$maint" | grep -iE '@example\.(org|com|net)>|^$')"
check_eq "the plugin's .deb: the same maintainer" "$maint" "$(dpkg-deb -f "$plug" Maintainer)"
check_eq "debian/changelog: the same maintainer" "$maint" \
	"$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$src/debian/changelog" | head -1)"
check_eq "debian/copyright: the same upstream contact" "$maint" \
	"$(sed -n 's/^Upstream-Contact: //p' "$src/debian/copyright")"

# ---- install into a scratch root, edit, upgrade ------------------------
R=$T/root
A=$R/var/lib/dpkg
mkdir -p "$A/info" "$A/updates" "$R/etc"
: >"$A/status"
cp /etc/passwd /etc/group "$R/etc/" # tmpfiles.d resolves SlurmUser here
dpkgr() {
	timeout 120 dpkg --instdir="$R" --admindir="$A" --force-script-chrootless \
		--force-depends --force-not-root "$@" </dev/null
}
dpkgr -i "$deb" "$plug" >"$T/install.log" 2>&1
check_eq "dpkg -i into the scratch root" 0 "$?" || diag "$(tail -5 "$T/install.log")"
check_eq "both installed" "fwdalloc ii|slurm-spank-fwdalloc ii" \
	"$(dpkg-query --admindir="$A" -W -f='${Package} ${db:Status-Abbrev}\n' | sed 's/ *$//' | paste -sd '|')"
check "fwdctl installed" test -x "$R/usr/bin/fwdctl"
check "the plugin installed in Slurm's plugin directory" \
	test -f "$R/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm/fwdalloc.so"
check_eq "postinst ran tmpfiles.d: audit directory owned by slurm" "slurm 750" \
	"$(stat -c '%U %a' "$R/var/log/fwdalloc" 2>&1)"
check_eq "installed fwdctl runs" "fwdctl $version" "$("$R/usr/bin/fwdctl" --version 2>&1)"

# The administrator edits two conffiles.
echo "# site edit" >>"$R/etc/fwdalloc/fwdalloc.yaml"
echo "# site topology edit" >>"$R/etc/fwdalloc/topology.yaml"

# Version 2: the same files, except that the shipped policy changed.
v2=$T/v2
dpkg-deb -R "$deb" "$v2"
sed -i "s/^Version: .*/Version: $version.1/" "$v2/DEBIAN/control"
echo "# shipped in $version.1" >>"$v2/etc/fwdalloc/fwdalloc.yaml"
dpkg-deb --root-owner-group -b "$v2" "$T/fwdalloc_$version.1.deb" >/dev/null
dpkgr --force-confold -i "$T/fwdalloc_$version.1.deb" >"$T/upgrade.log" 2>&1
check_eq "upgrade: exit 0, no prompt" 0 "$?" || diag "$(tail -5 "$T/upgrade.log")"
check_eq "upgraded" "$version.1" \
	"$(dpkg-query --admindir="$A" -W -f='${Version}' fwdalloc)"
check_eq "upgrade keeps the edited topology (shipped file unchanged)" \
	"# site topology edit" "$(tail -1 "$R/etc/fwdalloc/topology.yaml")"
check_eq "upgrade keeps the edited policy (shipped file changed)" \
	"# site edit" "$(tail -1 "$R/etc/fwdalloc/fwdalloc.yaml")"
check_eq "... and leaves the new default next to it" "# shipped in $version.1" \
	"$(tail -1 "$R/etc/fwdalloc/fwdalloc.yaml.dpkg-dist" 2>&1)"
dpkgr -r fwdalloc >"$T/remove.log" 2>&1
check "remove keeps the edited configuration" \
	grep -q "# site edit" "$R/etc/fwdalloc/fwdalloc.yaml"

# ---- the installed plugin in the mini-cluster --------------------------
export FWDALLOC_MC_PORT_BASE=$((${FWDALLOC_MC_PORT_BASE:-17400} + 100))
export FWDALLOC_MC_NO_DB=1
so=$(ls "$R"/usr/lib/*/slurm-wlm/fwdalloc.so)
out=$(FWDALLOC_BUILDDIR=$top_builddir FWDALLOC_MC_PLUGIN=$so \
	FWDALLOC_MC_PROLOG_SLURMCTLD=/bin/true FWDALLOC_MC_EPILOG_SLURMCTLD=/bin/true \
	"$mc" start "$T/mc" 2>&1)
rc=$?
check_eq "minicluster starts with the installed plugin" 0 "$rc"
if [ "$rc" -eq 0 ]; then
	eval "$(printf '%s\n' "$out" | grep '^export ')"
	check_eq "plugstack.conf names the installed plugin" "required $so" \
		"$(cut -d' ' -f1,2 "$T/mc/plugstack.conf")"
	check_match "sbatch --help shows --io-upgrade (the plugin loaded)" \
		'--io-upgrade=mode' "$(cd "$T" && sbatch --help 2>&1)"
	err=$(cd "$T" && sbatch --io-upgrade=faster --wrap true 2>&1)
	check_match "the installed plugin checks --io-upgrade" \
		"fwdalloc: --io-upgrade=faster: invalid value" "$err"
else
	diag "$out"
fi

# ---- RPM -----------------------------------------------------------------
wait "$rpm_pid"
check_eq "rpmbuild -tb" 0 "$?" || diag "$(tail -10 "$T/rpm.log")"
rpm=$(ls "$T"/rpm/RPMS/*/fwdalloc-"$version"-*.rpm 2>/dev/null)
prpm=$(ls "$T"/rpm/RPMS/*/slurm-spank-fwdalloc-"$version"-*.rpm 2>/dev/null)
flags() {
	rpm -qp --qf '[%{FILEFLAGS:fflags}|%{FILENAMES}\n]' "$1" |
		awk -F'|' '$1 ~ /c/ { print $1, $2 }'
}
check_eq "RPM: every configuration file %config(noreplace)" \
	"cn /etc/fwdalloc/fwdalloc.yaml
cn /etc/fwdalloc/sim-curves.csv
cn /etc/fwdalloc/sim-jobs.csv
cn /etc/fwdalloc/slurm.conf.fwdalloc
cn /etc/fwdalloc/topology-taihulight.yaml
cn /etc/fwdalloc/topology.yaml
cn /etc/logrotate.d/fwdalloc
cn /etc/slurm/plugstack.conf.d/fwdalloc.conf" \
	"$( { flags "$rpm"; flags "$prpm"; } | sort -k2)"
check_match "RPM: the plugin requires its Slurm release" \
	'^slurm\(x86-64\) >= [0-9]+\.[0-9]+$' "$(rpm -qp --requires "$prpm" | grep '^slurm' | head -1)"
check_eq "RPM: both packaged by the .deb's maintainer" "$maint|$maint" \
	"$(rpm -qp --qf '%{PACKAGER}' "$rpm")|$(rpm -qp --qf '%{PACKAGER}' "$prpm")"
check_eq "RPM: its changelog by the same" "$maint" \
	"$(rpm -qp --qf '%{CHANGELOGNAME}' "$rpm" | sed 's/ - [^ ]*$//')"

# ---- RPM: install, edit, upgrade (scratch root) -------------------------
RR=$T/rpmroot
mkdir -p "$RR"
rpmr() { timeout 120 rpm --root "$RR" --force-debian "$@" </dev/null; }
rpmdb --root "$RR" --initdb
rpmr -i --nodeps --noscripts "$rpm" "$prpm" >"$T/rpm-install.log" 2>&1
check_eq "rpm -i into a scratch root" 0 "$?" || diag "$(tail -5 "$T/rpm-install.log")"
rel1=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$rpm")
check_eq "installed: release 1" "fwdalloc-$rel1" "$(rpmr -q --qf '%{NAME}-%{VERSION}-%{RELEASE}' fwdalloc 2>&1)"
echo "# site edit" >>"$RR/etc/fwdalloc/fwdalloc.yaml"
echo "# site topology edit" >>"$RR/etc/fwdalloc/topology.yaml"
# Release 2: the files of release 1 packaged again by the shipped spec's
# own header and %files (no second compilation), the shipped policy
# changed.
X=$T/rpm2/tree
mkdir -p "$X" "$T/rpm2/BUILD"
for f in "$rpm" "$prpm"; do
	cp "$f" "$T/rpm2/pkg.rpm"
	rpm2archive "$T/rpm2/pkg.rpm" && tar -xzf "$T/rpm2/pkg.rpm.tgz" -C "$X"
done
rm -rf "$X/usr/lib/.build-id" "$X/usr/share/licenses"
echo "# shipped in release 2" >>"$X/etc/fwdalloc/fwdalloc.yaml"
cp "$src/LICENSE" "$T/rpm2/BUILD/"
awk -v tree="$X" '
	/^Release:/ { print "Release:        2%{?dist}"; next }
	/^%prep/ { skip = 1; print "%install\ncp -a " tree "/. %{buildroot}/\n"; next }
	/^%files/ { skip = 0 }
	!skip { print }' "$src/fwdalloc.spec" >"$T/rpm2/fwdalloc.spec"
rpmbuild -bb --nodeps --define "_topdir $T/rpm2" --define "debug_package %{nil}" \
	--define "_build_id_links none" "$T/rpm2/fwdalloc.spec" >"$T/rpm2.log" 2>&1
check_eq "release 2 packaged" 0 "$?" || diag "$(tail -10 "$T/rpm2.log")"
rpm2=$(ls "$T"/rpm2/RPMS/*/fwdalloc-"$version"-2*.rpm 2>/dev/null)
rpmr -U --nodeps --noscripts "$rpm2" >"$T/rpm-upgrade.log" 2>&1
check_eq "rpm -U to release 2" 0 "$?" || diag "$(tail -5 "$T/rpm-upgrade.log")"
check_eq "upgraded" "fwdalloc-$version-2" "$(rpmr -q --qf '%{NAME}-%{VERSION}-%{RELEASE}' fwdalloc 2>&1)"
check_eq "rpm -U keeps the edited policy (shipped file changed)" "# site edit" \
	"$(tail -1 "$RR/etc/fwdalloc/fwdalloc.yaml")"
check_eq "... and leaves the new default next to it as .rpmnew" \
	"# shipped in release 2" "$(tail -1 "$RR/etc/fwdalloc/fwdalloc.yaml.rpmnew" 2>&1)"
check_eq "rpm -U keeps the edited topology (shipped file unchanged), no .rpmnew" \
	"# site topology edit|no" \
	"$(tail -1 "$RR/etc/fwdalloc/topology.yaml")|$(test -e "$RR/etc/fwdalloc/topology.yaml.rpmnew" && echo yes || echo no)"

tap_done
