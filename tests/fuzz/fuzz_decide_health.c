/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fwdctl decide --health HEALTH.json`: alloc_healthfile_parse()
 * (allocator/decision_json.c) against tests/fixtures/decide's topology,
 * then a job decided under that health.
 */
#include "config.h"

#include "tests/fuzz/fuzz_decide_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct alloc_healthfile *h;
	char *text = fuzz_cstr(data, size);

	if ((h = alloc_healthfile_parse(fz_topo, text, "health.json", &err))) {
		fz_decide(NULL, &h->health, &fz_job->job);
		alloc_healthfile_destroy(h);
	}
	free(text);
	return 0;
}
