/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What history would hold (SIM.md "Learning"): for each application, the
 * bandwidth its simulated runs achieved with k forwarders of their own (k
 * = 0: direct access), so that a `dfra` run can decide from measurements
 * instead of the exact curves, and fill them as it goes.  Runs that
 * shared a default forwarder count only at a k no private run measured
 * (what they achieved says as much about their neighbours as about
 * them).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "sim/sim.h"

struct run {
	uint32_t k;
	bool private_fwd;
	double bps;
};

struct app_runs {
	struct run *r;
	size_t n, cap;
};

struct sim_history {
	struct app_runs *a;
	size_t n_apps;
};

struct sim_history *sim_history_create(const struct sim_curves *c, bool seed_k1)
{
	struct sim_history *h = calloc(1, sizeof(*h));

	if (!h || !(h->a = calloc(c->n_apps ? c->n_apps : 1, sizeof(*h->a)))) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	h->n_apps = c->n_apps;
	for (size_t i = 0; seed_k1 && i < c->n_apps; i++)
		if (sim_history_record(h, i, 1, true,
				       sim_curve_bw(&c->apps[i], 1)) < 0) {
			sim_history_destroy(h);
			return NULL;
		}
	return h;
}

void sim_history_destroy(struct sim_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_apps; i++)
		free(h->a[i].r);
	free(h->a);
	free(h);
}

int sim_history_record(struct sim_history *h, size_t app, uint32_t k,
		       bool private_fwd, double bps)
{
	struct app_runs *a;

	if (app >= h->n_apps || !(bps > 0))
		return 0;
	a = &h->a[app];
	if (FWD_GROW(a->r, a->cap, a->n + 1, 8) < 0)
		return -1;
	a->r[a->n++] = (struct run){k, private_fwd, bps};
	return 0;
}

size_t sim_history_runs(const struct sim_history *h, size_t app, uint32_t k)
{
	size_t n = 0;

	for (size_t i = 0; app < h->n_apps && i < h->a[app].n; i++)
		n += h->a[app].r[i].k == k;
	return n;
}

size_t sim_history_curve(const struct sim_history *h, size_t app,
			 struct sim_point *pts, size_t max, double *direct)
{
	const struct app_runs *a = app < h->n_apps ? &h->a[app] : NULL;
	double *v;
	size_t n = 0;

	*direct = 0;
	if (!a || !a->n)
		return 0;
	if (!(v = malloc(a->n * sizeof(*v))))
		return 0;
	/* the distinct k, ascending: the median of the private runs there,
	 * else of the shared ones */
	for (uint32_t last = 0, first = 1;;) {
		uint32_t k = UINT32_MAX;
		size_t m = 0;
		bool priv = false;

		for (size_t i = 0; i < a->n; i++)
			if ((first ? true : a->r[i].k > last) && a->r[i].k < k)
				k = a->r[i].k;
		if (k == UINT32_MAX)
			break;
		for (size_t i = 0; i < a->n; i++)
			priv |= a->r[i].k == k && a->r[i].private_fwd;
		for (size_t i = 0; i < a->n; i++)
			if (a->r[i].k == k && a->r[i].private_fwd == priv)
				v[m++] = a->r[i].bps;
		qsort(v, m, sizeof(*v), fwd_cmp_double);
		double med = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;

		if (k == 0)
			*direct = med;
		else if (n < max)
			pts[n++] = (struct sim_point){k, med};
		last = k;
		first = 0;
	}
	free(v);
	return n;
}
