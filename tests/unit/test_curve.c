/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing from measured curves (allocator/curve.c, mckp.c, harm.c and the
 * curve rule of decide.c): option valuation (interpolation in log2 k,
 * optimistic extrapolation bounded by k * B_f, DFRA's estimate without a
 * curve), the minimum gain, the exact multiple-choice knapsack against
 * brute force, the online threshold, isolation by harm and direct access.
 *
 * Test machine as test_decide.c's: 8 service forwarders fwd001..fwd008 of
 * 2.5 GB/s serving c[1-512], 64 nodes each, 16 backups fwd009..fwd024.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/curve.h"
#include "allocator/decide.h"
#include "allocator/decision_json.h"
#include "allocator/ledger.h"
#include "policies/policy.h"
#include "topology/topology.h"
#define XORSHIFT_SEED 0x2545F4914F6CDD1DULL
#include "tests/unit/xorshift.h"

#define GiB (1024.0 * 1024 * 1024)

#define assert_near(a, b) \
	assert_true(fabs((a) - (b)) <= 1e-6 * fmax(1.0, fabs(b)))

static struct alloc_profile prof(struct alloc_bw_point *bw, size_t n)
{
	struct alloc_profile p = {
		.io_volume_bytes = 100 * (uint64_t)GiB,
		.io_nodes = 64,
		.node_bandwidth_bps = 1e8,
		.io_mode = FWD_IO_N_N,
		.runs = 3,
		.bw = bw,
		.n_bw = n,
	};
	return p;
}

/* Between measured counts: linear in log2 k, so 2 lies half-way between
 * 1 and 4 (linear in k would say a third); a measured count is its own
 * value; below the first point: proportional. */
static void test_value_interpolation(void **state)
{
	struct alloc_bw_point bw[] = {{1, 1e8, 3, 2e7}, {4, 4e8, 2, 0}};
	struct alloc_bw_point bw2[] = {{2, 2e8, 1, 0}};
	struct alloc_profile p = prof(bw, 2), q = prof(bw2, 1);
	bool est = true;

	(void)state;
	assert_near(alloc_curve_value(&p, 2.5e9, 1, &est), 1e8);
	assert_false(est);
	assert_near(alloc_curve_value(&p, 2.5e9, 2, &est), 2.5e8);
	assert_false(est);
	assert_near(alloc_curve_value(&p, 2.5e9, 4, NULL), 4e8);
	assert_near(alloc_curve_value(&q, 2.5e9, 1, &est), 1e8);
	assert_false(est);
	assert_int_equal(alloc_curve_kmax(&p), 4);
}

/* Above the highest count: the last gain per doubling goes on (estimated),
 * bounded by k * B_f; one point: doubling k doubles the bandwidth; a
 * falling curve stays flat. */
static void test_value_extrapolation(void **state)
{
	struct alloc_bw_point bw[] = {{1, 1e8}, {2, 1.8e8}};
	struct alloc_bw_point one[] = {{1, 1e8}};
	struct alloc_bw_point fall[] = {{1, 3e8}, {2, 2e8}};
	struct alloc_profile p = prof(bw, 2), o = prof(one, 1),
			     f = prof(fall, 2);
	bool est = false;

	(void)state;
	assert_near(alloc_curve_value(&p, 2.5e9, 4, &est), 2.6e8);
	assert_true(est);
	assert_near(alloc_curve_value(&p, 2.5e9, 8, NULL), 3.4e8);
	/* bounded by k * B_f = 4 * 0.05 GB/s */
	assert_near(alloc_curve_value(&p, 0.05e9, 4, NULL), 2e8);
	assert_near(alloc_curve_value(&o, 2.5e9, 4, &est), 3e8);
	assert_true(est);
	assert_near(alloc_curve_value(&f, 2.5e9, 8, NULL), 2e8);
}

/* No curve: DFRA's min(k * B_f, N_io * B_c). */
static void test_value_no_curve(void **state)
{
	struct alloc_profile p = prof(NULL, 0);

	(void)state;
	assert_near(alloc_curve_value(&p, 2.5e9, 1, NULL), 2.5e9);
	assert_near(alloc_curve_value(&p, 2.5e9, 4, NULL), 6.4e9);
	assert_int_equal(alloc_curve_kmax(&p), 0);
}

static const struct alloc_option *find(const struct alloc_opts *o,
				       enum alloc_opt_kind kind, uint32_t k)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->o[i].kind == kind && o->o[i].k == k)
			return &o->o[i];
	return NULL;
}

/* The options and the minimum gain: 50 MB/s and 10 % of the default
 * mapping's value (1 GB/s here: 100 MB/s). */
static void test_options_gain(void **state)
{
	struct alloc_bw_point bw[] = {{1, 1e9}, {2, 1.08e9}, {4, 1.3e9}};
	struct alloc_profile p = prof(bw, 3);
	struct policy *pol = policy_defaults();
	struct alloc_opts o = {0};
	const struct alloc_option *x;

	(void)state;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	assert_int_equal(o.o[0].kind, ALLOC_OPT_DEFAULT);
	assert_near(o.o[0].value, 1e9);
	/* +80 MB/s: under 10 %; +300 MB/s: kept, private and as extras */
	assert_null(find(&o, ALLOC_OPT_PRIVATE, 2));
	assert_null(find(&o, ALLOC_OPT_EXTRAS, 2));
	assert_non_null(find(&o, ALLOC_OPT_PRIVATE, 4));
	x = find(&o, ALLOC_OPT_EXTRAS, 4);
	assert_non_null(x);
	assert_int_equal(x ? x->take : 0, 3);
	/* nothing above the highest measured count */
	assert_null(find(&o, ALLOC_OPT_PRIVATE, 8));
	/* fewer pool forwarders first */
	for (size_t i = 2; i < o.n; i++)
		assert_true(o.o[i - 1].take <= o.o[i].take);
	alloc_opts_free(&o);

	/* shared with 3 jobs: staying is worth 250 MB/s; 1 private
	 * forwarder (1 GB/s) now gains; the defaults plus extras keep the
	 * shared default in use: 1.3 GB/s shared by 4 */
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 3, 16, 16,
					     false, true, &o),
			 0);
	assert_near(o.o[0].value, 0.25e9);
	assert_non_null(find(&o, ALLOC_OPT_PRIVATE, 1));
	x = find(&o, ALLOC_OPT_EXTRAS, 4);
	assert_non_null(x);
	assert_near(x ? x->value : 0, 1.3e9 / 4);
	alloc_opts_free(&o);

	/* the pool caps the counts */
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 3, 2, 16, false,
					     true, &o),
			 0);
	assert_null(find(&o, ALLOC_OPT_PRIVATE, 4));
	assert_non_null(find(&o, ALLOC_OPT_PRIVATE, 2));
	alloc_opts_free(&o);

	/* direct access: only where the policy allows it */
	p.direct_bps = 2e9;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	assert_null(find(&o, ALLOC_OPT_DIRECT, 0));
	alloc_opts_free(&o);
	pol->decision.curve.direct = true;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	x = find(&o, ALLOC_OPT_DIRECT, 0);
	assert_non_null(x);
	assert_near(x ? x->value : 0, 2e9);
	alloc_opts_free(&o);
	policy_destroy(pol);
}

/* Exploring direct access: with learn on and direct allowed, a job whose
 * history has no direct run gets an estimated direct option worth what
 * the forwarders are expected to give it at most (here k = 4, measured
 * 1.3 GB/s; learn.app_cap 8 and kcap 16: the estimate at k = 8, the last
 * gain per doubling, 1.3 + 0.22 GB/s); with learn off, or direct not
 * allowed, none; once measured, the measured value, not estimated.  The
 * batch's regate keeps it. */
static void test_explore_direct(void **state)
{
	struct alloc_bw_point bw[] = {
		{1, 1e9, 3, 0}, {2, 1.08e9, 3, 0}, {4, 1.3e9, 3, 0}};
	struct alloc_profile p = prof(bw, 3);
	struct policy *pol = policy_defaults();
	struct alloc_opts o = {0}, r = {0};
	const struct alloc_option *x;

	(void)state;
	pol->decision.curve.direct = true;
	pol->learn.app_cap = 8;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	assert_null(find(&o, ALLOC_OPT_DIRECT, 0)); /* learn off */
	alloc_opts_free(&o);
	pol->learn.enabled = true;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	x = find(&o, ALLOC_OPT_DIRECT, 0);
	assert_non_null(x);
	assert_true(x && x->estimated);
	assert_int_equal(x ? x->take : 1, 0);
	assert_near(x ? x->value : 0, 1.52e9);
	assert_int_equal(alloc_opts_regate(pol, &o, &p, 1, 0, 16, false, &r),
			 0);
	assert_non_null(find(&r, ALLOC_OPT_DIRECT, 0));
	alloc_opts_free(&r);
	alloc_opts_free(&o);
	/* measured: its own value */
	p.direct_bps = 0.5e9;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	assert_null(find(&o, ALLOC_OPT_DIRECT, 0)); /* below the default */
	alloc_opts_free(&o);
	p.direct_bps = 0;
	pol->decision.curve.direct = false;
	assert_int_equal(alloc_curve_options(pol, &p, 2.5e9, 1, 0, 16, 16,
					     false, true, &o),
			 0);
	assert_null(find(&o, ALLOC_OPT_DIRECT, 0));
	alloc_opts_free(&o);
	policy_destroy(pol);
}

/* ---- the knapsack against brute force ----------------------------------- */

static double brute(const struct alloc_option *const *opt, const size_t *n,
		    size_t n_items, uint32_t cap, size_t i, double acc)
{
	double best = -1;

	if (i == n_items)
		return acc;
	for (size_t x = 0; x < n[i]; x++) {
		double v;

		if (opt[i][x].take > cap)
			continue;
		v = brute(opt, n, n_items, cap - opt[i][x].take, i + 1,
			  acc + opt[i][x].value);
		if (v > best)
			best = v;
	}
	return best;
}

/* 2000 random cases of 1 to 5 jobs with 1 to 5 options each (the first
 * taking nothing), takes 0 to 6, capacity 0 to 12: the knapsack's value
 * equals the brute force optimum and its picks are feasible and worth
 * exactly that. */
static void test_mckp_brute_force(void **state)
{
	(void)state;
	for (int round = 0; round < 2000; round++) {
		struct alloc_option o[5][5];
		const struct alloc_option *opt[5];
		size_t n[5], pick[5];
		size_t items = 1 + rnd(5);
		uint32_t cap = rnd(13), used = 0;
		double want, got, sum = 0;

		for (size_t i = 0; i < items; i++) {
			n[i] = 1 + rnd(5);
			for (size_t x = 0; x < n[i]; x++)
				o[i][x] = (struct alloc_option){
					.kind = x ? ALLOC_OPT_PRIVATE
						  : ALLOC_OPT_DEFAULT,
					.take = x ? 1 + rnd(6) : 0,
					.value = rnd(1000) * 1e6,
				};
			opt[i] = o[i];
		}
		want = brute(opt, n, items, cap, 0, 0);
		got = alloc_mckp(opt, n, items, cap, pick);
		for (size_t i = 0; i < items; i++) {
			assert_true(pick[i] < n[i]);
			used += o[i][pick[i]].take;
			sum += o[i][pick[i]].value;
		}
		if (fabs(got - want) > 1e-6 * fmax(1, want) || used > cap ||
		    fabs(sum - got) > 1e-6 * fmax(1, got))
			fail_msg(
				"round %d: knapsack %.0f (sum %.0f, %u of %u), "
				"brute force %.0f",
				round, got, sum, used, cap, want);
	}
}

/* A batch's second pass filters its first pass's options (gate off) for
 * the sharers, cap and isolation it ends with: the same options as
 * valuing them again, on random curves, with and without direct access
 * and learning. */
static void test_opts_regate(void **state)
{
	struct policy *pol = policy_defaults();

	(void)state;
	for (int round = 0; round < 4000; round++) {
		struct alloc_bw_point bw[5];
		size_t nb = 1 + rnd(5);
		uint32_t kk = 1;
		struct alloc_profile pr;
		struct alloc_opts all = {0}, want = {0}, got = {0};
		uint32_t n_f = 1 + rnd(3), s0 = rnd(2), s1 = s0 + rnd(3);
		uint32_t cap0 = rnd(40), cap1 = cap0 ? rnd(cap0 + 1) : 0;
		bool iso0 = rnd(4) == 0, iso1 = iso0 || rnd(3) == 0;
		uint32_t kc = rnd(2) ? UINT32_MAX : 1 + rnd(40);

		for (size_t i = 0; i < nb; i++) {
			kk += rnd(3) ? kk : 1 + rnd(3); /* powers and others */
			bw[i] = (struct alloc_bw_point){kk,
							(1 + rnd(40)) * 1e8};
		}
		pr = prof(bw, nb);
		pr.direct_bps = rnd(2) ? (1 + rnd(40)) * 1e8 : 0;
		pol->decision.curve.direct = rnd(2);
		pol->learn.enabled = rnd(2);
		pol->learn.app_cap = 1 + rnd(64);
		assert_int_equal(alloc_curve_options(pol, &pr, 2.5e9, n_f, s0,
						     cap0, kc, iso0, false,
						     &all),
				 0);
		assert_int_equal(alloc_curve_options(pol, &pr, 2.5e9, n_f, s1,
						     cap1, kc, iso1, true,
						     &want),
				 0);
		assert_int_equal(alloc_opts_regate(pol, &all, &pr, n_f, s1,
						   cap1, iso1, &got),
				 0);
		if (got.n != want.n)
			fail_msg("round %d: %zu options, valued again %zu",
				 round, got.n, want.n);
		assert_true(got.o[0].kind == ALLOC_OPT_DEFAULT &&
			    got.o[0].value == want.o[0].value);
		for (size_t x = 1; x < want.n; x++) {
			size_t y;

			for (y = 1; y < got.n; y++)
				if (got.o[y].kind == want.o[x].kind &&
				    got.o[y].k == want.o[x].k &&
				    got.o[y].take == want.o[x].take &&
				    got.o[y].value == want.o[x].value &&
				    got.o[y].estimated == want.o[x].estimated)
					break;
			if (y == got.n)
				fail_msg("round %d: option %zu (kind %d, k %u) "
					 "missing",
					 round, x, (int)want.o[x].kind,
					 want.o[x].k);
		}
		alloc_opts_free(&all);
		alloc_opts_free(&want);
		alloc_opts_free(&got);
	}
	pol->decision.curve.direct = false;
	policy_destroy(pol);
}

/* The knapsack as first written (capacity by capacity, every capacity
 * up to cap, every option at each): the choices, ties included, that
 * alloc_mckp() must keep. */
static void mckp_reference(const struct alloc_option *const *opt,
			   const size_t *n, size_t n_items, uint32_t cap,
			   size_t *pick)
{
	uint64_t most = 0;
	size_t w;
	double dp[64], nd[64];
	uint16_t choice[8][64];
	uint32_t c;

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
	assert_true(w <= 64 && n_items <= 8);
	for (c = 0; c <= cap; c++)
		dp[c] = 0;
	for (size_t i = 0; i < n_items; i++) {
		for (c = 0; c <= cap; c++) {
			double b = dp[c] + opt[i][0].value;
			uint16_t bx = 0;

			for (size_t x = 1; x < n[i]; x++) {
				double v;

				if (opt[i][x].take > c)
					continue;
				v = dp[c - opt[i][x].take] + opt[i][x].value;
				if (v > b + 1e-9 * fabs(b)) {
					b = v;
					bx = (uint16_t)x;
				}
			}
			nd[c] = b;
			choice[i][c] = bx;
		}
		memcpy(dp, nd, w * sizeof(*dp));
	}
	c = 0;
	while (c < cap && dp[c] < dp[cap] - 1e-9 * fabs(dp[cap]))
		c++;
	for (size_t i = n_items; i-- > 0;) {
		pick[i] = choice[i][c];
		c -= opt[i][pick[i]].take;
	}
}

/* Only capacities the items so far can fill are computed, option by
 * option: the same choices as mckp_reference(), ties included (values
 * from a handful, so that many solutions tie). */
static void test_mckp_same_choices(void **state)
{
	(void)state;
	for (int round = 0; round < 5000; round++) {
		struct alloc_option o[8][6];
		const struct alloc_option *opt[8];
		size_t n[8], pick[8], ref[8];
		size_t items = 1 + rnd(8);
		uint32_t cap = rnd(60);

		for (size_t i = 0; i < items; i++) {
			n[i] = 1 + rnd(6);
			for (size_t x = 0; x < n[i]; x++)
				o[i][x] = (struct alloc_option){
					.kind = x ? ALLOC_OPT_PRIVATE
						  : ALLOC_OPT_DEFAULT,
					.take = x ? rnd(9) : 0,
					.value =
						rnd(round & 1 ? 4 : 1000) * 1e8,
				};
			opt[i] = o[i];
		}
		mckp_reference(opt, n, items, cap, ref);
		alloc_mckp(opt, n, items, cap, pick);
		for (size_t i = 0; i < items; i++)
			if (pick[i] != ref[i])
				fail_msg("round %d: item %zu picks %zu, the "
					 "reference %zu",
					 round, i, pick[i], ref[i]);
	}
}

/* The online pick sums each option's thresholds once for all options
 * (and keeps the sums for the next job on the same pool state): the same
 * pick as summing them option by option. */
static void test_online_pick_same(void **state)
{
	struct alloc_thr_cache tc = {0};
	uint32_t last_used = 0, last_total = 1;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		struct alloc_option o[12];
		struct alloc_opts s = {.o = o, .n = 1 + rnd(12)};
		uint32_t total = 1 + rnd(200), used = rnd(total + 1);
		uint32_t room = rnd(100);

		if (round % 2) {
			total = last_total;
			used = last_used;
		}
		double best, low = 1e7, high = 2.5e9;
		size_t want = 0;

		for (size_t x = 0; x < s.n; x++)
			o[x] = (struct alloc_option){
				.kind = x ? ALLOC_OPT_PRIVATE
					  : ALLOC_OPT_DEFAULT,
				.take = x ? 1 + rnd(x == 5 ? 90 : 16) : 0,
				.value = rnd(50) * 2e8,
			};
		best = o[0].value;
		for (size_t x = 1; x < s.n; x++) {
			double cost = 0, v;

			if (o[x].take > room)
				continue;
			for (uint32_t i = 0; i < o[x].take; i++)
				cost += alloc_threshold(
					(double)(used + i) / total, low, high);
			v = o[x].value - cost;
			if (v > best + 1e-9 * fabs(best)) {
				best = v;
				want = x;
			}
		}
		assert_int_equal(
			alloc_online_pick(&s, used, total, room, low, high),
			want);
		/* sums kept from round to round: half the rounds see the
		 * last round's pool state again */
		assert_int_equal(alloc_online_pick_cached(&s, used, total, room,
							  low, high, &tc),
				 want);
		last_used = used;
		last_total = total;
	}
}

/* Ties go to fewer forwarders. */
static void test_mckp_ties(void **state)
{
	struct alloc_option a[] = {{ALLOC_OPT_DEFAULT, 1, 0, 1e9, false},
				   {ALLOC_OPT_PRIVATE, 2, 2, 2e9, false},
				   {ALLOC_OPT_PRIVATE, 4, 4, 2e9, false}};
	const struct alloc_option *opt[] = {a};
	size_t n[] = {3}, pick[1];

	(void)state;
	assert_near(alloc_mckp(opt, n, 1, 8, pick), 2e9);
	assert_int_equal(pick[0], 1);
}

/* ---- the online threshold ----------------------------------------------- */

/* low / e on an empty pool, high when full, rising in between. */
static void test_threshold(void **state)
{
	double prev = 0;

	(void)state;
	assert_near(alloc_threshold(0, 1e7, 2.5e9), 1e7 / M_E);
	assert_near(alloc_threshold(1, 1e7, 2.5e9), 2.5e9);
	for (int i = 0; i <= 20; i++) {
		double v = alloc_threshold(i / 20.0, 1e7, 2.5e9);

		assert_true(v > prev);
		prev = v;
	}
}

/* A job alone: on an empty pool a gain of 100 MB/s per forwarder is worth
 * taking; with 15 of 16 pool forwarders in use the threshold (about
 * 1.8 GB/s) only lets a job that gains more than that per forwarder take
 * the last ones. */
static void test_online_pick(void **state)
{
	struct alloc_option small[] = {{ALLOC_OPT_DEFAULT, 1, 0, 1e8, false},
				       {ALLOC_OPT_PRIVATE, 4, 4, 5e8, false}};
	struct alloc_option big[] = {{ALLOC_OPT_DEFAULT, 1, 0, 1e8, false},
				     {ALLOC_OPT_PRIVATE, 2, 2, 5e9, false}};
	struct alloc_opts s = {.o = small, .n = 2}, b = {.o = big, .n = 2};

	(void)state;
	assert_int_equal(alloc_online_pick(&s, 0, 16, 16, 1e7, 2.5e9), 1);
	assert_int_equal(alloc_online_pick(&s, 14, 16, 2, 1e7, 2.5e9), 0);
	assert_int_equal(alloc_online_pick(&s, 12, 16, 4, 1e7, 2.5e9), 0);
	assert_int_equal(alloc_online_pick(&b, 14, 16, 2, 1e7, 2.5e9), 1);
	/* no room: the default mapping */
	assert_int_equal(alloc_online_pick(&b, 14, 16, 1, 1e7, 2.5e9), 0);
}

/* ---- decisions: harm, the curve's count, direct access ------------------ */

static struct topology *make_topo(void)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[32];

	assert_non_null(t);
	for (int i = 1; i <= 24; i++) {
		bool svc = i <= 8;
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 2.5e9,
			.group = (char *)"g0",
			.role = svc ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};
		snprintf(name, sizeof(name), "fwd%03d", i);
		assert_int_equal(topo_add_forwarder(t, &f, &err), 0);
	}
	assert_int_equal(topo_add_compute_nodes(t, "c[1-512]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 64, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	return t;
}

static struct alloc_decision *decide(const struct policy *p, const char *nodes,
				     const struct alloc_profile *pr)
{
	struct topology *t = make_topo();
	struct alloc_ctx *cx;
	struct alloc_job job = {.job_id = "j",
				.user = "u",
				.account = "a",
				.name = "n",
				.partition = "p",
				.nodes = nodes,
				.request = FWD_REQ_AUTO,
				.profile = pr};
	struct alloc_decision *d;
	fwd_error_t err;
	uint32_t *ids;

	cx = alloc_ctx_create(t, &err);
	assert_non_null(cx);
	assert_int_equal(alloc_job_nodes(t, nodes, &ids, &job.n_nodes, &err),
			 0);
	job.node_ids = ids;
	d = alloc_decide(cx, p, NULL, NULL, &job, 0, &err);
	if (!d)
		fail_msg("%s", err.text);
	free(ids);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	return d;
}

static bool has_reason(const struct alloc_decision *d, const char *sub)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		if (strstr(d->reasons[i], sub))
			return true;
	return false;
}

static void dump(const struct alloc_decision *d)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		print_message("#   reason: %s\n", d->reasons[i]);
}

/* A 512-node job that moves 1 GiB in total at a 25.6 GB/s peak is
 * disruptive by its peak (> high_bandwidth 5 GB/s), but 1 GiB at the
 * 20 GB/s of its 8 default forwarders is 0.05 s of I/O: under min_harm
 * (10 s), it stays on the default mapping. */
static void test_harm_burst(void **state)
{
	struct alloc_bw_point bw[] = {{8, 20e9}};
	struct alloc_profile pr = prof(bw, 1);
	struct policy *p = policy_defaults();
	struct alloc_decision *d;

	(void)state;
	assert_true(alloc_harm((uint64_t)GiB, 20e9, 0) < 0.1);
	pr.io_volume_bytes = (uint64_t)GiB;
	pr.io_nodes = 512;
	pr.peak_bandwidth_bps = 25.6e9;
	d = decide(p, "c[1-512]", &pr);
	dump(d);
	assert_int_equal(d->action, FWD_ACT_DEFAULT);
	assert_int_equal(d->n_forwarders, 8);
	assert_true(has_reason(d, "< min_harm 10 s"));
	alloc_decision_destroy(d);
	policy_destroy(p);
}

/* An N-1 job on 128 nodes (> n1_min_nodes 64) writing 500 GiB: at the
 * 0.3 GB/s of its 2 default forwarders that is 1790 s of disruption:
 * isolated, on the count where its curve is best (4), not on max(S, N_f).
 * The same job with 1 GiB stays. */
static void test_harm_n1(void **state)
{
	struct alloc_bw_point bw[] = {
		{1, 0.2e9}, {2, 0.3e9}, {4, 0.5e9}, {8, 0.45e9}};
	struct alloc_profile pr = prof(bw, 4);
	struct policy *p = policy_defaults();
	struct alloc_decision *d;

	(void)state;
	pr.io_mode = FWD_IO_N_1;
	pr.io_nodes = 128;
	pr.io_volume_bytes = 500 * (uint64_t)GiB;
	assert_near(alloc_harm(pr.io_volume_bytes, 0.3e9, 0),
		    500 * GiB / 0.3e9);
	assert_near(alloc_harm(pr.io_volume_bytes, 0.3e9, 2),
		    3 * 500 * GiB / 0.3e9);
	d = decide(p, "c[1-128]", &pr);
	dump(d);
	assert_int_equal(d->action, FWD_ACT_ISOLATE);
	assert_int_equal(d->n_forwarders, 4);
	for (size_t i = 0; i < d->n_forwarders; i++)
		assert_true(d->private_fwd[i]);
	assert_true(has_reason(d, ">= min_harm 10 s: private forwarders"));
	alloc_decision_destroy(d);

	pr.io_volume_bytes = (uint64_t)GiB;
	d = decide(p, "c[1-128]", &pr);
	dump(d);
	assert_int_not_equal(d->action, FWD_ACT_ISOLATE);
	assert_true(has_reason(d, "< min_harm"));
	alloc_decision_destroy(d);
	policy_destroy(p);
}

/* The harm counts the metadata load too: 1 GiB over 64 nodes at 1 GB/s
 * in its I/O phases (B_c = 15.625 MB/s) is 1.07 s of data I/O on its one
 * default forwarder, but 3,000 metadata ops/s over those 1.07 s is
 * 10.7 s at the metadata-heavy rate (300 ops/s): at min_harm 10 s it is
 * isolated, on the one forwarder its 1 GB/s needs; at 2,500 ops/s (8.9 s)
 * it stays.  The same with a curve, decided in a batch (batch.c's harm).
 */
static struct alloc_decision *batch_first(const struct policy *p,
					  const struct alloc_profile *pr)
{
	struct topology *t = make_topo();
	struct alloc_ctx *cx;
	struct alloc_profile quiet = prof(NULL, 0);
	struct alloc_job jobs[2] = {
		{.job_id = "md",
		 .user = "u",
		 .nodes = "c[1-64]",
		 .request = FWD_REQ_AUTO,
		 .profile = pr},
		{.job_id = "q",
		 .user = "u",
		 .nodes = "c[129-192]",
		 .request = FWD_REQ_AUTO,
		 .profile = &quiet},
	};
	struct alloc_decision *out[2];
	uint32_t *ids[2];
	fwd_error_t err;

	quiet.io_volume_bytes = 1 << 20;
	cx = alloc_ctx_create(t, &err);
	assert_non_null(cx);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(alloc_job_nodes(t, jobs[i].nodes, &ids[i],
						 &jobs[i].n_nodes, &err),
				 0);
		jobs[i].node_ids = ids[i];
	}
	if (alloc_decide_batch(cx, p, NULL, NULL, jobs, 2, 0, out, &err) < 0)
		fail_msg("%s", err.text);
	alloc_decision_destroy(out[1]);
	free(ids[0]);
	free(ids[1]);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	return out[0];
}

static void test_harm_metadata(void **state)
{
	struct alloc_bw_point bw[] = {{1, 1e9}};
	struct policy *p = policy_defaults();
	struct alloc_harm h;
	double io = GiB / 1e9;

	(void)state;
	for (int curve = 0; curve < 2; curve++) {
		for (int heavy = 0; heavy < 2; heavy++) {
			struct alloc_profile pr =
				prof(curve ? bw : NULL, curve ? 1 : 0);
			struct alloc_decision *d;

			pr.io_volume_bytes = (uint64_t)GiB;
			pr.io_nodes = 64;
			pr.node_bandwidth_bps = 1e9 / 64;
			pr.mdops = heavy ? 3000 : 2500;
			alloc_harm_of(&p->decision.interference, &pr, 1e9, 0,
				      &h);
			assert_near(h.io_seconds, io);
			assert_near(h.data_s, io);
			assert_near(h.md_s, io * pr.mdops / 300);
			assert_near(h.need_bps, 1e9);
			assert_near(h.harm, io * pr.mdops / 300);
			d = curve ? batch_first(p, &pr)
				  : decide(p, "c[1-64]", &pr);
			if (d->action !=
			    (heavy ? FWD_ACT_ISOLATE : FWD_ACT_DEFAULT)) {
				dump(d);
				fail_msg("curve %d, %.0f ops/s: %s", curve,
					 pr.mdops, fwd_action_name(d->action));
			}
			if (heavy) {
				assert_int_equal(d->n_forwarders, 1);
				assert_true(d->private_fwd[0]);
			}
			if (!curve)
				assert_true(has_reason(
					d, heavy ? "(metadata: 3000 ops/s over "
						   "1.07 s of I/O = 10.7 s at "
						   "300 ops/s"
						 : "(metadata: 2500 ops/s over "
						   "1.07 s of I/O = 8.95 s at "
						   "300 ops/s"));
			alloc_decision_destroy(d);
		}
	}
	/* no volume: no I/O time, no harm */
	{
		struct alloc_profile z = prof(NULL, 0);

		z.io_volume_bytes = 0;
		z.mdops = 1e6;
		alloc_harm_of(&p->decision.interference, &z, 1e9, 3, &h);
		assert_true(h.harm == 0 && h.io_seconds == 0);
	}
	policy_destroy(p);
}

/* V_min and N_min no longer gate a job with a curve (a 16-node job moving
 * 5 GiB scales when its curve says so), unless admin_floors. */
static void test_floors(void **state)
{
	struct alloc_bw_point bw[] = {{1, 0.2e9}, {2, 0.4e9}, {4, 0.7e9}};
	struct alloc_profile pr = prof(bw, 3);
	struct policy *p = policy_defaults();
	struct alloc_decision *d;

	(void)state;
	pr.io_nodes = 16;
	pr.io_volume_bytes = 5 * (uint64_t)GiB;
	d = decide(p, "c[1-16]", &pr);
	dump(d);
	assert_int_equal(d->action, FWD_ACT_SCALE);
	assert_int_equal(d->n_forwarders, 4);
	alloc_decision_destroy(d);
	p->decision.curve.admin_floors = true;
	d = decide(p, "c[1-16]", &pr);
	assert_int_equal(d->action, FWD_ACT_DEFAULT);
	assert_true(has_reason(d, "not eligible: I/O volume"));
	alloc_decision_destroy(d);
	/* scale.enabled false: the curve does not scale either */
	p->decision.curve.admin_floors = false;
	p->decision.scale.enabled = false;
	d = decide(p, "c[1-16]", &pr);
	assert_int_equal(d->action, FWD_ACT_DEFAULT);
	assert_true(has_reason(d, "scaling disabled by the policy"));
	alloc_decision_destroy(d);
	policy_destroy(p);
}

/* Direct access, where the policy allows it and history measured it
 * faster: action direct, no forwarder. */
static void test_direct(void **state)
{
	struct alloc_bw_point bw[] = {{1, 0.2e9}, {2, 0.3e9}};
	struct alloc_profile pr = prof(bw, 2);
	struct policy *p = policy_defaults();
	struct alloc_decision *d;

	(void)state;
	pr.direct_bps = 1e9;
	d = decide(p, "c[1-16]", &pr);
	assert_int_not_equal(d->action, FWD_ACT_DIRECT);
	alloc_decision_destroy(d);
	p->decision.curve.direct = true;
	d = decide(p, "c[1-16]", &pr);
	dump(d);
	assert_int_equal(d->action, FWD_ACT_DIRECT);
	assert_int_equal(d->n_forwarders, 0);
	assert_int_equal(d->n_mapping, 0);
	assert_true(has_reason(d, "direct: no forwarder"));
	/* the ledger keeps it, and its JSON (STATE.json) reads back */
	{
		struct topology *t = make_topo();
		struct alloc_ledger *l = alloc_ledger_create(t), *l2;
		const struct alloc_ledger_entry *e;
		fwd_error_t err;
		char *js;

		assert_int_equal(alloc_ledger_acquire(l, d, 16, 5, &err), 0);
		js = alloc_state_to_json(l, 0);
		assert_non_null(js);
		assert_non_null(strstr(js, "\"direct\""));
		l2 = alloc_ledger_create(t);
		if (alloc_state_parse(l2, js, "STATE.json", &err) < 0)
			fail_msg("%s", err.text);
		e = alloc_ledger_find(l2, "j");
		assert_non_null(e);
		assert_int_equal(e ? e->action : 0, FWD_ACT_DIRECT);
		assert_int_equal(e ? e->n_forwarders : 1, 0);
		free(js);
		alloc_ledger_destroy(l);
		alloc_ledger_destroy(l2);
		topo_destroy(t);
	}
	alloc_decision_destroy(d);
	policy_destroy(p);
}

/* Learning: an application measured only at k = 1 is valued above it by
 * the optimistic estimate (doubling doubles: 0.4, 0.6, 0.8 GB/s at 2, 4,
 * 8) and tried wider, within the learn budget: pool_share 25 % of the 16
 * idle forwarders = 4 (so not 8 forwarders: 7 extras), app_cap 8.  Off:
 * nothing is explored.  pool_share 10 %: 1 forwarder. */
static void test_learn_budget(void **state)
{
	struct alloc_bw_point bw[] = {{1, 0.2e9}};
	struct alloc_profile pr = prof(bw, 1);
	struct policy *p = policy_defaults();
	struct alloc_decision *d;

	(void)state;
	pr.io_nodes = 16;
	d = decide(p, "c[1-16]", &pr);
	assert_int_equal(d->action, FWD_ACT_DEFAULT);
	assert_false(has_reason(d, "explore"));
	alloc_decision_destroy(d);

	p->learn.enabled = true;
	d = decide(p, "c[1-16]", &pr);
	dump(d);
	assert_int_equal(d->action, FWD_ACT_SCALE);
	assert_int_equal(d->n_forwarders, 4);
	assert_true(has_reason(d, "explore: k = 4 is above the highest "
				  "measured count 1; acting on the estimate "
				  "600MB/s"));
	alloc_decision_destroy(d);

	p->learn.pool_share = 0.1;
	d = decide(p, "c[1-16]", &pr);
	assert_int_equal(d->n_forwarders, 2);
	assert_true(has_reason(d, "explore: k = 2"));
	alloc_decision_destroy(d);

	p->learn.pool_share = 1.0;
	p->learn.app_cap = 2;
	d = decide(p, "c[1-16]", &pr);
	assert_int_equal(d->n_forwarders, 2);
	alloc_decision_destroy(d);
	policy_destroy(p);
}

/* A batch keeps its explorations within the budget too: two such jobs
 * (on different default forwarders) would explore with 3 extras each; the
 * budget of 4 lets the knapsack keep at most 4 exploring forwarders. */
static void test_learn_budget_batch(void **state)
{
	struct alloc_bw_point bw[] = {{1, 0.2e9}};
	struct alloc_profile pr = prof(bw, 1);
	struct policy *p = policy_defaults();
	struct topology *t = make_topo();
	struct alloc_ctx *cx;
	struct alloc_job jobs[2] = {
		{.job_id = "a", .nodes = "c[1-16]", .profile = &pr},
		{.job_id = "b", .nodes = "c[65-80]", .profile = &pr}};
	struct alloc_decision *out[2];
	uint32_t *ids[2];
	fwd_error_t err;
	size_t explore = 0, exploring = 0;

	(void)state;
	pr.io_nodes = 16;
	p->learn.enabled = true;
	cx = alloc_ctx_create(t, &err);
	assert_non_null(cx);
	for (int i = 0; i < 2; i++) {
		jobs[i].request = FWD_REQ_AUTO;
		assert_int_equal(alloc_job_nodes(t, jobs[i].nodes, &ids[i],
						 &jobs[i].n_nodes, &err),
				 0);
		jobs[i].node_ids = ids[i];
	}
	assert_int_equal(
		alloc_decide_batch(cx, p, NULL, NULL, jobs, 2, 0, out, &err),
		0);
	for (int i = 0; i < 2; i++) {
		dump(out[i]);
		if (has_reason(out[i], "explore:")) {
			exploring++;
			for (size_t k = 0; k < out[i]->n_forwarders; k++)
				explore += out[i]->private_fwd[k];
		}
		alloc_decision_destroy(out[i]);
		free(ids[i]);
	}
	assert_true(exploring >= 1);
	assert_true(explore <= 4);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	policy_destroy(p);
}

/* ---- options valued at the count they get ------------------------------ */

/* A 7-node job cannot use 8 forwarders: its options stop at 7 (valued at
 * 7 on its curve, log2-interpolated), never valued at 8 and trimmed to 7
 * afterwards. */
static void test_trim_before_valuation(void **state)
{
	struct alloc_bw_point bw[] = {
		{1, 0.2e9}, {2, 0.4e9}, {4, 0.8e9}, {8, 1.6e9}};
	struct alloc_profile pr = prof(bw, 4);
	struct policy *p = policy_defaults();
	struct alloc_opts o = {0};
	struct alloc_decision *d;
	const struct alloc_option *x;
	double v7 = 0.8e9 + (log2(7) - 2) * 0.8e9;

	(void)state;
	pr.io_nodes = 7;
	assert_int_equal(alloc_curve_options(p, &pr, 2.5e9, 1, 0, 16, 7, false,
					     true, &o),
			 0);
	for (size_t i = 0; i < o.n; i++)
		assert_true(o.o[i].k <= 7);
	x = find(&o, ALLOC_OPT_EXTRAS, 7);
	assert_non_null(x);
	assert_near(x ? x->value : 0, v7);
	alloc_opts_free(&o);
	d = decide(p, "c[1-7]", &pr);
	dump(d);
	assert_int_equal(d->action, FWD_ACT_SCALE);
	assert_int_equal(d->n_forwarders, 7);
	assert_true(has_reason(d, "k = 7,"));
	assert_false(has_reason(d, "k = 8"));
	alloc_decision_destroy(d);
	policy_destroy(p);
}

/* ---- a batch against the simulator's sharing model ---------------------- */

/* The simulator's bandwidth of an application (sim/SIM.md "Bandwidth"):
 * the curve, proportional below its first point; its best per forwarder,
 * at most B_f. */
static double model_curve(const struct alloc_bw_point *bw, size_t n, uint32_t k)
{
	if (!k)
		return 0;
	if (k <= bw[0].k)
		return bw[0].bps * k / bw[0].k;
	for (size_t i = 1; i < n; i++)
		if (k <= bw[i].k)
			return bw[i - 1].bps + (bw[i].bps - bw[i - 1].bps) *
						       (k - bw[i - 1].k) /
						       (bw[i].k - bw[i - 1].k);
	return bw[n - 1].bps;
}

static double model_rate(const struct alloc_bw_point *bw, size_t n)
{
	double r = 0;

	for (size_t i = 0; i < n; i++)
		r = fmax(r, bw[i].bps / bw[i].k);
	return fmin(r, 2.5e9);
}

#define MJ 12

/* A job of the model: k forwarders, whether its default stays in use. */
struct mjob {
	uint32_t k, take, def; /* def: its (one) default forwarder */
	bool stays;
};

/* The simulator's sharing: each forwarder gives every job on it its share
 * of its time, a job spread evenly over its forwarders; the private ones
 * are its own.  The summed bandwidth. */
static double model_total(const struct mjob *m, size_t n,
			  struct alloc_bw_point (*bw)[4])
{
	double load[8] = {0}, tot = 0;

	for (size_t i = 0; i < n; i++)
		if (m[i].stays)
			load[m[i].def] += model_curve(bw[i], 4, m[i].k) /
					  m[i].k / model_rate(bw[i], 4);
	for (size_t i = 0; i < n; i++) {
		double v = model_curve(bw[i], 4, m[i].k);

		tot += m[i].stays && load[m[i].def] > 1 ? v / load[m[i].def]
							: v;
	}
	return tot;
}

/*
 * Random batches of up to 12 jobs on 3 default forwarders (64 nodes each)
 * with random curves at 1, 2, 4 and 8 forwarders, no minimum gain, no
 * interference: the batch's choice, rated by the simulator's sharing
 * model, is never below every job on its defaults, and no single job's
 * other option (default, default + extras, k private, within the pool of
 * 16 less the reserve of 4 and max_pool_share) raises the model's total
 * by more than 2 %.
 */
static void test_batch_sharing_model(void **state)
{
	struct policy *p = policy_defaults();
	struct topology *t = make_topo();
	struct alloc_ctx *cx;
	fwd_error_t err;
	size_t worst_set = 0;
	double worst = 0;

	(void)state;
	p->decision.curve.min_gain = 0;
	p->decision.curve.min_gain_share = 0;
	p->decision.interference.enabled = false;
	cx = alloc_ctx_create(t, &err);
	assert_non_null(cx);
	rng = 0x9E3779B97F4A7C15ULL;
	for (size_t set = 0; set < 300; set++) {
		struct alloc_bw_point bw[MJ][4];
		struct alloc_profile pr[MJ];
		struct alloc_job jobs[MJ];
		struct alloc_decision *out[MJ];
		struct mjob m[MJ], all_def[MJ];
		char ids[MJ][8], names[MJ][32];
		uint32_t *nids[MJ], next[3] = {0}, used = 0;
		size_t n = 2 + rnd(MJ - 1);
		double got, def;

		for (size_t i = 0; i < n; i++) {
			uint32_t nodes = 4u << rnd(3), f = rnd(3);
			double v = (0.05 + rnd(100) / 100.0) * 1e9;

			if (next[f] + nodes > 64)
				f = (f + 1) % 3;
			if (next[f] + nodes > 64)
				f = (f + 1) % 3;
			if (next[f] + nodes > 64) {
				n = i;
				break;
			}
			for (int k = 0; k < 4; k++) {
				bw[i][k] = (struct alloc_bw_point){1u << k, v};
				v *= 0.8 + rnd(121) / 100.0;
				v = fmin(v, (2u << k) * 2.5e9);
			}
			pr[i] = prof(bw[i], 4);
			pr[i].io_nodes = nodes;
			snprintf(ids[i], sizeof(ids[i]), "j%zu", i);
			snprintf(names[i], sizeof(names[i]), "c[%u-%u]",
				 f * 64 + next[f] + 1,
				 f * 64 + next[f] + nodes);
			jobs[i] = (struct alloc_job){.job_id = ids[i],
						     .user = "u",
						     .account = "a",
						     .name = "n",
						     .partition = "p",
						     .nodes = names[i],
						     .request = FWD_REQ_AUTO,
						     .profile = &pr[i]};
			assert_int_equal(alloc_job_nodes(t, names[i], &nids[i],
							 &jobs[i].n_nodes,
							 &err),
					 0);
			jobs[i].node_ids = nids[i];
			next[f] += nodes;
			all_def[i] = (struct mjob){1, 0, f, true};
		}
		if (alloc_decide_batch(cx, p, NULL, NULL, jobs, n, 0, out,
				       &err) < 0)
			fail_msg("%s", err.text);
		for (size_t i = 0; i < n; i++) {
			size_t priv = 0;

			for (size_t k = 0; k < out[i]->n_forwarders; k++)
				priv += out[i]->private_fwd[k];
			m[i] = (struct mjob){(uint32_t)out[i]->n_forwarders,
					     (uint32_t)priv, all_def[i].def,
					     priv < out[i]->n_forwarders};
			used += (uint32_t)priv;
			alloc_decision_destroy(out[i]);
			free(nids[i]);
		}
		got = model_total(m, n, bw);
		def = model_total(all_def, n, bw);
		if (got < def * (1 - 1e-9))
			fail_msg("set %zu: %.4g GB/s, below all default %.4g",
				 set, got / 1e9, def / 1e9);
		for (size_t i = 0; i < n; i++) {
			struct mjob keep = m[i];

			for (int alt = 0; alt < 8; alt++) {
				/* 0-3: 1, 2, 4, 8 private; 4-6: default + 1,
				 * 3, 7 extras; 7: default */
				uint32_t k = alt < 4   ? 1u << alt
					     : alt < 7 ? 2u << (alt - 4)
						       : 1;
				uint32_t take = alt < 4 ? k : k - 1;
				double v;

				if (k > pr[i].io_nodes || take > 8 ||
				    used - keep.take + take > 12)
					continue;
				m[i] = (struct mjob){k, take, keep.def,
						     alt >= 4};
				v = model_total(m, n, bw);
				if (v / got - 1 > worst) {
					worst = v / got - 1;
					worst_set = set;
				}
				if (v > got * 1.02)
					fail_msg("set %zu: job %zu with %s k "
						 "= %u: %.4g GB/s, the batch's "
						 "choice %.4g",
						 set, i,
						 alt < 4 ? "private"
							 : "default +",
						 k, v / 1e9, got / 1e9);
			}
			m[i] = keep;
		}
	}
	print_message("# largest one-job improvement: %.3f %% (set %zu)\n",
		      100 * worst, worst_set);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	policy_destroy(p);
}

/* ---- isolation by harm without a curve ---------------------------------- */

struct sweep_case {
	const char *nodes;
	uint32_t n_nodes;
	double volume, peak;
	enum fwd_io_mode mode;
	enum fwd_action action;
	const char *reason;
};

/* Without a curve, too, a disruptive job is isolated by the harm it does
 * (its I/O time at DFRA's estimate of the default mapping, min_harm 10 s),
 * never by its peak or its I/O mode alone: short bursts stay default. */
static const struct sweep_case sweep[] = {
	{"c[1-16]", 16, 100 * 1048576.0, 25.6e9, FWD_IO_N_N, FWD_ACT_DEFAULT,
	 "< min_harm 10 s"},
	{"c[1-16]", 16, 2048 * GiB, 25.6e9, FWD_IO_N_N, FWD_ACT_ISOLATE,
	 ">= min_harm 10 s: private forwarders"},
	{"c[1-128]", 128, 100 * 1048576.0, 1e9, FWD_IO_N_1, FWD_ACT_DEFAULT,
	 "< min_harm 10 s"},
	{"c[1-128]", 128, 500 * GiB, 1e9, FWD_IO_N_1, FWD_ACT_ISOLATE,
	 ">= min_harm 10 s: private forwarders"},
	{"c[1-512]", 512, 1 * GiB, 100e9, FWD_IO_N_N, FWD_ACT_DEFAULT,
	 "< min_harm 10 s"},
};

static void test_harm_no_curve(void **state)
{
	struct policy *p = policy_defaults();

	(void)state;
	for (size_t i = 0; i < sizeof(sweep) / sizeof(sweep[0]); i++) {
		const struct sweep_case *c = &sweep[i];
		struct alloc_profile pr = prof(NULL, 0);
		struct alloc_decision *d;

		pr.io_nodes = c->n_nodes;
		pr.io_volume_bytes = (uint64_t)c->volume;
		pr.peak_bandwidth_bps = c->peak;
		pr.node_bandwidth_bps = c->peak / c->n_nodes;
		pr.io_mode = c->mode;
		d = decide(p, c->nodes, &pr);
		if (d->action != c->action || !has_reason(d, c->reason)) {
			dump(d);
			fail_msg("case %zu: action %d, want %d", i,
				 (int)d->action, (int)c->action);
		}
		alloc_decision_destroy(d);
	}
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_interpolation),
		cmocka_unit_test(test_value_extrapolation),
		cmocka_unit_test(test_value_no_curve),
		cmocka_unit_test(test_options_gain),
		cmocka_unit_test(test_explore_direct),
		cmocka_unit_test(test_mckp_brute_force),
		cmocka_unit_test(test_mckp_ties),
		cmocka_unit_test(test_mckp_same_choices),
		cmocka_unit_test(test_opts_regate),
		cmocka_unit_test(test_online_pick_same),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_online_pick),
		cmocka_unit_test(test_harm_burst),
		cmocka_unit_test(test_harm_n1),
		cmocka_unit_test(test_harm_metadata),
		cmocka_unit_test(test_floors),
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_learn_budget),
		cmocka_unit_test(test_learn_budget_batch),
		cmocka_unit_test(test_trim_before_valuation),
		cmocka_unit_test(test_batch_sharing_model),
		cmocka_unit_test(test_harm_no_curve),
	};

	return cmocka_run_group_tests_name("curve", tests, NULL, NULL);
}
