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
#include "policies/policy.h"

enum health_kind {
	HEALTH_FORWARDER = 0,
	HEALTH_OST,
};

enum health_state {
	HEALTH_OK = 0,
	HEALTH_SUSPECT,
	HEALTH_EXCLUDED,
};

enum health_override {
	HEALTH_OVERRIDE_NONE = 0, /* the scanner decides */
	HEALTH_OVERRIDE_EXCLUDE,  /* pinned excluded by an admin */
	HEALTH_OVERRIDE_CLEAR,    /* pinned ok by an admin */
};

#define HEALTH_NAME_MAX 128
#define HEALTH_REASON_MAX 256

/* One component's row of the health table. */
struct health_entry {
	enum health_kind kind;
	char name[HEALTH_NAME_MAX];
	enum health_state state;
	enum health_override override;
	double since;            /* when the current state began */
	double episode_start;    /* start of the current episode, 0 if ok */
	uint32_t bad_streak;     /* consecutive BAD windows */
	uint32_t good_streak;    /* consecutive GOOD windows */
	double bad_since;        /* start of the first window of bad_streak */
	double good_since;       /* start of the first window of good_streak */
	double scanned_until;    /* end of the last window applied, 0 never */
	char reason[HEALTH_REASON_MAX]; /* why it is in this state */
};

/* A state change, for the history table and the commands. */
struct health_change {
	enum health_state from, to;
	double time;             /* when the new state begins */
	bool episode_closed;     /* to == ok: an episode ended */
	double episode_start, episode_end; /* valid when episode_closed */
	bool admin;              /* caused by an admin override */
	char reason[HEALTH_REASON_MAX];
};

const char *health_kind_name(enum health_kind k);
int health_kind_parse(const char *s, enum health_kind *out);
const char *health_state_name(enum health_state s);
int health_state_parse(const char *s, enum health_state *out);
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
int health_admin_exclude(struct health_entry *e, double now,
			 const char *reason, struct health_change *chg);
int health_admin_clear(struct health_entry *e, double now,
		       const char *reason, struct health_change *chg);
int health_admin_release(struct health_entry *e, double now,
			 const char *reason, struct health_change *chg);

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
 * and ost_restore_command when it stops being excluded.  Each runs with
 * fork + execve (argv[0] must be an absolute path; no shell, no PATH
 * search) with an environment of only PATH=/usr/sbin:/usr/bin:/sbin:/bin,
 * FWD_COMPONENT_KIND, FWD_COMPONENT, FWD_STATE, FWD_PREVIOUS_STATE and
 * FWD_REASON, stdin from /dev/null, in its own process group, killed with
 * SIGKILL after `timeout` seconds.  Returns 0 when every command that ran
 * exited 0, else -1 with err naming the command and what happened (the
 * others still ran).
 */
int health_run_commands(const struct policy_anomaly *p,
			const struct health_entry *e,
			const struct health_change *chg, double timeout,
			fwd_error_t *err);

/* Run one argv with the component environment; see above. */
int health_run_argv(const struct policy_argv *cmd,
		    const struct health_entry *e, enum health_state from,
		    double timeout, fwd_error_t *err);

/* ---- HEALTH.json --------------------------------------------------------- */

/*
 * The input of `fwdctl decide --health`: a JSON array of
 * {"kind": "forwarder"|"ost", "name", "state": "ok"|"suspect"|"excluded"},
 * one per entry, in the given order.  malloc'd string, NULL with errno.
 */
char *health_to_json(const struct health_entry *entries, size_t n);

#endif
