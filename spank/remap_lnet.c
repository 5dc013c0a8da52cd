/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `lnet` remap driver: route this node's LNet traffic for the remote
 * net through the job's forwarders (LNet routers), one
 * `lnetctl route add --net NET --gateway NID [--hops N]` per router, and
 * delete exactly those routes at the end.  The state file lists the routes
 * this job added, updated after every command, so revert never deletes a
 * route it did not add (a site's static routes stay untouched).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank/remap_priv.h"

#define SAFE_PATH "/usr/sbin:/usr/bin:/sbin:/bin"
#define MAX_ROUTES 256

static bool nid_ok(const char *s)
{
	if (!s || !*s || *s == '-' || strlen(s) > 128)
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '@' ||
		      c == ':' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int lnet_prepare(struct remap *r, fwd_error_t *err)
{
	const struct policy_remap_lnet *c = &r->cfg.lnet;

	errno = EINVAL;
	if (!c->lnetctl || c->lnetctl[0] != '/')
		return errprintf(err, "lnet: remap.lnet.lnetctl must be an "
				      "absolute path");
	if (!nid_ok(c->net) || strchr(c->net, '@') || strlen(c->net) > 63)
		return errprintf(err,
				 "lnet: remap.lnet.net \"%s\" is not an "
				 "LNet network name",
				 c->net ? c->net : "");
	if (!r->cfg.lwfs.state_dir || r->cfg.lwfs.state_dir[0] != '/')
		return errprintf(err, "lnet: remap.lwfs.state_dir must be an "
				      "absolute path");
	errno = 0;
	return 0;
}

/* The routes a job added: NIDs, with the net they were added for. */
struct routes {
	char *net;
	char *nids[MAX_ROUTES];
	size_t n;
};

static void routes_free(struct routes *rt)
{
	free(rt->net);
	for (size_t i = 0; i < rt->n; i++)
		free(rt->nids[i]);
	memset(rt, 0, sizeof(*rt));
}

static bool routes_has(const struct routes *rt, const char *nid)
{
	for (size_t i = 0; i < rt->n; i++)
		if (!strcmp(rt->nids[i], nid))
			return true;
	return false;
}

static int routes_parse(struct routes *rt, const char *state)
{
	char *list = remap_kv_get(state, "routes"), *save = NULL, *tok;

	rt->net = remap_kv_get(state, "net");
	if (!rt->net || !list) {
		free(list);
		errno = EINVAL;
		return -1;
	}
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (rt->n == MAX_ROUTES || !nid_ok(tok))
			goto bad;
		rt->nids[rt->n] = strdup(tok);
		if (!rt->nids[rt->n])
			goto bad;
		rt->n++;
	}
	free(list);
	return 0;
bad:
	free(list);
	errno = EINVAL;
	return -1;
}

/* Save the list, or remove the state when it is empty. */
static int routes_save(const char *dir, const char *name,
		       const struct routes *rt, fwd_error_t *err)
{
	size_t len = strlen(rt->net) + 32;
	char *s;
	int rv;

	if (rt->n == 0)
		return remap_state_remove(dir, name, err);
	for (size_t i = 0; i < rt->n; i++)
		len += strlen(rt->nids[i]) + 1;
	s = malloc(len);
	if (!s)
		return errprintf(err, "out of memory");
	snprintf(s, len, "net=%s\nroutes=", rt->net);
	for (size_t i = 0; i < rt->n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, rt->nids[i]);
	}
	strcat(s, "\n");
	rv = remap_state_write(dir, name, s, err);
	free(s);
	return rv;
}

static int lnetctl(struct remap *r, const char *verb, const char *net,
		   const char *nid, fwd_error_t *err)
{
	/* execve() takes char *const []: writable copies of the words. */
	char s_route[] = "route", s_net[] = "--net", s_gw[] = "--gateway";
	char s_hops[] = "--hops", s_path[] = "PATH=" SAFE_PATH;
	char s_verb[8], s_netv[64], s_nid[160], hops[16];
	char *argv[] = {
		r->cfg.lnet.lnetctl,
		s_route,
		s_verb,
		s_net,
		s_netv,
		s_gw,
		s_nid,
		NULL,
		NULL,
		NULL,
	};
	char *envp[] = {s_path, NULL};

	snprintf(s_verb, sizeof(s_verb), "%s", verb);
	snprintf(s_netv, sizeof(s_netv), "%s", net);
	snprintf(s_nid, sizeof(s_nid), "%s", nid);
	/* Hops only matter when adding. */
	if (!strcmp(verb, "add") && r->cfg.lnet.hops > 0) {
		snprintf(hops, sizeof(hops), "%u", r->cfg.lnet.hops);
		argv[7] = s_hops;
		argv[8] = hops;
	}
	if (remap_run(r, argv, envp, err) < 0)
		return errprefix(err, "route %s", verb);
	return 0;
}

static int lnet_apply(struct remap *r, const char *node, uint32_t job,
		      const struct remap_target *t, size_t n, fwd_error_t *err)
{
	const char *dir = r->cfg.lwfs.state_dir;
	struct routes rt = {0};
	char name[128], *state = NULL;
	size_t before;
	int lock = -1, rv = -1, have;

	for (size_t i = 0; i < n; i++) {
		if (!t[i].nid) {
			errno = EINVAL;
			return errprintf(err,
					 "lnet: %s (%s): no LNet NID in "
					 "the topology",
					 t[i].name,
					 remap_target_address(&t[i]));
		}
		if (!nid_ok(t[i].nid)) {
			errno = EINVAL;
			return errprintf(err, "lnet: %s: invalid NID \"%s\"",
					 t[i].name, t[i].nid);
		}
	}
	if (remap_state_name(name, sizeof(name), "lnet", job, node) < 0)
		return errprintf(err, "lnet: state name: %s", strerror(errno));
	lock = remap_lock(r, dir, err);
	if (lock < 0) {
		errprefix(err, "lnet: %s (%s)", t[0].name, t[0].nid);
		goto out;
	}
	have = remap_state_read(dir, name, &state, err);
	if (have < 0) {
		errprefix(err, "lnet: %s (%s)", t[0].name, t[0].nid);
		goto out;
	}
	if (have && routes_parse(&rt, state) < 0) {
		errprintf(err, "lnet: state %s/%s: malformed", dir, name);
		goto out;
	}
	if (!have) {
		rt.net = strdup(r->cfg.lnet.net);
		if (!rt.net) {
			errprintf(err, "lnet: out of memory");
			goto out;
		}
	}
	before = rt.n;
	for (size_t i = 0; i < n; i++) {
		if (routes_has(&rt, t[i].nid))
			continue; /* added by an earlier apply */
		if (rt.n == MAX_ROUTES) {
			errno = E2BIG;
			errprintf(err, "lnet: %s (%s): more than %d routes",
				  t[i].name, t[i].nid, MAX_ROUTES);
			goto rollback;
		}
		if (lnetctl(r, "add", rt.net, t[i].nid, err) < 0) {
			errprefix(err, "lnet: %s (%s)", t[i].name, t[i].nid);
			goto rollback;
		}
		rt.nids[rt.n] = strdup(t[i].nid);
		if (!rt.nids[rt.n]) {
			errprintf(err, "lnet: out of memory");
			lnetctl(r, "del", rt.net, t[i].nid, NULL);
			goto rollback;
		}
		rt.n++;
		/* Record every route as soon as it exists. */
		if (routes_save(dir, name, &rt, err) < 0) {
			errprefix(err, "lnet: %s (%s)", t[i].name, t[i].nid);
			goto rollback;
		}
	}
	rv = 0;
	goto out;
rollback:
	/* Take back the routes this call added, newest first, so the node
	 * keeps the routing it had. */
	{
		int saved = errno;
		size_t keep = before;

		for (size_t i = rt.n; i-- > before;) {
			if (lnetctl(r, "del", rt.net, rt.nids[i], NULL) == 0) {
				free(rt.nids[i]);
				rt.nids[i] = NULL;
			}
		}
		/* A route that would not go away stays recorded for
		 * revert. */
		for (size_t i = before; i < rt.n; i++)
			if (rt.nids[i])
				rt.nids[keep++] = rt.nids[i];
		rt.n = keep;
		routes_save(dir, name, &rt, NULL);
		errno = saved;
	}
out:
	remap_unlock(lock);
	routes_free(&rt);
	free(state);
	return rv;
}

static int lnet_revert(struct remap *r, const char *node, uint32_t job,
		       fwd_error_t *err)
{
	const char *dir = r->cfg.lwfs.state_dir;
	struct routes rt = {0};
	char name[128], *state = NULL;
	fwd_error_t first;
	size_t kept = 0;
	int lock = -1, rv = -1, have, failed = 0, saved = 0;

	if (remap_state_name(name, sizeof(name), "lnet", job, node) < 0)
		return errprintf(err, "lnet: state name: %s", strerror(errno));
	lock = remap_lock(r, dir, err);
	if (lock < 0) {
		errprefix(err, "lnet: revert job %u", job);
		goto out;
	}
	have = remap_state_read(dir, name, &state, err);
	if (have < 0) {
		errprefix(err, "lnet: revert job %u", job);
		goto out;
	}
	if (!have) {
		rv = 0; /* nothing added */
		goto out;
	}
	if (routes_parse(&rt, state) < 0) {
		errprintf(err, "lnet: state %s/%s: malformed", dir, name);
		goto out;
	}
	/* Try every route; keep the ones that failed for a later retry. */
	for (size_t i = 0; i < rt.n; i++) {
		if (lnetctl(r, "del", rt.net, rt.nids[i], &first) < 0) {
			if (!failed++) {
				saved = errno;
				errprintf(err, "lnet: %s: %s", rt.nids[i],
					  first.text);
			}
			rt.nids[kept++] = rt.nids[i];
		} else {
			free(rt.nids[i]);
		}
	}
	rt.n = kept;
	if (routes_save(dir, name, &rt, failed ? NULL : err) < 0 && !failed) {
		errprefix(err, "lnet: revert job %u", job);
		goto out;
	}
	if (failed) {
		errno = saved;
		goto out;
	}
	rv = 0;
out:
	remap_unlock(lock);
	routes_free(&rt);
	free(state);
	return rv;
}

const struct remap_ops remap_lnet_ops = {
	.name = "lnet",
	.prepare = lnet_prepare,
	.apply = lnet_apply,
	.revert = lnet_revert,
};
