/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_DBSCAN_H
#define FWD_MONITOR_DBSCAN_H

/*
 * DBSCAN (Ester et al., KDD'96) on points in the plane, as Beacon uses it
 * (Appendix B) to check whether the I/O phases of a new run fall into the
 * clusters formed by the same application's past runs.
 *
 * A point is a core point when at least `min_points` points, itself
 * included, lie within Euclidean distance `eps` (inclusive).  Clusters are
 * the core points connected through such neighbourhoods plus the border
 * points within `eps` of a core point; everything else is noise.  A border
 * point reachable from two clusters joins the one found first, clusters
 * being numbered in the order of their first core point, so the result is
 * deterministic for a given input order.
 *
 * The neighbourhood search is O(n^2); the check runs on the phases of a
 * few dozen past runs, not on the statistics stream.
 */

#include <stddef.h>

#include "common/error.h"

#define DBSCAN_NOISE (-1)

struct dbscan_point {
	double x, y;
};

/*
 * Label every point: labels[i] is the cluster number (0, 1, ...) or
 * DBSCAN_NOISE.  Returns the number of clusters, or -1 with errno EINVAL
 * (eps not a positive finite number, min_points 0, a non-finite
 * coordinate) or ENOMEM, and err naming the offending value.  n == 0 is
 * valid and gives 0 clusters.
 */
int dbscan_run(const struct dbscan_point *pts, size_t n, double eps,
	       unsigned min_points, int *labels, fwd_error_t *err);

#endif
