/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SPANK_REMAP_H
#define FWD_SPANK_REMAP_H

/*
 * Node-side remap drivers: point this compute node's forwarding client at
 * the forwarders the allocator chose for a job, and back at the end.
 *
 * One interface, five drivers (policy `remap.driver`):
 *   none   does nothing (the node keeps its default mapping).
 *   exec   runs the site command remap.exec.command (an argv, execve, clean
 *          environment) with FWD_ACTION=apply|direct|revert, FWD_JOB_ID,
 *          FWD_NODE, FWD_FORWARDERS and FWD_ADDRESSES (comma-separated,
 *          same order; both empty for direct).
 *   lwfs   atomically repoints <volfile_dir>/<link_name> at
 *          lwfs_<forwarder>.vol (temp symlink + rename), saves the previous
 *          target per job under state_dir, then runs remount_command.
 *   lnet   `lnetctl route add --net NET --gateway NID [--hop-count N]` for
 *          each forwarder's NID; revert deletes exactly the routes it
 *          added.  Every add and del is read back with `lnetctl route
 *          show` (lnetctl exits 0 on an option it does not know): a route
 *          missing after add, or still listed after del, is a failure.
 *   verbs  checks that an RDMA device has an ACTIVE port and that address
 *          and route to every forwarder resolve (librdmacm), optionally
 *          with a connect probe to remap.verbs.port.  It changes nothing on
 *          the node, so revert has nothing to undo.
 *
 * Contract for every driver:
 *   - Idempotent: apply twice with the same forwarders = apply once; revert
 *     without apply is a no-op; revert twice is harmless.  The exec, lwfs
 *     and lnet drivers keep per-job state files in remap.lwfs.state_dir
 *     (created 0700 if missing; its parent must exist), named
 *     "<driver>.<job>.<node>", and serialise on "<driver>.lock" there.
 *   - Bounded: each remap_apply()/remap_revert() takes at most about
 *     remap.timeout seconds; child processes still running then are killed
 *     with their whole process group.
 *   - On failure the node is left on its previous (default) mapping where
 *     the driver can ensure it (lwfs rolls the link back when the remount
 *     fails; lnet deletes the routes this call added), -1 is returned with
 *     errno set and err->text reads "<driver>: <forwarder> (<address>):
 *     <cause>", e.g. "verbs: fwd081 (10.1.0.81): route resolution timed out
 *     after 2s", or "verbs: no RDMA device found" (errno ENODEV).
 *   - Names (node, forwarders) must match [A-Za-z0-9_.-]+, not start with
 *     '.', at most 64 bytes: they become file names and environment values.
 *
 * Libraries never print: the caller logs err->text.  A struct remap is not
 * thread-safe; use one per thread.
 */

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "policies/policy.h"

/* One assigned forwarder, as the topology knows it. */
struct remap_target {
	const char *name;    /* "fwd081", required */
	const char *address; /* IP or hostname; NULL = use name (verbs, exec) */
	const char *nid;     /* LNet gateway NID ("10.1.0.81@o2ib"), required
			      * by the lnet driver only; may be NULL */
};

struct remap;

/*
 * Prepare a driver: validate and copy the configuration (the caller may
 * free cfg afterwards).  Checks, per driver: exec has an absolute command
 * path; lwfs has an existing volfile_dir, a plain link_name, an absolute
 * state_dir and an absolute remount command if any; lnet has an absolute
 * lnetctl path and a net name; verbs has a positive resolve_timeout and a
 * port when connect_probe is set.  NULL with errno (EINVAL) and err on a
 * bad configuration.
 */
struct remap *remap_create(const struct policy_remap *cfg, fwd_error_t *err);

/*
 * Point `node` at the n forwarders in fwds for job `job_id`.  n >= 1 for
 * every driver but none; lwfs takes exactly one forwarder (the node's own).
 * Returns 0 on success, -1 with errno and err set.
 */
int remap_apply(struct remap *r, const char *node, uint32_t job_id,
		const struct remap_target *fwds, size_t n, fwd_error_t *err);

/*
 * Give `node` direct file-system access for job `job_id` (the decision's
 * action `direct`: no forwarder).  exec runs its command with
 * FWD_ACTION=direct and empty FWD_FORWARDERS and FWD_ADDRESSES (remembered
 * per job as an apply is, so remap_revert() undoes it); none does nothing;
 * lwfs, lnet and verbs cannot: -1, errno ENOTSUP, err "<driver>: job <id>:
 * the driver cannot give a node direct file-system access (no
 * forwarder)".  0 on success, -1 with errno and err set.
 */
int remap_direct(struct remap *r, const char *node, uint32_t job_id,
		 fwd_error_t *err);

/* Undo remap_apply() or remap_direct() for this node and job.  0 also when
 * nothing was applied.  -1 with errno and err set on failure (the state is
 * kept, so a later revert retries). */
int remap_revert(struct remap *r, const char *node, uint32_t job_id,
		 fwd_error_t *err);

/* Free; NULL is fine; errno is preserved. */
void remap_destroy(struct remap *r);

/* The driver's name ("none", "exec", "lwfs", "lnet", "verbs"). */
const char *remap_driver_name(const struct remap *r);

/*
 * RDMA probe for `fwdctl remap probe`: every device with its ports and
 * their states, and for each forwarder the result of address and route
 * resolution (and the connect probe when cfg->verbs.connect_probe).
 */
struct remap_probe_port {
	unsigned int num;  /* 1-based port number */
	const char *state; /* "ACTIVE", "DOWN", ... (static string) */
	int link_layer;	   /* IBV_LINK_LAYER_* */
};

struct remap_probe_device {
	char *name; /* "mlx5_0" */
	size_t n_ports;
	struct remap_probe_port *ports;
	int error; /* errno if the device could not be opened or
		    * queried, else 0 */
};

struct remap_probe_target {
	char *name;
	char *address;
	int ok;	       /* 1 = resolved (and probed), 0 = failed */
	char *message; /* "route resolved via mlx5_0 port 1" or the
			* error text */
};

struct remap_probe {
	size_t n_devices;
	struct remap_probe_device *devices;
	size_t n_targets;
	struct remap_probe_target *targets;
};

/*
 * Returns 0 with *out set when at least one device exists (per-forwarder
 * failures are in out->targets).  When no device exists returns -1, errno
 * ENODEV, err "verbs: no RDMA device found[ (context)]", and still sets
 * *out to a report without devices whose targets all fail with that text.
 * Other failures (out of memory): -1, *out NULL.  The connect probe runs
 * only when cfg->verbs.connect_probe is set.
 */
int remap_probe(const struct policy_remap *cfg, const struct remap_target *fwds,
		size_t n, struct remap_probe **out, fwd_error_t *err);
void remap_probe_destroy(struct remap_probe *p);

#endif
