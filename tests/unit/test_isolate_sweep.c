/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision without a curve over a sweep of jobs (DESIGN.md "The
 * decision" step 5): node counts 16 to 8,192 x I/O volume 100 MiB to
 * 2 TiB x peak 1 to 100 GB/s x N-N / N-1 x metadata rate 10 or 1,000
 * ops/s, each job alone on an empty machine, the shipped policy's
 * defaults.  Each row states the action a DFRA reader expects; the test
 * computes the forwarder count from the stated rule itself, and checks
 * that the rule it states gives the row's action too (so a wrong row
 * cannot hide).
 *
 * The machine: c[1-8192] served 512:1 by 16 service forwarders
 * fwd001..fwd016 of 2.5 GB/s (N_f = ceil(nodes / 512)), 48 idle backups;
 * reserve 4 and max_pool_share 0.5 leave 24 to one job, at most
 * max_forwarders_per_job 16.
 *
 * The jobs: every node does I/O; the rate of its I/O phases is a quarter
 * of its busiest second (r = peak / 4, so B_c = r / nodes): the count
 * must follow r, what it needs over its I/O time, never the peak.
 *
 * The rule (policy defaults):
 *   scale      V > 20 GiB, nodes > 32, mdops < 300 and S = ceil(r / B_f)
 *              > N_f: min(S, 16, nodes) forwarders, N_f of them its own
 *              defaults;
 *   isolate    otherwise, when disruptive (N-1 on more than 64 nodes,
 *              mdops > 300 or peak > 5 GB/s) and its harm reaches 10 s:
 *              harm = max(V / min(N_f B_f, r), (V / r) x mdops / 300);
 *              ceil(r / B_f) private forwarders, at least 1, at most 16
 *              and the job's nodes;
 *   default    otherwise (short bursts, quiet jobs).
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/decide.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define MiB (1024.0 * 1024)
#define GiB (1024.0 * 1024 * 1024)
#define BF 2.5e9

enum want { DE, SC, IS };

#define NN FWD_IO_N_N
#define N1 FWD_IO_N_1

struct row {
	uint32_t nodes;
	double volume;
	double peak;
	enum fwd_io_mode mode;
	double mdops;
	enum want want;
};

/* clang-format off */
static const struct row rows[] = {
	{16, 100 * MiB, 1e9, NN, 10, DE},
	{16, 100 * MiB, 1e9, NN, 1000, DE},
	{16, 100 * MiB, 1e9, N1, 10, DE},
	{16, 100 * MiB, 1e9, N1, 1000, DE},
	{16, 100 * MiB, 10e9, NN, 10, DE},
	{16, 100 * MiB, 10e9, NN, 1000, DE},
	{16, 100 * MiB, 10e9, N1, 10, DE},
	{16, 100 * MiB, 10e9, N1, 1000, DE},
	{16, 100 * MiB, 100e9, NN, 10, DE},
	{16, 100 * MiB, 100e9, NN, 1000, DE},
	{16, 100 * MiB, 100e9, N1, 10, DE},
	{16, 100 * MiB, 100e9, N1, 1000, DE},
	{16, 10 * GiB, 1e9, NN, 10, DE},
	{16, 10 * GiB, 1e9, NN, 1000, IS},
	{16, 10 * GiB, 1e9, N1, 10, DE},
	{16, 10 * GiB, 1e9, N1, 1000, IS},
	{16, 10 * GiB, 10e9, NN, 10, DE},
	{16, 10 * GiB, 10e9, NN, 1000, IS},
	{16, 10 * GiB, 10e9, N1, 10, DE},
	{16, 10 * GiB, 10e9, N1, 1000, IS},
	{16, 10 * GiB, 100e9, NN, 10, DE},
	{16, 10 * GiB, 100e9, NN, 1000, DE},
	{16, 10 * GiB, 100e9, N1, 10, DE},
	{16, 10 * GiB, 100e9, N1, 1000, DE},
	{16, 200 * GiB, 1e9, NN, 10, DE},
	{16, 200 * GiB, 1e9, NN, 1000, IS},
	{16, 200 * GiB, 1e9, N1, 10, DE},
	{16, 200 * GiB, 1e9, N1, 1000, IS},
	{16, 200 * GiB, 10e9, NN, 10, IS},
	{16, 200 * GiB, 10e9, NN, 1000, IS},
	{16, 200 * GiB, 10e9, N1, 10, IS},
	{16, 200 * GiB, 10e9, N1, 1000, IS},
	{16, 200 * GiB, 100e9, NN, 10, IS},
	{16, 200 * GiB, 100e9, NN, 1000, IS},
	{16, 200 * GiB, 100e9, N1, 10, IS},
	{16, 200 * GiB, 100e9, N1, 1000, IS},
	{16, 2048 * GiB, 1e9, NN, 10, DE},
	{16, 2048 * GiB, 1e9, NN, 1000, IS},
	{16, 2048 * GiB, 1e9, N1, 10, DE},
	{16, 2048 * GiB, 1e9, N1, 1000, IS},
	{16, 2048 * GiB, 10e9, NN, 10, IS},
	{16, 2048 * GiB, 10e9, NN, 1000, IS},
	{16, 2048 * GiB, 10e9, N1, 10, IS},
	{16, 2048 * GiB, 10e9, N1, 1000, IS},
	{16, 2048 * GiB, 100e9, NN, 10, IS},
	{16, 2048 * GiB, 100e9, NN, 1000, IS},
	{16, 2048 * GiB, 100e9, N1, 10, IS},
	{16, 2048 * GiB, 100e9, N1, 1000, IS},
	{128, 100 * MiB, 1e9, NN, 10, DE},
	{128, 100 * MiB, 1e9, NN, 1000, DE},
	{128, 100 * MiB, 1e9, N1, 10, DE},
	{128, 100 * MiB, 1e9, N1, 1000, DE},
	{128, 100 * MiB, 10e9, NN, 10, DE},
	{128, 100 * MiB, 10e9, NN, 1000, DE},
	{128, 100 * MiB, 10e9, N1, 10, DE},
	{128, 100 * MiB, 10e9, N1, 1000, DE},
	{128, 100 * MiB, 100e9, NN, 10, DE},
	{128, 100 * MiB, 100e9, NN, 1000, DE},
	{128, 100 * MiB, 100e9, N1, 10, DE},
	{128, 100 * MiB, 100e9, N1, 1000, DE},
	{128, 10 * GiB, 1e9, NN, 10, DE},
	{128, 10 * GiB, 1e9, NN, 1000, IS},
	{128, 10 * GiB, 1e9, N1, 10, IS},
	{128, 10 * GiB, 1e9, N1, 1000, IS},
	{128, 10 * GiB, 10e9, NN, 10, DE},
	{128, 10 * GiB, 10e9, NN, 1000, IS},
	{128, 10 * GiB, 10e9, N1, 10, DE},
	{128, 10 * GiB, 10e9, N1, 1000, IS},
	{128, 10 * GiB, 100e9, NN, 10, DE},
	{128, 10 * GiB, 100e9, NN, 1000, DE},
	{128, 10 * GiB, 100e9, N1, 10, DE},
	{128, 10 * GiB, 100e9, N1, 1000, DE},
	{128, 200 * GiB, 1e9, NN, 10, DE},
	{128, 200 * GiB, 1e9, NN, 1000, IS},
	{128, 200 * GiB, 1e9, N1, 10, IS},
	{128, 200 * GiB, 1e9, N1, 1000, IS},
	{128, 200 * GiB, 10e9, NN, 10, IS},
	{128, 200 * GiB, 10e9, NN, 1000, IS},
	{128, 200 * GiB, 10e9, N1, 10, IS},
	{128, 200 * GiB, 10e9, N1, 1000, IS},
	{128, 200 * GiB, 100e9, NN, 10, SC},
	{128, 200 * GiB, 100e9, NN, 1000, IS},
	{128, 200 * GiB, 100e9, N1, 10, SC},
	{128, 200 * GiB, 100e9, N1, 1000, IS},
	{128, 2048 * GiB, 1e9, NN, 10, DE},
	{128, 2048 * GiB, 1e9, NN, 1000, IS},
	{128, 2048 * GiB, 1e9, N1, 10, IS},
	{128, 2048 * GiB, 1e9, N1, 1000, IS},
	{128, 2048 * GiB, 10e9, NN, 10, IS},
	{128, 2048 * GiB, 10e9, NN, 1000, IS},
	{128, 2048 * GiB, 10e9, N1, 10, IS},
	{128, 2048 * GiB, 10e9, N1, 1000, IS},
	{128, 2048 * GiB, 100e9, NN, 10, SC},
	{128, 2048 * GiB, 100e9, NN, 1000, IS},
	{128, 2048 * GiB, 100e9, N1, 10, SC},
	{128, 2048 * GiB, 100e9, N1, 1000, IS},
	{1024, 100 * MiB, 1e9, NN, 10, DE},
	{1024, 100 * MiB, 1e9, NN, 1000, DE},
	{1024, 100 * MiB, 1e9, N1, 10, DE},
	{1024, 100 * MiB, 1e9, N1, 1000, DE},
	{1024, 100 * MiB, 10e9, NN, 10, DE},
	{1024, 100 * MiB, 10e9, NN, 1000, DE},
	{1024, 100 * MiB, 10e9, N1, 10, DE},
	{1024, 100 * MiB, 10e9, N1, 1000, DE},
	{1024, 100 * MiB, 100e9, NN, 10, DE},
	{1024, 100 * MiB, 100e9, NN, 1000, DE},
	{1024, 100 * MiB, 100e9, N1, 10, DE},
	{1024, 100 * MiB, 100e9, N1, 1000, DE},
	{1024, 10 * GiB, 1e9, NN, 10, DE},
	{1024, 10 * GiB, 1e9, NN, 1000, IS},
	{1024, 10 * GiB, 1e9, N1, 10, IS},
	{1024, 10 * GiB, 1e9, N1, 1000, IS},
	{1024, 10 * GiB, 10e9, NN, 10, DE},
	{1024, 10 * GiB, 10e9, NN, 1000, IS},
	{1024, 10 * GiB, 10e9, N1, 10, DE},
	{1024, 10 * GiB, 10e9, N1, 1000, IS},
	{1024, 10 * GiB, 100e9, NN, 10, DE},
	{1024, 10 * GiB, 100e9, NN, 1000, DE},
	{1024, 10 * GiB, 100e9, N1, 10, DE},
	{1024, 10 * GiB, 100e9, N1, 1000, DE},
	{1024, 200 * GiB, 1e9, NN, 10, DE},
	{1024, 200 * GiB, 1e9, NN, 1000, IS},
	{1024, 200 * GiB, 1e9, N1, 10, IS},
	{1024, 200 * GiB, 1e9, N1, 1000, IS},
	{1024, 200 * GiB, 10e9, NN, 10, IS},
	{1024, 200 * GiB, 10e9, NN, 1000, IS},
	{1024, 200 * GiB, 10e9, N1, 10, IS},
	{1024, 200 * GiB, 10e9, N1, 1000, IS},
	{1024, 200 * GiB, 100e9, NN, 10, SC},
	{1024, 200 * GiB, 100e9, NN, 1000, IS},
	{1024, 200 * GiB, 100e9, N1, 10, SC},
	{1024, 200 * GiB, 100e9, N1, 1000, IS},
	{1024, 2048 * GiB, 1e9, NN, 10, DE},
	{1024, 2048 * GiB, 1e9, NN, 1000, IS},
	{1024, 2048 * GiB, 1e9, N1, 10, IS},
	{1024, 2048 * GiB, 1e9, N1, 1000, IS},
	{1024, 2048 * GiB, 10e9, NN, 10, IS},
	{1024, 2048 * GiB, 10e9, NN, 1000, IS},
	{1024, 2048 * GiB, 10e9, N1, 10, IS},
	{1024, 2048 * GiB, 10e9, N1, 1000, IS},
	{1024, 2048 * GiB, 100e9, NN, 10, SC},
	{1024, 2048 * GiB, 100e9, NN, 1000, IS},
	{1024, 2048 * GiB, 100e9, N1, 10, SC},
	{1024, 2048 * GiB, 100e9, N1, 1000, IS},
	{8192, 100 * MiB, 1e9, NN, 10, DE},
	{8192, 100 * MiB, 1e9, NN, 1000, DE},
	{8192, 100 * MiB, 1e9, N1, 10, DE},
	{8192, 100 * MiB, 1e9, N1, 1000, DE},
	{8192, 100 * MiB, 10e9, NN, 10, DE},
	{8192, 100 * MiB, 10e9, NN, 1000, DE},
	{8192, 100 * MiB, 10e9, N1, 10, DE},
	{8192, 100 * MiB, 10e9, N1, 1000, DE},
	{8192, 100 * MiB, 100e9, NN, 10, DE},
	{8192, 100 * MiB, 100e9, NN, 1000, DE},
	{8192, 100 * MiB, 100e9, N1, 10, DE},
	{8192, 100 * MiB, 100e9, N1, 1000, DE},
	{8192, 10 * GiB, 1e9, NN, 10, DE},
	{8192, 10 * GiB, 1e9, NN, 1000, IS},
	{8192, 10 * GiB, 1e9, N1, 10, IS},
	{8192, 10 * GiB, 1e9, N1, 1000, IS},
	{8192, 10 * GiB, 10e9, NN, 10, DE},
	{8192, 10 * GiB, 10e9, NN, 1000, IS},
	{8192, 10 * GiB, 10e9, N1, 10, DE},
	{8192, 10 * GiB, 10e9, N1, 1000, IS},
	{8192, 10 * GiB, 100e9, NN, 10, DE},
	{8192, 10 * GiB, 100e9, NN, 1000, DE},
	{8192, 10 * GiB, 100e9, N1, 10, DE},
	{8192, 10 * GiB, 100e9, N1, 1000, DE},
	{8192, 200 * GiB, 1e9, NN, 10, DE},
	{8192, 200 * GiB, 1e9, NN, 1000, IS},
	{8192, 200 * GiB, 1e9, N1, 10, IS},
	{8192, 200 * GiB, 1e9, N1, 1000, IS},
	{8192, 200 * GiB, 10e9, NN, 10, IS},
	{8192, 200 * GiB, 10e9, NN, 1000, IS},
	{8192, 200 * GiB, 10e9, N1, 10, IS},
	{8192, 200 * GiB, 10e9, N1, 1000, IS},
	{8192, 200 * GiB, 100e9, NN, 10, DE},
	{8192, 200 * GiB, 100e9, NN, 1000, IS},
	{8192, 200 * GiB, 100e9, N1, 10, DE},
	{8192, 200 * GiB, 100e9, N1, 1000, IS},
	{8192, 2048 * GiB, 1e9, NN, 10, DE},
	{8192, 2048 * GiB, 1e9, NN, 1000, IS},
	{8192, 2048 * GiB, 1e9, N1, 10, IS},
	{8192, 2048 * GiB, 1e9, N1, 1000, IS},
	{8192, 2048 * GiB, 10e9, NN, 10, IS},
	{8192, 2048 * GiB, 10e9, NN, 1000, IS},
	{8192, 2048 * GiB, 10e9, N1, 10, IS},
	{8192, 2048 * GiB, 10e9, N1, 1000, IS},
	{8192, 2048 * GiB, 100e9, NN, 10, IS},
	{8192, 2048 * GiB, 100e9, NN, 1000, IS},
	{8192, 2048 * GiB, 100e9, N1, 10, IS},
	{8192, 2048 * GiB, 100e9, N1, 1000, IS},
};
/* clang-format on */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The action and forwarder count the rule above gives. */
static enum want rule(const struct row *r, uint32_t *count)
{
	uint32_t nf = (r->nodes + 511) / 512;
	double rate = r->peak / 4, base = fmin(nf * BF, rate);
	double s = ceil(rate / BF), harm;
	bool disruptive;

	if (r->volume > 20 * GiB && r->nodes > 32 && r->mdops < 300 && s > nf) {
		*count = min_u32(min_u32((uint32_t)s, 16), r->nodes);
		return SC;
	}
	disruptive = (r->mode == FWD_IO_N_1 && r->nodes > 64) ||
		     r->mdops > 300 || r->peak > 5e9;
	harm = fmax(r->volume / base, r->volume / rate * r->mdops / 300);
	if (disruptive && harm >= 10) {
		*count =
			min_u32(min_u32(s < 1 ? 1 : (uint32_t)s, 16), r->nodes);
		return IS;
	}
	*count = nf;
	return DE;
}

struct fix {
	struct topology *t;
	struct alloc_ctx *cx;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	fwd_error_t err;
	char name[32];

	assert_non_null(f);
	f->t = topo_create();
	assert_non_null(f->t);
	for (int i = 1; i <= 64; i++) {
		struct topo_forwarder fw = {
			.name = name,
			.bandwidth_bps = BF,
			.group = (char *)"g0",
			.role = i <= 16 ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};

		snprintf(name, sizeof(name), "fwd%03d", i);
		assert_int_equal(topo_add_forwarder(f->t, &fw, &err), 0);
	}
	assert_int_equal(topo_add_compute_nodes(f->t, "c[1-8192]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(f->t, 512, &err), 0);
	assert_int_equal(topo_finalize(f->t, &err), 0);
	f->cx = alloc_ctx_create(f->t, &err);
	assert_non_null(f->cx);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	alloc_ctx_destroy(f->cx);
	topo_destroy(f->t);
	free(f);
	return 0;
}

static const char *want_name(enum want w)
{
	return w == SC ? "scale" : w == IS ? "isolate" : "default";
}

static void dump(const struct alloc_decision *d)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		print_message("#   reason: %s\n", d->reasons[i]);
}

static void test_sweep(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	size_t counts[3] = {0, 0, 0};

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct alloc_profile pr = {
			.io_volume_bytes = (uint64_t)r->volume,
			.io_nodes = r->nodes,
			.node_bandwidth_bps = r->peak / 4 / r->nodes,
			.peak_bandwidth_bps = r->peak,
			.iops = 10,
			.mdops = r->mdops,
			.io_mode = r->mode,
			.runs = 3,
		};
		struct alloc_job job = {.job_id = "1",
					.user = "u",
					.request = FWD_REQ_AUTO,
					.profile = &pr,
					.no_render = true};
		enum fwd_action act = FWD_ACT_DEFAULT;
		struct alloc_decision *d;
		char nodes[32];
		uint32_t *ids, count, npriv = 0;
		enum want w = rule(r, &count);
		fwd_error_t err;

		if (w != r->want)
			fail_msg("row %zu: the table says %s, its rule %s", i,
				 want_name(r->want), want_name(w));
		counts[w]++;
		snprintf(nodes, sizeof(nodes), "c[1-%u]", r->nodes);
		job.nodes = nodes;
		assert_int_equal(alloc_ctx_job_nodes(f->cx, nodes, &ids,
						     &job.n_nodes, &err),
				 0);
		job.node_ids = ids;
		d = alloc_decide(f->cx, p, NULL, NULL, &job, 0, &err);
		if (!d)
			fail_msg("row %zu: %s", i, err.text);
		if (w == SC)
			act = FWD_ACT_SCALE;
		else if (w == IS)
			act = FWD_ACT_ISOLATE;
		for (size_t k = 0; k < d->n_forwarders; k++)
			npriv += d->private_fwd[k];
		if (d->action != act || d->n_forwarders != count ||
		    (w == IS && npriv != count) ||
		    (w == SC && count - npriv != d->n_f) ||
		    (w == DE && npriv)) {
			dump(d);
			fail_msg("row %zu (%u nodes, %.4g GiB, peak %.3g B/s, "
				 "%s, %.0f md ops/s): %s on %zu forwarders "
				 "(%u private), want %s on %u",
				 i, r->nodes, r->volume / GiB, r->peak,
				 fwd_io_mode_name(r->mode), r->mdops,
				 fwd_action_name(d->action), d->n_forwarders,
				 npriv, want_name(w), count);
		}
		/* never the peak alone: the count follows r = peak / 4 */
		if (w == IS && r->peak > 4 * BF && count < 16)
			assert_true(count < (uint32_t)ceil(r->peak / BF));
		alloc_decision_destroy(d);
		free(ids);
	}
	/* every outcome is exercised */
	assert_true(counts[DE] > 0 && counts[SC] > 0 && counts[IS] > 0);
	policy_destroy(p);
}

/*
 * A job that moves no data but loads the metadata servers: its harm is its
 * metadata load over its run (run time x mdops / 300 ops/s, the heavy
 * rate), isolated on its N_f = 1 default count when that reaches
 * min_harm (10 s); a short run, an unknown run time or a light load stay
 * on the defaults.
 */
static void test_metadata_only(void **state)
{
	static const struct {
		double mdops, runtime;
		enum want want;
	} cases[] = {
		{1500, 3600, IS}, /* 18,000 s of heavy-rate load */
		{1500, 1, DE},	  /* 5 s: below min_harm */
		{1500, 0, DE},	  /* run time unknown: no harm known */
		{301, 10, IS},	  /* 10.03 s: just reaches it */
		{10, 3600, DE},	  /* not metadata-heavy */
	};
	struct fix *f = *state;
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct alloc_profile pr = {
			.io_nodes = 64,
			.iops = 10,
			.mdops = cases[i].mdops,
			.io_mode = FWD_IO_N_N,
			.runs = 3,
			.runtime = cases[i].runtime,
		};
		struct alloc_job job = {.job_id = "1",
					.user = "u",
					.nodes = "c[1-64]",
					.request = FWD_REQ_AUTO,
					.profile = &pr,
					.no_render = true};
		struct alloc_decision *d;
		uint32_t *ids;
		fwd_error_t err;
		bool md = false;

		assert_int_equal(alloc_ctx_job_nodes(f->cx, job.nodes, &ids,
						     &job.n_nodes, &err),
				 0);
		job.node_ids = ids;
		d = alloc_decide(f->cx, p, NULL, NULL, &job, 0, &err);
		if (!d)
			fail_msg("case %zu: %s", i, err.text);
		for (size_t k = 0; k < d->n_reasons; k++)
			md |= strstr(d->reasons[k], "metadata:") != NULL;
		if (d->action != (cases[i].want == IS ? FWD_ACT_ISOLATE
						      : FWD_ACT_DEFAULT) ||
		    d->n_forwarders != 1 ||
		    (cases[i].want == IS && (!d->private_fwd[0] || !md))) {
			dump(d);
			fail_msg("case %zu (%.0f ops/s over %.0f s): %s on "
				 "%zu forwarders, want %s",
				 i, cases[i].mdops, cases[i].runtime,
				 fwd_action_name(d->action), d->n_forwarders,
				 want_name(cases[i].want));
		}
		alloc_decision_destroy(d);
		free(ids);
	}
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_only, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("isolate_sweep", tests, NULL, NULL);
}
