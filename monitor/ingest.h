/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_INGEST_H
#define FWD_MONITOR_INGEST_H

/*
 * Ingestion of forwarder, OST and MDT statistics.
 *
 * Three layers, each usable alone:
 *   1. parsers (pure, no I/O beyond the given line or stream) turn one
 *      input line / job_stats entry into a record or a precise error;
 *   2. the series engine turns cumulative counters into per-interval
 *      deltas (restarts handled, never negative);
 *   3. the store writes records to the database in batched transactions
 *      with prepared statements, keeps the per-minute rollups and the
 *      counter baselines, and never stores a duplicate.
 * `fwdctl ingest` drives them; see db/SCHEMA.md for the tables.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

struct db;

enum ingest_kind { INGEST_FWD = 0, INGEST_OST, INGEST_MDT };
const char *ingest_kind_name(enum ingest_kind k); /* "fwd" "ost" "mdt" */

/* Parse results of the line parsers. */
enum {
	INGEST_OK = 0,	     /* a record was produced */
	INGEST_SKIP = 1,     /* blank line, comment, or data we do not keep
			      * (another influx measurement): not an error */
	INGEST_JOBSTATS = 2, /* influx_parse(): a job_stats record */
};

/* Lines longer than this are rejected (bounded memory on a pipe). */
#define INGEST_MAX_LINE 65536

/*
 * Bounded line reader: lines of any length are consumed, but only the
 * first INGEST_MAX_LINE - 1 bytes are kept and *truncated is set.
 * Returns the line without its newline (and a '\r' before it), valid
 * until the next call, or NULL at the end of the input or on a read
 * error (ingest_reader_error()).  It reads the stream's descriptor itself
 * (the FILE's own buffer is not used; nothing else may read the stream),
 * or, for a stream without one (fmemopen), through stdio.
 */
struct ingest_reader {
	FILE *f;
	int fd;		   /* f's descriptor, or -1 */
	long lineno;	   /* 1-based number of the line returned */
	size_t start, end; /* unread bytes: buf[start..end) */
	bool eof, skip;	   /* skip: the rest of a line too long */
	int error;	   /* errno of a failed read, 0 */
	char buf[2 * INGEST_MAX_LINE + 1];
};
void ingest_reader_init(struct ingest_reader *r, FILE *f);
const char *ingest_reader_next(struct ingest_reader *r, bool *truncated);
/* True when the next line (or the end) is read without waiting for
 * input: a pipe's writer need not be waited for. */
bool ingest_reader_ready(const struct ingest_reader *r);
/* The errno of a read that failed, else 0. */
int ingest_reader_error(const struct ingest_reader *r);

/* ---- beacon-lwfs ---- */

enum beacon_op { BEACON_META = 0, BEACON_READ, BEACON_WRITE };
enum beacon_phase { BEACON_EXE = 0, BEACON_WAIT };

#define BEACON_BUCKETS 8

struct beacon_rec {
	char addr[64];	   /* the forwarder's IP as printed */
	int64_t ts;	   /* the trailing ISO-8601 UTC time */
	bool is_queue;	   /* "queue length: <n>" line */
	enum beacon_op op; /* histogram lines */
	enum beacon_phase phase;
	uint64_t v[BEACON_BUCKETS]; /* cumulative counters */
	uint64_t queue_len;	    /* queue lines */
};

/* clang-format off */
/*
 * One line of Beacon's LWFS server statistics:
 *   <ip> [<local time>]  [Trace]: <Meta|Read|Write> <exe|wait>: <8 counters> <ISO-8601 UTC>
 *   <ip> [<local time>]  [Trace]: queue length: <n> <ISO-8601 UTC>
 * Returns INGEST_OK, INGEST_SKIP (blank line) or -1 with err saying what is
 * wrong and quoting the offending text (no file:line prefix; the caller
 * adds it).
 */
/* clang-format on */
int beacon_parse_line(const char *line, struct beacon_rec *out,
		      fwd_error_t *err);
const char *beacon_op_name(enum beacon_op op); /* "meta" ... */

/* The plausibility of a parsed record (common/plausible.h): its time
 * within 2000 .. now + 1 day, its counters at most 2^63-1.  0, or -1
 * with errno EINVAL and err (reason set): refuse the record. */
int beacon_check(const struct beacon_rec *r, int64_t now, fwd_error_t *err);
const char *beacon_phase_name(enum beacon_phase ph); /* "exe" "wait" */

/* ---- influx line protocol ---- */

enum influx_field {
	INFLUX_READ_BYTES = 0,
	INFLUX_WRITE_BYTES,
	INFLUX_READ_OPS,
	INFLUX_WRITE_OPS,
	INFLUX_MD_OPS,
	INFLUX_N_COUNTERS,
};
const char *influx_field_name(enum influx_field f); /* "read_bytes" ... */

struct influx_rec {
	enum ingest_kind kind; /* measurement fwd / ost / mdt; lustre2*: from
				* the target name or the measurement */
	char name[128];	       /* tag node= (fwd) or target= (ost/mdt),
				* unescaped */
	int64_t ts_ns;	       /* timestamp (ns); now when absent */
	bool has[INFLUX_N_COUNTERS];
	uint64_t counter[INFLUX_N_COUNTERS]; /* cumulative */
	bool has_queue;
	double queue_len; /* gauge */
	/* influx_parse() on INGEST_SKIP of a data line: what was not used,
	 * e.g. "cpu", "lustre2 brw_stats" ("" for blank lines, comments) */
	char ignored[96];
	/* lustre2_lctl md_stats: md_ops holds the samples of the metadata
	 * operations of this line only; the listing gives one operation a
	 * line: add the other lines of the same target and time with
	 * influx_merge_md() before storing */
	bool md_part;
};

/* Add r's md_ops into *into when both are md_stats parts of the same
 * target at the same time: 1 joined, 0 another record (into unchanged). */
int influx_merge_md(struct influx_rec *into, const struct influx_rec *r);

/*
 * One line of InfluxDB line protocol
 *   measurement[,tag=value...] field=value[,field=value...] [timestamp]
 * with the protocol's escaping (backslash before comma, space and, in tag
 * keys/values and field keys, '='; double-quoted string fields with \" and
 * \\), typed values (float, 12i, 12u, true/false, "string").  Measurements
 * other than fwd, ost and mdt, comments (#) and blank lines give
 * INGEST_SKIP; so does a kept measurement without any known field.
 * Counter fields must be non-negative integers (or integral floats);
 * queue_len any non-negative number.  -1 with err on malformed input.
 * `now_ns` is used when the line has no timestamp.
 */
int influx_parse_line(const char *line, int64_t now_ns, struct influx_rec *out,
		      fwd_error_t *err);

struct jobstats_rec;

/* Options of influx_parse(). */
struct influx_opts {
	int64_t now_ns;	 /* used when a line has no timestamp */
	int64_t unit_ns; /* the timestamps' unit: 1 (ns, default), 1000
			  * (us), 1000000 (ms), 1000000000 (s) */
	bool check_time; /* a time before 2000 or more than a day ahead of
			  * now_ns is an error (a wrong precision) */
};

/*
 * influx_parse_line() plus what Telegraf's Lustre plugins emit:
 *  - inputs.lustre2 (measurement "lustre2", tag name=<target>): OST stats
 *    fields read_bytes, write_bytes, read_calls, write_calls; MDT
 *    md_stats fields (open, close, getattr, ...) summed into md_ops;
 *    with a jobid= tag, the job_stats fields jobstats_read_bytes,
 *    jobstats_read_calls, jobstats_read_min_size, ..., jobstats_open, ...
 *    (INGEST_JOBSTATS, *js filled).  Per-client export stats (client=),
 *    brw_stats (brw_section=), health and evictions are INGEST_SKIP with
 *    out->ignored saying which.
 *  - inputs.lustre2_lctl (measurements lustre2_lctl_ost and
 *    lustre2_lctl_mdt, tags volume=, jobid=, unit=): job_stats fields
 *    jobstats_<op>_samples / _min / _max / _sum / _sumsq (one line holds
 *    samples, the next min/max/sum: join them with jobstats_merge()),
 *    OST stats_read_bytes_* / stats_write_bytes_*; MDT md_stats
 *    stats_<op>_samples of the metadata operations (one a line:
 *    out->md_part, see influx_merge_md()).
 * A "> " prefix (telegraf --test) is removed.  The kind of a lustre2
 * target comes from its name (OST / MDT in it).  Timestamps are in
 * o->unit_ns.  Returns INGEST_OK (a sample in *out), INGEST_JOBSTATS
 * (*js; ts in seconds, line 0), INGEST_SKIP or -1 with err.
 */
int influx_parse(const char *line, const struct influx_opts *o,
		 struct influx_rec *out, struct jobstats_rec *js,
		 fwd_error_t *err);

/* ---- Lustre job_stats ---- */

#define JOBSTATS_MAX_OPS 64

struct jobstats_op {
	char name[32]; /* read_bytes, open, getattr, ... */
	char unit[16]; /* bytes, usecs, reqs ("" if absent) */
	uint64_t samples, min, max, sum;
	unsigned has; /* influx_parse(): JOBSTATS_HAS_* of the values given */
};
#define JOBSTATS_HAS_SAMPLES 1u
#define JOBSTATS_HAS_MIN 2u
#define JOBSTATS_HAS_MAX 4u
#define JOBSTATS_HAS_SUM 8u

struct jobstats_rec {
	enum ingest_kind kind; /* INGEST_OST (obdfilter) or INGEST_MDT */
	char target[128];      /* lustre-OST0000 */
	char job_id[256];      /* as printed */
	bool has_slurm_id;
	uint64_t slurm_id; /* numeric job id, see SCHEMA.md */
	int64_t ts;	   /* snapshot_time, seconds */
	int64_t start;	   /* start_time (2.15+), seconds; 0 if absent */
	long line;	   /* input line of "- job_id:" */
	size_t n_ops;
	struct jobstats_op ops[JOBSTATS_MAX_OPS];
};

/*
 * Streaming parser for the output of `lctl get_param obdfilter.*.job_stats
 * mdt.*.job_stats`: target lines ("obdfilter.lustre-OST0000.job_stats=")
 * each followed by a YAML document ("job_stats:" and a list of entries),
 * parsed with libyaml one entry at a time (memory bounded by one entry).
 * Output of `lctl get_param -n` (no target line) needs default_target
 * ("lustre-OST0000"; kind from its -OST/-MDT part), else it is an error.
 *
 * The list of a target is cut into entries at the "- job_id:" lines and
 * each entry is parsed alone (Lustre 2.12 to 2.15 print ids unquoted: an
 * id that is not plain YAML spoils only its entry).
 * jobstats_next returns 1 with a record, 0 at the end, or -1 with err
 * ("line N: ...") for a bad entry (a YAML error in it, a missing or bad
 * value, an id that YAML reads as something else than printed); after -1
 * the caller may call jobstats_next again: the bad entry is skipped.  A
 * target whose header is not "job_stats:" is skipped to the next target
 * line.  jobstats_lines() is the number of input lines consumed so far.
 */
struct jobstats_parser;
struct jobstats_parser *jobstats_open(FILE *f, const char *default_target,
				      fwd_error_t *err);
int jobstats_next(struct jobstats_parser *p, struct jobstats_rec *out,
		  fwd_error_t *err);
long jobstats_lines(const struct jobstats_parser *p);
void jobstats_close(struct jobstats_parser *p);

/*
 * The plausibility of a job_stats record (common/plausible.h), before it
 * is stored: snapshot_time (and start_time when given) within 2000 ..
 * now + 1 day, start_time not after snapshot_time, every value at most
 * 2^63-1, and, when start_time gives the entry's age, the bytes at most
 * lim->max_bandwidth and the samples at most lim->max_ops_rate per
 * second of it (lim may be NULL: no rate bound).  0, or -1 with errno
 * EINVAL and err ("job ID: ...", reason set).
 */
struct policy_ingest;
int jobstats_check(const struct jobstats_rec *r, int64_t now,
		   const struct policy_ingest *lim, fwd_error_t *err);

/*
 * Join r into *into when both are the same job on the same target at the
 * same time (lustre2_lctl gives an operation's samples and its min/max/sum
 * on two lines): 1 joined, 0 another record (into unchanged).
 */
int jobstats_merge(struct jobstats_rec *into, const struct jobstats_rec *r);

/*
 * The Slurm job id in a job_stats id printed under the clients' Lustre
 * jobid_name `pattern` (policy jobstats.jobid_name; codes %e %g %h %H %j
 * %p %u %%): what %j matched ("%j" and "12345" give 12345; "%j.%H" and
 * "12345.n01" too).  1 with *id, 0 when the id does not match or the
 * pattern has no %j (Lustre's default procname_uid, "%e.%u", names no
 * job), -1 with errno EINVAL for a pattern with another code.
 */
int jobstats_map_id(const char *pattern, const char *job_id, uint64_t *id);

/*
 * The job_stats id a process of program `prog` run by user `uid` gets
 * under the clients' jobid_name `pattern` when the pattern names the
 * process, not the job: Lustre's default procname_uid ("%e.%u", ids like
 * dd.500).  %e is the kernel's task name (current->comm: the executable's
 * name, at most 15 bytes), %u the numeric fsuid, %% a percent sign;
 * Lustre drops the pattern's white space (jobid_interpret_string()).
 * 1 with the id in out[cap], 0 when the pattern lacks %e or %u or has a
 * code whose value cannot be known afterwards (%g %h %H %j %p), -1 with
 * errno EINVAL (bad pattern) or ENAMETOOLONG.
 */
int jobstats_proc_id(const char *pattern, const char *prog, uint32_t uid,
		     char *out, size_t cap);
int jobstats_pattern_check(const char *pattern);

/* ---- series engine: cumulative counters -> deltas ---- */

#define SERIES_MAX_VALUES 8

enum {
	SERIES_BASELINE = 0,	/* first value of the series: no delta yet */
	SERIES_DELTA = 1,	/* deltas and dt produced */
	SERIES_RESTART = 2,	/* a counter went backwards: deltas from 0 */
	SERIES_OLD = 3,		/* ts not after the last one: already seen or
				 * out of order; nothing produced */
	SERIES_IMPLAUSIBLE = 4, /* the deltas failed the check: the value is
				 * not taken as the baseline (see
				 * series_update_checked) */
};

struct series_table;

struct series_table *series_create(void);
void series_destroy(struct series_table *t);

/*
 * Feed cumulative values of series `key` at time ts.  Writes n deltas and
 * *dt (seconds since the previous value) for SERIES_DELTA and
 * SERIES_RESTART.  A restart (any value below its predecessor) is a
 * counter reset: each delta is the new value itself.  -1 on ENOMEM or
 * when n exceeds SERIES_MAX_VALUES (EINVAL).
 */
int series_update(struct series_table *t, const char *key, int64_t ts,
		  const uint64_t *values, size_t n, uint64_t *deltas,
		  double *dt);

/*
 * A plausibility check of one interval: true when deltas[0..n) over dt
 * seconds are possible.  series_check_rate() is the usual one: the sum
 * of the deltas is at most *(const double *)arg per second.
 */
typedef bool (*series_check_fn)(const uint64_t *deltas, size_t n, double dt,
				void *arg);
bool series_check_rate(const uint64_t *deltas, size_t n, double dt, void *arg);

/*
 * series_update() with a plausibility check (ok may be NULL: no check).
 * Deltas that fail it give SERIES_IMPLAUSIBLE: the baseline (value and
 * time) is kept, so the next delta is taken from the last plausible value
 * and spans the rejected interval; deltas and *dt are those that failed.
 * The rejected value is remembered (in memory only) as a candidate: when
 * the next value is implausible from the baseline but plausible from the
 * candidate, the counter really moved (replaced, reset to a high value):
 * the delta is taken from the candidate, and the series goes on from the
 * new value.  The interval up to the candidate is lost (unknowable).
 */
int series_update_checked(struct series_table *t, const char *key, int64_t ts,
			  const uint64_t *values, size_t n, series_check_fn ok,
			  void *arg, uint64_t *deltas, double *dt);

/* What series_update_checked() would return (and its deltas and *dt),
 * changing nothing.  SERIES_BASELINE for an unknown key. */
int series_peek(const struct series_table *t, const char *key, int64_t ts,
		const uint64_t *values, size_t n, series_check_fn ok, void *arg,
		uint64_t *deltas, double *dt);

/* ---- plausibility bounds (policy `ingest:`) ---- */

struct policy_ingest;

/* True when delta over dt seconds is at most max_per_s per second (a
 * NaN, negative or infinite delta never is; with dt <= 0 only 0 is). */
bool ingest_rate_ok(double delta, double dt, double max_per_s);
/* True when a gauge is a finite number from 0 to max. */
bool ingest_gauge_ok(double v, double max);
/* The largest plausible rate of a byte counter, B/s: max_rate_factor x
 * the component's peak, or max_bandwidth when the peak is unknown (0,
 * negative or not finite). */
double ingest_bytes_bound(const struct policy_ingest *l, double peak_bps);

/* Seed a series with a stored baseline (it wins only if newer than what
 * the table has).  Same limits as series_update. */
int series_seed(struct series_table *t, const char *key, int64_t ts,
		const uint64_t *values, size_t n);

/* True if the table already knows `key` (seeded or updated). */
bool series_known(const struct series_table *t, const char *key);

/* Visit every series (for saving baselines). */
typedef int (*series_visit_fn)(const char *key, int64_t ts,
			       const uint64_t *values, size_t n, void *arg);
int series_foreach(const struct series_table *t, series_visit_fn fn, void *arg);
/* Visit only the series changed by series_update() since the last call,
 * clearing their mark after fn succeeds.  A non-zero fn result stops the
 * walk and is returned. */
int series_foreach_dirty(struct series_table *t, series_visit_fn fn, void *arg);

/* ---- the store ---- */

struct ingest_stats {
	uint64_t lines;	   /* input lines read */
	uint64_t stored;   /* records that added or changed rows */
	uint64_t rejected; /* malformed lines / entries */
	uint64_t skipped;  /* already stored / out of order / baseline */
	uint64_t ignored;  /* comments, blank lines, other measurements */
	/* Samples rejected as implausible (policy `ingest:`), also counted
	 * as rejected by the caller; then the offending values by kind (a
	 * sample may have several). */
	uint64_t implausible;
	uint64_t implausible_bytes; /* byte deltas over the bandwidth bound */
	uint64_t implausible_ops;   /* operation deltas over max_ops_rate */
	uint64_t implausible_queue; /* queue lengths over max_queue_len */
};

struct ingest_store;

/*
 * A writer on an open connection (controller role, schema checked).
 * Records are buffered into transactions of `batch` records (0 = 100000),
 * each holding ingest_lock's row; each commit also brings the per-minute
 * rollups of the minutes it touched up to date (added to for new rows,
 * recomputed otherwise: monitor/ingest_rollup.h) and saves the counter
 * baselines.  A failed batch is rolled back and the error returned;
 * nothing partial stays.
 */
struct ingest_store *ingest_store_open(struct db *db, size_t batch,
				       fwd_error_t *err);

/*
 * The plausibility bounds (policy `ingest:`); the policy's defaults until
 * set.  A byte counter's peak is the component's bandwidth_bps in the
 * forwarders or osts table (monitor/inventory.c), read when the store is
 * opened.
 */
void ingest_store_set_limits(struct ingest_store *s,
			     const struct policy_ingest *l);

/*
 * The ingest_store_* writers return 0, or -1 with errno and err.  errno
 * EINVAL rejects that record only (a bad name, an implausible sample:
 * err says which value and which bound); nothing of it is stored, no
 * baseline moves, and the batch goes on.  Other errors roll the batch
 * back.
 */

/* One beacon-lwfs record; `name` is the forwarder name (or the IP when
 * it maps to no forwarder). */
int ingest_store_beacon(struct ingest_store *s, const char *name,
			const struct beacon_rec *r, fwd_error_t *err);
int ingest_store_influx(struct ingest_store *s, const struct influx_rec *r,
			fwd_error_t *err);
int ingest_store_jobstats(struct ingest_store *s, const struct jobstats_rec *r,
			  fwd_error_t *err);

/* Commit what is pending (also done every `batch` records). */
int ingest_store_flush(struct ingest_store *s, fwd_error_t *err);

/* True while records are buffered in an open transaction. */
bool ingest_store_pending(const struct ingest_store *s);

/* Counters so far (stored, skipped). */
const struct ingest_stats *ingest_store_stats(const struct ingest_store *s);

/* Rolls back anything not flushed.  NULL is fine. */
void ingest_store_close(struct ingest_store *s);

/*
 * Retention of the statistics (db_prune_before() on each table): raw
 * samples and job_stats older than r->raw_samples, rollups older than
 * r->rollups (0 = keep forever; whole quarter hours, so rollups_15min stays
 * the aggregate of the minutes kept), relative to `now`.  One line per table
 * pruned is appended to out[*n] (room for INGEST_PRUNE_TABLES more).
 * 0, or -1 with errno and err.
 */
#define INGEST_PRUNE_TABLES 6
struct policy_retention;
struct db_pruned;
int ingest_prune(struct db *db, const struct policy_retention *r, int64_t now,
		 bool dry_run, struct db_pruned *out, size_t *n,
		 fwd_error_t *err);

/*
 * The newest stored sample of each source (Unix seconds, 0 when it has
 * none): samples_raw per kind, and the Lustre job_stats snapshots.  For
 * `fwdctl metrics` and the stale-data warning of the health scan.  0, or
 * -1 with errno and err.
 */
enum {
	MONITOR_SOURCE_FWD,
	MONITOR_SOURCE_OST,
	MONITOR_SOURCE_MDT,
	MONITOR_SOURCE_JOBSTATS,
	MONITOR_N_SOURCES
};
extern const char *const monitor_source_names[MONITOR_N_SOURCES];
struct db;
int monitor_newest_samples(struct db *db, double newest[MONITOR_N_SOURCES],
			   fwd_error_t *err);

/*
 * The names that have samples of `kind` ("fwd", "ost", "mdt") at or after
 * `since`, sorted (at most 10000): a Beacon record from an IP the topology
 * does not know is stored under that IP, and the scan never looks at it.
 * *names is malloc'd (monitor_names_free()).  0, or -1 with errno and err.
 */
int monitor_sample_names(struct db *db, const char *kind, double since,
			 char ***names, size_t *n, fwd_error_t *err);
void monitor_names_free(char **names, size_t n);

#endif
