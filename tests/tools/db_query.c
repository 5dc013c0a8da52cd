/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db_query POLICY buffered|stream SQL [STOP]: the rows of SQL read through
 * db_queryf() (buffered) or db_queryf_stream() (stream) with the
 * controller account of POLICY, for db_stream.sh.  Prints each row as
 * tab-separated text (NULL as \N), then "rows N".  With STOP, closes the
 * statement after STOP rows and runs "SELECT 41 + 1" on the same
 * connection, printing "after 42".
 *
 * db_query POLICY ahead TABLE: db_begin_ahead() (db/db.h) on one
 * connection, for db_stream.sh; TABLE has an INT primary key id.  Prints
 * "in_transaction N" (what a statement run after the ahead sees), then
 * "begins N": the START TRANSACTIONs the server counted from there on:
 * ahead twice, db_begin(), insert 1, rollback; ahead, insert 2 (a
 * statement of its own, committed), rollback; ahead, db_begin_locked() on
 * row 2, insert 3, commit.
 *
 * An error goes to stderr with exit status 1.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "policies/policy.h"

static int com_begin(struct db *db, int64_t *n, fwd_error_t *err)
{
	return db_query_int64(db, err, n,
			      "SELECT VARIABLE_VALUE FROM "
			      "information_schema.SESSION_STATUS WHERE "
			      "VARIABLE_NAME = 'COM_BEGIN'",
			      "") < 1
		       ? -1
		       : 0;
}

static int ahead(struct db *db, const char *table, fwd_error_t *err)
{
	char ins[200], lock[200];
	int64_t b0, b1, in_txn = -1;

	snprintf(ins, sizeof(ins), "INSERT INTO %s (id) VALUES (?)", table);
	snprintf(lock, sizeof(lock),
		 "SELECT id FROM %s WHERE id = 2 FOR UPDATE", table);
	if (com_begin(db, &b0, err) < 0 || db_begin_ahead(db, err) < 0 ||
	    db_query_int64(db, err, &in_txn, "SELECT @@in_transaction", "") < 1)
		return -1;
	printf("in_transaction %lld\n", (long long)in_txn);
	if (db_begin_ahead(db, err) < 0 || db_begin_ahead(db, err) < 0 ||
	    db_begin(db, err) < 0 || db_execf(db, err, ins, "i", 1) < 0)
		return -1;
	db_rollback(db);
	if (db_begin_ahead(db, err) < 0 || db_execf(db, err, ins, "i", 2) < 0)
		return -1;
	db_rollback(db);
	if (db_begin_ahead(db, err) < 0 ||
	    db_begin_locked(db, lock, "test", 1, err) < 0 ||
	    db_execf(db, err, ins, "i", 3) < 0 || db_commit(db, err) < 0 ||
	    com_begin(db, &b1, err) < 0)
		return -1;
	printf("begins %lld\n", (long long)(b1 - b0));
	return 0;
}

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
	    (strcmp(argv[2], "buffered") && strcmp(argv[2], "stream") &&
	     strcmp(argv[2], "ahead"))) {
		fprintf(stderr,
			"usage: db_query POLICY buffered|stream SQL [STOP]\n"
			"       db_query POLICY ahead TABLE\n");
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
	if (!strcmp(argv[2], "ahead")) {
		rv = ahead(db, argv[3], &err) < 0;
		goto out;
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
