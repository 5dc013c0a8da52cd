/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl's database connection helper (cli/fwdctl_db.h).
 */
#include "config.h"

#include <errno.h>

#include "cli/fwdctl_db.h"
#include "policies/policy.h"

struct db *fwdctl_db_connect(struct fwdctl_ctx *ctx, enum db_role role,
			     double min_timeout, bool check_schema,
			     int *exit_code)
{
	struct policy *p = fwdctl_policy(ctx);
	struct db_config cfg;
	fwd_error_t err = {{0}};
	struct db *db;

	if (!p) {
		*exit_code = FWD_EXIT_USAGE;
		return NULL;
	}
	cfg = p->database;
	if (cfg.timeout < min_timeout)
		cfg.timeout = min_timeout;
	db = db_connect(&cfg, role, &err);
	if (!db) {
		fwdctl_err("%s", err.text);
		*exit_code = FWD_EXIT_SERVICE;
		return NULL;
	}
	if (check_schema && db_check_schema(db, &err) < 0) {
		fwdctl_err("%s", err.text);
		*exit_code = fwdctl_exit_code(errno);
		db_close(db);
		return NULL;
	}
	return db;
}
