/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "allocator/decide.h"
#include "bench/batch.h"
#include "bench/report.h"
#include "common/array.h"
#include "common/timeutil.h"

int bench_batch_figure(const char *bench, const struct alloc_ctx *cx,
		       const struct policy *p, const struct alloc_ledger *l,
		       const struct alloc_job *jobs, size_t n, int reps)
{
	struct alloc_decision **out = calloc(n ? n : 1, sizeof(*out));
	double *tb = calloc((size_t)reps, sizeof(*tb));
	double *ts = calloc((size_t)reps, sizeof(*ts));
	fwd_error_t err;
	char fig[64];
	int rv = -1;

	if (!out || !tb || !ts || reps < 1)
		goto out;
	for (int r = 0; r < reps; r++) {
		double t0 = fwd_clock_mono();

		if (alloc_decide_batch(cx, p, l, NULL, jobs, n, 0, out, &err) <
		    0) {
			fprintf(stderr, "%s: batch: %s\n", bench, err.text);
			goto out;
		}
		tb[r] = fwd_clock_mono() - t0;
		for (size_t i = 0; i < n; i++) {
			alloc_decision_destroy(out[i]);
			out[i] = NULL;
		}
		t0 = fwd_clock_mono();
		for (size_t i = 0; i < n; i++) {
			out[i] =
				alloc_decide(cx, p, l, NULL, &jobs[i], 0, &err);
			if (!out[i]) {
				fprintf(stderr, "%s: %s\n", bench, err.text);
				goto out;
			}
		}
		ts[r] = fwd_clock_mono() - t0;
		for (size_t i = 0; i < n; i++) {
			alloc_decision_destroy(out[i]);
			out[i] = NULL;
		}
	}
	qsort(tb, (size_t)reps, sizeof(*tb), fwd_cmp_double);
	qsort(ts, (size_t)reps, sizeof(*ts), fwd_cmp_double);
	printf("  batch of %zu: %.1f us (one at a time: %.1f us)\n", n,
	       tb[reps / 2] * 1e6, ts[reps / 2] * 1e6);
	snprintf(fig, sizeof(fig), "batch decision, %zu jobs, p50", n);
	bench_figure(bench, fig, tb[reps / 2] * 1e6, "us", ts[reps / 2] * 1e6,
		     "same jobs one at a time");
	rv = 0;
out:
	for (size_t i = 0; out && i < n; i++)
		alloc_decision_destroy(out[i]);
	free(out);
	free(tb);
	free(ts);
	return rv;
}
