/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The controller service's protocol at its edges: the job's variables as
 * the service reads them (ctl_job_vars_parse, ctl_job_from_vars), and the
 * hooks' client (service/client.h) against a fake service that answers,
 * stays silent, answers nonsense or hangs up.  The real service is tested
 * on a real cluster (tests/integration/ctl_service.sh).
 */
#include "config.h"

#include <errno.h>
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

#include "controller/job.h"
#include "service/client.h"
#include "service/protocol.h"

/* ---- the job's variables ---------------------------------------------- */

struct vars_case {
	const char *what;
	const char *buf; /* NUL-separated; len below */
	size_t len;
	const char *err; /* NULL: parses */
};

#define V(s) s, sizeof(s) - 1

static void test_vars_parse(void **state)
{
	static const struct vars_case cases[] = {
		{"empty", V(""), NULL},
		{"one", V("SLURM_JOB_ID=7\0"), NULL},
		{"all",
		 V("SLURM_JOB_ID=7\0SLURM_JOB_NODELIST=c[1-2]\0"
		   "SLURM_JOB_USER=u\0SLURM_JOB_ACCOUNT=a\0"
		   "SLURM_JOB_NAME=n=1\0SLURM_JOB_PARTITION=p\0"
		   "SLURM_JOB_NUM_NODES=2\0SPANK_IO_UPGRADE=scale\0"),
		 NULL},
		{"a name not a job variable", V("SLURM_JOB_ID=7\0PATH=/x\0"),
		 "damaged: \"PATH=/x\": not a job variable"},
		{"a prefix of a name", V("SLURM_JOB=7\0"),
		 "damaged: \"SLURM_JOB=7\": not a job variable"},
		{"no '='", V("SLURM_JOB_ID\0"),
		 "damaged: \"SLURM_JOB_ID\": not NAME=VALUE"},
		{"given twice", V("SLURM_JOB_ID=7\0SLURM_JOB_ID=8\0"),
		 "damaged: \"SLURM_JOB_ID=8\": given twice"},
		{"the last cut", V("SLURM_JOB_ID=7\0SLURM_JOB_NAME=x"),
		 "damaged: the last variable is cut"},
		{"a control character, escaped", V("X\x01=1\0"),
		 "damaged: \"X\\x01=1\": not a job variable"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vars_case *c = &cases[i];
		const char *vals[CTL_JOB_N_VARS];
		fwd_error_t err = {""};
		int rv = ctl_job_vars_parse(c->buf, c->len, vals, &err);

		if (!c->err) {
			if (rv != 0)
				fail_msg("%s: %s", c->what, err.text);
			continue;
		}
		if (rv != -1 || errno != EINVAL || strcmp(err.text, c->err))
			fail_msg("%s: rv %d, \"%s\", want \"%s\"", c->what, rv,
				 err.text, c->err);
	}
}

static void test_vars_to_job(void **state)
{
	static const char buf[] = "SLURM_JOB_ID=42\0SLURM_JOB_NODELIST=c[1-2]\0"
				  "SLURM_JOB_USER=(null)\0SLURM_JOB_NAME=a\tb\0"
				  "SLURM_JOB_NUM_NODES=2\0"
				  "SPANK_IO_UPGRADE=isolate\0";
	const char *vals[CTL_JOB_N_VARS];
	struct ctl_job j;
	fwd_error_t err;

	(void)state;
	assert_int_equal(ctl_job_vars_parse(buf, sizeof(buf) - 1, vals, &err),
			 0);
	assert_int_equal(ctl_job_from_vars(&j, vals, &err), 0);
	assert_int_equal(j.job_num, 42);
	assert_string_equal(j.job_id, "42");
	assert_string_equal(j.nodes, "c[1-2]");
	assert_string_equal(j.user, "");
	assert_null(j.account);
	assert_string_equal(j.name, "a\\x09b");
	assert_int_equal(j.n_nodes, 2);
	assert_int_equal(j.request, FWD_REQ_ISOLATE);

	/* The same strictness as the environment's job ids. */
	vals[0] = "4294967296";
	assert_int_equal(ctl_job_from_vars(&j, vals, &err), -1);
	assert_non_null(strstr(err.text, "not a job id"));
	vals[0] = NULL;
	assert_int_equal(ctl_job_from_vars(&j, vals, &err), -1);
	assert_non_null(strstr(err.text, "SLURM_JOB_ID is not set"));
}

/* ---- the hooks' client against a fake service ------------------------- */

enum fake { ANSWER, SILENT, GARBAGE, HANGUP };

struct fake_srv {
	char dir[64];
	char path[128];
	pid_t pid;
};

/* A service at srv->path that does `how` to its first request. */
static void fake_start(struct fake_srv *srv, enum fake how)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int l, c;

	snprintf(srv->dir, sizeof(srv->dir), "/tmp/fwd-svc.XXXXXX");
	assert_non_null(mkdtemp(srv->dir));
	snprintf(srv->path, sizeof(srv->path), "%s/s", srv->dir);
	memcpy(sa.sun_path, srv->path, strlen(srv->path) + 1);
	l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 4), 0);
	srv->pid = fork();
	assert_true(srv->pid >= 0);
	if (srv->pid == 0) {
		static char buf[FWD_SVC_MSG_MAX];
		c = accept(l, NULL, NULL);
		if (recv(c, buf, sizeof(buf), 0) < 0)
			_exit(1);
		switch (how) {
		case ANSWER:
			send(c, FWD_SVC_MAGIC " 1 F\nprolog 7: why\n", 28, 0);
			break;
		case SILENT:
			pause();
			break;
		case GARBAGE:
			send(c, "HTTP/1.1 200 OK\r\n", 17, 0);
			break;
		case HANGUP:
			break;
		}
		_exit(0);
	}
	close(l);
}

static void fake_stop(struct fake_srv *srv)
{
	kill(srv->pid, SIGKILL);
	waitpid(srv->pid, NULL, 0);
	unlink(srv->path);
	rmdir(srv->dir);
}

static void test_client_answered(void **state)
{
	struct fake_srv srv;
	char ans[256], why[256];

	(void)state;
	fake_start(&srv, ANSWER);
	assert_int_equal(svc_call(srv.path, 'P', svc_now() + 5, svc_now() + 5,
				  ans, sizeof(ans), why, sizeof(why)),
			 SVC_ANSWERED);
	assert_string_equal(ans, FWD_SVC_MAGIC " 1 F\nprolog 7: why\n");
	fake_stop(&srv);
}

static void test_client_absent(void **state)
{
	char ans[64], why[256];

	(void)state;
	assert_int_equal(svc_call("/nonexistent/fwdallocd.sock", 'P',
				  svc_now() + 1, svc_now() + 1, ans,
				  sizeof(ans), why, sizeof(why)),
			 SVC_ABSENT);
	assert_non_null(strstr(why, "connect /nonexistent/fwdallocd.sock: "
				    "No such file or directory"));
}

static void test_client_silent(void **state)
{
	struct fake_srv srv;
	char ans[64], why[256];
	double t0, t;

	(void)state;
	fake_start(&srv, SILENT);
	t0 = svc_now();
	assert_int_equal(svc_call(srv.path, 'P', t0 + 0.3, t0 + 0.3, ans,
				  sizeof(ans), why, sizeof(why)),
			 SVC_TIMEOUT);
	t = svc_now() - t0;
	/* It waited for its deadline, not for ever. */
	assert_true(t >= 0.25);
	assert_true(t < 5);
	assert_string_equal(why, "no answer in time");
	fake_stop(&srv);
}

static void test_client_broken(void **state)
{
	struct fake_srv srv;
	char ans[64], why[256];

	(void)state;
	fake_start(&srv, GARBAGE);
	assert_int_equal(svc_call(srv.path, 'E', 1, svc_now() + 5, ans,
				  sizeof(ans), why, sizeof(why)),
			 SVC_BROKEN);
	assert_string_equal(why, "a damaged answer");
	fake_stop(&srv);
	fake_start(&srv, HANGUP);
	assert_int_equal(svc_call(srv.path, 'E', 1, svc_now() + 5, ans,
				  sizeof(ans), why, sizeof(why)),
			 SVC_BROKEN);
	assert_string_equal(why, "closed without answering");
	fake_stop(&srv);
}

/* The request carries the job's variables and nothing else. */
static void test_client_request(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	static char buf[FWD_SVC_MSG_MAX];
	char dir[] = "/tmp/fwd-svc.XXXXXX", path[64], ans[64], why[256];
	int l, c, sv[2];
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	setenv("SLURM_JOB_ID", "77", 1);
	setenv("SLURM_JOB_NAME", "x;y", 1);
	setenv("LD_PRELOAD", "/evil.so", 1);
	unsetenv("SPANK_IO_UPGRADE");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		c = accept(l, NULL, NULL);
		n = recv(c, buf, sizeof(buf), 0);
		send(sv[1], buf, (size_t)(n > 0 ? n : 0), 0);
		send(c, FWD_SVC_MAGIC " 0 A\n", 14, 0);
		_exit(0);
	}
	assert_int_equal(svc_call(path, 'P', 1234.5, svc_now() + 5, ans,
				  sizeof(ans), why, sizeof(why)),
			 SVC_ANSWERED);
	n = recv(sv[0], buf, sizeof(buf), 0);
	waitpid(pid, NULL, 0);
	unsetenv("LD_PRELOAD");
	close(l);
	unlink(path);
	rmdir(dir);
	assert_true(n > 0);
	{
		static const char head[] = FWD_SVC_MAGIC " P 1234.500000\n";
		const char *vars = buf + sizeof(head) - 1;
		const char *vals[CTL_JOB_N_VARS];
		fwd_error_t err;

		assert_memory_equal(buf, head, sizeof(head) - 1);
		assert_int_equal(ctl_job_vars_parse(vars,
						    (size_t)(buf + n - vars),
						    vals, &err),
				 0);
		assert_string_equal(vals[0], "77");
		assert_string_equal(vals[4], "x;y");
		assert_null(vals[7]);
		assert_null(memmem(buf, (size_t)n, "LD_PRELOAD", 10));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vars_parse),
		cmocka_unit_test(test_vars_to_job),
		cmocka_unit_test(test_client_answered),
		cmocka_unit_test(test_client_absent),
		cmocka_unit_test(test_client_silent),
		cmocka_unit_test(test_client_broken),
		cmocka_unit_test(test_client_request),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
