# SPDX-License-Identifier: GPL-2.0-or-later
# tests/: every test speaks TAP (cmocka with CMOCKA_MESSAGE_OUTPUT=TAP,
# shell tests through tests/integration/tap.sh), so `make check` counts
# individual test cases, not programs.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
AM_TESTS_ENVIRONMENT += CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT;
EXTRA_DIST += tests/integration/tap.sh tests/fixtures
# automake does not distribute the TAP driver autogen.sh copies in.
EXTRA_DIST += build-aux/tap-driver.sh

# No test may hang the suite: each gets a wall-clock limit (a hung server
# client is killed, the test fails, the run goes on).
FWD_TEST_TIMEOUT = timeout --kill-after=15 900
LOG_COMPILER = $(FWD_TEST_TIMEOUT)
SH_LOG_COMPILER = $(FWD_TEST_TIMEOUT) $(SHELL)
