/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The verbs remap driver.  Every rdma-core call goes through the seam in
 * spank/remap_rdma.h, wrapped here (-Wl,--wrap=remap_rdma_*): a fake
 * fabric with scripted devices, port states and connection-manager events
 * drives every failure path, and counters prove that everything created
 * is torn down.  One test turns the fakes off and runs the real
 * libibverbs on this machine, which has no RDMA device.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spank/remap.h"
#include "spank/remap_rdma.h"

#define NO_EVENT (-1)

/* ---- the fake fabric ---------------------------------------------------- */

static struct {
	bool real;     /* pass through to rdma-core */
	int n_devices; /* -1: the list call fails (ENOSYS) */
	const char *names[2];
	enum ibv_port_state state[2];  /* one port per device */
	int addr_event, addr_status;   /* after rdma_resolve_addr */
	int route_event, route_status; /* after rdma_resolve_route */
	int connect_event;	       /* after rdma_connect */
	int resolve_addr_errno;	       /* rdma_resolve_addr itself fails */
	/* live objects: must be 0 after every call */
	int lists, contexts, channels, ids, qps, events;
	int connects, disconnects, resolves;
} F;

static struct ibv_device fake_dev[2];
static struct ibv_context fake_ctx[2];
static int chan_wfd = -1;
static int queue[8], q_head, q_tail;

static void reset_fakes(void)
{
	memset(&F, 0, sizeof(F));
	F.n_devices = 1;
	F.names[0] = "mlx5_0";
	F.names[1] = "mlx5_1";
	F.state[0] = F.state[1] = IBV_PORT_ACTIVE;
	F.addr_event = RDMA_CM_EVENT_ADDR_RESOLVED;
	F.route_event = RDMA_CM_EVENT_ROUTE_RESOLVED;
	F.connect_event = RDMA_CM_EVENT_ESTABLISHED;
	q_head = q_tail = 0;
	fake_ctx[0].device = &fake_dev[0];
	fake_ctx[1].device = &fake_dev[1];
}

static void push_event(int ev)
{
	char b = 'e';

	if (ev == NO_EVENT)
		return; /* never arrives: the driver must time out */
	queue[q_tail++ % 8] = ev;
	assert_int_equal(write(chan_wfd, &b, 1), 1);
}

#define REAL(ret, name, params, args)                         \
	ret __real_remap_rdma_##name params;                  \
	ret __wrap_remap_rdma_##name params;                  \
	ret __wrap_remap_rdma_##name params                   \
	{                                                     \
		if (F.real)                                   \
			return __real_remap_rdma_##name args; \
		return fake_##name args;                      \
	}

static struct ibv_device **fake_get_device_list(int *num)
{
	struct ibv_device **l;

	if (F.n_devices < 0) {
		errno = ENOSYS;
		return NULL;
	}
	l = calloc((size_t)F.n_devices + 1, sizeof(*l));
	assert_non_null(l);
	for (int i = 0; i < F.n_devices; i++)
		l[i] = &fake_dev[i];
	*num = F.n_devices;
	F.lists++;
	return l;
}

static void fake_free_device_list(struct ibv_device **l)
{
	F.lists--;
	free(l);
}

static const char *fake_get_device_name(struct ibv_device *d)
{
	return F.names[d - fake_dev];
}

static struct ibv_context *fake_open_device(struct ibv_device *d)
{
	F.contexts++;
	return &fake_ctx[d - fake_dev];
}

static int fake_close_device(struct ibv_context *c)
{
	F.contexts--;
	return 0;
}

static int fake_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->phys_port_cnt = 1;
	return 0;
}

static int fake_query_port(struct ibv_context *c, uint8_t port,
			   struct ibv_port_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->state = F.state[c - fake_ctx];
	a->link_layer = IBV_LINK_LAYER_INFINIBAND;
	return 0;
}

static struct rdma_event_channel *fake_create_event_channel(void)
{
	struct rdma_event_channel *ch = calloc(1, sizeof(*ch));
	int p[2];

	assert_non_null(ch);
	assert_int_equal(pipe(p), 0);
	ch->fd = p[0];
	chan_wfd = p[1];
	q_head = q_tail = 0;
	F.channels++;
	return ch;
}

static void fake_destroy_event_channel(struct rdma_event_channel *ch)
{
	F.channels--;
	close(ch->fd);
	close(chan_wfd);
	chan_wfd = -1;
	free(ch);
}

static int fake_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			  void *ctx, enum rdma_port_space ps)
{
	*id = calloc(1, sizeof(**id));
	assert_non_null(*id);
	(*id)->channel = ch;
	(*id)->verbs = &fake_ctx[0];
	(*id)->port_num = 1;
	F.ids++;
	return 0;
}

static int fake_destroy_id(struct rdma_cm_id *id)
{
	F.ids--;
	free(id);
	return 0;
}

static int fake_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
			     struct sockaddr *dst, int ms)
{
	F.resolves++;
	if (F.resolve_addr_errno) {
		errno = F.resolve_addr_errno;
		return -1;
	}
	push_event(F.addr_event);
	return 0;
}

static int fake_resolve_route(struct rdma_cm_id *id, int ms)
{
	push_event(F.route_event);
	return 0;
}

static int fake_get_cm_event(struct rdma_event_channel *ch,
			     struct rdma_cm_event **ev)
{
	char b;

	if (read(ch->fd, &b, 1) != 1) {
		errno = EAGAIN;
		return -1;
	}
	*ev = calloc(1, sizeof(**ev));
	assert_non_null(*ev);
	(*ev)->event = (enum rdma_cm_event_type)queue[q_head++ % 8];
	if ((*ev)->event == RDMA_CM_EVENT_ADDR_ERROR)
		(*ev)->status = F.addr_status;
	if ((*ev)->event == RDMA_CM_EVENT_ROUTE_ERROR)
		(*ev)->status = F.route_status;
	F.events++;
	return 0;
}

static int fake_ack_cm_event(struct rdma_cm_event *ev)
{
	F.events--;
	free(ev);
	return 0;
}

static int fake_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			  struct ibv_qp_init_attr *a)
{
	F.qps++;
	return 0;
}

static void fake_destroy_qp(struct rdma_cm_id *id)
{
	F.qps--;
}

static int fake_connect(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	F.connects++;
	push_event(F.connect_event);
	return 0;
}

static int fake_disconnect(struct rdma_cm_id *id)
{
	F.disconnects++;
	return 0;
}

REAL(struct ibv_device **, get_device_list, (int *num), (num))
REAL(const char *, get_device_name, (struct ibv_device * d), (d))
REAL(struct ibv_context *, open_device, (struct ibv_device * d), (d))
REAL(int, close_device, (struct ibv_context * c), (c))
REAL(int, query_device, (struct ibv_context * c, struct ibv_device_attr *a),
     (c, a))
REAL(int, query_port,
     (struct ibv_context * c, uint8_t p, struct ibv_port_attr *a), (c, p, a))
REAL(struct rdma_event_channel *, create_event_channel, (void), ())
REAL(int, create_id,
     (struct rdma_event_channel * ch, struct rdma_cm_id **id, void *ctx,
      enum rdma_port_space ps),
     (ch, id, ctx, ps))
REAL(int, destroy_id, (struct rdma_cm_id * id), (id))
REAL(int, resolve_addr,
     (struct rdma_cm_id * id, struct sockaddr *s, struct sockaddr *d, int ms),
     (id, s, d, ms))
REAL(int, resolve_route, (struct rdma_cm_id * id, int ms), (id, ms))
REAL(int, get_cm_event,
     (struct rdma_event_channel * ch, struct rdma_cm_event **ev), (ch, ev))
REAL(int, ack_cm_event, (struct rdma_cm_event * ev), (ev))
REAL(int, create_qp,
     (struct rdma_cm_id * id, struct ibv_pd *pd, struct ibv_qp_init_attr *a),
     (id, pd, a))
REAL(int, connect, (struct rdma_cm_id * id, struct rdma_conn_param *p), (id, p))
REAL(int, disconnect, (struct rdma_cm_id * id), (id))

/* The void ones cannot `return` a call in the macro. */
void __real_remap_rdma_free_device_list(struct ibv_device **l);
void __wrap_remap_rdma_free_device_list(struct ibv_device **l);
void __wrap_remap_rdma_free_device_list(struct ibv_device **l)
{
	if (F.real)
		__real_remap_rdma_free_device_list(l);
	else
		fake_free_device_list(l);
}

void __real_remap_rdma_destroy_event_channel(struct rdma_event_channel *c);
void __wrap_remap_rdma_destroy_event_channel(struct rdma_event_channel *c);
void __wrap_remap_rdma_destroy_event_channel(struct rdma_event_channel *c)
{
	if (F.real)
		__real_remap_rdma_destroy_event_channel(c);
	else
		fake_destroy_event_channel(c);
}

void __real_remap_rdma_destroy_qp(struct rdma_cm_id *id);
void __wrap_remap_rdma_destroy_qp(struct rdma_cm_id *id);
void __wrap_remap_rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (F.real)
		__real_remap_rdma_destroy_qp(id);
	else
		fake_destroy_qp(id);
}

/* ---- helpers ------------------------------------------------------------ */

static const struct remap_target fwds[] = {
	{"fwd081", "10.1.0.81", NULL},
	{"fwd082", "10.1.0.82", NULL},
};

static struct policy_remap cfg(void)
{
	struct policy_remap c = {
		.driver = POLICY_DRIVER_VERBS,
		.timeout = 10,
		.verbs = {.resolve_timeout = 2},
	};

	return c;
}

static void assert_torn_down(void)
{
	assert_int_equal(F.lists, 0);
	assert_int_equal(F.contexts, 0);
	assert_int_equal(F.channels, 0);
	assert_int_equal(F.ids, 0);
	assert_int_equal(F.qps, 0);
	assert_int_equal(F.events, 0);
}

/* Apply with cfg c; returns the result, err in *e. */
static int apply(const struct policy_remap *c, size_t n, fwd_error_t *e)
{
	struct remap *r = remap_create(c, e);
	int rv, saved;

	assert_non_null(r);
	rv = remap_apply(r, "c1", 77, fwds, n, e);
	saved = errno;
	/* verbs changes nothing on the node: revert is always a no-op. */
	assert_int_equal(remap_revert(r, "c1", 77, NULL), 0);
	remap_destroy(r);
	errno = saved;
	return rv;
}

static int setup(void **state)
{
	reset_fakes();
	return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void test_real_library_no_device(void **state)
{
	struct policy_remap c = cfg();
	struct remap_probe *p = NULL;
	fwd_error_t err = {""};

	F.real = true;
	assert_int_equal(apply(&c, 1, &err), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(strncmp(err.text, "verbs: no RDMA device found", 27),
			 0);
	assert_int_equal(remap_probe(&c, fwds, 1, &p, &err), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(strncmp(err.text, "verbs: no RDMA device found", 27),
			 0);
	assert_non_null(p);
	assert_int_equal(p->n_devices, 0);
	assert_int_equal(p->n_targets, 1);
	assert_int_equal(p->targets[0].ok, 0);
	assert_string_equal(p->targets[0].message, err.text);
	remap_probe_destroy(p);
}

static void test_no_device(void **state)
{
	struct policy_remap c = cfg();
	fwd_error_t err;

	F.n_devices = 0;
	assert_int_equal(apply(&c, 2, &err), -1);
	assert_int_equal(errno, ENODEV);
	assert_string_equal(err.text, "verbs: no RDMA device found");
	assert_int_equal(F.resolves, 0);
	assert_torn_down();

	F.n_devices = -1;
	assert_int_equal(apply(&c, 2, &err), -1);
	assert_int_equal(errno, ENODEV);
	assert_string_equal(err.text, "verbs: no RDMA device found "
				      "(ibv_get_device_list: Function not "
				      "implemented)");
	assert_torn_down();
}

static void test_port_down(void **state)
{
	struct policy_remap c = cfg();
	static char want_dev[] = "mlx5_9";
	fwd_error_t err;

	F.n_devices = 2;
	F.state[0] = IBV_PORT_DOWN;
	F.state[1] = IBV_PORT_INIT;
	assert_int_equal(apply(&c, 1, &err), -1);
	assert_int_equal(errno, ENETDOWN);
	assert_string_equal(err.text, "verbs: no active RDMA port (mlx5_0 "
				      "port 1: DOWN, mlx5_1 port 1: INIT)");
	assert_int_equal(F.resolves, 0);
	assert_torn_down();

	c.verbs.device = want_dev;
	assert_int_equal(apply(&c, 1, &err), -1);
	assert_int_equal(errno, ENODEV);
	assert_string_equal(err.text, "verbs: RDMA device mlx5_9 not found");
	assert_torn_down();
}

static void test_configured_device(void **state)
{
	struct policy_remap c = cfg();
	static char dev1[] = "mlx5_1", dev0[] = "mlx5_0";
	fwd_error_t err;

	F.n_devices = 2;
	F.state[0] = IBV_PORT_DOWN;
	c.verbs.device = dev1;
	assert_int_equal(apply(&c, 2, &err), 0);
	assert_int_equal(F.resolves, 2);
	assert_torn_down();
	/* Named device down: another device's active port does not count. */
	F.state[0] = IBV_PORT_DOWN;
	c.verbs.device = dev0;
	assert_int_equal(apply(&c, 2, &err), -1);
	assert_string_equal(err.text,
			    "verbs: no active RDMA port (mlx5_0 port 1: DOWN)");
	assert_torn_down();
}

static void test_resolve_timeouts(void **state)
{
	struct policy_remap c = cfg();
	fwd_error_t err;

	c.verbs.resolve_timeout = 0.2;
	F.addr_event = NO_EVENT;
	assert_int_equal(apply(&c, 2, &err), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_string_equal(err.text, "verbs: fwd081 (10.1.0.81): address "
				      "resolution timed out after 0.2s");
	assert_torn_down();

	reset_fakes();
	F.route_event = NO_EVENT;
	c.verbs.resolve_timeout = 0.25;
	assert_int_equal(apply(&c, 1, &err), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_string_equal(err.text, "verbs: fwd081 (10.1.0.81): route "
				      "resolution timed out after 0.25s");
	assert_torn_down();
}

static void test_resolve_errors(void **state)
{
	struct policy_remap c = cfg();
	fwd_error_t err;
	struct {
		int addr_event, addr_status, route_event, route_status;
		int call_errno;
		const char *want;
	} cases[] = {
		{RDMA_CM_EVENT_ADDR_RESOLVED, 0, RDMA_CM_EVENT_ROUTE_ERROR,
		 -ENETUNREACH, 0,
		 "verbs: fwd081 (10.1.0.81): route "
		 "resolution failed: Network is unreachable"},
		{RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH, 0, 0, 0,
		 "verbs: fwd081 (10.1.0.81): address resolution failed: "
		 "No route to host"},
		{0, 0, 0, 0, EADDRNOTAVAIL,
		 "verbs: fwd081 (10.1.0.81): "
		 "address resolution failed: Cannot assign requested "
		 "address"},
		{RDMA_CM_EVENT_ADDR_RESOLVED, 0, RDMA_CM_EVENT_DISCONNECTED, 0,
		 0,
		 "verbs: fwd081 (10.1.0.81): route resolution: "
		 "unexpected event RDMA_CM_EVENT_DISCONNECTED"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		reset_fakes();
		F.addr_event = cases[i].addr_event;
		F.addr_status = cases[i].addr_status;
		F.route_event = cases[i].route_event;
		F.route_status = cases[i].route_status;
		F.resolve_addr_errno = cases[i].call_errno;
		assert_int_equal(apply(&c, 2, &err), -1);
		assert_string_equal(err.text, cases[i].want);
		assert_int_equal(F.resolves, 1); /* stops at the first */
		assert_torn_down();
	}
}

static void test_connect_probe(void **state)
{
	struct policy_remap c = cfg();
	fwd_error_t err;

	c.verbs.connect_probe = true;
	c.verbs.port = 7000;
	assert_int_equal(apply(&c, 2, &err), 0);
	assert_int_equal(F.connects, 2);
	assert_int_equal(F.disconnects, 2);
	assert_torn_down();

	reset_fakes();
	F.connect_event = RDMA_CM_EVENT_REJECTED;
	assert_int_equal(apply(&c, 2, &err), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_string_equal(err.text, "verbs: fwd081 (10.1.0.81): connection "
				      "refused (port 7000)");
	assert_int_equal(F.disconnects, 0);
	assert_torn_down();

	reset_fakes();
	F.connect_event = RDMA_CM_EVENT_UNREACHABLE;
	assert_int_equal(apply(&c, 1, &err), -1);
	assert_string_equal(err.text, "verbs: fwd081 (10.1.0.81): connection "
				      "refused (port 7000 unreachable)");
	assert_torn_down();

	reset_fakes();
	F.connect_event = NO_EVENT;
	c.verbs.resolve_timeout = 0.1;
	assert_int_equal(apply(&c, 1, &err), -1);
	assert_string_equal(err.text, "verbs: fwd081 (10.1.0.81): connect "
				      "probe timed out after 0.1s");
	assert_torn_down();
}

static void test_success_without_probe(void **state)
{
	struct policy_remap c = cfg();
	fwd_error_t err;

	assert_int_equal(apply(&c, 2, &err), 0);
	assert_int_equal(F.resolves, 2);
	assert_int_equal(F.connects, 0);
	assert_torn_down();
}

static void test_probe_report(void **state)
{
	struct policy_remap c = cfg();
	struct remap_probe *p = NULL;
	fwd_error_t err;

	F.n_devices = 2;
	F.state[1] = IBV_PORT_DOWN;
	/* Second forwarder: route fails; both are reported. */
	assert_int_equal(remap_probe(&c, fwds, 0, &p, &err), 0);
	assert_int_equal(p->n_devices, 2);
	assert_string_equal(p->devices[0].name, "mlx5_0");
	assert_int_equal(p->devices[0].n_ports, 1);
	assert_int_equal(p->devices[0].ports[0].num, 1);
	assert_string_equal(p->devices[0].ports[0].state, "ACTIVE");
	assert_string_equal(p->devices[1].ports[0].state, "DOWN");
	assert_int_equal(p->n_targets, 0);
	remap_probe_destroy(p);
	assert_torn_down();

	F.route_event = RDMA_CM_EVENT_ROUTE_ERROR;
	F.route_status = -ETIMEDOUT;
	assert_int_equal(remap_probe(&c, fwds, 2, &p, &err), 0);
	assert_int_equal(p->n_targets, 2);
	assert_string_equal(p->targets[1].name, "fwd082");
	assert_string_equal(p->targets[1].address, "10.1.0.82");
	assert_int_equal(p->targets[1].ok, 0);
	assert_string_equal(p->targets[1].message,
			    "route resolution failed: Connection timed out");
	remap_probe_destroy(p);
	assert_torn_down();

	reset_fakes();
	assert_int_equal(remap_probe(&c, fwds, 1, &p, &err), 0);
	assert_int_equal(p->targets[0].ok, 1);
	assert_string_equal(p->targets[0].message,
			    "route resolved via mlx5_0 port 1");
	remap_probe_destroy(p);
	assert_torn_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(test_real_library_no_device),
		T(test_no_device),
		T(test_port_down),
		T(test_configured_device),
		T(test_resolve_timeouts),
		T(test_resolve_errors),
		T(test_connect_probe),
		T(test_success_without_probe),
		T(test_probe_report),
#undef T
	};

	return cmocka_run_group_tests_name("remap_verbs", tests, NULL, NULL);
}
