/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reports as one self-contained HTML page: inline CSS, charts as
 * inline SVG, no script and no network resource.  Every string from the
 * store is escaped for HTML text and attributes (job names are chosen by
 * users).  Each chart's data points carry their values in data-
 * attributes (data-t epoch seconds, data-v the rate, data-count the
 * count it was made from), so a test reads them back from the page.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/units.h"
#include "common/xml.h"
#include "report/report_priv.h"

#define W 760.0 /* chart width */
#define H 180.0 /* chart height */
#define ML 70.0 /* left margin (axis labels) */
#define MB 20.0 /* bottom margin */

static const char *when(const json_t *v, char *buf, size_t len)
{
	if (!json_is_integer(v))
		return "-";
	report_time(json_integer_value(v), buf, len);
	return buf;
}

static void head(FILE *f, const char *title_a, const char *title_b)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	      "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
	      "Policy\" content=\"default-src 'none'; style-src "
	      "'unsafe-inline'; img-src data:\">\n<title>",
	      f);
	fwd_xml_text(f, title_a);
	fwd_xml_text(f, title_b);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
	      "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}\n"
	      "table{border-collapse:collapse}td,th{padding:2px 8px;"
	      "border-bottom:1px solid #ddd;text-align:left}\n"
	      "svg{background:#fafafa;border:1px solid #ddd}\n"
	      ".legend span{margin-right:1em}.read{color:#1f77b4}"
	      ".write{color:#d62728}.ops{color:#2ca02c}.md{color:#9467bd}"
	      ".fwd{color:#8c564b}\n"
	      "</style></head><body>\n",
	      f);
}

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c",
				      "#9467bd", "#8c564b"};

/*
 * A line chart of series keys[] (rates) of `ser` over its "t", with the
 * matching counts counts[] (NULL: none) in data-count.
 */
static void line_chart(FILE *f, const char *id, const json_t *ser,
		       const char *const *keys, const char *const *counts,
		       const char *const *labels, size_t nk, bool is_rate)
{
	const json_t *t = json_object_get(ser, "t");
	size_t n = json_array_size(t), i;
	double max = 0, t0, t1;
	char buf[64];

	for (size_t k = 0; k < nk; k++) {
		const json_t *v;

		json_array_foreach (json_object_get(ser, keys[k]), i, v)
			if (json_is_number(v) && json_number_value(v) > max)
				max = json_number_value(v);
	}
	if (max <= 0)
		max = 1;
	t0 = n ? (double)json_integer_value(json_array_get(t, 0)) : 0;
	t1 = n > 1 ? (double)json_integer_value(json_array_get(t, n - 1))
		   : t0 + 1;
	fprintf(f, "<p class=\"legend\">");
	for (size_t k = 0; k < nk; k++)
		fprintf(f, "<span style=\"color:%s\">&#9632; %s</span>",
			colours[k % 5], labels[k]);
	fprintf(f,
		"</p>\n<svg id=\"%s\" class=\"chart\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"data-max=\"%.17g\" data-points=\"%zu\">\n",
		id, W, H, W, H, max, n);
	if (is_rate)
		report_rate(max, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%.0f", max);
	fprintf(f, "<text x=\"2\" y=\"12\" font-size=\"10\">%s</text>\n", buf);
	fprintf(f, "<text x=\"2\" y=\"%.0f\" font-size=\"10\">0</text>\n",
		H - MB);
	fprintf(f,
		"<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
		"stroke=\"#999\"/>\n",
		ML, H - MB, W - 5, H - MB);
	for (size_t k = 0; k < nk; k++) {
		const json_t *vals = json_object_get(ser, keys[k]);
		const json_t *cnt = counts && counts[k]
					    ? json_object_get(ser, counts[k])
					    : NULL;

		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"",
			colours[k % 5]);
		for (i = 0; i < n; i++) {
			double x = ML + (W - 5 - ML) *
						((double)json_integer_value(
							 json_array_get(t, i)) -
						 t0) /
						(t1 > t0 ? t1 - t0 : 1);
			double y = H - MB -
				   (H - MB - 15) *
					   json_number_value(
						   json_array_get(vals, i)) /
					   max;

			fprintf(f, "%s%.1f,%.1f", i ? " " : "", x, y);
		}
		fprintf(f, "\"/>\n");
		for (i = 0; i < n; i++) {
			double v = json_number_value(json_array_get(vals, i));
			json_int_t tt =
				json_integer_value(json_array_get(t, i));
			double x = ML + (W - 5 - ML) * ((double)tt - t0) /
						(t1 > t0 ? t1 - t0 : 1);
			double y = H - MB - (H - MB - 15) * v / max;

			fprintf(f,
				"<circle class=\"pt\" data-series=\"%s\" "
				"data-t=\"%lld\" data-v=\"%.17g\"",
				keys[k], (long long)tt, v);
			if (cnt)
				fprintf(f, " data-count=\"%lld\"",
					(long long)json_integer_value(
						json_array_get(cnt, i)));
			fprintf(f,
				" cx=\"%.1f\" cy=\"%.1f\" r=\"2\" "
				"fill=\"%s\"><title>%s</title></circle>\n",
				x, y, colours[k % 5],
				is_rate ? report_rate(v, buf, sizeof(buf))
					: (snprintf(buf, sizeof(buf), "%.0f",
						    v),
					   buf));
		}
	}
	fputs("</svg>\n", f);
}

/* Bytes read and written of component row e in bucket k. */
static json_int_t bytes_at(const json_t *e, size_t k)
{
	return json_integer_value(
		       json_array_get(json_object_get(e, "read_bytes"), k)) +
	       json_integer_value(
		       json_array_get(json_object_get(e, "write_bytes"), k));
}

/* A heat map: one row per component of rows[], one column per t, the
 * colour of each cell its value of `key` against the map's maximum. */
static void heat_map(FILE *f, const char *id, const json_t *rows,
		     const json_t *t, const char *key, const char *count_key)
{
	size_t nr = json_array_size(rows), nc = json_array_size(t), i, k;
	double max = 0, cw, ch = 12, lw = 130;
	const json_t *e, *v;
	char buf[64];

	json_array_foreach (rows, i, e)
		json_array_foreach (json_object_get(e, key), k, v)
			if (json_is_number(v) && json_number_value(v) > max)
				max = json_number_value(v);
	cw = nc ? (W - lw) / (double)nc : 1;
	fprintf(f,
		"<svg id=\"%s\" class=\"heat\" width=\"%.0f\" height=\"%.0f\" "
		"data-max=\"%.17g\" data-rows=\"%zu\" data-cols=\"%zu\">\n",
		id, W, ch * (double)nr + 4, max, nr, nc);
	json_array_foreach (rows, i, e) {
		const char *name = report_jstr(e, "name");

		fprintf(f, "<text x=\"2\" y=\"%.0f\" font-size=\"10\">",
			ch * (double)(i + 1) - 2);
		fwd_xml_text(f, name);
		fputs("</text>\n", f);
		json_array_foreach (json_object_get(e, key), k, v) {
			bool none = !json_is_number(v);
			double x = none ? 0 : json_number_value(v);
			double level = max > 0 ? x / max : 0;
			int shade = (int)(255 - 200 * level);

			fprintf(f, "<rect class=\"cell\" data-name=\"");
			fwd_xml_text(f, name);
			fprintf(f, "\" data-t=\"%lld\"",
				(long long)json_integer_value(
					json_array_get(t, k)));
			if (none)
				fputs(" data-v=\"\"", f);
			else
				fprintf(f, " data-v=\"%.17g\"", x);
			if (count_key)
				fprintf(f, " data-count=\"%lld\"",
					(long long)bytes_at(e, k));
			fprintf(f,
				" x=\"%.1f\" y=\"%.0f\" width=\"%.2f\" "
				"height=\"%.0f\"",
				lw + cw * (double)k, ch * (double)i + 2, cw,
				ch - 1);
			if (none)
				fputs(" fill=\"#eee\"", f);
			else
				fprintf(f, " style=\"fill:rgb(255,%d,%d)\"",
					shade, shade);
			fprintf(f, "><title>");
			fwd_xml_text(f, name);
			fprintf(f, " %s</title></rect>\n",
				none ? "no samples"
				     : (strcmp(key, "queue_len")
						? report_rate(x, buf,
							      sizeof(buf))
						: (snprintf(buf, sizeof(buf),
							    "queue %.1f", x),
						   buf)));
		}
	}
	fputs("</svg>\n", f);
}

/* UMAMI-style box plot of the history's quantiles with this run. */
static void box_plot(FILE *f, const json_t *q, double self)
{
	double mn = report_jnum(q, "min"), mx = report_jnum(q, "max"), hi;
	char buf[64];

	if (!isfinite(mn)) {
		fputs("<p>No earlier run of this application at this scale "
		      "has a summary.</p>\n",
		      f);
		return;
	}
	hi = mx;
	if (isfinite(self) && self > hi)
		hi = self;
	if (hi <= 0)
		hi = 1;
#define X(v) (ML + (W - 5 - ML) * (v) / hi)
	fprintf(f,
		"<svg id=\"history\" class=\"box\" width=\"%.0f\" "
		"height=\"60\" data-n=\"%lld\" data-min=\"%.17g\" "
		"data-q1=\"%.17g\" data-median=\"%.17g\" data-q3=\"%.17g\" "
		"data-max=\"%.17g\" data-this=\"%.17g\">\n",
		W, (long long)report_jnum(q, "n"), mn, report_jnum(q, "q1"),
		report_jnum(q, "median"), report_jnum(q, "q3"), mx,
		isfinite(self) ? self : -1);
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"30\" x2=\"%.1f\" y2=\"30\" "
		"stroke=\"#555\"/>\n",
		X(mn), X(mx));
	fprintf(f,
		"<rect x=\"%.1f\" y=\"15\" width=\"%.1f\" height=\"30\" "
		"fill=\"#cde\" stroke=\"#555\"/>\n",
		X(report_jnum(q, "q1")),
		X(report_jnum(q, "q3")) - X(report_jnum(q, "q1")));
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"15\" x2=\"%.1f\" y2=\"45\" "
		"stroke=\"#000\" stroke-width=\"2\"/>\n",
		X(report_jnum(q, "median")), X(report_jnum(q, "median")));
	if (isfinite(self))
		fprintf(f,
			"<circle cx=\"%.1f\" cy=\"30\" r=\"5\" "
			"fill=\"#d62728\">"
			"<title>this run %s</title></circle>\n",
			X(self), report_rate(self, buf, sizeof(buf)));
	fprintf(f, "<text x=\"2\" y=\"34\" font-size=\"10\">%s</text>\n",
		report_rate(hi, buf, sizeof(buf)));
	fputs("</svg>\n", f);
#undef X
}

void report_html_job(FILE *f, const json_t *doc)
{
	const json_t *j = json_object_get(doc, "job"),
		     *sum = json_object_get(doc, "summary"),
		     *ser = json_object_get(doc, "series"),
		     *fs = json_object_get(doc, "forwarder_series"),
		     *dec = json_object_get(doc, "decision"),
		     *hist = json_object_get(doc, "history"), *e, *v;
	static const char *const rk[] = {"read_bps", "write_bps"},
				 *rc[] = {"read_bytes", "write_bytes"},
				 *rl[] = {"read", "write"},
				 *ok[] = {"iops", "mdops_rate"},
				 *oc[] = {"ops", "md_ops"},
				 *ol[] = {"I/O operations/s",
					  "metadata operations/s"};
	char id[32], a[64], b[64], c[64];
	size_t i, k;

	snprintf(id, sizeof(id), "%lld",
		 (long long)json_integer_value(json_object_get(j, "job_id")));
	head(f, "fwdalloc report: job ", id);
	fprintf(f, "<h1>Job %s: <span id=\"job-name\">", id);
	fwd_xml_text(f, report_jstr(j, "name"));
	fputs("</span></h1>\n<table id=\"job\">\n<tr><th>user</th><td>", f);
	fwd_xml_text(f, report_jstr(j, "user"));
	fputs("</td></tr>\n<tr><th>account</th><td>", f);
	fwd_xml_text(f, report_jstr(j, "account"));
	fputs("</td></tr>\n<tr><th>nodes</th><td>", f);
	fprintf(f, "%lld: ",
		(long long)json_integer_value(
			json_object_get(j, "node_count")));
	fwd_xml_text(f, report_jstr(j, "nodelist"));
	fprintf(f, "</td></tr>\n<tr><th>run</th><td>%s to %s (%s)</td></tr>\n",
		when(json_object_get(j, "start_at"), a, sizeof(a)),
		when(json_object_get(j, "end_at"), b, sizeof(b)),
		report_jstr(j, "state"));
	fputs("</table>\n", f);

	fputs("<h2>I/O over time</h2>\n", f);
	if (json_is_object(sum)) {
		fprintf(f, "<p>Summary from %s: read ",
			report_jstr(sum, "source"));
		fprintf(f,
			"%.3g GB, written %.3g GB, I/O mode %s, peak %s.</p>\n",
			report_jnum(sum, "read_bytes") / 1e9,
			report_jnum(sum, "write_bytes") / 1e9,
			report_jstr(sum, "io_mode"),
			report_rate(report_jnum(sum, "peak_bandwidth_bps"), c,
				    sizeof(c)));
	}
	if (json_is_string(json_object_get(ser, "source"))) {
		fprintf(f, "<p>From %s, per %lld s.</p>\n",
			report_jstr(ser, "source"),
			(long long)json_integer_value(
				json_object_get(ser, "bucket")));
		line_chart(f, "job-bandwidth", ser, rk, rc, rl, 2, true);
		line_chart(f, "job-ops", ser, ok, oc, ol, 2, true);
	} else {
		fputs("<p>No job_stats, traces or Darshan phases of this "
		      "job: no time series.</p>\n",
		      f);
	}
	if (json_is_object(fs)) {
		static const char *const fk[] = {"read_bps", "write_bps"};
		static const char *const fl[] = {"forwarders read",
						 "forwarders write"};

		fputs("<h2>Its forwarders during the run (shared with other "
		      "jobs)</h2>\n",
		      f);
		line_chart(f, "forwarder-bandwidth", fs, fk, rc, fl, 2, true);
	}

	fputs("<h2>Decision</h2>\n<table id=\"decision\">\n", f);
	fputs("<tr><th>action</th><td>", f);
	fwd_xml_text(f, json_is_string(json_object_get(dec, "action"))
				? report_jstr(dec, "action")
				: "none recorded");
	fputs("</td></tr>\n<tr><th>outcome</th><td>", f);
	fwd_xml_text(f, report_jstr(dec, "outcome"));
	fputs("</td></tr>\n", f);
	json_array_foreach (json_object_get(dec, "reasons"), i, v) {
		fputs("<tr><th>reason</th><td>", f);
		fwd_xml_text(f, json_string_value(v));
		fputs("</td></tr>\n", f);
	}
	fprintf(f,
		"<tr><th>expected</th><td id=\"expected\" "
		"data-v=\"%.17g\">%s</td></tr>\n"
		"<tr><th>achieved</th><td id=\"achieved\" "
		"data-v=\"%.17g\">%s</td></tr>\n</table>\n",
		isfinite(report_jnum(dec, "expected_bps"))
			? report_jnum(dec, "expected_bps")
			: -1,
		report_rate(report_jnum(dec, "expected_bps"), a, sizeof(a)),
		isfinite(report_jnum(dec, "achieved_bps"))
			? report_jnum(dec, "achieved_bps")
			: -1,
		report_rate(report_jnum(dec, "achieved_bps"), b, sizeof(b)));

	fputs("<h2>Components: this run against their usual load</h2>\n"
	      "<table id=\"components\"><tr><th>kind</th><th>name</th>"
	      "<th>during</th><th>usual (hourly median: forwarders the week "
	      "before, "
	      "targets the day before)</th><th>queue</th><th>the job's "
	      "bytes there</th></tr>\n",
	      f);
	json_array_foreach (json_object_get(doc, "components"), i, e) {
		fputs("<tr><td>", f);
		fwd_xml_text(f, report_jstr(e, "kind"));
		fputs("</td><td>", f);
		fwd_xml_text(f, report_jstr(e, "name"));
		fprintf(f, "</td><td data-v=\"%.17g\">%s</td><td>%s</td>",
			report_jnum(e, "during_bps"),
			report_rate(report_jnum(e, "during_bps"), a, sizeof(a)),
			report_rate(report_jnum(json_object_get(e, "usual_bps"),
						"median"),
				    b, sizeof(b)));
		if (json_is_number(json_object_get(e, "queue_len")))
			fprintf(f, "<td>%.1f</td>",
				report_jnum(e, "queue_len"));
		else
			fputs("<td>-</td>", f);
		if (json_object_get(e, "job"))
			fprintf(f, "<td>%.3g GB</td></tr>\n",
				(report_jnum(json_object_get(e, "job"),
					     "read_bytes") +
				 report_jnum(json_object_get(e, "job"),
					     "write_bytes")) /
					1e9);
		else
			fputs("<td>-</td></tr>\n", f);
	}
	fputs("</table>\n", f);

	fprintf(f, "<h2>History: %zu earlier runs at %lld-%lld nodes</h2>\n",
		json_array_size(json_object_get(hist, "runs")),
		(long long)json_integer_value(
			json_object_get(hist, "nodes_min")),
		(long long)json_integer_value(
			json_object_get(hist, "nodes_max")));
	box_plot(f, json_object_get(hist, "bandwidth_bps"),
		 report_jnum(hist, "this_bandwidth_bps"));

	fputs("<h2>Health during the run</h2>\n<ul id=\"health\">\n", f);
	json_array_foreach (json_object_get(doc, "health"), i, e) {
		fputs("<li>", f);
		fwd_xml_text(f, report_jstr(e, "kind"));
		fputc(' ', f);
		fwd_xml_text(f, report_jstr(e, "name"));
		fputc(' ', f);
		fwd_xml_text(f, report_jstr(e, "state"));
		fputs(": ", f);
		fwd_xml_text(f, report_jstr(e, "reason"));
		fputs("</li>\n", f);
	}
	if (!json_array_size(json_object_get(doc, "health")))
		fputs("<li>every component ok</li>\n", f);
	fputs("</ul>\n<h2>Neighbours on its forwarders</h2>\n<ul "
	      "id=\"neighbours\">\n",
	      f);
	json_array_foreach (json_object_get(doc, "neighbours"), i, e) {
		fprintf(f, "<li>job %lld (",
			(long long)json_integer_value(
				json_object_get(e, "job_id")));
		fwd_xml_text(f, report_jstr(e, "io_mode"));
		fprintf(f, ")%s on",
			json_is_true(json_object_get(e, "disruptive"))
				? " <b>disruptive</b>"
				: "");
		json_array_foreach (json_object_get(e, "shared"), k, v) {
			fputc(' ', f);
			fwd_xml_text(f, json_string_value(v));
		}
		fputs("</li>\n", f);
	}
	if (!json_array_size(json_object_get(doc, "neighbours")))
		fputs("<li>none</li>\n", f);
	fputs("</ul>\n<h2>Advice</h2>\n<ul id=\"advice\">\n", f);
	json_array_foreach (json_object_get(doc, "advice"), i, e) {
		fputs("<li><b>", f);
		fwd_xml_text(f, report_jstr(e, "rule"));
		fputs("</b>: ", f);
		fwd_xml_text(f, report_jstr(e, "text"));
		fputs("</li>\n", f);
	}
	if (!json_array_size(json_object_get(doc, "advice")))
		fputs("<li>none</li>\n", f);
	fputs("</ul>\n</body></html>\n", f);
}

void report_html_machine(FILE *f, const json_t *doc)
{
	const json_t *r = json_object_get(doc, "range"),
		     *comps = json_object_get(doc, "components"),
		     *t = json_object_get(doc, "t"), *e;
	static const struct {
		const char *kind, *title;
	} k[] = {{"fwd", "Forwarders"}, {"ost", "OSTs"}, {"mdt", "MDTs"}};
	char a[64], b[64], id[32];
	size_t i, x;

	head(f, "fwdalloc report: machine ", report_jstr(r, "start"));
	fprintf(f, "<h1>Machine I/O from %s to %s</h1>\n<p>Per %lld s.</p>\n",
		report_jstr(r, "start"), report_jstr(r, "end"),
		(long long)json_integer_value(json_object_get(r, "bucket")));
	for (x = 0; x < 3; x++) {
		const json_t *rows = json_object_get(comps, k[x].kind);

		fprintf(f, "<h2>%s: bandwidth</h2>\n", k[x].title);
		if (!json_array_size(rows)) {
			fputs("<p>No samples in the range.</p>\n", f);
			continue;
		}
		snprintf(id, sizeof(id), "heat-%s-bps", k[x].kind);
		heat_map(f, id, rows, t, "bps", "bytes");
		if (!strcmp(k[x].kind, "mdt")) {
			fprintf(f, "<h2>%s: metadata operations</h2>\n",
				k[x].title);
			heat_map(f, "heat-mdt-mdops", rows, t, "md_ops", NULL);
		}
		fprintf(f, "<h2>%s: queue length</h2>\n", k[x].title);
		snprintf(id, sizeof(id), "heat-%s-queue", k[x].kind);
		heat_map(f, id, rows, t, "queue_len", NULL);
	}
	fputs("<h2>Health episodes</h2>\n<ul id=\"health\">\n", f);
	json_array_foreach (json_object_get(doc, "health"), i, e) {
		fputs("<li>", f);
		fwd_xml_text(f, report_jstr(e, "kind"));
		fputc(' ', f);
		fwd_xml_text(f, report_jstr(e, "name"));
		fputc(' ', f);
		fwd_xml_text(f, report_jstr(e, "state"));
		fprintf(f, " from %s to %s: ",
			when(json_object_get(e, "start_at"), a, sizeof(a)),
			when(json_object_get(e, "end_at"), b, sizeof(b)));
		fwd_xml_text(f, report_jstr(e, "reason"));
		fputs("</li>\n", f);
	}
	if (!json_array_size(json_object_get(doc, "health")))
		fputs("<li>none</li>\n", f);
	fputs("</ul>\n<h2>Allocations</h2>\n", f);
	{
		json_t *ser =
			json_pack("{s:O,s:O}", "t", t, "held",
				  json_object_get(doc, "forwarders_held"));
		static const char *const hk[] = {"held"};
		static const char *const hl[] = {"forwarders held by "
						 "fwdalloc"};
		json_t *h = json_object_get(ser, "held"), *v;
		json_t *d = json_array();

		json_array_foreach (h, i, v)
			json_array_append_new(
				d, json_real((double)json_integer_value(v)));
		json_object_set_new(ser, "held", d);
		line_chart(f, "allocations-held", ser, hk, NULL, hl, 1, false);
		json_decref(ser);
	}
	fputs("<table id=\"allocations\"><tr><th>job</th><th>action</th>"
	      "<th>forwarders</th><th>from</th><th>to</th></tr>\n",
	      f);
	json_array_foreach (json_object_get(doc, "allocations"), i, e) {
		const json_t *v;
		size_t y;

		fprintf(f, "<tr><td>%lld</td><td>",
			(long long)json_integer_value(
				json_object_get(e, "job_id")));
		fwd_xml_text(f, report_jstr(e, "action"));
		fputs("</td><td>", f);
		json_array_foreach (json_object_get(e, "forwarders"), y, v) {
			if (y)
				fputc(' ', f);
			fwd_xml_text(f, json_string_value(v));
		}
		fprintf(f, "</td><td>%s</td><td>%s</td></tr>\n",
			when(json_object_get(e, "acquired_at"), a, sizeof(a)),
			when(json_object_get(e, "released_at"), b, sizeof(b)));
	}
	fputs("</table>\n</body></html>\n", f);
}
