#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Generate ./configure from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf -fi
# automake does not install the TAP driver by itself.
for d in /usr/share/automake-*; do
	[ -f "$d/tap-driver.sh" ] && cp -f "$d/tap-driver.sh" build-aux/ && break
done
