/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Controller-side pieces that need no Slurm and no database: the audit
 * file writer (one write per record, concurrent writers) and reader
 * (filters), the audit records, the bounded child runner (result,
 * timeout, crash, exit status, large output), the job read from the
 * prolog environment.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/run.h"
#include "controller/audit.h"
#include "controller/job.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "policies/policy.h"

static char tmpdir[] = "/tmp/fwd-test-ctl.XXXXXX";

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_audit_append(void **state)
{
	char path[256];
	fwd_error_t err;
	json_t *r = json_pack("{s:s,s:i}", "job_id", "42", "ts", 7);
	char *text;

	/* The directory is created on first use. */
	snprintf(path, sizeof(path), "%s/log/audit.jsonl", tmpdir);
	assert_int_equal(audit_append(path, r, &err), 0);
	assert_int_equal(audit_append_line(path, "{\"job_id\":\"43\"}", &err),
			 0);
	text = slurp(path);
	assert_string_equal(text, "{\"job_id\":\"42\",\"ts\":7}\n"
				  "{\"job_id\":\"43\"}\n");
	free(text);
	json_decref(r);
}

static void test_audit_refusals(void **state)
{
	static const struct {
		const char *path, *line, *msg;
		int err;
	} cases[] = {
		{"", "{}", "audit file: no path configured", EINVAL},
		{"/x", "{\"a\":\n1}", "audit record contains a newline",
		 EINVAL},
		{"/proc/fwd-no-such/a/b.jsonl", "{}",
		 "audit directory /proc/fwd-no-such/a: No such file or "
		 "directory",
		 ENOENT},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err;

		errno = 0;
		assert_int_equal(
			audit_append_line(cases[i].path, cases[i].line, &err),
			-1);
		assert_int_equal(errno, cases[i].err);
		assert_string_equal(err.text, cases[i].msg);
	}
}

/* Many processes appending at once: every record whole, none lost. */
static void test_audit_concurrent(void **state)
{
	enum { WRITERS = 8, RECORDS = 300 };
	char path[256], pad[600];
	pid_t pids[WRITERS];
	char *text, *line, *save = NULL;
	int lines = 0;

	snprintf(path, sizeof(path), "%s/concurrent.jsonl", tmpdir);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			for (int i = 0; i < RECORDS; i++) {
				json_t *r = json_pack("{s:i,s:i,s:s}", "w", w,
						      "i", i, "pad", pad);

				if (audit_append(path, r, NULL) < 0)
					_exit(1);
				json_decref(r);
			}
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int st;

		assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	text = slurp(path);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		json_t *r = json_loads(line, 0, NULL);

		assert_non_null(r);
		assert_int_equal(
			strlen(json_string_value(json_object_get(r, "pad"))),
			sizeof(pad) - 1);
		json_decref(r);
		lines++;
	}
	assert_int_equal(lines, WRITERS * RECORDS);
	free(text);
}

struct seen {
	char ids[8][24];
	size_t n;
	size_t bad;
};

static int collect(void *arg, unsigned long lineno, const char *line,
		   const json_t *rec)
{
	struct seen *s = arg;

	if (!rec) {
		s->bad++;
		return 0;
	}
	if (s->n < 8)
		snprintf(s->ids[s->n++], sizeof(s->ids[0]), "%s",
			 json_string_value(json_object_get(rec, "job_id")));
	return 0;
}

static void test_audit_read(void **state)
{
	static const struct {
		struct audit_filter f;
		const char *ids; /* matching job ids, in file order */
	} cases[] = {
		{{NULL, NULL, false, 0}, "1 2 3"},
		{{"2", NULL, false, 0}, "2"},
		{{NULL, "bob", false, 0}, "2 3"},
		{{"3", "alice", false, 0}, ""},
		{{NULL, NULL, true, 200}, "2 3"},
		{{NULL, "bob", true, 300}, "3"},
		{{"9", NULL, false, 0}, ""},
	};
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/read.jsonl", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"job_id\":\"1\",\"user\":\"alice\",\"ts\":100}\n"
	      "not json\n"
	      "{\"job_id\":\"2\",\"user\":\"bob\",\"ts\":200}\n"
	      "{\"job_id\":\"3\",\"user\":\"bob\",\"ts\":300}",
	      f);
	fclose(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seen s = {.n = 0};
		fwd_error_t err;
		char got[64] = "";

		assert_int_equal(
			audit_read(path, &cases[i].f, collect, &s, &err), 0);
		for (size_t k = 0; k < s.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", k ? " " : "", s.ids[k]);
		assert_string_equal(got, cases[i].ids);
		/* A line that is not JSON is always reported. */
		assert_int_equal(s.bad, 1);
	}

	/* No file yet: ENOENT, so callers can say "no record". */
	{
		struct seen s = {.n = 0};
		fwd_error_t err;

		snprintf(path, sizeof(path), "%s/none.jsonl", tmpdir);
		errno = 0;
		assert_int_equal(audit_read(path, NULL, collect, &s, &err), -1);
		assert_int_equal(errno, ENOENT);
		assert_int_equal(s.n, 0);
	}
}

/* Every record has the documented fields, in the documented order. */
static void test_audit_records(void **state)
{
	static const char *const keys =
		"time ts event job_id user account partition name nodes "
		"request action reasons inputs forwarders_before "
		"forwarders_after mapping outcome decision elapsed_us";
	struct ctl_job j = {.job_num = 42,
			    .job_id = "42",
			    .user = "alice",
			    .name = "app",
			    .nodes = "c[1-2]",
			    .request = FWD_REQ_SCALE,
			    .request_name = "scale"};
	const struct {
		json_t *rec;
		const char *event, *outcome;
		json_int_t elapsed;
	} cases[] = {
		{audit_record_fallback(&j, NULL, "prolog", "db down", 1000.25,
				       250),
		 "prolog", "fallback: db down", 250},
		{audit_record_fallback(&j, NULL, "epilog", "killed", 1000, 9),
		 "epilog", "fallback: killed", 9},
		{audit_record_release(&j, 1000, 3, NULL, 7), "epilog",
		 "released 3 allocation row(s)", 7},
		{audit_record_release(&j, 1000, 0, "gone", 7), "epilog",
		 "fallback: gone", 7},
		{audit_record_reconcile(42, 1000, 2), "reconcile",
		 "released 2 allocation row(s)", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = cases[i].rec;
		char got[512] = "";

		assert_non_null(r);
		for (void *it = json_object_iter(r); it;
		     it = json_object_iter_next(r, it)) {
			const char *k = json_object_iter_key(it);

			if (!strcmp(k, "policy_digest"))
				continue;
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", got[0] ? " " : "", k);
		}
		assert_string_equal(got, keys);
		assert_string_equal(
			json_string_value(json_object_get(r, "event")),
			cases[i].event);
		assert_string_equal(
			json_string_value(json_object_get(r, "outcome")),
			cases[i].outcome);
		assert_string_equal(
			json_string_value(json_object_get(r, "job_id")), "42");
		assert_int_equal(
			json_integer_value(json_object_get(r, "elapsed_us")),
			cases[i].elapsed);
		assert_int_equal(json_integer_value(json_object_get(r, "ts")),
				 1000);
		json_decref(r);
	}
}

static int child_ok(void *arg, int fd)
{
	return write(fd, "A hello", 7) == 7 ? 0 : 1;
}

static int child_big(void *arg, int fd)
{
	static char buf[300000];

	memset(buf, 'y', sizeof(buf));
	for (size_t off = 0; off < sizeof(buf);) {
		ssize_t w = write(fd, buf + off, sizeof(buf) - off);

		if (w <= 0)
			return 1;
		off += (size_t)w;
	}
	return 0;
}

static int child_sleep(void *arg, int fd)
{
	if (write(fd, "partial", 7) != 7)
		return 1;
	sleep(30);
	return 0;
}

static int child_crash(void *arg, int fd)
{
	/* cmocka catches SIGSEGV in-process; SIGKILL stands for any death
	 * by signal. */
	kill(getpid(), SIGKILL);
	return 0;
}

static int child_status(void *arg, int fd)
{
	return 3;
}

static void test_bounded(void **state)
{
	static const struct {
		int (*fn)(void *, int);
		double timeout;
		int rv;
		const char *msg;
		const char *out; /* NULL: don't check */
		size_t out_len;
	} cases[] = {
		{child_ok, 5, 0, "", "A hello", 7},
		{child_big, 5, 0, "", NULL, 300000},
		{child_sleep, 0.3, -1, "timed out after 0.3 s", "partial", 7},
		{child_crash, 5, -1, "killed by signal 9", NULL, 0},
		{child_status, 5, -1, "exited with status 3", NULL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err = {""};
		struct timespec a, b;
		char *out = NULL;
		double took;

		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(ctl_run_bounded(cases[i].timeout, cases[i].fn,
						 NULL, &out, &err),
				 cases[i].rv);
		clock_gettime(CLOCK_MONOTONIC, &b);
		took = (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		/* Bounded: never much longer than the timeout. */
		assert_true(took < cases[i].timeout + 2);
		assert_string_equal(err.text, cases[i].msg);
		if (cases[i].out)
			assert_string_equal(out, cases[i].out);
		if (cases[i].out_len)
			assert_int_equal(strlen(out), cases[i].out_len);
		free(out);
	}
}

static void test_job_from_env(void **state)
{
	static const struct {
		const char *id, *req, *acct;
		int rv;
		const char *msg, *request;
		enum fwd_request r;
	} cases[] = {
		{"42", "scale", "phys", 0, "", "scale", FWD_REQ_SCALE},
		{"42", NULL, "(null)", 0, "", "not requested", FWD_REQ_NONE},
		{"42", "shadow", NULL, 0, "", "shadow", FWD_REQ_SHADOW},
		{NULL, NULL, NULL, -1,
		 "SLURM_JOB_ID is not set: this command is run by slurmctld "
		 "as PrologSlurmctld or EpilogSlurmctld",
		 NULL, 0},
		{"12x", NULL, NULL, -1, "SLURM_JOB_ID=12x: not a job id", NULL,
		 0},
		{"42", "faster", NULL, -1,
		 "SPANK_IO_UPGRADE=faster: unknown "
		 "mode",
		 NULL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_job j;
		fwd_error_t err = {""};

		if (cases[i].id)
			setenv("SLURM_JOB_ID", cases[i].id, 1);
		else
			unsetenv("SLURM_JOB_ID");
		if (cases[i].req)
			setenv("SPANK_IO_UPGRADE", cases[i].req, 1);
		else
			unsetenv("SPANK_IO_UPGRADE");
		if (cases[i].acct)
			setenv("SLURM_JOB_ACCOUNT", cases[i].acct, 1);
		else
			unsetenv("SLURM_JOB_ACCOUNT");
		setenv("SLURM_JOB_NODELIST", "c[1-4]", 1);
		setenv("SLURM_JOB_NUM_NODES", "4", 1);
		assert_int_equal(ctl_job_from_env(&j, &err), cases[i].rv);
		assert_string_equal(err.text, cases[i].msg);
		if (cases[i].rv < 0)
			continue;
		assert_string_equal(j.job_id, "42");
		assert_string_equal(j.request_name, cases[i].request);
		assert_int_equal(j.request, cases[i].r);
		assert_int_equal(j.n_nodes, 4);
		if (cases[i].acct && strcmp(cases[i].acct, "(null)"))
			assert_string_equal(j.account, cases[i].acct);
		else
			assert_null(j.account);
	}
}

/* The decision transaction runs again only after a conflict the server
 * rolled back (or a private forwarder taken meanwhile), a bounded number of
 * times, with a short back-off. */
static void test_tx_retry(void **state)
{
	static const int no[] = {ECONNREFUSED, ETIMEDOUT, EAGAIN, EPROTO,
				 ENOENT,       EACCES,	  EINVAL, 0};
	fwd_error_t err;
	unsigned int attempt;
	struct timespec t0, t1;
	double waited;

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		attempt = 1;
		assert_false(
			ledger_store_tx_retry(NULL, no[i], &attempt, &err));
		assert_int_equal(attempt, 1);
	}
	attempt = 1;
	assert_true(ledger_store_tx_retry(NULL, EEXIST, &attempt, &err));
	assert_int_equal(attempt, 2);

	attempt = 1;
	strcpy(err.text, "database x: (1213) Deadlock found");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int k = 1; k < LEDGER_STORE_TX_ATTEMPTS; k++) {
		assert_true(
			ledger_store_tx_retry(NULL, EDEADLK, &attempt, &err));
		assert_int_equal(attempt, k + 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waited = (double)(t1.tv_sec - t0.tv_sec) +
		 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* 10+20+40+80 ms at least, each at most 160 ms */
	assert_true(waited >= 0.150);
	assert_true(waited < 0.150 + 4 * 0.160);
	errno = 0;
	assert_false(ledger_store_tx_retry(NULL, EDEADLK, &attempt, &err));
	assert_int_equal(attempt, LEDGER_STORE_TX_ATTEMPTS);
	assert_int_equal(errno, EDEADLK);
	assert_string_equal(err.text,
			    "after 5 attempts: database x: (1213) Deadlock "
			    "found");
}

/* Reconnecting after a lost server: only with several endpoints, only for
 * "unavailable" failures, counted as an attempt. */
static void test_tx_reconnect(void **state)
{
	char *hosts[] = {(char *)"/nonexistent/a.sock",
			 (char *)"/nonexistent/b.sock"};
	struct db_config c = {.name = (char *)"fwdalloc",
			      .user = (char *)"fwdalloc",
			      .timeout = 1,
			      .lock_timeout = 1};
	struct db *db = NULL;
	unsigned int attempt = 1;
	fwd_error_t err;

	c.hosts.items = hosts;
	c.hosts.count = 1;
	assert_int_equal(ledger_store_tx_reconnect(&db, &c, ECONNREFUSED,
						   &attempt, &err),
			 0);
	c.hosts.count = 2;
	assert_int_equal(
		ledger_store_tx_reconnect(&db, &c, EDEADLK, &attempt, &err), 0);
	assert_int_equal(attempt, 1);
	assert_int_equal(ledger_store_tx_reconnect(&db, &c, ECONNREFUSED,
						   &attempt, &err),
			 -1);
	assert_null(db);
	assert_int_equal(attempt, 2);
	assert_int_equal(errno, ECONNREFUSED);
	assert_non_null(strstr(err.text, "none of the 2 endpoints worked"));
	attempt = LEDGER_STORE_TX_ATTEMPTS;
	assert_int_equal(ledger_store_tx_reconnect(&db, &c, ECONNREFUSED,
						   &attempt, &err),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_append),
		cmocka_unit_test(test_audit_refusals),
		cmocka_unit_test(test_audit_concurrent),
		cmocka_unit_test(test_audit_read),
		cmocka_unit_test(test_audit_records),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_job_from_env),
		cmocka_unit_test(test_tx_retry),
		cmocka_unit_test(test_tx_reconnect),
	};

	return cmocka_run_group_tests_name("ctl", tests, setup, teardown);
}
