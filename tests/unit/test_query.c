/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Users' report requests (service/query.h): the request's text, the
 * service's checks on a decoded credential and on who may see what, and
 * the client against a fake service (a refusal, an answer in many
 * messages, a damaged or cut answer).  munged itself and the real
 * service are tested on a real cluster (tests/integration/report_identity.sh).
 */
#include "config.h"

#include <errno.h>
#include <munge.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "service/protocol.h"
#include "service/query.h"

/* ---- the request's text ----------------------------------------------- */

struct parse_case {
	const char *what;
	const char *msg;
	const char *err; /* NULL: parses; else a part of the message */
	enum svcq_kind kind;
	uint64_t job;
	int64_t since, until;
	enum svcq_format fmt;
};

static void test_parse(void **state)
{
	static const struct parse_case cases[] = {
		{"a job, json", "FWDALLOC1 Q job 42 json\nCRED", NULL, SVCQ_JOB,
		 42, 0, 0, SVCQ_JSON},
		{"a job, text, trailing NUL",
		 "FWDALLOC1 Q job 4294967295 text\nC", NULL, SVCQ_JOB,
		 4294967295u, 0, 0, SVCQ_TEXT},
		{"the machine, html",
		 "FWDALLOC1 Q machine 1700000000 1700086400 html\nMUNGE:x",
		 NULL, SVCQ_MACHINE, 0, 1700000000, 1700086400, SVCQ_HTML},
		{"no newline", "FWDALLOC1 Q job 42 json",
		 "no request head line"},
		{"a hook's request", "FWDALLOC1 P 5\nCRED",
		 "not a report request"},
		{"an unknown kind", "FWDALLOC1 Q user 42 json\nC",
		 "kind \"user\": not job or machine"},
		{"job id 0", "FWDALLOC1 Q job 0 json\nC",
		 "\"0\": not a job id"},
		{"job id too large", "FWDALLOC1 Q job 4294967296 json\nC",
		 "\"4294967296\": not a job id"},
		{"job id with a sign", "FWDALLOC1 Q job +42 json\nC",
		 "\"+42\": not a job id"},
		{"job id with a leading zero", "FWDALLOC1 Q job 042 json\nC",
		 "\"042\": not a job id"},
		{"an unknown format", "FWDALLOC1 Q job 42 pdf\nC",
		 "format \"pdf\": not text, json or html"},
		{"no format", "FWDALLOC1 Q job 42\nC", "no format"},
		{"a word more", "FWDALLOC1 Q job 42 json x\nC",
		 "more than a request"},
		{"a trailing space", "FWDALLOC1 Q job 42 json \nC",
		 "more than a request"},
		{"two spaces", "FWDALLOC1 Q job  42 json\nC", "not a job id"},
		{"an empty range", "FWDALLOC1 Q machine 100 100 json\nC",
		 "\"100\": not an end time"},
		{"no credential", "FWDALLOC1 Q job 42 json\n", "no credential"},
		{"a credential with a space", "FWDALLOC1 Q job 42 json\nAB CD",
		 "not printable ASCII"},
		{"a credential with a newline",
		 "FWDALLOC1 Q job 42 json\nAB\nCD", "not printable ASCII"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct svcq_request r;
		size_t hl = 0, cred = 0, len = strlen(c->msg);
		fwd_error_t err = {""};
		int rv;

		/* "trailing NUL" cases send the credential's NUL too */
		if (strstr(c->what, "trailing NUL"))
			len++;
		rv = svcq_parse(c->msg, len, &r, &hl, &cred, &err);
		if (c->err) {
			if (rv != -1 || !strstr(err.text, c->err))
				fail_msg("%s: want error \"%s\", got %d \"%s\"",
					 c->what, c->err, rv, err.text);
			continue;
		}
		if (rv != 0)
			fail_msg("%s: %s", c->what, err.text);
		assert_int_equal(r.kind, c->kind);
		assert_int_equal(r.format, c->fmt);
		assert_int_equal(r.job_id, c->job);
		assert_int_equal(r.since, c->since);
		assert_int_equal(r.until, c->until);
		assert_int_equal(hl, strchr(c->msg, '\n') - c->msg);
		assert_int_equal(cred, hl + 1);
	}
}

/* svcq_head() makes what svcq_parse() takes, and refuses what it would
 * not take. */
static void test_head_round_trip(void **state)
{
	static const struct svcq_request good[] = {
		{SVCQ_JOB, SVCQ_TEXT, 1, 0, 0},
		{SVCQ_JOB, SVCQ_HTML, 4294967295u, 0, 0},
		{SVCQ_MACHINE, SVCQ_JSON, 0, 0, 1},
		{SVCQ_MACHINE, SVCQ_TEXT, 0, 1700000000, 1800000000},
	};
	static const struct svcq_request bad[] = {
		{SVCQ_JOB, SVCQ_TEXT, 0, 0, 0},
		{SVCQ_JOB, SVCQ_TEXT, 4294967296u, 0, 0},
		{SVCQ_MACHINE, SVCQ_TEXT, 0, 5, 5},
		{SVCQ_MACHINE, SVCQ_TEXT, 0, -1, 5},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char head[SVCQ_HEAD_MAX + 1], msg[256];
		struct svcq_request r;
		size_t hl, cred;
		fwd_error_t err = {""};

		assert_int_equal(svcq_head(&good[i], head, sizeof(head), &err),
				 0);
		snprintf(msg, sizeof(msg), "%s\nCRED", head);
		assert_int_equal(
			svcq_parse(msg, strlen(msg), &r, &hl, &cred, &err), 0);
		assert_int_equal(hl, strlen(head));
		assert_memory_equal(&r, &good[i], sizeof(r));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char head[SVCQ_HEAD_MAX + 1];
		fwd_error_t err = {""};

		assert_int_equal(svcq_head(&bad[i], head, sizeof(head), &err),
				 -1);
		assert_non_null(strstr(err.text, "not a"));
	}
}

/* ---- the credential's checks ------------------------------------------ */

#define HEAD "FWDALLOC1 Q job 42 json"

struct cred_case {
	const char *what;
	int munge_rc;
	uid_t uid, peer;
	const char *payload; /* NULL: none */
	const char *why;     /* NULL: accepted; else a part of the refusal */
};

static void test_check_cred(void **state)
{
	static const struct cred_case cases[] = {
		{"good", EMUNGE_SUCCESS, 1001, 1001, HEAD, NULL},
		{"root's", EMUNGE_SUCCESS, 0, 0, HEAD, NULL},
		{"forged", EMUNGE_CRED_INVALID, 1001, 1001, HEAD,
		 "credential invalid (forged or damaged): TEXT"},
		{"bad MAC", EMUNGE_BAD_MAC, 1001, 1001, HEAD,
		 "credential invalid (forged or damaged)"},
		{"not a credential", EMUNGE_BAD_CRED, 1001, 1001, NULL,
		 "credential invalid (forged or damaged)"},
		{"another realm", EMUNGE_BAD_REALM, 1001, 1001, NULL,
		 "credential invalid"},
		{"replayed", EMUNGE_CRED_REPLAYED, 1001, 1001, HEAD,
		 "credential replayed: munged has decoded it before"},
		{"expired", EMUNGE_CRED_EXPIRED, 1001, 1001, HEAD,
		 "credential expired"},
		{"rewound", EMUNGE_CRED_REWOUND, 1001, 1001, HEAD,
		 "credential rewound"},
		{"for another decoder", EMUNGE_CRED_UNAUTHORIZED, 1001, 1001,
		 HEAD, "not meant for this service"},
		{"munged down", EMUNGE_SOCKET, 0, 1001, NULL,
		 "the service could not decode the credential (munged on the "
		 "controller): TEXT"},
		{"another uid's", EMUNGE_SUCCESS, 1002, 1001, HEAD,
		 "credential made by uid 1002 but sent by uid 1001"},
		{"root's, sent by a user", EMUNGE_SUCCESS, 0, 1001, HEAD,
		 "made by uid 0 but sent by uid 1001"},
		{"another job", EMUNGE_SUCCESS, 1001, 1001,
		 "FWDALLOC1 Q job 43 json",
		 "credential made for another request (its payload is not "
		 "\"" HEAD "\")"},
		{"another format", EMUNGE_SUCCESS, 1001, 1001,
		 "FWDALLOC1 Q job 42 html", "made for another request"},
		{"a longer payload", EMUNGE_SUCCESS, 1001, 1001, HEAD " ",
		 "made for another request"},
		{"a prefix", EMUNGE_SUCCESS, 1001, 1001, "FWDALLOC1 Q job 4",
		 "made for another request"},
		{"no payload", EMUNGE_SUCCESS, 1001, 1001, NULL,
		 "made for another request"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cred_case *c = &cases[i];
		struct svcq_cred cr = {
			.munge_rc = c->munge_rc,
			.munge_text = "TEXT",
			.uid = c->uid,
			.payload = c->payload,
			.payload_len = c->payload ? strlen(c->payload) : 0,
		};
		char why[512] = "";
		int rv = svcq_check_cred(&cr, c->peer, HEAD, strlen(HEAD), why,
					 sizeof(why));

		if (!c->why) {
			if (rv != 0)
				fail_msg("%s: refused: %s", c->what, why);
			continue;
		}
		if (rv != -1 || !strstr(why, c->why))
			fail_msg("%s: want \"%s\", got %d \"%s\"", c->what,
				 c->why, rv, why);
	}
}

/* ---- who sees what ----------------------------------------------------- */

struct access_case {
	const char *what;
	enum svcq_kind kind;
	const char *user;
	bool admin;
	int owner_rc;
	const char *owner;
	const char *group;
	const char *why; /* NULL: allowed */
};

static void test_check_access(void **state)
{
	static const struct access_case cases[] = {
		{"own job", SVCQ_JOB, "alice", false, 0, "alice", NULL, NULL},
		{"another's job", SVCQ_JOB, "alice", false, 0, "bob", "ops",
		 "job 42 is not yours: alice (uid 1001) may see only the "
		 "reports of its own jobs"},
		{"a name that only starts the same", SVCQ_JOB, "ali", false, 0,
		 "alice", NULL, "is not yours"},
		{"an owner that is longer", SVCQ_JOB, "alice", false, 0,
		 "alice2", NULL, "is not yours"},
		{"an admin, another's job", SVCQ_JOB, "carol", true, 0, "bob",
		 "ops", NULL},
		{"no such job", SVCQ_JOB, "alice", false, 1, "", NULL,
		 "job 42: no such job"},
		{"no such job, admin", SVCQ_JOB, "carol", true, 1, "", NULL,
		 "job 42: no such job"},
		{"a user without a name", SVCQ_JOB, NULL, false, 0, "alice",
		 NULL, "is not yours"},
		{"the machine, a user", SVCQ_MACHINE, "alice", false, 0, NULL,
		 "ops",
		 "the machine report is for admins: alice (uid 1001) is "
		 "neither root nor in group ops"},
		{"the machine, no admin group", SVCQ_MACHINE, "alice", false, 0,
		 NULL, NULL, "names no reports.admin_group"},
		{"the machine, an admin", SVCQ_MACHINE, "carol", true, 0, NULL,
		 "ops", NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct access_case *c = &cases[i];
		struct svcq_request r = {
			.kind = c->kind, .job_id = 42, .since = 1, .until = 2};
		char why[512] = "";
		int rv = svcq_check_access(&r, c->user, 1001, c->admin,
					   c->owner_rc, c->owner, c->group, why,
					   sizeof(why));

		if (!c->why) {
			if (rv != 0)
				fail_msg("%s: refused: %s", c->what, why);
			continue;
		}
		if (rv != -1 || !strstr(why, c->why))
			fail_msg("%s: want \"%s\", got %d \"%s\"", c->what,
				 c->why, rv, why);
	}
}

static void test_in_group(void **state)
{
	static const gid_t gids[] = {100, 27, 4242};

	(void)state;
	assert_true(svcq_in_group(gids, 3, 4242));
	assert_true(svcq_in_group(gids, 3, 100));
	assert_false(svcq_in_group(gids, 3, 42));
	assert_false(svcq_in_group(gids, 2, 4242));
	assert_false(svcq_in_group(gids, 0, 100));
}

/* ---- the client against a fake service --------------------------------- */

/* What the fake service does with the one request it takes. */
enum fake_mode {
	FAKE_REFUSE,  /* "FWDALLOC1 R <why>" */
	FAKE_CHUNKED, /* a 200 000-byte report in 64 KiB messages */
	FAKE_EMPTY,   /* an empty report */
	FAKE_EXACT,   /* a report that fills two messages exactly */
	FAKE_CUT,     /* says 1000 bytes, sends 10 and hangs up */
	FAKE_DAMAGED, /* not a fwdalloc answer */
	FAKE_LONGER,  /* sends more than it says */
};

#define BIG 200000

static char sock_path[108];

/* Listen, take one request, check it and answer as mode says; the
 * request's text goes to the file path.req for the test to read. */
static pid_t fake_service(enum fake_mode mode)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	pid_t pid;

	snprintf(sock_path, sizeof(sock_path), "/tmp/fwd-test-query.%ld",
		 (long)getpid());
	unlink(sock_path);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char buf[FWD_SVC_MSG_MAX], big[BIG];
		int fd = accept(lfd, NULL, NULL);
		ssize_t got = recv(fd, buf, sizeof(buf) - 1, 0);
		char path[160];
		FILE *f;
		int n;

		if (got < 0)
			_exit(1);
		snprintf(path, sizeof(path), "%s.req", sock_path);
		f = fopen(path, "w");
		fwrite(buf, 1, (size_t)got, f);
		fclose(f);
		switch (mode) {
		case FAKE_REFUSE:
			n = snprintf(buf, sizeof(buf),
				     FWD_SVC_MAGIC " R job 42 is not yours\n");
			send(fd, buf, (size_t)n, 0);
			break;
		case FAKE_CHUNKED:
			for (size_t i = 0; i < BIG; i++)
				big[i] = (char)('a' + i % 26);
			if (svcq_answer(fd, big, BIG, 5) < 0)
				_exit(1);
			break;
		case FAKE_EMPTY:
			if (svcq_answer(fd, "", 0, 5) < 0)
				_exit(1);
			break;
		case FAKE_EXACT:
			/* the text's end at a message's end: its length has
			 * 6 digits, as 100000 has */
			n = snprintf(buf, sizeof(buf),
				     FWD_SVC_MAGIC " 0 A %d\n", 100000);
			memset(big, 'x', 2 * FWD_SVC_MSG_MAX - (size_t)n);
			if (svcq_answer(fd, big,
					2 * FWD_SVC_MSG_MAX - (size_t)n, 5) < 0)
				_exit(1);
			break;
		case FAKE_CUT:
			n = snprintf(buf, sizeof(buf),
				     FWD_SVC_MAGIC " 0 A 1000\n0123456789");
			send(fd, buf, (size_t)n, 0);
			break;
		case FAKE_DAMAGED:
			send(fd, "HTTP/1.0 200 OK\n", 16, 0);
			break;
		case FAKE_LONGER:
			n = snprintf(buf, sizeof(buf),
				     FWD_SVC_MAGIC " 0 A 3\n0123456789");
			send(fd, buf, (size_t)n, 0);
			break;
		}
		close(fd);
		_exit(0);
	}
	close(lfd);
	return pid;
}

static void fake_done(pid_t pid)
{
	char path[160];
	int status;

	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(path, sizeof(path), "%s.req", sock_path);
	unlink(path);
	unlink(sock_path);
}

/* The request the fake service got. */
static void fake_request(char *buf, size_t n)
{
	char path[160];
	FILE *f;
	size_t got;

	snprintf(path, sizeof(path), "%s.req", sock_path);
	f = fopen(path, "r");
	assert_non_null(f);
	got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
	fclose(f);
}

static const struct svcq_request job42 = {SVCQ_JOB, SVCQ_JSON, 42, 0, 0};

static void test_client_refused(void **state)
{
	pid_t pid = fake_service(FAKE_REFUSE);
	char why[256], req[512], *ans;
	size_t len;

	(void)state;
	assert_int_equal(svcq_call(sock_path, NULL, &job42, "MUNGE:abc:", 5,
				   &ans, &len, why, sizeof(why)),
			 SVCQ_REFUSED);
	assert_string_equal(why, "job 42 is not yours");
	assert_null(ans);
	fake_request(req, sizeof(req));
	fake_done(pid);
	assert_string_equal(req, "FWDALLOC1 Q job 42 json\nMUNGE:abc:");
}

static void test_client_chunked(void **state)
{
	pid_t pid = fake_service(FAKE_CHUNKED);
	char why[256], *ans = NULL;
	size_t len = 0;

	(void)state;
	if (svcq_call(sock_path, NULL, &job42, "C", 5, &ans, &len, why,
		      sizeof(why)) != SVCQ_ANSWERED)
		fail_msg("not answered: %s", why);
	fake_done(pid);
	assert_int_equal(len, BIG);
	assert_int_equal(strlen(ans), BIG);
	for (size_t i = 0; i < BIG; i++)
		if (ans[i] != (char)('a' + i % 26))
			fail_msg("byte %zu: %c", i, ans[i]);
	free(ans);
}

static void test_client_edges(void **state)
{
	char why[256], *ans = NULL;
	size_t len = 1;
	pid_t pid = fake_service(FAKE_EMPTY);

	(void)state;
	if (svcq_call(sock_path, NULL, &job42, "C", 5, &ans, &len, why,
		      sizeof(why)) != SVCQ_ANSWERED)
		fail_msg("empty: not answered: %s", why);
	fake_done(pid);
	assert_int_equal(len, 0);
	assert_string_equal(ans, "");
	free(ans);
	pid = fake_service(FAKE_EXACT);
	if (svcq_call(sock_path, NULL, &job42, "C", 5, &ans, &len, why,
		      sizeof(why)) != SVCQ_ANSWERED)
		fail_msg("exact: not answered: %s", why);
	fake_done(pid);
	assert_int_equal(len, 2 * FWD_SVC_MSG_MAX -
				      strlen(FWD_SVC_MAGIC " 0 A 100000\n"));
	assert_int_equal(strspn(ans, "x"), len);
	free(ans);
}

static void test_client_broken(void **state)
{
	static const struct {
		enum fake_mode mode;
		const char *why;
	} cases[] = {
		{FAKE_CUT, "the answer was cut after 10 of 1000 bytes"},
		{FAKE_DAMAGED, "a damaged answer"},
		{FAKE_LONGER, "an answer longer than it says"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = fake_service(cases[i].mode);
		char why[256] = "", *ans;
		size_t len;

		assert_int_equal(svcq_call(sock_path, NULL, &job42, "C", 5,
					   &ans, &len, why, sizeof(why)),
				 SVCQ_BROKEN);
		fake_done(pid);
		assert_string_equal(why, cases[i].why);
		assert_null(ans);
	}
}

static void test_client_absent(void **state)
{
	char why[256], *ans;
	size_t len;

	(void)state;
	assert_int_equal(svcq_call("/nonexistent/fwdallocd-query.sock", NULL,
				   &job42, "C", 5, &ans, &len, why,
				   sizeof(why)),
			 SVCQ_ABSENT);
	assert_string_equal(why, "no service at "
				 "/nonexistent/fwdallocd-query.sock: No such "
				 "file or directory");
	assert_int_equal(svcq_call("/etc/passwd", NULL, &job42, "C", 5, &ans,
				   &len, why, sizeof(why)),
			 SVCQ_ABSENT);
	assert_string_equal(why, "no service at /etc/passwd: not a socket");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_head_round_trip),
		cmocka_unit_test(test_check_cred),
		cmocka_unit_test(test_check_access),
		cmocka_unit_test(test_in_group),
		cmocka_unit_test(test_client_refused),
		cmocka_unit_test(test_client_chunked),
		cmocka_unit_test(test_client_edges),
		cmocka_unit_test(test_client_broken),
		cmocka_unit_test(test_client_absent),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
