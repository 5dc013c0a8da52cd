/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compiled topology cache (topology/topo_cache.h).
 *
 * Layout, native byte order (checked by a marker):
 *   header   "FWDTOPO\0", u32 format, u32 0x01020304, u64 YAML size,
 *            i64 YAML mtime seconds, i64 nanoseconds, 32-byte SHA-256 of
 *            the YAML, u64 contents length, u64 contents checksum
 *   contents u64 forwarders, OSTs, nodes, mapping entries; then each
 *            forwarder (name, address, nid, group, f64 bandwidth, u32
 *            role) and OST (name, f64 bandwidth); the nodes: u64 length
 *            and the names, each NUL-terminated, one after the other,
 *            then i32 default forwarder of each, then u64 slots and the
 *            name index's slots (i32 each: topo_node_index()), so that
 *            reading it builds nothing; then each mapping entry (nodes,
 *            u64 forwarder, u64 count).  A string is u32 length (NUL
 *            included; 0 = NULL) and its bytes, NUL-terminated.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/sha256.h"
#include "topology/topo_cache.h"

#define MAGIC "FWDTOPO"
#define FORMAT 2u
#define BOM 0x01020304u
#define HEADER_LEN (8 + 4 + 4 + 8 + 8 + 8 + 32 + 8 + 8)
#define MAX_FILE (1u << 30)

/* What the cache must match: the YAML as it is now. */
struct ident {
	uint64_t size;
	int64_t sec, nsec;
	unsigned char sha[32];
};

static int read_all(const char *path, unsigned char **buf, size_t *len,
		    struct stat *st, fwd_error_t *err)
{
	unsigned char *b = NULL;
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return errprintf(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
	    (uint64_t)st->st_size > MAX_FILE) {
		if (!errno || S_ISREG(st->st_mode))
			errno = EFBIG;
		else
			errno = EINVAL;
		errprintf(err, "%s: not a regular file of a sane size", path);
		close(fd);
		return -1;
	}
	if (!(b = malloc((size_t)st->st_size + 1))) {
		close(fd);
		return errprintf(err, "%s: out of memory", path);
	}
	while (off < (size_t)st->st_size) {
		ssize_t r = read(fd, b + off, (size_t)st->st_size - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			errprintf(err, "%s: %s", path,
				  r == 0 ? "shrank while read"
					 : strerror(errno));
			free(b);
			close(fd);
			return -1;
		}
		off += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = off;
	return 0;
}

static int yaml_ident(const char *path, struct ident *id, fwd_error_t *err)
{
	unsigned char *b;
	size_t n;
	struct stat st;
	struct sha256_ctx c;

	if (read_all(path, &b, &n, &st, err) < 0)
		return -1;
	id->size = n;
	id->sec = (int64_t)st.st_mtim.tv_sec;
	id->nsec = (int64_t)st.st_mtim.tv_nsec;
	sha256_init(&c);
	sha256_update(&c, b, n);
	sha256_final(&c, id->sha);
	free(b);
	return 0;
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 1099511628211ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* ---- writing ---- */

struct wbuf {
	unsigned char *b;
	size_t n, cap;
	bool oom;
};

static void put(struct wbuf *w, const void *p, size_t n)
{
	if (w->oom || !n) /* memcpy wants a pointer even for 0 bytes */
		return;
	if (FWD_GROW(w->b, w->cap, w->n + n, 1 << 16) < 0) {
		w->oom = true;
		return;
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}

static void put_u64(struct wbuf *w, uint64_t v)
{
	put(w, &v, sizeof(v));
}

static void put_f64(struct wbuf *w, double v)
{
	put(w, &v, sizeof(v));
}

static void put_str(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) + 1 : 0;

	if (n > UINT32_MAX) {
		w->oom = true;
		return;
	}
	put_u32(w, (uint32_t)n);
	put(w, s, n);
}

static void encode(struct wbuf *w, const struct topology *t)
{
	put_u64(w, t->n_forwarders);
	put_u64(w, t->n_osts);
	put_u64(w, t->n_nodes);
	put_u64(w, t->n_mapping);
	for (size_t i = 0; i < t->n_forwarders; i++) {
		const struct topo_forwarder *f = &t->forwarders[i];

		put_str(w, f->name);
		put_str(w, f->address);
		put_str(w, f->nid);
		put_str(w, f->group);
		put_f64(w, f->bandwidth_bps);
		put_u32(w, (uint32_t)f->role);
	}
	for (size_t i = 0; i < t->n_osts; i++) {
		put_str(w, t->osts[i].name);
		put_f64(w, t->osts[i].bandwidth_bps);
	}
	{
		const int32_t *slots;
		size_t cap, len = 0;

		for (size_t i = 0; i < t->n_nodes; i++)
			len += strlen(t->node_names[i]) + 1;
		put_u64(w, len);
		for (size_t i = 0; i < t->n_nodes; i++)
			put(w, t->node_names[i], strlen(t->node_names[i]) + 1);
		put(w, t->node_forwarder, t->n_nodes * sizeof(int32_t));
		topo_node_index(t, &slots, &cap);
		put_u64(w, cap);
		put(w, slots, cap * sizeof(int32_t));
	}
	for (size_t i = 0; i < t->n_mapping; i++) {
		put_str(w, t->mapping[i].nodes);
		put_u64(w, t->mapping[i].forwarder);
		put_u64(w, t->mapping[i].count);
	}
}

static int write_file(const char *cache, const unsigned char *b, size_t n,
		      fwd_error_t *err)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", cache) >=
	    sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "%s: path too long", cache);
	}
	if ((fd = mkstemp(tmp)) < 0)
		return errprintf(err, "%s: %s", tmp, strerror(errno));
	while (off < n) {
		ssize_t r = write(fd, b + off, n - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errprintf(err, "%s: %s", tmp, strerror(errno));
			goto fail;
		}
		off += (size_t)r;
	}
	/* Readable by whoever may read the YAML; written by this account. */
	if (fchmod(fd, 0644) < 0 || close(fd) < 0) {
		fd = -1;
		errprintf(err, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, cache) < 0) {
		errprintf(err, "%s: %s", cache, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}

static int cache_write(const struct topology *t, const struct ident *id,
		       const char *cache, fwd_error_t *err)
{
	struct wbuf w = {0};
	uint64_t sum;
	int rv;

	put(&w, MAGIC, 8);
	put_u32(&w, FORMAT);
	put_u32(&w, BOM);
	put_u64(&w, id->size);
	put_u64(&w, (uint64_t)id->sec);
	put_u64(&w, (uint64_t)id->nsec);
	put(&w, id->sha, 32);
	put_u64(&w, 0); /* contents length, below */
	put_u64(&w, 0); /* checksum */
	encode(&w, t);
	if (w.oom) {
		free(w.b);
		errno = ENOMEM;
		return errprintf(err, "%s: out of memory", cache);
	}
	sum = checksum(w.b + HEADER_LEN, w.n - HEADER_LEN);
	{
		uint64_t len = w.n - HEADER_LEN;

		memcpy(w.b + HEADER_LEN - 16, &len, 8);
		memcpy(w.b + HEADER_LEN - 8, &sum, 8);
	}
	rv = write_file(cache, w.b, w.n, err);
	free(w.b);
	return rv;
}

int topo_cache_write(const struct topology *t, const char *path,
		     const char *cache, fwd_error_t *err)
{
	struct ident id;

	if (yaml_ident(path, &id, err) < 0)
		return -1;
	return cache_write(t, &id, cache, err);
}

/* ---- reading ---- */

struct rbuf {
	const unsigned char *p;
	size_t n, off;
	bool bad;
};

static void get(struct rbuf *r, void *out, size_t n)
{
	if (r->bad || r->n - r->off < n) {
		r->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p + r->off, n);
	r->off += n;
}

static uint32_t get_u32(struct rbuf *r)
{
	uint32_t v;

	get(r, &v, sizeof(v));
	return v;
}

static uint64_t get_u64(struct rbuf *r)
{
	uint64_t v;

	get(r, &v, sizeof(v));
	return v;
}

static double get_f64(struct rbuf *r)
{
	double v;

	get(r, &v, sizeof(v));
	return v;
}

/* A string inside the buffer (NUL-terminated there), or NULL. */
static const char *get_str(struct rbuf *r, bool *null)
{
	uint32_t n = get_u32(r);
	const char *s;

	*null = n == 0;
	if (r->bad || n == 0)
		return NULL;
	if (r->n - r->off < n || r->p[r->off + n - 1] != '\0' ||
	    memchr(r->p + r->off, '\0', n - 1)) {
		r->bad = true;
		return NULL;
	}
	s = (const char *)r->p + r->off;
	r->off += n;
	return s;
}

/* Counts no larger than the bytes left could describe. */
static bool count_ok(const struct rbuf *r, uint64_t n, size_t min_each)
{
	return !r->bad && n <= (r->n - r->off) / min_each;
}

/* The nodes section: names, default forwarders, the name index. */
static int decode_nodes(struct rbuf *r, struct topology *t, size_t n)
{
	uint64_t len = get_u64(r), cap;
	char *blob = NULL, **names = NULL;
	int32_t *fwd = NULL, *slots = NULL;
	size_t k = 0;
	fwd_error_t e;

	if (r->bad || n == 0 || len > r->n - r->off || len < 2 * n ||
	    r->p[r->off + len - 1] != '\0')
		goto bad;
	if (!(blob = malloc(len)) || !(names = malloc(n * sizeof(*names))) ||
	    !(fwd = malloc(n * sizeof(*fwd))))
		goto bad;
	get(r, blob, len);
	/* Exactly n names, none empty. */
	for (size_t off = 0; off < len; k++) {
		size_t l = strlen(blob + off);

		if (l == 0 || k == n)
			goto bad;
		names[k] = blob + off;
		off += l + 1;
	}
	if (k != n)
		goto bad;
	get(r, fwd, n * sizeof(*fwd));
	cap = get_u64(r);
	if (r->bad || cap > (r->n - r->off) / sizeof(*slots) ||
	    !(slots = malloc((size_t)cap * sizeof(*slots))))
		goto bad;
	get(r, slots, (size_t)cap * sizeof(*slots));
	if (r->bad || topo_adopt_nodes(t, blob, names, fwd, n, slots,
				       (size_t)cap, &e) < 0)
		goto bad;
	return 0;
bad:
	free(blob);
	free(names);
	free(fwd);
	free(slots);
	r->bad = true;
	return -1;
}

static struct topology *decode(struct rbuf *r, const char *path,
			       fwd_error_t *err)
{
	struct topology *t = topo_create();
	uint64_t nf, no, nn, nm;
	fwd_error_t e;
	bool null;

	if (!t || !(t->path = strdup(path))) {
		topo_destroy(t);
		errno = ENOMEM;
		errprintf(err, "out of memory");
		return NULL;
	}
	nf = get_u64(r);
	no = get_u64(r);
	nn = get_u64(r);
	nm = get_u64(r);
	if (!count_ok(r, nf, 28) || !count_ok(r, no, 12) ||
	    !count_ok(r, nn, 6) || !count_ok(r, nm, 20))
		goto bad;
	for (uint64_t i = 0; i < nf; i++) {
		struct topo_forwarder f;

		f.name = (char *)get_str(r, &null);
		f.address = (char *)get_str(r, &null);
		f.nid = (char *)get_str(r, &null);
		f.group = (char *)get_str(r, &null);
		f.bandwidth_bps = get_f64(r);
		f.role = get_u32(r) ? TOPO_ROLE_BACKUP : TOPO_ROLE_SERVICE;
		if (r->bad || topo_add_forwarder(t, &f, &e) < 0)
			goto bad;
	}
	for (uint64_t i = 0; i < no; i++) {
		struct topo_ost o;

		o.name = (char *)get_str(r, &null);
		o.bandwidth_bps = get_f64(r);
		if (r->bad || topo_add_ost(t, &o, &e) < 0)
			goto bad;
	}
	if (decode_nodes(r, t, (size_t)nn) < 0)
		goto bad;
	for (uint64_t i = 0; i < nm; i++) {
		const char *nodes = get_str(r, &null);
		uint64_t f = get_u64(r), c = get_u64(r);

		if (r->bad || !nodes ||
		    topo_add_mapping_entry(t, nodes, (size_t)f, (size_t)c, &e) <
			    0)
			goto bad;
	}
	if (r->off != r->n || topo_finalize(t, &e) < 0)
		goto bad;
	return t;
bad:
	topo_destroy(t);
	errno = EINVAL;
	errprintf(err, "contents do not describe a topology");
	return NULL;
}

static struct topology *cache_read(const char *path, const struct ident *id,
				   const char *cache, fwd_error_t *err)
{
	unsigned char *b;
	size_t n;
	struct stat st;
	struct rbuf r;
	char magic[8];
	unsigned char sha[32];
	uint64_t size, len, sum;
	int64_t sec, nsec;
	struct topology *t = NULL;

	if (read_all(cache, &b, &n, &st, err) < 0)
		return NULL;
	r = (struct rbuf){.p = b, .n = n};
	get(&r, magic, 8);
	if (r.bad || memcmp(magic, MAGIC, 8) != 0) {
		errprintf(err, "%s: not a topology cache", cache);
		goto out;
	}
	if (get_u32(&r) != FORMAT || get_u32(&r) != BOM) {
		errprintf(err,
			  "%s: another format or byte order than this "
			  "fwdalloc writes",
			  cache);
		goto out;
	}
	size = get_u64(&r);
	sec = (int64_t)get_u64(&r);
	nsec = (int64_t)get_u64(&r);
	get(&r, sha, 32);
	len = get_u64(&r);
	sum = get_u64(&r);
	if (r.bad) {
		errprintf(err, "%s: truncated header", cache);
		goto out;
	}
	if (size != id->size || sec != id->sec || nsec != id->nsec ||
	    memcmp(sha, id->sha, 32) != 0) {
		errprintf(err, "%s: made from another version of %s", cache,
			  path);
		goto out;
	}
	if (len != n - HEADER_LEN || checksum(b + HEADER_LEN, len) != sum) {
		errprintf(err, "%s: truncated or corrupt", cache);
		goto out;
	}
	r.p = b + HEADER_LEN;
	r.n = len;
	r.off = 0;
	if (!(t = decode(&r, path, err)))
		errprefix(err, "%s", cache);
out:
	if (!t && !errno)
		errno = EINVAL;
	free(b);
	return t;
}

struct topology *topo_cache_read(const char *path, const char *cache,
				 fwd_error_t *err)
{
	struct ident id;

	if (yaml_ident(path, &id, err) < 0)
		return NULL;
	return cache_read(path, &id, cache, err);
}

struct topology *topo_load_cached(const char *path, const char *cache,
				  enum topo_cache_use *how,
				  fwd_error_t *cache_err, fwd_error_t *err)
{
	fwd_error_t ce = {""};
	struct ident id, now;
	struct topology *t;
	enum topo_cache_use use = TOPO_CACHE_YAML;

	if (!cache) {
		errprintf(&ce, "no cache file");
		t = topo_load(path, err);
		goto out;
	}
	if (yaml_ident(path, &id, &ce) < 0) {
		/* topo_load names the problem with the YAML. */
		t = topo_load(path, err);
		goto out;
	}
	if ((t = cache_read(path, &id, cache, &ce))) {
		use = TOPO_CACHE_HIT;
		goto out;
	}
	if (!(t = topo_load(path, err)))
		goto out;
	/* Written only when the YAML did not change while it was loaded
	 * (the cache would claim the new bytes for the old topology). */
	if (yaml_ident(path, &now, &ce) == 0 && now.size == id.size &&
	    now.sec == id.sec && now.nsec == id.nsec &&
	    !memcmp(now.sha, id.sha, 32)) {
		fwd_error_t we;

		if (cache_write(t, &id, cache, &we) == 0)
			use = TOPO_CACHE_WRITTEN;
		else
			ce = we;
	} else if (!ce.text[0]) {
		errprintf(&ce, "%s changed while it was loaded", path);
	}
out:
	if (how)
		*how = use;
	if (cache_err)
		*cache_err = ce;
	return t;
}
