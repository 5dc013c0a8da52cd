/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Simulator reports: the table, JSON and the two SVG charts (per-job
 * speed-up distribution, forwarder utilisation over time).  The SVG is
 * written by hand: two line charts do not justify a plotting library.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/array.h"
#include "common/xml.h"
#include "sim/sim.h"

static const char *kind_name(enum sim_policy_kind k)
{
	switch (k) {
	case SIM_POLICY_STATIC:
		return "static";
	case SIM_POLICY_DFRA:
		return "dfra";
	case SIM_POLICY_ORACLE:
		return "oracle";
	case SIM_POLICY_PLACE:
		return "place";
	case SIM_POLICY_EXACT:
		return "exact";
	case SIM_POLICY_STATIC_BEZ:
		return "static-bez";
	}
	return "?";
}

/* A figure; an infinite or undefined one (a job that never got any
 * bandwidth has an infinite I/O time) is null, not a failure. */
static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *policy_json(const struct sim_policy_result *p,
			   const struct sim_jobs *j, bool per_job)
{
	json_t *o = json_pack(
		"{s:s, s:s, s:o, s:o, s:o,"
		" s:{s:o, s:o, s:o, s:o},"
		" s:{s:I, s:o, s:o}, s:I, s:{s:o, s:o}}",
		"name", p->name, "kind", kind_name(p->kind),
		"aggregate_bandwidth_bps", num(p->agg_bw_mean),
		"peak_bandwidth_bps", num(p->agg_bw_peak), "io_time_total_s",
		num(p->io_time_total), "speedup", "median",
		num(p->speedup_median), "mean", num(p->speedup_mean), "max",
		num(p->speedup_max), "min", num(p->speedup_min), "upgraded",
		"jobs", (json_int_t)p->n_upgraded, "share",
		num(p->upgraded_share), "core_hours",
		num(p->upgraded_core_hours), "refused",
		(json_int_t)p->n_refused, "utilisation", "bandwidth",
		num(p->util_mean), "held", num(p->held_mean));
	json_t *jobs;

	if (!o || !per_job)
		return o;
	if (!(jobs = json_array()) || json_object_set_new(o, "series", jobs)) {
		json_decref(o);
		return NULL;
	}
	for (size_t i = 0; i < p->n_series; i++) {
		json_t *e = json_pack("[o, o, o]", num(p->series[i].t),
				      num(p->series[i].util),
				      num(p->series[i].held));

		if (!e || json_array_append_new(jobs, e)) {
			json_decref(o);
			return NULL;
		}
	}
	if (!(jobs = json_array()) || json_object_set_new(o, "jobs", jobs)) {
		json_decref(o);
		return NULL;
	}
	for (size_t i = 0; i < j->n; i++) {
		const struct sim_job_result *x = &p->jobs[i];
		json_t *e;

		if (!x->placed)
			e = json_pack("{s:s, s:b}", "job_id", j->jobs[i].id,
				      "placed", 0);
		else
			e = json_pack(
				"{s:s, s:b, s:i, s:i, s:o, s:o, s:o,"
				" s:b, s:b}",
				"job_id", j->jobs[i].id, "placed", 1, "n_f",
				(int)x->n_f, "forwarders", (int)x->n_fwd,
				"io_time_s", num(x->io_time), "bandwidth_bps",
				num(x->bw), "speedup", num(x->speedup),
				"upgraded", x->upgraded, "refused", x->refused);
		if (!e || json_array_append_new(jobs, e)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

char *sim_result_to_json(const struct sim_result *r, const struct sim_jobs *j,
			 bool per_job)
{
	json_t *root =
		json_pack("{s:I, s:I, s:f, s:f, s:I, s:I, s:[]}", "jobs",
			  (json_int_t)r->n_jobs, "placed",
			  (json_int_t)r->n_placed, "start", r->t0, "end", r->t1,
			  "forwarders", (json_int_t)r->n_forwarders, "pool",
			  (json_int_t)r->n_pool, "policies");
	json_t *pols = root ? json_object_get(root, "policies") : NULL;
	char *s = NULL;

	if (!pols)
		goto out;
	for (size_t i = 0; i < r->n_pols; i++) {
		json_t *p = policy_json(&r->pols[i], j, per_job);

		if (!p || json_array_append_new(pols, p))
			goto out;
	}
	s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
out:
	json_decref(root);
	if (!s)
		errno = ENOMEM;
	return s;
}

/* ---- SVG -------------------------------------------------------------- */

#define W 720
#define H 420
#define ML 70 /* margins */
#define MR 170
#define MT 40
#define MB 55

static const char *const colours[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
	"#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
};

static void svg_head(FILE *f, const char *title)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"22\" font-size=\"15\">",
		W, H, W, H, W, H, ML);
	fwd_xml_text(f, title);
	fputs("</text>\n", f);
}

static void svg_axes(FILE *f, const char *xlabel, const char *ylabel)
{
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"none\" stroke=\"black\"/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		ML + (W - ML - MR) / 2, H - 12, xlabel);
	fprintf(f,
		"<text x=\"16\" y=\"%d\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 16 %d)\">%s</text>\n",
		MT + (H - MT - MB) / 2, MT + (H - MT - MB) / 2, ylabel);
}

static void svg_legend(FILE *f, const struct sim_result *r, bool dashed)
{
	for (size_t i = 0; i < r->n_pols; i++) {
		int y = MT + 10 + (int)i * 18;

		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"%s\" stroke-width=\"2\"/>\n",
			W - MR + 10, y, W - MR + 34, y, colours[i % 8]);
		fprintf(f, "<text x=\"%d\" y=\"%d\">", W - MR + 40, y + 4);
		fwd_xml_text(f, r->pols[i].name);
		fputs("</text>\n", f);
	}
	if (dashed) {
		int y = MT + 10 + (int)r->n_pols * 18 + 8;

		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"black\" stroke-dasharray=\"4 3\"/>\n"
			"<text x=\"%d\" y=\"%d\">held share</text>\n",
			W - MR + 10, y, W - MR + 34, y, W - MR + 40, y + 4);
	}
}

/* Empirical CDF of per-job speed-ups, log2 x axis. */
static int svg_speedup(const struct sim_result *r, FILE *f)
{
	double lo = 1, hi = 1;
	double *v = malloc((r->n_jobs ? r->n_jobs : 1) * sizeof(*v));
	int pw = W - ML - MR, ph = H - MT - MB;

	if (!v)
		return -1;
	for (size_t p = 0; p < r->n_pols; p++) {
		for (size_t i = 0; i < r->n_jobs; i++) {
			const struct sim_job_result *x = &r->pols[p].jobs[i];

			if (!x->placed || !(x->speedup > 0))
				continue;
			if (x->speedup < lo)
				lo = x->speedup;
			if (x->speedup > hi)
				hi = x->speedup;
		}
	}
	double l2lo = floor(log2(lo)), l2hi = ceil(log2(hi));

	if (l2hi - l2lo < 1)
		l2hi = l2lo + 1;
	svg_head(f, "Per-job I/O speed-up over static (CDF)");
	svg_axes(f, "speed-up over static (log scale)", "share of jobs");
	for (double e = l2lo; e <= l2hi; e++) {
		double x = ML + (e - l2lo) / (l2hi - l2lo) * pw;

		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%g</text>\n",
			x, MT, x, MT + ph, x, MT + ph + 16, exp2(e));
	}
	for (int q = 0; q <= 4; q++) {
		double y = MT + ph - q * ph / 4.0;

		fprintf(f,
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
			"%.2f</text>\n",
			ML - 6, y + 4, q / 4.0);
	}
	for (size_t p = 0; p < r->n_pols; p++) {
		size_t n = 0;

		for (size_t i = 0; i < r->n_jobs; i++)
			if (r->pols[p].jobs[i].placed &&
			    r->pols[p].jobs[i].speedup > 0)
				v[n++] = r->pols[p].jobs[i].speedup;
		if (!n)
			continue;
		qsort(v, n, sizeof(*v), fwd_cmp_double);
		fprintf(f,
			"<polyline fill=\"none\" stroke=\"%s\" "
			"stroke-width=\"2\" points=\"",
			colours[p % 8]);
		/* at most ~400 steps: quantiles of the sorted values */
		size_t steps = n < 400 ? n : 400;
		double prevy = MT + ph;

		for (size_t k = 0; k < steps; k++) {
			size_t idx = (k + 1) * n / steps - 1;
			double x =
				ML + (log2(v[idx]) - l2lo) / (l2hi - l2lo) * pw;
			double y = MT + ph - (double)(idx + 1) / n * ph;

			fprintf(f, "%.1f,%.1f %.1f,%.1f ", x, prevy, x, y);
			prevy = y;
		}
		fputs("\"/>\n", f);
	}
	svg_legend(f, r, false);
	fputs("</svg>\n", f);
	free(v);
	return 0;
}

static void svg_util(const struct sim_result *r, FILE *f)
{
	int pw = W - ML - MR, ph = H - MT - MB;
	double span = r->t1 - r->t0 > 0 ? r->t1 - r->t0 : 1;
	double hours = span / 3600.0;

	svg_head(f, "Forwarder utilisation over time");
	svg_axes(f, "hours since the first job start",
		 "carried bandwidth / capacity");
	for (int q = 0; q <= 4; q++) {
		double y = MT + ph - q * ph / 4.0;
		double x = ML + q * pw / 4.0;

		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			"stroke=\"#ddd\"/>\n<text x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\">%d%%</text>\n"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			"%.3g</text>\n",
			ML, y, ML + pw, y, ML - 6, y + 4, q * 25, x,
			MT + ph + 16, hours * q / 4.0);
	}
	for (size_t p = 0; p < r->n_pols; p++) {
		const struct sim_policy_result *pr = &r->pols[p];

		for (int held = 0; held < 2; held++) {
			fprintf(f,
				"<polyline fill=\"none\" stroke=\"%s\" "
				"stroke-width=\"%s\"%s points=\"",
				colours[p % 8], held ? "1" : "2",
				held ? " stroke-dasharray=\"4 3\"" : "");
			for (size_t i = 0; i < pr->n_series; i++) {
				double u = held ? pr->series[i].held
						: pr->series[i].util;
				double x = ML + (pr->series[i].t - r->t0) /
							span * pw;

				if (u > 1)
					u = 1;
				fprintf(f, "%.1f,%.1f ", x, MT + ph - u * ph);
			}
			fputs("\"/>\n", f);
		}
	}
	svg_legend(f, r, true);
	fputs("</svg>\n", f);
}

static int write_file(const char *dir, const char *name,
		      const struct sim_result *r, int which, fwd_error_t *err)
{
	char path[4096];
	FILE *f;
	int rv = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return errprintf(err, "%s: %s", path, strerror(errno));
	if (which == 0)
		rv = svg_speedup(r, f);
	else
		svg_util(r, f);
	if (rv < 0) {
		fclose(f);
		return errprintf(err, "%s: out of memory", path);
	}
	if (ferror(f) | fclose(f))
		return errprintf(err, "%s: write error: %s", path,
				 strerror(errno));
	return 0;
}

int sim_write_svgs(const struct sim_result *r, const char *dir,
		   fwd_error_t *err)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return errprintf(err, "%s: %s", dir, strerror(errno));
	if (write_file(dir, "speedup.svg", r, 0, err) < 0)
		return -1;
	return write_file(dir, "utilisation.svg", r, 1, err);
}
