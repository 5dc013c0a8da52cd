/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compressed-trace reader (profiler/trace.c) on a memory stream, each
 * run expanded at its ends (as `fwdctl trace expand` prints it), and the
 * records summarised as one node's trace (profiler/summary.c, as `fwdctl
 * trace summarize` does).
 */
#include "config.h"

#include "profiler/summary.h"
#include "profiler/trace.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct trace_summary_opts o;
	struct trace_summary s;
	struct trace_reader *r;
	struct trace_job *j;
	struct trace_rec rec;
	FILE *in;
	int rv;

	if (!(in = fuzz_stream(data, size)))
		return 0;
	if (!(r = trace_reader_fdopen(in, "fuzz", &err))) {
		fclose(in);
		return 0;
	}
	trace_summary_opts_default(&o);
	if (!(j = trace_job_create(&o)))
		abort();
	rv = trace_job_node_begin(
		j, trace_reader_node(r) ? trace_reader_node(r) : "c1", &err);
	while (rv == 0 && (rv = trace_reader_next(r, &rec, &err)) == 1) {
		char buf[TRACE_LINE_MAX + 64];

		trace_format_raw(&rec, 0, buf, sizeof(buf));
		if (rec.n > 1)
			trace_format_raw(&rec, rec.n - 1, buf, sizeof(buf));
		rv = trace_job_add(j, &rec, &err);
	}
	if (rv == 0 && trace_job_node_end(j, &err) == 0 &&
	    trace_job_finish(j, &s, &err) == 0) {
		json_t *o_json = trace_summary_to_json(&s);

		if (!o_json)
			abort();
		json_decref(o_json);
		trace_summary_free(&s);
	}
	trace_job_destroy(j);
	trace_reader_destroy(r);
	fclose(in);
	return 0;
}
