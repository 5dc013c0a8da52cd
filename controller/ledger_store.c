/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stored ledger: every statement on `allocations` and `jobs`
 * (controller/ledger_store.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/array.h"
#include "common/slurm_compat.h"
#include "common/timeutil.h"
#include "controller/ledger_store.h"
#include "db/db.h"
#include "monitor/inventory.h"
#include "policies/policy.h"
#include "topology/topology.h"

int ledger_store_lock(struct db *db, double timeout, fwd_error_t *err)
{
	return db_begin_locked(db,
			       "SELECT id FROM decision_lock WHERE id = 1 "
			       "FOR UPDATE",
			       "decision lock", timeout, err);
}

long ledger_store_tx_backoff_ms(unsigned int attempt, unsigned int seed)
{
	long ms = 10L << (attempt > 0 ? (attempt < 5 ? attempt - 1 : 4) : 0);

	ms += (long)(rand_r(&seed) % (unsigned int)ms);
	return ms > 160 ? 160 : ms;
}

bool ledger_store_tx_retry(struct db *db, int cause, unsigned int *attempt,
			   fwd_error_t *err)
{
	struct timespec ts;
	unsigned int seed;
	long ms;

	if (!db_err_retryable(cause) && cause != EEXIST)
		return false;
	if (*attempt >= LEDGER_STORE_TX_ATTEMPTS) {
		errprefix(err, "after %u attempts", *attempt);
		errno = cause;
		return false;
	}
	db_rollback(db);
	/* Spread the retries of conflicting controllers apart. */
	seed = (unsigned int)(fwd_clock_mono() * 1e6) ^ (unsigned int)getpid();
	ms = ledger_store_tx_backoff_ms(*attempt, seed);
	ts.tv_sec = 0;
	ts.tv_nsec = ms * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	(*attempt)++;
	return true;
}

int ledger_store_tx_reconnect(struct db **db, const struct db_config *cfg,
			      int cause, unsigned int *attempt,
			      fwd_error_t *err)
{
	if (!db_err_unavailable(cause) || cfg->hosts.count < 2 ||
	    *attempt >= LEDGER_STORE_TX_ATTEMPTS)
		return 0;
	db_close(*db);
	(*attempt)++;
	if (!(*db = db_connect_current(cfg, DB_ROLE_CONTROLLER, err)))
		return -1;
	return 1;
}

int ledger_store_has_rows(struct db *db, uint64_t job_num, fwd_error_t *err)
{
	int64_t n = 0;

	if (db_query_int64(db, err, &n,
			   "SELECT COUNT(*) FROM allocations WHERE job_id = ?",
			   "u", job_num) < 0)
		return errprefix(err, "reading the allocations of job %llu",
				 (unsigned long long)job_num);
	return n > 0;
}

int ledger_store_job_start(struct db *db, const struct ctl_job *j, double now,
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
		     j->request == FWD_REQ_NONE ? NULL : j->request_name,
		     t) < 0)
		return errprefix(err, "recording job %s", j->job_id);
	return 0;
}

int ledger_store_job_import(struct db *db, uint64_t job_num, const char *user,
			    const char *account, const char *name,
			    const char *partition, const char *nodelist,
			    uint32_t n_nodes, int64_t start, int64_t end,
			    const char *state, int64_t now, fwd_error_t *err)
{
	int64_t n = db_execf(
		db, err,
		"INSERT IGNORE INTO jobs (job_id, user, account, name,"
		" partition_name, nodelist, node_count, start_at, end_at, "
		"state,"
		" updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		"usssssiiisi", job_num, user, account, name ? name : "",
		partition, nodelist, (int64_t)n_nodes, start, end, state, now);

	if (n < 0)
		return errprefix(err, "recording job %llu",
				 (unsigned long long)job_num);
	return n > 0;
}

int ledger_store_job_end(struct db *db, uint64_t job_num, const char *state,
			 double now, fwd_error_t *err)
{
	int64_t t = (int64_t)now;

	if (db_execf(db, err,
		     "UPDATE jobs SET end_at = GREATEST(?, IFNULL(start_at, "
		     "0)), "
		     "state = ?, updated_at = ? WHERE job_id = ?",
		     "isiu", t, state, t, job_num) < 0)
		return errprefix(err, "recording the end of job %llu",
				 (unsigned long long)job_num);
	return 0;
}

static enum fwd_action action_parse(const char *a)
{
	for (int k = FWD_ACT_DEFAULT; k <= FWD_ACT_DIRECT; k++)
		if (a && !strcmp(a, fwd_action_name((enum fwd_action)k)))
			return (enum fwd_action)k;
	return FWD_ACT_DEFAULT;
}

struct pending {
	struct alloc_ledger_entry e;
	size_t cap;
	char job_id[24];
	/* the rows' node lists joined by ',' (e.nodes while flushing) */
	char *nodes;
	size_t nodes_len, nodes_cap;
};

/* Append one row's node list to the job's. */
static int pending_nodes(struct pending *pe, const char *nodes)
{
	size_t k = strlen(nodes);

	if (!k)
		return 0;
	if (pe->nodes_len + k + 2 > pe->nodes_cap) {
		size_t cap = (pe->nodes_len + k + 2) * 2;
		char *b = realloc(pe->nodes, cap);

		if (!b)
			return -1;
		pe->nodes = b;
		pe->nodes_cap = cap;
	}
	if (pe->nodes_len)
		pe->nodes[pe->nodes_len++] = ',';
	memcpy(pe->nodes + pe->nodes_len, nodes, k + 1);
	pe->nodes_len += k;
	return 0;
}

static int pending_flush(struct alloc_ledger *l, struct pending *pe,
			 fwd_error_t *err)
{
	int rv = 0;

	if (pe->e.n_forwarders > 0) {
		pe->e.job_id = pe->job_id;
		pe->e.nodes = pe->nodes_len ? pe->nodes : NULL;
		rv = alloc_ledger_add(l, &pe->e, err);
	}
	pe->e.n_forwarders = 0;
	pe->e.n_nodes = 0;
	pe->e.nodes = NULL;
	pe->nodes_len = 0;
	return rv;
}

struct last_used {
	const struct topology *t;
	double *when;
};

static void set_last_used(const char *name, double when, void *arg)
{
	const struct last_used *lu = arg;
	long f = topo_forwarder_index(lu->t, name);

	if (f >= 0)
		lu->when[f] = when;
}

int ledger_store_last_used(struct db *db, const struct topology *t,
			   double *when, fwd_error_t *err)
{
	struct last_used lu = {t, when};

	for (size_t f = 0; f < t->n_forwarders; f++)
		when[f] = 0;
	if (inventory_last_used(db, set_last_used, &lu, err) < 0)
		return errprefix(err, "loading the forwarders' last release");
	return 0;
}

int ledger_store_load(struct db *db, struct alloc_ledger *l, size_t *skipped,
		      fwd_error_t *err)
{
	const struct topology *t = alloc_ledger_topology(l);
	double *when =
		calloc(t->n_forwarders ? t->n_forwarders : 1, sizeof(*when));
	int rv = -1;

	if (!when) {
		errprintf(err, "ledger: %s", strerror(errno));
		return -1;
	}
	/* Least recently released first: each forwarder's last release,
	 * kept in the inventory as the ledger releases (one row per
	 * forwarder, however many allocations it has had). */
	if (ledger_store_load_marked(db, l, NULL, skipped, err) == 0 &&
	    ledger_store_last_used(db, t, when, err) == 0) {
		alloc_ledger_set_last_releases(l, when);
		rv = 0;
	}
	free(when);
	return rv;
}

/* The columns a ledger read returns: the loader's 0..10, then the row's
 * id, and for a released row its release time and sequence number (NULL
 * for a held one). */
#define LEDGER_COLUMNS                                                     \
	"job_id, forwarder, is_private, node_count, action, acquired_at, " \
	"io_mode, mdops_rate, bandwidth_bps, iops, nodes, id"
enum { COL_ID = 11, COL_RELEASED_AT, COL_RELEASED_SEQ };

/*
 * The rows st returns, in job order, into l: a held row joins its job's
 * entry (one entry a job: all its held rows are written by one decision),
 * a released one releases its job's entry (released rows come first).
 * Rows naming a forwarder the topology lacks are counted in *skip.  mark
 * (may be NULL) moves up to the largest id and release sequence read.
 */
static int read_ledger_rows(struct db_stmt *st, struct alloc_ledger *l,
			    struct ledger_mark *mark, size_t *skip,
			    fwd_error_t *err)
{
	const struct topology *t = alloc_ledger_topology(l);
	struct pending pe;
	uint64_t cur = 0;
	int rv = -1, r;

	memset(&pe, 0, sizeof(pe));
	pe.cap = t->n_forwarders ? t->n_forwarders : 1;
	pe.e.forwarders = calloc(pe.cap, sizeof(*pe.e.forwarders));
	pe.e.private_fwd = calloc(pe.cap, sizeof(*pe.e.private_fwd));
	if (!pe.e.forwarders || !pe.e.private_fwd) {
		errprintf(err, "ledger: %s", strerror(errno));
		goto out;
	}
	while ((r = db_fetch(st, err)) > 0) {
		uint64_t job = db_col_uint64(st, 0),
			 id = db_col_uint64(st, COL_ID);
		long f = topo_forwarder_index(t, db_col_text(st, 1));
		bool dup = false;

		if (mark && !db_col_null(st, COL_RELEASED_AT)) {
			char job_id[24];

			snprintf(job_id, sizeof(job_id), "%llu",
				 (unsigned long long)job);
			alloc_ledger_release(
				l, job_id, db_col_double(st, COL_RELEASED_AT));
			if (!db_col_null(st, COL_RELEASED_SEQ) &&
			    db_col_uint64(st, COL_RELEASED_SEQ) >
				    mark->released_seq)
				mark->released_seq =
					db_col_uint64(st, COL_RELEASED_SEQ);
			continue;
		}
		if (mark && id > mark->max_id)
			mark->max_id = id;
		if (job != cur) {
			if (pending_flush(l, &pe, err) < 0)
				goto out;
			cur = job;
			snprintf(pe.job_id, sizeof(pe.job_id), "%llu",
				 (unsigned long long)job);
		}
		if (f < 0) {
			(*skip)++;
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
		if (!db_col_null(st, 10) &&
		    pending_nodes(&pe, db_col_text(st, 10)) < 0) {
			errprintf(err, "ledger: %s", strerror(errno));
			goto out;
		}
		pe.e.action = action_parse(db_col_text(st, 4));
		pe.e.acquired_at = db_col_double(st, 5);
		if (fwd_io_mode_parse(db_col_text(st, 6), &pe.e.io_mode) < 0)
			pe.e.io_mode = FWD_IO_NONE;
		pe.e.mdops = db_col_double(st, 7);
		pe.e.bandwidth_bps = db_col_double(st, 8);
		pe.e.iops = db_col_double(st, 9);
	}
	if (r < 0 || pending_flush(l, &pe, err) < 0)
		goto out;
	rv = 0;
out:
	free(pe.e.forwarders);
	free(pe.e.private_fwd);
	free(pe.nodes);
	return rv;
}

/* The rows st (executed, or NULL after an error) returns, into l; st is
 * closed.  0, or -1 with err prefixed by what. */
static int read_ledger(struct db_stmt *st, struct alloc_ledger *l,
		       struct ledger_mark *mark, size_t *skipped,
		       const char *what, fwd_error_t *err)
{
	size_t skip = 0;
	int rv = -1;

	if (st && read_ledger_rows(st, l, mark, &skip, err) == 0) {
		if (skipped)
			*skipped = skip;
		rv = 0;
	}
	db_stmt_close(st);
	if (rv < 0)
		errprefix(err, "%s", what);
	return rv;
}

/* Where the ledger stands now, into *mark.  0, or -1 with errno and err. */
static int read_mark(struct db *db, struct ledger_mark *mark, fwd_error_t *err)
{
	struct db_stmt *st;
	int r, rv = -1;

	st = db_queryf(db, err,
		       "SELECT (SELECT version FROM ledger_version WHERE id = "
		       "1), (SELECT MAX(id) FROM allocations)",
		       "");
	if (!st || (r = db_fetch(st, err)) < 0)
		goto out;
	if (r == 0 || db_col_null(st, 0)) {
		errno = ENOENT;
		errprintf(err, "the ledger_version row is missing (see "
			       "db/SCHEMA.md)");
		goto out;
	}
	mark->released_seq = db_col_uint64(st, 0);
	mark->max_id = db_col_null(st, 1) ? 0 : db_col_uint64(st, 1);
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

int ledger_store_load_marked(struct db *db, struct alloc_ledger *l,
			     struct ledger_mark *mark, size_t *skipped,
			     fwd_error_t *err)
{
	/* The mark first: under READ COMMITTED a release committed
	 * between the two reads is then read again by the next change
	 * read (releasing twice is harmless), never missed.  New rows
	 * need the decision lock, which the caller holds. */
	if (mark && read_mark(db, mark, err) < 0)
		return errprefix(err, "loading the allocation ledger");
	return read_ledger(db_queryf(db, err,
				     "SELECT " LEDGER_COLUMNS
				     ", NULL, NULL FROM allocations WHERE "
				     "released_at IS NULL ORDER BY job_id, id",
				     ""),
			   l, NULL, skipped, "loading the allocation ledger",
			   err);
}

int ledger_store_load_changes(struct db *db, struct alloc_ledger *l,
			      struct ledger_mark *mark, size_t *skipped,
			      fwd_error_t *err)
{
	/* One statement, one snapshot (three index ranges merged): the
	 * releases numbered after the mark (the numbers commit in order:
	 * stamp_releases()), the recent ones not numbered yet (read again
	 * until they are), then the held rows written since. */
	return read_ledger(
		db_queryf(db, err,
			  "SELECT " LEDGER_COLUMNS
			  ", released_at, released_seq "
			  "FROM allocations WHERE released_seq > ? OR "
			  "(released_seq IS NULL AND released_at >= ?) OR "
			  "(id > ? AND released_at IS NULL) "
			  "ORDER BY released_at IS NULL, job_id, id",
			  "uiu", mark->released_seq,
			  (int64_t)fwd_clock_real() - LEDGER_STAMP_WINDOW,
			  mark->max_id),
		l, mark, skipped, "reading the allocation ledger's changes",
		err);
}

/* Rows of one INSERT at most: a decision's forwarders are a few; a
 * larger one is written in statements of this many rows. */
#define ALLOC_ROWS_MAX 16

/* The rows (n of them) for job j, in as few statements as ALLOC_ROWS_MAX
 * allows: one round trip for a decision's usual handful. */
static int insert_rows(struct db *db, const struct alloc_decision *d,
		       const struct ctl_job *j, double now,
		       const struct ledger_alloc_row *rows, size_t n,
		       fwd_error_t *err)
{
	const struct alloc_profile *pr = d->has_profile ? &d->profile : NULL;
	const char *action = fwd_action_name(d->action);
	const char *io_mode = pr && pr->io_mode != FWD_IO_NONE
				      ? fwd_io_mode_name(pr->io_mode)
				      : "none";

	for (size_t at = 0; at < n;) {
		size_t k = n - at < ALLOC_ROWS_MAX ? n - at : ALLOC_ROWS_MAX;
		struct db_stmt *st = db_prepare_rows(
			db,
			"INSERT INTO allocations (job_id, forwarder, "
			"is_private, nodes, node_count, action, acquired_at, "
			"io_mode, mdops_rate, bandwidth_bps, iops) VALUES ",
			"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", k, "", err);
		char held[512];
		size_t len = 0, n_priv = 0;
		int rc;

		if (!st)
			return -1;
		for (size_t r = 0; r < k; r++) {
			const struct ledger_alloc_row *w = &rows[at + r];
			unsigned int b = (unsigned int)(r * 11);

			db_bind_uint64(st, b, j->job_num);
			db_bind_text(st, b + 1, w->forwarder);
			db_bind_int64(st, b + 2, w->priv);
			db_bind_text(st, b + 3, w->nodes);
			db_bind_int64(st, b + 4, (int64_t)w->count);
			db_bind_text(st, b + 5, action);
			db_bind_int64(st, b + 6, (int64_t)now);
			db_bind_text(st, b + 7, io_mode);
			db_bind_double(st, b + 8, pr ? pr->mdops : 0);
			db_bind_double(st, b + 9,
				       pr ? pr->peak_bandwidth_bps : 0);
			db_bind_double(st, b + 10, pr ? pr->iops : 0);
		}
		rc = db_exec(st, err);
		db_stmt_close(st);
		if (rc == 0) {
			at += k;
			continue;
		}
		if (errno != EEXIST)
			return -1;
		/* The statement's private forwarders: one of them is the
		 * one held. */
		held[0] = '\0';
		for (size_t r = 0; r < k && len < sizeof(held); r++) {
			int m;

			if (!rows[at + r].priv)
				continue;
			n_priv++;
			m = snprintf(held + len, sizeof(held) - len, "%s%s",
				     len ? ", " : "", rows[at + r].forwarder);
			if (m > 0)
				len += (size_t)m;
		}
		if (!n_priv) /* no private row: the server's words */
			return -1;
		errprintf(err,
			  n_priv > 1 ? "one of forwarders %s is already held "
				       "privately by another job"
				     : "forwarder %s is already held privately "
				       "by another job",
			  held);
		errno = EEXIST;
		return -1;
	}
	return 0;
}

/*
 * A shadow decision applies nothing: its rows are the job's default
 * mapping, each default forwarder with the job's nodes it serves, shared,
 * so that the ledger, the metrics and the nodes (FWDALLOC_FORWARDERS) say
 * what the job really uses; what it would have got stays in the audit
 * record.  One row per default forwarder that serves some of the job's
 * nodes, into rows (d->n_defaults of room; *n of them filled, their node
 * lists malloc'd).  0, or -1 with err.
 */
static int shadow_rows(const struct topology *t, const struct alloc_decision *d,
		       const struct ctl_job *j, struct ledger_alloc_row *rows,
		       size_t *n, fwd_error_t *err)
{
	fwd_hostlist_t job_hl = NULL, *hl = NULL;
	size_t *count = NULL;
	int32_t *slot = NULL;
	char *host;
	int rv = -1;

	*n = 0;
	if (!j->nodes || !(job_hl = slurm_hostlist_create(j->nodes))) {
		errprintf(err, "job node list '%s' is not a hostlist",
			  j->nodes ? j->nodes : "");
		goto out;
	}
	hl = calloc(d->n_defaults ? d->n_defaults : 1, sizeof(*hl));
	count = calloc(d->n_defaults ? d->n_defaults : 1, sizeof(*count));
	slot = malloc((t->n_forwarders ? t->n_forwarders : 1) * sizeof(*slot));
	if (!hl || !count || !slot)
		goto nomem;
	for (size_t f = 0; f < t->n_forwarders; f++)
		slot[f] = -1;
	for (size_t i = 0; i < d->n_defaults; i++) {
		slot[d->defaults[i]] = (int32_t)i;
		if (!(hl[i] = slurm_hostlist_create("")))
			goto nomem;
	}
	while ((host = slurm_hostlist_shift(job_hl))) {
		long id = topo_node_id(t, host);
		int32_t k = id >= 0 && t->node_forwarder[id] >= 0
				    ? slot[t->node_forwarder[id]]
				    : -1;

		if (k >= 0) {
			slurm_hostlist_push_host(hl[k], host);
			count[k]++;
		}
		free(host);
	}
	for (size_t i = 0; i < d->n_defaults; i++) {
		struct ledger_alloc_row *w = &rows[*n];

		if (!count[i])
			continue;
		if (!(w->nodes = fwd_hostlist_ranged(hl[i])))
			goto nomem;
		w->fwd = d->defaults[i];
		w->forwarder = t->forwarders[w->fwd].name;
		w->priv = false;
		w->count = count[i];
		(*n)++;
	}
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	errprintf(err, "out of memory");
out:
	for (size_t i = 0; hl && i < d->n_defaults; i++)
		if (hl[i])
			slurm_hostlist_destroy(hl[i]);
	if (job_hl)
		slurm_hostlist_destroy(job_hl);
	free(hl);
	free(count);
	free(slot);
	return rv;
}

int ledger_store_decision_rows(const struct topology *t,
			       const struct alloc_decision *d,
			       const struct ctl_job *j,
			       struct ledger_alloc_row **rows, size_t *n,
			       fwd_error_t *err)
{
	size_t cap = d->action == FWD_ACT_SHADOW ? d->n_defaults : d->n_mapping;
	struct ledger_alloc_row *w = calloc(cap ? cap : 1, sizeof(*w));

	*rows = NULL;
	*n = 0;
	if (!w) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto fail;
	}
	if (d->action != FWD_ACT_SHADOW) {
		for (size_t i = 0; i < d->n_mapping; i++) {
			struct ledger_alloc_row *r = &w[(*n)++];
			uint32_t f = d->mapping[i].forwarder;

			for (size_t b = 0; b < d->n_blocks; b++)
				if (d->blocks[b].forwarder == f)
					r->count += d->blocks[b].count;
			for (size_t k = 0; k < d->n_forwarders; k++)
				if (d->forwarders[k] == f)
					r->priv = d->private_fwd[k];
			r->fwd = f;
			r->forwarder = t->forwarders[f].name;
			r->nodes = d->mapping[i].nodes;
		}
	} else if (shadow_rows(t, d, j, w, n, err) < 0) {
		ledger_store_decision_rows_free(d, w, *n);
		*n = 0;
		goto fail;
	}
	*rows = w;
	return 0;
fail:
	/* They are built to be written. */
	return errprefix(err, "writing the allocation of job %s", j->job_id);
}

void ledger_store_decision_rows_free(const struct alloc_decision *d,
				     struct ledger_alloc_row *rows, size_t n)
{
	/* A shadow decision's node lists are built for its rows; the
	 * others are the decision's own. */
	for (size_t i = 0; i < n && d->action == FWD_ACT_SHADOW; i++)
		free(rows[i].nodes);
	free(rows);
}

int ledger_store_write(struct db *db, const struct alloc_decision *d,
		       const struct ctl_job *j,
		       const struct ledger_alloc_row *rows, size_t n,
		       double now, fwd_error_t *err)
{
	if (insert_rows(db, d, j, now, rows, n, err) < 0)
		return errprefix(err, "writing the allocation of job %s",
				 j->job_id);
	return 0;
}

/* Into *names (NULL and *n 0 on entry) a copy of the first column of each
 * row st (executed) returns; st is closed.  0, or -1 with err (what was
 * read stays in *names, for the caller to free). */
static int fetch_names(struct db_stmt *st, char ***names, size_t *n,
		       fwd_error_t *err)
{
	size_t cap = 0;
	int r, rv = -1;

	while ((r = db_fetch(st, err)) > 0) {
		const char *v = db_col_text(st, 0);

		if (FWD_GROW(*names, cap, *n + 1, 16) < 0 ||
		    !((*names)[*n] = strdup(v ? v : ""))) {
			errprintf(err, "%s", strerror(errno));
			goto out;
		}
		(*n)++;
	}
	if (r == 0)
		rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

/*
 * Number the releases committed within the last LEDGER_STAMP_WINDOW
 * seconds that have no number yet (released_seq NULL), with the next
 * number of the ledger_version row, in one short transaction that holds
 * the row to its commit: the numbers commit in order.  Best effort: when
 * another release holds the row (it numbers this one too, or the next
 * does), or anything fails, the rows stay unnumbered, and a kept ledger
 * reads them among the unnumbered releases (ledger_store_load_changes()).
 * Read committed: rows other releases are changing are neither waited
 * for nor gap-locked.
 */
static void stamp_releases(struct db *db, double now)
{
	struct db_stmt *st;
	fwd_error_t err;
	int64_t seq;

	if (db_execf(db, &err, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
		     "") < 0 ||
	    db_begin_locked(db,
			    "SELECT version FROM ledger_version WHERE id = 1 "
			    "FOR UPDATE",
			    "ledger_version row", 0, &err) < 0)
		return;
	st = db_prepare(db,
			"UPDATE ledger_version SET version = "
			"LAST_INSERT_ID(version + 1) WHERE id = 1",
			&err);
	if (!st || db_exec(st, &err) < 0) {
		db_stmt_close(st);
		goto fail;
	}
	seq = (int64_t)db_insert_id(st);
	db_stmt_close(st);
	if (db_execf(db, &err,
		     "UPDATE allocations SET released_seq = ? WHERE "
		     "released_seq IS NULL AND released_at >= ?",
		     "ii", seq, (int64_t)now - LEDGER_STAMP_WINDOW) < 0 ||
	    db_commit(db, &err) < 0)
		goto fail;
	return;
fail:
	db_rollback(db);
}

int ledger_store_release(struct db *db, uint64_t job_num, const char *reason,
			 double now, uint64_t *released, fwd_error_t *err)
{
	char **names = NULL;
	size_t n_names = 0;
	struct db_stmt *st;
	int64_t n = 0;
	int rv = -1;

	/* The forwarders of the rows about to be released, a shadow
	 * decision's included: its job ran on them (least recent load
	 * first). */
	st = db_queryf(db, err,
		       "SELECT DISTINCT forwarder FROM allocations "
		       "WHERE job_id = ? AND released_at IS NULL "
		       "LIMIT 100000",
		       "u", job_num);
	if (!st || fetch_names(st, &names, &n_names, err) < 0)
		goto out;
	if (!n_names)
		goto done;
	/* Never before the row was acquired: a controller whose clock ran
	 * ahead (another one of an HA pair, or this one before NTP caught
	 * up) must not leave a negative holding time. */
	n = db_execf(db, err,
		     "UPDATE allocations SET released_at = GREATEST(?, "
		     "acquired_at), release_reason = ? WHERE job_id = ? AND "
		     "released_at IS NULL",
		     "isu", (int64_t)now, reason, job_num);
	if (n < 0)
		goto out;
	if (n > 0 && inventory_touch_forwarders(db, (const char *const *)names,
						n_names, now, err) < 0)
		goto out;
	/* Numbered once committed; in the caller's transaction, by the
	 * next release that numbers. */
	if (n > 0 && !db_in_txn(db))
		stamp_releases(db, now);
done:
	if (released)
		*released = (uint64_t)n;
	rv = 0;
out:
	if (rv < 0)
		errprefix(err, "releasing the allocation of job %llu",
			  (unsigned long long)job_num);
	ledger_store_names_free(names, n_names);
	return rv;
}

void ledger_store_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int ledger_store_job_forwarders(struct db *db, uint64_t job_num, char ***names,
				size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;

	*names = NULL;
	*n = 0;
	st = db_queryf(db, err,
		       "SELECT DISTINCT forwarder FROM allocations"
		       " WHERE job_id = ? AND " LEDGER_HELD_WHERE
		       " ORDER BY forwarder LIMIT 100000",
		       "u", job_num);
	if (st && fetch_names(st, names, n, err) == 0)
		return 0;
	errprefix(err, "reading the forwarders job %llu held",
		  (unsigned long long)job_num);
	ledger_store_names_free(*names, *n);
	*names = NULL;
	*n = 0;
	return -1;
}

int ledger_store_job_private(struct db *db, uint64_t job_num, bool *priv,
			     fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1, r;

	*priv = false;
	st = db_queryf(
		db, err,
		"SELECT COUNT(*), COALESCE(SUM(is_private <> 0), 0)"
		" FROM allocations WHERE job_id = ? AND " LEDGER_HELD_WHERE,
		"u", job_num);
	if (!st || (r = db_fetch(st, err)) < 0)
		goto out;
	if (r > 0)
		*priv = db_col_uint64(st, 0) > 0 &&
			db_col_uint64(st, 1) == db_col_uint64(st, 0);
	rv = 0;
out:
	if (rv < 0)
		errprefix(err,
			  "reading whether job %llu held private "
			  "forwarders",
			  (unsigned long long)job_num);
	db_stmt_close(st);
	return rv;
}

int ledger_store_held_jobs(struct db *db, uint64_t **jobs, size_t *n,
			   fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1;

	*jobs = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT DISTINCT job_id FROM allocations "
			"WHERE released_at IS NULL ORDER BY job_id",
			err);
	if (!st || db_exec(st, err) < 0)
		goto out;
	if (db_fetch_uint64s(st, jobs, n, err) < 0)
		goto out;
	rv = 0;
out:
	if (rv < 0) {
		errprefix(err, "reading the jobs holding allocations");
		free(*jobs);
		*jobs = NULL;
		*n = 0;
	}
	db_stmt_close(st);
	return rv;
}

void ledger_store_rows_free(struct ledger_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		free(rows[i].action);
		free(rows[i].forwarder);
		free(rows[i].nodes);
		free(rows[i].release_reason);
	}
	free(rows);
}

#define ROW_COLUMNS                                                 \
	"job_id, action, forwarder, is_private, nodes, node_count," \
	" acquired_at, released_at, release_reason, io_mode,"       \
	" mdops_rate, bandwidth_bps, iops"

static char *dup_col(struct db_stmt *st, unsigned int col)
{
	const char *s = db_col_text(st, col);

	return s ? strdup(s) : NULL;
}

/* Run st (bound) and collect its rows of ROW_COLUMNS. */
static int read_rows(struct db_stmt *st, struct ledger_row **rows, size_t *n,
		     fwd_error_t *err)
{
	size_t cap = 0;
	int r;

	*rows = NULL;
	*n = 0;
	if (db_exec(st, err) < 0)
		return -1;
	while ((r = db_fetch(st, err)) > 0) {
		struct ledger_row *w;

		if (FWD_GROW(*rows, cap, *n + 1, 64) < 0)
			goto oom;
		w = &(*rows)[(*n)++];
		memset(w, 0, sizeof(*w));
		w->job_id = db_col_uint64(st, 0);
		w->is_private = db_col_int64(st, 3) != 0;
		w->node_count = db_col_uint64(st, 5);
		w->acquired_at = db_col_int64(st, 6);
		w->released = !db_col_null(st, 7);
		w->released_at = db_col_int64(st, 7);
		if (!(w->action = dup_col(st, 1)) ||
		    !(w->forwarder = dup_col(st, 2)) ||
		    !(w->nodes = dup_col(st, 4)))
			goto oom;
		if (!db_col_null(st, 8) &&
		    !(w->release_reason = dup_col(st, 8)))
			goto oom;
		if (!db_col_null(st, 9))
			snprintf(w->io_mode, sizeof(w->io_mode), "%s",
				 db_col_text(st, 9));
		w->mdops_rate = db_col_null(st, 10) ? 0 : db_col_double(st, 10);
		w->bandwidth_bps =
			db_col_null(st, 11) ? 0 : db_col_double(st, 11);
		w->iops = db_col_null(st, 12) ? 0 : db_col_double(st, 12);
	}
	if (r < 0)
		return -1;
	return 0;
oom:
	return errprintf(err, "%s", strerror(errno));
}

int ledger_store_held(struct db *db, struct ledger_row **rows, size_t *n,
		      fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1;

	*rows = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT " ROW_COLUMNS " FROM allocations"
			" WHERE released_at IS NULL ORDER BY job_id, id",
			err);
	if (st && read_rows(st, rows, n, err) == 0)
		rv = 0;
	if (rv < 0) {
		errprefix(err, "reading the held allocations");
		ledger_store_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	db_stmt_close(st);
	return rv;
}

int ledger_store_job_rows(struct db *db, uint64_t job_num,
			  struct ledger_row **rows, size_t *n, fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1;

	*rows = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT " ROW_COLUMNS " FROM allocations"
			" WHERE job_id = ? ORDER BY id",
			err);
	if (st) {
		db_bind_uint64(st, 0, job_num);
		if (read_rows(st, rows, n, err) == 0)
			rv = 0;
	}
	if (rv < 0) {
		errprefix(err, "reading the allocations of job %llu",
			  (unsigned long long)job_num);
		ledger_store_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	db_stmt_close(st);
	return rv;
}

int ledger_store_rows_between(struct db *db, int64_t from, int64_t to,
			      struct ledger_row **rows, size_t *n,
			      fwd_error_t *err)
{
	static const char held[] =
		"SELECT " ROW_COLUMNS ", id FROM allocations"
		" WHERE released_at IS NULL AND acquired_at < ?";
	static const char released[] =
		" UNION ALL SELECT " ROW_COLUMNS ", id FROM allocations"
		" WHERE held_class = ? AND acquired_at >= ? AND acquired_at < ?"
		" AND released_at >= ?";
	static const char order[] = " ORDER BY job_id, id";
	unsigned char cls[DB_DURATION_CLASSES];
	struct db_stmt *st = NULL;
	size_t n_cls = 0;
	unsigned int i = 0;
	char *sql = NULL;
	int rv = -1;

	*rows = NULL;
	*n = 0;
	/* the rows held now (allocations_ledger), and the released ones of
	 * each duration class acquired within that class's longest hold
	 * before from (allocations_held_class): a row released at from or
	 * later and acquired earlier would have been held longer */
	if (db_duration_classes(db, "allocations", "held_class", cls, &n_cls,
				err) < 0)
		goto out;
	if (!(sql = db_duration_sql(held, released, order, n_cls))) {
		errprintf(err, "%s", strerror(errno));
		goto out;
	}
	st = db_prepare(db, sql, err);
	if (st) {
		db_bind_int64(st, i++, to);
		db_bind_duration_parts(st, &i, cls, n_cls, from, to);
		if (read_rows(st, rows, n, err) == 0)
			rv = 0;
	}
out:
	if (rv < 0) {
		errprefix(err, "reading the allocations held from %lld to %lld",
			  (long long)from, (long long)to);
		ledger_store_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	free(sql);
	db_stmt_close(st);
	return rv;
}

int ledger_store_prune(struct db *db, const struct policy_retention *r,
		       int64_t now, bool dry_run, struct db_pruned *out,
		       size_t *n, fwd_error_t *err)
{
	/* `released_at < cutoff` is never true of a held row (NULL); the
	 * index allocations_ledger serves the range, jobs_end that of
	 * jobs. */
	const struct {
		const char *table, *column;
		double keep;
	} t[LEDGER_STORE_PRUNE_TABLES] = {
		{"allocations", "released_at", r->allocations},
		{"jobs", "end_at", r->jobs},
	};

	for (size_t i = 0; i < LEDGER_STORE_PRUNE_TABLES; i++) {
		struct db_pruned *p = &out[*n];

		if (t[i].keep <= 0)
			continue; /* keep forever */
		p->table = t[i].table;
		p->cutoff = now - (int64_t)t[i].keep;
		if (db_prune_before(db, p, t[i].column, dry_run, err) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

/* Copy a column into a fixed buffer: "" when NULL. */
static void col_copy(const struct db_stmt *st, unsigned int col, char *buf,
		     size_t len)
{
	const char *v = db_col_null(st, col) ? "" : db_col_text(st, col);

	snprintf(buf, len, "%s", v ? v : "");
}

int ledger_store_job_get(struct db *db, uint64_t job_num,
			 struct ledger_job *out, fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1, r;

	memset(out, 0, sizeof(*out));
	st = db_queryf(db, err,
		       "SELECT job_id, user, account, name, partition_name,"
		       " nodelist, node_count, start_at, end_at, state, request"
		       " FROM jobs WHERE job_id = ?",
		       "u", job_num);
	if (!st)
		goto fail;
	r = db_fetch(st, err);
	if (r < 0)
		goto fail;
	if (r == 0) {
		rv = 1;
		goto out;
	}
	out->job_id = db_col_uint64(st, 0);
	col_copy(st, 1, out->user, sizeof(out->user));
	col_copy(st, 2, out->account, sizeof(out->account));
	col_copy(st, 3, out->name, sizeof(out->name));
	col_copy(st, 4, out->partition, sizeof(out->partition));
	out->nodelist = strdup(db_col_null(st, 5) ? "" : db_col_text(st, 5));
	if (!out->nodelist) {
		errprintf(err, "out of memory");
		goto fail;
	}
	out->node_count = (uint32_t)db_col_uint64(st, 6);
	out->start_at = db_col_null(st, 7) ? -1 : db_col_int64(st, 7);
	out->end_at = db_col_null(st, 8) ? -1 : db_col_int64(st, 8);
	col_copy(st, 9, out->state, sizeof(out->state));
	col_copy(st, 10, out->request, sizeof(out->request));
	rv = 0;
	goto out;
fail:
	errprefix(err, "reading job %llu", (unsigned long long)job_num);
out:
	db_stmt_close(st);
	return rv;
}

void ledger_store_job_clear(struct ledger_job *j)
{
	if (!j)
		return;
	free(j->nodelist);
	j->nodelist = NULL;
}
