/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_ARRAY_H
#define FWD_COMMON_ARRAY_H

/*
 * Growing arrays: the one place that doubles a capacity and checks the
 * size for overflow; and the one qsort() comparator of doubles.
 */

#include <stddef.h>

/*
 * Make room for at least `need` elements of `size` bytes in the array
 * *(void **)arrp of capacity *cap, doubling from `first` (or to `need`
 * when that is more).  0, or -1 with errno ENOMEM and the array unchanged.
 */
int fwd_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first);

/* fwd_grow() for an array variable `a` and its capacity variable `cap`. */
#define FWD_GROW(a, cap, need, first) \
	fwd_grow(&(a), &(cap), (need), sizeof(*(a)), (first))

/* qsort() comparator: doubles in ascending order (NaN compares equal). */
int fwd_cmp_double(const void *a, const void *b);

#endif
