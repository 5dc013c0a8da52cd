#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The packages.  From `make dist`: dpkg-buildpackage -b builds fwdalloc and
# slurm-spank-fwdalloc, the plugin depending on the Slurm release it was
# built against (the libslurm it links, slurm-wlm-basic-plugins >= that
# release and << the next minor number, both read here from this host's
# slurm/slurm_version.h) and saying so in its description; lintian finds
# no error, both install into a scratch root (dpkg --instdir:
# nothing of this machine changes) with their configuration as conffiles
# and tmpfiles.d run; an administrator's edits survive an upgrade (silently
# when the shipped file did not change, with --force-confold and a
# .dpkg-dist when it did); the installed plugin loads in the mini-cluster.
# rpmbuild -tb builds the RPMs with every configuration file
# %config(noreplace), the plugin requiring slurm >= that release and < the
# next minor number; installed into a scratch root (rpm --root), an edited
# configuration file survives `rpm -U` to a higher release, the new
# default left next to it as .rpmnew.  Every package names the same
# maintainer, the project's own address (not a placeholder).  Works with
# rpm 4.18 (Debian 12), 4.20 (Debian 13) and 6 (testing): Debian's
# --force-debian only where rpm has it, payloads read by rpm2archive from
# standard input (its output for a file argument changed).
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

# The Slurm release of this host's headers, and the next minor number: the
# packages' bounds (22.05 -> 22.06, 24.11 -> 24.12).
slurm_number=$(echo SLURM_VERSION_NUMBER |
	cc -E -P -include slurm/slurm_version.h -x c - 2>/dev/null | tail -n 1)
case $slurm_number in
0x[0-9a-fA-F]*) ;;
*) echo "Bail out! slurm/slurm_version.h: no SLURM_VERSION_NUMBER"; exit 1 ;;
esac
slurm_major=$((slurm_number >> 16 & 255))
slurm_minor=$((slurm_number >> 8 & 255))
slurm_release=$(printf '%d.%02d' "$slurm_major" "$slurm_minor")
slurm_next=$(printf '%d.%02d' "$slurm_major" $((slurm_minor + 1)))
re_release=$(printf '%s' "$slurm_release" | sed 's/\./\\./g')
re_next=$(printf '%s' "$slurm_next" | sed 's/\./\\./g')

# ---- build ---------------------------------------------------------------
make --no-print-directory -s -C "$top_builddir" dist-gzip >"$T/dist.log" 2>&1
check "make dist" test -f "$top_builddir/fwdalloc-$version.tar.gz" ||
	{ diag "$(tail -20 "$T/dist.log")"; tap_done; exit 1; }
tar -C "$T" -xzf "$top_builddir/fwdalloc-$version.tar.gz"
src=$T/fwdalloc-$version
# The RPM builds alongside the .deb: one core each.  Its exit status goes
# to a file: bash 5.3 (Debian testing) was seen to answer `wait PID` for
# this finished job with "pid N is not a child of this shell" (127).
(rpmbuild -tb --nodeps --define "_topdir $T/rpm" --define "_smp_mflags -j1" \
	"$top_builddir/fwdalloc-$version.tar.gz"; echo $? >"$T/rpm.rc") \
	>"$T/rpm.log" 2>&1 &
rpm_pid=$!
(cd "$src" && DEB_BUILD_OPTIONS=parallel=1 dpkg-buildpackage -b -uc -us) \
	>"$T/deb.log" 2>&1
check_eq "dpkg-buildpackage -b" 0 "$?" || diag "$(tail -20 "$T/deb.log")"
deb=$T/fwdalloc_${version}_amd64.deb
plug=$T/slurm-spank-fwdalloc_${version}_amd64.deb
check "fwdalloc .deb built" test -f "$deb"
check "slurm-spank-fwdalloc .deb built" test -f "$plug"
[ -f "$deb" ] && [ -f "$plug" ] || { wait; tap_done; exit 1; }

slurmlib=$(dpkg -S "$(readlink -f "$(cc -print-file-name=libslurm.so)")" | sed 's/[:,].*//')
depends=$(dpkg-deb -f "$plug" Depends)
check_match "the plugin depends on the libslurm it was built with ($slurmlib >= $slurm_release)" \
	"(^|, )$slurmlib \\(>= ([0-9]+:)?$re_release[).]" "$depends"
check_match "... on slurm-wlm-basic-plugins >= $slurm_release" \
	"(^|, )slurm-wlm-basic-plugins \\(>= ([0-9]+:)?$re_release\\)" "$depends"
check_match "... and << $slurm_next~ (Slurm $slurm_release.x only)" \
	"(^|, )slurm-wlm-basic-plugins \\(<< ([0-9]+:)?$re_next~\\)" "$depends"
check_match "the plugin's description: built for Slurm $slurm_release" \
	"Built for Slurm $re_release\\." "$(dpkg-deb -f "$plug" Description)"
check_match "fwdalloc's description: Slurm $slurm_release's libslurm" \
	"libslurm of Slurm $re_release\\." "$(dpkg-deb -f "$deb" Description)"
check_eq "fwdalloc's conffiles" \
	"/etc/fwdalloc/fwdalloc.yaml
/etc/fwdalloc/slurm.conf.fwdalloc
/etc/fwdalloc/topology.yaml
/etc/logrotate.d/fwdalloc" \
	"$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | sort)"
check_eq "fwdalloc's examples: in the documentation, uncompressed (as \`fwdctl sim --help\` names them)" \
	"./usr/share/doc/fwdalloc/examples/fwdalloc.yaml
./usr/share/doc/fwdalloc/examples/sim-curves.csv
./usr/share/doc/fwdalloc/examples/sim-jobs.csv
./usr/share/doc/fwdalloc/examples/topology-taihulight.yaml" \
	"$(dpkg-deb -c "$deb" | awk '{ print $6 }' | grep '/examples/.' | sort)"
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
wait "$rpm_pid" 2>/dev/null
while [ ! -s "$T/rpm.rc" ] && kill -0 "$rpm_pid" 2>/dev/null; do sleep 1; done
check_eq "rpmbuild -tb" 0 "$(cat "$T/rpm.rc" 2>/dev/null)" ||
	diag "$(tail -10 "$T/rpm.log")"
rpm=$(ls "$T"/rpm/RPMS/*/fwdalloc-"$version"-*.rpm 2>/dev/null)
prpm=$(ls "$T"/rpm/RPMS/*/slurm-spank-fwdalloc-"$version"-*.rpm 2>/dev/null)
check "both RPMs built" test -f "$rpm" -a -f "$prpm" || { tap_done; exit 1; }
flags() {
	rpm -qp --qf '[%{FILEFLAGS:fflags}|%{FILENAMES}\n]' "$1" |
		awk -F'|' '$1 ~ /c/ { print $1, $2 }'
}
check_eq "RPM: every configuration file %config(noreplace)" \
	"cn /etc/fwdalloc/fwdalloc.yaml
cn /etc/fwdalloc/slurm.conf.fwdalloc
cn /etc/fwdalloc/topology.yaml
cn /etc/logrotate.d/fwdalloc
cn /etc/slurm/plugstack.conf.d/fwdalloc.conf" \
	"$( { flags "$rpm"; flags "$prpm"; } | sort -k2)"
check_eq "RPM: the plugin requires slurm >= $slurm_release and < $slurm_next~ (Slurm $slurm_release.x only)" \
	"slurm(x86-64) < $slurm_next~|slurm(x86-64) >= $slurm_release" \
	"$(rpm -qp --requires "$prpm" | grep '^slurm' | sort | paste -sd '|')"
check_eq "RPM: the plugin's summary names the release" \
	"fwdalloc SPANK plugin for Slurm $slurm_release" "$(rpm -qp --qf '%{SUMMARY}' "$prpm")"
check_match "RPM: ... and so does its description" \
	"Built for Slurm $re_release\\." "$(rpm -qp --qf '%{DESCRIPTION}' "$prpm")"
check_eq "RPM: both packaged by the .deb's maintainer" "$maint|$maint" \
	"$(rpm -qp --qf '%{PACKAGER}' "$rpm")|$(rpm -qp --qf '%{PACKAGER}' "$prpm")"
check_eq "RPM: its changelog by the same" "$maint" \
	"$(rpm -qp --qf '%{CHANGELOGNAME}' "$rpm" | sed 's/ - [^ ]*$//')"

# ---- RPM: install, edit, upgrade (scratch root) -------------------------
RR=$T/rpmroot
mkdir -p "$RR"
# Debian's rpm up to 4.18 wants --force-debian to install; 4.20 has no
# such option.
force_debian=
rpm --help 2>/dev/null | grep -q -- '--force-debian' && force_debian=--force-debian
rpmr() { timeout 120 rpm --root "$RR" $force_debian "$@" </dev/null; }
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
# unpack RPM...: the RPMs' files under $X.  rpm2archive FILE writes
# FILE.tgz in rpm 4.18 and the archive to standard output from 4.20 on;
# given no file name, every version reads standard input and writes
# standard output (-n: an uncompressed tar).  rpm2cpio | cpio where
# rpm2archive is missing.
unpack() {
	local f
	for f; do
		if command -v rpm2archive >/dev/null; then
			rpm2archive -n <"$f" >"$T/rpm2/pkg.tar" &&
				tar -xf "$T/rpm2/pkg.tar" -C "$X" || return 1
		else
			(cd "$X" && rpm2cpio "$f" | cpio -idm --quiet) || return 1
		fi
	done
}
X=$T/rpm2/tree
mkdir -p "$X"
check "release 1's files unpacked" unpack "$rpm" "$prpm"
rm -rf "$X/usr/lib/.build-id" "$X/usr/share/licenses"
echo "# shipped in release 2" >>"$X/etc/fwdalloc/fwdalloc.yaml"
# %license LICENSE is taken from the directory %install runs in (its place
# changed in rpm 4.20): copied there.
awk -v tree="$X" -v lic="$src/LICENSE" '
	/^Release:/ { print "Release:        2%{?dist}"; next }
	/^%prep/ { skip = 1; print "%install\ncp -a " tree "/. %{buildroot}/\ncp " lic " .\n"; next }
	/^%files/ { skip = 0 }
	!skip { print }' "$src/fwdalloc.spec" >"$T/rpm2/fwdalloc.spec"
rpmbuild -bb --nodeps --define "_topdir $T/rpm2" --define "debug_package %{nil}" \
	--define "_build_id_links none" "$T/rpm2/fwdalloc.spec" >"$T/rpm2.log" 2>&1
check_eq "release 2 packaged" 0 "$?" || diag "$(tail -10 "$T/rpm2.log")"
rpm2=$(ls "$T"/rpm2/RPMS/*/fwdalloc-"$version"-2*.rpm 2>/dev/null)
[ -f "$rpm2" ] || { tap_done; exit 1; }
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
