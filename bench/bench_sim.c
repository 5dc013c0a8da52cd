/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_sim: jobs simulated per second on a generated 100,000-job trace on
 * a TaihuLight-shaped machine (40,960 nodes, 80 service forwarders at
 * 512:1, 160 idle, 2.5 GB/s each) in one network group, and on the shipped
 * etc/topology-taihulight.yaml (argv[1] overrides the path), per policy,
 * each next to the static policy of the same run.
 */
#include "config.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/report.h"
#include "common/timeutil.h"
#include "policies/policy.h"
#include "sim/sim.h"
#include "topology/topology.h"

#define N_JOBS 100000

static const char CURVES[] =
	"app,forwarders,bandwidth_bps\n"
	"shentu,1,2.3e9\nshentu,2,4.5e9\nshentu,4,8.4e9\nshentu,8,12.2e9\n"
	"cesm,1,1.9e9\ncesm,2,3.5e9\ncesm,3,4.4e9\ncesm,4,4.7e9\n"
	"lammps,1,1.2e9\nlammps,2,2.0e9\nlammps,4,2.6e9\n"
	"awp,1,0.25e9\ndndc,1,0.15e9\napt,1,0.40e9\napt,2,0.45e9\n"
	"wrf1,1,0.30e9\n"
	"app,io_mode,volume,iops,mdops\n"
	"shentu,N-N,600e9,900,20\ncesm,N-N,150e9,400,30\n"
	"lammps,N-N,60e9,500,10\nawp,N-1,40e9,300,50\n"
	"dndc,N-N,4e9,400,2000\napt,N-N,8e9,8000,100\n"
	"wrf1,1-1,40e9,50,5\n";

/* app index (curves order), relative weight, node sizes */
static const struct {
	int weight;
	uint32_t nodes[3];
	double dur_lo, dur_hi;
} SHAPES[] = {
	{3, {512, 1024, 2048}, 3600, 4 * 3600},	    /* shentu */
	{4, {512, 1024, 1024}, 2 * 3600, 6 * 3600}, /* cesm */
	{4, {256, 512, 1024}, 1800, 4 * 3600},	    /* lammps */
	{2, {256, 512, 1024}, 1800, 3 * 3600},	    /* awp */
	{2, {128, 256, 256}, 1800, 2 * 3600},	    /* dndc */
	{4, {64, 128, 256}, 900, 2 * 3600},	    /* apt */
	{3, {128, 256, 512}, 1800, 3 * 3600},	    /* wrf1 */
};

static uint64_t rng = 88172645463325252ULL;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static struct topology *taihulight(void)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[16];

	for (int i = 0; i < 240; i++) {
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 2.5e9,
			.group = (char *)"g",
			.role = i < 80 ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};
		snprintf(name, sizeof(name), "fwd%03d", i + 1);
		if (topo_add_forwarder(t, &f, &err) < 0)
			goto fail;
	}
	if (topo_add_compute_nodes(t, "cn[00000-40959]", &err) < 0 ||
	    topo_map_per_forwarder(t, 512, &err) < 0 ||
	    topo_finalize(t, &err) < 0)
		goto fail;
	return t;
fail:
	fprintf(stderr, "bench_sim: topology: %s\n", err.text);
	exit(1);
}

static struct sim_jobs *generate(void)
{
	struct sim_jobs *j = calloc(1, sizeof(*j));
	double t = 0;
	int wsum = 0;

	j->jobs = calloc(N_JOBS, sizeof(*j->jobs));
	j->path = strdup("generated");
	for (size_t a = 0; a < sizeof(SHAPES) / sizeof(SHAPES[0]); a++)
		wsum += SHAPES[a].weight;
	for (size_t i = 0; i < N_JOBS; i++) {
		struct sim_job *x = &j->jobs[i];
		double r = urand() * wsum;
		size_t a = 0;
		char id[16];

		while (r >= SHAPES[a].weight) {
			r -= SHAPES[a].weight;
			a++;
		}
		t += -240.0 * __builtin_log(1 - urand());
		snprintf(id, sizeof(id), "%zu", i + 1);
		x->id = strdup(id);
		x->app = a;
		x->nodes = SHAPES[a].nodes[(int)(urand() * 3)];
		x->submit = x->start = (double)(long)t;
		x->end =
			x->start + (double)(long)(SHAPES[a].dur_lo +
						  urand() * (SHAPES[a].dur_hi -
							     SHAPES[a].dur_lo));
		x->io_seconds = -1;
		x->line = i + 2;
	}
	j->n = N_JOBS;
	return j;
}

/* One run of the three policies on topology t; figures labelled `what`.
 * Each policy's own time is in its result (the static baseline every run
 * carries is not counted). */
static int bench_topo(const struct topology *t, const char *what,
		      struct policy *p, const struct sim_curves *c,
		      const struct sim_jobs *j)
{
	static const char *const names[] = {"static", "dfra", "oracle"};
	struct sim_policy all[3];
	fwd_error_t err;
	char label[128];

	for (int i = 0; i < 3; i++)
		all[i] = (struct sim_policy){names[i], (enum sim_policy_kind)i,
					     p};
	struct sim_config cfg = {
		.topo = t, .base = p, .policies = all, .n_policies = 3};
	double t0 = fwd_clock_mono(), dt;
	struct sim_result *r = sim_run(&cfg, c, j, &err);
	double static_rate = 0;

	dt = fwd_clock_mono() - t0;
	if (!r) {
		fprintf(stderr, "bench_sim: %s: %s\n", what, err.text);
		return -1;
	}
	printf("%s: %zu nodes, %zu forwarders\n", what, t->n_nodes,
	       t->n_forwarders);
	for (size_t k = 0; k < r->n_pols; k++) {
		const struct sim_policy_result *pr = &r->pols[k];
		double rate = (double)r->n_placed / pr->elapsed_s;

		printf("  %-7s %7.3f s  (aggregate %.1f GB/s, median speed-up "
		       "%.2f, %zu upgraded)\n",
		       pr->name, pr->elapsed_s, pr->agg_bw_mean / 1e9,
		       pr->speedup_median, pr->n_upgraded);
		if (k == 0) {
			static_rate = rate;
			continue;
		}
		snprintf(label, sizeof(label), "%s, %s policy", what, pr->name);
		bench_figure("sim", label, rate, "jobs/s", static_rate,
			     "static policy, same run");
	}
	snprintf(label, sizeof(label), "%s, whole run", what);
	bench_figure("sim", label, (double)r->n_placed / dt, "jobs/s", 0, "");
	sim_result_destroy(r);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path =
		argc > 1 ? argv[1] : TOP_SRCDIR "/etc/topology-taihulight.yaml";
	struct topology *t = taihulight(), *shipped;
	struct policy *p = policy_defaults();
	FILE *f = fmemopen((void *)CURVES, strlen(CURVES), "r");
	fwd_error_t err;
	struct sim_curves *c = sim_curves_parse(f, "curves", &err);
	struct sim_jobs *j = generate();
	int rc = 1;

	fclose(f);
	if (!c) {
		fprintf(stderr, "bench_sim: %s\n", err.text);
		return 1;
	}
	if (!(shipped = topo_load(path, &err))) {
		fprintf(stderr, "bench_sim: %s: %s\n", path, err.text);
		return 1;
	}
	printf("bench_sim: %d generated jobs (placement, static baseline and "
	       "three policies per topology)\n",
	       N_JOBS);
	if (bench_topo(t, "single-group topology", p, c, j) == 0 &&
	    bench_topo(shipped, "shipped topology", p, c, j) == 0)
		rc = 0;
	sim_jobs_destroy(j);
	sim_curves_destroy(c);
	policy_destroy(p);
	topo_destroy(t);
	topo_destroy(shipped);
	return rc;
}
