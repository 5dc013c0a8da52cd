/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_JOB_H
#define FWD_CONTROLLER_JOB_H

/*
 * The job a controller prolog or epilog works on, as slurmctld describes
 * it in the environment of PrologSlurmctld / EpilogSlurmctld.
 */

#include <stdint.h>

#include "allocator/decide.h"
#include "common/error.h"
#include "controller/job_vars.h"

/*
 * Longest strings, in characters, that the database columns hold
 * (db/schema.c): jobs.user, jobs.account, jobs.partition_name and
 * audit.user/account are VARCHAR(64), jobs.name VARCHAR(255).  How much of
 * a bad SPANK_IO_UPGRADE value an audit record quotes.
 */
#define CTL_USER_MAX 64
#define CTL_NAME_MAX 255
#define CTL_REQUEST_QUOTE 64

struct ctl_job {
	uint64_t job_num;
	char job_id[24];
	const char *user;
	const char *account;
	const char *name;
	const char *partition;
	const char *nodes; /* SLURM_JOB_NODELIST */
	uint32_t n_nodes;
	enum fwd_request request;
	/* "scale", ..., "not requested", or "invalid" (bad_request) */
	const char *request_name;
	/*
	 * SPANK_IO_UPGRADE was set to something that is not a mode (a
	 * user's own plugstack can set anything): why, with the value
	 * escaped and cut (ctl_escape).  The job then has no request and
	 * keeps its default mapping; the prolog records this as its
	 * fallback.  Empty otherwise.
	 */
	char bad_request[400];
	/* Escaped and cut copies of user, account, name, partition
	 * (ctl_escape; up to 4 bytes per character). */
	char user_buf[CTL_USER_MAX * 4 + 1];
	char account_buf[CTL_USER_MAX * 4 + 1];
	char name_buf[CTL_NAME_MAX * 4 + 1];
	char partition_buf[CTL_USER_MAX * 4 + 1];
};

/* CTL_JOB_VARS, in that order: vals[] below follow it. */
#define CTL_JOB_N_VARS 8
extern const char *const ctl_job_vars[CTL_JOB_N_VARS];

/*
 * Read "NAME=VALUE" strings, each NUL-terminated, from buf[0..len) into
 * vals[] (pointers into buf; unset ones NULL).  A name not in
 * CTL_JOB_VARS, a string without '=', a name given twice or a last string
 * without its NUL are errors (-1, errno EINVAL, err "damaged: ..."); 0.
 */
int ctl_job_vars_parse(const char *buf, size_t len,
		       const char *vals[CTL_JOB_N_VARS], fwd_error_t *err);

/*
 * ctl_job_from_env() from the values of CTL_JOB_VARS in vals[] (NULL:
 * unset) instead of the environment; j->nodes points into vals[1].
 */
int ctl_job_from_vars(struct ctl_job *j, const char *const vals[],
		      fwd_error_t *err);

/*
 * Fill j from the Slurm prolog/epilog environment.  SLURM_JOB_ID is
 * required.  User, account, job name and partition are escaped and cut to
 * what the database columns hold (ctl_escape), so that any name Slurm
 * passes on can be audited and stored.  A SPANK_IO_UPGRADE that is set but
 * not a known mode is not an error: see bad_request.  nodes points into
 * environ, the other strings into j (copying j keeps them valid while the
 * original lives).  0, or -1 with errno EINVAL and err (no SLURM_JOB_ID,
 * or one that is not a job id: not run by slurmctld).
 */
int ctl_job_from_env(struct ctl_job *j, fwd_error_t *err);

/*
 * Copy `in` to `out` as printable, valid UTF-8 of at most max_chars
 * characters: valid UTF-8 characters other than controls are kept, a
 * backslash becomes "\\", a control character or a byte that is not part
 * of a valid UTF-8 sequence becomes "\xHH".  When the result would be
 * longer than max_chars it is cut at a whole character or escape and ends
 * in "..." (max_chars in all).  outsz must be at least 4 * max_chars + 1
 * (less cuts earlier).  Returns the length of out in bytes.
 */
size_t ctl_escape(const char *in, size_t max_chars, char *out, size_t outsz);

#endif
