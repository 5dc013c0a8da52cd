/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_HEALTH_H
#define FWD_MONITOR_HEALTH_H

/*
 * Health of forwarders and OSTs: ok -> suspect -> excluded -> ok.
 *
 * The scan cuts time into windows of policy anomaly.window seconds,
 * aligned on multiples of the window since the epoch, so rescanning the
 * same period gives the same windows.  Each window gives every component
 * a verdict (monitor/anomaly.h): BAD (a detector flagged it), GOOD (loaded
 * and healthy) or NONE (no evidence: idle, or slow but not for long
 * enough yet).  health_step() applies one verdict:
 *
 *   ok       --bad x suspect_windows-->  suspect
 *   ok/suspect --bad x exclude_windows--> excluded
 *   suspect/excluded --good x clear_windows--> ok
 *
 * Streaks count consecutive windows with evidence: a GOOD window resets
 * the bad streak and a BAD one the good streak; a NONE window changes
 * neither.  So an excluded forwarder that receives no traffic stays
 * excluded until traffic (a probe job, a benchmark) shows it healthy or an
 * administrator clears it.
 *
 * An episode is the time a component spends away from ok: it starts at the
 * first bad window of the streak that made it suspect (or at an admin
 * exclusion) and ends at the first good window of the streak that cleared
 * it (or at the admin clear).  Episode durations are what `fwdctl health
 * report` bins as Beacon's Table 2: <1 h, 1-4 h, 4-12 h, 12-96 h, >=96 h.
 *
 * Admin overrides win over the scanner: `exclude` pins the component
 * excluded and `clear` pins it ok, whatever later windows say (the scanner
 * still counts streaks, so its opinion is visible), until `release` hands
 * it back to the scanner, which starts again from ok with empty streaks.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vocab.h"
#include "monitor/anomaly.h"
#include "policies/policy.h"

enum health_kind {
	HEALTH_FORWARDER = 0,
	HEALTH_OST,
};

enum health_override {
	HEALTH_OVERRIDE_NONE = 0, /* the scanner decides */
	HEALTH_OVERRIDE_EXCLUDE,  /* pinned excluded by an admin */
	HEALTH_OVERRIDE_CLEAR,	  /* pinned ok by an admin */
};

#define HEALTH_NAME_MAX 128
#define HEALTH_REASON_MAX 256

/* One component's row of the health table. */
struct health_entry {
	enum health_kind kind;
	char name[HEALTH_NAME_MAX];
	enum fwd_health state;
	enum health_override override;
	double since;	      /* when the current state began */
	double episode_start; /* start of the current episode, 0 if ok */
	uint32_t bad_streak;  /* consecutive BAD windows */
	uint32_t good_streak; /* consecutive GOOD windows */
	double bad_since;     /* start of the first window of bad_streak */
	double good_since;    /* start of the first window of good_streak */
	double scanned_until; /* end of the last window applied, 0 never */
	char reason[HEALTH_REASON_MAX]; /* why it is in this state */
};

/* A state change, for the history table and the commands. */
struct health_change {
	enum fwd_health from, to;
	double time;			   /* when the new state begins */
	bool episode_closed;		   /* to == ok: an episode ended */
	double episode_start, episode_end; /* valid when episode_closed */
	bool admin;			   /* caused by an admin override */
	char reason[HEALTH_REASON_MAX];
};

const char *health_kind_name(enum health_kind k);
int health_kind_parse(const char *s, enum health_kind *out);
const char *health_override_name(enum health_override o);

/* A fresh entry: ok, no streaks, no override. */
void health_entry_init(struct health_entry *e, enum health_kind kind,
		       const char *name);

/*
 * Apply the verdict of window [wstart, wend) (an enum anomaly_verdict
 * value) with its reason.  Windows must come in time order: a window that
 * ends at or before scanned_until is ignored (that is what makes a scan
 * idempotent) and the call returns 0.  Returns 1 and fills *chg when the
 * state changed, 0 when it did not, -1 with errno EINVAL for a bad window
 * or verdict.
 */
int health_step(const struct policy_anomaly *p, struct health_entry *e,
		double wstart, double wend, int verdict, const char *reason,
		struct health_change *chg);

/*
 * Admin overrides at time `now`.  health_admin_exclude() and
 * health_admin_clear() pin the state; health_admin_release() removes the
 * pin and resets the entry to ok with empty streaks.  Each returns 1 and
 * fills *chg when the state changed, else 0.
 */
int health_admin_exclude(struct health_entry *e, double now, const char *reason,
			 struct health_change *chg);
int health_admin_clear(struct health_entry *e, double now, const char *reason,
		       struct health_change *chg);
int health_admin_release(struct health_entry *e, double now, const char *reason,
			 struct health_change *chg);

/* ---- Beacon Table 2 duration bins ------------------------------------- */

enum {
	HEALTH_BIN_UNDER_1H = 0,
	HEALTH_BIN_1_4H,
	HEALTH_BIN_4_12H,
	HEALTH_BIN_12_96H,
	HEALTH_BIN_96H_PLUS,
	HEALTH_N_BINS,
};

/* Bin of a duration in seconds: [0,1h) [1h,4h) [4h,12h) [12h,96h) [96h,). */
int health_duration_bin(double seconds);
/* "<1h", "1-4h", "4-12h", "12-96h", ">=96h". */
const char *health_bin_name(int bin);

/* ---- feedback commands ------------------------------------------------- */

/*
 * Run the policy's commands for a state change of `e`: alert_command on
 * every change; for an OST, ost_exclude_command when it becomes excluded
 * and ost_restore_command when it stops being excluded, with the OST's
 * name appended as the last argument (as etc/fwdalloc.yaml documents).
 * Each runs with
 * fork + execve (argv[0] must be an absolute path; no shell, no PATH
 * search) with an environment of only PATH=/usr/sbin:/usr/bin:/sbin:/bin,
 * FWD_COMPONENT_KIND, FWD_COMPONENT, FWD_STATE, FWD_PREVIOUS_STATE and
 * FWD_REASON, stdin from /dev/null, stdout sent to our stderr, no other
 * inherited descriptors, in its own process group, killed with
 * SIGKILL after `timeout` seconds.  Returns 0 when every command that ran
 * exited 0, else -1 with err naming the command and what happened (the
 * others still ran).
 */
int health_run_commands(const struct policy_anomaly *p,
			const struct health_entry *e,
			const struct health_change *chg, double timeout,
			fwd_error_t *err);

/* Run one argv with the component environment, the name appended as
 * the last argument when append_name; see above. */
int health_run_argv(const struct policy_argv *cmd, const struct health_entry *e,
		    enum fwd_health from, bool append_name, double timeout,
		    fwd_error_t *err);

/* ---- HEALTH.json --------------------------------------------------------- */

/*
 * The input of `fwdctl decide --health`: a JSON array of
 * {"kind": "forwarder"|"ost", "name", "state": "ok"|"suspect"|"excluded"},
 * one per entry, in the given order.  malloc'd string, NULL with errno.
 */
char *health_to_json(const struct health_entry *entries, size_t n);

/* ---- the store (db/db.h) ------------------------------------------------- */

struct db;
struct topology;

/*
 * The current health table, for the controller prolog and `fwdctl decide`:
 * every row of `health`, sorted by kind then name, as a malloc'd array
 * (free() it; *n may be 0 and *entries NULL).  A component without a row
 * is ok.  Only kind, name, state, override, since, streaks, scanned_until
 * and reason are filled; episode_start, bad_since and good_since are
 * estimated from the streaks (exact unless idle windows interleaved).
 * Runs one prepared SELECT, bounded by the connection's timeouts.
 * Returns 0, or -1 with errno (see db/db.h) and err set.
 *
 *   struct health_entry *h; size_t n;
 *   if (health_db_load(db, p->anomaly.window, &h, &n, &err) == 0)
 *           for (size_t i = 0; i < n; i++)
 *                   if (h[i].kind == HEALTH_FORWARDER &&
 *                       h[i].state == FWD_HEALTH_EXCLUDED)
 *                           avoid(h[i].name);
 *   free(h);
 */
int health_db_load(struct db *db, double window, struct health_entry **entries,
		   size_t *n, fwd_error_t *err);

/* Index of (kind, name) in a sorted table from health_db_load(), or -1. */
long health_find(const struct health_entry *entries, size_t n,
		 enum health_kind kind, const char *name);

struct health_scan_opts {
	double since;		/* first window for components never scanned
				 * (and the earliest window considered);
				 * 0 = 24 h before `until` */
	double until;		/* scan windows ending at or before this;
				 * 0 = now; later than now (or NaN) is
				 * refused with EINVAL */
	double command_timeout; /* per feedback command, seconds */
	/* Called after the commit for every state change, with the error of
	 * its feedback commands (NULL when they all succeeded). */
	void (*on_change)(void *arg, const struct health_entry *e,
			  const struct health_change *c, const char *cmd_err);
	void *arg;
};

struct health_scan_stats {
	size_t components;     /* components with at least one new window */
	size_t windows;	       /* component-windows applied */
	size_t bad_windows;    /* of which BAD */
	size_t jobs;	       /* finished jobs given to the peer detector */
	size_t jobs_eligible;  /* of which large enough to compare */
	size_t changes;	       /* state changes */
	size_t command_errors; /* feedback commands that failed */
	double first_window;   /* earliest window start applied, 0 none */
	double last_window;    /* latest window end applied */
};

/*
 * A finished job as the health scan and the job check need it; the
 * caller reads it from the jobs and allocations tables (controller/).
 */
struct health_job {
	uint64_t id;
	uint32_t nodes;
	double start, end;
	const char *nodelist;	 /* "" or NULL when unknown */
	const char *const *held; /* the forwarders the job held (its
				  * non-shadow allocations), sorted */
	size_t n_held;		 /* 0: use the topology's default
				  * mapping of nodelist */
};

/*
 * The windows a scan with opts covers at time `now`: [*since, *end),
 * aligned on anomaly.window.  -1 with errno EINVAL and err when
 * anomaly.window is not positive or opts->until is later than now (or
 * NaN): its windows would be marked scanned before their statistics
 * arrive.
 */
int health_scan_span(const struct policy *p, const struct health_scan_opts *o,
		     double now, double *since, double *end, fwd_error_t *err);

/*
 * One scan: for every forwarder and OST of the topology (and every
 * component already in the health table), apply the windows after its
 * last scanned one (but not before opts->since) up to opts->until, with
 * verdicts from
 *   - the sustained detector on rollups_minute (the topology gives the
 *     benchmarked peak), and
 *   - the peer detector on `jobs`, the jobs that finished in the span of
 *     health_scan_span() (started, at least anomaly.peer.min_job_nodes
 *     nodes, in order of end then id), with the forwarders they held
 *     (else the topology's default mapping of the node list) and their
 *     OSTs from `jobstats_raw`;
 * then write health and health_history and, after the commit, run the
 * feedback commands of every change; all in one transaction that starts
 * by taking the health lock (the `health_lock` row, waiting at most
 * policy database.lock_timeout), which serialises it with the admin
 * commands.  Idempotent:
 * a second scan with the same `until` applies no window and changes
 * nothing.  Returns 0 (command failures are only counted and reported
 * through on_change), or -1 with errno and err set; on error nothing is
 * written.  An `until` in the future fails with EINVAL before the
 * database is touched (see health_scan_span()).
 */
int health_db_scan(struct db *db, const struct policy *p,
		   const struct topology *t, const struct health_scan_opts *o,
		   const struct health_job *jobs, size_t n_jobs,
		   struct health_scan_stats *st, fwd_error_t *err);

/*
 * Admin override of one component at time `now`: HEALTH_OVERRIDE_EXCLUDE,
 * HEALTH_OVERRIDE_CLEAR, or HEALTH_OVERRIDE_NONE to release it to the
 * scanner (see the top of this file).  Writes health and health_history
 * in one transaction under the health lock (the `health_lock` row), then
 * runs the feedback commands if the state changed (*cmd_err receives
 * their error, "" when none).  *chg (may be NULL) receives the change; returns
 * 1 when the state changed, 0 when not, -1 with errno and err.
 */
int health_db_admin(struct db *db, const struct policy *p,
		    enum health_kind kind, const char *name,
		    enum health_override action, const char *reason, double now,
		    double command_timeout, struct health_change *chg,
		    fwd_error_t *cmd_err, fwd_error_t *err);

/* Episodes (time away from ok) counted by Beacon's Table 2 bins. */
struct health_report {
	unsigned count[2][HEALTH_N_BINS];   /* [kind][bin], ended episodes */
	unsigned ongoing[2][HEALTH_N_BINS]; /* [kind][bin], still open, by
					     * their duration so far */
	unsigned excluded_now[2];	    /* components excluded now */
	unsigned suspect_now[2];
};

/*
 * Read health_history and count the episodes that started at or after
 * `since` (0 = all); an episode is a run of consecutive non-ok rows of
 * one component.  Open episodes are measured up to `now`.
 */
int health_db_report(struct db *db, double since, double now,
		     struct health_report *r, fwd_error_t *err);

/* ---- job-level anomaly (DBSCAN on I/O phases) ------------------------------
 */

struct health_job_neighbour {
	uint64_t job_id;
	bool disruptive;
	char reasons[160];
	char shared[HEALTH_NAME_MAX]; /* first shared forwarder */
};

struct health_job_report {
	uint64_t job_id;
	char user[64], name[256];
	uint32_t nodes;
	size_t n_history_runs; /* past runs whose phases were used */
	size_t n_history_phases;
	size_t n_phases;	      /* of this job */
	struct anomaly_phase *phases; /* this job's, malloc'd */
	bool checked, anomalous;
	size_t n_clusters, n_outliers;
	bool *outlier; /* n_phases flags, malloc'd */
	char reason[160];
	char **forwarders; /* this job's, malloc'd */
	size_t n_forwarders;
	struct health_job_neighbour *neighbours; /* malloc'd */
	size_t n_neighbours, n_disruptive;
};

/* A job that ran at the same time as the checked one, with the
 * interference-prone features of its summary (job_io). */
struct health_job_peer {
	struct health_job job; /* end: now when still running */
	const char *io_mode;   /* job_io.io_mode, "none" without a row */
	double mdops_rate;     /* 0 without a row */
	double peak_bps;       /* 0 without a row */
};

/* A past run of the same application: its job_io.phases. */
struct health_job_past {
	uint64_t job_id;
	const char *phases;
};

/* What the job-level check reads; the caller fetches it from the owners
 * of jobs, allocations (controller/) and job_io (profiler/). */
struct health_job_input {
	struct health_job job; /* end: now when still running */
	const char *user, *name;
	const char *phases; /* job_io.phases of the job, NULL when none */
	/* the same application's past runs at the same scale (same user and
	 * job name, node count in the same history.bucket_base bucket,
	 * ended before the job started, within history.max_age), newest
	 * first, with phases, at most 50 */
	const struct health_job_past *past;
	size_t n_past;
	/* the jobs that overlapped it, by id, at most 10000 */
	const struct health_job_peer *peers;
	size_t n_peers;
};

/*
 * Beacon's job-level check for one job: cluster the (duration, volume)
 * of its I/O phases with those of the past runs using anomaly.dbscan;
 * when phases fall outside the clusters, list the peers that overlapped
 * it on a shared forwarder (held, else the topology's default mapping)
 * with their interference-prone features (decision.interference).
 * Returns 0, or -1 with errno ENOENT ("no I/O phases recorded"), EINVAL
 * (phases that do not parse) or ENOMEM, and err set.  Release with
 * health_job_report_free().
 */
int health_job_check(const struct policy *p, const struct topology *t,
		     const struct health_job_input *in,
		     struct health_job_report *r, fwd_error_t *err);
void health_job_report_free(struct health_job_report *r);

#endif
