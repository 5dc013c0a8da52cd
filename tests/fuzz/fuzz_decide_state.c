/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fwdctl decide --state STATE.json`: alloc_state_parse()
 * (allocator/decision_json.c) into a ledger of tests/fixtures/decide's
 * topology; an accepted ledger prints, and a job is decided against it.
 */
#include "config.h"

#include "tests/fuzz/fuzz_decide_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct alloc_ledger *l;
	char *text = fuzz_cstr(data, size), *json;

	if (!(l = alloc_ledger_create(fz_topo)))
		abort();
	if (alloc_state_parse(l, text, "state.json", &err) == 0) {
		if (!(json = alloc_state_to_json(l, 0)))
			abort();
		free(json);
		fz_decide(l, NULL, &fz_job->job);
	}
	alloc_ledger_destroy(l);
	free(text);
	return 0;
}
