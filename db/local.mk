# SPDX-License-Identifier: GPL-2.0-or-later
# db/: the MariaDB connection, prepared statements, the schema and its
# migrations.  No table's queries: each table's owner is named in
# db/README.md.
noinst_LTLIBRARIES += libfwddb.la
libfwddb_la_SOURCES = \
	db/db.c db/db.h db/endpoint.c \
	db/schema.c db/schema.h \
	db/breaker.c db/breaker.h
EXTRA_DIST += db/README.md db/SCHEMA.md
