/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clang-format off */
/*
 * Parser for Beacon's LWFS server statistics lines (DESIGN.md, "Monitor
 * inputs"):
 *   <ip> [<local time>]  [Trace]: <Meta|Read|Write> <exe|wait>: <8 counters> <ISO time>
 *   <ip> [<local time>]  [Trace]: queue length: <n> <ISO time>
 * The local time is the forwarder's clock and is not used: the trailing
 * UTC time stamps the sample.
 */
/* clang-format on */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/plausible.h"
#include "common/timeutil.h"
#include "monitor/ingest.h"

#define MAX_TOKENS 12

/* clang-format off */
static const char *const op_names[] = { "meta", "read", "write" };
static const char *const phase_names[] = { "exe", "wait" };

const char *beacon_op_name(enum beacon_op op)
{
	return op <= BEACON_WRITE ? op_names[op] : "?";
}
/* clang-format on */

const char *beacon_phase_name(enum beacon_phase ph)
{
	return ph <= BEACON_WAIT ? phase_names[ph] : "?";
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static size_t tok_len(const char *p)
{
	size_t n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '\t')
		n++;
	return n;
}

/* Quote at most 40 bytes of s in error messages. */
#define QUOTE(s, n) (int)((n) > 40 ? 40 : (n)), (s)

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned int)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static bool addr_ok(const char *s, size_t n)
{
	if (n == 0 || n >= 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '.' || c == ':' ||
		      c == '-' || c == '_'))
			return false;
	}
	return true;
}

int beacon_parse_line(const char *line, struct beacon_rec *out,
		      fwd_error_t *err)
{
	const char *tok[MAX_TOKENS];
	size_t tlen[MAX_TOKENS];
	const char *p = skip_ws(line);
	const char *q;
	size_t n, nt = 0, ncnt;
	double when;

	memset(out, 0, sizeof(*out));
	if (!*p)
		return INGEST_SKIP;

	n = tok_len(p);
	if (!addr_ok(p, n)) {
		errno = EINVAL;
		return errprintf(err,
				 "bad forwarder address '%.*s': expected an IP "
				 "address or host name",
				 QUOTE(p, n));
	}
	memcpy(out->addr, p, n);
	out->addr[n] = '\0';
	p = skip_ws(p + n);

	if (*p != '[' || !(q = strchr(p, ']')) || q == p + 1) {
		errno = EINVAL;
		return errprintf(err,
				 "expected '[<local time>]' after address '%s'",
				 out->addr);
	}
	p = skip_ws(q + 1);
	if (strncmp(p, "[Trace]:", 8) != 0) {
		errno = EINVAL;
		return errprintf(
			err,
			"expected '[Trace]:' after the local time, got "
			"'%.*s'",
			QUOTE(p, tok_len(p)));
	}
	p = skip_ws(p + 8);

	if (!strncmp(p, "queue length:", 13)) {
		out->is_queue = true;
		p += 13;
	} else {
		static const char *const ops[] = {"Meta", "Read", "Write"};
		bool found = false;

		n = tok_len(p);
		for (int i = 0; i < 3; i++) {
			if (n == strlen(ops[i]) && !strncmp(p, ops[i], n)) {
				out->op = (enum beacon_op)i;
				found = true;
			}
		}
		if (!found) {
			errno = EINVAL;
			return errprintf(err,
					 "unknown statistic '%.*s': expected "
					 "Meta, Read, Write or 'queue length'",
					 QUOTE(p, n));
		}
		p = skip_ws(p + n);
		n = tok_len(p);
		if (n == 4 && !strncmp(p, "exe:", 4)) {
			out->phase = BEACON_EXE;
		} else if (n == 5 && !strncmp(p, "wait:", 5)) {
			out->phase = BEACON_WAIT;
		} else {
			errno = EINVAL;
			return errprintf(err,
					 "unknown phase '%.*s' after %s: "
					 "expected 'exe:' or 'wait:'",
					 QUOTE(p, n), ops[out->op]);
		}
		p += n;
	}

	/* The rest: counters, then the time. */
	for (p = skip_ws(p); *p; p = skip_ws(p + n)) {
		n = tok_len(p);
		if (nt == MAX_TOKENS) {
			errno = EINVAL;
			return errprintf(err, "too many fields after '%s'",
					 out->is_queue ? "queue length:"
						       : "exe:/wait:");
		}
		tok[nt] = p;
		tlen[nt++] = n;
	}
	/* ISO 8601 UTC to the second, a fraction truncated. */
	if (nt == 0 || fwd_time_parse_iso(tok[nt - 1], tlen[nt - 1],
					  FWD_TIME_STRICT, &when) < 0) {
		errno = EINVAL;
		if (nt == 0)
			return errprintf(err, "missing values and ISO-8601 "
					      "UTC time");
		return errprintf(err,
				 "bad time '%.*s': expected ISO-8601 UTC such "
				 "as 2016-08-27T10:14:44Z",
				 QUOTE(tok[nt - 1], tlen[nt - 1]));
	}
	out->ts = (int64_t)when;
	ncnt = nt - 1;
	if (out->is_queue && ncnt != 1) {
		errno = EINVAL;
		return errprintf(
			err, "expected one queue length value, got %zu", ncnt);
	}
	if (!out->is_queue && ncnt != BEACON_BUCKETS) {
		errno = EINVAL;
		return errprintf(err, "expected %d histogram counters, got %zu",
				 BEACON_BUCKETS, ncnt);
	}
	for (size_t i = 0; i < ncnt; i++) {
		uint64_t v;

		if (parse_u64(tok[i], tlen[i], &v) < 0) {
			errno = EINVAL;
			if (out->is_queue)
				return errprintf(err,
						 "queue length '%.*s' is not a "
						 "non-negative integer",
						 QUOTE(tok[i], tlen[i]));
			return errprintf(err,
					 "counter %zu '%.*s' is not a "
					 "non-negative integer",
					 i + 1, QUOTE(tok[i], tlen[i]));
		}
		if (out->is_queue)
			out->queue_len = v;
		else
			out->v[i] = v;
	}
	return INGEST_OK;
}

int beacon_check(const struct beacon_rec *r, int64_t now, fwd_error_t *err)
{
	if (fwd_plaus_time("time", r->ts, now, err) < 0)
		return -1;
	if (r->is_queue)
		return 0; /* bounded by ingest.max_queue_len in the store */
	for (int i = 0; i < BEACON_BUCKETS; i++)
		if (fwd_plaus_counter("counter", r->v[i], err) < 0)
			return -1;
	return 0;
}
