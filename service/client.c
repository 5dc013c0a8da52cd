/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hooks' side of the controller service protocol (service/client.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "controller/job_vars.h"
#include "service/client.h"
#include "service/protocol.h"

static const char *const job_vars[] = {CTL_JOB_VARS};

double svc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

size_t svc_request(char op, double arg, const char *(*get)(const char *),
		   char *buf, size_t n)
{
	int h = op == 'S'
			? snprintf(buf, n, FWD_SVC_MAGIC " S\n")
			: snprintf(buf, n, FWD_SVC_MAGIC " %c %.6f\n", op, arg);
	size_t len;

	if (h < 0 || (size_t)h >= n)
		return 0;
	len = (size_t)h;
	if (op == 'S')
		return len;
	for (size_t i = 0; i < sizeof(job_vars) / sizeof(job_vars[0]); i++) {
		const char *v = get(job_vars[i]);
		size_t a, b;

		if (!v)
			continue;
		a = strlen(job_vars[i]);
		b = strlen(v);
		if (len + a + b + 2 > n)
			return 0;
		memcpy(buf + len, job_vars[i], a);
		buf[len + a] = '=';
		memcpy(buf + len + a + 1, v, b + 1);
		len += a + b + 2;
	}
	return len;
}

static const char *env_var(const char *name)
{
	return getenv(name);
}

/* SO_SNDTIMEO / SO_RCVTIMEO until deadline; -1 when it has passed. */
static int set_timeout(int fd, int opt, double deadline)
{
	double left = deadline - svc_now();
	struct timeval tv;

	if (left <= 0)
		return -1;
	tv.tv_sec = (time_t)left;
	tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) * 1e6);
	if (!tv.tv_sec && !tv.tv_usec)
		tv.tv_usec = 1;
	return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

enum svc_result svc_call(const char *path, char op, double arg, double deadline,
			 char *answer, size_t n, char *why, size_t whyn)
{
	static char buf[FWD_SVC_MSG_MAX];
	struct sockaddr_un sa;
	enum svc_result r = SVC_BROKEN;
	size_t len;
	ssize_t got;
	int fd;

	answer[0] = '\0';
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, whyn, "socket path %s: too long", path);
		return SVC_ABSENT;
	}
	if (!(len = svc_request(op, arg, env_var, buf, sizeof(buf)))) {
		snprintf(why, whyn, "the job's variables exceed %d bytes",
			 FWD_SVC_MSG_MAX);
		return SVC_ABSENT;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(why, whyn, "socket: %s", strerror(errno));
		return SVC_ABSENT;
	}
	/* A full listen queue makes connect() wait: at most until the
	 * deadline (AF_UNIX connect() honours the send timeout). */
	if (set_timeout(fd, SO_SNDTIMEO, deadline) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		snprintf(why, whyn, "connect %s: %s", path, strerror(e));
		close(fd);
		return e == EAGAIN || e == EINPROGRESS || e == EWOULDBLOCK
			       ? SVC_TIMEOUT
			       : SVC_ABSENT;
	}
	if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		snprintf(why, whyn, "send to %s: %s", path, strerror(errno));
		r = errno == EAGAIN ? SVC_TIMEOUT : SVC_BROKEN;
		goto out;
	}
	do {
		if (set_timeout(fd, SO_RCVTIMEO, deadline) < 0) {
			errno = EAGAIN;
			got = -1;
			break;
		}
		got = recv(fd, answer, n - 1, 0);
	} while (got < 0 && errno == EINTR);
	if (got < 0) {
		r = errno == EAGAIN || errno == EWOULDBLOCK ? SVC_TIMEOUT
							    : SVC_BROKEN;
		snprintf(why, whyn, "%s",
			 r == SVC_TIMEOUT ? "no answer in time"
					  : strerror(errno));
		goto out;
	}
	answer[got] = '\0';
	if (got < (ssize_t)sizeof(FWD_SVC_MAGIC) + 3 ||
	    strncmp(answer, FWD_SVC_MAGIC " ", sizeof(FWD_SVC_MAGIC)) ||
	    !strchr(answer, '\n')) {
		snprintf(why, whyn, "%s",
			 got ? "a damaged answer" : "closed without answering");
		goto out;
	}
	r = SVC_ANSWERED;
out:
	close(fd);
	return r;
}
