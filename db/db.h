/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_DB_DB_H
#define FWD_DB_DB_H

/*
 * The fwdalloc database: a thin C API over mariadb-connector-c (the
 * connection, prepared statements, the schema and its migrations in
 * schema.h).  No table's queries live here: each table has one owning
 * module (db/README.md).
 *
 * Every statement is a PREPARED statement: values travel as bound
 * parameters, never inside SQL text.  Connect, read and write timeouts come
 * from the policy, so no call blocks longer than policy.database.timeout
 * (per network round trip).
 *
 * Errors: functions return -1 (or NULL) with errno set and, when err is
 * not NULL, a message of the form
 *     database <where>: (<code>) <server or client message>
 * where <where> is "socket /path" or "host:port".  errno tells the caller
 * what kind of failure it was:
 *     ECONNREFUSED  the server is down, unreachable, or went away
 *                   (db_err_unavailable() is true: exit 3 / fail open)
 *     ETIMEDOUT     a connect, read or write timed out (unavailable too)
 *     EACCES        the server refused the account or password
 *     EROFS         the server is read-only (--read-only, a replica after
 *                   a failover): unavailable for writes
 *     EPERM         the password file is not owner-only / not ours
 *     ENOENT        the schema (or a table) is missing; the message says
 *                   to run `fwdctl db init`
 *     EEXIST        a unique key refused the row (duplicate)
 *     EDEADLK       the server rolled the transaction back because it
 *                   conflicted with another: an InnoDB deadlock, or on a
 *                   Galera cluster a certification failure or a
 *                   brute-force abort (all ER_LOCK_DEADLOCK, 1213);
 *                   db_err_retryable() is true: run the whole
 *                   transaction again
 *     EPROTO        any other SQL error (message has the server's text)
 *     EINVAL        misuse (bad bind index, bad type letter, ...)
 * A struct db is not thread-safe; use one per thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* clang-format off */
/* Endpoints of the store, tried in order (policy `database.hosts`). */
struct db_hosts {
	char **items;                    /* "host", "host:port", "[v6]:port"
					  * or "/unix/socket" */
	size_t count;                    /* 0 = socket or host:port */
};

/* Where the store is and how long any call may take (policy `database:`). */
struct db_config {
	char *socket;                    /* unix socket; NULL = use host/port */
	char *host;                      /* default "localhost" */
	uint32_t port;                   /* default 3306; also the port of a
					  * hosts entry that names none */
	struct db_hosts hosts;           /* not empty: tried in order instead
					  * of socket / host:port */
	char *name;                      /* default "fwdalloc" */
	char *user;                      /* controller account, "fwdalloc" */
	char *password_file;             /* owner-only file; NULL = none */
	char *node_user;                 /* read-only node account,
					  * "fwdalloc_node" */
	char *node_password_file;        /* root-only file on compute nodes */
	double timeout;                  /* connect/read/write, s; default 5 */
	double connect_timeout;          /* budget for finding a server that
					  * answers (connect + greeting), s;
					  * 0 = timeout; default 0.9 */
	double lock_timeout;             /* decision lock wait, s; 5 */
};
/* clang-format on */

enum db_role {
	DB_ROLE_CONTROLLER = 0, /* policy database.user / password_file */
	DB_ROLE_NODE,		/* database.node_user / node_password_file:
				 * may only run node_allocations_for */
};

struct db;
struct db_stmt;

/* One endpoint: a unix socket, or a host and a port (0 = not given). */
struct db_endpoint {
	char socket[108]; /* sizeof(sun_path); "" = TCP */
	char host[256];
	uint32_t port;
};

/*
 * Parse one `database.hosts` entry: "/abs/socket", "host", "host:port",
 * "[ipv6]" or "[ipv6]:port" (port 1..65535; a host is letters, digits,
 * '.', '-' and '_').  Returns 0, or -1 with EINVAL and a message saying
 * what is wrong with s.
 */
int db_endpoint_parse(const char *s, struct db_endpoint *out, fwd_error_t *err);

/*
 * Connect as `role`.  With cfg->hosts empty the endpoint is cfg->socket,
 * else cfg->host:cfg->port.  With several hosts they are tried in order
 * until one connects and answers the session setup; the whole search
 * stays within one connect budget of cfg->connect_timeout seconds
 * (cfg->timeout when 0): each attempt's
 * connect timeout is an equal share of what is left (whole seconds, at
 * least 1), a refused endpoint costs nothing, and once the budget is
 * spent the remaining endpoints are not tried.  (After the connect, the
 * handshake and the session setup are bounded per round trip by
 * cfg->timeout, as every call is.)  When none works, the error lists
 * every endpoint with its own failure and errno is that of the last one.
 * db_where() names the endpoint in use.  The password is the first line of the
 * role's password file (trailing CR/LF removed); the file must be a regular
 * file owned by the calling user (by any account when the caller is root:
 * an admin reads SlurmUser's file) with no group or world permission bits, else
 * EPERM and a message naming the file and its mode.  No password file
 * configured = connect without a password.  The session uses utf8mb4,
 * UTC (time_zone '+00:00') and strict SQL mode; auto-reconnect is off.
 */
struct db *db_connect(const struct db_config *cfg, enum db_role role,
		      fwd_error_t *err);

/* Close the connection; NULL is fine; errno is preserved. */
void db_close(struct db *db);

/*
 * A connection that lives long (the controller service) prepares each
 * statement once: with `on`, db_prepare() of a text it prepared before
 * returns that statement, already prepared (no round trip), when no
 * caller holds it, and db_stmt_close() keeps it for the next caller.  A
 * statement that failed is closed for good.  At most DB_STMT_CACHE_MAX
 * statements are kept; the rest are prepared and closed as usual.
 * Parameters keep the values last bound: callers bind every one.
 */
#define DB_STMT_CACHE_MAX 96
void db_stmt_cache(struct db *db, bool on);

/*
 * Check that the connection still works (one round trip, no reconnect).
 * Long-running readers (a pipe that was idle for hours, past the server's
 * wait_timeout) call it before reusing a connection and reconnect when it
 * fails with db_err_unavailable(errno).
 */
int db_ping(struct db *db, fwd_error_t *err);

/* "socket /run/mysqld/mysqld.sock" or "dbhost:3306". */
const char *db_where(const struct db *db);

/* True for the errno values that mean "database unavailable"
 * (ECONNREFUSED, ETIMEDOUT, ECONNRESET, EACCES, EHOSTUNREACH, EROFS): the CLI
 * exits 3 and the controller prolog fails open. */
bool db_err_unavailable(int errnum);

/* True for the errno values that mean "the server rolled the transaction
 * back because it conflicted with another one; running the whole
 * transaction again may succeed": EDEADLK (ER_LOCK_DEADLOCK, 1213, which
 * is also how MariaDB Galera reports a certification failure or a
 * brute-force abort, at COMMIT or at any statement).  Only a transaction
 * that is redone from its START TRANSACTION may be retried; work done
 * outside it is not undone. */
bool db_err_retryable(int errnum);

/*
 * Transactions.  db_begin starts one (InnoDB, REPEATABLE READ);
 * db_commit/db_rollback end it.  db_rollback is safe to call when no
 * transaction is open and keeps errno and err of an earlier failure.
 */
int db_begin(struct db *db, fwd_error_t *err);
int db_commit(struct db *db, fwd_error_t *err);
int db_rollback(struct db *db);
/* True between db_begin() (or db_begin_locked()) and its end. */
bool db_in_txn(const struct db *db);

/*
 * Start a transaction holding a row lock, waiting at most timeout seconds
 * for it (0: try once).  lock_sql is a locking read without parameters
 * (`SELECT ... FOR UPDATE`) of a row in a table only the controller
 * account may read: it is the transaction's first statement, so every
 * consistent read after it sees what the previous holder committed.  The
 * lock is held until db_commit() or db_rollback() (or the connection
 * closes).  InnoDB waits in whole seconds (MariaDB's `... FOR UPDATE WAIT
 * n`, appended to lock_sql: for the lock statement only; the rest of the
 * transaction keeps the session's bound), in steps shorter than the read
 * timeout.  When the
 * wait runs out: -1, errno EAGAIN, no transaction open, and
 * "<what> held elsewhere for more than <t>s".
 */
int db_begin_locked(struct db *db, const char *lock_sql, const char *what,
		    double timeout, fwd_error_t *err);

/*
 * A global named lock (GET_LOCK), held by this connection until
 * db_unlock() or db_close().  Waits at most timeout seconds (rounded up,
 * at least 1; 0 means "try once"); on timeout returns -1 with errno
 * EAGAIN and "lock <name> held elsewhere for more than <t>s".
 * Any account may take any named lock, the node account too: never make a
 * job launch wait for one (db_begin_locked() is for that).
 */
int db_lock(struct db *db, const char *name, double timeout, fwd_error_t *err);
int db_unlock(struct db *db, const char *name, fwd_error_t *err);

/*
 * Prepared statements.
 *
 *   st = db_prepare(db, "SELECT a, b FROM t WHERE x = ? AND y = ?", err);
 *   db_bind_int64(st, 0, 42);
 *   db_bind_text(st, 1, "alice");
 *   if (db_exec(st, err) < 0) ...
 *   while ((r = db_fetch(st, err)) > 0)
 *           use(db_col_int64(st, 0), db_col_text(st, 1));
 *   if (r < 0) ...
 *   db_stmt_close(st);
 *
 * Parameter indexes start at 0.  Bound values are copied, so the caller's
 * buffers may go away after the bind call.  Bindings persist across
 * db_exec() calls: rebind what changes and execute again (batch inserts).
 * An unbound parameter is NULL.  db_exec() of a statement that returns
 * rows buffers the whole result on the client (keep SELECTs bounded with
 * LIMIT); db_fetch() then returns 1 per row and 0 at the end.
 * Column accessors read the current row; column indexes start at 0.
 * A `CALL` of a procedure that returns one result set reads the same way;
 * the results that follow it are read and dropped once db_fetch() has
 * returned 0 (or at db_stmt_close()), and the connection takes no other
 * statement before that.
 */
struct db_stmt *db_prepare(struct db *db, const char *sql, fwd_error_t *err);

/*
 * Append the n placeholders of an IN list, "?,?,...,?", to the
 * NUL-terminated statement text in sql (size bytes in all; the text is
 * cut short, never overrun, when it does not fit: size it for 2 * n more
 * bytes).  Values are then bound, never written into the text.
 */
void db_append_placeholders(char *sql, size_t size, size_t n);

/*
 * Prepare a multi-row statement: head, then n copies of row joined by
 * ", " (row is the placeholders of one row, "(?, ?, ?)"), then tail.
 */
struct db_stmt *db_prepare_rows(struct db *db, const char *head,
				const char *row, size_t n, const char *tail,
				fwd_error_t *err);

/*
 * Rows written by multi-row statements in a few sizes: classes[] holds
 * row counts in descending order, the last 1.  The statement for the
 * largest class not above n (n > 0) rows, prepared once per class into
 * cache[class] (db_prepare_rows()); *k receives its row count.  NULL on
 * error.
 */
struct db_stmt *db_prepare_rows_upto(struct db *db, struct db_stmt **cache,
				     const size_t *classes, size_t n,
				     const char *head, const char *row,
				     const char *tail, size_t *k,
				     fwd_error_t *err);
void db_stmt_close(struct db_stmt *st);

int db_bind_int64(struct db_stmt *st, unsigned int idx, int64_t v);
int db_bind_uint64(struct db_stmt *st, unsigned int idx, uint64_t v);
int db_bind_double(struct db_stmt *st, unsigned int idx, double v);
/* s == NULL binds NULL.  _textn binds exactly len bytes. */
int db_bind_text(struct db_stmt *st, unsigned int idx, const char *s);
int db_bind_textn(struct db_stmt *st, unsigned int idx, const char *s,
		  size_t len);
int db_bind_null(struct db_stmt *st, unsigned int idx);

int db_exec(struct db_stmt *st, fwd_error_t *err);
int db_fetch(struct db_stmt *st, fwd_error_t *err);

/* Rows changed by the last db_exec (INSERT/UPDATE/DELETE; for
 * INSERT ... ON DUPLICATE KEY UPDATE: 1 inserted, 2 updated, 0 unchanged),
 * and the AUTO_INCREMENT id it generated. */
uint64_t db_affected(const struct db_stmt *st);
uint64_t db_insert_id(const struct db_stmt *st);

unsigned int db_col_count(const struct db_stmt *st);
bool db_col_null(const struct db_stmt *st, unsigned int col);
/* NULL reads as 0 / 0.0 / NULL.  Text of a numeric column is formatted;
 * numbers of a text column are parsed (0 if not a number).  The text
 * pointer is valid until the next db_fetch/db_exec/db_stmt_close. */
int64_t db_col_int64(const struct db_stmt *st, unsigned int col);
uint64_t db_col_uint64(const struct db_stmt *st, unsigned int col);
double db_col_double(const struct db_stmt *st, unsigned int col);
const char *db_col_text(const struct db_stmt *st, unsigned int col);

/*
 * After db_exec(): append column 0 of every remaining row, as unsigned
 * integers (ids), to the malloc'd array *v of *n elements (NULL and 0 for
 * a new one).  0, or -1 with errno and err (the caller frees *v).
 */
int db_fetch_uint64s(struct db_stmt *st, uint64_t **v, size_t *n,
		     fwd_error_t *err);

/*
 * One-shot helpers: prepare, bind from a type string, execute, close.
 * Type letters, one per '?': 'i' int64_t, 'u' uint64_t, 'd' double,
 * 's' const char * (NULL binds NULL), 'n' NULL (no argument consumed).
 *
 *   db_execf(db, err, "UPDATE t SET state = ? WHERE name = ?",
 *            "ss", "excluded", "fwd012");
 *
 * db_execf returns the number of affected rows (>= 0) or -1.
 * db_query_int64 runs a query and stores the first column of the first
 * row in *out; returns 1 if there was a row, 0 if none (*out untouched),
 * -1 on error.
 * db_queryf runs a query whose rows the caller reads (db_fetch(), then
 * db_stmt_close()); NULL with err on error.
 *
 * Each is one round trip: the statement is prepared and executed at once
 * (mariadb_stmt_execute_direct), still with its values bound.  A
 * statement run many times is better prepared once (db_prepare()).
 */
int64_t db_execf(struct db *db, fwd_error_t *err, const char *sql,
		 const char *types, ...);
int db_query_int64(struct db *db, fwd_error_t *err, int64_t *out,
		   const char *sql, const char *types, ...);
struct db_stmt *db_queryf(struct db *db, fwd_error_t *err, const char *sql,
			  const char *types, ...);

/*
 * db_queryf_stream is db_queryf for a result too large to buffer: its rows
 * are read from the connection as db_fetch() asks for them, so the client
 * holds one row at a time and reads while the server still sends.  The
 * connection takes no other statement until db_fetch() has returned 0 or
 * the statement is closed (db_stmt_close() reads and drops the rest).
 * Text columns are sized by their declared length: a column declared
 * longer than DB_STREAM_TEXT_MAX bytes (TEXT, JSON) is refused at the
 * query, with its name.
 */
#define DB_STREAM_TEXT_MAX 4096u
struct db_stmt *db_queryf_stream(struct db *db, fwd_error_t *err,
				 const char *sql, const char *types, ...);

/*
 * db_load_local runs sql, a LOAD DATA LOCAL INFILE statement, sending
 * rows (len bytes of LOAD DATA's default text: tab-separated, \N for
 * NULL, backslash escapes) in place of the file it names, which is never
 * opened.  Returns the rows written (with IGNORE: the new ones), or -1
 * with err; *refused is then true when the server does not allow LOCAL
 * (local_infile=OFF), and the caller writes its rows another way.  The
 * statement has no parameters: the values travel as the file's data,
 * never in the SQL text.
 */
int64_t db_load_local(struct db *db, const char *sql, const char *rows,
		      size_t len, bool *refused, fwd_error_t *err);

/*
 * Rows in LOAD DATA's default text, built field by field for
 * db_load_local().  db_text_room() makes room for n more bytes (-1 with
 * errno ENOMEM); the field writers then append without checking, each
 * at most: a string twice its length plus one, a number 32 bytes.  A
 * field is preceded by a tab unless it is the first of its row;
 * db_text_row_end() ends the row.  Numbers are written as printf's
 * %" PRIu64 "/%" PRId64 "/%.17g would (the server reads the same value),
 * whole doubles without printf.
 */
struct db_text {
	char *buf;
	size_t len, cap;
	bool in_row;
};

int db_text_room(struct db_text *t, size_t n);
void db_text_str(struct db_text *t, const char *s);
void db_text_u64(struct db_text *t, uint64_t v);
void db_text_i64(struct db_text *t, int64_t v);
void db_text_double(struct db_text *t, double v);
void db_text_null(struct db_text *t);
void db_text_row_end(struct db_text *t);
/* Empty it, keeping its memory; db_text_free() frees it. */
void db_text_clear(struct db_text *t);
void db_text_free(struct db_text *t);

/* One table's line in a prune report. */
struct db_pruned {
	const char *table;
	int64_t cutoff;	 /* rows before this time */
	int64_t rows;	 /* deleted (or, dry run, that would be) */
	int64_t batches; /* DELETE statements run (0 on a dry run) */
};

/*
 * Duration classes (schema version 14).  A table of periods keeps, for
 * each ended period, the class of its length in a generated column
 * (DB_DURATION_CLASS(length)): 0 up to a minute, k for (2^(k-1), 2^k]
 * minutes, NULL while open.  Its index (class, start) gives the ended
 * periods that overlap [from, to) as one range per class present: those
 * of class k that started in [db_duration_floor(from, k), to), from less
 * 60 * 2^k seconds, and ended after from.  A read examines the periods of
 * each length that started around the range, not all that started since
 * the longest period ever stored began.
 *
 * db_duration_classes() fills classes[0..*n) with the classes present in
 * table.column: a loose scan of the index, one entry a class.
 * For the owner of the table, which names it (identifiers must be [a-z_]
 * only).  0, or -1 with err.
 */
#define DB_DURATION_CLASS(len)                                           \
	"(CASE WHEN " len " IS NULL THEN NULL WHEN " len " <= 60 THEN 0" \
	" ELSE LENGTH(BIN((" len " + 59) DIV 60 - 1)) END)"
#define DB_DURATION_CLASSES 64
int db_duration_classes(struct db *db, const char *table, const char *column,
			unsigned char *classes, size_t *n, fwd_error_t *err);
int64_t db_duration_floor(int64_t from, unsigned int k);
/*
 * The statement of such a read: head (the open periods, its own
 * placeholders), part once per class (" UNION ALL SELECT ... WHERE
 * class = ? AND start >= ? AND start < ? AND end ...?", those four
 * placeholders first, in that order), then tail.  malloc'd; NULL with
 * errno.  db_bind_duration_parts() binds, from *idx on, each class's
 * four: the class, db_duration_floor(from, class), to, from.
 */
char *db_duration_sql(const char *head, const char *part, const char *tail,
		      size_t n_classes);
void db_bind_duration_parts(struct db_stmt *st, unsigned int *idx,
			    const unsigned char *classes, size_t n_classes,
			    int64_t from, int64_t to);

/*
 * Retention: delete the rows of p->table whose `column` (epoch seconds,
 * indexed) is before p->cutoff, in batches of at most DB_PRUNE_CHUNK rows,
 * each its own short transaction (autocommit), so that no statement holds
 * locks a prolog would wait for long.  The session reads at READ
 * COMMITTED from then on: the deletes lock the rows they delete, not the
 * gaps around them (a range delete at REPEATABLE READ also locks the gap
 * where a prolog inserts its held rows, released_at NULL, and, when no
 * newer row exists, the end of the index where it appends its audit row).
 * With dry_run only count them.  For the owner of the table, which names
 * it (identifiers must be [a-z_] only).  Fills p->rows and p->batches; 0,
 * or -1 with err.
 */
#define DB_PRUNE_CHUNK 2000
int db_prune_before(struct db *db, struct db_pruned *p, const char *column,
		    bool dry_run, fwd_error_t *err);

/*
 * Schema (db/schema.c; the tables are documented in db/SCHEMA.md).
 *
 * db_migrate creates the schema or brings it up to the version this binary
 * knows; idempotent, serialised by a named lock.  *from and *to (may be
 * NULL) receive the versions before and after.  A database whose version
 * is newer than this binary knows is refused (EPROTO, "upgrade fwdalloc").
 *
 * db_check_schema succeeds when the database holds exactly the version
 * this binary knows; else ENOENT ("run `fwdctl db init`" when missing,
 * "run `fwdctl db migrate`" when older) or EPROTO (newer).
 *
 * db_grant_node grants the read-only node account `user`@`host` EXECUTE
 * on the node_allocations_for procedure (a job's held rows, the columns
 * node prologs read) and revokes the SELECT grants earlier versions gave
 * it (version 1: allocations and forwarders; version 2: the
 * node_allocations view); idempotent.  The account must exist.  Names are
 * checked against a strict character set.
 */
int db_migrate(struct db *db, int *from, int *to, fwd_error_t *err);
int db_check_schema(struct db *db, fwd_error_t *err);

/*
 * db_connect() then db_check_schema(): the connection every command that
 * reads or writes fwdalloc's tables uses (all but `db init`, `db migrate`
 * and `db status`), so that none writes into a schema it does not know.
 * NULL with errno and err (the schema's errors as db_check_schema's).
 */
struct db *db_connect_current(const struct db_config *cfg, enum db_role role,
			      fwd_error_t *err);

/* Rows in table `table`, one of schema_table_names().  0, or -1. */
int db_table_rows(struct db *db, const char *table, int64_t *rows,
		  fwd_error_t *err);
int db_grant_node(struct db *db, const char *user, const char *host,
		  fwd_error_t *err);

#endif
