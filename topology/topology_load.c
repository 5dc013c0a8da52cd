/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The topology YAML (etc/topology.yaml) into the builder of topology.c.
 *
 *   forwarders:           # required, file order = index order
 *     - {name: fwd001, address: 10.0.0.1, bandwidth: 2.5GB/s,
 *        group: cab0, role: service, nid: 10.0.0.1@o2ib}
 *   osts:                 # optional
 *     - {name: lustre-OST0000, bandwidth: 1.2GB/s}
 *   compute_nodes: c[1-1024]          # required: a hostlist or a list
 *   mapping:                          # explicit default forwarders ...
 *     - {nodes: "c[1-256]", forwarder: fwd001}
 *   nodes_per_forwarder: 256          # ... and/or the rest, in order
 *
 * The builder names the node or forwarder at fault; this file adds the
 * file:line:column and key path of the entry that caused it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "common/yamldoc.h"
#include "topology/topology.h"

struct tloader {
	const struct ydoc *doc;
	struct topology *t;
	fwd_error_t *err;
};

static int terr(struct tloader *l, const struct ydoc_node *n, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

static int terr(struct tloader *l, const struct ydoc_node *n, const char *fmt,
		...)
{
	va_list ap;

	va_start(ap, fmt);
	ydoc_vpath_error(l->err, l->doc, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A builder error: its message, placed at node n. */
static int berr(struct tloader *l, const struct ydoc_node *n,
		const fwd_error_t *berr_text)
{
	int saved = errno;

	terr(l, n, "%s", berr_text->text);
	errno = saved ? saved : EINVAL;
	return -1;
}

static int verr(struct tloader *l, const struct ydoc_node *n,
		const char *allowed)
{
	if (n->kind != YDOC_SCALAR)
		return terr(l, n, "value is %s; expected %s", ydoc_kind_name(n),
			    allowed);
	if (ydoc_is_null(n))
		return terr(l, n, "value is empty; expected %s", allowed);
	return terr(l, n, "value '%s': expected %s", n->value, allowed);
}

/* Every key of map must be one of keys (a NULL-terminated list). */
static int check_keys(struct tloader *l, const struct ydoc_node *map,
		      const char *const *keys, const char *keys_text)
{
	for (size_t i = 0; i < map->n_pairs; i++) {
		const struct ydoc_node *k = map->pairs[i].key;
		bool known = false;

		for (size_t j = 0; keys[j]; j++)
			known |= !strcmp(k->value, keys[j]);
		if (!known)
			return terr(l, k, "unknown key; allowed keys: %s",
				    keys_text);
	}
	return 0;
}

/* A required or optional (when `required` is false) non-empty string. */
static int get_string(struct tloader *l, const struct ydoc_node *map,
		      const char *key, bool required, const char **out)
{
	const struct ydoc_node *n = ydoc_get(map, key);

	*out = NULL;
	if (!n) {
		if (!required)
			return 0;
		return terr(l, map, "missing key '%s'", key);
	}
	if (!required && ydoc_is_null(n))
		return 0;
	if (n->kind != YDOC_SCALAR || ydoc_is_null(n) || !*n->value)
		return verr(l, n, "a non-empty string");
	*out = n->value;
	return 0;
}

/*
 * Forwarder and OST names travel into decisions, audit records, remap
 * driver arguments and environment variables: keep them to a plain
 * alphabet so none of those can be surprised.
 */
static int check_name(struct tloader *l, const struct ydoc_node *map,
		      const char *key)
{
	const struct ydoc_node *n = ydoc_get(map, key);
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789._-";

	if (!n || n->kind != YDOC_SCALAR)
		return 0;
	if (strspn(n->value, alphabet) != strlen(n->value) ||
	    strlen(n->value) > 64)
		return terr(l, n,
			    "value '%s': expected a name of at most 64 "
			    "letters, digits, '.', '_' and '-'",
			    n->value);
	return 0;
}

/*
 * The address and NID of a forwarder reach remap state files (one
 * key=value a line), the remap drivers' argument vectors and the
 * database: host-name characters only, and nothing an option parser
 * could take for an option.
 */
static int check_word(struct tloader *l, const struct ydoc_node *map,
		      const char *key, const char *extra, size_t max,
		      const char *what)
{
	const struct ydoc_node *n = ydoc_get(map, key);
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789";
	size_t len;

	if (!n || n->kind != YDOC_SCALAR)
		return 0;
	len = strlen(n->value);
	/* i < len: never the NUL, which strchr() would find. */
	for (size_t i = 0; i < len; i++)
		if (!strchr(alnum, n->value[i]) && !strchr(extra, n->value[i]))
			goto bad;
	if (len <= max && n->value[0] != '-')
		return 0;
bad:
	return terr(l, n, "value '%s': expected %s", n->value, what);
}

static int get_bandwidth(struct tloader *l, const struct ydoc_node *map,
			 double *out)
{
	const struct ydoc_node *n = ydoc_get(map, "bandwidth");
	fwd_error_t uerr;

	if (!n)
		return terr(l, map, "missing key 'bandwidth'");
	if (n->kind != YDOC_SCALAR || ydoc_is_null(n))
		return verr(l, n, "a rate, e.g. 2.5GB/s");
	if (units_parse_rate(n->value, out, &uerr))
		return terr(l, n, "%s", uerr.text);
	if (!(*out > 0))
		return terr(l, n, "value '%s': expected a rate greater than 0",
			    n->value);
	return 0;
}

static int load_forwarders(struct tloader *l, const struct ydoc_node *seq)
{
	static const char *const keys[] = {
		"name", "address", "bandwidth", "group", "role", "nid", NULL};
	static const char keys_text[] =
		"name, address, bandwidth, group, role, nid";

	if (!seq)
		return terr(l, l->doc->root,
			    "missing key 'forwarders' (a list of {name, "
			    "address, bandwidth, group, role})");
	if (seq->kind != YDOC_SEQUENCE || !seq->n_items)
		return verr(l, seq,
			    "a non-empty list of forwarders {name, address, "
			    "bandwidth, group, role}");
	for (size_t i = 0; i < seq->n_items; i++) {
		const struct ydoc_node *m = seq->items[i], *role;
		struct topo_forwarder f = {0};
		const char *name, *address, *group, *nid;
		fwd_error_t e;

		if (m->kind != YDOC_MAPPING)
			return verr(l, m,
				    "a forwarder {name, address, bandwidth, "
				    "group, role}");
		if (check_keys(l, m, keys, keys_text) ||
		    get_string(l, m, "name", true, &name) ||
		    check_name(l, m, "name") ||
		    get_string(l, m, "address", false, &address) ||
		    check_word(l, m, "address", ".-_:%", 253,
			       "an IP address or host name of at most 253 "
			       "letters, digits, '.', '-', '_', ':' and '%', "
			       "not starting with '-'") ||
		    get_string(l, m, "group", false, &group) ||
		    check_name(l, m, "group") ||
		    get_string(l, m, "nid", false, &nid) ||
		    check_word(l, m, "nid", ".@:_-", 128,
			       "an LNet NID of at most 128 letters, digits, "
			       "'.', '@', ':', '_' and '-', not starting with "
			       "'-'") ||
		    get_bandwidth(l, m, &f.bandwidth_bps))
			return -1;
		if (!(role = ydoc_get(m, "role")))
			return terr(l, m,
				    "missing key 'role' (service or "
				    "backup)");
		if (role->kind == YDOC_SCALAR &&
		    !strcmp(role->value, "service"))
			f.role = TOPO_ROLE_SERVICE;
		else if (role->kind == YDOC_SCALAR &&
			 !strcmp(role->value, "backup"))
			f.role = TOPO_ROLE_BACKUP;
		else
			return verr(l, role, "one of service, backup");
		f.name = (char *)name;
		f.address = (char *)address;
		f.group = (char *)group;
		f.nid = (char *)nid;
		if (topo_add_forwarder(l->t, &f, &e))
			return berr(l, ydoc_get(m, "name"), &e);
	}
	return 0;
}

static int load_osts(struct tloader *l, const struct ydoc_node *seq)
{
	static const char *const keys[] = {"name", "bandwidth", NULL};

	if (!seq || ydoc_is_null(seq))
		return 0;
	if (seq->kind != YDOC_SEQUENCE)
		return verr(l, seq, "a list of OSTs {name, bandwidth}");
	for (size_t i = 0; i < seq->n_items; i++) {
		const struct ydoc_node *m = seq->items[i];
		struct topo_ost o = {0};
		const char *name;
		fwd_error_t e;

		if (m->kind != YDOC_MAPPING)
			return verr(l, m, "an OST {name, bandwidth}");
		if (check_keys(l, m, keys, "name, bandwidth") ||
		    get_string(l, m, "name", true, &name) ||
		    check_name(l, m, "name") ||
		    get_bandwidth(l, m, &o.bandwidth_bps))
			return -1;
		o.name = (char *)name;
		if (topo_add_ost(l->t, &o, &e))
			return berr(l, ydoc_get(m, "name"), &e);
	}
	return 0;
}

static int add_nodes(struct tloader *l, const struct ydoc_node *n)
{
	fwd_error_t e;

	if (n->kind != YDOC_SCALAR || ydoc_is_null(n) || !*n->value)
		return verr(l, n, "a Slurm hostlist such as c[1-1024]");
	if (topo_add_compute_nodes(l->t, n->value, &e))
		return berr(l, n, &e);
	return 0;
}

static int load_compute_nodes(struct tloader *l, const struct ydoc_node *n)
{
	if (!n)
		return terr(l, l->doc->root,
			    "missing key 'compute_nodes' (a Slurm hostlist "
			    "such as c[1-1024], or a list of them)");
	if (n->kind != YDOC_SEQUENCE)
		return add_nodes(l, n);
	if (!n->n_items)
		return verr(l, n,
			    "a Slurm hostlist such as c[1-1024], or a "
			    "non-empty list of them");
	for (size_t i = 0; i < n->n_items; i++)
		if (add_nodes(l, n->items[i]))
			return -1;
	return 0;
}

static int load_mapping(struct tloader *l, const struct ydoc_node *seq)
{
	static const char *const keys[] = {"nodes", "forwarder", NULL};

	if (!seq || ydoc_is_null(seq))
		return 0;
	if (seq->kind != YDOC_SEQUENCE)
		return verr(l, seq,
			    "a list of {nodes: HOSTLIST, forwarder: NAME}");
	for (size_t i = 0; i < seq->n_items; i++) {
		const struct ydoc_node *m = seq->items[i], *fn;
		const char *nodes, *fwd;
		fwd_error_t e;
		long idx;

		if (m->kind != YDOC_MAPPING)
			return verr(l, m,
				    "a mapping {nodes: HOSTLIST, forwarder: "
				    "NAME}");
		if (check_keys(l, m, keys, "nodes, forwarder") ||
		    get_string(l, m, "nodes", true, &nodes) ||
		    get_string(l, m, "forwarder", true, &fwd))
			return -1;
		fn = ydoc_get(m, "forwarder");
		if ((idx = topo_forwarder_index(l->t, fwd)) < 0)
			return terr(l, fn,
				    "value '%s': unknown forwarder; expected "
				    "the name of a forwarder defined under "
				    "forwarders",
				    fwd);
		if (topo_add_mapping(l->t, nodes, (size_t)idx, &e))
			return berr(l, ydoc_get(m, "nodes"), &e);
	}
	return 0;
}

static int load_per_forwarder(struct tloader *l, const struct ydoc_node *n)
{
	fwd_error_t e;
	char *end;
	unsigned long v;

	if (!n)
		return 0;
	errno = 0;
	if (n->kind != YDOC_SCALAR || !n->plain || n->value[0] < '0' ||
	    n->value[0] > '9' ||
	    ((v = strtoul(n->value, &end, 10)), errno || *end) || v < 1 ||
	    v > 100000000)
		return verr(l, n, "a whole number from 1 to 100000000");
	if (topo_map_per_forwarder(l->t, v, &e))
		return berr(l, n, &e);
	return 0;
}

struct topology *topo_load(const char *path, fwd_error_t *err)
{
	static const char *const keys[] = {"forwarders",	  "osts",
					   "compute_nodes",	  "mapping",
					   "nodes_per_forwarder", NULL};
	struct tloader l = {.err = err};
	const struct ydoc_node *root, *cn;
	struct ydoc *d;
	fwd_error_t e;

	if (!(d = ydoc_load(path, err)))
		return NULL;
	l.doc = d;
	root = d->root;
	if (root->kind != YDOC_MAPPING) {
		ydoc_error(err, d, root,
			   "the topology must be a mapping with keys "
			   "forwarders, osts, compute_nodes, mapping, "
			   "nodes_per_forwarder");
		goto fail;
	}
	if (!(l.t = topo_create()) || !(l.t->path = strdup(path))) {
		errprintf(err, "%s: out of memory", path);
		goto fail;
	}
	cn = ydoc_get(root, "compute_nodes");
	if (check_keys(&l, root, keys,
		       "forwarders, osts, compute_nodes, mapping, "
		       "nodes_per_forwarder") ||
	    load_forwarders(&l, ydoc_get(root, "forwarders")) ||
	    load_osts(&l, ydoc_get(root, "osts")) ||
	    load_compute_nodes(&l, cn) ||
	    load_mapping(&l, ydoc_get(root, "mapping")) ||
	    load_per_forwarder(&l, ydoc_get(root, "nodes_per_forwarder")))
		goto fail;
	if (topo_finalize(l.t, &e)) {
		berr(&l, cn, &e);
		goto fail;
	}
	ydoc_destroy(d);
	return l.t;
fail:
	if (!errno)
		errno = EINVAL;
	topo_destroy(l.t);
	ydoc_destroy(d);
	return NULL;
}
