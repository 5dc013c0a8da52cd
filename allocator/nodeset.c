/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision's node sets: the per-topology index (alloc_ctx), the job's
 * node list, the blocks of the job's nodes each forwarder serves, and
 * rendering those blocks as ranged hostlists for the mapping.
 *
 * Rendering is the only string work proportional to the job: alloc_ctx
 * splits every node name once into prefix and number, so consecutive names
 * are found with integer compares and each block becomes a handful of
 * `prefix[a-b]` runs, which libslurm parses and prints.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "topology/topology.h"

#define MAX_DIGITS 18

/* ---- context ---------------------------------------------------------- */

void alloc_ctx_destroy(struct alloc_ctx *cx)
{
	int saved = errno;

	if (!cx)
		return;
	for (size_t i = 0; i < cx->n_prefixes; i++)
		free(cx->prefixes[i]);
	free(cx->prefixes);
	free(cx->prefix);
	free(cx->num);
	free(cx->pad);
	free(cx->group);
	free(cx->group_names);
	free(cx);
	errno = saved;
}

const struct topology *alloc_ctx_topology(const struct alloc_ctx *cx)
{
	return cx->t;
}

static long prefix_id(struct alloc_ctx *cx, const char *name, size_t len,
		      long hint)
{
	char **p;

	if (hint >= 0 && strlen(cx->prefixes[hint]) == len &&
	    !memcmp(cx->prefixes[hint], name, len))
		return hint;
	for (size_t i = 0; i < cx->n_prefixes; i++)
		if (strlen(cx->prefixes[i]) == len &&
		    !memcmp(cx->prefixes[i], name, len))
			return (long)i;
	p = realloc(cx->prefixes, (cx->n_prefixes + 1) * sizeof(*p));
	if (!p)
		return -1;
	cx->prefixes = p;
	if (!(p[cx->n_prefixes] = strndup(name, len)))
		return -1;
	return (long)cx->n_prefixes++;
}

struct alloc_ctx *alloc_ctx_create(const struct topology *t, fwd_error_t *err)
{
	struct alloc_ctx *cx = calloc(1, sizeof(*cx));
	size_t n = t->n_nodes ? t->n_nodes : 1;
	long hint = -1;

	if (!cx)
		goto nomem;
	cx->t = t;
	cx->prefix = malloc(n * sizeof(*cx->prefix));
	cx->num = malloc(n * sizeof(*cx->num));
	cx->pad = malloc(n);
	cx->group = malloc((t->n_forwarders + 1) * sizeof(*cx->group));
	cx->group_names =
		malloc((t->n_forwarders + 1) * sizeof(*cx->group_names));
	if (!cx->prefix || !cx->num || !cx->pad || !cx->group ||
	    !cx->group_names)
		goto nomem;
	for (size_t id = 0; id < t->n_nodes; id++) {
		const char *name = t->node_names[id];
		size_t len = strlen(name), d = len;

		while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
			d--;
		if (d == len || len - d > MAX_DIGITS) {
			cx->pad[id] = ALLOC_NO_DIGITS;
			cx->num[id] = 0;
			d = len;
		} else {
			cx->pad[id] = (name[d] == '0' && len - d > 1)
					      ? (uint8_t)(len - d)
					      : 0;
			cx->num[id] = strtoull(name + d, NULL, 10);
		}
		hint = prefix_id(cx, name, d, hint);
		if (hint < 0)
			goto nomem;
		cx->prefix[id] = (uint32_t)hint;
	}
	for (size_t f = 0; f < t->n_forwarders; f++) {
		const char *g = t->forwarders[f].group;
		size_t k;

		for (k = 0; k < cx->n_groups; k++)
			if (!strcmp(cx->group_names[k], g))
				break;
		if (k == cx->n_groups)
			cx->group_names[cx->n_groups++] = (char *)g;
		cx->group[f] = (uint32_t)k;
	}
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

/* ---- blocks ----------------------------------------------------------- */

int alloc_blocks_balanced(struct alloc_decision *d, size_t n_nodes)
{
	size_t k = d->n_forwarders, first = 0;

	free(d->blocks);
	d->n_blocks = 0;
	d->blocks = malloc((k ? k : 1) * sizeof(*d->blocks));
	if (!d->blocks)
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

	free(d->blocks);
	d->n_blocks = 0;
	if (!(d->blocks = malloc(cap * sizeof(*d->blocks))))
		return -1;
	for (size_t i = 0; i < n_nodes; i++) {
		uint32_t f = (uint32_t)nf[node_ids[i]];

		if (subst)
			f = subst[f];
		if (d->n_blocks && d->blocks[d->n_blocks - 1].forwarder == f) {
			d->blocks[d->n_blocks - 1].count++;
			continue;
		}
		if (d->n_blocks == cap) {
			void *p = realloc(d->blocks,
					  cap * 2 * sizeof(*d->blocks));

			if (!p)
				return -1;
			d->blocks = p;
			cap *= 2;
		}
		d->blocks[d->n_blocks++] = (struct alloc_block){i, 1, f};
	}
	return 0;
}

/* ---- rendering -------------------------------------------------------- */

struct strbuf {
	char *s;
	size_t len, cap;
};

static int sb_add(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int sb_add(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt,
			      ap);
		va_end(ap);
		if (n < 0)
			return -1;
		if (b->s && (size_t)n < room) {
			b->len += (size_t)n;
			return 0;
		}
		size_t cap = (b->cap + (size_t)n + 64) * 2;
		char *p = realloc(b->s, cap);

		if (!p)
			return -1;
		b->s = p;
		b->cap = cap;
	}
}

/* Append the run of node ids [a..b] (consecutive names) as text that
 * libslurm parses back: the name itself, or prefix[from-to]. */
static int sb_run(struct strbuf *b, const struct alloc_ctx *cx, uint32_t a,
		  uint32_t z, size_t len)
{
	const char *sep = b->len ? "," : "";
	int pad = cx->pad[a];

	if (len == 1)
		return sb_add(b, "%s%s", sep, cx->t->node_names[a]);
	return sb_add(b, "%s%s[%0*llu-%0*llu]", sep,
		      cx->prefixes[cx->prefix[a]], pad,
		      (unsigned long long)cx->num[a], pad,
		      (unsigned long long)cx->num[z]);
}

static bool follows(const struct alloc_ctx *cx, uint32_t prev, uint32_t next)
{
	return cx->pad[prev] != ALLOC_NO_DIGITS &&
	       cx->pad[next] == cx->pad[prev] &&
	       cx->prefix[next] == cx->prefix[prev] &&
	       cx->num[next] == cx->num[prev] + 1;
}

/* Ranged hostlist of the job's nodes in the blocks served by `fwd`.
 * Built from name runs and normalised by libslurm; should its count ever
 * disagree, fall back to pushing every name. */
static char *render_nodes(const struct alloc_ctx *cx, const uint32_t *ids,
			  const struct alloc_decision *d, uint32_t fwd)
{
	struct strbuf b = {0};
	hostlist_t hl = NULL;
	size_t total = 0;
	char *out = NULL;

	for (size_t k = 0; k < d->n_blocks; k++) {
		const struct alloc_block *bl = &d->blocks[k];
		size_t i = bl->first, end = bl->first + bl->count;

		if (bl->forwarder != fwd)
			continue;
		total += bl->count;
		while (i < end) {
			size_t j = i;

			while (j + 1 < end && follows(cx, ids[j], ids[j + 1]))
				j++;
			if (sb_run(&b, cx, ids[i], ids[j], j - i + 1) < 0)
				goto out;
			i = j + 1;
		}
	}
	if (!b.s)
		goto out;
	hl = slurm_hostlist_create(b.s);
	if (!hl || (size_t)slurm_hostlist_count(hl) != total) {
		if (hl)
			slurm_hostlist_destroy(hl);
		if (!(hl = slurm_hostlist_create(NULL)))
			goto out;
		for (size_t k = 0; k < d->n_blocks; k++) {
			const struct alloc_block *bl = &d->blocks[k];

			if (bl->forwarder != fwd)
				continue;
			for (size_t i = bl->first; i < bl->first + bl->count;
			     i++)
				slurm_hostlist_push_host(
					hl, cx->t->node_names[ids[i]]);
		}
	}
	out = slurm_hostlist_ranged_string_malloc(hl);
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	free(b.s);
	return out;
}

int alloc_render(const struct alloc_ctx *cx, const uint32_t *node_ids,
		 struct alloc_decision *d)
{
	const struct topology *t = cx->t;

	d->mapping = calloc(d->n_forwarders ? d->n_forwarders : 1,
			    sizeof(*d->mapping));
	d->forwarder_names =
		calloc(d->n_forwarders ? d->n_forwarders : 1, sizeof(char *));
	d->ost_names = calloc(d->n_excluded_osts ? d->n_excluded_osts : 1,
			      sizeof(char *));
	if (!d->mapping || !d->forwarder_names || !d->ost_names)
		return -1;
	for (size_t i = 0; i < d->n_forwarders; i++) {
		uint32_t f = d->forwarders[i];

		if (!(d->forwarder_names[i] = strdup(t->forwarders[f].name)))
			return -1;
		d->mapping[i].forwarder = f;
		d->mapping[i].nodes = render_nodes(cx, node_ids, d, f);
		if (!d->mapping[i].nodes)
			return -1;
		d->n_mapping++;
	}
	for (size_t i = 0; i < d->n_excluded_osts; i++)
		if (!(d->ost_names[i] =
			      strdup(t->osts[d->excluded_osts[i]].name)))
			return -1;
	return 0;
}
