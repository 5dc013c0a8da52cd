/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_ALLOCATOR_DECIDE_INTERNAL_H
#define FWD_ALLOCATOR_DECIDE_INTERNAL_H

/*
 * Between the files of the decision: the rules (decide.c), the pool in
 * selection order (pool.c), node sets and rendering (nodeset.c) and batch
 * arbitration (batch.c).  Not for other modules: they use decide.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/curve.h"
#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "topology/names.h"
#include "topology/topology.h"

/* ---- the per-topology index (nodeset.c) ------------------------------- */

#define ALLOC_NO_DIGITS TOPO_NO_DIGITS

struct alloc_ctx {
	const struct topology *t;
	/* Node names split into prefix + numeric suffix, and by (prefix,
	 * zero-padded width) for turning hostlist ranges into ids without
	 * per-node string work: the topology's topo_names(), borrowed. */
	const struct topo_names *names;
	uint32_t *group; /* forwarder -> group id */
	size_t n_groups;
	char **group_names;	  /* group id -> name (borrowed) */
	uint32_t *group_rank;	  /* group id -> rank of its name (strcmp) */
	uint32_t *groups_by_name; /* rank -> group id */
	uint32_t *name_rank;	  /* forwarder -> rank of its name (strcmp) */
	double bw_max;		  /* the fastest forwarder's bandwidth */
	uint32_t n_backups;	  /* forwarders of role backup */
};

/* ---- node sets (nodeset.c) ---------------------------------------------- */

/* A set of topology node ids as a bitmap over the topology's node index. */
struct alloc_nodeset {
	uint64_t *w;
	size_t n_bits;
};

int alloc_nodeset_init(struct alloc_nodeset *s, size_t n_bits);
void alloc_nodeset_free(struct alloc_nodeset *s);

/* Add id; true when it was already there. */
static inline bool alloc_nodeset_test_set(struct alloc_nodeset *s, uint32_t id)
{
	uint64_t bit = 1ULL << (id & 63), *w = &s->w[id >> 6];
	bool was = (*w & bit) != 0;

	*w |= bit;
	return was;
}

/* alloc_ctx_job_nodes() without the fallback: -1 for anything the
 * index cannot resolve by ranges (including every error). */
int alloc_ctx_job_nodes_fast(const struct alloc_ctx *cx, const char *hostlist,
			     uint32_t **ids, size_t *n);

/* The Slurm ranged hostlist of node ids, in the order given, exactly as
 * libslurm's slurm_hostlist_ranged_string() prints the hostlist the names
 * pushed in that order give.  Appended to *buf (NUL terminated, grown as
 * needed; *len excludes the NUL).  0 or -1 (ENOMEM). */
int alloc_render_ids(const struct alloc_ctx *cx, const uint32_t *ids, size_t n,
		     char **buf, size_t *len, size_t *cap);

/* ---- node blocks and rendering (nodeset.c) ----------------------------- */

/* d->blocks with room for n (its blocks dropped; the decision's own room
 * while they fit), and back to none.  0 or -1 (ENOMEM). */
int alloc_blocks_room(struct alloc_decision *d, size_t n);
void alloc_blocks_free(struct alloc_decision *d);

/* d->blocks: the job's n_nodes positions cut into contiguous blocks of
 * n/k or n/k + 1 nodes, one per d->forwarders[i], in that order.  0 or -1
 * (ENOMEM). */
int alloc_blocks_balanced(struct alloc_decision *d, size_t n_nodes);

/* d->blocks: the default mapping, runs of nodes with the same default
 * forwarder, with subst[f] (NULL: none) standing for f (the replacement
 * of an excluded forwarder).  0 or -1 (ENOMEM). */
int alloc_blocks_default(const struct topology *t, const uint32_t *node_ids,
			 size_t n_nodes, const uint32_t *subst,
			 struct alloc_decision *d);

/* The printed parts of the decision: d->mapping (each forwarder's blocks
 * as a ranged hostlist), forwarder and OST names.  0 or -1 (ENOMEM). */
int alloc_render(const struct alloc_ctx *cx, const uint32_t *node_ids,
		 struct alloc_decision *d);

/* ---- the pool (pool.c) ------------------------------------------------- */

static inline enum fwd_health alloc_fwd_health(const struct alloc_health *h,
					       uint32_t f)
{
	return h && h->forwarder ? h->forwarder[f] : FWD_HEALTH_OK;
}

/* Idle (decide.h): a healthy backup forwarder that no ledger entry holds. */
static inline bool alloc_fwd_idle(const struct topology *t,
				  const struct alloc_ledger *l,
				  const struct alloc_health *h, uint32_t f)
{
	return t->forwarders[f].role == TOPO_ROLE_BACKUP &&
	       alloc_fwd_health(h, f) == FWD_HEALTH_OK &&
	       alloc_ledger_holders(l, f, NULL) == 0;
}

/* The idle forwarders read from a ledger, kept for the next decisions
 * against the same ledger unchanged (alloc_ledger_version()), the same
 * health and the same `released` array: a batch's jobs see one pool. */
struct alloc_pool_cache {
	const struct alloc_ledger *l;
	const struct alloc_health *h;
	const double *released;
	uint64_t version;
	bool valid;
	uint32_t *idle; /* n_forwarders: in the ledger's release order */
	size_t n;
	uint32_t *place; /* 2 n_groups + n_forwarders: the group placement */
	/* idle by group, each in release order: group g's are
	 * bucket[b_off[g]] .. + b_n[g] - 1; built when a decision first
	 * places this pool (b_valid), kept through
	 * alloc_pool_cache_acquired(); no bucket (NULL): the pool is placed
	 * forwarder by forwarder */
	uint32_t *bucket;      /* n_forwarders */
	uint32_t *b_off, *b_n; /* n_groups each */
	bool b_valid;
	bool off; /* not used: every pool read from the ledger, placed
		   * forwarder by forwarder (alloc_decide_batch_ref()) */
};

/* The cache after alloc_ledger_acquire(l, d) moved l from version
 * `before` to the next one: d's forwarders (its defaults for shadow) are
 * held now, the others' order and release times unchanged; a batch
 * updates its pool so instead of reading the ledger again.  A cache of
 * another ledger or version is left alone (the next fill sees it is
 * stale); any other change invalidates it. */
void alloc_pool_cache_acquired(struct alloc_pool_cache *pc,
			       const struct alloc_ctx *cx,
			       const struct alloc_ledger *l,
			       const struct alloc_decision *d, uint64_t before);

/* The idle forwarders in selection order, handed out from the front. */
struct alloc_pool {
	uint32_t *fwd;	  /* room for n_forwarders, allocated by the caller */
	double *released; /* scratch, n_forwarders, allocated by the caller */
	size_t n;
	size_t next; /* next forwarder to hand out */
	size_t base; /* pool size the share cap is computed from */
	struct alloc_pool_cache *cache; /* NULL: none */
	/* Only how many are idle matters (a batch's first pass): left in
	 * the ledger's release order, not placed by group. */
	bool count_only;
	/* Placed by group (alloc_pool_place()) when the first forwarder is
	 * taken: a decision that takes none never orders the pool. */
	bool unplaced;
	/* fwd holds cache->idle as alloc_pool_fill() read it */
	bool cached;
	const struct alloc_ctx *cx;
	const uint64_t *gweight; /* the job's, for the placement */
};

/* Fill pl->fwd with the idle forwarders, ordered for a job whose nodes
 * are served by default gweight[g] times by group g. */
void alloc_pool_fill(struct alloc_pool *pl, const struct alloc_ctx *cx,
		     const struct alloc_ledger *l, const struct alloc_health *h,
		     const uint64_t *gweight);

static inline size_t alloc_pool_left(const struct alloc_pool *pl)
{
	return pl->n - pl->next;
}

/* Put the pool in selection order now (alloc_pool_fill() defers it to
 * the first forwarder taken). */
void alloc_pool_place(struct alloc_pool *pl);

/* The next forwarder; the caller checked alloc_pool_left(). */
static inline uint32_t alloc_pool_take(struct alloc_pool *pl)
{
	if (pl->unplaced)
		alloc_pool_place(pl);
	return pl->fwd[pl->next++];
}

/* The same by sorting the idle forwarders with the order's comparator
 * (alloc_pool_fill() reads the ledger's release order instead): the
 * reference the tests compare with, and the way without a ledger. */
void alloc_pool_fill_sorted(struct alloc_pool *pl, const struct alloc_ctx *cx,
			    const struct alloc_ledger *l,
			    const struct alloc_health *h,
			    const uint64_t *gweight);

/* The first remaining forwarder in `group` (else the first one). */
uint32_t alloc_pool_take_group(struct alloc_pool *pl,
			       const struct alloc_ctx *cx, uint32_t group);

/* ---- the rules (decide.c) ---------------------------------------------- */

/* Between a batch (batch.c) and the curve rule (decide.c). */
struct alloc_plan {
	/* in: collect = fill `opts` (the decision is still made, as for a job
	 * alone); apply = grant `chosen` instead of choosing */
	bool collect, apply;
	struct alloc_option chosen;
	uint32_t batch_sharers; /* other batch jobs staying on the defaults */
	/* out */
	bool allowed; /* policy_job_allowed() said yes (asked once) */
	bool curve;   /* the job took the curve rule */
	struct alloc_opts opts;
	uint32_t first_default;	  /* the job's first default forwarder */
	uint32_t held_sharers;	  /* ledger jobs on its default forwarders */
	uint32_t held_vulnerable; /* ... of which vulnerable */
	bool disruptive;	  /* policy_job_disruptive() */
	bool vulnerable;	  /* policy_job_vulnerable() */
	double harm_s;		  /* the harm of its default mapping without
				   * neighbours (alloc_harm_of()): the longer of its
				   * data I/O there and its metadata load, seconds */
	double rate;   /* B/s one forwarder carries for it at most (its share
			* of a forwarder: value / k / rate) */
	double *share; /* batch.c's: each option's share, computed once */
};

/* One job's default mapping, kept by a batch between its two passes: its
 * default forwarders by first appearance, then the number of its nodes
 * each serves (2 n entries; in room while they fit; fwd NULL: not kept
 * yet). */
struct alloc_defmap {
	uint32_t *fwd;
	size_t n;
	uint32_t room[8];
};

void alloc_defmap_free(struct alloc_defmap *m);

/* Working arrays of one decision at a time, sized for the topology once
 * (a batch decides all its jobs with one).  cnt and gweight are all 0
 * between decisions; the others hold nothing between them. */
struct alloc_scratch {
	uint32_t *cnt;	   /* n_forwarders: job nodes per default forwarder */
	uint64_t *gweight; /* n_groups: job nodes per group */
	uint32_t *defaults, *pool_fwd, *subst; /* n_forwarders each */
	double *pool_released;		       /* n_forwarders */
	uint32_t *fw;			       /* 2 n_forwarders */
	bool *priv, *repl;		       /* 2 n_forwarders each */
	struct alloc_pool_cache pool;
	struct alloc_thr_cache thr;
	/* The job's default mapping as a batch keeps it (NULL: none): the
	 * decision records it there when not kept yet, else reads it back
	 * instead of walking the job's nodes again.  Set by the caller. */
	struct alloc_defmap *defmap;
};

/* 0 or -1 (ENOMEM; nothing to free). */
int alloc_scratch_init(struct alloc_scratch *s, const struct alloc_ctx *cx);
void alloc_scratch_free(struct alloc_scratch *s);

/* alloc_decide() with the share cap computed from a pool of `pool_base`
 * idle forwarders (SIZE_MAX: the pool this decision sees), for a batch, a
 * plan (NULL: none), and working arrays (NULL: its own). */
struct alloc_decision *
alloc_decide_base(const struct alloc_ctx *cx, const struct policy *p,
		  const struct alloc_ledger *l, const struct alloc_health *h,
		  const struct alloc_job *job, size_t pool_base,
		  struct alloc_plan *plan, struct alloc_scratch *ws,
		  fwd_error_t *err);

/* alloc_decide_batch() without reusing one job's pool for the next: each
 * decision reads the idle forwarders from the ledger and places them one
 * by one, as a decision alone does, and walks the job's nodes for its
 * default mapping in both passes, the jobs are ranked by insertion sort,
 * the knapsack's improvement sums each group's parts anew for every job,
 * and the grants go to a deep copy of the ledger (not an overlay that
 * borrows its entries).  The reference
 * the tests compare the batch with (the decisions must be the same). */
int alloc_decide_batch_ref(const struct alloc_ctx *cx, const struct policy *p,
			   const struct alloc_ledger *ledger,
			   const struct alloc_health *health,
			   const struct alloc_job *jobs, size_t n_jobs,
			   double now, struct alloc_decision **out,
			   fwd_error_t *err);

/* Append a reason sentence.  0 or -1 (ENOMEM). */
int alloc_reason(struct alloc_decision *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "s" to follow a count's noun in a reason, so that 1 reads singular. */
const char *alloc_plural(uintmax_t n);

#endif
