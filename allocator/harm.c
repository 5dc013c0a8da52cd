/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Isolation by the harm it prevents (DESIGN.md "The decision" step 7): a
 * disruptive job hurts its neighbours for as long as it does I/O, and the
 * more so the more vulnerable jobs share its forwarders.  A short burst
 * (1 GiB at a high peak) harms nobody long enough to be worth private
 * forwarders; a long N-1 write is.
 */
#include "config.h"

#include "allocator/curve.h"

double alloc_harm(uint64_t volume, double base, uint32_t vulnerable)
{
	if (!volume || base <= 0)
		return 0;
	return (double)volume / base * (1.0 + vulnerable);
}
