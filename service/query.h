/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SERVICE_QUERY_H
#define FWD_SERVICE_QUERY_H

/*
 * Users' report requests to the controller service (service/protocol.h,
 * "Q" requests on the query socket): the request's text, and the
 * checks that decide whether a caller gets its answer, the answer's
 * framing (svcq_answer) and the client's call (service/query_client.c);
 * the service decodes the credential and reads the database itself
 * (service/fwdallocd.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

enum svcq_kind { SVCQ_JOB, SVCQ_MACHINE };

/* The report's format, as the wire names it: "text", "json", "html". */
enum svcq_format { SVCQ_TEXT, SVCQ_JSON, SVCQ_HTML };

struct svcq_request {
	enum svcq_kind kind;
	enum svcq_format format;
	uint64_t job_id;      /* SVCQ_JOB: 1 .. 4294967295 */
	int64_t since, until; /* SVCQ_MACHINE: epoch seconds, since < until */
};

/* The longest head line "FWDALLOC1 Q ...", without its '\n'. */
#define SVCQ_HEAD_MAX 128

/*
 * The request's head line, without its '\n' ("FWDALLOC1 Q job 42 json",
 * "FWDALLOC1 Q machine 1700000000 1700086400 html"): the text the
 * credential's payload must equal.  0, or -1 (EINVAL: a field out of
 * range, named in err).
 */
int svcq_head(const struct svcq_request *r, char *buf, size_t n,
	      fwd_error_t *err);

/*
 * Parse a request message: the head line, '\n', then the MUNGE
 * credential (base64, printable, up to the end or a NUL).  On success r
 * holds the request, *head_len the head line's length (msg[0 ..
 * head_len) is the text the payload must equal) and *cred the offset of
 * the credential in msg.  -1 with err naming the offending part.
 */
int svcq_parse(const char *msg, size_t len, struct svcq_request *r,
	       size_t *head_len, size_t *cred, fwd_error_t *err);

/* How munge_decode() ended, as svcq_check_cred() reads it. */
struct svcq_cred {
	int munge_rc;		/* munge_err_t */
	const char *munge_text; /* munge_strerror()/munge_ctx_strerror() */
	uid_t uid;		/* the credential's uid (when decoded) */
	const void *payload;	/* NULL when none */
	size_t payload_len;
};

/*
 * Whether munge_decode() said the credential is valid.  0, or -1 with the
 * refusal in why: forged or damaged, replayed, expired, from the future,
 * not made for this service, not decoded.
 */
int svcq_cred_valid(const struct svcq_cred *c, char *why, size_t n);

/*
 * Whether a decoded credential may stand for the request: munge said it
 * is valid, it was made by the uid that sent it (peer_uid, SO_PEERCRED),
 * and its payload is the request's head line (head, head_len), so that it
 * cannot be used for another request.  0, or -1 with the refusal in why:
 * forged or damaged, replayed, expired, from the future, not made for
 * this service, from another uid, for another request.
 */
int svcq_check_cred(const struct svcq_cred *c, uid_t peer_uid, const char *head,
		    size_t head_len, char *why, size_t n);

/*
 * Whether `user` (uid `uid`) may have the report of r: an admin (root,
 * or a member of the admin group: is_admin) any; anyone else only a job
 * whose owner is `user` (owner_rc: 0 found, owner its name; 1 no such
 * job) and never the machine's.  admin_group names the group in the
 * refusal (NULL: none configured).  0, or -1 with the refusal in why.
 */
int svcq_check_access(const struct svcq_request *r, const char *user, uid_t uid,
		      bool is_admin, int owner_rc, const char *owner,
		      const char *admin_group, char *why, size_t n);

/* True when admin_gid is among the n groups of gids. */
bool svcq_in_group(const gid_t *gids, size_t n, gid_t admin_gid);

/*
 * The service's answer to a report request on fd: "FWDALLOC1 0 A <len>"
 * and the text, in messages of at most FWD_SVC_MSG_MAX bytes (the first
 * holds the head and the text's start).  fd is made blocking, with a send
 * timeout of `timeout` seconds: a client that does not read costs that
 * long at most.  0, or -1 with errno.
 */
int svcq_answer(int fd, const char *text, size_t len, int timeout);

/*
 * A MUNGE credential (munge_encode(), malloc()ed) made by munged at
 * munge_socket (NULL: libmunge's default) for payload (len bytes),
 * decodable by uid `decoder` only, or by anyone for (uid_t)-1.  NULL with
 * why set.
 */
char *svcq_cred_make(const char *munge_socket, const void *payload, size_t len,
		     uid_t decoder, char *why, size_t whyn);

/*
 * The client: ask the service listening at `path` for the report of r,
 * with a credential made by munged at munge_socket (NULL: libmunge's
 * default) or, for tests, the credential in cred_override (used as is).
 */
enum svcq_result {
	SVCQ_ANSWERED, /* *answer (malloc'd, NUL-terminated, *len bytes) */
	SVCQ_REFUSED,  /* the service refused: why holds its reason */
	SVCQ_ABSENT,   /* no service at path: why says what happened */
	SVCQ_NO_CRED,  /* munged made no credential: why says why */
	SVCQ_BROKEN    /* anything else: why says what */
};

/* The largest answer the client takes, in bytes. */
#define SVCQ_ANSWER_MAX (64u << 20)

enum svcq_result svcq_call(const char *path, const char *munge_socket,
			   const struct svcq_request *r,
			   const char *cred_override, double timeout,
			   char **answer, size_t *len, char *why, size_t whyn);

#endif
