/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job's decision file for its node prologs and the count of the nodes
 * that fell back (controller/publish.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/safedir.h"
#include "common/sha256.h"
#include "common/slurm_compat.h"
#include "common/vocab.h"
#include "controller/job.h"
#include "controller/ledger_store.h"
#include "controller/publish.h"
#include "db/db.h"
#include "policies/policy.h"
#include "topology/topology.h"

static int job_path(const struct policy *p, const struct ctl_job *j,
		    const char *suffix, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%llu%s", p->remap.decision_dir,
			 (unsigned long long)j->job_num, suffix);

	return n > 0 && (size_t)n < len ? 0 : -1;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The job's held rows, as node_allocations_for returns them. */
static json_t *held_rows(struct db *db, uint64_t job, fwd_error_t *err)
{
	struct db_stmt *st = NULL;
	json_t *rows = json_array();
	int r;

	if (!rows)
		goto fail;
	st = db_queryf(db, err,
		       "SELECT forwarder, nodes, action, address FROM "
		       "node_allocations WHERE job_id = ? ORDER BY id",
		       "u", job);
	if (!st)
		goto fail;
	while ((r = db_fetch(st, err)) > 0) {
		json_t *row = json_object();

		json_object_set_new(row, "forwarder",
				    str_or_null(db_col_text(st, 0)));
		json_object_set_new(row, "nodes",
				    str_or_null(db_col_text(st, 1)));
		json_object_set_new(row, "action",
				    str_or_null(db_col_text(st, 2)));
		json_object_set_new(row, "address",
				    str_or_null(db_col_text(st, 3)));
		json_array_append_new(rows, row);
	}
	if (r < 0)
		goto fail;
	db_stmt_close(st);
	return rows;
fail:
	db_stmt_close(st);
	json_decref(rows);
	return NULL;
}

/* The rows the decision wrote (w), as node_allocations would return them:
 * the addresses are the topology's, which `fwdctl db init` copies into
 * forwarders. */
static json_t *written_rows(const struct ctl_pub_written *w, fwd_error_t *err)
{
	const char *action = fwd_action_name(w->d->action);
	json_t *rows = json_array();

	if (!rows)
		goto nomem;
	for (size_t i = 0; i < w->n; i++) {
		const struct ledger_alloc_row *r = &w->rows[i];
		json_t *row = json_object();

		if (!row || json_array_append_new(rows, row) < 0)
			goto nomem;
		json_object_set_new(row, "forwarder",
				    json_string(r->forwarder));
		json_object_set_new(row, "nodes", json_string(r->nodes));
		json_object_set_new(row, "action", json_string(action));
		json_object_set_new(
			row, "address",
			str_or_null(w->t->forwarders[r->fwd].address));
	}
	return rows;
nomem:
	json_decref(rows);
	errno = ENOMEM;
	errprintf(err, "decision file: out of memory");
	return NULL;
}

/* text into a temporary file beside path, mode 0644, not yet synced:
 * pb->fd stays open for publish_place().  0, or -1 with err (nothing left). */
static int write_tmp(const char *dir, const char *path, const char *text,
		     struct ctl_pub *pb, fwd_error_t *err)
{
	/* Nodes trust what is here: only this account may write into it
	 * (common/safedir.h); else they read the database. */
	if (fwd_dir_check(dir, 0755, geteuid(), err) < 0)
		return -1;
	if (snprintf(pb->tmp, sizeof(pb->tmp), "%s.tmp.XXXXXX", path) >=
		    (int)sizeof(pb->tmp) ||
	    snprintf(pb->path, sizeof(pb->path), "%s", path) >=
		    (int)sizeof(pb->path)) {
		errno = ENAMETOOLONG;
		errprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((pb->fd = mkostemp(pb->tmp, O_CLOEXEC)) < 0) {
		errprintf(err, "%s: %s", pb->tmp, strerror(errno));
		return -1;
	}
	if (fchmod(pb->fd, 0644) < 0 ||
	    fwd_write_all(pb->fd, text, strlen(text)) < 0 ||
	    fwd_write_all(pb->fd, "\n", 1) < 0) {
		int e = errno;

		close(pb->fd);
		pb->fd = -1;
		unlink(pb->tmp);
		errno = e;
		errprintf(err, "%s: %s", pb->tmp, strerror(errno));
		return -1;
	}
	return 0;
}

/* The temporary file of write_tmp(), fsync'd if pb->sync, renamed over
 * its path.  0, or -1 with err (nothing left). */
static int publish_place(struct ctl_pub *pb, fwd_error_t *err)
{
	int fd = pb->fd;

	pb->fd = -1;
	if (fd < 0)
		return 0;
	if (pb->sync && fsync(fd) < 0) {
		int e = errno;

		close(fd);
		unlink(pb->tmp);
		errno = e;
		errprintf(err, "%s: %s", pb->tmp, strerror(errno));
		return -1;
	}
	if (close(fd) < 0 || rename(pb->tmp, pb->path) < 0) {
		int e = errno;

		unlink(pb->tmp);
		errno = e;
		errprintf(err, "%s: %s", pb->path, strerror(errno));
		return -1;
	}
	return 0;
}

static void unlink_decision(const struct policy *p, const struct ctl_job *j)
{
	char path[PATH_MAX];

	if (p->remap.decision_dir &&
	    job_path(p, j, FWD_DECISION_SUFFIX, path, sizeof(path)) == 0)
		unlink(path);
}

/* Direct file-system access, or a prolog that fell back, holds no
 * allocation row: one row with no forwarder tells the job's nodes. */
static json_t *no_forwarder_rows(const struct ctl_job *j, const char *action)
{
	json_t *rows = json_array(), *row = json_object();

	if (!rows || !row || !j->nodes) {
		json_decref(rows);
		json_decref(row);
		return NULL;
	}
	json_object_set_new(row, "forwarder", json_null());
	json_object_set_new(row, "nodes", json_string(j->nodes));
	json_object_set_new(row, "action", json_string(action));
	json_object_set_new(row, "address", json_null());
	json_array_append_new(rows, row);
	return rows;
}

/*
 * The decision file of j (rows: those w wrote, else those of the
 * database, or the one row of action without a forwarder when both are
 * NULL).  0, or -1 with err and no file left.
 */
static int publish(struct db *db, const struct ctl_pub_written *w,
		   const struct policy *p, const struct ctl_job *j,
		   const char *action, struct ctl_pub *pb, fwd_error_t *err)
{
	char path[PATH_MAX], digest[65];
	json_t *rows = NULL, *doc = NULL;
	char *rtext = NULL, *text = NULL;
	int rv = -1;

	if (job_path(p, j, FWD_DECISION_SUFFIX, path, sizeof(path)) < 0) {
		errno = ENAMETOOLONG;
		errprintf(err, "%s: %s", p->remap.decision_dir,
			  strerror(errno));
		goto out;
	}
	if (w) {
		if (!(rows = written_rows(w, err)))
			goto out;
	} else if (db) {
		if (!(rows = held_rows(db, j->job_num, err)))
			goto out;
	} else if (!(rows = no_forwarder_rows(j, action))) {
		errno = ENOMEM;
		errprintf(err, "decision file: cannot build the %s row",
			  action);
		goto out;
	}
	if (!(rtext = fwd_decision_rows_dump(rows))) {
		errno = ENOMEM;
		errprintf(err, "decision file: cannot serialise");
		goto out;
	}
	sha256_hex(rtext, strlen(rtext), digest);
	doc = json_object();
	json_object_set_new(doc, "version", json_integer(FWD_DECISION_VERSION));
	json_object_set_new(doc, "job", json_integer((json_int_t)j->job_num));
	json_object_set(doc, "rows", rows);
	json_object_set_new(doc, "digest", json_string(digest));
	if (!(text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
		errno = ENOMEM;
		errprintf(err, "decision file: cannot serialise");
		goto out;
	}
	if (strlen(text) + 1 > FWD_DECISION_MAX_BYTES) {
		errno = EFBIG;
		errprintf(err, "%s: %zu bytes, more than nodes accept", path,
			  strlen(text) + 1);
		goto out;
	}
	pb->sync = !db && !w;
	rv = write_tmp(p->remap.decision_dir, path, text, pb, err);
out:
	if (rv < 0)
		unlink_decision(p, j);
	free(rtext);
	free(text);
	json_decref(doc);
	json_decref(rows);
	return rv;
}

int ctl_publish_prepare(struct db *db, const struct policy *p,
			const struct ctl_job *j, bool direct,
			const struct ctl_pub_written *w, struct ctl_pub *pb,
			fwd_error_t *err)
{
	pb->fd = -1;
	if (!p->remap.decision_dir)
		return 0;
	if (publish(direct ? NULL : db, direct ? NULL : w, p, j,
		    fwd_action_name(FWD_ACT_DIRECT), pb, err) < 0)
		return errprefix(err, "publishing the decision of job %s",
				 j->job_id);
	return 0;
}

int ctl_publish_finish(const struct policy *p, const struct ctl_job *j,
		       struct ctl_pub *pb, fwd_error_t *err)
{
	if (publish_place(pb, err) < 0) {
		unlink_decision(p, j);
		return errprefix(err, "publishing the decision of job %s",
				 j->job_id);
	}
	return 0;
}

int ctl_publish_decision(struct db *db, const struct policy *p,
			 const struct ctl_job *j, bool direct,
			 const struct ctl_pub_written *w, fwd_error_t *err)
{
	struct ctl_pub pb;

	if (ctl_publish_prepare(db, p, j, direct, w, &pb, err) < 0)
		return -1;
	return ctl_publish_finish(p, j, &pb, err);
}

int ctl_publish_fallback(const struct policy *p, const struct ctl_job *j,
			 fwd_error_t *err)
{
	if (!p->remap.decision_dir || !j->nodes)
		return 0;
	struct ctl_pub pb = {.fd = -1};

	if (publish(NULL, NULL, p, j, FWD_ACTION_FALLBACK, &pb, err) < 0 ||
	    publish_place(&pb, err) < 0) {
		unlink_decision(p, j);
		return errprefix(err, "publishing the fallback of job %s",
				 j->job_id);
	}
	return 0;
}

void ctl_publish_withdraw(const struct policy *p, const struct ctl_job *j)
{
	unlink_decision(p, j);
}

/* The fallback file's contents (at most FWD_FALLBACK_MAX_BYTES), malloc'd
 * and NUL-terminated, or NULL when there is none. */
static char *read_bounded(const char *path)
{
	struct stat sb;
	char *buf = NULL;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    !(buf = malloc(FWD_FALLBACK_MAX_BYTES + 1)))
		goto out;
	while (len < FWD_FALLBACK_MAX_BYTES) {
		ssize_t r = read(fd, buf + len, FWD_FALLBACK_MAX_BYTES - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
out:
	close(fd);
	return buf;
}

/* A node name as written by a node prolog: printable, no blank, short. */
static int node_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* The node names of a node file, sorted, for reported(). */
struct names {
	char **v;
	size_t n, cap;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/*
 * Read and remove the node file at path ("<node> <text>\n" lines): *count
 * lines, the first FWD_FALLBACK_MAX_NODES names appended to list (when
 * not NULL), every name added to seen.
 */
static void read_node_file(const char *path, json_int_t *count, json_t *list,
			   struct names *seen)
{
	char *buf = read_bounded(path), *line, *next;

	unlink(path);
	for (line = buf; line && *line; line = next) {
		const char *name;
		size_t n;

		next = strchr(line, '\n');
		if (!next) /* a partial last line is not a record */
			break;
		*next++ = '\0';
		n = strcspn(line, " ");

		(*count)++;
		line[n] = '\0';
		name = node_name_ok(line, n) ? line : "?";
		if (list && json_array_size(list) < FWD_FALLBACK_MAX_NODES)
			json_array_append_new(list, json_string(name));
		if (FWD_GROW(seen->v, seen->cap, seen->n + 1, 64) == 0 &&
		    (seen->v[seen->n] = strdup(name)))
			seen->n++;
	}
	free(buf);
}

/*
 * The job's nodes that reported nothing, the first FWD_FALLBACK_MAX_NODES
 * in list: their count, or -1 when the job's node list is not a hostlist.
 */
static json_int_t silent_nodes(const struct ctl_job *j, struct names *seen,
			       json_t *list)
{
	fwd_hostlist_t hl;
	json_int_t n = 0;
	char *host;

	if (!j->nodes || !(hl = slurm_hostlist_create(j->nodes)))
		return -1;
	if (seen->n)
		qsort(seen->v, seen->n, sizeof(*seen->v), name_cmp);
	while ((host = slurm_hostlist_shift(hl))) {
		if (!seen->n || !bsearch(&host, seen->v, seen->n,
					 sizeof(*seen->v), name_cmp)) {
			n++;
			if (json_array_size(list) < FWD_FALLBACK_MAX_NODES)
				json_array_append_new(list, json_string(host));
		}
		free(host);
	}
	slurm_hostlist_destroy(hl);
	return n;
}

void ctl_publish_collect(const struct policy *p, const struct ctl_job *j,
			 json_t *rec)
{
	char path[PATH_MAX], dpath[PATH_MAX];
	struct names seen = {NULL, 0, 0};
	json_t *nodes, *fb, *out, *silent;
	json_int_t count = 0, applied = 0, n_silent = -1;
	bool published;

	if (!p->remap.decision_dir)
		return;
	/* A published decision (or fallback): every node of the job was
	 * to report what its prolog did. */
	published = job_path(p, j, FWD_DECISION_SUFFIX, dpath, sizeof(dpath)) ==
			    0 &&
		    access(dpath, F_OK) == 0;
	ctl_publish_withdraw(p, j);
	if (job_path(p, j, FWD_FALLBACK_SUFFIX, path, sizeof(path)) < 0)
		return;
	nodes = json_array();
	read_node_file(path, &count, nodes, &seen);
	if (job_path(p, j, FWD_APPLIED_SUFFIX, path, sizeof(path)) == 0)
		read_node_file(path, &applied, NULL, &seen);
	silent = json_array();
	if (published)
		n_silent = silent_nodes(j, &seen, silent);
	names_free(&seen);
	fb = json_object();
	json_object_set_new(fb, "count", json_integer(count));
	json_object_set_new(fb, "nodes", nodes);
	json_object_set_new(rec, "node_fallbacks", fb);
	out = json_object();
	json_object_set_new(out, "applied", json_integer(applied));
	json_object_set_new(out, "fell_back", json_integer(count));
	json_object_set_new(out, "silent",
			    n_silent < 0 ? json_null()
					 : json_integer(n_silent));
	json_object_set_new(out, "silent_nodes", silent);
	json_object_set_new(rec, "node_outcomes", out);
	/* Said where `fwdctl audit` shows it: the outcome. */
	if (count > 0 || n_silent > 0) {
		const char *o =
			json_string_value(json_object_get(rec, "outcome"));
		char text[512];

		snprintf(text, sizeof(text),
			 "%s; nodes: %lld did not apply (fell back), %lld "
			 "never reported (fwdalloc plugin not loaded there?)",
			 o ? o : "", (long long)count,
			 (long long)(n_silent > 0 ? n_silent : 0));
		json_object_set_new(rec, "outcome", json_string(text));
	}
}
