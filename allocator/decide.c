/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DFRA decision (see decide.h for the contract and DESIGN.md "The
 * decision" for the rules).  Everything here works on topology indexes:
 * node ids, forwarder indexes.  The only string work proportional to the
 * job is rendering the mapping blocks as ranged hostlists, and that uses
 * the name runs precomputed once per topology in struct alloc_ctx.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "topology/topology.h"
#include "policies/policy.h"

#define NO_DIGITS 0xff
#define MAX_DIGITS 18

struct alloc_ctx {
	const struct topology *t;
	/* Node names split once into prefix + numeric suffix, so that runs
	 * of consecutive names are found with integer compares. */
	uint32_t *prefix; /* node id -> prefix id */
	uint64_t *num;	  /* node id -> numeric suffix */
	uint8_t *pad;	  /* node id -> zero-padded width, 0 none,
			   * NO_DIGITS when the name has no suffix */
	char **prefixes;
	size_t n_prefixes;
	uint32_t *group; /* forwarder -> group id */
	size_t n_groups;
	char **group_names; /* group id -> name (borrowed) */
};

/* ---- names ------------------------------------------------------------ */

/* "s" to follow a count's noun in a reason, so that 1 reads singular. */
static const char *plural(uintmax_t n)
{
	return n == 1 ? "" : "s";
}

static const char *const action_names[] = {
	[ALLOC_ACT_DEFAULT] = "default",
	[ALLOC_ACT_SCALE] = "scale",
	[ALLOC_ACT_ISOLATE] = "isolate",
	[ALLOC_ACT_AVOID_ANOMALY] = "avoid-anomaly",
	[ALLOC_ACT_SHADOW] = "shadow",
	[ALLOC_ACT_REFUSED] = "refused",
};
static const char *const request_names[] = {
	[ALLOC_REQ_NONE] = "none",   [ALLOC_REQ_AUTO] = "auto",
	[ALLOC_REQ_SCALE] = "scale", [ALLOC_REQ_ISOLATE] = "isolate",
	[ALLOC_REQ_OFF] = "off",     [ALLOC_REQ_SHADOW] = "shadow",
};
static const char *const io_mode_names[] = {
	[ALLOC_IO_UNKNOWN] = "unknown", [ALLOC_IO_N_N] = "N-N",
	[ALLOC_IO_N_1] = "N-1",		[ALLOC_IO_N_M] = "N-M",
	[ALLOC_IO_1_1] = "1-1",
};
static const char *const health_names[] = {
	[ALLOC_HEALTH_OK] = "ok",
	[ALLOC_HEALTH_SUSPECT] = "suspect",
	[ALLOC_HEALTH_EXCLUDED] = "excluded",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : "?";
}

static int parse_name(const char *const *names, size_t n, const char *s,
		      size_t first, int *out)
{
	for (size_t i = first; s && i < n; i++) {
		if (!strcmp(s, names[i])) {
			*out = (int)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

const char *alloc_action_name(enum alloc_action a)
{
	return name_of(action_names, NELEM(action_names), a);
}

const char *alloc_request_name(enum alloc_request r)
{
	return name_of(request_names, NELEM(request_names), r);
}

int alloc_request_parse(const char *s, enum alloc_request *out)
{
	int v;

	/* "none" is the absence of a request, not a value one can ask. */
	if (parse_name(request_names, NELEM(request_names), s, 1, &v) < 0)
		return -1;
	*out = (enum alloc_request)v;
	return 0;
}

const char *alloc_io_mode_name(enum alloc_io_mode m)
{
	return name_of(io_mode_names, NELEM(io_mode_names), m);
}

int alloc_io_mode_parse(const char *s, enum alloc_io_mode *out)
{
	int v;

	if (parse_name(io_mode_names, NELEM(io_mode_names), s, 1, &v) < 0)
		return -1;
	*out = (enum alloc_io_mode)v;
	return 0;
}

const char *alloc_health_name(enum alloc_health_state s)
{
	return name_of(health_names, NELEM(health_names), s);
}

int alloc_health_parse(const char *s, enum alloc_health_state *out)
{
	int v;

	if (parse_name(health_names, NELEM(health_names), s, 0, &v) < 0)
		return -1;
	*out = (enum alloc_health_state)v;
	return 0;
}

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
			cx->pad[id] = NO_DIGITS;
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
		    uint32_t **ids_out, size_t *n_out, fwd_error_t *err)
{
	hostlist_t hl = NULL;
	uint8_t *seen = NULL;
	uint32_t *ids = NULL;
	char *host = NULL;
	size_t n = 0;
	int count, rv = -1;

	if (!hostlist || !*hostlist) {
		errno = EINVAL;
		return errprintf(err, "nodes: empty node list");
	}
	hl = slurm_hostlist_create(hostlist);
	if (!hl || (count = slurm_hostlist_count(hl)) <= 0) {
		errno = EINVAL;
		errprintf(err, "nodes: \"%s\": not a valid Slurm hostlist",
			  hostlist);
		goto out;
	}
	ids = malloc((size_t)count * sizeof(*ids));
	seen = calloc(t->n_nodes ? t->n_nodes : 1, 1);
	if (!ids || !seen) {
		errno = ENOMEM;
		errprintf(err, "nodes: out of memory");
		goto out;
	}
	while ((host = slurm_hostlist_shift(hl))) {
		long id = topo_node_id(t, host);

		if (id < 0) {
			errno = EINVAL;
			errprintf(err, "nodes: node %s is not in the topology",
				  host);
			goto out;
		}
		if (seen[id]) {
			errno = EINVAL;
			errprintf(err, "nodes: node %s listed twice", host);
			goto out;
		}
		seen[id] = 1;
		ids[n++] = (uint32_t)id;
		free(host);
		host = NULL;
	}
	*ids_out = ids;
	*n_out = n;
	ids = NULL;
	rv = 0;
out:
	free(host);
	free(ids);
	free(seen);
	if (hl)
		slurm_hostlist_destroy(hl);
	return rv;
}

/* ---- decision object -------------------------------------------------- */

void alloc_decision_destroy(struct alloc_decision *d)
{
	int saved = errno;

	if (!d)
		return;
	free(d->job_id);
	for (size_t i = 0; i < d->n_reasons; i++)
		free(d->reasons[i]);
	free(d->reasons);
	free(d->defaults);
	free(d->forwarders);
	free(d->private_fwd);
	free(d->blocks);
	for (size_t i = 0; i < d->n_mapping; i++)
		free(d->mapping[i].nodes);
	free(d->mapping);
	free(d->excluded_osts);
	free(d->profile.bw);
	for (size_t i = 0; i < d->n_forwarders; i++)
		free(d->forwarder_names ? d->forwarder_names[i] : NULL);
	free(d->forwarder_names);
	for (size_t i = 0; i < d->n_excluded_osts; i++)
		free(d->ost_names ? d->ost_names[i] : NULL);
	free(d->ost_names);
	free(d);
	errno = saved;
}

static int reason(struct alloc_decision *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int reason(struct alloc_decision *d, const char *fmt, ...)
{
	char buf[512];
	char **p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p = realloc(d->reasons, (d->n_reasons + 1) * sizeof(*p));
	if (!p)
		return -1;
	d->reasons = p;
	if (!(p[d->n_reasons] = strdup(buf)))
		return -1;
	d->n_reasons++;
	return 0;
}

/* "2.5GB/s"-style figures for reasons, from common/units. */
static const char *rate_str(double bps, char *buf, size_t len)
{
	if (bps >= 1e9)
		snprintf(buf, len, "%.3gGB/s", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, len, "%.3gMB/s", bps / 1e6);
	else
		snprintf(buf, len, "%.3gB/s", bps);
	return buf;
}

static const char *size_str(uint64_t v, char *buf, size_t len)
{
	const double gib = 1024.0 * 1024 * 1024;

	if (v >= (uint64_t)gib)
		snprintf(buf, len, "%.4gGiB", (double)v / gib);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)v);
	return buf;
}

bool alloc_is_disruptive(const struct policy *p, enum alloc_io_mode mode,
			 size_t n_nodes, double mdops, double peak_bps)
{
	const struct policy_interference *in = &p->decision.interference;

	return (mode == ALLOC_IO_N_1 && n_nodes > in->n1_min_nodes) ||
	       mdops > in->metadata_heavy_rate ||
	       (in->high_bandwidth > 0 && peak_bps > in->high_bandwidth);
}

/* Why a job is disruptive, for the reason text; "" when it is not. */
static void disruptive_why(const struct policy *p, enum alloc_io_mode mode,
			   size_t n_nodes, double mdops, double peak_bps,
			   char *buf, size_t len)
{
	const struct policy_interference *in = &p->decision.interference;
	char a[32], b[32];

	buf[0] = '\0';
	if (mode == ALLOC_IO_N_1 && n_nodes > in->n1_min_nodes)
		snprintf(buf, len, "N-1 I/O on %zu node%s > %u", n_nodes,
			 plural(n_nodes), in->n1_min_nodes);
	else if (mdops > in->metadata_heavy_rate)
		snprintf(buf, len, "metadata-heavy: %.0f ops/s > %.0f ops/s",
			 mdops, in->metadata_heavy_rate);
	else if (in->high_bandwidth > 0 && peak_bps > in->high_bandwidth)
		snprintf(buf, len, "high bandwidth: peak %s > %s",
			 rate_str(peak_bps, a, sizeof(a)),
			 rate_str(in->high_bandwidth, b, sizeof(b)));
}

/* ---- working state ---------------------------------------------------- */

struct work {
	const struct alloc_ctx *cx;
	const struct topology *t;
	const struct policy *p;
	const struct alloc_ledger *l;
	const struct alloc_health *h;
	const struct alloc_job *job;
	struct alloc_decision *d;
	uint32_t *cnt;	/* per forwarder: job nodes mapped by default */
	uint32_t *pool; /* idle forwarders, selection order */
	size_t n_pool;
	size_t pool_base;  /* pool size the share cap is computed from */
	size_t pool_next;  /* next pool forwarder to hand out */
	uint64_t *gweight; /* per group: job nodes served by default */
};

static enum alloc_health_state fstate(const struct work *w, uint32_t f)
{
	return w->h && w->h->forwarder ? w->h->forwarder[f] : ALLOC_HEALTH_OK;
}

/* Selection order: the job's groups first (by nodes served, then name),
 * least recently released, name. */
static int pool_cmp(const struct work *w, uint32_t x, uint32_t y)
{
	uint32_t gx = w->cx->group[x], gy = w->cx->group[y];
	double rx, ry;
	int c;

	if (w->gweight[gx] != w->gweight[gy])
		return w->gweight[gx] > w->gweight[gy] ? -1 : 1;
	if (gx != gy) {
		c = strcmp(w->cx->group_names[gx], w->cx->group_names[gy]);
		if (c)
			return c;
	}
	rx = alloc_ledger_last_release(w->l, x);
	ry = alloc_ledger_last_release(w->l, y);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(w->t->forwarders[x].name, w->t->forwarders[y].name);
}

/* Insertion sort: the pool is at most the forwarder count, and qsort has
 * no context argument (no globals here). */
static void pool_sort(struct work *w)
{
	for (size_t i = 1; i < w->n_pool; i++) {
		uint32_t v = w->pool[i];
		size_t j = i;

		while (j > 0 && pool_cmp(w, w->pool[j - 1], v) > 0) {
			w->pool[j] = w->pool[j - 1];
			j--;
		}
		w->pool[j] = v;
	}
}

static bool is_idle(const struct work *w, uint32_t f)
{
	return w->t->forwarders[f].role == TOPO_ROLE_BACKUP &&
	       fstate(w, f) == ALLOC_HEALTH_OK &&
	       alloc_ledger_holders(w->l, f, NULL) == 0;
}

/* ---- blocks and rendering --------------------------------------------- */

static int set_forwarders(struct alloc_decision *d, const uint32_t *fw,
			  const bool *priv, size_t n)
{
	free(d->forwarders);
	free(d->private_fwd);
	d->forwarders = malloc((n ? n : 1) * sizeof(*d->forwarders));
	d->private_fwd = malloc((n ? n : 1) * sizeof(*d->private_fwd));
	if (!d->forwarders || !d->private_fwd)
		return -1;
	memcpy(d->forwarders, fw, n * sizeof(*fw));
	memcpy(d->private_fwd, priv, n * sizeof(*priv));
	d->n_forwarders = n;
	return 0;
}

/* Balanced contiguous blocks of the job's nodes, one per forwarder. */
static int balanced_blocks(struct alloc_decision *d, size_t n_nodes)
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

/* The default mapping as blocks: runs of equal default forwarder, with
 * `subst[f]` standing for f (replacement of an excluded forwarder). */
static int default_blocks(struct work *w, const uint32_t *subst)
{
	struct alloc_decision *d = w->d;
	const struct alloc_job *job = w->job;
	const int32_t *nf = w->t->node_forwarder;
	size_t cap = w->d->n_defaults * 2 + 4;

	free(d->blocks);
	d->n_blocks = 0;
	if (!(d->blocks = malloc(cap * sizeof(*d->blocks))))
		return -1;
	for (size_t i = 0; i < job->n_nodes; i++) {
		uint32_t f = (uint32_t)nf[job->node_ids[i]];

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
	return cx->pad[prev] != NO_DIGITS && cx->pad[next] == cx->pad[prev] &&
	       cx->prefix[next] == cx->prefix[prev] &&
	       cx->num[next] == cx->num[prev] + 1;
}

/* Ranged hostlist of the job's nodes in the blocks served by `fwd`.
 * Built from name runs and normalised by libslurm; should its count ever
 * disagree, fall back to pushing every name. */
static char *render_nodes(const struct work *w, uint32_t fwd)
{
	const struct alloc_ctx *cx = w->cx;
	const struct alloc_decision *d = w->d;
	const uint32_t *ids = w->job->node_ids;
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

/* Mapping entries, forwarder and OST names: the parts of the decision that
 * are printed. */
static int render(struct work *w)
{
	struct alloc_decision *d = w->d;
	const struct topology *t = w->t;

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
		d->mapping[i].nodes = render_nodes(w, f);
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

/* ---- expected bandwidth ----------------------------------------------- */

static double est_bw(const struct alloc_profile *pr, double bf, double k)
{
	if (pr->n_bw) {
		const struct alloc_bw_point *b = pr->bw;
		size_t n = pr->n_bw;

		/* Below the first measurement: proportional to k. */
		if (k <= b[0].k)
			return b[0].bps * k / b[0].k;
		for (size_t i = 1; i < n; i++) {
			if (k <= b[i].k) {
				double x = (k - b[i - 1].k) /
					   (double)(b[i].k - b[i - 1].k);

				return b[i - 1].bps +
				       x * (b[i].bps - b[i - 1].bps);
			}
		}
		return b[n - 1].bps; /* no extrapolation past measurements */
	}
	return fmin(k * bf, (double)pr->io_nodes * pr->node_bandwidth_bps);
}

/* ---- the rules -------------------------------------------------------- */

static uint32_t take_pool(struct work *w)
{
	return w->pool[w->pool_next++];
}

/* The first remaining pool forwarder in `group` (else the first one):
 * a replacement stays near the nodes it serves. */
static uint32_t take_pool_group(struct work *w, uint32_t group)
{
	size_t k = w->pool_next;

	for (size_t i = w->pool_next; i < w->n_pool; i++) {
		if (w->cx->group[w->pool[i]] == group) {
			k = i;
			break;
		}
	}
	/* Rotate it to the front, keeping the others' order. */
	for (uint32_t v = w->pool[k]; k > w->pool_next; k--) {
		w->pool[k] = w->pool[k - 1];
		w->pool[k - 1] = v;
	}
	return take_pool(w);
}

static size_t pool_left(const struct work *w)
{
	return w->n_pool - w->pool_next;
}

/* Upgrade capacity after replacements: idle minus reserve, the pool-share
 * cap, and one more reason line for the binding cap(s). */
static size_t upgrade_room(struct work *w, size_t want, size_t *share_cap,
			   size_t *reserve_room)
{
	const struct policy_caps *c = &w->p->decision.caps;
	size_t left = pool_left(w);

	*share_cap = (size_t)floor(c->max_pool_share * (double)w->pool_base);
	*reserve_room = left > c->reserve ? left - c->reserve : 0;
	if (want > *share_cap)
		want = *share_cap;
	if (want > *reserve_room)
		want = *reserve_room;
	return want;
}

struct plan {
	bool considered, allowed, shadow, asked;
	bool want_scale, want_isolate;
	bool upgrade_denied;
	size_t n_excluded; /* excluded default forwarders */
};

static int cap_reasons(struct work *w, const char *what, size_t wanted,
		       size_t got, size_t share_cap, size_t reserve_room)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;

	if (got >= wanted)
		return 0;
	if (wanted > share_cap &&
	    reason(d,
		   "%s capped by max_pool_share %.2f: at most %zu of %zu "
		   "idle forwarder%s",
		   what, c->max_pool_share, share_cap, w->pool_base,
		   plural(w->pool_base)) < 0)
		return -1;
	if (wanted > reserve_room &&
	    reason(d,
		   "%s capped by the pool: %zu idle healthy forwarder%s, %u "
		   "kept in reserve",
		   what, pool_left(w), plural(pool_left(w)), c->reserve) < 0)
		return -1;
	return 0;
}

/* Keep the defaults (replacing excluded ones as far as the pool allows),
 * return the substitution table. */
static int replace_excluded(struct work *w, uint32_t *subst, bool *repl,
			    size_t *n_replaced)
{
	struct alloc_decision *d = w->d;

	*n_replaced = 0;
	for (size_t i = 0; i < d->n_defaults; i++) {
		uint32_t f = d->defaults[i];

		repl[i] = false;
		subst[f] = f;
		if (fstate(w, f) != ALLOC_HEALTH_EXCLUDED)
			continue;
		if (!pool_left(w)) {
			if (reason(d,
				   "forwarder %s is excluded but no healthy "
				   "idle forwarder is left to replace it",
				   w->t->forwarders[f].name) < 0)
				return -1;
			continue;
		}
		subst[f] = take_pool_group(w, w->cx->group[f]);
		repl[i] = true;
		(*n_replaced)++;
		if (reason(d, "forwarder %s is excluded: replaced by %s",
			   w->t->forwarders[f].name,
			   w->t->forwarders[subst[f]].name) < 0)
			return -1;
	}
	return 0;
}

static int apply_defaults(struct work *w, bool anomalies)
{
	struct alloc_decision *d = w->d;
	uint32_t *subst = NULL, *fw = NULL;
	bool *priv = NULL, *repl = NULL;
	size_t n_repl = 0;
	int rv = -1;

	subst = malloc(w->t->n_forwarders * sizeof(*subst));
	fw = malloc((d->n_defaults + 1) * sizeof(*fw));
	priv = malloc((d->n_defaults + 1) * sizeof(*priv));
	repl = malloc((d->n_defaults + 1) * sizeof(*repl));
	if (!subst || !fw || !priv || !repl)
		goto out;
	for (size_t f = 0; f < w->t->n_forwarders; f++)
		subst[f] = (uint32_t)f;
	if (anomalies && replace_excluded(w, subst, repl, &n_repl) < 0)
		goto out;
	for (size_t i = 0; i < d->n_defaults; i++) {
		fw[i] = subst[d->defaults[i]];
		priv[i] = fw[i] != d->defaults[i];
	}
	if (set_forwarders(d, fw, priv, d->n_defaults) < 0 ||
	    default_blocks(w, subst) < 0)
		goto out;
	d->rule_action = n_repl ? ALLOC_ACT_AVOID_ANOMALY : ALLOC_ACT_DEFAULT;
	rv = 0;
out:
	free(subst);
	free(fw);
	free(priv);
	free(repl);
	return rv;
}

/* Scale: defaults (with replacements) + private extras.  Returns 1 when
 * granted, 0 when not (reasons added, pool untouched), -1 on ENOMEM. */
static int try_scale(struct work *w, bool anomalies)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;
	size_t total = d->s, extras, want, share_cap, reserve_room;
	size_t saved_next = w->pool_next, n_repl = 0, nd = d->n_defaults;
	uint32_t *subst = NULL, *fw = NULL;
	bool *priv = NULL, *repl = NULL;
	size_t saved_reasons;
	int rv = -1;

	if (total > c->max_forwarders_per_job) {
		if (reason(d,
			   "scale capped by max_forwarders_per_job: %u of S = "
			   "%u",
			   c->max_forwarders_per_job, d->s) < 0)
			return -1;
		total = c->max_forwarders_per_job;
	}
	if (total > w->job->n_nodes) {
		if (reason(d, "scale capped at the job's %zu node%s",
			   w->job->n_nodes, plural(w->job->n_nodes)) < 0)
			return -1;
		total = w->job->n_nodes;
	}
	if (total <= nd) {
		if (reason(d,
			   "scale refused: the caps leave no forwarder beyond "
			   "the %zu default one%s",
			   nd, plural(nd)) < 0)
			return -1;
		return 0;
	}
	subst = malloc(w->t->n_forwarders * sizeof(*subst));
	fw = malloc((total + 1) * sizeof(*fw));
	priv = malloc((total + 1) * sizeof(*priv));
	repl = malloc((nd + 1) * sizeof(*repl));
	if (!subst || !fw || !priv || !repl)
		goto out;
	for (size_t f = 0; f < w->t->n_forwarders; f++)
		subst[f] = (uint32_t)f;
	saved_reasons = d->n_reasons;
	if (anomalies && replace_excluded(w, subst, repl, &n_repl) < 0)
		goto out;
	want = total - nd;
	extras = upgrade_room(w, want, &share_cap, &reserve_room);
	if (!extras) {
		/* Undo replacements: the caller falls back to the next rule,
		 * which replaces again. */
		w->pool_next = saved_next;
		while (d->n_reasons > saved_reasons)
			free(d->reasons[--d->n_reasons]);
		if (reason(d,
			   "scale refused: no idle forwarder available (%zu "
			   "idle healthy, %u in reserve, pool share cap %zu)",
			   pool_left(w), c->reserve, share_cap) < 0)
			goto out;
		rv = 0;
		goto out;
	}
	if (cap_reasons(w, "scale", want, extras, share_cap, reserve_room) < 0)
		goto out;
	for (size_t i = 0; i < nd; i++) {
		fw[i] = subst[d->defaults[i]];
		priv[i] = fw[i] != d->defaults[i];
	}
	for (size_t i = 0; i < extras; i++) {
		fw[nd + i] = take_pool(w);
		priv[nd + i] = true;
	}
	if (set_forwarders(d, fw, priv, nd + extras) < 0 ||
	    balanced_blocks(d, w->job->n_nodes) < 0)
		goto out;
	if (reason(d, "scale: %zu forwarder%s (%zu default + %zu private)",
		   nd + extras, plural(nd + extras), nd, extras) < 0)
		goto out;
	d->rule_action = ALLOC_ACT_SCALE;
	rv = 1;
out:
	free(subst);
	free(fw);
	free(priv);
	free(repl);
	return rv;
}

/* Isolate: max(S, N_f) private forwarders from the pool. */
static int try_isolate(struct work *w)
{
	const struct policy_caps *c = &w->p->decision.caps;
	struct alloc_decision *d = w->d;
	size_t want = d->s > d->n_f ? d->s : d->n_f, got, share_cap;
	size_t reserve_room, capped = want;
	uint32_t *fw = NULL;
	bool *priv = NULL;
	int rv = -1;

	if (capped > c->max_forwarders_per_job)
		capped = c->max_forwarders_per_job;
	if (capped > w->job->n_nodes)
		capped = w->job->n_nodes;
	got = upgrade_room(w, capped, &share_cap, &reserve_room);
	if (got < d->n_f || !got) {
		return reason(d,
			      "isolation refused: needs at least N_f = %u "
			      "private forwarder%s, %zu available (%zu idle "
			      "healthy, %u in reserve, pool share cap %zu, "
			      "max_forwarders_per_job %u)",
			      d->n_f, plural(d->n_f), got, pool_left(w),
			      c->reserve, share_cap,
			      c->max_forwarders_per_job) < 0
			       ? -1
			       : 0;
	}
	if (capped < want &&
	    reason(d, "isolation capped by max_forwarders_per_job %u",
		   c->max_forwarders_per_job) < 0)
		return -1;
	if (cap_reasons(w, "isolation", capped, got, share_cap, reserve_room) <
	    0)
		return -1;
	fw = malloc(got * sizeof(*fw));
	priv = malloc(got * sizeof(*priv));
	if (!fw || !priv)
		goto out;
	for (size_t i = 0; i < got; i++) {
		fw[i] = take_pool(w);
		priv[i] = true;
	}
	if (set_forwarders(d, fw, priv, got) < 0 ||
	    balanced_blocks(d, w->job->n_nodes) < 0)
		goto out;
	if (reason(d, "isolate: %zu private forwarder%s", got, plural(got)) < 0)
		goto out;
	d->rule_action = ALLOC_ACT_ISOLATE;
	rv = 1;
out:
	free(fw);
	free(priv);
	return rv;
}

/* B_f: mean benchmarked bandwidth of the job's default forwarders. */
static double mean_bf(const struct work *w)
{
	const struct alloc_decision *d = w->d;
	double bf = 0;

	for (size_t i = 0; i < d->n_defaults; i++)
		bf += w->t->forwarders[d->defaults[i]].bandwidth_bps;
	return d->n_defaults ? bf / (double)d->n_defaults : 0;
}

/* S = ceil(N_io * B_c / B_f); it sizes both scaling and isolation. */
static void compute_s(struct work *w)
{
	const struct alloc_profile *pr = w->job->profile;
	double bf = mean_bf(w), s;

	s = bf > 0 ? ceil((double)pr->io_nodes * pr->node_bandwidth_bps / bf)
		   : 0;
	w->d->s = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* Eligibility; returns (in *want) whether scaling is wanted. */
static int scale_check(struct work *w, bool *want)
{
	const struct policy_scale *sc = &w->p->decision.scale;
	const struct alloc_profile *pr = w->job->profile;
	struct alloc_decision *d = w->d;
	char a[32], b[32], c[32];
	double bf = mean_bf(w);

	*want = false;
	if (pr->io_volume_bytes <= sc->min_volume)
		return reason(d,
			      "not eligible for scaling: I/O volume %s <= "
			      "V_min %s",
			      size_str(pr->io_volume_bytes, a, sizeof(a)),
			      size_str(sc->min_volume, b, sizeof(b)));
	if (pr->io_nodes <= sc->min_io_nodes)
		return reason(d,
			      "not eligible for scaling: %u I/O node%s <= "
			      "N_min %u",
			      pr->io_nodes, plural(pr->io_nodes),
			      sc->min_io_nodes);
	if (pr->mdops >= sc->max_metadata_rate)
		return reason(d,
			      "not eligible for scaling: metadata-bound "
			      "(%.0f ops/s >= %.0f ops/s)",
			      pr->mdops, sc->max_metadata_rate);
	if (d->s <= d->n_f)
		return reason(d,
			      "no scaling needed: S = %u <= N_f = %u "
			      "(N_io %u x B_c %s / B_f %s)",
			      d->s, d->n_f, pr->io_nodes,
			      rate_str(pr->node_bandwidth_bps, a, sizeof(a)),
			      rate_str(bf, b, sizeof(b)));
	*want = true;
	return reason(d,
		      "demanding: S = %u > N_f = %u (N_io %u x B_c %s / B_f "
		      "%s = %s needed)",
		      d->s, d->n_f, pr->io_nodes,
		      rate_str(pr->node_bandwidth_bps, a, sizeof(a)),
		      rate_str(bf, b, sizeof(b)),
		      rate_str((double)pr->io_nodes * pr->node_bandwidth_bps, c,
			       sizeof(c)));
}

static int interference_check(struct work *w, bool *want)
{
	const struct policy_interference *in = &w->p->decision.interference;
	const struct alloc_profile *pr = w->job->profile;
	struct alloc_decision *d = w->d;
	char why[160];

	*want = false;
	disruptive_why(w->p, pr->io_mode, w->job->n_nodes, pr->mdops,
		       pr->peak_bandwidth_bps, why, sizeof(why));
	if (why[0]) {
		*want = true;
		return reason(d, "disruptive (%s): private forwarders", why);
	}
	if (!(pr->iops > in->vulnerable_iops))
		return 0;
	for (size_t i = 0; i < d->n_defaults; i++) {
		const struct alloc_ledger_entry *const *hold;
		size_t n = alloc_ledger_holders(w->l, d->defaults[i], &hold);

		for (size_t k = 0; k < n; k++) {
			const struct alloc_ledger_entry *e = hold[k];

			/* Unknown size: an N-1 holder counts as large. */
			disruptive_why(w->p, e->io_mode,
				       e->n_nodes ? e->n_nodes : SIZE_MAX,
				       e->mdops, e->bandwidth_bps, why,
				       sizeof(why));
			if (!why[0])
				continue;
			*want = true;
			return reason(d,
				      "vulnerable (%.0f IOPS > %.0f) and "
				      "neighbour job %s on %s is disruptive "
				      "(%s): private forwarders",
				      pr->iops, in->vulnerable_iops, e->job_id,
				      w->t->forwarders[d->defaults[i]].name,
				      why);
		}
	}
	return 0;
}

static int access_check(struct work *w, struct plan *pl)
{
	const struct policy_access *a = &w->p->access;
	const struct alloc_job *job = w->job;
	struct alloc_decision *d = w->d;
	char why[256];

	pl->shadow = job->request == ALLOC_REQ_SHADOW ||
		     a->mode == POLICY_MODE_SHADOW;
	pl->asked = job->request == ALLOC_REQ_AUTO ||
		    job->request == ALLOC_REQ_SCALE ||
		    job->request == ALLOC_REQ_ISOLATE ||
		    job->request == ALLOC_REQ_SHADOW;
	switch (job->request) {
	case ALLOC_REQ_OFF:
		pl->considered = false;
		return reason(d, "upgrade off by request (--io-upgrade=off)");
	case ALLOC_REQ_NONE:
		pl->considered = a->mode == POLICY_MODE_OPT_OUT ||
				 a->mode == POLICY_MODE_SHADOW;
		if (!pl->considered && a->mode == POLICY_MODE_OPT_IN)
			return reason(d, "not opted in (no --io-upgrade; "
					 "access.mode opt-in)");
		break;
	default:
		pl->considered = true;
	}
	if (a->mode == POLICY_MODE_OFF) {
		pl->considered = false;
		return reason(d, "fwdalloc is off (access.mode off)");
	}
	if (!pl->considered)
		return 0;
	pl->allowed = policy_job_allowed(w->p, job->user, job->account,
					 job->partition, why, sizeof(why));
	if (!pl->allowed) {
		pl->considered = false;
		pl->upgrade_denied = pl->asked;
		return reason(d, "%s", why);
	}
	return 0;
}

static int copy_profile(struct alloc_decision *d, const struct alloc_profile *p)
{
	if (!p)
		return 0;
	d->has_profile = true;
	d->profile = *p;
	d->profile.bw = NULL;
	if (p->n_bw) {
		d->profile.bw = malloc(p->n_bw * sizeof(*p->bw));
		if (!d->profile.bw)
			return -1;
		memcpy(d->profile.bw, p->bw, p->n_bw * sizeof(*p->bw));
	}
	return 0;
}

static bool same_set(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		size_t j;

		for (j = 0; j < nb && b[j] != a[i]; j++)
			;
		if (j == nb)
			return false;
	}
	return true;
}

/* The job already holds an entry: give it back. */
static int from_entry(struct work *w, const struct alloc_ledger_entry *e)
{
	struct alloc_decision *d = w->d;
	size_t sum = 0;

	d->action = d->rule_action = e->action;
	if (set_forwarders(d, e->forwarders, e->private_fwd, e->n_forwarders) <
	    0)
		return -1;
	for (size_t i = 0; i < e->n_blocks; i++)
		sum += e->blocks[i].count;
	if (e->n_blocks && sum == w->job->n_nodes) {
		d->blocks = malloc(e->n_blocks * sizeof(*d->blocks));
		if (!d->blocks)
			return -1;
		memcpy(d->blocks, e->blocks, e->n_blocks * sizeof(*e->blocks));
		d->n_blocks = e->n_blocks;
	} else if (same_set(e->forwarders, e->n_forwarders, d->defaults,
			    d->n_defaults)) {
		if (default_blocks(w, NULL) < 0)
			return -1;
	} else if (balanced_blocks(d, w->job->n_nodes) < 0) {
		return -1;
	}
	return reason(d, "job already holds an allocation: returning it");
}

static struct alloc_decision *
decide(const struct alloc_ctx *cx, const struct policy *p,
       const struct alloc_ledger *l, const struct alloc_health *h,
       const struct alloc_job *job, size_t pool_base, fwd_error_t *err)
{
	const struct topology *t = cx->t;
	struct work w = {.cx = cx, .t = t, .p = p, .l = l, .h = h, .job = job};
	struct alloc_decision *d = NULL;
	const struct alloc_ledger_entry *held;
	struct plan pl = {0};
	bool anomalies;
	int got = 0;

	if (!job->job_id || !*job->job_id) {
		errno = EINVAL;
		errprintf(err, "job_id: missing or empty");
		return NULL;
	}
	if (!job->n_nodes || !job->node_ids) {
		errno = EINVAL;
		errprintf(err, "job %s: no nodes", job->job_id);
		return NULL;
	}
	if (l && alloc_ledger_topology(l) != t) {
		errno = EINVAL;
		errprintf(err, "ledger belongs to another topology");
		return NULL;
	}
	if (!(d = calloc(1, sizeof(*d))) || !(d->job_id = strdup(job->job_id)))
		goto nomem;
	w.d = d;
	d->request = job->request;
	snprintf(d->policy_digest, sizeof(d->policy_digest), "%s", p->digest);
	if (copy_profile(d, job->profile) < 0)
		goto nomem;

	/* 1. Default mapping and N_f. */
	w.cnt = calloc(t->n_forwarders + 1, sizeof(*w.cnt));
	w.gweight = calloc(cx->n_groups + 1, sizeof(*w.gweight));
	w.pool = malloc((t->n_forwarders + 1) * sizeof(*w.pool));
	d->defaults = malloc((t->n_forwarders + 1) * sizeof(*d->defaults));
	if (!w.cnt || !w.gweight || !w.pool || !d->defaults)
		goto nomem;
	for (size_t i = 0; i < job->n_nodes; i++) {
		uint32_t id = job->node_ids[i];
		int32_t f;

		if (id >= t->n_nodes) {
			errno = EINVAL;
			errprintf(err,
				  "job %s: node id %u outside the "
				  "topology (%zu nodes)",
				  job->job_id, id, t->n_nodes);
			goto fail;
		}
		f = t->node_forwarder[id];
		if (f < 0) {
			errno = EINVAL;
			errprintf(err,
				  "job %s: node %s has no default "
				  "forwarder",
				  job->job_id, t->node_names[id]);
			goto fail;
		}
		if (w.cnt[f]++ == 0)
			d->defaults[d->n_defaults++] = (uint32_t)f;
		w.gweight[cx->group[f]]++;
	}
	d->n_f = (uint32_t)d->n_defaults;

	for (size_t o = 0; h && h->ost && o < t->n_osts; o++) {
		if (h->ost[o] != ALLOC_HEALTH_EXCLUDED)
			continue;
		if (!d->excluded_osts &&
		    !(d->excluded_osts =
			      malloc(t->n_osts * sizeof(*d->excluded_osts))))
			goto nomem;
		d->excluded_osts[d->n_excluded_osts++] = (uint32_t)o;
	}

	held = alloc_ledger_find(l, job->job_id);
	if (held) {
		if (from_entry(&w, held) < 0)
			goto nomem;
		goto render;
	}

	/* The pool, in selection order. */
	for (size_t f = 0; f < t->n_forwarders; f++)
		if (is_idle(&w, (uint32_t)f))
			w.pool[w.n_pool++] = (uint32_t)f;
	pool_sort(&w);
	w.pool_base = pool_base != SIZE_MAX ? pool_base : w.n_pool;

	if (access_check(&w, &pl) < 0)
		goto nomem;
	anomalies = p->decision.avoid_anomalies &&
		    p->access.mode != POLICY_MODE_OFF;
	if (pl.considered && !job->profile &&
	    reason(d, "no I/O history for this application") < 0)
		goto nomem;
	if (pl.considered && job->profile) {
		bool sc_ok = p->decision.scale.enabled &&
			     job->request != ALLOC_REQ_ISOLATE;
		bool is_ok = p->decision.interference.enabled &&
			     job->request != ALLOC_REQ_SCALE;

		compute_s(&w);
		if (sc_ok && scale_check(&w, &pl.want_scale) < 0)
			goto nomem;
		if (!sc_ok &&
		    reason(d, job->request == ALLOC_REQ_ISOLATE
				      ? "scaling not considered: isolate "
					"requested"
				      : "scaling disabled by the policy") < 0)
			goto nomem;
		if (is_ok && interference_check(&w, &pl.want_isolate) < 0)
			goto nomem;
		if (!is_ok &&
		    reason(d, job->request == ALLOC_REQ_SCALE
				      ? "isolation not considered: scale "
					"requested"
				      : "interference avoidance disabled by "
					"the policy") < 0)
			goto nomem;
		if (!pl.want_scale && !pl.want_isolate &&
		    reason(d, "no upgrade needed: default mapping") < 0)
			goto nomem;
	}

	/* Precedence: scale > isolate > avoid-anomaly > default. */
	if (pl.want_scale && (got = try_scale(&w, anomalies)) < 0)
		goto nomem;
	if (!got && pl.want_isolate && (got = try_isolate(&w)) < 0)
		goto nomem;
	if (!got && apply_defaults(&w, anomalies) < 0)
		goto nomem;
	if (!got && (pl.want_scale || pl.want_isolate))
		pl.upgrade_denied = true;

	if (job->profile) {
		const struct alloc_profile *pr = job->profile;
		double bf = mean_bf(&w);

		if (got)
			d->gain_bps = est_bw(pr, bf, (double)d->n_forwarders) -
				      est_bw(pr, bf, (double)d->n_f);
		if (d->gain_bps < 0)
			d->gain_bps = 0;
	}

	d->action = d->rule_action;
	if (pl.shadow) {
		d->action = ALLOC_ACT_SHADOW;
		if (reason(d, "shadow mode: would %s; nothing applied",
			   d->rule_action == ALLOC_ACT_DEFAULT
				   ? "keep the default mapping"
				   : alloc_action_name(d->rule_action)) < 0)
			goto nomem;
	} else if (pl.upgrade_denied &&
		   (d->rule_action == ALLOC_ACT_DEFAULT ||
		    d->rule_action == ALLOC_ACT_AVOID_ANOMALY)) {
		d->action = ALLOC_ACT_REFUSED;
	}

render:
	if (render(&w) < 0)
		goto nomem;
	free(w.cnt);
	free(w.gweight);
	free(w.pool);
	return d;
nomem:
	errno = ENOMEM;
	errprintf(err, "decision: out of memory");
fail:
	free(w.cnt);
	free(w.gweight);
	free(w.pool);
	alloc_decision_destroy(d);
	return NULL;
}

struct alloc_decision *alloc_decide(const struct alloc_ctx *cx,
				    const struct policy *p,
				    const struct alloc_ledger *ledger,
				    const struct alloc_health *health,
				    const struct alloc_job *job, double now,
				    fwd_error_t *err)
{
	(void)now; /* reserved: age-based rules; the ledger carries times */
	return decide(cx, p, ledger, health, job, SIZE_MAX, err);
}

/* ---- batch ------------------------------------------------------------ */

static size_t pool_taken(const struct alloc_decision *d)
{
	size_t n = 0;

	if (d->action == ALLOC_ACT_SHADOW)
		return 0;
	for (size_t i = 0; i < d->n_forwarders; i++)
		n += d->private_fwd[i];
	return n;
}

int alloc_decide_batch(const struct alloc_ctx *cx, const struct policy *p,
		       const struct alloc_ledger *ledger,
		       const struct alloc_health *health,
		       const struct alloc_job *jobs, size_t n_jobs, double now,
		       struct alloc_decision **out, fwd_error_t *err)
{
	struct alloc_decision **alone = NULL;
	struct alloc_ledger *scratch = NULL;
	size_t *order = NULL, base = 0;
	int rv = -1;

	for (size_t i = 0; i < n_jobs; i++)
		out[i] = NULL;
	alone = calloc(n_jobs + 1, sizeof(*alone));
	order = malloc((n_jobs + 1) * sizeof(*order));
	scratch = ledger ? alloc_ledger_clone(ledger)
			 : alloc_ledger_create(cx->t);
	if (!alone || !order || !scratch) {
		errno = ENOMEM;
		errprintf(err, "batch: out of memory");
		goto out;
	}
	for (size_t f = 0; f < cx->t->n_forwarders; f++) {
		struct work w = {.t = cx->t, .l = scratch, .h = health};

		base += is_idle(&w, (uint32_t)f);
	}
	for (size_t i = 0; i < n_jobs; i++) {
		alone[i] =
			decide(cx, p, scratch, health, &jobs[i], SIZE_MAX, err);
		if (!alone[i]) {
			errprefix(err, "job %zu", i);
			goto out;
		}
		order[i] = i;
	}
	if (p->decision.contention == POLICY_CONTENTION_GAIN) {
		/* Stable insertion sort: larger gain first, ties in input
		 * order. */
		for (size_t i = 1; i < n_jobs; i++) {
			size_t v = order[i], j = i;

			while (j > 0 && alone[order[j - 1]]->gain_bps <
						alone[v]->gain_bps) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
	}
	for (size_t r = 0; r < n_jobs; r++) {
		size_t i = order[r];
		struct alloc_decision *d;
		char g[32];

		d = decide(cx, p, scratch, health, &jobs[i], base, err);
		if (!d) {
			errprefix(err, "job %s", jobs[i].job_id);
			goto out;
		}
		out[i] = d;
		if (pool_taken(d) < pool_taken(alone[i]) &&
		    reason(d,
			   "pool contention: ranked %zu of %zu (%s, expected "
			   "gain %s); alone it would get %zu pool "
			   "forwarder%s, got %zu",
			   r + 1, n_jobs,
			   p->decision.contention == POLICY_CONTENTION_GAIN
				   ? "by expected gain"
				   : "first come, first served",
			   rate_str(alone[i]->gain_bps, g, sizeof(g)),
			   pool_taken(alone[i]), plural(pool_taken(alone[i])),
			   pool_taken(d)) < 0) {
			errno = ENOMEM;
			errprintf(err, "batch: out of memory");
			goto out;
		}
		if (alloc_ledger_acquire(scratch, d, jobs[i].n_nodes, now,
					 err) < 0)
			goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		for (size_t i = 0; i < n_jobs; i++) {
			alloc_decision_destroy(out[i]);
			out[i] = NULL;
		}
	for (size_t i = 0; alone && i < n_jobs; i++)
		alloc_decision_destroy(alone[i]);
	free(alone);
	free(order);
	alloc_ledger_destroy(scratch);
	return rv;
}
