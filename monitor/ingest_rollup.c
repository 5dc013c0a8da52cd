/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Additive per-minute rollups: see monitor/ingest_rollup.h.
 *
 * The contributions of a batch are collected in memory (one entry per
 * component and minute when the input is grouped, else one per row),
 * sorted by (kind, name, minute), merged, and written with one multi-row
 * upsert per ROLLUP_CHUNK minutes:
 *   samples, read_bytes ... md_ops, queue_len_samples: old + new;
 *   queue_len_sum: old + new when the batch had queue lengths;
 *   read_bps_max, write_bps_max, queue_len_max: the greater one (a NULL
 *   side does not count);
 *   queue_len_avg: queue_len_sum / queue_len_samples after the update.
 * MariaDB runs the assignments of ON DUPLICATE KEY UPDATE from left to
 * right, each seeing the ones before it (tests/integration/db_ingest.sh
 * checks the average against AVG() of the raw rows).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "db/db.h"
#include "monitor/ingest_rollup.h"

#define ROLLUP_CHUNK 200

struct contrib {
	enum ingest_kind kind;
	char name[128];
	int64_t minute;
	uint64_t samples;
	uint64_t sum[INFLUX_N_COUNTERS];
	bool has_rbps, has_wbps, has_qmax;
	double rbps, wbps;
	uint64_t qn;
	double qsum, qmax;
};

struct hcontrib {
	enum ingest_kind kind;
	char name[128];
	int64_t minute;
	char op[8], phase[8];
	uint64_t b[BEACON_BUCKETS];
};

static const size_t size_class[] = {ROLLUP_CHUNK, 32, 4, 1};
#define N_CLASS 4

struct rollup_acc {
	struct db *db;
	struct contrib *c;
	size_t n, cap;
	struct db_stmt *add[N_CLASS];
	struct db_stmt *add_q[N_CLASS]; /* rollups_15min */
	struct hcontrib *h;
	size_t n_h, cap_h;
	struct db_stmt *add_h[N_CLASS];
};

/* clang-format off */
#define ADD_COLUMNS \
	" (kind, name, minute, samples, read_bytes," \
	" write_bytes, read_ops, write_ops, md_ops, read_bps_max," \
	" write_bps_max, queue_len_sum, queue_len_samples, queue_len_avg," \
	" queue_len_max) VALUES "
static const char add_head[] = "INSERT INTO rollups_minute" ADD_COLUMNS;
static const char add_q_head[] = "INSERT INTO rollups_15min" ADD_COLUMNS;
#define ADD_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define ADD_COLS 15
#define MAX_OF(c) \
	" " c " = COALESCE(GREATEST(" c ", VALUES(" c ")), " c ", VALUES(" c "))"
static const char add_tail[] =
	" ON DUPLICATE KEY UPDATE"
	" samples = samples + VALUES(samples),"
	" read_bytes = read_bytes + VALUES(read_bytes),"
	" write_bytes = write_bytes + VALUES(write_bytes),"
	" read_ops = read_ops + VALUES(read_ops),"
	" write_ops = write_ops + VALUES(write_ops),"
	" md_ops = md_ops + VALUES(md_ops),"
	MAX_OF("read_bps_max") ","
	MAX_OF("write_bps_max") ","
	MAX_OF("queue_len_max") ","
	" queue_len_sum = IF(VALUES(queue_len_samples) = 0, queue_len_sum,"
	" COALESCE(queue_len_sum, 0) + VALUES(queue_len_sum)),"
	" queue_len_samples = queue_len_samples + VALUES(queue_len_samples),"
	" queue_len_avg = queue_len_sum / NULLIF(queue_len_samples, 0)";
static const char add_h_head[] =
	"INSERT INTO rollups_hist_minute (kind, name, minute, op, phase,"
	" b0, b1, b2, b3, b4, b5, b6, b7) VALUES ";
#define ADD_H_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define ADD_H_COLS 13
static const char add_h_tail[] =
	" ON DUPLICATE KEY UPDATE b0 = b0 + VALUES(b0), b1 = b1 + VALUES(b1),"
	" b2 = b2 + VALUES(b2), b3 = b3 + VALUES(b3), b4 = b4 + VALUES(b4),"
	" b5 = b5 + VALUES(b5), b6 = b6 + VALUES(b6), b7 = b7 + VALUES(b7)";
/* clang-format on */

struct rollup_acc *rollup_acc_create(struct db *db)
{
	struct rollup_acc *a = calloc(1, sizeof(*a));

	if (a)
		a->db = db;
	return a;
}

void rollup_acc_destroy(struct rollup_acc *a)
{
	int saved = errno;

	if (!a)
		return;
	for (size_t i = 0; i < N_CLASS; i++) {
		db_stmt_close(a->add[i]);
		db_stmt_close(a->add_q[i]);
		db_stmt_close(a->add_h[i]);
	}
	free(a->c);
	free(a->h);
	free(a);
	errno = saved;
}

void rollup_acc_clear(struct rollup_acc *a)
{
	a->n = 0;
	a->n_h = 0;
}

int rollup_acc_add_hist(struct rollup_acc *a, const struct rollup_hist_row *r,
			fwd_error_t *err)
{
	int64_t m = rollup_minute(r->ts);
	struct hcontrib *c = a->n_h ? &a->h[a->n_h - 1] : NULL;

	if (!c || c->kind != r->kind || c->minute != m ||
	    strcmp(c->op, r->op) != 0 || strcmp(c->phase, r->phase) != 0 ||
	    strcmp(c->name, r->name) != 0) {
		if (FWD_GROW(a->h, a->cap_h, a->n_h + 1, 1024) < 0)
			return errprintf(err, "ingest: %s", strerror(errno));
		c = &a->h[a->n_h++];
		memset(c, 0, sizeof(*c));
		c->kind = r->kind;
		snprintf(c->name, sizeof(c->name), "%s", r->name);
		snprintf(c->op, sizeof(c->op), "%s", r->op);
		snprintf(c->phase, sizeof(c->phase), "%s", r->phase);
		c->minute = m;
	}
	for (int i = 0; i < BEACON_BUCKETS; i++)
		c->b[i] += r->b[i];
	return 0;
}

static int cmp_hcontrib(const void *pa, const void *pb)
{
	const struct hcontrib *x = pa, *y = pb;
	int d;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if ((d = strcmp(x->name, y->name)) != 0)
		return d;
	if (x->minute != y->minute)
		return x->minute < y->minute ? -1 : 1;
	if ((d = strcmp(x->op, y->op)) != 0)
		return d;
	return strcmp(x->phase, y->phase);
}

static void max_into(bool *has, double *cur, double v)
{
	if (!*has || v > *cur)
		*cur = v;
	*has = true;
}

int rollup_acc_add(struct rollup_acc *a, const struct rollup_row *r,
		   fwd_error_t *err)
{
	int64_t m = rollup_minute(r->ts);
	struct contrib *c = a->n ? &a->c[a->n - 1] : NULL;

	if (!c || c->kind != r->kind || c->minute != m ||
	    strcmp(c->name, r->name) != 0) {
		if (FWD_GROW(a->c, a->cap, a->n + 1, 1024) < 0)
			return errprintf(err, "ingest: %s", strerror(errno));
		c = &a->c[a->n++];
		memset(c, 0, sizeof(*c));
		c->kind = r->kind;
		snprintf(c->name, sizeof(c->name), "%s", r->name);
		c->minute = m;
	}
	c->samples++;
	for (int i = 0; i < INFLUX_N_COUNTERS; i++)
		if (r->has[i])
			c->sum[i] += r->v[i];
	/* As MAX(read_bytes / NULLIF(dt, 0)) over the raw rows. */
	if (r->has_dt && r->dt != 0) {
		if (r->has[INFLUX_READ_BYTES])
			max_into(&c->has_rbps, &c->rbps,
				 (double)r->v[INFLUX_READ_BYTES] / r->dt);
		if (r->has[INFLUX_WRITE_BYTES])
			max_into(&c->has_wbps, &c->wbps,
				 (double)r->v[INFLUX_WRITE_BYTES] / r->dt);
	}
	if (r->has_queue) {
		c->qn++;
		c->qsum += r->queue;
		max_into(&c->has_qmax, &c->qmax, r->queue);
	}
	return 0;
}

static int cmp_contrib(const void *pa, const void *pb)
{
	const struct contrib *x = pa, *y = pb;
	int d;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if ((d = strcmp(x->name, y->name)) != 0)
		return d;
	return x->minute < y->minute ? -1 : x->minute > y->minute;
}

static void merge(struct contrib *into, const struct contrib *c)
{
	into->samples += c->samples;
	for (int i = 0; i < INFLUX_N_COUNTERS; i++)
		into->sum[i] += c->sum[i];
	if (c->has_rbps)
		max_into(&into->has_rbps, &into->rbps, c->rbps);
	if (c->has_wbps)
		max_into(&into->has_wbps, &into->wbps, c->wbps);
	if (c->has_qmax)
		max_into(&into->has_qmax, &into->qmax, c->qmax);
	into->qn += c->qn;
	into->qsum += c->qsum;
}

/* c[0..n), sorted, with the contributions of one key merged into its
 * first: returns how many keys are left in front. */
static size_t merge_keys(struct contrib *c, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && !cmp_contrib(&c[k - 1], &c[i]))
			merge(&c[k - 1], &c[i]);
		else if (k++ != i)
			c[k - 1] = c[i];
	}
	return k;
}

static int write_hist(struct rollup_acc *a, fwd_error_t *err)
{
	size_t n = 0, at = 0;

	if (!a->n_h)
		return 0;
	qsort(a->h, a->n_h, sizeof(*a->h), cmp_hcontrib);
	for (size_t i = 0; i < a->n_h; i++) {
		if (n && !cmp_hcontrib(&a->h[n - 1], &a->h[i])) {
			for (int b = 0; b < BEACON_BUCKETS; b++)
				a->h[n - 1].b[b] += a->h[i].b[b];
		} else if (n++ != i) {
			a->h[n - 1] = a->h[i];
		}
	}
	a->n_h = 0;
	while (at < n) {
		size_t k;
		struct db_stmt *st = db_prepare_rows_upto(
			a->db, a->add_h, size_class, n - at, add_h_head,
			ADD_H_ROW, add_h_tail, &k, err);

		if (!st)
			return -1;
		for (size_t j = 0; j < k; j++) {
			const struct hcontrib *c = &a->h[at + j];
			unsigned int b = (unsigned int)(j * ADD_H_COLS);

			db_bind_text(st, b, ingest_kind_name(c->kind));
			db_bind_text(st, b + 1, c->name);
			db_bind_int64(st, b + 2, c->minute);
			db_bind_text(st, b + 3, c->op);
			db_bind_text(st, b + 4, c->phase);
			for (unsigned int i = 0; i < BEACON_BUCKETS; i++)
				db_bind_uint64(st, b + 5 + i, c->b[i]);
		}
		if (db_exec(st, err) < 0)
			return -1;
		at += k;
	}
	return 0;
}

static void bind_opt(struct db_stmt *st, unsigned int i, bool has, double v)
{
	if (has)
		db_bind_double(st, i, v);
	else
		db_bind_null(st, i);
}

/* Add c[0..n) (sorted, one per key) to the table of head. */
static int write_contribs(struct rollup_acc *a, struct db_stmt **cache,
			  const char *head, const struct contrib *cs, size_t n,
			  fwd_error_t *err)
{
	size_t at = 0;

	while (at < n) {
		size_t k;
		struct db_stmt *st =
			db_prepare_rows_upto(a->db, cache, size_class, n - at,
					     head, ADD_ROW, add_tail, &k, err);

		if (!st)
			return -1;
		for (size_t j = 0; j < k; j++) {
			const struct contrib *c = &cs[at + j];
			unsigned int b = (unsigned int)(j * ADD_COLS);

			db_bind_text(st, b, ingest_kind_name(c->kind));
			db_bind_text(st, b + 1, c->name);
			db_bind_int64(st, b + 2, c->minute);
			db_bind_uint64(st, b + 3, c->samples);
			for (unsigned int i = 0; i < INFLUX_N_COUNTERS; i++)
				db_bind_uint64(st, b + 4 + i, c->sum[i]);
			bind_opt(st, b + 9, c->has_rbps, c->rbps);
			bind_opt(st, b + 10, c->has_wbps, c->wbps);
			bind_opt(st, b + 11, c->qn > 0, c->qsum);
			db_bind_uint64(st, b + 12, c->qn);
			bind_opt(st, b + 13, c->qn > 0,
				 c->qn ? c->qsum / (double)c->qn : 0);
			bind_opt(st, b + 14, c->has_qmax, c->qmax);
		}
		if (db_exec(st, err) < 0)
			return -1;
		at += k;
	}
	return 0;
}

int rollup_acc_write(struct rollup_acc *a, fwd_error_t *err)
{
	size_t n, nq;

	if (write_hist(a, err) < 0) {
		a->n = 0;
		return -1;
	}
	if (!a->n)
		return 0;
	qsort(a->c, a->n, sizeof(*a->c), cmp_contrib);
	n = merge_keys(a->c, a->n);
	a->n = 0;
	if (write_contribs(a, a->add, add_head, a->c, n, err) < 0)
		return -1;
	/* The same contributions to their quarter hours: the minutes are
	 * in key order, so those of a quarter hour are adjacent. */
	for (size_t i = 0; i < n; i++)
		a->c[i].minute = rollup_quarter(a->c[i].minute);
	nq = merge_keys(a->c, n);
	return write_contribs(a, a->add_q, add_q_head, a->c, nq, err);
}
