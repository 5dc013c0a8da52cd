/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_job(), report_machine(): gather the document through the owning
 * modules (report_job.c, report_machine.c), render it as text, JSON or
 * HTML (render_text.c, render_html.c).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/array.h"
#include "common/timeutil.h"
#include "common/units.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "report/report.h"
#include "report/report_priv.h"

int64_t report_bucket(int64_t from, int64_t to, int max_points)
{
	int64_t span = to > from ? to - from : 60;
	int64_t b = (span + max_points - 1) / max_points;

	b = (b + 59) / 60 * 60;
	return b < 60 ? 60 : b;
}

static double quant(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	double frac = pos - (double)i;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + frac * (v[i + 1] - v[i]);
}

json_t *report_quantiles(double *v, size_t n)
{
	if (n == 0)
		return json_pack("{s:i,s:n,s:n,s:n,s:n,s:n}", "n", 0, "min",
				 "q1", "median", "q3", "max");
	qsort(v, n, sizeof(*v), fwd_cmp_double);
	return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f}", "n", (json_int_t)n, "min",
			 v[0], "q1", quant(v, n, 0.25), "median",
			 quant(v, n, 0.5), "q3", quant(v, n, 0.75), "max",
			 v[n - 1]);
}

json_t *report_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

const char *report_jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

double report_jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *report_rate(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		return "-";
	return units_short_rate(v, buf, len);
}

void report_time(int64_t t, char *buf, size_t len)
{
	fwd_time_format((double)t, buf, len);
}

int report_job_user(struct db *db, uint64_t job_id, char *user, size_t len,
		    fwd_error_t *err)
{
	struct ledger_job j;
	int r = ledger_store_job_get(db, job_id, &j, err);

	if (r != 0)
		return r < 0 ? -1 : REPORT_NOT_FOUND;
	if (strlen(j.user) >= len) {
		ledger_store_job_clear(&j);
		errno = ERANGE;
		return errprintf(err, "job %llu: user name longer than %zu",
				 (unsigned long long)job_id, len - 1);
	}
	memcpy(user, j.user, strlen(j.user) + 1);
	ledger_store_job_clear(&j);
	return 0;
}

/* The document as the requested format, in *out. */
static int render(json_t *doc, enum report_format fmt, bool machine, char **out,
		  fwd_error_t *err)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	if (fmt == REPORT_JSON) {
		s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (!s)
			goto oom;
		*out = s;
		return 0;
	}
	f = open_memstream(&s, &len);
	if (!f)
		goto oom;
	if (fmt == REPORT_HTML) {
		if (machine)
			report_html_machine(f, doc);
		else
			report_html_job(f, doc);
	} else if (machine) {
		report_text_machine(f, doc);
	} else {
		report_text_job(f, doc);
	}
	if (fclose(f) != 0 || !s) {
		free(s);
		goto oom;
	}
	*out = s;
	return 0;
oom:
	errno = ENOMEM;
	return errprintf(err, "rendering the report: out of memory");
}

int report_job(struct db *db, uint64_t job_id, enum report_format fmt,
	       char **out, fwd_error_t *err)
{
	json_t *doc = NULL;
	int r, rv;

	*out = NULL;
	r = report_job_doc(db, job_id, &doc, err);
	if (r != 0)
		return r < 0 ? -1 : REPORT_NOT_FOUND;
	rv = render(doc, fmt, false, out, err);
	json_decref(doc);
	return rv;
}

int report_machine(struct db *db, int64_t since, int64_t until,
		   enum report_format fmt, char **out, fwd_error_t *err)
{
	json_t *doc = NULL;
	int rv;

	*out = NULL;
	if (since >= until) {
		errno = EINVAL;
		return errprintf(err,
				 "machine report: since %lld is not "
				 "before until %lld",
				 (long long)since, (long long)until);
	}
	if (report_machine_doc(db, since, until, &doc, err) < 0)
		return -1;
	rv = render(doc, fmt, true, out, err);
	json_decref(doc);
	return rv;
}
