/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Isolation by the harm it prevents (DESIGN.md "The decision" steps 5 and
 * 7): a disruptive job hurts its neighbours for as long as it does I/O,
 * and the more so the more vulnerable jobs share its forwarders.  A short
 * burst (1 GiB at a high peak) harms nobody long enough to be worth
 * private forwarders; a long N-1 write is.  The same reading serves jobs
 * with a curve and without one.
 */
#include "config.h"

#include <math.h>

#include "allocator/curve.h"
#include "policies/policy.h"

double alloc_harm(uint64_t volume, double base, uint32_t vulnerable)
{
	if (!volume || base <= 0)
		return 0;
	return (double)volume / base * (1.0 + vulnerable);
}

/*
 * The profile holds no I/O time, but it holds what gives it: B_c is the
 * bandwidth of the job's I/O phases divided by its I/O nodes
 * (profiler/summary.h), so N_io B_c is the rate of its I/O phases and
 * V / (N_io B_c) their duration.  Without B_c the peak bounds it from
 * below (the I/O cannot last less than V / peak).  A job that moves no
 * data but loads the metadata servers does so for its run: its run time
 * is its I/O time (unknown: no harm is known either).
 */
static double phase_rate(const struct alloc_profile *pr)
{
	double r = (double)pr->io_nodes * pr->node_bandwidth_bps;

	return r > 0 ? r : pr->peak_bandwidth_bps;
}

void alloc_harm_of(const struct policy_interference *in,
		   const struct alloc_profile *pr, double base,
		   uint32_t vulnerable, struct alloc_harm *h)
{
	double rate = phase_rate(pr), v = (double)pr->io_volume_bytes;

	*h = (struct alloc_harm){0};
	h->vulnerable = vulnerable;
	if (!pr->io_volume_bytes) {
		/* no data: its run time, when its metadata load makes it
		 * count (unknown: 0) */
		if (in && in->metadata_heavy_rate > 0 && pr->mdops > 0 &&
		    pr->runtime > 0)
			h->io_seconds = pr->runtime;
	} else {
		if (base > 0)
			h->data_s = v / base;
		h->io_seconds = rate > 0 ? v / rate : h->data_s;
		/* what it needs over its I/O time: the volume over that
		 * time, at most what its phases ran at; without B_c, what
		 * the default mapping gives it (never the peak alone) */
		if (pr->io_nodes && pr->node_bandwidth_bps > 0)
			h->need_bps = v / h->io_seconds;
		else
			h->need_bps = base > 0 ? base : 0;
	}
	/* the metadata load: its ops over the I/O time, in seconds at the
	 * rate that makes a job metadata-heavy */
	if (in && in->metadata_heavy_rate > 0 && pr->mdops > 0)
		h->md_s = h->io_seconds * pr->mdops / in->metadata_heavy_rate;
	h->harm = fmax(h->data_s, h->md_s) * (1.0 + vulnerable);
}
