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

	while (*p && !strchr(stop, *p)) {
		char c = *p;

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
		return 0;
	case V_INT:
		if (v->i < 0)
			break;
		*out = (uint64_t)v->i;
		return 0;
	case V_FLOAT:
		if (v->f < 0 || v->f >= 18446744073709551616.0 ||
		    floor(v->f) != v->f)
			break;
		*out = (uint64_t)v->f;
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

int influx_parse_line(const char *line, int64_t now_ns, struct influx_rec *out,
		      fwd_error_t *err)
{
	char meas[ELEM_MAX], key[ELEM_MAX], val[ELEM_MAX];
	const char *want_tag;
	const char *p = line;
	bool have_name = false, any = false;
	int n;

	memset(out, 0, sizeof(*out));
	while (*p == ' ' || *p == '\t')
		p++;
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
	if (!strcmp(meas, "fwd")) {
		out->kind = INGEST_FWD;
		want_tag = "node";
	} else if (!strcmp(meas, "ost")) {
		out->kind = INGEST_OST;
		want_tag = "target";
	} else if (!strcmp(meas, "mdt")) {
		out->kind = INGEST_MDT;
		want_tag = "target";
	} else {
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
	if (!have_name) {
		errno = EINVAL;
		return errprintf(err, "measurement '%s' needs a %s= tag", meas,
				 want_tag);
	}

	for (;;) {
		struct value v = {0};

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
		for (int i = 0; i < INFLUX_N_COUNTERS; i++) {
			if (strcmp(key, field_names[i]) != 0)
				continue;
			if (as_counter(&v, key, &out->counter[i], err) < 0)
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
		    *t == '-') {
			errno = EINVAL;
			return errprintf(err,
					 "bad timestamp '%.*s': expected "
					 "non-negative nanoseconds since the "
					 "epoch",
					 (int)(p - t > 40 ? 40 : p - t), t);
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
		out->ts_ns = ts;
	} else {
		out->ts_ns = now_ns;
	}
	return any ? INGEST_OK : INGEST_SKIP;
}
