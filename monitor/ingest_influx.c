/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parser for InfluxDB line protocol (what Telegraf and LDMS emit):
 *   measurement[,tag_key=tag_value...] field_key=field_value[,...] [timestamp]
 * Escaping (per the protocol): in the measurement, a backslash escapes a
 * comma or space; in tag keys, tag values and field keys it escapes a
 * comma, an equals sign or a space; string field values are double-quoted
 * with \" and \\ inside.  A backslash before any other character is
 * literal.  Field values: float (1.5, 1e3, 7), integer (7i), unsigned
 * (7u), boolean (t/true/True/TRUE, f/false/...), string ("...").
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/plausible.h"
#include "common/timeutil.h"
#include "monitor/ingest.h"

/* clang-format off */
static const char *const field_names[INFLUX_N_COUNTERS] = {
	"read_bytes", "write_bytes", "read_ops", "write_ops", "md_ops",
};
/* clang-format on */

const char *influx_field_name(enum influx_field f)
{
	return f < INFLUX_N_COUNTERS ? field_names[f] : "?";
}

#define ELEM_MAX 256

/*
 * Copy an element up to an unescaped character of `stop` (or the end)
 * into buf, removing backslashes before characters of `esc`.  Returns the
 * element's length or -1 when it does not fit.
 */
static int read_elem(const char **pp, const char *stop, const char *esc,
		     char *buf, size_t cap)
{
	const char *p = *pp;
	size_t n = 0;

	while (*p) {
		char c = *p;

		/* every stop character is one of these */
		if ((c == '=' || c == ',' || c == ' ' || c == '\t') &&
		    strchr(stop, c))
			break;
		if (c == '\\' && p[1] && strchr(esc, p[1]))
			c = *++p;
		if (n + 1 >= cap)
			return -1;
		buf[n++] = c;
		p++;
	}
	buf[n] = '\0';
	*pp = p;
	return (int)n;
}

enum vtype { V_FLOAT, V_INT, V_UINT, V_BOOL, V_STRING };

struct value {
	enum vtype type;
	double f;
	long long i;
	unsigned long long u;
};

static bool is_bool(const char *s)
{
	static const char *const b[] = {"t", "T", "true",  "True",  "TRUE",
					"f", "F", "false", "False", "FALSE"};

	if (*s != 't' && *s != 'T' && *s != 'f' && *s != 'F')
		return false; /* a number: the usual case */
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		if (!strcmp(s, b[i]))
			return true;
	return false;
}

static int parse_value(const char **pp, struct value *v, const char *key,
		       fwd_error_t *err)
{
	const char *p = *pp;
	char buf[64];
	size_t n = 0;
	char *end;

	if (*p == '"') {
		/* Skip a quoted string (its contents are not kept). */
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
		if (*p != '"') {
			errno = EINVAL;
			return errprintf(
				err, "field '%s': unterminated string value",
				key);
		}
		*pp = p + 1;
		v->type = V_STRING;
		return 0;
	}
	while (p[n] && p[n] != ',' && p[n] != ' ' && p[n] != '\t') {
		if (n + 1 >= sizeof(buf)) {
			errno = EINVAL;
			return errprintf(err, "field '%s': value too long",
					 key);
		}
		buf[n] = p[n];
		n++;
	}
	buf[n] = '\0';
	*pp = p + n;
	if (n == 0) {
		errno = EINVAL;
		return errprintf(err, "field '%s': missing value", key);
	}
	if (is_bool(buf)) {
		v->type = V_BOOL;
		return 0;
	}
	errno = 0;
	if (buf[n - 1] == 'i' || buf[n - 1] == 'u') {
		bool u = buf[n - 1] == 'u';

		buf[n - 1] = '\0';
		if (n < 2 || (u && buf[0] == '-') ||
		    strspn(buf + (buf[0] == '-'), "0123456789") !=
			    n - 1 - (buf[0] == '-') ||
		    n - 1 - (buf[0] == '-') == 0)
			goto bad;
		if (u)
			v->u = strtoull(buf, &end, 10);
		else
			v->i = strtoll(buf, &end, 10);
		if (errno == ERANGE)
			goto bad;
		v->type = u ? V_UINT : V_INT;
		return 0;
	}
	if (strspn(buf, "0123456789+-.eE") != n)
		goto bad;
	v->f = strtod(buf, &end);
	if (*end || errno == ERANGE || !isfinite(v->f))
		goto bad;
	v->type = V_FLOAT;
	return 0;
bad:
	errno = EINVAL;
	return errprintf(err,
			 "field '%s': bad value '%.40s' (expected a float, "
			 "an integer such as 12i or 12u, a boolean or a "
			 "quoted string)",
			 key, *pp - n);
}

static int as_counter(const struct value *v, const char *key, uint64_t *out,
		      fwd_error_t *err)
{
	switch (v->type) {
	case V_UINT:
		*out = v->u;
		return fwd_plaus_counter(key, *out, err);
	case V_INT:
		if (v->i < 0)
			break;
		*out = (uint64_t)v->i;
		return 0;
	case V_FLOAT:
		if (v->f < 0 || floor(v->f) != v->f)
			break;
		if (fwd_plaus_dtou64(v->f, out) < 0) {
			errprintf(err,
				  "field '%s': %.4g is over 2^63-1 (an unset "
				  "or wrapped counter)",
				  key, v->f);
			return fwd_plaus_fail(FWD_REASON_VALUE);
		}
		return 0;
	default:
		break;
	}
	errno = EINVAL;
	return errprintf(err,
			 "field '%s': a cumulative counter must be a "
			 "non-negative integer",
			 key);
}

static int as_gauge(const struct value *v, const char *key, double *out,
		    fwd_error_t *err)
{
	switch (v->type) {
	case V_UINT:
		*out = (double)v->u;
		return 0;
	case V_INT:
		*out = (double)v->i;
		break;
	case V_FLOAT:
		*out = v->f;
		break;
	default:
		errno = EINVAL;
		return errprintf(err, "field '%s': expected a number", key);
	}
	if (*out < 0) {
		errno = EINVAL;
		return errprintf(err, "field '%s': negative value", key);
	}
	return 0;
}

/* ---- Telegraf's Lustre plugins ---- */

enum meas {
	M_FWD,
	M_OST,
	M_MDT,
	M_L2,	    /* inputs.lustre2 */
	M_LCTL_OST, /* inputs.lustre2_lctl */
	M_LCTL_MDT,
};

/* MDT md_stats operations (Telegraf lustre2 README, "md_stats"). */
static const char *const md_ops[] = {
	"open",	   "close",   "mknod",		"link",
	"unlink",  "mkdir",   "rmdir",		"rename",
	"getattr", "setattr", "getxattr",	"setxattr",
	"statfs",  "sync",    "samedir_rename", "crossdir_rename",
};

static bool is_md_op(const char *k)
{
	for (size_t i = 0; i < sizeof(md_ops) / sizeof(md_ops[0]); i++)
		if (!strcmp(k, md_ops[i]))
			return true;
	return false;
}

/*
 * inputs.lustre2 job_stats fields and the Lustre operation each comes
 * from (Telegraf plugins/inputs/lustre2: wanted_ost_jobstats_fields,
 * wanted_mdt_jobstats_fields); other "jobstats_<op>" fields are the
 * samples of <op>.
 */
static const struct {
	const char *field, *op;
	unsigned what;
} l2_js[] = {
	{"jobstats_read_calls", "read_bytes", JOBSTATS_HAS_SAMPLES},
	{"jobstats_read_min_size", "read_bytes", JOBSTATS_HAS_MIN},
	{"jobstats_read_max_size", "read_bytes", JOBSTATS_HAS_MAX},
	{"jobstats_read_bytes", "read_bytes", JOBSTATS_HAS_SUM},
	{"jobstats_write_calls", "write_bytes", JOBSTATS_HAS_SAMPLES},
	{"jobstats_write_min_size", "write_bytes", JOBSTATS_HAS_MIN},
	{"jobstats_write_max_size", "write_bytes", JOBSTATS_HAS_MAX},
	{"jobstats_write_bytes", "write_bytes", JOBSTATS_HAS_SUM},
	{"jobstats_ost_getattr", "getattr", JOBSTATS_HAS_SAMPLES},
	{"jobstats_ost_setattr", "setattr", JOBSTATS_HAS_SAMPLES},
	{"jobstats_ost_sync", "sync", JOBSTATS_HAS_SAMPLES},
	{"jobstats_ost_statfs", "statfs", JOBSTATS_HAS_SAMPLES},
};

static struct jobstats_op *js_op(struct jobstats_rec *js, const char *name)
{
	struct jobstats_op *op;

	for (size_t i = 0; i < js->n_ops; i++)
		if (!strcmp(js->ops[i].name, name))
			return &js->ops[i];
	if (js->n_ops >= JOBSTATS_MAX_OPS ||
	    strlen(name) >= sizeof(js->ops[0].name))
		return NULL;
	op = &js->ops[js->n_ops++];
	memset(op, 0, sizeof(*op));
	snprintf(op->name, sizeof(op->name), "%s", name);
	return op;
}

static void js_set(struct jobstats_op *op, unsigned what, uint64_t v)
{
	op->has |= what;
	if (what == JOBSTATS_HAS_SAMPLES)
		op->samples = v;
	else if (what == JOBSTATS_HAS_MIN)
		op->min = v;
	else if (what == JOBSTATS_HAS_MAX)
		op->max = v;
	else
		op->sum = v;
}

/* "<prefix><op>_<samples|min|max|sum|sumsq>": the op and which value
 * (0 for sumsq, which is not kept); false if it is not of that form. */
static bool lctl_field(const char *key, const char *prefix, char *op,
		       size_t cap, unsigned *what)
{
	static const struct {
		const char *sfx;
		unsigned what;
	} sfx[] = {
		{"_samples", JOBSTATS_HAS_SAMPLES}, {"_sumsq", 0},
		{"_min", JOBSTATS_HAS_MIN},	    {"_max", JOBSTATS_HAS_MAX},
		{"_sum", JOBSTATS_HAS_SUM},
	};
	size_t pl = strlen(prefix), kl = strlen(key);

	if (strncmp(key, prefix, pl) != 0)
		return false;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t sl = strlen(sfx[i].sfx);

		if (kl > pl + sl && !strcmp(key + kl - sl, sfx[i].sfx)) {
			if (kl - pl - sl >= cap)
				return false;
			memcpy(op, key + pl, kl - pl - sl);
			op[kl - pl - sl] = '\0';
			*what = sfx[i].what;
			return true;
		}
	}
	return false;
}

int jobstats_merge(struct jobstats_rec *into, const struct jobstats_rec *r)
{
	if (into->kind != r->kind || into->ts != r->ts ||
	    strcmp(into->target, r->target) != 0 ||
	    strcmp(into->job_id, r->job_id) != 0)
		return 0;
	for (size_t i = 0; i < r->n_ops; i++) {
		const struct jobstats_op *o = &r->ops[i];
		struct jobstats_op *d = js_op(into, o->name);

		if (!d)
			continue;
		if (o->unit[0])
			snprintf(d->unit, sizeof(d->unit), "%s", o->unit);
		if (o->has & JOBSTATS_HAS_SAMPLES)
			js_set(d, JOBSTATS_HAS_SAMPLES, o->samples);
		if (o->has & JOBSTATS_HAS_MIN)
			js_set(d, JOBSTATS_HAS_MIN, o->min);
		if (o->has & JOBSTATS_HAS_MAX)
			js_set(d, JOBSTATS_HAS_MAX, o->max);
		if (o->has & JOBSTATS_HAS_SUM)
			js_set(d, JOBSTATS_HAS_SUM, o->sum);
	}
	return 1;
}

/* Slurm's numeric id at the start of a job_stats id: "12345", or
 * "12345.<suffix>" / "12345:<suffix>". */
static void slurm_id_of(struct jobstats_rec *r)
{
	size_t n = strspn(r->job_id, "0123456789");
	char digits[24];

	r->has_slurm_id = false;
	if (n == 0 || n >= sizeof(digits) ||
	    (r->job_id[n] && r->job_id[n] != '.' && r->job_id[n] != ':'))
		return;
	memcpy(digits, r->job_id, n);
	digits[n] = '\0';
	errno = 0;
	r->slurm_id = strtoull(digits, NULL, 10);
	r->has_slurm_id = errno == 0;
}

static enum ingest_kind kind_of_name(const char *name, bool *known)
{
	*known = true;
	if (strstr(name, "OST"))
		return INGEST_OST;
	if (strstr(name, "MDT"))
		return INGEST_MDT;
	*known = false;
	return INGEST_OST;
}

/* Names are stored (utf8mb4 columns) and shown: valid UTF-8 only. */
static int utf8_elem(const char *what, const char *v, fwd_error_t *err)
{
	size_t at;

	if (fwd_utf8_valid(v, strlen(v), &at))
		return 0;
	errprintf(err, "%s is not valid UTF-8 (byte 0x%02x at offset %zu)",
		  what, (unsigned char)v[at], at);
	return fwd_plaus_fail(FWD_REASON_UTF8);
}

int influx_parse(const char *line, const struct influx_opts *o,
		 struct influx_rec *out, struct jobstats_rec *js,
		 fwd_error_t *err)
{
	char meas[ELEM_MAX], key[ELEM_MAX], val[ELEM_MAX];
	char jobid[ELEM_MAX] = "", unit[16] = "";
	const char *want_tag = NULL;
	const char *p = line;
	bool have_name = false, any = false, has_client = false,
	     has_brw = false, kind_known = true;
	bool any_js = false, md_any = false, md_data = false, md_lat = false;
	uint64_t md_sum = 0;
	enum meas m;
	int n;

	memset(out, 0, sizeof(*out));
	while (*p == ' ' || *p == '\t')
		p++;
	if (p[0] == '>' && p[1] == ' ') /* telegraf --test */
		p += 2;
	if (!*p || *p == '#')
		return INGEST_SKIP;

	n = read_elem(&p, ", \t", ", ", meas, sizeof(meas));
	if (n < 0) {
		errno = EINVAL;
		return errprintf(err, "measurement name too long");
	}
	if (n == 0) {
		errno = EINVAL;
		return errprintf(err, "missing measurement name");
	}
	if (utf8_elem("the measurement", meas, err) < 0)
		return -1;
	if (!strcmp(meas, "fwd")) {
		m = M_FWD;
		out->kind = INGEST_FWD;
		want_tag = "node";
	} else if (!strcmp(meas, "ost")) {
		m = M_OST;
		out->kind = INGEST_OST;
		want_tag = "target";
	} else if (!strcmp(meas, "mdt")) {
		m = M_MDT;
		out->kind = INGEST_MDT;
		want_tag = "target";
	} else if (!strcmp(meas, "lustre2")) {
		m = M_L2;
		want_tag = "name";
	} else if (!strcmp(meas, "lustre2_lctl_ost")) {
		m = M_LCTL_OST;
		out->kind = INGEST_OST;
		want_tag = "volume";
	} else if (!strcmp(meas, "lustre2_lctl_mdt")) {
		m = M_LCTL_MDT;
		out->kind = INGEST_MDT;
		want_tag = "volume";
	} else {
		snprintf(out->ignored, sizeof(out->ignored), "%.60s", meas);
		return INGEST_SKIP;
	}

	while (*p == ',') {
		p++;
		n = read_elem(&p, "=, \t", ",= ", key, sizeof(key));
		if (n <= 0 || *p != '=') {
			errno = EINVAL;
			return errprintf(err,
					 n < 0 ? "tag key too long"
					       : "tag '%s' without '=value'",
					 key);
		}
		p++;
		n = read_elem(&p, ", \t", ",= ", val, sizeof(val));
		if (n <= 0) {
			errno = EINVAL;
			return errprintf(err,
					 n < 0 ? "tag '%s': value too long"
					       : "tag '%s': empty value",
					 key);
		}
		if (utf8_elem("a tag key", key, err) < 0)
			return -1;
		if (!fwd_utf8_valid(val, (size_t)n, NULL)) {
			char what[ELEM_MAX + 16];

			snprintf(what, sizeof(what), "tag %s", key);
			return utf8_elem(what, val, err);
		}
		if (!strcmp(key, want_tag)) {
			if ((size_t)n >= sizeof(out->name)) {
				errno = EINVAL;
				return errprintf(err,
						 "tag %s: name longer than %zu "
						 "bytes",
						 key, sizeof(out->name) - 1);
			}
			memcpy(out->name, val, (size_t)n + 1);
			have_name = true;
		} else if (m >= M_L2 && !strcmp(key, "jobid")) {
			memcpy(jobid, val, (size_t)n + 1);
		} else if (m == M_L2 && !strcmp(key, "client")) {
			has_client = true;
		} else if (m == M_L2 && !strcmp(key, "brw_section")) {
			has_brw = true;
		} else if (m >= M_LCTL_OST && !strcmp(key, "unit")) {
			snprintf(unit, sizeof(unit), "%.15s", val);
		}
	}
	if (*p != ' ' && *p != '\t') {
		errno = EINVAL;
		return errprintf(err, "missing fields after '%s'", meas);
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p) {
		errno = EINVAL;
		return errprintf(err, "missing fields after '%s'", meas);
	}
	if (!have_name && m < M_L2) {
		errno = EINVAL;
		return errprintf(err, "measurement '%s' needs a %s= tag", meas,
				 want_tag);
	}
	if (m == M_L2 && have_name)
		out->kind = kind_of_name(out->name, &kind_known);
	if (jobid[0] && js) {
		memset(js, 0, sizeof(*js));
		js->kind = out->kind;
		snprintf(js->target, sizeof(js->target), "%s", out->name);
		snprintf(js->job_id, sizeof(js->job_id), "%s", jobid);
		slurm_id_of(js);
	}

	for (;;) {
		struct value v = {0};
		uint64_t u = 0;
		char op[32];
		unsigned what = 0;

		n = read_elem(&p, "=, \t", ",= ", key, sizeof(key));
		if (n <= 0 || *p != '=') {
			errno = EINVAL;
			if (n < 0)
				return errprintf(err, "field key too long");
			return errprintf(err,
					 n == 0 ? "empty field key"
						: "field '%s' without '=value'",
					 key);
		}
		p++;
		if (parse_value(&p, &v, key, err) < 0)
			return -1;
		if (m < M_L2) {
			for (int i = 0; i < INFLUX_N_COUNTERS; i++) {
				if (strcmp(key, field_names[i]) != 0)
					continue;
				if (as_counter(&v, key, &out->counter[i], err) <
				    0)
					return -1;
				out->has[i] = true;
				any = true;
			}
			if (!strcmp(key, "queue_len")) {
				if (as_gauge(&v, key, &out->queue_len, err) < 0)
					return -1;
				out->has_queue = true;
				any = true;
			}
		} else if (!have_name || has_client || has_brw) {
			/* not used: said below */
		} else if (jobid[0]) {
			if (m == M_L2 && !strncmp(key, "jobstats_", 9)) {
				const char *opn = key + 9;

				what = JOBSTATS_HAS_SAMPLES;
				for (size_t i = 0;
				     i < sizeof(l2_js) / sizeof(l2_js[0]); i++)
					if (!strcmp(key, l2_js[i].field)) {
						opn = l2_js[i].op;
						what = l2_js[i].what;
					}
				snprintf(op, sizeof(op), "%.31s", opn);
			} else if (m != M_L2 && lctl_field(key, "jobstats_", op,
							   sizeof(op), &what)) {
				if (!what)
					goto next; /* sumsq */
			} else {
				goto next;
			}
			if (as_counter(&v, key, &u, err) < 0)
				return -1;
			if (js) {
				struct jobstats_op *jo = js_op(js, op);

				if (!jo) {
					errno = EINVAL;
					return errprintf(err,
							 "job %.40s: more than "
							 "%d operations",
							 jobid,
							 JOBSTATS_MAX_OPS);
				}
				if (unit[0])
					snprintf(jo->unit, sizeof(jo->unit),
						 "%s", unit);
				else if (!jo->unit[0] && m == M_L2 &&
					 (what &
					  (JOBSTATS_HAS_MIN | JOBSTATS_HAS_MAX |
					   JOBSTATS_HAS_SUM)))
					snprintf(jo->unit, sizeof(jo->unit),
						 "bytes");
				js_set(jo, what, u);
			}
			any_js = true;
		} else if (m == M_L2 || m == M_LCTL_OST) {
			int f = -1;

			if (m == M_L2) {
				if (!strcmp(key, "read_bytes"))
					f = INFLUX_READ_BYTES;
				else if (!strcmp(key, "write_bytes"))
					f = INFLUX_WRITE_BYTES;
				else if (!strcmp(key, "read_calls"))
					f = INFLUX_READ_OPS;
				else if (!strcmp(key, "write_calls"))
					f = INFLUX_WRITE_OPS;
			} else if (lctl_field(key, "stats_", op, sizeof(op),
					      &what) &&
				   (what == JOBSTATS_HAS_SAMPLES ||
				    what == JOBSTATS_HAS_SUM)) {
				bool s = what == JOBSTATS_HAS_SAMPLES;

				if (!strcmp(op, "read_bytes"))
					f = s ? INFLUX_READ_OPS
					      : INFLUX_READ_BYTES;
				else if (!strcmp(op, "write_bytes"))
					f = s ? INFLUX_WRITE_OPS
					      : INFLUX_WRITE_BYTES;
			}
			if (f >= 0) {
				if (as_counter(&v, key, &out->counter[f], err) <
				    0)
					return -1;
				out->has[f] = true;
				any = true;
			} else if (m == M_L2 && out->kind == INGEST_MDT &&
				   is_md_op(key)) {
				if (as_counter(&v, key, &u, err) < 0)
					return -1;
				md_sum += u;
				md_any = true;
			}
		} else if (m == M_LCTL_MDT &&
			   lctl_field(key, "stats_", op, sizeof(op), &what)) {
			/* md_stats: the samples of metadata operations;
			 * min/max/sum are latencies (usecs) or 1/1/samples
			 * (reqs), Data-on-MDT I/O is not metadata */
			if (what != JOBSTATS_HAS_SAMPLES) {
				md_lat = true;
			} else if (!is_md_op(op)) {
				md_data = true;
			} else {
				if (as_counter(&v, key, &u, err) < 0)
					return -1;
				md_sum += u;
				md_any = true;
				out->md_part = true;
			}
		}
	next:
		if (*p && *p != ',' && *p != ' ' && *p != '\t') {
			errno = EINVAL;
			return errprintf(
				err,
				"field '%s': unexpected '%c' after the "
				"value",
				key, *p);
		}
		if (*p != ',')
			break;
		p++;
	}
	if (md_any) {
		out->counter[INFLUX_MD_OPS] = md_sum;
		out->has[INFLUX_MD_OPS] = true;
		any = true;
	}

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		const char *t = p;
		char *end;
		long long ts;

		while (*p && *p != ' ' && *p != '\t')
			p++;
		errno = 0;
		ts = strtoll(t, &end, 10);
		if (end != p || t == p || errno == ERANGE || *t == '+' ||
		    *t == '-' ||
		    ts > INT64_MAX / (o->unit_ns ? o->unit_ns : 1)) {
			errno = EINVAL;
			return errprintf(err,
					 "bad timestamp '%.*s': expected "
					 "non-negative %s since the epoch",
					 (int)(p - t > 40 ? 40 : p - t), t,
					 o->unit_ns == 1000000000 ? "seconds"
					 : o->unit_ns == 1000000
						 ? "milliseconds"
					 : o->unit_ns == 1000 ? "microseconds"
							      : "nanoseconds");
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p) {
			errno = EINVAL;
			return errprintf(err,
					 "unexpected text after the timestamp: "
					 "'%.40s'",
					 p);
		}
		out->ts_ns = ts * (o->unit_ns ? o->unit_ns : 1);
		if (o->check_time &&
		    fwd_plaus_time("timestamp", out->ts_ns / 1000000000,
				   o->now_ns / 1000000000, NULL) < 0) {
			char when[40];

			fwd_time_format((double)(out->ts_ns / 1000000000), when,
					sizeof(when));
			errprintf(err,
				  "timestamp %lld is %s: before 2000 or "
				  "in the future (wrong --precision?)",
				  ts, when);
			return fwd_plaus_fail(FWD_REASON_TIME);
		}
	} else {
		out->ts_ns = o->now_ns;
	}

	if (m < M_L2)
		return any ? INGEST_OK : INGEST_SKIP;
	/* lustre2*: say what was not used */
	if (!have_name) {
		snprintf(out->ignored, sizeof(out->ignored),
			 "%.20s without %s=", meas, want_tag);
		return INGEST_SKIP;
	}
	if (has_client || has_brw) {
		snprintf(out->ignored, sizeof(out->ignored), "%.20s %s", meas,
			 has_client ? "per-client export stats" : "brw_stats");
		return INGEST_SKIP;
	}
	if (jobid[0]) {
		if (!any_js) {
			snprintf(out->ignored, sizeof(out->ignored),
				 "%.20s job_stats without jobstats_ fields",
				 meas);
			return INGEST_SKIP;
		}
		if (!js) {
			snprintf(out->ignored, sizeof(out->ignored),
				 "%.20s job_stats", meas);
			return INGEST_SKIP;
		}
		js->ts = out->ts_ns / 1000000000;
		return INGEST_JOBSTATS;
	}
	if (!kind_known) {
		snprintf(out->ignored, sizeof(out->ignored),
			 "%.20s target without OST or MDT in its name", meas);
		return INGEST_SKIP;
	}
	if (!any) {
		snprintf(out->ignored, sizeof(out->ignored), "%.20s %s", meas,
			 md_lat	   ? "md_stats min/max/sum (latencies)"
			 : md_data ? "md_stats operations other than "
				     "metadata"
				   : "fields other than the I/O counters");
		return INGEST_SKIP;
	}
	return INGEST_OK;
}

int influx_merge_md(struct influx_rec *into, const struct influx_rec *r)
{
	if (!into->md_part || !r->md_part || into->kind != r->kind ||
	    into->ts_ns != r->ts_ns || strcmp(into->name, r->name) != 0)
		return 0;
	into->counter[INFLUX_MD_OPS] += r->counter[INFLUX_MD_OPS];
	return 1;
}

int influx_parse_line(const char *line, int64_t now_ns, struct influx_rec *out,
		      fwd_error_t *err)
{
	struct influx_opts o = {.now_ns = now_ns, .unit_ns = 1};

	return influx_parse(line, &o, out, NULL, err);
}
