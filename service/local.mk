# SPDX-License-Identifier: GPL-2.0-or-later
# service/: fwdallocd, the controller service slurmctld's hooks hand their
# jobs to (above controller/, which does the work), and the hooks' side of
# its protocol, linked into the static hook programs (cli/).
FWD_SERVICE_SOCKET_PATH = $(runstatedir)/fwdalloc/fwdallocd.sock
# Users' report requests (MUNGE-authenticated): a socket of its own.
FWD_SERVICE_QUERY_SOCKET_PATH = $(runstatedir)/fwdalloc/fwdallocd-query.sock

sbin_PROGRAMS = fwdallocd
fwdallocd_SOURCES = service/fwdallocd.c service/protocol.h \
	service/client.c service/client.h \
	service/node_release.c service/node_release.h \
	service/query.c service/query_client.c service/query.h
fwdallocd_CPPFLAGS = $(AM_CPPFLAGS) $(MUNGE_CFLAGS) \
	-DFWD_SERVICE_SOCKET='"$(FWD_SERVICE_SOCKET_PATH)"' \
	-DFWD_SERVICE_QUERY_SOCKET='"$(FWD_SERVICE_QUERY_SOCKET_PATH)"'
fwdallocd_LDADD = $(FWD_REPORT_LIBS) $(MUNGE_LIBS) -lpthread
