/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_INGEST_ROLLUP_H
#define FWD_MONITOR_INGEST_ROLLUP_H

/*
 * Per-minute rollups kept additively (monitor/ingest_store.c).
 *
 * rollups_15min holds the same columns per quarter hour: the sums, counts
 * and maxima of the minutes of each quarter hour, changed by the same
 * transaction as those minutes (added to with them, recomputed from them
 * when they are recomputed), so a quarter hour's row is always the
 * aggregate of its stored minutes.
 *
 * Every column of rollups_minute is a sum, a count or a maximum of the raw
 * rows of its minute (queue_len_avg is queue_len_sum / queue_len_samples),
 * so the rows of a batch that were all new add their contribution to the
 * stored rollup exactly: sums and counts add, maxima take the greater.
 * The store uses this only for rows the raw insert showed to be new and
 * whose minute no prune has touched (ingest_horizon); anything else is
 * recomputed from the raw rows.
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "monitor/ingest.h"

struct db;
struct rollup_acc;

struct rollup_acc *rollup_acc_create(struct db *db);
void rollup_acc_destroy(struct rollup_acc *a);

/* One new raw row of samples_raw: its contribution to its minute. */
struct rollup_row {
	enum ingest_kind kind;
	const char *name;
	int64_t ts;
	bool has_dt;
	double dt;
	const bool *has;   /* [INFLUX_N_COUNTERS] */
	const uint64_t *v; /* [INFLUX_N_COUNTERS] */
	bool has_queue;
	double queue;
};
/* 0, or -1 with errno ENOMEM and err. */
int rollup_acc_add(struct rollup_acc *a, const struct rollup_row *r,
		   fwd_error_t *err);

/* One new row of samples_hist (an LWFS latency histogram's deltas):
 * rollups_hist_minute holds their sums. */
struct rollup_hist_row {
	enum ingest_kind kind;
	const char *name;
	int64_t ts;
	const char *op, *phase; /* "meta" "exe" ... */
	const uint64_t *b;	/* [BEACON_BUCKETS] */
};
int rollup_acc_add_hist(struct rollup_acc *a, const struct rollup_hist_row *r,
			fwd_error_t *err);

/* Add what was collected to rollups_minute, rollups_15min (the same
 * contributions by quarter hour) and rollups_hist_minute (in key order, so
 * concurrent writers lock rows in the same order) and forget it.  0, or -1
 * with err; the collected rows are forgotten either way. */
int rollup_acc_write(struct rollup_acc *a, fwd_error_t *err);

/* Forget what was collected (the transaction was rolled back). */
void rollup_acc_clear(struct rollup_acc *a);

/* The floor of ts to its minute. */
static inline int64_t rollup_minute(int64_t ts)
{
	return ts - ((ts % 60) + 60) % 60;
}

/* The floor of ts to its quarter hour (rollups_15min). */
#define ROLLUP_QUARTER 900
static inline int64_t rollup_quarter(int64_t ts)
{
	return ts - ((ts % ROLLUP_QUARTER) + ROLLUP_QUARTER) % ROLLUP_QUARTER;
}

#endif
