/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision engine, rule by rule and boundary by boundary, the DFRA
 * slide's three cases, Beacon's fail-slow LAMMPS case, determinism, the
 * ledger's idempotency, batch contention and the exact JSON field set.
 *
 * Test machine (built with the topology builder): 8 service forwarders
 * fwd001..fwd008 of 2.5 GB/s serving c[1-512], 64 nodes each (fwd001-004
 * in group g0, fwd005-008 in g1), 16 backups fwd009..fwd024 (fwd009-016 in
 * g0, fwd017-024 in g1), OSTs ost0..ost3.  Default policy unless a case
 * says otherwise (V_min 20 GiB, N_min 32, W_md 300, N-1 > 64 nodes,
 * metadata-heavy > 300 ops/s, high bandwidth > 5 GB/s, vulnerable > 1000
 * IOPS, 16 per job, pool share 0.5, reserve 4).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "allocator/decide.h"
#include "allocator/decision_json.h"
#include "allocator/ledger.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define GiB (1024ULL * 1024 * 1024)

struct dcase;

struct fix {
	struct topology *t;
	struct alloc_ctx *cx;
	const struct dcase *c; /* the table case, for test_case */
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
			.group = (char *)((svc ? i <= 4 : i <= 16) ? "g0"
								   : "g1"),
			.role = svc ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};
		snprintf(name, sizeof(name), "fwd%03d", i);
		assert_int_equal(topo_add_forwarder(t, &f, &err), 0);
	}
	for (int i = 0; i < 4; i++) {
		struct topo_ost o = {.name = name, .bandwidth_bps = 1e9};

		snprintf(name, sizeof(name), "ost%d", i);
		assert_int_equal(topo_add_ost(t, &o, &err), 0);
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
	f->c = *state; /* prestate: the case, or NULL */
	f->t = make_topo();
	f->cx = alloc_ctx_create(f->t, &err);
	if (!f->cx) {
		topo_destroy(f->t);
		free(f);
		return -1;
	}
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

/* ---- profiles --------------------------------------------------------- */

/* Tables read as tables. */
/* clang-format off */

/* Below V_min, ordinary N-N: the slide's "normal" job. */
static const struct alloc_profile p_normal = {
	.io_volume_bytes = 10 * GiB, .io_nodes = 64,
	.node_bandwidth_bps = 1e7, .peak_bandwidth_bps = 6.4e8,
	.iops = 100, .mdops = 10, .io_mode = FWD_IO_N_N, .runs = 5,
};
/* 128 I/O nodes at 100 MB/s: S = ceil(12.8e9 / 2.5e9) = 6: "demanding". */
static const struct alloc_profile p_demanding = {
	.io_volume_bytes = 100 * GiB, .io_nodes = 128,
	.node_bandwidth_bps = 1e8, .peak_bandwidth_bps = 4e9,
	.iops = 200, .mdops = 20, .io_mode = FWD_IO_N_N, .runs = 5,
};
/* N-1 on 128 nodes, little bandwidth: "disruptive". */
static const struct alloc_profile p_n1 = {
	.io_volume_bytes = 30 * GiB, .io_nodes = 128,
	.node_bandwidth_bps = 1e6, .peak_bandwidth_bps = 1.28e8,
	.iops = 50, .mdops = 50, .io_mode = FWD_IO_N_1, .runs = 3,
};
static const struct alloc_profile p_mdheavy = {
	.io_volume_bytes = 30 * GiB, .io_nodes = 64,
	.node_bandwidth_bps = 1e6, .iops = 50, .mdops = 500,
	.io_mode = FWD_IO_N_N, .runs = 3,
};
static const struct alloc_profile p_highbw = {
	.io_volume_bytes = 10 * GiB, .io_nodes = 16,
	.node_bandwidth_bps = 1e7, .peak_bandwidth_bps = 6e9,
	.io_mode = FWD_IO_N_N, .runs = 3,
};
static const struct alloc_profile p_vulnerable = {
	.io_volume_bytes = 1 * GiB, .io_nodes = 64,
	.node_bandwidth_bps = 1e6, .iops = 5000, .mdops = 10,
	.io_mode = FWD_IO_N_N, .runs = 3,
};
/* Beacon's LAMMPS: modest, steady I/O on three forwarders. */
static const struct alloc_profile p_lammps = {
	.io_volume_bytes = 5 * GiB, .io_nodes = 192,
	.node_bandwidth_bps = 2e6, .peak_bandwidth_bps = 3.8e8,
	.iops = 300, .mdops = 5, .io_mode = FWD_IO_N_N, .runs = 8,
};
static const struct alloc_profile p_zero = { 0 };
/* Metadata-heavy (not scaled), 128 x 78.125 MB/s = 10 GB/s in its I/O
 * phases: isolation needs 4 private forwarders. */
static const struct alloc_profile p_md_fast = {
	.io_volume_bytes = 1024 * GiB, .io_nodes = 128,
	.node_bandwidth_bps = 7.8125e7, .iops = 50, .mdops = 500,
	.io_mode = FWD_IO_N_N, .runs = 3,
};
/* N-1 on 128 nodes, 32 of them doing I/O at 312.5 MB/s: 10 GB/s, but
 * N_io 32 <= N_min, so not eligible for scaling. */
static const struct alloc_profile p_n1_few_io = {
	.io_volume_bytes = 1024 * GiB, .io_nodes = 32,
	.node_bandwidth_bps = 3.125e8, .iops = 50, .mdops = 50,
	.io_mode = FWD_IO_N_1, .runs = 3,
};
/* Exactly at the boundaries. */
static const struct alloc_profile p_at_vmin = {
	.io_volume_bytes = 20 * GiB, .io_nodes = 128,
	.node_bandwidth_bps = 1e8, .io_mode = FWD_IO_N_N,
};
static const struct alloc_profile p_above_vmin = {
	.io_volume_bytes = 20 * GiB + 1, .io_nodes = 128,
	.node_bandwidth_bps = 1e8, .io_mode = FWD_IO_N_N,
};
static const struct alloc_profile p_at_nmin = {
	.io_volume_bytes = 100 * GiB, .io_nodes = 32,
	.node_bandwidth_bps = 1e9, .io_mode = FWD_IO_N_N,
};
/* 33 nodes x 100 MB/s on one 2.5 GB/s forwarder: S = 2 > N_f = 1. */
static const struct alloc_profile p_above_nmin = {
	.io_volume_bytes = 100 * GiB, .io_nodes = 33,
	.node_bandwidth_bps = 1e8, .io_mode = FWD_IO_N_N,
};
/* 100 x 50 MB/s = 5 GB/s = exactly 2 forwarders: S == N_f for c[1-128]. */
static const struct alloc_profile p_s_eq_nf = {
	.io_volume_bytes = 100 * GiB, .io_nodes = 100,
	.node_bandwidth_bps = 5e7, .io_mode = FWD_IO_N_N,
};
static const struct alloc_profile p_md_at_limit = {
	.io_volume_bytes = 100 * GiB, .io_nodes = 128,
	.node_bandwidth_bps = 1e8, .mdops = 300, .io_mode = FWD_IO_N_N,
};

/* ---- table-driven cases ----------------------------------------------- */

struct hstate {
	const char *name;
	enum fwd_health s;
	bool ost;
};

struct held {
	const char *job_id;
	const char *fwd[4];
	bool priv;
	enum fwd_io_mode mode;
	size_t n_nodes;
	double mdops;
};

struct dcase {
	const char *name;
	const char *nodes;
	enum fwd_request request;
	const struct alloc_profile *profile;
	void (*tweak)(struct policy *p);
	struct hstate health[30];
	struct held ledger[20];
	/* expectations */
	enum fwd_action action;
	uint32_t n_f;
	uint32_t s;
	const char *forwarders; /* space-separated, in block order */
	const char *mapping;    /* "nodes>fwd ..." */
	const char *reason;     /* a substring of some reason; a final '$'
				 * anchors it at the reason's end */
};

static void tw_optout(struct policy *p) { p->access.mode = POLICY_MODE_OPT_OUT; }
static void tw_shadow(struct policy *p) { p->access.mode = POLICY_MODE_SHADOW; }
static void tw_off(struct policy *p) { p->access.mode = POLICY_MODE_OFF; }
static void tw_reserve14(struct policy *p) { p->decision.caps.reserve = 14; }
static void tw_reserve15(struct policy *p) { p->decision.caps.reserve = 15; }
static void tw_share(struct policy *p) { p->decision.caps.max_pool_share = 0.1; }
static void tw_perjob(struct policy *p)
{
	p->decision.caps.max_forwarders_per_job = 3;
}
static void tw_noscale(struct policy *p) { p->decision.scale.enabled = false; }

static void tw_deny_bob(struct policy *p)
{
	p->access.deny_users.items = calloc(2, sizeof(char *));
	p->access.deny_users.items[0] = strdup("bob");
	p->access.deny_users.count = 1;
}

static void tw_no_anomaly(struct policy *p)
{
	p->decision.avoid_anomalies = false;
}

#define ALL_BACKUPS_HELD                                                    \
	{ "b1", { "fwd009", "fwd010", "fwd011", "fwd012" }, true },         \
	{ "b2", { "fwd013", "fwd014", "fwd015", "fwd016" }, true },         \
	{ "b3", { "fwd017", "fwd018", "fwd019", "fwd020" }, true }

static const struct dcase cases[] = {
	/* The DFRA slide's three cases. */
	{ "slide: normal -> default", "c[1-128]", FWD_REQ_AUTO, &p_normal,
	  .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 1,
	  .forwarders = "fwd001 fwd002",
	  .mapping = "c[1-64]>fwd001 c[65-128]>fwd002",
	  .reason = "not eligible for scaling: I/O volume 10GiB <= V_min "
		    "20GiB" },
	/* 128 MB/s needed over its I/O time: one private forwarder */
	{ "slide: disruptive -> private", "c[1-128]", FWD_REQ_AUTO, &p_n1,
	  .action = FWD_ACT_ISOLATE, .n_f = 2, .s = 1,
	  .forwarders = "fwd009",
	  .mapping = "c[1-128]>fwd009",
	  .reason = "disruptive (N-1 I/O on 128 nodes > 64): expected harm" },
	{ "slide: demanding -> more", "c[1-128]", FWD_REQ_AUTO,
	  &p_demanding, .action = FWD_ACT_SCALE, .n_f = 2, .s = 6,
	  .forwarders = "fwd001 fwd002 fwd009 fwd010 fwd011 fwd012",
	  .mapping = "c[1-22]>fwd001 c[23-44]>fwd002 c[45-65]>fwd009 "
		     "c[66-86]>fwd010 c[87-107]>fwd011 c[108-128]>fwd012",
	  .reason = "demanding: S = 6 > N_f = 2" },
	/* Beacon: LAMMPS on three forwarders, one fail-slow (excluded). */
	{ "beacon: LAMMPS fail-slow forwarder replaced", "c[1-192]",
	  FWD_REQ_AUTO, &p_lammps,
	  .health = { { "fwd002", FWD_HEALTH_EXCLUDED } },
	  .action = FWD_ACT_AVOID_ANOMALY, .n_f = 3, .s = 1,
	  .forwarders = "fwd001 fwd009 fwd003",
	  .mapping = "c[1-64]>fwd001 c[65-128]>fwd009 c[129-192]>fwd003",
	  .reason = "forwarder fwd002 is excluded: replaced by fwd009" },
	{ "anomaly avoidance applies without opting in", "c[1-192]",
	  FWD_REQ_NONE, NULL,
	  .health = { { "fwd002", FWD_HEALTH_EXCLUDED } },
	  .action = FWD_ACT_AVOID_ANOMALY, .n_f = 3, .s = 0,
	  .forwarders = "fwd001 fwd009 fwd003", .reason = "not opted in" },
	{ "anomaly avoidance off in the policy", "c[1-192]", FWD_REQ_AUTO,
	  &p_lammps, tw_no_anomaly,
	  .health = { { "fwd002", FWD_HEALTH_EXCLUDED } },
	  .action = FWD_ACT_DEFAULT, .n_f = 3, .s = 1,
	  .forwarders = "fwd001 fwd002 fwd003" },
	{ "suspect forwarder kept, suspect backup skipped", "c[1-128]",
	  FWD_REQ_AUTO, &p_n1,
	  .health = { { "fwd001", FWD_HEALTH_SUSPECT },
		      { "fwd009", FWD_HEALTH_SUSPECT } },
	  .action = FWD_ACT_ISOLATE, .n_f = 2, .s = 1,
	  .forwarders = "fwd010" },
	/* Other interference triggers. */
	{ "metadata-heavy -> isolate, not scaled", "c[1-64]", FWD_REQ_AUTO,
	  &p_mdheavy, .action = FWD_ACT_ISOLATE, .n_f = 1, .s = 1,
	  .forwarders = "fwd009",
	  .reason = "metadata-heavy: 500 ops/s > 300 ops/s" },
	{ "high bandwidth -> isolate", "c[1-16]", FWD_REQ_AUTO, &p_highbw,
	  .action = FWD_ACT_ISOLATE, .n_f = 1, .s = 1, .forwarders = "fwd009",
	  .reason = "high bandwidth: peak 6GB/s > 5GB/s" },
	{ "vulnerable next to a disruptive neighbour -> isolate", "c[129-192]",
	  FWD_REQ_AUTO, &p_vulnerable,
	  .ledger = { { "n1", { "fwd003" }, false, FWD_IO_N_1, 256 } },
	  .action = FWD_ACT_ISOLATE, .n_f = 1, .s = 1, .forwarders = "fwd009",
	  .reason = "neighbour job n1 on fwd003 is disruptive" },
	{ "vulnerable with a quiet neighbour -> default", "c[129-192]",
	  FWD_REQ_AUTO, &p_vulnerable,
	  .ledger = { { "q1", { "fwd003" }, false, FWD_IO_N_N, 256, 10 } },
	  .action = FWD_ACT_DEFAULT, .n_f = 1, .s = 1, .forwarders = "fwd003",
	  .reason = "no upgrade needed" },
	{ "N-1 neighbour of unknown size counts as disruptive", "c[129-192]",
	  FWD_REQ_AUTO, &p_vulnerable,
	  .ledger = { { "n1", { "fwd003" }, false, FWD_IO_N_1, 0 } },
	  .action = FWD_ACT_ISOLATE, .n_f = 1, .s = 1,
	  .forwarders = "fwd009" },
	{ "precedence: scale beats isolate", "c[1-128]", FWD_REQ_AUTO,
	  &p_demanding, .ledger = { { "n1", { "fwd001" }, false,
				      FWD_IO_N_1, 512 } },
	  .action = FWD_ACT_SCALE, .n_f = 2, .s = 6 },
	/* Boundaries of eligibility. */
	{ "V exactly V_min is not eligible", "c[1-128]", FWD_REQ_AUTO,
	  &p_at_vmin, .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 6,
	  .reason = "I/O volume 20GiB <= V_min 20GiB" },
	{ "V one byte above V_min scales", "c[1-128]", FWD_REQ_AUTO,
	  &p_above_vmin, .action = FWD_ACT_SCALE, .n_f = 2, .s = 6 },
	{ "N_io exactly N_min is not eligible", "c[1-64]", FWD_REQ_AUTO,
	  &p_at_nmin, .action = FWD_ACT_DEFAULT, .n_f = 1, .s = 13,
	  .reason = "32 I/O nodes <= N_min 32" },
	{ "N_io one above N_min scales", "c[1-64]", FWD_REQ_AUTO,
	  &p_above_nmin, .action = FWD_ACT_SCALE, .n_f = 1, .s = 2,
	  .forwarders = "fwd001 fwd009",
	  .mapping = "c[1-32]>fwd001 c[33-64]>fwd009" },
	{ "S == N_f: no scaling", "c[1-128]", FWD_REQ_AUTO, &p_s_eq_nf,
	  .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 2,
	  .reason = "no scaling needed: S = 2 <= N_f = 2" },
	{ "metadata rate at W_md is metadata-bound", "c[1-128]",
	  FWD_REQ_AUTO, &p_md_at_limit, .action = FWD_ACT_DEFAULT,
	  .n_f = 2, .s = 6,
	  .reason = "metadata-bound (300 ops/s >= 300 ops/s)" },
	{ "zero-volume profile -> default", "c[1-64]", FWD_REQ_AUTO,
	  &p_zero, .action = FWD_ACT_DEFAULT, .n_f = 1, .s = 0,
	  .reason = "I/O volume 0 bytes <= V_min" },
	{ "no profile -> default with reason", "c[1-64]", FWD_REQ_AUTO,
	  NULL, .action = FWD_ACT_DEFAULT, .n_f = 1, .s = 0,
	  .reason = "no I/O history for this application" },
	/* Pool and caps. */
	{ "pool exhausted -> refused", "c[1-128]", FWD_REQ_AUTO,
	  &p_demanding, .ledger = { ALL_BACKUPS_HELD },
	  .action = FWD_ACT_REFUSED, .n_f = 2, .s = 6,
	  .forwarders = "fwd001 fwd002",
	  .reason = "scale refused: no idle forwarder available (4 idle "
		    "healthy, 4 in reserve" },
	{ "a refusal names the reserve that refused", "c[1-128]",
	  FWD_REQ_AUTO, &p_demanding, .ledger = { ALL_BACKUPS_HELD },
	  .action = FWD_ACT_REFUSED, .n_f = 2, .s = 6,
	  .reason = "; refused by decision.caps.reserve 4 (4 idle "
		    "healthy forwarders, 4 kept)$" },
	{ "all forwarders excluded: default kept", "c[1-64]", FWD_REQ_AUTO,
	  &p_normal,
	  .health = { { "fwd001", FWD_HEALTH_EXCLUDED },
		      { "fwd002", FWD_HEALTH_EXCLUDED },
		      { "fwd003", FWD_HEALTH_EXCLUDED },
		      { "fwd004", FWD_HEALTH_EXCLUDED },
		      { "fwd005", FWD_HEALTH_EXCLUDED },
		      { "fwd006", FWD_HEALTH_EXCLUDED },
		      { "fwd007", FWD_HEALTH_EXCLUDED },
		      { "fwd008", FWD_HEALTH_EXCLUDED },
		      { "fwd009", FWD_HEALTH_EXCLUDED },
		      { "fwd010", FWD_HEALTH_EXCLUDED },
		      { "fwd011", FWD_HEALTH_EXCLUDED },
		      { "fwd012", FWD_HEALTH_EXCLUDED },
		      { "fwd013", FWD_HEALTH_EXCLUDED },
		      { "fwd014", FWD_HEALTH_EXCLUDED },
		      { "fwd015", FWD_HEALTH_EXCLUDED },
		      { "fwd016", FWD_HEALTH_EXCLUDED },
		      { "fwd017", FWD_HEALTH_EXCLUDED },
		      { "fwd018", FWD_HEALTH_EXCLUDED },
		      { "fwd019", FWD_HEALTH_EXCLUDED },
		      { "fwd020", FWD_HEALTH_EXCLUDED },
		      { "fwd021", FWD_HEALTH_EXCLUDED },
		      { "fwd022", FWD_HEALTH_EXCLUDED },
		      { "fwd023", FWD_HEALTH_EXCLUDED },
		      { "fwd024", FWD_HEALTH_EXCLUDED } },
	  .action = FWD_ACT_DEFAULT, .n_f = 1, .s = 1, .forwarders = "fwd001",
	  .reason = "forwarder fwd001 is excluded but no healthy idle "
		    "forwarder is left to replace it" },
	{ "replacement may use the reserve", "c[1-64]", FWD_REQ_AUTO,
	  &p_normal, .health = { { "fwd001", FWD_HEALTH_EXCLUDED } },
	  .ledger = { ALL_BACKUPS_HELD },
	  .action = FWD_ACT_AVOID_ANOMALY, .n_f = 1, .s = 1,
	  .forwarders = "fwd021" },
	{ "reserve caps scaling", "c[1-128]", FWD_REQ_AUTO, &p_demanding,
	  tw_reserve14, .action = FWD_ACT_SCALE, .n_f = 2, .s = 6,
	  .forwarders = "fwd001 fwd002 fwd009 fwd010",
	  .reason = "scale capped by the pool: 16 idle healthy forwarders, "
		    "14 kept in reserve" },
	{ "pool share caps scaling", "c[1-128]", FWD_REQ_AUTO,
	  &p_demanding, tw_share, .action = FWD_ACT_SCALE, .n_f = 2,
	  .s = 6, .forwarders = "fwd001 fwd002 fwd009",
	  .reason = "scale capped by max_pool_share 0.10: at most 1 of 16" },
	{ "per-job cap", "c[1-128]", FWD_REQ_AUTO, &p_demanding,
	  tw_perjob, .action = FWD_ACT_SCALE, .n_f = 2, .s = 6,
	  .forwarders = "fwd001 fwd002 fwd009",
	  .reason = "scale capped by max_forwarders_per_job: 3 of S = 6" },
	{ "scaled job with an excluded default", "c[1-128]", FWD_REQ_AUTO,
	  &p_demanding, .health = { { "fwd002", FWD_HEALTH_EXCLUDED } },
	  .action = FWD_ACT_SCALE, .n_f = 2, .s = 6,
	  .forwarders = "fwd001 fwd009 fwd010 fwd011 fwd012 fwd013" },
	/* Locality and least recent load. */
	{ "mixed groups: the majority group's backups first", "c[193-384]",
	  FWD_REQ_AUTO, &p_demanding, .action = FWD_ACT_SCALE, .n_f = 3,
	  .s = 6, .forwarders = "fwd004 fwd005 fwd006 fwd017 fwd018 fwd019" },
	{ "held backups are not idle", "c[1-128]", FWD_REQ_AUTO, &p_n1,
	  .ledger = { { "x", { "fwd009" }, true } },
	  .action = FWD_ACT_ISOLATE, .n_f = 2, .s = 1,
	  .forwarders = "fwd010" },
	/* Requests and access. */
	{ "request off -> default", "c[1-128]", FWD_REQ_OFF, &p_demanding,
	  .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 0,
	  .forwarders = "fwd001 fwd002",
	  .reason = "upgrade off by request" },
	{ "request shadow -> decided, nothing applied", "c[1-128]",
	  FWD_REQ_SHADOW, &p_demanding, .action = FWD_ACT_SHADOW,
	  .n_f = 2, .s = 6,
	  .forwarders = "fwd001 fwd002 fwd009 fwd010 fwd011 fwd012",
	  .reason = "shadow mode: would scale; nothing applied" },
	{ "policy shadow mode applies to every job", "c[1-128]",
	  FWD_REQ_NONE, &p_n1, tw_shadow, .action = FWD_ACT_SHADOW,
	  .n_f = 2, .s = 1, .reason = "shadow mode: would isolate" },
	{ "opt-in without a request -> default", "c[1-128]", FWD_REQ_NONE,
	  &p_demanding, .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 0,
	  .reason = "not opted in (no --io-upgrade; access.mode opt-in)" },
	{ "opt-out without a request -> considered", "c[1-128]",
	  FWD_REQ_NONE, &p_demanding, tw_optout,
	  .action = FWD_ACT_SCALE, .n_f = 2, .s = 6 },
	{ "access.mode off -> nothing at all", "c[1-128]", FWD_REQ_AUTO,
	  &p_demanding, tw_off,
	  .health = { { "fwd001", FWD_HEALTH_EXCLUDED } },
	  .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 0,
	  .forwarders = "fwd001 fwd002",
	  .reason = "fwdalloc is off (access.mode off)" },
	{ "denied user -> refused", "c[1-128]", FWD_REQ_AUTO, &p_demanding,
	  tw_deny_bob, .action = FWD_ACT_REFUSED, .n_f = 2, .s = 0,
	  .reason = "user bob is denied by the policy" },
	{ "scale-only request does not isolate", "c[1-128]", FWD_REQ_SCALE,
	  &p_n1, .action = FWD_ACT_DEFAULT, .n_f = 2, .s = 1,
	  .forwarders = "fwd001 fwd002" },
	{ "isolate-only request does not scale", "c[1-128]",
	  FWD_REQ_ISOLATE, &p_demanding, .action = FWD_ACT_DEFAULT,
	  .n_f = 2, .s = 6,
	  .reason = "scaling not considered: isolate requested" },
	{ "isolate-only request isolates", "c[1-128]", FWD_REQ_ISOLATE,
	  &p_n1, .action = FWD_ACT_ISOLATE, .n_f = 2, .s = 1,
	  .reason = "isolate: 1 private forwarder$" },
	{ "one private forwarder reads singular", "c[1-64]", FWD_REQ_AUTO,
	  &p_mdheavy, .action = FWD_ACT_ISOLATE, .n_f = 1, .s = 1,
	  .forwarders = "fwd009", .reason = "isolate: 1 private forwarder$" },
	{ "scaling disabled: isolation still sized by S", "c[1-128]",
	  FWD_REQ_AUTO, &p_mdheavy, tw_noscale,
	  .action = FWD_ACT_ISOLATE, .n_f = 2, .s = 1,
	  .reason = "scaling disabled by the policy" },
	/* The count is what it needs over its I/O time (128 x 1 MB/s), not
	 * N_f = 8. */
	{ "isolation sized by need, not by N_f", "c[1-512]",
	  FWD_REQ_AUTO, &p_n1, tw_perjob, .action = FWD_ACT_ISOLATE,
	  .n_f = 8, .s = 1, .forwarders = "fwd009",
	  .reason = "isolation needs 1 private forwarder (128MB/s over its "
		    "I/O time" },
	/* Needs 4 (10 GB/s); the reserve leaves 2, as fast as its 2 shared
	 * defaults: isolated on 2, the reason naming the cap. */
	{ "isolation capped by the reserve: fewer private", "c[1-128]",
	  FWD_REQ_AUTO, &p_md_fast, tw_reserve14, .action = FWD_ACT_ISOLATE,
	  .n_f = 2, .s = 4, .forwarders = "fwd009 fwd010",
	  .reason = "isolation capped by decision.caps.reserve 14 (16 idle "
		    "healthy forwarders, 14 kept): 2 of the 4" },
	/* One left would serve it slower than its defaults; metadata-bound:
	 * no extras either.  Default mapping, the cap named. */
	{ "isolation capped to less than the defaults give: default",
	  "c[1-128]", FWD_REQ_AUTO, &p_md_fast, tw_reserve15,
	  .action = FWD_ACT_REFUSED, .n_f = 2, .s = 4,
	  .forwarders = "fwd001 fwd002",
	  .reason = "isolation refused: decision.caps.reserve 15 (16 idle "
		    "healthy forwarders, 15 kept) leaves 1 of the 4" },
	/* Not eligible for scaling (32 I/O nodes <= N_min) but 4 forwarders'
	 * worth of need: one pool forwarder left gives it more as an extra
	 * beside its defaults than alone. */
	{ "isolation capped: best smaller option is an extra", "c[1-128]",
	  FWD_REQ_AUTO, &p_n1_few_io, tw_reserve15, .action = FWD_ACT_SCALE,
	  .n_f = 2, .s = 4, .forwarders = "fwd001 fwd002 fwd009",
	  .reason = "best smaller option: its defaults + 1 extra" },
	{ "isolation under max_pool_share names it", "c[1-128]",
	  FWD_REQ_AUTO, &p_md_fast, tw_share, .action = FWD_ACT_REFUSED,
	  .n_f = 2, .s = 4,
	  .reason = "isolation refused: decision.caps.max_pool_share 0.10 "
		    "(at most 1 of 16 idle forwarders)" },
};

/* clang-format on */

static void fill_health(const struct topology *t, const struct dcase *c,
			enum fwd_health *fh, enum fwd_health *oh)
{
	memset(fh, 0, t->n_forwarders * sizeof(*fh));
	memset(oh, 0, t->n_osts * sizeof(*oh));
	for (size_t i = 0; i < 30 && c->health[i].name; i++) {
		long k = c->health[i].ost
				 ? topo_ost_index(t, c->health[i].name)
				 : topo_forwarder_index(t, c->health[i].name);

		assert_true(k >= 0);
		if (c->health[i].ost)
			oh[k] = c->health[i].s;
		else
			fh[k] = c->health[i].s;
	}
}

static struct alloc_ledger *fill_ledger(const struct topology *t,
					const struct dcase *c)
{
	struct alloc_ledger *l = alloc_ledger_create(t);
	fwd_error_t err;

	assert_non_null(l);
	for (size_t i = 0; i < 20 && c->ledger[i].job_id; i++) {
		const struct held *h = &c->ledger[i];
		uint32_t fw[4];
		bool pv[4];
		struct alloc_ledger_entry e = {
			.job_id = (char *)h->job_id,
			.forwarders = fw,
			.private_fwd = pv,
			.io_mode = h->mode,
			.n_nodes = h->n_nodes,
			.mdops = h->mdops,
		};

		for (size_t k = 0; k < 4 && h->fwd[k]; k++) {
			long f = topo_forwarder_index(t, h->fwd[k]);

			assert_true(f >= 0);
			fw[e.n_forwarders] = (uint32_t)f;
			pv[e.n_forwarders++] = h->priv;
		}
		if (alloc_ledger_add(l, &e, &err) < 0)
			fail_msg("%s: %s", c->name, err.text);
	}
	return l;
}

static void join_forwarders(const struct alloc_decision *d, char *buf,
			    size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < d->n_forwarders; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? " " : "", d->forwarder_names[i]);
}

static void join_mapping(const struct alloc_decision *d, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < d->n_mapping; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s>%s",
					i ? " " : "", d->mapping[i].nodes,
					d->forwarder_names[i]);
}

static bool has_reason(const struct alloc_decision *d, const char *sub)
{
	size_t n = strlen(sub);
	bool anchored = n && sub[n - 1] == '$';

	if (anchored)
		n--;
	for (size_t i = 0; i < d->n_reasons; i++) {
		const char *r = d->reasons[i];
		size_t len = strlen(r);

		if (!anchored && strstr(r, sub))
			return true;
		if (anchored && len >= n && !strncmp(r + len - n, sub, n))
			return true;
	}
	return false;
}

static void dump_reasons(const struct alloc_decision *d)
{
	for (size_t i = 0; i < d->n_reasons; i++)
		print_message("#   reason: %s\n", d->reasons[i]);
}

static void test_case(void **state)
{
	struct fix *f = *state;
	const struct dcase *c = f->c;
	enum fwd_health fh[64], oh[8];
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = fill_ledger(f->t, c);
	struct alloc_health h = {fh, oh};
	struct alloc_job job = {
		.job_id = "100",
		.user = "bob",
		.account = "acct",
		.name = "app",
		.partition = "batch",
		.nodes = c->nodes,
		.request = c->request,
		.profile = c->profile,
	};
	struct alloc_decision *d;
	char buf[1024];
	size_t sum = 0;
	uint32_t *ids;
	fwd_error_t err;
	bool ok = true;

	assert_non_null(p);
	if (c->tweak)
		c->tweak(p);
	fill_health(f->t, c, fh, oh);
	assert_int_equal(
		alloc_job_nodes(f->t, c->nodes, &ids, &job.n_nodes, &err), 0);
	job.node_ids = ids;
	d = alloc_decide(f->cx, p, l, &h, &job, 1000, &err);
	if (!d)
		fail_msg("%s: %s", c->name, err.text);
	if (d->action != c->action) {
		print_message("# action %s, want %s\n",
			      fwd_action_name(d->action),
			      fwd_action_name(c->action));
		ok = false;
	}
	if (d->n_f != c->n_f) {
		print_message("# n_f %u, want %u\n", d->n_f, c->n_f);
		ok = false;
	}
	if (d->s != c->s) {
		print_message("# s %u, want %u\n", d->s, c->s);
		ok = false;
	}
	join_forwarders(d, buf, sizeof(buf));
	if (c->forwarders && strcmp(buf, c->forwarders)) {
		print_message("# forwarders '%s', want '%s'\n", buf,
			      c->forwarders);
		ok = false;
	}
	join_mapping(d, buf, sizeof(buf));
	if (c->mapping && strcmp(buf, c->mapping)) {
		print_message("# mapping '%s', want '%s'\n", buf, c->mapping);
		ok = false;
	}
	if (c->reason && !has_reason(d, c->reason)) {
		print_message("# no reason containing '%s'\n", c->reason);
		ok = false;
	}
	/* The blocks cover the job exactly once, in order. */
	for (size_t k = 0; k < d->n_blocks; k++) {
		if (d->blocks[k].first != sum)
			ok = false;
		sum += d->blocks[k].count;
	}
	if (sum != job.n_nodes) {
		print_message("# blocks cover %zu of %zu nodes\n", sum,
			      job.n_nodes);
		ok = false;
	}
	if (!ok)
		dump_reasons(d);
	alloc_decision_destroy(d);
	alloc_ledger_destroy(l);
	free(ids);
	policy_destroy(p);
	assert_true(ok);
}

/* ---- other behaviours ------------------------------------------------- */

static struct alloc_decision *
decide_simple(struct fix *f, const struct policy *p,
	      const struct alloc_ledger *l, const char *id, const char *nodes,
	      const struct alloc_profile *pr, uint32_t **ids)
{
	struct alloc_job job = {.job_id = id,
				.user = "u",
				.nodes = nodes,
				.request = FWD_REQ_AUTO,
				.profile = pr};
	struct alloc_decision *d;
	fwd_error_t err;

	assert_int_equal(alloc_job_nodes(f->t, nodes, ids, &job.n_nodes, &err),
			 0);
	job.node_ids = *ids;
	d = alloc_decide(f->cx, p, l, NULL, &job, 1000, &err);
	if (!d)
		fail_msg("%s", err.text);
	return d;
}

static void test_nodes_not_covered(void **state)
{
	struct fix *f = *state;
	static const struct {
		const char *nodes, *msg;
	} tab[] = {
		{"c[500-513]", "nodes: node c513 is not in the topology"},
		{"x1", "nodes: node x1 is not in the topology"},
		{"c[1-3],c2", "nodes: node c2 listed twice"},
		{"", "nodes: empty node list"},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		uint32_t *ids = NULL;
		size_t n;
		fwd_error_t err = {""};

		errno = 0;
		assert_int_equal(
			alloc_job_nodes(f->t, tab[i].nodes, &ids, &n, &err),
			-1);
		assert_int_equal(errno, EINVAL);
		assert_string_equal(err.text, tab[i].msg);
		assert_null(ids);
	}
}

static void test_determinism(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	char *a, *b;
	uint32_t *i1, *i2;
	struct alloc_decision *d1, *d2;

	alloc_ledger_set_last_release(l, 8, 50); /* fwd009 used recently */
	d1 = decide_simple(f, p, l, "7", "c[1-128]", &p_demanding, &i1);
	d2 = decide_simple(f, p, l, "7", "c[1-128]", &p_demanding, &i2);
	a = alloc_decision_to_json(d1, 0);
	b = alloc_decision_to_json(d2, 0);
	assert_string_equal(a, b);
	/* Least recent load first: fwd009 was released at 50, so it goes
	 * last among the g0 backups' first picks. */
	assert_string_equal(d1->forwarder_names[2], "fwd010");
	free(a);
	free(b);
	free(i1);
	free(i2);
	alloc_decision_destroy(d1);
	alloc_decision_destroy(d2);
	alloc_ledger_destroy(l);
	policy_destroy(p);
}

/*
 * A job run again for other nodes (requeued after a lost epilog, or its
 * prolog run by a second controller) while the ledger still holds its
 * entry: the entry maps nodes it no longer has, so it is decided again
 * for the nodes it has now (redecided, the old forwarders free for it);
 * for the same nodes (in any order) the held entry comes back as it is.
 * An entry that does not say its nodes is returned as before.
 */
static void test_requeue_other_nodes(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	struct alloc_decision *d, *same, *moved, *unknown;
	struct alloc_ledger_entry e;
	uint32_t *ids, *ids2, *ids3, *ids4;
	fwd_error_t err;

	d = decide_simple(f, p, l, "42", "c[1-128]", &p_demanding, &ids);
	assert_int_equal(d->action, FWD_ACT_SCALE);
	assert_false(d->redecided);
	/* the entry as the store loads it: with the rows' node lists */
	memset(&e, 0, sizeof(e));
	e.job_id = (char *)"42";
	e.forwarders = d->forwarders;
	e.private_fwd = d->private_fwd;
	e.n_forwarders = d->n_forwarders;
	e.action = d->action;
	e.n_nodes = 128;
	e.nodes = (char *)"c[65-128],c[1-64]";
	assert_int_equal(alloc_ledger_add(l, &e, &err), 0);

	same = decide_simple(f, p, l, "42", "c[1-128]", &p_demanding, &ids2);
	assert_false(same->redecided);
	assert_true(has_reason(same, "job already holds an allocation: "
				     "returning it"));
	assert_int_equal(same->n_forwarders, d->n_forwarders);

	moved = decide_simple(f, p, l, "42", "c[129-256]", &p_demanding, &ids3);
	assert_true(moved->redecided);
	assert_int_equal(moved->action, FWD_ACT_SCALE);
	assert_true(has_reason(moved, "job already holds an allocation for "
				      "other nodes (c[65-128],c[1-64])"));
	/* the new mapping covers the new nodes, with their defaults */
	assert_int_equal(strncmp(moved->mapping[0].nodes, "c[129", 5), 0);
	/* its own private forwarders were free for it again: the same
	 * first pick as the first decision */
	assert_string_equal(moved->forwarder_names[2], d->forwarder_names[2]);
	/* the ledger itself is unchanged (the caller rewrites it) */
	assert_non_null(alloc_ledger_find(l, "42"));
	assert_true(alloc_ledger_held_private(l, d->forwarders[2]));

	/* nodes unknown: returned as it is */
	alloc_ledger_release(l, "42", 0);
	e.nodes = NULL;
	assert_int_equal(alloc_ledger_add(l, &e, &err), 0);
	unknown =
		decide_simple(f, p, l, "42", "c[129-256]", &p_demanding, &ids4);
	assert_false(unknown->redecided);
	assert_true(has_reason(unknown, "job already holds an allocation: "
					"returning it"));

	free(ids);
	free(ids2);
	free(ids3);
	free(ids4);
	alloc_decision_destroy(d);
	alloc_decision_destroy(same);
	alloc_decision_destroy(moved);
	alloc_decision_destroy(unknown);
	alloc_ledger_destroy(l);
	policy_destroy(p);
}

/*
 * A forwarder's last release only moves later through
 * alloc_ledger_set_last_releases(): a read of the inventory older than a
 * release the ledger has applied since (the controller service reads it
 * once a second, the releases with every batch) leaves the newer time.
 */
static void test_last_releases_later_only(void **state)
{
	struct fix *f = *state;
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	double *when = calloc(f->t->n_forwarders, sizeof(*when));

	assert_non_null(l);
	assert_non_null(when);
	when[8] = 100;
	when[9] = 40;
	alloc_ledger_set_last_releases(l, when);
	assert_true(alloc_ledger_last_release(l, 8) == 100);
	assert_true(alloc_ledger_last_release(l, 9) == 40);
	alloc_ledger_set_last_release(l, 8, 300); /* a release applied since */
	when[8] = 200;				  /* the older read */
	when[9] = 0;				  /* none recorded */
	alloc_ledger_set_last_releases(l, when);
	assert_true(alloc_ledger_last_release(l, 8) == 300);
	assert_true(alloc_ledger_last_release(l, 9) == 40);
	when[8] = 400;
	alloc_ledger_set_last_releases(l, when);
	assert_true(alloc_ledger_last_release(l, 8) == 400);
	free(when);
	alloc_ledger_destroy(l);
}

static void test_ledger_idempotent(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	struct alloc_decision *d, *again, *next;
	uint32_t *ids, *ids2, *ids3;
	fwd_error_t err;

	d = decide_simple(f, p, l, "42", "c[1-128]", &p_demanding, &ids);
	assert_int_equal(d->action, FWD_ACT_SCALE);
	assert_int_equal(alloc_ledger_acquire(l, d, 128, 1000, &err), 0);
	assert_int_equal(alloc_ledger_acquire(l, d, 128, 1001, &err), 0);
	assert_int_equal(alloc_ledger_count(l), 1);
	assert_true(alloc_ledger_held_private(l, 8));  /* fwd009 */
	assert_false(alloc_ledger_held_private(l, 0)); /* fwd001 shared */

	/* Deciding again returns the existing allocation. */
	again = decide_simple(f, p, l, "42", "c[1-128]", &p_demanding, &ids2);
	assert_int_equal(again->action, FWD_ACT_SCALE);
	assert_int_equal(again->n_forwarders, 6);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(again->forwarders[i], d->forwarders[i]);
	for (size_t i = 0; i < d->n_mapping; i++)
		assert_string_equal(again->mapping[i].nodes,
				    d->mapping[i].nodes);
	assert_true(has_reason(again, "job already holds an allocation"));

	/* The next job cannot get the private forwarders. */
	next = decide_simple(f, p, l, "43", "c[129-256]", &p_demanding, &ids3);
	assert_int_equal(next->action, FWD_ACT_SCALE);
	assert_string_equal(next->forwarder_names[2], "fwd013");
	/* A conflicting acquire is refused, not silently doubled. */
	{
		struct alloc_ledger_entry e = {
			.job_id = (char *)"99",
			.forwarders = d->forwarders + 2,
			.private_fwd = d->private_fwd + 2,
			.n_forwarders = 1,
		};

		errno = 0;
		assert_int_equal(alloc_ledger_add(l, &e, &err), -1);
		assert_int_equal(errno, EBUSY);
		assert_string_equal(err.text,
				    "job 99: forwarder fwd009 is already "
				    "held privately by job 42");
	}

	assert_int_equal(alloc_ledger_release(l, "42", 2000), 1);
	assert_int_equal(alloc_ledger_release(l, "42", 3000), 0);
	assert_int_equal(alloc_ledger_count(l), 0);
	assert_false(alloc_ledger_held_private(l, 8));
	assert_true(alloc_ledger_last_release(l, 8) == 2000);
	assert_true(alloc_ledger_find(l, "42") == NULL);

	free(ids);
	free(ids2);
	free(ids3);
	alloc_decision_destroy(d);
	alloc_decision_destroy(again);
	alloc_decision_destroy(next);
	alloc_ledger_destroy(l);
	policy_destroy(p);
}

static void test_shadow_acquire_holds_defaults(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	struct alloc_job job = {.job_id = "s1",
				.nodes = "c[1-128]",
				.request = FWD_REQ_SHADOW,
				.profile = &p_demanding};
	const struct alloc_ledger_entry *e;
	struct alloc_decision *d;
	uint32_t *ids;
	fwd_error_t err;

	assert_int_equal(
		alloc_job_nodes(f->t, job.nodes, &ids, &job.n_nodes, &err), 0);
	job.node_ids = ids;
	d = alloc_decide(f->cx, p, l, NULL, &job, 0, &err);
	assert_non_null(d);
	assert_int_equal(d->action, FWD_ACT_SHADOW);
	assert_int_equal(d->n_forwarders, 6);
	assert_int_equal(alloc_ledger_acquire(l, d, job.n_nodes, 0, &err), 0);
	e = alloc_ledger_find(l, "s1");
	assert_non_null(e);
	assert_int_equal(e->n_forwarders, 2);
	assert_false(e->private_fwd[0]);
	assert_false(alloc_ledger_held_private(l, 8));
	free(ids);
	alloc_decision_destroy(d);
	alloc_ledger_destroy(l);
	policy_destroy(p);
}

static void test_batch_contention(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	/* B measured a large gain from more forwarders; A a smaller one,
	 * enough to take 2 pool forwarders when alone (4 forwarders: 3.63
	 * GB/s in log2 k between its points, 631 MB/s above its default
	 * mapping, more than the online threshold's cost at a half-used
	 * pool). */
	struct alloc_bw_point bw_a[] = {{2, 3.0e9}, {6, 4.0e9}};
	struct alloc_bw_point bw_b[] = {{2, 3.0e9}, {6, 11e9}};
	struct alloc_profile pa = p_demanding, pb = p_demanding;
	struct alloc_job jobs[2] = {
		{.job_id = "A",
		 .nodes = "c[1-128]",
		 .request = FWD_REQ_AUTO,
		 .profile = &pa},
		{.job_id = "B",
		 .nodes = "c[257-384]",
		 .request = FWD_REQ_AUTO,
		 .profile = &pb},
	};
	struct alloc_decision *out[2];
	fwd_error_t err;
	uint32_t *ids[2];

	pa.bw = bw_a;
	pa.n_bw = 2;
	pb.bw = bw_b;
	pb.n_bw = 2;
	/* Leave 4 idle above the reserve of 4: room for one job's extras. */
	p->decision.caps.max_pool_share = 1.0;
	{
		const struct dcase c = {
			.ledger = {{"h1",
				    {"fwd009", "fwd010", "fwd011", "fwd012"},
				    true},
				   {"h2",
				    {"fwd013", "fwd014", "fwd015", "fwd016"},
				    true}}};

		alloc_ledger_destroy(l);
		l = fill_ledger(f->t, &c);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(alloc_job_nodes(f->t, jobs[i].nodes, &ids[i],
						 &jobs[i].n_nodes, &err),
				 0);
		jobs[i].node_ids = ids[i];
	}
	assert_int_equal(
		alloc_decide_batch(f->cx, p, l, NULL, jobs, 2, 10, out, &err),
		0);
	assert_int_equal(out[1]->action, FWD_ACT_SCALE);
	assert_int_equal(out[1]->n_forwarders, 6);
	assert_int_equal(out[0]->action, FWD_ACT_REFUSED);
	assert_true(has_reason(out[0],
			       "pool contention: the batch's knapsack over 2 "
			       "jobs with a curve chose otherwise (expected "
			       "gain 631MB/s); alone it would get 2 pool "
			       "forwarders, got 0"));
	assert_int_equal(alloc_ledger_count(l), 2); /* not modified */
	alloc_decision_destroy(out[0]);
	alloc_decision_destroy(out[1]);

	/* First come, first served: no knapsack; A, first, takes its 2
	 * extras against the online threshold, B the 2 left above the
	 * reserve (alone it would take 4). */
	p->decision.contention = POLICY_CONTENTION_FCFS;
	assert_int_equal(
		alloc_decide_batch(f->cx, p, l, NULL, jobs, 2, 10, out, &err),
		0);
	assert_int_equal(out[0]->action, FWD_ACT_SCALE);
	assert_int_equal(out[0]->n_forwarders, 4);
	assert_int_equal(out[1]->action, FWD_ACT_SCALE);
	assert_int_equal(out[1]->n_forwarders, 4);
	assert_true(has_reason(out[1], "ranked 2 of 2 (first come, first "
				       "served"));
	alloc_decision_destroy(out[0]);
	alloc_decision_destroy(out[1]);
	free(ids[0]);
	free(ids[1]);
	alloc_ledger_destroy(l);
	policy_destroy(p);
}

static void test_json_fields(void **state)
{
	static const char *const want[] = {
		"job_id",  "action",	    "reasons",	  "n_f",
		"s",	   "forwarders",    "mapping",	  "excluded_osts",
		"profile", "policy_digest", "elapsed_us",
	};
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	enum fwd_health fh[24] = {0}, oh[4] = {0};
	struct alloc_health h = {fh, oh};
	struct alloc_job job = {.job_id = "5",
				.nodes = "c[1-128]",
				.request = FWD_REQ_AUTO,
				.profile = &p_demanding};
	struct alloc_decision *d;
	json_t *o, *m;
	const char *key;
	json_t *v;
	size_t i = 0;
	uint32_t *ids;
	fwd_error_t err;
	char *s;

	oh[2] = FWD_HEALTH_EXCLUDED;
	assert_int_equal(
		alloc_job_nodes(f->t, job.nodes, &ids, &job.n_nodes, &err), 0);
	job.node_ids = ids;
	d = alloc_decide(f->cx, p, NULL, &h, &job, 0, &err);
	assert_non_null(d);
	d->elapsed_us = 17;
	s = alloc_decision_to_json(d, 0);
	assert_non_null(s);
	o = json_loads(s, 0, NULL);
	assert_non_null(o);
	json_object_foreach (o, key, v) {
		assert_true(i < sizeof(want) / sizeof(want[0]));
		assert_string_equal(key, want[i]);
		i++;
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
	assert_string_equal(json_string_value(json_object_get(o, "action")),
			    "scale");
	assert_int_equal(json_integer_value(json_object_get(o, "n_f")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "s")), 6);
	assert_int_equal(json_integer_value(json_object_get(o, "elapsed_us")),
			 17);
	assert_string_equal(
		json_string_value(json_object_get(o, "policy_digest")),
		"defaults");
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(o, "excluded_osts"), 0)),
			    "ost2");
	m = json_array_get(json_object_get(o, "mapping"), 0);
	assert_int_equal(json_object_size(m), 2);
	assert_string_equal(json_string_value(json_object_get(m, "nodes")),
			    "c[1-22]");
	assert_string_equal(json_string_value(json_object_get(m, "forwarder")),
			    "fwd001");
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(o, "profile"), "io_nodes")),
			 128);
	json_decref(o);
	free(s);
	alloc_decision_destroy(d);

	/* No history: "profile" is null. */
	job.profile = NULL;
	d = alloc_decide(f->cx, p, NULL, NULL, &job, 0, &err);
	s = alloc_decision_to_json(d, 0);
	o = json_loads(s, 0, NULL);
	assert_true(json_is_null(json_object_get(o, "profile")));
	json_decref(o);
	free(s);
	alloc_decision_destroy(d);
	free(ids);
	policy_destroy(p);
}

/* Ranged rendering of scattered and zero-padded names. */
static void test_render_runs(void **state)
{
	struct topology *t = topo_create();
	struct policy *p = policy_defaults();
	struct topo_forwarder fw = {.name = (char *)"f1", .bandwidth_bps = 1e9};
	struct alloc_job job = {.job_id = "1",
				.nodes = "n[007-012],m5,n[098-101]"};
	struct alloc_decision *d;
	struct alloc_ctx *cx;
	fwd_error_t err;
	uint32_t *ids;

	assert_int_equal(topo_add_forwarder(t, &fw, &err), 0);
	assert_int_equal(topo_add_compute_nodes(t, "n[001-120],m[1-9]", &err),
			 0);
	assert_int_equal(topo_add_mapping(t, "n[001-120],m[1-9]", 0, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	cx = alloc_ctx_create(t, &err);
	assert_non_null(cx);
	assert_int_equal(
		alloc_job_nodes(t, job.nodes, &ids, &job.n_nodes, &err), 0);
	job.node_ids = ids;
	d = alloc_decide(cx, p, NULL, NULL, &job, 0, &err);
	assert_non_null(d);
	assert_int_equal(d->n_mapping, 1);
	assert_string_equal(d->mapping[0].nodes, "n[007-012],m5,n[098-101]");
	/* A caller that neither stores nor shows the mapping (the
	 * simulator) gets the same decision without it. */
	job.no_render = true;
	{
		struct alloc_decision *q =
			alloc_decide(cx, p, NULL, NULL, &job, 0, &err);

		assert_non_null(q);
		assert_int_equal(q->n_mapping, 0);
		assert_null(q->mapping);
		assert_null(q->forwarder_names);
		assert_int_equal(q->action, d->action);
		assert_int_equal(q->n_forwarders, d->n_forwarders);
		assert_memory_equal(q->forwarders, d->forwarders,
				    d->n_forwarders * sizeof(*d->forwarders));
		assert_int_equal(q->n_blocks, d->n_blocks);
		for (size_t i = 0; i < d->n_blocks; i++) {
			assert_int_equal(q->blocks[i].first,
					 d->blocks[i].first);
			assert_int_equal(q->blocks[i].count,
					 d->blocks[i].count);
			assert_int_equal(q->blocks[i].forwarder,
					 d->blocks[i].forwarder);
		}
		alloc_decision_destroy(q);
	}
	free(ids);
	alloc_decision_destroy(d);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	policy_destroy(p);
}

/* ---- JSON inputs ------------------------------------------------------ */

static void test_jobfile(void **state)
{
	struct fix *f = *state;
	const char *good =
		"{\"job_id\": 123, \"user\": \"alice\", \"nodes\": "
		"\"c[1-128]\", \"request\": \"scale\", \"profile\": "
		"{\"io_volume_bytes\": 107374182400, \"io_nodes\": 128, "
		"\"node_bandwidth_bps\": 1e8, \"io_mode\": \"N-1\", "
		"\"bandwidth_by_forwarders\": {\"6\": 9e9, \"2\": 4e9}}}";
	struct alloc_jobfile *j;
	fwd_error_t err;

	j = alloc_jobfile_parse(f->t, good, "job.json", &err);
	if (!j)
		fail_msg("%s", err.text);
	assert_string_equal(j->job.job_id, "123");
	assert_int_equal(j->job.n_nodes, 128);
	assert_int_equal(j->job.request, FWD_REQ_SCALE);
	assert_non_null(j->job.profile);
	assert_int_equal(j->job.profile->io_mode, FWD_IO_N_1);
	assert_int_equal(j->job.profile->n_bw, 2);
	assert_int_equal(j->job.profile->bw[0].k, 2);
	alloc_jobfile_destroy(j);
}

static void test_input_errors(void **state)
{
	struct fix *f = *state;
	static const struct {
		int kind; /* 0 job, 1 state, 2 health */
		const char *text, *msg;
	} tab[] = {
		{0, "{\"job_id\": \"1\", \"nodes\": \"c[1-2],c999\"}",
		 "job.json: nodes: node c999 is not in the topology"},
		{0, "{\"nodes\": \"c1\"}", "job.json: job_id: missing"},
		{0, "{\"job_id\": \"1\", \"nodes\": 5}",
		 "job.json: nodes: 5: must be a string"},
		{0,
		 "{\"job_id\": \"1\", \"nodes\": \"c1\", \"request\": "
		 "\"more\"}",
		 "job.json: request: \"more\": must be one of auto, scale, "
		 "isolate, off, shadow"},
		{0,
		 "{\"job_id\": \"1\", \"nodes\": \"c1\", \"profile\": "
		 "{\"iops\": -3}}",
		 "job.json: profile.iops: -3: must not be negative"},
		{0,
		 "{\"job_id\": \"1\", \"nodes\": \"c1\", \"profile\": "
		 "{\"io_mode\": \"N-2\"}}",
		 "job.json: profile.io_mode: \"N-2\": must be one of N-N, "
		 "N-1, N-M, 1-1"},
		{0,
		 "{\"job_id\": \"1\", \"nodes\": \"c1\", \"profile\": "
		 "{\"io_nodes\": 1.5}}",
		 "job.json: profile.io_nodes: 1.5: must be an integer"},
		{0,
		 "{\"job_id\": \"1\", \"nodes\": \"c1\", \"profile\": "
		 "{\"bandwidth_by_forwarders\": {\"0\": 1}}}",
		 "job.json: profile.bandwidth_by_forwarders.0: the key must "
		 "be a forwarder count (a positive integer)"},
		{0, "{\"job_id\": \"1\", \"nodes\": \"c1\", \"nodez\": 1}",
		 "job.json: nodez: unknown key"},
		{0,
		 "{\"job_id\": \"1\", \"nodes\": \"c1\", \"profile\": "
		 "{\"io_mode\": \"N-N\", \"mdopz\": 1}}",
		 "job.json: profile.mdopz: unknown key"},
		{0, "[1]", "job.json: (top level): must be a JSON object"},
		{0, "{\"job_id\": ",
		 "job.json:1:11: unexpected token near end of file"},
		{1, "[{\"job_id\": \"9\", \"forwarders\": [\"fwd999\"]}]",
		 "state.json: [0].forwarders[0]: \"fwd999\": unknown "
		 "forwarder"},
		{1,
		 "[{\"job_id\": \"9\", \"forwarders\": [\"fwd001\"], "
		 "\"mdops\": -1}]",
		 "state.json: [0].mdops: -1: must not be negative"},
		{1,
		 "[{\"job_id\": \"9\", \"forwarders\": [\"fwd001\"], "
		 "\"io_mode\": \"X\"}]",
		 "state.json: [0].io_mode: \"X\": must be one of N-N, N-1, "
		 "N-M, 1-1"},
		{1, "[{\"job_id\": \"9\", \"forwarders\": \"fwd001\"}]",
		 "state.json: [0].forwarders: \"fwd001\": must be an array "
		 "of forwarder names"},
		{1,
		 "[{\"job_id\": \"9\", \"forwarders\": [\"fwd009\"], "
		 "\"private\": true}, {\"job_id\": \"10\", "
		 "\"forwarders\": [\"fwd009\"]}]",
		 "state.json: [1]: job 10: forwarder fwd009 is already held "
		 "privately by job 9"},
		{1,
		 "[{\"job_id\": \"9\", \"forwarders\": [], \"private\": "
		 "1}]",
		 "state.json: [0].private: 1: must be true or false"},
		{2,
		 "[{\"kind\": \"forwarder\", \"name\": \"fwd999\", "
		 "\"state\": \"ok\"}]",
		 "health.json: [0].name: \"fwd999\": unknown forwarder"},
		{2,
		 "[{\"kind\": \"ost\", \"name\": \"ost1\", \"state\": "
		 "\"broken\"}]",
		 "health.json: [0].state: \"broken\": must be ok, suspect or "
		 "excluded"},
		{2,
		 "[{\"kind\": \"disk\", \"name\": \"ost1\", \"state\": "
		 "\"ok\"}]",
		 "health.json: [0].kind: \"disk\": must be forwarder or ost"},
		{2,
		 "[{\"kind\": \"ost\", \"name\": \"ost1\", \"state\": "
		 "\"ok\"}, {\"kind\": \"ost\", \"name\": \"ost1\", "
		 "\"state\": \"excluded\"}]",
		 "health.json: [1].name: \"ost1\": listed twice"},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		fwd_error_t err = {""};
		int rc;

		if (tab[i].kind == 0) {
			struct alloc_jobfile *j = alloc_jobfile_parse(
				f->t, tab[i].text, "job.json", &err);

			rc = j ? 0 : -1;
			alloc_jobfile_destroy(j);
		} else if (tab[i].kind == 1) {
			struct alloc_ledger *l = alloc_ledger_create(f->t);

			rc = alloc_state_parse(l, tab[i].text, "state.json",
					       &err);
			alloc_ledger_destroy(l);
		} else {
			struct alloc_healthfile *h = alloc_healthfile_parse(
				f->t, tab[i].text, "health.json", &err);

			rc = h ? 0 : -1;
			alloc_healthfile_destroy(h);
		}
		if (rc != -1 ||
		    strncmp(err.text, tab[i].msg, strlen(tab[i].msg)))
			fail_msg("case %zu: rc %d, error '%s', want '%s'", i,
				 rc, err.text, tab[i].msg);
	}
}

/* Requests that fit the pool together: no contention, both scaled. */
static void test_batch_no_contention(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_job jobs[2] = {
		{.job_id = "A",
		 .nodes = "c[1-128]",
		 .request = FWD_REQ_AUTO,
		 .profile = &p_demanding},
		{.job_id = "B",
		 .nodes = "c[257-384]",
		 .request = FWD_REQ_AUTO,
		 .profile = &p_demanding},
	};
	struct alloc_decision *out[2];
	uint32_t *ids[2];
	fwd_error_t err;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(alloc_job_nodes(f->t, jobs[i].nodes, &ids[i],
						 &jobs[i].n_nodes, &err),
				 0);
		jobs[i].node_ids = ids[i];
	}
	assert_int_equal(alloc_decide_batch(f->cx, p, NULL, NULL, jobs, 2, 10,
					    out, &err),
			 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(out[i]->action, FWD_ACT_SCALE);
		assert_int_equal(out[i]->n_forwarders, 6);
		assert_false(has_reason(out[i], "pool contention"));
	}
	/* They do not share a private forwarder. */
	for (size_t a = 2; a < 6; a++)
		for (size_t b = 2; b < 6; b++)
			assert_int_not_equal(out[0]->forwarders[a],
					     out[1]->forwarders[b]);
	/* B's nodes are in g1: it got g1 backups. */
	assert_string_equal(out[1]->forwarder_names[2], "fwd017");
	alloc_decision_destroy(out[0]);
	alloc_decision_destroy(out[1]);
	free(ids[0]);
	free(ids[1]);
	policy_destroy(p);
}

/* An allocation loaded from STATE.json (no blocks) is returned as is. */
static void test_existing_from_state(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	struct alloc_decision *d;
	fwd_error_t err;
	uint32_t *ids;

	assert_int_equal(
		alloc_state_parse(l,
				  "[{\"job_id\": \"77\", \"forwarders\": "
				  "[\"fwd001\", \"fwd020\"], \"private\": "
				  "false, \"private_forwarders\": "
				  "[\"fwd020\"], \"action\": \"scale\"}]",
				  "state.json", &err),
		0);
	d = decide_simple(f, p, l, "77", "c[1-64]", &p_demanding, &ids);
	assert_int_equal(d->action, FWD_ACT_SCALE);
	assert_int_equal(d->n_mapping, 2);
	assert_string_equal(d->mapping[0].nodes, "c[1-32]");
	assert_string_equal(d->forwarder_names[1], "fwd020");
	assert_string_equal(d->mapping[1].nodes, "c[33-64]");
	assert_true(d->private_fwd[1]);
	free(ids);
	alloc_decision_destroy(d);

	/* The same job id with its defaults: the FFM blocks. */
	assert_int_equal(alloc_state_parse(l,
					   "[{\"job_id\": \"78\", "
					   "\"forwarders\": [\"fwd002\", "
					   "\"fwd003\"]}]",
					   "state.json", &err),
			 0);
	d = decide_simple(f, p, l, "78", "c[100-140]", NULL, &ids);
	assert_int_equal(d->action, FWD_ACT_DEFAULT);
	assert_string_equal(d->mapping[0].nodes, "c[100-128]");
	assert_string_equal(d->mapping[1].nodes, "c[129-140]");
	free(ids);
	alloc_decision_destroy(d);
	alloc_ledger_destroy(l);
	policy_destroy(p);
}

/* Inconsistent inputs are errors, not crashes. */
static void test_decide_errors(void **state)
{
	struct fix *f = *state;
	struct policy *p = policy_defaults();
	uint32_t bad_ids[] = {1, 9999};
	struct alloc_job job = {.job_id = "1",
				.node_ids = bad_ids,
				.n_nodes = 2,
				.request = FWD_REQ_AUTO};
	struct topology *other = make_topo();
	struct alloc_ledger *ol = alloc_ledger_create(other);
	fwd_error_t err;

	errno = 0;
	assert_null(alloc_decide(f->cx, p, NULL, NULL, &job, 0, &err));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text,
			    "job 1: node id 9999 outside the topology (512 "
			    "nodes)");
	job.n_nodes = 0;
	assert_null(alloc_decide(f->cx, p, NULL, NULL, &job, 0, &err));
	assert_string_equal(err.text, "job 1: no nodes");
	job.n_nodes = 1;
	job.job_id = "";
	assert_null(alloc_decide(f->cx, p, NULL, NULL, &job, 0, &err));
	assert_string_equal(err.text, "job_id: missing or empty");
	job.job_id = "1";
	assert_null(alloc_decide(f->cx, p, ol, NULL, &job, 0, &err));
	assert_string_equal(err.text, "ledger belongs to another topology");
	alloc_ledger_destroy(ol);
	topo_destroy(other);
	policy_destroy(p);
}

static void test_state_roundtrip(void **state)
{
	struct fix *f = *state;
	struct alloc_ledger *l = alloc_ledger_create(f->t);
	struct alloc_ledger *l2 = alloc_ledger_create(f->t);
	const struct alloc_ledger_entry *e;
	fwd_error_t err;
	char *s, *s2;

	assert_int_equal(
		alloc_state_parse(
			l,
			"{\"allocations\": [{\"job_id\": \"7\", "
			"\"forwarders\": [\"fwd001\", \"fwd009\"], "
			"\"private\": false, \"private_forwarders\": "
			"[\"fwd009\"], \"io_mode\": \"N-1\", \"mdops\": 5, "
			"\"bandwidth_bps\": 1e9, \"iops\": 10, "
			"\"n_nodes\": 64}], \"last_release\": {\"fwd010\": "
			"123}}",
			"state.json", &err),
		0);
	e = alloc_ledger_find(l, "7");
	assert_non_null(e);
	assert_false(e->private_fwd[0]);
	assert_true(e->private_fwd[1]);
	assert_int_equal(e->io_mode, FWD_IO_N_1);
	assert_true(alloc_ledger_last_release(l, 9) == 123);
	s = alloc_state_to_json(l, 0);
	assert_non_null(s);
	assert_int_equal(alloc_state_parse(l2, s, "roundtrip", &err), 0);
	s2 = alloc_state_to_json(l2, 0);
	assert_string_equal(s, s2);
	free(s);
	free(s2);
	alloc_ledger_destroy(l);
	alloc_ledger_destroy(l2);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test_setup_teardown(test_nodes_not_covered, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_determinism, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_requeue_other_nodes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ledger_idempotent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_last_releases_later_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_shadow_acquire_holds_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_contention, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_json_fields, setup,
						teardown),
		cmocka_unit_test(test_render_runs),
		cmocka_unit_test_setup_teardown(test_jobfile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_no_contention, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_existing_from_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_decide_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state_roundtrip, setup,
						teardown),
	};
	const size_t n_cases = sizeof(cases) / sizeof(cases[0]);
	const size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest *tests = calloc(n_cases + n_fixed, sizeof(*tests));
	int rc;

	if (!tests)
		return 1;
	/* One TAP line per table row, named after it. */
	for (size_t i = 0; i < n_cases; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = test_case;
		tests[i].setup_func = setup;
		tests[i].teardown_func = teardown;
		tests[i].initial_state = (void *)&cases[i];
	}
	memcpy(tests + n_cases, fixed, sizeof(fixed));
	rc = _cmocka_run_group_tests("decide", tests, n_cases + n_fixed, NULL,
				     NULL);
	free(tests);
	return rc;
}
