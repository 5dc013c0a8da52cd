/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job-level check: DBSCAN on a job's I/O phases against its past
 * runs, and the jobs that overlapped it on a shared forwarder.  See
 * monitor/health.h; tables in db/SCHEMA.md.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/array.h"
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
	json_array_foreach (a, i, el) {
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

struct nb_row {
	uint64_t id;
	struct anomaly_neighbour nb;
	char **fw;
	size_t n_fw;
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

int health_job_check(const struct policy *p, const struct topology *t,
		     const struct health_job_input *in,
		     struct health_job_report *r, fwd_error_t *err)
{
	struct scan s = {.p = p, .t = t, .err = err};
	const struct health_job *job = &in->job;
	struct anomaly_phase *hist = NULL;
	size_t n_hist = 0, cap_hist = 0, n_nb = 0;
	struct nb_row *nbs = NULL;
	struct anomaly_neighbour *plain = NULL;
	struct anomaly_phase_report rep = {0};
	struct anomaly_run run;
	int rv = -1;

	memset(r, 0, sizeof(*r));
	r->job_id = job->id;
	snprintf(r->user, sizeof(r->user), "%s", in->user ? in->user : "");
	snprintf(r->name, sizeof(r->name), "%s", in->name ? in->name : "");
	r->nodes = job->nodes;
	if (!in->phases) {
		errno = ENOENT;
		errprintf(err,
			  "job %llu: no I/O phases recorded (job_io."
			  "phases is empty)",
			  (unsigned long long)job->id);
		goto out;
	}
	if (parse_phases(in->phases, job->id, &r->phases, &r->n_phases, err) <
	    0)
		goto out;

	/* The same application's past runs at the same scale. */
	for (size_t k = 0; k < in->n_past; k++) {
		struct anomaly_phase *ph;
		size_t n;

		if (parse_phases(in->past[k].phases, in->past[k].job_id, &ph,
				 &n, NULL) < 0)
			continue; /* a bad past record: not history */
		if (fwd_grow((void **)&hist, &cap_hist, n_hist + n + 1,
			     sizeof(*hist), 16) < 0) {
			free(ph);
			errprintf(err, "job check: out of memory");
			goto out;
		}
		memcpy(hist + n_hist, ph, n * sizeof(*ph));
		n_hist += n;
		free(ph);
		r->n_history_runs++;
	}
	r->n_history_phases = n_hist;

	if (health_job_forwarders(&s, job, &r->forwarders, &r->n_forwarders) <
	    0)
		goto out;

	/* Jobs that ran at the same time. */
	nbs = calloc(in->n_peers ? in->n_peers : 1, sizeof(*nbs));
	plain = calloc(in->n_peers ? in->n_peers : 1, sizeof(*plain));
	if (!nbs || !plain) {
		errprintf(err, "job check: out of memory");
		goto out;
	}
	for (size_t i = 0; i < in->n_peers; i++) {
		const struct health_job_peer *pe = &in->peers[i];
		struct nb_row *nr = &nbs[n_nb++];

		nr->id = pe->job.id;
		nr->nb.nodes = pe->job.nodes;
		nr->nb.n_to_1 = pe->io_mode && !strcmp(pe->io_mode, "N-1");
		nr->nb.metadata_rate = pe->mdops_rate;
		nr->nb.peak_bps = pe->peak_bps;
		nr->nb.start = pe->job.start;
		nr->nb.end = pe->job.end;
		if (health_job_forwarders(&s, &pe->job, &nr->fw, &nr->n_fw) < 0)
			goto out;
		plain[i] = nr->nb;
		plain[i].job_id = NULL;
		plain[i].forwarders = (const char *const *)nr->fw;
		plain[i].n_forwarders = nr->n_fw;
	}
	run.job_id = "run";
	run.start = job->start;
	run.end = job->end;
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
		const struct anomaly_neighbour_report *nrep =
			&rep.neighbours[i];
		struct health_job_neighbour *o = &r->neighbours[i];
		const struct nb_row *nr = &nbs[nrep->index];

		o->job_id = nr->id;
		o->disruptive = nrep->disruptive;
		snprintf(o->reasons, sizeof(o->reasons), "%s", nrep->reasons);
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
	anomaly_phase_report_free(&rep);
	for (size_t i = 0; i < n_nb; i++)
		health_free_names(nbs[i].fw, nbs[i].n_fw);
	free(nbs);
	free(plain);
	free(hist);
	if (rv < 0)
		health_job_report_free(r);
	return rv;
}
