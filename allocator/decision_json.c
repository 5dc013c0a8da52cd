/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JOB.json, STATE.json and HEALTH.json (see decision_json.h), and the
 * decision's JSON form.  Parsing is strict: unknown keys, wrong types,
 * negative numbers, unknown names are errors naming the field path and the
 * value.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "allocator/decision_json.h"
#include "topology/topology.h"

#define JSON_MAX_INPUT (256L * 1024 * 1024)

/* ---- helpers ---------------------------------------------------------- */

static char *read_file(const char *path, fwd_error_t *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		errprintf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t n;

		if (cap - len < 4096) {
			char *p;

			cap = cap ? cap * 2 : 65536;
			if ((long)cap > JSON_MAX_INPUT) {
				errno = EFBIG;
				errprintf(err, "%s: larger than %ld bytes",
					  path, JSON_MAX_INPUT);
				goto fail;
			}
			if (!(p = realloc(buf, cap + 1))) {
				errprintf(err, "%s: out of memory", path);
				goto fail;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f)) {
				errprintf(err, "%s: read error", path);
				goto fail;
			}
			break;
		}
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

static json_t *parse_json(const char *text, const char *what, fwd_error_t *err)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);

	if (!j) {
		errno = EINVAL;
		errprintf(err, "%s:%d:%d: %s", what, je.line, je.column,
			  je.text);
	}
	return j;
}

/* A short rendering of a JSON value for error messages. */
static void show(const json_t *v, char *buf, size_t len)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

	if (!s) {
		snprintf(buf, len, "?");
		return;
	}
	if (strlen(s) > 60)
		snprintf(buf, len, "%.57s...", s);
	else
		snprintf(buf, len, "%s", s);
	free(s);
}

static int bad(fwd_error_t *err, const char *what, const char *path,
	       const json_t *v, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int bad(fwd_error_t *err, const char *what, const char *path,
	       const json_t *v, const char *fmt, ...)
{
	char val[80];
	va_list ap;

	va_start(ap, fmt);
	verrprintf(err, fmt, ap);
	va_end(ap);
	errno = EINVAL;
	if (v) {
		show(v, val, sizeof(val));
		return errprefix(err, "%s: %s: %s", what, path, val);
	}
	return errprefix(err, "%s: %s", what, path);
}

static int check_keys(const json_t *obj, const char *const *allowed,
		      const char *what, const char *path, fwd_error_t *err)
{
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)obj, key, v) {
		size_t i;

		for (i = 0; allowed[i]; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (!allowed[i]) {
			char p[256];

			snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "",
				 key);
			return bad(err, what, p, NULL, "unknown key");
		}
	}
	return 0;
}

static int get_str(const json_t *obj, const char *key, bool required,
		   char **out, const char *what, const char *path,
		   fwd_error_t *err)
{
	json_t *v = json_object_get(obj, key);
	char p[256];

	snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return bad(err, what, p, NULL, "missing");
		return 0;
	}
	if (!json_is_string(v))
		return bad(err, what, p, v, "must be a string");
	if (!(*out = strdup(json_string_value(v))))
		return errprintf(err, "%s: out of memory", what);
	return 0;
}

static int get_num(const json_t *obj, const char *key, double *out,
		   const char *what, const char *path, fwd_error_t *err)
{
	json_t *v = json_object_get(obj, key);
	char p[256];

	snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return bad(err, what, p, v, "must be a number");
	*out = json_number_value(v);
	if (!isfinite(*out))
		return bad(err, what, p, v, "must be finite");
	if (*out < 0)
		return bad(err, what, p, v, "must not be negative");
	return 0;
}

static int get_uint(const json_t *obj, const char *key, uint64_t max,
		    uint64_t *out, const char *what, const char *path,
		    fwd_error_t *err)
{
	json_t *v = json_object_get(obj, key);
	char p[256];

	snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return bad(err, what, p, v, "must be an integer");
	if (json_integer_value(v) < 0)
		return bad(err, what, p, v, "must not be negative");
	if ((uint64_t)json_integer_value(v) > max)
		return bad(err, what, p, v, "must be at most %llu",
			   (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* ---- JOB.json --------------------------------------------------------- */

void alloc_jobfile_destroy(struct alloc_jobfile *j)
{
	int saved = errno;

	if (!j)
		return;
	free(j->job_id);
	free(j->user);
	free(j->account);
	free(j->name);
	free(j->partition);
	free(j->nodes);
	free(j->node_ids);
	free(j->profile.bw);
	free(j);
	errno = saved;
}

static int cmp_bw(const void *a, const void *b)
{
	const struct alloc_bw_point *x = a, *y = b;

	return x->k < y->k ? -1 : x->k > y->k;
}

static int parse_profile(struct alloc_jobfile *j, const json_t *o,
			 const char *what, fwd_error_t *err)
{
	static const char *const keys[] = {
		"io_volume_bytes",	   "io_nodes", "node_bandwidth_bps",
		"peak_bandwidth_bps",	   "iops",     "mdops",
		"metadata_queue",	   "io_mode",  "runs",
		"bandwidth_by_forwarders", NULL,
	};
	struct alloc_profile *pr = &j->profile;
	const json_t *bw;
	char *mode = NULL;
	uint64_t u;

	if (!json_is_object(o))
		return bad(err, what, "profile", o,
			   "must be an object or null");
	if (check_keys(o, keys, what, "profile", err) < 0)
		return -1;
	if (get_uint(o, "io_volume_bytes", INT64_MAX, &pr->io_volume_bytes,
		     what, "profile", err) < 0)
		return -1;
	if (get_uint(o, "io_nodes", UINT32_MAX, &u, what, "profile", err) < 0)
		return -1;
	pr->io_nodes = (uint32_t)u;
	if (get_uint(o, "runs", UINT32_MAX, &u, what, "profile", err) < 0)
		return -1;
	pr->runs = (uint32_t)u;
	if (get_num(o, "node_bandwidth_bps", &pr->node_bandwidth_bps, what,
		    "profile", err) < 0 ||
	    get_num(o, "peak_bandwidth_bps", &pr->peak_bandwidth_bps, what,
		    "profile", err) < 0 ||
	    get_num(o, "iops", &pr->iops, what, "profile", err) < 0 ||
	    get_num(o, "mdops", &pr->mdops, what, "profile", err) < 0 ||
	    get_num(o, "metadata_queue", &pr->metadata_queue, what, "profile",
		    err) < 0)
		return -1;
	if (get_str(o, "io_mode", false, &mode, what, "profile", err) < 0)
		return -1;
	if (mode && fwd_io_mode_parse(mode, &pr->io_mode) < 0) {
		bad(err, what, "profile.io_mode", json_object_get(o, "io_mode"),
		    "must be one of N-N, N-1, N-M, 1-1");
		free(mode);
		return -1;
	}
	free(mode);
	bw = json_object_get(o, "bandwidth_by_forwarders");
	if (bw && !json_is_null(bw)) {
		const char *key;
		json_t *v;

		if (!json_is_object(bw))
			return bad(err, what, "profile.bandwidth_by_forwarders",
				   bw, "must be an object {\"k\": bps}");
		pr->bw = calloc(json_object_size(bw) + 1, sizeof(*pr->bw));
		if (!pr->bw)
			return errprintf(err, "%s: out of memory", what);
		json_object_foreach ((json_t *)bw, key, v) {
			char p[256], *end;
			unsigned long k;

			snprintf(p, sizeof(p),
				 "profile.bandwidth_by_forwarders.%s", key);
			errno = 0;
			k = strtoul(key, &end, 10);
			if (!*key || *end || errno || k == 0 ||
			    k > UINT32_MAX || key[0] == '-' || key[0] == '+')
				return bad(err, what, p, NULL,
					   "the key must be a forwarder count "
					   "(a positive integer)");
			if (!json_is_number(v))
				return bad(err, what, p, v,
					   "must be a number (bytes/s)");
			if (json_number_value(v) < 0 ||
			    !isfinite(json_number_value(v)))
				return bad(err, what, p, v,
					   "must not be negative");
			pr->bw[pr->n_bw].k = (uint32_t)k;
			pr->bw[pr->n_bw].bps = json_number_value(v);
			pr->n_bw++;
		}
		qsort(pr->bw, pr->n_bw, sizeof(*pr->bw), cmp_bw);
		for (size_t i = 1; i < pr->n_bw; i++)
			if (pr->bw[i].k == pr->bw[i - 1].k)
				return bad(err, what,
					   "profile.bandwidth_by_forwarders",
					   NULL, "forwarder count %u twice",
					   pr->bw[i].k);
	}
	j->job.profile = pr;
	return 0;
}

struct alloc_jobfile *alloc_jobfile_parse(const struct topology *t,
					  const char *text, const char *what,
					  fwd_error_t *err)
{
	static const char *const keys[] = {
		"job_id", "user",    "account", "name", "partition",
		"nodes",  "request", "profile", NULL,
	};
	struct alloc_jobfile *j = NULL;
	json_t *root, *v;
	char *req = NULL;

	if (!(root = parse_json(text, what, err)))
		return NULL;
	if (!json_is_object(root)) {
		bad(err, what, "(top level)", NULL, "must be a JSON object");
		goto fail;
	}
	if (!(j = calloc(1, sizeof(*j)))) {
		errprintf(err, "%s: out of memory", what);
		goto fail;
	}
	if (check_keys(root, keys, what, "", err) < 0)
		goto fail;
	v = json_object_get(root, "job_id");
	if (json_is_integer(v)) {
		char buf[32];

		if (json_integer_value(v) < 0) {
			bad(err, what, "job_id", v, "must not be negative");
			goto fail;
		}
		snprintf(buf, sizeof(buf), "%lld",
			 (long long)json_integer_value(v));
		if (!(j->job_id = strdup(buf)))
			goto nomem;
	} else if (get_str(root, "job_id", true, &j->job_id, what, "", err) <
		   0) {
		goto fail;
	} else if (!*j->job_id) {
		bad(err, what, "job_id", v, "must not be empty");
		goto fail;
	}
	if (get_str(root, "user", false, &j->user, what, "", err) < 0 ||
	    get_str(root, "account", false, &j->account, what, "", err) < 0 ||
	    get_str(root, "name", false, &j->name, what, "", err) < 0 ||
	    get_str(root, "partition", false, &j->partition, what, "", err) <
		    0 ||
	    get_str(root, "nodes", true, &j->nodes, what, "", err) < 0 ||
	    get_str(root, "request", false, &req, what, "", err) < 0)
		goto fail;
	j->job.request = FWD_REQ_NONE;
	if (req && fwd_request_parse(req, &j->job.request) < 0) {
		bad(err, what, "request", json_object_get(root, "request"),
		    "must be one of auto, scale, isolate, off, shadow");
		goto fail;
	}
	if (alloc_job_nodes(t, j->nodes, &j->node_ids, &j->job.n_nodes, err) <
	    0) {
		errprefix(err, "%s", what);
		goto fail;
	}
	v = json_object_get(root, "profile");
	if (v && !json_is_null(v) && parse_profile(j, v, what, err) < 0)
		goto fail;
	j->job.job_id = j->job_id;
	j->job.user = j->user;
	j->job.account = j->account;
	j->job.name = j->name;
	j->job.partition = j->partition;
	j->job.nodes = j->nodes;
	j->job.node_ids = j->node_ids;
	free(req);
	json_decref(root);
	return j;
nomem:
	errprintf(err, "%s: out of memory", what);
fail:
	free(req);
	json_decref(root);
	alloc_jobfile_destroy(j);
	errno = errno ? errno : EINVAL;
	return NULL;
}

struct alloc_jobfile *alloc_jobfile_load(const struct topology *t,
					 const char *path, fwd_error_t *err)
{
	char *text = read_file(path, err);
	struct alloc_jobfile *j;

	if (!text)
		return NULL;
	j = alloc_jobfile_parse(t, text, path, err);
	free(text);
	return j;
}

/* ---- STATE.json ------------------------------------------------------- */

static int fwd_list(const struct topology *t, const json_t *arr, uint32_t **out,
		    size_t *n, const char *what, const char *path,
		    fwd_error_t *err)
{
	size_t i;
	json_t *v;

	*out = NULL;
	*n = 0;
	if (!json_is_array(arr))
		return bad(err, what, path, arr,
			   "must be an array of forwarder names");
	*out = malloc((json_array_size(arr) + 1) * sizeof(**out));
	if (!*out)
		return errprintf(err, "%s: out of memory", what);
	json_array_foreach (arr, i, v) {
		char p[256];
		long f;

		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		if (!json_is_string(v))
			return bad(err, what, p, v, "must be a forwarder name");
		f = topo_forwarder_index(t, json_string_value(v));
		if (f < 0)
			return bad(err, what, p, v, "unknown forwarder");
		(*out)[(*n)++] = (uint32_t)f;
	}
	return 0;
}

static int parse_alloc(struct alloc_ledger *l, const json_t *o, size_t idx,
		       const char *what, fwd_error_t *err)
{
	static const char *const keys[] = {
		"job_id",  "forwarders", "private",	  "private_forwarders",
		"io_mode", "mdops",	 "bandwidth_bps", "iops",
		"n_nodes", "action",	 "acquired_at",	  NULL,
	};
	static const char *const actions[] = {
		"default", "scale",   "isolate", "avoid-anomaly",
		"shadow",  "refused", "direct",
	};
	const struct topology *t = alloc_ledger_topology(l);
	struct alloc_ledger_entry e = {0};
	uint32_t *privs = NULL;
	size_t n_privs = 0;
	char path[64], p[128], *mode = NULL, *action = NULL;
	json_t *v;
	uint64_t u;
	int rv = -1;

	snprintf(path, sizeof(path), "[%zu]", idx);
	if (!json_is_object(o)) {
		bad(err, what, path, o, "must be an object");
		goto out;
	}
	if (check_keys(o, keys, what, path, err) < 0)
		goto out;
	v = json_object_get(o, "job_id");
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld",
			 (long long)json_integer_value(v));
		if (!(e.job_id = strdup(buf)))
			goto out;
	} else if (get_str(o, "job_id", true, &e.job_id, what, path, err) < 0) {
		goto out;
	}
	snprintf(p, sizeof(p), "%s.forwarders", path);
	v = json_object_get(o, "forwarders");
	if (!v) {
		bad(err, what, p, NULL, "missing");
		goto out;
	}
	if (fwd_list(t, v, &e.forwarders, &e.n_forwarders, what, p, err) < 0)
		goto out;
	e.private_fwd = calloc(e.n_forwarders + 1, sizeof(*e.private_fwd));
	if (!e.private_fwd)
		goto out;
	v = json_object_get(o, "private");
	if (v && !json_is_boolean(v)) {
		snprintf(p, sizeof(p), "%s.private", path);
		bad(err, what, p, v, "must be true or false");
		goto out;
	}
	for (size_t i = 0; i < e.n_forwarders; i++)
		e.private_fwd[i] = json_is_true(v);
	v = json_object_get(o, "private_forwarders");
	if (v) {
		snprintf(p, sizeof(p), "%s.private_forwarders", path);
		if (fwd_list(t, v, &privs, &n_privs, what, p, err) < 0)
			goto out;
		for (size_t k = 0; k < n_privs; k++) {
			size_t i;

			for (i = 0; i < e.n_forwarders; i++)
				if (e.forwarders[i] == privs[k])
					break;
			if (i == e.n_forwarders) {
				snprintf(p, sizeof(p),
					 "%s.private_forwarders[%zu]", path, k);
				bad(err, what, p, json_array_get(v, k),
				    "not among the job's forwarders");
				goto out;
			}
			e.private_fwd[i] = true;
		}
	}
	if (get_str(o, "io_mode", false, &mode, what, path, err) < 0)
		goto out;
	if (mode && fwd_io_mode_parse(mode, &e.io_mode) < 0) {
		snprintf(p, sizeof(p), "%s.io_mode", path);
		bad(err, what, p, json_object_get(o, "io_mode"),
		    "must be one of N-N, N-1, N-M, 1-1");
		goto out;
	}
	if (get_str(o, "action", false, &action, what, path, err) < 0)
		goto out;
	e.action = FWD_ACT_DEFAULT;
	if (action) {
		size_t i;

		for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
			if (!strcmp(action, actions[i]))
				break;
		if (i == sizeof(actions) / sizeof(actions[0])) {
			snprintf(p, sizeof(p), "%s.action", path);
			bad(err, what, p, json_object_get(o, "action"),
			    "must be one of default, scale, isolate, "
			    "avoid-anomaly, shadow, refused, direct");
			goto out;
		}
		e.action = (enum fwd_action)i;
	}
	if (get_num(o, "mdops", &e.mdops, what, path, err) < 0 ||
	    get_num(o, "bandwidth_bps", &e.bandwidth_bps, what, path, err) <
		    0 ||
	    get_num(o, "iops", &e.iops, what, path, err) < 0 ||
	    get_num(o, "acquired_at", &e.acquired_at, what, path, err) < 0 ||
	    get_uint(o, "n_nodes", SIZE_MAX, &u, what, path, err) < 0)
		goto out;
	e.n_nodes = (size_t)u;
	if (alloc_ledger_add(l, &e, err) < 0) {
		errprefix(err, "%s: %s", what, path);
		goto out;
	}
	rv = 0;
out:
	if (rv < 0 && errno == ENOMEM)
		errprintf(err, "%s: out of memory", what);
	free(e.job_id);
	free(e.forwarders);
	free(e.private_fwd);
	free(privs);
	free(mode);
	free(action);
	return rv;
}

int alloc_state_parse(struct alloc_ledger *l, const char *text,
		      const char *what, fwd_error_t *err)
{
	static const char *const keys[] = {"allocations", "last_release", NULL};
	const struct topology *t = alloc_ledger_topology(l);
	json_t *root, *arr, *rel = NULL, *v;
	const char *key;
	int rv = -1;
	size_t i;

	if (!(root = parse_json(text, what, err)))
		return -1;
	arr = root;
	if (json_is_object(root)) {
		if (check_keys(root, keys, what, "", err) < 0)
			goto out;
		arr = json_object_get(root, "allocations");
		rel = json_object_get(root, "last_release");
		if (!arr) {
			bad(err, what, "allocations", NULL, "missing");
			goto out;
		}
	}
	if (!json_is_array(arr)) {
		bad(err, what,
		    json_is_object(root) ? "allocations" : "(top level)", NULL,
		    "must be an array of allocations");
		goto out;
	}
	json_array_foreach (arr, i, v)
		if (parse_alloc(l, v, i, what, err) < 0)
			goto out;
	if (rel && !json_is_object(rel)) {
		bad(err, what, "last_release", rel,
		    "must be an object {\"forwarder\": epoch}");
		goto out;
	}
	json_object_foreach (rel, key, v) {
		char p[256];
		long f = topo_forwarder_index(t, key);

		snprintf(p, sizeof(p), "last_release.%s", key);
		if (f < 0) {
			bad(err, what, p, NULL, "unknown forwarder");
			goto out;
		}
		if (!json_is_number(v) || json_number_value(v) < 0) {
			bad(err, what, p, v,
			    "must be a non-negative number (epoch seconds)");
			goto out;
		}
		alloc_ledger_set_last_release(l, (uint32_t)f,
					      json_number_value(v));
	}
	rv = 0;
out:
	json_decref(root);
	return rv;
}

int alloc_state_load(struct alloc_ledger *l, const char *path, fwd_error_t *err)
{
	char *text = read_file(path, err);
	int rv;

	if (!text)
		return -1;
	rv = alloc_state_parse(l, text, path, err);
	free(text);
	return rv;
}

static json_t *names_json(const struct topology *t, const uint32_t *idx,
			  const bool *only, bool want, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		if (only && only[i] != want)
			continue;
		if (json_array_append_new(
			    a, json_string(t->forwarders[idx[i]].name)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

char *alloc_state_to_json(const struct alloc_ledger *l, size_t flags)
{
	const struct topology *t = alloc_ledger_topology(l);
	json_t *root = json_object(), *arr = json_array(), *rel = json_object();
	char *s = NULL;

	if (!root || !arr || !rel)
		goto out;
	for (size_t i = 0; i < alloc_ledger_count(l); i++) {
		const struct alloc_ledger_entry *e =
			alloc_ledger_entry_at(l, i);
		bool all = e->n_forwarders > 0;
		json_t *o;

		for (size_t k = 0; k < e->n_forwarders; k++)
			all = all && e->private_fwd[k];
		o = json_pack("{s:s, s:o, s:b, s:o, s:s, s:f, s:f, s:f, s:I, "
			      "s:s, s:f}",
			      "job_id", e->job_id, "forwarders",
			      names_json(t, e->forwarders, NULL, false,
					 e->n_forwarders),
			      "private", all, "private_forwarders",
			      names_json(t, e->forwarders, e->private_fwd, true,
					 e->n_forwarders),
			      "io_mode", fwd_io_mode_name(e->io_mode), "mdops",
			      e->mdops, "bandwidth_bps", e->bandwidth_bps,
			      "iops", e->iops, "n_nodes",
			      (json_int_t)e->n_nodes, "action",
			      fwd_action_name(e->action), "acquired_at",
			      e->acquired_at);
		if (!o || json_array_append_new(arr, o) < 0)
			goto out;
	}
	for (size_t f = 0; f < t->n_forwarders; f++) {
		double r = alloc_ledger_last_release(l, (uint32_t)f);

		if (r > 0 && json_object_set_new(rel, t->forwarders[f].name,
						 json_real(r)) < 0)
			goto out;
	}
	if (json_object_set(root, "allocations", arr) < 0 ||
	    json_object_set(root, "last_release", rel) < 0)
		goto out;
	s = json_dumps(root, flags | JSON_PRESERVE_ORDER);
out:
	json_decref(root);
	json_decref(arr);
	json_decref(rel);
	return s;
}

/* ---- HEALTH.json ------------------------------------------------------ */

void alloc_healthfile_destroy(struct alloc_healthfile *h)
{
	int saved = errno;

	if (!h)
		return;
	free(h->forwarder);
	free(h->ost);
	free(h);
	errno = saved;
}

struct alloc_healthfile *alloc_healthfile_parse(const struct topology *t,
						const char *text,
						const char *what,
						fwd_error_t *err)
{
	static const char *const keys[] = {"kind", "name", "state", NULL};
	struct alloc_healthfile *h = NULL;
	uint8_t *seen_f = NULL, *seen_o = NULL;
	json_t *root, *v;
	size_t i;

	if (!(root = parse_json(text, what, err)))
		return NULL;
	if (!json_is_array(root)) {
		bad(err, what, "(top level)", NULL,
		    "must be an array of {kind, name, state}");
		goto fail;
	}
	h = calloc(1, sizeof(*h));
	seen_f = calloc(t->n_forwarders + 1, 1);
	seen_o = calloc(t->n_osts + 1, 1);
	if (!h || !seen_f || !seen_o ||
	    !(h->forwarder =
		      calloc(t->n_forwarders + 1, sizeof(*h->forwarder))) ||
	    !(h->ost = calloc(t->n_osts + 1, sizeof(*h->ost)))) {
		errprintf(err, "%s: out of memory", what);
		goto fail;
	}
	json_array_foreach (root, i, v) {
		char path[64], p[128], *kind = NULL, *name = NULL, *st = NULL;
		enum fwd_health s;
		bool is_fwd;
		long idx;
		int bad_rc = 0;

		snprintf(path, sizeof(path), "[%zu]", i);
		if (!json_is_object(v)) {
			bad(err, what, path, v, "must be an object");
			goto fail;
		}
		if (check_keys(v, keys, what, path, err) < 0 ||
		    get_str(v, "kind", true, &kind, what, path, err) < 0 ||
		    get_str(v, "name", true, &name, what, path, err) < 0 ||
		    get_str(v, "state", true, &st, what, path, err) < 0) {
			bad_rc = -1;
			goto next;
		}
		is_fwd = !strcmp(kind, "forwarder");
		if (!is_fwd && strcmp(kind, "ost")) {
			snprintf(p, sizeof(p), "%s.kind", path);
			bad_rc = bad(err, what, p, json_object_get(v, "kind"),
				     "must be forwarder or ost");
			goto next;
		}
		idx = is_fwd ? topo_forwarder_index(t, name)
			     : topo_ost_index(t, name);
		if (idx < 0) {
			snprintf(p, sizeof(p), "%s.name", path);
			bad_rc = bad(err, what, p, json_object_get(v, "name"),
				     is_fwd ? "unknown forwarder"
					    : "unknown OST");
			goto next;
		}
		if (fwd_health_parse(st, &s) < 0) {
			snprintf(p, sizeof(p), "%s.state", path);
			bad_rc = bad(err, what, p, json_object_get(v, "state"),
				     "must be ok, suspect or excluded");
			goto next;
		}
		if ((is_fwd ? seen_f : seen_o)[idx]++) {
			snprintf(p, sizeof(p), "%s.name", path);
			bad_rc = bad(err, what, p, json_object_get(v, "name"),
				     "listed twice");
			goto next;
		}
		if (is_fwd)
			h->forwarder[idx] = s;
		else
			h->ost[idx] = s;
	next:
		free(kind);
		free(name);
		free(st);
		if (bad_rc < 0)
			goto fail;
	}
	h->health.forwarder = h->forwarder;
	h->health.ost = h->ost;
	free(seen_f);
	free(seen_o);
	json_decref(root);
	return h;
fail:
	free(seen_f);
	free(seen_o);
	json_decref(root);
	alloc_healthfile_destroy(h);
	errno = EINVAL;
	return NULL;
}

struct alloc_healthfile *alloc_healthfile_load(const struct topology *t,
					       const char *path,
					       fwd_error_t *err)
{
	char *text = read_file(path, err);
	struct alloc_healthfile *h;

	if (!text)
		return NULL;
	h = alloc_healthfile_parse(t, text, path, err);
	free(text);
	return h;
}

/* ---- decision JSON ---------------------------------------------------- */

static json_t *profile_json(const struct alloc_profile *p)
{
	json_t *bw = json_object();
	json_t *o;

	if (!bw)
		return NULL;
	for (size_t i = 0; i < p->n_bw; i++) {
		char k[16];

		snprintf(k, sizeof(k), "%u", p->bw[i].k);
		if (json_object_set_new(bw, k, json_real(p->bw[i].bps)) < 0) {
			json_decref(bw);
			return NULL;
		}
	}
	o = json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:s, s:I, s:o}",
		      "io_volume_bytes", (json_int_t)p->io_volume_bytes,
		      "io_nodes", (json_int_t)p->io_nodes, "node_bandwidth_bps",
		      p->node_bandwidth_bps, "peak_bandwidth_bps",
		      p->peak_bandwidth_bps, "iops", p->iops, "mdops", p->mdops,
		      "metadata_queue", p->metadata_queue, "io_mode",
		      fwd_io_mode_name(p->io_mode), "runs", (json_int_t)p->runs,
		      "bandwidth_by_forwarders", bw);
	return o;
}

json_t *alloc_decision_json(const struct alloc_decision *d)
{
	json_t *o = NULL, *reasons = json_array(), *fw = json_array(),
	       *map = json_array(), *osts = json_array(), *prof;

	if (!reasons || !fw || !map || !osts)
		goto out;
	for (size_t i = 0; i < d->n_reasons; i++)
		if (json_array_append_new(reasons, json_string(d->reasons[i])) <
		    0)
			goto out;
	for (size_t i = 0; i < d->n_forwarders; i++)
		if (json_array_append_new(
			    fw, json_string(d->forwarder_names[i])) < 0)
			goto out;
	for (size_t i = 0; i < d->n_mapping; i++) {
		json_t *m =
			json_pack("{s:s, s:s}", "nodes", d->mapping[i].nodes,
				  "forwarder", d->forwarder_names[i]);

		if (!m || json_array_append_new(map, m) < 0)
			goto out;
	}
	for (size_t i = 0; i < d->n_excluded_osts; i++)
		if (json_array_append_new(osts, json_string(d->ost_names[i])) <
		    0)
			goto out;
	prof = d->has_profile ? profile_json(&d->profile) : json_null();
	o = json_pack("{s:s, s:s, s:O, s:I, s:I, s:O, s:O, s:O, s:o, s:s, "
		      "s:I}",
		      "job_id", d->job_id, "action", fwd_action_name(d->action),
		      "reasons", reasons, "n_f", (json_int_t)d->n_f, "s",
		      (json_int_t)d->s, "forwarders", fw, "mapping", map,
		      "excluded_osts", osts, "profile", prof, "policy_digest",
		      d->policy_digest, "elapsed_us",
		      (json_int_t)d->elapsed_us);
out:
	json_decref(reasons);
	json_decref(fw);
	json_decref(map);
	json_decref(osts);
	return o;
}

char *alloc_decision_to_json(const struct alloc_decision *d, size_t flags)
{
	json_t *o = alloc_decision_json(d);
	char *s = o ? json_dumps(o, flags | JSON_PRESERVE_ORDER) : NULL;

	json_decref(o);
	return s;
}
