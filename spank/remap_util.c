/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared machinery of the remap drivers: bounded child processes and
 * crash-safe per-job state files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spank/remap_priv.h"

#define TAIL_MAX 512

/* ---- environment -------------------------------------------------------- */

int remap_env_add(struct remap_env *e, const char *key, const char *value)
{
	char **v, *s;
	size_t len = strlen(key) + strlen(value) + 2;

	s = malloc(len);
	if (!s)
		return -1;
	snprintf(s, len, "%s=%s", key, value);
	v = realloc(e->v, (e->n + 2) * sizeof(char *));
	if (!v) {
		free(s);
		return -1;
	}
	v[e->n++] = s;
	v[e->n] = NULL;
	e->v = v;
	return 0;
}

void remap_env_free(struct remap_env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

/* ---- child processes ---------------------------------------------------- */

/* Keep the last TAIL_MAX bytes written to the pipe. */
struct tail {
	char buf[TAIL_MAX];
	size_t len;
};

static void tail_add(struct tail *t, const char *p, size_t n)
{
	if (n >= TAIL_MAX) {
		memcpy(t->buf, p + n - TAIL_MAX, TAIL_MAX);
		t->len = TAIL_MAX;
		return;
	}
	if (t->len + n > TAIL_MAX) {
		size_t drop = t->len + n - TAIL_MAX;

		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
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
		unsigned char c = (unsigned char)t->buf[i];

		if (c == '\n' || c == '\t')
			out[j++] = ' ';
		else if (c < 0x20 || c == 0x7f)
			out[j++] = '?';
		else
			out[j++] = (char)c;
	}
	out[j] = '\0';
}

static void drain(int fd, struct tail *t, bool *eof)
{
	char buf[4096];
	ssize_t k;

	for (;;) {
		k = read(fd, buf, sizeof(buf));
		if (k > 0) {
			tail_add(t, buf, (size_t)k);
			continue;
		}
		if (k == 0)
			*eof = true;
		else if (errno == EINTR)
			continue;
		return;
	}
}

/* write(2) a string; async-signal-safe, for the child after fork. */
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

/*
 * Between fork and execve only async-signal-safe calls: the caller may be
 * a multi-threaded daemon (slurmstepd).
 */
static void child_exec(char *const argv[], char *const envp[], int errfd)
{
	char num[16], *p = num + sizeof(num) - 1;
	sigset_t all;
	int null, e;

	/* Our own process group, so a timeout kills everything it spawned. */
	setpgid(0, 0);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa = {.sa_handler = SIG_DFL};

		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	}
	null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(null, STDOUT_FILENO) < 0 || dup2(errfd, STDERR_FILENO) < 0)
		_exit(126);
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
	_exit(127);
}

int remap_run(const struct remap *r, char *const argv[], char *const envp[],
	      fwd_error_t *err)
{
	struct tail tail = {.len = 0};
	char text[TAIL_MAX + 1];
	int pfd[2] = {-1, -1}, pidfd = -1, status = 0, rv = -1;
	bool eof = false, exited = false, timed_out = false;
	double deadline = r->deadline;
	pid_t pid;

	if (!argv || !argv[0] || argv[0][0] != '/') {
		errno = EINVAL;
		return errprintf(err, "command \"%s\" is not an absolute path",
				 argv && argv[0] ? argv[0] : "");
	}
	/* Only our end is non-blocking: the child writes its stderr with
	 * ordinary blocking writes. */
	if (pipe2(pfd, O_CLOEXEC) < 0 ||
	    fcntl(pfd[0], F_SETFL, O_NONBLOCK) < 0) {
		errprintf(err, "%s: pipe: %s", argv[0], strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		errprintf(err, "%s: fork: %s", argv[0], strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(pfd[0]);
		/* The write end survives exec as stderr: dup2 clears
		 * O_CLOEXEC on the copy. */
		child_exec(argv, envp, pfd[1]);
	}
	setpgid(pid, pid); /* also in the parent: no race with kill(-pid) */
	close(pfd[1]);
	pfd[1] = -1;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	while (!exited) {
		struct pollfd p[2];
		nfds_t np = 0;
		double left = deadline - remap_now();
		int ms, k;

		if (left <= 0) {
			timed_out = true;
			break;
		}
		ms = left > 0.05 && pidfd < 0 ? 50 : (int)(left * 1000) + 1;
		if (!eof) {
			p[np].fd = pfd[0];
			p[np++].events = POLLIN;
		}
		if (pidfd >= 0) {
			p[np].fd = pidfd;
			p[np++].events = POLLIN;
		}
		k = np ? poll(p, np, ms) : (usleep(ms * 1000), 0);
		if (k < 0 && errno != EINTR) {
			errprintf(err, "%s: poll: %s", argv[0],
				  strerror(errno));
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			goto out;
		}
		if (!eof)
			drain(pfd[0], &tail, &eof);
		k = waitpid(pid, &status, WNOHANG);
		if (k == pid)
			exited = true;
		else if (k < 0 && errno == ECHILD) {
			/* SIGCHLD ignored by the caller: the kernel reaped
			 * the child and its status is lost. */
			errno = ECHILD;
			errprintf(err,
				  "%s: exit status lost (SIGCHLD is "
				  "ignored)",
				  argv[0]);
			goto out;
		}
	}
	if (timed_out) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		drain(pfd[0], &tail, &eof);
		tail_text(&tail, text, sizeof(text));
		errno = ETIMEDOUT;
		errprintf(err, "%s timed out after %gs (killed)%s%s", argv[0],
			  r->cfg.timeout, *text ? ": " : "", text);
		goto out;
	}
	/* The command exited; collect what it wrote last (descendants that
	 * still hold the pipe do not hold us up: the pipe is non-blocking). */
	drain(pfd[0], &tail, &eof);
	tail_text(&tail, text, sizeof(text));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rv = 0;
	} else if (WIFEXITED(status)) {
		errno = EIO;
		errprintf(err, "%s exited with status %d%s%s", argv[0],
			  WEXITSTATUS(status), *text ? ": " : "", text);
	} else {
		errno = EIO;
		errprintf(err, "%s killed by signal %d%s%s", argv[0],
			  WTERMSIG(status), *text ? ": " : "", text);
	}
out:
	if (pidfd >= 0)
		close(pidfd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return rv;
}

/* ---- state files ------------------------------------------------------- */

int remap_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rv;

	if (fd < 0)
		return -1;
	rv = fsync(fd);
	close(fd);
	return rv;
}

int remap_state_dir(const char *dir, fwd_error_t *err)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return errprintf(err, "state directory %s: %s", dir,
				 strerror(errno));
	if (stat(dir, &st) < 0)
		return errprintf(err, "state directory %s: %s", dir,
				 strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return errprintf(err, "state directory %s: not a directory",
				 dir);
	}
	return 0;
}

int remap_lock(struct remap *r, const char *dir, fwd_error_t *err)
{
	char path[PATH_MAX];
	int fd;

	if (remap_state_dir(dir, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.lock", dir, r->ops->name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return errprintf(err, "lock %s: %s", path, strerror(errno));
	/* Never block without bound: retry a non-blocking lock until the
	 * call's deadline. */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			errprintf(err, "lock %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (remap_remaining(r) <= 0) {
			close(fd);
			errno = ETIMEDOUT;
			return errprintf(err, "lock %s: timed out after %gs",
					 path, r->cfg.timeout);
		}
		usleep(10000);
	}
	return fd;
}

void remap_unlock(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd); /* releases the flock */
	errno = saved;
}

int remap_state_name(char *buf, size_t len, const char *driver, uint32_t job,
		     const char *node)
{
	int k = snprintf(buf, len, "%s.%u.%s", driver, job, node);

	if (k < 0 || (size_t)k >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int remap_state_read(const char *dir, const char *name, char **content,
		     fwd_error_t *err)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, rv = -1;

	*content = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return errprintf(err, "state %s: %s", path, strerror(errno));
	}
	for (;;) {
		ssize_t k;

		if (len + 1 >= cap) {
			char *nb;

			cap = cap ? cap * 2 : 1024;
			if (cap > 1 << 20) {
				errno = EFBIG;
				errprintf(err, "state %s: too large", path);
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				errprintf(err, "state %s: %s", path,
					  strerror(errno));
				goto out;
			}
			buf = nb;
		}
		k = read(fd, buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			errprintf(err, "state %s: %s", path, strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	*content = buf;
	buf = NULL;
	rv = 1;
out:
	free(buf);
	close(fd);
	return rv;
}

int remap_state_write(const char *dir, const char *name, const char *content,
		      fwd_error_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t len = strlen(content), off = 0;
	int fd, rv = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return errprintf(err, "state %s: %s", tmp, strerror(errno));
	while (off < len) {
		ssize_t k = write(fd, content + off, len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			errprintf(err, "state %s: write: %s", tmp,
				  strerror(errno));
			goto out;
		}
		off += (size_t)k;
	}
	if (fsync(fd) < 0) {
		errprintf(err, "state %s: fsync: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		errprintf(err, "state %s: close: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		errprintf(err, "state %s: rename: %s", path, strerror(errno));
		goto out;
	}
	if (remap_fsync_dir(dir) < 0) {
		errprintf(err, "state %s: fsync: %s", dir, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rv < 0) {
		int saved = errno;

		unlink(tmp);
		errno = saved;
	}
	return rv;
}

int remap_state_remove(const char *dir, const char *name, fwd_error_t *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) < 0 && errno != ENOENT)
		return errprintf(err, "state %s: %s", path, strerror(errno));
	if (remap_fsync_dir(dir) < 0)
		return errprintf(err, "state %s: fsync: %s", dir,
				 strerror(errno));
	return 0;
}

char *remap_kv_get(const char *content, const char *key)
{
	size_t klen = strlen(key);
	const char *p = content;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return strndup(p + klen + 1, len - klen - 1);
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}
