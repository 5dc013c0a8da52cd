/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The audit trail (controller/audit.h): records, the file writer (one
 * record, one write(2), O_APPEND) and reader, and the audit table.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "allocator/decision_json.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "db/db.h"
#include "policies/policy.h"
#include "topology/topology.h"

static int ensure_dir(const char *path, fwd_error_t *err)
{
	char copy[PATH_MAX];
	char *dir;

	if (strlen(path) >= sizeof(copy)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "audit file %s: path too long", path);
	}
	strcpy(copy, path);
	dir = dirname(copy);
	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		return errprintf(err, "audit directory %s: %s", dir,
				 strerror(errno));
	return 0;
}

/* The audit file, opened for appending, its directory made when missing;
 * -1 with errno and err. */
static int open_append(const char *path, fwd_error_t *err)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0 && errno == ENOENT) {
		if (ensure_dir(path, err) < 0)
			return -1;
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			  0640);
	}
	if (fd < 0)
		errprintf(err, "audit file %s: %s", path, strerror(errno));
	return fd;
}

int audit_order_lock(const char *path)
{
	fwd_error_t err;
	int fd;

	if (!path || !*path || (fd = open_append(path, &err)) < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

void audit_order_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int audit_append_line(const char *path, const char *line, fwd_error_t *err)
{
	size_t n = strlen(line);
	char *buf = NULL;
	ssize_t w;
	int fd = -1, rv = -1;

	if (!path || !*path) {
		errno = EINVAL;
		return errprintf(err, "audit file: no path configured");
	}
	if (memchr(line, '\n', n)) {
		errno = EINVAL;
		return errprintf(err, "audit record contains a newline");
	}
	if (!(buf = malloc(n + 2))) {
		errprintf(err, "audit record: %s", strerror(errno));
		goto out;
	}
	memcpy(buf, line, n);
	buf[n] = '\n';
	buf[n + 1] = '\0';
	if ((fd = open_append(path, err)) < 0)
		goto out;
	/* One write: never loop, a second write could land after another
	 * writer's record and split this one. */
	w = write(fd, buf, n + 1);
	if (w < 0) {
		errprintf(err, "audit file %s: write: %s", path,
			  strerror(errno));
		goto out;
	}
	if ((size_t)w != n + 1) {
		/* Whole lines or nothing: cut the file back to where this
		 * record began (O_APPEND put it at the end; our offset is
		 * now its end), so that no half record stays and the next
		 * one does not continue its line. */
		off_t end = lseek(fd, 0, SEEK_CUR);

		if (end >= w && ftruncate(fd, end - w) == 0) {
			errno = ENOSPC;
			errprintf(err,
				  "audit file %s: short write (%zd of %zu "
				  "bytes: file system full or over quota); "
				  "the partial record was removed",
				  path, w, n + 1);
		} else {
			int e = end < w ? EINVAL : errno;

			/* At least end the line for the next record. */
			if (write(fd, "\n", 1) < 0) {
				/* nothing more to try */
			}
			errno = e;
			errprintf(err,
				  "audit file %s: short write (%zd of %zu "
				  "bytes); cannot remove the partial record: "
				  "%s",
				  path, w, n + 1, strerror(e));
		}
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0 && close(fd) < 0 && rv == 0)
		rv = errprintf(err, "audit file %s: close: %s", path,
			       strerror(errno));
	free(buf);
	return rv;
}

int audit_append(const char *path, const json_t *record, fwd_error_t *err)
{
	char *line = json_dumps(record, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rv;

	if (!line) {
		errno = ENOMEM;
		return errprintf(err, "audit record: cannot serialise");
	}
	rv = audit_append_line(path, line, err);
	free(line);
	return rv;
}

/* ---- records ---------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The fields every record has, in the documented order. */
static json_t *record_base(const struct ctl_job *j, const char *event, double t)
{
	char when[40];
	json_t *r = json_object();

	fwd_time_format_ms(t, when, sizeof(when));
	json_object_set_new(r, "time", json_string(when));
	json_object_set_new(r, "ts", json_integer((json_int_t)t));
	json_object_set_new(r, "event", json_string(event));
	json_object_set_new(r, "job_id", json_string(j->job_id));
	json_object_set_new(r, "user", json_string(j->user));
	json_object_set_new(r, "account", str_or_null(j->account));
	json_object_set_new(r, "partition", str_or_null(j->partition));
	json_object_set_new(r, "name", json_string(j->name));
	json_object_set_new(r, "nodes", str_or_null(j->nodes));
	json_object_set_new(r, "request", json_string(j->request_name));
	return r;
}

static json_t *names_json(const struct topology *t, const uint32_t *idx,
			  size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      json_string(t->forwarders[idx[i]].name));
	return a;
}

/* Default forwarders of the job's nodes, for fallback records; empty when
 * the topology or node list is unusable. */
static json_t *defaults_json(const struct topology *t, const char *nodes)
{
	uint32_t *fwd = NULL;
	size_t n = 0, unknown = 0;
	json_t *a;

	if (!t || !nodes ||
	    topo_hostlist_default_forwarders(t, nodes, &fwd, &n, &unknown,
					     NULL) < 0 ||
	    unknown)
		n = 0;
	a = names_json(t, fwd, n);
	free(fwd);
	return a;
}

json_t *audit_record_fallback(const struct ctl_job *j, const struct topology *t,
			      const char *event, const char *why, double now,
			      uint64_t elapsed_us)
{
	json_t *r = record_base(j, event, now);
	char outcome[1100];
	json_t *defs = defaults_json(t, j->nodes);

	snprintf(outcome, sizeof(outcome), "fallback: %s", why);
	json_object_set_new(r, "action", json_string("default"));
	json_object_set_new(r, "reasons", json_pack("[s]", outcome));
	json_object_set_new(r, "inputs", json_null());
	json_object_set_new(r, "forwarders_before", json_deep_copy(defs));
	json_object_set_new(r, "forwarders_after", defs);
	json_object_set_new(r, "mapping", json_array());
	json_object_set_new(r, "outcome", json_string(outcome));
	json_object_set_new(r, "decision", json_null());
	json_object_set_new(r, "elapsed_us",
			    json_integer((json_int_t)elapsed_us));
	return r;
}

static const char *outcome_of(const struct alloc_decision *d)
{
	switch (d->action) {
	case FWD_ACT_SCALE:
	case FWD_ACT_ISOLATE:
	case FWD_ACT_AVOID_ANOMALY:
	case FWD_ACT_DIRECT:
		return "applied";
	case FWD_ACT_SHADOW:
		return "shadow";
	default:
		return "default";
	}
}

json_t *audit_record_decision(const struct ctl_job *j, const struct topology *t,
			      const struct alloc_decision *d, double now)
{
	json_t *r = record_base(j, "prolog", now);
	json_t *reasons = json_array(), *mapping = json_array();
	json_t *dec = alloc_decision_json(d);

	for (size_t i = 0; i < d->n_reasons; i++)
		json_array_append_new(reasons, json_string(d->reasons[i]));
	if (j->request == FWD_REQ_NONE)
		json_array_append_new(reasons,
				      json_string("upgrade not requested"));
	for (size_t i = 0; i < d->n_mapping; i++)
		json_array_append_new(
			mapping,
			json_pack("{s:s,s:s}", "nodes", d->mapping[i].nodes,
				  "forwarder",
				  t->forwarders[d->mapping[i].forwarder].name));
	json_object_set_new(r, "action",
			    json_string(fwd_action_name(d->action)));
	json_object_set_new(r, "reasons", reasons);
	json_object_set_new(
		r, "inputs",
		dec && json_object_get(dec, "profile")
			? json_incref(json_object_get(dec, "profile"))
			: json_null());
	json_object_set_new(r, "forwarders_before",
			    names_json(t, d->defaults, d->n_defaults));
	/* Shadow changes nothing: the job stays on its defaults. */
	if (d->action == FWD_ACT_SHADOW)
		json_object_set_new(r, "forwarders_after",
				    names_json(t, d->defaults, d->n_defaults));
	else
		json_object_set_new(
			r, "forwarders_after",
			names_json(t, d->forwarders, d->n_forwarders));
	json_object_set_new(r, "mapping", mapping);
	json_object_set_new(r, "outcome", json_string(outcome_of(d)));
	json_object_set_new(r, "policy_digest", json_string(d->policy_digest));
	json_object_set_new(r, "decision", dec ? dec : json_null());
	json_object_set_new(r, "elapsed_us",
			    json_integer((json_int_t)d->elapsed_us));
	return r;
}

json_t *audit_record_release(const struct ctl_job *j, double now,
			     uint64_t released, const char *failed,
			     uint64_t elapsed_us)
{
	json_t *rec = record_base(j, "epilog", now);
	char outcome[1100];

	if (failed)
		snprintf(outcome, sizeof(outcome), "fallback: %s", failed);
	else
		snprintf(outcome, sizeof(outcome),
			 "released %llu allocation row(s)",
			 (unsigned long long)released);
	json_object_set_new(rec, "action", json_string("release"));
	json_object_set_new(rec, "reasons", json_array());
	json_object_set_new(rec, "inputs", json_null());
	json_object_set_new(rec, "forwarders_before", json_null());
	json_object_set_new(rec, "forwarders_after", json_null());
	json_object_set_new(rec, "mapping", json_null());
	json_object_set_new(rec, "outcome", json_string(outcome));
	json_object_set_new(rec, "decision", json_null());
	json_object_set_new(rec, "elapsed_us",
			    json_integer((json_int_t)elapsed_us));
	return rec;
}

json_t *audit_record_reconcile(uint64_t job_num, double now, uint64_t released)
{
	char when[40], id[24], outcome[64];

	fwd_time_format_ms(now, when, sizeof(when));
	snprintf(id, sizeof(id), "%llu", (unsigned long long)job_num);
	snprintf(outcome, sizeof(outcome), "released %llu allocation row(s)",
		 (unsigned long long)released);
	return json_pack("{s:s,s:I,s:s,s:s,s:n,s:n,s:n,s:n,s:n,"
			 "s:s,s:s,s:[s],s:n,s:n,s:n,s:n,s:s,s:n,"
			 "s:i}",
			 "time", when, "ts", (json_int_t)now, "event",
			 "reconcile", "job_id", id, "user", "account",
			 "partition", "name", "nodes", "request", "-", "action",
			 "release", "reasons", "Slurm no longer runs this job",
			 "inputs", "forwarders_before", "forwarders_after",
			 "mapping", "outcome", outcome, "decision",
			 "elapsed_us", 0);
}

/* ---- the audit table -------------------------------------------------- */

static char *dump_member(const json_t *record, const char *key)
{
	json_t *v = json_object_get(record, key);

	if (!v || json_is_null(v))
		return NULL;
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* The audit table stores NULL for "not requested" (SCHEMA.md). */
static const char *audit_request(const json_t *record)
{
	const char *r = json_string_value(json_object_get(record, "request"));

	return r && strcmp(r, "not requested") ? r : NULL;
}

/*
 * The columns' limits in characters (db/schema.c: audit.user and account
 * VARCHAR(64), request and action VARCHAR(16), outcome VARCHAR(255)).
 * Record strings are valid UTF-8 (jansson holds nothing else).
 */
#define AUDIT_USER_MAX 64
#define AUDIT_WORD_MAX 16
#define AUDIT_OUTCOME_MAX 255

/* s cut to at most max characters, ending in "..." when cut; NULL stays
 * NULL.  The result is s itself or buf (4 * max + 1 bytes). */
static const char *cut_utf8(const char *s, size_t max, char *buf)
{
	size_t chars = 0, i, keep = 0;

	if (!s)
		return NULL;
	for (i = 0; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && ++chars == max - 2)
			keep = i; /* where character max - 2 starts */
	if (chars <= max)
		return s;
	memcpy(buf, s, keep);
	strcpy(buf + keep, "...");
	return buf;
}

int audit_store(struct db *db, const json_t *record, fwd_error_t *err)
{
	char user[AUDIT_USER_MAX * 4 + 1], account[AUDIT_USER_MAX * 4 + 1];
	char request[AUDIT_WORD_MAX * 4 + 1], action[AUDIT_WORD_MAX * 4 + 1];
	char outcome[AUDIT_OUTCOME_MAX * 4 + 1];
	char *reasons = dump_member(record, "reasons");
	char *inputs = dump_member(record, "inputs");
	char *before = dump_member(record, "forwarders_before");
	char *after = dump_member(record, "forwarders_after");
	char *all = json_dumps(record, JSON_COMPACT | JSON_PRESERVE_ORDER);
	const char *job = json_string_value(json_object_get(record, "job_id"));
	int rv = -1;

	if (!all) {
		errno = ENOMEM;
		errprintf(err, "audit record: cannot serialise");
		goto out;
	}
	if (db_execf(
		    db, err,
		    "INSERT INTO audit (ts, job_id, user, account, request, "
		    "action, reasons, inputs, forwarders_before, "
		    "forwarders_after, outcome, elapsed_us, record) "
		    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		    "iusssssssssis",
		    (int64_t)json_number_value(json_object_get(record, "ts")),
		    (uint64_t)strtoull(job ? job : "0", NULL, 10),
		    cut_utf8(json_string_value(json_object_get(record, "user")),
			     AUDIT_USER_MAX, user),
		    cut_utf8(json_string_value(
				     json_object_get(record, "account")),
			     AUDIT_USER_MAX, account),
		    cut_utf8(audit_request(record), AUDIT_WORD_MAX, request),
		    cut_utf8(json_string_value(
				     json_object_get(record, "action")),
			     AUDIT_WORD_MAX, action),
		    reasons, inputs, before, after,
		    cut_utf8(json_string_value(
				     json_object_get(record, "outcome")),
			     AUDIT_OUTCOME_MAX, outcome),
		    (int64_t)json_integer_value(
			    json_object_get(record, "elapsed_us")),
		    all) < 0) {
		errprefix(err, "writing the audit record");
		goto out;
	}
	rv = 0;
out:
	free(reasons);
	free(inputs);
	free(before);
	free(after);
	free(all);
	return rv;
}

int audit_store_job_decision(struct db *db, uint64_t job_num, json_t **record,
			     fwd_error_t *err)
{
	return audit_store_job_event(db, job_num, "prolog", record, err);
}

int audit_store_job_event(struct db *db, uint64_t job_num, const char *event,
			  json_t **record, fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1, r;

	*record = NULL;
	st = db_queryf(db, err,
		       "SELECT record FROM audit WHERE job_id = ? AND "
		       "JSON_VALUE(record, '$.event') = ? "
		       "ORDER BY id DESC LIMIT 1",
		       "us", job_num, event);
	if (!st || (r = db_fetch(st, err)) < 0)
		goto out;
	if (r > 0 && db_col_text(st, 0))
		*record = json_loads(db_col_text(st, 0), 0, NULL);
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int audit_job_direct(struct db *db, uint64_t job_num, bool *direct,
		     fwd_error_t *err)
{
	json_t *rec;
	const char *action;

	*direct = false;
	if (audit_store_job_decision(db, job_num, &rec, err) < 0)
		return -1;
	action = json_string_value(json_object_get(rec, "action"));
	*direct = action && !strcmp(action, fwd_action_name(FWD_ACT_DIRECT));
	json_decref(rec);
	return 0;
}

/* ---- reading the file ------------------------------------------------- */

static bool passes(const struct audit_filter *f, const json_t *r)
{
	const char *v;

	if (!f)
		return true;
	if (f->job_id &&
	    (!(v = json_string_value(json_object_get(r, "job_id"))) ||
	     strcmp(v, f->job_id)))
		return false;
	if (f->user && (!(v = json_string_value(json_object_get(r, "user"))) ||
			strcmp(v, f->user)))
		return false;
	if (f->have_since &&
	    json_number_value(json_object_get(r, "ts")) < f->since - 0.5)
		return false;
	return true;
}

/* One line of a (possibly gzip-compressed) file into *line, without its
 * newline: its length, 0 at the end, -1 on a read error. */
static ssize_t gz_line(gzFile in, char **line, size_t *cap)
{
	size_t n = 0;

	for (;;) {
		if (*cap - n < 2) {
			size_t ncap = *cap ? *cap * 2 : 4096;
			char *p = realloc(*line, ncap);

			if (!p)
				return -1;
			*line = p;
			*cap = ncap;
		}
		if (!gzgets(in, *line + n, (int)(*cap - n))) {
			int zerr;

			gzerror(in, &zerr);
			if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
				errno = EIO;
				return -1;
			}
			return (ssize_t)n; /* end of file */
		}
		n += strlen(*line + n);
		if (n > 0 && (*line)[n - 1] == '\n') {
			(*line)[--n] = '\0';
			return (ssize_t)n + 1; /* > 0 even for an empty line */
		}
		if (gzeof(in))
			return (ssize_t)n;
	}
}

int audit_read(const char *path, const struct audit_filter *f,
	       int (*fn)(void *arg, unsigned long lineno, const char *line,
			 const json_t *rec),
	       void *arg, fwd_error_t *err)
{
	unsigned long lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	gzFile in;
	int fd, rv = 0;

	/* gzdopen reads a plain file unchanged: one reader for the live
	 * file and its rotated copies, compressed or not. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errprintf(err, "%s: %s", path, strerror(errno));
	if (!(in = gzdopen(fd, "r"))) {
		int e = errno ? errno : ENOMEM;

		close(fd);
		errno = e;
		return errprintf(err, "%s: %s", path, strerror(e));
	}
	while (rv >= 0 && (n = gz_line(in, &line, &cap)) > 0) {
		json_t *r;

		lineno++;
		if (!line[0])
			continue; /* an empty line (a truncated rotation) */
		if (!(r = json_loads(line, 0, NULL))) {
			rv = fn(arg, lineno, line, NULL);
			continue;
		}
		if (passes(f, r))
			rv = fn(arg, lineno, line, r);
		json_decref(r);
	}
	if (rv >= 0 && n < 0) {
		int e = errno;

		rv = errprintf(err, "%s: line %lu: %s", path, lineno + 1,
			       strerror(e));
		errno = e;
	}
	free(line);
	gzclose(in);
	return rv < 0 ? -1 : 0;
}

/* The rotated copy number k of `path` that exists (logrotate: path.k or,
 * compressed, path.k.gz), into buf; false when neither exists. */
static bool rotated_name(const char *path, unsigned k, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%u", path, k);
	if (access(buf, F_OK) == 0)
		return true;
	snprintf(buf, len, "%s.%u.gz", path, k);
	return access(buf, F_OK) == 0;
}

int audit_read_all(const char *path, const struct audit_filter *f,
		   int (*fn)(void *arg, unsigned long lineno, const char *line,
			     const json_t *rec),
		   void *arg, fwd_error_t *err)
{
	char name[PATH_MAX];
	unsigned k = 0;
	bool any = false;

	while (k < 100000 && rotated_name(path, k + 1, name, sizeof(name)))
		k++;
	/* The oldest rotated copy first, the live file last. */
	for (; k > 0; k--) {
		if (!rotated_name(path, k, name, sizeof(name)))
			continue;
		if (audit_read(name, f, fn, arg, err) < 0)
			return -1;
		any = true;
	}
	if (audit_read(path, f, fn, arg, err) < 0) {
		if (errno == ENOENT && any)
			return 0;
		return -1;
	}
	return 0;
}

int audit_read_db(struct db *db, const struct audit_filter *f,
		  int (*fn)(void *arg, unsigned long lineno, const char *line,
			    const json_t *rec),
		  void *arg, fwd_error_t *err)
{
	unsigned long rowno = 0;
	struct db_stmt *st;
	int rv = -1, r = 0;
	uint64_t job = 0;

	if (f && f->job_id) {
		char *end;

		errno = 0;
		job = strtoull(f->job_id, &end, 10);
		if (errno || end == f->job_id || *end) {
			errno = EINVAL;
			return errprintf(err, "job id '%s': not a number",
					 f->job_id);
		}
	}
	st = db_prepare(db,
			"SELECT record FROM audit WHERE record IS NOT NULL "
			"AND (? IS NULL OR job_id = ?) "
			"AND (? IS NULL OR user = ?) "
			"AND (? IS NULL OR ts >= ?) "
			"ORDER BY ts, id",
			err);
	if (!st)
		return -1;
	if (f && f->job_id) {
		db_bind_uint64(st, 0, job);
		db_bind_uint64(st, 1, job);
	}
	if (f && f->user) {
		db_bind_text(st, 2, f->user);
		db_bind_text(st, 3, f->user);
	}
	if (f && f->have_since) {
		db_bind_int64(st, 4, (int64_t)(f->since - 0.5));
		db_bind_int64(st, 5, (int64_t)(f->since - 0.5));
	}
	if (db_exec(st, err) < 0)
		goto out;
	while (r >= 0 && (r = db_fetch(st, err)) > 0) {
		const char *text = db_col_text(st, 0);
		json_t *rec = text ? json_loads(text, 0, NULL) : NULL;
		char *line;

		rowno++;
		if (!rec) {
			r = fn(arg, rowno, text ? text : "", NULL);
			continue;
		}
		/* One line, as the file holds it. */
		line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (passes(f, rec))
			r = fn(arg, rowno, line ? line : text, rec);
		free(line);
		json_decref(rec);
		if (r > 0)
			r = 1;
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

/* ---- replaying fallbacks into the table -------------------------------- */

struct replay_pos {
	unsigned long long dev, ino;
	long long off;
};

static int replay_state_read(const char *state, struct replay_pos *pos,
			     fwd_error_t *err)
{
	FILE *f = fopen(state, "re");
	int n;

	memset(pos, 0, sizeof(*pos));
	if (!f)
		return errno == ENOENT ? 0
				       : errprintf(err, "%s: %s", state,
						   strerror(errno));
	n = fscanf(f, "%llu %llu %lld", &pos->dev, &pos->ino, &pos->off);
	fclose(f);
	if (n != 3 || pos->off < 0) {
		/* Damaged: start again from the live file's beginning (a
		 * record already stored is found and not stored twice). */
		memset(pos, 0, sizeof(*pos));
	}
	return 0;
}

static int replay_state_write(const char *state, const struct replay_pos *pos,
			      fwd_error_t *err)
{
	char tmp[PATH_MAX];
	FILE *f;
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp", state);

	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "%s: path too long", state);
	}
	if (!(f = fopen(tmp, "we")))
		return errprintf(err, "%s: %s", tmp, strerror(errno));
	fprintf(f, "%llu %llu %lld\n", pos->dev, pos->ino, pos->off);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		int e = errno;

		fclose(f);
		unlink(tmp);
		errno = e;
		return errprintf(err, "%s: %s", tmp, strerror(e));
	}
	fclose(f);
	if (rename(tmp, state) < 0) {
		int e = errno;

		unlink(tmp);
		errno = e;
		return errprintf(err, "%s: %s", state, strerror(e));
	}
	return 0;
}

/* Is the record in the table already? */
static int replay_stored(struct db *db, const json_t *rec, bool *stored,
			 fwd_error_t *err)
{
	const char *job = json_string_value(json_object_get(rec, "job_id"));
	const char *time = json_string_value(json_object_get(rec, "time"));
	const char *event = json_string_value(json_object_get(rec, "event"));
	struct db_stmt *st;
	int r;

	st = db_queryf(db, err,
		       "SELECT COUNT(*) FROM audit WHERE job_id = ? AND "
		       "ts = ? AND JSON_VALUE(record, '$.time') = ? AND "
		       "JSON_VALUE(record, '$.event') = ?",
		       "uiss", (uint64_t)strtoull(job ? job : "0", NULL, 10),
		       (int64_t)json_number_value(json_object_get(rec, "ts")),
		       time ? time : "", event ? event : "");
	if (!st || (r = db_fetch(st, err)) < 0) {
		db_stmt_close(st);
		return -1;
	}
	*stored = r > 0 && db_col_uint64(st, 0) > 0;
	db_stmt_close(st);
	return 0;
}

/* Read `file` (opened) from pos->off, storing the fallback records the
 * table lacks; pos->off follows the last whole line handled. */
static int replay_file(struct db *db, FILE *f, struct replay_pos *pos,
		       uint64_t *n, fwd_error_t *err)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rv = -1;

	if (fseeko(f, (off_t)pos->off, SEEK_SET) < 0) {
		errprintf(err, "seeking to %lld: %s", pos->off,
			  strerror(errno));
		goto out;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		json_t *rec;
		const char *o;
		bool stored = false;

		if (line[len - 1] != '\n')
			break; /* a record being written: next time */
		rec = json_loads(line, 0, NULL);
		o = rec ? json_string_value(json_object_get(rec, "outcome"))
			: NULL;
		if (o && !strncmp(o, "fallback:", 9)) {
			if (replay_stored(db, rec, &stored, err) < 0 ||
			    (!stored && audit_store(db, rec, err) < 0)) {
				json_decref(rec);
				goto out;
			}
			if (!stored)
				(*n)++;
		}
		json_decref(rec);
		pos->off += len;
	}
	rv = 0;
out:
	free(line);
	return rv;
}

int audit_replay(struct db *db, const char *path, const char *state,
		 uint64_t *n, fwd_error_t *err)
{
	struct replay_pos pos;
	fwd_error_t serr;
	struct stat st, st1;
	char rotated[PATH_MAX];
	FILE *f;
	int rv;

	*n = 0;
	if (replay_state_read(state, &pos, err) < 0)
		return -1;
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			return 0;
		return errprintf(err, "audit file %s: %s", path,
				 strerror(errno));
	}
	if (fstat(fileno(f), &st) < 0) {
		fclose(f);
		return errprintf(err, "audit file %s: %s", path,
				 strerror(errno));
	}
	if (st.st_dev != pos.dev || st.st_ino != pos.ino ||
	    st.st_size < pos.off) {
		/* Not the file of the state: the one that was is the newest
		 * rotated copy, whose rest comes first. */
		FILE *old;

		snprintf(rotated, sizeof(rotated), "%s.1", path);
		if (pos.ino && (old = fopen(rotated, "re"))) {
			if (fstat(fileno(old), &st1) == 0 &&
			    st1.st_dev == pos.dev && st1.st_ino == pos.ino &&
			    st1.st_size >= pos.off &&
			    replay_file(db, old, &pos, n, err) < 0) {
				fclose(old);
				fclose(f);
				return errprefix(err, "audit file %s", rotated);
			}
			fclose(old);
		}
		pos.dev = st.st_dev;
		pos.ino = st.st_ino;
		pos.off = 0;
	}
	rv = replay_file(db, f, &pos, n, err);
	fclose(f);
	if (rv < 0)
		errprefix(err, "audit file %s", path);
	/* Whatever was stored stays stored: the state follows it. */
	if (replay_state_write(state, &pos, &serr) < 0 && rv == 0) {
		*err = serr;
		return -1;
	}
	return rv;
}

const double audit_latency_bounds[AUDIT_LATENCY_BUCKETS] = {
	0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10,
};

int audit_metrics(struct db *db, struct audit_metrics *m, fwd_error_t *err)
{
	/* One row per action; the bucket bounds are in microseconds. */
	static const char sql[] =
		"SELECT action, COUNT(*), SUM(outcome LIKE 'fallback:%'), "
		"SUM(elapsed_us), SUM(elapsed_us <= 1000), "
		"SUM(elapsed_us <= 5000), SUM(elapsed_us <= 10000), "
		"SUM(elapsed_us <= 50000), SUM(elapsed_us <= 100000), "
		"SUM(elapsed_us <= 500000), SUM(elapsed_us <= 1000000), "
		"SUM(elapsed_us <= 5000000), SUM(elapsed_us <= 10000000) "
		"FROM audit WHERE JSON_VALUE(record, '$.event') = 'prolog' "
		"GROUP BY action ORDER BY action";
	struct db_stmt *st;
	int r, rv = -1;

	memset(m, 0, sizeof(*m));
	if (!(st = db_prepare(db, sql, err)) || db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const char *a = db_col_text(st, 0);
		uint64_t n = db_col_uint64(st, 1);

		if (m->n_actions < AUDIT_METRICS_ACTIONS) {
			snprintf(m->action[m->n_actions], sizeof(m->action[0]),
				 "%s", a ? a : "");
			m->by_action[m->n_actions++] = n;
		}
		m->decisions += n;
		m->fallbacks += db_col_uint64(st, 2);
		m->elapsed_sum += db_col_double(st, 3) / 1e6;
		for (int b = 0; b < AUDIT_LATENCY_BUCKETS; b++)
			m->le[b] += db_col_uint64(st, 4 + (unsigned)b);
	}
	if (r < 0)
		goto out;
	db_stmt_close(st);
	st = db_prepare(
		db,
		"SELECT COALESCE(SUM(JSON_VALUE(record, "
		"'$.node_outcomes.fell_back')), 0), "
		"COALESCE(SUM(JSON_VALUE(record, '$.node_outcomes.silent')), "
		"0) "
		"FROM audit WHERE JSON_VALUE(record, '$.event') = 'epilog'",
		err);
	if (!st || db_exec(st, err) < 0 || (r = db_fetch(st, err)) < 0)
		goto out;
	if (r > 0) {
		m->node_fell_back = db_col_uint64(st, 0);
		m->node_silent = db_col_uint64(st, 1);
	}
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int audit_prune(struct db *db, const struct policy_retention *r, int64_t now,
		bool dry_run, struct db_pruned *out, size_t *n,
		fwd_error_t *err)
{
	struct db_pruned *p = &out[*n];

	if (r->audit <= 0)
		return 0; /* keep forever */
	p->table = "audit";
	p->cutoff = now - (int64_t)r->audit;
	if (db_prune_before(db, p, "ts", dry_run, err) < 0)
		return -1;
	(*n)++;
	return 0;
}
