#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What `make install` puts on a machine: every path an installed snippet,
# wrapper or unit names is where this build installed the thing (also
# under a non-default prefix); the plugstack snippet is a *.conf in
# plugstack.conf.d/ (Debian's stock include); tmpfiles.d creates the audit
# and state directories owned by SlurmUser; logrotate rotates the audit
# file; a re-install keeps an edited configuration and `make uninstall`
# leaves it in place.
set -u
. "$top_srcdir/tests/integration/tap.sh"

T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
D=$T/root
# Sub-makes of `make check` would print their directories into outputs.
unset MAKEFLAGS MFLAGS MAKELEVEL
mk() { make --no-print-directory "$@"; }

# ---- 1. a non-default prefix: the generated files follow configure ------
mkdir "$T/b"
if (cd "$T/b" && "$top_srcdir/configure" -q --prefix=/opt/fwd \
	--sysconfdir=/opt/fwd/etc --localstatedir=/srv/fwdvar \
	--with-slurm-plugindir=/opt/slurm/plugins \
	--with-slurm-sysconfdir=/opt/slurm/etc --with-slurm-user=daemon \
	>"$T/configure.log" 2>&1 &&
	mk -s etc/plugstack.conf.fwdalloc etc/slurm.conf.fwdalloc \
		etc/fwdalloc.tmpfiles etc/fwdalloc.logrotate \
		etc/fwdalloc-reconcile.service etc/fwdalloc-health-scan.service \
		etc/fwdalloc-history.service etc/fwdallocd.service \
		etc/fwdalloc.yaml.dist cli/prolog-slurmctld >"$T/make.log" 2>&1)
then pass "configure --prefix=/opt/fwd generates the snippets"
else fail "configure --prefix=/opt/fwd generates the snippets"
	diag "$(tail -n 5 "$T/configure.log" "$T/make.log" 2>&1)"; fi
b=$T/b
check_eq "plugstack line: plugin and policy under the configured paths" \
	"optional /opt/slurm/plugins/fwdalloc.so policy=/opt/fwd/etc/fwdalloc/fwdalloc.yaml" \
	"$(grep -v '^#' "$b/etc/plugstack.conf.fwdalloc" 2>/dev/null)"
check_eq "slurm.conf lines: the wrappers under libexecdir" \
	"PrologSlurmctld=/opt/fwd/libexec/fwdalloc/prolog-slurmctld
EpilogSlurmctld=/opt/fwd/libexec/fwdalloc/epilog-slurmctld
PlugStackConfig=/opt/slurm/etc/plugstack.conf" \
	"$(grep -E '^(Prolog|Epilog)Slurmctld|^PlugStack' "$b/etc/slurm.conf.fwdalloc" 2>/dev/null)"
# The prolog hook is a static program: the paths it was built with.
hook_paths() { grep -aoE '/opt/fwd/[a-z/]+fwd[a-z.]+|/srv/fwdvar/[a-z/]+\.sock' "$1" 2>/dev/null | sort -u | paste -sd ' '; }
check_eq "prolog hook: fwdctl from bindir, the policy from sysconfdir, the socket under runstatedir" \
	"/opt/fwd/bin/fwdctl /opt/fwd/etc/fwdalloc/fwdalloc.yaml /srv/fwdvar/run/fwdalloc/fwdallocd.sock" \
	"$(hook_paths "$b/cli/prolog-slurmctld")"
check_eq "controller service unit: ExecStart from sbindir, as SlurmUser" \
	"ExecStart=/opt/fwd/sbin/fwdallocd|User=daemon" \
	"$(grep -E '^(ExecStart|User)=' "$b/etc/fwdallocd.service" 2>/dev/null | sort | paste -sd '|')"
check_eq "units: ExecStart from bindir" \
	"ExecStart=/opt/fwd/bin/fwdctl reconcile
ExecStart=-/opt/fwd/bin/fwdctl db prune
ExecStart=/opt/fwd/bin/fwdctl health scan
ExecStart=/opt/fwd/bin/fwdctl history run" \
	"$(cat "$b/etc/fwdalloc-reconcile.service" "$b/etc/fwdalloc-health-scan.service" "$b/etc/fwdalloc-history.service" 2>/dev/null | grep '^ExecStart=')"
check_eq "tmpfiles.d: the audit directory SlurmUser's, the node state root's" \
	"d /srv/fwdvar/log/fwdalloc 0750 daemon daemon - -
d /srv/fwdvar/lib/fwdalloc 0700 root root - -" \
	"$(grep '^d' "$b/etc/fwdalloc.tmpfiles" 2>/dev/null | tr -s ' ')"
check_eq "logrotate: the audit file under localstatedir, its owner kept (no account named)" \
	"/srv/fwdvar/log/fwdalloc/audit.jsonl {|create 0640" \
	"$(grep -E '^/|^\s*(su|create) ' "$b/etc/fwdalloc.logrotate" 2>/dev/null | sed 's/^\s*//' | paste -sd '|')"
check_eq "installed policy: audit file and state dir under localstatedir" \
	"  file: /srv/fwdvar/log/fwdalloc/audit.jsonl
    state_dir: /srv/fwdvar/lib/fwdalloc" \
	"$(grep -E '^  file: |^    state_dir: ' "$b/etc/fwdalloc.yaml.dist" 2>/dev/null)"

# ---- 2. make install of this build into a scratch root -----------------
bd=$top_builddir
mk -s -C "$bd" install DESTDIR="$D" >"$T/install.log" 2>&1
check "make install DESTDIR" test $? -eq 0
conf=$(mk -s -C "$bd" -f Makefile -f - print-dirs <<'MK'
print-dirs:
	@echo "$(sysconfdir) $(slurmconfdir) $(slurm_plugindir) $(libexecdir) $(bindir) $(prefix) $(localstatedir)"
MK
)
read -r sysconf slurmconf plugindir libexec bindir prefix localstate <<<"$conf"
for f in man8/fwdctl.8 man5/fwdalloc.yaml.5 man5/fwdalloc-topology.5 \
	man8/spank-fwdalloc.8; do
	check "manual page $f installed" test -s "$D$prefix/share/man/$f"
done
for f in README.md db/SCHEMA.md monitor/HEALTH.md spank/SLURM.md; do
	check "documentation $f installed" test -s "$D$prefix/share/doc/fwdalloc/$f"
done
# The examples are documentation, not configuration (issue 29).
for f in topology-taihulight.yaml sim-jobs.csv sim-curves.csv; do
	check_eq "example $f: in the documentation's examples, not in sysconfdir" \
		"yes no" \
		"$([ -s "$D$prefix/share/doc/fwdalloc/examples/$f" ] && echo yes || echo no) $([ -e "$D$sysconf/fwdalloc/$f" ] && echo yes || echo no)"
done
check "plugstack snippet installed as plugstack.conf.d/fwdalloc.conf" \
	test -f "$D$slurmconf/plugstack.conf.d/fwdalloc.conf"
# Every absolute path the installed snippets and wrappers name exists in
# the installed tree (the policy file, the plugin, the wrappers, fwdctl).
missing= checked=0
for f in "$D$slurmconf/plugstack.conf.d/fwdalloc.conf" \
	"$D$sysconf/fwdalloc/slurm.conf.fwdalloc" \
	"$D$prefix/lib/systemd/system/fwdallocd.service" \
	"$D$prefix/lib/systemd/system/fwdalloc-reconcile.service"; do
	for p in $(grep -v '^#' "$f" 2>/dev/null | grep -oE '(^|[ ="])/[^ "]+' | tr -d ' ="'); do
		case $p in "$slurmconf/plugstack.conf") continue ;; esac
		checked=$((checked + 1))
		[ -e "$D$p" ] || missing="$missing $p"
	done
done
# ... and the files the static prolog hook runs and names.
for p in "$bindir/fwdctl" "$sysconf/fwdalloc/fwdalloc.yaml"; do
	checked=$((checked + 1))
	grep -aqF "$p" "$D$libexec/fwdalloc/prolog-slurmctld" ||
		missing="$missing (prolog-slurmctld does not name $p)"
	[ -e "$D$p" ] || missing="$missing $p"
done
check_eq "every path named by an installed snippet is installed" "" "$missing"
# plugin + policy, 2 hooks, fwdallocd, fwdctl; the hook's fwdctl + policy
check_eq "paths checked" 8 "$checked"

# tmpfiles.d creates the directories the prolog writes into (--root
# resolves the user in the root's own passwd).
mkdir -p "$D/etc" && cp /etc/passwd /etc/group "$D/etc/"
if systemd-tmpfiles --root="$D" --create \
	"$D$prefix/lib/tmpfiles.d/fwdalloc.conf" >"$T/tmpfiles.log" 2>&1; then
	check_eq "systemd-tmpfiles: audit directory owned by slurm, 0750" \
		"slurm slurm 750" \
		"$(stat -c '%U %G %a' "$D$localstate/log/fwdalloc" 2>&1)"
else
	fail "systemd-tmpfiles --create"; diag "$(cat "$T/tmpfiles.log")"
fi

# logrotate's own parser accepts the file (debug mode: nothing rotated).
if command -v logrotate >/dev/null; then
	mkdir -p "$T/lr"
	sed "s|$localstate/log/fwdalloc|$T/lr|; /^\s*su /d; s/create 0640 .*/create 0640/" \
		"$D$sysconf/logrotate.d/fwdalloc" >"$T/lr.conf"
	: >"$T/lr/audit.jsonl"
	check "logrotate -d accepts the installed file" \
		logrotate -d -s "$T/lr.state" "$T/lr.conf"
else
	fail "logrotate not installed (scripts/install-deps)"
fi

# The installed policy is the short one, what a site sets; the commented
# reference of every key is an example.
pol=$D$sysconf/fwdalloc/fwdalloc.yaml
docdir=$(mk -s -C "$bd" -f Makefile -f - print-docdir <<'MK'
print-docdir:
	@echo "$(docdir)"
MK
)
check "installed policy: the short file (etc/fwdalloc-site.yaml)" \
	cmp -s "$bd/etc/fwdalloc-site.yaml.dist" "$pol"
check_eq "installed policy: only the sections a site sets" \
	"topology access decision database audit remap" \
	"$(grep -oE '^[a-z_]+:' "$pol" | tr -d : | paste -sd ' ')"
check_match "installed policy: short (under 60 lines)" '^[1-5]?[0-9]$' \
	"$(wc -l <"$pol")"
"$bd/fwdctl" policy check "$pol" >"$T/pc.out" 2>&1
check_eq "installed policy: valid" 0 "$?" || diag "$(cat "$T/pc.out")"
check "the commented reference in DOCDIR/examples" \
	cmp -s "$bd/etc/fwdalloc.yaml.dist" "$D$docdir/examples/fwdalloc.yaml"
check_match "the installed policy points to it" "$docdir/examples/fwdalloc.yaml" \
	"$(cat "$pol")"

# ---- 3. upgrade and uninstall keep an edited configuration -------------
topo=$D$sysconf/fwdalloc/topology.yaml
echo "# site edit" >>"$pol"
printf 'forwarders: []\n' >"$topo"
plug=$D$slurmconf/plugstack.conf.d/fwdalloc.conf
sed -i 's/^optional/required/' "$plug"
mk -s -C "$bd" install DESTDIR="$D" >"$T/install2.log" 2>&1
check_eq "re-install keeps the edited policy" "# site edit" "$(tail -1 "$pol")"
check_eq "re-install keeps the edited topology" "forwarders: []" "$(cat "$topo")"
check_match "re-install keeps the edited plugstack line" '^required ' "$(grep -v '^#' "$plug")"
check "the shipped policy is installed next to it as .example" \
	cmp -s "$bd/etc/fwdalloc-site.yaml.dist" "$pol.example"
check_match "re-install says it kept the edit" "kept the edited .*fwdalloc.yaml" \
	"$(cat "$T/install2.log")"
check "an unedited file gets no .example" \
	test ! -e "$D$sysconf/fwdalloc/slurm.conf.fwdalloc.example"
mk -s -C "$bd" uninstall DESTDIR="$D" >"$T/uninstall.log" 2>&1
check "make uninstall keeps the edited policy" test -f "$pol"
check "make uninstall keeps the edited topology" test -f "$topo"
check "make uninstall removes an unedited configuration file" \
	test ! -e "$D$sysconf/fwdalloc/slurm.conf.fwdalloc"
check "make uninstall removes the .example copies" test ! -e "$pol.example"
check "make uninstall removes fwdctl" test ! -e "$D$bindir/fwdctl"

tap_done
