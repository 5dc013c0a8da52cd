/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm job ids in Lustre job_stats ids, after the clients' jobid_name
 * pattern; see jobstats_map_id() in monitor/ingest.h.  The format codes
 * are those of Lustre's jobid_name (lustre/obdclass/jobid.c,
 * jobid_interpret_string()): %e executable, %g group id, %h host name,
 * %H short host name, %j the job id from the environment (jobid_var),
 * %p process id, %u user id, %% a percent sign.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/ingest.h"

static bool numeric_code(char c)
{
	return c == 'g' || c == 'p' || c == 'u' || c == 'j';
}

int jobstats_pattern_check(const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		p++;
		if (!*p || !strchr("eghHjpu%", *p)) {
			errno = EINVAL;
			return -1;
		}
	}
	return 0;
}

/* Does s match pat?  *id, *has: what %j matched. */
static bool match(const char *pat, const char *s, uint64_t *id, bool *has)
{
	size_t run, i;

	if (!*pat)
		return !*s;
	if (pat[0] != '%' || pat[1] == '%') {
		if (*s != pat[0])
			return false;
		return match(pat + (pat[0] == '%' ? 2 : 1), s + 1, id, has);
	}
	if (numeric_code(pat[1]))
		run = strspn(s, "0123456789");
	else
		run = strlen(s);
	/* the longest first: "a.out.1.500" under "%e.%u" is a.out.1, 500 */
	for (i = run; i > 0; i--) {
		if (!match(pat + 2, s + i, id, has))
			continue;
		if (pat[1] == 'j') {
			char digits[24];

			if (i >= sizeof(digits))
				return false;
			memcpy(digits, s, i);
			digits[i] = '\0';
			errno = 0;
			*id = strtoull(digits, NULL, 10);
			if (errno)
				return false;
			*has = true;
		}
		return true;
	}
	return false;
}

int jobstats_map_id(const char *pattern, const char *job_id, uint64_t *id)
{
	bool has = false;

	if (jobstats_pattern_check(pattern) < 0)
		return -1;
	if (!strstr(pattern, "%j"))
		return 0;
	if (!match(pattern, job_id, id, &has) || !has)
		return 0;
	return 1;
}

/* TASK_COMM_LEN (16) of the kernel, with its terminating NUL. */
#define COMM_MAX 15

int jobstats_proc_id(const char *pattern, const char *prog, uint32_t uid,
		     char *out, size_t cap)
{
	bool has_e = false, has_u = false;
	size_t n = 0;

	if (jobstats_pattern_check(pattern) < 0)
		return -1;
	for (const char *p = pattern; *p; p++) {
		char piece[32];
		const char *add = piece;
		bool comm = false;
		size_t len;

		if (*p == ' ' || *p == '\t' || *p == '\n')
			continue;
		if (*p != '%') {
			piece[0] = *p;
			piece[1] = '\0';
		} else {
			p++;
			switch (*p) {
			case 'e':
				add = prog;
				comm = has_e = true;
				break;
			case 'u':
				snprintf(piece, sizeof(piece), "%u", uid);
				has_u = true;
				break;
			case '%':
				strcpy(piece, "%");
				break;
			default:
				return 0;
			}
		}
		len = strlen(add);
		if (comm && len > COMM_MAX)
			len = COMM_MAX;
		if (n + len >= cap) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return has_e && has_u ? 1 : 0;
}
