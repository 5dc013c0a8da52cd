/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_ANOMALY_H
#define FWD_MONITOR_ANOMALY_H

/*
 * Fail-slow detection for forwarders and OSTs (DESIGN.md "Anomaly
 * detection", Beacon NSDI'19 section 4.2 and Appendix B).  Pure functions
 * on time series: no database, no clock, no output.  The health scan
 * (monitor/health.h) feeds them from the store and turns their verdicts
 * into health states.
 *
 * Three detectors, every threshold from struct policy_anomaly:
 *
 *  - anomaly_peer_check(): inside one finished job, the forwarders (or the
 *    OSTs) it used served the same application and should look alike.  A
 *    member is flagged when its average AND its peak bandwidth are both
 *    below bandwidth_fraction x the members' mean peak while it carried at
 *    least volume_fraction x the members' mean volume: it had its share of
 *    the work and did it slowly (Beacon's LAMMPS and Shentu cases).
 *
 *  - anomaly_sustained_check(): one component's bandwidth stayed under
 *    peak_fraction x its benchmarked peak for at least `duration` while it
 *    was loaded (Beacon Table 2: under 30 % for 60 minutes).
 *
 *  - anomaly_phase_check(): the I/O phases (duration, volume) of a new run
 *    are clustered with DBSCAN together with the phases of the same
 *    application's past runs at the same scale; phases that fall outside
 *    every cluster make the run a job-level anomaly, reported with the
 *    jobs that shared its forwarders at the time and whether they were
 *    interference-prone.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "policies/policy.h"

/*
 * One statistics sample of one component (a per-minute rollup or a raw
 * sample): what it did during [time, time + seconds).
 */
struct anomaly_sample {
	double time;	/* interval start, Unix seconds */
	double seconds; /* interval length, > 0 */
	double bytes;	/* bytes read + written in the interval */
	double ops;	/* read, write and metadata operations in it */
	/*
	 * Mean request queue length in the interval, or a negative number
	 * when the component does not report one (OSTs).  When known, a
	 * component only counts as loaded if requests were waiting: a
	 * healthy but lightly used forwarder serves every request at once
	 * and keeps an empty queue, a slow one under demand does not.
	 */
	double queue;
};

/* Bandwidth of a sample, bytes/s. */
double anomaly_sample_bps(const struct anomaly_sample *s);

/* ---- peer comparison inside one job ---------------------------------- */

/* The samples of one member (a forwarder or an OST) during the job. */
struct anomaly_series {
	const char *name;
	const struct anomaly_sample *samples;
	size_t n_samples;
};

struct anomaly_peer_stat {
	double volume;	 /* bytes over all samples */
	double avg_bps;	 /* bytes / seconds over the active samples */
	double peak_bps; /* highest active sample; 0 when never active */
	size_t active;	 /* samples above the noise floor */
	bool flagged;
};

struct anomaly_peer_result {
	/* False when the job is too small or has fewer than two members
	 * with activity; `reason` then says why and nothing is flagged. */
	bool eligible;
	char reason[160];
	double mean_peak_bps; /* over the members */
	double mean_volume;   /* over the members */
	size_t n_flagged;
};

/*
 * Compare the members of one finished job.  `job_nodes` is the job's node
 * count; the job's volume is the sum of the members' volumes.  Only jobs
 * with at least min_job_nodes nodes and min_job_volume bytes are used.
 * Samples whose bandwidth is at or below noise_floor count for the volume
 * but not for the average or the peak (an idle minute says nothing about
 * speed).  stats[i] receives member i's figures and verdict.
 *
 * Returns the number of flagged members (0 for an ineligible job), or -1
 * with errno EINVAL and err naming the member and sample (a negative or
 * non-finite value, a non-positive interval).
 */
int anomaly_peer_check(const struct policy_peer_detector *p, uint32_t job_nodes,
		       const struct anomaly_series *members, size_t n_members,
		       struct anomaly_peer_stat *stats,
		       struct anomaly_peer_result *res, fwd_error_t *err);

/* ---- sustained low bandwidth of one component ------------------------ */

/*
 * A stretch of consecutive loaded samples that were all slow.  A sample is
 * loaded when its ops/s reach min_load_ops (and, when the queue is known,
 * at least one request was waiting on average); it is slow when its
 * bandwidth is under peak_fraction x the benchmarked peak.  A sample that
 * is not loaded, a fast loaded sample, or a gap in time between samples
 * ends the stretch: the detector only claims what it saw.
 */
struct anomaly_stretch {
	double start, end; /* Unix seconds */
	double max_bps;	   /* highest bandwidth inside the stretch */
};

struct anomaly_sustained_result {
	bool flagged;			/* longest stretch >= duration */
	struct anomaly_stretch longest; /* zero when there is none */
	size_t n_stretches;		/* stretches of at least `duration` */
};

/*
 * Samples must be in time order.  peak_bps is the component's benchmarked
 * peak (topology bandwidth_bps).  Returns 0, or -1 with errno EINVAL and
 * err naming the sample (out of order, negative, non-finite) or the peak
 * (not positive).
 */
int anomaly_sustained_check(const struct policy_sustained_detector *p,
			    double peak_bps,
			    const struct anomaly_sample *samples, size_t n,
			    struct anomaly_sustained_result *res,
			    fwd_error_t *err);

/* ---- verdict of one scan window --------------------------------------- */

enum anomaly_verdict {
	ANOMALY_NONE = 0, /* no evidence either way (idle, or slow but not
			   * for long enough yet) */
	ANOMALY_GOOD,	  /* loaded and served at a healthy rate */
	ANOMALY_BAD,	  /* a detector flagged it in this window */
};

const char *anomaly_verdict_name(enum anomaly_verdict v);

/*
 * Sustained-detector verdict of the window [wstart, wend) for one
 * component, given its samples from at least `duration` before wstart up
 * to wend (earlier and later samples are ignored).  BAD when a slow loaded
 * stretch had lasted `duration` at some point inside the window; else GOOD
 * when a loaded sample inside the window was at or above the threshold;
 * else NONE.  `reason` (may be NULL) receives a sentence for the health
 * history.  Returns the verdict, or -1 with errno EINVAL and err set.
 */
int anomaly_window_verdict(const struct policy_sustained_detector *p,
			   double peak_bps,
			   const struct anomaly_sample *samples, size_t n,
			   double wstart, double wend, char *reason,
			   size_t reason_len, fwd_error_t *err);

/* ---- job-level anomaly: DBSCAN on I/O phases -------------------------- */

struct anomaly_phase {
	double duration; /* seconds */
	double volume;	 /* bytes */
};

/* A job that may have shared forwarders with the checked run. */
struct anomaly_neighbour {
	const char *job_id;
	double start, end;	       /* Unix seconds */
	const char *const *forwarders; /* names */
	size_t n_forwarders;
	uint32_t nodes;
	bool n_to_1;	      /* dominant I/O mode N-1 */
	double metadata_rate; /* md ops/s in I/O phases */
	double peak_bps;
};

/* The run under check. */
struct anomaly_run {
	const char *job_id;
	double start, end;
	const char *const *forwarders;
	size_t n_forwarders;
	const struct anomaly_phase *phases;
	size_t n_phases;
};

struct anomaly_neighbour_report {
	size_t index;	   /* into the neighbours given */
	bool disruptive;   /* per policy.decision.interference */
	char reasons[160]; /* "N-1 on 128 nodes; 450 md ops/s", or "" */
};

struct anomaly_phase_report {
	/* False when the history holds fewer than dbscan.min_points phases:
	 * no verdict, `reason` says so. */
	bool checked;
	char reason[160];
	bool anomalous;	   /* some phase of the run is noise */
	size_t n_clusters; /* clusters found in history + run */
	size_t n_outliers; /* phases of the run that are noise */
	bool *outlier;	   /* n_phases flags, malloc'd */
	struct anomaly_neighbour_report *neighbours; /* malloc'd, only those
						      * overlapping in time and
						      * sharing a forwarder */
	size_t n_neighbours;
	size_t n_disruptive;
};

/*
 * Normalise every phase by the largest duration and the largest volume
 * found in `history` (so past phases lie in [0, 1] and a slower or larger
 * new phase beyond 1), cluster history and run together with
 * dbscan.eps/min_points, and report the run's phases that are noise.  For
 * an anomalous run, the neighbours that overlapped it in time and shared a
 * forwarder are listed with their disruptive features (N-1 with more than
 * n1_min_nodes nodes, more than metadata_heavy_rate md ops/s, a peak above
 * high_bandwidth when that is not 0).
 *
 * Returns 0 (rep filled; release with anomaly_phase_report_free()), or -1
 * with errno EINVAL (a negative or non-finite phase) or ENOMEM and err set.
 */
int anomaly_phase_check(const struct policy_anomaly *pa,
			const struct policy_interference *pi,
			const struct anomaly_phase *history, size_t n_history,
			const struct anomaly_run *run,
			const struct anomaly_neighbour *neighbours,
			size_t n_neighbours, struct anomaly_phase_report *rep,
			fwd_error_t *err);

void anomaly_phase_report_free(struct anomaly_phase_report *rep);

#endif
