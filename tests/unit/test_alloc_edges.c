/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The allocator's thresholds at equality and its caps, table by table:
 * the gain gate (an option must gain at least max(min_gain, min_gain_share
 * x the default's value)), the direct option's gate, min_harm (isolation
 * when the harm reaches it, with and without a curve), an isolation that
 * wants more forwarders than the job has nodes, and the ledger's bounds.
 *
 * Test machine: 8 service forwarders fwd001..fwd008 of 2.5 GB/s serving
 * c[1-512], 64 nodes each, 16 backups fwd009..fwd024; default policy
 * unless a case says otherwise.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/curve.h"
#include "allocator/decide.h"
#include "allocator/decide_internal.h"
#include "allocator/ledger.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct fix {
	struct topology *t;
	struct alloc_ctx *cx;
};

static struct topology *make_topo(void)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[32];

	assert_non_null(t);
	for (int i = 1; i <= 24; i++) {
		bool svc = i <= 8;
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 2.5e9,
			.group = (char *)"g0",
			.role = svc ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};
		snprintf(name, sizeof(name), "fwd%03d", i);
		assert_int_equal(topo_add_forwarder(t, &f, &err), 0);
	}
	assert_int_equal(topo_add_compute_nodes(t, "c[1-512]", &err), 0);
	assert_int_equal(topo_map_per_forwarder(t, 64, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	return t;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	fwd_error_t err;

	if (!f)
		return -1;
	f->t = make_topo();
	f->cx = alloc_ctx_create(f->t, &err);
	if (!f->cx)
		return -1;
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

static bool has_reason(const struct alloc_decision *d, const char *sub)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		if (strstr(d->reasons[i], sub))
			return true;
	return false;
}

static void dump_reasons(const struct alloc_decision *d)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		print_message("#   reason: %s\n", d->reasons[i]);
}

/* ---- the gain gate ----------------------------------------------------- */

/* min_gain 50 MB/s and min_gain_share 0.5 unless the row says otherwise:
 * the gate is max(min_gain, share x default) and a gain equal to it
 * passes. */
static void test_gain_gate(void **state)
{
	static const struct {
		const char *what;
		double min_gain, share, def, value;
		enum alloc_opt_kind kind;
		bool isolate, want;
	} t[] = {
		{"share bites, gain at the gate", 50e6, 0.5, 1e9, 1.5e9,
		 ALLOC_OPT_PRIVATE, false, true},
		{"share bites, 1 B/s short", 50e6, 0.5, 1e9, 1.5e9 - 1,
		 ALLOC_OPT_PRIVATE, false, false},
		{"min_gain bites, gain at the gate", 50e6, 0.1, 1e8, 1.5e8,
		 ALLOC_OPT_EXTRAS, false, true},
		{"min_gain bites, 1 B/s short", 50e6, 0.1, 1e8, 1.5e8 - 1,
		 ALLOC_OPT_EXTRAS, false, false},
		{"no gate at all: equal value gains", 0, 0, 1e9, 1e9,
		 ALLOC_OPT_PRIVATE, false, true},
		{"isolated, private: no gate", 50e6, 0.5, 1e9, 1e9,
		 ALLOC_OPT_PRIVATE, true, true},
		{"isolated, direct: no gate", 50e6, 0.5, 1e9, 0.5e9,
		 ALLOC_OPT_DIRECT, true, true},
		{"isolated, extras: gated", 50e6, 0.5, 1e9, 1.2e9,
		 ALLOC_OPT_EXTRAS, true, false},
		{"isolated, extras at the gate", 50e6, 0.5, 1e9, 1.5e9,
		 ALLOC_OPT_EXTRAS, true, true},
	};
	struct policy *p = policy_defaults();

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < N(t); i++) {
		struct alloc_opts o = {.isolate = t[i].isolate};
		struct alloc_option x = {
			.kind = t[i].kind, .k = 2, .value = t[i].value};

		p->decision.curve.min_gain = t[i].min_gain;
		p->decision.curve.min_gain_share = t[i].share;
		if (alloc_option_gains(p, &o, &x, t[i].def) != t[i].want)
			fail_msg("%s: %s, want %s", t[i].what,
				 t[i].want ? "refused" : "gains",
				 t[i].want ? "gains" : "refused");
	}
	policy_destroy(p);
}

/* The direct option is offered when its bandwidth gains at least the gate
 * over the default's value (1 GB/s at k = 1: gate 100 MB/s). */
static void test_direct_gate(void **state)
{
	static const struct {
		double direct;
		bool isolate, want;
	} t[] = {
		{1.1e9, false, true},
		{1.1e9 - 1, false, false},
		{0.2e9, true, true}, /* an isolated job: any direct access */
		{0, true, false},    /* never measured */
	};
	struct policy *p = policy_defaults();
	struct alloc_bw_point bw[] = {{1, 1e9}};

	(void)state;
	p->decision.curve.direct = true;
	p->decision.curve.min_gain = 50e6;
	p->decision.curve.min_gain_share = 0.1;
	for (size_t i = 0; i < N(t); i++) {
		struct alloc_profile pr = {.io_volume_bytes = 1ULL << 40,
					   .io_nodes = 64,
					   .node_bandwidth_bps = 1e8,
					   .io_mode = FWD_IO_N_N,
					   .direct_bps = t[i].direct,
					   .bw = bw,
					   .n_bw = 1};
		struct alloc_opts o = {0};
		bool got = false;

		assert_int_equal(alloc_curve_options(p, &pr, 2.5e9, 1, 0, 8, 8,
						     t[i].isolate, true, &o),
				 0);
		for (size_t k = 0; k < o.n; k++)
			got |= o.o[k].kind == ALLOC_OPT_DIRECT;
		if (got != t[i].want)
			fail_msg("direct %.0f%s: offered %d, want %d",
				 t[i].direct, t[i].isolate ? " isolated" : "",
				 got, t[i].want);
		alloc_opts_free(&o);
	}
	policy_destroy(p);
}

/* ---- min_harm ------------------------------------------------------------ */

/* N-1 on c[1-128] (two default forwarders), 128 I/O nodes at 1 MB/s: the
 * default mapping's bandwidth is min(2 x 2.5 GB/s, 128 MB/s) = 128 MB/s
 * (with a curve: its point at k = 2, the same).  Harm = volume / 128 MB/s
 * seconds; min_harm 60 s: 7.68 GB reaches it exactly. */
static void test_min_harm(void **state)
{
	static const struct {
		const char *what;
		uint64_t volume;
		bool curve;
		enum fwd_action want;
	} t[] = {
		{"no curve, harm = min_harm", 7680000000ULL, false,
		 FWD_ACT_ISOLATE},
		{"no curve, harm just below", 7679999999ULL, false,
		 FWD_ACT_DEFAULT},
		{"curve, harm = min_harm", 7680000000ULL, true,
		 FWD_ACT_ISOLATE},
		{"curve, harm just below", 7679999999ULL, true,
		 FWD_ACT_DEFAULT},
	};
	struct fix *f = *state;
	struct alloc_bw_point bw[] = {{2, 1.28e8}};

	for (size_t i = 0; i < N(t); i++) {
		struct policy *p = policy_defaults();
		struct alloc_ledger *l = alloc_ledger_create(f->t);
		struct alloc_profile pr = {.io_volume_bytes = t[i].volume,
					   .io_nodes = 128,
					   .node_bandwidth_bps = 1e6,
					   .peak_bandwidth_bps = 1.28e8,
					   .iops = 10,
					   .mdops = 10,
					   .io_mode = FWD_IO_N_1,
					   .runs = 5,
					   .bw = t[i].curve ? bw : NULL,
					   .n_bw = t[i].curve ? 1 : 0};
		struct alloc_job job = {.job_id = "7",
					.user = "u",
					.nodes = "c[1-128]",
					.request = FWD_REQ_AUTO,
					.profile = &pr};
		struct alloc_decision *d;
		uint32_t *ids;
		fwd_error_t err;

		p->decision.curve.min_harm = 60;
		assert_int_equal(alloc_job_nodes(f->t, job.nodes, &ids,
						 &job.n_nodes, &err),
				 0);
		job.node_ids = ids;
		d = alloc_decide(f->cx, p, l, NULL, &job, 1000, &err);
		if (!d)
			fail_msg("%s: %s", t[i].what, err.text);
		if (d->action != t[i].want) {
			dump_reasons(d);
			fail_msg("%s: %s, want %s", t[i].what,
				 fwd_action_name(d->action),
				 fwd_action_name(t[i].want));
		}
		alloc_decision_destroy(d);
		free(ids);
		alloc_ledger_destroy(l);
		policy_destroy(p);
	}
}

/* A batch isolates a disruptive job when its I/O time times (1 + the
 * vulnerable jobs on its first default forwarder, in the ledger or in the
 * batch) reaches min_harm (60 s).  D: N-1 on 32 nodes (more than
 * n1_min_nodes 16: disruptive), a curve of 128 MB/s
 * at its one default forwarder; 3.84 GB is 30 s of I/O.  V: vulnerable
 * (5000 IOPS) or not (10), on D's default forwarder (c[33-64]) or on
 * another (c[65-96]). */
static void test_batch_harm(void **state)
{
	static const struct {
		const char *what;
		uint64_t d_volume;
		const char *v_nodes; /* NULL: D alone */
		double v_iops;
		bool want;
	} t[] = {
		{"D alone, 30 s", 3840000000ULL, NULL, 0, false},
		{"D alone, 60 s: at min_harm", 7680000000ULL, NULL, 0, true},
		{"D alone, just under 60 s", 7679999999ULL, NULL, 0, false},
		{"D, 30 s, beside a vulnerable V: 60 s", 3840000000ULL,
		 "c[33-64]", 5000, true},
		{"D, just under 30 s, beside a vulnerable V", 3839999999ULL,
		 "c[33-64]", 5000, false},
		{"D, 30 s, beside a V that is not vulnerable", 3840000000ULL,
		 "c[33-64]", 10, false},
		{"D, 30 s, a vulnerable V elsewhere", 3840000000ULL, "c[65-96]",
		 5000, false},
	};
	struct fix *f = *state;
	struct alloc_bw_point bw[] = {{1, 1.28e8}};

	for (size_t i = 0; i < N(t); i++) {
		struct policy *p = policy_defaults();
		struct alloc_ledger *l = alloc_ledger_create(f->t);
		struct alloc_profile pd = {.io_volume_bytes = t[i].d_volume,
					   .io_nodes = 32,
					   .node_bandwidth_bps = 4e6,
					   .peak_bandwidth_bps = 1.28e8,
					   .iops = 10,
					   .mdops = 10,
					   .io_mode = FWD_IO_N_1,
					   .runs = 5,
					   .bw = bw,
					   .n_bw = 1};
		struct alloc_profile pv = pd;
		struct alloc_job jobs[2] = {
			{.job_id = "1",
			 .user = "u",
			 .nodes = "c[1-32]",
			 .request = FWD_REQ_AUTO,
			 .profile = &pd},
			{.job_id = "2",
			 .user = "u",
			 .nodes = t[i].v_nodes,
			 .request = FWD_REQ_AUTO,
			 .profile = &pv},
		};
		size_t n = t[i].v_nodes ? 2 : 1;
		struct alloc_decision *out[2] = {NULL, NULL};
		uint32_t *ids[2] = {NULL, NULL};
		fwd_error_t err;

		pv.io_volume_bytes = 7680000000ULL;
		pv.io_mode = FWD_IO_N_N;
		pv.iops = t[i].v_iops;
		p->decision.curve.min_harm = 60;
		p->decision.interference.n1_min_nodes = 16;
		for (size_t k = 0; k < n; k++) {
			assert_int_equal(
				alloc_job_nodes(f->t, jobs[k].nodes, &ids[k],
						&jobs[k].n_nodes, &err),
				0);
			jobs[k].node_ids = ids[k];
		}
		if (alloc_decide_batch(f->cx, p, l, NULL, jobs, n, 1000, out,
				       &err) < 0)
			fail_msg("%s: %s", t[i].what, err.text);
		if ((out[0]->action == FWD_ACT_ISOLATE) != t[i].want) {
			dump_reasons(out[0]);
			fail_msg("%s: D %s, want %s", t[i].what,
				 fwd_action_name(out[0]->action),
				 t[i].want ? "isolate" : "not isolated");
		}
		for (size_t k = 0; k < n; k++) {
			alloc_decision_destroy(out[k]);
			free(ids[k]);
		}
		alloc_ledger_destroy(l);
		policy_destroy(p);
	}
}

/* A job staying on its default forwarder shares it with the ledger's
 * holders of that forwarder: each takes its turn, so the default is worth
 * less the more hold it, and two private forwarders worth 2.1 GB/s (the
 * curve) beat one default worth 2 GB/s alone only once it is shared (the
 * gain gate: 10 % of the default's value, at least 50 MB/s). */
static void test_batch_shared_default(void **state)
{
	static const struct {
		const char *what;
		size_t holders; /* shared holders of fwd001 in the ledger */
		bool want;	/* the job is scaled */
	} t[] = {
		{"fwd001 alone", 0, false},
		{"fwd001 shared with one job", 1, true},
		{"fwd001 shared with two jobs", 2, true},
	};
	struct fix *f = *state;
	struct alloc_bw_point bw[] = {{1, 2e9}, {2, 2.1e9}};

	for (size_t i = 0; i < N(t); i++) {
		struct policy *p = policy_defaults();
		struct alloc_ledger *l = alloc_ledger_create(f->t);
		struct alloc_profile pr = {.io_volume_bytes = 100ULL << 30,
					   .io_nodes = 64,
					   .node_bandwidth_bps = 1e8,
					   .peak_bandwidth_bps = 2e9,
					   .iops = 10,
					   .mdops = 10,
					   .io_mode = FWD_IO_N_N,
					   .runs = 5,
					   .bw = bw,
					   .n_bw = 2};
		struct alloc_job job = {.job_id = "1",
					.user = "u",
					.nodes = "c[1-64]",
					.request = FWD_REQ_AUTO,
					.profile = &pr};
		struct alloc_decision *out[1] = {NULL};
		uint32_t *ids, fw[] = {0}; /* fwd001 */
		bool shared[] = {false};
		fwd_error_t err;

		for (size_t h = 0; h < t[i].holders; h++) {
			char id[24];
			struct alloc_ledger_entry e = {.job_id = id,
						       .forwarders = fw,
						       .private_fwd = shared,
						       .n_forwarders = 1,
						       .n_nodes = 1};

			snprintf(id, sizeof(id), "h%zu", h);
			assert_int_equal(alloc_ledger_add(l, &e, &err), 0);
		}
		assert_int_equal(alloc_job_nodes(f->t, job.nodes, &ids,
						 &job.n_nodes, &err),
				 0);
		job.node_ids = ids;
		if (alloc_decide_batch(f->cx, p, l, NULL, &job, 1, 1000, out,
				       &err) < 0)
			fail_msg("%s: %s", t[i].what, err.text);
		if ((out[0]->action == FWD_ACT_SCALE) != t[i].want) {
			dump_reasons(out[0]);
			fail_msg("%s: %s, want %s", t[i].what,
				 fwd_action_name(out[0]->action),
				 t[i].want ? "scale" : "not scaled");
		}
		alloc_decision_destroy(out[0]);
		free(ids);
		alloc_ledger_destroy(l);
		policy_destroy(p);
	}
}

/* ---- caps ---------------------------------------------------------------- */

/* A job of a 1 TiB profile (io_nodes I/O nodes at B_c each, mdops
 * metadata ops/s, a 100 MB/s peak) on `nodes`, asking `req`, decided alone
 * against an empty ledger with max_forwarders_per_job `perjob` (and N_min
 * `n_min`, 0: the default's); the test fails without a decision. */
static struct alloc_decision *decide_one(const struct fix *f, const char *what,
					 const char *nodes, double bc,
					 uint32_t ion, double mdops,
					 uint32_t perjob, uint32_t n_min,
					 enum fwd_request req)
{
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	struct alloc_profile pr = {.io_volume_bytes = 1ULL << 40,
				   .io_nodes = ion,
				   .node_bandwidth_bps = bc,
				   .peak_bandwidth_bps = 1e8,
				   .iops = 10,
				   .mdops = mdops,
				   .io_mode = FWD_IO_N_N,
				   .runs = 5};
	struct alloc_job job = {.job_id = "9",
				.user = "u",
				.nodes = nodes,
				.request = req,
				.profile = &pr};
	struct alloc_decision *d;
	uint32_t *ids;
	fwd_error_t err;

	assert_non_null(p);
	p->decision.caps.max_forwarders_per_job = perjob;
	if (n_min)
		p->decision.scale.min_io_nodes = n_min;
	assert_int_equal(alloc_job_nodes(f->t, nodes, &ids, &job.n_nodes, &err),
			 0);
	job.node_ids = ids;
	d = alloc_decide(f->cx, p, l, NULL, &job, 1000, &err);
	if (!d)
		fail_msg("%s: %s", what, err.text);
	free(ids);
	alloc_ledger_destroy(l);
	policy_destroy(p);
	return d;
}

/* An isolation's count: what the job needs over its I/O time (N_io B_c
 * over B_f, S here), never more than max_forwarders_per_job nor the job's
 * nodes; a reason says so only when a cap bit. */
static void test_isolation_caps(void **state)
{
	static const struct {
		const char *what;
		const char *nodes;
		double bc;	 /* B_c: S = ceil(io_nodes x B_c / 2.5 GB/s) */
		uint32_t ion;	 /* the profile's I/O nodes */
		uint32_t perjob; /* max_forwarders_per_job */
		size_t want_n;
		bool capped; /* "isolation capped" among the reasons */
	} t[] = {
		{"S = 1 on one default: 1, no cap", "c[1-16]", 1e6, 16, 16, 1,
		 false},
		{"S = 4 under the caps: 4", "c[1-16]", 6.25e8, 16, 16, 4,
		 false},
		{"S = 4 at max_forwarders_per_job 4: 4, no cap", "c[1-16]",
		 6.25e8, 16, 4, 4, false},
		{"S = 4 above max_forwarders_per_job 3: 3", "c[1-16]", 6.25e8,
		 16, 3, 3, true},
		{"S = 8 on a 2-node job: 2", "c[1-2]", 1e10, 2, 16, 2, true},
		{"S = 2 on a 2-node job: 2, no cap", "c[1-2]", 2.5e9, 2, 16, 2,
		 false},
	};
	struct fix *f = *state;

	for (size_t i = 0; i < N(t); i++) {
		/* metadata-heavy (500 ops/s > 300): disruptive whatever its
		 * size; 1 TiB: harm well above min_harm */
		struct alloc_decision *d =
			decide_one(f, t[i].what, t[i].nodes, t[i].bc, t[i].ion,
				   500, t[i].perjob, 0, FWD_REQ_AUTO);

		if (d->action != FWD_ACT_ISOLATE ||
		    d->n_forwarders != t[i].want_n ||
		    has_reason(d, "isolation capped") != t[i].capped) {
			dump_reasons(d);
			fail_msg("%s: %s with %zu forwarders, want isolate "
				 "with %zu%s",
				 t[i].what, fwd_action_name(d->action),
				 d->n_forwarders, t[i].want_n,
				 t[i].capped ? " (capped)" : "");
		}
		for (size_t k = 0; k < d->n_forwarders; k++)
			assert_true(d->private_fwd[k]);
		alloc_decision_destroy(d);
	}
}

/* Scale caps: S above the job's node count or above
 * max_forwarders_per_job is cut to it, with a reason naming the cap; S
 * equal to either is granted whole, with no such reason. */
static void test_scale_caps(void **state)
{
	static const struct {
		const char *what;
		const char *nodes;
		double bc;	 /* B_c: S = ceil(io_nodes x B_c / 2.5 GB/s) */
		uint32_t ion;	 /* the profile's I/O nodes */
		uint32_t perjob; /* max_forwarders_per_job */
		size_t want_n;
		const char *reason; /* among the reasons, or NULL: neither */
	} t[] = {
		{"S = 4 on a 4-node job: 4, no cap", "c[1-4]", 2.5e9, 4, 16, 4,
		 NULL},
		{"S = 8 on a 4-node job: 4", "c[1-4]", 5e9, 4, 16, 4,
		 "scale capped at the job's 4 nodes"},
		{"S = 4 at max_forwarders_per_job 4: 4, no cap", "c[1-16]",
		 6.25e8, 16, 4, 4, NULL},
		{"S = 4 above max_forwarders_per_job 3: 3", "c[1-16]", 6.25e8,
		 16, 3, 3,
		 "scale capped by max_forwarders_per_job: 3 of S = 4"},
	};
	struct fix *f = *state;

	for (size_t i = 0; i < N(t); i++) {
		/* demanding, not disruptive: N-N, light metadata, a low peak;
		 * N_min 1: small jobs scale */
		struct alloc_decision *d =
			decide_one(f, t[i].what, t[i].nodes, t[i].bc, t[i].ion,
				   10, t[i].perjob, 1, FWD_REQ_SCALE);
		bool capped;

		capped = has_reason(d, "scale capped at the job's") ||
			 has_reason(d, "scale capped by max_forwarders");
		if (d->action != FWD_ACT_SCALE ||
		    d->n_forwarders != t[i].want_n ||
		    capped != (t[i].reason != NULL) ||
		    (t[i].reason && !has_reason(d, t[i].reason))) {
			dump_reasons(d);
			fail_msg("%s: %s with %zu forwarders, want scale with "
				 "%zu (%s)",
				 t[i].what, fwd_action_name(d->action),
				 d->n_forwarders, t[i].want_n,
				 t[i].reason ? t[i].reason : "no cap");
		}
		alloc_decision_destroy(d);
	}
}

/* ---- the ledger's bounds ------------------------------------------------- */

/* A decision's reasons: kept in order, each as its format writes it (a
 * long one cut at 511 bytes, as snprintf cuts), through the growth of
 * their text and of their array; freed with the decision (the sanitizer
 * build sees a leak or a stale pointer). */
static void test_reasons_text(void **state)
{
	struct alloc_decision *d = calloc(1, sizeof(*d));
	char want[700], fill[700];

	(void)state;
	assert_non_null(d);
	memset(fill, 'x', sizeof(fill) - 1);
	fill[sizeof(fill) - 1] = '\0';
	for (int i = 0; i < 300; i++) {
		int w = (i * 37) % 650;

		assert_int_equal(alloc_reason(d, "reason %d of %s: %.*s", i,
					      "the test", w, fill),
				 0);
		assert_int_equal(d->n_reasons, (size_t)i + 1);
	}
	for (int i = 0; i < 300; i++) {
		int w = (i * 37) % 650;

		snprintf(want, 512, "reason %d of %s: %.*s", i, "the test", w,
			 fill);
		assert_string_equal(d->reasons[i], want);
	}
	alloc_decision_destroy(d);
}

static void test_ledger_bounds(void **state)
{
	struct fix *f = *state;
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	uint32_t fw[] = {8, 23}; /* fwd009, fwd024: the last forwarder */
	bool priv[] = {true, true};
	char id[] = "1";
	struct alloc_ledger_entry e = {.job_id = id,
				       .forwarders = fw,
				       .private_fwd = priv,
				       .n_forwarders = 2,
				       .n_nodes = 2};
	fwd_error_t err;

	(void)state;
	assert_int_equal(alloc_ledger_add(l, &e, &err), 0);
	assert_true(alloc_ledger_held_private(l, 8));
	assert_true(alloc_ledger_held_private(l, 23));
	assert_false(alloc_ledger_held_private(l, 22));
	/* past the last forwarder: not held, not read */
	assert_false(alloc_ledger_held_private(l, 24));
	assert_false(alloc_ledger_held_private(l, UINT32_MAX));
	assert_false(alloc_ledger_held_private(NULL, 8));
	alloc_ledger_destroy(l);
}

/* Who may hold a forwarder beside whom: any number of shared holders; a
 * private holder alone; a release gives the forwarder back entirely. */
static void test_ledger_holders(void **state)
{
	static const struct {
		const char *what;
		bool first_priv, release_first, second_priv;
		int want_errno; /* 0: the second job is added */
		size_t holders; /* of fwd009 afterwards */
	} t[] = {
		{"shared beside shared", false, false, false, 0, 2},
		{"private beside a shared holder", false, false, true, EBUSY,
		 1},
		{"shared beside a private holder", true, false, false, EBUSY,
		 1},
		{"private beside a private holder", true, false, true, EBUSY,
		 1},
		{"shared after the private holder left", true, true, false, 0,
		 1},
		{"private after the private holder left", true, true, true, 0,
		 1},
		{"private after the shared holder left", false, true, true, 0,
		 1},
	};
	struct fix *f = *state;

	for (size_t i = 0; i < N(t); i++) {
		struct alloc_ledger *l = alloc_ledger_create(f->t);
		uint32_t fw[] = {8}; /* fwd009 */
		bool p1[] = {t[i].first_priv}, p2[] = {t[i].second_priv};
		char id1[] = "1", id2[] = "2";
		struct alloc_ledger_entry a = {.job_id = id1,
					       .forwarders = fw,
					       .private_fwd = p1,
					       .n_forwarders = 1,
					       .n_nodes = 1};
		struct alloc_ledger_entry b = {.job_id = id2,
					       .forwarders = fw,
					       .private_fwd = p2,
					       .n_forwarders = 1,
					       .n_nodes = 1};
		fwd_error_t err;
		int rv;

		assert_int_equal(alloc_ledger_add(l, &a, &err), 0);
		if (t[i].release_first)
			assert_int_equal(alloc_ledger_release(l, "1", 10), 1);
		errno = 0;
		rv = alloc_ledger_add(l, &b, &err);
		if ((t[i].want_errno ? rv != -1 || errno != t[i].want_errno
				     : rv != 0) ||
		    alloc_ledger_holders(l, 8, NULL) != t[i].holders)
			fail_msg("%s: %d (errno %d), %zu holder(s); want "
				 "errno %d, %zu",
				 t[i].what, rv, errno,
				 alloc_ledger_holders(l, 8, NULL),
				 t[i].want_errno, t[i].holders);
		if (alloc_ledger_held_private(l, 8) !=
		    (t[i].release_first
			     ? t[i].second_priv
			     : t[i].first_priv || (t[i].want_errno == 0 &&
						   t[i].second_priv)))
			fail_msg("%s: held privately %d", t[i].what,
				 alloc_ledger_held_private(l, 8));
		alloc_ledger_destroy(l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gain_gate),
		cmocka_unit_test(test_direct_gate),
		cmocka_unit_test(test_reasons_text),
		cmocka_unit_test_setup_teardown(test_min_harm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_harm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_shared_default,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale_caps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_isolation_caps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ledger_bounds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ledger_holders, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("alloc_edges", tests, NULL, NULL);
}
