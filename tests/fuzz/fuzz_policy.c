/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy loader (policies/policy_load.c through common/yamldoc.c), as
 * `fwdctl --policy FILE` calls it.  A policy it accepts must print (JSON
 * and YAML), and the YAML it prints must load again.
 */
#include "config.h"

#include "policies/policy.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct policy *p, *again;
	char *json, *yaml;

	p = policy_load(fuzz_file(data, size, ".yaml"), &err);
	if (!p)
		return 0;
	json = policy_to_json(p);
	yaml = policy_to_yaml(p);
	if (!json || !yaml)
		abort();
	again = policy_load(
		fuzz_file((const uint8_t *)yaml, strlen(yaml), ".yaml"), &err);
	if (!again) {
		fprintf(stderr, "printed policy does not load: %s\n%s\n",
			err.text, yaml);
		abort();
	}
	policy_destroy(again);
	free(json);
	free(yaml);
	policy_destroy(p);
	return 0;
}
