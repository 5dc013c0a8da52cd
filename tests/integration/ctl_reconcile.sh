#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fwdctl reconcile without Slurm's configuration: exit 3 (a service is
# unavailable, as documented) with the path in the message, at once:
# libslurm's slurm_init() would otherwise search DNS for a configless
# controller for about a minute and then exit the process with status 1.
set -u
. "$top_srcdir/tests/integration/tap.sh"
. "$top_srcdir/tests/integration/db_lib.sh"

db_start
fw db init
check_eq "db init" 0 "$rc"

t0=$(date +%s)
out=$(SLURM_CONF=/nonexistent/slurm.conf "$fwdctl" --policy "$policy" reconcile 2>&1)
rc=$?
diag "reconcile took $(($(date +%s) - t0)) s"
check_eq "missing SLURM_CONF: exit 3" 3 "$rc"
check_eq "missing SLURM_CONF: says which file" \
	"fwdctl reconcile: Slurm's configuration SLURM_CONF=/nonexistent/slurm.conf: No such file or directory" \
	"$out"
out=$(SLURM_CONF=/nonexistent/slurm.conf "$fwdctl" --policy "$policy" reconcile --json 2>/dev/null)
check_eq "--json on failure: the error as one JSON object, exit 3" \
	"fwdctl reconcile: Slurm's configuration SLURM_CONF=/nonexistent/slurm.conf: No such file or directory|3" \
	"$(printf '%s' "$out" | jq -r '"\(.error)|\(.exit)"' 2>&1)"

tap_done
