/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_TESTS_FUZZ_DECIDE_COMMON_H
#define FWD_TESTS_FUZZ_DECIDE_COMMON_H

/*
 * The fixed world of the decide targets: the policy, topology and job of
 * tests/fixtures/decide (loaded once), and one decision against it with
 * whatever the target parsed in.
 */

#include "allocator/decide.h"
#include "allocator/decision_json.h"
#include "allocator/ledger.h"
#include "policies/policy.h"
#include "tests/fuzz/fuzz.h"
#include "topology/topology.h"

static struct policy *fz_policy;
static struct topology *fz_topo;
static struct alloc_ctx *fz_ctx;
static struct alloc_jobfile *fz_job;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fwd_error_t err = {{0}};

	fz_policy = policy_load(FIXTURES "/decide/policy.yaml", &err);
	FUZZ_REQUIRE(fz_policy, "decide/policy.yaml");
	fz_topo = topo_load(FIXTURES "/decide/topology.yaml", &err);
	FUZZ_REQUIRE(fz_topo, "decide/topology.yaml");
	fz_ctx = alloc_ctx_create(fz_topo, &err);
	FUZZ_REQUIRE(fz_ctx, "the decision context");
	fz_job = alloc_jobfile_load(fz_topo, FIXTURES "/decide/job-lammps.json",
				    &err);
	FUZZ_REQUIRE(fz_job, "decide/job-lammps.json");
	return 0;
}

/* Decide and print, as `fwdctl decide` does; inputs the parser accepted
 * must not make the decision fail other than with EINVAL. */
static inline void fz_decide(const struct alloc_ledger *l,
			     const struct alloc_health *h,
			     const struct alloc_job *job)
{
	fwd_error_t err = {{0}};
	struct alloc_decision *d;
	char *json;

	d = alloc_decide(fz_ctx, fz_policy, l, h, job, 1472292884.0, &err);
	if (!d)
		return;
	if (!(json = alloc_decision_to_json(d, 0)))
		abort();
	free(json);
	alloc_decision_destroy(d);
}

#endif
