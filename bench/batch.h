/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_BENCH_BATCH_H
#define FWD_BENCH_BATCH_H

/*
 * The time of one batch decision (alloc_decide_batch()) of n jobs, next
 * to its reference measured in the same run: the same n jobs decided one
 * at a time (alloc_decide() each, against the same ledger).  Runs both
 * `reps` times, alternating, and reports the medians with bench_figure()
 * as "batch decision, <n> jobs, p50".  Shared by bench_decide and
 * bench_forge.
 */

#include <stddef.h>

struct alloc_ctx;
struct alloc_job;
struct alloc_ledger;
struct policy;

/* 0, or -1 with the error on stderr.  l may be NULL (an empty ledger). */
int bench_batch_figure(const char *bench, const struct alloc_ctx *cx,
		       const struct policy *p, const struct alloc_ledger *l,
		       const struct alloc_job *jobs, size_t n, int reps);

#endif
