# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/: set-up, test and demo drivers, the local mini-cluster.
EXTRA_DIST += scripts/install-deps scripts/test scripts/demo scripts/testdb \
	scripts/minicluster scripts/bench-table
