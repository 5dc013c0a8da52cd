/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Controller-side database access: jobs, health, allocations,
 * audit.  Prepared statements only (monitor/db.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"
#include "controller/ctl_store.h"
#include "db/db.h"
#include "policies/policy.h"

/* Slurm writes "(null)" for unset job fields (e.g. no account). */
static const char *env_str(const char *name)
{
	const char *s = getenv(name);

	return s && *s && strcmp(s, "(null)") ? s : NULL;
}

int ctl_job_from_env(struct ctl_job *j, fwd_error_t *err)
{
	const char *id = env_str("SLURM_JOB_ID");
	const char *req = env_str("SPANK_IO_UPGRADE");
	const char *nn = env_str("SLURM_JOB_NUM_NODES");
	char *end;

	memset(j, 0, sizeof(*j));
	if (!id) {
		errno = EINVAL;
		return errprintf(err,
				 "SLURM_JOB_ID is not set: this command "
				 "is run by slurmctld as PrologSlurmctld or "
				 "EpilogSlurmctld");
	}
	errno = 0;
	j->job_num = strtoull(id, &end, 10);
	if (errno || *end || j->job_num == 0) {
		errno = EINVAL;
		return errprintf(err, "SLURM_JOB_ID=%s: not a job id", id);
	}
	snprintf(j->job_id, sizeof(j->job_id), "%llu",
		 (unsigned long long)j->job_num);
	j->user = env_str("SLURM_JOB_USER");
	if (!j->user)
		j->user = "";
	j->account = env_str("SLURM_JOB_ACCOUNT");
	j->name = env_str("SLURM_JOB_NAME");
	if (!j->name)
		j->name = "";
	j->partition = env_str("SLURM_JOB_PARTITION");
	j->nodes = env_str("SLURM_JOB_NODELIST");
	if (nn)
		j->n_nodes = (uint32_t)strtoul(nn, NULL, 10);
	j->request = ALLOC_REQ_NONE;
	j->request_name = "not requested";
	if (req) {
		if (alloc_request_parse(req, &j->request) < 0 ||
		    j->request == ALLOC_REQ_NONE) {
			errno = EINVAL;
			return errprintf(err,
					 "SPANK_IO_UPGRADE=%s: unknown "
					 "mode",
					 req);
		}
		j->request_name = alloc_request_name(j->request);
	}
	return 0;
}

int ctl_store_job_start(struct db *db, const struct ctl_job *j, double now,
			fwd_error_t *err)
{
	int64_t t = (int64_t)now;

	if (db_execf(db, err,
		     "INSERT INTO jobs (job_id, user, account, name, "
		     "partition_name, nodelist, node_count, start_at, state, "
		     "request, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
		     "'RUNNING', ?, ?) ON DUPLICATE KEY UPDATE "
		     "user = VALUES(user), account = VALUES(account), "
		     "name = VALUES(name), "
		     "partition_name = VALUES(partition_name), "
		     "nodelist = VALUES(nodelist), "
		     "node_count = VALUES(node_count), "
		     "start_at = VALUES(start_at), end_at = NULL, "
		     "state = 'RUNNING', request = VALUES(request), "
		     "updated_at = VALUES(updated_at)",
		     "usssssiisi", j->job_num, j->user, j->account, j->name,
		     j->partition, j->nodes, (int64_t)j->n_nodes, t,
		     j->request == ALLOC_REQ_NONE ? NULL : j->request_name,
		     t) < 0)
		return errprefix(err, "recording job %s", j->job_id);
	return 0;
}

int ctl_store_job_end(struct db *db, uint64_t job_num, const char *state,
		      double now, fwd_error_t *err)
{
	int64_t t = (int64_t)now;

	if (db_execf(db, err,
		     "UPDATE jobs SET end_at = ?, state = ?, updated_at = ? "
		     "WHERE job_id = ?",
		     "isiu", t, state, t, job_num) < 0)
		return errprefix(err, "recording the end of job %llu",
				 (unsigned long long)job_num);
	return 0;
}

int ctl_store_health(struct db *db, const struct topology *t,
		     enum alloc_health_state **fwd,
		     enum alloc_health_state **ost, fwd_error_t *err)
{
	struct db_stmt *st = NULL;
	int rv = -1, r;

	*fwd = calloc(t->n_forwarders ? t->n_forwarders : 1, sizeof(**fwd));
	*ost = calloc(t->n_osts ? t->n_osts : 1, sizeof(**ost));
	if (!*fwd || !*ost) {
		errprintf(err, "health: %s", strerror(errno));
		goto out;
	}
	st = db_prepare(db,
			"SELECT kind, name, state FROM health "
			"WHERE state <> 'ok'",
			err);
	if (!st || db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		enum alloc_health_state s;
		const char *kind = db_col_text(st, 0);
		const char *name = db_col_text(st, 1);
		long i;

		if (alloc_health_parse(db_col_text(st, 2), &s) < 0)
			continue;
		if (!strcmp(kind, "fwd") &&
		    (i = topo_forwarder_index(t, name)) >= 0)
			(*fwd)[i] = s;
		else if (!strcmp(kind, "ost") &&
			 (i = topo_ost_index(t, name)) >= 0)
			(*ost)[i] = s;
	}
	if (r < 0)
		goto out;
	rv = 0;
out:
	if (rv < 0) {
		errprefix(err, "loading forwarder health");
		free(*fwd);
		free(*ost);
		*fwd = *ost = NULL;
	}
	db_stmt_close(st);
	return rv;
}

static enum alloc_action action_parse(const char *a)
{
	for (int k = ALLOC_ACT_DEFAULT; k <= ALLOC_ACT_REFUSED; k++)
		if (a && !strcmp(a, alloc_action_name((enum alloc_action)k)))
			return (enum alloc_action)k;
	return ALLOC_ACT_DEFAULT;
}

struct pending {
	struct alloc_ledger_entry e;
	size_t cap;
	char job_id[24];
};

static int pending_flush(struct alloc_ledger *l, struct pending *pe,
			 fwd_error_t *err)
{
	int rv = 0;

	if (pe->e.n_forwarders > 0) {
		pe->e.job_id = pe->job_id;
		rv = alloc_ledger_add(l, &pe->e, err);
	}
	pe->e.n_forwarders = 0;
	pe->e.n_nodes = 0;
	return rv;
}

int ctl_store_ledger(struct db *db, struct alloc_ledger *l, size_t *skipped,
		     fwd_error_t *err)
{
	const struct topology *t = alloc_ledger_topology(l);
	struct pending pe;
	struct db_stmt *st = NULL;
	uint64_t cur = 0;
	size_t skip = 0;
	int rv = -1, r;

	memset(&pe, 0, sizeof(pe));
	pe.cap = t->n_forwarders ? t->n_forwarders : 1;
	pe.e.forwarders = calloc(pe.cap, sizeof(*pe.e.forwarders));
	pe.e.private_fwd = calloc(pe.cap, sizeof(*pe.e.private_fwd));
	if (!pe.e.forwarders || !pe.e.private_fwd) {
		errprintf(err, "ledger: %s", strerror(errno));
		goto out;
	}
	st = db_prepare(db,
			"SELECT job_id, forwarder, is_private, node_count, "
			"action, acquired_at, io_mode, mdops_rate, "
			"bandwidth_bps, iops FROM allocations "
			"WHERE released_at IS NULL ORDER BY job_id, id",
			err);
	if (!st || db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		uint64_t job = db_col_uint64(st, 0);
		long f = topo_forwarder_index(t, db_col_text(st, 1));
		bool dup = false;

		if (job != cur) {
			if (pending_flush(l, &pe, err) < 0)
				goto out;
			cur = job;
			snprintf(pe.job_id, sizeof(pe.job_id), "%llu",
				 (unsigned long long)job);
		}
		if (f < 0) {
			skip++;
			continue;
		}
		for (size_t i = 0; i < pe.e.n_forwarders; i++)
			dup |= pe.e.forwarders[i] == (uint32_t)f;
		if (!dup && pe.e.n_forwarders < pe.cap) {
			pe.e.forwarders[pe.e.n_forwarders] = (uint32_t)f;
			pe.e.private_fwd[pe.e.n_forwarders++] =
				db_col_int64(st, 2) != 0;
		}
		pe.e.n_nodes += (size_t)db_col_uint64(st, 3);
		pe.e.action = action_parse(db_col_text(st, 4));
		pe.e.acquired_at = db_col_double(st, 5);
		if (alloc_io_mode_parse(db_col_text(st, 6), &pe.e.io_mode) < 0)
			pe.e.io_mode = ALLOC_IO_UNKNOWN;
		pe.e.mdops = db_col_double(st, 7);
		pe.e.bandwidth_bps = db_col_double(st, 8);
		pe.e.iops = db_col_double(st, 9);
	}
	if (r < 0 || pending_flush(l, &pe, err) < 0)
		goto out;
	db_stmt_close(st);

	/* Least recently released first: each forwarder's last release. */
	st = db_prepare(db,
			"SELECT forwarder, MAX(released_at) FROM allocations "
			"WHERE released_at IS NOT NULL GROUP BY forwarder",
			err);
	if (!st || db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		long f = topo_forwarder_index(t, db_col_text(st, 0));

		if (f >= 0)
			alloc_ledger_set_last_release(l, (uint32_t)f,
						      db_col_double(st, 1));
	}
	if (r < 0)
		goto out;
	if (skipped)
		*skipped = skip;
	rv = 0;
out:
	if (rv < 0)
		errprefix(err, "loading the allocation ledger");
	db_stmt_close(st);
	free(pe.e.forwarders);
	free(pe.e.private_fwd);
	return rv;
}

int ctl_store_job_held(struct db *db, uint64_t job_num, fwd_error_t *err)
{
	int64_t n = 0;

	if (db_query_int64(db, err, &n,
			   "SELECT COUNT(*) FROM allocations WHERE job_id = ? "
			   "AND released_at IS NULL",
			   "u", job_num) < 0)
		return -1;
	return n > 0;
}

int ctl_store_allocation(struct db *db, const struct topology *t,
			 const struct alloc_decision *d,
			 const struct ctl_job *j, double now, fwd_error_t *err)
{
	const struct alloc_profile *pr = d->has_profile ? &d->profile : NULL;
	const char *action = alloc_action_name(d->action);
	struct db_stmt *st;
	int rv = -1;

	st = db_prepare(db,
			"INSERT INTO allocations (job_id, forwarder, "
			"is_private, nodes, node_count, action, acquired_at, "
			"io_mode, mdops_rate, bandwidth_bps, iops) "
			"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			err);
	if (!st)
		goto out;
	db_bind_uint64(st, 0, j->job_num);
	db_bind_text(st, 5, action);
	db_bind_int64(st, 6, (int64_t)now);
	db_bind_text(st, 7,
		     pr && pr->io_mode != ALLOC_IO_UNKNOWN
			     ? alloc_io_mode_name(pr->io_mode)
			     : "none");
	db_bind_double(st, 8, pr ? pr->mdops : 0);
	db_bind_double(st, 9, pr ? pr->peak_bandwidth_bps : 0);
	db_bind_double(st, 10, pr ? pr->iops : 0);
	for (size_t i = 0; i < d->n_mapping; i++) {
		uint32_t f = d->mapping[i].forwarder;
		size_t count = 0;
		bool priv = false;

		for (size_t b = 0; b < d->n_blocks; b++)
			if (d->blocks[b].forwarder == f)
				count += d->blocks[b].count;
		for (size_t k = 0; k < d->n_forwarders; k++)
			if (d->forwarders[k] == f)
				priv = d->private_fwd[k];
		/* A shadow decision holds the defaults, shared. */
		if (d->action == ALLOC_ACT_SHADOW)
			priv = false;
		db_bind_text(st, 1, t->forwarders[f].name);
		db_bind_int64(st, 2, priv);
		db_bind_text(st, 3, d->mapping[i].nodes);
		db_bind_int64(st, 4, (int64_t)count);
		if (db_exec(st, err) < 0) {
			if (errno == EEXIST)
				errprintf(err,
					  "forwarder %s is already held "
					  "privately by another job",
					  t->forwarders[f].name);
			goto out;
		}
	}
	rv = 0;
out:
	if (rv < 0)
		errprefix(err, "writing the allocation of job %s", j->job_id);
	db_stmt_close(st);
	return rv;
}

int ctl_store_release(struct db *db, uint64_t job_num, const char *reason,
		      double now, uint64_t *released, fwd_error_t *err)
{
	int64_t n;

	n = db_execf(db, err,
		     "UPDATE allocations SET released_at = ?, "
		     "release_reason = ? WHERE job_id = ? AND "
		     "released_at IS NULL",
		     "isu", (int64_t)now, reason, job_num);
	if (n < 0)
		return errprefix(err, "releasing the allocation of job %llu",
				 (unsigned long long)job_num);
	if (released)
		*released = (uint64_t)n;
	return 0;
}

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

int ctl_store_audit(struct db *db, const json_t *record, fwd_error_t *err)
{
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
	if (db_execf(db, err,
		     "INSERT INTO audit (ts, job_id, user, account, request, "
		     "action, reasons, inputs, forwarders_before, "
		     "forwarders_after, outcome, elapsed_us, record) "
		     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		     "iusssssssssis",
		     (int64_t)json_number_value(json_object_get(record, "ts")),
		     (uint64_t)strtoull(job ? job : "0", NULL, 10),
		     json_string_value(json_object_get(record, "user")),
		     json_string_value(json_object_get(record, "account")),
		     audit_request(record),
		     json_string_value(json_object_get(record, "action")),
		     reasons, inputs, before, after,
		     json_string_value(json_object_get(record, "outcome")),
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
