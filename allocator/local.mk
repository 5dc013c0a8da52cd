# SPDX-License-Identifier: GPL-2.0-or-later
# allocator/: the decision (rules, the pool, node-set rendering, batch
# arbitration), the in-memory ledger it decides against, and the
# decision's JSON.
noinst_LTLIBRARIES += libfwdallocator.la
libfwdallocator_la_SOURCES = \
	allocator/decide.c allocator/decide.h allocator/decide_internal.h \
	allocator/pool.c allocator/nodeset.c allocator/batch.c \
	allocator/curve.c allocator/curve.h allocator/mckp.c allocator/harm.c \
	allocator/ledger.c allocator/ledger.h \
	allocator/decision_json.c allocator/decision_json.h
EXTRA_DIST += allocator/README.md
