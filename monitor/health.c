/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Health state machine, duration bins, feedback commands, HEALTH.json.
 * See monitor/health.h.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/run.h"
#include "monitor/anomaly.h"
#include "monitor/health.h"

static const char *const kind_names[] = {"forwarder", "ost"};
static const char *const override_names[] = {"none", "exclude", "clear"};

const char *health_kind_name(enum health_kind k)
{
	return (unsigned)k < 2 ? kind_names[k] : "?";
}

int health_kind_parse(const char *s, enum health_kind *out)
{
	for (unsigned i = 0; i < 2; i++) {
		if (!strcmp(s, kind_names[i])) {
			*out = (enum health_kind)i;
			return 0;
		}
	}
	return -1;
}

const char *health_override_name(enum health_override o)
{
	return (unsigned)o < 3 ? override_names[o] : "?";
}

void health_entry_init(struct health_entry *e, enum health_kind kind,
		       const char *name)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static void set_reason(char *dst, const char *reason)
{
	snprintf(dst, HEALTH_REASON_MAX, "%s", reason ? reason : "");
}

/* Move e to `to` at time t and describe it in chg. */
static int change(struct health_entry *e, enum fwd_health to, double t,
		  bool admin, const char *reason, struct health_change *chg)
{
	struct health_change c;

	/* A scan catching up on windows older than an admin change must not
	 * start a state before the current one began: history stays in
	 * time order. */
	if (t < e->since)
		t = e->since;
	c = (struct health_change){
		.from = e->state, .to = to, .time = t, .admin = admin};
	set_reason(c.reason, reason);
	if (to == FWD_HEALTH_OK) {
		c.episode_closed = true;
		c.episode_start = e->episode_start;
		c.episode_end = t;
		e->episode_start = 0;
	} else if (e->state == FWD_HEALTH_OK) {
		e->episode_start = t;
	}
	e->state = to;
	e->since = t;
	set_reason(e->reason, reason);
	if (chg)
		*chg = c;
	return 1;
}

int health_step(const struct policy_anomaly *p, struct health_entry *e,
		double wstart, double wend, int verdict, const char *reason,
		struct health_change *chg)
{
	enum fwd_health to = e->state;
	double t = wstart;

	if (!isfinite(wstart) || !isfinite(wend) || wend <= wstart ||
	    (verdict != ANOMALY_NONE && verdict != ANOMALY_GOOD &&
	     verdict != ANOMALY_BAD)) {
		errno = EINVAL;
		return -1;
	}
	if (wend <= e->scanned_until)
		return 0;
	e->scanned_until = wend;
	if (verdict == ANOMALY_BAD) {
		if (e->bad_streak++ == 0)
			e->bad_since = wstart;
		e->good_streak = 0;
		if (e->bad_streak >= p->exclude_windows)
			to = FWD_HEALTH_EXCLUDED;
		else if (e->bad_streak >= p->suspect_windows &&
			 e->state == FWD_HEALTH_OK)
			to = FWD_HEALTH_SUSPECT;
		/* The episode starts with the streak's first bad window. */
		t = e->state == FWD_HEALTH_OK ? e->bad_since : wstart;
	} else if (verdict == ANOMALY_GOOD) {
		if (e->good_streak++ == 0)
			e->good_since = wstart;
		e->bad_streak = 0;
		if (e->state != FWD_HEALTH_OK &&
		    e->good_streak >= p->clear_windows)
			to = FWD_HEALTH_OK;
		/* It has been healthy since the streak's first window. */
		t = e->good_since;
	}
	if (e->override != HEALTH_OVERRIDE_NONE || to == e->state)
		return 0;
	return change(e, to, t, false, reason, chg);
}

int health_admin_exclude(struct health_entry *e, double now, const char *reason,
			 struct health_change *chg)
{
	e->override = HEALTH_OVERRIDE_EXCLUDE;
	if (e->state == FWD_HEALTH_EXCLUDED) {
		set_reason(e->reason, reason);
		return 0;
	}
	return change(e, FWD_HEALTH_EXCLUDED, now, true, reason, chg);
}

int health_admin_clear(struct health_entry *e, double now, const char *reason,
		       struct health_change *chg)
{
	e->override = HEALTH_OVERRIDE_CLEAR;
	if (e->state == FWD_HEALTH_OK) {
		set_reason(e->reason, reason);
		return 0;
	}
	return change(e, FWD_HEALTH_OK, now, true, reason, chg);
}

int health_admin_release(struct health_entry *e, double now, const char *reason,
			 struct health_change *chg)
{
	e->override = HEALTH_OVERRIDE_NONE;
	e->bad_streak = 0;
	e->good_streak = 0;
	if (e->state == FWD_HEALTH_OK) {
		set_reason(e->reason, reason);
		return 0;
	}
	return change(e, FWD_HEALTH_OK, now, true, reason, chg);
}

/* ---- bins ------------------------------------------------------------- */

int health_duration_bin(double seconds)
{
	if (seconds < 3600)
		return HEALTH_BIN_UNDER_1H;
	if (seconds < 4 * 3600)
		return HEALTH_BIN_1_4H;
	if (seconds < 12 * 3600)
		return HEALTH_BIN_4_12H;
	if (seconds < 96 * 3600)
		return HEALTH_BIN_12_96H;
	return HEALTH_BIN_96H_PLUS;
}

const char *health_bin_name(int bin)
{
	static const char *const names[HEALTH_N_BINS] = {
		"<1h", "1-4h", "4-12h", "12-96h", ">=96h",
	};

	return bin >= 0 && bin < HEALTH_N_BINS ? names[bin] : "?";
}

/* ---- commands ----------------------------------------------------------- */

int health_run_argv(const struct policy_argv *cmd, const struct health_entry *e,
		    enum fwd_health from, bool append_name, double timeout,
		    fwd_error_t *err)
{
	char **argv = NULL;
	char env_kind[64], env_name[HEALTH_NAME_MAX + 32];
	char env_state[64], env_prev[64], env_reason[HEALTH_REASON_MAX + 32];
	static char env_path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	char *envp[] = {env_path, env_kind,   env_name, env_state,
			env_prev, env_reason, NULL};
	int rv;

	if (!cmd->argc)
		return 0;
	if (cmd->argv[0][0] != '/') {
		errno = EINVAL;
		return errprintf(err, "command %s: must be an absolute path",
				 cmd->argv[0]);
	}
	/* Built before fork: the child only calls async-signal-safe
	 * functions. */
	argv = calloc(cmd->argc + 2, sizeof(*argv));
	if (!argv)
		return errprintf(err, "command %s: out of memory",
				 cmd->argv[0]);
	for (size_t i = 0; i < cmd->argc; i++)
		argv[i] = cmd->argv[i];
	if (append_name)
		argv[cmd->argc] = (char *)e->name;
	snprintf(env_kind, sizeof(env_kind), "FWD_COMPONENT_KIND=%s",
		 health_kind_name(e->kind));
	snprintf(env_name, sizeof(env_name), "FWD_COMPONENT=%s", e->name);
	snprintf(env_state, sizeof(env_state), "FWD_STATE=%s",
		 fwd_health_name(e->state));
	snprintf(env_prev, sizeof(env_prev), "FWD_PREVIOUS_STATE=%s",
		 fwd_health_name(from));
	snprintf(env_reason, sizeof(env_reason), "FWD_REASON=%s", e->reason);
	/* What the command prints goes to our stderr (the journal under
	 * the timer), never into our stdout, which may be JSON. */
	rv = fwd_run_cmd(argv, envp, timeout, 0, FWD_RUN_PASS_OUTPUT, err);
	free(argv);
	if (rv < 0)
		return errprefix(err, "command %s", cmd->argv[0]);
	return 0;
}

int health_run_commands(const struct policy_anomaly *p,
			const struct health_entry *e,
			const struct health_change *chg, double timeout,
			fwd_error_t *err)
{
	fwd_error_t one;
	int rv = 0;

	if (health_run_argv(&p->alert_command, e, chg->from, false, timeout,
			    &one) < 0) {
		errprintf(err, "%s", one.text);
		rv = -1;
	}
	if (e->kind != HEALTH_OST)
		return rv;
	if (chg->to == FWD_HEALTH_EXCLUDED &&
	    chg->from != FWD_HEALTH_EXCLUDED) {
		if (health_run_argv(&p->ost_exclude_command, e, chg->from, true,
				    timeout, &one) < 0) {
			errprintf(err, "%s", one.text);
			rv = -1;
		}
	} else if (chg->from == FWD_HEALTH_EXCLUDED &&
		   chg->to != FWD_HEALTH_EXCLUDED) {
		if (health_run_argv(&p->ost_restore_command, e, chg->from, true,
				    timeout, &one) < 0) {
			errprintf(err, "%s", one.text);
			rv = -1;
		}
	}
	return rv;
}

/* ---- JSON ------------------------------------------------------------------
 */

char *health_to_json(const struct health_entry *entries, size_t n)
{
	json_t *arr = json_array();
	char *s = NULL;

	if (!arr)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s}", "kind",
				      health_kind_name(entries[i].kind), "name",
				      entries[i].name, "state",
				      fwd_health_name(entries[i].state));

		if (!o || json_array_append_new(arr, o) < 0)
			goto nomem;
	}
	s = json_dumps(arr, JSON_COMPACT);
	if (!s)
		goto nomem;
	json_decref(arr);
	return s;
nomem:
	json_decref(arr);
	errno = ENOMEM;
	return NULL;
}
