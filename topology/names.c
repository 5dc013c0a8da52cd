/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node names split into prefix + numeric suffix (topology.h,
 * topo_names()): built once per topology from the names, or taken over
 * from the compiled cache (topo_cache.c) as it is stored.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "topology/names.h"

void topo_names_free(struct topo_names_store *s)
{
	for (size_t i = 0; i < s->n.n_prefixes && !s->borrowed; i++)
		free((char *)s->n.prefixes[i]);
	free((char **)s->n.prefixes);
	for (size_t k = 0; k < s->n.n_classes && !s->borrowed; k++)
		free((int32_t *)s->n.classes[k].id);
	free((struct topo_numclass *)s->n.classes);
	if (!s->borrowed) {
		free((uint32_t *)s->n.prefix);
		free((uint64_t *)s->n.num);
		free((uint8_t *)s->n.pad);
		free((uint8_t *)s->n.width);
		free((uint8_t *)s->n.follow);
	}
	memset(s, 0, sizeof(*s));
}

static long prefix_id(char ***prefixes, size_t *n, const char *name, size_t len,
		      long hint)
{
	char **p = *prefixes;

	if (hint >= 0 && !strncmp(p[hint], name, len) && !p[hint][len])
		return hint;
	for (size_t i = 0; i < *n; i++)
		if (!strncmp(p[i], name, len) && !p[i][len])
			return (long)i;
	if (!(p = realloc(p, (*n + 1) * sizeof(*p))))
		return -1;
	*prefixes = p;
	if (!(p[*n] = strndup(name, len)))
		return -1;
	return (long)(*n)++;
}

static struct topo_numclass *class_of(struct topo_numclass *c, size_t n,
				      uint32_t prefix, uint8_t pad)
{
	for (size_t k = 0; k < n; k++)
		if (c[k].prefix == prefix && c[k].pad == pad)
			return &c[k];
	return NULL;
}

/* The number -> id tables, one per (prefix, width) dense enough. */
static int index_numbers(struct topo_names_store *s, size_t n_nodes)
{
	struct topo_names *nm = &s->n;
	struct topo_numclass *classes = NULL, *c = NULL;
	size_t n = 0, cap = 0;

	for (size_t id = 0; id < n_nodes; id++) {
		uint8_t pad = nm->pad[id];
		uint64_t num = nm->num[id];

		if (pad == TOPO_NO_DIGITS)
			continue;
		if (!c || c->prefix != nm->prefix[id] || c->pad != pad)
			c = class_of(classes, n, nm->prefix[id], pad);
		if (!c) {
			if (FWD_GROW(classes, cap, n + 1, 4) < 0)
				goto nomem;
			c = &classes[n++];
			*c = (struct topo_numclass){
				nm->prefix[id], pad, num, num, 0, NULL};
		}
		if (num < c->lo)
			c->lo = num;
		if (num > c->hi)
			c->hi = num;
		c->count++;
	}
	nm->classes = classes;
	nm->n_classes = n;
	for (size_t k = 0; k < n; k++) {
		int32_t *id;

		c = &classes[k];
		if (c->hi - c->lo > 4 * c->count + 64)
			continue;
		if (!(id = malloc((c->hi - c->lo + 1) * sizeof(*id))))
			return -1;
		memset(id, 0xff, (c->hi - c->lo + 1) * sizeof(*id));
		c->id = id;
	}
	c = NULL;
	for (size_t id = 0; id < n_nodes; id++) {
		if (nm->pad[id] == TOPO_NO_DIGITS)
			continue;
		if (!c || c->prefix != nm->prefix[id] || c->pad != nm->pad[id])
			c = class_of(classes, n, nm->prefix[id], nm->pad[id]);
		if (c && c->id)
			((int32_t *)c->id)[nm->num[id] - c->lo] = (int32_t)id;
	}
	return 0;
nomem:
	free(classes);
	return -1;
}

int topo_names_build(struct topo_names_store *s, const char *const *names,
		     size_t n_nodes)
{
	size_t n = n_nodes ? n_nodes : 1, n_prefixes = 0;
	uint32_t *prefix = malloc(n * sizeof(*prefix));
	uint64_t *num = malloc(n * sizeof(*num));
	uint8_t *pad = malloc(n), *width = malloc(n), *follow = calloc(n, 1);
	char **prefixes = NULL;
	long hint = -1;

	memset(s, 0, sizeof(*s));
	s->n.prefix = prefix;
	s->n.num = num;
	s->n.pad = pad;
	s->n.width = width;
	s->n.follow = follow;
	if (!prefix || !num || !pad || !width || !follow)
		goto nomem;
	for (size_t id = 0; id < n_nodes; id++) {
		const char *name = names[id];
		size_t len = strlen(name), d = len;
		uint64_t v = 0;

		while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
			d--;
		if (len - d > TOPO_MAX_DIGITS)
			s->n.long_suffix = true;
		if (d == len || len - d > TOPO_MAX_DIGITS) {
			pad[id] = TOPO_NO_DIGITS;
			num[id] = 0;
			d = len;
		} else {
			pad[id] = (name[d] == '0' && len - d > 1)
					  ? (uint8_t)(len - d)
					  : 0;
			for (size_t k = d; k < len; k++)
				v = v * 10 + (uint64_t)(name[k] - '0');
			num[id] = v;
		}
		width[id] = (uint8_t)(len - d);
		hint = prefix_id(&prefixes, &n_prefixes, name, d, hint);
		s->n.prefixes = (const char *const *)prefixes;
		s->n.n_prefixes = n_prefixes;
		if (hint < 0)
			goto nomem;
		prefix[id] = (uint32_t)hint;
	}
	for (size_t id = 0; id + 1 < n_nodes; id++)
		follow[id] = pad[id] != TOPO_NO_DIGITS &&
			     pad[id + 1] != TOPO_NO_DIGITS &&
			     prefix[id + 1] == prefix[id] &&
			     width[id + 1] == width[id] &&
			     num[id + 1] == num[id] + 1;
	if (index_numbers(s, n_nodes) < 0)
		goto nomem;
	return 0;
nomem:
	topo_names_free(s);
	errno = ENOMEM;
	return -1;
}

int topo_names_check(const struct topo_names *nm, size_t n_nodes)
{
	uint8_t bad = 0;

	for (size_t id = 0; id < n_nodes; id++) {
		bad |= nm->prefix[id] >= nm->n_prefixes;
		bad |= nm->pad[id] != TOPO_NO_DIGITS &&
		       nm->pad[id] > TOPO_MAX_DIGITS;
		bad |= nm->width[id] > TOPO_MAX_DIGITS;
		bad |= nm->follow[id] > 1;
	}
	if (n_nodes && nm->follow[n_nodes - 1])
		bad = 1;
	for (size_t k = 0; k < nm->n_classes && !bad; k++) {
		const struct topo_numclass *c = &nm->classes[k];

		if (c->prefix >= nm->n_prefixes || c->lo > c->hi ||
		    (c->id && c->hi - c->lo >= n_nodes * 4 + 65))
			return -1;
		for (uint64_t v = 0; c->id && v <= c->hi - c->lo; v++)
			bad |= c->id[v] < -1 || c->id[v] >= (int64_t)n_nodes;
	}
	return bad ? -1 : 0;
}
