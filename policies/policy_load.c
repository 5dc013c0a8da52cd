/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy YAML: loading, validation and printing (YAML and JSON).
 *
 * One schema table describes every key: its name, type, place in struct
 * policy and allowed range.  The loader, both printers and the list of
 * allowed keys in error messages all walk the same table, so a key cannot
 * be loadable but not printable, and `policy show` output always loads back.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/units.h"
#include "common/yamldoc.h"
#include "policies/policy.h"

/* clang-format off */
enum ftype {
	F_SECTION,    /* nested mapping: see sub */
	F_BOOL,       /* bool: true | false */
	F_U32,        /* uint32_t whole number in [min, max] */
	F_NUMBER,     /* double plain decimal in range */
	F_SIZE,       /* uint64_t bytes, "20GiB" */
	F_RATE,       /* double bytes/s, "2.5GB/s" */
	F_DURATION,   /* double seconds, "1h30m" */
	F_FRACTION,   /* double in [0, 1], "0.3" or "30%" */
	F_STRING,     /* char *, non-empty */
	F_OPTSTRING,  /* char *, null allowed (NULL) */
	F_PATH,       /* char *, absolute path */
	F_OPTPATH,    /* char *, absolute path or null */
	F_FILE,       /* char *, path; relative to the policy's directory */
	F_NAME,       /* char *, a file name without '/' */
	F_STRLIST,    /* struct policy_strlist */
	F_ENDPOINTS,  /* struct db_hosts, database endpoints */
	F_KEYLIST,    /* struct policy_strlist of profile key fields */
	F_ARGV,       /* struct policy_argv, a YAML sequence */
	F_MODE,       /* enum policy_mode */
	F_FAIL,       /* enum policy_fail */
	F_CONTENTION, /* enum policy_contention */
	F_DRIVER,     /* enum policy_driver */
};

struct field {
	const char *name;
	enum ftype type;
	size_t off;               /* offsetof(struct policy, ...) */
	const struct field *sub;  /* F_SECTION children, {NULL}-terminated */
	double min, max;          /* numeric range, inclusive ... */
	bool min_excl;            /* ... except min when set (> min) */
};

#define OFF(member) offsetof(struct policy, member)
#define U32MAX 4294967295.0
#define NOMAX 1e15

#define SEC(n, s) { .name = n, .type = F_SECTION, .sub = s }
#define FLD(n, t, m) { .name = n, .type = t, .off = OFF(m), .max = NOMAX }
#define RNG(n, t, m, lo, hi) \
	{ .name = n, .type = t, .off = OFF(m), .min = lo, .max = hi }
#define POS(n, t, m, hi) \
	{ .name = n, .type = t, .off = OFF(m), .max = hi, .min_excl = true }
#define END { .name = NULL }

static const struct field access_fields[] = {
	FLD("mode", F_MODE, access.mode),
	FLD("fail", F_FAIL, access.fail),
	FLD("allow_users", F_STRLIST, access.allow_users),
	FLD("deny_users", F_STRLIST, access.deny_users),
	FLD("allow_accounts", F_STRLIST, access.allow_accounts),
	FLD("deny_accounts", F_STRLIST, access.deny_accounts),
	FLD("allow_partitions", F_STRLIST, access.allow_partitions),
	FLD("deny_partitions", F_STRLIST, access.deny_partitions),
	END,
};

static const struct field scale_fields[] = {
	FLD("enabled", F_BOOL, decision.scale.enabled),
	FLD("min_volume", F_SIZE, decision.scale.min_volume),
	RNG("min_io_nodes", F_U32, decision.scale.min_io_nodes, 0, U32MAX),
	RNG("max_metadata_rate", F_NUMBER, decision.scale.max_metadata_rate,
	    0, NOMAX),
	END,
};

static const struct field interference_fields[] = {
	FLD("enabled", F_BOOL, decision.interference.enabled),
	RNG("n1_min_nodes", F_U32, decision.interference.n1_min_nodes, 0,
	    U32MAX),
	RNG("metadata_heavy_rate", F_NUMBER,
	    decision.interference.metadata_heavy_rate, 0, NOMAX),
	FLD("high_bandwidth", F_RATE, decision.interference.high_bandwidth),
	RNG("vulnerable_iops", F_NUMBER,
	    decision.interference.vulnerable_iops, 0, NOMAX),
	END,
};

static const struct field caps_fields[] = {
	RNG("max_forwarders_per_job", F_U32,
	    decision.caps.max_forwarders_per_job, 1, U32MAX),
	FLD("max_pool_share", F_FRACTION, decision.caps.max_pool_share),
	RNG("reserve", F_U32, decision.caps.reserve, 0, U32MAX),
	END,
};

static const struct field curve_fields[] = {
	FLD("enabled", F_BOOL, decision.curve.enabled),
	FLD("min_gain", F_RATE, decision.curve.min_gain),
	FLD("min_gain_share", F_FRACTION, decision.curve.min_gain_share),
	FLD("admin_floors", F_BOOL, decision.curve.admin_floors),
	POS("online_low", F_RATE, decision.curve.online_low, NOMAX),
	RNG("min_harm", F_DURATION, decision.curve.min_harm, 0, NOMAX),
	FLD("direct", F_BOOL, decision.curve.direct),
	END,
};

static const struct field decision_fields[] = {
	FLD("avoid_anomalies", F_BOOL, decision.avoid_anomalies),
	FLD("contention", F_CONTENTION, decision.contention),
	POS("decide_timeout", F_DURATION, decision.decide_timeout, 3600),
	SEC("scale", scale_fields),
	SEC("interference", interference_fields),
	SEC("caps", caps_fields),
	SEC("curve", curve_fields),
	END,
};

static const struct field history_fields[] = {
	FLD("key", F_KEYLIST, history.key),
	RNG("runs", F_U32, history.runs, 1, 1000),
	RNG("bucket_base", F_U32, history.bucket_base, 2, 1024),
	POS("max_age", F_DURATION, history.max_age, NOMAX),
	END,
};

static const struct field jobstats_fields[] = {
	FLD("jobid_name", F_STRING, jobstats.jobid_name),
	RNG("grace", F_DURATION, jobstats.grace, 0, 86400 * 7),
	END,
};

static const struct field reports_fields[] = {
	FLD("admin_group", F_OPTSTRING, reports.admin_group),
	END,
};

static const struct field release_fields[] = {
	RNG("port", F_U32, release.port, 0, 65535),
	FLD("controllers", F_STRLIST, release.controllers),
	POS("timeout", F_DURATION, release.timeout, 60),
	END,
};

static const struct field history_loop_fields[] = {
	POS("lookback", F_DURATION, history_loop.lookback, NOMAX),
	RNG("late", F_DURATION, history_loop.late, 0, NOMAX),
	END,
};

static const struct field learn_fields[] = {
	FLD("enabled", F_BOOL, learn.enabled),
	FLD("pool_share", F_FRACTION, learn.pool_share),
	RNG("app_cap", F_U32, learn.app_cap, 1, U32MAX),
	END,
};

static const struct field database_fields[] = {
	FLD("socket", F_OPTPATH, database.socket),
	FLD("host", F_STRING, database.host),
	RNG("port", F_U32, database.port, 1, 65535),
	FLD("hosts", F_ENDPOINTS, database.hosts),
	FLD("name", F_STRING, database.name),
	FLD("user", F_STRING, database.user),
	FLD("password_file", F_OPTPATH, database.password_file),
	FLD("node_user", F_STRING, database.node_user),
	FLD("node_password_file", F_OPTPATH, database.node_password_file),
	POS("timeout", F_DURATION, database.timeout, 3600),
	POS("connect_timeout", F_DURATION, database.connect_timeout, 3600),
	RNG("lock_timeout", F_DURATION, database.lock_timeout, 0, 3600),
	RNG("breaker", F_DURATION, database_breaker, 0, 3600),
	END,
};

static const struct field audit_fields[] = {
	FLD("file", F_PATH, audit.file),
	FLD("database", F_BOOL, audit.database),
	END,
};

static const struct field retention_fields[] = {
	POS("raw_samples", F_DURATION, retention.raw_samples, NOMAX),
	POS("rollups", F_DURATION, retention.rollups, NOMAX),
	POS("audit", F_DURATION, retention.audit, NOMAX),
	POS("allocations", F_DURATION, retention.allocations, NOMAX),
	POS("jobs", F_DURATION, retention.jobs, NOMAX),
	POS("job_io", F_DURATION, retention.job_io, NOMAX),
	POS("profiles", F_DURATION, retention.profiles, NOMAX),
	END,
};

static const struct field ingest_fields[] = {
	RNG("max_rate_factor", F_NUMBER, ingest.max_rate_factor, 1, 1000000),
	POS("max_bandwidth", F_RATE, ingest.max_bandwidth, NOMAX),
	POS("max_ops_rate", F_NUMBER, ingest.max_ops_rate, NOMAX),
	POS("max_queue_len", F_NUMBER, ingest.max_queue_len, NOMAX),
	RNG("reconnect", F_DURATION, ingest.reconnect, 0, 3600),
	END,
};

static const struct field peer_fields[] = {
	FLD("bandwidth_fraction", F_FRACTION, anomaly.peer.bandwidth_fraction),
	FLD("volume_fraction", F_FRACTION, anomaly.peer.volume_fraction),
	FLD("noise_floor", F_RATE, anomaly.peer.noise_floor),
	RNG("min_job_nodes", F_U32, anomaly.peer.min_job_nodes, 0, U32MAX),
	FLD("min_job_volume", F_SIZE, anomaly.peer.min_job_volume),
	END,
};

static const struct field sustained_fields[] = {
	FLD("peak_fraction", F_FRACTION, anomaly.sustained.peak_fraction),
	POS("duration", F_DURATION, anomaly.sustained.duration, NOMAX),
	RNG("min_load_ops", F_NUMBER, anomaly.sustained.min_load_ops, 0,
	    NOMAX),
	END,
};

static const struct field dbscan_fields[] = {
	POS("eps", F_NUMBER, anomaly.dbscan.eps, 1),
	RNG("min_points", F_U32, anomaly.dbscan.min_points, 1, 1000),
	END,
};

static const struct field anomaly_fields[] = {
	FLD("enabled", F_BOOL, anomaly.enabled),
	POS("window", F_DURATION, anomaly.window, NOMAX),
	RNG("suspect_windows", F_U32, anomaly.suspect_windows, 1, 1000),
	RNG("exclude_windows", F_U32, anomaly.exclude_windows, 1, 1000),
	RNG("clear_windows", F_U32, anomaly.clear_windows, 1, 1000),
	SEC("peer", peer_fields),
	SEC("sustained", sustained_fields),
	SEC("dbscan", dbscan_fields),
	FLD("alert_command", F_ARGV, anomaly.alert_command),
	FLD("ost_exclude_command", F_ARGV, anomaly.ost_exclude_command),
	FLD("ost_restore_command", F_ARGV, anomaly.ost_restore_command),
	END,
};

static const struct field exec_fields[] = {
	FLD("command", F_ARGV, remap.exec.command),
	FLD("verify", F_ARGV, remap.exec.verify),
	END,
};

static const struct field verbs_fields[] = {
	FLD("device", F_OPTSTRING, remap.verbs.device),
	RNG("port", F_U32, remap.verbs.port, 0, 65535),
	POS("resolve_timeout", F_DURATION, remap.verbs.resolve_timeout, 600),
	FLD("connect_probe", F_BOOL, remap.verbs.connect_probe),
	END,
};

static const struct field lwfs_fields[] = {
	FLD("volfile_dir", F_PATH, remap.lwfs.volfile_dir),
	FLD("link_name", F_NAME, remap.lwfs.link_name),
	FLD("state_dir", F_PATH, remap.lwfs.state_dir),
	FLD("remount_command", F_ARGV, remap.lwfs.remount_command),
	END,
};

static const struct field lnet_fields[] = {
	FLD("lnetctl", F_PATH, remap.lnet.lnetctl),
	FLD("net", F_STRING, remap.lnet.net),
	RNG("hops", F_U32, remap.lnet.hops, 1, 255),
	END,
};

static const struct field remap_fields[] = {
	FLD("driver", F_DRIVER, remap.driver),
	POS("timeout", F_DURATION, remap.timeout, 3600),
	FLD("decision_dir", F_OPTPATH, remap.decision_dir),
	SEC("exec", exec_fields),
	SEC("verbs", verbs_fields),
	SEC("lwfs", lwfs_fields),
	SEC("lnet", lnet_fields),
	END,
};

static const struct field policy_fields[] = {
	FLD("topology", F_FILE, topology),
	SEC("access", access_fields),
	SEC("decision", decision_fields),
	SEC("history", history_fields),
	SEC("learn", learn_fields),
	SEC("database", database_fields),
	SEC("audit", audit_fields),
	SEC("retention", retention_fields),
	SEC("ingest", ingest_fields),
	SEC("anomaly", anomaly_fields),
	SEC("remap", remap_fields),
	SEC("jobstats", jobstats_fields),
	SEC("reports", reports_fields),
	SEC("release", release_fields),
	SEC("history_loop", history_loop_fields),
	END,
};

/* clang-format on */

static const char *const history_key_names[] = {
	"user", "account", "name", "partition", "node_bucket",
};

static const char *const fail_names[] = {"open", "closed"};
static const char *const contention_names[] = {"gain", "fcfs"};

#define ARGV_HELP                                                            \
	"a command is a YAML list [program, arg, ...] run without a shell, " \
	"e.g. [/usr/local/sbin/fwd-alert, --severity, high]"

struct loader {
	const struct ydoc *doc;
	struct policy *p;
	fwd_error_t *err;
	const char *dir; /* the policy file's directory, for F_FILE */
};

static void *at(struct policy *p, const struct field *f)
{
	return (char *)p + f->off;
}

static const void *cat(const struct policy *p, const struct field *f)
{
	return (const char *)p + f->off;
}

/* "FILE:LINE:COL: key.path: <fmt>" */
static int ferr(struct loader *l, const struct ydoc_node *n, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

static int ferr(struct loader *l, const struct ydoc_node *n, const char *fmt,
		...)
{
	va_list ap;

	va_start(ap, fmt);
	ydoc_vpath_error(l->err, l->doc, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* "value 'X'" for a scalar, "value is a mapping" otherwise. */
static int verr(struct loader *l, const struct ydoc_node *n,
		const char *allowed)
{
	if (n->kind != YDOC_SCALAR)
		return ferr(l, n, "value is %s; expected %s", ydoc_kind_name(n),
			    allowed);
	if (ydoc_is_null(n))
		return ferr(l, n, "value is empty; expected %s", allowed);
	return ferr(l, n, "value '%s': expected %s", n->value, allowed);
}

static void names_list(char *buf, size_t len, const char *const *names,
		       size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i ? ", " : "", names[i]);
}

/* ---- the schema, for documentation (policy.h: policy_schema_foreach) */

static const char *ftype_word(enum ftype t)
{
	switch (t) {
	case F_SECTION:
		return "section";
	case F_BOOL:
		return "boolean";
	case F_U32:
		return "integer";
	case F_NUMBER:
		return "number";
	case F_SIZE:
		return "size";
	case F_RATE:
		return "rate";
	case F_DURATION:
		return "duration";
	case F_FRACTION:
		return "fraction";
	case F_STRING:
		return "string";
	case F_OPTSTRING:
		return "string or null";
	case F_PATH:
		return "absolute path";
	case F_OPTPATH:
		return "absolute path or null";
	case F_FILE:
		return "path";
	case F_NAME:
		return "file name";
	case F_STRLIST:
		return "list of names";
	case F_ENDPOINTS:
		return "list of servers";
	case F_KEYLIST:
		return "list of key fields";
	case F_ARGV:
		return "command";
	case F_MODE:
		return "off|opt-in|opt-out|shadow";
	case F_FAIL:
		return "open|closed";
	case F_CONTENTION:
		return "gain|fcfs";
	case F_DRIVER:
		return "none|exec|verbs|lwfs|lnet";
	}
	return "?";
}

static int schema_walk(const struct field *fields, const char *prefix,
		       int (*fn)(void *arg, const struct policy_key *k),
		       void *arg)
{
	for (size_t i = 0; fields[i].name; i++) {
		const struct field *f = &fields[i];
		struct policy_key k = {0};
		char path[256];
		int r;

		snprintf(path, sizeof(path), "%s%s%s", prefix,
			 *prefix ? "." : "", f->name);
		k.path = path;
		k.type = ftype_word(f->type);
		k.section = f->type == F_SECTION;
		k.has_range = f->type == F_U32 || f->type == F_NUMBER ||
			      f->type == F_DURATION;
		k.min = f->min;
		k.max = f->max >= NOMAX ? INFINITY : f->max;
		k.min_excl = f->min_excl;
		if ((r = fn(arg, &k)) != 0)
			return r;
		if (k.section && (r = schema_walk(f->sub, path, fn, arg)) != 0)
			return r;
	}
	return 0;
}

int policy_schema_foreach(int (*fn)(void *arg, const struct policy_key *k),
			  void *arg)
{
	return schema_walk(policy_fields, "", fn, arg);
}

static void keys_list(char *buf, size_t len, const struct field *fields)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; fields[i].name && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i ? ", " : "", fields[i].name);
}

static int set_string(char **dst, const char *src)
{
	char *s = NULL;

	if (src && !(s = strdup(src)))
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

static void free_vec(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Strict plain decimal: optional '-', digits, optional '.' digits. */
static int parse_plain_number(const char *s, double *out)
{
	const char *p = s;
	char *end;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return -1;
	*out = strtod(s, &end);
	return isfinite(*out) ? 0 : -1;
}

/* Human form of a number or duration bound for range messages. */
static void bound_text(const struct field *f, double v, char *buf, size_t len)
{
	if (f->type == F_DURATION)
		units_format_duration(v, buf, len);
	else if (f->type == F_RATE)
		units_format_rate(v, buf, len);
	else
		snprintf(buf, len, "%.15g", v);
}

static void range_text(const struct field *f, const char *what, char *buf,
		       size_t len)
{
	char lo[32], hi[32];

	bound_text(f, f->min, lo, sizeof(lo));
	bound_text(f, f->max, hi, sizeof(hi));
	if (f->min_excl && f->max >= NOMAX)
		snprintf(buf, len, "%s greater than %s", what, lo);
	else if (f->min_excl)
		snprintf(buf, len, "%s greater than %s and at most %s", what,
			 lo, hi);
	else if (f->max >= NOMAX)
		snprintf(buf, len, "%s of at least %s", what, lo);
	else
		snprintf(buf, len, "%s from %s to %s", what, lo, hi);
}

static bool in_range(const struct field *f, double v)
{
	if (f->min_excl ? !(v > f->min) : !(v >= f->min))
		return false;
	return v <= f->max;
}

static int load_enum(struct loader *l, const struct ydoc_node *n,
		     const char *const *names, size_t count, int *out)
{
	char allowed[256], list[200];

	if (n->kind == YDOC_SCALAR && !ydoc_is_null(n)) {
		for (size_t i = 0; i < count; i++) {
			if (!strcmp(n->value, names[i])) {
				*out = (int)i;
				return 0;
			}
		}
	}
	names_list(list, sizeof(list), names, count);
	snprintf(allowed, sizeof(allowed), "one of %s", list);
	return verr(l, n, allowed);
}

/* A sequence of non-empty strings; a null means an empty list. */
static int load_vec(struct loader *l, const struct ydoc_node *n,
		    const char *item_what, char ***out, size_t *count)
{
	char **v;

	*out = NULL;
	*count = 0;
	if (ydoc_is_null(n))
		return 0;
	if (n->kind != YDOC_SEQUENCE)
		return -2; /* caller words the message */
	v = calloc(n->n_items + 1, sizeof(char *));
	if (!v)
		return ferr(l, n, "out of memory");
	for (size_t i = 0; i < n->n_items; i++) {
		const struct ydoc_node *it = n->items[i];

		if (it->kind != YDOC_SCALAR || ydoc_is_null(it) ||
		    !*it->value) {
			free_vec(v, i);
			return verr(l, it, item_what);
		}
		if (!(v[i] = strdup(it->value))) {
			free_vec(v, i);
			return ferr(l, n, "out of memory");
		}
	}
	*out = v;
	*count = n->n_items;
	return 0;
}

static int load_strlist(struct loader *l, const struct field *f,
			const struct ydoc_node *n)
{
	struct policy_strlist *sl = at(l->p, f), nl = {0};
	int rc;

	rc = load_vec(l, n, "a name", &nl.items, &nl.count);
	if (rc == -2)
		return verr(l, n, "a list of names, e.g. [alice, bob]");
	if (rc)
		return -1;
	if (f->type == F_KEYLIST) {
		char list[200], allowed[256];

		names_list(list, sizeof(list), history_key_names,
			   sizeof(history_key_names) /
				   sizeof(history_key_names[0]));
		snprintf(allowed, sizeof(allowed), "one of %s", list);
		if (!nl.count) {
			rc = verr(l, n,
				  "a non-empty list of key fields, each "
				  "one of user, account, name, partition, "
				  "node_bucket");
			goto fail;
		}
		for (size_t i = 0; i < nl.count; i++) {
			bool known = false;

			for (size_t k = 0;
			     k < sizeof(history_key_names) /
					 sizeof(history_key_names[0]);
			     k++)
				known |= !strcmp(nl.items[i],
						 history_key_names[k]);
			if (!known) {
				rc = verr(l, n->items[i], allowed);
				goto fail;
			}
			for (size_t j = 0; j < i; j++) {
				if (!strcmp(nl.items[i], nl.items[j])) {
					rc = ferr(l, n->items[i],
						  "value '%s': listed twice",
						  nl.items[i]);
					goto fail;
				}
			}
		}
	}
	free_vec(sl->items, sl->count);
	*sl = nl;
	return 0;
fail:
	free_vec(nl.items, nl.count);
	return rc;
}

/* The most endpoints database.hosts may list. */
#define MAX_DB_HOSTS 16

/* database.hosts: endpoints, each checked by db_endpoint_parse(). */
static int load_endpoints(struct loader *l, const struct field *f,
			  const struct ydoc_node *n)
{
	static const char what[] =
		"an endpoint: host, host:port, [ipv6]:port or /unix/socket";
	struct db_hosts *h = at(l->p, f), nh = {0};
	struct db_endpoint e;
	fwd_error_t perr;
	int rc;

	rc = load_vec(l, n, what, &nh.items, &nh.count);
	if (rc == -2)
		return verr(l, n,
			    "a list of endpoints, e.g. [db1:3306, db2, "
			    "/run/mysqld/mysqld.sock]");
	if (rc)
		return -1;
	if (nh.count > MAX_DB_HOSTS) {
		rc = ferr(l, n, "%zu endpoints: at most %d", nh.count,
			  MAX_DB_HOSTS);
		goto fail;
	}
	for (size_t i = 0; i < nh.count; i++) {
		if (db_endpoint_parse(nh.items[i], &e, &perr) < 0) {
			rc = ferr(l, n->items[i], "value '%s': %s; expected %s",
				  nh.items[i], perr.text, what);
			goto fail;
		}
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(nh.items[i], nh.items[j])) {
				rc = ferr(l, n->items[i],
					  "value '%s': listed twice",
					  nh.items[i]);
				goto fail;
			}
		}
	}
	free_vec(h->items, h->count);
	*h = nh;
	return 0;
fail:
	free_vec(nh.items, nh.count);
	return rc;
}

static int load_argv(struct loader *l, const struct field *f,
		     const struct ydoc_node *n)
{
	struct policy_argv *a = at(l->p, f), na = {0};
	int rc;

	if (n->kind == YDOC_SCALAR && !ydoc_is_null(n))
		return ferr(l, n, "value '%s': %s", n->value, ARGV_HELP);
	rc = load_vec(l, n, "a program or argument", &na.argv, &na.argc);
	if (rc == -2)
		return verr(l, n, ARGV_HELP);
	if (rc)
		return -1;
	if (na.argc && na.argv[0][0] != '/') {
		rc = ferr(l, n->items[0],
			  "value '%s': the program must be an absolute path "
			  "(commands run without a shell or PATH search)",
			  na.argv[0]);
		free_vec(na.argv, na.argc);
		return rc;
	}
	free_vec(a->argv, a->argc);
	*a = na;
	return 0;
}

static int load_string(struct loader *l, const struct field *f,
		       const struct ydoc_node *n)
{
	char **dst = at(l->p, f);
	char *joined = NULL;
	const char *v;
	int rc;

	if ((f->type == F_OPTSTRING || f->type == F_OPTPATH) && ydoc_is_null(n))
		return set_string(dst, NULL) ? ferr(l, n, "out of memory") : 0;
	if (n->kind != YDOC_SCALAR || ydoc_is_null(n) || !*n->value) {
		switch (f->type) {
		case F_PATH:
			return verr(l, n, "an absolute path");
		case F_OPTPATH:
			return verr(l, n, "an absolute path or null");
		case F_FILE:
			return verr(l, n, "a file path");
		case F_NAME:
			return verr(l, n, "a file name");
		default:
			return verr(l, n, "a non-empty string");
		}
	}
	v = n->value;
	if ((f->type == F_PATH || f->type == F_OPTPATH) && v[0] != '/')
		return verr(l, n,
			    f->type == F_PATH
				    ? "an absolute path (starting with /)"
				    : "an absolute path (starting with /) or "
				      "null");
	if (f->type == F_NAME && strchr(v, '/'))
		return verr(l, n, "a file name without '/'");
	if (f->type == F_FILE && v[0] != '/' && l->dir) {
		if (asprintf(&joined, "%s%s%s", l->dir,
			     strcmp(l->dir, "/") ? "/" : "", v) < 0)
			return ferr(l, n, "out of memory");
		v = joined;
	}
	rc = set_string(dst, v) ? ferr(l, n, "out of memory") : 0;
	free(joined);
	return rc;
}

static int load_scalar_units(struct loader *l, const struct field *f,
			     const struct ydoc_node *n)
{
	static const char *const what[] = {
		[F_SIZE] = "a size, e.g. 20GiB",
		[F_RATE] = "a rate, e.g. 2.5GB/s",
		[F_DURATION] = "a duration, e.g. 1h30m",
		[F_FRACTION] = "a fraction, e.g. 0.3 or 30%",
	};
	fwd_error_t uerr;
	double d = 0;
	uint64_t u = 0;
	int rc;

	if (n->kind != YDOC_SCALAR || ydoc_is_null(n))
		return verr(l, n, what[f->type]);
	switch (f->type) {
	case F_SIZE:
		rc = units_parse_size(n->value, &u, &uerr);
		break;
	case F_RATE:
		rc = units_parse_rate(n->value, &d, &uerr);
		break;
	case F_DURATION:
		rc = units_parse_duration(n->value, &d, &uerr);
		break;
	default:
		rc = units_parse_fraction(n->value, &d, &uerr);
		break;
	}
	if (rc)
		return ferr(l, n, "%s", uerr.text);
	if ((f->type == F_DURATION || f->type == F_RATE) && !in_range(f, d)) {
		char allowed[256];

		range_text(f, f->type == F_DURATION ? "a duration" : "a rate",
			   allowed, sizeof(allowed));
		return ferr(l, n, "value '%s': expected %s", n->value, allowed);
	}
	if (f->type == F_SIZE)
		*(uint64_t *)at(l->p, f) = u;
	else
		*(double *)at(l->p, f) = d;
	return 0;
}

static int load_number(struct loader *l, const struct field *f,
		       const struct ydoc_node *n)
{
	char allowed[256];
	double v;

	range_text(f, f->type == F_U32 ? "a whole number" : "a number", allowed,
		   sizeof(allowed));
	if (n->kind != YDOC_SCALAR || ydoc_is_null(n) ||
	    parse_plain_number(n->value, &v) || !in_range(f, v) ||
	    (f->type == F_U32 && v != floor(v)))
		return verr(l, n, allowed);
	if (f->type == F_U32)
		*(uint32_t *)at(l->p, f) = (uint32_t)v;
	else
		*(double *)at(l->p, f) = v;
	return 0;
}

static int load_section(struct loader *l, const struct field *fields,
			const struct ydoc_node *map);

static int load_field(struct loader *l, const struct field *f,
		      const struct ydoc_node *n)
{
	int v;

	switch (f->type) {
	case F_SECTION:
		return load_section(l, f->sub, n);
	case F_BOOL:
		if (n->kind == YDOC_SCALAR && n->plain &&
		    (!strcmp(n->value, "true") || !strcmp(n->value, "false"))) {
			*(bool *)at(l->p, f) = !strcmp(n->value, "true");
			return 0;
		}
		return verr(l, n, "true or false");
	case F_U32:
	case F_NUMBER:
		return load_number(l, f, n);
	case F_SIZE:
	case F_RATE:
	case F_DURATION:
	case F_FRACTION:
		return load_scalar_units(l, f, n);
	case F_STRING:
	case F_OPTSTRING:
	case F_PATH:
	case F_OPTPATH:
	case F_FILE:
	case F_NAME:
		return load_string(l, f, n);
	case F_STRLIST:
	case F_KEYLIST:
		return load_strlist(l, f, n);
	case F_ENDPOINTS:
		return load_endpoints(l, f, n);
	case F_ARGV:
		return load_argv(l, f, n);
	case F_MODE: {
		static const char *const names[] = {"off", "opt-in", "opt-out",
						    "shadow"};

		if (load_enum(l, n, names, 4, &v))
			return -1;
		*(enum policy_mode *)at(l->p, f) = (enum policy_mode)v;
		return 0;
	}
	case F_FAIL:
		if (load_enum(l, n, fail_names, 2, &v))
			return -1;
		*(enum policy_fail *)at(l->p, f) = (enum policy_fail)v;
		return 0;
	case F_CONTENTION:
		if (load_enum(l, n, contention_names, 2, &v))
			return -1;
		*(enum policy_contention *)at(l->p, f) =
			(enum policy_contention)v;
		return 0;
	case F_DRIVER: {
		static const char *const names[] = {"none", "exec", "verbs",
						    "lwfs", "lnet"};

		if (load_enum(l, n, names, 5, &v))
			return -1;
		*(enum policy_driver *)at(l->p, f) = (enum policy_driver)v;
		return 0;
	}
	}
	return ferr(l, n, "internal error: unknown field type");
}

static int load_section(struct loader *l, const struct field *fields,
			const struct ydoc_node *map)
{
	char keys[512];

	/* A section left empty (every key commented out) changes nothing. */
	if (ydoc_is_null(map))
		return 0;
	keys_list(keys, sizeof(keys), fields);
	if (map->kind != YDOC_MAPPING) {
		char allowed[600];

		snprintf(allowed, sizeof(allowed), "a mapping with keys %s",
			 keys);
		if (!*map->path)
			return ydoc_error(l->err, l->doc, map,
					  "the policy must be a mapping with "
					  "keys %s",
					  keys);
		return verr(l, map, allowed);
	}
	for (size_t i = 0; i < map->n_pairs; i++) {
		const struct ydoc_node *key = map->pairs[i].key;
		const struct field *f = NULL;

		for (size_t j = 0; fields[j].name; j++)
			if (!strcmp(fields[j].name, key->value))
				f = &fields[j];
		if (!f)
			return ferr(l, key, "unknown key; allowed keys: %s",
				    keys);
		if (load_field(l, f, map->pairs[i].value))
			return -1;
	}
	return 0;
}

/* The node at a dotted path, or NULL if the file does not set it. */
static const struct ydoc_node *find(const struct ydoc *d, const char *path)
{
	const struct ydoc_node *n = d->root;
	char buf[128], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && n;
	     tok = strtok_r(NULL, ".", &save))
		n = ydoc_get(n, tok);
	return n;
}

/* The node at path, or the document root if the file does not set it. */
static const struct ydoc_node *find_or_root(const struct ydoc *d,
					    const char *path)
{
	const struct ydoc_node *n = find(d, path);

	return n ? n : d->root;
}

/* Rules between keys, checked after every key has its value. */
static int cross_check(struct loader *l)
{
	const struct policy *p = l->p;
	const struct ydoc_node *n;

	if (p->remap.driver == POLICY_DRIVER_EXEC &&
	    !p->remap.exec.command.argc) {
		n = find_or_root(l->doc, "remap.driver");
		return ferr(l, n,
			    "value 'exec': the exec driver needs "
			    "remap.exec.command, %s",
			    ARGV_HELP);
	}
	/* `direct` sends a job to the file system with no forwarder.  The
	 * exec driver performs it (its command runs with FWD_ACTION=direct),
	 * none only records it; lwfs, lnet and verbs cannot, so a node would
	 * stay on its default forwarder while the ledger says direct.  Only
	 * the decision file (remap.decision_dir) tells the nodes: the
	 * database holds no row for a job without a forwarder. */
	if (p->decision.curve.direct && p->remap.driver != POLICY_DRIVER_NONE &&
	    p->remap.driver != POLICY_DRIVER_EXEC) {
		n = find_or_root(l->doc, "decision.curve.direct");
		return ferr(l, n,
			    "value 'true': remap.driver '%s' cannot give a "
			    "node direct file-system access (no forwarder); "
			    "direct needs remap.driver exec (its command runs "
			    "with FWD_ACTION=direct) or none (decisions only "
			    "recorded)",
			    policy_driver_name(p->remap.driver));
	}
	if (p->decision.curve.direct && p->remap.driver == POLICY_DRIVER_EXEC &&
	    !p->remap.decision_dir) {
		n = find_or_root(l->doc, "decision.curve.direct");
		return ferr(l, n,
			    "value 'true': remap.driver exec learns of direct "
			    "access only from the published decision: set "
			    "remap.decision_dir");
	}
	if (p->remap.verbs.connect_probe && !p->remap.verbs.port) {
		n = find_or_root(l->doc, "remap.verbs.connect_probe");
		return ferr(l, n,
			    "value 'true': the connect probe needs "
			    "remap.verbs.port, the forwarding service's port "
			    "(1 to 65535)");
	}
	return 0;
}

/* The policy file's directory, absolute when it can be resolved, so a
 * relative `topology:` stays right when the effective policy is printed
 * and used from elsewhere. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *abs;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (dir && (abs = realpath(dir, NULL))) {
		free(dir);
		dir = abs;
	}
	return dir;
}

struct policy *policy_load(const char *path, fwd_error_t *err)
{
	struct loader l = {.err = err};
	struct policy *p = NULL;
	struct ydoc *d = NULL;
	char *dir = NULL;

	if (!(d = ydoc_load(path, err)))
		return NULL;
	if (!(p = policy_defaults()) || !(p->path = strdup(path)) ||
	    !(dir = dir_of(path))) {
		errprintf(err, "%s: out of memory", path);
		goto fail;
	}
	l.doc = d;
	l.p = p;
	l.dir = dir;
	if (load_section(&l, policy_fields, d->root) || cross_check(&l))
		goto fail;
	sha256_hex(d->bytes, d->len, p->digest);
	free(dir);
	ydoc_destroy(d);
	return p;
fail:
	if (!errno)
		errno = EINVAL;
	free(dir);
	ydoc_destroy(d);
	policy_destroy(p);
	return NULL;
}

/* One key of the file (a section or a value), at the dotted path `key`,
 * loaded into a policy of its own (the defaults plus that key): NULL when
 * the file does not set it or it does not validate. */
static struct policy *load_alone(const struct ydoc *d, const char *dir,
				 const char *key, const struct field *f)
{
	const struct ydoc_node *n = find(d, key);
	fwd_error_t err;
	struct loader l = {.doc = d, .err = &err, .dir = dir};

	if (!n || !(l.p = policy_defaults()))
		return NULL;
	if (load_field(&l, f, n)) {
		policy_destroy(l.p);
		return NULL;
	}
	return l.p;
}

struct policy *policy_load_locations(const char *path)
{
	static const struct field database = SEC("database", database_fields);
	static const struct field audit = SEC("audit", audit_fields);
	/* remap.decision_dir alone: the other remap keys are the nodes'. */
	static const struct field decision_dir =
		FLD("decision_dir", F_OPTPATH, remap.decision_dir);
	struct policy *p = policy_defaults(), *q;
	fwd_error_t err;
	struct ydoc *d;
	char *dir;

	if (!p || !(d = ydoc_load(path, &err)))
		return p;
	if (!(dir = dir_of(path))) {
		ydoc_destroy(d);
		return p;
	}
	if ((q = load_alone(d, dir, "database", &database))) {
		struct db_config db = p->database;
		double breaker = p->database_breaker;

		p->database = q->database;
		p->database_breaker = q->database_breaker;
		q->database = db;
		q->database_breaker = breaker;
		policy_destroy(q);
	}
	if ((q = load_alone(d, dir, "audit", &audit))) {
		struct policy_audit a = p->audit;

		p->audit = q->audit;
		q->audit = a;
		policy_destroy(q);
	}
	if ((q = load_alone(d, dir, "remap.decision_dir", &decision_dir))) {
		char *s = p->remap.decision_dir;

		p->remap.decision_dir = q->remap.decision_dir;
		q->remap.decision_dir = s;
		policy_destroy(q);
	}
	free(dir);
	ydoc_destroy(d);
	return p;
}

/* ---- printing ---------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void outf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		/* no buffer yet: only measure (NULL + 0 is undefined) */
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->cap - o->len,
			      fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->failed = true;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		size_t cap = (o->cap + (size_t)n + 1) * 2;
		char *nb = realloc(o->buf, cap);

		if (!nb) {
			o->failed = true;
			return;
		}
		o->buf = nb;
		o->cap = cap;
	}
}

/* Plain when the string cannot be mistaken for anything else. */
static bool yaml_plain_ok(const char *s)
{
	static const char *const reserved[] = {
		"true", "false", "null", "Null", "NULL", "~",  "yes",  "no",
		"on",	"off",	 "y",	 "n",	 "Yes",	 "No", "True", "False",
	};

	if (!*s || !strchr("abcdefghijklmnopqrstuvwxyz"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./",
			   *s))
		return false;
	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./@+-",
			    *c))
			return false;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(s, reserved[i]))
			return false;
	return true;
}

static void yaml_str(struct out *o, const char *s)
{
	if (yaml_plain_ok(s)) {
		outf(o, "%s", s);
		return;
	}
	outf(o, "\"");
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			outf(o, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			outf(o, "\\x%02x", *c);
		else
			outf(o, "%c", *c);
	}
	outf(o, "\"");
}

static void yaml_vec(struct out *o, char *const *v, size_t n, int depth)
{
	if (!n) {
		outf(o, " []\n");
		return;
	}
	outf(o, "\n");
	for (size_t i = 0; i < n; i++) {
		outf(o, "%*s- ", 2 * depth + 2, "");
		yaml_str(o, v[i]);
		outf(o, "\n");
	}
}

/* Shortest plain decimal that reads back exactly (never an exponent). */
static void number_text(double v, char *buf, size_t len)
{
	for (int prec = 0; prec <= 20; prec++) {
		snprintf(buf, len, "%.*f", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static void yaml_fields(struct out *o, const struct policy *p,
			const struct field *fields, int depth)
{
	char buf[64];

	for (const struct field *f = fields; f->name; f++) {
		const void *v = f->type == F_SECTION ? NULL : cat(p, f);

		outf(o, "%*s%s:", 2 * depth, "", f->name);
		switch (f->type) {
		case F_SECTION:
			outf(o, "\n");
			yaml_fields(o, p, f->sub, depth + 1);
			continue;
		case F_BOOL:
			outf(o, " %s", *(const bool *)v ? "true" : "false");
			break;
		case F_U32:
			outf(o, " %u", *(const uint32_t *)v);
			break;
		case F_NUMBER:
			number_text(*(const double *)v, buf, sizeof(buf));
			outf(o, " %s", buf);
			break;
		case F_SIZE:
			units_format_size(*(const uint64_t *)v, buf,
					  sizeof(buf));
			outf(o, " %s", buf);
			break;
		case F_RATE:
			units_format_rate(*(const double *)v, buf, sizeof(buf));
			outf(o, " %s", buf);
			break;
		case F_DURATION:
			units_format_duration(*(const double *)v, buf,
					      sizeof(buf));
			outf(o, " %s", buf);
			break;
		case F_FRACTION:
			units_format_fraction(*(const double *)v, buf,
					      sizeof(buf));
			outf(o, " %s", buf);
			break;
		case F_STRING:
		case F_OPTSTRING:
		case F_PATH:
		case F_OPTPATH:
		case F_FILE:
		case F_NAME:
			if (*(char *const *)v) {
				outf(o, " ");
				yaml_str(o, *(char *const *)v);
			} else {
				outf(o, " null");
			}
			break;
		case F_STRLIST:
		case F_KEYLIST: {
			const struct policy_strlist *sl = v;

			yaml_vec(o, sl->items, sl->count, depth);
			continue;
		}
		case F_ENDPOINTS: {
			const struct db_hosts *dh = v;

			yaml_vec(o, dh->items, dh->count, depth);
			continue;
		}
		case F_ARGV: {
			const struct policy_argv *a = v;

			yaml_vec(o, a->argv, a->argc, depth);
			continue;
		}
		case F_MODE:
			outf(o, " %s",
			     policy_mode_name(*(const enum policy_mode *)v));
			break;
		case F_FAIL:
			outf(o, " %s",
			     fail_names[*(const enum policy_fail *)v & 1]);
			break;
		case F_CONTENTION:
			outf(o, " %s",
			     contention_names
				     [*(const enum policy_contention *)v & 1]);
			break;
		case F_DRIVER:
			outf(o, " %s",
			     policy_driver_name(
				     *(const enum policy_driver *)v));
			break;
		}
		outf(o, "\n");
	}
}

char *policy_to_yaml(const struct policy *p)
{
	struct out o = {0};

	outf(&o, "# fwdalloc effective policy (defaults filled in)\n");
	if (p->path)
		outf(&o, "# source: %s\n", p->path);
	outf(&o, "# digest: %s\n", p->digest);
	yaml_fields(&o, p, policy_fields, 0);
	if (o.failed) {
		free(o.buf);
		errno = ENOMEM;
		return NULL;
	}
	return o.buf;
}

static json_t *json_vec(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *json_fields(const struct policy *p, const struct field *fields)
{
	json_t *obj = json_object();

	for (const struct field *f = fields; obj && f->name; f++) {
		const void *v = f->type == F_SECTION ? NULL : cat(p, f);
		json_t *j = NULL;

		switch (f->type) {
		case F_SECTION:
			j = json_fields(p, f->sub);
			break;
		case F_BOOL:
			j = json_boolean(*(const bool *)v);
			break;
		case F_U32:
			j = json_integer(*(const uint32_t *)v);
			break;
		case F_SIZE:
			j = json_integer((json_int_t) * (const uint64_t *)v);
			break;
		case F_NUMBER:
		case F_RATE:
		case F_DURATION:
		case F_FRACTION:
			j = json_real(*(const double *)v);
			break;
		case F_STRING:
		case F_OPTSTRING:
		case F_PATH:
		case F_OPTPATH:
		case F_FILE:
		case F_NAME:
			j = *(char *const *)v ? json_string(*(char *const *)v)
					      : json_null();
			break;
		case F_STRLIST:
		case F_KEYLIST:
			j = json_vec(((const struct policy_strlist *)v)->items,
				     ((const struct policy_strlist *)v)->count);
			break;
		case F_ENDPOINTS:
			j = json_vec(((const struct db_hosts *)v)->items,
				     ((const struct db_hosts *)v)->count);
			break;
		case F_ARGV:
			j = json_vec(((const struct policy_argv *)v)->argv,
				     ((const struct policy_argv *)v)->argc);
			break;
		case F_MODE:
			j = json_string(
				policy_mode_name(*(const enum policy_mode *)v));
			break;
		case F_FAIL:
			j = json_string(
				fail_names[*(const enum policy_fail *)v & 1]);
			break;
		case F_CONTENTION:
			j = json_string(
				contention_names[*(const enum policy_contention
							   *)v &
						 1]);
			break;
		case F_DRIVER:
			j = json_string(policy_driver_name(
				*(const enum policy_driver *)v));
			break;
		}
		if (!j || json_object_set_new(obj, f->name, j)) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}

char *policy_to_json(const struct policy *p)
{
	json_t *obj = json_fields(p, policy_fields);
	char *s = NULL;

	if (obj &&
	    !json_object_set_new(obj, "path",
				 p->path ? json_string(p->path)
					 : json_null()) &&
	    !json_object_set_new(obj, "digest", json_string(p->digest)))
		s = json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (!s)
		errno = ENOMEM;
	return s;
}
