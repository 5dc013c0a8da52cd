/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_PROFILE_H
#define FWD_PROFILER_PROFILE_H

/*
 * Application profiles: the prediction of a job's I/O behaviour from the
 * past runs of the same application ("HPC applications have consistent
 * I/O behavior across runs").
 *
 * Key: the fields named by policy.history.key, in that order, as
 * "field=value" pairs joined by ';' (e.g. "user=alice;name=wrf;
 * node_bucket=256", db/SCHEMA.md).  In values ';', '=', '%' and
 * control characters are percent-encoded (%3B), so the key is
 * unambiguous whatever the job name holds.  A key longer than
 * PROFILE_KEY_MAX bytes (a long name, or one of many encoded characters)
 * is cut: its first bytes (never splitting an escape or a UTF-8
 * character), then "%~" and the SHA-256 of the whole key in hex, at most
 * PROFILE_KEY_MAX bytes in all.  "%~" never occurs in a key that was not
 * cut, so two different jobs' keys never meet and the same job always
 * gets the same key, whatever its name.  node_bucket is
 * the largest power of policy.history.bucket_base not above the job's node
 * count (300 nodes, base 2 -> 256).
 *
 * Prediction (profile_predict): among the runs not older than max_age,
 * the runs at the nearest scale (the node count closest to the new job's,
 * ties to the larger), the K most recent of them; each figure is their
 * median (the mean of the two middle values for an even count).  Volume,
 * I/O nodes, peak bandwidth, IOPS and metadata ops/s are per-node figures
 * scaled to the new job: median * nodes / scale_nodes (I/O nodes rounded,
 * kept within [1, nodes]; a 1-1 application keeps one I/O node).  B_c
 * (per-node bandwidth) and the metadata queue length are not scaled.  The
 * I/O mode is the most frequent among those runs (ties: the most recent).
 * bandwidth_by_forwarders: over all runs of the key that held k
 * forwarders and recorded the bandwidth they achieved, the median per k;
 * k = 0 (direct file-system access) from the runs decided direct.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "policies/policy.h"
#include "profiler/summary.h"

/* One past run of the application, from a stored job summary. */
struct profile_run {
	int64_t end_time;	  /* when the run ended, UTC seconds */
	uint32_t nodes;		  /* nodes of the job */
	uint64_t io_volume_bytes; /* read + written */
	uint64_t read_bytes, write_bytes;
	double runtime; /* seconds; 0: unknown */
	uint32_t io_nodes;
	double node_bandwidth_bps; /* B_c in I/O phases */
	double peak_bandwidth_bps;
	double iops;
	double mdops;	       /* metadata ops/s in I/O phases */
	double metadata_queue; /* < 0: unknown */
	enum fwd_io_mode io_mode;
	uint32_t forwarders; /* forwarders held; 0: unknown */
	double achieved_bps; /* bandwidth achieved with them; 0: unknown */
	bool private_fwd;    /* every one of them was the job's own */
	bool direct;	     /* decided direct, no forwarder (k = 0) */
};

#define PROFILE_MAX_BW 64

/* The application's bandwidth with k forwarders: the median of the runs
 * that had k forwarders of their own, or when none did, of those that
 * shared them (a shared run says as much about its neighbours); how many
 * runs that is, and their spread (largest - smallest). */
struct profile_bw {
	uint32_t k;
	double bps;
	uint32_t runs;
	double spread_bps;
	bool private_fwd; /* the runs counted had their forwarders alone
			   * (false for k = 0: direct, no forwarder) */
};

/* The `profile` object of `fwdctl decide`'s job input. */
struct profile {
	uint64_t io_volume_bytes;
	uint32_t io_nodes;
	double node_bandwidth_bps;
	double peak_bandwidth_bps;
	/* not part of the JSON object: stored in the profiles table */
	uint64_t read_bytes, write_bytes; /* medians, scaled like the volume */
	double runtime;			  /* median, seconds */
	double iops;
	double mdops; /* metadata ops/s in I/O phases */
	double metadata_queue;
	enum fwd_io_mode io_mode;
	uint32_t runs;	      /* runs the prediction is based on */
	uint32_t scale_nodes; /* node count of those runs (0: unknown) */
	struct profile_bw bw[PROFILE_MAX_BW]; /* sorted by k, unique k */
	size_t n_bw;
};

/* Who the job is; strings may be NULL (empty). */
struct profile_job {
	const char *user;
	const char *account;
	const char *name;
	const char *partition;
	uint32_t nodes;
};

/* Largest power of base (>= 2) not above nodes; 0 for 0 nodes. */
uint32_t profile_bucket(uint32_t nodes, uint32_t base);

/*
 * The profile key of job under policy p (see above), at most
 * PROFILE_KEY_MAX bytes whatever the job's strings.  -1 with errno
 * ENOSPC / EINVAL and err when buf is too small or a key field is unknown.
 */
int profile_key(const struct policy *p, const struct profile_job *job,
		char *buf, size_t len, fwd_error_t *err);

/*
 * Predict for a job of `nodes` nodes from runs (any order), using the K
 * most recent runs at the nearest scale and ignoring runs that ended
 * before now - max_age (max_age <= 0: no limit).  Returns 0, or -1 with
 * errno ENOENT when no run is usable (out->runs is then 0).
 */
int profile_predict(const struct profile_run *runs, size_t n_runs,
		    uint32_t nodes, uint32_t k, double max_age, int64_t now,
		    struct profile *out);

/* The run a job summary makes (nodes, forwarders, achieved may be 0). */
void profile_run_from_summary(const struct trace_summary *s, int64_t end,
			      uint32_t forwarders, double achieved_bps,
			      struct profile_run *run);

/* The curve, per k: [{"k", "bps" (median), "runs", "spread_bps",
 * "forwarders": "private" | "shared"}] (NULL on ENOMEM). */
json_t *profile_curve_json(const struct profile *p);

/* The profile as the JSON object decide reads (NULL on ENOMEM). */
json_t *profile_to_json(const struct profile *p);

/*
 * Read a profile object.  Required: io_volume_bytes, io_nodes,
 * node_bandwidth_bps; the other fields default to 0 (runs to 1, io_mode
 * to none = unknown; profile_to_json leaves an unknown mode out, as
 * decide's job input expects).
 * Unknown keys, wrong types, negative numbers and a bad io_mode are errors
 * naming the key and value.
 */
int profile_from_json(const json_t *o, struct profile *p, fwd_error_t *err);

/* ---- the database (db/SCHEMA.md: job_io, profiles) ---- */

struct db;

enum profile_source {
	PROFILE_SOURCE_NONE = 0, /* no history: default mapping */
	PROFILE_SOURCE_HISTORY,	 /* predicted from stored job summaries */
	PROFILE_SOURCE_STORED,	 /* from the profiles table (imported, or
				  * computed before the runs were pruned) */
};

#define PROFILE_KEY_MAX 512

/*
 * A job of the jobs table as the profiler needs it.  The jobs table
 * belongs to controller/, which reads these and passes them down.
 */
struct profile_jobref {
	uint64_t job_id;
	int64_t end_at;		/* 0: still running */
	struct profile_job job; /* key fields (may be NULL where a function
				 * does not need them) and node count */
};

struct profile_result {
	enum profile_source source;
	char key[PROFILE_KEY_MAX + 1];
	struct profile profile; /* runs == 0 when source is NONE */
};

const char *profile_source_name(enum profile_source s);

/* The newest runs of a key a prediction considers; at launch, also the
 * newest finished jobs of the key looked at (a launch's cost does not
 * grow with the key's history). */
#define PROFILE_LAUNCH_RUNS 500

/*
 * The profile of job from the finished jobs of its key, `jobs` (newest
 * first; job_id, end_at and job.nodes used): the runs of the first
 * PROFILE_LAUNCH_RUNS of them that have a summary in job_io are
 * predicted from as in
 * profile_predict() (K = history.runs).  Without runs, the profiles row
 * of the key (imported profiles) is scaled to the job's node count.
 * Returns 1 with res filled, 0 when there is no history (res->source
 * NONE, res->key set), -1 with errno and err on a database error.
 */
int profile_lookup_runs(struct db *db, const struct policy *p,
			const struct profile_job *job,
			const struct profile_jobref *jobs, size_t n,
			int64_t now, struct profile_result *res,
			fwd_error_t *err);

/*
 * Store s as job_id's summary in job_io (source 'traces'; upsert).
 * forwarders_held = the distinct forwarders the allocations ledger gave
 * the job (the caller counts them; 0 keeps an earlier value),
 * bandwidth_achieved_bps = its bandwidth in I/O phases, the input of
 * bandwidth_by_forwarders; forwarders_private = every one of them was
 * its own (kept with forwarders_held when that is 0); direct = the job
 * was decided direct (no forwarder: the curve's k = 0).  metadata_queue
 * (from the forwarder statistics) is left as it is.
 */
int profile_db_store_summary(struct db *db, uint64_t job_id,
			     const struct trace_summary *s, double runtime,
			     uint32_t forwarders_held, bool forwarders_private,
			     bool direct, int64_t now, fwd_error_t *err);

/*
 * Recompute the profiles row of the key job falls in, from the runs of
 * `jobs`, the finished jobs of that key newest first (as for
 * profile_lookup_runs()).  Returns 1 when a row was written, 0 when the
 * key has no usable run (nothing changed), -1 on error.
 */
int profile_db_update(struct db *db, const struct policy *p,
		      const struct profile_job *job,
		      const struct profile_jobref *jobs, size_t n, int64_t now,
		      fwd_error_t *err);

/* A job's Lustre job_stats totals (monitor/jobstats.h gives them). */
struct profile_io_totals {
	uint64_t read_bytes, write_bytes;
	uint64_t read_ops, write_ops;
	uint64_t md_ops;
};

/*
 * A summary from Lustre job_stats for a finished job that has none:
 * volumes, operations and metadata operations from tot; rates over the
 * job's runtime; io_nodes = the job's node count and io_mode 'none'
 * (job_stats cannot tell which nodes did I/O or how files were shared).
 */
int profile_db_store_jobstats(struct db *db, uint64_t job_id, uint32_t nodes,
			      double runtime,
			      const struct profile_io_totals *tot, int64_t now,
			      fwd_error_t *err);

/* The job ids that have a summary in job_io, ascending, malloc'd (*n
 * may be 0 and *ids NULL). */
int profile_db_summary_ids(struct db *db, uint64_t **ids, size_t *n,
			   fwd_error_t *err);

/* has[i] = whether ids[i] has a summary in job_io. */
int profile_db_has_summary(struct db *db, const uint64_t *ids, size_t n,
			   bool *has, fwd_error_t *err);

/* What the health checks read of a job's summary. */
struct profile_io {
	bool found;		   /* the job has a job_io row */
	char io_mode[16];	   /* "none" without a row */
	double mdops_rate;	   /* 0 without a row */
	double peak_bandwidth_bps; /* 0 without a row */
	char *phases;		   /* job_io.phases JSON, NULL when none */
};

/*
 * out[i] = the summary of ids[i] (n entries).  Release the phases with
 * profile_io_free(); on error nothing is left allocated.
 */
int profile_db_io(struct db *db, const uint64_t *ids, size_t n,
		  struct profile_io *out, fwd_error_t *err);
void profile_io_free(struct profile_io *v, size_t n);

/*
 * The jobs a run over many jobs (the history loop, a rebuild) could not
 * process and went past: how many, and the first PROFILE_SKIPS_KEPT of
 * them with why.  One bad job costs only itself.
 */
#define PROFILE_SKIPS_KEPT 8
struct profile_skips {
	uint64_t count;
	size_t n;
	struct {
		uint64_t job_id;
		char why[256];
	} v[PROFILE_SKIPS_KEPT];
};

/* Count job_id as skipped, keeping why if there is room. */
void profile_skips_add(struct profile_skips *s, uint64_t job_id,
		       const char *why);

struct profile_rebuild_stats {
	uint64_t jobstats; /* job_io rows made from job_stats */
	uint64_t runs;	   /* runs read */
	uint64_t profiles; /* profiles written */
	uint64_t removed;  /* computed profiles cleared before recomputing */
	/* jobs whose summary or profile could not be made (the database
	 * refused it): the others are rebuilt all the same */
	struct profile_skips skipped;
};

/*
 * Recompute every computed profile from the stored summaries of `jobs`,
 * every finished job with its key fields (sorted by job id), in one
 * transaction (imported profiles are kept unless runs now exist for
 * their key).  st->jobstats is left as it is.  A profile the database
 * refuses to store is skipped (its jobs counted in st->skipped, the
 * others written); only an unavailable database, a conflict, or a
 * failure of the transaction itself fail the rebuild.
 */
int profile_db_rebuild(struct db *db, const struct policy *p,
		       const struct profile_jobref *jobs, size_t n, int64_t now,
		       struct profile_rebuild_stats *st, fwd_error_t *err);

/*
 * Import one profile: {"user", "name", "nodes", ["account"],
 * ["partition"], "profile": {...}} or the same with the profile's fields
 * at the top level.  Writes the profiles row of its key (key_out, may be
 * NULL, gets it).
 */
int profile_db_import(struct db *db, const struct policy *p,
		      const json_t *entry, int64_t now, char *key_out,
		      size_t key_len, fwd_error_t *err);

/*
 * The profiles row of key as a JSON object {"key", "source", "user",
 * "account", "name", "partition", "node_bucket", "nodes", "last_job_id",
 * "updated_at", "profile": {...}}.  1 found (*out set), 0 not found, -1
 * error.
 */
/*
 * Retention of job_io and profiles (policy retention.job_io,
 * retention.profiles): rows last updated before now minus the setting,
 * deleted in batches (db_prune_before()).  Appends a line per table to
 * out[*n] (room for PROFILE_PRUNE_TABLES more).  0, or -1 with err.
 */
#define PROFILE_PRUNE_TABLES 2
struct db_pruned;
int profile_db_prune(struct db *db, const struct policy_retention *r,
		     int64_t now, bool dry_run, struct db_pruned *out,
		     size_t *n, fwd_error_t *err);

int profile_db_show(struct db *db, const char *key, json_t **out,
		    fwd_error_t *err);

#endif
