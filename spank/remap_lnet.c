/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `lnet` remap driver: route this node's LNet traffic for the remote
 * net through the job's forwarders (LNet routers), one
 * `lnetctl route add --net NET --gateway NID [--hop-count N]` per router,
 * and delete exactly those routes at the end.  The state file lists the
 * routes this job adds, each written before its add (the intent: a
 * prolog killed during an add leaves it recorded, and revert passes over
 * a recorded route that is not listed), so revert never deletes a route
 * it did not add (a site's static routes stay untouched).
 *
 * lnetctl exits 0 after printing its help when it meets an option it does
 * not know, so an exit status of 0 proves nothing: every add and every del
 * is read back with `lnetctl route show --net NET --gateway NID --verbose`
 * (YAML: a `route:` sequence of mappings with net, gateway, hop, ...), and
 * a route that is not there after add, or still there after del, is a
 * failure.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/run.h"
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
	char s_hops[] = "--hop-count", s_path[] = "PATH=" SAFE_PATH;
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

/* ---- reading routes back ------------------------------------------------ */

/* The value of "key: value" at *line (leading blanks and "- " skipped),
 * or NULL; the value is cut at the end of the line in place. */
static char *yaml_val(char *line, const char *key)
{
	size_t k = strlen(key);

	while (*line == ' ' || *line == '\t')
		line++;
	if (line[0] == '-' && line[1] == ' ')
		line += 2;
	while (*line == ' ')
		line++;
	if (strncmp(line, key, k) || line[k] != ':')
		return NULL;
	line += k + 1;
	while (*line == ' ')
		line++;
	if (*line == '"' || *line == '\'') {
		char q = *line++, *e = strchr(line, q);

		if (e)
			*e = '\0';
	}
	return line;
}

/*
 * Is the route NET via NID in `lnetctl route show`?  1 yes (*hop its hop
 * count, -1 if not shown), 0 no, -1 the show command failed (err says
 * why).
 */
static int route_listed(struct remap *r, const char *net, const char *nid,
			long *hop, fwd_error_t *err)
{
	char s_route[] = "route", s_show[] = "show", s_net[] = "--net";
	char s_gw[] = "--gateway", s_v[] = "--verbose";
	char s_path[] = "PATH=" SAFE_PATH, s_netv[64], s_nid[160];
	char *argv[] = {r->cfg.lnet.lnetctl,
			s_route,
			s_show,
			s_net,
			s_netv,
			s_gw,
			s_nid,
			s_v,
			NULL};
	char *envp[] = {s_path, NULL};
	char *out = NULL, *line, *save = NULL, *cur_net = NULL, *cur_gw = NULL;
	long cur_hop = -1;
	fwd_error_t why;
	int found = 0;

	snprintf(s_netv, sizeof(s_netv), "%s", net);
	snprintf(s_nid, sizeof(s_nid), "%s", nid);
	if (fwd_run_cmd_output(argv, envp, r->cfg.timeout, r->deadline, &out,
			       &why) < 0) {
		free(out);
		return errprintf(err, "route show: %s %s", argv[0], why.text);
	}
	/* One mapping per route; a line starting with "- " opens the next:
	 * judge each mapping when the next one opens and at the end. */
	for (line = strtok_r(out, "\n", &save);;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *t = line ? line + strspn(line, " \t") : NULL;
		char *v;

		if (!line || (t[0] == '-' && t[1] == ' ')) {
			if (cur_net && cur_gw && !strcmp(cur_net, net) &&
			    !strcmp(cur_gw, nid)) {
				found = 1;
				break;
			}
			if (!line)
				break;
			cur_net = cur_gw = NULL;
			cur_hop = -1;
		}
		if ((v = yaml_val(line, "net")))
			cur_net = v;
		else if ((v = yaml_val(line, "gateway")))
			cur_gw = v;
		else if ((v = yaml_val(line, "hop")))
			cur_hop = strtol(v, NULL, 10);
	}
	if (hop)
		*hop = cur_hop;
	free(out);
	return found;
}

/* After `route add` said yes: is the route really there? */
static int verify_added(struct remap *r, const char *net, const char *nid,
			fwd_error_t *err)
{
	long hop = -1;
	int rv = route_listed(r, net, nid, &hop, err);

	if (rv < 0)
		return -1;
	errno = EIO;
	if (rv == 0)
		return errprintf(err,
				 "route add: %s exited 0 but `route show` "
				 "lists no route to %s via %s",
				 r->cfg.lnet.lnetctl, net, nid);
	if (r->cfg.lnet.hops > 0 && hop >= 0 && hop != (long)r->cfg.lnet.hops)
		return errprintf(err,
				 "route add: `route show` lists the route to "
				 "%s via %s with hop %ld, not %u",
				 net, nid, hop, r->cfg.lnet.hops);
	errno = 0;
	return 0;
}

/* After `route del` said yes: is the route really gone? */
static int verify_deleted(struct remap *r, const char *net, const char *nid,
			  fwd_error_t *err)
{
	int rv = route_listed(r, net, nid, NULL, err);

	if (rv < 0)
		return -1;
	if (rv > 0) {
		errno = EIO;
		return errprintf(err,
				 "route del: %s exited 0 but `route show` "
				 "still lists the route to %s via %s",
				 r->cfg.lnet.lnetctl, net, nid);
	}
	return 0;
}

/* add or del, then read back. */
static int route_change(struct remap *r, const char *verb, const char *net,
			const char *nid, fwd_error_t *err)
{
	if (lnetctl(r, verb, net, nid, err) < 0)
		return -1;
	if (!strcmp(verb, "add"))
		return verify_added(r, net, nid, err);
	return verify_deleted(r, net, nid, err);
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
		/* Record the route before adding it: a prolog killed
		 * during the add leaves it listed for the epilog's revert
		 * (which passes over a route that is not there). */
		rt.nids[rt.n] = strdup(t[i].nid);
		if (!rt.nids[rt.n]) {
			errprintf(err, "lnet: out of memory");
			goto rollback;
		}
		rt.n++;
		if (routes_save(dir, name, &rt, err) < 0) {
			errprefix(err, "lnet: %s (%s)", t[i].name, t[i].nid);
			goto rollback;
		}
		if (route_change(r, "add", rt.net, t[i].nid, err) < 0) {
			errprefix(err, "lnet: %s (%s)", t[i].name, t[i].nid);
			/* an add that failed late may have left the route:
			 * take it back if it is listed */
			if (route_listed(r, rt.net, t[i].nid, NULL, NULL) > 0 &&
			    route_change(r, "del", rt.net, t[i].nid, NULL) < 0)
				goto rollback; /* stays recorded */
			free(rt.nids[--rt.n]);
			rt.nids[rt.n] = NULL;
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
			if (route_change(r, "del", rt.net, rt.nids[i], NULL) ==
			    0) {
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
		/* a route recorded but never added (a prolog killed
		 * before or during its add) is not there: nothing to undo */
		if (route_change(r, "del", rt.net, rt.nids[i], &first) < 0 &&
		    route_listed(r, rt.net, rt.nids[i], NULL, NULL) != 0) {
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
