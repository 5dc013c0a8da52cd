/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * This node's part of a job's decision.  With remap.decision_dir it comes
 * from the job's decision file, which the controller published once for
 * all the job's nodes (controller/publish.h): no database connection per
 * node.  Without it, or when the job has no such file, it is read with
 * the read-only node database account through the node_allocations_for
 * procedure, which returns only held rows and is all that account may use:
 * it can read no table, so it can lock none (db/SCHEMA.md).  The epilog's
 * revert reads nothing: the remap driver keeps what it applied per job, so
 * it still works after EpilogSlurmctld has released the rows.  Kept apart
 * from the SPANK callbacks so that the benchmark can time exactly what the
 * job prolog does.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/safedir.h"
#include "common/sha256.h"
#include "common/slurm_compat.h"
#include "controller/publish.h"
#include "db/db.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"

static bool node_in(const char *hostlist, const char *node)
{
	fwd_hostlist_t hl;
	bool in;

	if (!hostlist || !(hl = slurm_hostlist_create(hostlist)))
		return false;
	in = slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	return in;
}

/* One row of the job's decision, from either source. */
static void add_row(struct fwdalloc_node_decision *nd, const char *node,
		    const char *forwarder, const char *nodes,
		    const char *action, const char *addr)
{
	size_t n = nd->n;

	snprintf(nd->action, sizeof(nd->action), "%s", action ? action : "");
	if (!forwarder) { /* direct file-system access, or a fallback */
		if (!strcmp(nd->action, "direct"))
			nd->direct |= node_in(nodes, node);
		return;
	}
	if (!node_in(nodes, node) || n >= FWDALLOC_MAX_TARGETS)
		return;
	snprintf(nd->names[n], sizeof(nd->names[0]), "%s",
		 forwarder ? forwarder : "");
	nd->t[n].name = nd->names[n];
	if (addr && *addr) {
		snprintf(nd->addrs[n], sizeof(nd->addrs[0]), "%s", addr);
		nd->t[n].address = nd->addrs[n];
	}
	nd->n++;
}

static int db_decision(const struct policy *p, uint32_t job_id,
		       const char *node, struct fwdalloc_node_decision *nd,
		       fwd_error_t *err)
{
	struct db *db;
	struct db_stmt *st = NULL;
	int rv = -1, r, rows = 0;

	if (!(db = db_connect(&p->database, DB_ROLE_NODE, err)))
		return -1;
	/* Columns: forwarder, nodes, action, address. */
	st = db_prepare(db, "CALL node_allocations_for(?)", err);
	if (!st)
		goto out;
	db_bind_uint64(st, 0, job_id);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		rows++;
		add_row(nd, node, db_col_text(st, 0), db_col_text(st, 1),
			db_col_text(st, 2), db_col_text(st, 3));
	}
	if (r < 0)
		goto out;
	rv = rows > 0;
out:
	db_stmt_close(st);
	db_close(db);
	return rv;
}

/* A string member of at most max bytes (NUL excluded), or NULL. */
static const char *str_member(json_t *o, const char *key, size_t max,
			      bool nullable, bool *ok)
{
	json_t *v = json_object_get(o, key);

	if (nullable && json_is_null(v))
		return NULL;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		*ok = false;
		return NULL;
	}
	return json_string_value(v);
}

/*
 * The job's decision file, strictly: the exact members, the job, the
 * version, the digest of the rows, each row's exact members and bounded
 * strings.  1 or 0 as fwdalloc_node_decision(), -1 with err when it is
 * damaged, -2 when there is none (or it is empty).
 */
static int file_decision(const struct policy *p, uint32_t job_id,
			 const char *node, struct fwdalloc_node_decision *nd,
			 fwd_error_t *err)
{
	char path[PATH_MAX], digest[65];
	struct stat sb, db;
	json_t *doc = NULL, *rows, *v;
	json_error_t jerr;
	char *buf = NULL, *rtext = NULL;
	size_t len = 0;
	int fd, rv = -1;

	if (snprintf(path, sizeof(path), "%s/%u%s", p->remap.decision_dir,
		     job_id, FWD_DECISION_SUFFIX) >= (int)sizeof(path)) {
		errprintf(err, "decision file name too long");
		return -1;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return -2;
	if (fd < 0) {
		errprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Only the controller's user (the directory's owner) or root may
	 * have written it, and nobody else may change it. */
	if (fstat(fd, &sb) < 0 || stat(p->remap.decision_dir, &db) < 0) {
		errprintf(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode) || (sb.st_mode & 022) ||
	    (sb.st_uid != 0 && sb.st_uid != db.st_uid)) {
		errprintf(err,
			  "%s: not a regular file owned by the directory's "
			  "owner and writable by it alone",
			  path);
		goto out;
	}
	/* Empty: what a controller crash leaves of a file whose rows were
	 * not synced (controller/publish.h); the database has them. */
	if (sb.st_size == 0) {
		rv = -2;
		goto out;
	}
	if (sb.st_size < 0 || (uint64_t)sb.st_size > FWD_DECISION_MAX_BYTES) {
		errprintf(err, "%s: size %lld outside 1..%u bytes", path,
			  (long long)sb.st_size, FWD_DECISION_MAX_BYTES);
		goto out;
	}
	if (!(buf = malloc((size_t)sb.st_size + 1))) {
		errprintf(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	while (len <= (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)sb.st_size + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			errprintf(err, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len != (size_t)sb.st_size) {
		errprintf(err, "%s: changed while read", path);
		goto out;
	}
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		errprintf(err, "%s: line %d: %s", path, jerr.line, jerr.text);
		goto out;
	}
	rows = json_object_get(doc, "rows");
	v = json_object_get(doc, "digest");
	if (!json_is_object(doc) || json_object_size(doc) != 4 ||
	    !json_is_integer(json_object_get(doc, "version")) ||
	    json_integer_value(json_object_get(doc, "version")) !=
		    FWD_DECISION_VERSION ||
	    !json_is_integer(json_object_get(doc, "job")) ||
	    json_integer_value(json_object_get(doc, "job")) != job_id ||
	    !json_is_array(rows) ||
	    json_array_size(rows) > FWD_DECISION_MAX_ROWS ||
	    !json_is_string(v)) {
		errprintf(err,
			  "%s: not a version %d decision of job %u "
			  "(members version, job, rows, digest)",
			  path, FWD_DECISION_VERSION, job_id);
		goto out;
	}
	if (!(rtext = fwd_decision_rows_dump(rows))) {
		errprintf(err, "%s: out of memory", path);
		goto out;
	}
	sha256_hex(rtext, strlen(rtext), digest);
	if (strcmp(digest, json_string_value(v))) {
		errprintf(err, "%s: digest mismatch", path);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *row = json_array_get(rows, i);
		const char *fwd, *nodes, *action, *addr;
		bool ok = json_is_object(row) && json_object_size(row) == 4;

		fwd = ok ? str_member(row, "forwarder", 64, true, &ok) : NULL;
		nodes = ok ? str_member(row, "nodes", FWD_DECISION_MAX_BYTES,
					false, &ok)
			   : NULL;
		action = ok ? str_member(row, "action", 31, false, &ok) : NULL;
		addr = ok ? str_member(row, "address", 255, true, &ok) : NULL;
		/* No forwarder only for direct access or the controller's
		 * fallback, alone in the file. */
		if (ok && !fwd &&
		    ((strcmp(action, "direct") &&
		      strcmp(action, FWD_ACTION_FALLBACK)) ||
		     addr || json_array_size(rows) != 1))
			ok = false;
		if (!ok) {
			errprintf(err,
				  "%s: row %zu: not {forwarder, nodes, "
				  "action, address} with bounded strings "
				  "(forwarder null only in a direct or "
				  "fallback row)",
				  path, i + 1);
			goto out;
		}
		add_row(nd, node, fwd, nodes, action, addr);
	}
	rv = json_array_size(rows) > 0;
out:
	if (rv < 0)
		memset(nd, 0, sizeof(*nd));
	free(rtext);
	free(buf);
	json_decref(doc);
	close(fd);
	return rv;
}

int fwdalloc_node_decision(const struct policy *p, uint32_t job_id,
			   const char *node, struct fwdalloc_node_decision *nd,
			   fwd_error_t *err)
{
	int r;

	memset(nd, 0, sizeof(*nd));
	if (p->remap.decision_dir &&
	    fwd_dir_check(p->remap.decision_dir, 0, FWD_DIR_ANY_OWNER, err) <
		    0 &&
	    errno != ENOENT) {
		/* A file anyone can plant must not decide (nor fail) a job:
		 * ask the database. */
		snprintf(nd->file_refused, sizeof(nd->file_refused), "%s",
			 err->text);
	} else if (p->remap.decision_dir) {
		r = file_decision(p, job_id, node, nd, err);
		if (r != -2) {
			nd->source = FWDALLOC_SOURCE_FILE;
			if (r < 0)
				errprefix(err, "decision file");
			return r;
		}
	}
	nd->source = FWDALLOC_SOURCE_DB;
	return db_decision(p, job_id, node, nd, err);
}

/* Append "<node> <text>\n" to the job's file with suffix in decision_dir. */
static int node_line(const struct policy *p, uint32_t job_id,
		     const char *suffix, const char *node, const char *why,
		     fwd_error_t *err)
{
	char path[PATH_MAX], line[FWD_FALLBACK_LINE_MAX];
	size_t n;
	ssize_t w;
	int fd, k;

	if (!p->remap.decision_dir)
		return 0;
	if (snprintf(path, sizeof(path), "%s/%u%s", p->remap.decision_dir,
		     job_id, suffix) >= (int)sizeof(path)) {
		errprintf(err, "%s file name too long", suffix + 1);
		return -1;
	}
	/* "<node> <why>\n", one line whatever why holds, cut to fit. */
	k = snprintf(line, sizeof(line), "%s %s", node, why);
	n = k < 0 ? 0 : (size_t)k;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		errprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	w = write(fd, line, n);
	if (w != (ssize_t)n) {
		errprintf(err, "%s: %s", path,
			  w < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	return close(fd) < 0
		       ? (errprintf(err, "%s: %s", path, strerror(errno)), -1)
		       : 0;
}

int fwdalloc_node_fallback_note(const struct policy *p, uint32_t job_id,
				const char *node, const char *why,
				fwd_error_t *err)
{
	return node_line(p, job_id, FWD_FALLBACK_SUFFIX, node, why, err);
}

int fwdalloc_node_applied_note(const struct policy *p, uint32_t job_id,
			       const char *node, const char *action,
			       fwd_error_t *err)
{
	return node_line(p, job_id, FWD_APPLIED_SUFFIX, node, action, err);
}

void fwdalloc_node_names(const struct fwdalloc_node_decision *nd, char *buf,
			 size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nd->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? "," : "", nd->names[i]);
}
