/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job report's document: the job (controller/ledger_store.h), its
 * summary (profiler/job_io.h), its I/O over time from Lustre job_stats or
 * its summary's phases, its forwarders' and OSTs' load during the run
 * against their usual load (monitor/weather.h), its application's past
 * runs at the same scale (controller/history.h, profiler/job_io.h), the
 * decision (controller/audit.h, the ledger), health episodes and the
 * neighbours on its forwarders, and advice.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "controller/audit.h"
#include "controller/history.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "monitor/weather.h"
#include "profiler/job_io.h"
#include "report/report_priv.h"

/* Lustre job_stats snapshots of a job are read from its start less this
 * to its end plus this: the policy's default jobstats.grace (the history
 * loop's window). */
#define REPORT_JOBSTATS_GRACE 600

/* A growable set of names. */
struct names {
	char **v;
	size_t n;
};

static int names_add(struct names *s, const char *name)
{
	char **nv;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 0;
	nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	s->v = nv;
	if (!(s->v[s->n] = strdup(name)))
		return -1;
	s->n++;
	return 0;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static json_t *time_pair(const char *key, int64_t t, json_t *o)
{
	char buf[40];

	if (t < 0) {
		json_object_set_new(o, key, json_null());
		return o;
	}
	report_time(t, buf, sizeof(buf));
	json_object_set_new(o, key, json_string(buf));
	return o;
}

static json_t *job_json(const struct ledger_job *j)
{
	json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:I,s:s,s:s}", "job_id",
			      (json_int_t)j->job_id, "user", j->user, "account",
			      j->account, "name", j->name, "partition",
			      j->partition, "nodelist",
			      j->nodelist ? j->nodelist : "", "node_count",
			      (json_int_t)j->node_count, "state", j->state,
			      "request", j->request);

	json_object_set_new(o, "start_at",
			    j->start_at >= 0 ? json_integer(j->start_at)
					     : json_null());
	json_object_set_new(o, "end_at",
			    j->end_at >= 0 ? json_integer(j->end_at)
					   : json_null());
	time_pair("start", j->start_at, o);
	time_pair("end", j->end_at, o);
	return o;
}

static json_t *summary_json(const struct job_io_row *w)
{
	json_t *o = json_pack(
		"{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:b,s:b}", "source",
		w->source, "read_bytes", (json_int_t)w->read_bytes,
		"write_bytes", (json_int_t)w->write_bytes, "mdops",
		(json_int_t)w->mdops, "io_nodes", (json_int_t)w->io_nodes,
		"procs", (json_int_t)w->procs, "forwarders_held",
		(json_int_t)w->forwarders_held, "io_mode", w->io_mode,
		"forwarders_private", w->forwarders_private, "direct",
		w->direct);

	json_object_set_new(o, "node_bandwidth_bps",
			    report_num(w->node_bandwidth_bps));
	json_object_set_new(o, "peak_bandwidth_bps",
			    report_num(w->peak_bandwidth_bps));
	json_object_set_new(o, "iops", report_num(w->iops));
	json_object_set_new(o, "mdops_rate", report_num(w->mdops_rate));
	json_object_set_new(o, "metadata_queue", report_num(w->metadata_queue));
	json_object_set_new(o, "bandwidth_achieved_bps",
			    report_num(w->bandwidth_achieved_bps));
	json_object_set_new(o, "runtime", report_num(w->runtime));
	return o;
}

/* The time axis of the job's charts. */
struct axis {
	int64_t from, to, bucket;
	size_t n;
};

static size_t axis_index(const struct axis *a, int64_t ts)
{
	if (ts < a->from)
		return 0;
	if (ts >= a->to)
		return a->n - 1;
	return (size_t)((ts - a->from) / a->bucket);
}

/* Per-bucket byte and operation counts. */
struct series {
	uint64_t *rb, *wb, *ops, *md;
};

static int series_alloc(struct series *s, size_t n)
{
	s->rb = calloc(n, sizeof(uint64_t));
	s->wb = calloc(n, sizeof(uint64_t));
	s->ops = calloc(n, sizeof(uint64_t));
	s->md = calloc(n, sizeof(uint64_t));
	return s->rb && s->wb && s->ops && s->md ? 0 : -1;
}

static void series_free(struct series *s)
{
	free(s->rb);
	free(s->wb);
	free(s->ops);
	free(s->md);
}

/* {"t": [...], "read_bytes": [...], "read_bps": [...], ...}: counts per
 * bucket and the rates they make (count / bucket seconds). */
static json_t *series_json(const struct axis *a, const struct series *s,
			   const char *source)
{
	json_t *o = json_object(), *t = json_array(), *rb = json_array(),
	       *wb = json_array(), *ops = json_array(), *md = json_array(),
	       *rr = json_array(), *wr = json_array(), *ior = json_array(),
	       *mdr = json_array();
	double b = (double)a->bucket;

	for (size_t i = 0; i < a->n; i++) {
		json_array_append_new(
			t, json_integer(a->from + (int64_t)i * a->bucket));
		json_array_append_new(rb, json_integer((json_int_t)s->rb[i]));
		json_array_append_new(wb, json_integer((json_int_t)s->wb[i]));
		json_array_append_new(ops, json_integer((json_int_t)s->ops[i]));
		json_array_append_new(md, json_integer((json_int_t)s->md[i]));
		json_array_append_new(rr, json_real((double)s->rb[i] / b));
		json_array_append_new(wr, json_real((double)s->wb[i] / b));
		json_array_append_new(ior, json_real((double)s->ops[i] / b));
		json_array_append_new(mdr, json_real((double)s->md[i] / b));
	}
	json_object_set_new(o, "source",
			    source ? json_string(source) : json_null());
	json_object_set_new(o, "bucket", json_integer(a->bucket));
	json_object_set_new(o, "t", t);
	json_object_set_new(o, "read_bytes", rb);
	json_object_set_new(o, "write_bytes", wb);
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "md_ops", md);
	json_object_set_new(o, "read_bps", rr);
	json_object_set_new(o, "write_bps", wr);
	json_object_set_new(o, "iops", ior);
	json_object_set_new(o, "mdops_rate", mdr);
	return o;
}

/* The job's I/O per bucket from its summary's phases (traces, Darshan):
 * each phase's volume and metadata operations spread evenly over the
 * buckets it spans. */
static void phases_into(const struct axis *a, const char *phases,
			struct series *s)
{
	json_t *arr = json_loads(phases, 0, NULL), *p;
	size_t i;

	json_array_foreach (arr, i, p) {
		int64_t st = json_integer_value(json_object_get(p, "start"));
		int64_t en = json_integer_value(json_object_get(p, "end"));
		uint64_t r = (uint64_t)json_integer_value(
			json_object_get(p, "read_bytes"));
		uint64_t w = (uint64_t)json_integer_value(
			json_object_get(p, "write_bytes"));
		uint64_t m = (uint64_t)json_integer_value(
			json_object_get(p, "mdops"));
		size_t b0 = axis_index(a, st), b1 = axis_index(a, en);
		uint64_t k = b1 >= b0 ? b1 - b0 + 1 : 1;

		for (size_t b = b0; b <= b1 && b < a->n; b++) {
			bool last = b == b1;

			s->rb[b] += last ? r - r / k * (k - 1) : r / k;
			s->wb[b] += last ? w - w / k * (k - 1) : w / k;
			s->md[b] += last ? m - m / k * (k - 1) : m / k;
		}
	}
	json_decref(arr);
}

/* Median of the hourly bandwidth (read + write) of each component over
 * the climate window, counting hours with samples: the usual load. */
static int climate(struct db *db, const char *kind, const struct names *nm,
		   int64_t before, json_t *comps, fwd_error_t *err)
{
	struct weather_cell *c = NULL;
	size_t n = 0;
	int64_t from =
		before - (strcmp(kind, "fwd") ? REPORT_CLIMATE_TARGET_SECONDS
					      : REPORT_CLIMATE_SECONDS);

	from -= from % 3600;
	if (nm->n == 0)
		return 0;
	if (weather_cells(db, kind, nm->v, nm->n, from,
			  before > from + 60 ? before : from + 60, 3600, &c, &n,
			  err) < 0)
		return -1;
	for (size_t i = 0; i < nm->n; i++) {
		double *v = malloc((n + 1) * sizeof(double));
		size_t k = 0;
		json_t *q, *o = NULL, *e;
		size_t j;

		if (!v) {
			free(c);
			errno = ENOMEM;
			return errprintf(err, "out of memory");
		}
		for (size_t x = 0; x < n; x++)
			if (!strcmp(c[x].name, nm->v[i]) && c[x].samples)
				v[k++] = (double)(c[x].read_bytes +
						  c[x].write_bytes) /
					 3600.0;
		q = report_quantiles(v, k);
		free(v);
		json_array_foreach (comps, j, e)
			if (!strcmp(json_string_value(
					    json_object_get(e, "name")),
				    nm->v[i]) &&
			    !strcmp(json_string_value(
					    json_object_get(e, "kind")),
				    kind))
				o = e;
		if (o)
			json_object_set_new(o, "usual_bps", q);
		else
			json_decref(q);
	}
	free(c);
	return 0;
}

/* The components' load during [from, to) (one query on the axis's
 * buckets), plus the forwarders' aggregate series. */
static int components(struct db *db, const char *kind, const struct names *nm,
		      const struct axis *a, json_t *comps, json_t **fwd_series,
		      fwd_error_t *err)
{
	struct weather_cell *c = NULL;
	size_t n = 0;
	int64_t span = a->to - a->from;
	struct series s = {0};
	double *q = NULL;
	uint64_t *qn = NULL;
	int rv = -1;

	bool series = fwd_series && !strcmp(kind, "fwd");

	if (nm->n == 0)
		return 0;
	/* Only the forwarders' series needs the axis's buckets; the OSTs'
	 * and MDTs' totals are one bucket over the run (read as whole
	 * quarter hours and the minutes at either end). */
	if (weather_cells(db, kind, nm->v, nm->n, a->from, a->to,
			  series ? a->bucket : span, &c, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < nm->n; i++) {
		struct weather_cell w = {0};
		bool any = false;
		json_t *o;

		for (size_t x = 0; x < n; x++) {
			if (strcmp(c[x].name, nm->v[i]))
				continue;
			any = true;
			w.samples += c[x].samples;
			w.read_bytes += c[x].read_bytes;
			w.write_bytes += c[x].write_bytes;
			w.md_ops += c[x].md_ops;
			w.queue_sum += c[x].queue_sum;
			w.queue_n += c[x].queue_n;
			if (c[x].read_bps_max > w.read_bps_max)
				w.read_bps_max = c[x].read_bps_max;
			if (c[x].write_bps_max > w.write_bps_max)
				w.write_bps_max = c[x].write_bps_max;
		}
		o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:f,s:f,s:I}", "kind", kind,
			      "name", nm->v[i], "read_bytes",
			      (json_int_t)w.read_bytes, "write_bytes",
			      (json_int_t)w.write_bytes, "md_ops",
			      (json_int_t)w.md_ops, "during_bps",
			      (double)(w.read_bytes + w.write_bytes) /
				      (double)span,
			      "peak_bps", w.read_bps_max + w.write_bps_max,
			      "samples", (json_int_t)w.samples);
		json_object_set_new(
			o, "queue_len",
			any && w.queue_n
				? json_real(w.queue_sum / (double)w.queue_n)
				: json_null());
		json_array_append_new(comps, o);
	}
	if (series) {
		json_t *qa = json_array();

		q = calloc(a->n, sizeof(double));
		qn = calloc(a->n, sizeof(uint64_t));
		if (!q || !qn || series_alloc(&s, a->n) < 0) {
			json_decref(qa);
			errno = ENOMEM;
			errprintf(err, "reading the forwarders' load: out of "
				       "memory");
			goto out;
		}
		for (size_t x = 0; x < n; x++) {
			size_t b = axis_index(a, c[x].t);

			s.rb[b] += c[x].read_bytes;
			s.wb[b] += c[x].write_bytes;
			s.ops[b] += c[x].read_ops + c[x].write_ops;
			s.md[b] += c[x].md_ops;
			q[b] += c[x].queue_sum;
			qn[b] += c[x].queue_n;
		}
		*fwd_series = series_json(a, &s, "forwarders");
		for (size_t b = 0; b < a->n; b++)
			json_array_append_new(
				qa, qn[b] ? json_real(q[b] / (double)qn[b])
					  : json_null());
		json_object_set_new(*fwd_series, "queue_len", qa);
	}
	rv = 0;
out:
	series_free(&s);
	free(q);
	free(qn);
	free(c);
	return rv;
}

/* The application's past runs at the same scale: the node-count bucket
 * of powers of two holding this job's count. */
static int history(struct db *db, const struct ledger_job *j,
		   const struct job_io_row *self, json_t *doc, json_t **curve,
		   fwd_error_t *err)
{
	uint64_t lo = 1, hi, *ids = NULL;
	size_t n = 0, nr = 0;
	struct job_io_row *rows = NULL;
	double *bw, *rt;
	size_t nb = 0, nt = 0;
	json_t *runs = json_array(), *o, *by_k = json_object();

	while (lo * 2 <= j->node_count)
		lo *= 2;
	hi = lo * 2 - 1;
	if (history_app_runs(db, j->user, j->name, lo, hi, 0, INT64_MAX,
			     j->job_id, &ids, &n, err) < 0 ||
	    job_io_rows(db, ids, n, &rows, &nr, err) < 0) {
		free(ids);
		json_decref(runs);
		json_decref(by_k);
		return -1;
	}
	free(ids);
	bw = calloc(nr + 1, sizeof(double));
	rt = calloc(nr + 1, sizeof(double));
	if (!bw || !rt) {
		free(bw);
		free(rt);
		job_io_rows_free(rows, nr);
		json_decref(runs);
		json_decref(by_k);
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	for (size_t i = 0; i < nr + (self ? 1 : 0); i++) {
		const struct job_io_row *w = i < nr ? &rows[i] : self;
		char key[16];
		json_t *arr;

		if (i < nr) {
			json_array_append_new(
				runs,
				json_pack("{s:I,s:o,s:o,s:I}", "job_id",
					  (json_int_t)w->job_id,
					  "bandwidth_achieved_bps",
					  report_num(w->bandwidth_achieved_bps),
					  "runtime", report_num(w->runtime),
					  "forwarders_held",
					  (json_int_t)w->forwarders_held));
			if (isfinite(w->bandwidth_achieved_bps))
				bw[nb++] = w->bandwidth_achieved_bps;
			if (isfinite(w->runtime))
				rt[nt++] = w->runtime;
		}
		if (!isfinite(w->bandwidth_achieved_bps))
			continue;
		snprintf(key, sizeof(key), "%u", w->forwarders_held);
		arr = json_object_get(by_k, key);
		if (!arr) {
			arr = json_array();
			json_object_set_new(by_k, key, arr);
		}
		json_array_append_new(arr,
				      json_real(w->bandwidth_achieved_bps));
	}
	o = json_pack("{s:I,s:I,s:o,s:o,s:o}", "nodes_min", (json_int_t)lo,
		      "nodes_max", (json_int_t)hi, "runs", runs,
		      "bandwidth_bps", report_quantiles(bw, nb), "runtime",
		      report_quantiles(rt, nt));
	json_object_set_new(
		o, "this_bandwidth_bps",
		report_num(self ? self->bandwidth_achieved_bps : NAN));
	json_object_set_new(o, "this_runtime",
			    report_num(self ? self->runtime : NAN));
	json_object_set_new(doc, "history", o);
	/* the curve: median achieved bandwidth by forwarders held, this
	 * run included */
	*curve = json_array();
	{
		const char *key;
		json_t *arr;

		json_object_foreach (by_k, key, arr) {
			size_t m = json_array_size(arr), x;
			double *v = calloc(m + 1, sizeof(double));
			json_t *e, *q;

			if (!v)
				continue;
			json_array_foreach (arr, x, e)
				v[x] = json_real_value(e);
			q = report_quantiles(v, m);
			json_array_append_new(
				*curve,
				json_pack("{s:I,s:I,s:O}", "forwarders",
					  (json_int_t)strtoll(key, NULL, 10),
					  "runs", (json_int_t)m, "median_bps",
					  json_object_get(q, "median")));
			json_decref(q);
			free(v);
		}
	}
	json_object_set(o, "curve", *curve);
	json_decref(*curve);
	free(bw);
	free(rt);
	job_io_rows_free(rows, nr);
	json_decref(by_k);
	return 0;
}

static void advise(json_t *adv, const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void advise(json_t *adv, const char *rule, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(
		adv, json_pack("{s:s,s:s}", "rule", rule, "text", buf));
}

int report_job_doc(struct db *db, uint64_t job_id, json_t **out,
		   fwd_error_t *err)
{
	struct ledger_job j;
	struct job_io_row *sum = NULL;
	size_t n_sum = 0, n_js = 0, n_rows = 0, n_ep = 0, n_nb = 0;
	struct weather_jobstats *js = NULL, *jb = NULL;
	struct ledger_row *rows = NULL, *nb = NULL;
	struct weather_episode *ep = NULL;
	struct names fwds = {0}, osts = {0}, mdts = {0}, all = {0};
	struct series s = {0};
	struct axis a;
	json_t *doc = NULL, *dec = NULL, *comps, *fwd_series = NULL,
	       *curve = NULL, *adv, *arr;
	int64_t now = (int64_t)time(NULL), start, end;
	uint64_t tot_r = 0, tot_w = 0, tot_rop = 0, tot_wop = 0, tot_md = 0;
	double expected = 0, achieved = NAN, runtime;
	int r, rv = -1;

	*out = NULL;
	r = ledger_store_job_get(db, job_id, &j, err);
	if (r != 0)
		return r < 0 ? -1 : 1;
	start = j.start_at >= 0 ? j.start_at : now;
	end = j.end_at >= 0 ? j.end_at : now;
	if (end <= start)
		end = start + 1;
	runtime = (double)(end - start);
	a.from = start - start % 60;
	a.to = end % 60 ? end - end % 60 + 60 : end;
	a.bucket = report_bucket(a.from, a.to, REPORT_MAX_POINTS);
	a.n = (size_t)((a.to - a.from + a.bucket - 1) / a.bucket);
	a.to = a.from + (int64_t)a.n * a.bucket;

	doc = json_object();
	json_object_set_new(doc, "report", json_string("job"));
	json_object_set_new(doc, "job", job_json(&j));
	json_object_set_new(
		doc, "range",
		json_pack("{s:I,s:I,s:I}", "from", (json_int_t)a.from, "to",
			  (json_int_t)a.to, "bucket", (json_int_t)a.bucket));

	jb = calloc(a.n, sizeof(*jb));
	if (!jb)
		goto oom;
	if (job_io_rows(db, &job_id, 1, &sum, &n_sum, err) < 0 ||
	    weather_jobstats(db, job_id, start - REPORT_JOBSTATS_GRACE,
			     end + REPORT_JOBSTATS_GRACE, a.from, a.bucket, a.n,
			     jb, &js, &n_js, err) < 0 ||
	    ledger_store_job_rows(db, job_id, &rows, &n_rows, err) < 0 ||
	    audit_store_job_decision(db, job_id, &dec, err) < 0)
		goto out;
	json_object_set_new(doc, "summary",
			    n_sum ? summary_json(&sum[0]) : json_null());

	/* the job's I/O over time: job_stats, else its summary's phases */
	if (series_alloc(&s, a.n) < 0)
		goto oom;
	for (size_t b = 0; b < a.n; b++) {
		s.rb[b] = jb[b].io.read_bytes;
		s.wb[b] = jb[b].io.write_bytes;
		s.ops[b] = jb[b].io.read_ops + jb[b].io.write_ops;
		s.md[b] = jb[b].io.md_ops;
	}
	for (size_t i = 0; i < n_js; i++) {
		tot_r += js[i].io.read_bytes;
		tot_w += js[i].io.write_bytes;
		tot_rop += js[i].io.read_ops;
		tot_wop += js[i].io.write_ops;
		tot_md += js[i].io.md_ops;
		if (names_add(!strcmp(js[i].kind, "mdt") ? &mdts : &osts,
			      js[i].target) < 0)
			goto oom;
	}
	if (!n_js && n_sum && sum[0].phases)
		phases_into(&a, sum[0].phases, &s);
	json_object_set_new(doc, "series",
			    series_json(&a, &s,
					n_js			 ? "jobstats"
					: n_sum && sum[0].phases ? "phases"
								 : NULL));
	json_object_set_new(doc, "jobstats",
			    n_js ? json_pack("{s:I,s:I,s:I,s:I,s:I}",
					     "read_bytes", (json_int_t)tot_r,
					     "write_bytes", (json_int_t)tot_w,
					     "read_ops", (json_int_t)tot_rop,
					     "write_ops", (json_int_t)tot_wop,
					     "md_ops", (json_int_t)tot_md)
				 : json_null());

	/* the forwarders it held (else those its decision named) */
	for (size_t i = 0; i < n_rows; i++) {
		if (strcmp(rows[i].action, "shadow") &&
		    names_add(&fwds, rows[i].forwarder) < 0)
			goto oom;
		if (rows[i].bandwidth_bps > expected)
			expected = rows[i].bandwidth_bps;
	}
	if (!fwds.n && dec) {
		json_t *v;
		size_t i;

		json_array_foreach (json_object_get(dec, "forwarders_after"), i,
				    v)
			if (json_is_string(v) &&
			    names_add(&fwds, json_string_value(v)) < 0)
				goto oom;
	}
	comps = json_array();
	json_object_set_new(doc, "components", comps);
	if (components(db, "fwd", &fwds, &a, comps, &fwd_series, err) < 0 ||
	    components(db, "ost", &osts, &a, comps, NULL, err) < 0 ||
	    components(db, "mdt", &mdts, &a, comps, NULL, err) < 0 ||
	    climate(db, "fwd", &fwds, a.from, comps, err) < 0 ||
	    climate(db, "ost", &osts, a.from, comps, err) < 0 ||
	    climate(db, "mdt", &mdts, a.from, comps, err) < 0)
		goto out;
	/* the job's own share of its OSTs and MDTs: its job_stats there */
	for (size_t i = 0; i < n_js; i++) {
		json_t *e;
		size_t k;

		json_array_foreach (comps, k, e) {
			if (strcmp(json_string_value(
					   json_object_get(e, "kind")),
				   js[i].kind) ||
			    strcmp(json_string_value(
					   json_object_get(e, "name")),
				   js[i].target))
				continue;
			json_object_set_new(
				e, "job",
				json_pack("{s:I,s:I,s:I,s:I,s:I}", "read_bytes",
					  (json_int_t)js[i].io.read_bytes,
					  "write_bytes",
					  (json_int_t)js[i].io.write_bytes,
					  "read_ops",
					  (json_int_t)js[i].io.read_ops,
					  "write_ops",
					  (json_int_t)js[i].io.write_ops,
					  "md_ops",
					  (json_int_t)js[i].io.md_ops));
		}
	}
	json_object_set_new(doc, "forwarder_series",
			    fwd_series ? fwd_series : json_null());
	fwd_series = NULL;

	if (history(db, &j, n_sum ? &sum[0] : NULL, doc, &curve, err) < 0)
		goto out;

	/* the decision: what fwdalloc did and why, expected against
	 * achieved */
	if (n_sum)
		achieved = sum[0].bandwidth_achieved_bps;
	else if (n_js)
		achieved = (double)(tot_r + tot_w) / runtime;
	{
		json_t *d = json_object(), *al = json_array();

		json_object_set_new(
			d, "action",
			dec && json_object_get(dec, "action")
				? json_deep_copy(json_object_get(dec, "action"))
			: n_rows ? json_string(rows[0].action)
				 : json_null());
		json_object_set_new(
			d, "outcome",
			dec ? json_deep_copy(json_object_get(dec, "outcome"))
			    : json_null());
		json_object_set_new(d, "reasons",
				    dec && json_object_get(dec, "reasons")
					    ? json_deep_copy(json_object_get(
						      dec, "reasons"))
					    : json_array());
		json_object_set_new(
			d, "forwarders_before",
			dec && json_object_get(dec, "forwarders_before")
				? json_deep_copy(json_object_get(
					  dec, "forwarders_before"))
				: json_array());
		json_object_set_new(d, "audited", json_boolean(dec != NULL));
		for (size_t i = 0; i < n_rows; i++)
			json_array_append_new(
				al,
				json_pack("{s:s,s:s,s:b,s:s,s:I,s:I,s:o}",
					  "forwarder", rows[i].forwarder,
					  "action", rows[i].action, "private",
					  rows[i].is_private, "nodes",
					  rows[i].nodes, "node_count",
					  (json_int_t)rows[i].node_count,
					  "acquired_at",
					  (json_int_t)rows[i].acquired_at,
					  "released_at",
					  rows[i].released
						  ? json_integer(
							    rows[i].released_at)
						  : json_null()));
		json_object_set_new(d, "allocations", al);
		json_object_set_new(d, "expected_bps",
				    expected > 0 ? json_real(expected)
						 : json_null());
		json_object_set_new(d, "achieved_bps", report_num(achieved));
		json_object_set_new(doc, "decision", d);
	}

	/* health episodes of its components during the run */
	for (size_t i = 0; i < fwds.n; i++)
		if (names_add(&all, fwds.v[i]) < 0)
			goto oom;
	for (size_t i = 0; i < osts.n; i++)
		if (names_add(&all, osts.v[i]) < 0)
			goto oom;
	for (size_t i = 0; i < mdts.n; i++)
		if (names_add(&all, mdts.v[i]) < 0)
			goto oom;
	if (all.n &&
	    weather_episodes(db, start, end, all.v, all.n, &ep, &n_ep, err) < 0)
		goto out;
	arr = json_array();
	for (size_t i = 0; i < n_ep; i++) {
		json_t *e = json_pack(
			"{s:s,s:s,s:s,s:s,s:I,s:o,s:s}", "kind", ep[i].kind,
			"name", ep[i].name, "state", ep[i].state, "source",
			ep[i].source, "start_at", (json_int_t)ep[i].start_at,
			"end_at",
			ep[i].end_at >= 0 ? json_integer(ep[i].end_at)
					  : json_null(),
			"reason", ep[i].reason);

		json_array_append_new(arr, e);
	}
	json_object_set_new(doc, "health", arr);

	/* neighbours: other jobs that held its forwarders during the run;
	 * disruptive by what their decision expected of them (N-1, or
	 * metadata over REPORT_MD_HEAVY_RATE) */
	if (fwds.n &&
	    ledger_store_rows_between(db, start, end, &nb, &n_nb, err) < 0)
		goto out;
	arr = json_array();
	for (size_t i = 0; i < n_nb; i++) {
		bool shared = false, dis;
		json_t *last =
			json_array_size(arr)
				? json_array_get(arr, json_array_size(arr) - 1)
				: NULL;

		if (nb[i].job_id == job_id || !strcmp(nb[i].action, "shadow"))
			continue;
		for (size_t k = 0; k < fwds.n && !shared; k++)
			shared = !strcmp(fwds.v[k], nb[i].forwarder);
		if (!shared)
			continue;
		if (last && (uint64_t)json_integer_value(json_object_get(
				    last, "job_id")) == nb[i].job_id) {
			json_array_append_new(json_object_get(last, "shared"),
					      json_string(nb[i].forwarder));
			continue;
		}
		dis = !strcmp(nb[i].io_mode, "N-1") ||
		      nb[i].mdops_rate > REPORT_MD_HEAVY_RATE;
		json_array_append_new(
			arr,
			json_pack("{s:I,s:[s],s:s,s:f,s:f,s:f,s:b}", "job_id",
				  (json_int_t)nb[i].job_id, "shared",
				  nb[i].forwarder, "io_mode", nb[i].io_mode,
				  "mdops_rate", nb[i].mdops_rate,
				  "bandwidth_bps", nb[i].bandwidth_bps, "iops",
				  nb[i].iops, "disruptive", dis));
	}
	json_object_set_new(doc, "neighbours", arr);

	/* advice: one rule each, stated in `fwdctl report --help` */
	adv = json_array();
	json_object_set_new(doc, "advice", adv);
	/* n-1-small-writes: N-1 (summary's mode) and a mean write request,
	 * job_stats bytes over write requests, below 1 MiB */
	if (n_sum && !strcmp(sum[0].io_mode, "N-1") && tot_wop > 0 &&
	    (double)tot_w / (double)tot_wop < REPORT_SMALL_WRITE_BYTES)
		advise(adv, "n-1-small-writes",
		       "N-1 writes of %.0f bytes on average: aggregate them "
		       "(collective I/O, MPI-IO hints) or write one file per "
		       "process or group",
		       (double)tot_w / (double)tot_wop);
	/* metadata-heavy: metadata ops/s during I/O phases (summary), else
	 * job_stats metadata over the run time, above 300 */
	{
		double md = n_sum && isfinite(sum[0].mdops_rate)
				    ? sum[0].mdops_rate
			    : n_js ? (double)tot_md / runtime
				   : 0;

		if (md > REPORT_MD_HEAVY_RATE)
			advise(adv, "metadata-heavy",
			       "%.0f metadata operations per second: keep "
			       "small-file and open/stat-heavy work off the "
			       "parallel file system (node-local storage, "
			       "fewer files)",
			       md);
	}
	/* scale-not-paying: a smaller forwarder count on the curve whose
	 * median bandwidth is within 10 % of this run's count's median */
	if (n_sum && sum[0].forwarders_held > 1 && curve) {
		double here = NAN, best = NAN;
		unsigned best_k = 0;
		json_t *e;
		size_t i;

		json_array_foreach (curve, i, e) {
			unsigned k = (unsigned)json_integer_value(
				json_object_get(e, "forwarders"));
			double m = json_number_value(
				json_object_get(e, "median_bps"));

			if (k == sum[0].forwarders_held)
				here = m;
		}
		json_array_foreach (curve, i, e) {
			unsigned k = (unsigned)json_integer_value(
				json_object_get(e, "forwarders"));
			double m = json_number_value(
				json_object_get(e, "median_bps"));

			if (isfinite(here) && k < sum[0].forwarders_held &&
			    m >= REPORT_SCALE_MARGIN * here &&
			    (!best_k || k < best_k)) {
				best_k = k;
				best = m;
			}
		}
		if (best_k)
			advise(adv, "scale-not-paying",
			       "runs with %u forwarders reached %.0f B/s, "
			       "within 10%% of the %.0f B/s with %u: the "
			       "extra forwarders did not pay",
			       best_k, best, here, sum[0].forwarders_held);
	}
	/* slow-component: a component it used was away from ok */
	if (n_ep)
		advise(adv, "slow-component",
		       "%s %s was %s during the run: its bandwidth says more "
		       "about the machine than about the application",
		       ep[0].kind, ep[0].name, ep[0].state);

	*out = doc;
	doc = NULL;
	rv = 0;
	goto out;
oom:
	errno = ENOMEM;
	errprintf(err, "job %llu report: out of memory",
		  (unsigned long long)job_id);
out:
	json_decref(doc);
	json_decref(dec);
	json_decref(fwd_series);
	series_free(&s);
	names_free(&fwds);
	names_free(&osts);
	names_free(&mdts);
	names_free(&all);
	free(js);
	free(jb);
	free(ep);
	job_io_rows_free(sum, n_sum);
	ledger_store_rows_free(rows, n_rows);
	ledger_store_rows_free(nb, n_nb);
	ledger_store_job_clear(&j);
	return rv;
}
