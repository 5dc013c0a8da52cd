/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profile keys and predictions: pure functions, no database.  The rules
 * are in profile.h; the median rather than the latest run, because a
 * single run's figures are noisy (interference, fail-slow components)
 * and "latest run only" predicts poorly.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/sha256.h"
#include "profiler/profile.h"

uint32_t profile_bucket(uint32_t nodes, uint32_t base)
{
	uint64_t b = 1;

	if (nodes == 0)
		return 0;
	if (base < 2)
		base = 2;
	while (b * base <= nodes)
		b *= base;
	return (uint32_t)b;
}

/* The separators and the escape itself are encoded (SCHEMA.md), and
 * control characters so keys print on one line. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c != 0x7f && c != ';' && c != '=' && c != '%';
}

/* Append "name=value" (value percent-encoded); -1 when out of room. */
static int put_pair(char *buf, size_t len, size_t *pos, const char *name,
		    const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t p = *pos;
	int n;

	n = snprintf(buf + p, len - p, "%s%s=", p ? ";" : "", name);
	if (n < 0 || (size_t)n >= len - p)
		return -1;
	p += (size_t)n;
	for (const unsigned char *v =
		     (const unsigned char *)(value ? value : "");
	     *v; v++) {
		if (plain(*v)) {
			if (p + 1 >= len)
				return -1;
			buf[p++] = (char)*v;
		} else {
			if (p + 3 >= len)
				return -1;
			buf[p++] = '%';
			buf[p++] = hex[*v >> 4];
			buf[p++] = hex[*v & 15];
		}
	}
	buf[p] = '\0';
	*pos = p;
	return 0;
}

/* The cut key: a prefix of full that splits neither a %XX escape nor a
 * UTF-8 character, then "%~" and the SHA-256 of all of full (hex).  "%~"
 * never occurs in a key that was not cut ('%' is always encoded as %25). */
#define KEY_DIGEST_SUFFIX (2 + 64)

static void cut_key(const char *full, char *out)
{
	size_t cut = PROFILE_KEY_MAX - KEY_DIGEST_SUFFIX;
	char hex[65];

	if (cut >= 1 && full[cut - 1] == '%')
		cut -= 1;
	else if (cut >= 2 && full[cut - 2] == '%')
		cut -= 2;
	while (cut > 0 && ((unsigned char)full[cut] & 0xc0) == 0x80)
		cut--;
	sha256_hex(full, strlen(full), hex);
	memcpy(out, full, cut);
	snprintf(out + cut, KEY_DIGEST_SUFFIX + 1, "%%~%s", hex);
}

int profile_key(const struct policy *p, const struct profile_job *job,
		char *buf, size_t len, fwd_error_t *err)
{
	size_t pos = 0, room = 1, n;
	char *full;
	int rv = -1;

	if (len == 0) {
		errno = ENOSPC;
		return errprintf(err, "profile key: no room");
	}
	buf[0] = '\0';
	/* room for the whole key, every byte of every value encoded */
	room += 32 * p->history.key.count;
	room += 3 * (strlen(job->user ? job->user : "") +
		     strlen(job->account ? job->account : "") +
		     strlen(job->name ? job->name : "") +
		     strlen(job->partition ? job->partition : ""));
	if (!(full = malloc(room))) {
		errno = ENOMEM;
		return errprintf(err, "profile key: out of memory");
	}
	full[0] = '\0';
	for (size_t i = 0; i < p->history.key.count; i++) {
		const char *f = p->history.key.items[i];
		const char *v;
		char num[16];

		if (!strcmp(f, "user")) {
			v = job->user;
		} else if (!strcmp(f, "account")) {
			v = job->account;
		} else if (!strcmp(f, "name")) {
			v = job->name;
		} else if (!strcmp(f, "partition")) {
			v = job->partition;
		} else if (!strcmp(f, "node_bucket")) {
			snprintf(num, sizeof(num), "%" PRIu32,
				 profile_bucket(job->nodes,
						p->history.bucket_base));
			v = num;
		} else {
			errno = EINVAL;
			errprintf(err,
				  "history.key: unknown field "
				  "\"%s\" (allowed: user, account, "
				  "name, partition, node_bucket)",
				  f);
			goto out;
		}
		if (put_pair(full, room, &pos, f, v)) {
			errno = ENOSPC; /* not reached: room is enough */
			errprintf(err, "profile key: no room");
			goto out;
		}
	}
	n = pos > PROFILE_KEY_MAX ? PROFILE_KEY_MAX : pos;
	if (n >= len) {
		errno = ENOSPC;
		errprintf(err, "profile key longer than %zu bytes", len - 1);
		goto out;
	}
	if (pos > PROFILE_KEY_MAX)
		cut_key(full, buf);
	else
		memcpy(buf, full, pos + 1);
	rv = 0;
out:
	free(full);
	return rv;
}

void profile_skips_add(struct profile_skips *s, uint64_t job_id,
		       const char *why)
{
	s->count++;
	if (s->n == PROFILE_SKIPS_KEPT)
		return;
	s->v[s->n].job_id = job_id;
	snprintf(s->v[s->n].why, sizeof(s->v[s->n].why), "%s",
		 why && *why ? why : "unknown error");
	s->n++;
}

/* Median of v[0..n) (sorted in place); 0 for n == 0. */
static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), fwd_cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Most recent first. */
static int cmp_recent(const void *a, const void *b)
{
	const struct profile_run *x = *(const struct profile_run *const *)a;
	const struct profile_run *y = *(const struct profile_run *const *)b;

	return x->end_time > y->end_time ? -1 : x->end_time < y->end_time;
}

static int bandwidth_by_forwarders(const struct profile_run *const *use,
				   size_t n, struct profile *out)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -1;
	out->n_bw = 0;
	/* k = 0: the runs decided direct (no forwarder at all) */
	{
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (use[i]->direct && use[i]->forwarders == 0 &&
			    use[i]->achieved_bps > 0)
				v[m++] = use[i]->achieved_bps;
		if (m) {
			out->bw[0].k = 0;
			out->bw[0].bps = median(v, m); /* sorts v */
			out->bw[0].runs = (uint32_t)m;
			out->bw[0].spread_bps = v[m - 1] - v[0];
			out->bw[0].private_fwd = false;
			out->n_bw = 1;
		}
	}
	/* k values ascending; each k's median over its private runs, else
	 * over its shared ones (the simulator's rule, sim/sim_learn.c) */
	for (uint32_t last = 0;;) {
		uint32_t k = 0;
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			uint32_t f = use[i]->forwarders;

			if (f > last && use[i]->achieved_bps > 0 &&
			    (k == 0 || f < k))
				k = f;
		}
		if (k == 0 || out->n_bw == PROFILE_MAX_BW)
			break;
		bool priv = false;

		for (size_t i = 0; i < n; i++)
			priv |= use[i]->forwarders == k &&
				use[i]->achieved_bps > 0 && use[i]->private_fwd;
		for (size_t i = 0; i < n; i++)
			if (use[i]->forwarders == k &&
			    use[i]->achieved_bps > 0 &&
			    use[i]->private_fwd == priv)
				v[m++] = use[i]->achieved_bps;
		out->bw[out->n_bw].k = k;
		out->bw[out->n_bw].bps = median(v, m); /* sorts v */
		out->bw[out->n_bw].runs = (uint32_t)m;
		out->bw[out->n_bw].spread_bps = m ? v[m - 1] - v[0] : 0;
		out->bw[out->n_bw].private_fwd = priv;
		out->n_bw++;
		last = k;
	}
	free(v);
	return 0;
}

int profile_predict(const struct profile_run *runs, size_t n_runs,
		    uint32_t nodes, uint32_t k, double max_age, int64_t now,
		    struct profile *out)
{
	const struct profile_run **use = NULL;
	double *v = NULL;
	size_t n_use = 0, n_at = 0;
	uint32_t scale = 0;
	double f;
	int rv = -1;

	memset(out, 0, sizeof(*out));
	if (k == 0)
		k = 1;
	use = calloc(n_runs ? n_runs : 1, sizeof(*use));
	v = calloc(n_runs ? n_runs : 1, sizeof(*v));
	if (!use || !v)
		goto out;
	for (size_t i = 0; i < n_runs; i++) {
		if (runs[i].nodes == 0)
			continue;
		if (max_age > 0 && (double)(now - runs[i].end_time) > max_age)
			continue;
		use[n_use++] = &runs[i];
	}
	if (n_use == 0) {
		errno = ENOENT;
		goto out;
	}
	if (bandwidth_by_forwarders(use, n_use, out))
		goto out;

	/* nearest scale: closest node count, ties to the larger */
	for (size_t i = 0; i < n_use; i++) {
		uint32_t s = use[i]->nodes;
		uint64_t d = s > nodes ? s - nodes : nodes - s;
		uint64_t best = scale > nodes ? scale - nodes : nodes - scale;

		if (scale == 0 || d < best || (d == best && s > scale))
			scale = s;
	}
	qsort(use, n_use, sizeof(*use), cmp_recent);
	for (size_t i = 0; i < n_use && n_at < k; i++)
		if (use[i]->nodes == scale)
			use[n_at++] = use[i];
	/* use[0..n_at) are now the K most recent runs at that scale */
	f = nodes ? (double)nodes / scale : 1;

#define MEDIAN_OF(expr)                                  \
	({                                               \
		for (size_t i_ = 0; i_ < n_at; i_++)     \
			v[i_] = (double)(expr(use[i_])); \
		median(v, n_at);                         \
	})
#define VOL(r) ((r)->io_volume_bytes)
#define RD(r) ((r)->read_bytes)
#define WR(r) ((r)->write_bytes)
#define RT(r) ((r)->runtime)
#define ION(r) ((r)->io_nodes)
#define BC(r) ((r)->node_bandwidth_bps)
#define PEAK(r) ((r)->peak_bandwidth_bps)
#define IOPS(r) ((r)->iops)
#define MD(r) ((r)->mdops)
	out->io_volume_bytes = (uint64_t)llround(MEDIAN_OF(VOL) * f);
	out->read_bytes = (uint64_t)llround(MEDIAN_OF(RD) * f);
	out->write_bytes = (uint64_t)llround(MEDIAN_OF(WR) * f);
	out->runtime = MEDIAN_OF(RT);
	out->node_bandwidth_bps = MEDIAN_OF(BC);
	out->peak_bandwidth_bps = MEDIAN_OF(PEAK) * f;
	out->iops = MEDIAN_OF(IOPS) * f;
	out->mdops = MEDIAN_OF(MD) * f;
	{
		size_t m = 0;

		for (size_t i = 0; i < n_at; i++)
			if (use[i]->metadata_queue >= 0)
				v[m++] = use[i]->metadata_queue;
		out->metadata_queue = median(v, m);
	}
	/* the mode: most frequent, ties to the most recent run's */
	{
		unsigned cnt[FWD_IO_MODES] = {0};
		enum fwd_io_mode best = use[0]->io_mode;

		for (size_t i = 0; i < n_at; i++)
			if ((unsigned)use[i]->io_mode < FWD_IO_MODES)
				cnt[use[i]->io_mode]++;
		for (size_t i = 0; i < n_at; i++)
			if (cnt[use[i]->io_mode] > cnt[best])
				best = use[i]->io_mode;
		out->io_mode = best;
	}
	if (out->io_mode == FWD_IO_1_1) {
		out->io_nodes = 1;
	} else {
		double ion = MEDIAN_OF(ION) * f;

		out->io_nodes = ion < 1 ? 1 : (uint32_t)llround(ion);
		if (nodes && out->io_nodes > nodes)
			out->io_nodes = nodes;
		if (MEDIAN_OF(ION) == 0)
			out->io_nodes = 0;
	}
#undef MEDIAN_OF
#undef VOL
#undef RD
#undef WR
#undef RT
#undef ION
#undef BC
#undef PEAK
#undef IOPS
#undef MD
	out->runs = (uint32_t)n_at;
	out->scale_nodes = scale;
	rv = 0;
out:
	free(use);
	free(v);
	return rv;
}

void profile_run_from_summary(const struct trace_summary *s, int64_t end,
			      uint32_t forwarders, double achieved_bps,
			      struct profile_run *run)
{
	memset(run, 0, sizeof(*run));
	run->end_time = end;
	run->nodes = s->nodes;
	run->io_volume_bytes = s->read_bytes + s->write_bytes;
	run->read_bytes = s->read_bytes;
	run->write_bytes = s->write_bytes;
	run->runtime = s->end > s->start ? (double)(s->end - s->start + 1) : 0;
	run->io_nodes = s->io_nodes;
	run->node_bandwidth_bps = s->node_bandwidth_bps;
	run->peak_bandwidth_bps = s->peak_bandwidth_bps;
	run->iops = s->iops;
	run->mdops = s->mdops_rate;
	run->metadata_queue = -1;
	run->io_mode = s->io_mode;
	run->forwarders = forwarders;
	run->achieved_bps = achieved_bps;
}

json_t *profile_to_json(const struct profile *p)
{
	json_t *bw = json_object(), *o;

	if (!bw)
		return NULL;
	for (size_t i = 0; i < p->n_bw; i++) {
		char k[16];

		snprintf(k, sizeof(k), "%" PRIu32, p->bw[i].k);
		if (json_object_set_new(bw, k, json_real(p->bw[i].bps))) {
			json_decref(bw);
			return NULL;
		}
	}
	/* An unknown mode (job_stats-only history) is left out: decide's
	 * job input reads a missing io_mode as unknown. */
	o = json_pack(
		"{sI sI sf sf sf sf sf s:s* sI so}", "io_volume_bytes",
		(json_int_t)p->io_volume_bytes, "io_nodes",
		(json_int_t)p->io_nodes, "node_bandwidth_bps",
		p->node_bandwidth_bps, "peak_bandwidth_bps",
		p->peak_bandwidth_bps, "iops", p->iops, "mdops", p->mdops,
		"metadata_queue", p->metadata_queue, "io_mode",
		p->io_mode == FWD_IO_NONE ? NULL : fwd_io_mode_name(p->io_mode),
		"runs", (json_int_t)p->runs, "bandwidth_by_forwarders", bw);
	return o;
}

json_t *profile_curve_json(const struct profile *p)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < p->n_bw; i++)
		if (json_array_append_new(
			    a,
			    json_pack("{sI sf sI sf ss}", "k",
				      (json_int_t)p->bw[i].k, "bps",
				      p->bw[i].bps, "runs",
				      (json_int_t)p->bw[i].runs, "spread_bps",
				      p->bw[i].spread_bps, "forwarders",
				      p->bw[i].k == 0	     ? "direct"
				      : p->bw[i].private_fwd ? "private"
							     : "shared"))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* A non-negative JSON number as double; -1 with err otherwise. */
static int get_num(const json_t *o, const char *key, bool required, double *out,
		   fwd_error_t *err)
{
	json_t *v = json_object_get(o, key);
	char *txt;

	if (!v) {
		if (required) {
			errno = EINVAL;
			return errprintf(err, "profile: missing \"%s\"", key);
		}
		return 0;
	}
	if (!json_is_number(v) || json_number_value(v) < 0 ||
	    !isfinite(json_number_value(v))) {
		txt = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		errno = EINVAL;
		errprintf(err, "profile: \"%s\": %s: must be a number >= 0",
			  key, txt ? txt : "?");
		free(txt);
		return -1;
	}
	*out = json_number_value(v);
	return 0;
}

int profile_from_json(const json_t *o, struct profile *p, fwd_error_t *err)
{
	static const char *const known[] = {
		"io_volume_bytes",	   "io_nodes", "node_bandwidth_bps",
		"peak_bandwidth_bps",	   "iops",     "mdops",
		"metadata_queue",	   "io_mode",  "runs",
		"bandwidth_by_forwarders",
	};
	const char *key;
	json_t *v;
	double d = 0;

	memset(p, 0, sizeof(*p));
	p->runs = 1;
	if (!json_is_object(o)) {
		errno = EINVAL;
		return errprintf(err, "profile: not a JSON object");
	}
	json_object_foreach ((json_t *)o, key, v) {
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(key, known[i]))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			errno = EINVAL;
			return errprintf(err, "profile: unknown key \"%s\"",
					 key);
		}
	}
	if (get_num(o, "io_volume_bytes", true, &d, err))
		return -1;
	if (d > 1.8e19)
		return errprintf(err, "profile: \"io_volume_bytes\" too large");
	p->io_volume_bytes = (uint64_t)d;
	d = 0;
	if (get_num(o, "io_nodes", true, &d, err))
		return -1;
	if (d > UINT32_MAX || d != floor(d)) {
		errno = EINVAL;
		return errprintf(err,
				 "profile: \"io_nodes\": %g: must be a "
				 "whole number of nodes",
				 d);
	}
	p->io_nodes = (uint32_t)d;
	if (get_num(o, "node_bandwidth_bps", true, &p->node_bandwidth_bps,
		    err) ||
	    get_num(o, "peak_bandwidth_bps", false, &p->peak_bandwidth_bps,
		    err) ||
	    get_num(o, "iops", false, &p->iops, err) ||
	    get_num(o, "mdops", false, &p->mdops, err) ||
	    get_num(o, "metadata_queue", false, &p->metadata_queue, err))
		return -1;
	d = 1;
	if (get_num(o, "runs", false, &d, err))
		return -1;
	if (d > UINT32_MAX || d != floor(d)) {
		errno = EINVAL;
		return errprintf(err,
				 "profile: \"runs\": %g: must be a whole "
				 "number",
				 d);
	}
	p->runs = (uint32_t)d;
	v = json_object_get(o, "io_mode");
	if (!v) {
		p->io_mode = FWD_IO_NONE; /* unknown */
	} else if (!json_is_string(v)) {
		errno = EINVAL;
		return errprintf(err, "profile: \"io_mode\" must be one of "
				      "\"N-N\", \"N-1\", \"N-M\", \"1-1\"");
	} else if (fwd_io_mode_parse(json_string_value(v), &p->io_mode)) {
		errno = EINVAL;
		return errprintf(err,
				 "profile: \"io_mode\": \"%s\": must be "
				 "one of N-N, N-1, N-M, 1-1, none",
				 json_string_value(v));
	}
	v = json_object_get(o, "bandwidth_by_forwarders");
	if (v && !json_is_object(v)) {
		errno = EINVAL;
		return errprintf(err, "profile: \"bandwidth_by_forwarders\" "
				      "must be an object {\"k\": bps}");
	}
	if (v) {
		json_t *bps;

		json_object_foreach (v, key, bps) {
			char *end;
			unsigned long k;
			double b = 0;
			size_t i;

			/* "0": direct file-system access, no forwarder */
			errno = 0;
			k = strtoul(key, &end, 10);
			if (!*key || *end || errno || k > UINT32_MAX ||
			    key[0] == '+' || key[0] == '-') {
				errno = EINVAL;
				return errprintf(err,
						 "profile: "
						 "bandwidth_by_forwarders: "
						 "\"%s\": not a forwarder "
						 "count",
						 key);
			}
			if (get_num(v, key, true, &b, err))
				return errprefix(err, "bandwidth_by_"
						      "forwarders");
			if (p->n_bw == PROFILE_MAX_BW) {
				errno = E2BIG;
				return errprintf(err,
						 "profile: more than %d "
						 "bandwidth_by_forwarders",
						 PROFILE_MAX_BW);
			}
			/* keep sorted by k; keys are unique in JSON */
			for (i = p->n_bw; i > 0 && p->bw[i - 1].k > k; i--)
				p->bw[i] = p->bw[i - 1];
			p->bw[i].k = (uint32_t)k;
			p->bw[i].bps = b;
			p->n_bw++;
		}
	}
	return 0;
}
