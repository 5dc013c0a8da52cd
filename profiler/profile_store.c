/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The profile store (profiles): predictions from the stored runs,
 * lookup at launch, rebuild, import and show.  Every statement is
 * prepared.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "profiler/profile.h"
#include "profiler/profile_priv.h"

const char *profile_source_name(enum profile_source s)
{
	switch (s) {
	case PROFILE_SOURCE_HISTORY:
		return "history";
	case PROFILE_SOURCE_STORED:
		return "stored";
	default:
		return "none";
	}
}

/* ---- the profiles row ---- */

static json_t *bw_json(const struct profile *pr)
{
	json_t *o = profile_to_json(pr), *bw;

	if (!o)
		return NULL;
	bw = json_incref(json_object_get(o, "bandwidth_by_forwarders"));
	json_decref(o);
	return bw;
}

/* Upsert a profiles row.  figures is stolen. */
static int write_row(struct db *db, const struct policy *p,
		     const struct profile_job *job, const char *key,
		     const struct profile *pr, json_t *figures,
		     uint64_t last_job_id, int64_t now, fwd_error_t *err)
{
	const char *user = NULL, *account = NULL, *name = NULL,
		   *partition = NULL;
	bool bucket = false;
	char *fig = NULL, *bw = NULL;
	json_t *bwj = bw_json(pr);
	struct db_stmt *st = NULL;
	int rv = -1;

	for (size_t i = 0; i < p->history.key.count; i++) {
		const char *f = p->history.key.items[i];

		if (!strcmp(f, "user"))
			user = job->user ? job->user : "";
		else if (!strcmp(f, "account"))
			account = job->account ? job->account : "";
		else if (!strcmp(f, "name"))
			name = job->name ? job->name : "";
		else if (!strcmp(f, "partition"))
			partition = job->partition ? job->partition : "";
		else if (!strcmp(f, "node_bucket"))
			bucket = true;
	}
	fig = figures ? json_dumps(figures, JSON_COMPACT) : NULL;
	bw = bwj ? json_dumps(bwj, JSON_COMPACT) : NULL;
	if ((figures && !fig) || !bw) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	st = db_prepare(
		db,
		"INSERT INTO profiles (profile_key, user, account, name,"
		" partition_name, node_bucket, runs, read_bytes, write_bytes,"
		" io_nodes, io_mode, node_bandwidth_bps, peak_bandwidth_bps,"
		" iops, mdops_rate, metadata_queue, runtime, figures,"
		" bandwidth_by_forwarders, last_job_id, updated_at)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
		" ON DUPLICATE KEY UPDATE user = VALUES(user),"
		" account = VALUES(account), name = VALUES(name),"
		" partition_name = VALUES(partition_name),"
		" node_bucket = VALUES(node_bucket), runs = VALUES(runs),"
		" read_bytes = VALUES(read_bytes),"
		" write_bytes = VALUES(write_bytes),"
		" io_nodes = VALUES(io_nodes), io_mode = VALUES(io_mode),"
		" node_bandwidth_bps = VALUES(node_bandwidth_bps),"
		" peak_bandwidth_bps = VALUES(peak_bandwidth_bps),"
		" iops = VALUES(iops), mdops_rate = VALUES(mdops_rate),"
		" metadata_queue = VALUES(metadata_queue),"
		" runtime = VALUES(runtime), figures = VALUES(figures),"
		" bandwidth_by_forwarders = VALUES(bandwidth_by_forwarders),"
		" last_job_id = VALUES(last_job_id),"
		" updated_at = VALUES(updated_at)",
		err);
	if (!st)
		goto out;
	db_bind_text(st, 0, key);
	db_bind_text(st, 1, user);
	db_bind_text(st, 2, account);
	db_bind_text(st, 3, name);
	db_bind_text(st, 4, partition);
	if (bucket)
		db_bind_uint64(
			st, 5,
			profile_bucket(job->nodes, p->history.bucket_base));
	else
		db_bind_null(st, 5);
	db_bind_uint64(st, 6, pr->runs);
	db_bind_uint64(st, 7, pr->read_bytes);
	db_bind_uint64(st, 8, pr->write_bytes);
	db_bind_uint64(st, 9, pr->io_nodes);
	db_bind_text(st, 10, fwd_io_mode_name(pr->io_mode));
	db_bind_double(st, 11, pr->node_bandwidth_bps);
	db_bind_double(st, 12, pr->peak_bandwidth_bps);
	db_bind_double(st, 13, pr->iops);
	db_bind_double(st, 14, pr->mdops);
	db_bind_double(st, 15, pr->metadata_queue);
	db_bind_double(st, 16, pr->runtime);
	db_bind_text(st, 17, fig);
	db_bind_text(st, 18, bw);
	if (last_job_id)
		db_bind_uint64(st, 19, last_job_id);
	else
		db_bind_null(st, 19);
	db_bind_int64(st, 20, now);
	if (db_exec(st, err) < 0)
		goto out;
	rv = 0;
out:
	db_stmt_close(st);
	json_decref(figures);
	json_decref(bwj);
	free(fig);
	free(bw);
	return rv;
}

/* figures of a computed profile: where it came from and its scale. */
static json_t *history_figures(const struct profile *pr,
			       const struct profile_runs *rs)
{
	json_t *ids = json_array();
	json_t *o;

	for (size_t i = 0; ids && i < rs->n && json_array_size(ids) < 50; i++)
		json_array_append_new(ids,
				      json_integer((json_int_t)rs->job_ids[i]));
	o = json_pack("{ss sI sI so so}", "source", "history", "nodes",
		      (json_int_t)pr->scale_nodes, "io_volume_bytes",
		      (json_int_t)pr->io_volume_bytes, "recent_job_ids",
		      ids ? ids : json_array(), "curve",
		      profile_curve_json(pr));
	return o;
}

/* Predict from rs at the scale of its newest run and store the row. */
static int store_prediction(struct db *db, const struct policy *p,
			    const struct profile_job *job, const char *key,
			    const struct profile_runs *rs, int64_t now,
			    fwd_error_t *err)
{
	struct profile pr;
	size_t newest = 0;

	for (size_t i = 1; i < rs->n; i++)
		if (rs->v[i].end_time > rs->v[newest].end_time)
			newest = i;
	if (profile_predict(rs->v, rs->n, rs->v[newest].nodes, p->history.runs,
			    p->history.max_age, now, &pr))
		return 0;
	if (write_row(db, p, job, key, &pr, history_figures(&pr, rs),
		      rs->job_ids[newest], now, err))
		return -1;
	return 1;
}

int profile_db_update(struct db *db, const struct policy *p,
		      const struct profile_job *job,
		      const struct profile_jobref *jobs, size_t n, int64_t now,
		      fwd_error_t *err)
{
	char key[PROFILE_KEY_MAX + 1];
	struct profile_runs rs = {0};
	int rv = -1;

	if (profile_key(p, job, key, sizeof(key), err))
		return -1;
	if (profile_db_runs(db, jobs, n, PROFILE_LAUNCH_RUNS, &rs, err))
		goto out;
	rv = rs.n ? store_prediction(db, p, job, key, &rs, now, err) : 0;
out:
	profile_runs_free(&rs);
	return rv;
}

/* ---- lookup at launch ---- */

/* Read bandwidth_by_forwarders text into pr->bw. */
static void parse_bw(const char *text, struct profile *pr)
{
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;
	const char *k;
	json_t *v;

	pr->n_bw = 0;
	if (!json_is_object(o))
		goto out;
	json_object_foreach (o, k, v) {
		char *end;
		unsigned long n = strtoul(k, &end, 10);
		size_t i;

		/* n = 0: direct file-system access, no forwarder */
		if (*end || end == k || n > UINT32_MAX || !json_is_number(v) ||
		    pr->n_bw == PROFILE_MAX_BW)
			continue;
		for (i = pr->n_bw; i > 0 && pr->bw[i - 1].k > n; i--)
			pr->bw[i] = pr->bw[i - 1];
		pr->bw[i].k = (uint32_t)n;
		pr->bw[i].bps = json_number_value(v);
		pr->n_bw++;
	}
out:
	json_decref(o);
}

/* Columns of one profiles row, in PROFILE_ROW_SQL order. */
enum {
	PR_RUNS,
	PR_READ,
	PR_WRITE,
	PR_IO_NODES,
	PR_MODE,
	PR_NODE_BW,
	PR_PEAK_BW,
	PR_IOPS,
	PR_MDOPS,
	PR_MDQUEUE,
	PR_RUNTIME,
	PR_FIGURES,
	PR_BW,
	PR_BUCKET,
	PR_USER,
	PR_ACCOUNT,
	PR_NAME,
	PR_PARTITION,
	PR_LAST_JOB,
	PR_UPDATED,
};

#define PROFILE_ROW_SQL                                                   \
	"SELECT runs, read_bytes, write_bytes, io_nodes, io_mode,"        \
	" node_bandwidth_bps, peak_bandwidth_bps, iops, mdops_rate,"      \
	" metadata_queue, runtime, figures, bandwidth_by_forwarders,"     \
	" node_bucket, user, account, name, partition_name, last_job_id," \
	" updated_at FROM profiles WHERE profile_key = ?"

/*
 * Fetch the profiles row of key and decode its figures into *pr (volume
 * from the figures JSON when it has one, bandwidth by forwarders).
 * Returns 1 with *stp on the row (for the other columns) and *fig the
 * figures JSON (NULL if absent), both for the caller to release; 0 when
 * there is no row; -1 on error.  On 0 and -1 nothing is left open.
 */
static int profile_row(struct db *db, const char *key, struct profile *pr,
		       struct db_stmt **stp, json_t **fig, fwd_error_t *err)
{
	struct db_stmt *st;
	json_int_t vol;
	int r;

	*stp = NULL;
	*fig = NULL;
	st = db_prepare(db, PROFILE_ROW_SQL, err);
	if (!st)
		return -1;
	db_bind_text(st, 0, key);
	r = db_exec(st, err) < 0 ? -1 : db_fetch(st, err);
	if (r <= 0) {
		db_stmt_close(st);
		return r;
	}
	memset(pr, 0, sizeof(*pr));
	pr->runs = (uint32_t)db_col_uint64(st, PR_RUNS);
	pr->read_bytes = db_col_uint64(st, PR_READ);
	pr->write_bytes = db_col_uint64(st, PR_WRITE);
	pr->io_volume_bytes = pr->read_bytes + pr->write_bytes;
	pr->io_nodes = (uint32_t)db_col_uint64(st, PR_IO_NODES);
	pr->io_mode = profile_mode_of(db_col_text(st, PR_MODE));
	pr->node_bandwidth_bps = db_col_double(st, PR_NODE_BW);
	pr->peak_bandwidth_bps = db_col_double(st, PR_PEAK_BW);
	pr->iops = db_col_double(st, PR_IOPS);
	pr->mdops = db_col_double(st, PR_MDOPS);
	pr->metadata_queue = db_col_double(st, PR_MDQUEUE);
	pr->runtime = db_col_double(st, PR_RUNTIME);
	if (!db_col_null(st, PR_FIGURES))
		*fig = json_loads(db_col_text(st, PR_FIGURES), 0, NULL);
	vol = json_integer_value(json_object_get(*fig, "io_volume_bytes"));
	if (vol > 0)
		pr->io_volume_bytes = (uint64_t)vol;
	parse_bw(db_col_null(st, PR_BW) ? NULL : db_col_text(st, PR_BW), pr);
	*stp = st;
	return 1;
}

/* The profiles row of key, scaled to job->nodes.  1 found, 0 none. */
static int stored_profile(struct db *db, const char *key, uint32_t nodes,
			  struct profile *out, fwd_error_t *err)
{
	struct db_stmt *st;
	struct profile_run run;
	struct profile row, pr;
	json_t *fig;
	json_int_t fig_nodes;
	int rv;

	rv = profile_row(db, key, &row, &st, &fig, err);
	if (rv <= 0)
		return rv;
	memset(&run, 0, sizeof(run));
	run.read_bytes = row.read_bytes;
	run.write_bytes = row.write_bytes;
	run.io_volume_bytes = row.io_volume_bytes;
	run.io_nodes = row.io_nodes;
	run.io_mode = row.io_mode;
	run.node_bandwidth_bps = row.node_bandwidth_bps;
	run.peak_bandwidth_bps = row.peak_bandwidth_bps;
	run.iops = row.iops;
	run.mdops = row.mdops;
	run.metadata_queue = row.metadata_queue;
	run.runtime = row.runtime;
	run.nodes = (uint32_t)db_col_uint64(st, PR_BUCKET);
	fig_nodes = json_integer_value(json_object_get(fig, "nodes"));
	if (fig_nodes > 0)
		run.nodes = (uint32_t)fig_nodes;
	if (run.nodes == 0)
		run.nodes = nodes ? nodes : 1;
	/* the row is one aggregate: predict from it as a single run */
	if (profile_predict(&run, 1, nodes ? nodes : run.nodes, 1, 0, 0, &pr)) {
		rv = 0;
		goto out;
	}
	pr.runs = row.runs;
	memcpy(pr.bw, row.bw, sizeof(pr.bw));
	pr.n_bw = row.n_bw;
	*out = pr;
	rv = 1;
out:
	json_decref(fig);
	db_stmt_close(st);
	return rv;
}

int profile_lookup_runs(struct db *db, const struct policy *p,
			const struct profile_job *job,
			const struct profile_jobref *jobs, size_t n,
			int64_t now, struct profile_result *res,
			fwd_error_t *err)
{
	struct profile_runs rs = {0};
	int rv = -1, r;

	memset(res, 0, sizeof(*res));
	if (profile_key(p, job, res->key, sizeof(res->key), err))
		return -1;
	if (profile_db_runs(db, jobs, n, PROFILE_LAUNCH_RUNS, &rs, err))
		goto out;
	if (rs.n &&
	    profile_predict(rs.v, rs.n, job->nodes, p->history.runs,
			    p->history.max_age, now, &res->profile) == 0) {
		res->source = PROFILE_SOURCE_HISTORY;
		rv = 1;
		goto out;
	}
	r = stored_profile(db, res->key, job->nodes, &res->profile, err);
	if (r < 0)
		goto out;
	if (r > 0)
		res->source = PROFILE_SOURCE_STORED;
	else
		memset(&res->profile, 0, sizeof(res->profile));
	rv = r;
out:
	profile_runs_free(&rs);
	return rv;
}

/* ---- rebuild ---- */

/* The jobs table's strings whole: up to 64 (user, account, partition)
 * and 255 (name) characters of up to 4 bytes (controller/job.h).  A
 * shorter copy would cut a name, and a cut name has another key (or
 * invalid UTF-8). */
struct keyed {
	char *key;
	struct profile_run run;
	uint64_t job_id;
	char user[257], account[257], name[1021], partition[257];
	bool has_account, has_partition;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->run.end_time > y->run.end_time
		       ? -1
		       : x->run.end_time < y->run.end_time;
}

static int cmp_jobref(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a;
	uint64_t y = ((const struct profile_jobref *)b)->job_id;

	return x < y ? -1 : x > y;
}

static void copy_str(char *dst, size_t len, const char *s, bool *has)
{
	if (has)
		*has = s != NULL;
	snprintf(dst, len, "%s", s ? s : "");
}

int profile_db_rebuild(struct db *db, const struct policy *p,
		       const struct profile_jobref *jobs, size_t n_jobs,
		       int64_t now, struct profile_rebuild_stats *stats,
		       fwd_error_t *err)
{
	struct db_stmt *st = NULL;
	struct keyed *v = NULL;
	size_t n = 0, cap = 0;
	int64_t del;
	int rv = -1, r;

	stats->runs = stats->profiles = stats->removed = 0;
	memset(&stats->skipped, 0, sizeof(stats->skipped));
	st = db_prepare(db, "SELECT " PROFILE_IO_RUN_COLS " FROM job_io", err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const struct profile_jobref *ref;
		struct profile_run run;
		uint64_t id;
		struct keyed *k;
		struct profile_job job;
		char key[PROFILE_KEY_MAX + 1];

		profile_read_run(st, &run, &id);
		ref = n_jobs ? bsearch(&id, jobs, n_jobs, sizeof(*jobs),
				       cmp_jobref)
			     : NULL; /* none: jobs may be NULL */
		if (!ref)
			continue; /* not a finished job */

		if (FWD_GROW(v, cap, n + 1, 256) < 0)
			goto nomem;
		k = &v[n];
		memset(k, 0, sizeof(*k));
		k->run = run;
		k->run.nodes = ref->job.nodes;
		k->run.end_time = ref->end_at;
		k->job_id = id;
		copy_str(k->user, sizeof(k->user), ref->job.user, NULL);
		copy_str(k->account, sizeof(k->account), ref->job.account,
			 &k->has_account);
		copy_str(k->name, sizeof(k->name), ref->job.name, NULL);
		copy_str(k->partition, sizeof(k->partition), ref->job.partition,
			 &k->has_partition);
		job.user = k->user;
		job.account = k->has_account ? k->account : NULL;
		job.name = k->name;
		job.partition = k->has_partition ? k->partition : NULL;
		job.nodes = k->run.nodes;
		if (profile_key(p, &job, key, sizeof(key), err))
			goto out;
		if (!(k->key = strdup(key)))
			goto nomem;
		n++;
	}
	if (r < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	stats->runs = n;
	if (n) /* none: v may be NULL */
		qsort(v, n, sizeof(*v), cmp_keyed);

	if (db_begin(db, err))
		goto out;
	del = db_execf(db, err,
		       "DELETE FROM profiles WHERE"
		       " COALESCE(JSON_VALUE(figures, '$.source'), '')"
		       " <> 'import'",
		       "");
	if (del < 0)
		goto rollback;
	for (size_t i = 0; i < n;) {
		struct profile_runs rs = {0};
		struct profile_job job = {
			v[i].user,
			v[i].has_account ? v[i].account : NULL,
			v[i].name,
			v[i].has_partition ? v[i].partition : NULL,
			v[i].run.nodes,
		};
		size_t j;

		for (j = i; j < n && !strcmp(v[j].key, v[i].key); j++) {
			if (profile_runs_push(&rs, &v[j].run, v[j].job_id)) {
				profile_runs_free(&rs);
				goto nomem_tx;
			}
		}
		r = store_prediction(db, p, &job, v[i].key, &rs, now, err);
		profile_runs_free(&rs);
		if (r < 0 && (db_err_unavailable(errno) ||
			      db_err_retryable(errno) || errno == ENOMEM))
			goto rollback;
		if (r < 0) {
			/* only this statement was undone: skip the key */
			for (size_t k = i; k < j; k++)
				profile_skips_add(&stats->skipped, v[k].job_id,
						  err->text);
			memset(err, 0, sizeof(*err));
			r = 0;
		}
		stats->profiles += (uint64_t)r;
		i = j;
	}
	if (db_commit(db, err))
		goto rollback;
	stats->removed = (uint64_t)del;
	rv = 0;
	goto out;
nomem_tx:
	errno = ENOMEM;
	errprintf(err, "out of memory");
rollback:
	db_rollback(db);
	goto out;
nomem:
	errno = ENOMEM;
	errprintf(err, "out of memory");
out:
	db_stmt_close(st);
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
	return rv;
}

/* ---- import and show ---- */

static int opt_str(const json_t *e, const char *k, const char **out,
		   bool required, fwd_error_t *err)
{
	json_t *v = json_object_get(e, k);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required) {
			errno = EINVAL;
			return errprintf(err, "missing \"%s\"", k);
		}
		return 0;
	}
	if (!json_is_string(v)) {
		errno = EINVAL;
		return errprintf(err, "\"%s\" must be a string", k);
	}
	*out = json_string_value(v);
	if (strlen(*out) > 255) {
		errno = EINVAL;
		return errprintf(err, "\"%s\" longer than 255 bytes", k);
	}
	return 0;
}

int profile_db_import(struct db *db, const struct policy *p,
		      const json_t *entry, int64_t now, char *key_out,
		      size_t key_len, fwd_error_t *err)
{
	static const char *const ids[] = {"user",    "name",	  "nodes",
					  "account", "partition", "profile"};
	struct profile_job job = {0};
	struct profile pr;
	const json_t *obj;
	json_t *flat = NULL, *nodes, *fig;
	char key[PROFILE_KEY_MAX + 1];
	int rv = -1;

	if (!json_is_object(entry)) {
		errno = EINVAL;
		return errprintf(err, "not a JSON object");
	}
	if (opt_str(entry, "user", &job.user, true, err) ||
	    opt_str(entry, "name", &job.name, true, err) ||
	    opt_str(entry, "account", &job.account, false, err) ||
	    opt_str(entry, "partition", &job.partition, false, err))
		return -1;
	nodes = json_object_get(entry, "nodes");
	if (!json_is_integer(nodes) || json_integer_value(nodes) < 1 ||
	    json_integer_value(nodes) > UINT32_MAX) {
		errno = EINVAL;
		return errprintf(err, "\"nodes\" must be a node count >= 1");
	}
	job.nodes = (uint32_t)json_integer_value(nodes);
	obj = json_object_get(entry, "profile");
	if (!obj) {
		/* the profile's fields at the top level */
		if (!(flat = json_deep_copy(entry)))
			return errprintf(err, "out of memory");
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			json_object_del(flat, ids[i]);
		obj = flat;
	} else {
		const char *k;
		json_t *v;

		json_object_foreach ((json_t *)entry, k, v) {
			size_t i;

			for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
				if (!strcmp(k, ids[i]))
					break;
			if (i == sizeof(ids) / sizeof(ids[0])) {
				errno = EINVAL;
				return errprintf(err, "unknown key \"%s\"", k);
			}
		}
	}
	if (profile_from_json(obj, &pr, err))
		goto out;
	/* the split into read and write is not in the profile object */
	pr.read_bytes = 0;
	pr.write_bytes = pr.io_volume_bytes;
	pr.scale_nodes = job.nodes;
	if (profile_key(p, &job, key, sizeof(key), err))
		goto out;
	fig = json_pack("{ss sI sI}", "source", "import", "nodes",
			(json_int_t)job.nodes, "io_volume_bytes",
			(json_int_t)pr.io_volume_bytes);
	if (write_row(db, p, &job, key, &pr, fig, 0, now, err))
		goto out;
	if (key_out)
		snprintf(key_out, key_len, "%s", key);
	rv = 0;
out:
	json_decref(flat);
	return rv;
}

int profile_db_show(struct db *db, const char *key, json_t **out,
		    fwd_error_t *err)
{
	struct db_stmt *st;
	struct profile pr;
	json_t *fig, *o, *po;
	int rv;

	*out = NULL;
	rv = profile_row(db, key, &pr, &st, &fig, err);
	if (rv <= 0)
		return rv;
	po = profile_to_json(&pr);
#define TEXT_OR_NULL(c) \
	(db_col_null(st, c) ? json_null() : json_string(db_col_text(st, c)))
#define INT_OR_NULL(c)                    \
	(db_col_null(st, c) ? json_null() \
			    : json_integer((json_int_t)db_col_int64(st, c)))
	o = json_pack(
		"{ss s:o* s:o* s:o* s:o* s:o* s:o* s:o* s:o* sI sf so s:o*}",
		"key", key, "source",
		json_incref(json_object_get(fig, "source")), "user",
		TEXT_OR_NULL(PR_USER), "account", TEXT_OR_NULL(PR_ACCOUNT),
		"name", TEXT_OR_NULL(PR_NAME), "partition",
		TEXT_OR_NULL(PR_PARTITION), "node_bucket",
		INT_OR_NULL(PR_BUCKET), "nodes",
		json_incref(json_object_get(fig, "nodes")), "last_job_id",
		INT_OR_NULL(PR_LAST_JOB), "updated_at",
		(json_int_t)db_col_int64(st, PR_UPDATED), "runtime", pr.runtime,
		"profile", po, "curve",
		json_incref(json_object_get(fig, "curve")));
#undef TEXT_OR_NULL
#undef INT_OR_NULL
	if (!o) {
		errno = ENOMEM;
		rv = errprintf(err, "out of memory");
	} else {
		*out = o;
	}
	json_decref(fig);
	db_stmt_close(st);
	return rv;
}
