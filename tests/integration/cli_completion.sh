#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bash completion of fwdctl (etc/fwdctl.bash-completion): commands,
# actions and options from fwdctl's help, policy keys from `policy keys`,
# forwarder and OST names from the topology.
set -u
. "$top_srcdir/tests/integration/tap.sh"
PATH=$top_builddir:$PATH
. "$top_srcdir/etc/fwdctl.bash-completion"

comp() { # WORDS...: the completions of the last word
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_fwdctl
	printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd ' '
}

check_eq "commands" "health" "$(comp fwdctl he)"
check_eq "global options" "--policy" "$(comp fwdctl --pol)"
check_eq "actions of trace" "compress expand ingest summarize" \
	"$(comp fwdctl trace '' | tr ' ' '\n' | grep -v '^-' | paste -sd ' ')"
check_eq "options of audit" "--since" "$(comp fwdctl audit --si)"
check_eq "table options" "--noheader" "$(comp fwdctl alloc list --noh)"
check_eq "table options of topology show" "--parsable" "$(comp fwdctl topology show --pars)"
check_eq "table options of health report" "--noheader" "$(comp fwdctl health report --nohe)"
check_eq "table options of sim" "--parsable" "$(comp fwdctl sim --pars)"
check_eq "table options of policy keys" "--noheader" "$(comp fwdctl policy keys --nohe)"
check_eq "policy keys: not the table's header" "" "$(comp fwdctl policy keys KE)"
check_eq "policy keys" \
	"decision.caps.max_forwarders_per_job decision.caps.max_pool_share decision.caps.reserve" \
	"$(comp fwdctl policy keys decision.caps)"
check_eq "forwarder names of the topology given" \
	"fwd01 fwd02 fwd03 fwd04 fwd05 fwd06 fwd07 fwd08 fwd09 fwd10 fwd11 fwd12" \
	"$(comp fwdctl --topology "$top_srcdir/etc/topology.yaml" health exclude fwd)"
check_match "OST names too" "^lustre-OST" \
	"$(comp fwdctl --topology "$top_srcdir/etc/topology.yaml" health release lus)"

tap_done
