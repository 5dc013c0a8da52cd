/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * darshan-parser output; see profiler/darshan.h.  The formats are those
 * of darshan-util/darshan-parser.c: "# key: value" job lines, "# <MOD>
 * module data" banners, "total_<COUNTER>: <value>" (--total),
 * "# total_bytes: N", "# unique files: ...", "# shared files: ..."
 * (--perf), and tab-separated per-record lines.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/plausible.h"
#include "profiler/darshan.h"

#define LINE_MAX_LEN 8192

enum mod { MOD_OTHER, MOD_POSIX, MOD_STDIO };

struct sums {
	uint64_t rb, wb, reads, writes, md, shared, unique;
	bool any;
	bool negative; /* a used counter below -1 (-1: not monitored) */
};

/* Sums saturate at 2^63-1, which darshan_check() refuses. */
static void sat_add(uint64_t *sum, int64_t v)
{
	*sum = (uint64_t)v > FWD_PLAUS_COUNTER_MAX - *sum
		       ? FWD_PLAUS_COUNTER_MAX
		       : *sum + (uint64_t)v;
}

/* True for the counters add() sums (others, such as record ids in
 * POSIX_RENAMED_FROM, may take any 64-bit value). */
static bool summed(const char *name)
{
	static const char *const used[] = {
		"BYTES_READ",	  "BYTES_WRITTEN", "READS",  "WRITES",
		"OPENS",	  "STATS",	   "FSYNCS", "FDSYNCS",
		"RENAME_SOURCES", "FLUSHES"};

	if (strncmp(name, "POSIX_", 6) != 0 && strncmp(name, "STDIO_", 6) != 0)
		return false;
	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		if (!strcmp(name + 6, used[i]))
			return true;
	return false;
}

/* A counter of a module we use, added to s (rank: -1 shared, else
 * unique; 0 for totals). */
static void add(struct sums *s, const char *name, int64_t v, long rank)
{
	static const char *const md[] = {"OPENS",	   "STATS",
					 "FSYNCS",	   "FDSYNCS",
					 "RENAME_SOURCES", "FLUSHES"};
	const char *c;

	if (!strncmp(name, "POSIX_", 6))
		c = name + 6;
	else if (!strncmp(name, "STDIO_", 6))
		c = name + 6;
	else
		return;
	if (v < 0) {
		/* -1: not monitored; below: no counter is */
		if (v < -1 &&
		    (!strcmp(c, "BYTES_READ") || !strcmp(c, "BYTES_WRITTEN") ||
		     !strcmp(c, "READS") || !strcmp(c, "WRITES")))
			s->negative = true;
		return;
	}
	s->any = true;
	if (!strcmp(c, "BYTES_READ") || !strcmp(c, "BYTES_WRITTEN")) {
		if (c[6] == 'R')
			sat_add(&s->rb, v);
		else
			sat_add(&s->wb, v);
		if (rank == -1)
			sat_add(&s->shared, v);
		else if (rank > 0 || rank == 0)
			sat_add(&s->unique, v);
	} else if (!strcmp(c, "READS")) {
		sat_add(&s->reads, v);
	} else if (!strcmp(c, "WRITES")) {
		sat_add(&s->writes, v);
	} else {
		for (size_t i = 0; i < sizeof(md) / sizeof(md[0]); i++)
			if (!strcmp(c, md[i]))
				sat_add(&s->md, v);
	}
}

/* 0 with *v, -1 not a number, -2 a number out of the int64 range */
static int num(const char *s, int64_t *v)
{
	char *end;
	double d;

	errno = 0;
	*v = strtoll(s, &end, 10);
	if (end != s && !*end && !errno)
		return 0;
	errno = 0;
	d = strtod(s, &end);
	if (end == s || *end || errno)
		return -1;
	/* 1e308 does not fit: converting it would be undefined */
	return fwd_plaus_dtoi64(d, v) < 0 ? -2 : 0;
}

static int bad(fwd_error_t *err, long line, const char *what, const char *text)
{
	errno = EINVAL;
	return errprintf(err, "line %ld: %s: '%.60s'", line, what, text);
}

static int out_of_range(fwd_error_t *err, long line, const char *text)
{
	bad(err, line, "counter value out of range", text);
	return fwd_plaus_fail(FWD_REASON_VALUE);
}

int darshan_parse(FILE *f, struct darshan_summary *out, fwd_error_t *err)
{
	static char buf[LINE_MAX_LEN];
	struct sums tot = {0}, rec = {0};
	enum mod mod = MOD_OTHER;
	bool has_job = false, has_start = false, has_end = false;
	double unique_time = -1, shared_time = -1;
	long line = 0;

	memset(out, 0, sizeof(*out));
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);
		char *p = buf;
		int64_t v;
		int r;

		line++;
		if (n && buf[n - 1] == '\n')
			buf[--n] = '\0';
		else if (n == sizeof(buf) - 1)
			return bad(err, line, "line too long", buf);
		if (!*p)
			continue;
		if (*p == '#') {
			char *c = strchr(p, ':');

			if (!strcmp(p, "# POSIX module data"))
				mod = MOD_POSIX;
			else if (!strcmp(p, "# STDIO module data"))
				mod = MOD_STDIO;
			else if (!strncmp(p, "# ", 2) &&
				 strstr(p, " module data") && !strchr(p, ':'))
				mod = MOD_OTHER;
			if (!c)
				continue;
			*c = '\0';
			c++;
			c += strspn(c, " \t");
#define KEY(k) (!strcmp(p, "# " k))
			if (KEY("jobid") || KEY("start_time") ||
			    KEY("end_time") || KEY("nprocs")) {
				if (num(c, &v) < 0 || v < 0)
					return bad(err, line,
						   "not a non-negative number",
						   c);
				if (KEY("jobid")) {
					out->job_id = (uint64_t)v;
					has_job = true;
				} else if (KEY("start_time")) {
					out->start = v;
					has_start = true;
				} else if (KEY("end_time")) {
					out->end = v;
					has_end = true;
				} else {
					out->nprocs = (uint64_t)v;
				}
			} else if (mod == MOD_POSIX && (KEY("unique files") ||
							KEY("shared files"))) {
				/* "slowest_rank_io_time: %lf",
				 * "time_by_slowest: %lf" */
				char *k = c, *val = strchr(c, ':');
				double d;
				char *end;

				if (!val)
					continue;
				*val++ = '\0';
				d = strtod(val, &end);
				if (end == val)
					return bad(err, line, "not a number",
						   val);
				if (p[2] == 'u' &&
				    !strcmp(k, "slowest_rank_io_time"))
					unique_time = d;
				else if (p[2] == 's' &&
					 !strcmp(k, "time_by_slowest"))
					shared_time = d;
			}
#undef KEY
			continue;
		}
		if (!strncmp(p, "total_", 6)) {
			char *c = strchr(p, ':');

			if (!c || c[1] != ' ')
				return bad(
					err, line,
					"expected 'total_<COUNTER>: <value>'",
					p);
			*c = '\0';
			r = num(c + 2, &v);
			if (r == -1)
				return bad(err, line, "not a number", c + 2);
			if (r == -2 && mod != MOD_OTHER && summed(p + 6))
				return out_of_range(err, line, c + 2);
			if (r == 0 && mod != MOD_OTHER)
				add(&tot, p + 6, v, 0);
			continue;
		}
		{
			/* <module> <rank> <record id> <counter> <value> <file>
			 * <mount pt> <fs type>, tab-separated */
			char *f_[8];
			int k = 0;
			long rank;
			char *end;

			for (char *s = p; k < 8; k++) {
				f_[k] = s;
				s = strchr(s, '\t');
				if (!s) {
					k++;
					break;
				}
				*s++ = '\0';
			}
			if (k < 8)
				return bad(err, line,
					   "not darshan-parser output "
					   "(expected '# ...', 'total_...' or "
					   "8 tab-separated columns)",
					   p);
			errno = 0;
			rank = strtol(f_[1], &end, 10);
			if (*end || end == f_[1] || errno || rank < -1)
				return bad(err, line, "bad rank", f_[1]);
			r = num(f_[4], &v);
			if (r == -1)
				return bad(err, line,
					   "counter value is not a "
					   "number",
					   f_[4]);
			if (r == -2 && summed(f_[3]))
				return out_of_range(err, line, f_[4]);
			if (r == 0 && (!strcmp(f_[0], "POSIX") ||
				       !strcmp(f_[0], "STDIO")))
				add(&rec, f_[3], v, rank);
		}
	}
	if (ferror(f)) {
		errno = EIO;
		return errprintf(err, "line %ld: read error", line);
	}
	out->lines = line;
	if (!has_job || !has_start || !has_end) {
		errno = EINVAL;
		return errprintf(err,
				 "line %ld: no '# %s:' line: is this "
				 "darshan-parser output?",
				 line,
				 !has_job     ? "jobid"
				 : !has_start ? "start_time"
					      : "end_time");
	}
	if (out->end < out->start) {
		/* counted as the other formats count it */
		fwd_plaus_fail(FWD_REASON_ORDER);
		return errprintf(err, "line %ld: end_time before start_time",
				 line);
	}
	if (tot.negative || rec.negative) {
		errno = EINVAL;
		errprintf(err,
			  "line %ld: a byte or operation counter is "
			  "negative (-1 is 'not monitored', nothing "
			  "less is a count)",
			  line);
		return fwd_plaus_fail(FWD_REASON_VALUE);
	}
	{
		const struct sums *s = tot.any ? &tot : &rec;

		out->read_bytes = s->rb;
		out->write_bytes = s->wb;
		out->reads = s->reads;
		out->writes = s->writes;
		out->md_ops = s->md;
		/* the split by sharing: from the records, else from the
		 * performance block's times */
		if (rec.any) {
			out->shared_bytes = rec.shared;
			out->unique_bytes = rec.unique;
		} else if (shared_time > 0 || unique_time > 0) {
			uint64_t all = s->rb + s->wb;

			if (shared_time > 0 && unique_time > 0) {
				out->shared_bytes = all / 2;
				out->unique_bytes = all - all / 2;
			} else if (shared_time > 0) {
				out->shared_bytes = all;
			} else {
				out->unique_bytes = all;
			}
		}
	}
	if (out->nprocs == 1)
		out->io_mode = FWD_IO_1_1;
	else if (out->shared_bytes && out->unique_bytes)
		out->io_mode = FWD_IO_N_M;
	else if (out->shared_bytes)
		out->io_mode = FWD_IO_N_1;
	else if (out->unique_bytes)
		out->io_mode = FWD_IO_N_N;
	else
		out->io_mode = FWD_IO_NONE;
	return 0;
}

int darshan_check(const struct darshan_summary *s, int64_t now, double max_bps,
		  fwd_error_t *err)
{
	const uint64_t v[] = {s->read_bytes, s->write_bytes, s->reads,
			      s->writes, s->md_ops};
	static const char *const vn[] = {"bytes read", "bytes written", "reads",
					 "writes", "metadata operations"};
	uint64_t bytes;

	if (fwd_plaus_interval("start_time", s->start, "end_time", s->end, now,
			       err) < 0 ||
	    fwd_plaus_count("nprocs", s->nprocs, 1, FWD_PLAUS_PROCS_MAX, err) <
		    0)
		return -1;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (fwd_plaus_counter(vn[i], v[i], err) < 0)
			return -1;
	bytes = s->read_bytes > FWD_PLAUS_COUNTER_MAX - s->write_bytes
			? FWD_PLAUS_COUNTER_MAX
			: s->read_bytes + s->write_bytes;
	return fwd_plaus_rate("bytes", bytes, (double)(s->end - s->start),
			      max_bps, "B", err);
}
