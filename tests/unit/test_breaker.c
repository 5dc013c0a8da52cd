/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The database circuit breaker's state file (db/breaker.h): fresh,
 * tripped, expired, corrupt, from the future, and a directory it cannot
 * be written to (the trip fails, reading still says "closed": callers
 * fail open and use the database).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/breaker.h"

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/fwd-breaker.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/db-breaker", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	chmod(f->dir, 0700);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static void test_fresh(void **state)
{
	struct fx *f = *state;
	double ago = -1;

	assert_int_equal(db_breaker_open(f->path, 30, 1000, &ago), 0);
	assert_true(ago == -1);
	assert_int_equal(db_breaker_open(NULL, 30, 1000, &ago), 0);
}

static void test_trip_open_expire(void **state)
{
	struct fx *f = *state;
	fwd_error_t err = {""};
	double ago = -1;
	char buf[64] = "";
	FILE *fp;

	assert_int_equal(db_breaker_trip(f->path, 1000.25, &err), 0);
	fp = fopen(f->path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "1000.250\n");
	/* open 5 s later, 5 s ago */
	assert_int_equal(db_breaker_open(f->path, 30, 1005.25, &ago), 1);
	assert_true(ago > 4.99 && ago < 5.01);
	assert_int_equal(db_breaker_open(f->path, 30, 1005.25, NULL), 1);
	/* just before and at the end of the interval */
	assert_int_equal(db_breaker_open(f->path, 30, 1030.2, NULL), 1);
	assert_int_equal(db_breaker_open(f->path, 30, 1030.25, NULL), 0);
	assert_int_equal(db_breaker_open(f->path, 30, 5000, NULL), 0);
	/* interval 0: the breaker is off */
	assert_int_equal(db_breaker_open(f->path, 0, 1001, NULL), 0);
	/* a second trip replaces the time; no temporary file is left */
	assert_int_equal(db_breaker_trip(f->path, 2000, &err), 0);
	assert_int_equal(db_breaker_open(f->path, 30, 2010, &ago), 1);
	assert_true(ago > 9.99 && ago < 10.01);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) = 1",
			 f->dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* A trip time in the future: up to 1 s ahead (clocks of two hosts) it is
 * trusted, further ahead (the clock went back) it is not. */
static void test_future(void **state)
{
	static const struct {
		double t, now;
		int want;
		double ago;
	} tab[] = {
		{1001.0, 1000.0, 1, 0},	 /* exactly 1 s ahead: trusted */
		{1000.5, 1000.0, 1, 0},	 /* half a second ahead */
		{1001.5, 1000.0, 0, -1}, /* more than 1 s ahead */
		{1000.0, 1000.0, 1, 0},	 /* this very moment */
	};
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		char line[64];
		double ago = -1;
		int rv;

		snprintf(line, sizeof(line), "%.3f\n", tab[i].t);
		write_file(f->path, line);
		rv = db_breaker_open(f->path, 30, tab[i].now, &ago);
		if (rv != tab[i].want || ago != tab[i].ago)
			fail_msg("trip at %.3f, now %.3f: %d (ago %g), want "
				 "%d (ago %g)",
				 tab[i].t, tab[i].now, rv, ago, tab[i].want,
				 tab[i].ago);
	}
}

static void test_corrupt(void **state)
{
	struct fx *f = *state;
	static const char *bad[] = {
		"",	"x\n", "1000.0junk\n", "nan\n",	  "inf\n",
		"-5\n", "0\n", "1000\n\n",     "1e400\n",
	};
	char big[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(f->path, bad[i]);
		assert_int_equal(db_breaker_open(f->path, 30, 1001, NULL), 0);
	}
	/* too long to be ours */
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_file(f->path, big);
	assert_int_equal(db_breaker_open(f->path, 30, 1001, NULL), 0);
	/* without a newline is fine */
	write_file(f->path, "1000");
	assert_int_equal(db_breaker_open(f->path, 30, 1001, NULL), 1);
	/* a time in the future (clock set back): closed */
	write_file(f->path, "5000.0\n");
	assert_int_equal(db_breaker_open(f->path, 30, 1001, NULL), 0);
	/* a directory in its place: closed */
	unlink(f->path);
	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_int_equal(db_breaker_open(f->path, 30, 1001, NULL), 0);
	rmdir(f->path);
}

static void test_unwritable(void **state)
{
	struct fx *f = *state;
	fwd_error_t err = {""};
	char path[200];

	/* a directory that does not exist */
	snprintf(path, sizeof(path), "%s/missing/db-breaker", f->dir);
	assert_int_equal(db_breaker_trip(path, 1000, &err), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.text, "database breaker"));
	assert_int_equal(db_breaker_open(path, 30, 1001, NULL), 0);
	/* a parent that is a file */
	write_file(f->path, "x");
	snprintf(path, sizeof(path), "%s/db-breaker", f->path);
	assert_int_equal(db_breaker_trip(path, 1000, &err), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_int_equal(db_breaker_open(path, 30, 1001, NULL), 0);
	unlink(f->path);
	/* a read-only directory (root writes anyway) */
	assert_int_equal(chmod(f->dir, 0500), 0);
	if (geteuid() != 0) {
		assert_int_equal(db_breaker_trip(f->path, 1000, &err), -1);
		assert_int_equal(errno, EACCES);
		assert_int_equal(db_breaker_open(f->path, 30, 1001, NULL), 0);
	}
	chmod(f->dir, 0700);
	assert_int_equal(db_breaker_trip(NULL, 1000, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trip_open_expire, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_future, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
