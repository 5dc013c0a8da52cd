/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_POLICIES_CLASSIFY_H
#define FWD_POLICIES_CLASSIFY_H

/*
 * Interference classes (classify.c), read from the policy's
 * decision.interference thresholds: one predicate for the allocator, the
 * simulator and the health report.
 *
 * policy_job_disruptive(): which of the disruptive rules a job with these
 * I/O facts meets, as POLICY_DISRUPT_* bits, 0 when none (so it reads as a
 * predicate): N-1 I/O (`n_to_1`) on more than n1_min_nodes nodes; more
 * than metadata_heavy_rate metadata ops/s in I/O phases; a peak above
 * high_bandwidth B/s when that is not 0.  `why` (may be NULL) receives the
 * first rule met in that order, as the decision's reasons say it ("N-1 I/O
 * on 128 nodes > 64"), or "" when none is.
 *
 * policy_job_vulnerable(): more than vulnerable_iops IOPS.  (Whether a
 * neighbour is disruptive is the caller's to know.)
 */

#include <stdbool.h>
#include <stddef.h>

struct policy_interference;

enum policy_disruption {
	POLICY_DISRUPT_N_TO_1 = 1u << 0,
	POLICY_DISRUPT_METADATA = 1u << 1,
	POLICY_DISRUPT_BANDWIDTH = 1u << 2,
};

unsigned policy_job_disruptive(const struct policy_interference *in,
			       bool n_to_1, size_t n_nodes, double mdops,
			       double peak_bps, char *why, size_t whylen);
bool policy_job_vulnerable(const struct policy_interference *in, double iops);

#endif
