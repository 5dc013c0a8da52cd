#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every bounded policy key at both edges of its range, the table generated
# from `fwdctl policy keys`: a bound that is part of the range is accepted,
# the value just past it (or the bound itself when it is excluded) is
# refused with a message naming the key.  Fractions are [0,1].
set -u
. "$top_srcdir/tests/integration/tap.sh"

fwdctl=$top_builddir/fwdctl
[ -x "$fwdctl" ] || skip_all "fwdctl not built"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset FWDALLOC_POLICY

# policy KEY VALUE: a policy file setting only the dotted KEY to VALUE.
policy() {
	echo "$1" | awk -F. -v v="$2" '{
		for (i = 1; i <= NF; i++) {
			printf "%*s%s:", 2 * (i - 1), "", $i
			if (i < NF) printf "\n"; else printf " %s\n", v
		}
	}' >"$tmp/p.yaml"
}

# try KEY VALUE WANT (accepted|refused)
try() {
	policy "$1" "$2"
	"$fwdctl" policy check "$tmp/p.yaml" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$3" = accepted ]; then
		check_eq "$1 = $2 accepted" 0 "$rc" || diag "$(cat "$tmp/err")"
	else
		check_eq "$1 = $2 refused" 1 "$rc"
		check_match "$1 = $2: the message names the key" \
			"$1: value '$2'" "$(cat "$tmp/err")"
	fi
}

# The value just below LO / above HI, in the key's notation.
below() {
	case $1 in
	integer) echo $(($2 - 1)) ;;
	duration) [ "$2" = 0 ] && echo -1s || echo "$(($2 - 1))s" ;;
	*) awk -v x="$2" 'BEGIN { printf "%.2f\n", x - 0.01 }' ;;
	esac
}
above() {
	case $1 in
	integer) echo $(($2 + 1)) ;;
	duration) echo "$(($2 + 1))s" ;;
	*) awk -v x="$2" 'BEGIN { printf "%.2f\n", x + 0.01 }' ;;
	esac
}
# A value inside the range just past an excluded lower bound.
inside() {
	case $1 in
	duration) echo 1ms ;;
	*) awk -v x="$2" 'BEGIN { printf "%.3f\n", x + 0.001 }' ;;
	esac
}
unit() { [ "$1" = duration ] && echo "$2s" || echo "$2"; }

"$fwdctl" policy keys >"$tmp/keys" 2>"$tmp/err"
check_eq "policy keys exits 0" 0 "$?"
# KEY TYPE RANGE, fractions given their range [0,1].
awk 'NR > 1 && $3 != "-" { print $1, $2, $3 }
     NR > 1 && $2 == "fraction" { print $1, $2, "[0,1]" }' "$tmp/keys" \
	>"$tmp/ranged"
n=$(wc -l <"$tmp/ranged")
check "at least 40 keys have a range (got $n)" [ "$n" -ge 40 ]

while read -r key type range; do
	lo=$(echo "$range" | sed 's/^[[(]\([^,]*\),.*/\1/')
	hi=$(echo "$range" | sed 's/.*,\([^])]*\)[])]$/\1/')
	case $range in
	\[*) try "$key" "$(unit "$type" "$lo")" accepted
	     try "$key" "$(below "$type" "$lo")" refused ;;
	\(*) try "$key" "$(unit "$type" "$lo")" refused
	     try "$key" "$(inside "$type" "$lo")" accepted ;;
	esac
	[ "$hi" = inf ] && continue
	case $range in
	*\]) try "$key" "$(unit "$type" "$hi")" accepted
	     try "$key" "$(above "$type" "$hi")" refused ;;
	*\)) try "$key" "$(unit "$type" "$hi")" refused ;;
	esac
done <"$tmp/ranged"

# A list with a bound on its length: database.hosts, at most 16 servers.
hosts() {
	i=1
	printf 'database:\n  hosts:\n' >"$tmp/p.yaml"
	while [ "$i" -le "$1" ]; do
		printf '    - db%d:3306\n' "$i" >>"$tmp/p.yaml"
		i=$((i + 1))
	done
}
hosts 16
"$fwdctl" policy check "$tmp/p.yaml" >/dev/null 2>"$tmp/err"
check_eq "database.hosts with 16 servers accepted" 0 "$?" ||
	diag "$(cat "$tmp/err")"
hosts 17
"$fwdctl" policy check "$tmp/p.yaml" >/dev/null 2>"$tmp/err"
check_eq "database.hosts with 17 servers refused" 1 "$?"
check_match "17 servers: says the bound" "17 endpoints: at most 16" \
	"$(cat "$tmp/err")"

# policy show quotes a string only as much as it must: YAML value |
# printed.  Printable characters stay as they are, control characters are
# escaped, the reserved words and leading punctuation are quoted.
while IFS='|' read -r yaml want; do
	printf 'database:\n  user: %s\n' "$yaml" >"$tmp/p.yaml"
	got=$("$fwdctl" policy show "$tmp/p.yaml" 2>"$tmp/err" |
		sed -n 's/^  user: //p')
	check_eq "policy show: user $yaml" "$want" "$got" ||
		diag "$(cat "$tmp/err")"
done <<'EOF'
alice|alice
"a b"|"a b"
"a\tb"|"a\x09b"
"a!b"|"a!b"
"~"|"~"
"yes"|"yes"
"-x"|"-x"
EOF

# A relative topology path is relative to the policy file's directory,
# shown absolute and resolved however the policy was named: policy path |
# the topology shown (from $tmp, where sub/ holds the policy, link -> sub).
mkdir -p "$tmp/sub"
printf 'topology: topo.yaml\n' >"$tmp/sub/p.yaml"
ln -s sub "$tmp/link"
real=$(cd "$tmp/sub" && pwd -P)
while IFS='|' read -r path want; do
	got=$(cd "$tmp" && "$fwdctl" policy show "$path" 2>"$tmp/err" |
		sed -n 's/^topology: //p')
	check_eq "policy $path: topology shown as $want" "$want" "$got" ||
		diag "$(cat "$tmp/err")"
done <<EOF
sub/p.yaml|$real/topo.yaml
./sub/p.yaml|$real/topo.yaml
link/p.yaml|$real/topo.yaml
sub/../link/p.yaml|$real/topo.yaml
$tmp/sub/p.yaml|$real/topo.yaml
EOF

tap_done
