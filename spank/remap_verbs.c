/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `verbs` remap driver: before a job uses its forwarders over RDMA,
 * check that this node can reach them.  An RDMA device must have an ACTIVE
 * port (libibverbs), and for every forwarder librdmacm must resolve the
 * address and the route within remap.verbs.resolve_timeout; with
 * connect_probe, the forwarding service must accept a connection on
 * remap.verbs.port.  Any failure fails the apply, so the node keeps its
 * default mapping.
 *
 * Every wait polls the event channel's descriptor with a timeout, so
 * nothing blocks without bound; every path tears down what it built in
 * reverse order (QP, id, channel; device context, device list).  All
 * rdma-core calls go through remap_rdma.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/timeutil.h"
#include "spank/remap_priv.h"
#include "spank/remap_rdma.h"

#define NO_DEVICE "verbs: no RDMA device found"

static const char *port_state_name(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_NOP:
		return "NOP";
	case IBV_PORT_DOWN:
		return "DOWN";
	case IBV_PORT_INIT:
		return "INIT";
	case IBV_PORT_ARMED:
		return "ARMED";
	case IBV_PORT_ACTIVE:
		return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER:
		return "ACTIVE_DEFER";
	}
	return "UNKNOWN";
}

static int verbs_prepare(struct remap *r, fwd_error_t *err)
{
	const struct policy_remap_verbs *c = &r->cfg.verbs;

	errno = EINVAL;
	if (!(c->resolve_timeout > 0))
		return errprintf(err,
				 "verbs: remap.verbs.resolve_timeout "
				 "must be positive, got %g",
				 c->resolve_timeout);
	if (c->port > 65535)
		return errprintf(err,
				 "verbs: remap.verbs.port %u is not a "
				 "port number",
				 c->port);
	if (c->connect_probe && c->port == 0)
		return errprintf(err, "verbs: remap.verbs.connect_probe needs "
				      "remap.verbs.port");
	if (c->device && !*c->device)
		return errprintf(err, "verbs: remap.verbs.device is empty");
	errno = 0;
	return 0;
}

/* Append to a fixed buffer, silently truncating. */
static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* The device list, or -1 with NO_DEVICE when there is none. */
static struct ibv_device **device_list(int *num, fwd_error_t *err)
{
	struct ibv_device **list;

	*num = 0;
	list = remap_rdma_get_device_list(num);
	if (!list) {
		/* libibverbs without kernel support says ENOSYS. */
		errprintf(err, NO_DEVICE " (ibv_get_device_list: %s)",
			  strerror(errno));
		errno = ENODEV;
		return NULL;
	}
	if (*num <= 0) {
		remap_rdma_free_device_list(list);
		errno = ENODEV;
		errprintf(err, NO_DEVICE);
		return NULL;
	}
	return list;
}

/*
 * Is there an ACTIVE port on the configured device, or on any device when
 * none is configured?  0 if so; else -1 with err naming every port seen.
 */
static int check_device(const struct remap *r, fwd_error_t *err)
{
	const char *want = r->cfg.verbs.device;
	struct ibv_device **list;
	char seen[512] = "";
	bool matched = false;
	int num, rv = -1;

	list = device_list(&num, err);
	if (!list)
		return -1;
	for (int i = 0; i < num && rv < 0; i++) {
		const char *name = remap_rdma_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *ctx;

		if (!name)
			name = "?";
		if (want && strcmp(want, name))
			continue;
		matched = true;
		ctx = remap_rdma_open_device(list[i]);
		if (!ctx) {
			append(seen, sizeof(seen), "%s%s: open: %s",
			       *seen ? ", " : "", name, strerror(errno));
			continue;
		}
		if (remap_rdma_query_device(ctx, &da) != 0) {
			append(seen, sizeof(seen), "%s%s: query: %s",
			       *seen ? ", " : "", name, strerror(errno));
			goto close;
		}
		for (unsigned int p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;

			if (remap_rdma_query_port(ctx, (uint8_t)p, &pa) != 0)
				continue;
			if (pa.state == IBV_PORT_ACTIVE) {
				rv = 0;
				break;
			}
			append(seen, sizeof(seen), "%s%s port %u: %s",
			       *seen ? ", " : "", name, p,
			       port_state_name(pa.state));
		}
	close:
		remap_rdma_close_device(ctx);
	}
	remap_rdma_free_device_list(list);
	if (rv == 0)
		return 0;
	if (want && !matched) {
		errno = ENODEV;
		return errprintf(err, "verbs: RDMA device %s not found", want);
	}
	errno = ENETDOWN;
	return errprintf(err, "verbs: no active RDMA port (%s)",
			 *seen ? seen : "no ports");
}

/*
 * Wait for the next event on ch, at most `timeout` seconds.  0 if it is
 * `want`; otherwise -1 with err saying what happened ("... timed out
 * after 2s", "route resolution failed: ...", "connection refused").
 */
static int wait_event(struct rdma_event_channel *ch,
		      enum rdma_cm_event_type want, double timeout,
		      const char *what, unsigned int port, fwd_error_t *err)
{
	double deadline = fwd_clock_mono() + timeout;

	for (;;) {
		struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
		struct rdma_cm_event *ev = NULL;
		enum rdma_cm_event_type type;
		double left = deadline - fwd_clock_mono();
		int k, status;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return errprintf(err, "%s timed out after %.3gs", what,
					 timeout);
		}
		k = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errprintf(err, "%s: poll: %s", what,
					 strerror(errno));
		if (k == 0)
			continue; /* the deadline check reports it */
		if (remap_rdma_get_cm_event(ch, &ev) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return errprintf(err, "%s: rdma_get_cm_event: %s", what,
					 strerror(errno));
		}
		type = ev->event;
		status = ev->status;
		remap_rdma_ack_cm_event(ev);
		if (type == want)
			return 0;
		switch (type) {
		case RDMA_CM_EVENT_ADDR_ERROR:
			errno = status < 0 ? -status : EHOSTUNREACH;
			return errprintf(err, "address resolution failed: %s",
					 strerror(errno));
		case RDMA_CM_EVENT_ROUTE_ERROR:
			errno = status < 0 ? -status : ENETUNREACH;
			return errprintf(err, "route resolution failed: %s",
					 strerror(errno));
		case RDMA_CM_EVENT_REJECTED:
			errno = ECONNREFUSED;
			return errprintf(err, "connection refused (port %u)",
					 port);
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_CONNECT_ERROR:
			errno = ECONNREFUSED;
			return errprintf(err,
					 "connection refused (port %u "
					 "unreachable)",
					 port);
		default:
			errno = EPROTO;
			return errprintf(err, "%s: unexpected event %s", what,
					 rdma_event_str(type));
		}
	}
}

/* The forwarder's address as a sockaddr with the service port. */
static int target_sockaddr(const char *addr, unsigned int port,
			   struct sockaddr_storage *ss, fwd_error_t *err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int k;

	k = getaddrinfo(addr, NULL, &hints, &res);
	if (k != 0 || !res) {
		errno = EHOSTUNREACH;
		return errprintf(err, "cannot resolve the address: %s",
				 k ? gai_strerror(k) : "no result");
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	freeaddrinfo(res);
	return 0;
}

/*
 * Resolve address and route to one forwarder (and probe a connection if
 * configured).  On success, when `via` is given, it names the local
 * device and port the route uses.
 */
static int check_target(const struct remap *r, const struct remap_target *t,
			char *via, size_t vialen, fwd_error_t *err)
{
	const struct policy_remap_verbs *c = &r->cfg.verbs;
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *id = NULL;
	struct sockaddr_storage dst;
	bool qp = false, connected = false;
	double timeout = c->resolve_timeout;
	int ms, rv = -1;

	if (remap_remaining(r) < timeout)
		timeout = remap_remaining(r);
	ms = (int)(timeout * 1000);
	if (ms < 1)
		ms = 1;
	if (target_sockaddr(remap_target_address(t), c->port, &dst, err) < 0)
		return -1;
	ch = remap_rdma_create_event_channel();
	if (!ch)
		return errprintf(err, "rdma_create_event_channel: %s",
				 strerror(errno));
	/* poll() says when an event is there; never block in the read. */
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		errprintf(err, "event channel: %s", strerror(errno));
		goto destroy_channel;
	}
	if (remap_rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) < 0) {
		errprintf(err, "rdma_create_id: %s", strerror(errno));
		goto destroy_channel;
	}
	if (remap_rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, ms) <
	    0) {
		errprintf(err, "address resolution failed: %s",
			  strerror(errno));
		goto destroy_id;
	}
	if (wait_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, timeout,
		       "address resolution", c->port, err) < 0)
		goto destroy_id;
	if (remap_rdma_resolve_route(id, ms) < 0) {
		errprintf(err, "route resolution failed: %s", strerror(errno));
		goto destroy_id;
	}
	if (wait_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout,
		       "route resolution", c->port, err) < 0)
		goto destroy_id;
	if (c->connect_probe) {
		struct ibv_qp_init_attr qa = {
			.qp_type = IBV_QPT_RC,
			.cap = {.max_send_wr = 1,
				.max_recv_wr = 1,
				.max_send_sge = 1,
				.max_recv_sge = 1},
		};
		struct rdma_conn_param cp = {.retry_count = 1,
					     .rnr_retry_count = 1};

		/* NULL pd and CQs: librdmacm supplies defaults. */
		if (remap_rdma_create_qp(id, NULL, &qa) < 0) {
			errprintf(err, "connect probe: rdma_create_qp: %s",
				  strerror(errno));
			goto destroy_id;
		}
		qp = true;
		if (remap_rdma_connect(id, &cp) < 0) {
			errprintf(err, "connection refused (port %u): %s",
				  c->port, strerror(errno));
			goto destroy_qp;
		}
		if (wait_event(ch, RDMA_CM_EVENT_ESTABLISHED, timeout,
			       "connect probe", c->port, err) < 0)
			goto destroy_qp;
		connected = true;
	}
	if (via) {
		const char *dev =
			id->verbs
				? remap_rdma_get_device_name(id->verbs->device)
				: NULL;

		snprintf(via, vialen, "route resolved via %s port %u%s",
			 dev ? dev : "?", (unsigned int)id->port_num,
			 connected ? ", connect probe accepted" : "");
	}
	rv = 0;
destroy_qp:
	if (connected)
		remap_rdma_disconnect(id);
	if (qp)
		remap_rdma_destroy_qp(id);
destroy_id:
	remap_rdma_destroy_id(id);
destroy_channel:
	remap_rdma_destroy_event_channel(ch);
	return rv;
}

static int verbs_apply(struct remap *r, const char *node, uint32_t job,
		       const struct remap_target *t, size_t n, fwd_error_t *err)
{
	if (check_device(r, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (remap_remaining(r) <= 0) {
			errno = ETIMEDOUT;
			return errprintf(err,
					 "verbs: %s (%s): not checked, "
					 "remap.timeout of %gs reached",
					 t[i].name, remap_target_address(&t[i]),
					 r->cfg.timeout);
		}
		if (check_target(r, &t[i], NULL, 0, err) < 0)
			return errprefix(err, "verbs: %s (%s)", t[i].name,
					 remap_target_address(&t[i]));
	}
	return 0;
}

/* Nothing on the node changed: nothing to undo. */
static int verbs_revert(struct remap *r, const char *node, uint32_t job,
			fwd_error_t *err)
{
	return 0;
}

const struct remap_ops remap_verbs_ops = {
	.name = "verbs",
	.prepare = verbs_prepare,
	.apply = verbs_apply,
	.revert = verbs_revert,
};

/* ---- probe -------------------------------------------------------------- */

void remap_probe_destroy(struct remap_probe *p)
{
	int saved = errno;

	if (!p)
		return;
	for (size_t i = 0; i < p->n_devices; i++) {
		free(p->devices[i].name);
		free(p->devices[i].ports);
	}
	free(p->devices);
	for (size_t i = 0; i < p->n_targets; i++) {
		free(p->targets[i].name);
		free(p->targets[i].address);
		free(p->targets[i].message);
	}
	free(p->targets);
	free(p);
	errno = saved;
}

static int probe_devices(struct remap_probe *p, struct ibv_device **list,
			 int num)
{
	p->devices = calloc((size_t)num, sizeof(*p->devices));
	if (!p->devices)
		return -1;
	for (int i = 0; i < num; i++) {
		struct remap_probe_device *d = &p->devices[p->n_devices++];
		const char *name = remap_rdma_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *ctx;

		d->name = strdup(name ? name : "?");
		if (!d->name)
			return -1;
		ctx = remap_rdma_open_device(list[i]);
		if (!ctx) {
			d->error = errno ? errno : EIO;
			continue;
		}
		if (remap_rdma_query_device(ctx, &da) != 0) {
			d->error = errno ? errno : EIO;
			remap_rdma_close_device(ctx);
			continue;
		}
		d->ports = calloc(da.phys_port_cnt ? da.phys_port_cnt : 1,
				  sizeof(*d->ports));
		if (!d->ports) {
			remap_rdma_close_device(ctx);
			return -1;
		}
		for (unsigned int k = 1; k <= da.phys_port_cnt; k++) {
			struct remap_probe_port *pp = &d->ports[d->n_ports++];
			struct ibv_port_attr pa;

			pp->num = k;
			if (remap_rdma_query_port(ctx, (uint8_t)k, &pa) != 0) {
				pp->state = "UNKNOWN";
				continue;
			}
			pp->state = port_state_name(pa.state);
			pp->link_layer = pa.link_layer;
		}
		remap_rdma_close_device(ctx);
	}
	return 0;
}

int remap_probe(const struct policy_remap *cfg, const struct remap_target *fwds,
		size_t n, struct remap_probe **out, fwd_error_t *err)
{
	struct remap r = {.ops = &remap_verbs_ops};
	struct ibv_device **list = NULL;
	fwd_error_t derr = {""};
	struct remap_probe *p;
	int num = 0, rv = -1;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return errprintf(err, "verbs: out of memory");
	r.cfg = *cfg; /* read only, never freed */
	if (!(r.cfg.verbs.resolve_timeout > 0))
		r.cfg.verbs.resolve_timeout = 2;
	if (!(r.cfg.timeout > 0))
		r.cfg.timeout = 30;
	p->targets = calloc(n ? n : 1, sizeof(*p->targets));
	if (!p->targets) {
		errprintf(err, "verbs: out of memory");
		goto out;
	}
	list = device_list(&num, &derr);
	if (list && probe_devices(p, list, num) < 0) {
		errprintf(err, "verbs: out of memory");
		goto out;
	}
	r.deadline = fwd_clock_mono() + r.cfg.timeout;
	for (size_t i = 0; i < n; i++) {
		struct remap_probe_target *pt = &p->targets[p->n_targets++];
		char via[256] = "";
		fwd_error_t terr;

		pt->name = strdup(fwds[i].name);
		pt->address = strdup(remap_target_address(&fwds[i]));
		if (!list) {
			pt->message = strdup(derr.text);
		} else if (check_target(&r, &fwds[i], via, sizeof(via),
					&terr) == 0) {
			pt->ok = 1;
			pt->message = strdup(via);
		} else {
			pt->message = strdup(terr.text);
		}
		if (!pt->name || !pt->address || !pt->message) {
			errprintf(err, "verbs: out of memory");
			goto out;
		}
	}
	if (!list) {
		/* No device: the report says so for every forwarder. */
		*out = p;
		errno = ENODEV;
		return errprintf(err, "%s", derr.text);
	}
	rv = 0;
out:
	if (list)
		remap_rdma_free_device_list(list);
	if (rv < 0 && p != *out)
		remap_probe_destroy(p);
	else
		*out = p;
	return rv;
}
