/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SIM_SIM_H
#define FWD_SIM_SIM_H

/*
 * What-if simulator: replay a job trace against the forwarding layer under
 * several allocation policies and report what each would have achieved.
 * The model (placement, bandwidth sharing, interference, I/O time, the
 * oracle) is documented in sim/SIM.md; this header is the contract.
 *
 * Typical use (cli/cmd_sim.c):
 *
 *	struct sim_curves *c = sim_curves_load("curves.csv", &err);
 *	struct sim_jobs *j = sim_jobs_load("jobs.csv", c, &err);
 *	struct sim_policy pols[] = { { "static", SIM_POLICY_STATIC, NULL },
 *				     { "dfra", SIM_POLICY_DFRA, pol },
 *				     { "oracle", SIM_POLICY_ORACLE, NULL } };
 *	struct sim_config cfg = { .topo = t, .base = pol, .policies = pols,
 *				  .n_policies = 3 };
 *	struct sim_result *r = sim_run(&cfg, c, j, &err);
 *	char *json = sim_result_to_json(r, j, false);
 *	sim_result_destroy(r);
 *
 * The simulator is a library: it never prints; progress goes through a
 * callback.  Deterministic: the same inputs give the same report.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/vocab.h"

struct policy;
struct topology;

/* At most this many errors are collected from one input file before
 * loading stops; the message lists them, one per line. */
#define SIM_MAX_ERRORS 20

/*
 * Interference classes.  A job is in exactly one class, tested in this
 * order against the base policy's decision.interference thresholds
 * (policy_job_disruptive(), policy_job_vulnerable(): the decision's own
 * reading): N-1 with more than n1_min_nodes nodes, metadata rate above
 * metadata_heavy_rate, peak bandwidth above high_bandwidth (when > 0),
 * IOPS above vulnerable_iops, else light.
 */
enum sim_class {
	SIM_CLASS_LIGHT = 0,
	SIM_CLASS_IOPS,
	SIM_CLASS_BANDWIDTH,
	SIM_CLASS_METADATA,
	SIM_CLASS_N1,
	SIM_N_CLASSES,
};

struct sim_point {
	uint32_t k; /* forwarders */
	double bps; /* bandwidth the application reaches alone */
};

struct sim_app {
	char *name;
	struct sim_point *pts; /* k >= 1, sorted by k, unique */
	size_t n_pts;
	double direct_bps; /* k = 0 point, or 0 when not given */
	size_t curve_line; /* first curve line, for messages */
	/* Profile section; has_profile false = all defaults below. */
	bool has_profile;
	enum fwd_io_mode io_mode; /* default unknown */
	double volume;		  /* bytes per job; 0 = not given */
	double iops;		  /* default 0 */
	double mdops;		  /* metadata ops/s in I/O phases, 0 */
	size_t profile_line;
};

struct sim_curves {
	char *path;
	struct sim_app *apps;
	size_t n_apps;
	/* slowdown[victim][disruptor] >= 1; defaults from the DFRA pairwise
	 * study (SIM.md), overridden by a `victim,disruptor,slowdown`
	 * section. */
	double slowdown[SIM_N_CLASSES][SIM_N_CLASSES];
};

struct sim_job {
	char *id;
	size_t app;		   /* index into curves->apps */
	uint32_t nodes;		   /* node count */
	double submit, start, end; /* epoch seconds, start < end */
	double io_seconds;	   /* measured I/O time under static; < 0 when
				    * not given */
	size_t line;
};

struct sim_jobs {
	char *path;
	struct sim_job *jobs;
	size_t n;
};

/*
 * Strict CSV loaders (format in SIM.md).  On any bad line they return NULL
 * with errno EINVAL and err->text listing "FILE:LINE: what" for up to
 * SIM_MAX_ERRORS bad lines, one per line.  The jobs loader resolves app
 * names against `curves` (an unknown app is an error on that job line) and
 * checks that every job has an I/O size: io_seconds, or a volume in its
 * app's profile.
 */
struct sim_curves *sim_curves_load(const char *path, fwd_error_t *err);
struct sim_curves *sim_curves_parse(FILE *f, const char *name,
				    fwd_error_t *err);
void sim_curves_destroy(struct sim_curves *c);
struct sim_jobs *sim_jobs_load(const char *path, const struct sim_curves *c,
			       fwd_error_t *err);
struct sim_jobs *sim_jobs_parse(FILE *f, const char *name,
				const struct sim_curves *c, fwd_error_t *err);
void sim_jobs_destroy(struct sim_jobs *j);

/* Time field: seconds (a decimal number) or ISO-8601 UTC
 * "YYYY-MM-DDTHH:MM:SS[.fff][Z|+00:00]".  0 or -1 (EINVAL). */
int sim_parse_time(const char *s, double *out);

/* The application's bandwidth alone with k >= 1 forwarders (SIM.md:
 * linear between points, proportional below the first, flat above the
 * last; k = 0: direct access, the k = 0 point or 0) and its best
 * bandwidth with at most k >= 1 forwarders. */
double sim_curve_bw(const struct sim_app *a, uint32_t k);
double sim_curve_best(const struct sim_app *a, uint32_t k);
double sim_curve_peak(const struct sim_app *a);
/* The app's best bandwidth per forwarder, max over points of bw(k) / k
 * (k >= 1): what one forwarder delivers to it when busy with it alone. */
double sim_curve_sat(const struct sim_app *a);

enum sim_class sim_classify(const struct policy *p, const struct sim_app *a,
			    uint32_t nodes);
const char *sim_class_name(enum sim_class c);
int sim_class_parse(const char *s, enum sim_class *out);
/* Default slowdown table (SIM.md cites each entry). */
void sim_default_slowdown(double out[SIM_N_CLASSES][SIM_N_CLASSES]);

/*
 * Learning (SIM.md "Learning", sim_learn.c): what history holds of each
 * application, its runs' achieved bandwidth per forwarder count and
 * whether the forwarders were its own.  seed_k1: start with each app's
 * k = 1 point (its curve there), else empty.  A `dfra` policy given a
 * history decides from it (the median of its private runs per k, k = 0 as
 * direct access) instead of the exact curves, and records every run it
 * simulates.  The history outlives the runs: several sim_run() calls may
 * share it.
 */
struct sim_history;
struct sim_history *sim_history_create(const struct sim_curves *c,
				       bool seed_k1);
void sim_history_destroy(struct sim_history *h);
int sim_history_record(struct sim_history *h, size_t app, uint32_t k,
		       bool private_fwd, double bps);
/* Runs recorded for app at k (private or not). */
size_t sim_history_runs(const struct sim_history *h, size_t app, uint32_t k);
/* The app's measured curve: up to max points (k >= 1, ascending), the
 * direct-access median in *direct (0 when none); returns the count. */
size_t sim_history_curve(const struct sim_history *h, size_t app,
			 struct sim_point *pts, size_t max, double *direct);

enum sim_policy_kind {
	SIM_POLICY_STATIC = 0, /* FFM: every job on its default forwarders */
	SIM_POLICY_DFRA,       /* the production decision (alloc_decide) */
	SIM_POLICY_ORACLE,     /* upper bound (SIM.md "Oracle") */
	SIM_POLICY_PLACE,      /* forwarders chosen by a callback (tests) */
	/* Bez et al., IPDPS'21, STATIC: each job ceil(C_a / R) forwarders of
	 * its own, R = compute nodes per forwarder of the topology (SIM.md) */
	SIM_POLICY_STATIC_BEZ,
	/* the exact bound of each batch of jobs starting together (SIM.md
	 * "Exact"): the best combination of the options a decision may give
	 * them (default, default plus extras, private, direct where the
	 * policy allows it, within its caps), valued with this model */
	SIM_POLICY_EXACT,
};

/*
 * A placement callback (SIM_POLICY_PLACE): for job `job` (index into
 * sim_jobs) starting with its default forwarders `defaults`, write the
 * forwarders it gets into fwd (distinct topology indexes, room for every
 * forwarder of the topology) and their number into *n_fwd; *n_fwd = 0
 * means direct file-system access (the app's k = 0 point).  The job's
 * nodes are spread evenly over them.  0, or -1 to abort the run.
 */
typedef int (*sim_place_fn)(void *arg, size_t job, const uint32_t *defaults,
			    size_t n_defaults, uint32_t *fwd, size_t *n_fwd);

struct sim_policy {
	const char *name; /* label in the report */
	enum sim_policy_kind kind;
	const struct policy *policy; /* DFRA; ORACLE, EXACT (optional):
				      * direct access only where it allows
				      * it; EXACT: within its caps */
	sim_place_fn place;	     /* SIM_POLICY_PLACE only */
	void *place_arg;
	struct sim_history *history; /* DFRA: decide from it and fill it
				      * (NULL: the exact curves) */
};

struct sim_config {
	const struct topology *topo;
	/* Classification thresholds (interference section).  Required. */
	const struct policy *base;
	/* Policies to run.  The static baseline is always simulated first,
	 * whether listed or not; only listed ones are reported. */
	const struct sim_policy *policies;
	size_t n_policies;
	double cores_per_node; /* for core-hours; 0 = 1 */
	size_t max_series;     /* utilisation samples kept per policy;
				* 0 = 512 */
	/* Called about every 1/64 of a run's events; may be NULL. */
	void (*progress)(void *arg, const char *policy, size_t done,
			 size_t total);
	void *progress_arg;
};

struct sim_job_result {
	bool placed;	/* enough free nodes at its start (SIM.md) */
	uint32_t n_f;	/* distinct default forwarders */
	uint32_t n_fwd; /* forwarders held (oracle: at start) */
	bool upgraded;	/* action scale or isolate (oracle: got
			 * extra forwarders at any time) */
	bool refused;	/* dfra: action refused */
	double bw;	/* effective bandwidth, bytes/s */
	double io_time; /* seconds */
	double speedup; /* static io_time / io_time */
};

struct sim_sample {
	double t;
	double util; /* carried bandwidth / total capacity */
	double held; /* share of forwarders with a job on them */
};

struct sim_policy_result {
	char *name;
	enum sim_policy_kind kind;
	struct sim_job_result *jobs; /* parallel to sim_jobs.jobs */
	double agg_bw_mean; /* time-mean of the sum of job bandwidths */
	double agg_bw_peak;
	double io_time_total;
	double speedup_median, speedup_mean, speedup_max, speedup_min;
	size_t n_upgraded;
	double upgraded_share; /* of placed jobs */
	double upgraded_core_hours;
	size_t n_refused;
	double util_mean, held_mean;
	struct sim_sample *series;
	size_t n_series;
	/* Wall-clock seconds this policy's run took (monotonic clock), for
	 * benchmarks; not part of any report, which stay deterministic. */
	double elapsed_s;
	/* exact: batches whose search stopped at its node limit (their
	 * figure is the best found, not proven) */
	size_t n_unproven;
};

struct sim_result {
	size_t n_jobs, n_placed;
	double t0, t1; /* first start, last end */
	size_t n_forwarders, n_pool;
	struct sim_policy_result *pols; /* as listed in the config */
	size_t n_pols;
};

/*
 * Run every policy of the config.  NULL with errno and err on failure
 * (bad config, a decision error from the allocator, ENOMEM).
 */
struct sim_result *sim_run(const struct sim_config *cfg,
			   const struct sim_curves *c, const struct sim_jobs *j,
			   fwd_error_t *err);
void sim_result_destroy(struct sim_result *r);

/* Reports.  JSON: malloc'd string (NULL with errno) (fwdctl sim prints
 * the table).  SVG: written to files in dir (created if missing); 0 or -1
 * with err. */
char *sim_result_to_json(const struct sim_result *r, const struct sim_jobs *j,
			 bool per_job);
int sim_write_svgs(const struct sim_result *r, const char *dir,
		   fwd_error_t *err);

#endif
