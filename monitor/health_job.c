/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job-level check: DBSCAN on a job's I/O phases against its past
 * runs, and the jobs that overlapped it on a shared forwarder.  See
 * monitor/health.h; tables in monitor/SCHEMA.md.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "db/db.h"
#include "monitor/anomaly.h"
#include "monitor/health.h"
#include "monitor/health_priv.h"

/* ---- job-level anomaly ----------------------------------------------------
 */

/* job_io.phases: [{"start","end","read_bytes","write_bytes",...}, ...] */
static int parse_phases(const char *text, uint64_t job,
			struct anomaly_phase **out, size_t *n, fwd_error_t *err)
{
	struct anomaly_phase *v = NULL;
	json_error_t je;
	json_t *a = json_loads(text, 0, &je), *el;
	size_t i, cnt = 0;

	*out = NULL;
	*n = 0;
	if (!a || !json_is_array(a)) {
		json_decref(a);
		errno = EINVAL;
		return errprintf(err,
				 "job %llu: job_io.phases: not a JSON "
				 "array",
				 (unsigned long long)job);
	}
	v = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*v));
	if (!v) {
		json_decref(a);
		return errprintf(err, "job %llu: out of memory",
				 (unsigned long long)job);
	}
	json_array_foreach(a, i, el)
	{
		json_t *s = json_object_get(el, "start");
		json_t *e = json_object_get(el, "end");
		double rb =
			json_number_value(json_object_get(el, "read_bytes"));
		double wb =
			json_number_value(json_object_get(el, "write_bytes"));

		if (!json_is_number(s) || !json_is_number(e) ||
		    json_number_value(e) < json_number_value(s)) {
			free(v);
			json_decref(a);
			errno = EINVAL;
			return errprintf(err,
					 "job %llu: job_io.phases[%zu]: "
					 "needs numbers start <= end",
					 (unsigned long long)job, i);
		}
		v[cnt].duration = json_number_value(e) - json_number_value(s);
		v[cnt].volume = rb + wb;
		cnt++;
	}
	json_decref(a);
	*out = v;
	*n = cnt;
	return 0;
}

/* Forwarders a job used: the ledger's rows, else its default mapping. */
static int job_forwarders(struct scan *s, uint64_t job, const char *nodelist,
			  char ***names, size_t *n)
{
	if (health_job_names(s,
			     "SELECT DISTINCT forwarder FROM allocations"
			     " WHERE job_id = ? AND action <> 'shadow'"
			     " ORDER BY forwarder LIMIT 100000",
			     job, names, n) < 0)
		return -1;
	if (*n)
		return 0;
	free(*names);
	return health_default_forwarders(s, nodelist, names, n);
}

static void bucket_range(uint32_t nodes, uint32_t base, uint64_t *lo,
			 uint64_t *hi)
{
	uint64_t b = 1;

	if (base < 2)
		base = 2;
	while (b * base <= nodes)
		b *= base;
	*lo = b;
	*hi = b * base - 1;
}

struct nb_row {
	uint64_t id;
	struct anomaly_neighbour nb;
	char **fw;
	size_t n_fw;
	char *nodelist;
};

void health_job_report_free(struct health_job_report *r)
{
	if (!r)
		return;
	free(r->phases);
	free(r->outlier);
	health_free_names(r->forwarders, r->n_forwarders);
	free(r->neighbours);
	memset(r, 0, sizeof(*r));
}

int health_db_job_check(struct db *db, const struct policy *p,
			const struct topology *t, uint64_t job_id,
			struct health_job_report *r, fwd_error_t *err)
{
	struct scan s = {.db = db, .p = p, .t = t, .err = err};
	struct anomaly_phase *hist = NULL;
	size_t n_hist = 0, cap_hist = 0, n_nb = 0, cap_nb = 0;
	struct nb_row *nbs = NULL;
	struct anomaly_neighbour *plain = NULL;
	struct anomaly_phase_report rep = {0};
	struct anomaly_run run;
	struct db_stmt *st = NULL;
	char *nodelist = NULL, *phases = NULL;
	double start, end;
	uint64_t lo, hi;
	int rv = -1, f;

	memset(r, 0, sizeof(*r));
	r->job_id = job_id;
	st = db_prepare(db,
			"SELECT j.user, j.name, j.node_count, j.start_at,"
			" j.end_at, COALESCE(j.nodelist, ''), i.phases"
			" FROM jobs j LEFT JOIN job_io i ON i.job_id = j.job_id"
			" WHERE j.job_id = ? LIMIT 1",
			err);
	if (!st)
		return -1;
	if (db_bind_uint64(st, 0, job_id) < 0 || db_exec(st, err) < 0)
		goto out;
	f = db_fetch(st, err);
	if (f < 0)
		goto out;
	if (f == 0) {
		errno = ENOENT;
		errprintf(err, "job %llu: not in the jobs table",
			  (unsigned long long)job_id);
		goto out;
	}
	snprintf(r->user, sizeof(r->user), "%s", db_col_text(st, 0));
	snprintf(r->name, sizeof(r->name), "%s", db_col_text(st, 1));
	r->nodes = (uint32_t)db_col_uint64(st, 2);
	start = (double)db_col_int64(st, 3);
	end = db_col_null(st, 4) ? (double)time(NULL)
				 : (double)db_col_int64(st, 4);
	nodelist = strdup(db_col_text(st, 5));
	phases = db_col_null(st, 6) ? NULL : strdup(db_col_text(st, 6));
	if (!nodelist) {
		errprintf(err, "job check: out of memory");
		goto out;
	}
	if (!phases) {
		errno = ENOENT;
		errprintf(err,
			  "job %llu: no I/O phases recorded (job_io."
			  "phases is empty)",
			  (unsigned long long)job_id);
		goto out;
	}
	if (parse_phases(phases, job_id, &r->phases, &r->n_phases, err) < 0)
		goto out;
	db_stmt_close(st);

	/* The same application's past runs at the same scale. */
	bucket_range(r->nodes, p->history.bucket_base, &lo, &hi);
	st = db_prepare(db,
			"SELECT j.job_id, i.phases FROM jobs j"
			" JOIN job_io i ON i.job_id = j.job_id"
			" WHERE j.user = ? AND j.name = ?"
			" AND j.node_count BETWEEN ? AND ?"
			" AND j.end_at IS NOT NULL AND j.end_at <= ?"
			" AND j.end_at >= ? AND j.job_id <> ?"
			" AND i.phases IS NOT NULL"
			" ORDER BY j.end_at DESC LIMIT 50",
			err);
	if (!st)
		goto out;
	if (db_bind_text(st, 0, r->user) < 0 ||
	    db_bind_text(st, 1, r->name) < 0 || db_bind_uint64(st, 2, lo) < 0 ||
	    db_bind_uint64(st, 3, hi) < 0 ||
	    db_bind_int64(st, 4, (int64_t)start) < 0 ||
	    db_bind_int64(st, 5, (int64_t)(start - p->history.max_age)) < 0 ||
	    db_bind_uint64(st, 6, job_id) < 0 || db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		struct anomaly_phase *ph;
		size_t n;

		if (parse_phases(db_col_text(st, 1), db_col_uint64(st, 0), &ph,
				 &n, NULL) < 0)
			continue; /* a bad past record: not history */
		if (health_grow((void **)&hist, &cap_hist, n_hist + n + 1,
				sizeof(*hist)) < 0) {
			free(ph);
			errprintf(err, "job check: out of memory");
			goto out;
		}
		memcpy(hist + n_hist, ph, n * sizeof(*ph));
		n_hist += n;
		free(ph);
		r->n_history_runs++;
	}
	if (f < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	r->n_history_phases = n_hist;

	if (job_forwarders(&s, job_id, nodelist, &r->forwarders,
			   &r->n_forwarders) < 0)
		goto out;

	/* Jobs that ran at the same time. */
	st = db_prepare(db,
			"SELECT j.job_id, j.node_count, COALESCE(j.nodelist,"
			" ''), COALESCE(i.io_mode, 'none'),"
			" COALESCE(i.mdops_rate, 0),"
			" COALESCE(i.peak_bandwidth_bps, 0), j.start_at,"
			" COALESCE(j.end_at, ?)"
			" FROM jobs j LEFT JOIN job_io i ON i.job_id = j.job_id"
			" WHERE j.job_id <> ? AND j.start_at IS NOT NULL"
			" AND j.start_at < ? AND (j.end_at IS NULL OR"
			" j.end_at > ?) ORDER BY j.job_id LIMIT 10000",
			err);
	if (!st)
		goto out;
	if (db_bind_int64(st, 0, (int64_t)time(NULL)) < 0 ||
	    db_bind_uint64(st, 1, job_id) < 0 ||
	    db_bind_int64(st, 2, (int64_t)end) < 0 ||
	    db_bind_int64(st, 3, (int64_t)start) < 0 || db_exec(st, err) < 0)
		goto out;
	while ((f = db_fetch(st, err)) > 0) {
		struct nb_row *nr;

		if (health_grow((void **)&nbs, &cap_nb, n_nb + 1,
				sizeof(*nbs)) < 0) {
			errprintf(err, "job check: out of memory");
			goto out;
		}
		nr = &nbs[n_nb];
		memset(nr, 0, sizeof(*nr));
		nr->id = db_col_uint64(st, 0);
		nr->nb.nodes = (uint32_t)db_col_uint64(st, 1);
		nr->nodelist = strdup(db_col_text(st, 2));
		nr->nb.n_to_1 = !strcmp(db_col_text(st, 3), "N-1");
		nr->nb.metadata_rate = db_col_double(st, 4);
		nr->nb.peak_bps = db_col_double(st, 5);
		nr->nb.start = (double)db_col_int64(st, 6);
		nr->nb.end = (double)db_col_int64(st, 7);
		n_nb++;
		if (!nr->nodelist) {
			errprintf(err, "job check: out of memory");
			goto out;
		}
	}
	if (f < 0)
		goto out;
	db_stmt_close(st);
	st = NULL;
	plain = calloc(n_nb ? n_nb : 1, sizeof(*plain));
	if (!plain) {
		errprintf(err, "job check: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_nb; i++) {
		if (job_forwarders(&s, nbs[i].id, nbs[i].nodelist, &nbs[i].fw,
				   &nbs[i].n_fw) < 0)
			goto out;
		plain[i] = nbs[i].nb;
		plain[i].job_id = NULL;
		plain[i].forwarders = (const char *const *)nbs[i].fw;
		plain[i].n_forwarders = nbs[i].n_fw;
	}
	run.job_id = "run";
	run.start = start;
	run.end = end;
	run.forwarders = (const char *const *)r->forwarders;
	run.n_forwarders = r->n_forwarders;
	run.phases = r->phases;
	run.n_phases = r->n_phases;
	if (anomaly_phase_check(&p->anomaly, &p->decision.interference, hist,
				n_hist, &run, plain, n_nb, &rep, err) < 0)
		goto out;
	r->checked = rep.checked;
	r->anomalous = rep.anomalous;
	r->n_clusters = rep.n_clusters;
	r->n_outliers = rep.n_outliers;
	snprintf(r->reason, sizeof(r->reason), "%s", rep.reason);
	r->outlier = rep.outlier;
	rep.outlier = NULL;
	if (rep.n_neighbours) {
		r->neighbours =
			calloc(rep.n_neighbours, sizeof(*r->neighbours));
		if (!r->neighbours) {
			errprintf(err, "job check: out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < rep.n_neighbours; i++) {
		const struct anomaly_neighbour_report *in = &rep.neighbours[i];
		struct health_job_neighbour *o = &r->neighbours[i];
		const struct nb_row *nr = &nbs[in->index];

		o->job_id = nr->id;
		o->disruptive = in->disruptive;
		snprintf(o->reasons, sizeof(o->reasons), "%s", in->reasons);
		for (size_t a = 0; a < nr->n_fw && !o->shared[0]; a++)
			for (size_t b = 0; b < r->n_forwarders; b++)
				if (!strcmp(nr->fw[a], r->forwarders[b])) {
					snprintf(o->shared, sizeof(o->shared),
						 "%s", nr->fw[a]);
					break;
				}
	}
	r->n_neighbours = rep.n_neighbours;
	r->n_disruptive = rep.n_disruptive;
	rv = 0;
out:
	db_stmt_close(st);
	anomaly_phase_report_free(&rep);
	for (size_t i = 0; i < n_nb; i++) {
		health_free_names(nbs[i].fw, nbs[i].n_fw);
		free(nbs[i].nodelist);
	}
	free(nbs);
	free(plain);
	free(hist);
	free(nodelist);
	free(phases);
	if (rv < 0)
		health_job_report_free(r);
	return rv;
}
