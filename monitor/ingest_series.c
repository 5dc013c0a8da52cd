/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The series engine: cumulative counters to per-interval deltas.
 *
 * Counters from /proc, Telegraf and the LWFS server only grow until the
 * process restarts; a value below its predecessor therefore means the
 * counter started again from 0, and the interval's delta is the new value
 * (never a negative or wrapped delta).
 *
 * Plausibility: a checked update whose deltas are impossible (a corrupt
 * counter near 2^62, a rate far above the component's peak) leaves the
 * baseline where it was, so one bad value costs nothing: the next delta
 * spans both intervals.  The bad value is kept as a candidate; a next
 * value plausible from the candidate but not from the baseline shows the
 * counter really moved, and the series goes on from there.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/ingest.h"
#include "policies/policy.h"

struct series {
	struct series *next;
	int64_t ts;
	size_t n;
	bool dirty; /* changed since the last series_foreach_dirty() */
	uint64_t v[SERIES_MAX_VALUES];
	/* the last value rejected as implausible (not saved) */
	bool has_cand;
	int64_t cand_ts;
	uint64_t cand[SERIES_MAX_VALUES];
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
	if (s->has_cand && s->cand_ts <= ts)
		s->has_cand = false;
	return 0;
}

/* Deltas from `from` to `to`; a value below its predecessor is a
 * restart and every delta is then the new value. */
static int diff(const uint64_t *from, const uint64_t *to, size_t n,
		uint64_t *deltas)
{
	bool restart = false;

	for (size_t i = 0; i < n; i++)
		if (to[i] < from[i])
			restart = true;
	for (size_t i = 0; i < n; i++)
		deltas[i] = restart ? to[i] : to[i] - from[i];
	return restart ? SERIES_RESTART : SERIES_DELTA;
}

/* What an update of the known series s would give; *from_cand says the
 * deltas are from the candidate. */
static int judge(const struct series *s, int64_t ts, const uint64_t *values,
		 size_t n, series_check_fn ok, void *arg, uint64_t *deltas,
		 double *dt, bool *from_cand)
{
	uint64_t d2[SERIES_MAX_VALUES];
	double dt2;
	int r;

	*from_cand = false;
	if (ts <= s->ts)
		return SERIES_OLD;
	if (s->n != n)
		return SERIES_BASELINE;
	r = diff(s->v, values, n, deltas);
	*dt = (double)(ts - s->ts);
	if (!ok || ok(deltas, n, *dt, arg))
		return r;
	if (s->has_cand && ts > s->cand_ts) {
		int r2 = diff(s->cand, values, n, d2);

		dt2 = (double)(ts - s->cand_ts);
		if (ok(d2, n, dt2, arg)) {
			memcpy(deltas, d2, n * sizeof(*d2));
			*dt = dt2;
			*from_cand = true;
			return r2;
		}
	}
	return SERIES_IMPLAUSIBLE;
}

int series_peek(const struct series_table *t, const char *key, int64_t ts,
		const uint64_t *values, size_t n, series_check_fn ok, void *arg,
		uint64_t *deltas, double *dt)
{
	const struct series *s;
	bool from_cand;

	if (n > SERIES_MAX_VALUES) {
		errno = EINVAL;
		return -1;
	}
	s = find(t, key);
	if (!s)
		return SERIES_BASELINE;
	return judge(s, ts, values, n, ok, arg, deltas, dt, &from_cand);
}

int series_update_checked(struct series_table *t, const char *key, int64_t ts,
			  const uint64_t *values, size_t n, series_check_fn ok,
			  void *arg, uint64_t *deltas, double *dt)
{
	struct series *s;
	bool from_cand;
	int r;

	if (n > SERIES_MAX_VALUES) {
		errno = EINVAL;
		return -1;
	}
	s = find(t, key);
	if (!s) {
		if (!(s = insert(t, key)))
			return -1;
		r = SERIES_BASELINE;
	} else {
		r = judge(s, ts, values, n, ok, arg, deltas, dt, &from_cand);
	}
	switch (r) {
	case SERIES_OLD:
		return r;
	case SERIES_IMPLAUSIBLE:
		if (!s->has_cand || ts > s->cand_ts) {
			s->has_cand = true;
			s->cand_ts = ts;
			memcpy(s->cand, values, n * sizeof(*values));
		}
		return r;
	case SERIES_BASELINE:
		/* First value, or the shape changed (should not happen):
		 * start again. */
		s->n = n;
		break;
	default:
		break;
	}
	s->ts = ts;
	s->dirty = true;
	s->has_cand = false;
	memcpy(s->v, values, n * sizeof(*values));
	return r;
}

int series_update(struct series_table *t, const char *key, int64_t ts,
		  const uint64_t *values, size_t n, uint64_t *deltas,
		  double *dt)
{
	return series_update_checked(t, key, ts, values, n, NULL, NULL, deltas,
				     dt);
}

bool ingest_rate_ok(double delta, double dt, double max_per_s)
{
	if (!(delta >= 0) || !isfinite(delta))
		return false;
	if (!(dt > 0))
		return delta == 0;
	return delta <= max_per_s * dt;
}

bool series_check_rate(const uint64_t *deltas, size_t n, double dt, void *arg)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += (double)deltas[i];
	return ingest_rate_ok(sum, dt, *(const double *)arg);
}

bool ingest_gauge_ok(double v, double max)
{
	return isfinite(v) && v >= 0 && v <= max;
}

double ingest_bytes_bound(const struct policy_ingest *l, double peak_bps)
{
	if (!(peak_bps > 0) || !isfinite(peak_bps))
		return l->max_bandwidth;
	return l->max_rate_factor * peak_bps;
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
