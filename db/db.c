/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The database connection and prepared-statement helpers (db/db.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include "common/array.h"
#include "common/timeutil.h"
#include "common/units.h"
#include "db/db.h"

struct db {
	MYSQL *conn;
	char where[320];
	char dbname[72];
	double timeout;
	bool in_txn;
	/* rows db_load_local() is sending: the only data the connection's
	 * LOAD DATA LOCAL handler ever serves */
	const char *infile;
	size_t infile_len, infile_at;
	/* db_stmt_cache(): prepared statements kept for reuse, by text */
	bool caching;
	size_t n_cached;
	struct db_stmt *cached[DB_STMT_CACHE_MAX];
};

enum col_kind { COL_INT, COL_DOUBLE, COL_TEXT };

struct db_param {
	int64_t i;
	double d;
	char *buf;
	size_t cap;
	unsigned long len;
	my_bool is_null;
};

struct db_col {
	enum col_kind kind;
	bool is_unsigned;
	int64_t i;
	double d;
	char *buf;
	unsigned long cap;
	unsigned long len;
	my_bool is_null;
	my_bool error;
	char scratch[40];
};

struct db_stmt {
	struct db *db;
	MYSQL_STMT *stmt;
	unsigned int n_params;
	MYSQL_BIND *pbind;
	struct db_param *params;
	unsigned int n_cols;
	MYSQL_BIND *rbind;
	struct db_col *cols;
	bool has_result;
	/* db_queryf_stream(): rows read from the connection as fetched, not
	 * buffered; text columns sized by their declared length */
	bool stream;
	uint64_t affected;
	uint64_t insert_id;
	/* In the connection's statement cache (db_stmt_cache()): its text,
	 * whether a caller holds it, whether it failed (then it is closed
	 * for good rather than reused). */
	char *sql;
	bool in_use, failed;
};

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_rc;

static void lib_init(void)
{
	lib_rc = mysql_library_init(0, NULL, NULL);
}

bool db_err_unavailable(int errnum)
{
	return errnum == ECONNREFUSED || errnum == ETIMEDOUT ||
	       errnum == ECONNRESET || errnum == EACCES ||
	       errnum == EHOSTUNREACH || errnum == EROFS;
}

bool db_err_retryable(int errnum)
{
	return errnum == EDEADLK;
}

static bool mentions_timeout(const char *msg)
{
	return msg && (strstr(msg, "timeout") || strstr(msg, "timed out") ||
		       strstr(msg, "Timeout"));
}

/* errno for a client or server error code (see db.h). */
static int code_errno(unsigned int code, const char *msg)
{
	switch (code) {
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_UNKNOWN_HOST:
	case CR_SERVER_LOST_EXTENDED:
	case CR_IPSOCK_ERROR:
	case CR_SOCKET_CREATE_ERROR:
	case ER_SERVER_SHUTDOWN:
	case ER_CON_COUNT_ERROR:
	case ER_TOO_MANY_USER_CONNECTIONS:
		return mentions_timeout(msg) ? ETIMEDOUT : ECONNREFUSED;
	case ER_ACCESS_DENIED_ERROR:
	case ER_DBACCESS_DENIED_ERROR:
	case ER_TABLEACCESS_DENIED_ERROR:
	case ER_COLUMNACCESS_DENIED_ERROR:
	case ER_SPECIFIC_ACCESS_DENIED_ERROR:
		return EACCES;
	case ER_NO_SUCH_TABLE:
	case ER_BAD_DB_ERROR:
		return ENOENT;
	case ER_DUP_ENTRY:
	case ER_DUP_KEY:
	case ER_DUP_ENTRY_WITH_KEY_NAME:
		return EEXIST;
	case ER_LOCK_WAIT_TIMEOUT:
		return EAGAIN;
	case ER_LOCK_DEADLOCK:
		/* Also Galera's certification failure and brute-force abort
		 * (MariaDB maps wsrep's deadlock error to this code). */
		return EDEADLK;
	case ER_UNKNOWN_COM_ERROR:
		/* "WSREP has not yet prepared node for application use": a
		 * Galera node outside the primary component. */
		return msg && strstr(msg, "WSREP") ? ECONNREFUSED : EPROTO;
	case ER_STATEMENT_TIMEOUT:
		return ETIMEDOUT;
	case ER_OPTION_PREVENTS_STATEMENT:
		/* "running with the --read-only option" (a replica after a
		 * failover): up, but unavailable for writes. */
		return msg && strstr(msg, "read-only") ? EROFS : EPROTO;
	case ER_READ_ONLY_MODE:
		return EROFS;
	default:
		if (code >= CR_MIN_ERROR && code <= CR_MAX_ERROR &&
		    mentions_timeout(msg))
			return ETIMEDOUT;
		return EPROTO;
	}
}

/* Fill err from a code and message, set errno, return -1. */
static int db_fail(const struct db *db, fwd_error_t *err, unsigned int code,
		   const char *msg)
{
	int e = code_errno(code, msg);

	if (e == ENOENT && code == ER_BAD_DB_ERROR)
		errprintf(err,
			  "database %s: (%u) %s: create the database (see "
			  "db/SCHEMA.md), then run `fwdctl db init`",
			  db->where, code, msg);
	else if (e == ENOENT)
		errprintf(err,
			  "database %s: (%u) %s: the fwdalloc schema is "
			  "missing: run `fwdctl db init`",
			  db->where, code, msg);
	else
		errprintf(err, "database %s: (%u) %s", db->where, code, msg);
	errno = e;
	return -1;
}

static int conn_fail(const struct db *db, fwd_error_t *err)
{
	return db_fail(db, err, mysql_errno(db->conn), mysql_error(db->conn));
}

static int stmt_fail(struct db_stmt *st, fwd_error_t *err)
{
	st->failed = true;
	return db_fail(st->db, err, mysql_stmt_errno(st->stmt),
		       mysql_stmt_error(st->stmt));
}

/*
 * Read the first line of an owner-only password file into buf (owned by
 * the caller, or by any account when the caller is root).  The file
 * is opened without following a symlink at the last component, then
 * checked on the open descriptor so it cannot be swapped in between.
 * O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
 * writer; it changes nothing for the regular file we then insist on.
 */
static int read_password(const char *path, char *buf, size_t len,
			 fwd_error_t *err)
{
	struct stat sb;
	ssize_t n;
	size_t got = 0;
	int fd;
	int rv = -1;

	fd = open(path,
		  O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errprintf(err, "password file %s: %s", path,
				 strerror(errno));
	if (fstat(fd, &sb) < 0) {
		errprintf(err, "password file %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		errno = EPERM;
		errprintf(err, "password file %s: not a regular file", path);
		goto out;
	}
	/* The owner's own file; or root reading another account's (the
	 * controller's belongs to SlurmUser, and admins run fwdctl as
	 * root): root reads it anyway, refusing would only get in the way.
	 * Group or other access is refused to everyone. */
	if (sb.st_uid != geteuid() && geteuid() != 0) {
		errno = EPERM;
		errprintf(err,
			  "password file %s: owned by uid %u, not by the "
			  "caller (uid %u): refusing it",
			  path, (unsigned int)sb.st_uid,
			  (unsigned int)geteuid());
		goto out;
	}
	if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
		errno = EPERM;
		errprintf(err,
			  "password file %s: mode %04o gives access to group "
			  "or others: refusing it (chmod 600 %s)",
			  path, (unsigned int)(sb.st_mode & 07777), path);
		goto out;
	}
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errprintf(err, "password file %s: %s", path,
				  strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (got == len - 1 && !buf[strcspn(buf, "\r\n")]) {
		/* The buffer is full and holds no end of line: a password
		 * cut short would only fail later, as a wrong one. */
		char c;

		if (read(fd, &c, 1) == 1 && c != '\n' && c != '\r') {
			errno = EINVAL;
			errprintf(err,
				  "password file %s: first line longer than "
				  "%zu bytes: refusing it",
				  path, len - 1);
			goto out;
		}
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!*buf) {
		errno = EINVAL;
		errprintf(err, "password file %s: first line is empty", path);
		goto out;
	}
	rv = 0;
out:
	close(fd);
	return rv;
}

/* The session's row-lock wait, in the whole seconds InnoDB counts. */
static int64_t row_lock_wait(const struct db *db)
{
	int64_t wait = (int64_t)ceil(db->timeout);

	return wait < 1 ? 1 : wait;
}

static int session_setup(struct db *db, fwd_error_t *err)
{
	int64_t wait = row_lock_wait(db);

	/* UTC and strict mode so stored values never depend on the
	 * server's defaults; row-lock waits bounded like everything else. */
	if (db_execf(db, err,
		     "SET SESSION time_zone = '+00:00', sql_mode = "
		     "'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,"
		     "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',"
		     " innodb_lock_wait_timeout = ?",
		     "i", wait) < 0)
		return -1;
	return 0;
}

/* The value column of a constant `SHOW ... LIKE '...'` statement in buf
 * ("" when there is no such variable: a server built without Galera). */
static int show_value(struct db *db, const char *sql, char *buf, size_t len,
		      fwd_error_t *err)
{
	struct db_stmt *st;
	int r;

	buf[0] = '\0';
	st = db_prepare(db, sql, err);
	if (!st || db_exec(st, err) < 0) {
		db_stmt_close(st);
		return -1;
	}
	r = db_fetch(st, err);
	if (r > 0 && db_col_text(st, 1))
		snprintf(buf, len, "%s", db_col_text(st, 1));
	db_stmt_close(st);
	return r < 0 ? -1 : 0;
}

/*
 * A member of a Galera cluster is used only while it is in the primary
 * component (wsrep_ready ON: a node cut off from the majority refuses
 * queries, and the next endpoint should be tried instead), and its reads
 * wait until it has applied what the cluster committed before them
 * (wsrep_sync_wait = 1), so a decision never starts from a stale ledger.
 */
static int cluster_setup(struct db *db, fwd_error_t *err)
{
	char v[32];

	if (show_value(db, "SHOW VARIABLES LIKE 'wsrep_on'", v, sizeof(v),
		       err) < 0)
		return -1;
	if (strcmp(v, "ON"))
		return 0;
	if (show_value(db, "SHOW STATUS LIKE 'wsrep_ready'", v, sizeof(v),
		       err) < 0)
		return -1;
	if (strcmp(v, "ON")) {
		errno = ECONNREFUSED;
		return errprintf(err,
				 "database %s: Galera node not ready "
				 "(wsrep_ready %s): not in the primary "
				 "component",
				 db->where, v[0] ? v : "unknown");
	}
	if (db_execf(db, err, "SET SESSION wsrep_sync_wait = 1", "") < 0)
		return -1;
	return 0;
}

/*
 * mysql_real_connect() bounded by tmo seconds to the millisecond, through
 * the client library's non-blocking interface (the library's own connect
 * timeout counts whole seconds).  Connect, greeting, authentication: a
 * server that accepts but does not answer (frozen, out of disk) costs tmo,
 * not the read timeout.  Returns the library's result; on the deadline,
 * NULL with *late set.  Later calls on the connection block as usual.
 */
static MYSQL *connect_bounded(MYSQL *m, const char *host, const char *user,
			      const char *password, const char *dbname,
			      unsigned int port, const char *sock, double tmo,
			      bool *late)
{
	double deadline = fwd_clock_mono() + tmo;
	MYSQL *ret = NULL;
	int st;

	*late = false;
	st = mysql_real_connect_start(&ret, m, host, user, password, dbname,
				      port, sock, 0);
	while (st) {
		struct pollfd pfd = {.fd = mysql_get_socket(m)};
		double left = deadline - fwd_clock_mono();
		int ms, r, ev = 0;
		bool lib_first = false;

		if (left <= 0) {
			*late = true;
			return NULL;
		}
		ms = (int)ceil(left * 1000);
		if (st & MYSQL_WAIT_TIMEOUT) {
			unsigned int lib = mysql_get_timeout_value_ms(m);

			if (lib < (unsigned int)ms) {
				ms = (int)lib;
				lib_first = true;
			}
		}
		if (st & MYSQL_WAIT_READ)
			pfd.events |= POLLIN;
		if (st & MYSQL_WAIT_WRITE)
			pfd.events |= POLLOUT;
		if (st & MYSQL_WAIT_EXCEPT)
			pfd.events |= POLLPRI;
		r = poll(&pfd, pfd.fd >= 0 ? 1 : 0, ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*late = true;
			return NULL;
		}
		if (r == 0) {
			if (!lib_first)
				continue; /* our deadline: checked above */
			ev = MYSQL_WAIT_TIMEOUT;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
			ev |= MYSQL_WAIT_READ;
		if (pfd.revents & (POLLOUT | POLLHUP | POLLERR))
			ev |= MYSQL_WAIT_WRITE;
		if (pfd.revents & POLLPRI)
			ev |= MYSQL_WAIT_EXCEPT;
		st = mysql_real_connect_cont(&ret, m, ev);
	}
	return ret;
}

/*
 * LOAD DATA LOCAL INFILE, served from memory only.  The connection offers
 * LOCAL to the server so that db_load_local() can send rows, but its
 * handler never opens a file: it serves the rows db_load_local() armed,
 * and refuses any other request (a server cannot read the client's
 * files).
 */
static int infile_init(void **ptr, const char *name, void *userdata)
{
	struct db *db = userdata;

	(void)name;
	*ptr = db;
	if (!db->infile)
		return 1;
	db->infile_at = 0;
	return 0;
}

static int infile_read(void *ptr, char *buf, unsigned int len)
{
	struct db *db = ptr;
	size_t n = db->infile_len - db->infile_at;

	if (!db->infile)
		return -1;
	if (n > len)
		n = len;
	memcpy(buf, db->infile + db->infile_at, n);
	db->infile_at += n;
	return (int)n;
}

static void infile_end(void *ptr)
{
	(void)ptr;
}

static int infile_error(void *ptr, char *msg, unsigned int len)
{
	struct db *db = ptr;

	snprintf(msg, len, "%s",
		 db && db->infile ? "LOAD DATA LOCAL: read error"
				  : "LOAD DATA LOCAL: no rows to send");
	return CR_UNKNOWN_ERROR;
}

/* One connection attempt to e, its connect bounded by tmo seconds. */
static int connect_one(struct db *db, const struct db_endpoint *e,
		       uint32_t dflt_port, const char *user,
		       const char *password, const char *dbname, double tmo,
		       bool cluster, fwd_error_t *err)
{
	unsigned int rw, proto, ctmo;
	bool late;
	uint32_t port = e->port ? e->port : dflt_port ? dflt_port : 3306;
	my_bool off = 0, on = 1;

	if (e->socket[0])
		snprintf(db->where, sizeof(db->where), "socket %s", e->socket);
	else if (strchr(e->host, ':'))
		snprintf(db->where, sizeof(db->where), "[%s]:%u", e->host,
			 (unsigned int)port);
	else
		snprintf(db->where, sizeof(db->where), "%s:%u", e->host,
			 (unsigned int)port);
	if (db->conn)
		mysql_close(db->conn);
	db->conn = mysql_init(NULL);
	if (!db->conn) {
		errno = ENOMEM;
		return errprintf(err, "database %s: out of memory", db->where);
	}
	rw = (unsigned int)ceil(db->timeout);
	if (rw < 1)
		rw = 1;
	/* The library's own bound, in whole seconds, as a backstop. */
	ctmo = (unsigned int)ceil(tmo);
	if (ctmo < 1)
		ctmo = 1;
	mysql_options(db->conn, MYSQL_OPT_CONNECT_TIMEOUT, &ctmo);
	mysql_options(db->conn, MYSQL_OPT_NONBLOCK, 0);
	mysql_options(db->conn, MYSQL_OPT_READ_TIMEOUT, &rw);
	mysql_options(db->conn, MYSQL_OPT_WRITE_TIMEOUT, &rw);
	mysql_options(db->conn, MYSQL_OPT_RECONNECT, &off);
	mysql_options(db->conn, MYSQL_OPT_LOCAL_INFILE, &on);
	mysql_set_local_infile_handler(db->conn, infile_init, infile_read,
				       infile_end, infile_error, db);
	mysql_options(db->conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	proto = e->socket[0] ? MYSQL_PROTOCOL_SOCKET : MYSQL_PROTOCOL_TCP;
	mysql_options(db->conn, MYSQL_OPT_PROTOCOL, &proto);
	if (!connect_bounded(db->conn, e->socket[0] ? "localhost" : e->host,
			     user, password, dbname, port,
			     e->socket[0] ? e->socket : NULL, tmo, &late)) {
		if (!late)
			return conn_fail(db, err);
		/* The handle is mid-connect: drop it, never reuse it. */
		mysql_close(db->conn);
		db->conn = NULL;
		errno = ETIMEDOUT;
		return errprintf(err,
				 "database %s: no answer within %gs "
				 "(database.connect_timeout)",
				 db->where, tmo);
	}
	if (session_setup(db, err) < 0)
		return -1;
	return cluster ? cluster_setup(db, err) : 0;
}

/* The endpoint of a configuration without `hosts`. */
static void legacy_endpoint(const struct db_config *cfg, struct db_endpoint *e)
{
	memset(e, 0, sizeof(*e));
	if (cfg->socket)
		snprintf(e->socket, sizeof(e->socket), "%s", cfg->socket);
	else
		snprintf(e->host, sizeof(e->host), "%s",
			 cfg->host ? cfg->host : "localhost");
	e->port = cfg->port;
}

/* Append "; <msg>" (msg without its "database " prefix) to all. */
static void append_failure(fwd_error_t *all, const fwd_error_t *one)
{
	size_t len = strlen(all->text);
	const char *m = one->text;

	if (!strncmp(m, "database ", 9))
		m += 9;
	snprintf(all->text + len, sizeof(all->text) - len, "%s%s",
		 len ? "; " : "", m);
}

struct db *db_connect(const struct db_config *cfg, enum db_role role,
		      fwd_error_t *err)
{
	const char *user, *pwfile;
	char password[512] = "";
	struct db_endpoint e;
	fwd_error_t one, all = {""};
	size_t n, i;
	double deadline, budget;
	int last = ECONNREFUSED;
	struct db *db;

	pthread_once(&lib_once, lib_init);
	if (lib_rc != 0) {
		errno = ENOMEM;
		errprintf(err, "database: cannot initialise the client "
			       "library");
		return NULL;
	}
	if (!cfg || !cfg->name) {
		errno = EINVAL;
		errprintf(err, "database: no database configured");
		return NULL;
	}
	db = calloc(1, sizeof(*db));
	if (!db) {
		errprintf(err, "database: %s", strerror(errno));
		return NULL;
	}
	db->timeout = cfg->timeout > 0 ? cfg->timeout : 5;
	snprintf(db->dbname, sizeof(db->dbname), "%s", cfg->name);

	if (role == DB_ROLE_NODE) {
		user = cfg->node_user;
		pwfile = cfg->node_password_file;
	} else {
		user = cfg->user;
		pwfile = cfg->password_file;
	}
	if (pwfile &&
	    read_password(pwfile, password, sizeof(password), err) < 0)
		goto fail;

	n = cfg->hosts.count ? cfg->hosts.count : 1;
	budget = cfg->connect_timeout > 0 ? cfg->connect_timeout : db->timeout;
	deadline = fwd_clock_mono() + budget;
	for (i = 0; i < n; i++) {
		/* The first endpoint's share is the budget as configured, so
		 * that its error names the setting's own value. */
		double left = i ? deadline - fwd_clock_mono() : budget;
		double tmo;

		if (!cfg->hosts.count) {
			legacy_endpoint(cfg, &e);
		} else if (db_endpoint_parse(cfg->hosts.items[i], &e, &one) <
			   0) {
			errprefix(&one, "database endpoint '%s'",
				  cfg->hosts.items[i]);
			errno = EINVAL;
			goto fail_with;
		}
		if (i > 0 && left <= 0) {
			fwd_error_t skip;

			errprintf(&skip,
				  "%zu more endpoint(s) not tried: the "
				  "connect budget of %gs is spent",
				  n - i, budget);
			append_failure(&all, &skip);
			break;
		}
		/* whole milliseconds: the share an error names */
		tmo = round(left / (double)(n - i) * 1000) / 1000;
		if (tmo < 0.1)
			tmo = 0.1;
		if (connect_one(db, &e, cfg->port, user,
				pwfile ? password : NULL, cfg->name, tmo,
				cfg->hosts.count > 0, &one) == 0) {
			explicit_bzero(password, sizeof(password));
			return db;
		}
		last = errno;
		if (n == 1) {
			errno = last;
			goto fail_with;
		}
		append_failure(&all, &one);
	}
	errno = last;
	errprintf(err, "database: none of the %zu endpoints worked: %s", n,
		  all.text);
	goto fail;
fail_with:
	errprintf(err, "%s", one.text);
fail:
	explicit_bzero(password, sizeof(password));
	db_close(db);
	return NULL;
}

void db_close(struct db *db)
{
	int saved = errno;

	if (db) {
		for (size_t i = 0; i < db->n_cached; i++) {
			struct db_stmt *st = db->cached[i];

			/* One a caller still holds is freed by its
			 * db_stmt_close(), as an ordinary statement. */
			free(st->sql);
			st->sql = NULL;
			if (!st->in_use)
				db_stmt_close(st);
		}
		if (db->conn)
			mysql_close(db->conn);
		free(db);
	}
	errno = saved;
}

int db_ping(struct db *db, fwd_error_t *err)
{
	if (mysql_ping(db->conn))
		return conn_fail(db, err);
	return 0;
}

const char *db_where(const struct db *db)
{
	return db->where;
}

/* ---- statements ---- */

/*
 * A CALL answers with its procedure's result sets and then a status
 * result; the connection takes no other statement until all of them are
 * read.  Read and drop what is left once the caller has its rows.
 */
static void drain_results(struct db_stmt *st)
{
	while (mysql_stmt_more_results(st->stmt)) {
		if (mysql_stmt_next_result(st->stmt) != 0)
			break;
		if (mysql_stmt_field_count(st->stmt) > 0) {
			mysql_stmt_store_result(st->stmt);
			mysql_stmt_free_result(st->stmt);
		}
	}
}

static void free_result(struct db_stmt *st)
{
	if (st->has_result) {
		mysql_stmt_free_result(st->stmt);
		st->has_result = false;
		drain_results(st);
	}
	for (unsigned int i = 0; i < st->n_cols; i++)
		free(st->cols[i].buf);
	free(st->cols);
	free(st->rbind);
	st->cols = NULL;
	st->rbind = NULL;
	st->n_cols = 0;
}

void db_stmt_close(struct db_stmt *st)
{
	int saved = errno;

	if (!st)
		return;
	free_result(st);
	if (st->sql) {
		struct db *db = st->db;

		if (!st->failed) {
			/* Back to the cache, prepared for the next caller. */
			st->in_use = false;
			errno = saved;
			return;
		}
		for (size_t i = 0; i < db->n_cached; i++)
			if (db->cached[i] == st) {
				db->cached[i] = db->cached[--db->n_cached];
				break;
			}
		free(st->sql);
	}
	if (st->stmt)
		mysql_stmt_close(st->stmt);
	for (unsigned int i = 0; i < st->n_params; i++)
		free(st->params[i].buf);
	free(st->params);
	free(st->pbind);
	free(st);
	errno = saved;
}

/* A statement handle, not prepared yet. */
static struct db_stmt *stmt_new(struct db *db, fwd_error_t *err)
{
	struct db_stmt *st;
	my_bool on = 1;

	st = calloc(1, sizeof(*st));
	if (!st) {
		errprintf(err, "database: %s", strerror(errno));
		return NULL;
	}
	st->db = db;
	st->stmt = mysql_stmt_init(db->conn);
	if (!st->stmt) {
		conn_fail(db, err);
		db_stmt_close(st);
		return NULL;
	}
	mysql_stmt_attr_set(st->stmt, STMT_ATTR_UPDATE_MAX_LENGTH, &on);
	return st;
}

/* Room for n parameter values, all NULL. */
static int alloc_params(struct db_stmt *st, unsigned int n, fwd_error_t *err)
{
	st->n_params = n;
	if (st->n_params) {
		st->pbind = calloc(st->n_params, sizeof(*st->pbind));
		st->params = calloc(st->n_params, sizeof(*st->params));
		if (!st->pbind || !st->params) {
			errprintf(err, "database: %s", strerror(errno));
			goto fail;
		}
		for (unsigned int i = 0; i < st->n_params; i++) {
			st->params[i].is_null = 1;
			st->pbind[i].buffer_type = MYSQL_TYPE_NULL;
			st->pbind[i].is_null = &st->params[i].is_null;
		}
	}
	return 0;
fail:
	return -1;
}

void db_stmt_cache(struct db *db, bool on)
{
	db->caching = on;
}

struct db_stmt *db_prepare(struct db *db, const char *sql, fwd_error_t *err)
{
	struct db_stmt *st;

	if (db->caching)
		for (size_t i = 0; i < db->n_cached; i++) {
			st = db->cached[i];
			if (!st->in_use && !strcmp(st->sql, sql)) {
				st->in_use = true;
				return st;
			}
		}
	if (!(st = stmt_new(db, err)))
		return NULL;
	if (mysql_stmt_prepare(st->stmt, sql, (unsigned long)strlen(sql))) {
		stmt_fail(st, err);
		goto fail;
	}
	if (alloc_params(st, (unsigned int)mysql_stmt_param_count(st->stmt),
			 err) < 0)
		goto fail;
	/* A full cache keeps what it has: the statements a long-lived
	 * connection runs are few, and the first ones are the common ones. */
	if (db->caching && db->n_cached < DB_STMT_CACHE_MAX &&
	    (st->sql = strdup(sql))) {
		st->in_use = true;
		db->cached[db->n_cached++] = st;
	}
	return st;
fail:
	db_stmt_close(st);
	return NULL;
}

static struct db_param *param(struct db_stmt *st, unsigned int idx)
{
	if (!st || idx >= st->n_params) {
		errno = EINVAL;
		return NULL;
	}
	return &st->params[idx];
}

int db_bind_int64(struct db_stmt *st, unsigned int idx, int64_t v)
{
	struct db_param *p = param(st, idx);
	MYSQL_BIND *b;

	if (!p)
		return -1;
	b = &st->pbind[idx];
	p->i = v;
	p->is_null = 0;
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = &p->i;
	b->is_unsigned = 0;
	return 0;
}

int db_bind_uint64(struct db_stmt *st, unsigned int idx, uint64_t v)
{
	struct db_param *p = param(st, idx);
	MYSQL_BIND *b;

	if (!p)
		return -1;
	b = &st->pbind[idx];
	memcpy(&p->i, &v, sizeof(v));
	p->is_null = 0;
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = &p->i;
	b->is_unsigned = 1;
	return 0;
}

int db_bind_double(struct db_stmt *st, unsigned int idx, double v)
{
	struct db_param *p = param(st, idx);
	MYSQL_BIND *b;

	if (!p)
		return -1;
	if (!isfinite(v))
		return db_bind_null(st, idx);
	b = &st->pbind[idx];
	p->d = v;
	p->is_null = 0;
	b->buffer_type = MYSQL_TYPE_DOUBLE;
	b->buffer = &p->d;
	return 0;
}

int db_bind_textn(struct db_stmt *st, unsigned int idx, const char *s,
		  size_t len)
{
	struct db_param *p = param(st, idx);
	MYSQL_BIND *b;

	if (!p)
		return -1;
	if (!s)
		return db_bind_null(st, idx);
	if (FWD_GROW(p->buf, p->cap, len + 1, 64) < 0)
		return -1;
	memcpy(p->buf, s, len);
	p->buf[len] = '\0';
	p->len = (unsigned long)len;
	p->is_null = 0;
	b = &st->pbind[idx];
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = p->buf;
	b->buffer_length = (unsigned long)p->cap;
	b->length = &p->len;
	return 0;
}

int db_bind_text(struct db_stmt *st, unsigned int idx, const char *s)
{
	return db_bind_textn(st, idx, s, s ? strlen(s) : 0);
}

int db_bind_null(struct db_stmt *st, unsigned int idx)
{
	struct db_param *p = param(st, idx);

	if (!p)
		return -1;
	p->is_null = 1;
	st->pbind[idx].buffer_type = MYSQL_TYPE_NULL;
	return 0;
}

static int setup_result(struct db_stmt *st, fwd_error_t *err)
{
	MYSQL_RES *meta;
	MYSQL_FIELD *f;
	int rv = -1;

	meta = mysql_stmt_result_metadata(st->stmt);
	if (!meta)
		return stmt_fail(st, err);
	st->n_cols = mysql_num_fields(meta);
	f = mysql_fetch_fields(meta);
	st->rbind = calloc(st->n_cols, sizeof(*st->rbind));
	st->cols = calloc(st->n_cols, sizeof(*st->cols));
	if (!st->rbind || !st->cols) {
		errprintf(err, "database: %s", strerror(errno));
		goto out;
	}
	for (unsigned int i = 0; i < st->n_cols; i++) {
		struct db_col *c = &st->cols[i];
		MYSQL_BIND *b = &st->rbind[i];

		switch (f[i].type) {
		case MYSQL_TYPE_TINY:
		case MYSQL_TYPE_SHORT:
		case MYSQL_TYPE_LONG:
		case MYSQL_TYPE_INT24:
		case MYSQL_TYPE_LONGLONG:
		case MYSQL_TYPE_YEAR:
			c->kind = COL_INT;
			c->is_unsigned = f[i].flags & UNSIGNED_FLAG;
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &c->i;
			b->is_unsigned = c->is_unsigned;
			break;
		case MYSQL_TYPE_FLOAT:
		case MYSQL_TYPE_DOUBLE:
			c->kind = COL_DOUBLE;
			b->buffer_type = MYSQL_TYPE_DOUBLE;
			b->buffer = &c->d;
			break;
		default:
			/* Strings, JSON, DECIMAL (SUM() of integers), dates:
			 * fetched as text, sized by the buffered maximum (a
			 * stream: by the declared length, which a column
			 * longer than DB_STREAM_TEXT_MAX cannot have). */
			c->kind = COL_TEXT;
			if (st->stream && f[i].length > DB_STREAM_TEXT_MAX) {
				errprintf(err,
					  "database: column %s is declared "
					  "%lu bytes long, over the %u a "
					  "streamed result holds",
					  f[i].name, (unsigned long)f[i].length,
					  DB_STREAM_TEXT_MAX);
				goto out;
			}
			c->cap = (st->stream ? f[i].length : f[i].max_length) +
				 1;
			c->buf = malloc(c->cap);
			if (!c->buf) {
				errprintf(err, "database: %s", strerror(errno));
				goto out;
			}
			b->buffer_type = MYSQL_TYPE_STRING;
			b->buffer = c->buf;
			b->buffer_length = c->cap;
			b->length = &c->len;
			break;
		}
		b->is_null = &c->is_null;
		b->error = &c->error;
	}
	if (mysql_stmt_bind_result(st->stmt, st->rbind)) {
		stmt_fail(st, err);
		goto out;
	}
	rv = 0;
out:
	mysql_free_result(meta);
	return rv;
}

/* What an executed statement returned: the rows (buffered, bound) or the
 * rows it changed. */
static int exec_result(struct db_stmt *st, fwd_error_t *err)
{
	if (mysql_stmt_field_count(st->stmt) == 0) {
		my_ulonglong n = mysql_stmt_affected_rows(st->stmt);

		st->affected = n == (my_ulonglong)-1 ? 0 : (uint64_t)n;
		st->insert_id = mysql_stmt_insert_id(st->stmt);
		return 0;
	}
	/* Buffer the rows so the maximum lengths are known (a stream reads
	 * them as db_fetch() asks). */
	if (!st->stream && mysql_stmt_store_result(st->stmt))
		return stmt_fail(st, err);
	st->has_result = true;
	return setup_result(st, err);
}

int db_exec(struct db_stmt *st, fwd_error_t *err)
{
	free_result(st);
	st->affected = 0;
	st->insert_id = 0;
	if (st->n_params && mysql_stmt_bind_param(st->stmt, st->pbind))
		return stmt_fail(st, err);
	if (mysql_stmt_execute(st->stmt))
		return stmt_fail(st, err);
	return exec_result(st, err);
}

int db_fetch(struct db_stmt *st, fwd_error_t *err)
{
	int r;

	if (!st->has_result)
		return 0;
	r = mysql_stmt_fetch(st->stmt);
	if (r == MYSQL_DATA_TRUNCATED && st->stream) {
		/* not with a declared length; an error rather than a cut
		 * value */
		errprintf(err,
			  "database %s: a streamed value is longer than "
			  "its column's declared length",
			  st->db->where);
		return -1;
	}
	if (r == 0 || r == MYSQL_DATA_TRUNCATED) {
		for (unsigned int i = 0; i < st->n_cols; i++) {
			struct db_col *c = &st->cols[i];

			if (c->kind == COL_TEXT && !c->is_null)
				c->buf[c->len < c->cap ? c->len : c->cap - 1] =
					'\0';
		}
		return 1;
	}
	if (r == MYSQL_NO_DATA) {
		/* Every row is read: free the connection for the next
		 * statement (a CALL's trailing results). */
		mysql_stmt_free_result(st->stmt);
		st->has_result = false;
		drain_results(st);
		return 0;
	}
	return stmt_fail(st, err);
}

uint64_t db_affected(const struct db_stmt *st)
{
	return st->affected;
}

uint64_t db_insert_id(const struct db_stmt *st)
{
	return st->insert_id;
}

unsigned int db_col_count(const struct db_stmt *st)
{
	return st->n_cols;
}

static const struct db_col *col(const struct db_stmt *st, unsigned int i)
{
	if (i >= st->n_cols || st->cols[i].is_null)
		return NULL;
	return &st->cols[i];
}

bool db_col_null(const struct db_stmt *st, unsigned int i)
{
	return col(st, i) == NULL;
}

int64_t db_col_int64(const struct db_stmt *st, unsigned int i)
{
	const struct db_col *c = col(st, i);

	if (!c)
		return 0;
	switch (c->kind) {
	case COL_INT:
		return c->i;
	case COL_DOUBLE:
		return (int64_t)c->d;
	default:
		return strtoll(c->buf, NULL, 10);
	}
}

uint64_t db_col_uint64(const struct db_stmt *st, unsigned int i)
{
	const struct db_col *c = col(st, i);
	uint64_t v;

	if (!c)
		return 0;
	switch (c->kind) {
	case COL_INT:
		memcpy(&v, &c->i, sizeof(v));
		return v;
	case COL_DOUBLE:
		return c->d > 0 ? (uint64_t)c->d : 0;
	default:
		return strtoull(c->buf, NULL, 10);
	}
}

double db_col_double(const struct db_stmt *st, unsigned int i)
{
	const struct db_col *c = col(st, i);

	if (!c)
		return 0;
	switch (c->kind) {
	case COL_INT:
		return c->is_unsigned ? (double)(uint64_t)c->i : (double)c->i;
	case COL_DOUBLE:
		return c->d;
	default:
		return strtod(c->buf, NULL);
	}
}

const char *db_col_text(const struct db_stmt *st, unsigned int i)
{
	struct db_col *c;

	if (i >= st->n_cols || st->cols[i].is_null)
		return NULL;
	c = &st->cols[i];
	switch (c->kind) {
	case COL_INT:
		if (c->is_unsigned)
			snprintf(c->scratch, sizeof(c->scratch), "%" PRIu64,
				 (uint64_t)c->i);
		else
			snprintf(c->scratch, sizeof(c->scratch), "%" PRId64,
				 c->i);
		return c->scratch;
	case COL_DOUBLE:
		snprintf(c->scratch, sizeof(c->scratch), "%.17g", c->d);
		return c->scratch;
	default:
		return c->buf;
	}
}

/* ---- one-shot helpers ---- */

static int bind_va(struct db_stmt *st, const char *types, va_list ap,
		   fwd_error_t *err)
{
	unsigned int idx = 0;
	int r = 0;

	for (const char *t = types; *t; t++, idx++) {
		if (idx >= st->n_params) {
			errno = EINVAL;
			return errprintf(err,
					 "database: %zu values for %u "
					 "parameters",
					 strlen(types), st->n_params);
		}
		switch (*t) {
		case 'i':
			r = db_bind_int64(st, idx, va_arg(ap, int64_t));
			break;
		case 'u':
			r = db_bind_uint64(st, idx, va_arg(ap, uint64_t));
			break;
		case 'd':
			r = db_bind_double(st, idx, va_arg(ap, double));
			break;
		case 's':
			r = db_bind_text(st, idx, va_arg(ap, const char *));
			break;
		case 'n':
			r = db_bind_null(st, idx);
			break;
		default:
			errno = EINVAL;
			return errprintf(err, "database: bad type letter '%c'",
					 *t);
		}
		if (r < 0)
			return errprintf(err, "database: binding value %u: %s",
					 idx + 1, strerror(errno));
	}
	if (idx != st->n_params) {
		errno = EINVAL;
		return errprintf(err, "database: %u values for %u parameters",
				 idx, st->n_params);
	}
	return 0;
}

/*
 * A statement run once, prepared and executed in one round trip
 * (mariadb_stmt_execute_direct: the server prepares it and runs it with
 * the values sent along; still a prepared statement, the values never
 * enter the SQL), one value per letter of types.  The executed statement,
 * or NULL with err.
 */
static struct db_stmt *exec_direct(struct db *db, bool stream, const char *sql,
				   const char *types, va_list ap,
				   fwd_error_t *err)
{
	struct db_stmt *st;
	unsigned int n = (unsigned int)strlen(types);

	if (db->caching && !stream) {
		/* A connection that lives long (db_stmt_cache()): the
		 * statement is prepared once, then each run is its
		 * execution alone, without the server parsing it again. */
		if (!(st = db_prepare(db, sql, err)))
			return NULL;
		if (bind_va(st, types, ap, err) < 0 || db_exec(st, err) < 0) {
			st->failed = true; /* out of the cache */
			db_stmt_close(st);
			return NULL;
		}
		return st;
	}
	if (!(st = stmt_new(db, err)))
		return NULL;
	st->stream = stream;
	if (alloc_params(st, n, err) < 0 || bind_va(st, types, ap, err) < 0)
		goto fail;
	if (mysql_stmt_attr_set(st->stmt, STMT_ATTR_PREBIND_PARAMS, &n) ||
	    (n && mysql_stmt_bind_param(st->stmt, st->pbind)) ||
	    mariadb_stmt_execute_direct(st->stmt, sql, strlen(sql))) {
		stmt_fail(st, err);
		goto fail;
	}
	if (exec_result(st, err) < 0)
		goto fail;
	return st;
fail:
	db_stmt_close(st);
	return NULL;
}

int64_t db_execf(struct db *db, fwd_error_t *err, const char *sql,
		 const char *types, ...)
{
	struct db_stmt *st;
	int64_t rv = -1;
	va_list ap;

	va_start(ap, types);
	st = exec_direct(db, false, sql, types, ap, err);
	va_end(ap);
	if (!st)
		return -1;
	rv = (int64_t)db_affected(st);
	db_stmt_close(st);
	return rv;
}

int db_query_int64(struct db *db, fwd_error_t *err, int64_t *out,
		   const char *sql, const char *types, ...)
{
	struct db_stmt *st;
	int rv = -1;
	va_list ap;
	int r;

	va_start(ap, types);
	st = exec_direct(db, false, sql, types, ap, err);
	va_end(ap);
	if (!st)
		return -1;
	r = db_fetch(st, err);
	if (r < 0)
		goto out;
	if (r > 0)
		*out = db_col_int64(st, 0);
	rv = r;
out:
	db_stmt_close(st);
	return rv;
}

struct db_stmt *db_queryf(struct db *db, fwd_error_t *err, const char *sql,
			  const char *types, ...)
{
	struct db_stmt *st;
	va_list ap;

	va_start(ap, types);
	st = exec_direct(db, false, sql, types, ap, err);
	va_end(ap);
	return st;
}

struct db_stmt *db_queryf_stream(struct db *db, fwd_error_t *err,
				 const char *sql, const char *types, ...)
{
	struct db_stmt *st;
	va_list ap;

	va_start(ap, types);
	st = exec_direct(db, true, sql, types, ap, err);
	va_end(ap);
	return st;
}

void db_append_placeholders(char *sql, size_t size, size_t n)
{
	size_t len = strlen(sql);

	for (size_t i = 0; i < n && len + 2 < size; i++) {
		if (i)
			sql[len++] = ',';
		sql[len++] = '?';
	}
	sql[len] = '\0';
}

struct db_stmt *db_prepare_rows(struct db *db, const char *head,
				const char *row, size_t n, const char *tail,
				fwd_error_t *err)
{
	size_t len = strlen(head) + n * (strlen(row) + 2) + strlen(tail) + 1;
	char *sql = malloc(len), *p;
	struct db_stmt *st;

	if (!sql) {
		errprintf(err, "database %s: out of memory", db->where);
		return NULL;
	}
	p = sql + sprintf(sql, "%s", head);
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? ", " : "", row);
	strcpy(p, tail);
	st = db_prepare(db, sql, err);
	free(sql);
	return st;
}

struct db_stmt *db_prepare_rows_upto(struct db *db, struct db_stmt **cache,
				     const size_t *classes, size_t n,
				     const char *head, const char *row,
				     const char *tail, size_t *k,
				     fwd_error_t *err)
{
	size_t c = 0;

	while (classes[c] > n)
		c++;
	*k = classes[c];
	if (!cache[c])
		cache[c] =
			db_prepare_rows(db, head, row, classes[c], tail, err);
	return cache[c];
}

/* ---- transactions and locks ---- */

int db_begin(struct db *db, fwd_error_t *err)
{
	if (db_execf(db, err, "START TRANSACTION", "") < 0)
		return -1;
	db->in_txn = true;
	return 0;
}

bool db_in_txn(const struct db *db)
{
	return db->in_txn;
}

int db_commit(struct db *db, fwd_error_t *err)
{
	db->in_txn = false;
	if (mysql_commit(db->conn))
		return conn_fail(db, err);
	return 0;
}

int db_rollback(struct db *db)
{
	int saved = errno;

	if (db && db->conn)
		mysql_rollback(db->conn);
	if (db)
		db->in_txn = false;
	errno = saved;
	return 0;
}

/* One attempt: START TRANSACTION, then the locking read waiting at most
 * `wait` whole seconds (MariaDB's SELECT ... FOR UPDATE WAIT n: the
 * session's own bound, session_setup()'s, stays for the rest of the
 * transaction, and no SET costs a round trip).  1 = locked, 0 = the wait
 * ran out (the transaction is rolled back), -1 = error. */
static int lock_attempt(struct db *db, const char *lock_sql, const char *what,
			int64_t wait, fwd_error_t *err)
{
	struct db_stmt *st;
	char sql[512];
	int rows = 0, r, rv = -1;

	if (snprintf(sql, sizeof(sql), "%s WAIT %lld", lock_sql,
		     (long long)wait) >= (int)sizeof(sql)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "database %s: %s statement too long",
				 db->where, what);
	}
	if (db_begin(db, err) < 0)
		return -1;
	if (!(st = db_prepare(db, sql, err))) {
		db_rollback(db);
		return -1;
	}
	if (db_exec(st, err) == 0) {
		while ((r = db_fetch(st, err)) > 0)
			rows++;
		if (r == 0 && rows > 0) {
			db_stmt_close(st);
			return 1;
		}
		/* No row, no lock: a locking read of a missing row takes
		 * only a gap lock, which others share. */
		if (r == 0) {
			errno = ENOENT;
			errprintf(err,
				  "database %s: the %s row is missing (see "
				  "db/SCHEMA.md)",
				  db->where, what);
		}
	} else if (mysql_stmt_errno(st->stmt) == ER_LOCK_WAIT_TIMEOUT) {
		rv = 0;
	}
	db_stmt_close(st);
	db_rollback(db);
	return rv;
}

int db_begin_locked(struct db *db, const char *lock_sql, const char *what,
		    double timeout, fwd_error_t *err)
{
	double deadline = fwd_clock_mono() + (timeout > 0 ? timeout : 0);
	/* Each wait stays well inside the client's read timeout, so a long
	 * lock wait is never taken for a dead server.  InnoDB counts whole
	 * seconds; under 2 s of read timeout, poll without waiting. */
	int64_t step_max = (int64_t)floor(db->timeout / 2);
	int r = -1;

	for (;;) {
		double left = deadline - fwd_clock_mono();
		int64_t step = left > 0 ? (int64_t)ceil(left) : 0;

		if (step > step_max)
			step = step_max;
		r = lock_attempt(db, lock_sql, what, step, err);
		if (r != 0 || fwd_clock_mono() >= deadline)
			break;
		if (step == 0) {
			struct timespec ts = {0, 20 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	if (r > 0)
		return 0;
	if (r == 0) {
		errno = EAGAIN;
		errprintf(err,
			  "database %s: %s held elsewhere for more than %gs",
			  db->where, what, timeout);
	}
	return -1;
}

static void lock_name(const struct db *db, const char *name, char *buf,
		      size_t len)
{
	/* Named locks are server-wide: scope them to this database. */
	snprintf(buf, len, "%s.%s", db->dbname, name);
}

int db_lock(struct db *db, const char *name, double timeout, fwd_error_t *err)
{
	char full[200];
	double deadline = fwd_clock_mono() + (timeout > 0 ? timeout : 0);
	int64_t got = 0;
	int r;

	lock_name(db, name, full, sizeof(full));
	/*
	 * Wait in steps shorter than the read timeout, so a long lock wait
	 * is never mistaken by the client for a dead server.
	 */
	for (;;) {
		double left = deadline - fwd_clock_mono();
		double step = left;

		if (step > db->timeout / 2)
			step = db->timeout / 2;
		if (step > 1)
			step = 1;
		if (step < 0)
			step = 0;
		r = db_query_int64(db, err, &got, "SELECT GET_LOCK(?, ?)", "sd",
				   full, step);
		if (r < 0)
			return -1;
		if (r > 0 && got == 1)
			return 0;
		if (fwd_clock_mono() >= deadline)
			break;
	}
	errno = EAGAIN;
	return errprintf(err,
			 "database %s: lock %s held elsewhere for more than "
			 "%gs",
			 db->where, full, timeout);
}

int db_unlock(struct db *db, const char *name, fwd_error_t *err)
{
	char full[200];
	int64_t got = 0;

	lock_name(db, name, full, sizeof(full));
	if (db_query_int64(db, err, &got, "SELECT RELEASE_LOCK(?)", "s", full) <
	    0)
		return -1;
	return 0;
}

static bool ident_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 64)
		return false;
	if (*s >= '0' && *s <= '9')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

/* 0, or -1 with `what` and the names in the error (EINVAL): the table
 * and column a caller names are spliced into SQL, so only identifiers. */
static int table_column_ok(const char *what, const char *table,
			   const char *column, fwd_error_t *err)
{
	if (ident_ok(table) && ident_ok(column))
		return 0;
	errno = EINVAL;
	return errprintf(err, "%sbad table or column name '%s.%s'", what,
			 table ? table : "(null)", column ? column : "(null)");
}

int db_duration_classes(struct db *db, const char *table, const char *column,
			unsigned char *classes, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	char sql[200];
	int r;

	*n = 0;
	if (table_column_ok("", table, column, err) < 0)
		return -1;
	/* a loose scan of the (class, start) index: no WHERE (IS NOT NULL
	 * makes it a scan of the whole index), the open periods' NULL
	 * skipped here */
	snprintf(sql, sizeof(sql), "SELECT DISTINCT %s FROM %s", column, table);
	if (!(st = db_queryf(db, err, sql, "")))
		return -1;
	while ((r = db_fetch(st, err)) > 0) {
		int64_t k = db_col_int64(st, 0);

		if (db_col_null(st, 0))
			continue;
		if (k < 0 || k >= DB_DURATION_CLASSES) {
			db_stmt_close(st);
			errno = ERANGE;
			return errprintf(err, "%s.%s: duration class %lld",
					 table, column, (long long)k);
		}
		classes[(*n)++] = (unsigned char)k;
	}
	db_stmt_close(st);
	return r < 0 ? -1 : 0;
}

int64_t db_duration_floor(int64_t from, unsigned int k)
{
	/* 60 * 2^57 is the last span an int64_t holds */
	int64_t span = k <= 57 ? (int64_t)60 << k : INT64_MAX;

	return from < INT64_MIN + span ? INT64_MIN : from - span;
}

char *db_duration_sql(const char *head, const char *part, const char *tail,
		      size_t n_classes)
{
	size_t lh = strlen(head), lp = strlen(part), lt = strlen(tail);
	char *sql = malloc(lh + n_classes * lp + lt + 1), *q = sql;

	if (!sql)
		return NULL;
	memcpy(q, head, lh);
	q += lh;
	for (size_t k = 0; k < n_classes; k++, q += lp)
		memcpy(q, part, lp);
	memcpy(q, tail, lt + 1);
	return sql;
}

void db_bind_duration_parts(struct db_stmt *st, unsigned int *idx,
			    const unsigned char *classes, size_t n_classes,
			    int64_t from, int64_t to)
{
	for (size_t k = 0; k < n_classes; k++) {
		db_bind_int64(st, (*idx)++, classes[k]);
		db_bind_int64(st, (*idx)++,
			      db_duration_floor(from, classes[k]));
		db_bind_int64(st, (*idx)++, to);
		db_bind_int64(st, (*idx)++, from);
	}
}

int db_prune_before(struct db *db, struct db_pruned *p, const char *column,
		    bool dry_run, fwd_error_t *err)
{
	char sql[200];

	p->rows = 0;
	p->batches = 0;
	if (table_column_ok("prune: ", p->table, column, err) < 0)
		return -1;
	if (dry_run) {
		snprintf(sql, sizeof(sql),
			 "SELECT COUNT(*) FROM %s WHERE %s < ?", p->table,
			 column);
		return db_query_int64(db, err, &p->rows, sql, "i", p->cutoff) <
				       0
			       ? -1
			       : 0;
	}
	if (db_execf(db, err,
		     "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
		     "") < 0)
		return errprefix(err, "prune %s", p->table);
	snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s < ? LIMIT %d",
		 p->table, column, DB_PRUNE_CHUNK);
	for (;;) {
		int64_t n = db_execf(db, err, sql, "i", p->cutoff);

		if (n < 0)
			return errprefix(err, "prune %s", p->table);
		p->rows += n;
		p->batches++;
		if (n < DB_PRUNE_CHUNK)
			break;
	}
	return 0;
}

int db_fetch_uint64s(struct db_stmt *st, uint64_t **v, size_t *n,
		     fwd_error_t *err)
{
	size_t cap = *n;
	int r;

	while ((r = db_fetch(st, err)) > 0) {
		if (FWD_GROW(*v, cap, *n + 1, 64) < 0)
			return errprintf(err, "out of memory");
		(*v)[(*n)++] = db_col_uint64(st, 0);
	}
	return r < 0 ? -1 : 0;
}

int64_t db_load_local(struct db *db, const char *sql, const char *rows,
		      size_t len, bool *refused, fwd_error_t *err)
{
	int rc;
	unsigned int code;

	*refused = false;
	db->infile = rows;
	db->infile_len = len;
	db->infile_at = 0;
	rc = mysql_real_query(db->conn, sql, (unsigned long)strlen(sql));
	db->infile = NULL;
	if (rc == 0)
		return (int64_t)mysql_affected_rows(db->conn);
	code = mysql_errno(db->conn);
	/* the server (local_infile=OFF) or the library refused LOCAL: the
	 * caller writes its rows another way */
	if (code == ER_NOT_ALLOWED_COMMAND || code == CR_UNKNOWN_ERROR ||
	    code == ER_LOAD_INFILE_CAPABILITY_DISABLED)
		*refused = true;
	return conn_fail(db, err);
}

int db_text_room(struct db_text *t, size_t n)
{
	return FWD_GROW(t->buf, t->cap, t->len + n, 1 << 16);
}

static char *text_sep(struct db_text *t)
{
	char *p = t->buf + t->len;

	if (t->in_row)
		*p++ = '\t';
	t->in_row = true;
	return p;
}

void db_text_str(struct db_text *t, const char *s)
{
	char *p = text_sep(t);

	for (; *s; s++) {
		/* the field and line separators and the escape itself */
		if (*s == '\\' || *s == '\t' || *s == '\n')
			*p++ = '\\';
		*p++ = *s;
	}
	t->len = (size_t)(p - t->buf);
}

void db_text_u64(struct db_text *t, uint64_t v)
{
	t->len = (size_t)(units_put_dec(text_sep(t), v, 0) - t->buf);
}

void db_text_i64(struct db_text *t, int64_t v)
{
	char *p = text_sep(t);

	if (v < 0) {
		*p++ = '-';
		p = units_put_dec(p, 0 - (uint64_t)v, 0);
	} else {
		p = units_put_dec(p, (uint64_t)v, 0);
	}
	t->len = (size_t)(p - t->buf);
}

void db_text_double(struct db_text *t, double v)
{
	/* whole and within +-2^53: %.17g prints the integer */
	if (v >= -9007199254740992.0 && v <= 9007199254740992.0 &&
	    v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
		db_text_i64(t, (int64_t)v);
		return;
	}
	{
		char *p = text_sep(t);

		t->len = (size_t)(p - t->buf) +
			 (size_t)snprintf(p, 32, "%.17g", v);
	}
}

void db_text_null(struct db_text *t)
{
	char *p = text_sep(t);

	*p++ = '\\';
	*p++ = 'N';
	t->len = (size_t)(p - t->buf);
}

void db_text_row_end(struct db_text *t)
{
	t->buf[t->len++] = '\n';
	t->in_row = false;
}

void db_text_clear(struct db_text *t)
{
	t->len = 0;
	t->in_row = false;
}

void db_text_free(struct db_text *t)
{
	free(t->buf);
	*t = (struct db_text){0};
}
