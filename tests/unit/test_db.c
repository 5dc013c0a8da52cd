/* SPDX-License-Identifier: GPL-2.0-or-later */
/* db_connect's password-file checks and "server down" errors; no server. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/db.h"
#include "policies/policy.h"

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/fwd-test-db.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static struct db_config cfg(const char *pw, const char *node_pw)
{
	static char sock[128];
	struct db_config c = {
		.name = (char *)"fwdalloc",
		.user = (char *)"fwdalloc",
		.node_user = (char *)"fwdalloc_node",
		.timeout = 1,
	};

	snprintf(sock, sizeof(sock), "%s/no-server.sock", dir);
	c.socket = sock;
	c.password_file = (char *)pw;
	c.node_password_file = (char *)node_pw;
	return c;
}

struct pwcase {
	const char *file;    /* under dir */
	const char *content; /* NULL: do not create */
	mode_t mode;
	bool symlink;
	int want_errno;
	const char *want; /* message after "password file <path>: " */
	bool chmod_hint;  /* followed by " (chmod 600 <path>)" */
};

/* clang-format off */
static const struct pwcase pwcases[] = {
	{ "g.pass", "secret\n", 0640, false, EPERM,
	  "mode 0640 gives access to group or others: refusing it", true },
	{ "w.pass", "secret\n", 0604, false, EPERM,
	  "mode 0604 gives access to group or others: refusing it", true },
	{ "x.pass", "secret\n", 0610, false, EPERM,
	  "mode 0610 gives access to group or others: refusing it", true },
	{ "missing.pass", NULL, 0, false, ENOENT,
	  "No such file or directory" },
	{ "empty.pass", "\nsecond\n", 0600, false, EINVAL,
	  "first line is empty" },
	{ "link.pass", "secret\n", 0600, true, ELOOP,
	  "Too many levels of symbolic links" },
};
/* clang-format on */

static void test_password_files(void **state)
{
	for (size_t i = 0; i < sizeof(pwcases) / sizeof(pwcases[0]); i++) {
		const struct pwcase *c = &pwcases[i];
		char path[256], want[1024];
		struct db_config d;
		fwd_error_t err = {{0}};

		snprintf(path, sizeof(path), "%s/%s", dir, c->file);
		if (c->symlink) {
			char target[256];

			snprintf(target, sizeof(target), "%s/real.pass", dir);
			write_file(target, c->content, c->mode);
			unlink(path);
			assert_int_equal(symlink(target, path), 0);
		} else if (c->content) {
			write_file(path, c->content, c->mode);
		}
		d = cfg(path, NULL);
		errno = 0;
		assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
		assert_int_equal(errno, c->want_errno);
		snprintf(want, sizeof(want), "password file %s: %s", path,
			 c->want);
		if (c->chmod_hint)
			snprintf(want + strlen(want),
				 sizeof(want) - strlen(want), " (chmod 600 %s)",
				 path);
		assert_string_equal(err.text, want);
	}
}

/* A password line that fills the buffer (511 bytes and the NUL), with or
 * without its end of line, is read whole: the connection then fails for
 * want of a server, not on the file.  A longer one is refused, named,
 * rather than cut (it would fail later as a wrong password). */
static void test_password_long(void **state)
{
	static const size_t lens[] = {1, 510, 511, 512, 600, 4096};

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char path[256], *text = malloc(lens[i] + 2);
		struct db_config d;
		fwd_error_t err = {{0}};

		assert_non_null(text);
		memset(text, 'p', lens[i]);
		text[lens[i]] = '\n';
		text[lens[i] + 1] = '\0';
		snprintf(path, sizeof(path), "%s/long%zu.pass", dir, lens[i]);
		write_file(path, text, 0600);
		free(text);
		d = cfg(path, NULL);
		errno = 0;
		assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
		if (lens[i] > 511) {
			char want[512];

			snprintf(want, sizeof(want),
				 "password file %s: first line longer than "
				 "511 bytes: refusing it",
				 path);
			assert_int_equal(errno, EINVAL);
			assert_string_equal(err.text, want);
		} else if (!db_err_unavailable(errno) ||
			   strstr(err.text, "password file")) {
			fail_msg("%zu bytes: errno %d: %s", lens[i], errno,
				 err.text);
		}
	}
	/* The same line without its end of line. */
	{
		char path[256], text[512];
		struct db_config d;
		fwd_error_t err = {{0}};

		memset(text, 'q', 511);
		text[511] = '\0';
		snprintf(path, sizeof(path), "%s/long511-nonl.pass", dir);
		write_file(path, text, 0600);
		d = cfg(path, NULL);
		errno = 0;
		assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
		if (!db_err_unavailable(errno) ||
		    strstr(err.text, "password file"))
			fail_msg("511 bytes, no newline: errno %d: %s", errno,
				 err.text);
	}
}

/* A FIFO (or device) given as the password file must be refused, not
 * block the caller in open(2) until someone writes to it: the node prolog
 * must never hang.  The alarm turns a hang into a failure. */
static void test_password_fifo(void **state)
{
	char path[256], want[400];
	struct db_config d;
	fwd_error_t err = {{0}};

	snprintf(path, sizeof(path), "%s/fifo.pass", dir);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	d = cfg(path, NULL);
	alarm(10);
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	alarm(0);
	assert_int_equal(errno, EPERM);
	snprintf(want, sizeof(want), "password file %s: not a regular file",
		 path);
	assert_string_equal(err.text, want);
}

/*
 * Root may read an owner-only password file another account owns (the
 * controller's file belongs to SlurmUser, and an admin runs fwdctl as
 * root): the connection goes on to the server.  Another account may not:
 * the file must be its own.
 */
static void test_foreign_owner(void **state)
{
	char path[256], want[400];
	struct db_config d;
	fwd_error_t err = {{0}};
	int status;
	pid_t pid;

	if (geteuid() != 0)
		skip(); /* only root can give a file away */
	snprintf(path, sizeof(path), "%s/other.pass", dir);
	write_file(path, "secret\n", 0600);
	assert_int_equal(chown(path, 1, 1), 0);
	d = cfg(path, NULL);
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	/* Past the password file: the test's server is not there. */
	assert_int_equal(errno, ECONNREFUSED);
	assert_null(strstr(err.text, "password file"));
	/* Still refused to root: group or other access. */
	assert_int_equal(chmod(path, 0640), 0);
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(err.text, "mode 0640 gives access"));
	/* An account other than root and the owner: refused as foreign. */
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(2) < 0 || setuid(2) < 0)
			_exit(3);
		d = cfg(path, NULL);
		if (db_connect(&d, DB_ROLE_CONTROLLER, &err) || errno != EPERM)
			_exit(1);
		snprintf(want, sizeof(want),
			 "password file %s: owned by uid 1, not by the caller "
			 "(uid 2): refusing it",
			 path);
		_exit(strcmp(err.text, want) ? 2 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_node_role_uses_node_file(void **state)
{
	char good[256], bad[256], want[600];
	struct db_config d;
	fwd_error_t err = {{0}};

	snprintf(good, sizeof(good), "%s/ctl.pass", dir);
	snprintf(bad, sizeof(bad), "%s/node.pass", dir);
	write_file(good, "secret\n", 0600);
	write_file(bad, "secret\n", 0644);
	d = cfg(good, bad);
	assert_null(db_connect(&d, DB_ROLE_NODE, &err));
	assert_int_equal(errno, EPERM);
	snprintf(want, sizeof(want),
		 "password file %s: mode 0644 gives access to group or others: "
		 "refusing it (chmod 600 %s)",
		 bad, bad);
	assert_string_equal(err.text, want);
}

static void test_server_down(void **state)
{
	char good[256], want[300];
	struct db_config d;
	fwd_error_t err = {{0}};

	snprintf(good, sizeof(good), "%s/ctl.pass", dir);
	write_file(good, "secret\r\n", 0600);
	d = cfg(good, NULL);
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, ECONNREFUSED);
	assert_true(db_err_unavailable(errno));
	snprintf(want, sizeof(want),
		 "database socket %s: (2002) Can't connect to local server "
		 "through socket '%s'",
		 d.socket, d.socket);
	assert_int_equal(strncmp(err.text, want, strlen(want)), 0);

	/* TCP to a closed port on loopback */
	d.socket = NULL;
	d.host = (char *)"127.0.0.1";
	d.port = 1;
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_true(db_err_unavailable(errno));
	assert_int_equal(strncmp(err.text, "database 127.0.0.1:1: (2002) ",
				 strlen("database 127.0.0.1:1: (2002) ")),
			 0);
}

static void test_unavailable_table(void **state)
{
	/* clang-format off */
	static const struct {
		int e;
		bool want;
	} t[] = {
		{ ECONNREFUSED, true }, { ETIMEDOUT, true }, { EACCES, true },
		{ ECONNRESET, true },   { ENOENT, false },   { EPROTO, false },
		{ EEXIST, false },      { EPERM, false },    { EAGAIN, false },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(db_err_unavailable(t[i].e), t[i].want);
	db_close(NULL);
}

/* database.hosts entries: what parses, into what, and what is refused. */
static void test_endpoint_parse(void **state)
{
	/* clang-format off */
	static const struct {
		const char *in;
		const char *socket, *host;
		uint32_t port;
	} ok[] = {
		{ "db1", "", "db1", 0 },
		{ "db1:3307", "", "db1", 3307 },
		{ "10.0.0.7:65535", "", "10.0.0.7", 65535 },
		{ "db-2.example_site.org", "", "db-2.example_site.org", 0 },
		{ "[::1]", "", "::1", 0 },
		{ "[fe80::1]:3306", "", "fe80::1", 3306 },
		{ "/run/mysqld/a.sock", "/run/mysqld/a.sock", "", 0 },
	};
	static const struct {
		const char *in, *msg;
	} bad[] = {
		{ "", "an empty endpoint" },
		{ "db1:", "port '': expected 1 to 65535" },
		{ "db1:0", "port '0': expected 1 to 65535" },
		{ "db1:65536", "port '65536': expected 1 to 65535" },
		{ "db1:33x", "port '33x': expected 1 to 65535" },
		{ "db1:+33", "port '+33': expected 1 to 65535" },
		{ ":3306", "no host before ':'" },
		{ "::1", "an IPv6 address goes in brackets, e.g. [::1]:3306" },
		{ "[::1", "an IPv6 address needs its closing ']'" },
		{ "[]:3306", "an IPv6 address needs its closing ']'" },
		{ "[::1]3306", "expected ':port' after ']'" },
		{ "[db1]:3306", "'db1' is not an IPv6 address" },
		{ "[dbx:1]:3306", "'dbx:1' is not an IPv6 address" },
		{ "db 1", "host 'db 1': only letters, digits, '.', '-' and '_'" },
		{ "db;1:3306",
		  "host 'db;1': only letters, digits, '.', '-' and '_'" },
	};
	/* clang-format on */
	struct db_endpoint e;
	fwd_error_t err;
	char longsock[200];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(db_endpoint_parse(ok[i].in, &e, &err), 0);
		assert_string_equal(e.socket, ok[i].socket);
		assert_string_equal(e.host, ok[i].host);
		assert_int_equal(e.port, ok[i].port);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(db_endpoint_parse(bad[i].in, &e, &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_string_equal(err.text, bad[i].msg);
	}
	memset(longsock, 'a', sizeof(longsock));
	longsock[0] = '/';
	longsock[sizeof(longsock) - 1] = '\0';
	assert_int_equal(db_endpoint_parse(longsock, &e, &err), -1);
	assert_string_equal(err.text, "socket path longer than 107 bytes");
	/* At the edge: 107 bytes and the NUL fill sun_path exactly; 108
	 * leave no room for it. */
	for (size_t len = 106; len <= 109; len++) {
		int want = len <= 107 ? 0 : -1;

		memset(longsock, 'a', len);
		longsock[0] = '/';
		longsock[len] = '\0';
		if (db_endpoint_parse(longsock, &e, &err) != want)
			fail_msg("socket path of %zu bytes: want %d", len,
				 want);
		if (want == 0)
			assert_int_equal(strlen(e.socket), len);
	}
}

/* Several endpoints, none answering: every one is named with its own
 * failure, in order, and the error stays "unavailable". */
static void test_endpoints_all_down(void **state)
{
	char s1[128], s2[128], want[600];
	char *hosts[3];
	struct db_config d;
	fwd_error_t err = {{0}};

	d = cfg(NULL, NULL);
	snprintf(s1, sizeof(s1), "%s/a.sock", dir);
	snprintf(s2, sizeof(s2), "%s/b.sock", dir);
	hosts[0] = s1;
	hosts[1] = (char *)"127.0.0.1:1";
	hosts[2] = s2;
	d.hosts.items = hosts;
	d.hosts.count = 3;
	/* socket/host are not used once hosts is set */
	d.host = (char *)"never.invalid";
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, ECONNREFUSED);
	assert_true(db_err_unavailable(errno));
	snprintf(want, sizeof(want),
		 "database: none of the 3 endpoints worked: socket %s: (2002) "
		 "Can't connect to local server through socket '%s'",
		 s1, s1);
	assert_int_equal(strncmp(err.text, want, strlen(want)), 0);
	assert_non_null(strstr(err.text, "; 127.0.0.1:1: (2002) "));
	snprintf(want, sizeof(want),
		 "; socket %s: (2002) Can't connect to local server through "
		 "socket '%s'",
		 s2, s2);
	assert_non_null(strstr(err.text, want));
	assert_null(strstr(err.text, "never.invalid"));

	/* An entry without a port takes database.port. */
	hosts[0] = (char *)"127.0.0.1";
	d.port = 1;
	d.hosts.count = 1;
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(strncmp(err.text, "database 127.0.0.1:1: (2002) ",
				 strlen("database 127.0.0.1:1: (2002) ")),
			 0);

	/* A bad entry (policy_load refuses it first) is EINVAL here. */
	hosts[0] = (char *)"db1:0";
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "database endpoint 'db1:0': port '0': "
				      "expected 1 to 65535");
}

/* A unix socket that takes connections into its backlog and never
 * answers them (a frozen server). */
static int silent_server(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

/* A server that accepts and never answers costs database.connect_timeout,
 * and the error names the setting and its value as configured. */
static void test_server_silent(void **state)
{
	char s1[128], s2[128], want[400];
	char *hosts[2];
	struct db_config d;
	fwd_error_t err = {{0}};
	int f1, f2;

	snprintf(s1, sizeof(s1), "%s/silent1.sock", dir);
	snprintf(s2, sizeof(s2), "%s/silent2.sock", dir);
	f1 = silent_server(s1);
	f2 = silent_server(s2);
	d = cfg(NULL, NULL);
	d.socket = s1;
	d.timeout = 30; /* not the read timeout: the connect budget */
	d.connect_timeout = 0.3;
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(db_err_unavailable(errno));
	snprintf(want, sizeof(want),
		 "database socket %s: no answer within 0.3s "
		 "(database.connect_timeout)",
		 s1);
	assert_string_equal(err.text, want);

	/* Two endpoints share the budget; the first gets its half. */
	hosts[0] = s1;
	hosts[1] = s2;
	d.hosts.items = hosts;
	d.hosts.count = 2;
	d.connect_timeout = 0.6;
	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, ETIMEDOUT);
	snprintf(want, sizeof(want),
		 "database: none of the 2 endpoints worked: socket %s: no "
		 "answer within 0.3s (database.connect_timeout); socket %s: "
		 "no answer within 0.",
		 s1, s2);
	assert_int_equal(strncmp(err.text, want, strlen(want)), 0);
	close(f1);
	close(f2);
}

/* Only a transaction the server rolled back for a conflict is retried. */
static void test_retryable_table(void **state)
{
	/* clang-format off */
	static const struct {
		int e;
		bool want;
	} t[] = {
		{ EDEADLK, true },       { EAGAIN, false },  { EEXIST, false },
		{ ECONNREFUSED, false }, { ETIMEDOUT, false }, { EPROTO, false },
		{ ENOENT, false },       { EACCES, false },  { 0, false },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(db_err_retryable(t[i].e), t[i].want);
	/* a conflict is not an outage: the prolog retries, not falls back */
	assert_false(db_err_unavailable(EDEADLK));
}

/* LOAD DATA text: separators, escapes, NULL, and numbers as printf
 * writes them (the server must read back the same value). */
static void test_load_text(void **state)
{
	static const double dv[] = {0,	     10,    -3,	     0.5,
				    1e-300,  1e300, -0.0,    9007199254740992.0,
				    1.0 / 3, 2e16,  -2.5e-7, 123456789.125};
	struct db_text t = {0};
	char want[64];

	(void)state;
	assert_int_equal(db_text_room(&t, 512), 0);
	db_text_str(&t, "fwd");
	db_text_str(&t, "a\\b\tc\nd");
	db_text_null(&t);
	db_text_u64(&t, 0);
	db_text_u64(&t, UINT64_MAX);
	db_text_i64(&t, INT64_MIN);
	db_text_i64(&t, -42);
	db_text_row_end(&t);
	db_text_str(&t, "");
	db_text_row_end(&t);
	assert_int_equal(t.len, 67);
	assert_memory_equal(t.buf,
			    "fwd\ta\\\\b\\\tc\\\nd\t\\N\t0\t"
			    "18446744073709551615\t-9223372036854775808\t-42\n"
			    "\n",
			    t.len);
	for (size_t i = 0; i < sizeof(dv) / sizeof(dv[0]); i++) {
		db_text_clear(&t);
		assert_int_equal(db_text_room(&t, 64), 0);
		db_text_double(&t, dv[i]);
		snprintf(want, sizeof(want), "%.17g", dv[i]);
		assert_int_equal(t.len, strlen(want));
		assert_memory_equal(t.buf, want, t.len);
		/* and the value read back is the same */
		t.buf[t.len] = '\0';
		assert_true(strtod(t.buf, NULL) == dv[i]);
	}
	db_text_free(&t);
	assert_null(t.buf);
}

/* Table and column names are spliced into SQL: anything but an identifier
 * is refused before the database is used (here: none). */
static void test_bad_identifiers(void **state)
{
	static const char *const bad[] = {
		NULL,
		"",
		"1st",
		"Upper",
		"a b",
		"a;DROP x",
		"a.b",
		"x`y",
		"end_at'",
		"\xc3\xa9t\xc3\xa9",
		"a123456789b123456789c123456789d123456789e123456789f123456789"
		"g1234",
	};
	struct db_pruned pr = {.cutoff = 1};
	unsigned char classes[DB_DURATION_CLASSES];
	fwd_error_t err;
	char want[200];
	size_t n = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *b = bad[i] ? bad[i] : "(null)";

		errno = 0;
		assert_int_equal(db_duration_classes(NULL, bad[i], "lasted",
						     classes, &n, &err),
				 -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(n, 0);
		snprintf(want, sizeof(want),
			 "bad table or column name '%s.lasted'", b);
		assert_string_equal(err.text, want);

		errno = 0;
		pr.table = "samples";
		pr.rows = pr.batches = 9;
		assert_int_equal(
			db_prune_before(NULL, &pr, bad[i], false, &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(pr.rows, 0);
		assert_int_equal(pr.batches, 0);
		snprintf(want, sizeof(want),
			 "prune: bad table or column name 'samples.%s'", b);
		assert_string_equal(err.text, want);
	}
	/* the last is one character past the longest name (64) */
	assert_int_equal(strlen(bad[10]), 65);
}

static void test_no_config(void **state)
{
	fwd_error_t err = {{0}};
	struct db_config d = {0};

	assert_null(db_connect(&d, DB_ROLE_CONTROLLER, &err));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "database: no database configured");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_password_files),
		cmocka_unit_test(test_password_long),
		cmocka_unit_test(test_password_fifo),
		cmocka_unit_test(test_foreign_owner),
		cmocka_unit_test(test_node_role_uses_node_file),
		cmocka_unit_test(test_server_down),
		cmocka_unit_test(test_unavailable_table),
		cmocka_unit_test(test_no_config),
		cmocka_unit_test(test_bad_identifiers),
		cmocka_unit_test(test_endpoint_parse),
		cmocka_unit_test(test_endpoints_all_down),
		cmocka_unit_test(test_server_silent),
		cmocka_unit_test(test_retryable_table),
		cmocka_unit_test(test_load_text),
	};

	return cmocka_run_group_tests_name("db", tests, setup, teardown);
}
