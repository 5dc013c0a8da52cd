/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision's node sets: the per-topology index (alloc_ctx), the job's
 * node list, the blocks of the job's nodes each forwarder serves, and
 * rendering those blocks as ranged hostlists for the mapping.
 *
 * alloc_ctx uses the topology's split of every node name into prefix and
 * number and its number -> node id table per prefix (topo_names(), built
 * once per topology or read from its compiled cache), so that a job's
 * hostlist (parsed by libslurm, read back as its ranged string) becomes
 * node ids range by range, and a block of nodes is rendered as libslurm
 * would print it with integer compares and one growing buffer: no
 * per-node string or heap work.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/slurm_compat.h"
#include "common/units.h"

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "topology/topology.h"

#define MAX_DIGITS TOPO_MAX_DIGITS

/* ---- context ---------------------------------------------------------- */

void alloc_ctx_destroy(struct alloc_ctx *cx)
{
	int saved = errno;

	if (!cx)
		return;
	free(cx->group);
	free(cx->group_names);
	free(cx->group_rank);
	free(cx->groups_by_name);
	free(cx->name_rank);
	free(cx);
	errno = saved;
}

const struct topology *alloc_ctx_topology(const struct alloc_ctx *cx)
{
	return cx->t;
}

static const struct topo_numclass *find_class(const struct alloc_ctx *cx,
					      uint32_t prefix, uint8_t pad)
{
	for (size_t k = 0; k < cx->names->n_classes; k++)
		if (cx->names->classes[k].prefix == prefix &&
		    cx->names->classes[k].pad == pad)
			return &cx->names->classes[k];
	return NULL;
}

struct named {
	const char *name;
	uint32_t i;
};

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name,
		      ((const struct named *)b)->name);
}

/* rank[v[k].i] = position of v[k].name in strcmp order; v is sorted. */
static int rank_sorted(struct named *v, size_t n, uint32_t **rank)
{
	if (!(*rank = malloc((n ? n : 1) * sizeof(**rank))))
		return -1;
	qsort(v, n, sizeof(*v), cmp_named);
	for (size_t k = 0; k < n; k++)
		(*rank)[v[k].i] = (uint32_t)k;
	return 0;
}

/* Name ranks of groups and forwarders, for the pool's order. */
static int rank_names(struct alloc_ctx *cx)
{
	const struct topology *t = cx->t;
	size_t n = t->n_forwarders + cx->n_groups + 1;
	struct named *v = malloc(n * sizeof(*v));
	int rv = -1;

	if (!v)
		return -1;
	for (size_t g = 0; g < cx->n_groups; g++)
		v[g] = (struct named){cx->group_names[g], (uint32_t)g};
	if (rank_sorted(v, cx->n_groups, &cx->group_rank) < 0 ||
	    !(cx->groups_by_name =
		      malloc((cx->n_groups + 1) * sizeof(*cx->groups_by_name))))
		goto out;
	for (size_t g = 0; g < cx->n_groups; g++)
		cx->groups_by_name[cx->group_rank[g]] = (uint32_t)g;
	for (size_t f = 0; f < t->n_forwarders; f++)
		v[f] = (struct named){t->forwarders[f].name, (uint32_t)f};
	rv = rank_sorted(v, t->n_forwarders, &cx->name_rank);
out:
	free(v);
	return rv;
}

struct alloc_ctx *alloc_ctx_create(const struct topology *t, fwd_error_t *err)
{
	struct alloc_ctx *cx = calloc(1, sizeof(*cx));
	const struct topo_names *nm = topo_names(t);

	if (!cx || !nm)
		goto nomem;
	cx->t = t;
	cx->names = nm;
	cx->group = malloc((t->n_forwarders + 1) * sizeof(*cx->group));
	cx->group_names =
		malloc((t->n_forwarders + 1) * sizeof(*cx->group_names));
	if (!cx->group || !cx->group_names)
		goto nomem;
	for (size_t f = 0; f < t->n_forwarders; f++) {
		const char *g = t->forwarders[f].group;
		size_t k;

		if (t->forwarders[f].bandwidth_bps > cx->bw_max)
			cx->bw_max = t->forwarders[f].bandwidth_bps;
		cx->n_backups += t->forwarders[f].role == TOPO_ROLE_BACKUP;

		for (k = 0; k < cx->n_groups; k++)
			if (!strcmp(cx->group_names[k], g))
				break;
		if (k == cx->n_groups)
			cx->group_names[cx->n_groups++] = (char *)g;
		cx->group[f] = (uint32_t)k;
	}
	if (rank_names(cx) < 0)
		goto nomem;
	return cx;
nomem:
	alloc_ctx_destroy(cx);
	errno = ENOMEM;
	errprintf(err, "allocator index: out of memory");
	return NULL;
}

/* ---- job nodes -------------------------------------------------------- */

int alloc_job_nodes(const struct topology *t, const char *hostlist,
		    uint32_t **ids, size_t *n, fwd_error_t *err)
{
	if (topo_hostlist_nodes(t, hostlist, ids, n, err) < 0)
		return errprefix(err, "nodes");
	return 0;
}

int alloc_nodeset_init(struct alloc_nodeset *s, size_t n_bits)
{
	s->n_bits = n_bits;
	s->w = calloc(n_bits / 64 + 1, sizeof(*s->w));
	return s->w ? 0 : -1;
}

void alloc_nodeset_free(struct alloc_nodeset *s)
{
	free(s->w);
	s->w = NULL;
}

static unsigned digits(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static long prefix_lookup(const struct alloc_ctx *cx, const char *s, size_t len)
{
	for (size_t i = 0; i < cx->names->n_prefixes; i++)
		if (!strncmp(cx->names->prefixes[i], s, len) &&
		    !cx->names->prefixes[i][len])
			return (long)i;
	return -1;
}

/* A node of a class too sparse for a table, by its name. */
static long id_by_name(const struct alloc_ctx *cx, long pfx, uint8_t pad,
		       uint64_t v)
{
	char name[256];
	int len = snprintf(name, sizeof(name), "%s%0*llu",
			   cx->names->prefixes[pfx], (int)pad,
			   (unsigned long long)v);

	if (len < 0 || (size_t)len >= sizeof(name))
		return -1;
	return topo_node_id(cx->t, name);
}

/*
 * Expand a ranged hostlist as libslurm prints it (a comma-separated list of
 * host names and prefix[a-b,c,...] groups, numbers printed with the width
 * of `a`) into node ids.  Any other shape, a node the index does not
 * know, a duplicate or too many nodes: -1, and the caller takes the slow
 * path (which gives the precise error).
 */
static int expand_ranged(const struct alloc_ctx *cx, char *s, uint32_t *ids,
			 size_t max, size_t *n_out, struct alloc_nodeset *seen)
{
	size_t n = 0;

	while (*s) {
		char *br = s, *end;
		long pfx;

		while (*br && *br != ',' && *br != '[')
			br++;
		if (*br != '[') { /* one host name */
			char save = *br;
			long id;

			*br = '\0';
			id = topo_node_id(cx->t, s);
			*br = save;
			if (id < 0 || n == max ||
			    alloc_nodeset_test_set(seen, (uint32_t)id))
				return -1;
			ids[n++] = (uint32_t)id;
			s = *br ? br + 1 : br;
			continue;
		}
		if ((pfx = prefix_lookup(cx, s, (size_t)(br - s))) < 0)
			return -1;
		s = br + 1;
		for (;;) {
			uint64_t lo, hi;
			unsigned width;

			if (*s < '0' || *s > '9')
				return -1;
			errno = 0;
			lo = strtoull(s, &end, 10);
			width = (unsigned)(end - s);
			hi = lo;
			if (*end == '-') {
				s = end + 1;
				if (*s < '0' || *s > '9')
					return -1;
				hi = strtoull(s, &end, 10);
			}
			if (errno || width > MAX_DIGITS ||
			    digits(hi) > MAX_DIGITS || hi < lo ||
			    hi - lo >= max - n)
				return -1;
			for (uint64_t v = lo; v <= hi;) {
				unsigned dg = digits(v);
				uint8_t pad = width > dg ? (uint8_t)width : 0;
				const struct topo_numclass *c =
					find_class(cx, (uint32_t)pfx, pad);
				uint64_t top = 9;

				if (!c)
					return -1;
				/* The numbers printed with dg digits. */
				for (unsigned k = 1; k < dg; k++)
					top = top * 10 + 9;
				if (top > hi)
					top = hi;
				for (; v <= top; v++) {
					long id;

					if (c->id)
						id = v < c->lo || v > c->hi
							     ? -1
							     : c->id[v - c->lo];
					else
						id = id_by_name(cx, pfx, pad,
								v);
					if (id < 0 ||
					    alloc_nodeset_test_set(
						    seen, (uint32_t)id))
						return -1;
					ids[n++] = (uint32_t)id;
				}
			}
			s = end;
			if (*s == ',') {
				s++;
				continue;
			}
			if (*s++ != ']')
				return -1;
			break;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	*n_out = n;
	return 0;
}

int alloc_ctx_job_nodes_fast(const struct alloc_ctx *cx, const char *hostlist,
			     uint32_t **ids_out, size_t *n_out)
{
	struct alloc_nodeset seen = {0};
	fwd_hostlist_t hl = NULL;
	uint32_t *ids = NULL;
	char *ranged = NULL;
	size_t n = 0;
	int count, rv = -1;

	if (!hostlist || !*hostlist || cx->names->long_suffix)
		return -1;
	hl = slurm_hostlist_create(hostlist);
	if (!hl || (count = slurm_hostlist_count(hl)) <= 0)
		goto out;
	ranged = fwd_hostlist_ranged(hl);
	ids = malloc((size_t)count * sizeof(*ids));
	if (!ranged || !ids || alloc_nodeset_init(&seen, cx->t->n_nodes) < 0 ||
	    expand_ranged(cx, ranged, ids, (size_t)count, &n, &seen) < 0 ||
	    n != (size_t)count)
		goto out;
	*ids_out = ids;
	*n_out = n;
	ids = NULL;
	rv = 0;
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	free(ranged);
	free(ids);
	alloc_nodeset_free(&seen);
	return rv;
}

int alloc_ctx_job_nodes(const struct alloc_ctx *cx, const char *hostlist,
			uint32_t **ids, size_t *n, fwd_error_t *err)
{
	if (alloc_ctx_job_nodes_fast(cx, hostlist, ids, n) == 0)
		return 0;
	return alloc_job_nodes(cx->t, hostlist, ids, n, err);
}

/* ---- blocks ----------------------------------------------------------- */

int alloc_blocks_balanced(struct alloc_decision *d, size_t n_nodes)
{
	size_t k = d->n_forwarders, first = 0;

	if (alloc_blocks_room(d, k ? k : 1) < 0)
		return -1;
	for (size_t i = 0; i < k; i++) {
		size_t c = n_nodes / k + (i < n_nodes % k);

		d->blocks[i] = (struct alloc_block){first, c, d->forwarders[i]};
		first += c;
	}
	d->n_blocks = k;
	return 0;
}

int alloc_blocks_default(const struct topology *t, const uint32_t *node_ids,
			 size_t n_nodes, const uint32_t *subst,
			 struct alloc_decision *d)
{
	const int32_t *nf = t->node_forwarder;
	size_t cap = d->n_defaults * 2 + 4;

	if (alloc_blocks_room(d, cap) < 0)
		return -1;
	if (d->blocks == d->blk_room) /* as much as the room has */
		cap = sizeof(d->blk_room) / sizeof(d->blk_room[0]);
	for (size_t i = 0, run; i < n_nodes; i += run) {
		uint32_t f = (uint32_t)nf[node_ids[i]];

		if (subst)
			f = subst[f];
		/* a run of consecutive nodes on one forwarder at once */
		run = topo_forwarder_run(t, node_ids, n_nodes, i);
		if (d->n_blocks && d->blocks[d->n_blocks - 1].forwarder == f) {
			d->blocks[d->n_blocks - 1].count += run;
			continue;
		}
		if (d->n_blocks == cap) {
			struct alloc_block *p =
				d->blocks == d->blk_room
					? malloc(cap * 2 * sizeof(*p))
					: realloc(d->blocks,
						  cap * 2 * sizeof(*p));

			if (!p)
				return -1;
			if (d->blocks == d->blk_room)
				memcpy(p, d->blocks, cap * sizeof(*p));
			d->blocks = p;
			cap *= 2;
		}
		d->blocks[d->n_blocks++] = (struct alloc_block){i, run, f};
	}
	return 0;
}

/* ---- rendering -------------------------------------------------------- */

/*
 * A ranged hostlist rendered the way libslurm renders it (22.05,
 * src/common/hostlist.c, one dimension): names are pushed in order into
 * hostranges (prefix, lo, hi, width; a name without a numeric suffix is a
 * "single host"); a name extends the last range when it has the same
 * prefix, the next number, and a compatible width (_width_equiv()); ranges
 * are printed in order, consecutive ranges with the same prefix (neither a
 * single host) share one bracket, and a bracket is printed when its first
 * range holds more than one host or is followed by another of its group.
 */
struct hl_range {
	uint32_t prefix; /* prefix id, or the node id of a single host */
	bool single;
	uint64_t lo, hi;
	int width;
};

struct hl_render {
	const struct alloc_ctx *cx;
	struct hl_range *r; /* room while they fit */
	size_t n, cap;
	struct hl_range room[8];
};

static void hl_free(struct hl_render *h)
{
	if (h->r != h->room)
		free(h->r);
}

/* libslurm's _zero_padded(): zeros needed to pad num to width. */
static int zero_padded(uint64_t num, int width)
{
	int n = (int)digits(num);

	return width > n ? width - n : 0;
}

/* libslurm's _width_equiv(), adjusting one of the widths. */
static bool width_equiv(uint64_t n, int *wn, uint64_t m, int *wm)
{
	int npad, nmpad, mpad, mnpad;

	if (*wn == *wm)
		return true;
	npad = zero_padded(n, *wn);
	nmpad = zero_padded(n, *wm);
	mpad = zero_padded(m, *wm);
	mnpad = zero_padded(m, *wn);
	if (npad != nmpad && mpad != mnpad)
		return false;
	if (npad != nmpad)
		*wm = *wn;
	else
		*wn = *wm;
	return true;
}

static int hl_push(struct hl_render *h, uint32_t id)
{
	const struct alloc_ctx *cx = h->cx;
	struct hl_range r = {0};

	if (cx->names->pad[id] == ALLOC_NO_DIGITS) {
		r.single = true;
		r.prefix = id;
	} else {
		r.prefix = cx->names->prefix[id];
		r.lo = r.hi = cx->names->num[id];
		r.width = cx->names->width[id];
	}
	if (h->n) {
		struct hl_range *tail = &h->r[h->n - 1];

		if (!tail->single && !r.single && tail->hi == r.lo - 1 &&
		    tail->prefix == r.prefix &&
		    (tail->width == r.width ||
		     width_equiv(tail->lo, &tail->width, r.lo, &r.width))) {
			tail->hi = r.hi;
			return 0;
		}
	}
	if (!h->cap) {
		h->r = h->room;
		h->cap = sizeof(h->room) / sizeof(h->room[0]);
	} else if (h->n == h->cap) {
		struct hl_range *p;

		if (h->cap > SIZE_MAX / 2 / sizeof(*p))
			return -1;
		p = h->r == h->room ? malloc(2 * h->cap * sizeof(*p))
				    : realloc(h->r, 2 * h->cap * sizeof(*p));
		if (!p)
			return -1;
		if (h->r == h->room)
			memcpy(p, h->room, h->n * sizeof(*p));
		h->r = p;
		h->cap *= 2;
	}
	h->r[h->n++] = r;
	return 0;
}

static bool hl_same_group(const struct hl_range *a, const struct hl_range *b)
{
	return !a->single && !b->single && a->prefix == b->prefix;
}

/* Room for `more` bytes and a NUL after *len. */
static inline int buf_room(char **buf, size_t *len, size_t *cap, size_t more)
{
	if (*buf && *len + more + 1 <= *cap)
		return 0; /* most calls: no call */
	return fwd_grow(buf, cap, *len + more + 1, 1, 256);
}

static int hl_print(const struct hl_render *h, char **buf, size_t *len,
		    size_t *cap)
{
	const struct alloc_ctx *cx = h->cx;

	for (size_t i = 0; i < h->n;) {
		const struct hl_range *r = &h->r[i];
		const char *pfx = r->single ? cx->t->node_names[r->prefix]
					    : cx->names->prefixes[r->prefix];
		size_t pl = strlen(pfx);
		bool bracket = (!r->single && r->hi > r->lo) ||
			       (i + 1 < h->n && hl_same_group(r, &h->r[i + 1]));
		size_t start = i;
		char *p;

		if (buf_room(buf, len, cap, pl + 2) < 0)
			return -1;
		p = *buf + *len;
		if (i)
			*p++ = ',';
		memcpy(p, pfx, pl);
		p += pl;
		if (bracket)
			*p++ = '[';
		*len = (size_t)(p - *buf);
		do {
			const struct hl_range *q = &h->r[i];

			if (q->single)
				continue;
			/* ',' + two numbers of at most 20 digits or width. */
			if (buf_room(buf, len, cap,
				     2 + 2 * (size_t)(q->width > 20 ? q->width
								    : 20)) < 0)
				return -1;
			p = *buf + *len;
			if (i > start)
				*p++ = ',';
			p = units_put_dec(p, q->lo, q->width);
			if (q->hi > q->lo) {
				*p++ = '-';
				p = units_put_dec(p, q->hi, q->width);
			}
			*len = (size_t)(p - *buf);
		} while (++i < h->n && hl_same_group(&h->r[i], &h->r[i - 1]));
		if (buf_room(buf, len, cap, 1) < 0)
			return -1;
		if (bracket)
			(*buf)[(*len)++] = ']';
		(*buf)[*len] = '\0';
	}
	if (buf_room(buf, len, cap, 0) < 0)
		return -1;
	(*buf)[*len] = '\0';
	return 0;
}

/* The same through libslurm, for names the index does not split. */
static int render_slurm(const struct alloc_ctx *cx, const uint32_t *ids,
			size_t n, fwd_hostlist_t *hl)
{
	if (!*hl && !(*hl = slurm_hostlist_create(NULL)))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!slurm_hostlist_push_host(*hl, cx->t->node_names[ids[i]]))
			return -1;
	return 0;
}

static int append_slurm(fwd_hostlist_t hl, char **buf, size_t *len, size_t *cap)
{
	char *s = fwd_hostlist_ranged(hl);
	size_t sl;

	if (!s)
		return -1;
	sl = strlen(s);
	if (buf_room(buf, len, cap, sl) < 0) {
		free(s);
		return -1;
	}
	memcpy(*buf + *len, s, sl + 1);
	*len += sl;
	free(s);
	return 0;
}

int alloc_render_ids(const struct alloc_ctx *cx, const uint32_t *ids, size_t n,
		     char **buf, size_t *len, size_t *cap)
{
	struct hl_render h = {.cx = cx};
	fwd_hostlist_t hl = NULL;
	int rv = -1;

	if (cx->names->long_suffix) {
		if (render_slurm(cx, ids, n, &hl) == 0)
			rv = append_slurm(hl, buf, len, cap);
		if (hl)
			slurm_hostlist_destroy(hl);
		return rv;
	}
	for (size_t i = 0; i < n; i++)
		if (hl_push(&h, ids[i]) < 0)
			goto out;
	rv = hl_print(&h, buf, len, cap);
out:
	hl_free(&h);
	return rv;
}

/* Ranged hostlist of the job's nodes in the blocks served by `fwd`,
 * appended to *buf. */
static int render_nodes(struct hl_render *h, const uint32_t *ids,
			const struct alloc_decision *d, uint32_t fwd,
			char **buf, size_t *len, size_t *cap)
{
	const struct alloc_ctx *cx = h->cx;
	fwd_hostlist_t hl = NULL;
	int rv = -1;

	h->n = 0;
	for (size_t k = 0; k < d->n_blocks; k++) {
		const struct alloc_block *bl = &d->blocks[k];

		if (bl->forwarder != fwd)
			continue;
		if (cx->names->long_suffix) {
			if (render_slurm(cx, ids + bl->first, bl->count, &hl) <
			    0)
				goto out;
			continue;
		}
		for (size_t i = bl->first, end = i + bl->count, run; i < end;
		     i += run) {
			/* A run of consecutive names joins the range the
			 * first one is pushed into. */
			run = topo_name_run(cx->t, cx->names, ids, end, i);
			if (hl_push(h, ids[i]) < 0)
				goto out;
			h->r[h->n - 1].hi += run - 1;
		}
	}
	if (cx->names->long_suffix)
		rv = hl ? append_slurm(hl, buf, len, cap) : -1;
	else
		rv = hl_print(h, buf, len, cap);
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	return rv;
}

int alloc_render(const struct alloc_ctx *cx, const uint32_t *node_ids,
		 struct alloc_decision *d)
{
	const struct topology *t = cx->t;
	struct hl_render h = {.cx = cx};
	size_t nf = d->n_forwarders, no = d->n_excluded_osts;
	size_t nf_room = nf ? nf : 1, no_room = no ? no : 1, arrays;
	/* every string in one buffer (d->strings): the mapping's, then the
	 * forwarders' and the OSTs' names, at offsets fixed once it stops
	 * growing; then, 16-byte aligned, the arrays pointing into them */
	size_t at_s[64], n_at = 2 * nf + no + 1;
	size_t *at = n_at <= 64 ? at_s : malloc(n_at * sizeof(*at));
	char *buf = NULL, **names;
	size_t cap = 0, len = 0, a0;
	int rv = -1;

	if (!at)
		goto out;
	for (size_t i = 0; i < nf; i++) {
		at[i] = len;
		if (render_nodes(&h, node_ids, d, d->forwarders[i], &buf, &len,
				 &cap) < 0 ||
		    buf_room(&buf, &len, &cap, 0) < 0)
			goto out;
		buf[len++] = '\0'; /* a forwarder without nodes: "" */
	}
	for (size_t i = 0; i < nf + no; i++) {
		const char *name =
			i < nf ? t->forwarders[d->forwarders[i]].name
			       : t->osts[d->excluded_osts[i - nf]].name;
		size_t n = strlen(name);

		if (buf_room(&buf, &len, &cap, n) < 0)
			goto out;
		at[nf + i] = len;
		memcpy(buf + len, name, n + 1);
		len += n + 1;
	}
	a0 = (len + 15) & ~(size_t)15;
	arrays = nf_room * sizeof(*d->mapping) +
		 (nf_room + no_room) * sizeof(char *);
	if (buf_room(&buf, &len, &cap, a0 - len + arrays) < 0)
		goto out;
	memset(buf + a0, 0, arrays);
	d->strings = buf;
	buf = NULL;
	d->mapping = (struct alloc_map_entry *)(d->strings + a0);
	names = (char **)(d->mapping + nf_room);
	d->forwarder_names = names;
	d->ost_names = names + nf_room;
	for (size_t i = 0; i < nf; i++) {
		d->mapping[i].forwarder = d->forwarders[i];
		d->mapping[i].nodes = d->strings + at[i];
		d->forwarder_names[i] = d->strings + at[nf + i];
	}
	d->n_mapping = nf;
	for (size_t i = 0; i < no; i++)
		d->ost_names[i] = d->strings + at[2 * nf + i];
	rv = 0;
out:
	hl_free(&h);
	free(buf);
	if (at != at_s)
		free(at);
	return rv;
}
