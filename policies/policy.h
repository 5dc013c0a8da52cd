/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_POLICIES_POLICY_H
#define FWD_POLICIES_POLICY_H

/*
 * The administrator's policy (etc/fwdalloc.yaml) as a typed struct.
 *
 * Every threshold of the decision, the anomaly detectors, the database,
 * audit and remap settings live here, never in code.  policy_defaults()
 * fills the documented defaults; policy_load() starts from them and
 * overrides what the file sets.  Units: bytes (uint64_t), rates in bytes
 * per second (double), durations in seconds (double), fractions in [0,1].
 *
 * Command settings are argument vectors (YAML sequences), never shell
 * strings: they are run with execve().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "db/db.h"

/* Where fwdctl, the plugin and the controller prolog look for the policy
 * when none is named. */
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define POLICY_DEFAULT_PATH SYSCONFDIR "/fwdalloc/fwdalloc.yaml"

/* A NULL-terminated argument vector; argc does not count the NULL. */
struct policy_argv {
	char **argv;
	size_t argc;
};

/* A list of strings (users, accounts, partitions, key fields). */
struct policy_strlist {
	char **items;
	size_t count;
};

enum policy_mode {
	POLICY_MODE_OFF = 0, /* fwdalloc does nothing; default mapping */
	POLICY_MODE_OPT_IN,  /* only jobs with --io-upgrade are considered */
	POLICY_MODE_OPT_OUT, /* every job is `auto` unless --io-upgrade=off */
	POLICY_MODE_SHADOW,  /* decide and audit every job, apply nothing */
};

enum policy_fail {
	POLICY_FAIL_OPEN = 0, /* errors keep the default mapping, job runs */
	POLICY_FAIL_CLOSED,   /* errors fail the prolog (job is requeued) */
};

enum policy_contention {
	POLICY_CONTENTION_GAIN = 0, /* rank by expected bandwidth gain */
	POLICY_CONTENTION_FCFS,	    /* first come, first served */
};

enum policy_driver {
	POLICY_DRIVER_NONE = 0,
	POLICY_DRIVER_EXEC,
	POLICY_DRIVER_VERBS,
	POLICY_DRIVER_LWFS,
	POLICY_DRIVER_LNET,
};

struct policy_access {
	enum policy_mode mode; /* access.mode, default opt-in */
	enum policy_fail fail; /* access.fail, default open */
	/* Empty allow list = everyone allowed; deny wins over allow. */
	struct policy_strlist allow_users, deny_users;
	struct policy_strlist allow_accounts, deny_accounts;
	struct policy_strlist allow_partitions, deny_partitions;
};

struct policy_scale {
	bool enabled;		  /* decision.scale.enabled, true */
	uint64_t min_volume;	  /* V_min, bytes, default 20 GiB */
	uint32_t min_io_nodes;	  /* N_min, default 32 */
	double max_metadata_rate; /* W_md: md ops/s in I/O phases at or
				   * above which a job is metadata-bound
				   * and not scaled; default 300 */
};

struct policy_interference {
	bool enabled;		    /* decision.interference.enabled */
	uint32_t n1_min_nodes;	    /* N-1 with more nodes is disruptive;
				     * default 64 */
	double metadata_heavy_rate; /* md ops/s in I/O phases above which a
				     * job is disruptive; default 300 */
	double high_bandwidth;	    /* peak B/s above which a job is
				     * disruptive; default 5 GB/s (0 = off) */
	double vulnerable_iops;	    /* IOPS above which a job is
				     * vulnerable; default 1000 */
};

struct policy_caps {
	uint32_t max_forwarders_per_job; /* default 16 */
	double max_pool_share;		 /* share of the idle pool one job may
					  * take; default 0.5 */
	uint32_t reserve;		 /* idle forwarders kept for failover,
					  * never handed out; default 4 */
};

/* decision.curve: sizing from measured bandwidth curves (DESIGN.md "The
 * decision" step 7).  Used for a job whose history holds a curve; the
 * DFRA rules (scale, interference) stay for jobs without one. */
struct policy_curve {
	bool enabled;	       /* default true */
	double min_gain;       /* B/s an upgrade must add; default 50 MB/s */
	double min_gain_share; /* and this share of the default mapping's
				* value; default 0.1 */
	bool admin_floors;     /* scale.min_volume / min_io_nodes also gate
				* curve-sized jobs; default false */
	double online_low;     /* B/s per forwarder: the online threshold's
				* lowest value density; default 10 MB/s */
	double min_harm;       /* seconds of harm (the longer of the data
				* I/O on the default mapping and the
				* metadata load, times 1 + the vulnerable
				* neighbours) from which a disruptive job is
				* isolated, with a curve or without;
				* default 10 s */
	bool direct;	       /* direct file-system access may be chosen
				* where history measured it; default false */
};

struct policy_decision {
	bool avoid_anomalies; /* replace excluded default forwarders
			       * for every job; default true */
	struct policy_scale scale;
	struct policy_interference interference;
	struct policy_caps caps;
	struct policy_curve curve;
	enum policy_contention contention; /* default gain */
	double decide_timeout;		   /* seconds the controller prolog may
					    * spend in total; default 10 */
};

struct policy_history {
	/* Profile key fields, any of "user", "account", "name", "partition",
	 * "node_bucket"; default [user, name, node_bucket]. */
	struct policy_strlist key;
	uint32_t runs; /* K last runs to aggregate; 5 */
	/* Node-count buckets are powers of `bucket_base` (default 2): a
	 * 300-node job falls in bucket 256..511. */
	uint32_t bucket_base;
	double max_age; /* ignore runs older than this,
			 * seconds; default 90 days */
};

struct policy_audit {
	char *file;    /* JSON lines; default
			* LOCALSTATEDIR/log/fwdalloc/audit.jsonl */
	bool database; /* also write the DB row; true */
};

struct policy_retention {
	double raw_samples; /* seconds; default 7 days */
	double rollups;	    /* seconds; default 400 days */
	double audit;	    /* seconds; default 400 days */
	double allocations; /* released ledger rows; default 400 days */
	double jobs;	    /* ended jobs' rows; default 800 days */
	double job_io;	    /* job summaries; default 800 days */
	double profiles;    /* profiles not updated for; 800 days */
};

/*
 * Plausibility of ingested statistics (monitor/ingest*.c): a sample beyond
 * these bounds is rejected and counted, never stored.
 */
/* How Lustre job_stats are tied to Slurm jobs (section `jobstats:`). */
struct policy_jobstats {
	char *jobid_name; /* Lustre's jobid_name pattern on the clients:
			   * the Slurm job id is what %j matched; a
			   * pattern without %j gives no job (default
			   * "%j") */
	double grace;	  /* seconds: a job's statistics are those with a
			   * snapshot from its start - grace to its end +
			   * grace (default 600, Lustre's
			   * job_cleanup_interval) */
};

/* Who sees which report (section `reports:`): a user sees the reports of
 * its own jobs only (fwdallocd checks its MUNGE credential); root and the
 * members of admin_group see every job's and the machine's. */
struct policy_reports {
	char *admin_group; /* a group name, or NULL: root only (default) */
};

/*
 * Where a job's forwarders are released when it ends (section `release:`).
 * port 0 (the default): EpilogSlurmctld hands the job to fwdallocd (or
 * releases it itself).  Otherwise the epilog of the job's first node
 * (slurm_spank_job_epilog, root) sends the release to fwdallocd, listening
 * on this TCP port of the hosts in `controllers`, tried in order, in a
 * MUNGE credential (service/protocol.h); slurm.conf then sets no
 * EpilogSlurmctld, so no controller hook holds a job in COMPLETING.
 */
struct policy_release {
	uint32_t port;			   /* 0 = EpilogSlurmctld releases */
	struct policy_strlist controllers; /* fwdallocd's hosts (port != 0) */
	double timeout; /* a node's whole send, seconds; default 2 */
};

/* The history loop, `fwdctl history run` (section `history_loop:`). */
struct policy_history_loop {
	double lookback; /* seconds: jobs that ended this long ago at most
			  * are summarised (catching up after downtime);
			  * default 7 days */
	double late;	 /* seconds: a job that ended this recently is
			  * summarised again on every run, for statistics
			  * that arrive late; default 1 hour */
};

struct policy_ingest {
	double max_rate_factor; /* a byte counter may grow by at most
				 * this multiple of the component's
				 * peak bandwidth x the interval;
				 * default 4 */
	double max_bandwidth;	/* B/s; the bound instead when the
				 * component's peak is unknown;
				 * default 1 TB/s */
	double max_ops_rate;	/* operations per second one
				 * component may complete (operation
				 * counters, LWFS request histograms);
				 * default 10,000,000 */
	double max_queue_len;	/* queue length gauge; default
				 * 1,000,000 */
	double reconnect;	/* s; how long `fwdctl ingest` keeps
				 * trying to reach the database again
				 * when its connection is lost (after a
				 * quiet spell of its input, or with a
				 * batch not committed); 0 = one new
				 * connection, no waiting; default 60 */
};

struct policy_peer_detector {
	double bandwidth_fraction; /* avg and peak below this fraction of
				    * the mean peak; default 0.5 */
	double volume_fraction;	   /* while carrying at least this
				    * fraction of the mean volume; 0.6 */
	double noise_floor;	   /* B/s; samples below are idle;
				    * default 1 MB/s */
	uint32_t min_job_nodes;	   /* only jobs this large; default 32 */
	uint64_t min_job_volume;   /* and with this much I/O; 1 GiB */
};

struct policy_sustained_detector {
	double peak_fraction; /* max bw under this fraction of the
			       * benchmarked peak; default 0.3 */
	double duration;      /* for at least this long; 60 min */
	double min_load_ops;  /* ops/s that count as loaded; 1 */
};

struct policy_dbscan {
	double eps;	     /* neighbourhood radius on normalised
			      * (duration, volume); default 0.15 */
	uint32_t min_points; /* default 3 */
};

struct policy_anomaly {
	bool enabled;		  /* default true */
	double window;		  /* scan window, seconds; 10 min */
	uint32_t suspect_windows; /* consecutive bad windows ok->suspect;
				   * default 1 */
	uint32_t exclude_windows; /* consecutive bad windows
				   * suspect->excluded; default 3 */
	uint32_t clear_windows;	  /* consecutive good windows back to ok;
				   * default 3 */
	struct policy_peer_detector peer;
	struct policy_sustained_detector sustained;
	struct policy_dbscan dbscan;
	struct policy_argv alert_command;	/* empty = none */
	struct policy_argv ost_exclude_command; /* empty = none */
	struct policy_argv ost_restore_command; /* empty = none */
};

struct policy_remap_exec {
	struct policy_argv command;
	struct policy_argv verify; /* read back after each change; [] = none */
};

struct policy_remap_verbs {
	char *device;		/* NULL = first device with an active
				 * port */
	uint32_t port;		/* forwarding service's port, 0 = no
				 * connect probe; default 0 */
	double resolve_timeout; /* per forwarder, seconds; 2 */
	bool connect_probe;	/* default false */
};

struct policy_remap_lwfs {
	char *volfile_dir;		    /* default /etc/lwfs */
	char *link_name;		    /* default "lwfs.vol" */
	char *state_dir;		    /* saved previous targets; default
					     * LOCALSTATEDIR/lib/fwdalloc */
	struct policy_argv remount_command; /* empty = none */
};

struct policy_remap_lnet {
	char *lnetctl; /* default /usr/sbin/lnetctl */
	char *net;     /* remote net, default "o2ib" */
	uint32_t hops; /* default 1 */
};

struct policy_remap {
	enum policy_driver driver; /* default none */
	double timeout;		   /* per apply/revert, seconds; 30 */
	char *decision_dir;	   /* per-job decision files the
				    * controller publishes and node
				    * prologs read; NULL = node prologs
				    * read the database (default) */
	struct policy_remap_exec exec;
	struct policy_remap_verbs verbs;
	struct policy_remap_lwfs lwfs;
	struct policy_remap_lnet lnet;
};

/* learn: exploring forwarder counts history has not measured yet. */
struct policy_learn {
	bool enabled;	   /* default false */
	double pool_share; /* share of the idle pool exploring jobs may
			    * take; default 0.25 */
	uint32_t app_cap;  /* forwarders one exploring job may use;
			    * default 8 */
};

struct policy {
	char *path;	/* file it was loaded from, or NULL */
	char *topology; /* topology file; default
			 * SYSCONFDIR/fwdalloc/topology.yaml */
	struct policy_access access;
	struct policy_decision decision;
	struct policy_history history;
	struct policy_learn learn;
	struct db_config database;
	/* database.breaker: after the database failed (refused, timed out),
	 * the launch path (controller and node prologs) skips it for this
	 * many seconds and fails open at once (db/breaker.h); 0 = never
	 * skip.  Default 30. */
	double database_breaker;
	struct policy_audit audit;
	struct policy_retention retention;
	struct policy_ingest ingest;
	struct policy_jobstats jobstats;
	struct policy_reports reports;
	struct policy_release release;
	struct policy_history_loop history_loop;
	struct policy_anomaly anomaly;
	struct policy_remap remap;
	/* SHA-256 of the file's bytes, hex; "defaults" when not loaded from a
	 * file.  Recorded in every decision. */
	char digest[65];
};

/*
 * The longest a node prolog can take under p, in seconds: finding a
 * database server (database.connect_timeout), the one call that reads the
 * job's rows (prepare and execute, database.timeout each) and the remap
 * driver's apply (remap.timeout).  slurmd kills a prolog that exceeds its
 * PrologTimeout (PrologEpilogTimeout), drains the node and requeues the
 * job, whatever access.fail says: this must stay below it.
 */
double policy_node_prolog_worst(const struct policy *p);

/* A policy holding the documented defaults.  NULL with errno on ENOMEM. */
struct policy *policy_defaults(void);

/*
 * Load and validate a policy file.  On error returns NULL, errno set, and
 * err->text names "file:line:column: key.path: value: what is allowed".
 * Unknown keys, duplicate keys, wrong types, out-of-range values, a missing,
 * unreadable or empty file and invalid UTF-8 are all errors.
 */
struct policy *policy_load(const char *path, fwd_error_t *err);

/*
 * Where a hook that must run although the policy at path does not load
 * (the controller epilog releases, the prolog records the fallback) finds
 * the database, the audit trail and the decision directory: the built-in
 * defaults, overridden by the file's database and audit sections and
 * remap.decision_dir, each one that validates on its own (a section with
 * an error keeps its defaults; a file that is not YAML keeps them all).
 * Nothing else is read: the result is not a policy to decide with.  NULL
 * with errno only when out of memory.
 */
struct policy *policy_load_locations(const char *path);

void policy_destroy(struct policy *p);

/* Names <-> enums; the _parse functions return -1 for an unknown name. */
const char *policy_mode_name(enum policy_mode m);
int policy_mode_parse(const char *s, enum policy_mode *out);
const char *policy_driver_name(enum policy_driver d);
int policy_driver_parse(const char *s, enum policy_driver *out);

/*
 * Access rules: is this job allowed to use fwdalloc at all?  Returns true
 * when allowed; otherwise false and a reason ("user alice is denied").
 */
bool policy_job_allowed(const struct policy *p, const char *user,
			const char *account, const char *partition,
			char *reason, size_t reason_len);

/*
 * The effective policy as a JSON string (malloc'd), or as YAML that
 * policy_load() accepts.  NULL with errno on failure.
 */
char *policy_to_json(const struct policy *p);

/*
 * The schema the loader checks every policy file against, for
 * documentation (fwdctl policy keys, fwdalloc.yaml(5)): every key, sections
 * first then their keys, depth first in file order.  fn returning non-zero
 * stops the walk and is returned; the key's strings are valid during the
 * call only.
 */
struct policy_key {
	const char *path; /* "decision.caps.reserve" */
	const char *type; /* "integer", "duration", "off|opt-in|..." */
	bool section;	  /* a mapping of further keys */
	bool has_range;	  /* min/max apply (integers, numbers, durations) */
	double min, max;  /* inclusive, max INFINITY when unbounded ... */
	bool min_excl;	  /* ... except min when set (> min) */
};
int policy_schema_foreach(int (*fn)(void *arg, const struct policy_key *k),
			  void *arg);
char *policy_to_yaml(const struct policy *p);

#endif
