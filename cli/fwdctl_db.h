/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CLI_FWDCTL_DB_H
#define FWD_CLI_FWDCTL_DB_H

/*
 * Database access for fwdctl subcommands: connect with the policy's
 * database settings and turn failures into messages and exit codes.
 */

#include "cli/fwdctl.h"
#include "db/db.h"

/*
 * Connect as `role` using the policy named by the global options.  The
 * connection's timeout is the policy's database.timeout, raised to
 * min_timeout when that is larger (long admin statements such as prune).
 * With check_schema, also require the schema version this binary knows.
 * On failure prints "fwdctl: <message>", sets *exit_code (FWD_EXIT_USAGE
 * for a policy that does not load, FWD_EXIT_SERVICE when the database
 * cannot be used, FWD_EXIT_INVALID for a missing or mismatched schema) and
 * returns NULL.
 */
struct db *fwdctl_db_connect(struct fwdctl_ctx *ctx, enum db_role role,
			     double min_timeout, bool check_schema,
			     int *exit_code);

#endif
