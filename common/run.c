/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bounded child execution for the controller prolog and epilog.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/run.h"

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int buf_add(char **buf, size_t *len, size_t *cap, const char *data,
		   size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		char *nb;

		while (ncap < *len + n + 1)
			ncap *= 2;
		if (!(nb = realloc(*buf, ncap)))
			return -1;
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

int ctl_run_bounded(double timeout, int (*fn)(void *arg, int fd), void *arg,
		    char **out, fwd_error_t *err)
{
	double deadline = now_mono() + timeout;
	char *buf = NULL, chunk[4096];
	size_t len = 0, cap = 0;
	int pfd[2] = {-1, -1};
	int status = 0, rv = -1, timed_out = 0, eof = 0;
	pid_t pid = -1, w;

	*out = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return errprintf(err, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		errprintf(err, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int rc;

		close(pfd[0]);
		rc = fn(arg, pfd[1]);
		close(pfd[1]);
		fflush(NULL);
		_exit(rc & 0xff);
	}
	close(pfd[1]);
	pfd[1] = -1;

	/* Read until EOF (child exited or closed) or the deadline. */
	while (!eof) {
		double left = deadline - now_mono();
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		ssize_t n;
		int pr;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		pr = poll(&p, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			errprintf(err, "poll: %s", strerror(errno));
			break;
		}
		if (pr == 0)
			continue;
		n = read(pfd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = 1;
			break;
		}
		if (buf_add(&buf, &len, &cap, chunk, (size_t)n) < 0) {
			errprintf(err, "result: %s", strerror(errno));
			break;
		}
	}
	/* The child may have closed the pipe but not exited yet: give it
	 * the rest of the deadline, then kill it. */
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (timed_out || now_mono() >= deadline) {
			timed_out = 1;
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		usleep(1000);
	}
	if (timed_out) {
		errno = ETIMEDOUT;
		errprintf(err, "timed out after %g s", timeout);
	} else if (WIFSIGNALED(status)) {
		errno = EINTR;
		errprintf(err, "killed by signal %d", WTERMSIG(status));
	} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		errno = EIO;
		errprintf(err, "exited with status %d", WEXITSTATUS(status));
	} else if (eof) {
		rv = 0;
	}
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (!buf && rv == 0 && !(buf = strdup(""))) {
		rv = errprintf(err, "result: %s", strerror(errno));
	}
	*out = buf;
	return rv;
}
