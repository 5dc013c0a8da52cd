/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error paths of the profile store: the database failing at each step of
 * a launch-time lookup must come back as -1 with errno kept (so the
 * controller fails open), never as "no history" or a crash.  The database
 * calls are faked with -Wl,--wrap; the working paths are exercised against
 * a real MariaDB in tests/integration/profile_db.sh.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/profile_ctl.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/profile.h"

/* Which call fails, and how. */
static int fail_at; /* 1 prepare, 2 exec, 3 fetch */
static int fail_errno;
static int rows_left; /* rows db_fetch returns before the end */

struct db_stmt *__wrap_db_prepare(struct db *db, const char *sql,
				  fwd_error_t *err);
int __wrap_db_exec(struct db_stmt *st, fwd_error_t *err);
int __wrap_db_fetch(struct db_stmt *st, fwd_error_t *err);
void __wrap_db_stmt_close(struct db_stmt *st);
int __wrap_db_bind_int64(struct db_stmt *st, unsigned int idx, int64_t v);
int __wrap_db_bind_uint64(struct db_stmt *st, unsigned int idx, uint64_t v);
int __wrap_db_bind_double(struct db_stmt *st, unsigned int idx, double v);
int __wrap_db_bind_text(struct db_stmt *st, unsigned int idx, const char *s);
int __wrap_db_bind_null(struct db_stmt *st, unsigned int idx);

/*
 * The statement handed out by the fake db_prepare is opaque to the code
 * under test; every call that looks inside a statement (prepare, bind,
 * exec, fetch, close) is faked, so the real ones never read it.
 */
static char fake_stmt;
static unsigned int binds; /* parameters bound since the last reset */

static int fake_bind(struct db_stmt *st)
{
	assert_ptr_equal(st, (struct db_stmt *)&fake_stmt);
	binds++;
	return 0;
}

int __wrap_db_bind_int64(struct db_stmt *st, unsigned int idx, int64_t v)
{
	(void)idx;
	(void)v;
	return fake_bind(st);
}

int __wrap_db_bind_uint64(struct db_stmt *st, unsigned int idx, uint64_t v)
{
	(void)idx;
	(void)v;
	return fake_bind(st);
}

int __wrap_db_bind_double(struct db_stmt *st, unsigned int idx, double v)
{
	(void)idx;
	(void)v;
	return fake_bind(st);
}

int __wrap_db_bind_text(struct db_stmt *st, unsigned int idx, const char *s)
{
	(void)idx;
	(void)s;
	return fake_bind(st);
}

int __wrap_db_bind_null(struct db_stmt *st, unsigned int idx)
{
	(void)idx;
	return fake_bind(st);
}

struct db_stmt *__wrap_db_prepare(struct db *db, const char *sql,
				  fwd_error_t *err)
{
	(void)db;
	(void)sql;
	if (fail_at == 1) {
		errno = fail_errno;
		errprintf(err, "database socket /x: (2002) fake refusal");
		return NULL;
	}
	return (struct db_stmt *)&fake_stmt;
}

int __wrap_db_exec(struct db_stmt *st, fwd_error_t *err)
{
	assert_ptr_equal(st, (struct db_stmt *)&fake_stmt);
	if (fail_at == 2) {
		errno = fail_errno;
		return errprintf(err, "database socket /x: (2013) fake loss");
	}
	return 0;
}

int __wrap_db_fetch(struct db_stmt *st, fwd_error_t *err)
{
	assert_ptr_equal(st, (struct db_stmt *)&fake_stmt);
	if (fail_at == 3) {
		errno = fail_errno;
		return errprintf(err,
				 "database socket /x: (1205) fake timeout");
	}
	if (rows_left > 0) {
		rows_left--;
		return 1;
	}
	return 0;
}

void __wrap_db_stmt_close(struct db_stmt *st)
{
	(void)st;
}

static void test_lookup_failures(void **state)
{
	static const struct {
		int at, err;
		const char *msg;
	} cases[] = {
		{1, ECONNREFUSED, "fake refusal"},
		{2, ECONNREFUSED, "fake loss"},
		{3, ETIMEDOUT, "fake timeout"},
	};
	struct policy *p = policy_defaults();
	struct profile_job job = {"alice", "p1", "wrf", "batch", 256};
	struct profile_result res;

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err = {""};

		fail_at = cases[i].at;
		fail_errno = cases[i].err;
		rows_left = 0;
		binds = 0;
		assert_int_equal(
			profile_lookup(NULL, p, &job, 1000, &res, &err), -1);
		/* past prepare, the key was bound before the failure */
		assert_true(cases[i].at == 1 ? binds == 0 : binds > 0);
		assert_int_equal(errno, cases[i].err);
		assert_true(db_err_unavailable(errno));
		assert_non_null(strstr(err.text, cases[i].msg));
		assert_string_equal(res.key,
				    "user=alice;name=wrf;node_bucket=256");
		assert_int_equal(res.source, PROFILE_SOURCE_NONE);
	}
	/* no rows anywhere: no history, not an error */
	fail_at = 0;
	assert_int_equal(profile_lookup(NULL, p, &job, 1000, &res, NULL), 0);
	assert_int_equal(res.source, PROFILE_SOURCE_NONE);
	assert_int_equal(res.profile.runs, 0);
	policy_destroy(p);
}

static void test_rebuild_failure(void **state)
{
	struct policy *p = policy_defaults();
	struct profile_rebuild_stats st;
	fwd_error_t err = {""};

	(void)state;
	fail_at = 2;
	fail_errno = ECONNREFUSED;
	assert_int_equal(ctl_profile_rebuild(NULL, p, 1000, &st, &err), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_non_null(strstr(err.text, "fake loss"));
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_failures),
		cmocka_unit_test(test_rebuild_failure),
	};

	return cmocka_run_group_tests_name("profile_db", tests, NULL, NULL);
}
