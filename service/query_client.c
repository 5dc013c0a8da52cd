/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user's side of a report request (service/query.h): a MUNGE
 * credential whose payload is the request, sent to the service's query
 * socket; the answer read back in as many messages as it takes.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "service/protocol.h"
#include "service/query.h"

char *svcq_cred_make(const char *munge_socket, const void *payload, size_t len,
		     uid_t decoder, char *why, size_t whyn)
{
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;
	char *cred = NULL;

	if (!ctx) {
		snprintf(why, whyn, "munge: out of memory");
		return NULL;
	}
	if ((munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET,
					   munge_socket) != EMUNGE_SUCCESS) ||
	    (decoder != (uid_t)-1 &&
	     munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, decoder) !=
		     EMUNGE_SUCCESS)) {
		snprintf(why, whyn, "munge: %s", munge_ctx_strerror(ctx));
		goto out;
	}
	if (len > INT_MAX) {
		snprintf(why, whyn, "munge: a payload of %zu bytes", len);
		goto out;
	}
	e = munge_encode(&cred, ctx, payload, (int)len);
	if (e != EMUNGE_SUCCESS) {
		const char *t = munge_ctx_strerror(ctx);

		snprintf(why, whyn,
			 "no MUNGE credential (is munged running%s%s?): %s",
			 munge_socket ? " at "
				      : "; FWDALLOC_MUNGE_SOCKET "
					"names its socket when it is "
					"not libmunge's default",
			 munge_socket ? munge_socket : "",
			 t ? t : munge_strerror(e));
		cred = NULL;
	}
out:
	munge_ctx_destroy(ctx);
	return cred;
}

static void set_timeouts(int fd, double timeout)
{
	struct timeval tv;

	tv.tv_sec = (time_t)timeout;
	tv.tv_usec = (suseconds_t)((timeout - (double)tv.tv_sec) * 1e6);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* One message into buf (n bytes); its length, or -1 with why set. */
static ssize_t recv_one(int fd, char *buf, size_t n, char *why, size_t whyn)
{
	ssize_t got;

	do
		got = recv(fd, buf, n, MSG_TRUNC);
	while (got < 0 && errno == EINTR);
	if (got < 0) {
		snprintf(why, whyn, "%s",
			 errno == EAGAIN || errno == EWOULDBLOCK
				 ? "no answer in time"
				 : strerror(errno));
		return -1;
	}
	if ((size_t)got > n) {
		snprintf(why, whyn, "an answer message longer than %zu bytes",
			 n);
		return -1;
	}
	return got;
}

enum svcq_result svcq_call(const char *path, const char *munge_socket,
			   const struct svcq_request *r,
			   const char *cred_override, double timeout,
			   char **answer, size_t *len, char *why, size_t whyn)
{
	enum svcq_result res = SVCQ_BROKEN;
	char head[SVCQ_HEAD_MAX + 1], *cred = NULL, *msg = NULL, *out = NULL;
	struct sockaddr_un sa;
	struct stat st;
	fwd_error_t err;
	size_t mlen, want, have, hl;
	ssize_t got;
	char *end;
	int fd = -1;

	*answer = NULL;
	*len = 0;
	if (svcq_head(r, head, sizeof(head), &err) < 0) {
		snprintf(why, whyn, "%s", err.text);
		return SVCQ_BROKEN;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, whyn, "socket path %s: too long", path);
		return SVCQ_ABSENT;
	}
	if (stat(path, &st) < 0) {
		snprintf(why, whyn, "no service at %s: %s", path,
			 strerror(errno));
		return SVCQ_ABSENT;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, whyn, "no service at %s: not a socket", path);
		return SVCQ_ABSENT;
	}
	if (cred_override) {
		cred = strdup(cred_override);
	} else if (!(cred = svcq_cred_make(munge_socket, head, strlen(head),
					   st.st_uid, why, whyn))) {
		return SVCQ_NO_CRED;
	}
	if (!cred) {
		snprintf(why, whyn, "out of memory");
		return SVCQ_BROKEN;
	}
	mlen = strlen(head) + 1 + strlen(cred);
	if (mlen > FWD_SVC_QUERY_MAX) {
		snprintf(why, whyn,
			 "the credential is longer than the %d bytes "
			 "a request may hold",
			 FWD_SVC_QUERY_MAX);
		goto out;
	}
	if (!(msg = malloc(FWD_SVC_MSG_MAX + 1))) {
		snprintf(why, whyn, "out of memory");
		goto out;
	}
	snprintf(msg, FWD_SVC_MSG_MAX, "%s\n%s", head, cred);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(why, whyn, "socket: %s", strerror(errno));
		goto out;
	}
	set_timeouts(fd, timeout);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(why, whyn, "no service at %s: %s", path,
			 strerror(errno));
		res = SVCQ_ABSENT;
		goto out;
	}
	if (send(fd, msg, mlen, MSG_NOSIGNAL) != (ssize_t)mlen) {
		snprintf(why, whyn, "send to %s: %s", path, strerror(errno));
		goto out;
	}
	if ((got = recv_one(fd, msg, FWD_SVC_MSG_MAX, why, whyn)) < 0)
		goto out;
	msg[got] = '\0';
	if (!got) {
		snprintf(why, whyn, "the service closed without answering");
		goto out;
	}
	if (!strncmp(msg, FWD_SVC_MAGIC " R ", sizeof(FWD_SVC_MAGIC) + 2)) {
		char *reason = msg + sizeof(FWD_SVC_MAGIC) + 2;

		reason[strcspn(reason, "\n")] = '\0';
		snprintf(why, whyn, "%s", reason);
		res = SVCQ_REFUSED;
		goto out;
	}
	if (strncmp(msg, FWD_SVC_MAGIC " 0 A ", sizeof(FWD_SVC_MAGIC) + 4) ||
	    !(end = memchr(msg, '\n', (size_t)got))) {
		snprintf(why, whyn, "a damaged answer");
		goto out;
	}
	errno = 0;
	want = strtoul(msg + sizeof(FWD_SVC_MAGIC) + 4, &end, 10);
	if (errno || *end != '\n' || want > SVCQ_ANSWER_MAX) {
		snprintf(why, whyn, "a damaged answer head");
		goto out;
	}
	hl = (size_t)(end + 1 - msg);
	if (!(out = malloc(want + 1))) {
		snprintf(why, whyn, "out of memory for a %zu-byte answer",
			 want);
		goto out;
	}
	have = (size_t)got - hl;
	if (have > want) {
		snprintf(why, whyn, "an answer longer than it says");
		goto out;
	}
	memcpy(out, msg + hl, have);
	while (have < want) {
		if ((got = recv_one(fd, out + have, want - have, why, whyn)) <
		    0)
			goto out;
		if (!got) {
			snprintf(why, whyn,
				 "the answer was cut after %zu of %zu bytes",
				 have, want);
			goto out;
		}
		have += (size_t)got;
	}
	out[want] = '\0';
	*answer = out;
	*len = want;
	out = NULL;
	res = SVCQ_ANSWERED;
out:
	if (fd >= 0)
		close(fd);
	free(out);
	free(msg);
	free(cred);
	return res;
}
