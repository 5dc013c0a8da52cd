/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine report's document: per forwarder, OST and MDT the load of
 * each time bucket (monitor/weather.h), the health episodes and the
 * allocations of the range (controller/ledger_store.h).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/ledger_store.h"
#include "db/db.h"
#include "monitor/ingest_rollup.h"
#include "monitor/weather.h"
#include "report/report_priv.h"

/* Heat-map columns for the range (one more when its start is not on a
 * bucket's boundary). */
#define REPORT_MACHINE_COLUMNS 96

/*
 * {"fwd": [{"name", "read_bytes": [...], "write_bytes": [...], "bps":
 * [...], "queue_len": [...], "md_ops": [...]}], "ost": ..., "mdt": ...}:
 * one row per component, one column per bucket; a bucket without rollups
 * is 0 (bytes) and null (queue length).
 */
static json_t *heat(const struct weather_cell *c, size_t n, int64_t from,
		    int64_t bucket, size_t cols)
{
	json_t *o = json_pack("{s:[],s:[],s:[]}", "fwd", "ost", "mdt");
	json_t *row = NULL;
	const char *kind = "", *name = "";

	for (size_t i = 0; i < n; i++) {
		size_t b = (size_t)((c[i].t - from) / bucket);

		if (!row || strcmp(kind, c[i].kind) ||
		    strcmp(name, c[i].name)) {
			json_t *arr = json_object_get(o, c[i].kind);
			json_t *rb = json_array(), *wb = json_array(),
			       *bps = json_array(), *q = json_array(),
			       *md = json_array();

			if (!arr)
				continue;
			for (size_t k = 0; k < cols; k++) {
				json_array_append_new(rb, json_integer(0));
				json_array_append_new(wb, json_integer(0));
				json_array_append_new(bps, json_real(0));
				json_array_append_new(q, json_null());
				json_array_append_new(md, json_integer(0));
			}
			row = json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "name",
					c[i].name, "read_bytes", rb,
					"write_bytes", wb, "bps", bps,
					"queue_len", q, "md_ops", md);
			json_array_append_new(arr, row);
			kind = c[i].kind;
			name = c[i].name;
		}
		if (b >= cols)
			continue;
		json_array_set_new(json_object_get(row, "read_bytes"), b,
				   json_integer((json_int_t)c[i].read_bytes));
		json_array_set_new(json_object_get(row, "write_bytes"), b,
				   json_integer((json_int_t)c[i].write_bytes));
		json_array_set_new(
			json_object_get(row, "bps"), b,
			json_real((double)(c[i].read_bytes + c[i].write_bytes) /
				  (double)bucket));
		json_array_set_new(json_object_get(row, "md_ops"), b,
				   json_integer((json_int_t)c[i].md_ops));
		if (c[i].queue_n)
			json_array_set_new(json_object_get(row, "queue_len"), b,
					   json_real(c[i].queue_sum /
						     (double)c[i].queue_n));
	}
	return o;
}

int report_machine_doc(struct db *db, int64_t since, int64_t until,
		       json_t **out, fwd_error_t *err)
{
	struct weather_cell *c = NULL;
	struct weather_episode *ep = NULL;
	struct ledger_row *rows = NULL;
	size_t n = 0, n_ep = 0, n_rows = 0, cols;
	int64_t from, bucket, to;
	json_t *doc, *t, *arr, *held;
	char a[40], b[40];
	int rv = -1;

	*out = NULL;
	/* Whole minutes from the minute of since; from a quarter hour on
	 * (a range of a day or more), whole quarter hours from the bucket's
	 * boundary at or before since: the cells are then read from
	 * rollups_15min (monitor/weather.h), a column more at most. */
	bucket = report_bucket(since, until, REPORT_MACHINE_COLUMNS);
	if (bucket >= ROLLUP_QUARTER) {
		bucket = (bucket + ROLLUP_QUARTER - 1) / ROLLUP_QUARTER *
			 ROLLUP_QUARTER;
		from = since - (since % bucket + bucket) % bucket;
	} else {
		from = since - (since % 60 + 60) % 60;
	}
	cols = (size_t)((until - from + bucket - 1) / bucket);
	to = from + (int64_t)cols * bucket;
	if (weather_cells(db, NULL, NULL, 0, from, to, bucket, &c, &n, err) <
		    0 ||
	    weather_episodes(db, from, to, NULL, 0, &ep, &n_ep, err) < 0 ||
	    ledger_store_rows_between(db, from, to, &rows, &n_rows, err) < 0)
		goto out;
	report_time(from, a, sizeof(a));
	report_time(to, b, sizeof(b));
	doc = json_object();
	json_object_set_new(doc, "report", json_string("machine"));
	json_object_set_new(doc, "range",
			    json_pack("{s:I,s:I,s:I,s:s,s:s}", "from",
				      (json_int_t)from, "to", (json_int_t)to,
				      "bucket", (json_int_t)bucket, "start", a,
				      "end", b));
	t = json_array();
	for (size_t i = 0; i < cols; i++)
		json_array_append_new(t,
				      json_integer(from + (int64_t)i * bucket));
	json_object_set_new(doc, "t", t);
	json_object_set_new(doc, "components", heat(c, n, from, bucket, cols));

	arr = json_array();
	for (size_t i = 0; i < n_ep; i++)
		json_array_append_new(
			arr,
			json_pack("{s:s,s:s,s:s,s:s,s:I,s:o,s:s}", "kind",
				  ep[i].kind, "name", ep[i].name, "state",
				  ep[i].state, "source", ep[i].source,
				  "start_at", (json_int_t)ep[i].start_at,
				  "end_at",
				  ep[i].end_at >= 0 ? json_integer(ep[i].end_at)
						    : json_null(),
				  "reason", ep[i].reason));
	json_object_set_new(doc, "health", arr);

	/* allocations: one entry per job, and the forwarders held per
	 * bucket (a row counts in every bucket it overlaps) */
	arr = json_array();
	held = json_array();
	for (size_t i = 0; i < cols; i++)
		json_array_append_new(held, json_integer(0));
	for (size_t i = 0; i < n_rows; i++) {
		const struct ledger_row *w = &rows[i];
		size_t last = json_array_size(arr);
		json_t *e = last ? json_array_get(arr, last - 1) : NULL;
		int64_t rel = w->released ? w->released_at : to;

		if (strcmp(w->action, "shadow")) {
			for (size_t k = 0; k < cols; k++) {
				int64_t b0 = from + (int64_t)k * bucket;

				if (w->acquired_at < b0 + bucket && rel >= b0)
					json_array_set_new(
						held, k,
						json_integer(
							json_integer_value(
								json_array_get(
									held,
									k)) +
							1));
			}
		}
		if (e && (uint64_t)json_integer_value(
				 json_object_get(e, "job_id")) == w->job_id) {
			json_array_append_new(json_object_get(e, "forwarders"),
					      json_string(w->forwarder));
			continue;
		}
		json_array_append_new(
			arr,
			json_pack("{s:I,s:s,s:[s],s:b,s:I,s:o}", "job_id",
				  (json_int_t)w->job_id, "action", w->action,
				  "forwarders", w->forwarder, "private",
				  w->is_private, "acquired_at",
				  (json_int_t)w->acquired_at, "released_at",
				  w->released ? json_integer(w->released_at)
					      : json_null()));
	}
	json_object_set_new(doc, "allocations", arr);
	json_object_set_new(doc, "forwarders_held", held);
	*out = doc;
	rv = 0;
out:
	free(c);
	free(ep);
	ledger_store_rows_free(rows, n_rows);
	return rv;
}
