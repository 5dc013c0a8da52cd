/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The series engine: cumulative counters to per-interval deltas.
 *
 * Counters from /proc, Telegraf and the LWFS server only grow until the
 * process restarts; a value below its predecessor therefore means the
 * counter started again from 0, and the interval's delta is the new value
 * (never a negative or wrapped delta).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/ingest.h"

struct series {
	struct series *next;
	int64_t ts;
	size_t n;
	bool dirty; /* changed since the last series_foreach_dirty() */
	uint64_t v[SERIES_MAX_VALUES];
	char key[];
};

struct series_table {
	struct series **buckets;
	size_t n_buckets;
	size_t count;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct series_table *series_create(void)
{
	struct series_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->n_buckets = 256;
	t->buckets = calloc(t->n_buckets, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	return t;
}

void series_destroy(struct series_table *t)
{
	int saved = errno;

	if (!t)
		return;
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct series *s = t->buckets[i], *next;

		for (; s; s = next) {
			next = s->next;
			free(s);
		}
	}
	free(t->buckets);
	free(t);
	errno = saved;
}

static struct series *find(const struct series_table *t, const char *key)
{
	struct series *s = t->buckets[hash(key) % t->n_buckets];

	for (; s; s = s->next)
		if (!strcmp(s->key, key))
			return s;
	return NULL;
}

static int grow(struct series_table *t)
{
	size_t nb = t->n_buckets * 2;
	struct series **b = calloc(nb, sizeof(*b));

	if (!b)
		return -1;
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct series *s = t->buckets[i], *next;

		for (; s; s = next) {
			size_t h = hash(s->key) % nb;

			next = s->next;
			s->next = b[h];
			b[h] = s;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->n_buckets = nb;
	return 0;
}

static struct series *insert(struct series_table *t, const char *key)
{
	size_t len = strlen(key);
	struct series *s;
	size_t h;

	if (t->count >= t->n_buckets && grow(t) < 0)
		return NULL;
	s = calloc(1, sizeof(*s) + len + 1);
	if (!s)
		return NULL;
	memcpy(s->key, key, len + 1);
	h = hash(key) % t->n_buckets;
	s->next = t->buckets[h];
	t->buckets[h] = s;
	t->count++;
	return s;
}

bool series_known(const struct series_table *t, const char *key)
{
	return find(t, key) != NULL;
}

int series_seed(struct series_table *t, const char *key, int64_t ts,
		const uint64_t *values, size_t n)
{
	struct series *s;

	if (n > SERIES_MAX_VALUES) {
		errno = EINVAL;
		return -1;
	}
	s = find(t, key);
	if (s && s->ts >= ts)
		return 0;
	if (!s && !(s = insert(t, key)))
		return -1;
	s->ts = ts;
	s->n = n;
	memcpy(s->v, values, n * sizeof(*values));
	return 0;
}

int series_update(struct series_table *t, const char *key, int64_t ts,
		  const uint64_t *values, size_t n, uint64_t *deltas,
		  double *dt)
{
	struct series *s;
	bool restart = false;

	if (n > SERIES_MAX_VALUES) {
		errno = EINVAL;
		return -1;
	}
	s = find(t, key);
	if (!s) {
		if (!(s = insert(t, key)))
			return -1;
		s->ts = ts;
		s->n = n;
		s->dirty = true;
		memcpy(s->v, values, n * sizeof(*values));
		return SERIES_BASELINE;
	}
	if (ts <= s->ts)
		return SERIES_OLD;
	if (s->n != n) {
		/* The shape changed (should not happen): start again. */
		s->dirty = true;
		s->ts = ts;
		s->n = n;
		memcpy(s->v, values, n * sizeof(*values));
		return SERIES_BASELINE;
	}
	for (size_t i = 0; i < n; i++)
		if (values[i] < s->v[i])
			restart = true;
	for (size_t i = 0; i < n; i++)
		deltas[i] = restart ? values[i] : values[i] - s->v[i];
	*dt = (double)(ts - s->ts);
	s->ts = ts;
	s->dirty = true;
	memcpy(s->v, values, n * sizeof(*values));
	return restart ? SERIES_RESTART : SERIES_DELTA;
}

int series_foreach(const struct series_table *t, series_visit_fn fn, void *arg)
{
	for (size_t i = 0; i < t->n_buckets; i++) {
		for (struct series *s = t->buckets[i]; s; s = s->next) {
			int r = fn(s->key, s->ts, s->v, s->n, arg);

			if (r)
				return r;
		}
	}
	return 0;
}

int series_foreach_dirty(struct series_table *t, series_visit_fn fn, void *arg)
{
	for (size_t i = 0; i < t->n_buckets; i++) {
		for (struct series *s = t->buckets[i]; s; s = s->next) {
			int r;

			if (!s->dirty)
				continue;
			r = fn(s->key, s->ts, s->v, s->n, arg);
			if (r)
				return r;
			s->dirty = false;
		}
	}
	return 0;
}
