/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readings of the policy's interference thresholds (DESIGN.md "The
 * decision" step 5): is a job disruptive, is it vulnerable.  The allocator
 * asks them of the job it decides and of its neighbours, the simulator
 * classifies applications with them, and the health report names a
 * forwarder's disruptive jobs with them, so that the three agree.
 */
#include "config.h"

#include <stdio.h>

#include "common/units.h"
#include "policies/classify.h"
#include "policies/policy.h"

unsigned policy_job_disruptive(const struct policy_interference *in,
			       bool n_to_1, size_t n_nodes, double mdops,
			       double peak_bps, char *why, size_t whylen)
{
	unsigned r = 0;
	char a[32], b[32];

	if (n_to_1 && n_nodes > in->n1_min_nodes)
		r |= POLICY_DISRUPT_N_TO_1;
	if (mdops > in->metadata_heavy_rate)
		r |= POLICY_DISRUPT_METADATA;
	if (in->high_bandwidth > 0 && peak_bps > in->high_bandwidth)
		r |= POLICY_DISRUPT_BANDWIDTH;
	if (!why || !whylen)
		return r;
	why[0] = '\0';
	if (r & POLICY_DISRUPT_N_TO_1)
		units_format(why, whylen, "N-1 I/O on %zu node%s > %u", n_nodes,
			     n_nodes == 1 ? "" : "s", in->n1_min_nodes);
	else if (r & POLICY_DISRUPT_METADATA)
		units_format(why, whylen,
			     "metadata-heavy: %.0f ops/s > %.0f ops/s", mdops,
			     in->metadata_heavy_rate);
	else if (r & POLICY_DISRUPT_BANDWIDTH)
		units_format(
			why, whylen, "high bandwidth: peak %s > %s",
			units_short_rate(peak_bps, a, sizeof(a)),
			units_short_rate(in->high_bandwidth, b, sizeof(b)));
	return r;
}

bool policy_job_vulnerable(const struct policy_interference *in, double iops)
{
	return iops > in->vulnerable_iops;
}
