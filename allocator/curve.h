/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_ALLOCATOR_CURVE_H
#define FWD_ALLOCATOR_CURVE_H

/*
 * Sizing from measured bandwidth curves (DESIGN.md "The decision" step 7),
 * between the decision's files; not for other modules.
 *
 *   curve.c   option valuation: the expected bandwidth at k forwarders
 *   mckp.c    the exact multiple-choice knapsack (a batch) and the online
 *             threshold (a job alone)
 *   harm.c    isolation by the interference it prevents
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/decide.h"

struct policy;

/*
 * Expected bandwidth of the application with k >= 1 forwarders of its own
 * (bytes/s), from the profile's curve: between measured counts linear in
 * log2 k; below the first proportional to k; above the last the last
 * segment's gain per doubling goes on (one point: doubling k doubles the
 * bandwidth), bounded by k * bf.  *estimated (may be NULL) is set when k
 * lies above the highest measured count.  Without a curve: DFRA's
 * min(k * bf, N_io * B_c).
 */
double alloc_curve_value(const struct alloc_profile *pr, double bf, uint32_t k,
			 bool *estimated);

/* The highest measured forwarder count, 0 without a curve. */
uint32_t alloc_curve_kmax(const struct alloc_profile *pr);

/* One way to serve a job. */
enum alloc_opt_kind {
	ALLOC_OPT_DEFAULT = 0, /* the default mapping (shared) */
	ALLOC_OPT_EXTRAS,      /* the defaults plus `take` private extras */
	ALLOC_OPT_PRIVATE,     /* `take` private forwarders */
	ALLOC_OPT_DIRECT,      /* no forwarder: direct file-system access */
};

struct alloc_option {
	enum alloc_opt_kind kind;
	uint32_t k;	/* forwarders the job would use */
	uint32_t take;	/* forwarders taken from the idle pool */
	double value;	/* expected bandwidth, bytes/s, shared as it will be */
	bool estimated; /* above the measured counts (an exploration) */
	double alone;	/* expected bandwidth with the defaults to itself
			 * (default, extras; the others: value) */
};

/* What a job can choose among (curve.c). */
struct alloc_opts {
	struct alloc_option *o; /* o[0] is the default mapping */
	size_t n;
	double base;	  /* the default mapping's value alone */
	uint32_t sharers; /* other jobs on its default forwarders */
	bool isolate;	  /* only private options (harm.c) */
};

/*
 * The options of a job with N_f default forwarders of mean bandwidth bf:
 * the default mapping (value / (1 + sharers)), default plus e extras (the
 * default forwarders stay in use: value / (1 + sharers) too), k private
 * forwarders, for k over the powers of two, the measured counts and kcap
 * itself, up to `cap` pool forwarders and kcap forwarders in all (the
 * node count and max_forwarders_per_job: an option is valued at the count
 * it will get, never trimmed after) (above
 * the highest measured count only when learn.enabled, up to
 * learn.app_cap forwarders: estimated, an exploration); an
 * option must beat the default mapping's value by min_gain and by
 * min_gain_share of it (only when `gate`: a batch applies the gate once
 * it knows who shares the defaults); direct access (k = 0) when the policy
 * allows it and the profile measured it.  With `isolate` the default mapping is
 * worth 0 (kept only as the fallback o[0]) and there are no extras.  0 or
 * -1 (ENOMEM).
 */
int alloc_curve_options(const struct policy *p, const struct alloc_profile *pr,
			double bf, uint32_t n_f, uint32_t sharers, uint32_t cap,
			uint32_t kcap, bool isolate, bool gate,
			struct alloc_opts *out);

/*
 * The options alloc_curve_options() gives with the gate on, `sharers`,
 * `cap` and `isolate`, read from `all`, which it gave for the same job
 * (same kcap) with the gate off, no more sharers, no smaller cap and no
 * isolation
 * that `isolate` lacks (a batch's first pass): the same options, values
 * not computed again (their order may differ: o[0] stays first).  0 or -1
 * (ENOMEM).
 */
int alloc_opts_regate(const struct policy *p, const struct alloc_opts *all,
		      const struct alloc_profile *pr, uint32_t n_f,
		      uint32_t sharers, uint32_t cap, bool isolate,
		      struct alloc_opts *out);

/* Whether option x of o beats its default option by the policy's minimum
 * gain (absolute and relative); an isolated job's options always do. */
bool alloc_option_gains(const struct policy *p, const struct alloc_opts *o,
			const struct alloc_option *x, double def_value);
void alloc_opts_free(struct alloc_opts *o);

/*
 * Exact multiple-choice knapsack (mckp.c): item i chooses exactly one of
 * its n[i] options opt[i] (opt[i][0] must take 0), the takes summing to at
 * most `cap`, maximising the summed value; ties go to fewer forwarders,
 * then to lower option indexes.  pick[i] receives the choice.  Dynamic
 * programme over the capacity: O(sum n[i] * cap).  Returns the best sum,
 * or -1 with errno ENOMEM.
 */
double alloc_mckp(const struct alloc_option *const *opt, const size_t *n,
		  size_t n_items, uint32_t cap, size_t *pick);

/* alloc_mckp()'s working arrays, kept from one solve to the next (a
 * batch solves several times).  Zeroed: empty. */
struct alloc_mckp_buf {
	double *rows; /* the table, a row of capacities per item */
	uint32_t *lim;
	size_t rows_cap, items_cap;
};

/* alloc_mckp() with the working arrays in *b (grown as needed). */
double alloc_mckp_with(const struct alloc_option *const *opt, const size_t *n,
		       size_t n_items, uint32_t cap, size_t *pick,
		       struct alloc_mckp_buf *b);
void alloc_mckp_buf_free(struct alloc_mckp_buf *b);

/*
 * The online threshold (mckp.c): the opportunity cost of the forwarder
 * taken when a share z in [0, 1] of the pool is in use, rising from
 * low / e (empty pool) to high (full): (low / e) * (high * e / low)^z
 * (the online knapsack threshold of Zhou, Chakrabarty and Lukose, 2008).
 */
double alloc_threshold(double z, double low, double high);

/*
 * A job alone: the option with the largest value minus the threshold cost
 * of each forwarder it takes, `used` of `total` pool forwarders being in
 * use; only options taking at most `room`.  Ties go to the fewer
 * forwarders.  Returns the option's index (0 when nothing beats the
 * default mapping).
 */
size_t alloc_online_pick(const struct alloc_opts *o, uint32_t used,
			 uint32_t total, uint32_t room, double low,
			 double high);

/* The thresholds' running sums of one pool state (used, total, low,
 * high), kept from job to job: a batch's jobs decided alone all see the
 * pool at batch start.  Zeroed: empty. */
struct alloc_thr_cache {
	bool valid;
	uint32_t used, total, have;
	double low, high;
	double cost[65];
};

/* alloc_online_pick() with the sums kept in *tc (the same pick). */
size_t alloc_online_pick_cached(const struct alloc_opts *o, uint32_t used,
				uint32_t total, uint32_t room, double low,
				double high, struct alloc_thr_cache *tc);

/*
 * Isolation by harm (harm.c): a disruptive job is isolated when its
 * expected I/O time on the default mapping, volume / base, times (1 + the
 * vulnerable jobs sharing its default forwarders) reaches min_harm.
 * Returns the harm in seconds (0 when base or volume is 0).
 */
double alloc_harm(uint64_t volume, double base, uint32_t vulnerable);

/* The harm of leaving a job on its default mapping, in parts. */
struct alloc_harm {
	double io_seconds; /* its I/O time: V / (N_io B_c), the duration of
			    * its I/O phases (without B_c: V / peak;
			    * without data, V = 0: its run time) */
	double data_s;	   /* V / base: its data I/O on the default mapping */
	double md_s;	   /* io_seconds * mdops / metadata_heavy_rate: its
			    * metadata load in seconds at the heavy rate */
	double need_bps;   /* V / io_seconds: what it needs over its I/O
			    * time (without B_c: base) */
	uint32_t vulnerable;
	double harm; /* max(data_s, md_s) * (1 + vulnerable) */
};

/*
 * alloc_harm() with the metadata load: the harm of a job whose default
 * mapping gives it `base` B/s, beside `vulnerable` vulnerable jobs, under
 * the interference thresholds `in` (NULL: data only).  The data and the
 * metadata load run in the same I/O phases: the longer counts.
 */
struct policy_interference;
void alloc_harm_of(const struct policy_interference *in,
		   const struct alloc_profile *pr, double base,
		   uint32_t vulnerable, struct alloc_harm *h);

#endif
