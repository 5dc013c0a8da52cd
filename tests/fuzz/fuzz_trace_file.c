/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A trace file as `fwdctl trace summarize` reads it: by path, through
 * trace_reader_open() (profiler/summary.c, trace_job_add_file()), so the
 * file handling around the parser is covered too.
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
	struct trace_job *j;

	trace_summary_opts_default(&o);
	if (!(j = trace_job_create(&o)))
		abort();
	if (trace_job_add_file(j, fuzz_file(data, size, ".trace"), "c1", NULL,
			       &err) == 0 &&
	    trace_job_finish(j, &s, &err) == 0) {
		json_t *js = trace_summary_to_json(&s);

		if (!js)
			abort();
		json_decref(js);
		trace_summary_free(&s);
	}
	trace_job_destroy(j);
	return 0;
}
