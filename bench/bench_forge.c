/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_forge: the allocator on public measurements.  The FORGE write
 * bandwidths of the access patterns measured on two platforms, MareNostrum
 * 4 (189 patterns) and Santos Dumont (25), at 0 (direct), 1, 2, 4 and 8
 * forwarders (bench/data/forge-mn4.csv and forge-sdumont.csv, their
 * source and derivation in bench/data/README.md) become applications; per
 * platform, 50 sets of 16 of them start together on the shipped
 * TaihuLight topology with the shipped policy, and again on the same
 * machine with an idle pool of 36 and of 56 forwarders; the first two
 * again with direct access allowed (decision.curve.direct, which a policy
 * sets with remap.driver exec, whose command performs it, or none).
 * Prints, per platform and machine, the aggregate bandwidth of static,
 * static-bez, dfra, the oracle and the exact bound summed over the sets,
 * dfra / exact with the worst set's, dfra / oracle; learning from k = 1
 * per round; and, on the first platform, the time of one batch decision
 * for 16 and for 256 jobs (reference: the same jobs decided one at a
 * time).
 *
 * argv[1] replaces the two platforms by one data file (in forge.py's
 * format, named by its path); argv[2], argv[3] override the topology and
 * policy files.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/decide.h"
#include "bench/batch.h"
#include "bench/report.h"
#include "common/array.h"
#include "policies/policy.h"
#include "sim/sim.h"
#include "topology/topology.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#define N_SETS 50
#define SET_SIZE 16
#define MAX_PAT 256
#define N_K 5 /* forwarder counts 0 1 2 4 8 */

static const uint32_t KS[N_K] = {0, 1, 2, 4, 8};

struct pattern {
	char name[64];
	uint32_t clients;
	int layout; /* 1 shared file */
	double bps[N_K];
	double volume; /* bytes: the largest median data moved */
};

static struct pattern pat[MAX_PAT];
static size_t n_pat;

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint32_t urand(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)((rng >> 11) % n);
}

static int k_index(uint32_t k)
{
	for (int i = 0; i < N_K; i++)
		if (KS[i] == k)
			return i;
	return -1;
}

/* forge-*.csv: pattern,processes,clients,layout,spatiality,request,
 * odirect,forwarders,runs,median_mbps,min_mbps,max_mbps,median_mb */
static int load_data(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	bool header = false;

	n_pat = 0;
	if (!f) {
		fprintf(stderr, "bench_forge: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned procs, clients, layout, spat, req, odirect, k, runs;
		double med, lo, hi, mb;
		size_t i;
		int ki;

		if (line[0] == '#')
			continue;
		if (!header) {
			header = true;
			continue;
		}
		if (sscanf(line,
			   "%63[^,],%u,%u,%u,%u,%u,%u,%u,%u,%lf,%lf,%lf,%lf",
			   name, &procs, &clients, &layout, &spat, &req,
			   &odirect, &k, &runs, &med, &lo, &hi, &mb) != 13 ||
		    (ki = k_index(k)) < 0) {
			fprintf(stderr, "bench_forge: %s: bad line %s", path,
				line);
			fclose(f);
			return -1;
		}
		for (i = 0; i < n_pat && strcmp(pat[i].name, name); i++)
			;
		if (i == n_pat) {
			if (n_pat == MAX_PAT) {
				fclose(f);
				return -1;
			}
			memset(&pat[i], 0, sizeof(pat[i]));
			snprintf(pat[i].name, sizeof(pat[i].name), "%s", name);
			pat[i].clients = clients;
			pat[i].layout = (int)layout;
			n_pat++;
		}
		pat[i].bps[ki] = med * 1e6;
		if (mb * 1e6 > pat[i].volume)
			pat[i].volume = mb * 1e6;
	}
	fclose(f);
	for (size_t i = 0; i < n_pat; i++) {
		bool fwd = false;

		for (int k = 1; k < N_K; k++)
			fwd |= pat[i].bps[k] > 0;
		if (!fwd) {
			fprintf(stderr,
				"bench_forge: %s: pattern %s has no bandwidth "
				"with 1, 2, 4 or 8 forwarders\n",
				path, pat[i].name);
			return -1;
		}
	}
	if (n_pat < SET_SIZE) {
		fprintf(stderr,
			"bench_forge: %s: %zu patterns; sets of %d distinct "
			"ones need at least as many\n",
			path, n_pat, SET_SIZE);
		return -1;
	}
	return 0;
}

/* The patterns as the simulator's curves file: direct access as k = 0. */
static struct sim_curves *curves(void)
{
	size_t cap = n_pat * 400 + 256, len = 0;
	char *buf = malloc(cap);
	struct sim_curves *c;
	fwd_error_t err;
	FILE *f;

	len += (size_t)snprintf(buf + len, cap - len,
				"app,forwarders,bandwidth_bps\n");
	for (size_t i = 0; i < n_pat; i++)
		for (int k = 0; k < N_K; k++)
			if (pat[i].bps[k] > 0) /* a count not measured: none */
				len += (size_t)snprintf(
					buf + len, cap - len, "%s,%u,%.0f\n",
					pat[i].name, KS[k], pat[i].bps[k]);
	len += (size_t)snprintf(buf + len, cap - len,
				"app,io_mode,volume,iops,mdops\n");
	for (size_t i = 0; i < n_pat; i++)
		len += (size_t)snprintf(
			buf + len, cap - len, "%s,%s,%.0f,0,0\n", pat[i].name,
			pat[i].layout ? "N-1" : "N-N", pat[i].volume);
	f = fmemopen(buf, len, "r");
	c = sim_curves_parse(f, "forge", &err);
	fclose(f);
	free(buf);
	if (!c)
		fprintf(stderr, "bench_forge: curves: %s\n", err.text);
	return c;
}

static struct sim_curves *C;
/* the platform whose patterns are loaded: every figure's first words */
static const char *plat;

/* One set: the given patterns (random distinct ones when NULL) starting
 * together for 600 s. */
static struct sim_jobs *make_set_of(const uint32_t *pick, size_t n)
{
	struct sim_jobs *j = calloc(1, sizeof(*j));
	bool used[MAX_PAT] = {0};

	j->path = strdup("forge-set");
	j->jobs = calloc(n, sizeof(*j->jobs));
	for (size_t i = 0; i < n; i++) {
		struct sim_job *x = &j->jobs[i];
		uint32_t p;
		char id[16];

		if (pick) {
			p = pick[i];
		} else {
			do
				p = urand((uint32_t)n_pat);
			while (used[p]);
		}
		used[p] = true;
		snprintf(id, sizeof(id), "%zu", i + 1);
		x->id = strdup(id);
		for (x->app = 0; strcmp(C->apps[x->app].name, pat[p].name);
		     x->app++)
			;
		x->nodes = pat[p].clients;
		x->submit = x->start = 0;
		x->end = 600;
		x->io_seconds = -1;
		x->line = i + 2;
	}
	j->n = n;
	return j;
}

static struct sim_jobs *make_set(void)
{
	return make_set_of(NULL, SET_SIZE);
}

/*
 * Learning: every pattern runs once per round, in random sets of 16,
 * under dfra with the exact curves and under dfra deciding from a history
 * that starts with each pattern's k = 1 point only and fills from the
 * simulated runs (learn enabled, its budget as shipped).  Prints the
 * learned / exact aggregate bandwidth per round: round r starts with r - 1
 * runs per pattern in history.
 */
static int run_learning(const struct topology *t, struct policy *p)
{
	struct sim_history *h = sim_history_create(C, true);
	uint32_t perm[MAX_PAT];
	fwd_error_t err;

	if (!h)
		return -1;
	p->learn.enabled = true;
	rng = 0x5DEECE66DULL;
	printf("%s, learning (k = 1 only at first, learn: on, direct access "
	       "%s): learned / exact curves\n",
	       plat, p->decision.curve.direct ? "allowed" : "off");
	for (int round = 1; round <= 4; round++) {
		double exact = 0, learned = 0;

		for (size_t i = 0; i < n_pat; i++)
			perm[i] = (uint32_t)i;
		for (size_t i = n_pat; i > 1; i--) {
			uint32_t k = urand((uint32_t)i), v = perm[i - 1];

			perm[i - 1] = perm[k];
			perm[k] = v;
		}
		for (size_t s = 0; s < n_pat; s += SET_SIZE) {
			size_t n = n_pat - s < SET_SIZE ? n_pat - s : SET_SIZE;
			struct sim_jobs *j = make_set_of(&perm[s], n);
			struct sim_policy all[2] = {
				{"dfra", SIM_POLICY_DFRA, p, NULL, NULL, NULL},
				{"learned", SIM_POLICY_DFRA, p, NULL, NULL, h}};
			struct sim_config cfg = {.topo = t,
						 .base = p,
						 .policies = all,
						 .n_policies = 2};
			struct sim_result *r = sim_run(&cfg, C, j, &err);

			if (!r) {
				fprintf(stderr, "bench_forge: %s\n", err.text);
				sim_history_destroy(h);
				return -1;
			}
			exact += r->pols[0].agg_bw_mean;
			learned += r->pols[1].agg_bw_mean;
			sim_result_destroy(r);
			sim_jobs_destroy(j);
		}
		printf("  round %d (%d run%s per app before): %.3f\n", round,
		       round - 1, round == 2 ? "" : "s", learned / exact);
		if (round == 3) {
			char fig[128];

			snprintf(fig, sizeof(fig),
				 "%s, learned after two runs per app, %s", plat,
				 p->decision.curve.direct
					 ? "direct access allowed"
					 : "direct off");
			bench_figure("forge", fig, learned / 1e9, "GB/s",
				     exact / 1e9, "exact curves");
		}
	}
	p->learn.enabled = false;
	sim_history_destroy(h);
	return 0;
}

/* TaihuLight-shaped (as etc/topology-taihulight.yaml) with `pool` idle
 * backups spread over the 40 cabinets. */
static struct topology *machine(size_t pool)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[16], group[16];
	size_t b = 0;

	for (int cab = 0; cab < 40; cab++) {
		size_t nb = pool / 40 + ((size_t)cab < pool % 40);

		for (size_t i = 0; i < 2 + nb; i++) {
			struct topo_forwarder f = {
				.name = name,
				.bandwidth_bps = 2.5e9,
				.group = group,
				.role = i < 2 ? TOPO_ROLE_SERVICE
					      : TOPO_ROLE_BACKUP,
			};
			snprintf(name, sizeof(name), "fwd%03zu", ++b);
			snprintf(group, sizeof(group), "cab%02d", cab);
			if (topo_add_forwarder(t, &f, &err) < 0)
				goto fail;
		}
	}
	if (topo_add_compute_nodes(t, "cn[00000-40959]", &err) < 0 ||
	    topo_map_per_forwarder(t, 512, &err) < 0 ||
	    topo_finalize(t, &err) < 0)
		goto fail;
	return t;
fail:
	fprintf(stderr, "bench_forge: topology: %s\n", err.text);
	exit(1);
}

static int run_sets(const char *what, const struct topology *t,
		    const struct policy *p)
{
	char label[128];
	enum { STATIC, DFRA, ORACLE, BEZ, EXACT, N_POL };
	static const char *const names[] = {"static", "dfra", "oracle",
					    "static-bez", "exact"};
	static const enum sim_policy_kind kinds[] = {
		SIM_POLICY_STATIC, SIM_POLICY_DFRA, SIM_POLICY_ORACLE,
		SIM_POLICY_STATIC_BEZ, SIM_POLICY_EXACT};
	struct sim_policy all[N_POL];
	double sum[N_POL] = {0}, set_min = INFINITY, t_exact = 0;
	double bez[N_SETS], bez_mean = 0;
	size_t upgraded = 0, unproven = 0;
	fwd_error_t err;
	char fig[192];

	snprintf(label, sizeof(label), "%s, %s", plat, what);
	for (int i = 0; i < N_POL; i++)
		all[i] = (struct sim_policy){names[i], kinds[i], p};
	rng = 0x9E3779B97F4A7C15ULL; /* the same sets on every machine */
	for (int s = 0; s < N_SETS; s++) {
		struct sim_jobs *j = make_set();
		struct sim_config cfg = {.topo = t,
					 .base = p,
					 .policies = all,
					 .n_policies = N_POL};
		struct sim_result *r = sim_run(&cfg, C, j, &err);
		double ex;

		if (!r) {
			fprintf(stderr, "bench_forge: %s\n", err.text);
			return -1;
		}
		for (int i = 0; i < N_POL; i++)
			sum[i] += r->pols[i].agg_bw_mean;
		ex = r->pols[EXACT].agg_bw_mean;
		if (ex > 0 && r->pols[DFRA].agg_bw_mean / ex < set_min)
			set_min = r->pols[DFRA].agg_bw_mean / ex;
		bez[s] = r->pols[BEZ].agg_bw_mean > 0
				 ? r->pols[DFRA].agg_bw_mean /
					   r->pols[BEZ].agg_bw_mean
				 : INFINITY;
		bez_mean += bez[s] / N_SETS;
		upgraded += r->pols[DFRA].n_upgraded;
		unproven += r->pols[EXACT].n_unproven;
		t_exact += r->pols[EXACT].elapsed_s;
		sim_result_destroy(r);
		sim_jobs_destroy(j);
	}
	printf("%s: %d sets of %d FORGE applications\n", label, N_SETS,
	       SET_SIZE);
	printf("  %-10s %10s %10s %10s\n", "policy", "agg GB/s", "/ exact",
	       "/ oracle");
	for (int i = 0; i < N_POL; i++)
		printf("  %-10s %10.2f %10.3f %10.3f\n", names[i],
		       sum[i] / N_SETS / 1e9, sum[i] / sum[EXACT],
		       sum[i] / sum[ORACLE]);
	printf("  dfra / exact: %.3f, the worst set %.3f (exact: %zu of %d "
	       "sets proven, %.2f s); dfra upgraded %zu of %d jobs; dfra / "
	       "static %.1f, / static-bez (Bez et al.'s STATIC) %.2f\n",
	       sum[DFRA] / sum[EXACT], set_min, (size_t)N_SETS - unproven,
	       N_SETS, t_exact, upgraded, N_SETS * SET_SIZE,
	       sum[DFRA] / sum[STATIC], sum[DFRA] / sum[BEZ]);
	qsort(bez, N_SETS, sizeof(*bez), fwd_cmp_double);
	printf("  per set, dfra (the batch's MCKP) over static-bez: median "
	       "%+.0f %%, mean %.2fx\n",
	       100 * ((bez[(N_SETS - 1) / 2] + bez[N_SETS / 2]) / 2 - 1),
	       bez_mean);
	snprintf(fig, sizeof(fig), "%s: dfra over exact", label);
	bench_figure("forge", fig, sum[DFRA] / N_SETS / 1e9, "GB/s",
		     sum[EXACT] / N_SETS / 1e9, "exact bound");
	snprintf(fig, sizeof(fig), "%s: dfra over exact, the worst set", label);
	bench_figure("forge", fig, set_min, "ratio", 1, "exact bound");
	snprintf(fig, sizeof(fig), "%s: dfra over oracle", label);
	bench_figure("forge", fig, sum[DFRA] / N_SETS / 1e9, "GB/s",
		     sum[ORACLE] / N_SETS / 1e9, "oracle (LP relaxation)");
	snprintf(fig, sizeof(fig), "%s: dfra over static-bez", label);
	bench_figure("forge", fig, sum[DFRA] / N_SETS / 1e9, "GB/s",
		     sum[BEZ] / N_SETS / 1e9, "static-bez (Bez et al. STATIC)");
	snprintf(fig, sizeof(fig), "%s: dfra over static", label);
	bench_figure("forge", fig, sum[DFRA] / N_SETS / 1e9, "GB/s",
		     sum[STATIC] / N_SETS / 1e9, "static (shared FFM)");
	return 0;
}

/* A profile from a pattern, as history would hold it. */
static void profile_of(const struct pattern *pt, struct alloc_profile *pr,
		       struct alloc_bw_point *bw)
{
	double peak = 0;
	size_t n = 0;

	memset(pr, 0, sizeof(*pr));
	for (int k = 1; k < N_K; k++) {
		if (pt->bps[k] <= 0)
			continue;
		bw[n++] = (struct alloc_bw_point){KS[k], pt->bps[k]};
		if (pt->bps[k] > peak)
			peak = pt->bps[k];
	}
	pr->io_volume_bytes = (uint64_t)pt->volume;
	pr->io_nodes = pt->clients;
	pr->node_bandwidth_bps = peak / pt->clients;
	pr->peak_bandwidth_bps = peak;
	pr->io_mode = pt->layout ? FWD_IO_N_1 : FWD_IO_N_N;
	pr->runs = 5;
	pr->direct_bps = pt->bps[0];
	pr->bw = bw;
	pr->n_bw = n;
}

/* One batch decision of n jobs against an empty ledger, and the same n
 * jobs decided one at a time (bench/batch.c). */
static int time_batch(const struct topology *t, const struct policy *p,
		      size_t n)
{
	struct alloc_ctx *cx;
	struct alloc_job *jobs = calloc(n, sizeof(*jobs));
	struct alloc_profile *pr = calloc(n, sizeof(*pr));
	struct alloc_bw_point *bw = calloc(n * N_K, sizeof(*bw));
	uint32_t *ids = malloc(40960 * sizeof(*ids));
	char(*id)[16] = calloc(n, sizeof(*id));
	fwd_error_t err;
	uint32_t next = 0;
	int rv = -1;

	if (!jobs || !pr || !bw || !ids || !id) {
		fprintf(stderr, "bench_forge: out of memory\n");
		goto out;
	}
	if (!(cx = alloc_ctx_create(t, &err))) {
		fprintf(stderr, "bench_forge: %s\n", err.text);
		goto out;
	}
	for (uint32_t i = 0; i < 40960; i++)
		ids[i] = i;
	rng = 12345;
	for (size_t i = 0; i < n; i++) {
		const struct pattern *pt = &pat[urand((uint32_t)n_pat)];

		profile_of(pt, &pr[i], &bw[i * N_K]);
		snprintf(id[i], sizeof(id[i]), "b%zu", i);
		jobs[i] = (struct alloc_job){
			.job_id = id[i],
			.user = "u",
			.account = "a",
			.name = pt->name,
			.partition = "p",
			.nodes = "",
			.node_ids = &ids[next],
			.n_nodes = pt->clients,
			.request = FWD_REQ_AUTO,
			.profile = &pr[i],
		};
		next += pt->clients;
	}
	rv = bench_batch_figure("forge", cx, p, NULL, jobs, n, 41);
	alloc_ctx_destroy(cx);
out:
	free(jobs);
	free(pr);
	free(bw);
	free(ids);
	free(id);
	return rv;
}

/* Every set family and learning on one platform's patterns. */
static int run_platform(const char *name, const char *data,
			const struct topology *t, const struct topology *t36,
			const struct topology *t56, struct policy *p)
{
	int rv = -1;

	plat = name;
	if (load_data(data) < 0 || !(C = curves()))
		return -1;
	printf("bench_forge: %s: %zu FORGE patterns (%s)\n", name, n_pat, data);
	if (run_sets("TaihuLight, shipped policy (direct off)", t, p) < 0 ||
	    run_sets("36-forwarder pool, shipped policy (direct off)", t36, p) <
		    0)
		goto out;
	/* Bez et al.'s setting: FORGE patterns, 56 I/O nodes to share out.
	 * Their figures as published, beside ours on the same data. */
	if (run_sets("56-forwarder pool, shipped policy (direct off)", t56, p) <
	    0)
		goto out;
	printf("  published (J. L. Bez et al., \"Arbitration Policies for "
	       "On-Demand User-Level I/O Forwarding on HPC Platforms\", "
	       "IPDPS 2021, hal-03149582): MCKP over STATIC with 56 I/O "
	       "nodes, +211 %% median, 2.6x on average (their simulation "
	       "over FORGE patterns; STATIC = static-bez here)\n");
	/* The same with direct file-system access allowed (the FORGE data
	 * measured it; the shipped policy leaves it off): a policy with the
	 * exec driver, whose command performs direct access on the nodes
	 * (the decisions are the same with any driver that loads it). */
	p->decision.curve.direct = true;
	printf("%s, with decision.curve.direct: true and remap.driver exec "
	       "(direct access performed by the site command)\n",
	       name);
	if (run_sets("TaihuLight, exec driver, direct access allowed", t, p) <
		    0 ||
	    run_sets("36-forwarder pool, exec driver, direct access allowed",
		     t36, p) < 0 ||
	    run_learning(t, p) < 0)
		goto out;
	p->decision.curve.direct = false;
	if (run_learning(t, p) < 0)
		goto out;
	rv = 0;
out:
	p->decision.curve.direct = false;
	return rv;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name, *file;
	} platforms[] = {
		{"MareNostrum 4", TOP_SRCDIR "/bench/data/forge-mn4.csv"},
		{"Santos Dumont", TOP_SRCDIR "/bench/data/forge-sdumont.csv"},
	};
	const char *topo =
		argc > 2 ? argv[2] : TOP_SRCDIR "/etc/topology-taihulight.yaml";
	const char *pol = argc > 3 ? argv[3] : TOP_SRCDIR "/etc/fwdalloc.yaml";
	size_t n_plat = argc > 1 ? 1 : sizeof(platforms) / sizeof(*platforms);
	struct topology *t, *t36, *t56;
	struct policy *p;
	fwd_error_t err;
	int rv = 1;

	if (!(t = topo_load(topo, &err))) {
		fprintf(stderr, "bench_forge: %s\n", err.text);
		return 1;
	}
	if (!(p = policy_load(pol, &err))) {
		fprintf(stderr, "bench_forge: %s\n", err.text);
		topo_destroy(t);
		return 1;
	}
	t36 = machine(36);
	t56 = machine(56);
	for (size_t i = 0; i < n_plat; i++) {
		int r = run_platform(argc > 1 ? argv[1] : platforms[i].name,
				     argc > 1 ? argv[1] : platforms[i].file, t,
				     t36, t56, p);

		/* the batch timing on the first platform's patterns */
		if (!r && !i &&
		    (time_batch(t, p, 16) < 0 || time_batch(t, p, 256) < 0))
			r = -1;
		sim_curves_destroy(C);
		C = NULL;
		if (r < 0)
			goto out;
	}
	rv = 0;
out:
	policy_destroy(p);
	topo_destroy(t);
	topo_destroy(t36);
	topo_destroy(t56);
	return rv;
}
