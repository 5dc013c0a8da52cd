/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The topology loader (topology/topology_load.c through common/yamldoc.c),
 * as `fwdctl topology check FILE` calls it; an accepted topology must
 * print as JSON.
 */
#include "config.h"

#include "tests/fuzz/fuzz.h"
#include "topology/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fwd_error_t err = {{0}};
	struct topology *t;
	char *json;

	t = topo_load(fuzz_file(data, size, ".yaml"), &err);
	if (!t)
		return 0;
	if (!(json = topo_to_json(t)))
		abort();
	free(json);
	topo_destroy(t);
	return 0;
}
