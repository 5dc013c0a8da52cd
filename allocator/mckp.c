/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arbitration among jobs for the idle pool (DESIGN.md "The decision" step
 * 7): the exact multiple-choice knapsack for jobs starting together, the
 * online threshold for a job starting alone.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/curve.h"

/* GCC: vectorised at -O2, and a copy for AVX2 chosen at load time
 * (target_clones); other compilers (clang, the fuzzing build) vectorise
 * the plain loop at -O2 themselves. */
#if defined(__GNUC__) && !defined(__clang__)
#define OPTION_PASS_ATTR                                                     \
	__attribute__((target_clones("avx2", "default"),                     \
		       optimize("tree-vectorize", "vect-cost-model=dynamic", \
				"fp-contract=off")))
/* pick_of() replays the sweeps' comparisons: with the same roundings
 * (no fused multiply-add on either side, whatever -march says) */
#define PICK_ATTR __attribute__((optimize("fp-contract=off")))
#else
#define OPTION_PASS_ATTR
#define PICK_ATTR
#endif

/*
 * One option of one item over n capacities: nd[c] becomes dp[c] + val
 * where that is strictly better (beyond the 1e-9 relative tie band) than
 * nd[c] (the caller offsets nd by the option's take).  Branch-free so that
 * it runs on vectors (AVX2 where the processor has it; the same IEEE sums
 * and comparisons, so the same answers, on every path).  Which option won
 * is not kept here: pick_of() replays the comparisons of the one capacity
 * the answer needs.
 */
OPTION_PASS_ATTR static void option_pass(const double *restrict dp,
					 double *restrict nd, size_t n,
					 double val)
{
	for (size_t c = 0; c < n; c++) {
		double v = dp[c] + val, b = nd[c];
		double t = b + 1e-9 * fabs(b);

		nd[c] = v > t ? v : b;
	}
}

/* An item's first option over n capacities: nd[c] = dp[c] + val
 * (vectorised as option_pass() is; the same sums). */
OPTION_PASS_ATTR static void option_first(const double *restrict dp,
					  double *restrict nd, size_t n,
					  double val)
{
	for (size_t c = 0; c < n; c++)
		nd[c] = dp[c] + val;
}

/* Four capacities at once (GCC's and clang's vector extensions, so that
 * two comparisons in a row stay branch-free, which the vectoriser does
 * not manage on its own): the same IEEE sums, products and comparisons
 * per lane as option_pass(). */
typedef double mckp_v4d __attribute__((vector_size(32)));
typedef long long mckp_v4i __attribute__((vector_size(32)));

/* b = dj[0..3] + wj where that is strictly better than b beyond the tie
 * band (a macro: no vector crosses a call) */
#define V_BAND(b, dj, wj)                                                      \
	do {                                                                   \
		const mckp_v4i abs_ = {INT64_MAX, INT64_MAX, INT64_MAX,        \
				       INT64_MAX};                             \
		mckp_v4d v_, t_;                                               \
		mckp_v4i m_;                                                   \
                                                                               \
		memcpy(&v_, (dj), sizeof(v_));                                 \
		v_ += (wj);                                                    \
		t_ = (b) + 1e-9 * (mckp_v4d)((mckp_v4i)(b)&abs_);              \
		m_ = v_ > t_;                                                  \
		(b) = (mckp_v4d)(((mckp_v4i)v_ & m_) | ((mckp_v4i)(b) & ~m_)); \
	} while (0)

/* The same on one capacity. */
#define BAND(b, v)                                          \
	do {                                                \
		double v_ = (v), t_ = (b) + 1e-9 * fabs(b); \
		(b) = v_ > t_ ? v_ : (b);                   \
	} while (0)

/* An item's first option and its next one in one sweep: nd[c] = d0[c] +
 * v0, then d1[c] + v1 where strictly better (option_first() then
 * option_pass(), capacity by capacity). */
OPTION_PASS_ATTR static void option_first1(const double *d0, const double *d1,
					   double *nd, size_t n, double v0,
					   double v1)
{
	const mckp_v4d w0 = {v0, v0, v0, v0}, w1 = {v1, v1, v1, v1};
	size_t c = 0;

	for (; c + 4 <= n; c += 4) {
		mckp_v4d b;

		memcpy(&b, d0 + c, sizeof(b));
		b += w0;
		V_BAND(b, d1 + c, w1);
		memcpy(nd + c, &b, sizeof(b));
	}
	for (; c < n; c++) {
		double b = d0[c] + v0;

		BAND(b, d1[c] + v1);
		nd[c] = b;
	}
}

/* Two options in one sweep, the first then the second (option_pass()
 * twice, capacity by capacity). */
OPTION_PASS_ATTR static void option_pass2(const double *d1, const double *d2,
					  double *nd, size_t n, double v1,
					  double v2)
{
	const mckp_v4d w1 = {v1, v1, v1, v1}, w2 = {v2, v2, v2, v2};
	size_t c = 0;

	for (; c + 4 <= n; c += 4) {
		mckp_v4d b;

		memcpy(&b, nd + c, sizeof(b));
		V_BAND(b, d1 + c, w1);
		V_BAND(b, d2 + c, w2);
		memcpy(nd + c, &b, sizeof(b));
	}
	for (; c < n; c++) {
		double b = nd[c];

		BAND(b, d1[c] + v1);
		BAND(b, d2[c] + v2);
		nd[c] = b;
	}
}

/*
 * One item over the capacities 0 .. l, from the row before (dp) into nd:
 * its first option, then the others that fit, in option order, two in a
 * sweep.  Below the larger take of a sweep's two only the other applies:
 * those capacities take it alone.  Every capacity sees the comparisons of
 * option_first() and option_pass() one option after the other, so the
 * same row.
 */
static void item_row(const struct alloc_option *o, size_t n, const double *dp,
		     double *nd, uint32_t l)
{
	size_t x = 1, y;

	if (n > UINT16_MAX)
		n = UINT16_MAX; /* the options a choice can name */
	while (x < n && o[x].take > l)
		x++;
	if (x == n) {
		option_first(dp, nd, (size_t)l + 1, o[0].value);
		return;
	}
	/* the first option and option x */
	if (o[x].take)
		option_first(dp, nd, o[x].take, o[0].value);
	option_first1(dp + o[x].take, dp, nd + o[x].take, l - o[x].take + 1,
		      o[0].value, o[x].value);
	for (x++;; x = y + 1) {
		uint32_t s;

		while (x < n && o[x].take > l)
			x++;
		if (x == n)
			break;
		for (y = x + 1; y < n && o[y].take > l; y++)
			;
		if (y == n) {
			option_pass(dp, nd + o[x].take, l - o[x].take + 1,
				    o[x].value);
			break;
		}
		/* x and y from s, the larger take; below it one of them */
		s = o[x].take > o[y].take ? o[x].take : o[y].take;
		if (o[x].take < s)
			option_pass(dp, nd + o[x].take, s - o[x].take,
				    o[x].value);
		if (o[y].take < s)
			option_pass(dp, nd + o[y].take, s - o[y].take,
				    o[y].value);
		option_pass2(dp + s - o[x].take, dp + s - o[y].take, nd + s,
			     l - s + 1, o[x].value, o[y].value);
	}
}

/* The option item o (n options) chose at capacity c <= l, its capacities
 * computed up to l from dp (the items before it): the comparisons
 * option_first() and option_pass() made there, in the same order, on the
 * same sums. */
PICK_ATTR static size_t pick_of(const struct alloc_option *o, size_t n,
				const double *dp, uint32_t c, uint32_t l)
{
	double b = dp[c] + o[0].value;
	size_t pick = 0;

	for (size_t x = 1; x < n && x < UINT16_MAX; x++) {
		double v, t;

		if (o[x].take > l || o[x].take > c)
			continue;
		v = dp[c - o[x].take] + o[x].value;
		t = b + 1e-9 * fabs(b);
		if (v > t) {
			b = v;
			pick = x;
		}
	}
	return pick;
}

/* Room in b for n_items items over w capacities.  0 or -1 (ENOMEM). */
static int buf_room(struct alloc_mckp_buf *b, size_t n_items, size_t w)
{
	size_t rows = (n_items + 1) * w;

	if (n_items + 1 > b->items_cap) {
		uint32_t *lim = realloc(b->lim, (n_items + 1) * sizeof(*lim));

		if (!lim)
			return -1;
		b->lim = lim;
		b->items_cap = n_items + 1;
	}
	if (rows > b->rows_cap) {
		double *r = realloc(b->rows, rows * sizeof(*r));

		if (!r)
			return -1;
		b->rows = r;
		b->rows_cap = rows;
	}
	return 0;
}

void alloc_mckp_buf_free(struct alloc_mckp_buf *b)
{
	free(b->rows);
	free(b->lim);
	memset(b, 0, sizeof(*b));
}

double alloc_mckp(const struct alloc_option *const *opt, const size_t *n,
		  size_t n_items, uint32_t cap, size_t *pick)
{
	struct alloc_mckp_buf b = {0};
	double best = alloc_mckp_with(opt, n, n_items, cap, pick, &b);

	alloc_mckp_buf_free(&b);
	return best;
}

double alloc_mckp_with(const struct alloc_option *const *opt, const size_t *n,
		       size_t n_items, uint32_t cap, size_t *pick,
		       struct alloc_mckp_buf *b)
{
	size_t w;
	double *dp;
	uint32_t *lim, c, prev = 0;
	uint64_t most = 0;
	double best;

	/* no more capacity than every item's largest take together */
	for (size_t i = 0; i < n_items; i++) {
		uint32_t m = 0;

		for (size_t x = 0; x < n[i]; x++)
			if (opt[i][x].take > m)
				m = opt[i][x].take;
		most += m;
	}
	if (most < cap)
		cap = (uint32_t)most;
	w = (size_t)cap + 1;
	if (buf_room(b, n_items, w) < 0) {
		errno = ENOMEM;
		return -1;
	}
	lim = b->lim;
	/*
	 * Row i of b->rows, dp[c]: the best value of the items before i
	 * taking at most c.  Items 0..i take at most lim[i] (their largest
	 * takes together), so every dp[c] above it is dp[lim[i]] (the same
	 * sums of the same numbers): only c <= lim[i] is computed, the rest
	 * read there.  Option by option over the capacities: the same
	 * comparisons, per c in option order, as capacity by capacity.  The
	 * rows are kept, so that each item's choice is found again at the one
	 * capacity the answer reaches it with (pick_of()), not recorded at
	 * every capacity.
	 */
	dp = b->rows;
	dp[0] = 0;
	for (size_t i = 0; i < n_items; i++) {
		const struct alloc_option *o = opt[i];
		double *nd = dp + w;
		uint32_t m = 0, l;

		for (size_t x = 0; x < n[i]; x++)
			if (o[x].take > m)
				m = o[x].take;
		l = prev + m < cap ? prev + m : cap;
		for (c = prev + 1; c <= l; c++)
			dp[c] = dp[prev];
		lim[i] = prev = l;
		/* strictly better only: fewer forwarders and lower indexes
		 * win ties */
		item_row(o, n[i], dp, nd, l);
		dp = nd;
	}
	for (c = prev + 1; c <= cap; c++)
		dp[c] = dp[prev];
	best = dp[cap];
	/* the fewest forwarders reaching the best value */
	c = 0;
	while (c < cap && dp[c] < best - 1e-9 * fabs(best))
		c++;
	for (size_t i = n_items; i-- > 0;) {
		pick[i] = pick_of(opt[i], n[i], b->rows + i * w,
				  c < lim[i] ? c : lim[i], lim[i]);
		c -= opt[i][pick[i]].take;
	}
	return best;
}

double alloc_threshold(double z, double low, double high)
{
	if (z < 0)
		z = 0;
	if (z > 1)
		z = 1;
	if (low <= 0 || high <= low)
		return low > 0 ? low : 0;
	return low / M_E * pow(high * M_E / low, z);
}

size_t alloc_online_pick(const struct alloc_opts *o, uint32_t used,
			 uint32_t total, uint32_t room, double low, double high)
{
	struct alloc_thr_cache c = {0};

	return alloc_online_pick_cached(o, used, total, room, low, high, &c);
}

size_t alloc_online_pick_cached(const struct alloc_opts *o, uint32_t used,
				uint32_t total, uint32_t room, double low,
				double high, struct alloc_thr_cache *tc)
{
	double best = o->o[0].value;
	uint32_t most = 0;
	size_t pick = 0;

	/* tc->cost[t]: the first t forwarders' thresholds summed in order
	 * (the same sums for every option, and for every job that sees the
	 * same pool; up to 64 kept, beyond summed anew) */
	if (!tc->valid || tc->used != used || tc->total != total ||
	    tc->low != low || tc->high != high) {
		*tc = (struct alloc_thr_cache){.valid = true,
					       .used = used,
					       .total = total,
					       .low = low,
					       .high = high};
	}
	for (size_t x = 1; x < o->n; x++)
		if (o->o[x].take <= room && o->o[x].take > most)
			most = o->o[x].take;
	for (; tc->have < most && tc->have < 64; tc->have++)
		tc->cost[tc->have + 1] =
			tc->cost[tc->have] +
			alloc_threshold(
				total ? (double)(used + tc->have) / total : 1,
				low, high);
	for (size_t x = 1; x < o->n; x++) {
		double c, v;

		if (o->o[x].take > room)
			continue;
		if (o->o[x].take <= tc->have) {
			c = tc->cost[o->o[x].take];
		} else {
			c = tc->cost[tc->have];
			for (uint32_t i = tc->have; i < o->o[x].take; i++)
				c += alloc_threshold(
					total ? (double)(used + i) / total : 1,
					low, high);
		}
		v = o->o[x].value - c;
		if (v > best + 1e-9 * fabs(best)) {
			best = v;
			pick = x;
		}
	}
	return pick;
}
