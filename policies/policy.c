/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Policy defaults, names, access rules and destruction.  The YAML loader is
 * policy_load.c; both share the struct in policy.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/policy.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif

#define GiB (1024ULL * 1024 * 1024)
#define DAY (24.0 * 3600)

static int set_str(char **dst, const char *src)
{
	char *s = NULL;

	if (src && !(s = strdup(src)))
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

static int strlist_set(struct policy_strlist *l, const char *const *items,
		       size_t n)
{
	l->items = calloc(n + 1, sizeof(char *));
	if (!l->items)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!(l->items[i] = strdup(items[i])))
			return -1;
		l->count++;
	}
	return 0;
}

static void strlist_free(struct policy_strlist *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->count = 0;
}

static void argv_free(struct policy_argv *a)
{
	for (size_t i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

struct policy *policy_defaults(void)
{
	static const char *const key[] = {"user", "name", "node_bucket"};
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;

	p->access.mode = POLICY_MODE_OPT_IN;
	p->access.fail = POLICY_FAIL_OPEN;

	p->decision.avoid_anomalies = true;
	p->decision.scale.enabled = true;
	p->decision.scale.min_volume = 20 * GiB;
	p->decision.scale.min_io_nodes = 32;
	p->decision.scale.max_metadata_rate = 300;
	p->decision.interference.enabled = true;
	p->decision.interference.n1_min_nodes = 64;
	p->decision.interference.metadata_heavy_rate = 300;
	p->decision.interference.high_bandwidth = 5e9;
	p->decision.interference.vulnerable_iops = 1000;
	p->decision.caps.max_forwarders_per_job = 16;
	p->decision.caps.max_pool_share = 0.5;
	p->decision.caps.reserve = 4;
	p->decision.curve.enabled = true;
	p->decision.curve.min_gain = 50e6;
	p->decision.curve.min_gain_share = 0.1;
	p->decision.curve.admin_floors = false;
	p->decision.curve.online_low = 10e6;
	p->decision.curve.min_harm = 10;
	p->decision.contention = POLICY_CONTENTION_GAIN;
	p->decision.decide_timeout = 10;

	p->learn.enabled = false;
	p->learn.pool_share = 0.25;
	p->learn.app_cap = 8;

	p->history.runs = 5;
	p->history.bucket_base = 2;
	p->history.max_age = 90 * DAY;

	p->database.port = 3306;
	p->database.timeout = 5;
	p->database.lock_timeout = 5;
	p->database.connect_timeout = 0.9;
	p->database_breaker = 30;

	p->audit.database = true;

	p->retention.raw_samples = 7 * DAY;
	p->retention.rollups = 400 * DAY;
	p->retention.audit = 400 * DAY;
	p->retention.allocations = 400 * DAY;
	p->retention.jobs = 800 * DAY;
	p->retention.job_io = 800 * DAY;
	p->retention.profiles = 800 * DAY;

	p->ingest.max_rate_factor = 4;
	p->ingest.max_bandwidth = 1e12;
	p->ingest.max_ops_rate = 1e7;
	p->ingest.max_queue_len = 1e6;
	p->ingest.reconnect = 60;
	p->jobstats.grace = 600;
	p->history_loop.lookback = 7 * 86400;
	p->history_loop.late = 3600;

	p->anomaly.enabled = true;
	p->anomaly.window = 600;
	p->anomaly.suspect_windows = 1;
	p->anomaly.exclude_windows = 3;
	p->anomaly.clear_windows = 3;
	p->anomaly.peer.bandwidth_fraction = 0.5;
	p->anomaly.peer.volume_fraction = 0.6;
	p->anomaly.peer.noise_floor = 1e6;
	p->anomaly.peer.min_job_nodes = 32;
	p->anomaly.peer.min_job_volume = 1 * GiB;
	p->anomaly.sustained.peak_fraction = 0.3;
	p->anomaly.sustained.duration = 3600;
	p->anomaly.sustained.min_load_ops = 1;
	p->anomaly.dbscan.eps = 0.15;
	p->anomaly.dbscan.min_points = 3;

	p->remap.driver = POLICY_DRIVER_NONE;
	p->remap.timeout = 30;
	p->remap.verbs.resolve_timeout = 2;
	p->release.timeout = 2;
	p->remap.lnet.hops = 1;

	if (strlist_set(&p->history.key, key, 3) ||
	    set_str(&p->topology, SYSCONFDIR "/fwdalloc/topology.yaml") ||
	    set_str(&p->jobstats.jobid_name, "%j") ||
	    set_str(&p->database.host, "localhost") ||
	    set_str(&p->database.name, "fwdalloc") ||
	    set_str(&p->database.user, "fwdalloc") ||
	    set_str(&p->database.node_user, "fwdalloc_node") ||
	    set_str(&p->audit.file,
		    LOCALSTATEDIR "/log/fwdalloc/audit.jsonl") ||
	    set_str(&p->remap.lwfs.volfile_dir, "/etc/lwfs") ||
	    set_str(&p->remap.lwfs.link_name, "lwfs.vol") ||
	    set_str(&p->remap.lwfs.state_dir, LOCALSTATEDIR "/lib/fwdalloc") ||
	    set_str(&p->remap.lnet.lnetctl, "/usr/sbin/lnetctl") ||
	    set_str(&p->remap.lnet.net, "o2ib")) {
		policy_destroy(p);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(p->digest, sizeof(p->digest), "defaults");
	return p;
}

void policy_destroy(struct policy *p)
{
	int saved = errno;

	if (!p)
		return;
	free(p->path);
	free(p->topology);
	strlist_free(&p->access.allow_users);
	strlist_free(&p->access.deny_users);
	strlist_free(&p->access.allow_accounts);
	strlist_free(&p->access.deny_accounts);
	strlist_free(&p->access.allow_partitions);
	strlist_free(&p->access.deny_partitions);
	strlist_free(&p->history.key);
	free(p->jobstats.jobid_name);
	free(p->reports.admin_group);
	strlist_free(&p->release.controllers);
	free(p->database.socket);
	free(p->database.host);
	for (size_t i = 0; i < p->database.hosts.count; i++)
		free(p->database.hosts.items[i]);
	free(p->database.hosts.items);
	free(p->database.name);
	free(p->database.user);
	free(p->database.password_file);
	free(p->database.node_user);
	free(p->database.node_password_file);
	free(p->audit.file);
	argv_free(&p->anomaly.alert_command);
	argv_free(&p->anomaly.ost_exclude_command);
	argv_free(&p->anomaly.ost_restore_command);
	argv_free(&p->remap.exec.command);
	argv_free(&p->remap.exec.verify);
	free(p->remap.decision_dir);
	free(p->remap.verbs.device);
	free(p->remap.lwfs.volfile_dir);
	free(p->remap.lwfs.link_name);
	free(p->remap.lwfs.state_dir);
	argv_free(&p->remap.lwfs.remount_command);
	free(p->remap.lnet.lnetctl);
	free(p->remap.lnet.net);
	free(p);
	errno = saved;
}

static const char *const mode_names[] = {
	[POLICY_MODE_OFF] = "off",
	[POLICY_MODE_OPT_IN] = "opt-in",
	[POLICY_MODE_OPT_OUT] = "opt-out",
	[POLICY_MODE_SHADOW] = "shadow",
};

/* clang-format off */
static const char *const driver_names[] = {
	[POLICY_DRIVER_NONE] = "none",
	[POLICY_DRIVER_EXEC] = "exec",
	[POLICY_DRIVER_VERBS] = "verbs",
	[POLICY_DRIVER_LWFS] = "lwfs",
	[POLICY_DRIVER_LNET] = "lnet",
};
/* clang-format on */

const char *policy_mode_name(enum policy_mode m)
{
	if ((size_t)m >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "?";
	return mode_names[m];
}

int policy_mode_parse(const char *s, enum policy_mode *out)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]);
	     i++) {
		if (s && !strcmp(s, mode_names[i])) {
			*out = (enum policy_mode)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

const char *policy_driver_name(enum policy_driver d)
{
	if ((size_t)d >= sizeof(driver_names) / sizeof(driver_names[0]))
		return "?";
	return driver_names[d];
}

int policy_driver_parse(const char *s, enum policy_driver *out)
{
	for (size_t i = 0; i < sizeof(driver_names) / sizeof(driver_names[0]);
	     i++) {
		if (s && !strcmp(s, driver_names[i])) {
			*out = (enum policy_driver)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

static bool in_list(const struct policy_strlist *l, const char *s)
{
	for (size_t i = 0; s && i < l->count; i++)
		if (!strcmp(l->items[i], s))
			return true;
	return false;
}

/* One attribute against its deny and allow lists. */
static bool check_one(const struct policy_strlist *allow,
		      const struct policy_strlist *deny, const char *what,
		      const char *value, char *reason, size_t len)
{
	if (in_list(deny, value)) {
		snprintf(reason, len, "%s %s is denied by the policy", what,
			 value);
		return false;
	}
	if (allow->count && !in_list(allow, value)) {
		snprintf(reason, len, "%s %s is not in the policy's allow list",
			 what, value ? value : "(none)");
		return false;
	}
	return true;
}

bool policy_job_allowed(const struct policy *p, const char *user,
			const char *account, const char *partition,
			char *reason, size_t reason_len)
{
	const struct policy_access *a = &p->access;

	if (reason_len)
		reason[0] = '\0';
	if (a->mode == POLICY_MODE_OFF) {
		snprintf(reason, reason_len, "fwdalloc is off (access.mode)");
		return false;
	}
	return check_one(&a->allow_users, &a->deny_users, "user", user, reason,
			 reason_len) &&
	       check_one(&a->allow_accounts, &a->deny_accounts, "account",
			 account, reason, reason_len) &&
	       check_one(&a->allow_partitions, &a->deny_partitions, "partition",
			 partition, reason, reason_len);
}

double policy_node_prolog_worst(const struct policy *p)
{
	return p->database.connect_timeout + 2 * p->database.timeout +
	       p->remap.timeout;
}
