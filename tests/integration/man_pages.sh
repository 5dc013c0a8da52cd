#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The manual pages: each renders with `man -l` without a groff warning;
# fwdctl(8) has a section for every command `fwdctl --help` lists;
# fwdalloc.yaml(5) lists every key the policy loader accepts
# (`fwdctl policy keys`); the plugin page names the plugstack line and
# the Slurm release the plugin was built for.
set -u
. "$top_srcdir/tests/integration/tap.sh"

fwdctl=$top_builddir/fwdctl
doc=$top_builddir/doc
command -v man >/dev/null || skip_all "man not installed (Debian package man-db)"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

render() { MANWIDTH=200 MAN_KEEP_FORMATTING= man --warnings -l "$1" 2>"$T/warn" | col -bx; }

for p in fwdctl.8 fwdalloc.yaml.5 fwdalloc-topology.5 spank-fwdalloc.8; do
	render "$doc/$p" >"$T/$p.txt"
	check_eq "$p: renders without warnings" "" "$(cat "$T/warn")"
	check "$p: renders to text" test -s "$T/$p.txt"
done

# Sub-headings of fwdctl(8)'s COMMANDS are indented by three spaces.
cmds=$("$fwdctl" --help | awk '/^Commands:/ { f = 1; next }
	f && /^  [a-z]/ { print $1 } f && /^$/ { exit }')
check_match "fwdctl --help lists commands" "policy" "$cmds"
missing=
for c in $cmds; do
	grep -q "^   $c\$" "$T/fwdctl.8.txt" || missing="$missing $c"
	grep -Eq "^ *(Usage: )?fwdctl (.*[] ] *)?$c( |\$)" "$T/fwdctl.8.txt" ||
		missing="$missing $c(usage)"
done
check_eq "fwdctl(8): a section and the usage of every command" "" "$missing"

# Each key is a line of its own, indented (7 spaces up to groff 1.23, 5
# from 1.24 on).
keys=$("$fwdctl" policy keys -n | awk '{ print $1 }')
check_eq "policy keys: as many as the JSON list" \
	"$("$fwdctl" --json policy keys | jq length)" "$(printf '%s\n' $keys | wc -l)"
missing=
for k in $keys; do
	grep -q "^ \+$k\$" "$T/fwdalloc.yaml.5.txt" || missing="$missing $k"
done
check_eq "fwdalloc.yaml(5): every key the loader accepts" "" "$missing"
check_match "fwdalloc.yaml(5): a key with its type and range" \
	"duration, \\(0,3600\\]" "$(grep -A1 '^ \+decision.decide_timeout$' "$T/fwdalloc.yaml.5.txt")"
check_match "fwdalloc-topology(5): the keys of a forwarder" \
	"bandwidth +benchmarked peak" "$(cat "$T/fwdalloc-topology.5.txt")"
check_match "spank-fwdalloc(8): the plugstack line with this build's paths" \
	"optional /.*/fwdalloc.so policy=/.*/fwdalloc/fwdalloc.yaml" \
	"$(cat "$T/spank-fwdalloc.8.txt")"
check_match "fwdctl(8): the JSON error document of a failed --json command" \
	'\{"error": "fwdctl CMD: MESSAGE", "exit": STATUS\}' "$(cat "$T/fwdctl.8.txt")"
check_match "fwdctl(8): the one timestamp style" \
	'Every +command +prints +a +time +as +ISO +8601 +in +UTC' "$(cat "$T/fwdctl.8.txt")"
check_match "spank-fwdalloc(8): the option" "--io-upgrade" "$(cat "$T/spank-fwdalloc.8.txt")"
rel=$(sed -n 's/^SLURM_RELEASE = //p' "$top_builddir/Makefile")
re=$(printf '%s' "$rel" | sed 's/\./\\./g')
check_match "spank-fwdalloc(8): the Slurm release it was built for ($rel)" \
	"This +build +is +for +Slurm +$re +and +loads +only +in +Slurm +$re\\.x" \
	"$(cat "$T/spank-fwdalloc.8.txt")"

tap_done
