/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compute-node trace parser (profiler/trace.c): every line through
 * trace_parse_line() and its canonical re-formatting, then the whole input
 * through the reader and the first-pass compression, whose output must
 * read back as the same number of records.
 */
#include "config.h"

#include "profiler/trace.h"
#include "tests/fuzz/fuzz.h"

static void each_line(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size), *line = text, *nl;

	for (;;) {
		struct trace_rec rec;
		fwd_error_t err = {{0}};
		char buf[TRACE_LINE_MAX + 64];

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (trace_parse_line(line, &rec, &err) == 1)
			trace_format_raw(&rec, 0, buf, sizeof(buf));
		if (!nl)
			break;
		line = nl + 1;
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct trace_reader *r, *back;
	struct trace_writer *w;
	struct trace_rec rec;
	FILE *in, *out;
	char *buf = NULL;
	size_t len = 0;
	uint64_t records;
	int rv;

	each_line(data, size);
	if (!(in = fuzz_stream(data, size)))
		return 0;
	if (!(r = trace_reader_fdopen(in, "fuzz", &err))) {
		fclose(in);
		return 0;
	}
	if (!(out = open_memstream(&buf, &len)) ||
	    !(w = trace_writer_create(out, "fuzz")))
		abort();
	while ((rv = trace_reader_next(r, &rec, &err)) == 1)
		if (trace_writer_add(w, &rec))
			abort();
	if (trace_writer_finish(w))
		abort();
	records = trace_writer_records(w);
	trace_writer_destroy(w);
	trace_reader_destroy(r);
	fclose(in);
	if (fclose(out))
		abort();
	/* what was written must read back whole */
	if (rv == 0) {
		uint64_t n = 0;

		if (!(in = fmemopen(buf, len, "r")) ||
		    !(back = trace_reader_fdopen(in, "compressed", &err))) {
			fprintf(stderr, "compressed output unreadable: %s\n",
				err.text);
			abort();
		}
		while ((rv = trace_reader_next(back, &rec, &err)) == 1)
			n += rec.n;
		if (rv != 0 || n != records) {
			fprintf(stderr,
				"compressed output reads back as %llu of %llu "
				"records: %s\n",
				(unsigned long long)n,
				(unsigned long long)records, err.text);
			abort();
		}
		trace_reader_destroy(back);
		fclose(in);
	}
	free(buf);
	return 0;
}
