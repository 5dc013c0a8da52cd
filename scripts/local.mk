# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/: set-up, test and demo drivers, the local mini-cluster.
EXTRA_DIST += scripts/install-deps scripts/test scripts/demo scripts/testdb \
	scripts/minicluster scripts/bench-table scripts/release-matrix \
	scripts/failed-checks

# Packaging: debian/ (dpkg-buildpackage -b) and the RPM spec.
EXTRA_DIST += debian/control debian/rules debian/changelog debian/copyright \
	debian/source/format debian/fwdalloc.install \
	debian/slurm-spank-fwdalloc.install debian/fwdalloc.lintian-overrides \
	rpm/fwdalloc.spec.in
# The spec configure wrote goes into the tarball: rpmbuild -tb reads it.
dist-hook: dist-fwdalloc-spec
dist-fwdalloc-spec: rpm/fwdalloc.spec
	cp rpm/fwdalloc.spec $(distdir)/fwdalloc.spec
.PHONY: dist-fwdalloc-spec
