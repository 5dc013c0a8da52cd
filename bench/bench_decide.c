/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decision time on a TaihuLight-sized machine: 40,960 compute nodes, 240
 * forwarders of 2.5 GB/s (80 in service at 512:1, 160 backup), 1,000
 * running allocations in the ledger.  Prints median and p99 of
 * alloc_decide() (rendering of the mapping included) for a 40,960-node and
 * a 512-node job, decisions per second, and the one-off costs around it
 * (resolving the job's hostlist to node ids, the per-topology index).
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
#include "common/timeutil.h"
#include "policies/policy.h"
#include "topology/topology.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#define GiB (1024ULL * 1024 * 1024)

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

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

static int run(const char *label, const struct alloc_ctx *cx,
	       const struct policy *p, const struct alloc_ledger *l,
	       const struct topology *t, const char *nodes,
	       const struct alloc_profile *pr, int iters)
{
	struct alloc_job job = {.job_id = "bench",
				.user = "u",
				.nodes = nodes,
				.request = FWD_REQ_AUTO,
				.profile = pr};
	double *samples = malloc((size_t)iters * sizeof(double));
	double t0, parse_us, total = 0;
	struct alloc_decision *d = NULL;
	uint32_t *ids = NULL;
	fwd_error_t err;

	if (!samples)
		return -1;
	t0 = fwd_clock_mono() * 1e6;
	if (alloc_job_nodes(t, nodes, &ids, &job.n_nodes, &err) < 0) {
		fprintf(stderr, "bench_decide: %s\n", err.text);
		free(samples);
		return -1;
	}
	parse_us = fwd_clock_mono() * 1e6 - t0;
	job.node_ids = ids;
	for (int i = 0; i < iters; i++) {
		t0 = fwd_clock_mono() * 1e6;
		d = alloc_decide(cx, p, l, NULL, &job, 1e9, &err);
		samples[i] = fwd_clock_mono() * 1e6 - t0;
		total += samples[i];
		if (!d) {
			fprintf(stderr, "bench_decide: %s\n", err.text);
			free(samples);
			free(ids);
			return -1;
		}
		if (i < iters - 1)
			alloc_decision_destroy(d);
	}
	qsort(samples, (size_t)iters, sizeof(double), cmp_d);
	printf("%-34s action %-7s n_f %3u -> %3zu forwarders\n", label,
	       fwd_action_name(d->action), d->n_f, d->n_forwarders);
	printf("  decide: median %8.1f us  p99 %8.1f us  (%d runs, %.0f "
	       "decisions/s)\n",
	       samples[iters / 2], samples[(size_t)(iters * 0.99)], iters,
	       iters / (total / 1e6));
	printf("  hostlist -> node ids (once per job, outside decide): "
	       "%.1f us\n",
	       parse_us);
	alloc_decision_destroy(d);
	free(ids);
	free(samples);
	return 0;
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
	/* Large jobs need the per-job cap lifted to show scaling work. */
	printf("topology: %s: %zu nodes, %zu forwarders (load %.1f ms, "
	       "allocator index %.1f ms)\n",
	       src, t->n_nodes, t->n_forwarders, load_us / 1e3, ctx_us / 1e3);
	printf("ledger: %zu running allocations\n", alloc_ledger_count(l));
	if (run("40,960-node job (default, N_f 80)", cx, p, l, t, "c[1-40960]",
		&small, 2000) < 0)
		goto out;
	p->decision.caps.max_forwarders_per_job = 240;
	if (run("40,960-node job (scale)", cx, p, l, t, "c[1-40960]", &big,
		2000) < 0)
		goto out;
	p->decision.caps.max_forwarders_per_job = 16;
	if (run("512-node job (scale)", cx, p, l, t, "c[20481-20992]", &small,
		20000) < 0)
		goto out;
	rc = 0;
out:
	alloc_ledger_destroy(l);
	alloc_ctx_destroy(cx);
	topo_destroy(t);
	policy_destroy(p);
	return rc;
}
