/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decision time on a TaihuLight-sized machine: 40,960 compute nodes, 240
 * forwarders of 2.5 GB/s (80 in service at 512:1, 160 backup), 1,000
 * running allocations in the ledger.  Prints median and p99 of what the
 * prolog pays per job -- the job's node list resolved to node ids, the
 * decision, its rendered mapping -- for a 40,960-node and a 512-node job
 * (the big job against the small one), decisions per second, the
 * node-list conversion against the host-by-host path and the bare
 * libslurm parse, the per-topology index against the topology load, and
 * one batch decision of 16 and of 256 jobs of 128 nodes (every other one
 * with a bandwidth curve, so that the batch's knapsack arbitrates them)
 * against the same jobs decided one at a time (bench/batch.c).
 *
 * Uses etc/topology-taihulight.yaml when it loads (argv[1] overrides the
 * path); otherwise builds the same shape with the topology builder.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocator/decide.h"
#include "allocator/ledger.h"
#include "bench/batch.h"
#include "bench/report.h"
#include "common/array.h"
#include "common/slurm_compat.h"
#include "common/timeutil.h"
#include "policies/policy.h"
#include "topology/topology.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#define GiB (1024ULL * 1024 * 1024)

static struct topology *build_taihulight(void)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[32], group[16];

	if (!t)
		return NULL;
	for (int i = 0; i < 240; i++) {
		bool svc = i < 80;
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 2.5e9,
			.group = group,
			.role = svc ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};

		snprintf(name, sizeof(name), "fwd%03d", i + 1);
		/* 8 cabinets: 10 service and 20 backup forwarders each. */
		snprintf(group, sizeof(group), "cab%d",
			 svc ? i / 10 : (i - 80) / 20);
		if (topo_add_forwarder(t, &f, &err) < 0)
			goto fail;
	}
	if (topo_add_compute_nodes(t, "c[1-40960]", &err) < 0 ||
	    topo_map_per_forwarder(t, 512, &err) < 0 ||
	    topo_finalize(t, &err) < 0)
		goto fail;
	return t;
fail:
	fprintf(stderr, "bench_decide: topology: %s\n", err.text);
	topo_destroy(t);
	return NULL;
}

/* 1,000 running jobs of 32 nodes sharing the service forwarders, every
 * 7th with N-1 I/O and every 11th metadata-heavy, and 40 of them holding a
 * backup privately; backups released at scattered times. */
static int fill_ledger(struct alloc_ledger *l, const struct topology *t)
{
	uint32_t *svc = malloc(t->n_forwarders * sizeof(*svc));
	uint32_t *bak = malloc(t->n_forwarders * sizeof(*bak));
	size_t n_svc = 0, n_bak = 0;
	fwd_error_t err;
	int rv = -1;

	if (!svc || !bak)
		goto out;
	for (uint32_t f = 0; f < t->n_forwarders; f++) {
		if (t->forwarders[f].role == TOPO_ROLE_SERVICE)
			svc[n_svc++] = f;
		else
			bak[n_bak++] = f;
	}
	if (!n_svc || n_bak < 160)
		goto out;
	for (int i = 0; i < 1000; i++) {
		uint32_t fw[1];
		bool pv[1];
		char id[16];
		struct alloc_ledger_entry e = {
			.job_id = id,
			.forwarders = fw,
			.private_fwd = pv,
			.n_forwarders = 1,
			.n_nodes = 32,
			.io_mode = i % 7 == 0 ? FWD_IO_N_1 : FWD_IO_N_N,
			.mdops = i % 11 == 0 ? 500 : 20,
			.bandwidth_bps = 1e8,
			.iops = 100,
		};

		snprintf(id, sizeof(id), "%d", 100000 + i);
		pv[0] = i < 40;
		fw[0] = i < 40 ? bak[(size_t)i * 4 % n_bak] : svc[i % n_svc];
		if (alloc_ledger_add(l, &e, &err) < 0) {
			fprintf(stderr, "bench_decide: ledger: %s\n", err.text);
			goto out;
		}
	}
	for (size_t k = 0; k < n_bak; k++)
		alloc_ledger_set_last_release(l, bak[k],
					      (double)(k * 37 % 101));
	rv = 0;
out:
	free(svc);
	free(bak);
	return rv;
}

struct timing {
	double p50, p99, per_s;
	size_t n_forwarders;
	const char *action;
};

static double pct(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(double), fwd_cmp_double);
	return v[(size_t)(n * q)];
}

/* What the prolog pays per job: the job's node list resolved to node ids
 * (alloc_ctx_job_nodes()), the decision with its rendered mapping, and
 * freeing both. */
static int run(const struct alloc_ctx *cx, const struct policy *p,
	       const struct alloc_ledger *l, const char *nodes,
	       const struct alloc_profile *pr, int iters, struct timing *out)
{
	struct alloc_job job = {.job_id = "bench",
				.user = "u",
				.nodes = nodes,
				.request = FWD_REQ_AUTO,
				.profile = pr};
	double *samples = malloc((size_t)iters * sizeof(double));
	double t0, total = 0;
	fwd_error_t err;

	if (!samples)
		return -1;
	for (int i = 0; i < iters; i++) {
		struct alloc_decision *d;
		uint32_t *ids = NULL;

		t0 = fwd_clock_mono();
		if (alloc_ctx_job_nodes(cx, nodes, &ids, &job.n_nodes, &err) <
		    0) {
			fprintf(stderr, "bench_decide: %s\n", err.text);
			free(samples);
			return -1;
		}
		job.node_ids = ids;
		d = alloc_decide(cx, p, l, NULL, &job, 1e9, &err);
		if (d) {
			out->n_forwarders = d->n_forwarders;
			out->action = fwd_action_name(d->action);
		}
		alloc_decision_destroy(d);
		free(ids);
		samples[i] = (fwd_clock_mono() - t0) * 1e6;
		total += samples[i];
		if (!d) {
			fprintf(stderr, "bench_decide: %s\n", err.text);
			free(samples);
			return -1;
		}
	}
	out->p50 = pct(samples, iters, 0.5);
	out->p99 = pct(samples, iters, 0.99);
	out->per_s = iters / total * 1e6;
	free(samples);
	return 0;
}

/* Median time of f(arg) over iters runs, in microseconds. */
static double median_us(int (*f)(const void *, const char *), const void *a,
			const char *nodes, int iters)
{
	double *v = malloc((size_t)iters * sizeof(double)), m = -1;

	if (!v)
		return -1;
	for (int i = 0; i < iters; i++) {
		double t0 = fwd_clock_mono();

		if (f(a, nodes) < 0)
			goto out;
		v[i] = (fwd_clock_mono() - t0) * 1e6;
	}
	m = pct(v, iters, 0.5);
out:
	free(v);
	return m;
}

/* The bare libslurm parse of the node list (create, count, destroy). */
static int bare_parse(const void *unused, const char *nodes)
{
	fwd_hostlist_t hl = slurm_hostlist_create(nodes);
	int n = hl ? slurm_hostlist_count(hl) : -1;

	(void)unused;
	if (hl)
		slurm_hostlist_destroy(hl);
	return n > 0 ? 0 : -1;
}

/* The node list resolved host by host (libslurm shift + name lookup). */
static int per_host(const void *t, const char *nodes)
{
	uint32_t *ids;
	size_t n;
	fwd_error_t err;

	if (alloc_job_nodes(t, nodes, &ids, &n, &err) < 0)
		return -1;
	free(ids);
	return 0;
}

/* The node list through the allocator's index. */
static int indexed(const void *cx, const char *nodes)
{
	uint32_t *ids;
	size_t n;
	fwd_error_t err;

	if (alloc_ctx_job_nodes(cx, nodes, &ids, &n, &err) < 0)
		return -1;
	free(ids);
	return 0;
}

/* n jobs of 128 nodes side by side from c1, every other one with a
 * bandwidth curve, decided as one batch against the ledger (and one at a
 * time for the reference). */
static int run_batch(const struct alloc_ctx *cx, const struct policy *p,
		     const struct alloc_ledger *l, size_t n)
{
	static struct alloc_bw_point bw[] = {{1, 1.5e9, 5, 0},
					     {2, 2.8e9, 5, 0},
					     {4, 5e9, 5, 0},
					     {8, 7e9, 5, 0}};
	struct alloc_profile dfra = {
		.io_volume_bytes = 200 * GiB,
		.io_nodes = 128,
		.node_bandwidth_bps = 5e7,
		.peak_bandwidth_bps = 6.4e9,
		.iops = 100,
		.mdops = 50,
		.io_mode = FWD_IO_N_N,
		.runs = 5,
	};
	struct alloc_profile curve = dfra;
	struct alloc_job *jobs = calloc(n, sizeof(*jobs));
	uint32_t **ids = calloc(n, sizeof(*ids));
	char(*id)[16] = calloc(n, sizeof(*id));
	char(*nodes)[32] = calloc(n, sizeof(*nodes));
	fwd_error_t err;
	int rv = -1;

	curve.bw = bw;
	curve.n_bw = sizeof(bw) / sizeof(bw[0]);
	if (!jobs || !ids || !id || !nodes)
		goto out;
	for (size_t i = 0; i < n; i++) {
		snprintf(id[i], sizeof(id[i]), "b%zu", i);
		snprintf(nodes[i], sizeof(nodes[i]), "c[%zu-%zu]", 128 * i + 1,
			 128 * (i + 1));
		jobs[i] = (struct alloc_job){
			.job_id = id[i],
			.user = "u",
			.nodes = nodes[i],
			.request = FWD_REQ_AUTO,
			.profile = i % 2 ? &curve : &dfra,
		};
		if (alloc_ctx_job_nodes(cx, nodes[i], &ids[i], &jobs[i].n_nodes,
					&err) < 0) {
			fprintf(stderr, "bench_decide: %s\n", err.text);
			goto out;
		}
		jobs[i].node_ids = ids[i];
	}
	rv = bench_batch_figure("decide", cx, p, l, jobs, n, n > 64 ? 41 : 201);
out:
	for (size_t i = 0; ids && i < n; i++)
		free(ids[i]);
	free(ids);
	free(jobs);
	free(id);
	free(nodes);
	return rv;
}

int main(int argc, char **argv)
{
	const char *path =
		argc > 1 ? argv[1] : TOP_SRCDIR "/etc/topology-taihulight.yaml";
	/* Demanding: 40,960 I/O nodes at 5 MB/s -> S = 82 > N_f = 80, capped
	 * at 16 per job; a 512-node job at 50 MB/s -> S = 11. */
	struct alloc_profile big = {
		.io_volume_bytes = 4096 * GiB,
		.io_nodes = 40960,
		.node_bandwidth_bps = 5e6,
		.peak_bandwidth_bps = 2e11,
		.iops = 100,
		.mdops = 50,
		.io_mode = FWD_IO_N_N,
		.runs = 5,
	};
	struct alloc_profile small = {
		.io_volume_bytes = 200 * GiB,
		.io_nodes = 512,
		.node_bandwidth_bps = 5e7,
		.peak_bandwidth_bps = 2.5e9,
		.iops = 100,
		.mdops = 50,
		.io_mode = FWD_IO_N_N,
		.runs = 5,
	};
	struct policy *p = policy_defaults();
	struct alloc_ledger *l = NULL;
	struct alloc_ctx *cx = NULL;
	struct topology *t;
	const char *src = path;
	fwd_error_t err;
	double t0, load_us, ctx_us;
	int rc = 1;

	t0 = fwd_clock_mono() * 1e6;
	t = topo_load(path, &err);
	if (!t) {
		fprintf(stderr, "bench_decide: %s: %s; using the builder\n",
			path, err.text);
		src = "builder (same shape)";
		t = build_taihulight();
	}
	load_us = fwd_clock_mono() * 1e6 - t0;
	if (!p || !t)
		goto out;
	t0 = fwd_clock_mono() * 1e6;
	cx = alloc_ctx_create(t, &err);
	ctx_us = fwd_clock_mono() * 1e6 - t0;
	l = alloc_ledger_create(t);
	if (!cx || !l || fill_ledger(l, t) < 0)
		goto out;
	printf("topology: %s: %zu nodes, %zu forwarders\n", src, t->n_nodes,
	       t->n_forwarders);
	printf("ledger: %zu running allocations\n", alloc_ledger_count(l));
	{
		struct timing def, big_t, small_t;
		const char *bign = "c[1-40960]", *smalln = "c[20481-20992]";
		double shift_us, idx_us, bare_us, bare_small_us;

		if (run(cx, p, l, bign, &small, 1000, &def) < 0)
			goto out;
		/* Large jobs need the per-job cap lifted to show scaling. */
		p->decision.caps.max_forwarders_per_job = 240;
		if (run(cx, p, l, bign, &big, 1000, &big_t) < 0)
			goto out;
		p->decision.caps.max_forwarders_per_job = 16;
		if (run(cx, p, l, smalln, &small, 20000, &small_t) < 0)
			goto out;
		shift_us = median_us(per_host, t, bign, 21);
		idx_us = median_us(indexed, cx, bign, 201);
		bare_us = median_us(bare_parse, NULL, bign, 201);
		bare_small_us = median_us(bare_parse, NULL, smalln, 2001);
		printf("40,960-node job, default: %s, %zu forwarders; "
		       "scale: %s, %zu; 512-node job: %s, %zu\n",
		       def.action, def.n_forwarders, big_t.action,
		       big_t.n_forwarders, small_t.action,
		       small_t.n_forwarders);
		printf("(node-list conversion + decision + rendering + free, "
		       "per job)\n");
		bench_figure("decide", "40960-node job (default N_f 80), p50",
			     def.p50, "us", small_t.p50,
			     "512-node job, same path");
		bench_figure("decide", "40960-node job (default N_f 80), p99",
			     def.p99, "us", small_t.p99,
			     "512-node job, same path");
		bench_figure("decide", "40960-node job (scale), p50", big_t.p50,
			     "us", small_t.p50, "512-node job, same path");
		bench_figure("decide", "40960-node job (scale), p99", big_t.p99,
			     "us", small_t.p99, "512-node job, same path");
		bench_figure("decide", "512-node job (scale), p50", small_t.p50,
			     "us", bare_small_us,
			     "bare libslurm parse of its list");
		bench_figure("decide", "512-node job (scale), decisions/s",
			     small_t.per_s, "1/s", 0, "");
		bench_figure("decide", "40960-node list -> node ids", idx_us,
			     "us", shift_us, "host by host through libslurm");
		bench_figure("decide", "40960-node list, bare libslurm parse",
			     bare_us, "us", 0, "");
		bench_figure("decide", "allocator index (once per process)",
			     ctx_us, "us", load_us, "topology load");
		if (run_batch(cx, p, l, 16) < 0 || run_batch(cx, p, l, 256) < 0)
			goto out;
	}
	rc = 0;
out:
	alloc_ledger_destroy(l);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	policy_destroy(p);
	return rc;
}
