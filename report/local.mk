# SPDX-License-Identifier: GPL-2.0-or-later
# report/: the reports people read (one job's I/O, the machine's I/O
# weather), above controller/ and sim/, below service/ and cli/.
noinst_LTLIBRARIES += libfwdreport.la
libfwdreport_la_SOURCES = \
	report/report.c report/report.h report/report_priv.h \
	report/report_job.c report/report_machine.c \
	report/render_text.c report/render_html.c
