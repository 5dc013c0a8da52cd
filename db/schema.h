/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_DB_SCHEMA_H
#define FWD_DB_SCHEMA_H

/*
 * The numbered schema migrations behind db_migrate() (db/db.h).
 * db/SCHEMA.md documents the tables.
 */

#include <stddef.h>

#include "common/error.h"

struct db;

struct schema_migration {
	int version; /* 1, 2, ... in order */
	const char *description;
	const char *const *stmts; /* re-runnable DDL */
	size_t n_stmts;
};

const struct schema_migration *schema_migrations(size_t *count);

/* The newest version this binary knows. */
int schema_latest_version(void);

/* The data tables (not schema_version), NULL-terminated. */
const char *const *schema_table_names(void);

/* MAX(version) in schema_version, 0 for an empty table.  Fails with
 * ENOENT ("run `fwdctl db init`") when the table does not exist. */
int schema_current_version(struct db *db, int *version, fwd_error_t *err);

#endif
