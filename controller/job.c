/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job from slurmctld's prolog/epilog environment (controller/job.h).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plausible.h"
#include "common/vocab.h"
#include "controller/job.h"

const char *const ctl_job_vars[CTL_JOB_N_VARS] = {CTL_JOB_VARS};

enum {
	V_ID,
	V_NODELIST,
	V_USER,
	V_ACCOUNT,
	V_NAME,
	V_PARTITION,
	V_NUM_NODES,
	V_IO_UPGRADE
};

/* Slurm writes "(null)" for unset job fields (e.g. no account). */
static const char *val_str(const char *s)
{
	return s && *s && strcmp(s, "(null)") ? s : NULL;
}

/*
 * The next unit of `in`: how many input bytes it takes (*take), written
 * to unit[] (NUL-terminated), and how many characters it counts for.
 */
static size_t next_unit(const unsigned char *in, bool quote, size_t *take,
			char unit[8])
{
	unsigned c = in[0];
	size_t n = 0;
	uint32_t cp;

	*take = 1;
	if (c == '\\' || (quote && c == '"')) {
		unit[0] = '\\';
		unit[1] = (char)c;
		unit[2] = '\0';
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		unit[0] = (char)c;
		unit[1] = '\0';
		return 1;
	}
	n = fwd_utf8_char(in, 4, &cp);
	/* a whole character, but no C1 control */
	if (n > 1 && !(cp >= 0x80 && cp < 0xa0)) {
		memcpy(unit, in, n);
		unit[n] = '\0';
		*take = n;
		return 1;
	}
	snprintf(unit, 8, "\\x%02x", c);
	return 4;
}

static size_t escape(const char *in, size_t max_chars, bool quote, char *out,
		     size_t outsz)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t total = 0, take, len = 0, chars = 0, limit;
	char unit[8];

	if (!outsz)
		return 0;
	/* Does the whole of it fit? */
	for (const unsigned char *q = p; *q; q += take)
		total += next_unit(q, quote, &take, unit);
	limit = total <= max_chars ? max_chars
				   : (max_chars >= 3 ? max_chars - 3 : 0);
	for (; *p; p += take) {
		size_t c = next_unit(p, quote, &take, unit), b = strlen(unit);

		if (chars + c > limit || len + b + 4 > outsz)
			break;
		memcpy(out + len, unit, b);
		len += b;
		chars += c;
	}
	if (*p && max_chars >= 3 && len + 4 <= outsz) {
		memcpy(out + len, "...", 3);
		len += 3;
	}
	out[len] = '\0';
	return len;
}

size_t ctl_escape(const char *in, size_t max_chars, char *out, size_t outsz)
{
	return escape(in, max_chars, false, out, outsz);
}

int ctl_job_vars_parse(const char *buf, size_t len,
		       const char *vals[CTL_JOB_N_VARS], fwd_error_t *err)
{
	for (size_t i = 0; i < CTL_JOB_N_VARS; i++)
		vals[i] = NULL;
	if (len && buf[len - 1] != '\0') {
		errno = EINVAL;
		return errprintf(err, "damaged: the last variable is cut");
	}
	for (const char *s = buf; s < buf + len; s += strlen(s) + 1) {
		const char *eq = strchr(s, '=');
		size_t i;

		for (i = 0; eq && i < CTL_JOB_N_VARS; i++)
			if (strlen(ctl_job_vars[i]) == (size_t)(eq - s) &&
			    !strncmp(s, ctl_job_vars[i], (size_t)(eq - s)))
				break;
		if (!eq || i == CTL_JOB_N_VARS || vals[i]) {
			char v[32 * 4 + 1];

			ctl_escape(s, 32, v, sizeof(v));
			errno = EINVAL;
			return errprintf(err, "damaged: \"%s\": %s", v,
					 !eq ? "not NAME=VALUE"
					 : i == CTL_JOB_N_VARS
						 ? "not a job variable"
						 : "given twice");
		}
		vals[i] = eq + 1;
	}
	return 0;
}

int ctl_job_from_env(struct ctl_job *j, fwd_error_t *err)
{
	const char *vals[CTL_JOB_N_VARS];

	for (size_t i = 0; i < CTL_JOB_N_VARS; i++)
		vals[i] = getenv(ctl_job_vars[i]);
	return ctl_job_from_vars(j, vals, err);
}

int ctl_job_from_vars(struct ctl_job *j, const char *const vals[],
		      fwd_error_t *err)
{
	const char *id = val_str(vals[V_ID]);
	const char *req = vals[V_IO_UPGRADE];
	const char *nn = val_str(vals[V_NUM_NODES]);
	uint32_t num;

	memset(j, 0, sizeof(*j));
	if (!id) {
		errno = EINVAL;
		return errprintf(err,
				 "SLURM_JOB_ID is not set: this command "
				 "is run by slurmctld as PrologSlurmctld or "
				 "EpilogSlurmctld");
	}
	if (fwd_job_id_parse(id, &num) < 0) {
		char v[64 * 4 + 1];

		ctl_escape(id, 64, v, sizeof(v));
		return errprintf(
			err,
			"SLURM_JOB_ID=\"%s\": not a job id (" FWD_JOB_ID_RANGE
			")",
			v);
	}
	j->job_num = num;
	snprintf(j->job_id, sizeof(j->job_id), "%llu",
		 (unsigned long long)j->job_num);
	j->user = j->user_buf;
	ctl_escape(val_str(vals[V_USER]) ? val_str(vals[V_USER]) : "",
		   CTL_USER_MAX, j->user_buf, sizeof(j->user_buf));
	if (val_str(vals[V_ACCOUNT])) {
		ctl_escape(val_str(vals[V_ACCOUNT]), CTL_USER_MAX,
			   j->account_buf, sizeof(j->account_buf));
		j->account = j->account_buf;
	}
	j->name = j->name_buf;
	ctl_escape(val_str(vals[V_NAME]) ? val_str(vals[V_NAME]) : "",
		   CTL_NAME_MAX, j->name_buf, sizeof(j->name_buf));
	if (val_str(vals[V_PARTITION])) {
		ctl_escape(val_str(vals[V_PARTITION]), CTL_USER_MAX,
			   j->partition_buf, sizeof(j->partition_buf));
		j->partition = j->partition_buf;
	}
	j->nodes = val_str(vals[V_NODELIST]);
	if (nn)
		j->n_nodes = (uint32_t)strtoul(nn, NULL, 10);
	j->request = FWD_REQ_NONE;
	j->request_name = "not requested";
	/* Set but empty is a value too (the plugin never sets one). */
	if (req && strcmp(req, "(null)")) {
		if (fwd_request_parse(req, &j->request) < 0 ||
		    j->request == FWD_REQ_NONE) {
			char v[CTL_REQUEST_QUOTE * 4 + 1];

			escape(req, CTL_REQUEST_QUOTE, true, v, sizeof(v));
			snprintf(j->bad_request, sizeof(j->bad_request),
				 "SPANK_IO_UPGRADE=\"%s\" is not a mode (%s)",
				 v, fwd_request_choices());
			j->request = FWD_REQ_NONE;
			j->request_name = "invalid";
		} else {
			j->request_name = fwd_request_name(j->request);
		}
	}
	return 0;
}
