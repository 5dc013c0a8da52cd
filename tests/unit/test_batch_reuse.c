/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a batch reuses from one decision to the next must not change a
 * decision.  alloc_decide_batch() keeps the idle pool across its jobs
 * (each grant taken out of it, the pool's groups kept for the placement);
 * alloc_decide_batch_ref() reads every job's pool from the ledger and
 * places it forwarder by forwarder, ranks by insertion sort and sums the
 * knapsack's group loads anew.  Over a few hundred random batches (random
 * policies, ledgers, health, jobs with and without curves, every request;
 * every other batch one the knapsack arbitrates), both must give the same
 * decisions, field by field.  And a
 * reason is written without printf when its format allows: the same bytes
 * as vsnprintf, truncation included.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "policies/policy.h"
#include "tests/unit/xorshift.h"
#include "topology/topology.h"

/* ---- reasons ---------------------------------------------------------- */

static void ref_text(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* vsnprintf, what alloc_reason() must write */
static void ref_text(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* alloc_reason() against snprintf into the same 512 bytes; `want`
 * (when not NULL) what both must read. */
#define EXPECT_REASON(want, ...)                                         \
	do {                                                             \
		struct alloc_decision *d_ = calloc(1, sizeof(*d_));      \
		char ref_[512];                                          \
                                                                         \
		assert_non_null(d_);                                     \
		ref_text(ref_, sizeof(ref_), __VA_ARGS__);               \
		if ((want) != NULL)                                      \
			assert_string_equal(ref_, (const char *)(want)); \
		assert_int_equal(alloc_reason(d_, __VA_ARGS__), 0);      \
		assert_int_equal(d_->n_reasons, 1);                      \
		assert_string_equal(d_->reasons[0], ref_);               \
		alloc_decision_destroy(d_);                              \
	} while (0)

static void test_reason_text(void **state)
{
	char big[700];

	(void)state;
	EXPECT_REASON("curve: 1GB/s, N_f = 3, 12 options",
		      "curve: %s, N_f = %u, %zu options", "1GB/s", 3u,
		      (size_t)12);
	EXPECT_REASON("100% of 0 and 18446744073709551615 (x)",
		      "100%% of %u and %zu (%s)", 0u, (size_t)SIZE_MAX, "x");
	EXPECT_REASON("4294967295 x 7", "%u %s %zu", (unsigned)UINT32_MAX, "x",
		      (size_t)7);
	EXPECT_REASON("", "%s", "");
	EXPECT_REASON("plain", "plain");
	EXPECT_REASON("%", "%%");
	/* other conversions go through vsnprintf */
	EXPECT_REASON("x 5 0000000005", "%s %u %010zu", "x", 5u, (size_t)5);
	EXPECT_REASON("  x|5|0.5", "%3s|%u|%.1f", "x", 5u, 0.5);
	EXPECT_REASON(NULL, "%s %.0u", "", 0u);
	/* truncated at 511 bytes, as vsnprintf does */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	EXPECT_REASON(NULL, "%s %u %zu", big, 1u, (size_t)2);
	EXPECT_REASON(NULL, "%u %zu %s", 1u, (size_t)2, big);
	big[505] = '\0';
	EXPECT_REASON(NULL, "%s%u%zu", big, 12345u, (size_t)678);
	EXPECT_REASON(NULL, "%s %%", big);
	big[509] = '\0';
	EXPECT_REASON(NULL, "%s%%%%", big);
}

/* Many reasons: the first ones without an allocation for their list,
 * then a list of their own, every text where it was put. */
static void test_reason_list(void **state)
{
	struct alloc_decision *d = calloc(1, sizeof(*d));
	char want[32];

	(void)state;
	assert_non_null(d);
	for (unsigned i = 0; i < 37; i++)
		assert_int_equal(alloc_reason(d, "reason %u", i), 0);
	assert_int_equal(d->n_reasons, 37);
	for (unsigned i = 0; i < 37; i++) {
		snprintf(want, sizeof(want), "reason %u", i);
		assert_string_equal(d->reasons[i], want);
	}
	alloc_decision_destroy(d);
}

/* ---- random batches --------------------------------------------------- */

/* 8 service forwarders (64 nodes each) and 24 backups over 5 groups,
 * names not in index order; 2 OSTs. */
static struct topology *make_topo(void)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[32], group[16];

	assert_non_null(t);
	for (int i = 0; i < 32; i++) {
		bool svc = i < 8;
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 2.5e9,
			.group = group,
			.role = svc ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};

		snprintf(name, sizeof(name), "%s%02d", svc ? "s" : "b",
			 svc ? i : (i * 7) % 24);
		snprintf(group, sizeof(group), "g%d",
			 svc ? i / 2 : (i * 3) % 5);
		assert_int_equal(topo_add_forwarder(t, &f, &err), 0);
	}
	for (int i = 0; i < 2; i++) {
		struct topo_ost o = {.name = name, .bandwidth_bps = 1e9};

		snprintf(name, sizeof(name), "ost%d", i);
		assert_int_equal(topo_add_ost(t, &o, &err), 0);
	}
	assert_int_equal(topo_add_compute_nodes(t, "c[1-512]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 64, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	return t;
}

#define MAXJ 24

struct bjob {
	struct alloc_job job;
	struct alloc_profile pr;
	struct alloc_bw_point bw[4];
	char id[16], nodes[32];
	uint32_t *ids;
};

/* A random job; `knap`: one the knapsack arbitrates (a curve measured
 * at 1, 2, 4 and 8 forwarders, auto, up to 64 nodes). */
static void random_job(const struct topology *t, struct bjob *b, size_t i,
		       const char *prefix, bool knap)
{
	static const enum fwd_request req[] = {
		FWD_REQ_AUTO,	 FWD_REQ_AUTO, FWD_REQ_AUTO,   FWD_REQ_SCALE,
		FWD_REQ_ISOLATE, FWD_REQ_NONE, FWD_REQ_SHADOW, FWD_REQ_OFF,
	};
	uint32_t n = 1 + rnd(rnd(4) || knap ? 64 : 300),
		 first = 1 + rnd(512 - n);
	fwd_error_t err;
	double v = (0.05 + rnd(200) / 100.0) * 1e9;
	size_t n_bw = knap ? 4 : rnd(3) ? 1 + rnd(4) : 0;

	memset(b, 0, sizeof(*b));
	snprintf(b->id, sizeof(b->id), "%s%zu", prefix, i);
	snprintf(b->nodes, sizeof(b->nodes), "c[%u-%u]", first, first + n - 1);
	assert_int_equal(
		alloc_job_nodes(t, b->nodes, &b->ids, &b->job.n_nodes, &err),
		0);
	for (size_t k = 0; k < n_bw; k++) {
		b->bw[k] =
			(struct alloc_bw_point){1u << (rnd(2) ? k : k + 1), v};
		v *= 0.7 + rnd(150) / 100.0;
	}
	/* sorted by k, distinct */
	for (size_t k = 1; k < n_bw; k++)
		if (b->bw[k].k <= b->bw[k - 1].k)
			b->bw[k].k = b->bw[k - 1].k + 1;
	b->pr = (struct alloc_profile){
		.io_volume_bytes = (uint64_t)(1 + rnd(4000)) << (20 + rnd(12)),
		.io_nodes = 1 + rnd(n),
		.node_bandwidth_bps = (1 + rnd(100)) * 1e7,
		.peak_bandwidth_bps = (1 + rnd(400)) * 1e8,
		.iops = rnd(3) ? 0 : rnd(20000),
		.mdops = rnd(3) ? 0 : rnd(50000),
		.io_mode = rnd(2) ? FWD_IO_N_N : FWD_IO_N_1,
		.runs = 1 + rnd(5),
		.direct_bps = rnd(3) ? 0 : (1 + rnd(40)) * 1e8,
		.bw = n_bw ? b->bw : NULL,
		.n_bw = n_bw,
	};
	b->job = (struct alloc_job){
		.job_id = b->id,
		.user = rnd(8) ? "u" : "bob",
		.account = "a",
		.name = "n",
		.partition = "p",
		.nodes = b->nodes,
		.node_ids = b->ids,
		.n_nodes = b->job.n_nodes,
		.request = knap ? FWD_REQ_AUTO
				: req[rnd(sizeof(req) / sizeof(req[0]))],
		.profile = rnd(10) || knap ? &b->pr : NULL,
	};
}

/* A random policy; `knap`: the knapsack's (contention by gain, curves,
 * scaling, no minimum gain, every job considered). */
static void random_policy(struct policy *p, bool knap)
{
	p->decision.contention =
		rnd(4) ? POLICY_CONTENTION_GAIN : POLICY_CONTENTION_FCFS;
	p->decision.caps.reserve = rnd(5);
	p->decision.caps.max_pool_share = 0.25 + rnd(4) * 0.25;
	p->decision.caps.max_forwarders_per_job = 2 + rnd(16);
	p->decision.interference.enabled = rnd(4) != 0;
	p->decision.curve.enabled = rnd(5) != 0;
	p->decision.curve.direct = rnd(3) == 0;
	p->decision.scale.enabled = rnd(6) != 0;
	p->decision.avoid_anomalies = rnd(4) != 0;
	p->learn.enabled = rnd(2) == 0;
	if (rnd(2)) {
		p->decision.curve.min_gain = 0;
		p->decision.curve.min_gain_share = 0;
	}
	p->access.mode = rnd(3) ? POLICY_MODE_OPT_OUT : POLICY_MODE_OPT_IN;
	if (knap) {
		p->decision.contention = POLICY_CONTENTION_GAIN;
		p->decision.curve.enabled = true;
		p->decision.scale.enabled = true;
		p->decision.curve.min_gain = 0;
		p->decision.curve.min_gain_share = 0;
		p->access.mode = POLICY_MODE_OPT_OUT;
	}
}

/* The same decision, field by field (and as JSON, which has them all). */
static void same_decision(const struct alloc_decision *a,
			  const struct alloc_decision *b, size_t set, size_t i)
{
	char *ja, *jb;

	if (a->action != b->action || a->n_forwarders != b->n_forwarders ||
	    a->n_blocks != b->n_blocks || a->n_reasons != b->n_reasons ||
	    a->gain_bps != b->gain_bps || a->n_f != b->n_f || a->s != b->s)
		fail_msg("set %zu job %zu: %s vs %s, %zu vs %zu forwarders",
			 set, i, fwd_action_name(a->action),
			 fwd_action_name(b->action), a->n_forwarders,
			 b->n_forwarders);
	for (size_t k = 0; k < a->n_forwarders; k++)
		if (a->forwarders[k] != b->forwarders[k] ||
		    a->private_fwd[k] != b->private_fwd[k])
			fail_msg("set %zu job %zu: forwarder %zu differs", set,
				 i, k);
	for (size_t k = 0; k < a->n_blocks; k++)
		if (a->blocks[k].first != b->blocks[k].first ||
		    a->blocks[k].count != b->blocks[k].count ||
		    a->blocks[k].forwarder != b->blocks[k].forwarder)
			fail_msg("set %zu job %zu: block %zu differs", set, i,
				 k);
	for (size_t k = 0; k < a->n_reasons; k++)
		if (strcmp(a->reasons[k], b->reasons[k]))
			fail_msg("set %zu job %zu: reason %zu: \"%s\" vs "
				 "\"%s\"",
				 set, i, k, a->reasons[k], b->reasons[k]);
	ja = alloc_decision_to_json(a, 0);
	jb = alloc_decision_to_json(b, 0);
	assert_non_null(ja);
	assert_non_null(jb);
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
}

static void test_batch_same_as_reference(void **state)
{
	struct topology *t = make_topo();
	struct alloc_ctx *cx;
	enum fwd_health fh[32], oh[2];
	struct alloc_health health = {fh, oh};
	fwd_error_t err;
	size_t granted = 0, decided = 0, ok = 0;

	(void)state;
	cx = alloc_ctx_create(t, &err);
	assert_non_null(cx);
	for (size_t set = 0; set < 400; set++) {
		struct policy *p = policy_defaults();
		struct alloc_ledger *l = NULL;
		struct bjob held[6], *b = calloc(MAXJ, sizeof(*b));
		struct alloc_job jobs[MAXJ];
		struct alloc_decision *out[MAXJ], *ref[MAXJ];
		size_t n = 1 + rnd(MAXJ);
		bool with_health = rnd(3) == 0, knap = set % 2;
		int ra, rb;

		assert_non_null(p);
		assert_non_null(b);
		random_policy(p, knap);
		for (size_t f = 0; f < 32; f++)
			fh[f] = !with_health || rnd(6) ? FWD_HEALTH_OK
				: rnd(2)	       ? FWD_HEALTH_SUSPECT
						       : FWD_HEALTH_EXCLUDED;
		oh[0] = FWD_HEALTH_OK;
		oh[1] = with_health && rnd(2) ? FWD_HEALTH_EXCLUDED
					      : FWD_HEALTH_OK;
		/* a ledger with running jobs, some released at random
		 * (and tied) times */
		if (rnd(3)) {
			size_t nh = rnd(6);

			l = alloc_ledger_create(t);
			assert_non_null(l);
			for (size_t h = 0; h < nh; h++) {
				struct alloc_decision *d;

				random_job(t, &held[h], h, "h", false);
				d = alloc_decide(cx, p, l, NULL, &held[h].job,
						 0, &err);
				assert_non_null(d);
				assert_int_equal(alloc_ledger_acquire(
							 l, d,
							 held[h].job.n_nodes, 0,
							 &err),
						 0);
				alloc_decision_destroy(d);
			}
			for (size_t h = 0; h < nh; h++) {
				if (!rnd(3))
					alloc_ledger_release(l, held[h].id,
							     10 + rnd(3));
				free(held[h].ids);
			}
		}
		for (size_t i = 0; i < n; i++) {
			random_job(t, &b[i], i, "j", knap);
			jobs[i] = b[i].job;
		}
		/* now and then a job of the batch already holds forwarders */
		if (l && rnd(4) == 0)
			jobs[rnd((uint32_t)n)].job_id = "h0";
		ra = alloc_decide_batch(cx, p, l, with_health ? &health : NULL,
					jobs, n, 100, out, &err);
		rb = alloc_decide_batch_ref(cx, p, l,
					    with_health ? &health : NULL, jobs,
					    n, 100, ref, &err);
		assert_int_equal(ra, rb);
		ok += ra == 0;
		for (size_t i = 0; ra == 0 && i < n; i++) {
			same_decision(out[i], ref[i], set, i);
			for (size_t k = 0; k < out[i]->n_forwarders; k++)
				granted += out[i]->private_fwd[k];
			decided++;
			alloc_decision_destroy(out[i]);
			alloc_decision_destroy(ref[i]);
		}
		for (size_t i = 0; i < n; i++)
			free(b[i].ids);
		free(b);
		alloc_ledger_destroy(l);
		policy_destroy(p);
	}
	/* the sets exercised the pool, not only the defaults */
	print_message("%zu of 400 sets decided, %zu jobs, %zu private "
		      "forwarders granted\n",
		      ok, decided, granted);
	assert_true(ok > 350);
	assert_true(decided > 2000);
	assert_true(granted > 1000);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reason_text),
		cmocka_unit_test(test_reason_list),
		cmocka_unit_test(test_batch_same_as_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
