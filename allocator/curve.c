/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option valuation (DESIGN.md "The decision" step 7): what a job is
 * expected to reach with k forwarders, from its history's
 * bandwidth_by_forwarders, and the options it can choose among.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "allocator/curve.h"
#include "policies/policy.h"

uint32_t alloc_curve_kmax(const struct alloc_profile *pr)
{
	uint32_t k = 0;

	for (size_t i = 0; pr && i < pr->n_bw; i++)
		if (pr->bw[i].k > k)
			k = pr->bw[i].k;
	return k;
}

double alloc_curve_value(const struct alloc_profile *pr, double bf, uint32_t k,
			 bool *estimated)
{
	const struct alloc_bw_point *b = pr->bw, *lo = NULL, *hi = NULL;
	const struct alloc_bw_point *last = NULL, *prev = NULL;
	double v, slope;

	if (estimated)
		*estimated = false;
	if (!k)
		return 0;
	/* the measured points around k (k >= 1 only; sorted by k) */
	for (size_t i = 0; i < pr->n_bw; i++) {
		if (!b[i].k)
			continue;
		if (b[i].k <= k)
			lo = &b[i];
		if (b[i].k >= k && !hi)
			hi = &b[i];
		prev = last;
		last = &b[i];
	}
	if (!last) /* no curve: DFRA's estimate */
		return fmin((double)k * bf,
			    (double)pr->io_nodes * pr->node_bandwidth_bps);
	if (lo && lo->k == k)
		return lo->bps;
	if (!lo) /* below the first measurement: proportional */
		return hi->bps * k / hi->k;
	if (hi) {
		double x =
			(log2(k) - log2(lo->k)) / (log2(hi->k) - log2(lo->k));

		return lo->bps + x * (hi->bps - lo->bps);
	}
	/* Above the last: optimistic, the last gain per doubling goes on. */
	if (estimated)
		*estimated = true;
	slope = prev ? (last->bps - prev->bps) / (log2(last->k) - log2(prev->k))
		     : last->bps;
	if (slope < 0)
		slope = 0;
	v = last->bps + slope * (log2(k) - log2(last->k));
	if (bf > 0 && v > (double)k * bf)
		v = (double)k * bf;
	return v > last->bps ? v : last->bps;
}

bool alloc_option_gains(const struct policy *p, const struct alloc_opts *o,
			const struct alloc_option *x, double def_value)
{
	const struct policy_curve *c = &p->decision.curve;

	if (o->isolate && x->kind != ALLOC_OPT_EXTRAS)
		return true;
	return x->value - def_value >=
	       fmax(c->min_gain, c->min_gain_share * def_value);
}

void alloc_opts_free(struct alloc_opts *o)
{
	free(o->o);
	o->o = NULL;
	o->n = 0;
}

static void add(struct alloc_opts *o, enum alloc_opt_kind kind, uint32_t k,
		uint32_t take, double value, bool est)
{
	o->o[o->n++] = (struct alloc_option){kind, k, take, value, est, value};
}

/* alloc_curve_value() at k, computed once into *v, *e. */
static double value_at(const struct alloc_profile *pr, double bf, uint32_t k,
		       double *v, bool *e, bool *est)
{
	if (*v < 0)
		*v = alloc_curve_value(pr, bf, k, e);
	*est = *e;
	return *v;
}

int alloc_curve_options(const struct policy *p, const struct alloc_profile *pr,
			double bf, uint32_t n_f, uint32_t sharers, uint32_t cap,
			uint32_t kcap, bool isolate, bool gate,
			struct alloc_opts *out)
{
	const struct policy_curve *c = &p->decision.curve;
	uint32_t kmax = alloc_curve_kmax(pr);
	/* room: the default, direct, and a private and an extras option per
	 * candidate count: the powers of two up to cap + n_f (larger ones
	 * fit neither) and the measured counts */
	size_t room = 2 * pr->n_bw + 6, n_cand = 34 + pr->n_bw, n_ck = 0;
	double need, vk_s[64], *vk = vk_s;
	bool ek_s[64], *ek = ek_s;
	uint32_t ck_s[64], *ck = ck_s;

	if (n_cand > 64) {
		vk = malloc(n_cand * sizeof(*vk));
		ek = malloc(n_cand * sizeof(*ek));
		ck = malloc(n_cand * sizeof(*ck));
	}
	if (!vk || !ek || !ck) {
		if (vk != vk_s)
			free(vk);
		if (ek != ek_s)
			free(ek);
		if (ck != ck_s)
			free(ck);
		errno = ENOMEM;
		return -1;
	}
	for (uint64_t k = 1; k <= (uint64_t)cap + n_f && k <= 1u << 31; k *= 2)
		room += 2;
	out->o = malloc(room * sizeof(*out->o));
	out->n = 0;
	out->sharers = sharers;
	out->isolate = isolate;
	if (!out->o) {
		if (vk != vk_s) {
			free(vk);
			free(ek);
			free(ck);
		}
		errno = ENOMEM;
		return -1;
	}
	out->base = alloc_curve_value(pr, bf, n_f ? n_f : 1, NULL);
	/* Staying on a shared default while disrupting it is worth nothing
	 * to the decision: an isolated job takes private forwarders when the
	 * pool has them. */
	add(out, ALLOC_OPT_DEFAULT, n_f, 0,
	    isolate ? 0 : out->base / (1.0 + sharers), false);
	out->o[0].alone = out->base;
	need = gate ? fmax(c->min_gain, c->min_gain_share * out->o[0].value)
		    : -INFINITY;
	if (c->direct && pr->direct_bps > 0 &&
	    (isolate || pr->direct_bps - out->o[0].value >= need)) {
		add(out, ALLOC_OPT_DIRECT, 0, 0, pr->direct_bps, false);
	} else if (c->direct && !pr->direct_bps && p->learn.enabled && kmax) {
		/* Direct access not measured yet: explored like a count above
		 * the measured ones, at an optimistic estimate, the most the
		 * forwarders are expected to give it (it takes none of them,
		 * so it wins a tie and is measured on the next run). */
		uint32_t ke = kcap < p->learn.app_cap ? kcap : p->learn.app_cap;
		double v =
			alloc_curve_value(pr, bf, ke > kmax ? ke : kmax, NULL);

		if (v < out->base)
			v = out->base;
		if (isolate || v - out->o[0].value >= need)
			add(out, ALLOC_OPT_DIRECT, 0, 0, v, true);
	}
	/* candidate counts: powers of two and the measured counts, no
	 * estimate above the highest measured one, listed once (ck) for
	 * both passes, each valued once (vk[m] < 0: not yet) */
	for (size_t i = 0; i < n_cand; i++) {
		uint32_t k;

		if (i < 32) {
			k = 1u << i;
			if (i && k < 2)
				break;
		} else if (i - 32 < pr->n_bw) {
			k = pr->bw[i - 32].k;
			if (!k || !(k & (k - 1)))
				continue; /* zero or a power of two */
		} else {
			/* the most the job can get, when neither a power of
			 * two nor measured */
			k = kcap;
			if (!k || !(k & (k - 1)) || k > UINT32_MAX / 2)
				continue;
			for (size_t j = 0; j < pr->n_bw; j++)
				if (pr->bw[j].k == k)
					k = 0;
			if (!k)
				continue;
		}
		if (k > kcap) {
			if (i < 32)
				i = 31; /* nor any larger power */
			continue;
		}
		/* above the measured counts only to explore */
		if (kmax && k > kmax &&
		    (!p->learn.enabled || k > p->learn.app_cap))
			continue;
		ck[n_ck] = k;
		vk[n_ck++] = -1;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t m = 0; m < n_ck; m++) {
			uint32_t k = ck[m];
			bool est;
			double v;

			if (pass == 0) { /* k private */
				if (k > cap)
					continue;
				v = value_at(pr, bf, k, &vk[m], &ek[m], &est);
				if (!isolate && v - out->o[0].value < need)
					continue;
				add(out, ALLOC_OPT_PRIVATE, k, k, v, est);
			} else { /* the defaults plus k - N_f extras */
				double sv;

				if (isolate || k <= n_f || k - n_f > cap)
					continue;
				v = value_at(pr, bf, k, &vk[m], &ek[m], &est);
				/* the defaults stay in use: shared */
				sv = v / (1.0 + sharers);
				if (sv - out->o[0].value < need)
					continue;
				add(out, ALLOC_OPT_EXTRAS, k, k - n_f, sv, est);
				out->o[out->n - 1].alone = v;
			}
		}
	}
	/* fewer forwarders first (ties in the knapsack go to them) */
	for (size_t i = 2; i < out->n; i++) {
		struct alloc_option v = out->o[i];
		size_t j = i;

		while (j > 1 && out->o[j - 1].take > v.take) {
			out->o[j] = out->o[j - 1];
			j--;
		}
		out->o[j] = v;
	}
	if (vk != vk_s) {
		free(vk);
		free(ek);
		free(ck);
	}
	return 0;
}

int alloc_opts_regate(const struct policy *p, const struct alloc_opts *all,
		      const struct alloc_profile *pr, uint32_t n_f,
		      uint32_t sharers, uint32_t cap, bool isolate,
		      struct alloc_opts *out)
{
	const struct policy_curve *c = &p->decision.curve;
	double need;

	out->o = malloc((all->n ? all->n : 1) * sizeof(*out->o));
	out->n = 0;
	out->base = all->base;
	out->sharers = sharers;
	out->isolate = isolate;
	if (!out->o) {
		errno = ENOMEM;
		return -1;
	}
	add(out, ALLOC_OPT_DEFAULT, n_f, 0,
	    isolate ? 0 : all->base / (1.0 + sharers), false);
	out->o[0].alone = all->base;
	need = fmax(c->min_gain, c->min_gain_share * out->o[0].value);
	for (size_t x = 1; x < all->n; x++) {
		struct alloc_option o_s = all->o[x], *o = &o_s;
		bool keep = false;

		switch (o->kind) {
		case ALLOC_OPT_DIRECT: /* measured, or explored (estimated) */
			keep = isolate || o->value - out->o[0].value >= need;
			break;
		case ALLOC_OPT_PRIVATE:
			keep = o->k <= cap &&
			       (isolate || o->value - out->o[0].value >= need);
			break;
		case ALLOC_OPT_EXTRAS:
			o->value = o->alone / (1.0 + sharers);
			keep = !isolate && o->k > n_f && o->k - n_f <= cap &&
			       o->value - out->o[0].value >= need;
			break;
		case ALLOC_OPT_DEFAULT:
			break;
		}
		if (keep)
			out->o[out->n++] = *o;
	}
	return 0;
}
