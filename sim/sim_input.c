/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Simulator inputs: the strict CSV loaders for jobs and curves, time
 * parsing, curve interpolation and interference classes.  Format and
 * model: sim/SIM.md.
 *
 * Parsing is strict on purpose: a what-if report built on a silently
 * misread trace is worse than none, so every bad line is reported with
 * its number and the whole input is refused.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/array.h"
#include "common/timeutil.h"
#include "policies/classify.h"
#include "policies/policy.h"
#include "sim/sim.h"

#define MAX_FIELDS 8
#define MAX_K 100000

static const char CURVE_HDR[] = "app,forwarders,bandwidth_bps";
static const char PROFILE_HDR[] = "app,io_mode,volume,iops,mdops";
static const char SLOWDOWN_HDR[] = "victim,disruptor,slowdown";
static const char JOBS_HDR[] = "job_id,app,nodes,submit,start,end";
static const char JOBS_HDR_IO[] = "job_id,app,nodes,submit,start,end,"
				  "io_seconds";

/* Collected errors: "FILE:LINE: what" lines in err->text, as many as fit;
 * the rest are counted. */
struct errs {
	fwd_error_t *err;
	const char *file;
	size_t n, dropped, len;
};

static void __attribute__((format(printf, 3, 4)))
bad(struct errs *e, size_t line, const char *fmt, ...)
{
	char msg[512];
	char full[640];
	va_list ap;
	size_t l;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(full, sizeof(full), "%s:%zu: %s", e->file, line, msg);
	else
		snprintf(full, sizeof(full), "%s: %s", e->file, msg);
	e->n++;
	if (!e->err)
		return;
	l = strlen(full);
	/* keep room for the "and N more" trailer */
	if (e->dropped || e->n > SIM_MAX_ERRORS ||
	    e->len + l + 2 > sizeof(e->err->text) - 48) {
		e->dropped++;
		return;
	}
	if (e->len)
		e->err->text[e->len++] = '\n';
	memcpy(e->err->text + e->len, full, l + 1);
	e->len += l;
}

static bool errs_done(struct errs *e)
{
	return e->n >= SIM_MAX_ERRORS;
}

static int errs_finish(struct errs *e)
{
	if (!e->n)
		return 0;
	if (e->err && e->dropped)
		e->len += (size_t)snprintf(
			e->err->text + e->len, sizeof(e->err->text) - e->len,
			"\n(and %zu more bad line%s not shown)", e->dropped,
			e->dropped == 1 ? "" : "s");
	if (e->err && e->n >= SIM_MAX_ERRORS && e->len < sizeof(e->err->text))
		snprintf(e->err->text + e->len, sizeof(e->err->text) - e->len,
			 "\n(stopped reading after %d bad lines)",
			 SIM_MAX_ERRORS);
	errno = EINVAL;
	return -1;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

/* Split in place on commas; returns the field count.  Only the first
 * MAX_FIELDS are stored (no record has more), but all are counted so the
 * message can say how many there were. */
static size_t split(char *line, char **f)
{
	size_t n = 0;
	char *p = line;

	for (;;) {
		char *c = strchr(p, ',');

		if (c)
			*c = '\0';
		if (n < MAX_FIELDS)
			f[n] = trim(p);
		n++;
		if (!c)
			return n;
		p = c + 1;
	}
}

/* A decimal number, nothing else (no hex, inf, nan, spaces). */
static int parse_num(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int sim_parse_time(const char *s, double *out)
{
	/* A trace is machine-written: epoch seconds, or ISO 8601 with the
	 * 'T' and the seconds. */
	if (!strchr(s, 'T'))
		return fwd_time_parse_epoch(s, out);
	return fwd_time_parse_iso(s, strlen(s), 0, out);
}

static const char *const class_names[SIM_N_CLASSES] = {
	[SIM_CLASS_LIGHT] = "light",
	[SIM_CLASS_IOPS] = "iops",
	[SIM_CLASS_BANDWIDTH] = "bandwidth",
	[SIM_CLASS_METADATA] = "metadata",
	[SIM_CLASS_N1] = "n-1",
};

const char *sim_class_name(enum sim_class c)
{
	return c < SIM_N_CLASSES ? class_names[c] : "?";
}

int sim_class_parse(const char *s, enum sim_class *out)
{
	for (int i = 0; i < SIM_N_CLASSES; i++) {
		if (!strcmp(s, class_names[i])) {
			*out = (enum sim_class)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

/* A job's mode in the trace: one of the four I/O modes ("none" and
 * "unknown" are no mode). */
static int io_mode_parse(const char *s, enum fwd_io_mode *out)
{
	enum fwd_io_mode m;

	if (fwd_io_mode_parse(s, &m) < 0 || m == FWD_IO_NONE)
		return -1;
	*out = m;
	return 0;
}

/*
 * slowdown[victim][disruptor]: extra slowdown of the victim's I/O through
 * a forwarder it shares with a disruptor, on top of bandwidth sharing.
 * From the DFRA slides' pairwise study (256-node runs, two applications on
 * one forwarder); SIM.md cites the cell behind each value.  Pairs the
 * study starred (both slowed about 2x) are plain bandwidth sharing, which
 * the sharing model already charges: 1.0 here.
 */
void sim_default_slowdown(double out[SIM_N_CLASSES][SIM_N_CLASSES])
{
	for (int v = 0; v < SIM_N_CLASSES; v++)
		for (int d = 0; d < SIM_N_CLASSES; d++)
			out[v][d] = 1.0;
	out[SIM_CLASS_LIGHT][SIM_CLASS_METADATA] = 25.0;     /* WRF1 / DNDC */
	out[SIM_CLASS_LIGHT][SIM_CLASS_N1] = 50.0;	     /* WRF1 / AWP */
	out[SIM_CLASS_IOPS][SIM_CLASS_BANDWIDTH] = 6.3;	     /* APT / Shentu */
	out[SIM_CLASS_IOPS][SIM_CLASS_METADATA] = 33.3;	     /* APT / DNDC */
	out[SIM_CLASS_IOPS][SIM_CLASS_N1] = 50.0;	     /* APT / AWP */
	out[SIM_CLASS_BANDWIDTH][SIM_CLASS_METADATA] = 11.1; /* WRFN / DNDC */
	out[SIM_CLASS_BANDWIDTH][SIM_CLASS_N1] = 12.5;	     /* WRFN / AWP */
	out[SIM_CLASS_METADATA][SIM_CLASS_BANDWIDTH] = 1.1;  /* DNDC/MPI-IO */
	out[SIM_CLASS_N1][SIM_CLASS_BANDWIDTH] = 1.1;	     /* AWP / MPI-IO */
}

double sim_curve_bw(const struct sim_app *a, uint32_t k)
{
	const struct sim_point *p = a->pts;
	size_t n = a->n_pts;

	if (k == 0)
		return a->direct_bps;
	if (n == 0)
		return 0;
	if (k <= p[0].k)
		return p[0].bps * k / p[0].k;
	for (size_t i = 1; i < n; i++) {
		if (k <= p[i].k) {
			double f = (double)(k - p[i - 1].k) /
				   (double)(p[i].k - p[i - 1].k);

			return p[i - 1].bps + f * (p[i].bps - p[i - 1].bps);
		}
	}
	return p[n - 1].bps;
}

double sim_curve_best(const struct sim_app *a, uint32_t k)
{
	double best = sim_curve_bw(a, k);

	/* The maximum over 1..k lies at k or at a measured point below. */
	for (size_t i = 0; i < a->n_pts && a->pts[i].k <= k; i++)
		if (a->pts[i].bps > best)
			best = a->pts[i].bps;
	return best;
}

double sim_curve_peak(const struct sim_app *a)
{
	double best = 0;

	for (size_t i = 0; i < a->n_pts; i++)
		if (a->pts[i].bps > best)
			best = a->pts[i].bps;
	return best;
}

double sim_curve_sat(const struct sim_app *a)
{
	double best = 0;

	for (size_t i = 0; i < a->n_pts; i++)
		if (a->pts[i].bps / a->pts[i].k > best)
			best = a->pts[i].bps / a->pts[i].k;
	return best;
}

enum sim_class sim_classify(const struct policy *p, const struct sim_app *a,
			    uint32_t nodes)
{
	unsigned why = policy_job_disruptive(
		&p->decision.interference, a->io_mode == FWD_IO_N_1, nodes,
		a->mdops, sim_curve_peak(a), NULL, 0);

	if (why & POLICY_DISRUPT_N_TO_1)
		return SIM_CLASS_N1;
	if (why & POLICY_DISRUPT_METADATA)
		return SIM_CLASS_METADATA;
	if (why & POLICY_DISRUPT_BANDWIDTH)
		return SIM_CLASS_BANDWIDTH;
	if (policy_job_vulnerable(&p->decision.interference, a->iops))
		return SIM_CLASS_IOPS;
	return SIM_CLASS_LIGHT;
}

/* ---- curves ---------------------------------------------------------- */

void sim_curves_destroy(struct sim_curves *c)
{
	int saved = errno;

	if (!c)
		return;
	for (size_t i = 0; i < c->n_apps; i++) {
		free(c->apps[i].name);
		free(c->apps[i].pts);
	}
	free(c->apps);
	free(c->path);
	free(c);
	errno = saved;
}

static long find_app(const struct sim_curves *c, const char *name)
{
	for (size_t i = 0; i < c->n_apps; i++)
		if (!strcmp(c->apps[i].name, name))
			return (long)i;
	return -1;
}

static struct sim_app *add_app(struct sim_curves *c, const char *name)
{
	struct sim_app *v = realloc(c->apps, (c->n_apps + 1) * sizeof(*v));

	if (!v)
		return NULL;
	c->apps = v;
	memset(&v[c->n_apps], 0, sizeof(*v));
	if (!(v[c->n_apps].name = strdup(name)))
		return NULL;
	return &v[c->n_apps++];
}

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-+:@/", *s))
			return false;
	return true;
}

enum section { SEC_NONE, SEC_CURVE, SEC_PROFILE, SEC_SLOWDOWN };

static int curve_line(struct sim_curves *c, struct errs *e, size_t ln, char **f,
		      size_t nf)
{
	struct sim_app *a;
	struct sim_point *v;
	uint32_t k;
	double bps;
	long i;

	if (nf != 3) {
		bad(e, ln, "expected 3 fields (%s), got %zu", CURVE_HDR, nf);
		return 0;
	}
	if (!name_ok(f[0])) {
		bad(e, ln, "app '%s': letters, digits and ._-+:@/ only", f[0]);
		return 0;
	}
	if (parse_uint(f[1], MAX_K, &k) < 0) {
		bad(e, ln, "forwarders '%s': not an integer in 0..%d", f[1],
		    MAX_K);
		return 0;
	}
	if (parse_num(f[2], &bps) < 0 || !(bps > 0)) {
		bad(e, ln,
		    "bandwidth_bps '%s': not a positive number of "
		    "bytes per second",
		    f[2]);
		return 0;
	}
	i = find_app(c, f[0]);
	if (i < 0) {
		if (!(a = add_app(c, f[0])))
			return -1;
		a->curve_line = ln;
	} else {
		a = &c->apps[i];
		if (!a->curve_line)
			a->curve_line = ln;
	}
	if (k == 0) {
		if (a->direct_bps > 0) {
			bad(e, ln, "app '%s': forwarders 0 given twice", f[0]);
			return 0;
		}
		a->direct_bps = bps;
		return 0;
	}
	for (size_t j = 0; j < a->n_pts; j++) {
		if (a->pts[j].k == k) {
			bad(e, ln, "app '%s': forwarders %u given twice", f[0],
			    k);
			return 0;
		}
	}
	v = realloc(a->pts, (a->n_pts + 1) * sizeof(*v));
	if (!v)
		return -1;
	a->pts = v;
	/* insertion keeps the points sorted by k */
	size_t j = a->n_pts;
	while (j > 0 && v[j - 1].k > k) {
		v[j] = v[j - 1];
		j--;
	}
	v[j].k = k;
	v[j].bps = bps;
	a->n_pts++;
	return 0;
}

static int profile_line(struct sim_curves *c, struct errs *e, size_t ln,
			char **f, size_t nf)
{
	struct sim_app *a;
	enum fwd_io_mode mode;
	double vol, iops, md;
	long i;

	if (nf != 5) {
		bad(e, ln, "expected 5 fields (%s), got %zu", PROFILE_HDR, nf);
		return 0;
	}
	if (!name_ok(f[0])) {
		bad(e, ln, "app '%s': letters, digits and ._-+:@/ only", f[0]);
		return 0;
	}
	if (io_mode_parse(f[1], &mode) < 0) {
		bad(e, ln, "io_mode '%s': one of N-N, N-1, N-M, 1-1", f[1]);
		return 0;
	}
	if (parse_num(f[2], &vol) < 0 || vol < 0) {
		bad(e, ln, "volume '%s': not a non-negative number of bytes",
		    f[2]);
		return 0;
	}
	if (parse_num(f[3], &iops) < 0 || iops < 0) {
		bad(e, ln, "iops '%s': not a non-negative number", f[3]);
		return 0;
	}
	if (parse_num(f[4], &md) < 0 || md < 0) {
		bad(e, ln, "mdops '%s': not a non-negative number", f[4]);
		return 0;
	}
	i = find_app(c, f[0]);
	if (i < 0) {
		if (!(a = add_app(c, f[0])))
			return -1;
	} else {
		a = &c->apps[i];
	}
	if (a->has_profile) {
		bad(e, ln, "app '%s': profile already given on line %zu", f[0],
		    a->profile_line);
		return 0;
	}
	a->has_profile = true;
	a->profile_line = ln;
	a->io_mode = mode;
	a->volume = vol;
	a->iops = iops;
	a->mdops = md;
	return 0;
}

static void slowdown_line(struct sim_curves *c, struct errs *e, size_t ln,
			  char **f, size_t nf, size_t seen[][SIM_N_CLASSES])
{
	enum sim_class v, d;
	double x;

	if (nf != 3) {
		bad(e, ln, "expected 3 fields (%s), got %zu", SLOWDOWN_HDR, nf);
		return;
	}
	if (sim_class_parse(f[0], &v) < 0) {
		bad(e, ln,
		    "victim '%s': one of light, iops, bandwidth, "
		    "metadata, n-1",
		    f[0]);
		return;
	}
	if (sim_class_parse(f[1], &d) < 0) {
		bad(e, ln,
		    "disruptor '%s': one of light, iops, bandwidth, "
		    "metadata, n-1",
		    f[1]);
		return;
	}
	if (parse_num(f[2], &x) < 0 || x < 1) {
		bad(e, ln, "slowdown '%s': not a number >= 1", f[2]);
		return;
	}
	if (seen[v][d]) {
		bad(e, ln, "slowdown %s,%s already given on line %zu", f[0],
		    f[1], seen[v][d]);
		return;
	}
	seen[v][d] = ln;
	c->slowdown[v][d] = x;
}

/* Read one line: strip the newline (and a CR), return NULL at EOF. */
static char *next_line(FILE *f, char **buf, size_t *cap)
{
	ssize_t n = getline(buf, cap, f);

	if (n < 0)
		return NULL;
	while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
		(*buf)[--n] = '\0';
	return *buf;
}

static bool skip_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0' || *s == '#';
}

struct sim_curves *sim_curves_parse(FILE *in, const char *name,
				    fwd_error_t *err)
{
	struct sim_curves *c = calloc(1, sizeof(*c));
	struct errs e = {.err = err, .file = name};
	size_t seen[SIM_N_CLASSES][SIM_N_CLASSES] = {{0}};
	enum section sec = SEC_NONE;
	char *buf = NULL, *line, *f[MAX_FIELDS];
	size_t cap = 0, ln = 0;
	struct sim_curves *rv = NULL;

	if (err)
		err->text[0] = '\0';
	if (!c || !(c->path = strdup(name))) {
		errprintf(err, "%s: out of memory", name);
		goto out;
	}
	sim_default_slowdown(c->slowdown);
	while (!errs_done(&e) && (line = next_line(in, &buf, &cap))) {
		size_t nf;

		ln++;
		if (skip_line(line))
			continue;
		if (strchr(line, '"')) {
			bad(&e, ln, "quoted fields are not supported");
			continue;
		}
		if (!strcmp(line, CURVE_HDR)) {
			sec = SEC_CURVE;
			continue;
		}
		if (!strcmp(line, PROFILE_HDR)) {
			sec = SEC_PROFILE;
			continue;
		}
		if (!strcmp(line, SLOWDOWN_HDR)) {
			sec = SEC_SLOWDOWN;
			continue;
		}
		nf = split(line, f);
		if (!strcmp(f[0], "app") || !strcmp(f[0], "victim")) {
			bad(&e, ln,
			    "unknown header; expected '%s', '%s' or "
			    "'%s'",
			    CURVE_HDR, PROFILE_HDR, SLOWDOWN_HDR);
			continue;
		}
		switch (sec) {
		case SEC_NONE:
			bad(&e, ln,
			    "data before a header line; the file "
			    "starts with '%s'",
			    CURVE_HDR);
			break;
		case SEC_CURVE:
			if (curve_line(c, &e, ln, f, nf) < 0) {
				errprintf(err, "%s: out of memory", name);
				goto out;
			}
			break;
		case SEC_PROFILE:
			if (profile_line(c, &e, ln, f, nf) < 0) {
				errprintf(err, "%s: out of memory", name);
				goto out;
			}
			break;
		case SEC_SLOWDOWN:
			slowdown_line(c, &e, ln, f, nf, seen);
			break;
		}
	}
	if (ferror(in)) {
		errprintf(err, "%s: read error: %s", name, strerror(errno));
		goto out;
	}
	if (!e.n && c->n_apps == 0)
		bad(&e, 0, "no curves (expected a '%s' section)", CURVE_HDR);
	for (size_t i = 0; i < c->n_apps && !e.n; i++) {
		const struct sim_app *a = &c->apps[i];

		if (a->n_pts == 0 && a->curve_line)
			bad(&e, a->curve_line,
			    "app '%s' has no point with forwarders >= 1",
			    a->name);
		else if (a->n_pts == 0)
			bad(&e, a->profile_line,
			    "app '%s' has a profile but no curve", a->name);
	}
	if (errs_finish(&e) < 0)
		goto out;
	rv = c;
	c = NULL;
out:
	free(buf);
	sim_curves_destroy(c);
	return rv;
}

struct sim_curves *sim_curves_load(const char *path, fwd_error_t *err)
{
	struct sim_curves *c;
	FILE *f = fopen(path, "r");

	if (!f) {
		errprintf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	c = sim_curves_parse(f, path, err);
	fclose(f);
	return c;
}

/* ---- jobs ------------------------------------------------------------ */

void sim_jobs_destroy(struct sim_jobs *j)
{
	int saved = errno;

	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		free(j->jobs[i].id);
	free(j->jobs);
	free(j->path);
	free(j);
	errno = saved;
}

/* Job ids are checked for duplicates with a hash set of indexes. */
struct idset {
	long *slot;
	size_t cap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

/* Returns the index already holding this id, or -1 after inserting idx. */
static long idset_add(struct idset *s, const struct sim_job *jobs, long idx)
{
	size_t i;

	i = hash_str(jobs[idx].id) & (s->cap - 1);
	while (s->slot[i] >= 0) {
		if (!strcmp(jobs[s->slot[i]].id, jobs[idx].id))
			return s->slot[i];
		i = (i + 1) & (s->cap - 1);
	}
	s->slot[i] = idx;
	return -1;
}

static int job_line(struct sim_jobs *j, const struct sim_curves *c,
		    struct errs *e, size_t ln, char **f, size_t nf,
		    bool with_io, size_t *cap)
{
	size_t want = with_io ? 7 : 6;
	struct sim_job job = {.io_seconds = -1, .line = ln};
	long a;

	if (nf != want) {
		bad(e, ln, "expected %zu fields (%s), got %zu", want,
		    with_io ? JOBS_HDR_IO : JOBS_HDR, nf);
		return 0;
	}
	if (!name_ok(f[0])) {
		bad(e, ln, "job_id '%s': letters, digits and ._-+:@/ only",
		    f[0]);
		return 0;
	}
	a = find_app(c, f[1]);
	if (a < 0) {
		bad(e, ln, "app '%s' has no curve in %s", f[1], c->path);
		return 0;
	}
	if (parse_uint(f[2], 10000000, &job.nodes) < 0 || job.nodes == 0) {
		bad(e, ln, "nodes '%s': not a positive node count", f[2]);
		return 0;
	}
	if (sim_parse_time(f[3], &job.submit) < 0) {
		bad(e, ln,
		    "submit '%s': not seconds or ISO-8601 UTC "
		    "(2024-05-01T10:00:00Z)",
		    f[3]);
		return 0;
	}
	if (sim_parse_time(f[4], &job.start) < 0) {
		bad(e, ln,
		    "start '%s': not seconds or ISO-8601 UTC "
		    "(2024-05-01T10:00:00Z)",
		    f[4]);
		return 0;
	}
	if (sim_parse_time(f[5], &job.end) < 0) {
		bad(e, ln,
		    "end '%s': not seconds or ISO-8601 UTC "
		    "(2024-05-01T10:00:00Z)",
		    f[5]);
		return 0;
	}
	if (job.start < job.submit) {
		bad(e, ln, "start '%s' is before submit '%s'", f[4], f[3]);
		return 0;
	}
	if (!(job.end > job.start)) {
		bad(e, ln, "end '%s' is not after start '%s'", f[5], f[4]);
		return 0;
	}
	if (with_io && *f[6]) {
		if (parse_num(f[6], &job.io_seconds) < 0 ||
		    !(job.io_seconds > 0)) {
			bad(e, ln, "io_seconds '%s': not a positive number",
			    f[6]);
			return 0;
		}
		if (job.io_seconds > job.end - job.start) {
			bad(e, ln,
			    "io_seconds '%s' is longer than the job "
			    "(%.0f s)",
			    f[6], job.end - job.start);
			return 0;
		}
	}
	if (job.io_seconds < 0 && !(c->apps[a].volume > 0)) {
		bad(e, ln,
		    "job '%s': no io_seconds and app '%s' has no "
		    "volume in %s",
		    f[0], f[1], c->path);
		return 0;
	}
	job.app = (size_t)a;
	if (FWD_GROW(j->jobs, *cap, j->n + 1, 1024) < 0)
		return -1;
	if (!(job.id = strdup(f[0])))
		return -1;
	j->jobs[j->n++] = job;
	return 0;
}

struct sim_jobs *sim_jobs_parse(FILE *in, const char *name,
				const struct sim_curves *c, fwd_error_t *err)
{
	struct sim_jobs *j = calloc(1, sizeof(*j));
	struct errs e = {.err = err, .file = name};
	struct idset ids = {0};
	char *buf = NULL, *line, *f[MAX_FIELDS];
	size_t cap = 0, jcap = 0, ln = 0;
	bool header = false, with_io = false;
	struct sim_jobs *rv = NULL;

	if (err)
		err->text[0] = '\0';
	if (!j || !(j->path = strdup(name))) {
		errprintf(err, "%s: out of memory", name);
		goto out;
	}
	while (!errs_done(&e) && (line = next_line(in, &buf, &cap))) {
		ln++;
		if (skip_line(line))
			continue;
		if (!header) {
			if (!strcmp(line, JOBS_HDR) ||
			    !strcmp(line, JOBS_HDR_IO)) {
				header = true;
				with_io = !strcmp(line, JOBS_HDR_IO);
				continue;
			}
			bad(&e, ln, "expected the header '%s' or '%s'",
			    JOBS_HDR, JOBS_HDR_IO);
			break;
		}
		if (strchr(line, '"')) {
			bad(&e, ln, "quoted fields are not supported");
			continue;
		}
		if (job_line(j, c, &e, ln, f, split(line, f), with_io, &jcap)) {
			errprintf(err, "%s: out of memory", name);
			goto out;
		}
	}
	if (ferror(in)) {
		errprintf(err, "%s: read error: %s", name, strerror(errno));
		goto out;
	}
	if (!e.n && !header)
		bad(&e, 0, "empty; expected the header '%s'", JOBS_HDR);
	else if (!e.n && j->n == 0)
		bad(&e, 0, "no jobs");
	if (!e.n) {
		ids.cap = 16;
		while (ids.cap < j->n * 2)
			ids.cap *= 2;
		if (!(ids.slot = malloc(ids.cap * sizeof(*ids.slot)))) {
			errprintf(err, "%s: out of memory", name);
			goto out;
		}
		memset(ids.slot, 0xff, ids.cap * sizeof(*ids.slot));
		for (size_t i = 0; i < j->n && !errs_done(&e); i++) {
			long d = idset_add(&ids, j->jobs, (long)i);

			if (d >= 0)
				bad(&e, j->jobs[i].line,
				    "job_id '%s' already used on line %zu",
				    j->jobs[i].id, j->jobs[d].line);
		}
	}
	if (errs_finish(&e) < 0)
		goto out;
	rv = j;
	j = NULL;
out:
	free(ids.slot);
	free(buf);
	sim_jobs_destroy(j);
	return rv;
}

struct sim_jobs *sim_jobs_load(const char *path, const struct sim_curves *c,
			       fwd_error_t *err)
{
	struct sim_jobs *j;
	FILE *f = fopen(path, "r");

	if (!f) {
		errprintf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	j = sim_jobs_parse(f, path, c, err);
	fclose(f);
	return j;
}
