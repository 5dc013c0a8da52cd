/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The randomised unit tests' generator: a deterministic xorshift, so that
 * a failure reproduces.  rnd(n) is in [0, n).  A test file that wants its
 * own sequence defines XORSHIFT_SEED before including this header.
 */
#ifndef FWD_TESTS_XORSHIFT_H
#define FWD_TESTS_XORSHIFT_H

#include <stdint.h>

#ifndef XORSHIFT_SEED
#define XORSHIFT_SEED 0x9e3779b97f4a7c15ULL
#endif

static uint64_t rng = XORSHIFT_SEED;

static inline uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

#endif
