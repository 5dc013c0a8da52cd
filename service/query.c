/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Report requests: their text and the checks on their credential and on
 * who may see what (service/query.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "service/protocol.h"
#include "service/query.h"

static const char *const format_names[] = {"text", "json", "html"};

int svcq_head(const struct svcq_request *r, char *buf, size_t n,
	      fwd_error_t *err)
{
	int k;

	if ((unsigned)r->format > SVCQ_HTML)
		return errprintf(err,
				 "report format %d: not text, json or html",
				 (int)r->format);
	if (r->kind == SVCQ_JOB) {
		if (r->job_id < 1 || r->job_id > 4294967295u)
			return errprintf(err,
					 "job id %" PRIu64
					 ": not a job id (1..4294967295)",
					 r->job_id);
		k = snprintf(buf, n, FWD_SVC_MAGIC " Q job %" PRIu64 " %s",
			     r->job_id, format_names[r->format]);
	} else if (r->kind == SVCQ_MACHINE) {
		if (r->since < 0 || r->until <= r->since)
			return errprintf(err,
					 "time range %" PRId64 "..%" PRId64
					 ": not a range of epoch seconds",
					 r->since, r->until);
		k = snprintf(buf, n,
			     FWD_SVC_MAGIC " Q machine %" PRId64 " %" PRId64
					   " %s",
			     r->since, r->until, format_names[r->format]);
	} else {
		return errprintf(err, "report kind %d: not job or machine",
				 (int)r->kind);
	}
	if (k < 0 || (size_t)k >= n)
		return errprintf(err, "request head longer than %zu bytes", n);
	return 0;
}

/* A decimal number without sign or leading zeros, at most max. */
static int parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 19 || (s[0] == '0' && len > 1))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* The next space-separated word of [*p, end): its start and length. */
static bool word(const char **p, const char *end, const char **w, size_t *wl)
{
	const char *s = *p, *e;

	if (s >= end)
		return false;
	e = memchr(s, ' ', (size_t)(end - s));
	if (!e)
		e = end;
	*w = s;
	*wl = (size_t)(e - s);
	*p = e < end ? e + 1 : end;
	return *wl > 0;
}

static bool is_word(const char *w, size_t wl, const char *lit)
{
	return wl == strlen(lit) && !memcmp(w, lit, wl);
}

int svcq_parse(const char *msg, size_t len, struct svcq_request *r,
	       size_t *head_len, size_t *cred, fwd_error_t *err)
{
	static const char magic[] = FWD_SVC_MAGIC " Q ";
	const char *nl = memchr(msg, '\n', len), *p, *end, *w;
	size_t wl, hl, c, clen;
	uint64_t v;
	fwd_error_t dummy;

	memset(r, 0, sizeof(*r));
	if (!nl || (size_t)(nl - msg) > SVCQ_HEAD_MAX)
		return errprintf(err,
				 "no request head line (at most %d bytes "
				 "and a newline)",
				 SVCQ_HEAD_MAX);
	hl = (size_t)(nl - msg);
	if (hl < sizeof(magic) - 1 || memcmp(msg, magic, sizeof(magic) - 1))
		return errprintf(err, "not a report request (\"%s...\")",
				 FWD_SVC_MAGIC " Q");
	p = msg + sizeof(magic) - 1;
	end = nl;
	if (!word(&p, end, &w, &wl))
		return errprintf(err, "report request: no kind (job, machine)");
	if (is_word(w, wl, "job")) {
		r->kind = SVCQ_JOB;
		if (!word(&p, end, &w, &wl) ||
		    parse_u64(w, wl, 4294967295u, &v) < 0 || !v)
			return errprintf(err,
					 "report request: \"%.*s\": not a job "
					 "id (1..4294967295)",
					 (int)wl, w);
		r->job_id = v;
	} else if (is_word(w, wl, "machine")) {
		r->kind = SVCQ_MACHINE;
		if (!word(&p, end, &w, &wl) ||
		    parse_u64(w, wl, INT64_MAX, &v) < 0)
			return errprintf(err,
					 "report request: \"%.*s\": not a "
					 "start time in epoch seconds",
					 (int)wl, w);
		r->since = (int64_t)v;
		if (!word(&p, end, &w, &wl) ||
		    parse_u64(w, wl, INT64_MAX, &v) < 0 ||
		    (int64_t)v <= r->since)
			return errprintf(
				err,
				"report request: \"%.*s\": not an end "
				"time in epoch seconds after the start",
				(int)wl, w);
		r->until = (int64_t)v;
	} else {
		return errprintf(err,
				 "report request: kind \"%.*s\": not job or "
				 "machine",
				 (int)wl, w);
	}
	if (!word(&p, end, &w, &wl))
		return errprintf(err, "report request: no format (text, json, "
				      "html)");
	for (v = 0; v < 3 && !is_word(w, wl, format_names[v]); v++)
		;
	if (v == 3)
		return errprintf(err,
				 "report request: format \"%.*s\": not text, "
				 "json or html",
				 (int)wl, w);
	r->format = (enum svcq_format)v;
	if (p != end || end[-1] == ' ')
		return errprintf(err,
				 "report request: \"%.*s\": more than a "
				 "request",
				 (int)hl, msg);
	/* The head must be the one svcq_head() makes: the credential's
	 * payload is compared with it byte for byte. */
	{
		char canon[SVCQ_HEAD_MAX + 1];

		if (svcq_head(r, canon, sizeof(canon), &dummy) < 0 ||
		    strlen(canon) != hl || memcmp(canon, msg, hl))
			return errprintf(err,
					 "report request: \"%.*s\": not "
					 "in canonical form",
					 (int)hl, msg);
	}
	c = hl + 1;
	for (clen = 0; c + clen < len && msg[c + clen]; clen++)
		if (msg[c + clen] < '!' || msg[c + clen] > '~')
			return errprintf(err, "report request: the credential "
					      "holds a byte that is not "
					      "printable ASCII");
	if (c + clen < len - 1 || !clen)
		return errprintf(err, "report request: %s",
				 clen ? "bytes after the credential"
				      : "no credential");
	*head_len = hl;
	*cred = c;
	return 0;
}

int svcq_cred_valid(const struct svcq_cred *c, char *why, size_t n)
{
	const char *t = c->munge_text ? c->munge_text : "";

	switch (c->munge_rc) {
	case EMUNGE_SUCCESS:
		break;
	case EMUNGE_CRED_REPLAYED:
		snprintf(why, n,
			 "credential replayed: munged has decoded it before "
			 "(a credential stands for one request; a new request "
			 "needs a new credential)");
		return -1;
	case EMUNGE_CRED_EXPIRED:
		snprintf(why, n,
			 "credential expired: older than its time to live "
			 "(are the clocks of this host and the controller "
			 "in step?)");
		return -1;
	case EMUNGE_CRED_REWOUND:
		snprintf(why, n,
			 "credential rewound: made in the future (are the "
			 "clocks of this host and the controller in step?)");
		return -1;
	case EMUNGE_CRED_UNAUTHORIZED:
		snprintf(why, n,
			 "credential not meant for this service (it may be "
			 "decoded by another uid only): %s",
			 t);
		return -1;
	case EMUNGE_BAD_CRED:
	case EMUNGE_BAD_VERSION:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_ZIP:
	case EMUNGE_BAD_REALM:
	case EMUNGE_CRED_INVALID:
	case EMUNGE_BAD_ARG:
	case EMUNGE_BAD_LENGTH:
		snprintf(why, n, "credential invalid (forged or damaged): %s",
			 t);
		return -1;
	default:
		snprintf(why, n,
			 "the service could not decode the credential "
			 "(munged on the controller): %s",
			 t);
		return -1;
	}
	return 0;
}

int svcq_check_cred(const struct svcq_cred *c, uid_t peer_uid, const char *head,
		    size_t head_len, char *why, size_t n)
{
	if (svcq_cred_valid(c, why, n) < 0)
		return -1;
	if (c->uid != peer_uid) {
		snprintf(why, n,
			 "credential made by uid %ld but sent by uid %ld: a "
			 "credential is good only for the process that made it",
			 (long)c->uid, (long)peer_uid);
		return -1;
	}
	if (!c->payload || c->payload_len != head_len ||
	    memcmp(c->payload, head, head_len)) {
		snprintf(why, n,
			 "credential made for another request (its payload "
			 "is not \"%.*s\")",
			 (int)head_len, head);
		return -1;
	}
	return 0;
}

int svcq_check_access(const struct svcq_request *r, const char *user, uid_t uid,
		      bool is_admin, int owner_rc, const char *owner,
		      const char *admin_group, char *why, size_t n)
{
	const char *who = user ? user : "?";

	if (r->kind == SVCQ_MACHINE) {
		if (is_admin)
			return 0;
		if (admin_group)
			snprintf(why, n,
				 "the machine report is for admins: %s (uid "
				 "%ld) is neither root nor in group %s",
				 who, (long)uid, admin_group);
		else
			snprintf(why, n,
				 "the machine report is for admins: %s (uid "
				 "%ld) is not root and the policy names no "
				 "reports.admin_group",
				 who, (long)uid);
		return -1;
	}
	if (owner_rc == 1) {
		snprintf(why, n,
			 "job %" PRIu64 ": no such job in fwdalloc's "
			 "records",
			 r->job_id);
		return -1;
	}
	if (is_admin)
		return 0;
	if (!user || owner_rc != 0 || !owner || strcmp(owner, user)) {
		snprintf(why, n,
			 "job %" PRIu64
			 " is not yours: %s (uid %ld) may see only the "
			 "reports of its own jobs",
			 r->job_id, who, (long)uid);
		return -1;
	}
	return 0;
}

bool svcq_in_group(const gid_t *gids, size_t n, gid_t admin_gid)
{
	for (size_t i = 0; i < n; i++)
		if (gids[i] == admin_gid)
			return true;
	return false;
}

int svcq_answer(int fd, const char *text, size_t len, int timeout)
{
	char *buf = malloc(FWD_SVC_MSG_MAX);
	struct timeval tv = {timeout, 0};
	size_t off = 0, used;
	int h, rv = -1, fl;

	if (!buf)
		return -1;
	/* An accepted socket may be non-blocking: the answer waits for a
	 * slow reader, for `timeout` at most. */
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		goto out;
	h = snprintf(buf, FWD_SVC_MSG_MAX, FWD_SVC_MAGIC " 0 A %zu\n", len);
	for (used = (size_t)h;; used = 0) {
		size_t k = len - off < FWD_SVC_MSG_MAX - used
				   ? len - off
				   : FWD_SVC_MSG_MAX - used;

		memcpy(buf + used, text + off, k);
		if (send(fd, buf, used + k, MSG_NOSIGNAL) !=
		    (ssize_t)(used + k))
			goto out;
		off += k;
		if (off == len)
			break;
	}
	rv = 0;
out:
	free(buf);
	return rv;
}
