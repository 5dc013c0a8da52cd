/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The in-memory allocation ledger.  Entries are individually allocated and
 * indexed by an array (insertion order) and a small open-addressing hash on
 * the job id; each forwarder keeps the list of entries holding it, so the
 * neighbour check of a decision costs O(holders of its defaults).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/ledger.h"
#include "common/array.h"
#include "topology/topology.h"

struct fwd_slot {
	struct alloc_ledger_entry **holders;
	size_t n_holders;
	size_t cap;
	bool own; /* holders allocated for it, else the ledger's first */
	bool held_private;
	double last_release;
};

/* Holders every forwarder has room for in one block of the ledger (its
 * first ones: a batch's scratch ledger adds a few to many forwarders). */
#define SLOT_FIRST 4

struct alloc_ledger {
	const struct topology *topo;
	struct alloc_ledger_entry **entries; /* insertion order */
	size_t n_entries;
	/* entries[0 .. n_lent - 1] are another ledger's, borrowed
	 * (alloc_ledger_overlay()): never freed here.  They stay in front:
	 * entries are added at the end and removed in order. */
	size_t n_lent;
	size_t cap_entries;
	struct alloc_ledger_entry **hash;  /* open addressing; NULL empty,
					    * TOMB deleted */
	size_t hash_size;		   /* power of two */
	size_t hash_used;		   /* live + tombstones */
	struct fwd_slot *fwd;		   /* n_forwarders */
	struct alloc_ledger_entry **first; /* SLOT_FIRST per forwarder */
	/* The backup forwarders by (last release, name): a sorted array,
	 * and each one's position in it (NOT_BACKUP for the others). */
	uint32_t *order;
	uint32_t *pos;
	size_t n_order;
	uint64_t version; /* changes with holders and release times */
};

#define NOT_BACKUP UINT32_MAX

static struct alloc_ledger_entry tomb_entry;
#define TOMB (&tomb_entry)

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* An entry and everything it points to are one allocation (entry_copy()):
 * a batch adds an entry for each of its jobs. */
static void entry_free(struct alloc_ledger_entry *e)
{
	free(e);
}

static struct alloc_ledger_entry *
entry_copy(const struct alloc_ledger_entry *src)
{
	const char *id = src->job_id ? src->job_id : "";
	size_t n = src->n_forwarders, nb = src->n_blocks;
	size_t l_id = strlen(id) + 1,
	       l_nodes = src->nodes ? strlen(src->nodes) + 1 : 0;
	/* the entry, its blocks (8-byte aligned after it), forwarders,
	 * private flags, then the strings */
	size_t o_blk = sizeof(struct alloc_ledger_entry);
	size_t o_fwd = o_blk + nb * sizeof(struct alloc_block);
	size_t o_prv = o_fwd + n * sizeof(uint32_t);
	size_t o_id = o_prv + n * sizeof(bool);
	size_t o_nodes = o_id + l_id;
	char *blk = malloc(o_nodes + l_nodes);
	struct alloc_ledger_entry *e = (struct alloc_ledger_entry *)blk;

	if (!blk) {
		errno = ENOMEM;
		return NULL;
	}
	*e = *src;
	e->blocks = nb ? (struct alloc_block *)(blk + o_blk) : NULL;
	e->forwarders = n ? (uint32_t *)(blk + o_fwd) : NULL;
	e->private_fwd = n ? (bool *)(blk + o_prv) : NULL;
	e->job_id = blk + o_id;
	e->nodes = src->nodes ? blk + o_nodes : NULL;
	memcpy(e->job_id, id, l_id);
	if (src->nodes)
		memcpy(e->nodes, src->nodes, l_nodes);
	if (n) {
		memcpy(e->forwarders, src->forwarders,
		       n * sizeof(*e->forwarders));
		if (src->private_fwd)
			memcpy(e->private_fwd, src->private_fwd,
			       n * sizeof(*e->private_fwd));
		else
			memset(e->private_fwd, 0, n * sizeof(*e->private_fwd));
	}
	if (nb)
		memcpy(e->blocks, src->blocks, nb * sizeof(*e->blocks));
	return e;
}

/* (last release, name) order of forwarders a and b. */
static int release_cmp(const struct alloc_ledger *l, uint32_t a, uint32_t b)
{
	double ra = l->fwd[a].last_release, rb = l->fwd[b].last_release;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return strcmp(l->topo->forwarders[a].name, l->topo->forwarders[b].name);
}

static int cmp_by_name(const void *a, const void *b)
{
	return strcmp((*(const struct topo_forwarder *const *)a)->name,
		      (*(const struct topo_forwarder *const *)b)->name);
}

/* The order of the backups when none was released yet: by name (each
 * forwarder's index from its place in the topology's array).  `from`:
 * a ledger of the same topology whose order is copied; `rank`: each
 * forwarder's name rank (alloc_ctx), a placement instead of a sort. */
static int order_init(struct alloc_ledger *l, const struct alloc_ledger *from,
		      const uint32_t *rank)
{
	const struct topology *t = l->topo;
	size_t n = t->n_forwarders ? t->n_forwarders : 1;
	const struct topo_forwarder **by;

	l->order = malloc(n * sizeof(*l->order));
	l->pos = malloc(n * sizeof(*l->pos));
	if (!l->order || !l->pos)
		return -1;
	if (from) {
		l->n_order = from->n_order;
		memcpy(l->order, from->order, n * sizeof(*l->order));
		memcpy(l->pos, from->pos, n * sizeof(*l->pos));
		return 0;
	}
	if (rank) {
		/* ranks are a permutation of 0 .. n_forwarders - 1 */
		for (size_t f = 0; f < t->n_forwarders; f++)
			l->pos[f] = NOT_BACKUP;
		for (size_t f = 0; f < t->n_forwarders; f++)
			if (t->forwarders[f].role == TOPO_ROLE_BACKUP)
				l->pos[rank[f]] = (uint32_t)f;
		for (size_t r = 0; r < t->n_forwarders; r++)
			if (l->pos[r] != NOT_BACKUP)
				l->order[l->n_order++] = l->pos[r];
		for (size_t f = 0; f < t->n_forwarders; f++)
			l->pos[f] = NOT_BACKUP;
		for (size_t i = 0; i < l->n_order; i++)
			l->pos[l->order[i]] = (uint32_t)i;
		return 0;
	}
	if (!(by = malloc(n * sizeof(*by))))
		return -1;
	for (size_t f = 0; f < t->n_forwarders; f++) {
		l->pos[f] = NOT_BACKUP;
		if (t->forwarders[f].role == TOPO_ROLE_BACKUP)
			by[l->n_order++] = &t->forwarders[f];
	}
	qsort(by, l->n_order, sizeof(*by), cmp_by_name);
	for (size_t i = 0; i < l->n_order; i++) {
		size_t f = (size_t)(by[i] - t->forwarders);

		l->order[i] = (uint32_t)f;
		l->pos[f] = (uint32_t)i;
	}
	free(by);
	return 0;
}

/* Forwarder f was last released at `when`: move it to its place in the
 * order (binary search; the array shift is a memmove of a few words). */
static void set_release(struct alloc_ledger *l, uint32_t f, double when)
{
	size_t at = l->pos[f], lo = 0, hi;

	if (l->fwd[f].last_release == when)
		return;
	l->version++;
	l->fwd[f].last_release = when;
	if (at == NOT_BACKUP)
		return;
	memmove(&l->order[at], &l->order[at + 1],
		(l->n_order - at - 1) * sizeof(*l->order));
	hi = l->n_order - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (release_cmp(l, l->order[mid], f) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&l->order[lo + 1], &l->order[lo],
		(l->n_order - 1 - lo) * sizeof(*l->order));
	l->order[lo] = f;
	for (size_t i = lo < at ? lo : at; i <= (lo < at ? at : lo); i++)
		l->pos[l->order[i]] = (uint32_t)i;
}

uint64_t alloc_ledger_version(const struct alloc_ledger *l)
{
	return l->version;
}

size_t alloc_ledger_unheld_backups(const struct alloc_ledger *l, uint32_t *fwd,
				   double *released)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n_order; i++) {
		uint32_t f = l->order[i];

		if (l->fwd[f].n_holders)
			continue;
		fwd[n++] = f;
		released[f] = l->fwd[f].last_release;
	}
	return n;
}

const uint32_t *alloc_ledger_backups_by_release(const struct alloc_ledger *l,
						size_t *n)
{
	*n = l->n_order;
	return l->order;
}

static struct alloc_ledger *create(const struct topology *t,
				   const struct alloc_ledger *from,
				   const uint32_t *rank)
{
	struct alloc_ledger *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->topo = t;
	l->hash_size = 64;
	l->hash = calloc(l->hash_size, sizeof(*l->hash));
	l->fwd = calloc(t->n_forwarders ? t->n_forwarders : 1, sizeof(*l->fwd));
	l->first = malloc((t->n_forwarders ? t->n_forwarders : 1) * SLOT_FIRST *
			  sizeof(*l->first));
	if (!l->hash || !l->fwd || !l->first || order_init(l, from, rank) < 0) {
		alloc_ledger_destroy(l);
		errno = ENOMEM;
		return NULL;
	}
	return l;
}

struct alloc_ledger *alloc_ledger_create(const struct topology *t)
{
	return create(t, NULL, NULL);
}

struct alloc_ledger *alloc_ledger_create_ranked(const struct topology *t,
						const uint32_t *name_rank)
{
	return create(t, NULL, name_rank);
}

void alloc_ledger_destroy(struct alloc_ledger *l)
{
	int saved = errno;

	if (!l)
		return;
	for (size_t i = l->n_lent; i < l->n_entries; i++)
		entry_free(l->entries[i]);
	free(l->entries);
	free(l->hash);
	if (l->fwd)
		for (size_t i = 0; i < l->topo->n_forwarders; i++)
			if (l->fwd[i].own)
				free(l->fwd[i].holders);
	free(l->fwd);
	free(l->first);
	free(l->order);
	free(l->pos);
	free(l);
	errno = saved;
}

const struct topology *alloc_ledger_topology(const struct alloc_ledger *l)
{
	return l->topo;
}

/* Slot of job_id: the live entry, or the first free slot to insert into. */
static size_t hash_slot(const struct alloc_ledger *l, const char *job_id,
			bool *found)
{
	size_t mask = l->hash_size - 1;
	size_t i = hash_str(job_id) & mask;
	size_t first_free = (size_t)-1;

	*found = false;
	for (;;) {
		struct alloc_ledger_entry *e = l->hash[i];

		if (!e)
			return first_free != (size_t)-1 ? first_free : i;
		if (e == TOMB) {
			if (first_free == (size_t)-1)
				first_free = i;
		} else if (!strcmp(e->job_id, job_id)) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
}

static int hash_grow(struct alloc_ledger *l)
{
	size_t size = l->hash_size * 2;
	struct alloc_ledger_entry **h = calloc(size, sizeof(*h));

	if (!h)
		return -1;
	free(l->hash);
	l->hash = h;
	l->hash_size = size;
	l->hash_used = l->n_entries;
	for (size_t k = 0; k < l->n_entries; k++) {
		size_t i = hash_str(l->entries[k]->job_id) & (size - 1);

		while (h[i])
			i = (i + 1) & (size - 1);
		h[i] = l->entries[k];
	}
	return 0;
}

const struct alloc_ledger_entry *alloc_ledger_find(const struct alloc_ledger *l,
						   const char *job_id)
{
	bool found;
	size_t i;

	if (!l || !job_id)
		return NULL;
	i = hash_slot(l, job_id, &found);
	return found ? l->hash[i] : NULL;
}

size_t alloc_ledger_count(const struct alloc_ledger *l)
{
	return l ? l->n_entries : 0;
}

const struct alloc_ledger_entry *
alloc_ledger_entry_at(const struct alloc_ledger *l, size_t i)
{
	return l && i < l->n_entries ? l->entries[i] : NULL;
}

size_t alloc_ledger_holders(const struct alloc_ledger *l, uint32_t fwd,
			    const struct alloc_ledger_entry *const **out)
{
	if (!l || fwd >= l->topo->n_forwarders) {
		if (out)
			*out = NULL;
		return 0;
	}
	if (out)
		*out = (const struct alloc_ledger_entry *const *)l->fwd[fwd]
			       .holders;
	return l->fwd[fwd].n_holders;
}

bool alloc_ledger_held_private(const struct alloc_ledger *l, uint32_t fwd)
{
	return l && fwd < l->topo->n_forwarders && l->fwd[fwd].held_private;
}

double alloc_ledger_last_release(const struct alloc_ledger *l, uint32_t fwd)
{
	if (!l || fwd >= l->topo->n_forwarders)
		return 0;
	return l->fwd[fwd].last_release;
}

void alloc_ledger_set_last_release(struct alloc_ledger *l, uint32_t fwd,
				   double t)
{
	if (l && fwd < l->topo->n_forwarders)
		set_release(l, fwd, t);
}

void alloc_ledger_set_last_releases(struct alloc_ledger *l, const double *when)
{
	for (size_t f = 0; l && f < l->topo->n_forwarders; f++)
		if (when[f] > l->fwd[f].last_release)
			set_release(l, (uint32_t)f, when[f]);
}

static int slot_push(struct alloc_ledger *l, struct fwd_slot *s,
		     struct alloc_ledger_entry *e)
{
	if (!s->cap) {
		s->holders = &l->first[(size_t)(s - l->fwd) * SLOT_FIRST];
		s->cap = SLOT_FIRST;
	}
	if (s->n_holders == s->cap) {
		struct alloc_ledger_entry **h;

		if (s->cap > SIZE_MAX / 2 / sizeof(*h))
			return -1;
		h = s->own ? realloc(s->holders, 2 * s->cap * sizeof(*h))
			   : malloc(2 * s->cap * sizeof(*h));
		if (!h)
			return -1;
		if (!s->own)
			memcpy(h, s->holders, s->n_holders * sizeof(*h));
		s->holders = h;
		s->cap *= 2;
		s->own = true;
	}
	s->holders[s->n_holders++] = e;
	return 0;
}

static void slot_remove(struct fwd_slot *s, const struct alloc_ledger_entry *e)
{
	for (size_t i = 0; i < s->n_holders; i++) {
		if (s->holders[i] != e)
			continue;
		/* Keep holder order: determinism of neighbour reasons. */
		memmove(&s->holders[i], &s->holders[i + 1],
			(s->n_holders - i - 1) * sizeof(*s->holders));
		s->n_holders--;
		return;
	}
}

/* `absent`: the caller found no entry of the job already. */
static int check_entry(const struct alloc_ledger *l,
		       const struct alloc_ledger_entry *e, bool absent,
		       fwd_error_t *err)
{
	const struct topology *t = l->topo;

	if (!e->job_id || !*e->job_id) {
		errno = EINVAL;
		return errprintf(err, "ledger entry without a job id");
	}
	if (!absent && alloc_ledger_find(l, e->job_id)) {
		errno = EEXIST;
		return errprintf(err, "job %s already holds an allocation",
				 e->job_id);
	}
	for (size_t i = 0; i < e->n_forwarders; i++) {
		uint32_t f = e->forwarders[i];
		bool priv = e->private_fwd && e->private_fwd[i];

		if (f >= t->n_forwarders) {
			errno = EINVAL;
			return errprintf(err,
					 "job %s: forwarder index %u outside "
					 "the topology (%zu forwarders)",
					 e->job_id, f, t->n_forwarders);
		}
		for (size_t j = 0; j < i; j++) {
			if (e->forwarders[j] == f) {
				errno = EINVAL;
				return errprintf(err,
						 "job %s: forwarder %s listed "
						 "twice",
						 e->job_id,
						 t->forwarders[f].name);
			}
		}
		if (l->fwd[f].held_private || (priv && l->fwd[f].n_holders)) {
			errno = EBUSY;
			return errprintf(
				err,
				"job %s: forwarder %s is already held %sby "
				"job %s",
				e->job_id, t->forwarders[f].name,
				l->fwd[f].held_private ? "privately " : "",
				l->fwd[f].holders[0]->job_id);
		}
	}
	return 0;
}

/* alloc_ledger_add() of an entry check_entry() accepts. */
static int add_checked(struct alloc_ledger *l,
		       const struct alloc_ledger_entry *src, fwd_error_t *err)
{
	struct alloc_ledger_entry *e = NULL;
	size_t linked = 0;
	bool found;
	size_t slot;
	int rv = -1;

	l->version++;
	if (!(e = entry_copy(src)))
		goto nomem;
	if (FWD_GROW(l->entries, l->cap_entries, l->n_entries + 1, 64) < 0)
		goto nomem;
	if ((l->hash_used + 1) * 2 > l->hash_size && hash_grow(l) < 0)
		goto nomem;
	for (; linked < e->n_forwarders; linked++)
		if (slot_push(l, &l->fwd[e->forwarders[linked]], e) < 0)
			goto nomem;
	for (size_t i = 0; i < e->n_forwarders; i++)
		if (e->private_fwd[i])
			l->fwd[e->forwarders[i]].held_private = true;
	slot = hash_slot(l, e->job_id, &found);
	if (!l->hash[slot])
		l->hash_used++;
	l->hash[slot] = e;
	l->entries[l->n_entries++] = e;
	e = NULL;
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	errprintf(err, "ledger: out of memory");
	for (size_t i = 0; e && i < linked; i++)
		slot_remove(&l->fwd[e->forwarders[i]], e);
out:
	entry_free(e);
	return rv;
}

int alloc_ledger_add(struct alloc_ledger *l,
		     const struct alloc_ledger_entry *src, fwd_error_t *err)
{
	if (check_entry(l, src, false, err) < 0)
		return -1;
	return add_checked(l, src, err);
}

int alloc_ledger_acquire(struct alloc_ledger *l, const struct alloc_decision *d,
			 size_t n_nodes, double now, fwd_error_t *err)
{
	struct alloc_ledger_entry e = {0};
	bool *shared = NULL;
	int rv;

	if (alloc_ledger_find(l, d->job_id))
		return 0;
	e.job_id = d->job_id;
	e.action = d->action;
	e.n_nodes = n_nodes;
	e.acquired_at = now;
	if (d->has_profile) {
		e.io_mode = d->profile.io_mode;
		e.mdops = d->profile.mdops;
		e.bandwidth_bps = d->profile.peak_bandwidth_bps;
		e.iops = d->profile.iops;
	}
	if (d->action == FWD_ACT_SHADOW) {
		/* Nothing applied: the job runs on its defaults, shared. */
		shared = calloc(d->n_defaults ? d->n_defaults : 1,
				sizeof(*shared));
		if (!shared) {
			errno = ENOMEM;
			return errprintf(err, "ledger: out of memory");
		}
		e.forwarders = d->defaults;
		e.private_fwd = shared;
		e.n_forwarders = d->n_defaults;
	} else {
		e.forwarders = d->forwarders;
		e.private_fwd = d->private_fwd;
		e.n_forwarders = d->n_forwarders;
		e.blocks = d->blocks;
		e.n_blocks = d->n_blocks;
	}
	/* not in the ledger (looked up above) */
	rv = check_entry(l, &e, true, err) < 0 ? -1 : add_checked(l, &e, err);
	free(shared);
	return rv;
}

int alloc_ledger_release(struct alloc_ledger *l, const char *job_id, double now)
{
	struct alloc_ledger_entry *e;
	bool found;
	size_t slot;

	if (!l || !job_id)
		return 0;
	slot = hash_slot(l, job_id, &found);
	if (!found)
		return 0;
	e = l->hash[slot];
	l->hash[slot] = TOMB;
	l->version++;
	for (size_t i = 0; i < e->n_forwarders; i++) {
		struct fwd_slot *s = &l->fwd[e->forwarders[i]];

		slot_remove(s, e);
		if (e->private_fwd[i])
			s->held_private = false;
		set_release(l, e->forwarders[i], now);
	}
	for (size_t i = 0; i < l->n_entries; i++) {
		if (l->entries[i] != e)
			continue;
		memmove(&l->entries[i], &l->entries[i + 1],
			(l->n_entries - i - 1) * sizeof(*l->entries));
		l->n_entries--;
		if (i < l->n_lent) {
			l->n_lent--; /* the lender's */
			e = NULL;
		}
		break;
	}
	entry_free(e);
	return 1;
}

struct alloc_ledger *alloc_ledger_clone(const struct alloc_ledger *l)
{
	struct alloc_ledger *c = create(l->topo, l, NULL);

	if (!c)
		return NULL;
	/* l's entries were checked when they were added */
	for (size_t i = 0; i < l->n_entries; i++) {
		if (add_checked(c, l->entries[i], NULL) < 0) {
			alloc_ledger_destroy(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	for (size_t f = 0; f < l->topo->n_forwarders; f++)
		c->fwd[f].last_release = l->fwd[f].last_release;
	memcpy(c->order, l->order, l->n_order * sizeof(*c->order));
	memcpy(c->pos, l->pos, l->topo->n_forwarders * sizeof(*c->pos));
	return c;
}

struct alloc_ledger *alloc_ledger_overlay(const struct alloc_ledger *l)
{
	struct alloc_ledger *c = create(l->topo, l, NULL);
	size_t nf = l->topo->n_forwarders;

	if (!c)
		return NULL;
	/* What alloc_ledger_clone() builds entry by entry, taken whole (its
	 * entries borrowed, not copied): the same
	 * entries in the same order, each forwarder's holders in l's order
	 * (the entries' order: removals keep it), the same lookups. */
	if (FWD_GROW(c->entries, c->cap_entries, l->n_entries + 1, 64) < 0)
		goto nomem;
	if (l->hash_size > c->hash_size) {
		struct alloc_ledger_entry **h =
			malloc(l->hash_size * sizeof(*h));

		if (!h)
			goto nomem;
		free(c->hash);
		c->hash = h;
	}
	memcpy(c->hash, l->hash, l->hash_size * sizeof(*c->hash));
	c->hash_size = l->hash_size;
	c->hash_used = l->hash_used;
	if (l->n_entries) /* none: l may have no array */
		memcpy(c->entries, l->entries,
		       l->n_entries * sizeof(*c->entries));
	c->n_entries = c->n_lent = l->n_entries;
	for (size_t f = 0; f < nf; f++) {
		const struct fwd_slot *s = &l->fwd[f];
		struct fwd_slot *d = &c->fwd[f];

		d->last_release = s->last_release;
		d->held_private = s->held_private;
		if (!s->n_holders)
			continue;
		/* room as slot_push() makes it: the ledger's first block,
		 * else its own */
		if (s->n_holders <= SLOT_FIRST) {
			d->holders = &c->first[f * SLOT_FIRST];
			d->cap = SLOT_FIRST;
		} else if (!(d->holders = malloc(s->n_holders *
						 sizeof(*d->holders)))) {
			goto nomem;
		} else {
			d->cap = s->n_holders;
			d->own = true;
		}
		memcpy(d->holders, s->holders,
		       s->n_holders * sizeof(*d->holders));
		d->n_holders = s->n_holders;
	}
	c->version = l->n_entries; /* one per entry, as the clone's */
	memcpy(c->order, l->order, l->n_order * sizeof(*c->order));
	memcpy(c->pos, l->pos, nf * sizeof(*c->pos));
	return c;
nomem:
	alloc_ledger_destroy(c);
	errno = ENOMEM;
	return NULL;
}
