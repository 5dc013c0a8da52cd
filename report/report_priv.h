/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_REPORT_REPORT_PRIV_H
#define FWD_REPORT_REPORT_PRIV_H

/*
 * Inside report/: the reports are gathered into one JSON document
 * (report_job.c, report_machine.c), which --json prints as it is and the
 * text and HTML renderers (render_text.c, render_html.c) read.  So every
 * figure a page or a line shows is a figure of the JSON document.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "common/error.h"

struct db;

/* Advice thresholds: the rules the man page (fwdctl report --help)
 * states; see report_job.c for each rule. */
#define REPORT_SMALL_WRITE_BYTES (1024.0 * 1024.0) /* mean write < 1 MiB */
#define REPORT_MD_HEAVY_RATE 300.0 /* Beacon: > 300 metadata ops/s */
#define REPORT_SCALE_MARGIN 0.9	   /* a smaller k within 10 % */
/* The usual load ("climate") of a component: its hours over the week
 * before the job for its forwarders (a few), over the day before for its
 * OSTs and MDTs (a wide job stripes over all of them: a week of every
 * OST's minutes would be most of the machine's rows). */
#define REPORT_CLIMATE_SECONDS (7 * 86400)
#define REPORT_CLIMATE_TARGET_SECONDS 86400
/* At most this many points per chart (buckets are whole minutes). */
#define REPORT_MAX_POINTS 120

/* A bucket of whole minutes so that [from, to) has at most max points. */
int64_t report_bucket(int64_t from, int64_t to, int max_points);

/* Quantiles of v[0..n) (sorted in place), linear interpolation between
 * order statistics: {"n","min","q1","median","q3","max"}. */
json_t *report_quantiles(double *v, size_t n);

/* A double as JSON: null for NAN. */
json_t *report_num(double v);

/* Reading a report document: a member's string ("" when absent), its
 * number (NAN when absent or not a number), and a rate as text ("-" when
 * not finite). */
const char *report_jstr(const json_t *o, const char *k);
double report_jnum(const json_t *o, const char *k);
const char *report_rate(double v, char *buf, size_t len);

/* "2026-11-22T02:30:00Z" */
void report_time(int64_t t, char *buf, size_t len);

int report_job_doc(struct db *db, uint64_t job_id, json_t **doc,
		   fwd_error_t *err);
int report_machine_doc(struct db *db, int64_t since, int64_t until,
		       json_t **doc, fwd_error_t *err);

/* Render the document into f. */
void report_text_job(FILE *f, const json_t *doc);
void report_text_machine(FILE *f, const json_t *doc);
void report_html_job(FILE *f, const json_t *doc);
void report_html_machine(FILE *f, const json_t *doc);

#endif
