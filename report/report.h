/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_REPORT_REPORT_H
#define FWD_REPORT_REPORT_H

/*
 * Reports people read: one job's I/O (its "weather" against the "climate"
 * of its components and its application, TOKIO/UMAMI style; what fwdalloc
 * decided for it and advice from its pattern), and the machine's I/O
 * weather over a time range.  Above controller/ and sim/, below service/
 * and cli/: it reads every table through its owning module's functions
 * and renders text, JSON (jansson) or one self-contained HTML page (inline
 * SVG, no network resources, every stored string escaped).  It never
 * checks who asks: the caller (fwdctl on the admin path, fwdallocd for a
 * MUNGE-authenticated user) decides whether the asker may see the job,
 * with report_job_user().
 */

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct db;

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_HTML };

#define REPORT_NOT_FOUND 1

/*
 * The user name a job ran as (the jobs table's user), for an owner check.
 * 0 found, REPORT_NOT_FOUND, -1 error (err says why).
 */
int report_job_user(struct db *db, uint64_t job_id, char *user, size_t len,
		    fwd_error_t *err);

/*
 * The job's report, a malloc'd NUL-terminated string in *out.
 * 0, REPORT_NOT_FOUND, -1 error.
 */
int report_job(struct db *db, uint64_t job_id, enum report_format fmt,
	       char **out, fwd_error_t *err);

/*
 * The machine's I/O weather from since to until (epoch seconds), a
 * malloc'd NUL-terminated string in *out.  0 or -1.
 */
int report_machine(struct db *db, int64_t since, int64_t until,
		   enum report_format fmt, char **out, fwd_error_t *err);

#endif
