/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common/run: external commands under a deadline (exit status, stderr
 * tail, a missing program, death by signal, a timeout that kills the
 * whole process group, what the command inherits and what it does not)
 * and ctl_run_bounded() where tests/unit/test_ctl.c does not reach.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/run.h"
#include "common/timeutil.h"

static char tmpdir[] = "/tmp/fwd-test-run.XXXXXX";
static char env_path[] = "PATH=/usr/bin:/bin";
static char *const env[] = {env_path, NULL};

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
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* /bin/sh -c script, under timeout. */
static int sh(const char *script, double timeout, unsigned flags,
	      fwd_error_t *err)
{
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)script, NULL};

	return fwd_run_cmd(argv, env, timeout, 0, flags, err);
}

static void test_endings(void **state)
{
	static const struct {
		const char *script;
		unsigned flags;
		double timeout;
		int rv;
		int err_no;
		const char *msg;
	} cases[] = {
		{"exit 0", FWD_RUN_CAPTURE_STDERR, 10, 0, 0, ""},
		{"echo fine >&2; exit 0", FWD_RUN_CAPTURE_STDERR, 10, 0, 0, ""},
		/* stdout is not captured, stderr's last line ends it. */
		{"echo out; echo first >&2; echo 'mount: busy' >&2; exit 3",
		 FWD_RUN_CAPTURE_STDERR, 10, -1, EIO,
		 "exited with status 3: first mount: busy"},
		{"exit 4", FWD_RUN_CAPTURE_STDERR, 10, -1, EIO,
		 "exited with status 4"},
		/* Control characters made printable, trailing newlines cut. */
		{"printf 'a\\tb\\033c\\n\\n' >&2; exit 1",
		 FWD_RUN_CAPTURE_STDERR, 10, -1, EIO,
		 "exited with status 1: a b?c"},
		{"echo dying >&2; kill -9 $$", FWD_RUN_CAPTURE_STDERR, 10, -1,
		 EIO, "killed by signal 9: dying"},
		{"kill -TERM $$", FWD_RUN_PASS_OUTPUT, 10, -1, EIO,
		 "killed by signal 15"},
		/* An exit 127 of its own reads as a failed execve. */
		{"exit 127", FWD_RUN_CAPTURE_STDERR, 10, -1, EIO,
		 "could not be executed (exit 127)"},
		{"sleep 30", FWD_RUN_CAPTURE_STDERR, 0.3, -1, ETIMEDOUT,
		 "timed out after 0.3 s (killed)"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err = {""};

		/* "sleep 30" killed at 0.3 s: a timeout not enforced would
		 * show as its exit 0, by value. */
		errno = 0;
		assert_int_equal(sh(cases[i].script, cases[i].timeout,
				    cases[i].flags, &err),
				 cases[i].rv);
		if (cases[i].rv < 0)
			assert_int_equal(errno, cases[i].err_no);
		assert_string_equal(err.text, cases[i].msg);
	}
}

static void test_tail_is_the_last_bytes(void **state)
{
	const char *prefix = "exited with status 2: ";
	fwd_error_t err = {""};
	const char *tail;

	/* 700 bytes of noise, then the line that matters. */
	assert_int_equal(sh("i=0; while [ $i -lt 70 ]; do printf 'noise-%03d ' "
			    "$i >&2; i=$((i+1)); done\n"
			    "echo >&2; echo 'the line that matters' >&2\n"
			    "exit 2",
			    10, FWD_RUN_CAPTURE_STDERR, &err),
			 -1);
	assert_int_equal(strncmp(err.text, prefix, strlen(prefix)), 0);
	tail = err.text + strlen(prefix);
	assert_true(strlen(tail) <= FWD_RUN_TAIL_MAX);
	assert_true(strlen(tail) > 400);
	assert_null(strstr(tail, "noise-000"));
	assert_non_null(strstr(tail, "noise-069  the line that matters"));
	assert_string_equal(tail + strlen(tail) - 21, "the line that matters");
}

static void test_missing_program(void **state)
{
	char *argv[] = {(char *)"/nonexistent/fwd-test-cmd", (char *)"x", NULL};
	char want[256];
	fwd_error_t err = {""};

	assert_int_equal(
		fwd_run_cmd(argv, env, 10, 0, FWD_RUN_CAPTURE_STDERR, &err),
		-1);
	assert_int_equal(errno, EIO);
	snprintf(want, sizeof(want),
		 "could not be executed (exit 127): execve "
		 "/nonexistent/fwd-test-cmd failed: errno %d",
		 ENOENT);
	assert_string_equal(err.text, want);
}

static void test_not_absolute(void **state)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)"exit 0", NULL};
	char *none[] = {NULL};
	fwd_error_t err = {""};

	assert_int_equal(fwd_run_cmd(argv, env, 10, 0, 0, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "is not an absolute path");
	assert_int_equal(fwd_run_cmd(none, env, 10, 0, 0, &err), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_timeout_kills_the_group(void **state)
{
	char pidfile[PATH_MAX], script[PATH_MAX + 128];
	fwd_error_t err = {""};
	int gone = 0, st = 0;
	pid_t bg;

	/* The orphaned grandchild comes to us, so that we can tell how it
	 * died and that it is gone, whatever init does. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	snprintf(pidfile, sizeof(pidfile), "%s/bg.pid", tmpdir);
	snprintf(script, sizeof(script),
		 "sleep 30 & echo $! >'%s'\n"
		 "echo 'waiting for the fabric' >&2\n"
		 "wait\n",
		 pidfile);
	assert_int_equal(sh(script, 0.5, FWD_RUN_CAPTURE_STDERR, &err), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_string_equal(err.text, "timed out after 0.5 s (killed): "
				      "waiting for the fabric");
	bg = (pid_t)atol(slurp(pidfile));
	assert_true(bg > 0);
	for (int i = 0; i < 500 && !gone; i++) {
		if (waitpid(bg, &st, WNOHANG) == bg)
			gone = 1;
		else
			usleep(10000);
	}
	assert_true(gone);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	assert_int_equal(kill(bg, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

static void test_deadline(void **state)
{
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)"sleep 30",
			NULL};
	fwd_error_t err = {""};

	/* The deadline bounds the wait; the timeout is what is quoted.  The
	 * child's 30 s are inside the 60 s timeout: a deadline not kept
	 * shows as its exit 0, by value. */
	assert_int_equal(fwd_run_cmd(argv, env, 60, fwd_clock_mono() + 0.3,
				     FWD_RUN_CAPTURE_STDERR, &err),
			 -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_string_equal(err.text, "timed out after 60 s (killed)");
	/* A deadline already past: killed at once. */
	assert_int_equal(fwd_run_cmd(argv, env, 60, fwd_clock_mono() - 1,
				     FWD_RUN_CAPTURE_STDERR, &err),
			 -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_string_equal(err.text, "timed out after 60 s (killed)");
}

static void test_inherited(void **state)
{
	static const char script[] =
		"i=3; while [ $i -le 100 ]; do\n"
		"  [ -e /proc/$$/fd/$i ] && { echo fd $i leaked >&2; exit 1; "
		"}\n"
		"  i=$((i+1)); done\n"
		"[ \"$(readlink /proc/$$/fd/0)\" = /dev/null ] ||"
		" { echo stdin >&2; exit 1; }\n"
		"[ \"$(readlink /proc/$$/fd/1)\" = /dev/null ] ||"
		" { echo stdout >&2; exit 1; }\n"
		/* Signals 1-16 (HUP, INT, TERM among them); 32 and 33 are
		 * glibc's own, out of sigaction()'s reach. */
		"while read k v; do case $k in SigBlk:|SigIgn:)\n"
		"  [ \"${v#????????????}\" = 0000 ] ||"
		" { echo $k $v >&2; exit 1; }"
		";; esac; done </proc/$$/status\n"
		"[ \"$PATH\" = /usr/bin:/bin ] && [ -z \"$HOME\" ] ||"
		" { echo env >&2; exit 1; }\n";
	char path[PATH_MAX];
	fwd_error_t err = {""};
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_hup;
	sigset_t term, old_mask;
	int fd, rv;

	/* A descriptor of ours without close-on-exec, an ignored and a
	 * blocked signal: the command gets none of them. */
	snprintf(path, sizeof(path), "%s/ours", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 3);
	assert_int_equal(dup2(fd, 99), 99);
	assert_int_equal(sigaction(SIGINT, &ign, &old_int), 0);
	assert_int_equal(sigaction(SIGHUP, &ign, &old_hup), 0);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	assert_int_equal(sigprocmask(SIG_BLOCK, &term, &old_mask), 0);
	rv = sh(script, 10, FWD_RUN_CAPTURE_STDERR, &err);
	assert_string_equal(err.text, "");
	assert_int_equal(rv, 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old_mask, NULL), 0);
	assert_int_equal(sigaction(SIGINT, &old_int, NULL), 0);
	assert_int_equal(sigaction(SIGHUP, &old_hup, NULL), 0);
	close(fd);
	close(99);
}

/* Run script with our stdout and stderr sent to two files; their contents. */
static int with_output_to_files(const char *script, unsigned flags,
				fwd_error_t *err, char *out, char *errout,
				size_t len)
{
	char opath[PATH_MAX], epath[PATH_MAX];
	int so, se, fo, fe, rv;

	snprintf(opath, sizeof(opath), "%s/stdout", tmpdir);
	snprintf(epath, sizeof(epath), "%s/stderr", tmpdir);
	fflush(NULL);
	so = dup(STDOUT_FILENO);
	se = dup(STDERR_FILENO);
	fo = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fe = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
	dup2(fo, STDOUT_FILENO);
	dup2(fe, STDERR_FILENO);
	rv = sh(script, 10, flags, err);
	dup2(so, STDOUT_FILENO);
	dup2(se, STDERR_FILENO);
	close(so);
	close(se);
	close(fo);
	close(fe);
	snprintf(out, len, "%s", slurp(opath));
	snprintf(errout, len, "%s", slurp(epath));
	return rv;
}

static void test_pass_output(void **state)
{
	char out[256], errout[256];
	fwd_error_t err = {""};

	/* Both outputs of the command go to our stderr, nothing to our
	 * stdout, nothing into the message. */
	assert_int_equal(with_output_to_files("echo to-stdout; echo to-stderr "
					      ">&2; exit 5",
					      FWD_RUN_PASS_OUTPUT, &err, out,
					      errout, sizeof(out)),
			 -1);
	assert_string_equal(err.text, "exited with status 5");
	assert_string_equal(out, "");
	assert_string_equal(errout, "to-stdout\nto-stderr\n");
	/* Captured: stdout to /dev/null, stderr into the message only. */
	assert_int_equal(with_output_to_files("echo to-stdout; echo to-stderr "
					      ">&2; exit 5",
					      FWD_RUN_CAPTURE_STDERR, &err, out,
					      errout, sizeof(out)),
			 -1);
	assert_string_equal(err.text, "exited with status 5: to-stderr");
	assert_string_equal(out, "");
	assert_string_equal(errout, "");
}

static void test_closed_stdio(void **state)
{
	fwd_error_t err = {""};
	int s0 = dup(STDIN_FILENO), s2 = dup(STDERR_FILENO);

	/* With our stdin and stderr closed, the pipe and /dev/null take
	 * the low numbers: the command still gets its stderr captured. */
	assert_true(s0 >= 0 && s2 >= 0);
	close(STDIN_FILENO);
	close(STDERR_FILENO);
	assert_int_equal(sh("echo still captured >&2; exit 6", 10,
			    FWD_RUN_CAPTURE_STDERR, &err),
			 -1);
	dup2(s0, STDIN_FILENO);
	dup2(s2, STDERR_FILENO);
	close(s0);
	close(s2);
	assert_string_equal(err.text, "exited with status 6: still captured");
}

static int child_nothing(void *arg, int fd);

static void test_sigchld_ignored(void **state)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	fwd_error_t err = {""};
	char *out = NULL;

	/* The kernel reaps the child: its status is lost, and said so. */
	assert_int_equal(sigaction(SIGCHLD, &ign, &old), 0);
	assert_int_equal(sh("exit 0", 10, FWD_RUN_CAPTURE_STDERR, &err), -1);
	assert_int_equal(errno, ECHILD);
	assert_string_equal(err.text, "ended but its exit status was lost "
				      "(SIGCHLD is ignored)");
	assert_int_equal(ctl_run_bounded(10, child_nothing, NULL, &out, &err),
			 -1);
	assert_int_equal(errno, ECHILD);
	assert_string_equal(err.text, "ended but its exit status was lost "
				      "(SIGCHLD is ignored)");
	free(out);
	assert_int_equal(sigaction(SIGCHLD, &old, NULL), 0);
}

/* ---- ctl_run_bounded ---------------------------------------------------- */

static int child_write(void *arg, int fd)
{
	const char *s = arg;

	return write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : 1;
}

static int child_nothing(void *arg, int fd)
{
	return 0;
}

static int child_write_fail(void *arg, int fd)
{
	return child_write(arg, fd) ? 1 : 42;
}

static int child_127(void *arg, int fd)
{
	return 127;
}

/* A "show" command: its stdout is the answer, its stderr is dropped, and
 * a failure still reads like any other command's. */
static void test_output(void **state)
{
	static const struct {
		const char *script;
		int rv;
		const char *out;
		const char *err;
	} t[] = {
		{"printf 'route:\\n  - net: o2ib\\n'; echo noise >&2", 0,
		 "route:\n  - net: o2ib\n", ""},
		{"true", 0, "", ""},
		{"echo partial; exit 4", -1, "partial\n",
		 "exited with status 4"},
		{"sleep 30", -1, NULL, "timed out after 0.3 s (killed)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *argv[] = {(char *)"/bin/sh", (char *)"-c",
				(char *)t[i].script, NULL};
		fwd_error_t err = {""};
		char *out = NULL;

		assert_int_equal(
			fwd_run_cmd_output(argv, env, 0.3, 0, &out, &err),
			t[i].rv);
		if (t[i].out)
			assert_string_equal(out ? out : "(null)", t[i].out);
		if (t[i].rv < 0)
			assert_string_equal(err.text, t[i].err);
		free(out);
	}
}

static void test_bounded(void **state)
{
	fwd_error_t err = {""};
	char *out = NULL;

	/* Nothing written: an empty result, not NULL. */
	assert_int_equal(ctl_run_bounded(10, child_nothing, NULL, &out, &err),
			 0);
	assert_non_null(out);
	assert_string_equal(out, "");
	free(out);
	/* A failure keeps what was written. */
	assert_int_equal(ctl_run_bounded(10, child_write_fail, (char *)"F half",
					 &out, &err),
			 -1);
	assert_int_equal(errno, EIO);
	assert_string_equal(err.text, "exited with status 42");
	assert_string_equal(out, "F half");
	free(out);
	/* An exit 127 of our own work is just an exit status. */
	assert_int_equal(ctl_run_bounded(10, child_127, NULL, &out, &err), -1);
	assert_string_equal(err.text, "exited with status 127");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endings),
		cmocka_unit_test(test_tail_is_the_last_bytes),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_not_absolute),
		cmocka_unit_test(test_timeout_kills_the_group),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_inherited),
		cmocka_unit_test(test_pass_output),
		cmocka_unit_test(test_closed_stdio),
		cmocka_unit_test(test_sigchld_ignored),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
