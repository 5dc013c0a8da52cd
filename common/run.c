/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Child processes under a deadline: our own work for the controller
 * prolog and epilog, external commands for the remap drivers and the
 * health feedback.  See common/run.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/array.h"
#include "common/run.h"
#include "common/timeutil.h"

/* Without a pidfd the status is polled this often. */
#define POLL_MS 10

/* ---- supervision -------------------------------------------------------- */

/* Where the child's output goes: 0, or -1 with errno to give up. */
typedef int (*take_fn)(void *arg, const char *data, size_t n);

struct child {
	pid_t pid;
	int pidfd;    /* readable once the child exits; -1: none */
	int fd;	      /* our end of its output pipe, non-blocking; -1: none */
	bool eof;     /* nobody holds the write end any more */
	bool group;   /* it leads a process group of its own */
	int status;   /* wait status, once reaped */
	take_fn take; /* NULL: the output is thrown away */
	void *take_arg;
};

enum ending {
	END_EXITED,    /* reaped; status says how */
	END_TIMED_OUT, /* killed at the deadline and reaped */
	END_LOST,      /* reaped by the kernel: SIGCHLD is ignored */
};

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* Close-on-exec by default. */
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* The parent's half of starting a child. */
static void child_started(struct child *c, pid_t pid)
{
	c->pid = pid;
	/* Also in the parent: whichever runs first, the group exists
	 * before anyone can kill it. */
	if (c->group)
		setpgid(pid, pid);
	c->pidfd = open_pidfd(pid);
}

/* Read what the pipe holds now.  Descendants that still hold its write
 * end after the child exited hold nobody up: we never block on it. */
static int drain(struct child *c)
{
	char buf[4096];
	ssize_t k;

	while (c->fd >= 0 && !c->eof) {
		k = read(c->fd, buf, sizeof(buf));
		if (k > 0) {
			if (c->take && c->take(c->take_arg, buf, (size_t)k) < 0)
				return -1;
		} else if (k == 0) {
			c->eof = true;
		} else if (errno != EINTR) {
			break; /* EAGAIN: nothing more for now */
		}
	}
	return 0;
}

/* SIGKILL the child (its whole group when it has one), reap it and
 * collect its last output.  errno is preserved. */
static void kill_and_reap(struct child *c)
{
	int saved = errno;

	if (c->group)
		kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	drain(c);
	errno = saved;
}

/*
 * Wait until the child exits or the deadline passes, feeding its output
 * to c->take.  Returns an enum ending, or -1 with err after killing and
 * reaping the child when we cannot go on watching it.
 */
static int watch(struct child *c, double deadline, fwd_error_t *err)
{
	for (;;) {
		struct pollfd p[2];
		nfds_t np = 0;
		double left = deadline - fwd_clock_mono();
		int ms, k;
		pid_t w;

		if (!(left > 0)) {
			kill_and_reap(c);
			return END_TIMED_OUT;
		}
		ms = (int)(left * 1000) + 1;
		if (c->pidfd < 0 && ms > POLL_MS)
			ms = POLL_MS;
		if (c->fd >= 0 && !c->eof) {
			p[np].fd = c->fd;
			p[np++].events = POLLIN;
		}
		if (c->pidfd >= 0) {
			p[np].fd = c->pidfd;
			p[np++].events = POLLIN;
		}
		k = np ? poll(p, np, ms) : usleep((useconds_t)ms * 1000);
		if (k < 0 && errno != EINTR) {
			kill_and_reap(c);
			return errprintf(err, "killed: poll: %s",
					 strerror(errno));
		}
		if (drain(c) < 0) {
			kill_and_reap(c);
			return errprintf(err, "killed: keeping its output: %s",
					 strerror(errno));
		}
		w = waitpid(c->pid, &c->status, WNOHANG);
		if (w == c->pid) {
			/* Collect what it wrote last. */
			if (drain(c) < 0)
				return errprintf(err, "keeping its output: %s",
						 strerror(errno));
			return END_EXITED;
		}
		if (w < 0 && errno == ECHILD)
			return END_LOST;
	}
}

/*
 * How it ended, as 0 or -1 with errno and err.  A command (not our own
 * work) also says "(killed)" on a timeout, as its whole group was, and
 * reads exit status 127 as a failed execve.  tail: its stderr, or NULL.
 */
static int explain(int end, int status, double timeout, bool command,
		   const char *tail, fwd_error_t *err)
{
	const char *sep = tail && *tail ? ": " : "";

	if (!tail)
		tail = "";
	if (end == END_LOST) {
		errno = ECHILD;
		return errprintf(err, "ended but its exit status was lost "
				      "(SIGCHLD is ignored)");
	}
	if (end == END_TIMED_OUT) {
		errno = ETIMEDOUT;
		return errprintf(err, "timed out after %g s%s%s%s", timeout,
				 command ? " (killed)" : "", sep, tail);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	errno = EIO;
	if (WIFSIGNALED(status))
		return errprintf(err, "killed by signal %d%s%s",
				 WTERMSIG(status), sep, tail);
	if (command && WEXITSTATUS(status) == 127)
		return errprintf(err, "could not be executed (exit 127)%s%s",
				 sep, tail);
	return errprintf(err, "exited with status %d%s%s", WEXITSTATUS(status),
			 sep, tail);
}

/*
 * Fork; in the child call in_child(arg, fd) with fd the write end of the
 * output pipe (-1 without one), which never returns; in the parent watch
 * it until it ends or `deadline` (watch()'s ending, or -1 with err when
 * it could not be started).  flush: flush our stdio first, for a child
 * that goes on running our code.
 */
static int spawn(struct child *c, bool with_pipe, bool flush,
		 void (*in_child)(void *arg, int fd), void *arg,
		 double deadline, fwd_error_t *err)
{
	int pfd[2] = {-1, -1};
	int end = -1;
	pid_t pid;

	/* Only our end is non-blocking: the child writes with ordinary
	 * blocking writes. */
	if (with_pipe && (pipe2(pfd, O_CLOEXEC) < 0 ||
			  fcntl(pfd[0], F_SETFL, O_NONBLOCK) < 0)) {
		errprintf(err, "could not be started: pipe: %s",
			  strerror(errno));
		goto out;
	}
	if (flush)
		fflush(NULL);
	pid = fork();
	if (pid < 0) {
		errprintf(err, "could not be started: fork: %s",
			  strerror(errno));
		goto out;
	}
	if (pid == 0) {
		if (pfd[0] >= 0)
			close(pfd[0]);
		in_child(arg, pfd[1]);
	}
	if (pfd[1] >= 0)
		close(pfd[1]);
	pfd[1] = -1;
	c->fd = pfd[0];
	child_started(c, pid);
	end = watch(c, deadline, err);
out:
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return end;
}

/* ---- our own work ------------------------------------------------------- */

struct grow {
	char *buf;
	size_t len, cap;
};

static int grow_take(void *arg, const char *data, size_t n)
{
	struct grow *g = arg;

	if (FWD_GROW(g->buf, g->cap, g->len + n + 1, 4096) < 0)
		return -1;
	memcpy(g->buf + g->len, data, n);
	g->len += n;
	g->buf[g->len] = '\0';
	return 0;
}

struct fn_child {
	int (*fn)(void *arg, int fd);
	void *arg;
};

static void fn_child(void *arg, int fd)
{
	const struct fn_child *f = arg;
	int rc = f->fn(f->arg, fd);

	close(fd);
	fflush(NULL);
	_exit(rc & 0xff);
}

int ctl_run_bounded(double timeout, int (*fn)(void *arg, int fd), void *arg,
		    char **out, fwd_error_t *err)
{
	struct grow g = {NULL, 0, 0};
	struct child c = {.pid = -1, .pidfd = -1, .fd = -1, .take = grow_take};
	struct fn_child f = {fn, arg};
	int rv = -1, end;

	c.take_arg = &g;
	*out = NULL;
	end = spawn(&c, true, true, fn_child, &f, fwd_clock_mono() + timeout,
		    err);
	if (end >= 0)
		rv = explain(end, c.status, timeout, false, NULL, err);
	if (rv == 0 && !g.buf && !(g.buf = strdup("")))
		rv = errprintf(err, "result: %s", strerror(errno));
	*out = g.buf;
	return rv;
}

/* ---- external commands -------------------------------------------------- */

/* The last FWD_RUN_TAIL_MAX bytes written to the pipe. */
struct tail {
	char buf[FWD_RUN_TAIL_MAX];
	size_t len;
};

static int tail_take(void *arg, const char *p, size_t n)
{
	struct tail *t = arg;

	if (n >= FWD_RUN_TAIL_MAX) {
		memcpy(t->buf, p + n - FWD_RUN_TAIL_MAX, FWD_RUN_TAIL_MAX);
		t->len = FWD_RUN_TAIL_MAX;
		return 0;
	}
	if (t->len + n > FWD_RUN_TAIL_MAX) {
		size_t drop = t->len + n - FWD_RUN_TAIL_MAX;

		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
	return 0;
}

/* The tail as one printable line: trailing newlines cut, control
 * characters (including inner newlines) shown as '?' or ' '. */
static void tail_text(const struct tail *t, char *out, size_t outlen)
{
	size_t n = t->len, j = 0;

	while (n > 0 && (t->buf[n - 1] == '\n' || t->buf[n - 1] == '\r' ||
			 t->buf[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n && j + 1 < outlen; i++) {
		unsigned char ch = (unsigned char)t->buf[i];

		if (ch == '\n' || ch == '\t')
			out[j++] = ' ';
		else if (ch < 0x20 || ch == 0x7f)
			out[j++] = '?';
		else
			out[j++] = (char)ch;
	}
	out[j] = '\0';
}

/* write(2) a string to stderr; async-signal-safe. */
static void put(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t k = write(STDERR_FILENO, s, n);

		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

/* A descriptor moved above stderr, so that setting up 0-2 cannot
 * overwrite it (our own 0-2 may be closed). */
static int above_stderr(int fd)
{
	return fd >= 0 && fd <= STDERR_FILENO ? fcntl(fd, F_DUPFD, 3) : fd;
}

/* Where the command's output goes (child_exec). */
enum out_mode {
	OUT_PASS,	 /* stdout and stderr to our stderr */
	OUT_STDERR_PIPE, /* stdout to /dev/null, stderr to the pipe */
	OUT_STDOUT_PIPE, /* stdout to the pipe, stderr to /dev/null */
};

/*
 * The child, between fork and execve: only async-signal-safe calls (the
 * caller may be a multi-threaded daemon such as slurmstepd).  pipefd: the
 * pipe `mode` names, -1 with OUT_PASS.
 */
static void child_exec(char *const argv[], char *const envp[], int pipefd,
		       enum out_mode mode)
{
	char num[16], *p = num + sizeof(num) - 1;
	sigset_t none;
	int null, e;

	/* A group of its own, so that a timeout kills everything it
	 * started. */
	setpgid(0, 0);
	/* What we block or ignore is ours, not the command's. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa = {.sa_handler = SIG_DFL};

		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	}
	pipefd = above_stderr(pipefd);
	null = above_stderr(open("/dev/null", O_RDWR));
	if (null < 0 || dup2(null, STDIN_FILENO) < 0)
		_exit(126);
	/* dup2 clears close-on-exec on the copy. */
	if (mode == OUT_STDERR_PIPE) {
		if (dup2(null, STDOUT_FILENO) < 0 ||
		    dup2(pipefd, STDERR_FILENO) < 0)
			_exit(126);
	} else if (mode == OUT_STDOUT_PIPE) {
		if (dup2(pipefd, STDOUT_FILENO) < 0 ||
		    dup2(null, STDERR_FILENO) < 0)
			_exit(126);
	} else if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0 &&
		   dup2(null, STDOUT_FILENO) < 0) {
		/* No stderr of ours: /dev/null rather than our stdout. */
		_exit(126);
	}
	/* None of our descriptors (database connections, locks, pipes). */
	closefrom(3);
	execve(argv[0], argv, envp);
	e = errno;
	*p = '\0';
	do {
		*--p = (char)('0' + e % 10);
		e /= 10;
	} while (e > 0 && p > num);
	put("execve ");
	put(argv[0]);
	put(" failed: errno ");
	put(p);
	put("\n");
	_exit(127);
}

/* Start argv with its output as `mode` says, the pipe's data going to
 * take(take_arg), and watch it until it ends or `deadline`. */
struct exec_child {
	char *const *argv;
	char *const *envp;
	enum out_mode mode;
};

static void exec_child(void *arg, int fd)
{
	const struct exec_child *e = arg;

	child_exec(e->argv, e->envp, fd, e->mode);
}

static int run_cmd(char *const argv[], char *const envp[], double timeout,
		   double deadline, enum out_mode mode, take_fn take,
		   void *take_arg, const struct tail *tail, fwd_error_t *err)
{
	struct child c = {.pid = -1, .pidfd = -1, .fd = -1, .group = true};
	struct exec_child e = {argv, envp, mode};
	char text[FWD_RUN_TAIL_MAX + 1] = "";
	int end;

	if (!argv || !argv[0] || argv[0][0] != '/') {
		errno = EINVAL;
		return errprintf(err, "is not an absolute path");
	}
	if (deadline == 0)
		deadline = fwd_clock_mono() + timeout;
	if (mode != OUT_PASS) {
		c.take = take;
		c.take_arg = take_arg;
	}
	end = spawn(&c, mode != OUT_PASS, false, exec_child, &e, deadline, err);
	if (end < 0)
		return -1;
	/* A failure's message ends with what it wrote to stderr. */
	if (tail)
		tail_text(tail, text, sizeof(text));
	return explain(end, c.status, timeout, true, text, err);
}

int fwd_run_cmd(char *const argv[], char *const envp[], double timeout,
		double deadline, unsigned flags, fwd_error_t *err)
{
	struct tail tail = {.len = 0};
	bool capture = flags & FWD_RUN_CAPTURE_STDERR;

	return run_cmd(argv, envp, timeout, deadline,
		       capture ? OUT_STDERR_PIPE : OUT_PASS, tail_take, &tail,
		       capture ? &tail : NULL, err);
}

int fwd_run_cmd_output(char *const argv[], char *const envp[], double timeout,
		       double deadline, char **out, fwd_error_t *err)
{
	struct grow g = {NULL, 0, 0};
	int rv;

	rv = run_cmd(argv, envp, timeout, deadline, OUT_STDOUT_PIPE, grow_take,
		     &g, NULL, err);
	if (rv == 0 && !g.buf && !(g.buf = strdup(""))) {
		errprintf(err, "output: %s", strerror(errno));
		rv = -1;
	}
	*out = g.buf;
	return rv;
}
