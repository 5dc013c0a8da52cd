/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db_query POLICY buffered|stream SQL [STOP]: the rows of SQL read through
 * db_queryf() (buffered) or db_queryf_stream() (stream) with the
 * controller account of POLICY, for db_stream.sh.  Prints each row as
 * tab-separated text (NULL as \N), then "rows N".  With STOP, closes the
 * statement after STOP rows and runs "SELECT 41 + 1" on the same
 * connection, printing "after 42".  An error goes to stderr with exit
 * status 1.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "policies/policy.h"

int main(int argc, char **argv)
{
	struct db_stmt *st = NULL;
	struct policy *p;
	struct db *db;
	fwd_error_t err;
	long stop = argc > 4 ? strtol(argv[4], NULL, 10) : -1;
	long rows = 0;
	int64_t after = 0;
	int r = 0, rv = 1;

	if (argc < 4 || argc > 5 ||
	    (strcmp(argv[2], "buffered") && strcmp(argv[2], "stream"))) {
		fprintf(stderr,
			"usage: db_query POLICY buffered|stream SQL [STOP]\n");
		return 2;
	}
	if (!(p = policy_load(argv[1], &err))) {
		fprintf(stderr, "db_query: %s\n", err.text);
		return 1;
	}
	if (!(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err))) {
		fprintf(stderr, "db_query: %s\n", err.text);
		policy_destroy(p);
		return 1;
	}
	st = strcmp(argv[2], "stream")
		     ? db_queryf(db, &err, argv[3], "")
		     : db_queryf_stream(db, &err, argv[3], "");
	if (!st)
		goto out;
	while ((stop < 0 || rows < stop) && (r = db_fetch(st, &err)) > 0) {
		for (unsigned int i = 0; i < db_col_count(st); i++)
			printf("%s%s", i ? "\t" : "",
			       db_col_null(st, i) ? "\\N" : db_col_text(st, i));
		printf("\n");
		rows++;
	}
	if (r < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	printf("rows %ld\n", rows);
	if (stop >= 0) {
		if (db_query_int64(db, &err, &after, "SELECT 41 + 1", "") < 1)
			goto out;
		printf("after %lld\n", (long long)after);
	}
	rv = 0;
out:
	if (rv)
		fprintf(stderr, "db_query: %s\n", err.text);
	db_stmt_close(st);
	db_close(db);
	policy_destroy(p);
	return rv;
}
