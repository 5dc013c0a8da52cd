/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How fresh the stored statistics are (monitor/ingest.h:
 * monitor_newest_samples): the newest sample of each source, so that a
 * dead feed shows as a growing age instead of a quiet, healthy-looking
 * system.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "monitor/ingest.h"

const char *const monitor_source_names[MONITOR_N_SOURCES] = {
	"fwd",
	"ost",
	"mdt",
	"jobstats",
};

int monitor_newest_samples(struct db *db, double newest[MONITOR_N_SOURCES],
			   fwd_error_t *err)
{
	struct db_stmt *st;
	int r, rv = -1;

	for (int i = 0; i < MONITOR_N_SOURCES; i++)
		newest[i] = 0;
	/* each component's newest first: a loose scan of the primary key
	 * (kind, name, ts), one step per component, where MAX(ts) by kind
	 * alone would read every row */
	st = db_prepare(db,
			"SELECT kind, MAX(m) FROM (SELECT kind, name, MAX(ts)"
			" AS m FROM samples_raw GROUP BY kind, name) AS c"
			" GROUP BY kind",
			err);
	if (!st || db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const char *k = db_col_text(st, 0);

		for (int i = 0; i < MONITOR_SOURCE_JOBSTATS; i++)
			if (k && !strcmp(k, monitor_source_names[i]))
				newest[i] = (double)db_col_int64(st, 1);
	}
	if (r < 0)
		goto out;
	db_stmt_close(st);
	st = db_prepare(db, "SELECT IFNULL(MAX(ts), 0) FROM jobstats_raw", err);
	if (!st || db_exec(st, err) < 0 || (r = db_fetch(st, err)) < 0)
		goto out;
	if (r > 0)
		newest[MONITOR_SOURCE_JOBSTATS] = (double)db_col_int64(st, 0);
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int monitor_sample_names(struct db *db, const char *kind, double since,
			 char ***names, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	char **v = NULL;
	size_t cap = 0;
	int r, rv = -1;

	*names = NULL;
	*n = 0;
	/* a loose scan of the primary key, one step per component */
	st = db_prepare(db,
			"SELECT name FROM samples_raw WHERE kind = ?"
			" GROUP BY kind, name HAVING MAX(ts) >= ?"
			" ORDER BY name LIMIT 10000",
			err);
	if (!st)
		return -1;
	db_bind_text(st, 0, kind);
	db_bind_int64(st, 1, (int64_t)since);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const char *name = db_col_text(st, 0);

		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				errprintf(err, "%s", strerror(errno));
				goto out;
			}
			v = nv;
			cap = ncap;
		}
		if (!(v[*n] = strdup(name ? name : ""))) {
			errprintf(err, "%s", strerror(errno));
			goto out;
		}
		(*n)++;
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	if (rv < 0) {
		monitor_names_free(v, *n);
		v = NULL;
		*n = 0;
	}
	*names = v;
	return rv;
}

void monitor_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}
