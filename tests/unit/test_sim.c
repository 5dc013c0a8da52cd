/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Simulator: strict CSV parsing (exact messages), curves, and
 * small hand-checked workloads on 4 forwarders with the expected figures
 * worked out in the comments.
 *
 * Topology of every workload: fwd01 serves c[1-8], fwd02 serves c[9-16],
 * fwd03 and fwd04 are the idle pool; every forwarder carries 1 GB/s.
 * Placement is contiguous first fit, so the first 4-node job gets c[1-4]
 * and the second c[5-8]: both on fwd01.
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

#include <unistd.h>

#include <cmocka.h>

#include "policies/policy.h"
#include "sim/sim.h"
#include "sim/sim_internal.h"
#include "tests/unit/xorshift.h"
#include "topology/topology.h"

#define GB 1e9

/* ---- helpers ----------------------------------------------------------- */

static struct topology *topo4(void)
{
	struct topology *t = topo_create();
	fwd_error_t err;
	char name[16];

	assert_non_null(t);
	for (int i = 0; i < 4; i++) {
		struct topo_forwarder f = {
			.name = name,
			.bandwidth_bps = 1 * GB,
			.group = (char *)"g0",
			.role = i < 2 ? TOPO_ROLE_SERVICE : TOPO_ROLE_BACKUP,
		};
		snprintf(name, sizeof(name), "fwd%02d", i + 1);
		assert_int_equal(topo_add_forwarder(t, &f, &err), 0);
	}
	assert_int_equal(topo_add_compute_nodes(t, "c[1-16]", &err), 0);
	assert_int_equal(topo_add_mapping(t, "c[1-8]", 0, &err), 0);
	assert_int_equal(topo_add_mapping(t, "c[9-16]", 1, &err), 0);
	assert_int_equal(topo_finalize(t, &err), 0);
	return t;
}

static struct sim_curves *curves_str(const char *text, fwd_error_t *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct sim_curves *c;

	assert_non_null(f);
	c = sim_curves_parse(f, "c.csv", err);
	fclose(f);
	return c;
}

static struct sim_jobs *jobs_str(const char *text, const struct sim_curves *c,
				 fwd_error_t *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct sim_jobs *j;

	assert_non_null(f);
	j = sim_jobs_parse(f, "j.csv", c, err);
	fclose(f);
	return j;
}

/* "bw": bandwidth-heavy, scales to 4 forwarders; light class (peak 3 GB/s
 * is under the 5 GB/s high_bandwidth default). */
static const char BW_CURVES[] = "app,forwarders,bandwidth_bps\n"
				"bw,0,0.5e9\n"
				"bw,1,0.8e9\n"
				"bw,2,1.6e9\n"
				"bw,4,3.0e9\n"
				"app,io_mode,volume,iops,mdops\n"
				"bw,N-N,8e9,0,0\n";

struct world {
	struct topology *t;
	struct policy *p;
	struct sim_curves *c;
	struct sim_jobs *j;
	struct sim_result *r;
};

static const struct sim_policy STATIC_ORACLE[] = {
	{"static", SIM_POLICY_STATIC, NULL},
	{"oracle", SIM_POLICY_ORACLE, NULL},
};

static void world_run(struct world *w, const char *curves, const char *jobs)
{
	fwd_error_t err = {""};
	struct sim_config cfg = {0};

	w->t = topo4();
	w->p = policy_defaults();
	assert_non_null(w->p);
	w->c = curves_str(curves, &err);
	if (!w->c)
		fail_msg("curves: %s", err.text);
	w->j = jobs_str(jobs, w->c, &err);
	if (!w->j)
		fail_msg("jobs: %s", err.text);
	cfg.topo = w->t;
	cfg.base = w->p;
	cfg.policies = STATIC_ORACLE;
	cfg.n_policies = 2;
	w->r = sim_run(&cfg, w->c, w->j, &err);
	if (!w->r)
		fail_msg("run: %s", err.text);
}

static void world_free(struct world *w)
{
	sim_result_destroy(w->r);
	sim_jobs_destroy(w->j);
	sim_curves_destroy(w->c);
	policy_destroy(w->p);
	topo_destroy(w->t);
}

/* sim_run() reports missing inputs as a bad config (its contract), and
 * must not dereference them first. */
static void test_run_requires_inputs(void **state)
{
	fwd_error_t err = {""};
	struct sim_config cfg = {0};
	struct world w = {0};

	(void)state;
	w.t = topo4();
	w.p = policy_defaults();
	assert_non_null(w.p);
	w.c = curves_str("app,forwarders,bandwidth_bps\na,1,1e6\n", &err);
	if (!w.c)
		fail_msg("curves: %s", err.text);
	cfg.topo = w.t;
	cfg.base = w.p;
	cfg.policies = STATIC_ORACLE;
	cfg.n_policies = 2;
	errno = 0;
	assert_null(sim_run(&cfg, w.c, NULL, &err));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.text, "simulator: topology, base policy, "
				      "curves and jobs are required");
	world_free(&w);
}

#define assert_near(a, b) \
	assert_true(fabs((a) - (b)) <= 1e-6 * fmax(1.0, fabs(b)))

/* The oracle's aggregate bandwidth is at least every policy's. */
static void assert_oracle_best(const struct sim_result *r)
{
	const struct sim_policy_result *o = NULL;

	for (size_t i = 0; i < r->n_pols; i++)
		if (r->pols[i].kind == SIM_POLICY_ORACLE)
			o = &r->pols[i];
	assert_non_null(o);
	for (size_t i = 0; i < r->n_pols; i++)
		assert_true(o->agg_bw_mean >=
			    r->pols[i].agg_bw_mean * (1 - 1e-9));
}

/* ---- parsing ----------------------------------------------------------- */

struct bad_case {
	const char *name;
	const char *text;
	const char *want;
};

static const struct bad_case bad_curves[] = {
	{"bad k", "app,forwarders,bandwidth_bps\nx,1,1e9\nx,two,1e9\n",
	 "c.csv:3: forwarders 'two': not an integer in 0..100000"},
	{"negative bw", "app,forwarders,bandwidth_bps\nx,1,-5\n",
	 "c.csv:2: bandwidth_bps '-5': not a positive number of bytes per "
	 "second"},
	{"nan", "app,forwarders,bandwidth_bps\nx,1,nan\n",
	 "c.csv:2: bandwidth_bps 'nan': not a positive number of bytes per "
	 "second"},
	{"fields", "# c\napp,forwarders,bandwidth_bps\nx,1\n",
	 "c.csv:3: expected 3 fields (app,forwarders,bandwidth_bps), got 2"},
	{"dup k", "app,forwarders,bandwidth_bps\nx,1,1e9\nx,1,2e9\n",
	 "c.csv:3: app 'x': forwarders 1 given twice"},
	{"no header", "x,1,1e9\n",
	 "c.csv:1: data before a header line; the file starts with "
	 "'app,forwarders,bandwidth_bps'"},
	{"bad header", "app,k,bw\n",
	 "c.csv:1: unknown header; expected 'app,forwarders,bandwidth_bps', "
	 "'app,io_mode,volume,iops,mdops' or 'victim,disruptor,slowdown'"},
	{"only k0", "app,forwarders,bandwidth_bps\nx,0,1e9\n",
	 "c.csv:2: app 'x' has no point with forwarders >= 1"},
	{"mode",
	 "app,forwarders,bandwidth_bps\nx,1,1e9\n"
	 "app,io_mode,volume,iops,mdops\nx,N-2,1,0,0\n",
	 "c.csv:4: io_mode 'N-2': one of N-N, N-1, N-M, 1-1"},
	{"profile only", "app,io_mode,volume,iops,mdops\ny,N-1,1,0,0\n",
	 "c.csv:2: app 'y' has a profile but no curve"},
	{"dup profile",
	 "app,forwarders,bandwidth_bps\nx,1,1e9\n"
	 "app,io_mode,volume,iops,mdops\nx,N-N,1,0,0\n"
	 "x,N-N,2,0,0\n",
	 "c.csv:5: app 'x': profile already given on line 4"},
	{"slowdown",
	 "app,forwarders,bandwidth_bps\nx,1,1e9\n"
	 "victim,disruptor,slowdown\nlight,n-1,0.5\n",
	 "c.csv:4: slowdown '0.5': not a number >= 1"},
	{"class", "victim,disruptor,slowdown\nheavy,n-1,2\n",
	 "c.csv:2: victim 'heavy': one of light, iops, bandwidth, metadata, "
	 "n-1"},
	{"quote", "app,forwarders,bandwidth_bps\n\"x\",1,1e9\n",
	 "c.csv:2: quoted fields are not supported"},
	{"empty", "# nothing\n\n",
	 "c.csv: no curves (expected a "
	 "'app,forwarders,bandwidth_bps' section)"},
	{"several", "app,forwarders,bandwidth_bps\nx,1,a\ny,b,1\nz,1,1\n",
	 "c.csv:2: bandwidth_bps 'a': not a positive number of bytes per "
	 "second\nc.csv:3: forwarders 'b': not an integer in 0..100000"},
};

static void test_curves_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_curves) / sizeof(bad_curves[0]);
	     i++) {
		fwd_error_t err = {""};
		struct sim_curves *c = curves_str(bad_curves[i].text, &err);

		if (c)
			fail_msg("%s: accepted", bad_curves[i].name);
		if (strcmp(err.text, bad_curves[i].want))
			fail_msg("%s:\n want: %s\n got:  %s",
				 bad_curves[i].name, bad_curves[i].want,
				 err.text);
	}
}

static const char JOB_CURVES[] =
	"app,forwarders,bandwidth_bps\nbw,1,1e9\nnovol,1,1e9\n"
	"app,io_mode,volume,iops,mdops\nbw,N-N,1e10,0,0\n";

static const struct bad_case bad_jobs[] = {
	{"header", "id,app\n",
	 "j.csv:1: expected the header 'job_id,app,nodes,submit,start,end' "
	 "or 'job_id,app,nodes,submit,start,end,io_seconds'"},
	{"nodes",
	 "job_id,app,nodes,submit,start,end\nj1,bw,4,0,0,10\n"
	 "j2,bw,0,0,0,10\n",
	 "j.csv:3: nodes '0': not a positive node count"},
	{"app", "job_id,app,nodes,submit,start,end\nj1,wrf,4,0,0,10\n",
	 "j.csv:2: app 'wrf' has no curve in c.csv"},
	{"order", "job_id,app,nodes,submit,start,end\nj1,bw,4,0,20,10\n",
	 "j.csv:2: end '10' is not after start '20'"},
	{"submit", "job_id,app,nodes,submit,start,end\nj1,bw,4,5,1,10\n",
	 "j.csv:2: start '1' is before submit '5'"},
	{"time",
	 "job_id,app,nodes,submit,start,end\n"
	 "j1,bw,4,0,2024-13-01T00:00:00Z,10\n",
	 "j.csv:2: start '2024-13-01T00:00:00Z': not seconds or ISO-8601 "
	 "UTC (2024-05-01T10:00:00Z)"},
	{"dup",
	 "job_id,app,nodes,submit,start,end\nj1,bw,4,0,0,10\n"
	 "j1,bw,4,0,0,10\n",
	 "j.csv:3: job_id 'j1' already used on line 2"},
	{"io",
	 "job_id,app,nodes,submit,start,end,io_seconds\n"
	 "j1,bw,4,0,0,10,x\n",
	 "j.csv:2: io_seconds 'x': not a positive number"},
	{"io long",
	 "job_id,app,nodes,submit,start,end,io_seconds\n"
	 "j1,bw,4,0,0,10,11\n",
	 "j.csv:2: io_seconds '11' is longer than the job (10 s)"},
	{"no size",
	 "job_id,app,nodes,submit,start,end,io_seconds\n"
	 "j1,novol,4,0,0,10,\n",
	 "j.csv:2: job 'j1': no io_seconds and app 'novol' has no volume "
	 "in c.csv"},
	{"fields", "job_id,app,nodes,submit,start,end\nj1,bw,4,0,0\n",
	 "j.csv:2: expected 6 fields (job_id,app,nodes,submit,start,end), "
	 "got 5"},
	{"none", "job_id,app,nodes,submit,start,end\n", "j.csv: no jobs"},
	{"too many",
	 "job_id,app,nodes,submit,start,end\nj1,bw,4,0,0,10,1,2,3,4,5\n",
	 "j.csv:2: expected 6 fields (job_id,app,nodes,submit,start,end), "
	 "got 11"},
};

static void test_jobs_errors(void **state)
{
	fwd_error_t err = {""};
	struct sim_curves *c = curves_str(JOB_CURVES, &err);

	(void)state;
	assert_non_null(c);
	for (size_t i = 0; i < sizeof(bad_jobs) / sizeof(bad_jobs[0]); i++) {
		struct sim_jobs *j;

		err.text[0] = '\0';
		j = jobs_str(bad_jobs[i].text, c, &err);
		if (j)
			fail_msg("%s: accepted", bad_jobs[i].name);
		if (strcmp(err.text, bad_jobs[i].want))
			fail_msg("%s:\n want: %s\n got:  %s", bad_jobs[i].name,
				 bad_jobs[i].want, err.text);
	}
	sim_curves_destroy(c);
}

/* More bad lines than fit are counted, not silently dropped. */
static void test_jobs_many_errors(void **state)
{
	fwd_error_t err = {""};
	struct sim_curves *c = curves_str(JOB_CURVES, &err);
	char text[4096] = "job_id,app,nodes,submit,start,end\n";
	struct sim_jobs *j;

	(void)state;
	for (int i = 0; i < 30; i++)
		strcat(text, "j,bw,x,0,0,1\n");
	j = jobs_str(text, c, &err);
	assert_null(j);
	assert_non_null(strstr(err.text, "j.csv:2: nodes 'x': not a positive "
					 "node count\nj.csv:3: "));
	assert_non_null(strstr(err.text,
			       "\nj.csv:21: nodes 'x': not a "
			       "positive node count\n(stopped reading "
			       "after 20 bad lines)"));
	sim_curves_destroy(c);
}

static void test_jobs_ok(void **state)
{
	fwd_error_t err = {""};
	struct sim_curves *c = curves_str(JOB_CURVES, &err);
	struct sim_jobs *j;

	(void)state;
	assert_non_null(c);
	j = jobs_str("# trace\r\njob_id,app,nodes,submit,start,end,io_seconds"
		     "\r\n\r\nj1, bw ,4,2024-05-01T10:00:00Z,"
		     "2024-05-01T10:00:30Z,1714557660,\n"
		     "j2,novol,2,0,0,10.5,2.5\n",
		     c, &err);
	if (!j)
		fail_msg("%s", err.text);
	assert_int_equal(j->n, 2);
	assert_string_equal(j->jobs[0].id, "j1");
	assert_int_equal(j->jobs[0].app, 0);
	assert_near(j->jobs[0].submit, 1714557600.0);
	assert_near(j->jobs[0].start, 1714557630.0);
	assert_near(j->jobs[0].end, 1714557660.0);
	assert_true(j->jobs[0].io_seconds < 0);
	assert_int_equal(j->jobs[1].app, 1);
	assert_near(j->jobs[1].io_seconds, 2.5);
	assert_int_equal(j->jobs[1].line, 5);
	sim_jobs_destroy(j);
	sim_curves_destroy(c);
}

struct time_case {
	const char *in;
	int rv;
	double want;
};

static const struct time_case time_cases[] = {
	{"0", 0, 0},
	{"1714557600", 0, 1714557600},
	{"12.5", 0, 12.5},
	{"2024-05-01T10:00:00Z", 0, 1714557600},
	{"2024-05-01T10:00:00", 0, 1714557600},
	{"2024-05-01T10:00:00+00:00", 0, 1714557600},
	{"2024-05-01T10:00:00.25Z", 0, 1714557600.25},
	{"2024-02-29T00:00:00Z", 0, 1709164800},
	{"2024-05-01T10:00:00+02:00", -1, 0}, /* only UTC */
	{"2024-05-01T10:00:00.Z", -1, 0},
	{"2024-05-01T25:00:00Z", -1, 0},
	{"2024-05-01 10:00:00", -1, 0},
	{"-5", -1, 0},
	{"1e400", -1, 0},
	{"0x10", -1, 0},
	{"", -1, 0},
	{"10s", -1, 0},
};

static void test_parse_time(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(time_cases) / sizeof(time_cases[0]);
	     i++) {
		double v = -1;
		int rv = sim_parse_time(time_cases[i].in, &v);

		if (rv != time_cases[i].rv)
			fail_msg("'%s': rv %d, want %d", time_cases[i].in, rv,
				 time_cases[i].rv);
		if (rv == 0 && fabs(v - time_cases[i].want) > 1e-6)
			fail_msg("'%s': %.3f, want %.3f", time_cases[i].in, v,
				 time_cases[i].want);
	}
}

static void test_curve_shape(void **state)
{
	fwd_error_t err = {""};
	struct sim_curves *c = curves_str("app,forwarders,bandwidth_bps\n"
					  "a,2,2e9\na,4,3e9\na,6,2.5e9\n",
					  &err);
	const struct sim_app *a;

	(void)state;
	assert_non_null(c);
	a = &c->apps[0];
	assert_near(sim_curve_bw(a, 1), 1e9);	/* proportional below */
	assert_near(sim_curve_bw(a, 3), 2.5e9); /* linear between */
	assert_near(sim_curve_bw(a, 5), 2.75e9);
	assert_near(sim_curve_bw(a, 9), 2.5e9); /* flat above */
	assert_near(sim_curve_best(a, 6), 3e9); /* never worse with more */
	assert_near(sim_curve_peak(a), 3e9);
	sim_curves_destroy(c);
}

/* ---- workloads ---------------------------------------------------------- */

/*
 * Two "bw" jobs of 4 nodes, both on fwd01 for [0, 100).  The app's best
 * rate per forwarder is max(0.8/1, 1.6/2, 3.0/4) = 0.8 GB/s (under B_f =
 * 1 GB/s): fwd01 serves it at 0.8 GB/s when busy with it alone.
 * static: each asks curve(1) = 0.8 GB/s, a load of 0.8/0.8 = 1 each: fwd01
 *   is asked for 2 units of its time, each job gets half: 0.4 GB/s; I/O
 *   time = 8e9 / 0.4e9 = 20 s; aggregate 0.8 GB/s; utilisation 0.8 GB/s of
 *   4 = 20 %; held 1 of 4.
 * oracle: U = fwd01 (counted once) + the pool of 2 = 3 units of forwarder
 *   time; each job is worth F = curve(3) = 2.3 GB/s forwarded, which takes
 *   2.3/0.8 = 2.875 units, or D = 0.5 GB/s direct.  The relaxation
 *   forwards a (first at equal gain per unit) at 2.3 GB/s, and b for the
 *   0.125 unit left (x = 0.125/2.875 of F), the rest of b direct:
 *   x * 2.3 + (1 - x) * 0.5 = 0.578 GB/s; aggregate 2.878 GB/s (the old
 *   oracle's 3.2 counted fwd01 once per job and never charged sharing).
 *   a: 8e9 / 2.3e9 s, speed-up 20 / that = 5.75, upgraded with 3
 *   forwarders; b gets less than curve(1) alone: not upgraded;
 *   core-hours 4 nodes * 100 s / 3600; carried 2.3 + 0.1 GB/s of 4.
 */
static void test_two_share(void **state)
{
	const double x = 0.125 / 2.875,
		     b_or = x * 2.3 * GB + (1 - x) * 0.5 * GB;
	struct world w = {0};
	const struct sim_policy_result *st, *orc;

	(void)state;
	world_run(&w, BW_CURVES,
		  "job_id,app,nodes,submit,start,end\n"
		  "a,bw,4,0,0,100\nb,bw,4,0,0,100\n");
	st = &w.r->pols[0];
	orc = &w.r->pols[1];
	assert_int_equal(w.r->n_placed, 2);
	assert_int_equal(w.r->n_pool, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(st->jobs[i].n_f, 1);
		assert_int_equal(st->jobs[i].n_fwd, 1);
		assert_near(st->jobs[i].bw, 0.4 * GB);
		assert_near(st->jobs[i].io_time, 20.0);
		assert_near(st->jobs[i].speedup, 1.0);
		assert_int_equal(orc->jobs[i].n_fwd, 3);
	}
	assert_true(orc->jobs[0].upgraded);
	assert_false(orc->jobs[1].upgraded);
	assert_near(orc->jobs[0].bw, 2.3 * GB);
	assert_near(orc->jobs[0].io_time, 8 / 2.3);
	assert_near(orc->jobs[0].speedup, 20 / (8 / 2.3));
	assert_near(orc->jobs[1].bw, b_or);
	assert_near(orc->jobs[1].io_time, 8e9 / b_or);
	assert_near(st->agg_bw_mean, 0.8 * GB);
	assert_near(st->io_time_total, 40.0);
	assert_near(st->util_mean, 0.2);
	assert_near(st->held_mean, 0.25);
	assert_int_equal(st->n_upgraded, 0);
	assert_near(orc->agg_bw_mean, 2.3 * GB + b_or);
	assert_near(orc->speedup_max, 5.75);
	assert_int_equal(orc->n_upgraded, 1);
	assert_near(orc->upgraded_share, 0.5);
	assert_near(orc->upgraded_core_hours, 4 * 100 / 3600.0);
	/* held: fwd01 plus 2 extras = 3 of 4 */
	assert_near(orc->held_mean, 0.75);
	assert_near(orc->util_mean, (2.3 + x * 2.3) / 4);
	assert_oracle_best(w.r);
	world_free(&w);
}

/*
 * Overlapping in time: a [0, 100), b [50, 150), both 4 nodes on fwd01.
 * static: a alone 0.8 GB/s for 50 s, then 0.4 GB/s for 50 s (fwd01's time
 *   halved, test_two_share): integral dt/bw = 50/0.8e9 + 50/0.4e9 =
 *   187.5e-9; uniform I/O over the 100 s run: io = 8e9 * 187.5e-9 / 100 =
 *   15 s (b the same, mirrored); aggregate 0.8 GB/s throughout.
 * oracle: alone 2.3 GB/s (2.875 of 3 units); together a 2.3 and b 0.578
 *   GB/s (test_two_share):
 *   a: 8e9 * (50/2.3e9 + 50/2.3e9) / 100 = 3.478 s;
 *   aggregate = (50*2.3 + 50*(2.3 + 0.578) + 50*2.3) / 150 GB/s.
 */
static void test_overlap(void **state)
{
	const double x = 0.125 / 2.875,
		     b_or = x * 2.3 * GB + (1 - x) * 0.5 * GB;
	struct world w = {0};
	const struct sim_policy_result *st, *orc;
	double a_or = 8e9 * (50 / 2.3e9 + 50 / 2.3e9) / 100;

	(void)state;
	world_run(&w, BW_CURVES,
		  "job_id,app,nodes,submit,start,end\n"
		  "a,bw,4,0,0,100\nb,bw,4,0,50,150\n");
	st = &w.r->pols[0];
	orc = &w.r->pols[1];
	assert_near(st->jobs[0].io_time, 15.0);
	assert_near(st->jobs[1].io_time, 15.0);
	assert_near(st->agg_bw_mean, 0.8 * GB);
	assert_near(st->agg_bw_peak, 0.8 * GB);
	assert_near(orc->jobs[0].io_time, a_or);
	assert_near(orc->jobs[1].io_time, 8e9 * (50 / b_or + 50 / 2.3e9) / 100);
	assert_near(orc->jobs[0].speedup, 15.0 / a_or);
	assert_near(orc->agg_bw_mean,
		    (50 * 2.3e9 * 2 + 50 * (2.3e9 + b_or)) / 150);
	assert_near(orc->agg_bw_peak, 2.3e9 + b_or);
	/* each at the count where its curve is best within U: 3 */
	assert_int_equal(orc->jobs[0].n_fwd, 3);
	assert_int_equal(orc->jobs[1].n_fwd, 3);
	assert_oracle_best(w.r);
	world_free(&w);
}

/*
 * io_seconds is the static baseline, scaled by the bandwidth ratio.
 * Same pair as test_two_share, a with io_seconds 20:
 *   static: 20 s exactly; oracle: 20 * (100/2.3e9) / (100/0.4e9) = 3.478 s.
 *   b has no io_seconds: from its volume, 20 s and 8e9 / 0.578e9 s.
 */
static void test_io_seconds(void **state)
{
	const double x = 0.125 / 2.875,
		     b_or = x * 2.3 * GB + (1 - x) * 0.5 * GB;
	struct world w = {0};

	(void)state;
	world_run(&w, BW_CURVES,
		  "job_id,app,nodes,submit,start,end,io_seconds\n"
		  "a,bw,4,0,0,100,20\nb,bw,4,0,0,100,\n");
	assert_near(w.r->pols[0].jobs[0].io_time, 20.0);
	assert_near(w.r->pols[1].jobs[0].io_time, 20 * 0.4 / 2.3);
	assert_near(w.r->pols[1].jobs[0].speedup, 5.75);
	assert_near(w.r->pols[0].jobs[1].io_time, 20.0);
	assert_near(w.r->pols[1].jobs[1].io_time, 8e9 / b_or);
	assert_near(w.r->pols[0].io_time_total, 40.0);
	assert_oracle_best(w.r);
	world_free(&w);
}

/*
 * Interference: an N-1 job (disruptive: N-1 with 4 > n1_min_nodes nodes,
 * the policy sets 2) and an IOPS-heavy small job (vulnerable: 5000 > 1000
 * IOPS) on fwd01.  Each asks its one-forwarder rate, which is the rate
 * fwd01 serves it at (0.2 and 0.1 GB/s, under B_f): a load of 2, each gets
 * half of fwd01's time.  The victim is also slowed by slowdown[iops][n-1]
 * = 50 (APT next to AWP in the DFRA study): 0.05e9 / 50 = 1 MB/s, 1e8 B
 * takes 100 s.  The N-1 job is not slowed by the small one
 * (slowdown[n-1][iops] = 1): 0.1 GB/s, 2e9 / 0.1e9 = 20 s.
 * oracle: neither gains from extras (flat curves); 1 unit of forwarder
 *   time each of the 3, no interference: small 1e8 / 0.1e9 = 1 s
 *   (speed-up 100), n1 10 s (speed-up 2); aggregate 0.3 GB/s vs static
 *   0.101 GB/s.
 * Third job "late" [100, 200) on fwd01 alone: nothing to interfere with,
 * 1e8 / 0.1e9 = 1 s under both.
 */
static void test_interference(void **state)
{
	static const char curves[] = "app,forwarders,bandwidth_bps\n"
				     "n1,1,0.2e9\nsmall,1,0.1e9\n"
				     "app,io_mode,volume,iops,mdops\n"
				     "n1,N-1,2e9,10,0\nsmall,N-N,1e8,5000,0\n";
	struct world w = {0};
	const struct sim_policy_result *st, *orc;
	fwd_error_t err = {""};
	struct sim_config cfg = {0};

	(void)state;
	w.t = topo4();
	w.p = policy_defaults();
	w.p->decision.interference.n1_min_nodes = 2;
	w.c = curves_str(curves, &err);
	assert_non_null(w.c);
	w.j = jobs_str("job_id,app,nodes,submit,start,end\n"
		       "n,n1,4,0,0,100\ns,small,2,0,0,100\n"
		       "late,small,2,0,100,200\n",
		       w.c, &err);
	assert_non_null(w.j);
	assert_int_equal(sim_classify(w.p, &w.c->apps[0], 4), SIM_CLASS_N1);
	assert_int_equal(sim_classify(w.p, &w.c->apps[0], 2), SIM_CLASS_LIGHT);
	assert_int_equal(sim_classify(w.p, &w.c->apps[1], 2), SIM_CLASS_IOPS);
	cfg.topo = w.t;
	cfg.base = w.p;
	cfg.policies = STATIC_ORACLE;
	cfg.n_policies = 2;
	w.r = sim_run(&cfg, w.c, w.j, &err);
	if (!w.r)
		fail_msg("%s", err.text);
	st = &w.r->pols[0];
	orc = &w.r->pols[1];
	assert_near(st->jobs[0].io_time, 20.0);
	assert_near(st->jobs[1].bw, 1e6);
	assert_near(st->jobs[1].io_time, 100.0);
	assert_near(st->jobs[2].io_time, 1.0);
	assert_near(orc->jobs[1].io_time, 1.0);
	assert_near(orc->jobs[1].speedup, 100.0);
	assert_near(orc->jobs[0].speedup, 2.0);
	assert_near(orc->speedup_median, 2.0);
	assert_near(orc->speedup_max, 100.0);
	assert_near(orc->speedup_mean, 103.0 / 3);
	assert_int_equal(orc->n_upgraded, 0);
	/* span [0, 200): (100 * 0.101 + 100 * 0.1) / 200 */
	assert_near(st->agg_bw_mean, (100 * 0.101e9 + 100 * 0.1e9) / 200);
	assert_near(orc->agg_bw_mean, (100 * 0.3e9 + 100 * 0.1e9) / 200);
	assert_oracle_best(w.r);
	world_free(&w);
}

/*
 * Placement: contiguous first fit, fragmented when no run is long enough,
 * not placed when the machine is full.
 *   a 4 [0,100) c1-c4; b 4 [0,50) c5-c8; c 4 [0,100) c9-c12;
 *   d 6 at 60: free c5-c8 and c13-c16, no run of 6: takes c5-c8 (fwd01)
 *     and c13-c14 (fwd02): 2 default forwarders, weights 4/6 and 2/6;
 *   e 8 at 70: 2 free nodes left: not placed.
 * static bandwidths (bw app, 8e9 B, served at 0.8 GB/s per forwarder):
 * d asks curve(2) = 1.6 GB/s, 1.0667 on fwd01 (a load of 1.3333, with a's
 * 1: 2.3333 -> share 3/7) and 0.5333 on fwd02 (0.6667 with c's 1 -> 0.6):
 * bw = 1.6 * min(3/7, 0.6) = 0.686 GB/s.
 */
static void test_placement(void **state)
{
	struct world w = {0};
	const struct sim_policy_result *st;
	double share1 = 1.0 / (1 + 1.6 * 4 / 6 / 0.8);

	(void)state;
	world_run(&w, BW_CURVES,
		  "job_id,app,nodes,submit,start,end\n"
		  "a,bw,4,0,0,100\nb,bw,4,0,0,50\nc,bw,4,0,0,100\n"
		  "d,bw,6,0,60,100\ne,bw,8,0,70,80\n");
	st = &w.r->pols[0];
	assert_int_equal(w.r->n_placed, 4);
	assert_false(st->jobs[4].placed);
	assert_int_equal(st->jobs[2].n_f, 1);
	assert_int_equal(st->jobs[3].n_f, 2);
	assert_near(st->jobs[3].bw, 1.6e9 * share1);
	/* a: [0,50) shares fwd01 with b (0.4), [50,60) alone (0.8), [60,100)
	 * with d: 0.8 * share1 */
	assert_near(st->jobs[0].io_time,
		    8e9 * (50 / 0.4e9 + 10 / 0.8e9 + 40 / (0.8e9 * share1)) /
			    100);
	assert_oracle_best(w.r);
	world_free(&w);
}

/* ---- dfra: the production decision ------------------------------------- */

/* A policy under which these small jobs qualify: V_min 1 GB, N_min 1, no
 * reserve, a job may take the whole pool. */
static struct policy *small_policy(void)
{
	struct policy *p = policy_defaults();

	assert_non_null(p);
	p->decision.scale.min_volume = 1000000000ULL;
	p->decision.scale.min_io_nodes = 1;
	p->decision.caps.reserve = 0;
	p->decision.caps.max_pool_share = 1.0;
	return p;
}

static const struct sim_policy ALL3[] = {
	{"static", SIM_POLICY_STATIC, NULL},
	{"dfra", SIM_POLICY_DFRA, NULL}, /* policy set by run_all */
	{"oracle", SIM_POLICY_ORACLE, NULL},
};

static void run_all(struct world *w, struct policy *p, const char *curves,
		    const char *jobs)
{
	struct sim_policy pols[3];
	struct sim_config cfg = {0};
	fwd_error_t err = {""};

	memcpy(pols, ALL3, sizeof(pols));
	pols[1].policy = p;
	w->t = topo4();
	w->p = p;
	w->c = curves_str(curves, &err);
	if (!w->c)
		fail_msg("curves: %s", err.text);
	w->j = jobs_str(jobs, w->c, &err);
	if (!w->j)
		fail_msg("jobs: %s", err.text);
	cfg.topo = w->t;
	cfg.base = p;
	cfg.policies = pols;
	cfg.n_policies = 3;
	w->r = sim_run(&cfg, w->c, w->j, &err);
	if (!w->r)
		fail_msg("run: %s", err.text);
}

/*
 * One "bw" job alone, 4 nodes on fwd01, sized by its curve (the decision's
 * curve rule; DFRA's S would have said 3).  Its options within the pool of
 * 2: default 0.8 GB/s; fwd01 + 1 extra, 1.6 GB/s; 2 private, 1.6 GB/s
 * (4 forwarders do not fit).  Alone, against the online threshold (a few
 * MB/s per forwarder on an empty pool): the defaults plus 1 extra, the
 * fewer pool forwarders of the two.  Balanced blocks 2 and 2 nodes: each
 * forwarder is asked 0.8 GB/s, what it serves the app at: 1.6 GB/s,
 * 8e9 / 1.6e9 = 5 s against static 8e9 / 0.8e9 = 10 s, speed-up 2.
 * Oracle: 2.3 GB/s (2.875 of its 3 units of forwarder time), 3.478 s.
 */
static void test_dfra_scale(void **state)
{
	struct world w = {0};
	const struct sim_policy_result *st, *df, *orc;

	(void)state;
	run_all(&w, small_policy(), BW_CURVES,
		"job_id,app,nodes,submit,start,end\na,bw,4,0,0,100\n");
	st = &w.r->pols[0];
	df = &w.r->pols[1];
	orc = &w.r->pols[2];
	assert_near(st->jobs[0].io_time, 10.0);
	assert_int_equal(df->jobs[0].n_fwd, 2);
	assert_true(df->jobs[0].upgraded);
	assert_near(df->jobs[0].bw, 1.6 * GB);
	assert_near(df->jobs[0].io_time, 5.0);
	assert_near(df->speedup_max, 2.0);
	assert_int_equal(df->n_upgraded, 1);
	assert_near(df->upgraded_core_hours, 4 * 100 / 3600.0);
	assert_int_equal(df->n_refused, 0);
	/* held: 2 of 4 forwarders */
	assert_near(df->held_mean, 0.5);
	assert_near(orc->jobs[0].io_time, 8e9 / 2.3e9);
	assert_oracle_best(w.r);
	world_free(&w);
}

/*
 * Two "bw" jobs start together on fwd01; the pool has 2 forwarders.  The
 * batch's knapsack: staying on fwd01 together is worth 0.4 GB/s each; a
 * on the 2 pool forwarders (1.6 GB/s) while b keeps fwd01 to itself (0.8)
 * is worth 2.4 GB/s, the best split (one pool forwarder each: 0.8 + 0.8;
 * b on fwd01 + 1 extra and a on the other: 1.6 + 0.8 ties, and the
 * answer settles on the first); alone b would have taken pool
 * forwarders: refused (pool contention).
 *   a = 1.6 GB/s, 5 s (speed-up 4 over static's 20 s);
 *   b = 0.8 GB/s alone on fwd01, 10 s (speed-up 2);
 *   aggregate 2.4 GB/s (static 0.8).
 */
static void test_dfra_pool_exhausted(void **state)
{
	struct world w = {0};
	const struct sim_policy_result *df;

	(void)state;
	run_all(&w, small_policy(), BW_CURVES,
		"job_id,app,nodes,submit,start,end\n"
		"a,bw,4,0,0,100\nb,bw,4,0,0,100\n");
	df = &w.r->pols[1];
	assert_true(df->jobs[0].upgraded);
	assert_false(df->jobs[1].upgraded);
	assert_true(df->jobs[1].refused);
	assert_int_equal(df->n_refused, 1);
	assert_int_equal(df->jobs[1].n_fwd, 1);
	assert_int_equal(df->jobs[0].n_fwd, 2);
	assert_near(df->jobs[0].io_time, 5.0);
	assert_near(df->jobs[1].io_time, 10.0);
	assert_near(df->jobs[1].speedup, 2.0);
	assert_near(df->agg_bw_mean, 2.4e9);
	assert_near(df->upgraded_share, 0.5);
	assert_oracle_best(w.r);
	world_free(&w);
}

static const char IF_CURVES[] = "app,forwarders,bandwidth_bps\n"
				"n1,1,0.2e9\nsmall,1,0.1e9\n"
				"app,io_mode,volume,iops,mdops\n"
				"n1,N-1,2e9,10,0\nsmall,N-N,1e8,5000,0\n";

/*
 * The interference pair of test_interference under dfra: the N-1 job is
 * disruptive (4 > n1_min_nodes 2) and harmful: 2e9 B at 0.2 GB/s is 10 s
 * of I/O, times (1 + 1 vulnerable job starting on fwd01) = 20 s >=
 * min_harm 10 s; it is isolated on the 1 private forwarder its flat curve
 * asks (fwd03); the small job then has no disruptive neighbour and stays
 * on fwd01.  Nothing shares: n1 10 s, small 1e8 / 0.1e9 = 1 s (speed-up
 * 100 over static's 100 s), aggregate 0.3 GB/s = the oracle's.
 * With reserve 2 the pool has no room: n1's isolation is refused (action
 * refused) and it stays on fwd01; the small job starts with it (it is
 * not yet a running neighbour) and stays on the default mapping too,
 * without having asked for anything: dfra equals static.
 */
static void test_dfra_isolate(void **state)
{
	const char *jobs = "job_id,app,nodes,submit,start,end\n"
			   "n,n1,4,0,0,100\ns,small,2,0,0,100\n";
	struct world w = {0};
	struct policy *p = small_policy();
	const struct sim_policy_result *df;

	(void)state;
	p->decision.interference.n1_min_nodes = 2;
	run_all(&w, p, IF_CURVES, jobs);
	df = &w.r->pols[1];
	assert_true(df->jobs[0].upgraded);
	assert_int_equal(df->jobs[0].n_fwd, 1);
	assert_false(df->jobs[1].upgraded);
	assert_near(df->jobs[0].io_time, 10.0);
	assert_near(df->jobs[1].io_time, 1.0);
	assert_near(df->jobs[1].speedup, 100.0);
	assert_near(df->agg_bw_mean, 0.3e9);
	assert_near(df->agg_bw_mean, w.r->pols[2].agg_bw_mean);
	assert_oracle_best(w.r);
	world_free(&w);

	memset(&w, 0, sizeof(w));
	p = small_policy();
	p->decision.interference.n1_min_nodes = 2;
	p->decision.caps.reserve = 2;
	run_all(&w, p, IF_CURVES, jobs);
	df = &w.r->pols[1];
	assert_true(df->jobs[0].refused);
	assert_false(df->jobs[1].refused);
	assert_int_equal(df->n_refused, 1);
	assert_int_equal(df->n_upgraded, 0);
	assert_near(df->jobs[1].io_time, 100.0);
	assert_near(df->agg_bw_mean, w.r->pols[0].agg_bw_mean);
	assert_oracle_best(w.r);
	world_free(&w);
}

/*
 * The oracle bound on random small workloads: 300 traces of 2 to 8 jobs of
 * random size and time on the 4-forwarder machine, random curves and
 * classes, random caps; the oracle's aggregate bandwidth must be at least
 * static's and dfra's on every one.
 */

static void test_oracle_bound_random(void **state)
{
	static const char *const modes[] = {"N-N", "N-1", "1-1", "N-M"};

	(void)state;
	for (int round = 0; round < 300; round++) {
		char curves[2048], jobs[2048];
		size_t cl = 0, jl = 0;
		struct world w = {0};
		struct policy *p = small_policy();
		int n_apps = 1 + (int)rnd(3), n_jobs = 2 + (int)rnd(7);

		p->decision.interference.n1_min_nodes = 2;
		p->decision.caps.reserve = rnd(3);
		p->decision.caps.max_pool_share = (1 + rnd(4)) / 4.0;
		p->decision.caps.max_forwarders_per_job = 1 + rnd(4);
		cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
				       "app,forwarders,bandwidth_bps\n");
		for (int a = 0; a < n_apps; a++) {
			double bw = 0;

			for (int k = 1; k <= 4; k++) {
				/* may also fall: measured curves do */
				bw += ((double)rnd(9) - 2) * 0.2e9;
				if (bw < 0.05e9)
					bw = 0.05e9;
				cl += (size_t)snprintf(
					curves + cl, sizeof(curves) - cl,
					"a%d,%d,%.0f\n", a, k, bw);
			}
		}
		cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
				       "app,io_mode,volume,iops,mdops\n");
		for (int a = 0; a < n_apps; a++)
			cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
					       "a%d,%s,%u,%u,%u\n", a,
					       modes[rnd(4)],
					       (1 + rnd(20)) * 1000000000u,
					       rnd(3) * 1000, rnd(3) * 300);
		jl += (size_t)snprintf(jobs + jl, sizeof(jobs) - jl,
				       "job_id,app,nodes,submit,start,end\n");
		for (int i = 0; i < n_jobs; i++) {
			uint32_t start = rnd(50) * 10;

			jl += (size_t)snprintf(jobs + jl, sizeof(jobs) - jl,
					       "j%d,a%u,%u,0,%u,%u\n", i,
					       rnd((uint32_t)n_apps),
					       1 + rnd(8), start,
					       start + 10 + rnd(30) * 10);
		}
		run_all(&w, p, curves, jobs);
		for (size_t k = 0; k < 2; k++) {
			if (w.r->pols[2].agg_bw_mean <
			    w.r->pols[k].agg_bw_mean * (1 - 1e-9))
				fail_msg(
					"round %d: oracle %.6g < %s %.6g\n%s%s",
					round, w.r->pols[2].agg_bw_mean,
					w.r->pols[k].name,
					w.r->pols[k].agg_bw_mean, curves, jobs);
		}
		world_free(&w);
	}
}

/*
 * Policies that try to beat the oracle (placement callbacks): "same" puts
 * every job on both pool forwarders plus its defaults (everyone shares the
 * same forwarders), "random" gives each job a random non-empty subset of
 * its defaults and the pool or, one time in four, direct access, "direct"
 * sends every job to the file system.  On 300 random workloads (random
 * curves with a direct-access point, classes, sizes and times) none may
 * have a larger aggregate bandwidth than the oracle.  The old oracle,
 * which counted a shared default forwarder once per job and ignored
 * direct access, lost to "same" and "direct".
 */
struct adversary {
	int kind; /* 0 same, 1 random, 2 direct */
};

static int adversary_place(void *arg, size_t job, const uint32_t *defaults,
			   size_t n_defaults, uint32_t *fwd, size_t *n_fwd)
{
	const struct adversary *a = arg;
	uint32_t cand[8];
	size_t n = 0;

	(void)job;
	*n_fwd = 0;
	if (a->kind == 2 || (a->kind == 1 && rnd(4) == 0))
		return 0;
	for (size_t i = 0; i < n_defaults; i++)
		cand[n++] = defaults[i];
	cand[n++] = 2; /* fwd03, fwd04: the pool */
	cand[n++] = 3;
	for (size_t i = 0; i < n; i++)
		if (a->kind == 0 || rnd(2))
			fwd[(*n_fwd)++] = cand[i];
	if (!*n_fwd)
		fwd[(*n_fwd)++] = cand[rnd((uint32_t)n)];
	return 0;
}

static void test_oracle_adversaries(void **state)
{
	static const char *const modes[] = {"N-N", "N-1", "1-1", "N-M"};
	static const char *const names[] = {"same", "random", "direct"};

	(void)state;
	for (int round = 0; round < 300; round++) {
		char curves[2048], jobs[2048];
		size_t cl = 0, jl = 0;
		struct adversary adv[3] = {{0}, {1}, {2}};
		struct sim_policy pols[4] = {
			{"oracle", SIM_POLICY_ORACLE, NULL, NULL, NULL}};
		struct sim_config cfg = {0};
		struct world w = {0};
		fwd_error_t err = {""};
		int n_apps = 1 + (int)rnd(3), n_jobs = 2 + (int)rnd(7);

		w.p = small_policy();
		w.p->decision.interference.n1_min_nodes = 2;
		cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
				       "app,forwarders,bandwidth_bps\n");
		for (int a = 0; a < n_apps; a++) {
			double bw = 0;

			cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
					       "a%d,0,%.0f\n", a,
					       (1 + rnd(10)) * 0.1e9);
			for (int k = 1; k <= 4; k++) {
				bw += ((double)rnd(9) - 2) * 0.2e9;
				if (bw < 0.05e9)
					bw = 0.05e9;
				cl += (size_t)snprintf(
					curves + cl, sizeof(curves) - cl,
					"a%d,%d,%.0f\n", a, k * k, bw);
			}
		}
		cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
				       "app,io_mode,volume,iops,mdops\n");
		for (int a = 0; a < n_apps; a++)
			cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
					       "a%d,%s,%u,%u,%u\n", a,
					       modes[rnd(4)],
					       (1 + rnd(20)) * 1000000000u,
					       rnd(3) * 1000, rnd(3) * 300);
		jl += (size_t)snprintf(jobs + jl, sizeof(jobs) - jl,
				       "job_id,app,nodes,submit,start,end\n");
		for (int i = 0; i < n_jobs; i++) {
			uint32_t start = rnd(5) * 10;

			jl += (size_t)snprintf(jobs + jl, sizeof(jobs) - jl,
					       "j%d,a%u,%u,0,%u,%u\n", i,
					       rnd((uint32_t)n_apps),
					       1 + rnd(8), start,
					       start + 10 + rnd(30) * 10);
		}
		for (int k = 0; k < 3; k++)
			pols[k + 1] = (struct sim_policy){
				names[k], SIM_POLICY_PLACE, NULL,
				adversary_place, &adv[k]};
		w.t = topo4();
		w.c = curves_str(curves, &err);
		assert_non_null(w.c);
		w.j = jobs_str(jobs, w.c, &err);
		assert_non_null(w.j);
		cfg.topo = w.t;
		cfg.base = w.p;
		cfg.policies = pols;
		cfg.n_policies = 4;
		w.r = sim_run(&cfg, w.c, w.j, &err);
		if (!w.r)
			fail_msg("run: %s", err.text);
		for (size_t k = 1; k < 4; k++) {
			if (w.r->pols[0].agg_bw_mean <
			    w.r->pols[k].agg_bw_mean * (1 - 1e-9))
				fail_msg(
					"round %d: oracle %.6g < %s %.6g\n%s%s",
					round, w.r->pols[0].agg_bw_mean,
					w.r->pols[k].name,
					w.r->pols[k].agg_bw_mean, curves, jobs);
		}
		world_free(&w);
	}
}

/* The report renders: JSON fields and SVG files. */
static void test_report(void **state)
{
	struct world w = {0};
	char dir[] = "/tmp/test_sim.XXXXXX";
	fwd_error_t err;
	char *json;
	char path[64];
	FILE *f;

	(void)state;
	world_run(&w, BW_CURVES,
		  "job_id,app,nodes,submit,start,end\n"
		  "a,bw,4,0,0,100\nb,bw,4,0,0,100\n");
	json = sim_result_to_json(w.r, w.j, true);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"name\": \"oracle\""));
	assert_non_null(strstr(json, "\"aggregate_bandwidth_bps\": 800000000"));
	assert_non_null(strstr(json, "\"job_id\": \"b\""));
	free(json);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sim_write_svgs(w.r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/speedup.svg", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	fclose(f);
	unlink(path);
	snprintf(path, sizeof(path), "%s/utilisation.svg", dir);
	assert_int_equal(unlink(path), 0);
	rmdir(dir);
	world_free(&w);
}

/* ---- no direct access measured; Bez et al.'s static --------------------- */

/* "nd" has no k = 0 point. */
static const char ND_CURVES[] = "app,forwarders,bandwidth_bps\n"
				"nd,1,0.8e9\n"
				"nd,2,1.6e9\n"
				"app,io_mode,volume,iops,mdops\n"
				"nd,N-N,8e9,0,0\n";

static int place_none(void *arg, size_t job, const uint32_t *defaults,
		      size_t n_defaults, uint32_t *fwd, size_t *n_fwd)
{
	(void)arg;
	(void)job;
	(void)defaults;
	(void)n_defaults;
	(void)fwd;
	*n_fwd = 0;
	return 0;
}

/* Four jobs, two per default forwarder, a pool of two: the oracle forwards
 * two of them at 1.6 GB/s; the other two fall back to their default
 * mapping (0.8 GB/s), not to a direct access nobody measured (0 B/s and
 * an infinite I/O time).  A job that gets nothing (a placement on no
 * forwarder) has an infinite I/O time: null in the JSON, not a failure. */
static void test_oracle_no_direct(void **state)
{
	static const struct sim_policy pols[] = {
		{"static", SIM_POLICY_STATIC, NULL},
		{"oracle", SIM_POLICY_ORACLE, NULL},
		{"none", SIM_POLICY_PLACE, NULL, place_none, NULL, NULL}};
	const char *jobs = "job_id,app,nodes,submit,start,end\n"
			   "a,nd,4,0,0,100\nb,nd,4,0,0,100\n"
			   "c,nd,4,0,0,100\nd,nd,4,0,0,100\n";
	struct world w = {0};
	struct sim_config cfg = {0};
	fwd_error_t err = {""};
	char *json;

	(void)state;
	world_run(&w, ND_CURVES, jobs);
	for (size_t i = 0; i < 4; i++) {
		assert_true(w.r->pols[1].jobs[i].bw >= 0.8 * GB * (1 - 1e-9));
		assert_true(isfinite(w.r->pols[1].jobs[i].io_time));
	}
	assert_true(fabs(w.r->pols[1].agg_bw_mean - 4.8 * GB) < 1e-3 * GB);
	sim_result_destroy(w.r);
	cfg.topo = w.t;
	cfg.base = w.p;
	cfg.policies = pols;
	cfg.n_policies = 3;
	w.r = sim_run(&cfg, w.c, w.j, &err);
	if (!w.r)
		fail_msg("run: %s", err.text);
	assert_false(isfinite(w.r->pols[2].jobs[0].io_time));
	json = sim_result_to_json(w.r, w.j, true);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"io_time_s\": null"));
	free(json);
	world_free(&w);
}

/* static-bez: 16 nodes on 4 forwarders, R = 4; an 8-node job gets
 * ceil(8 / 4) = 2 forwarders of its own (its default, then a backup):
 * 1.6 GB/s each where static gives 0.8. */
static void test_static_bez(void **state)
{
	static const struct sim_policy pols[] = {
		{"static", SIM_POLICY_STATIC, NULL},
		{"static-bez", SIM_POLICY_STATIC_BEZ, NULL}};
	struct world w = {0};
	struct sim_config cfg = {0};
	fwd_error_t err = {""};
	char *json;

	(void)state;
	world_run(&w, ND_CURVES,
		  "job_id,app,nodes,submit,start,end\n"
		  "a,nd,8,0,0,100\nb,nd,8,0,0,100\n");
	sim_result_destroy(w.r);
	cfg.topo = w.t;
	cfg.base = w.p;
	cfg.policies = pols;
	cfg.n_policies = 2;
	w.r = sim_run(&cfg, w.c, w.j, &err);
	if (!w.r)
		fail_msg("run: %s", err.text);
	assert_true(fabs(w.r->pols[0].agg_bw_mean - 1.6 * GB) < 1e-3 * GB);
	assert_true(fabs(w.r->pols[1].agg_bw_mean - 3.2 * GB) < 1e-3 * GB);
	assert_int_equal(w.r->pols[1].jobs[0].n_fwd, 2);
	json = sim_result_to_json(w.r, w.j, false);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"kind\": \"static-bez\""));
	free(json);
	world_free(&w);
}

/*
 * The exact bound against brute force: small sets of 2-4 jobs of 2 or 4
 * nodes (none straddles a forwarder) starting together, random curves
 * with a direct point, random classes and caps.  Every combination of
 * the options a decision may give them (default, defaults plus e extras,
 * k private pool forwarders, direct where allowed; within the reserve,
 * the pool share and max_forwarders_per_job) is simulated with a
 * placement callback; the exact policy must equal the best of them and
 * be at least static and dfra.
 */
struct combo {
	const struct policy *p;
	int n_jobs;
	int opt[4];	 /* per job: its option index */
	int kind[4][16]; /* 0 default, 1 extras, 2 private, 3 direct */
	int cnt[4][16];	 /* extras or private count */
	int n_opt[4];
};

static int combo_place(void *arg, size_t job, const uint32_t *defaults,
		       size_t n_defaults, uint32_t *fwd, size_t *n_fwd)
{
	struct combo *c = arg;
	int o = c->opt[job], kind = c->kind[job][o], n = c->cnt[job][o];
	static uint32_t next; /* the next pool forwarder: fwd03, fwd04 */

	if (job == 0)
		next = 2;
	*n_fwd = 0;
	if (kind == 3)
		return 0;
	if (kind <= 1)
		for (size_t i = 0; i < n_defaults; i++)
			fwd[(*n_fwd)++] = defaults[i];
	if (kind >= 1)
		for (int i = 0; i < n; i++)
			fwd[(*n_fwd)++] = next++;
	return 0;
}

static double run_one(struct world *w, const struct sim_policy *pol)
{
	struct sim_config cfg = {
		.topo = w->t, .base = w->p, .policies = pol, .n_policies = 1};
	fwd_error_t err = {""};
	struct sim_result *r = sim_run(&cfg, w->c, w->j, &err);
	double v;

	if (!r)
		fail_msg("run: %s", err.text);
	v = r->pols[0].agg_bw_mean;
	assert_int_equal(r->pols[0].n_unproven, 0);
	sim_result_destroy(r);
	return v;
}

static void test_exact_brute_force(void **state)
{
	static const char *const modes[] = {"N-N", "N-1", "1-1"};

	(void)state;
	for (int round = 0; round < 150; round++) {
		char curves[2048], jobs[1024];
		size_t cl = 0, jl = 0;
		struct world w = {0};
		struct policy *p = small_policy();
		struct combo c = {.p = p};
		int n_apps = 1 + (int)rnd(3), nodes = rnd(2) ? 4 : 2;
		uint32_t pool = 2, usable, share, kcap;
		double best = 0, ex, st, df;
		long total = 1;

		c.n_jobs = 2 + (int)rnd(3);
		p->decision.interference.n1_min_nodes = 1;
		p->decision.caps.reserve = rnd(2);
		p->decision.caps.max_pool_share = (1 + rnd(2)) / 2.0;
		p->decision.caps.max_forwarders_per_job = 1 + rnd(4);
		p->decision.curve.direct = rnd(2);
		usable = pool - p->decision.caps.reserve;
		share = (uint32_t)floor(p->decision.caps.max_pool_share * pool);
		kcap = p->decision.caps.max_forwarders_per_job;
		if (kcap > (uint32_t)nodes)
			kcap = (uint32_t)nodes;
		cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
				       "app,forwarders,bandwidth_bps\n");
		for (int a = 0; a < n_apps; a++) {
			double bw = 0;

			cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
					       "a%d,0,%.0f\n", a,
					       (1 + rnd(8)) * 0.1e9);
			for (int k = 1; k <= 4; k++) {
				bw += ((double)rnd(9) - 2) * 0.2e9;
				if (bw < 0.05e9)
					bw = 0.05e9;
				cl += (size_t)snprintf(
					curves + cl, sizeof(curves) - cl,
					"a%d,%d,%.0f\n", a, k, bw);
			}
		}
		cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
				       "app,io_mode,volume,iops,mdops\n");
		for (int a = 0; a < n_apps; a++)
			cl += (size_t)snprintf(curves + cl, sizeof(curves) - cl,
					       "a%d,%s,%u,%u,%u\n", a,
					       modes[rnd(3)],
					       (1 + rnd(20)) * 1000000000u,
					       rnd(3) * 1000, rnd(3) * 300);
		jl += (size_t)snprintf(jobs + jl, sizeof(jobs) - jl,
				       "job_id,app,nodes,submit,start,end\n");
		for (int i = 0; i < c.n_jobs; i++)
			jl += (size_t)snprintf(jobs + jl, sizeof(jobs) - jl,
					       "j%d,a%u,%d,0,0,100\n", i,
					       rnd((uint32_t)n_apps), nodes);
		run_all(&w, p, curves, jobs);
		st = w.r->pols[0].agg_bw_mean;
		df = w.r->pols[1].agg_bw_mean;
		{
			struct sim_policy e = {"exact", SIM_POLICY_EXACT, p};

			ex = run_one(&w, &e);
		}
		/* the options, as the contract states them */
		for (int i = 0; i < c.n_jobs; i++) {
			const struct sim_app *a = &w.c->apps[w.j->jobs[i].app];
			int n = 0;

			c.kind[i][n++] = 0;
			for (uint32_t e = 1;
			     1 + e <= kcap && e <= share && e <= usable; e++) {
				c.kind[i][n] = 1;
				c.cnt[i][n++] = (int)e;
			}
			for (uint32_t k = 1;
			     k <= kcap && k <= share && k <= usable; k++) {
				c.kind[i][n] = 2;
				c.cnt[i][n++] = (int)k;
			}
			if (p->decision.curve.direct && a->direct_bps > 0)
				c.kind[i][n++] = 3;
			c.n_opt[i] = n;
			total *= n;
		}
		for (long x = 0; x < total; x++) {
			struct sim_policy pl = {"combo", SIM_POLICY_PLACE, NULL,
						combo_place, &c};
			uint32_t take = 0;
			long y = x;

			for (int i = 0; i < c.n_jobs; i++) {
				c.opt[i] = (int)(y % c.n_opt[i]);
				y /= c.n_opt[i];
				if (c.kind[i][c.opt[i]] == 1 ||
				    c.kind[i][c.opt[i]] == 2)
					take += (uint32_t)c.cnt[i][c.opt[i]];
			}
			if (take > usable)
				continue;
			best = fmax(best, run_one(&w, &pl));
		}
		if (fabs(ex - best) > 1e-9 * best || ex < st * (1 - 1e-9) ||
		    ex < df * (1 - 1e-9))
			fail_msg("round %d: exact %.9g, brute force %.9g, "
				 "static %.9g, dfra %.9g\n%s%s",
				 round, ex, best, st, df, curves, jobs);
		world_free(&w);
	}
}

/*
 * The search itself against brute force, on instances built to contend:
 * 2-7 items, each with 1-5 options (0-3 pool forwarders; on 0-2 of 1-3
 * shared forwarders, loads 0.05-1.5 each, so that a forwarder is often
 * loaded several times over; phi 0.3-1), classes and slowdowns at
 * random, a pool of 0-6.  Every combination within the pool is valued as
 * sim_exact.c's top comment states the model (each staying item gets
 * d * min(phi, min over its shared forwarders of min(1, 1 / L) / slow),
 * slow the worst slowdown the other items there inflict on its class);
 * the search must prove the best of them, and its pick must be worth it.
 */
struct bf_opt {
	uint32_t take, n_sh, sh[2];
	double d, phi, load[2];
};

static double bf_value(int n, const int *cls, const struct bf_opt *const *o,
		       const double (*slow)[SIM_N_CLASSES])
{
	double L[3] = {0}, v = 0;

	for (int i = 0; i < n; i++)
		for (uint32_t j = 0; j < o[i]->n_sh; j++)
			L[o[i]->sh[j]] += o[i]->load[j];
	for (int i = 0; i < n; i++) {
		double f = o[i]->phi;

		if (!o[i]->n_sh) {
			v += o[i]->d;
			continue;
		}
		for (uint32_t j = 0; j < o[i]->n_sh; j++) {
			uint32_t s = o[i]->sh[j];
			double share = L[s] > 1 ? 1 / L[s] : 1, sl = 1;

			for (int q = 0; q < n; q++) {
				bool there = false;

				for (uint32_t m = 0; q != i && m < o[q]->n_sh;
				     m++)
					there |= o[q]->sh[m] == s;
				if (there && slow[cls[i]][cls[q]] > sl)
					sl = slow[cls[i]][cls[q]];
			}
			if (share / sl < f)
				f = share / sl;
		}
		v += o[i]->d * f;
	}
	return v;
}

static void test_exact_search_contended(void **state)
{
	(void)state;
	for (int round = 0; round < 400; round++) {
		struct bf_opt opt[7][5];
		int n = 2 + (int)rnd(6), n_opt[7], cls[7], pick[7] = {0};
		uint32_t n_shared = 1 + rnd(3), pool = rnd(7);
		double slow[SIM_N_CLASSES][SIM_N_CLASSES], best = -1;
		struct sim_exact x = {0};
		const struct bf_opt *sel[7];
		size_t n_opts = 0, n_sh = 0;

		for (int a = 0; a < SIM_N_CLASSES; a++)
			for (int b = 0; b < SIM_N_CLASSES; b++)
				slow[a][b] = rnd(3) ? 1 : 1 + rnd(10) / 10.0;
		for (int i = 0; i < n; i++) {
			cls[i] = (int)rnd(SIM_N_CLASSES);
			n_opt[i] = 1 + (int)rnd(5);
			for (int k = 0; k < n_opt[i]; k++) {
				struct bf_opt *o = &opt[i][k];

				o->take = k ? rnd(4) : 0;
				o->d = (1 + rnd(100)) * 1e7;
				o->phi = rnd(2) ? 1 : 0.3 + rnd(8) / 10.0;
				o->n_sh = k ? rnd(3) : 1;
				if (o->n_sh > n_shared)
					o->n_sh = n_shared;
				o->sh[0] = rnd(n_shared);
				o->sh[1] = (o->sh[0] + 1) % n_shared;
				for (uint32_t j = 0; j < 2; j++)
					o->load[j] = (5 + rnd(146)) / 100.0;
			}
		}
		/* brute force: every combination within the pool */
		for (;;) {
			uint32_t take = 0;
			int i;

			for (i = 0; i < n; i++) {
				sel[i] = &opt[i][pick[i]];
				take += sel[i]->take;
			}
			if (take <= pool) {
				double v = bf_value(n, cls, sel, slow);

				best = v > best ? v : best;
			}
			for (i = 0; i < n && ++pick[i] == n_opt[i]; i++)
				pick[i] = 0;
			if (i == n)
				break;
		}
		assert_true(best >= 0); /* every item's option 0 takes none */
		/* the same instance for the search */
		x.items = calloc((size_t)n, sizeof(*x.items));
		x.opts = calloc(35, sizeof(*x.opts));
		x.sh_idx = calloc(70, sizeof(*x.sh_idx));
		x.sh_load = calloc(70, sizeof(*x.sh_load));
		x.pick = calloc((size_t)n, sizeof(*x.pick));
		assert_non_null(x.items && x.opts && x.sh_idx && x.sh_load &&
				x.pick);
		for (int i = 0; i < n; i++) {
			x.items[i] = (struct sim_exact_item){
				.cls = (enum sim_class)cls[i],
				.opt_off = n_opts,
				.n_opt = (size_t)n_opt[i]};
			for (int k = 0; k < n_opt[i]; k++) {
				const struct bf_opt *o = &opt[i][k];

				x.opts[n_opts++] =
					(struct sim_exact_opt){.take = o->take,
							       .d = o->d,
							       .phi = o->phi,
							       .n_sh = o->n_sh,
							       .sh_off = n_sh,
							       .tag = k};
				for (uint32_t j = 0; j < o->n_sh; j++) {
					x.sh_idx[n_sh] = o->sh[j];
					x.sh_load[n_sh++] = o->load[j];
				}
			}
		}
		x.n_items = (size_t)n;
		x.n_opts = n_opts;
		x.n_shared = n_shared;
		x.pool = pool;
		x.slowdown = (const double(*)[SIM_N_CLASSES])slow;
		x.max_nodes = 100000000ULL;
		assert_int_equal(sim_exact_solve(&x), 0);
		if (!x.proven || fabs(x.value - best) > 1e-9 * best)
			fail_msg("round %d: search %.9g (proven %d), "
				 "brute force %.9g",
				 round, x.value, x.proven, best);
		/* the pick (options reordered: tag is the original index) */
		for (int i = 0; i < n; i++)
			sel[i] = &opt[i][x.opts[x.items[i].opt_off + x.pick[i]]
						 .tag];
		assert_true(fabs(bf_value(n, cls, sel, slow) - best) <=
			    1e-9 * best);
		free(x.items);
		free(x.opts);
		free(x.sh_idx);
		free(x.sh_load);
		free(x.pick);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_curves_errors),
		cmocka_unit_test(test_jobs_errors),
		cmocka_unit_test(test_jobs_many_errors),
		cmocka_unit_test(test_jobs_ok),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_curve_shape),
		cmocka_unit_test(test_two_share),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_io_seconds),
		cmocka_unit_test(test_interference),
		cmocka_unit_test(test_placement),
		cmocka_unit_test(test_dfra_scale),
		cmocka_unit_test(test_dfra_pool_exhausted),
		cmocka_unit_test(test_dfra_isolate),
		cmocka_unit_test(test_oracle_bound_random),
		cmocka_unit_test(test_oracle_adversaries),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_oracle_no_direct),
		cmocka_unit_test(test_static_bez),
		cmocka_unit_test(test_exact_brute_force),
		cmocka_unit_test(test_exact_search_contended),
		cmocka_unit_test(test_run_requires_inputs),
	};

	return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
