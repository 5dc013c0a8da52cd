/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reports as text: the figures of the document (report_priv.h), with
 * units and ISO 8601 times.  Stored strings (job names) are printed with
 * control characters escaped.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/units.h"
#include "report/report_priv.h"

/* s with control characters as \xNN, so a job name cannot move the
 * cursor or forge lines. */
static void put_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static const char *size(double v, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	size_t u = 0;

	if (!isfinite(v) || v < 0)
		return "-";
	while (v >= 1000 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, "%.3g%s", v, unit[u]);
	return buf;
}

static const char *when(const json_t *v, char *buf, size_t len)
{
	if (!json_is_integer(v))
		return "-";
	report_time(json_integer_value(v), buf, len);
	return buf;
}

/* One health episode: "  KIND NAME STATE from T to T|now: REASON". */
static void episode_line(FILE *f, const json_t *e)
{
	char a[64], b[64];

	fprintf(f, "  %s %s %s from %s to %s: ", report_jstr(e, "kind"),
		report_jstr(e, "name"), report_jstr(e, "state"),
		when(json_object_get(e, "start_at"), a, sizeof(a)),
		json_is_integer(json_object_get(e, "end_at"))
			? when(json_object_get(e, "end_at"), b, sizeof(b))
			: "now");
	put_str(f, report_jstr(e, "reason"));
	fputc('\n', f);
}

static void quantiles(FILE *f, const json_t *q, bool is_rate)
{
	static const char *const k[] = {"min", "q1", "median", "q3", "max"};
	char buf[64];

	for (size_t i = 0; i < 5; i++) {
		double v = report_jnum(q, k[i]);

		fprintf(f, "%s%s %s", i ? ", " : "", k[i],
			is_rate ? report_rate(v, buf, sizeof(buf))
			: isfinite(v)
				? (snprintf(buf, sizeof(buf), "%.0f s", v), buf)
				: "-");
	}
}

void report_text_job(FILE *f, const json_t *doc)
{
	const json_t *j = json_object_get(doc, "job"),
		     *sum = json_object_get(doc, "summary"),
		     *ser = json_object_get(doc, "series"),
		     *dec = json_object_get(doc, "decision"),
		     *hist = json_object_get(doc, "history"), *v, *e;
	char a[64], b[64], c[64], d[64];
	size_t i;

	fprintf(f, "job %lld  ",
		(long long)json_integer_value(json_object_get(j, "job_id")));
	put_str(f, report_jstr(j, "name"));
	fprintf(f, "\n  user ");
	put_str(f, report_jstr(j, "user"));
	fprintf(f, ", %lld nodes ",
		(long long)json_integer_value(
			json_object_get(j, "node_count")));
	put_str(f, report_jstr(j, "nodelist"));
	fprintf(f, ", state %s", report_jstr(j, "state"));
	if (*report_jstr(j, "request"))
		fprintf(f, ", --io-upgrade=%s", report_jstr(j, "request"));
	fprintf(f, "\n  ran %s to %s\n",
		when(json_object_get(j, "start_at"), a, sizeof(a)),
		json_is_integer(json_object_get(j, "end_at"))
			? when(json_object_get(j, "end_at"), b, sizeof(b))
			: "(running)");

	fprintf(f, "\nI/O\n");
	if (json_is_object(sum)) {
		fprintf(f,
			"  summary (%s): read %s, written %s, mode %s, %lld "
			"I/O nodes, %lld metadata ops\n",
			report_jstr(sum, "source"),
			size(report_jnum(sum, "read_bytes"), a, sizeof(a)),
			size(report_jnum(sum, "write_bytes"), b, sizeof(b)),
			report_jstr(sum, "io_mode"),
			(long long)json_integer_value(
				json_object_get(sum, "io_nodes")),
			(long long)json_integer_value(
				json_object_get(sum, "mdops")));
		fprintf(f, "  peak %s, IOPS %.0f, metadata %.1f ops/s\n",
			report_rate(report_jnum(sum, "peak_bandwidth_bps"), a,
				    sizeof(a)),
			isfinite(report_jnum(sum, "iops"))
				? report_jnum(sum, "iops")
				: 0,
			isfinite(report_jnum(sum, "mdops_rate"))
				? report_jnum(sum, "mdops_rate")
				: 0);
	} else {
		fprintf(f, "  no summary of this job yet (fwdctl history "
			   "run makes one)\n");
	}
	if (json_is_string(json_object_get(ser, "source"))) {
		const json_t *t = json_object_get(ser, "t");

		fprintf(f, "  over time (%s, per %lld s):\n",
			report_jstr(ser, "source"),
			(long long)json_integer_value(
				json_object_get(ser, "bucket")));
		fprintf(f, "  %-20s  %12s  %12s  %10s  %10s\n", "TIME", "READ",
			"WRITE", "IOPS", "MD OPS/S");
		json_array_foreach (t, i, v) {
			double r = json_number_value(json_array_get(
				       json_object_get(ser, "read_bps"), i)),
			       w = json_number_value(json_array_get(
				       json_object_get(ser, "write_bps"), i)),
			       io = json_number_value(json_array_get(
				       json_object_get(ser, "iops"), i)),
			       md = json_number_value(json_array_get(
				       json_object_get(ser, "mdops_rate"), i));

			if (r == 0 && w == 0 && io == 0 && md == 0)
				continue;
			fprintf(f, "  %-20s  %12s  %12s  %10.1f  %10.1f\n",
				when(v, a, sizeof(a)),
				report_rate(r, b, sizeof(b)),
				report_rate(w, c, sizeof(c)), io, md);
		}
	} else {
		fprintf(f, "  no job_stats, traces or Darshan phases of this "
			   "job: no time series\n");
	}

	fprintf(f, "\ndecision\n");
	if (json_is_string(json_object_get(dec, "action")))
		fprintf(f, "  action %s%s%s\n", report_jstr(dec, "action"),
			*report_jstr(dec, "outcome") ? ", outcome " : "",
			report_jstr(dec, "outcome"));
	else
		fprintf(f, "  no decision recorded (the job ran without "
			   "fwdalloc's prolog)\n");
	json_array_foreach (json_object_get(dec, "reasons"), i, v) {
		fprintf(f, "  reason: ");
		put_str(f, json_string_value(v));
		fputc('\n', f);
	}
	json_array_foreach (json_object_get(dec, "allocations"), i, v)
		fprintf(f, "  %-10s %-8s %-14s %s\n",
			report_jstr(v, "forwarder"),
			json_is_true(json_object_get(v, "private")) ? "private"
								    : "shared",
			report_jstr(v, "action"), report_jstr(v, "nodes"));
	fprintf(f, "  expected %s, achieved %s\n",
		report_rate(report_jnum(dec, "expected_bps"), a, sizeof(a)),
		report_rate(report_jnum(dec, "achieved_bps"), b, sizeof(b)));

	fprintf(f, "\ncomponents during the run (usual: hourly median, "
		   "forwarders over the week before, OSTs and MDTs the day "
		   "before)\n");
	fprintf(f, "  %-4s %-20s %12s %12s %12s %8s %10s\n", "KIND", "NAME",
		"DURING", "USUAL", "PEAK", "QUEUE", "JOB'S");
	json_array_foreach (json_object_get(doc, "components"), i, e) {
		const json_t *q = json_object_get(e, "queue_len");
		const json_t *jb = json_object_get(e, "job");

		fprintf(f, "  %-4s %-20s %12s %12s %12s ",
			report_jstr(e, "kind"), report_jstr(e, "name"),
			report_rate(report_jnum(e, "during_bps"), a, sizeof(a)),
			report_rate(report_jnum(json_object_get(e, "usual_bps"),
						"median"),
				    b, sizeof(b)),
			report_rate(report_jnum(e, "peak_bps"), c, sizeof(c)));
		if (json_is_number(q))
			fprintf(f, "%8.1f", json_number_value(q));
		else
			fprintf(f, "%8s", "-");
		/* the job's own bytes there (its job_stats) */
		fprintf(f, " %10s\n",
			jb ? size(report_jnum(jb, "read_bytes") +
					  report_jnum(jb, "write_bytes"),
				  d, sizeof(d))
			   : "-");
	}

	fprintf(f,
		"\nhistory: %lld earlier runs of this application at "
		"%lld-%lld nodes\n",
		(long long)json_array_size(json_object_get(hist, "runs")),
		(long long)json_integer_value(
			json_object_get(hist, "nodes_min")),
		(long long)json_integer_value(
			json_object_get(hist, "nodes_max")));
	fprintf(f, "  bandwidth: ");
	quantiles(f, json_object_get(hist, "bandwidth_bps"), true);
	fprintf(f, "\n  this run:  %s\n",
		report_rate(report_jnum(hist, "this_bandwidth_bps"), a,
			    sizeof(a)));
	fprintf(f, "  runtime:   ");
	quantiles(f, json_object_get(hist, "runtime"), false);
	fputc('\n', f);
	json_array_foreach (json_object_get(hist, "curve"), i, e)
		fprintf(f, "  %lld forwarders: median %s over %lld runs\n",
			(long long)json_integer_value(
				json_object_get(e, "forwarders")),
			report_rate(report_jnum(e, "median_bps"), a, sizeof(a)),
			(long long)json_integer_value(
				json_object_get(e, "runs")));

	fprintf(f, "\nhealth during the run\n");
	if (!json_array_size(json_object_get(doc, "health")))
		fprintf(f, "  every component ok\n");
	json_array_foreach (json_object_get(doc, "health"), i, e) {
		episode_line(f, e);
	}

	fprintf(f, "\nneighbours on its forwarders\n");
	if (!json_array_size(json_object_get(doc, "neighbours")))
		fprintf(f, "  none\n");
	json_array_foreach (json_object_get(doc, "neighbours"), i, e) {
		size_t k;

		fprintf(f, "  job %lld (%s, %.0f md ops/s, %s)%s on",
			(long long)json_integer_value(
				json_object_get(e, "job_id")),
			*report_jstr(e, "io_mode") ? report_jstr(e, "io_mode")
						   : "mode ?",
			report_jnum(e, "mdops_rate"),
			report_rate(report_jnum(e, "bandwidth_bps"), d,
				    sizeof(d)),
			json_is_true(json_object_get(e, "disruptive"))
				? " disruptive"
				: "");
		json_array_foreach (json_object_get(e, "shared"), k, v)
			fprintf(f, " %s", json_string_value(v));
		fputc('\n', f);
	}

	fprintf(f, "\nadvice\n");
	if (!json_array_size(json_object_get(doc, "advice")))
		fprintf(f, "  none: no rule of 'fwdctl report --help' "
			   "matched\n");
	json_array_foreach (json_object_get(doc, "advice"), i, e)
		fprintf(f, "  %s: %s\n", report_jstr(e, "rule"),
			report_jstr(e, "text"));
}

void report_text_machine(FILE *f, const json_t *doc)
{
	const json_t *r = json_object_get(doc, "range"),
		     *comps = json_object_get(doc, "components"),
		     *t = json_object_get(doc, "t"), *e, *v;
	static const char *const kinds[] = {"fwd", "ost", "mdt"};
	char a[64], b[64], c[64];
	size_t i, k;

	fprintf(f, "machine I/O from %s to %s (per %lld s)\n",
		report_jstr(r, "start"), report_jstr(r, "end"),
		(long long)json_integer_value(json_object_get(r, "bucket")));
	for (size_t x = 0; x < 3; x++) {
		const json_t *rows = json_object_get(comps, kinds[x]);

		fprintf(f, "\n%s: %zu with samples\n", kinds[x],
			json_array_size(rows));
		if (!json_array_size(rows))
			continue;
		fprintf(f, "  %-20s %12s %12s %12s %10s\n", "NAME", "MEAN",
			"PEAK", "PEAK AT", "MD OPS");
		json_array_foreach (rows, i, e) {
			double sum = 0, peak = 0;
			json_int_t md = 0;
			size_t at = 0;

			json_array_foreach (json_object_get(e, "bps"), k, v) {
				double bps = json_number_value(v);

				sum += bps;
				if (bps > peak) {
					peak = bps;
					at = k;
				}
				md += json_integer_value(json_array_get(
					json_object_get(e, "md_ops"), k));
			}
			fprintf(f, "  %-20s %12s %12s %12s %10lld\n",
				report_jstr(e, "name"),
				report_rate(
					json_array_size(t)
						? sum / (double)json_array_size(
								t)
						: 0,
					a, sizeof(a)),
				report_rate(peak, b, sizeof(b)),
				peak > 0 ? when(json_array_get(t, at), c,
						sizeof(c))
					 : "-",
				(long long)md);
		}
	}
	fprintf(f, "\nhealth episodes: %zu\n",
		json_array_size(json_object_get(doc, "health")));
	json_array_foreach (json_object_get(doc, "health"), i, e) {
		episode_line(f, e);
	}
	fprintf(f, "\nallocations: %zu jobs\n",
		json_array_size(json_object_get(doc, "allocations")));
	json_array_foreach (json_object_get(doc, "allocations"), i, e) {
		fprintf(f, "  job %lld %s from %s to %s:",
			(long long)json_integer_value(
				json_object_get(e, "job_id")),
			report_jstr(e, "action"),
			when(json_object_get(e, "acquired_at"), a, sizeof(a)),
			json_is_integer(json_object_get(e, "released_at"))
				? when(json_object_get(e, "released_at"), b,
				       sizeof(b))
				: "(held)");
		json_array_foreach (json_object_get(e, "forwarders"), k, v)
			fprintf(f, " %s", json_string_value(v));
		fputc('\n', f);
	}
}
