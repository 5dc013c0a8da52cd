/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fwdctl ingest --format influx`: the bounded line reader and
 * influx_parse_line() (monitor/ingest_util.c, monitor/ingest_influx.c).
 */
#include "config.h"

#include "monitor/ingest.h"
#include "tests/fuzz/fuzz.h"

static struct ingest_reader rd;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line;
	bool trunc;
	FILE *in;

	if (!(in = fuzz_stream(data, size)))
		return 0;
	ingest_reader_init(&rd, in);
	while ((line = ingest_reader_next(&rd, &trunc))) {
		fwd_error_t err = {{0}};
		struct influx_rec rec;

		if (!trunc)
			influx_parse_line(line, 1472292884000000000LL, &rec,
					  &err);
	}
	fclose(in);
	return 0;
}
