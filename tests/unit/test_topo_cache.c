/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compiled topology cache: the same topology as the YAML, written
 * then hit; and every cache that must not be trusted -- truncated,
 * corrupt, foreign, another format, made from another version of the
 * YAML -- ignored, with the YAML loaded instead and the cache rewritten.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topology/names.h"
#include "topology/topo_cache.h"
#include "topology/topology.h"

static char dir[64], yaml[128], cache[128];

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/fwd-topocache.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(yaml, sizeof(yaml), "%s/topology.yaml", dir);
	snprintf(cache, sizeof(cache), "%s/topology.cache", dir);
	copy_file(FIXTURES "/../../etc/topology-taihulight.yaml", yaml);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The node names' split (topo_names()): the one read from the cache is
 * the one built from the names. */
static void assert_same_names(const struct topology *a,
			      const struct topology *b)
{
	const struct topo_names *x = topo_names(a), *y = topo_names(b);
	size_t n = a->n_nodes;

	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(x->n_prefixes, y->n_prefixes);
	for (size_t i = 0; i < x->n_prefixes; i++)
		assert_string_equal(x->prefixes[i], y->prefixes[i]);
	assert_memory_equal(x->prefix, y->prefix, n * sizeof(*x->prefix));
	assert_memory_equal(x->num, y->num, n * sizeof(*x->num));
	assert_memory_equal(x->pad, y->pad, n);
	assert_memory_equal(x->width, y->width, n);
	assert_memory_equal(x->follow, y->follow, n);
	assert_int_equal(x->long_suffix, y->long_suffix);
	assert_int_equal(x->n_classes, y->n_classes);
	for (size_t k = 0; k < x->n_classes; k++) {
		const struct topo_numclass *c = &x->classes[k],
					   *d = &y->classes[k];

		assert_int_equal(c->prefix, d->prefix);
		assert_int_equal(c->pad, d->pad);
		assert_int_equal(c->lo, d->lo);
		assert_int_equal(c->hi, d->hi);
		assert_int_equal(c->count, d->count);
		assert_true((c->id == NULL) == (d->id == NULL));
		if (c->id)
			assert_memory_equal(c->id, d->id,
					    (c->hi - c->lo + 1) *
						    sizeof(*c->id));
	}
	/* c1..c40960: one class, c<k> is node k - 1. */
	assert_int_equal(y->n_classes, 1);
	assert_int_equal(y->classes[0].lo, 1);
	assert_int_equal(y->classes[0].hi, 40960);
	assert_int_equal(y->classes[0].id[512 - 1], 511);
	assert_int_equal(y->num[40959], 40960);
	assert_int_equal(y->follow[0], 1);
	assert_int_equal(y->follow[40959], 0);
}

/* Everything a topology holds, compared field by field. */
static void assert_same(const struct topology *a, const struct topology *b)
{
	char *ja = topo_to_json(a), *jb = topo_to_json(b);

	assert_non_null(ja);
	assert_non_null(jb);
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
	assert_int_equal(a->n_nodes, b->n_nodes);
	assert_int_equal(a->n_forwarders, b->n_forwarders);
	for (size_t i = 0; i < a->n_forwarders; i++) {
		const struct topo_forwarder *x = &a->forwarders[i],
					    *y = &b->forwarders[i];

		assert_string_equal(x->address, y->address);
		assert_true((x->nid == NULL) == (y->nid == NULL));
		if (x->nid)
			assert_string_equal(x->nid, y->nid);
	}
	for (size_t i = 0; i < a->n_nodes; i++) {
		assert_string_equal(a->node_names[i], b->node_names[i]);
		assert_int_equal(a->node_forwarder[i], b->node_forwarder[i]);
	}
	assert_string_equal(a->path, b->path);
	/* The name index works. */
	assert_int_equal(topo_node_id(b, "c40960"), 40959);
	assert_int_equal(topo_node_default(b, "c513"),
			 topo_node_default(a, "c513"));
	assert_int_equal(topo_node_id(b, "c40961"), -1);
	assert_same_names(a, b);
	/* Forwarders and OSTs by name. */
	assert_int_equal(topo_forwarder_index(b, "fwd240"), 239);
	assert_int_equal(topo_forwarder_index(b, "fwd241"), -1);
	assert_int_equal(topo_ost_index(b, a->osts[a->n_osts - 1].name),
			 (long)a->n_osts - 1);
}

static long file_size(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return (long)st.st_size;
}

/* Load through the cache; assert what happened to it. */
static struct topology *load(enum topo_cache_use want, const char *why)
{
	enum topo_cache_use how = TOPO_CACHE_HIT;
	fwd_error_t cerr = {""}, err = {""};
	struct topology *t = topo_load_cached(yaml, cache, &how, &cerr, &err);

	assert_non_null(t);
	if (how != want || (why && !strstr(cerr.text, why)))
		fail_msg("cache use %d (want %d), reason '%s' (want '%s')",
			 (int)how, (int)want, cerr.text, why ? why : "");
	return t;
}

static void test_written_then_hit(void **state)
{
	fwd_error_t err;
	struct topology *y, *w, *h;

	(void)state;
	unlink(cache);
	assert_non_null(y = topo_load(yaml, &err));
	w = load(TOPO_CACHE_WRITTEN, NULL);
	assert_same(y, w);
	h = load(TOPO_CACHE_HIT, NULL);
	assert_same(y, h);
	/* No temporary file is left behind. */
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 2",
			 dir);
		assert_int_equal(system(cmd), 0);
	}
	topo_destroy(y);
	topo_destroy(w);
	topo_destroy(h);
}

/* Rewrite the cache's bytes [off, off+n) with b, or cut it at off. */
static void damage(long off, const void *b, size_t n, bool cut)
{
	int fd = open(cache, O_WRONLY);

	assert_true(fd >= 0);
	if (cut)
		assert_int_equal(ftruncate(fd, off), 0);
	else
		assert_int_equal(pwrite(fd, b, n, off), (ssize_t)n);
	close(fd);
}

/* A damaged cache is refused by topo_cache_read with `why`, then
 * topo_load_cached loads the YAML and rewrites a good cache. */
static void refused(const char *why)
{
	fwd_error_t err = {""};
	struct topology *t = topo_cache_read(yaml, cache, &err), *y;

	assert_null(t);
	if (!strstr(err.text, why))
		fail_msg("refused with '%s', want '%s'", err.text, why);
	assert_non_null(y = topo_load(yaml, &err));
	t = load(TOPO_CACHE_WRITTEN, NULL);
	assert_same(y, t);
	topo_destroy(t);
	t = load(TOPO_CACHE_HIT, NULL);
	topo_destroy(t);
	topo_destroy(y);
}

static void test_truncated(void **state)
{
	struct topology *t;

	(void)state;
	topo_destroy(load(TOPO_CACHE_HIT, NULL));
	damage(file_size(cache) / 2, NULL, 0, true);
	refused("truncated or corrupt");
	damage(40, NULL, 0, true);
	refused("truncated header");
	damage(0, NULL, 0, true);
	refused("not a topology cache");
	/* A byte too many is as bad as one too few. */
	{
		FILE *f = fopen(cache, "ab");

		assert_non_null(f);
		fputc(0, f);
		fclose(f);
	}
	refused("truncated or corrupt");
	t = load(TOPO_CACHE_HIT, NULL);
	topo_destroy(t);
}

/* Flip every bit of the cache's byte at off. */
static void flip(long off)
{
	int fd = open(cache, O_RDWR);
	unsigned char b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b = (unsigned char)~b;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void test_corrupt(void **state)
{
	(void)state;
	/* A byte of the node names, of the name index, of the header's
	 * YAML hash. */
	topo_destroy(load(TOPO_CACHE_HIT, NULL));
	flip(file_size(cache) / 4);
	refused("truncated or corrupt");
	flip(file_size(cache) - 5000);
	refused("truncated or corrupt");
	flip(50);
	refused("made from another version");
}

static void test_foreign(void **state)
{
	static const char junk[] = "forwarders:\n  - {name: fwd1}\n";
	uint32_t v;

	(void)state;
	/* Another file entirely. */
	copy_file(yaml, cache);
	refused("not a topology cache");
	{
		FILE *f = fopen(cache, "wb");

		assert_non_null(f);
		fwrite(junk, 1, sizeof(junk), f);
		fclose(f);
	}
	refused("not a topology cache");
	/* Another format version, another byte order. */
	v = 99;
	damage(8, &v, 4, false);
	refused("another format or byte order");
	v = 0x04030201;
	damage(12, &v, 4, false);
	refused("another format or byte order");
	/* A directory where the file should be: the YAML, no crash. */
	unlink(cache);
	assert_int_equal(mkdir(cache, 0700), 0);
	topo_destroy(load(TOPO_CACHE_YAML, NULL));
	assert_int_equal(rmdir(cache), 0);
	topo_destroy(load(TOPO_CACHE_WRITTEN, NULL));
}

static void test_yaml_changed(void **state)
{
	FILE *f;
	struct topology *t;
	struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
	struct stat st;

	(void)state;
	topo_destroy(load(TOPO_CACHE_HIT, NULL));
	/* Same bytes, another mtime. */
	assert_int_equal(stat(yaml, &st), 0);
	ts[1].tv_sec = st.st_mtim.tv_sec - 100;
	ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, yaml, ts, 0), 0);
	t = load(TOPO_CACHE_WRITTEN, "made from another version");
	topo_destroy(t);
	/* Other bytes, same size and mtime: the hash tells. */
	topo_destroy(load(TOPO_CACHE_HIT, NULL));
	assert_int_equal(stat(yaml, &st), 0);
	{
		int fd = open(yaml, O_WRONLY);

		/* "c[1-40960]" -> "c[1-40950]" keeps the size. */
		char *s = NULL;
		FILE *r = fopen(yaml, "rb");
		long n, at;

		assert_non_null(r);
		fseek(r, 0, SEEK_END);
		n = ftell(r);
		rewind(r);
		s = calloc(1, (size_t)n + 1);
		assert_int_equal(fread(s, 1, (size_t)n, r), (size_t)n);
		fclose(r);
		assert_non_null(strstr(s, "c[1-40960]"));
		at = strstr(s, "c[1-40960]") - s + 7;
		assert_int_equal(pwrite(fd, "5", 1, at), 1);
		close(fd);
		free(s);
	}
	ts[1] = st.st_mtim;
	assert_int_equal(utimensat(AT_FDCWD, yaml, ts, 0), 0);
	t = load(TOPO_CACHE_WRITTEN, "made from another version");
	assert_int_equal(t->n_nodes, 40950);
	topo_destroy(t);
	t = load(TOPO_CACHE_HIT, NULL);
	assert_int_equal(t->n_nodes, 40950);
	topo_destroy(t);
	/* A YAML that does not load is an error, whatever the cache. */
	f = fopen(yaml, "wb");
	assert_non_null(f);
	fputs("forwarders: [\n", f);
	fclose(f);
	{
		fwd_error_t cerr, err = {""};

		assert_null(topo_load_cached(yaml, cache, NULL, &cerr, &err));
		assert_non_null(strstr(err.text, yaml));
	}
}

static void test_unwritable(void **state)
{
	fwd_error_t cerr = {""}, err;
	enum topo_cache_use how;
	struct topology *t;
	char nodir[160];

	(void)state;
	copy_file(FIXTURES "/minicluster/topology.yaml", yaml);
	snprintf(nodir, sizeof(nodir), "%s/missing/topology.cache", dir);
	t = topo_load_cached(yaml, nodir, &how, &cerr, &err);
	assert_non_null(t);
	assert_int_equal(how, TOPO_CACHE_YAML);
	assert_non_null(strstr(cerr.text, "missing/topology.cache"));
	assert_int_equal(t->n_nodes, 8);
	topo_destroy(t);
	/* No cache at all. */
	t = topo_load_cached(yaml, NULL, &how, &cerr, &err);
	assert_non_null(t);
	assert_int_equal(how, TOPO_CACHE_YAML);
	topo_destroy(t);
}

/*
 * The cache's arrays are used where they lie: an index out of range in a
 * stored split (a file whose checksum matches but whose contents were not
 * written by this fwdalloc) is refused, not followed.
 */
static void test_names_checked(void **state)
{
	fwd_error_t err;
	struct topology *y;
	const struct topo_names *nm;
	struct topo_names bad;
	uint32_t *prefix;
	int32_t *ids;
	struct topo_numclass *classes;
	uint8_t *follow;
	size_t n;

	(void)state;
	assert_non_null(y = topo_load(yaml, &err));
	assert_non_null(nm = topo_names(y));
	n = y->n_nodes;
	assert_int_equal(topo_names_check(nm, n), 0);
	/* A prefix id past the prefixes. */
	bad = *nm;
	assert_non_null(prefix = malloc(n * sizeof(*prefix)));
	memcpy(prefix, nm->prefix, n * sizeof(*prefix));
	prefix[n / 2] = (uint32_t)nm->n_prefixes;
	bad.prefix = prefix;
	assert_int_equal(topo_names_check(&bad, n), -1);
	/* A class table naming a node past the last one. */
	bad = *nm;
	assert_non_null(classes = malloc(nm->n_classes * sizeof(*classes)));
	memcpy(classes, nm->classes, nm->n_classes * sizeof(*classes));
	{
		size_t len = classes[0].hi - classes[0].lo + 1;

		assert_non_null(ids = malloc(len * sizeof(*ids)));
		memcpy(ids, classes[0].id, len * sizeof(*ids));
		ids[len - 1] = (int32_t)n;
		classes[0].id = ids;
	}
	bad.classes = classes;
	assert_int_equal(topo_names_check(&bad, n), -1);
	/* The last node followed by another. */
	bad = *nm;
	assert_non_null(follow = malloc(n));
	memcpy(follow, nm->follow, n);
	follow[n - 1] = 1;
	bad.follow = follow;
	assert_int_equal(topo_names_check(&bad, n), -1);
	free(prefix);
	free(ids);
	free(classes);
	free(follow);
	topo_destroy(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_written_then_hit),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_foreign),
		cmocka_unit_test(test_yaml_changed),
		cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_names_checked),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
