/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rdma-core behind a seam (see remap_rdma.h).  Nothing but the calls.
 */
#include "config.h"

#include "spank/remap_rdma.h"

struct ibv_device **remap_rdma_get_device_list(int *num)
{
	return ibv_get_device_list(num);
}

void remap_rdma_free_device_list(struct ibv_device **list)
{
	ibv_free_device_list(list);
}

const char *remap_rdma_get_device_name(struct ibv_device *dev)
{
	return ibv_get_device_name(dev);
}

struct ibv_context *remap_rdma_open_device(struct ibv_device *dev)
{
	return ibv_open_device(dev);
}

int remap_rdma_close_device(struct ibv_context *ctx)
{
	return ibv_close_device(ctx);
}

int remap_rdma_query_device(struct ibv_context *ctx,
			    struct ibv_device_attr *attr)
{
	return ibv_query_device(ctx, attr);
}

int remap_rdma_query_port(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	return ibv_query_port(ctx, port, attr);
}

struct rdma_event_channel *remap_rdma_create_event_channel(void)
{
	return rdma_create_event_channel();
}

void remap_rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	rdma_destroy_event_channel(ch);
}

int remap_rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			 void *context, enum rdma_port_space ps)
{
	return rdma_create_id(ch, id, context, ps);
}

int remap_rdma_destroy_id(struct rdma_cm_id *id)
{
	return rdma_destroy_id(id);
}

int remap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
			    struct sockaddr *dst, int timeout_ms)
{
	return rdma_resolve_addr(id, src, dst, timeout_ms);
}

int remap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	return rdma_resolve_route(id, timeout_ms);
}

int remap_rdma_get_cm_event(struct rdma_event_channel *ch,
			    struct rdma_cm_event **ev)
{
	return rdma_get_cm_event(ch, ev);
}

int remap_rdma_ack_cm_event(struct rdma_cm_event *ev)
{
	return rdma_ack_cm_event(ev);
}

int remap_rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			 struct ibv_qp_init_attr *attr)
{
	return rdma_create_qp(id, pd, attr);
}

void remap_rdma_destroy_qp(struct rdma_cm_id *id)
{
	rdma_destroy_qp(id);
}

int remap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	return rdma_connect(id, param);
}

int remap_rdma_disconnect(struct rdma_cm_id *id)
{
	return rdma_disconnect(id);
}
