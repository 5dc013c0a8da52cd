/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SPANK_FWDALLOC_H
#define FWD_SPANK_FWDALLOC_H

/*
 * Internals of the fwdalloc SPANK plugin.  fwdalloc_dispatch.c holds the
 * only exported entry points and routes each call by spank_context() to
 * the file for that process kind:
 *
 *   fwdalloc_alloc.c   sbatch/salloc (allocator) and srun (local): turn
 *                      --io-upgrade into SPANK_IO_UPGRADE for the
 *                      controller's PrologSlurmctld
 *   fwdalloc_remote.c  slurmstepd (remote): nothing but the option, which
 *                      must be known wherever the job's options travel
 *   fwdalloc_job.c     prolog/epilog (job_script, root, once per node):
 *                      apply and revert this node's forwarder mapping
 *
 * Nothing here is exported from fwdalloc.so (see fwdalloc.lds).
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "common/error.h"
#include "spank/remap.h"

struct policy;

/* Environment name as seen by PrologSlurmctld and the job prolog; the
 * plugin sets "IO_UPGRADE" and Slurm prefixes SPANK_. */
#define FWDALLOC_ENV_NAME "IO_UPGRADE"
#define FWDALLOC_ENV "SPANK_IO_UPGRADE"

/* plugstack.conf arguments.  Nothing secret belongs there: the file is
 * read by every user's sbatch. */
struct fwdalloc_conf {
	char policy[PATH_MAX]; /* policy=PATH; "" = the built-in default */
};

extern struct fwdalloc_conf fwdalloc_conf;

/* Parse the plugstack.conf arguments into fwdalloc_conf.  An unknown or
 * malformed argument is logged and ignored: a configuration slip must not
 * stop every job submission (fail-open).  Returns the number ignored. */
int fwdalloc_args_parse(int ac, char **av);

/* Register --io-upgrade in this context.  0 or -1 (logged). */
int fwdalloc_option_register(spank_t sp);

/* The validated --io-upgrade value, or NULL when the option was not
 * given.  A bare --io-upgrade means "auto". */
const char *fwdalloc_option_mode(void);

/* Is s one of auto|scale|isolate|off|shadow? */
int fwdalloc_mode_valid(const char *s);

#define FWDALLOC_MAX_TARGETS 64

/* Where a node's decision came from. */
enum fwdalloc_source {
	FWDALLOC_SOURCE_DB = 0, /* the node account's database read */
	FWDALLOC_SOURCE_FILE,	/* the job's file in remap.decision_dir */
};

/* This node's part of a job's decision (fwdalloc_node.c). */
struct fwdalloc_node_decision {
	char action[32];	     /* "scale", "isolate", "avoid-anomaly",
				      * "default", "shadow" */
	enum fwdalloc_source source; /* where it was read */
	bool direct;		     /* action direct covers this node: no
				      * forwarder, the file system directly */
	size_t n;		     /* forwarders serving this node */
	struct remap_target t[FWDALLOC_MAX_TARGETS];
	char names[FWDALLOC_MAX_TARGETS][65];
	char addrs[FWDALLOC_MAX_TARGETS][256];
	/* Why remap.decision_dir was not read (a directory others can
	 * write into: anyone could plant a file there), else empty; the
	 * database was asked instead. */
	char file_refused[sizeof(((fwd_error_t *)0)->text)];
};

/*
 * Read this node's forwarders for the job from the job's unreleased
 * allocation rows: from the job's decision file in remap.decision_dir
 * when the policy sets it and the file exists (controller/publish.h), else
 * with the read-only node account (also when the directory is not safe
 * to read: nd->file_refused says why).  Returns 1 with nd filled, 0 when the
 * job has no decision, -1 with err on failure (a damaged decision file is
 * a failure, not a reason to ask the database).  nd->source says which.
 */
int fwdalloc_node_decision(const struct policy *p, uint32_t job_id,
			   const char *node, struct fwdalloc_node_decision *nd,
			   fwd_error_t *err);

/*
 * This node keeps its default mapping for the job although the controller
 * decided (why: the error): append "<node> <why>" to the job's fallback
 * file in remap.decision_dir, one O_APPEND write, for EpilogSlurmctld to
 * count into the job's audit record.  0 (also without decision_dir), or
 * -1 with err.
 */
int fwdalloc_node_fallback_note(const struct policy *p, uint32_t job_id,
				const char *node, const char *why,
				fwd_error_t *err);

/*
 * This node's prolog did what the decision says (applied it, or had
 * nothing to apply: action is the one it followed): append "<node>
 * <action>" to the job's applied file in remap.decision_dir, the same
 * way, so that EpilogSlurmctld can tell the nodes whose prolog never
 * reported (the plugin absent, slurmd not restarted after adding it).
 * 0 (also without decision_dir), or -1 with err.
 */
int fwdalloc_node_applied_note(const struct policy *p, uint32_t job_id,
			       const char *node, const char *action,
			       fwd_error_t *err);

/* "fwd3,fwd4" into buf. */
void fwdalloc_node_names(const struct fwdalloc_node_decision *nd, char *buf,
			 size_t len);

/*
 * The job's decision on this node for its tasks (fwdalloc_note.c): one
 * line in remap.lwfs.state_dir, written by the job prolog, read by
 * slurmstepd, removed by the job epilog.  write: 0 (also when the policy
 * names no state directory) or -1 with err; read: 1 with *out filled ("" for
 * no forwarders or no request), 0 when there is no note.  read_job: every
 * node's note of the job (one per node in production, several where nodes
 * share a directory), at most max: how many.
 */
struct fwdalloc_note {
	char node[128];
	char action[32];
	char forwarders[1024];
	char request[32]; /* --io-upgrade's mode, "" when not asked */
};
int fwdalloc_note_write(const struct policy *p, uint32_t job, const char *node,
			const char *request, const char *action,
			const char *forwarders, fwd_error_t *err);
int fwdalloc_note_read(const char *state_dir, uint32_t job, const char *node,
		       struct fwdalloc_note *out);
int fwdalloc_note_read_job(const char *state_dir, uint32_t job,
			   struct fwdalloc_note *out, size_t max);
void fwdalloc_note_remove(const struct policy *p, uint32_t job,
			  const char *node);

/* Per-context handlers; each returns a SPANK return code (0 or -1). */
int fwdalloc_alloc_post_opt(spank_t sp);
int fwdalloc_remote_init(spank_t sp);
int fwdalloc_remote_task_init_privileged(spank_t sp);
int fwdalloc_remote_task_init(spank_t sp);
int fwdalloc_job_prolog(spank_t sp);
int fwdalloc_job_epilog(spank_t sp);

#endif
