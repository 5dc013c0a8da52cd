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
 *            name index's slots (i32 each: topo_node_index()); then the
 *            names' split (topo_names()): u64 prefixes and each prefix,
 *            u32 prefix id, u64 number, u8 pad, u8 width, u8 follow of
 *            each node, u64 long_suffix, u64 classes and each class (u64
 *            prefix, pad, lo, hi, count, has table; the table: i32 ids);
 *            then each mapping entry (nodes, u64 forwarder, u64 count).
 *            A string is u32 length (NUL included; 0 = NULL) and its
 *            bytes, NUL-terminated.  Every array starts 8-aligned (zero
 *            bytes before it).
 *
 * The file is mapped, not read: the arrays (names, default forwarders,
 * index slots, the names' split) are used where they lie, so loading a
 * 40,960-node topology builds only the array of name pointers and the few
 * forwarders and OSTs.  The writer never changes a file in place (it
 * renames a new one over it), so the mapping stays valid.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/sha256.h"
#include "topology/names.h"
#include "topology/topo_cache.h"

#define MAGIC "FWDTOPO"
#define FORMAT 3u
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

#define MIX(h, w)                                     \
	do {                                          \
		(h) = ((h) ^ (w)) * 1099511628211ULL; \
		(h) ^= (h) >> 29;                     \
	} while (0)

/*
 * Four independent lanes of 8-byte words (so the loop runs at memory
 * speed), folded into one.  Each step is a bijection of the lane, so a
 * change confined to one word always changes the sum.
 */
static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t h[4] = {1469598103934665603ULL, 0x9e3779b97f4a7c15ULL,
			 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL},
		 w, sum;
	size_t i = 0;

	for (; i + 32 <= n; i += 32)
		for (int k = 0; k < 4; k++) {
			memcpy(&w, p + i + 8 * (size_t)k, 8);
			MIX(h[k], w);
		}
	for (; i < n; i++)
		MIX(h[0], (uint64_t)p[i]);
	sum = h[0];
	for (int k = 1; k < 4; k++)
		MIX(sum, h[k]);
	return sum;
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

/* Zero bytes up to the next multiple of 8 (the contents start 8-aligned
 * in the file). */
static void put_align(struct wbuf *w)
{
	static const unsigned char zero[8];

	put(w, zero, (8 - w->n % 8) % 8);
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

static void encode_names(struct wbuf *w, const struct topo_names *nm, size_t n)
{
	if (!nm) {
		w->oom = true; /* no memory to build it */
		return;
	}
	put_u64(w, nm->n_prefixes);
	for (size_t i = 0; i < nm->n_prefixes; i++)
		put_str(w, nm->prefixes[i]);
	put_align(w);
	put(w, nm->prefix, n * sizeof(*nm->prefix));
	put_align(w);
	put(w, nm->num, n * sizeof(*nm->num));
	put(w, nm->pad, n);
	put_align(w);
	put(w, nm->width, n);
	put_align(w);
	put(w, nm->follow, n);
	put_align(w);
	put_u64(w, nm->long_suffix);
	put_u64(w, nm->n_classes);
	for (size_t k = 0; k < nm->n_classes; k++) {
		const struct topo_numclass *c = &nm->classes[k];

		put_u64(w, c->prefix);
		put_u64(w, c->pad);
		put_u64(w, c->lo);
		put_u64(w, c->hi);
		put_u64(w, c->count);
		put_u64(w, c->id != NULL);
		if (c->id)
			put(w, c->id, (c->hi - c->lo + 1) * sizeof(*c->id));
		put_align(w);
	}
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
		put_align(w);
		put(w, t->node_forwarder, t->n_nodes * sizeof(int32_t));
		topo_node_index(t, &slots, &cap);
		put_align(w);
		put_u64(w, cap);
		put(w, slots, cap * sizeof(int32_t));
	}
	encode_names(w, topo_names(t), t->n_nodes);
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

/* Skip to the next multiple of 8 (as put_align). */
static void get_align(struct rbuf *r)
{
	size_t skip = (8 - r->off % 8) % 8;

	if (r->bad || r->n - r->off < skip)
		r->bad = true;
	else
		r->off += skip;
}

/* An 8-aligned array of count elements of `each` bytes, where it lies. */
static const void *get_array(struct rbuf *r, uint64_t count, size_t each)
{
	const void *a;

	get_align(r);
	if (!count_ok(r, count, each))
		return r->bad = true, NULL;
	a = r->p + r->off;
	r->off += (size_t)count * each;
	return a;
}

/* The nodes section: names, default forwarders, the name index, all used
 * where they lie in the mapping. */
static int decode_nodes(struct rbuf *r, struct topology *t, size_t n)
{
	uint64_t len = get_u64(r), cap;
	const char *blob;
	char **names = NULL;
	const int32_t *fwd, *slots;
	size_t k = 0;
	fwd_error_t e;

	if (r->bad || n == 0 || len > r->n - r->off || len < 2 * n ||
	    r->p[r->off + len - 1] != '\0')
		goto bad;
	blob = (const char *)r->p + r->off;
	r->off += len;
	if (!(names = malloc(n * sizeof(*names))))
		goto bad;
	/* Exactly n names, none empty. */
	for (size_t off = 0; off < len; k++) {
		size_t l = strlen(blob + off);

		if (l == 0 || k == n)
			goto bad;
		names[k] = (char *)blob + off;
		off += l + 1;
	}
	if (k != n)
		goto bad;
	fwd = get_array(r, n, sizeof(*fwd));
	get_align(r);
	cap = get_u64(r);
	slots = get_array(r, cap, sizeof(*slots));
	/* Read-only memory handed over as the topology's arrays: nothing
	 * writes a loaded topology's nodes. */
	if (r->bad ||
	    topo_adopt_nodes(t, (char *)blob, names, (int32_t *)fwd, n,
			     (int32_t *)slots, (size_t)cap, &e) < 0)
		goto bad;
	return 0;
bad:
	free(names);
	r->bad = true;
	return -1;
}

/* The names' split (topo_names()), used where it lies. */
static int decode_names(struct rbuf *r, struct topology *t, size_t n)
{
	struct topo_names_store s = {.borrowed = true};
	uint64_t np = get_u64(r), nc;
	const char **prefixes = NULL;
	struct topo_numclass *classes = NULL;
	fwd_error_t e;
	bool null;

	if (!count_ok(r, np, 4) ||
	    !(prefixes = calloc(np ? np : 1, sizeof(*prefixes))))
		goto bad;
	for (uint64_t i = 0; i < np; i++)
		if (!(prefixes[i] = get_str(r, &null)))
			goto bad;
	s.n.prefix = get_array(r, n, sizeof(*s.n.prefix));
	s.n.num = get_array(r, n, sizeof(*s.n.num));
	s.n.pad = get_array(r, n, 1);
	s.n.width = get_array(r, n, 1);
	s.n.follow = get_array(r, n, 1);
	get_align(r);
	s.n.long_suffix = get_u64(r) != 0;
	nc = get_u64(r);
	if (!count_ok(r, nc, 48) ||
	    !(classes = calloc(nc ? nc : 1, sizeof(*classes))))
		goto bad;
	for (uint64_t k = 0; k < nc; k++) {
		struct topo_numclass *c = &classes[k];
		uint64_t prefix = get_u64(r), pad = get_u64(r);

		c->lo = get_u64(r);
		c->hi = get_u64(r);
		c->count = get_u64(r);
		if (r->bad || prefix > UINT32_MAX || pad > UINT8_MAX ||
		    c->lo > c->hi)
			goto bad;
		c->prefix = (uint32_t)prefix;
		c->pad = (uint8_t)pad;
		if (get_u64(r) && (c->hi - c->lo >= UINT64_MAX / 4 ||
				   !(c->id = get_array(r, c->hi - c->lo + 1,
						       sizeof(*c->id)))))
			goto bad;
		get_align(r);
	}
	s.n.prefixes = prefixes;
	s.n.n_prefixes = np;
	s.n.classes = classes;
	s.n.n_classes = nc;
	if (r->bad || topo_adopt_names(t, &s, &e) < 0)
		goto bad;
	return 0;
bad:
	free(prefixes);
	free(classes);
	r->bad = true;
	return -1;
}

/* The topology in r, which lies in map (len bytes), taken over (unmapped
 * on failure). */
static struct topology *decode(struct rbuf *r, const char *path, void *map,
			       size_t len, fwd_error_t *err)
{
	struct topology *t = topo_create();
	uint64_t nf, no, nn, nm;
	fwd_error_t e;
	bool null;

	if (t)
		topo_adopt_mapping(t, map, len);
	else if (map)
		munmap(map, len);
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
	if (decode_nodes(r, t, (size_t)nn) < 0 ||
	    decode_names(r, t, (size_t)nn) < 0)
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

/* Map the cache file read-only (len 0: an empty file, nothing mapped). */
static int map_file(const char *path, void **map, size_t *len, fwd_error_t *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*map = NULL;
	*len = 0;
	if (fd < 0)
		return errprintf(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		errprintf(err, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE) {
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		errprintf(err, "%s: not a regular file of a sane size", path);
		close(fd);
		return -1;
	}
	if (st.st_size > 0) {
		/* Populated at once: the checksum reads every page. */
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ,
			       MAP_PRIVATE | MAP_POPULATE, fd, 0);

		if (m == MAP_FAILED) {
			errprintf(err, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		*map = m;
		*len = (size_t)st.st_size;
	}
	close(fd);
	return 0;
}

static struct topology *cache_read(const char *path, const struct ident *id,
				   const char *cache, fwd_error_t *err)
{
	void *map;
	size_t n;
	struct rbuf r;
	char magic[8];
	unsigned char sha[32];
	uint64_t size, len, sum;
	int64_t sec, nsec;
	struct topology *t = NULL;
	const unsigned char *b;

	if (map_file(cache, &map, &n, err) < 0)
		return NULL;
	b = map ? map : (const unsigned char *)"";
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
	/* decode() owns the mapping from here on. */
	if (!(t = decode(&r, path, map, n, err)))
		errprefix(err, "%s", cache);
	map = NULL;
out:
	if (!t && !errno)
		errno = EINVAL;
	if (map)
		munmap(map, n);
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
