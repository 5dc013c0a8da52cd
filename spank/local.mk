# SPDX-License-Identifier: GPL-2.0-or-later

# ---- remap: node-side remap drivers (libfwdremap) -------------------------
# The remap library, `fwdctl remap` and their unit tests.  The SPANK plugin
# itself has its own block below this one.
noinst_LTLIBRARIES += libfwdremap.la
FWD_REMAP_LIB = libfwdremap.la
libfwdremap_la_SOURCES = \
	spank/remap.h spank/remap_priv.h spank/remap.c spank/remap_util.c \
	spank/remap_exec.c spank/remap_lwfs.c spank/remap_lnet.c \
	spank/remap_verbs.c spank/remap_rdma.c spank/remap_rdma.h
libfwdremap_la_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS)

fwdctl_SOURCES += cli/cmd_remap.c

# The remap tests need only the remap library, so they link it alone.
REMAP_TEST_LIBS = $(FWD_REMAP_LIB) libfwdcommon.la $(IBVERBS_LIBS) \
	$(RDMACM_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test_remap tests/unit/test_remap_verbs
TESTS += tests/unit/test_remap tests/unit/test_remap_verbs
tests_unit_test_remap_SOURCES = tests/unit/test_remap.c
tests_unit_test_remap_CFLAGS = $(FWD_TEST_CFLAGS)
# rename(2) is wrapped to simulate a crash between link and rename.
tests_unit_test_remap_LDFLAGS = -Wl,--wrap=rename
tests_unit_test_remap_LDADD = $(REMAP_TEST_LIBS)

# Every rdma-core call of the verbs driver is faked through its seam.
tests_unit_test_remap_verbs_SOURCES = tests/unit/test_remap_verbs.c
tests_unit_test_remap_verbs_CFLAGS = $(FWD_TEST_CFLAGS)
tests_unit_test_remap_verbs_LDFLAGS = \
	-Wl,--wrap=remap_rdma_get_device_list \
	-Wl,--wrap=remap_rdma_free_device_list \
	-Wl,--wrap=remap_rdma_get_device_name \
	-Wl,--wrap=remap_rdma_open_device \
	-Wl,--wrap=remap_rdma_close_device \
	-Wl,--wrap=remap_rdma_query_device \
	-Wl,--wrap=remap_rdma_query_port \
	-Wl,--wrap=remap_rdma_create_event_channel \
	-Wl,--wrap=remap_rdma_destroy_event_channel \
	-Wl,--wrap=remap_rdma_create_id \
	-Wl,--wrap=remap_rdma_destroy_id \
	-Wl,--wrap=remap_rdma_resolve_addr \
	-Wl,--wrap=remap_rdma_resolve_route \
	-Wl,--wrap=remap_rdma_get_cm_event \
	-Wl,--wrap=remap_rdma_ack_cm_event \
	-Wl,--wrap=remap_rdma_create_qp \
	-Wl,--wrap=remap_rdma_destroy_qp \
	-Wl,--wrap=remap_rdma_connect \
	-Wl,--wrap=remap_rdma_disconnect
tests_unit_test_remap_verbs_LDADD = $(REMAP_TEST_LIBS)

TESTS += tests/integration/remap_cli.sh
EXTRA_DIST += tests/integration/remap_cli.sh
# ---- end remap -------------------------------------------------------------
