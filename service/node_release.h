/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SERVICE_NODE_RELEASE_H
#define FWD_SERVICE_NODE_RELEASE_H

/*
 * The compute nodes' releases to the controller service (policy
 * `release.port`, service/protocol.h): what the service accepts, and the
 * node's call (spank/fwdalloc_release.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"
#include "service/query.h"

/* A release the service accepted: the epilog request the credential
 * carried. */
struct nrel_request {
	double t0;	  /* when the node's epilog started, epoch seconds */
	const char *vars; /* the job's variables, NUL-separated */
	size_t vars_len;
};

/*
 * Whether a decoded credential (c, see svcq_cred) is a node's release: a
 * valid credential made by root (slurmd runs the epilogs as root) whose
 * payload is an epilog request.  0 with r pointing into c's payload, or
 * -1 with the refusal in why.
 */
int nrel_check(const struct svcq_cred *c, struct nrel_request *r, char *why,
	       size_t n);

/*
 * The node's side: send the release of the job whose epilog request is
 * req (req_len bytes, service/client.h svc_request()) to fwdallocd at
 * port on each host of hosts (n of them) in turn, until one answers,
 * within timeout seconds in all (each host gets an equal share of what
 * is left: a host that is down leaves time for the next; a host busy
 * with too many releases passes to the next too); munge_socket NULL:
 * libmunge's default.  Names resolve through getaddrinfo(), whose own
 * timeouts (resolv.conf) apply: list names the nodes resolve locally.
 * 0 with the host that took it in *to, or -1 with err (no credential,
 * no host answered in time, or a host refused: its reason).
 */
int nrel_send(const char *const *hosts, size_t n, unsigned port,
	      const char *req, size_t req_len, double timeout,
	      const char *munge_socket, const char **to, fwd_error_t *err);

#endif
