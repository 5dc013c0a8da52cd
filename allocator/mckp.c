/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arbitration among jobs for the idle pool (DESIGN.md "The decision" step
 * 7): the exact multiple-choice knapsack for jobs starting together, the
 * online threshold for a job starting alone.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "allocator/curve.h"

double alloc_mckp(const struct alloc_option *const *opt, const size_t *n,
		  size_t n_items, uint32_t cap, size_t *pick)
{
	size_t w;
	double *dp = NULL, *nd = NULL;
	uint16_t *choice = NULL;
	double best = -1;
	uint64_t most = 0;
	uint32_t c;

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
	dp = malloc(w * sizeof(*dp));
	nd = malloc(w * sizeof(*nd));
	choice = malloc((n_items ? n_items : 1) * w * sizeof(*choice));
	if (!dp || !nd || !choice) {
		errno = ENOMEM;
		goto out;
	}
	/* dp[c]: the best value of the items so far taking at most c */
	for (c = 0; c <= cap; c++)
		dp[c] = 0;
	for (size_t i = 0; i < n_items; i++) {
		const struct alloc_option *o = opt[i];

		for (c = 0; c <= cap; c++) {
			double b = dp[c] + o[0].value;
			uint16_t bx = 0;

			for (size_t x = 1; x < n[i] && x < UINT16_MAX; x++) {
				double v;

				if (o[x].take > c)
					continue;
				v = dp[c - o[x].take] + o[x].value;
				/* strictly better only: fewer forwarders and
				 * lower indexes win ties */
				if (v > b + 1e-9 * fabs(b)) {
					b = v;
					bx = (uint16_t)x;
				}
			}
			nd[c] = b;
			choice[i * w + c] = bx;
		}
		double *tmp = dp;

		dp = nd;
		nd = tmp;
	}
	best = dp[cap];
	/* the fewest forwarders reaching the best value */
	c = 0;
	while (c < cap && dp[c] < best - 1e-9 * fabs(best))
		c++;
	for (size_t i = n_items; i-- > 0;) {
		pick[i] = choice[i * w + c];
		c -= opt[i][pick[i]].take;
	}
out:
	free(dp);
	free(nd);
	free(choice);
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
	double best = o->o[0].value;
	size_t pick = 0;

	for (size_t x = 1; x < o->n; x++) {
		double cost = 0, v;

		if (o->o[x].take > room)
			continue;
		for (uint32_t i = 0; i < o->o[x].take; i++)
			cost += alloc_threshold(
				total ? (double)(used + i) / total : 1, low,
				high);
		v = o->o[x].value - cost;
		if (v > best + 1e-9 * fabs(best)) {
			best = v;
			pick = x;
		}
	}
	return pick;
}
