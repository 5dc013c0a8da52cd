/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Synthetic traces: built as records and written through
 * trace_format_raw(), so they are exactly what the parser reads.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "profiler/synth.h"
#include "profiler/trace.h"

const char *trace_synth_name(enum trace_synth_pattern p)
{
	switch (p) {
	case SYNTH_N_N:
		return "N-N";
	case SYNTH_N_1:
		return "N-1";
	case SYNTH_N_M:
		return "N-M";
	case SYNTH_N_M_AGG:
		return "N-M-aggregators";
	case SYNTH_1_1:
		return "1-1";
	case SYNTH_RANDOM:
		return "N-N-random";
	case SYNTH_META:
		return "N-N-metadata";
	}
	return "?";
}

static int emit(FILE *f, const struct trace_rec *r)
{
	char buf[TRACE_LINE_MAX];
	int n = trace_format_raw(r, 0, buf, sizeof(buf));

	if (n < 0 || fwrite(buf, 1, (size_t)n, f) != (size_t)n)
		return -1;
	return 0;
}

/* Does this node do I/O, and to which file (path) at which base offset? */
static bool node_file(const struct trace_synth *s, uint32_t node, uint32_t p,
		      char *path, size_t len, uint64_t *base)
{
	uint64_t seg = (uint64_t)s->seconds * s->reqs_per_sec * s->req_size;
	uint32_t m = s->groups ? s->groups : 1;
	uint32_t per_group = (s->nodes + m - 1) / m;

	*base = 0;
	switch (s->pattern) {
	case SYNTH_N_1:
		snprintf(path, len, "shared.out");
		*base = ((uint64_t)node * s->procs + p) * seg;
		return true;
	case SYNTH_N_M:
		snprintf(path, len, "agg.%" PRIu32, node / per_group);
		*base = ((uint64_t)(node % per_group) * s->procs + p) * seg;
		return true;
	case SYNTH_N_M_AGG:
		if (node % per_group)
			return false;
		snprintf(path, len, "agg.%" PRIu32 ".%" PRIu32,
			 node / per_group, p);
		return true;
	case SYNTH_1_1:
		if (node != 0 || p != 0)
			return false;
		snprintf(path, len, "single.out");
		return true;
	default:
		snprintf(path, len, "out.%" PRIu32 ".%" PRIu32, node, p);
		return true;
	}
}

int trace_synth_node(FILE *f, const struct trace_synth *s, uint32_t node,
		     uint64_t *bytes)
{
	struct trace_rec r;
	char path[64];
	uint64_t base, total = 0, lcg = 12345 + node;

	if (bytes)
		*bytes = 0;
	memset(&r, 0, sizeof(r));
	r.level = 'T';
	r.n = 1;
	r.count = 1;
	r.has_pid = s->pid_prefix;
	for (uint32_t p = 0; p < s->procs; p++) {
		if (!node_file(s, node, p, path, sizeof(path), &base))
			continue;
		r.op = TRACE_OP_OPEN;
		r.time = s->start;
		r.pid = 40000 + p;
		r.fd = 0x200095000000ULL + 0x1000ULL * p;
		r.text = path;
		if (emit(f, &r))
			return -1;
	}
	for (uint32_t t = 0; t < s->seconds; t++) {
		for (uint32_t p = 0; p < s->procs; p++) {
			if (!node_file(s, node, p, path, sizeof(path), &base))
				continue;
			r.time = s->start + t;
			r.pid = 40000 + p;
			r.fd = 0x200095000000ULL + 0x1000ULL * p;
			r.size = s->req_size;
			r.text = "";
			for (uint32_t i = 0; i < s->reqs_per_sec; i++) {
				uint64_t k = (uint64_t)t * s->reqs_per_sec + i;

				r.op = s->read ? TRACE_OP_READ : TRACE_OP_WRITE;
				strcpy(r.name, s->read ? "READ" : "WRITE");
				if (s->pattern == SYNTH_RANDOM) {
					lcg = lcg * 6364136223846793005ULL +
					      1442695040888963407ULL;
					k = (lcg >> 33) % (1u << 20);
				}
				r.offset = base + k * s->req_size;
				if (emit(f, &r))
					return -1;
				total += s->req_size;
				if (s->pattern == SYNTH_META) {
					r.op = TRACE_OP_META;
					strcpy(r.name, "GETATTR");
					r.text = " (0x1)";
					if (emit(f, &r))
						return -1;
					r.text = "";
				}
			}
		}
	}
	for (uint32_t p = 0; p < s->procs; p++) {
		if (!node_file(s, node, p, path, sizeof(path), &base))
			continue;
		r.op = TRACE_OP_RELEASE;
		r.time = s->start + s->seconds;
		r.pid = 40000 + p;
		r.fd = 0x200095000000ULL + 0x1000ULL * p;
		r.text = "(FLUSH implied)";
		if (emit(f, &r))
			return -1;
	}
	if (bytes)
		*bytes = total;
	return ferror(f) ? -1 : 0;
}
