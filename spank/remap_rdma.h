/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SPANK_REMAP_RDMA_H
#define FWD_SPANK_REMAP_RDMA_H

/*
 * The seam between the verbs driver and rdma-core.  Every libibverbs and
 * librdmacm call the driver makes goes through one of these one-line
 * functions, defined in their own object file, so unit tests replace them
 * with -Wl,--wrap=remap_rdma_<call> and exercise every failure path
 * without hardware.  (The library symbols themselves cannot all be
 * wrapped: ibv_query_port() is an inline in verbs.h that dereferences the
 * device context.)  Semantics are exactly those of the library call of the
 * same name.
 */

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct ibv_device **remap_rdma_get_device_list(int *num);
void remap_rdma_free_device_list(struct ibv_device **list);
const char *remap_rdma_get_device_name(struct ibv_device *dev);
struct ibv_context *remap_rdma_open_device(struct ibv_device *dev);
int remap_rdma_close_device(struct ibv_context *ctx);
int remap_rdma_query_device(struct ibv_context *ctx,
			    struct ibv_device_attr *attr);
int remap_rdma_query_port(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr);

struct rdma_event_channel *remap_rdma_create_event_channel(void);
void remap_rdma_destroy_event_channel(struct rdma_event_channel *ch);
int remap_rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			 void *context, enum rdma_port_space ps);
int remap_rdma_destroy_id(struct rdma_cm_id *id);
int remap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
			    struct sockaddr *dst, int timeout_ms);
int remap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);
int remap_rdma_get_cm_event(struct rdma_event_channel *ch,
			    struct rdma_cm_event **ev);
int remap_rdma_ack_cm_event(struct rdma_cm_event *ev);
int remap_rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			 struct ibv_qp_init_attr *attr);
void remap_rdma_destroy_qp(struct rdma_cm_id *id);
int remap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param);
int remap_rdma_disconnect(struct rdma_cm_id *id);

#endif
