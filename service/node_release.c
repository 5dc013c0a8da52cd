/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compute nodes' releases (service/node_release.h): the service's
 * check of one, and the node's call.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "service/node_release.h"
#include "service/protocol.h"

#define EPILOG_HEAD FWD_SVC_MAGIC " E "

int nrel_check(const struct svcq_cred *c, struct nrel_request *r, char *why,
	       size_t n)
{
	const char *p = c->payload, *nl, *end;
	char t0[64], *stop;
	size_t hl = sizeof(EPILOG_HEAD) - 1;

	if (svcq_cred_valid(c, why, n) < 0)
		return -1;
	if (c->uid != 0) {
		snprintf(why, n,
			 "credential made by uid %ld: a node's release is "
			 "made by root (slurmd's epilog)",
			 (long)c->uid);
		return -1;
	}
	if (!p || c->payload_len <= hl || memcmp(p, EPILOG_HEAD, hl) ||
	    !(nl = memchr(p, '\n', c->payload_len)) ||
	    (size_t)(nl - p) - hl >= sizeof(t0)) {
		snprintf(why, n,
			 "credential payload is not an epilog request "
			 "(\"" EPILOG_HEAD "<t0>\\n\" and the job's "
			 "variables)");
		return -1;
	}
	memcpy(t0, p + hl, (size_t)(nl - p) - hl);
	t0[(size_t)(nl - p) - hl] = '\0';
	errno = 0;
	r->t0 = strtod(t0, &stop);
	if (errno || stop == t0 || *stop || !isfinite(r->t0) || r->t0 <= 0) {
		snprintf(why, n,
			 "epilog request: start time \"%s\" is not epoch "
			 "seconds",
			 t0);
		return -1;
	}
	end = p + c->payload_len;
	r->vars = nl + 1;
	r->vars_len = (size_t)(end - r->vars);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for fd to be ready for `events` until `deadline` (now_s()): 0, or
 * -1 with errno (ETIMEDOUT). */
static int wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		double left = deadline - now_s();
		struct pollfd pf = {fd, events, 0};
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&pf, 1, (int)(left * 1000) + 1);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* A connection to host:port before deadline, non-blocking.  -1 with why. */
static int dial(const char *host, unsigned port, double deadline, char *why,
		size_t n)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_ADDRCONFIG},
			*ai = NULL;
	char service[8];
	int fd = -1, rc, e = 0;

	snprintf(service, sizeof(service), "%u", port);
	if ((rc = getaddrinfo(host, service, &hints, &ai))) {
		snprintf(why, n, "%s: %s", host, gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		socklen_t el = sizeof(e);

		e = 0;
		fd = socket(a->ai_family,
			    a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (!connect(fd, a->ai_addr, a->ai_addrlen) ||
		    (errno == EINPROGRESS && !wait_fd(fd, POLLOUT, deadline) &&
		     !getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) && !e))
			break;
		if (!e)
			e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(why, n, "%s port %u: %s", host, port,
			 e == ETIMEDOUT || e == EINPROGRESS
				 ? "no connection in time"
				 : strerror(e));
	return fd;
}

/* Send msg (len bytes) on fd and read the answer line into ans (n
 * bytes), before deadline.  0, or -1 with why. */
static int exchange(int fd, const char *msg, size_t len, double deadline,
		    char *ans, size_t n, char *why, size_t whyn)
{
	size_t off = 0, got = 0;

	while (off < len) {
		ssize_t w = send(fd, msg + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(fd, POLLOUT, deadline) < 0)
				goto fail;
			continue;
		}
		if (w < 0)
			goto fail;
		off += (size_t)w;
	}
	while (got + 1 < n && !memchr(ans, '\n', got)) {
		ssize_t r = recv(fd, ans + got, n - 1 - got, 0);

		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(fd, POLLIN, deadline) < 0)
				goto fail;
			continue;
		}
		if (r < 0)
			goto fail;
		if (!r)
			break;
		got += (size_t)r;
	}
	ans[got] = '\0';
	return 0;
fail:
	snprintf(why, whyn, "%s",
		 errno == ETIMEDOUT ? "no answer in time" : strerror(errno));
	return -1;
}

int nrel_send(const char *const *hosts, size_t n, unsigned port,
	      const char *req, size_t req_len, double timeout,
	      const char *munge_socket, const char **to, fwd_error_t *err)
{
	double deadline = now_s() + timeout;
	char why[512] = "", ans[512], *cred, *msg = NULL;
	const char *reason;
	size_t len;

	*to = NULL;
	if (!n) {
		errprintf(err, "no controller to send the release to "
			       "(release.controllers is empty)");
		return -1;
	}
	if (!(cred = svcq_cred_make(munge_socket, req, req_len, (uid_t)-1, why,
				    sizeof(why)))) {
		errprintf(err, "%s", why);
		return -1;
	}
	len = strlen(cred) + 1;
	if (len > FWD_SVC_NODE_MAX || !(msg = malloc(len + 1))) {
		errprintf(err, "%s",
			  msg || len <= FWD_SVC_NODE_MAX
				  ? "out of memory"
				  : "the job's variables make a credential "
				    "longer than a release may be");
		free(cred);
		return -1;
	}
	snprintf(msg, len + 1, "%s\n", cred);
	free(cred);
	/* Each host gets its share of what is left of the budget, so that a
	 * host that is down (no answer to the connection at all) leaves
	 * time for the next (the backup controller's service). */
	for (size_t i = 0; i < n; i++) {
		char hwhy[256];
		double t = now_s(),
		       until = t + (deadline - t) / (double)(n - i);
		int fd = dial(hosts[i], port, until, hwhy, sizeof(hwhy));

		if (fd >= 0 && exchange(fd, msg, len, until, ans, sizeof(ans),
					hwhy, sizeof(hwhy)) < 0) {
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			size_t w = strlen(why);

			snprintf(why + w, sizeof(why) - w, "%s%s",
				 w ? "; " : "", hwhy);
			continue;
		}
		close(fd);
		if (!strncmp(ans, FWD_SVC_MAGIC " 0 A\n",
			     sizeof(FWD_SVC_MAGIC " 0 A\n") - 1)) {
			*to = hosts[i];
			free(msg);
			return 0;
		}
		ans[strcspn(ans, "\n")] = '\0';
		reason = !strncmp(ans, FWD_SVC_MAGIC " R ",
				  sizeof(FWD_SVC_MAGIC " R ") - 1)
				 ? ans + sizeof(FWD_SVC_MAGIC " R ") - 1
			 : ans[0] ? ans
				  : "closed without answering";
		/* A busy service: the next one may take it.  Any other
		 * refusal is the credential's or the request's, which the
		 * next one would refuse too. */
		if (!strncmp(reason, "busy", 4)) {
			size_t w = strlen(why);

			snprintf(why + w, sizeof(why) - w, "%s%s: %.200s",
				 w ? "; " : "", hosts[i], reason);
			continue;
		}
		errprintf(err, "fwdallocd on %s refused the release: %s",
			  hosts[i], reason);
		free(msg);
		return -1;
	}
	free(msg);
	errprintf(err, "no controller took the release within %.1f s: %s",
		  timeout, why);
	return -1;
}
