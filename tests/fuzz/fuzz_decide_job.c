/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fwdctl decide --job JOB.json`: alloc_jobfile_parse()
 * (allocator/decision_json.c) against tests/fixtures/decide's topology,
 * then the decision for the parsed job with an empty ledger.
 */
#include "config.h"

#include "tests/fuzz/fuzz_decide_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct alloc_jobfile *j;
	char *text = fuzz_cstr(data, size);

	if ((j = alloc_jobfile_parse(fz_topo, text, "job.json", &err))) {
		fz_decide(NULL, NULL, &j->job);
		alloc_jobfile_destroy(j);
	}
	free(text);
	return 0;
}
