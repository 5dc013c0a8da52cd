/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job I/O summaries from per-node traces.  Nodes are added one after the
 * other; per file we keep its volume and how many distinct nodes moved
 * bytes on it (nodes arrive sequentially, so "last node seen" is enough
 * to count distinct ones), per second the job's bytes, requests and
 * metadata operations.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "profiler/summary.h"

/* ---- small hash maps (open addressing, power-of-two capacity) ---- */

struct smap { /* string -> uint32 */
	char **keys;
	uint32_t *vals;
	size_t cap, n;
};

struct umap { /* uint64 -> uint32 */
	uint64_t *keys;
	uint32_t *vals;
	unsigned char *used;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void smap_free(struct smap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Index of key's slot (empty slot when absent). */
static size_t smap_slot(const struct smap *m, const char *key)
{
	size_t i = hash_str(key) & (m->cap - 1);

	while (m->keys[i] && strcmp(m->keys[i], key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int smap_grow(struct smap *m)
{
	struct smap n = {0};

	n.cap = m->cap ? m->cap * 2 : 64;
	n.keys = calloc(n.cap, sizeof(char *));
	n.vals = calloc(n.cap, sizeof(uint32_t));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i]) {
			size_t s = smap_slot(&n, m->keys[i]);

			n.keys[s] = m->keys[i];
			n.vals[s] = m->vals[i];
		}
	}
	n.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/* Find key; 1 found (*val set), 0 absent. */
static int smap_get(const struct smap *m, const char *key, uint32_t *val)
{
	size_t s;

	if (!m->cap)
		return 0;
	s = smap_slot(m, key);
	if (!m->keys[s])
		return 0;
	*val = m->vals[s];
	return 1;
}

static int smap_put(struct smap *m, const char *key, uint32_t val)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && smap_grow(m))
		return -1;
	s = smap_slot(m, key);
	if (!m->keys[s]) {
		if (!(m->keys[s] = strdup(key)))
			return -1;
		m->n++;
	}
	m->vals[s] = val;
	return 0;
}

static void umap_free(struct umap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static size_t umap_slot(const struct umap *m, uint64_t key)
{
	size_t i = hash_u64(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int umap_grow(struct umap *m)
{
	struct umap n = {0};

	n.cap = m->cap ? m->cap * 2 : 64;
	n.keys = calloc(n.cap, sizeof(uint64_t));
	n.vals = calloc(n.cap, sizeof(uint32_t));
	n.used = calloc(n.cap, 1);
	if (!n.keys || !n.vals || !n.used) {
		umap_free(&n);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->used[i]) {
			size_t s = umap_slot(&n, m->keys[i]);

			n.used[s] = 1;
			n.keys[s] = m->keys[i];
			n.vals[s] = m->vals[i];
		}
	}
	n.n = m->n;
	umap_free(m);
	*m = n;
	return 0;
}

static int umap_get(const struct umap *m, uint64_t key, uint32_t *val)
{
	size_t s;

	if (!m->cap)
		return 0;
	s = umap_slot(m, key);
	if (!m->used[s])
		return 0;
	*val = m->vals[s];
	return 1;
}

static int umap_put(struct umap *m, uint64_t key, uint32_t val)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && umap_grow(m))
		return -1;
	s = umap_slot(m, key);
	if (!m->used[s]) {
		m->used[s] = 1;
		m->keys[s] = key;
		m->n++;
	}
	m->vals[s] = val;
	return 0;
}

/* ---- job state ---- */

enum { DIR_READ, DIR_WRITE, DIR_ANY, N_DIR };

struct file_ent {
	uint64_t bytes[N_DIR];
	uint32_t nodes[N_DIR];	   /* distinct nodes that moved bytes */
	uint32_t last_node[N_DIR]; /* node index + 1 that did it last */
};

struct sec {
	uint64_t bytes, rbytes, ops, md;
};

struct trace_job {
	struct trace_summary_opts o;
	bool finished;
	struct smap node_names;
	uint32_t n_nodes;
	/* the node being added */
	bool in_node;
	uint32_t cur;	  /* its index + 1 */
	struct umap fds;  /* fd -> file index */
	struct umap pids; /* pids that moved bytes */
	bool nopid_io;
	uint64_t node_bytes[N_DIR];
	/* per node: did it move bytes (per direction) */
	unsigned char *node_io[N_DIR];
	size_t node_cap;
	/* files */
	struct smap file_ix;
	struct file_ent *files;
	size_t n_files, files_cap;
	/* per-second series */
	struct sec *sec;
	int64_t base; /* time of sec[0] */
	size_t n_sec, sec_cap;
	/* totals */
	uint64_t bytes[2], ops[2], mdops;
	uint32_t io_nodes, io_procs;
	uint64_t records, lines, skipped, outside;
};

void trace_summary_opts_default(struct trace_summary_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->phase_fraction = 0.1;
	o->phase_gap = 2;
	o->job_nodes = 0;
	o->max_span = 31 * 86400;
}

struct trace_job *trace_job_create(const struct trace_summary_opts *o)
{
	struct trace_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	if (o)
		j->o = *o;
	else
		trace_summary_opts_default(&j->o);
	if (j->o.max_span == 0)
		j->o.max_span = 31 * 86400;
	return j;
}

void trace_job_destroy(struct trace_job *j)
{
	int saved = errno;

	if (!j)
		return;
	smap_free(&j->node_names);
	umap_free(&j->fds);
	umap_free(&j->pids);
	for (int d = 0; d < N_DIR; d++)
		free(j->node_io[d]);
	smap_free(&j->file_ix);
	free(j->files);
	free(j->sec);
	free(j);
	errno = saved;
}

int trace_job_node_begin(struct trace_job *j, const char *node,
			 fwd_error_t *err)
{
	uint32_t dummy;

	if (j->finished || j->in_node) {
		errno = EINVAL;
		return errprintf(err, "node %s: previous node not ended", node);
	}
	if (!node || !*node) {
		errno = EINVAL;
		return errprintf(err, "empty node name");
	}
	if (smap_get(&j->node_names, node, &dummy)) {
		errno = EEXIST;
		return errprintf(err, "node %s given twice", node);
	}
	if (j->n_nodes == j->node_cap) {
		size_t cap = j->node_cap ? j->node_cap * 2 : 64;

		for (int d = 0; d < N_DIR; d++) {
			unsigned char *p = realloc(j->node_io[d], cap);

			if (!p)
				return errprintf(err, "out of memory");
			memset(p + j->node_cap, 0, cap - j->node_cap);
			j->node_io[d] = p;
		}
		j->node_cap = cap;
	}
	if (smap_put(&j->node_names, node, j->n_nodes))
		return errprintf(err, "out of memory");
	j->cur = ++j->n_nodes;
	j->in_node = true;
	j->nopid_io = false;
	memset(j->node_bytes, 0, sizeof(j->node_bytes));
	return 0;
}

int trace_job_node_end(struct trace_job *j, fwd_error_t *err)
{
	if (!j->in_node) {
		errno = EINVAL;
		return errprintf(err, "no node begun");
	}
	if (j->node_bytes[DIR_ANY]) {
		j->io_nodes++;
		j->io_procs += (uint32_t)j->pids.n + (j->nopid_io ? 1 : 0);
	}
	for (int d = 0; d < N_DIR; d++)
		j->node_io[d][j->cur - 1] = j->node_bytes[d] > 0;
	umap_free(&j->fds);
	umap_free(&j->pids);
	j->in_node = false;
	return 0;
}

static int file_get(struct trace_job *j, const char *key, uint32_t *ix)
{
	if (smap_get(&j->file_ix, key, ix))
		return 0;
	if (FWD_GROW(j->files, j->files_cap, j->n_files + 1, 64) < 0)
		return -1;
	if (j->n_files >= UINT32_MAX)
		return -1;
	memset(&j->files[j->n_files], 0, sizeof(j->files[0]));
	*ix = (uint32_t)j->n_files;
	if (smap_put(&j->file_ix, key, *ix))
		return -1;
	j->n_files++;
	return 0;
}

/* The per-second slot for t, growing the series as needed. */
static struct sec *sec_at(struct trace_job *j, int64_t t, fwd_error_t *err)
{
	if (j->n_sec == 0) {
		j->base = t;
	} else if (t < j->base) {
		size_t shift = (size_t)(j->base - t);

		if (shift + j->n_sec > j->o.max_span)
			goto span;
		if (shift + j->n_sec > j->sec_cap) {
			size_t cap = (shift + j->n_sec) * 2;
			struct sec *s = realloc(j->sec, cap * sizeof(*s));

			if (!s)
				goto nomem;
			j->sec = s;
			j->sec_cap = cap;
		}
		memmove(j->sec + shift, j->sec, j->n_sec * sizeof(*j->sec));
		memset(j->sec, 0, shift * sizeof(*j->sec));
		j->n_sec += shift;
		j->base = t;
	}
	if ((uint64_t)(t - j->base) >= j->o.max_span)
		goto span;
	if ((size_t)(t - j->base) >= j->n_sec) {
		size_t need = (size_t)(t - j->base) + 1;

		if (need > j->sec_cap) {
			size_t cap = need * 2 > 1024 ? need * 2 : 1024;
			struct sec *s;

			if (cap > j->o.max_span)
				cap = j->o.max_span;
			s = realloc(j->sec, cap * sizeof(*s));
			if (!s)
				goto nomem;
			j->sec = s;
			j->sec_cap = cap;
		}
		memset(j->sec + j->n_sec, 0,
		       (need - j->n_sec) * sizeof(*j->sec));
		j->n_sec = need;
	}
	return &j->sec[t - j->base];
span:
	errno = ERANGE;
	errprintf(err,
		  "traces span more than %" PRIu32 " seconds "
		  "(record at %" PRId64 ")",
		  j->o.max_span, t);
	return NULL;
nomem:
	errno = ENOMEM;
	errprintf(err, "out of memory");
	return NULL;
}

static void count_bytes(struct trace_job *j, uint32_t ix, int d, uint64_t b)
{
	struct file_ent *f = &j->files[ix];

	f->bytes[d] += b;
	if (f->last_node[d] != j->cur) {
		f->last_node[d] = j->cur;
		f->nodes[d]++;
	}
	j->node_bytes[d] += b;
}

int trace_job_add(struct trace_job *j, const struct trace_rec *r,
		  fwd_error_t *err)
{
	struct sec *s;
	uint32_t ix;
	char key[64];

	if (!j->in_node) {
		errno = EINVAL;
		return errprintf(err, "record outside a node");
	}
	if ((j->o.from && r->time < j->o.from) ||
	    (j->o.to && r->time > j->o.to)) {
		j->outside += r->n;
		return 0;
	}
	if (!(s = sec_at(j, r->time, err)))
		return -1;
	j->records += r->n;
	if (r->op == TRACE_OP_OPEN) {
		if (file_get(j, r->text, &ix) || umap_put(&j->fds, r->fd, ix))
			goto nomem;
	}
	if (r->op != TRACE_OP_READ && r->op != TRACE_OP_WRITE) {
		s->md += r->n;
		j->mdops += r->n;
		return 0;
	}
	if (!umap_get(&j->fds, r->fd, &ix)) {
		/* never opened in the trace: a file of this node alone; the
		 * \x1f cannot appear in an OPEN path from a text line */
		snprintf(key, sizeof(key), "\x1f%" PRIu32 ":%" PRIx64, j->cur,
			 r->fd);
		if (file_get(j, key, &ix) || umap_put(&j->fds, r->fd, ix))
			goto nomem;
	}
	uint64_t b = trace_rec_bytes(r), ops = trace_rec_requests(r);
	int d = r->op == TRACE_OP_READ ? DIR_READ : DIR_WRITE;

	s->bytes += b;
	if (d == DIR_READ)
		s->rbytes += b;
	s->ops += ops;
	j->bytes[d] += b;
	j->ops[d] += ops;
	if (b) {
		count_bytes(j, ix, d, b);
		count_bytes(j, ix, DIR_ANY, b);
		if (r->has_pid) {
			if (umap_put(&j->pids, r->pid, 1))
				goto nomem;
		} else {
			j->nopid_io = true;
		}
	}
	return 0;
nomem:
	errno = ENOMEM;
	return errprintf(err, "out of memory");
}

int trace_job_add_file(struct trace_job *j, const char *path, const char *node,
		       struct trace_stats *st, fwd_error_t *err)
{
	struct trace_reader *r;
	struct trace_rec rec;
	char nodebuf[256];
	int rv = -1, n;

	if (!(r = trace_reader_open(path, err)))
		return -1;
	if (!node)
		node = trace_reader_node(r);
	if (!node) {
		trace_node_from_path(path, nodebuf, sizeof(nodebuf));
		node = nodebuf;
	}
	if (trace_job_node_begin(j, node, err))
		goto out;
	while ((n = trace_reader_next(r, &rec, err)) == 1) {
		if (trace_job_add(j, &rec, err)) {
			errprefix(err, "%s", path);
			goto out_node;
		}
	}
	if (n < 0)
		goto out_node;
	rv = 0;
out_node:
	if (trace_job_node_end(j, rv ? NULL : err))
		rv = -1;
out:
	if (st)
		*st = *trace_reader_stats(r);
	j->lines += trace_reader_stats(r)->lines;
	j->skipped += trace_reader_stats(r)->skipped;
	trace_reader_destroy(r);
	return rv;
}

/* The I/O mode of one direction (see summary.h). */
static int cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The I/O mode of one direction (see summary.h).  owner: scratch room for
 * n_nodes counters.  The nodes writing per-node files are counted by
 * volume: the fewest nodes that carry 90 % of those bytes, so a node
 * reading a small private file does not turn a 1-1 job into N-N.
 */
static enum fwd_io_mode classify(const struct trace_job *j, int d,
				 uint32_t job_nodes, uint64_t *owner)
{
	uint64_t shared = 0, priv = 0, acc = 0;
	double weighted = 0;
	uint32_t io_nodes = 0, writers = 0;

	for (uint32_t i = 0; i < j->n_nodes; i++)
		io_nodes += j->node_io[d][i];
	if (io_nodes == 0)
		return FWD_IO_NONE;
	if (io_nodes == 1)
		return FWD_IO_1_1;
	memset(owner, 0, j->n_nodes * sizeof(*owner));
	for (size_t i = 0; i < j->n_files; i++) {
		const struct file_ent *f = &j->files[i];

		if (!f->bytes[d])
			continue;
		if (f->nodes[d] >= 2) {
			shared += f->bytes[d];
			weighted +=
				(double)f->bytes[d] * f->nodes[d] / io_nodes;
		} else {
			priv += f->bytes[d];
			owner[f->last_node[d] - 1] += f->bytes[d];
		}
	}
	if (shared >= priv)
		return weighted / (double)shared > 0.5 ? FWD_IO_N_1
						       : FWD_IO_N_M;
	qsort(owner, j->n_nodes, sizeof(*owner), cmp_u64_desc);
	while (writers < j->n_nodes && (double)acc < 0.9 * (double)priv)
		acc += owner[writers++];
	if (writers <= 1)
		return FWD_IO_1_1;
	return (uint64_t)writers * 2 > job_nodes ? FWD_IO_N_N : FWD_IO_N_M;
}

static int find_phases(struct trace_job *j, struct trace_summary *s)
{
	uint64_t peak_b = 0, peak_md = 0;
	double thr_b, thr_md;
	size_t i = 0, cap = 0;

	for (size_t t = 0; t < j->n_sec; t++) {
		if (j->sec[t].bytes > peak_b)
			peak_b = j->sec[t].bytes;
		if (j->sec[t].md > peak_md)
			peak_md = j->sec[t].md;
	}
	s->peak_bandwidth_bps = (double)peak_b;
	thr_b = j->o.phase_fraction * (double)peak_b;
	thr_md = j->o.phase_fraction * (double)peak_md;

#define ACTIVE(t)                                                 \
	((j->sec[t].bytes && (double)j->sec[t].bytes >= thr_b) || \
	 (j->sec[t].md && (double)j->sec[t].md >= thr_md))
	while (i < j->n_sec) {
		size_t start, last, t;
		struct trace_phase *ph;

		if (!ACTIVE(i)) {
			i++;
			continue;
		}
		start = last = i;
		for (t = i + 1; t < j->n_sec && t - last <= j->o.phase_gap; t++)
			if (ACTIVE(t))
				last = t;
		if (FWD_GROW(s->phases, cap, s->n_phases + 1, 16) < 0)
			return -1;
		ph = &s->phases[s->n_phases++];
		memset(ph, 0, sizeof(*ph));
		ph->start = j->base + (int64_t)start;
		ph->end = j->base + (int64_t)last;
		for (t = start; t <= last; t++) {
			ph->bytes += j->sec[t].bytes;
			ph->read_bytes += j->sec[t].rbytes;
			ph->ops += j->sec[t].ops;
			ph->mdops += j->sec[t].md;
		}
		ph->write_bytes = ph->bytes - ph->read_bytes;
		i = last + 1;
	}
#undef ACTIVE
	return 0;
}

int trace_job_finish(struct trace_job *j, struct trace_summary *s,
		     fwd_error_t *err)
{
	uint64_t pb = 0, pops = 0, pmd = 0;
	uint32_t job_nodes;
	uint64_t *owner;

	memset(s, 0, sizeof(*s));
	if (j->in_node || j->finished) {
		errno = EINVAL;
		return errprintf(err, "summary: node still open or finished");
	}
	j->finished = true;
	job_nodes = j->o.job_nodes ? j->o.job_nodes : j->n_nodes;
	if (job_nodes < j->io_nodes)
		job_nodes = j->io_nodes;
	s->nodes = job_nodes;
	s->io_nodes = j->io_nodes;
	s->io_procs = j->io_procs;
	s->read_bytes = j->bytes[DIR_READ];
	s->write_bytes = j->bytes[DIR_WRITE];
	s->read_ops = j->ops[DIR_READ];
	s->write_ops = j->ops[DIR_WRITE];
	s->mdops = j->mdops;
	for (size_t i = 0; i < j->n_files; i++) {
		if (j->files[i].bytes[DIR_ANY]) {
			s->files++;
			s->shared_files += j->files[i].nodes[DIR_ANY] > 1;
		}
	}
	owner = calloc(j->n_nodes + 1, sizeof(*owner));
	if (!owner) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	s->io_mode = classify(j, DIR_ANY, job_nodes, owner);
	s->read_mode = classify(j, DIR_READ, job_nodes, owner);
	s->write_mode = classify(j, DIR_WRITE, job_nodes, owner);
	free(owner);
	if (find_phases(j, s)) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	for (size_t i = 0; i < s->n_phases; i++) {
		const struct trace_phase *p = &s->phases[i];

		s->io_seconds += (double)(p->end - p->start + 1);
		pb += p->bytes;
		pops += p->ops;
		pmd += p->mdops;
	}
	if (s->io_seconds > 0) {
		s->phase_bandwidth_bps = (double)pb / s->io_seconds;
		s->iops = (double)pops / s->io_seconds;
		s->mdops_rate = (double)pmd / s->io_seconds;
		if (s->io_nodes)
			s->node_bandwidth_bps =
				s->phase_bandwidth_bps / s->io_nodes;
	}
	if (j->n_sec) {
		s->start = j->base;
		s->end = j->base + (int64_t)j->n_sec - 1;
	}
	s->records = j->records;
	s->lines = j->lines;
	s->skipped = j->skipped;
	s->outside = j->outside;
	return 0;
}

void trace_summary_free(struct trace_summary *s)
{
	if (!s)
		return;
	free(s->phases);
	s->phases = NULL;
	s->n_phases = 0;
}

json_t *trace_summary_to_json(const struct trace_summary *s)
{
	json_t *o = NULL, *ph = json_array();

	if (!ph)
		return NULL;
	for (size_t i = 0; i < s->n_phases; i++) {
		const struct trace_phase *p = &s->phases[i];

		if (json_array_append_new(
			    ph,
			    json_pack("{sI sI sI sI sI sI sI}", "start",
				      (json_int_t)p->start, "end",
				      (json_int_t)p->end, "seconds",
				      (json_int_t)(p->end - p->start + 1),
				      "read_bytes", (json_int_t)p->read_bytes,
				      "write_bytes", (json_int_t)p->write_bytes,
				      "ops", (json_int_t)p->ops, "mdops",
				      (json_int_t)p->mdops))) {
			json_decref(ph);
			return NULL;
		}
	}
	o = json_pack("{ss ss ss sI sI sI sI sI sI sI sI sf sI sI sf sf sf"
		      " sf sf sI sI so sI sI sI sI}",
		      "io_mode", fwd_io_mode_name(s->io_mode), "read_mode",
		      fwd_io_mode_name(s->read_mode), "write_mode",
		      fwd_io_mode_name(s->write_mode), "nodes",
		      (json_int_t)s->nodes, "io_nodes", (json_int_t)s->io_nodes,
		      "io_procs", (json_int_t)s->io_procs, "read_bytes",
		      (json_int_t)s->read_bytes, "write_bytes",
		      (json_int_t)s->write_bytes, "read_ops",
		      (json_int_t)s->read_ops, "write_ops",
		      (json_int_t)s->write_ops, "mdops", (json_int_t)s->mdops,
		      "mdops_rate", s->mdops_rate, "files",
		      (json_int_t)s->files, "shared_files",
		      (json_int_t)s->shared_files, "node_bandwidth_bps",
		      s->node_bandwidth_bps, "peak_bandwidth_bps",
		      s->peak_bandwidth_bps, "phase_bandwidth_bps",
		      s->phase_bandwidth_bps, "iops", s->iops, "io_seconds",
		      s->io_seconds, "start", (json_int_t)s->start, "end",
		      (json_int_t)s->end, "phases", ph, "records",
		      (json_int_t)s->records, "lines", (json_int_t)s->lines,
		      "skipped", (json_int_t)s->skipped, "outside",
		      (json_int_t)s->outside);
	return o;
}
