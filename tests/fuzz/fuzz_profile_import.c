/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fwdctl profile import FILE.json`: the document read as the command
 * reads it (one object or an array of them), each entry through
 * profile_db_import() (profiler/profile_db.c: keys, node count, the
 * profile object, the profile key).  The database is not reached: the
 * program is linked with -Wl,--wrap=db_prepare and the statement the
 * entry would be written with fails to prepare.
 */
#include "config.h"

#include <jansson.h>

#include "db/db.h"
#include "policies/policy.h"
#include "profiler/profile.h"
#include "tests/fuzz/fuzz.h"

static struct policy *fz_policy;

struct db_stmt *__wrap_db_prepare(struct db *db, const char *sql,
				  fwd_error_t *err);
struct db_stmt *__wrap_db_prepare(struct db *db, const char *sql,
				  fwd_error_t *err)
{
	errno = ENOTCONN;
	errprintf(err, "no database in the fuzz target");
	return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fwd_error_t err = {{0}};

	fz_policy = policy_load(FIXTURES "/decide/policy.yaml", &err);
	FUZZ_REQUIRE(fz_policy, "decide/policy.yaml");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t jerr;
	json_t *doc;
	size_t n;

	if (!(doc = json_loadb((const char *)data, size, 0, &jerr)))
		return 0;
	if (!json_is_array(doc)) {
		json_t *a = json_array();

		if (!a || json_array_append_new(a, doc))
			abort();
		doc = a;
	}
	n = json_array_size(doc);
	for (size_t i = 0; i < n; i++) {
		fwd_error_t err = {{0}};
		char key[PROFILE_KEY_MAX + 1];

		/* a dummy connection: only the wrapped db_prepare sees it */
		if (profile_db_import((struct db *)&fz_policy, fz_policy,
				      json_array_get(doc, i), 0, key,
				      sizeof(key), &err) == 0)
			abort(); /* cannot succeed without a database */
	}
	json_decref(doc);
	return 0;
}
