/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DBSCAN with an explicit work queue (no recursion, so a long chain of
 * core points cannot overflow the stack).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "monitor/dbscan.h"

#define UNVISITED (-2)

static bool near(const struct dbscan_point *a, const struct dbscan_point *b,
		 double eps)
{
	double dx = a->x - b->x, dy = a->y - b->y;

	return dx * dx + dy * dy <= eps * eps;
}

static size_t neighbours(const struct dbscan_point *pts, size_t n, size_t i,
			 double eps)
{
	size_t count = 0;

	for (size_t j = 0; j < n; j++)
		if (near(&pts[i], &pts[j], eps))
			count++;
	return count;
}

int dbscan_run(const struct dbscan_point *pts, size_t n, double eps,
	       unsigned min_points, int *labels, fwd_error_t *err)
{
	size_t *queue = NULL;
	int clusters = 0;
	int rv = -1;

	if (!(eps > 0) || !isfinite(eps)) {
		errno = EINVAL;
		return errprintf(err,
				 "dbscan: eps %g: must be a positive "
				 "finite number",
				 eps);
	}
	if (min_points == 0) {
		errno = EINVAL;
		return errprintf(err, "dbscan: min_points 0: must be at "
				      "least 1");
	}
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(pts[i].x) || !isfinite(pts[i].y)) {
			errno = EINVAL;
			return errprintf(err,
					 "dbscan: point %zu (%g, %g): "
					 "coordinates must be finite",
					 i, pts[i].x, pts[i].y);
		}
		labels[i] = UNVISITED;
	}
	if (n == 0)
		return 0;
	queue = malloc(n * sizeof(*queue));
	if (!queue) {
		errprintf(err, "dbscan: out of memory for %zu points", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t head = 0, tail = 0;

		if (labels[i] != UNVISITED)
			continue;
		if (neighbours(pts, n, i, eps) < min_points) {
			labels[i] = DBSCAN_NOISE;
			continue;
		}
		/* i is a core point: grow a new cluster from it. */
		labels[i] = clusters;
		queue[tail++] = i;
		while (head < tail) {
			size_t p = queue[head++];

			if (neighbours(pts, n, p, eps) < min_points)
				continue; /* border point: do not expand */
			for (size_t j = 0; j < n; j++) {
				if (!near(&pts[p], &pts[j], eps))
					continue;
				if (labels[j] == DBSCAN_NOISE) {
					labels[j] = clusters; /* border */
				} else if (labels[j] == UNVISITED) {
					labels[j] = clusters;
					queue[tail++] = j;
				}
			}
		}
		clusters++;
	}
	rv = clusters;
out:
	free(queue);
	return rv;
}
