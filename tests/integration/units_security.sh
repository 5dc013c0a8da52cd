#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The systemd units are hardened: `systemd-analyze security --offline`
# rates each service below 5 (it rated reconcile 9.2 and health-scan 8.8
# UNSAFE), and the sandbox leaves writable only the audit directory;
# `systemd-analyze verify` finds nothing to say about any service or timer
# (fwdctl taken from the build tree: it is not installed here).
set -u
. "$top_srcdir/tests/integration/tap.sh"

command -v systemd-analyze >/dev/null ||
	skip_all "systemd-analyze not installed (Debian package systemd)"
systemd-analyze security --help 2>/dev/null | grep -q -- --offline ||
	skip_all "systemd-analyze security has no --offline (systemd < 250)"

quiet() { "$@" >/dev/null 2>&1; }

for u in fwdalloc-reconcile fwdalloc-health-scan fwdalloc-history fwdallocd; do
	f=$top_builddir/etc/$u.service
	out=$(systemd-analyze security --offline=yes "$f" 2>&1)
	score=$(printf '%s\n' "$out" | sed -n 's/^→ Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
	check_match "$u: rated" '^[0-9]+\.[0-9]+$' "$score"
	check "$u: exposure $score below 5" awk -v s="$score" 'BEGIN { exit !(s != "" && s < 5) }'
	check "$u: --threshold=49 passes" quiet \
		systemd-analyze security --offline=yes --threshold=49 "$f"
	# (the audit directory is under configure's localstatedir: /var by
	# default, elsewhere under make distcheck)
	check_match "$u: writes only the audit directory" \
		'^ProtectSystem=strict\|ReadWritePaths=-/[^ |]*/log/fwdalloc$' \
		"$(grep -E '^(ProtectSystem|ReadWritePaths)=' "$f" | paste -sd '|')"
done

# systemd-analyze verify: no warning, no error, for every unit.  Unknown
# keys are only warnings (exit 0), so its output must be empty; a unit with
# one shows the check can fail.
V=$(mktemp -d /tmp/fwd-units.XXXXXX)
trap 'rm -rf "$V"' EXIT
bin=$(cd "$top_builddir" && pwd)
for u in fwdalloc-reconcile fwdalloc-health-scan fwdalloc-history; do
	sed "s|^\(ExecStart=-\{0,1\}\)/[^ ]*/fwdctl |\1$bin/fwdctl |" \
		"$top_builddir/etc/$u.service" >"$V/$u.service"
	cp "$top_srcdir/etc/$u.timer" "$V/"
done
sed "s|^ExecStart=/[^ ]*/fwdallocd$|ExecStart=$bin/fwdallocd|" \
	"$top_builddir/etc/fwdallocd.service" >"$V/fwdallocd.service"
check_eq "ExecStart of the controller service is fwdallocd" 1 \
	"$(grep -c "^ExecStart=$bin/fwdallocd$" "$V/fwdallocd.service")"
check_eq "ExecStart of every service is fwdctl" 4 "$(grep -c "^ExecStart=-\{0,1\}$bin/fwdctl " "$V"/*.service | awk -F: '{ n += $2 } END { print n }')"
out=$(systemd-analyze verify --man=no "$V"/*.service "$V"/*.timer 2>&1)
check_eq "systemd-analyze verify: exit 0" 0 "$?"
check_eq "systemd-analyze verify: nothing to say" "" "$out"
sed 's/^\[Service\]$/[Service]\nRestrictFoo=yes/' "$V/fwdalloc-history.service" >"$V/bad.service"
check_match "... and it does say something of an unknown key" \
	"bad.service:[0-9]+: Unknown key 'RestrictFoo'" \
	"$(systemd-analyze verify --man=no "$V/bad.service" 2>&1)"

tap_done
