/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fail-slow detectors: peer comparison inside a job, sustained low
 * bandwidth, and DBSCAN on I/O phases.  See monitor/anomaly.h.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/anomaly.h"
#include "monitor/dbscan.h"
#include "policies/classify.h"

double anomaly_sample_bps(const struct anomaly_sample *s)
{
	return s->seconds > 0 ? s->bytes / s->seconds : 0;
}

const char *anomaly_verdict_name(enum anomaly_verdict v)
{
	switch (v) {
	case ANOMALY_GOOD:
		return "good";
	case ANOMALY_BAD:
		return "bad";
	default:
		return "none";
	}
}

static bool bad_number(double v)
{
	return !isfinite(v) || v < 0;
}

static int check_sample(const char *who, size_t i,
			const struct anomaly_sample *s, fwd_error_t *err)
{
	errno = EINVAL;
	if (!isfinite(s->time))
		return errprintf(err, "%s: sample %zu: time %g is not finite",
				 who, i, s->time);
	if (!isfinite(s->seconds) || s->seconds <= 0)
		return errprintf(err,
				 "%s: sample %zu: interval %g s must be "
				 "positive",
				 who, i, s->seconds);
	if (bad_number(s->bytes))
		return errprintf(err,
				 "%s: sample %zu: bytes %g must be a "
				 "non-negative number",
				 who, i, s->bytes);
	if (bad_number(s->ops))
		return errprintf(err,
				 "%s: sample %zu: ops %g must be a "
				 "non-negative number",
				 who, i, s->ops);
	if (isnan(s->queue))
		return errprintf(err, "%s: sample %zu: queue length is NaN",
				 who, i);
	errno = 0;
	return 0;
}

int anomaly_peer_check(const struct policy_peer_detector *p, uint32_t job_nodes,
		       const struct anomaly_series *members, size_t n_members,
		       struct anomaly_peer_stat *stats,
		       struct anomaly_peer_result *res, fwd_error_t *err)
{
	double job_volume = 0, sum_peak = 0, sum_volume = 0;
	size_t n_active = 0;

	memset(res, 0, sizeof(*res));
	for (size_t m = 0; m < n_members; m++) {
		const struct anomaly_series *s = &members[m];
		struct anomaly_peer_stat *st = &stats[m];
		double active_bytes = 0, active_seconds = 0;

		memset(st, 0, sizeof(*st));
		for (size_t i = 0; i < s->n_samples; i++) {
			const struct anomaly_sample *x = &s->samples[i];
			double bps;

			if (check_sample(s->name, i, x, err) < 0)
				return -1;
			bps = anomaly_sample_bps(x);
			st->volume += x->bytes;
			if (bps <= p->noise_floor)
				continue;
			st->active++;
			active_bytes += x->bytes;
			active_seconds += x->seconds;
			if (bps > st->peak_bps)
				st->peak_bps = bps;
		}
		if (active_seconds > 0)
			st->avg_bps = active_bytes / active_seconds;
		job_volume += st->volume;
		/* A member the job never really used says nothing about the
		 * others: it stays out of the means. */
		if (st->active) {
			n_active++;
			sum_peak += st->peak_bps;
			sum_volume += st->volume;
		}
	}
	if (job_nodes < p->min_job_nodes) {
		snprintf(res->reason, sizeof(res->reason),
			 "job has %u nodes, fewer than min_job_nodes %u",
			 job_nodes, p->min_job_nodes);
		return 0;
	}
	if (job_volume < (double)p->min_job_volume) {
		snprintf(res->reason, sizeof(res->reason),
			 "job moved %.0f bytes, less than min_job_volume %llu",
			 job_volume, (unsigned long long)p->min_job_volume);
		return 0;
	}
	if (n_active < 2) {
		snprintf(res->reason, sizeof(res->reason),
			 "%zu member(s) active above the noise floor, need 2 "
			 "to compare",
			 n_active);
		return 0;
	}
	res->eligible = true;
	res->mean_peak_bps = sum_peak / n_active;
	res->mean_volume = sum_volume / n_active;
	for (size_t m = 0; m < n_members; m++) {
		struct anomaly_peer_stat *st = &stats[m];
		double limit = p->bandwidth_fraction * res->mean_peak_bps;

		if (!st->active)
			continue;
		if (st->avg_bps < limit && st->peak_bps < limit &&
		    st->volume >= p->volume_fraction * res->mean_volume) {
			st->flagged = true;
			res->n_flagged++;
		}
	}
	return (int)res->n_flagged;
}

/* ---- sustained ------------------------------------------------------- */

static bool sample_loaded(const struct policy_sustained_detector *p,
			  const struct anomaly_sample *s)
{
	if (s->ops / s->seconds < p->min_load_ops)
		return false;
	return s->queue < 0 || s->queue >= 1;
}

/*
 * Walk the samples and call `fn` for every maximal slow loaded stretch,
 * and `fast` for every loaded sample at or above the threshold.  Shared by
 * the whole-series check and the per-window verdict.
 */
struct walk {
	const struct policy_sustained_detector *p;
	double limit;
	void (*stretch)(struct walk *w, const struct anomaly_stretch *st);
	void (*fast)(struct walk *w, const struct anomaly_sample *s);
	void *data;
};

static int walk_samples(struct walk *w, const struct anomaly_sample *samples,
			size_t n, fwd_error_t *err)
{
	struct anomaly_stretch cur = {0};
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		const struct anomaly_sample *s = &samples[i];
		double bps;
		bool slow_loaded;

		if (check_sample("sustained", i, s, err) < 0)
			return -1;
		if (i > 0 && s->time < samples[i - 1].time) {
			errno = EINVAL;
			return errprintf(err,
					 "sustained: sample %zu: time %.0f "
					 "before the previous sample's %.0f",
					 i, s->time, samples[i - 1].time);
		}
		bps = anomaly_sample_bps(s);
		slow_loaded = sample_loaded(w->p, s) && bps < w->limit;
		/* A gap (more than a second of slack) ends the stretch. */
		if (open && (!slow_loaded || s->time > cur.end + 1)) {
			w->stretch(w, &cur);
			open = false;
		}
		if (slow_loaded) {
			if (!open) {
				cur.start = s->time;
				cur.max_bps = 0;
				open = true;
			}
			cur.end = s->time + s->seconds;
			if (bps > cur.max_bps)
				cur.max_bps = bps;
		} else if (sample_loaded(w->p, s) && w->fast) {
			w->fast(w, s);
		}
	}
	if (open)
		w->stretch(w, &cur);
	return 0;
}

static int check_peak(double peak_bps, fwd_error_t *err)
{
	if (!isfinite(peak_bps) || peak_bps <= 0) {
		errno = EINVAL;
		return errprintf(err,
				 "sustained: benchmarked peak %g B/s must "
				 "be positive",
				 peak_bps);
	}
	return 0;
}

static void whole_stretch(struct walk *w, const struct anomaly_stretch *st)
{
	struct anomaly_sustained_result *res = w->data;
	double len = st->end - st->start;

	if (len >= w->p->duration)
		res->n_stretches++;
	if (len > res->longest.end - res->longest.start)
		res->longest = *st;
}

int anomaly_sustained_check(const struct policy_sustained_detector *p,
			    double peak_bps,
			    const struct anomaly_sample *samples, size_t n,
			    struct anomaly_sustained_result *res,
			    fwd_error_t *err)
{
	struct walk w = {.p = p, .stretch = whole_stretch, .data = res};

	memset(res, 0, sizeof(*res));
	if (check_peak(peak_bps, err) < 0)
		return -1;
	w.limit = p->peak_fraction * peak_bps;
	if (walk_samples(&w, samples, n, err) < 0)
		return -1;
	res->flagged = res->n_stretches > 0;
	return 0;
}

struct window_state {
	double wstart, wend;
	bool bad, good;
	struct anomaly_stretch bad_stretch;
	double good_bps;
};

static void window_stretch(struct walk *w, const struct anomaly_stretch *st)
{
	struct window_state *ws = w->data;
	double reached = st->start + w->p->duration;

	/* The stretch had lasted `duration` at time `reached`; it counts
	 * for this window if that moment, or the stretch's continuation
	 * after it, falls inside the window. */
	if (st->end - st->start < w->p->duration)
		return;
	if (st->end <= ws->wstart || reached >= ws->wend)
		return;
	if (!ws->bad ||
	    st->end - st->start > ws->bad_stretch.end - ws->bad_stretch.start)
		ws->bad_stretch = *st;
	ws->bad = true;
}

static void window_fast(struct walk *w, const struct anomaly_sample *s)
{
	struct window_state *ws = w->data;
	double bps = anomaly_sample_bps(s);

	if (s->time < ws->wstart || s->time >= ws->wend)
		return;
	ws->good = true;
	if (bps > ws->good_bps)
		ws->good_bps = bps;
}

/* First sample that ends after t (by_end) or starts at or after t. */
static size_t bisect(const struct anomaly_sample *s, size_t n, double t,
		     bool by_end)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		double v = by_end ? s[mid].time + s[mid].seconds : s[mid].time;

		if (by_end ? v <= t : v < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int anomaly_window_verdict(const struct policy_sustained_detector *p,
			   double peak_bps,
			   const struct anomaly_sample *samples, size_t n,
			   double wstart, double wend, char *reason,
			   size_t reason_len, fwd_error_t *err)
{
	struct window_state ws = {.wstart = wstart, .wend = wend};
	struct walk w = {.p = p,
			 .stretch = window_stretch,
			 .fast = window_fast,
			 .data = &ws};
	size_t first = 0, last = n;

	if (check_peak(peak_bps, err) < 0)
		return -1;
	if (!(wend > wstart)) {
		errno = EINVAL;
		return errprintf(err,
				 "sustained: window [%.0f, %.0f) is "
				 "empty",
				 wstart, wend);
	}
	/* Only the samples that can matter: from `duration` before the
	 * window to its end.  Callers pass a whole day and ask for each of
	 * its windows, so find the range by bisection (samples are in time
	 * order; walk_samples() checks that inside the range). */
	first = bisect(samples, n, wstart - p->duration, true);
	last = bisect(samples, n, wend, false);
	if (last < first)
		last = first;
	w.limit = p->peak_fraction * peak_bps;
	if (walk_samples(&w, samples + first, last - first, err) < 0)
		return -1;
	if (ws.bad) {
		if (reason)
			snprintf(reason, reason_len,
				 "bandwidth at most %.3g B/s, under %.0f%% of "
				 "the %.3g B/s peak, for at least %.0f min "
				 "while loaded",
				 ws.bad_stretch.max_bps, p->peak_fraction * 100,
				 peak_bps,
				 (fmin(ws.bad_stretch.end, wend) -
				  ws.bad_stretch.start) /
					 60);
		return ANOMALY_BAD;
	}
	if (ws.good) {
		if (reason)
			snprintf(reason, reason_len,
				 "served %.3g B/s while loaded", ws.good_bps);
		return ANOMALY_GOOD;
	}
	if (reason)
		snprintf(reason, reason_len, "no evidence in the window");
	return ANOMALY_NONE;
}

/* ---- DBSCAN on I/O phases ----------------------------------------------- */

static bool shares_forwarder(const struct anomaly_run *run,
			     const struct anomaly_neighbour *nb)
{
	for (size_t i = 0; i < run->n_forwarders; i++)
		for (size_t j = 0; j < nb->n_forwarders; j++)
			if (!strcmp(run->forwarders[i], nb->forwarders[j]))
				return true;
	return false;
}

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t len,
							 const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		strcpy(buf + used, "; ");
		used += 2;
	}
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static bool disruptive(const struct policy_interference *pi,
		       const struct anomaly_neighbour *nb, char *reasons,
		       size_t len)
{
	unsigned r =
		policy_job_disruptive(pi, nb->n_to_1, nb->nodes,
				      nb->metadata_rate, nb->peak_bps, NULL, 0);

	/* Every rule met, in the report's own words. */
	reasons[0] = '\0';
	if (r & POLICY_DISRUPT_N_TO_1)
		append(reasons, len, "N-1 on %u nodes (limit %u)", nb->nodes,
		       pi->n1_min_nodes);
	if (r & POLICY_DISRUPT_METADATA)
		append(reasons, len, "%.0f md ops/s (limit %.0f)",
		       nb->metadata_rate, pi->metadata_heavy_rate);
	if (r & POLICY_DISRUPT_BANDWIDTH)
		append(reasons, len, "peak %.3g B/s (limit %.3g)", nb->peak_bps,
		       pi->high_bandwidth);
	return r != 0;
}

static int check_phase(const char *who, size_t i,
		       const struct anomaly_phase *ph, fwd_error_t *err)
{
	if (bad_number(ph->duration) || bad_number(ph->volume)) {
		errno = EINVAL;
		return errprintf(err,
				 "%s phase %zu: duration %g s, volume %g "
				 "bytes: must be non-negative numbers",
				 who, i, ph->duration, ph->volume);
	}
	return 0;
}

int anomaly_phase_check(const struct policy_anomaly *pa,
			const struct policy_interference *pi,
			const struct anomaly_phase *history, size_t n_history,
			const struct anomaly_run *run,
			const struct anomaly_neighbour *neighbours,
			size_t n_neighbours, struct anomaly_phase_report *rep,
			fwd_error_t *err)
{
	struct dbscan_point *pts = NULL;
	int *labels = NULL;
	double max_d = 0, max_v = 0;
	size_t n = n_history + run->n_phases;
	int clusters;
	int rv = -1;

	memset(rep, 0, sizeof(*rep));
	for (size_t i = 0; i < n_history; i++) {
		if (check_phase("history", i, &history[i], err) < 0)
			return -1;
		max_d = fmax(max_d, history[i].duration);
		max_v = fmax(max_v, history[i].volume);
	}
	for (size_t i = 0; i < run->n_phases; i++)
		if (check_phase(run->job_id, i, &run->phases[i], err) < 0)
			return -1;
	if (n_history < pa->dbscan.min_points) {
		snprintf(rep->reason, sizeof(rep->reason),
			 "%zu past I/O phase(s), need %u to form a cluster",
			 n_history, pa->dbscan.min_points);
		return 0;
	}
	/* All-zero history on an axis: keep the axis unscaled rather than
	 * divide by zero; any non-zero new value is then far away. */
	if (max_d <= 0)
		max_d = 1;
	if (max_v <= 0)
		max_v = 1;
	pts = calloc(n ? n : 1, sizeof(*pts));
	labels = calloc(n ? n : 1, sizeof(*labels));
	rep->outlier = calloc(run->n_phases ? run->n_phases : 1,
			      sizeof(*rep->outlier));
	if (!pts || !labels || !rep->outlier) {
		errprintf(err, "phase check: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_history; i++) {
		pts[i].x = history[i].duration / max_d;
		pts[i].y = history[i].volume / max_v;
	}
	for (size_t i = 0; i < run->n_phases; i++) {
		pts[n_history + i].x = run->phases[i].duration / max_d;
		pts[n_history + i].y = run->phases[i].volume / max_v;
	}
	clusters = dbscan_run(pts, n, pa->dbscan.eps, pa->dbscan.min_points,
			      labels, err);
	if (clusters < 0)
		goto out;
	rep->checked = true;
	rep->n_clusters = (size_t)clusters;
	for (size_t i = 0; i < run->n_phases; i++) {
		if (labels[n_history + i] == DBSCAN_NOISE) {
			rep->outlier[i] = true;
			rep->n_outliers++;
		}
	}
	rep->anomalous = rep->n_outliers > 0;
	snprintf(rep->reason, sizeof(rep->reason),
		 "%zu of %zu I/O phase(s) outside the %zu cluster(s) of %zu "
		 "past phase(s)",
		 rep->n_outliers, run->n_phases, rep->n_clusters, n_history);
	if (rep->anomalous && n_neighbours) {
		rep->neighbours =
			calloc(n_neighbours, sizeof(*rep->neighbours));
		if (!rep->neighbours) {
			errprintf(err, "phase check: out of memory");
			goto out;
		}
		for (size_t i = 0; i < n_neighbours; i++) {
			const struct anomaly_neighbour *nb = &neighbours[i];
			struct anomaly_neighbour_report *nr;

			if (nb->end <= run->start || nb->start >= run->end)
				continue;
			if (!shares_forwarder(run, nb))
				continue;
			nr = &rep->neighbours[rep->n_neighbours++];
			nr->index = i;
			nr->disruptive = disruptive(pi, nb, nr->reasons,
						    sizeof(nr->reasons));
			if (nr->disruptive)
				rep->n_disruptive++;
		}
	}
	rv = 0;
out:
	free(pts);
	free(labels);
	if (rv < 0)
		anomaly_phase_report_free(rep);
	return rv;
}

void anomaly_phase_report_free(struct anomaly_phase_report *rep)
{
	if (!rep)
		return;
	free(rep->outlier);
	free(rep->neighbours);
	rep->outlier = NULL;
	rep->neighbours = NULL;
}
