/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_ALLOCATOR_DECIDE_H
#define FWD_ALLOCATOR_DECIDE_H

/*
 * The forwarding-resource decision (DFRA, DESIGN.md "The decision").
 *
 * A pure function of its inputs: no I/O, no globals, no clock reads (`now`
 * is an input), deterministic.  The same inputs always give the same
 * decision, so the what-if simulator can replay history through it.
 *
 * Typical use (controller prolog, simulator):
 *
 *	struct alloc_ctx *cx = alloc_ctx_create(topo, &err);   once
 *	struct alloc_ledger *l = alloc_ledger_create(topo);     once
 *	...
 *	alloc_ctx_job_nodes(cx, job.nodes, &ids, &job.n_nodes, &err);
 *	struct alloc_decision *d = alloc_decide(cx, pol, l, &health, &job,
 *						 now, &err);
 *	alloc_ledger_acquire(l, d, job.n_nodes, now, &err);    apply it
 *	char *json = alloc_decision_to_json(d, 0);             audit it
 *	...
 *	alloc_ledger_release(l, job_id, now);                  at job end
 *
 * Files: decide.c holds the rules, one section per step below; pool.c the
 * pool's selection order; nodeset.c the per-topology index, the job's node
 * blocks and their rendering as hostlists; batch.c alloc_decide_batch();
 * decision_json.c the decision's JSON.  The default forwarders of a node
 * set are the topology's (topo_default_forwarders()), the disruptive and
 * vulnerable tests the policy's (policy_job_disruptive(),
 * policy_job_vulnerable()).
 *
 * Terms used below (all per decision, against the ledger and health given):
 *
 *   default forwarders   the distinct forwarders the topology maps the job's
 *                        nodes to (FFM); N_f is their number.
 *   healthy              health state `ok` (suspect forwarders are kept
 *                        where they are but never handed out).
 *   idle                 a forwarder with role `backup` in the topology that
 *                        no ledger entry holds (neither privately nor
 *                        shared) and that is healthy.  Service forwarders
 *                        are never idle: they serve their nodes by default.
 *   pool                 the idle forwarders, ordered for selection:
 *                        same network group as the job's nodes first
 *                        (groups ranked by how many of the job's nodes
 *                        they serve by default, then name), then least
 *                        recently released (ledger), then name.
 *   reserve              policy.decision.caps.reserve idle forwarders kept
 *                        for failover: scaling and isolation may use only
 *                        (idle - reserve); anomaly replacement may use the
 *                        reserve (that is what it is for).
 *   private              held by one job only.  Forwarders taken from the
 *                        pool are private to the job; default forwarders
 *                        are shared.
 *   neighbour            another job holding one of this job's default
 *                        forwarders in the ledger.
 *
 * Rules, in order (DESIGN.md "The decision"):
 *   1. default mapping and N_f;
 *   2. anomaly avoidance: each `excluded` default forwarder is replaced by a
 *      pool forwarder for the nodes it served (all jobs when
 *      policy.decision.avoid_anomalies, opted in or not);
 *   3. scale eligibility: V > V_min, N_io > N_min, mdops < W_md;
 *   4. S = ceil(N_io * B_c / B_f) with B_f the mean bandwidth of the job's
 *      default forwarders; upgrade when S > N_f: the job keeps its (healthy
 *      or replaced) default forwarders and gets S - N_f private extras,
 *      capped by max_forwarders_per_job (total), floor(max_pool_share *
 *      idle) (extras) and idle - reserve (extras);
 *   5. interference: disruptive = (N-1 and nodes > n1_min_nodes) or
 *      mdops > metadata_heavy_rate or peak bandwidth > high_bandwidth
 *      (when > 0); vulnerable = iops > vulnerable_iops and a neighbour is
 *      disruptive.  A disruptive job is isolated only when its harm
 *      (alloc_harm_of(): the longer of its data I/O on the default mapping
 *      and its metadata load, times 1 + the vulnerable neighbours) reaches
 *      decision.curve.min_harm.  Isolation takes the private forwarders
 *      the job needs over its I/O time (V / io_seconds over B_f, io_seconds
 *      = V / (N_io B_c); at least 1, at most its nodes and
 *      max_forwarders_per_job); when the pool's caps leave fewer, the best
 *      smaller option: fewer private forwarders when they serve it at least
 *      as well as its shared defaults, else its defaults plus extras when
 *      scaling may serve it, else the default mapping (refused), each
 *      reason naming the cap.
 *   Precedence: scale > isolate > avoid-anomaly > default.
 *   Steps 3-5 are DFRA's, for a job whose profile has no curve
 *   (bandwidth_by_forwarders empty) or when policy.decision.curve is
 *   disabled.  A job with a curve takes the curve rule instead (step 7,
 *   curve.c, mckp.c, harm.c): its options (the default mapping; the
 *   defaults plus extras when no other job holds them; k private
 *   forwarders; direct access when decision.curve.direct and the profile
 *   measured it) are valued from the curve (linear in log2 k between
 *   measured counts; above the highest only when learn.enabled, by the
 *   optimistic estimate, within learn.pool_share of the pool and
 *   learn.app_cap forwarders, with an "explore" reason); an upgrade must
 *   gain decision.curve.min_gain and min_gain_share of the default
 *   mapping's value; V_min and N_min apply only with
 *   decision.curve.admin_floors (these gates and metadata-bound stop
 *   scaling, not isolation); a disruptive job whose expected I/O time
 *   times (1 + vulnerable neighbours) reaches decision.curve.min_harm, or
 *   a vulnerable job next to a running disruptive one, gets only private
 *   options (action isolate); a job alone takes the option worth most
 *   after the online threshold's cost of each pool forwarder (rising from
 *   online_low / e to B_f as the pool fills); a batch's jobs are chosen
 *   together by the exact multiple-choice knapsack (batch.c).  Actions:
 *   scale (extras, or private without harm), isolate, direct (no
 *   forwarder), default; s holds the count chosen.
 *   6. selection: forwarders come from the pool in its order; the job's
 *      nodes (in the order given) are split into contiguous, balanced
 *      blocks, one per forwarder (default and avoid-anomaly mappings keep
 *      the FFM blocks);
 *   7. the expected gain of the upgrade (gain_bps) ranks the jobs
 *      without a curve that start together (alloc_decide_batch());
 *   8. output: the decision, its reasons and the rendered mapping.
 *
 * Requests and access:
 *   request off             default mapping (anomaly avoidance still
 *                           applies when the policy says so).
 *   request shadow, or      decide fully; action "shadow"; the reasons say
 *   access.mode shadow      what would have happened; the ledger records the
 *                           job on its default forwarders.
 *   request scale/isolate   only that rule may upgrade the job.
 *   request auto            both rules.
 *   no request (FWD_REQ_NONE): considered only when access.mode is
 *                           opt-out (as auto) or shadow.
 *   policy_job_allowed() false: no upgrade; action "refused" when the job
 *                           asked for one, else "default".
 *   no profile              default mapping, reason "no I/O history for this
 *                           application".
 *   an upgrade the job qualified for but could not get at all (pool
 *   exhausted, caps) gives action "refused" with the reason; a partial grant
 *   carries a "capped" reason.
 *
 * A job already in the ledger gets its existing allocation back (action as
 * recorded, reason "job already holds an allocation").
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vocab.h"

struct policy;
struct topology;
struct alloc_ledger;

/* Measured bandwidth of the application when it ran with k forwarders:
 * the median of its runs there, how many runs, and their spread (max -
 * min; 0 when unknown or one run). */
struct alloc_bw_point {
	uint32_t k;
	double bps;
	uint32_t runs;
	double spread_bps;
};

/* The application's I/O profile (prediction from history). */
struct alloc_profile {
	uint64_t io_volume_bytes;  /* V: bytes read + written */
	uint32_t io_nodes;	   /* N_io: nodes doing I/O */
	double node_bandwidth_bps; /* B_c: per compute node */
	double peak_bandwidth_bps; /* whole job, in I/O phases */
	double iops;
	double mdops;	       /* metadata ops/s in I/O phases */
	double metadata_queue; /* mean forwarder metadata queue length */
	enum fwd_io_mode io_mode;
	uint32_t runs;		   /* runs the prediction is based on */
	double runtime;		   /* median run time, s; 0 = unknown */
	double direct_bps;	   /* with direct file-system access (no
				    * forwarder); 0 = never measured */
	struct alloc_bw_point *bw; /* bandwidth_by_forwarders, sorted by k,
				    * unique k; may be NULL */
	size_t n_bw;
};

/* One job to decide for.  Strings are borrowed for the call. */
struct alloc_job {
	const char *job_id;
	const char *user;
	const char *account;
	const char *name;
	const char *partition;
	const char *nodes;	  /* the Slurm hostlist, as given */
	const uint32_t *node_ids; /* topology node ids, in hostlist order,
				   * no duplicates (see alloc_job_nodes()) */
	size_t n_nodes;
	enum fwd_request request;
	const struct alloc_profile *profile; /* NULL: no history */
	/* The caller reads only the decision's forwarders and blocks (the
	 * simulator): the mapping is not rendered (mapping, forwarder_names
	 * and ost_names stay NULL).  Rendering is for what is stored or
	 * shown. */
	bool no_render;
};

/* Health table, indexed like the topology's arrays.  A NULL array means
 * every forwarder (OST) is ok. */
struct alloc_health {
	const enum fwd_health *forwarder; /* n_forwarders entries */
	const enum fwd_health *ost;	  /* n_osts entries */
};

/* A contiguous block of the job's nodes (positions in job->node_ids) and
 * the forwarder serving it. */
struct alloc_block {
	size_t first;
	size_t count;
	uint32_t forwarder;
};

/* One rendered mapping entry: a ranged hostlist and its forwarder. */
struct alloc_map_entry {
	char *nodes; /* "c[1-256]" */
	uint32_t forwarder;
};

/* Reasons a decision holds without allocating their pointers. */
#define REASON_ROOM 8

struct alloc_decision {
	char *job_id;
	enum fwd_action action;
	/* What the job asked and what it would get without shadow: the action
	 * the rules chose before shadow / refusal turned it into the final
	 * one. */
	enum fwd_request request;
	enum fwd_action rule_action;
	char **reasons; /* human sentences, in rule order (their text in
			 * reason_text, freed with the decision) */
	size_t n_reasons;
	uint32_t n_f; /* distinct default forwarders */
	uint32_t s;   /* S, 0 when not computed */
	/* The job's default forwarders, by first appearance in its nodes. */
	uint32_t *defaults;
	size_t n_defaults;
	/* The forwarders the job gets (for shadow: would get), in block
	 * order, distinct. */
	uint32_t *forwarders;
	size_t n_forwarders;
	bool *private_fwd;	    /* per forwarders[i]: taken from the pool */
	struct alloc_block *blocks; /* job node positions -> forwarder */
	size_t n_blocks;
	struct alloc_map_entry *mapping; /* one per forwarder, in forwarders
					  * order */
	size_t n_mapping;
	uint32_t *excluded_osts; /* OST indexes in state excluded */
	size_t n_excluded_osts;
	/* Expected bandwidth gain of the upgrade in bytes/s (0 if none): from
	 * the profile's bandwidth_by_forwarders when it has the counts,
	 * else min(k * B_f, N_io * B_c) - min(N_f * B_f, N_io * B_c). */
	double gain_bps;
	/* Copy of the profile used, valid when has_profile. */
	bool has_profile;
	struct alloc_profile profile;
	char policy_digest[65];
	uint64_t elapsed_us; /* set by the caller, printed as is */
	/* Names, for rendering without the topology. */
	char **forwarder_names; /* n_forwarders, parallel to forwarders */
	char **ost_names;	/* n_excluded_osts */
	/* alloc_render()'s strings (mapping nodes and the names above) in
	 * one block with the mapping, forwarder_names and ost_names arrays,
	 * freed with the decision; NULL when each string and array was
	 * allocated alone (alloc_decision_destroy() frees them one by
	 * one). */
	char *strings;
	/* Internal (a batch's first pass, which reads only the forwarders
	 * taken and the gain): no reasons, node blocks or rendering. */
	bool dry;
	/* Internal: room for a short job_id and the first reasons' pointers,
	 * so that a decision does not allocate them (job_id and reasons
	 * point here while they fit; alloc_decision_destroy() knows), */
	char id_room[24];
	char *reason_room[REASON_ROOM];
	/* Internal: the reasons' text, one after the other (alloc_reason()
	 * writes into it: one allocation for all of them) */
	char *reason_text;
	size_t reason_used, reason_cap;
	/* ... and for a few defaults and forwarders (defaults, forwarders
	 * and private_fwd point here while they fit) */
	uint32_t def_room[8];
	uint32_t fwd_room[16];
	bool priv_room[16];
	struct alloc_block blk_room[16]; /* ... and blocks */
	/* The job held a ledger entry for another node set (a prolog run
	 * again after a requeue, or by a second controller): this is a new
	 * decision for the nodes it has now, made as if the entry were
	 * released.  The caller releases the held rows and writes these in
	 * the same transaction.  False when the held entry was returned as
	 * it is (same nodes) or the job held nothing. */
	bool redecided;
};

/*
 * Per-topology index for fast decisions: node-name runs (for rendering
 * ranged hostlists without per-node string work), forwarder groups.  The
 * topology must outlive the context.  NULL with errno and err on failure.
 */
struct alloc_ctx;
struct alloc_ctx *alloc_ctx_create(const struct topology *t, fwd_error_t *err);
void alloc_ctx_destroy(struct alloc_ctx *cx);
const struct topology *alloc_ctx_topology(const struct alloc_ctx *cx);

/*
 * Resolve a Slurm hostlist into topology node ids (hostlist order): the
 * topology's topo_hostlist_nodes(), with errors prefixed "nodes: ".  A node
 * the topology does not cover, a duplicate node, an empty or malformed list
 * are errors naming the node.  *ids is malloc'd.  0 or -1 with errno.
 */
int alloc_job_nodes(const struct topology *t, const char *hostlist,
		    uint32_t **ids, size_t *n, fwd_error_t *err);

/*
 * alloc_job_nodes() through the context's index: the hostlist is parsed by
 * libslurm and its ranges resolved without per-node string work.  Same
 * result and errors as alloc_job_nodes() (which it falls back to for
 * anything its index does not cover, and for every error).
 */
int alloc_ctx_job_nodes(const struct alloc_ctx *cx, const char *hostlist,
			uint32_t **ids, size_t *n, fwd_error_t *err);

/*
 * Decide for one job.  Returns a new decision (free with
 * alloc_decision_destroy()), or NULL with errno (EINVAL for inconsistent
 * inputs, e.g. a node id outside the topology; ENOMEM) and err set.
 * `ledger` and `health` may be NULL (empty ledger, all healthy).
 */
struct alloc_decision *alloc_decide(const struct alloc_ctx *cx,
				    const struct policy *p,
				    const struct alloc_ledger *ledger,
				    const struct alloc_health *health,
				    const struct alloc_job *job, double now,
				    fwd_error_t *err);

/*
 * Decide for several jobs starting together (DESIGN step 7; batch.c).
 * Each job is first decided alone against the same ledger.  With
 * contention `gain`, the jobs with a curve are then chosen for together by
 * the exact multiple-choice knapsack over the idle pool minus the reserve
 * (the default mapping's value shared among the jobs that stay on it) and
 * granted first; a curve job the knapsack left on its defaults although
 * alone it would have taken pool forwarders is `refused` with a
 * contention reason.  The other upgrades are granted in rank order
 * (policy.decision.contention: `gain` =
 * larger expected gain first, ties in input order; `fcfs` = input order),
 * each later job deciding against the ledger as the earlier grants left
 * it, with the pool-share cap computed against the pool at batch start.  A
 * job that got less than it would alone carries a contention reason naming
 * its rank.  `ledger` is not modified (a scratch copy is used); the caller
 * acquires the decisions it applies.  out[i] answers jobs[i].  0, or -1
 * with errno and err (out[] then all NULL).
 */
int alloc_decide_batch(const struct alloc_ctx *cx, const struct policy *p,
		       const struct alloc_ledger *ledger,
		       const struct alloc_health *health,
		       const struct alloc_job *jobs, size_t n_jobs, double now,
		       struct alloc_decision **out, fwd_error_t *err);

void alloc_decision_destroy(struct alloc_decision *d);

/*
 * The decision as JSON (decision_json.c), exactly the DESIGN.md fields, in
 * this order:
 * {"job_id","action","reasons","n_f","s","forwarders","mapping",
 *  "excluded_osts","profile","policy_digest","elapsed_us"}.
 * "profile" is null without history.  `flags` are jansson dump flags
 * (0 = compact, JSON_INDENT(2) = pretty).  malloc'd string or NULL.
 */
char *alloc_decision_to_json(const struct alloc_decision *d, size_t flags);

#endif
