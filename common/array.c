/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"

int fwd_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t ncap = *cap ? *cap : (first ? first : 1);
	void *arr, *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2) {
			ncap = need;
			break;
		}
		ncap *= 2;
	}
	if (!size || ncap > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(&arr, arrp, sizeof(arr));
	p = realloc(arr, ncap * size);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(arrp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

int fwd_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
