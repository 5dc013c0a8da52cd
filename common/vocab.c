/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/vocab.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const io_mode_names[] = {
	[FWD_IO_NONE] = "none", [FWD_IO_N_N] = "N-N", [FWD_IO_N_1] = "N-1",
	[FWD_IO_N_M] = "N-M",	[FWD_IO_1_1] = "1-1",
};
static const char *const action_names[] = {
	[FWD_ACT_DEFAULT] = "default",
	[FWD_ACT_SCALE] = "scale",
	[FWD_ACT_ISOLATE] = "isolate",
	[FWD_ACT_AVOID_ANOMALY] = "avoid-anomaly",
	[FWD_ACT_SHADOW] = "shadow",
	[FWD_ACT_REFUSED] = "refused",
	[FWD_ACT_DIRECT] = "direct",
};
static const char *const request_names[] = {
	[FWD_REQ_NONE] = "none",   [FWD_REQ_AUTO] = "auto",
	[FWD_REQ_SCALE] = "scale", [FWD_REQ_ISOLATE] = "isolate",
	[FWD_REQ_OFF] = "off",	   [FWD_REQ_SHADOW] = "shadow",
};
static const char *const health_names[] = {
	[FWD_HEALTH_OK] = "ok",
	[FWD_HEALTH_SUSPECT] = "suspect",
	[FWD_HEALTH_EXCLUDED] = "excluded",
};

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : "?";
}

/* The index of s among names[first..n), or -1 with errno EINVAL. */
static int index_of(const char *const *names, size_t n, size_t first,
		    const char *s)
{
	for (size_t i = first; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	errno = EINVAL;
	return -1;
}

const char *fwd_io_mode_name(enum fwd_io_mode m)
{
	return name_of(io_mode_names, NELEM(io_mode_names), m);
}

int fwd_io_mode_parse(const char *s, enum fwd_io_mode *out)
{
	int v = s && !strcmp(s, "unknown")
			? FWD_IO_NONE
			: index_of(io_mode_names, NELEM(io_mode_names), 0, s);

	if (v < 0)
		return -1;
	*out = (enum fwd_io_mode)v;
	return 0;
}

const char *fwd_action_name(enum fwd_action a)
{
	return name_of(action_names, NELEM(action_names), a);
}

int fwd_action_parse(const char *s, enum fwd_action *out)
{
	int v = index_of(action_names, NELEM(action_names), 0, s);

	if (v < 0)
		return -1;
	*out = (enum fwd_action)v;
	return 0;
}

const char *fwd_request_name(enum fwd_request r)
{
	return name_of(request_names, NELEM(request_names), r);
}

int fwd_request_parse(const char *s, enum fwd_request *out)
{
	int v = index_of(request_names, NELEM(request_names), 1, s);

	if (v < 0)
		return -1;
	*out = (enum fwd_request)v;
	return 0;
}

const char *fwd_request_choices(void)
{
	return "auto, scale, isolate, off, shadow";
}

const char *fwd_health_name(enum fwd_health s)
{
	return name_of(health_names, NELEM(health_names), s);
}

int fwd_health_parse(const char *s, enum fwd_health *out)
{
	int v = index_of(health_names, NELEM(health_names), 0, s);

	if (v < 0)
		return -1;
	*out = (enum fwd_health)v;
	return 0;
}

int fwd_job_id_parse(const char *s, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s || s[0] < '1' || s[0] > '9')
		goto bad;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 10)
			goto bad;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		goto bad;
	*out = (uint32_t)v;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}
