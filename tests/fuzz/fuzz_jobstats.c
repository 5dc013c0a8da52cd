/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fwdctl ingest --format jobstats`: the streaming Lustre job_stats parser
 * (monitor/ingest_jobstats.c), with and without a default target (the
 * first input byte chooses), read to the end as the command does: after a
 * bad entry or a syntax error it goes on.
 */
#include "config.h"

#include "monitor/ingest.h"
#include "tests/fuzz/fuzz.h"

static struct jobstats_rec rec;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct jobstats_parser *p;
	const char *target;
	FILE *in;
	size_t errors = 0;
	int n;

	if (size < 1)
		return 0;
	target = data[0] & 1 ? "lustre-OST0000" : NULL;
	if (!(in = fuzz_stream(data + 1, size - 1)))
		return 0;
	if (!(p = jobstats_open(in, target, &err))) {
		fclose(in);
		return 0;
	}
	/* each error consumes input: more errors than input bytes is a
	 * parser that loops on an error */
	while ((n = jobstats_next(p, &rec, &err)) != 0)
		if (n < 0 && ++errors > size + 16) {
			fprintf(stderr, "jobstats_next loops: %s\n", err.text);
			abort();
		}
	(void)jobstats_lines(p);
	jobstats_close(p);
	fclose(in);
	return 0;
}
