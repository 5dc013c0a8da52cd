/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_WEATHER_H
#define FWD_MONITOR_WEATHER_H

/*
 * What the monitor's tables say about a time range, for the reports
 * (report/): per-component rollups by time bucket, a job's Lustre
 * job_stats as per-snapshot increments, and the health episodes that
 * overlap a range.  Prepared statements; 0 / -1 with errno and err.
 */

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "monitor/jobstats.h"

struct db;

/* One component in one time bucket: the sums of its rollups_minute rows. */
struct weather_cell {
	char kind[4]; /* "fwd", "ost", "mdt" */
	char name[129];
	int64_t t; /* start of the bucket */
	uint64_t samples;
	uint64_t read_bytes, write_bytes, read_ops, write_ops, md_ops;
	double queue_sum; /* sum of queue-length gauges */
	uint64_t queue_n; /* gauges summed (0: no queue length) */
	double read_bps_max, write_bps_max; /* highest sample rate, 0: none */
};

/*
 * The rollups of kind (NULL: every kind) in [from, to), minutes grouped
 * into buckets of `bucket` seconds starting at from (bucket start = from
 * + k * bucket), for the components names[0..n_names) (n_names 0: every
 * component), ordered by kind, name, bucket.  *out malloc'd (free()).
 * The figures are those of the rollups_minute rows; whole quarter hours
 * inside one bucket are read from rollups_15min (their aggregate), so a
 * range in buckets of whole quarter hours from a quarter hour, or in one
 * bucket, reads 15 times fewer rows.  Each component's range is read
 * through the primary key.  (The quarter hour: ROLLUP_QUARTER,
 * monitor/ingest_rollup.h.)
 */
int weather_cells(struct db *db, const char *kind, char *const *names,
		  size_t n_names, int64_t from, int64_t to, int64_t bucket,
		  struct weather_cell **out, size_t *n, fwd_error_t *err);

/*
 * A job's Lustre job_stats in [from, to] as the increments of
 * jobstats_job_walk() (monitor/jobstats.h), classified as there.  They
 * are added into buckets[0..nb) of `bucket` seconds from t0 (a snapshot
 * before t0 into the first, after the last into the last; the caller
 * zeroes them), and into one total per target (*targets, malloc'd, in
 * target order): the increments of a target add up to its totals, and
 * all of them to jobstats_job_sums().
 */
struct weather_jobstats {
	char kind[4]; /* "ost" or "mdt" (totals only) */
	char target[129];
	struct jobstats_sums io;
};
int weather_jobstats(struct db *db, uint64_t job_id, int64_t from, int64_t to,
		     int64_t t0, int64_t bucket, size_t nb,
		     struct weather_jobstats *buckets,
		     struct weather_jobstats **targets, size_t *n_targets,
		     fwd_error_t *err);

/*
 * The health_history periods away from ok (suspect, excluded) that
 * overlap [from, to), of the components names[0..n_names) (0: all),
 * ordered by start.  end_at -1 while open.
 */
struct weather_episode {
	char kind[4];
	char name[129];
	char state[12];
	char source[12];
	int64_t start_at, end_at;
	char reason[256]; /* cut to fit; "" when NULL */
};
int weather_episodes(struct db *db, int64_t from, int64_t to,
		     char *const *names, size_t n_names,
		     struct weather_episode **out, size_t *n, fwd_error_t *err);

#endif
