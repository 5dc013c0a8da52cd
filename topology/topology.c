/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Topology builder, node index and lookups.  The YAML loader
 * (topology_load.c) drives the builder; tests use it directly.
 *
 * Node lists are expanded with libslurm's hostlist API.  Nodes get dense
 * ids in declaration order; an open-addressing hash maps names to ids so a
 * lookup costs one hash and usually one string compare.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <jansson.h>

#include "common/slurm_compat.h"
#include "topology/names.h"
#include "topology/topology.h"

/* Forwarders or OSTs by name: open addressing over their indexes. */
struct name_index {
	int32_t *slots; /* index or -1; capacity a power of two */
	size_t cap;
};

struct topo_priv {
	int32_t *slots; /* node id or -1; capacity is a power of two */
	size_t cap;
	size_t node_cap;  /* allocated length of node_names/node_forwarder */
	char *names_blob; /* node names adopted in one block (topo_adopt_nodes)
			   */
	struct topo_names_store names; /* topo_names() */
	bool have_names;
	/* Nodes adopted from a mapped cache file: names_blob,
	 * node_forwarder, slots and the names' arrays live in it. */
	void *map;
	size_t map_len;
	struct name_index fwd_index, ost_index;
};

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static int index_rebuild(struct topology *t, size_t cap)
{
	struct topo_priv *p = t->priv;
	int32_t *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < cap; i++)
		slots[i] = -1;
	for (size_t id = 0; id < t->n_nodes; id++) {
		size_t i = hash_name(t->node_names[id]) & (cap - 1);

		while (slots[i] >= 0)
			i = (i + 1) & (cap - 1);
		slots[i] = (int32_t)id;
	}
	free(p->slots);
	p->slots = slots;
	p->cap = cap;
	return 0;
}

/* The name of entry i of an array of structs whose first member is the
 * name (struct topo_forwarder, struct topo_ost). */
static const char *entry_name(const void *base, size_t stride, size_t i)
{
	return *(char *const *)(const void *)((const char *)base + i * stride);
}

static long name_index_find(const struct name_index *x, const void *base,
			    size_t stride, const char *name)
{
	size_t i;

	if (!x->cap || !name)
		return -1;
	i = hash_name(name) & (x->cap - 1);
	while (x->slots[i] >= 0) {
		if (!strcmp(entry_name(base, stride, (size_t)x->slots[i]),
			    name))
			return x->slots[i];
		i = (i + 1) & (x->cap - 1);
	}
	return -1;
}

/* Entry n - 1 was appended: index it (rebuilt when half full). */
static int name_index_add(struct name_index *x, const void *base, size_t stride,
			  size_t n)
{
	size_t first = n - 1, i;

	if (2 * n > x->cap) {
		size_t cap = x->cap ? x->cap * 4 : 64;
		int32_t *slots = malloc(cap * sizeof(*slots));

		if (!slots)
			return -1;
		free(x->slots);
		x->slots = slots;
		x->cap = cap;
		for (i = 0; i < cap; i++)
			slots[i] = -1;
		first = 0;
	}
	for (size_t k = first; k < n; k++) {
		i = hash_name(entry_name(base, stride, k)) & (x->cap - 1);
		while (x->slots[i] >= 0)
			i = (i + 1) & (x->cap - 1);
		x->slots[i] = (int32_t)k;
	}
	return 0;
}

long topo_node_id(const struct topology *t, const char *node)
{
	const struct topo_priv *p;
	size_t i;

	if (!t || !node || !(p = t->priv) || !p->cap)
		return -1;
	i = hash_name(node) & (p->cap - 1);
	while (p->slots[i] >= 0) {
		if (!strcmp(t->node_names[p->slots[i]], node))
			return p->slots[i];
		i = (i + 1) & (p->cap - 1);
	}
	return -1;
}

struct topology *topo_create(void)
{
	struct topology *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->priv = calloc(1, sizeof(struct topo_priv));
	if (!t->priv) {
		free(t);
		return NULL;
	}
	return t;
}

static void forwarder_free(struct topo_forwarder *f)
{
	free(f->name);
	free(f->address);
	free(f->nid);
	free(f->group);
}

void topo_destroy(struct topology *t)
{
	int saved = errno;
	struct topo_priv *p;

	if (!t)
		return;
	for (size_t i = 0; i < t->n_forwarders; i++)
		forwarder_free(&t->forwarders[i]);
	free(t->forwarders);
	for (size_t i = 0; i < t->n_osts; i++)
		free(t->osts[i].name);
	free(t->osts);
	for (size_t i = 0; i < t->n_mapping; i++)
		free(t->mapping[i].nodes);
	free(t->mapping);
	p = t->priv;
	for (size_t i = 0; i < t->n_nodes && !(p && p->names_blob); i++)
		free(t->node_names[i]);
	free(t->node_names);
	if (!p || !p->map)
		free(t->node_forwarder);
	if (p) {
		if (!p->map) {
			free(p->slots);
			free(p->names_blob);
		}
		topo_names_free(&p->names);
		free(p->fwd_index.slots);
		free(p->ost_index.slots);
		if (p->map)
			munmap(p->map, p->map_len);
	}
	free(p);
	free(t->path);
	free(t);
	errno = saved;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

long topo_forwarder_index(const struct topology *t, const char *name)
{
	const struct topo_priv *p = t ? t->priv : NULL;

	return p ? name_index_find(&p->fwd_index, t->forwarders,
				   sizeof(*t->forwarders), name)
		 : -1;
}

long topo_ost_index(const struct topology *t, const char *name)
{
	const struct topo_priv *p = t ? t->priv : NULL;

	return p ? name_index_find(&p->ost_index, t->osts, sizeof(*t->osts),
				   name)
		 : -1;
}

long topo_node_default(const struct topology *t, const char *node)
{
	long id = topo_node_id(t, node);

	if (id < 0 || t->node_forwarder[id] < 0)
		return -1;
	return t->node_forwarder[id];
}

int topo_add_forwarder(struct topology *t, const struct topo_forwarder *f,
		       fwd_error_t *err)
{
	struct topo_forwarder *v, n = {0};

	if (!f->name || !*f->name) {
		errno = EINVAL;
		return errprintf(err, "forwarder without a name");
	}
	if (topo_forwarder_index(t, f->name) >= 0) {
		errno = EEXIST;
		return errprintf(err, "forwarder '%s' is defined twice",
				 f->name);
	}
	if (!(f->bandwidth_bps > 0)) {
		errno = EINVAL;
		return errprintf(err,
				 "forwarder '%s': bandwidth must be positive",
				 f->name);
	}
	v = realloc(t->forwarders, (t->n_forwarders + 1) * sizeof(*v));
	if (!v)
		return errprintf(err, "out of memory");
	t->forwarders = v;
	n.name = strdup(f->name);
	n.address = dup_or_null(f->address ? f->address : f->name);
	n.nid = dup_or_null(f->nid);
	n.group = strdup(f->group && *f->group ? f->group : "default");
	n.bandwidth_bps = f->bandwidth_bps;
	n.role = f->role;
	if (!n.name || !n.address || !n.group || (f->nid && !n.nid)) {
		forwarder_free(&n);
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	t->forwarders[t->n_forwarders++] = n;
	if (name_index_add(&((struct topo_priv *)t->priv)->fwd_index,
			   t->forwarders, sizeof(*t->forwarders),
			   t->n_forwarders) < 0) {
		forwarder_free(&t->forwarders[--t->n_forwarders]);
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	return 0;
}

int topo_add_ost(struct topology *t, const struct topo_ost *o, fwd_error_t *err)
{
	struct topo_ost *v;
	char *name;

	if (!o->name || !*o->name) {
		errno = EINVAL;
		return errprintf(err, "OST without a name");
	}
	if (topo_ost_index(t, o->name) >= 0) {
		errno = EEXIST;
		return errprintf(err, "OST '%s' is defined twice", o->name);
	}
	if (!(o->bandwidth_bps > 0)) {
		errno = EINVAL;
		return errprintf(err, "OST '%s': bandwidth must be positive",
				 o->name);
	}
	v = realloc(t->osts, (t->n_osts + 1) * sizeof(*v));
	if (!v)
		return errprintf(err, "out of memory");
	t->osts = v;
	if (!(name = strdup(o->name)))
		return errprintf(err, "out of memory");
	t->osts[t->n_osts].name = name;
	t->osts[t->n_osts].bandwidth_bps = o->bandwidth_bps;
	t->n_osts++;
	if (name_index_add(&((struct topo_priv *)t->priv)->ost_index, t->osts,
			   sizeof(*t->osts), t->n_osts) < 0) {
		free(t->osts[--t->n_osts].name);
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	return 0;
}

/* Append one node; the index is rebuilt when it is more than half full. */
static int add_node(struct topology *t, const char *name, fwd_error_t *err)
{
	struct topo_priv *p = t->priv;
	size_t id = t->n_nodes, i;
	char *copy;

	if (p->names_blob) {
		errno = EPERM;
		return errprintf(err, "no compute node can be added to "
				      "adopted ones");
	}
	if (topo_node_id(t, name) >= 0) {
		errno = EEXIST;
		return errprintf(err, "compute node '%s' is declared twice",
				 name);
	}
	if (id == p->node_cap) {
		size_t cap = p->node_cap ? p->node_cap * 2 : 1024;
		char **names = realloc(t->node_names, cap * sizeof(*names));
		int32_t *fw;

		if (!names)
			return errprintf(err, "out of memory");
		t->node_names = names;
		fw = realloc(t->node_forwarder, cap * sizeof(*fw));
		if (!fw)
			return errprintf(err, "out of memory");
		t->node_forwarder = fw;
		p->node_cap = cap;
	}
	if (!(copy = strdup(name)))
		return errprintf(err, "out of memory");
	t->node_names[id] = copy;
	t->node_forwarder[id] = -1;
	t->n_nodes++;
	if (2 * t->n_nodes > p->cap) {
		/* Doubled: at most half full, at least a quarter (the
		 * compiled cache stores the slots as they are). */
		if (index_rebuild(t, p->cap ? p->cap * 2 : 4096) < 0)
			return errprintf(err, "out of memory");
		return 0;
	}
	i = hash_name(copy) & (p->cap - 1);
	while (p->slots[i] >= 0)
		i = (i + 1) & (p->cap - 1);
	p->slots[i] = (int32_t)id;
	return 0;
}

static fwd_hostlist_t parse_hostlist(const char *hosts, fwd_error_t *err)
{
	fwd_hostlist_t hl;

	if (!hosts || !*hosts) {
		errno = EINVAL;
		errprintf(err, "empty node list");
		return NULL;
	}
	hl = slurm_hostlist_create(hosts);
	if (!hl || slurm_hostlist_count(hl) <= 0) {
		if (hl)
			slurm_hostlist_destroy(hl);
		errno = EINVAL;
		errprintf(err,
			  "invalid node list '%s' (want a Slurm "
			  "hostlist such as c[1-512])",
			  hosts);
		return NULL;
	}
	return hl;
}

/*
 * libslurm is lenient with malformed brackets ("c[1-" yields odd names), so
 * every expanded name is checked against the hostname alphabet.
 */
static int check_name(const char *host, const char *list, fwd_error_t *err)
{
	if (!*host || strspn(host, "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789-_.") != strlen(host)) {
		errno = EINVAL;
		return errprintf(err,
				 "invalid node list '%s' (want a Slurm "
				 "hostlist such as c[1-512])",
				 list);
	}
	return 0;
}

int topo_add_compute_nodes(struct topology *t, const char *hostlist,
			   fwd_error_t *err)
{
	fwd_hostlist_t hl = parse_hostlist(hostlist, err);
	char *host;
	int rv = 0;

	if (!hl)
		return -1;
	while ((host = slurm_hostlist_shift(hl))) {
		if (rv == 0 && (check_name(host, hostlist, err) < 0 ||
				add_node(t, host, err) < 0))
			rv = -1;
		free(host);
	}
	slurm_hostlist_destroy(hl);
	return rv;
}

/* Append one mapping entry; nodes (malloc'd, NULL = out of memory) is
 * taken over, freed on failure. */
static int append_mapping(struct topology *t, char *nodes, size_t forwarder,
			  size_t count, fwd_error_t *err)
{
	struct topo_mapping *v;

	if (!nodes ||
	    !(v = realloc(t->mapping, (t->n_mapping + 1) * sizeof(*v)))) {
		free(nodes);
		return errprintf(err, "out of memory");
	}
	t->mapping = v;
	t->mapping[t->n_mapping].nodes = nodes;
	t->mapping[t->n_mapping].forwarder = forwarder;
	t->mapping[t->n_mapping].count = count;
	t->n_mapping++;
	return 0;
}

static int push_mapping(struct topology *t, fwd_hostlist_t hl, size_t forwarder,
			size_t count, fwd_error_t *err)
{
	return append_mapping(t, fwd_hostlist_ranged(hl), forwarder, count,
			      err);
}

void topo_node_index(const struct topology *t, const int32_t **slots,
		     size_t *cap)
{
	const struct topo_priv *p = t->priv;

	*slots = p->slots;
	*cap = p->cap;
}

int topo_adopt_nodes(struct topology *t, char *blob, char **names,
		     int32_t *forwarder, size_t n, int32_t *slots, size_t cap,
		     fwd_error_t *err)
{
	struct topo_priv *p = t->priv;
	size_t used = 0;
	int bad = 0;

	if (t->n_nodes || n == 0 || cap < 2 * n || (cap & (cap - 1)) ||
	    n > INT32_MAX) {
		errno = EINVAL;
		return errprintf(err, "node index: %zu nodes, %zu slots", n,
				 cap);
	}
	/* Branch-free scans (these arrays are the bulk of the compiled
	 * cache); the first bad entry is looked for only on failure. */
	for (size_t i = 0; i < n; i++)
		bad |= (forwarder[i] < -1) |
		       (forwarder[i] >= (int32_t)t->n_forwarders);
	for (size_t i = 0; bad && i < n; i++)
		if (forwarder[i] < -1 ||
		    forwarder[i] >= (long)t->n_forwarders) {
			errno = EINVAL;
			return errprintf(err, "node %zu: forwarder %d", i,
					 forwarder[i]);
		}
	for (size_t i = 0; i < cap; i++) {
		bad |= (slots[i] < -1) | (slots[i] >= (int32_t)n);
		used += slots[i] >= 0;
	}
	if (bad) {
		errno = EINVAL;
		return errprintf(err, "node index: a slot out of range");
	}
	if (used != n) {
		errno = EINVAL;
		return errprintf(err, "node index: %zu entries for %zu nodes",
				 used, n);
	}
	free(p->slots);
	p->slots = slots;
	p->cap = cap;
	p->names_blob = blob;
	p->node_cap = n;
	t->node_names = names;
	t->node_forwarder = forwarder;
	t->n_nodes = n;
	return 0;
}

int topo_add_mapping_entry(struct topology *t, const char *nodes,
			   size_t forwarder, size_t count, fwd_error_t *err)
{
	if (forwarder >= t->n_forwarders) {
		errno = EINVAL;
		return errprintf(err, "forwarder index %zu out of range",
				 forwarder);
	}
	return append_mapping(t, strdup(nodes), forwarder, count, err);
}

int topo_add_mapping(struct topology *t, const char *hostlist, size_t forwarder,
		     fwd_error_t *err)
{
	bool declared = t->n_nodes > 0;
	fwd_hostlist_t hl, mapped = NULL;
	size_t count = 0;
	char *host = NULL;
	int rv = -1;

	if (forwarder >= t->n_forwarders) {
		errno = EINVAL;
		return errprintf(err, "forwarder index %zu out of range",
				 forwarder);
	}
	if (!(hl = parse_hostlist(hostlist, err)))
		return -1;
	if (!(mapped = slurm_hostlist_create(NULL))) {
		errprintf(err, "out of memory");
		goto out;
	}
	while ((host = slurm_hostlist_shift(hl))) {
		long id = topo_node_id(t, host);

		if (check_name(host, hostlist, err) < 0)
			goto out;
		if (id < 0 && declared) {
			errno = ENOENT;
			errprintf(err,
				  "node '%s' is not a declared compute "
				  "node",
				  host);
			goto out;
		}
		if (id < 0) {
			if (add_node(t, host, err) < 0)
				goto out;
			id = (long)t->n_nodes - 1;
		}
		if (t->node_forwarder[id] >= 0) {
			errno = EEXIST;
			errprintf(err,
				  "node '%s' is mapped to both '%s' and "
				  "'%s'",
				  host,
				  t->forwarders[t->node_forwarder[id]].name,
				  t->forwarders[forwarder].name);
			goto out;
		}
		t->node_forwarder[id] = (int32_t)forwarder;
		slurm_hostlist_push_host(mapped, host);
		count++;
		free(host);
	}
	host = NULL;
	rv = push_mapping(t, mapped, forwarder, count, err);
out:
	free(host);
	if (mapped)
		slurm_hostlist_destroy(mapped);
	slurm_hostlist_destroy(hl);
	return rv;
}

int topo_map_per_forwarder(struct topology *t, size_t per_forwarder,
			   fwd_error_t *err)
{
	size_t id = 0, f = 0;

	if (per_forwarder == 0) {
		errno = EINVAL;
		return errprintf(err, "nodes_per_forwarder must be at least 1");
	}
	for (;;) {
		fwd_hostlist_t hl;
		size_t count = 0;
		int rv;

		while (id < t->n_nodes && t->node_forwarder[id] >= 0)
			id++;
		if (id == t->n_nodes)
			return 0;
		while (f < t->n_forwarders &&
		       t->forwarders[f].role != TOPO_ROLE_SERVICE)
			f++;
		if (f == t->n_forwarders) {
			size_t left = 0;

			for (size_t i = id; i < t->n_nodes; i++)
				left += t->node_forwarder[i] < 0;
			errno = ERANGE;
			return errprintf(err,
					 "%zu compute nodes from '%s' on are "
					 "left unmapped: not enough service "
					 "forwarders at %zu nodes each",
					 left, t->node_names[id],
					 per_forwarder);
		}
		if (!(hl = slurm_hostlist_create(NULL)))
			return errprintf(err, "out of memory");
		for (; id < t->n_nodes && count < per_forwarder; id++) {
			if (t->node_forwarder[id] >= 0)
				continue;
			t->node_forwarder[id] = (int32_t)f;
			slurm_hostlist_push_host(hl, t->node_names[id]);
			count++;
		}
		rv = push_mapping(t, hl, f, count, err);
		slurm_hostlist_destroy(hl);
		if (rv < 0)
			return -1;
		f++;
	}
}

int topo_finalize(struct topology *t, fwd_error_t *err)
{
	size_t unmapped = 0, first = 0;

	if (t->n_forwarders == 0) {
		errno = EINVAL;
		return errprintf(err, "no forwarders defined");
	}
	if (t->n_nodes == 0) {
		errno = EINVAL;
		return errprintf(err, "no compute nodes defined");
	}
	for (size_t i = 0; i < t->n_nodes; i++) {
		if (t->node_forwarder[i] < 0 && unmapped++ == 0)
			first = i;
	}
	if (unmapped) {
		errno = EINVAL;
		return errprintf(err,
				 "%zu compute node%s not covered by the "
				 "mapping, first '%s'",
				 unmapped, unmapped == 1 ? " is" : "s are",
				 t->node_names[first]);
	}
	return 0;
}

const struct topo_names *topo_names(const struct topology *t)
{
	/* Built on first use (what only the allocator and the cache need
	 * is not paid by every command that loads a topology); t is
	 * logically unchanged. */
	struct topo_priv *p = t->priv;

	if (!p->have_names && t->n_nodes) {
		if (topo_names_build(&p->names,
				     (const char *const *)t->node_names,
				     t->n_nodes) < 0)
			return NULL;
		p->have_names = true;
	}
	return p->have_names ? &p->names.n : NULL;
}

int topo_adopt_names(struct topology *t, const struct topo_names_store *s,
		     fwd_error_t *err)
{
	struct topo_priv *p = t->priv;

	if (p->have_names || topo_names_check(&s->n, t->n_nodes) < 0) {
		errno = EINVAL;
		return errprintf(err, "node names: index out of range");
	}
	p->names = *s;
	p->have_names = true;
	return 0;
}

void topo_adopt_mapping(struct topology *t, void *map, size_t len)
{
	struct topo_priv *p = t->priv;

	p->map = map;
	p->map_len = len;
}

static const char *role_name(enum topo_role r)
{
	return r == TOPO_ROLE_BACKUP ? "backup" : "service";
}

char *topo_to_json(const struct topology *t)
{
	json_t *root = json_object(), *fw = json_array(), *map = json_array(),
	       *osts = json_array();
	char *s = NULL;

	if (!root || !fw || !map || !osts)
		goto out;
	for (size_t i = 0; i < t->n_forwarders; i++) {
		const struct topo_forwarder *f = &t->forwarders[i];

		if (json_array_append_new(
			    fw, json_pack("{s:s, s:s, s:f, s:s, s:s}", "name",
					  f->name, "address", f->address,
					  "bandwidth_bps", f->bandwidth_bps,
					  "group", f->group, "role",
					  role_name(f->role))) < 0)
			goto out;
	}
	for (size_t i = 0; i < t->n_mapping; i++) {
		if (json_array_append_new(
			    map,
			    json_pack("{s:s, s:s}", "nodes",
				      t->mapping[i].nodes, "forwarder",
				      t->forwarders[t->mapping[i].forwarder]
					      .name)) < 0)
			goto out;
	}
	for (size_t i = 0; i < t->n_osts; i++) {
		if (json_array_append_new(
			    osts, json_pack("{s:s, s:f}", "name",
					    t->osts[i].name, "bandwidth_bps",
					    t->osts[i].bandwidth_bps)) < 0)
			goto out;
	}
	json_object_set(root, "forwarders", fw);
	json_object_set(root, "mapping", map);
	json_object_set(root, "osts", osts);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
out:
	json_decref(fw);
	json_decref(map);
	json_decref(osts);
	json_decref(root);
	if (!s)
		errno = ENOMEM;
	return s;
}
