/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reconcile the ledger with the jobs Slurm runs (controller/reconcile.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "allocator/ledger.h"
#include "common/array.h"
#include "common/run.h"
#include "common/slurm_compat.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/ledger_store.h"
#include "controller/reconcile.h"
#include "db/db.h"
#include "policies/policy.h"

/* libslurm's built-in configuration path (Debian's libslurm: strings
 * libslurm.so), and where slurmd caches it in configless mode. */
#ifndef FWD_SLURM_CONF
#define FWD_SLURM_CONF "/etc/slurm/slurm.conf"
#endif
#define FWD_SLURM_CONF_CONFIGLESS "/run/slurm/conf/slurm.conf"

/* Is the job still holding its nodes, per Slurm? */
static bool job_alive(const slurm_job_info_t *j)
{
	uint32_t base = j->job_state & JOB_STATE_BASE;

	if (j->job_state & (JOB_CONFIGURING | JOB_COMPLETING))
		return true;
	return base == JOB_RUNNING || base == JOB_SUSPENDED;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Slurm's configuration, as libslurm would look for it: $SLURM_CONF, else
 * its built-in path, else the copy slurmd keeps in configless mode.
 * Without one, slurm_init() does not return an error: it searches DNS for
 * a configless controller (about a minute) and then exits the process.
 */
static int slurm_conf_check(fwd_error_t *err)
{
	const char *env = getenv("SLURM_CONF");

	if (env && *env) {
		if (access(env, R_OK) == 0)
			return 0;
		return errprintf(err, "Slurm's configuration SLURM_CONF=%s: %s",
				 env, strerror(errno));
	}
	if (access(FWD_SLURM_CONF, R_OK) == 0 ||
	    access(FWD_SLURM_CONF_CONFIGLESS, R_OK) == 0)
		return 0;
	return errprintf(err,
			 "Slurm's configuration %s: %s (set SLURM_CONF to "
			 "its path)",
			 FWD_SLURM_CONF, strerror(errno));
}

/* The jobs slurmctld says still hold their nodes, sorted. */
static int alive_jobs(uint64_t **alive, size_t *n, fwd_error_t *err)
{
	job_info_msg_t *jobs = NULL;

	*alive = NULL;
	*n = 0;
	if (slurm_conf_check(err) < 0)
		return -1;
	slurm_init(NULL);
	if (slurm_load_jobs((time_t)0, &jobs, SHOW_ALL) != SLURM_SUCCESS) {
		int e = fwd_slurm_errno();

		errno = ECONNREFUSED; /* slurmctld could not be asked */
		return errprintf(err, "asking slurmctld for its jobs: %s",
				 slurm_strerror(e));
	}
	*alive = calloc(jobs->record_count + 1, sizeof(**alive));
	if (!*alive) {
		slurm_free_job_info_msg(jobs);
		return errprintf(err, "%s", strerror(errno));
	}
	for (uint32_t i = 0; i < jobs->record_count; i++)
		if (job_alive(&jobs->job_array[i]))
			(*alive)[(*n)++] = jobs->job_array[i].job_id;
	slurm_free_job_info_msg(jobs);
	qsort(*alive, *n, sizeof(**alive), cmp_u64);
	return 0;
}

int ctl_reconcile(const struct policy *p, bool dry_run, struct ctl_reconcile *r,
		  fwd_error_t *err)
{
	struct db *db = NULL;
	uint64_t *held = NULL, *alive = NULL;
	size_t n_held = 0, n_alive = 0, n_recs = 0;
	json_t **recs = NULL;
	int rv = -1, in_tx = 0;

	memset(r, 0, sizeof(*r));
	r->unavailable = true;
	/* One transaction under the decision lock: the releases and their
	 * audit rows are committed together, or not at all. */
	if (!(db = db_connect_current(&p->database, DB_ROLE_CONTROLLER, err))) {
		/* A schema this binary does not know is not an outage. */
		r->unavailable = db_err_unavailable(errno);
		goto out;
	}
	if (ledger_store_lock(db, p->database.lock_timeout, err) < 0)
		goto out;
	in_tx = 1;
	/* Ask Slurm only after taking the lock: a prolog deciding now for a
	 * brand-new job then either finished (job known to Slurm) or has not
	 * written yet. */
	if (alive_jobs(&alive, &n_alive, err) < 0)
		goto out;
	r->unavailable = false;
	if (ledger_store_held_jobs(db, &held, &n_held, err) < 0)
		goto out;
	r->freed = calloc(n_held + 1, sizeof(*r->freed));
	r->kept = calloc(n_held + 1, sizeof(*r->kept));
	recs = calloc(n_held + 1, sizeof(*recs));
	if (!r->freed || !r->kept || !recs) {
		errprintf(err, "%s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n_held; i++) {
		uint64_t released = 0;
		fwd_error_t aerr;
		json_t *rec;
		double now;

		if (bsearch(&held[i], alive, n_alive, sizeof(*alive),
			    cmp_u64)) {
			r->kept[r->n_kept++] = held[i];
			continue;
		}
		r->freed[r->n_freed++] = held[i];
		if (dry_run)
			continue;
		now = fwd_clock_real();
		if (ledger_store_release(db, held[i], "reconcile", now,
					 &released, err) < 0 ||
		    ledger_store_job_end(db, held[i], "GONE", now, err) < 0)
			goto out;
		rec = audit_record_reconcile(held[i], now, released);
		if (!rec)
			continue;
		if (p->audit.database)
			audit_store(db, rec, &aerr);
		recs[n_recs++] = rec;
	}
	if (db_commit(db, err) < 0)
		goto out;
	in_tx = 0;
	/* The file records once the releases are committed. */
	for (size_t i = 0; i < n_recs; i++) {
		fwd_error_t aerr;

		if (audit_append(p->audit.file, recs[i], &aerr) < 0 &&
		    r->n_notes < sizeof(r->notes) / sizeof(r->notes[0]))
			r->notes[r->n_notes++] = aerr;
	}
	rv = 0;
out:
	if (in_tx) {
		/* Rolled back: nothing was freed. */
		db_rollback(db);
		if (!dry_run)
			r->n_freed = 0;
	}
	db_close(db);
	for (size_t i = 0; i < n_recs; i++)
		json_decref(recs[i]);
	free(recs);
	free(held);
	free(alive);
	return rv;
}

void ctl_reconcile_free(struct ctl_reconcile *r)
{
	free(r->freed);
	free(r->kept);
	r->freed = r->kept = NULL;
	r->n_freed = r->n_kept = 0;
}

/* ---- what holds the pool, for a refused prolog ---------------------- */

/* Bounded child: the alive job ids, one per line. */
static int alive_child(void *arg, int fd)
{
	uint64_t *alive = NULL;
	size_t n = 0;
	fwd_error_t err;

	(void)arg;
	if (alive_jobs(&alive, &n, &err) < 0) {
		dprintf(fd, "E %s\n", err.text);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		dprintf(fd, "%llu\n", (unsigned long long)alive[i]);
	free(alive);
	return 0;
}

static int alive_bounded(double timeout, uint64_t **alive, size_t *n,
			 fwd_error_t *err)
{
	char *out = NULL, *s, *end;
	size_t cap = 0;
	int rv = -1;

	*alive = NULL;
	*n = 0;
	if (ctl_run_bounded(timeout, alive_child, NULL, &out, err) < 0) {
		if (out && out[0] == 'E' && out[1] == ' ') {
			s = strchr(out + 2, '\n');
			if (s)
				*s = '\0';
			errprintf(err, "%s", out + 2);
		} else {
			errprefix(err, "asking slurmctld for its jobs");
		}
		goto out;
	}
	/* never NULL, even with no job alive: the caller bsearches it */
	if (FWD_GROW(*alive, cap, 1, 64) < 0) {
		errprintf(err, "%s", strerror(errno));
		goto out;
	}
	for (s = out; *s; s = end) {
		unsigned long long id;

		errno = 0;
		id = strtoull(s, &end, 10);
		if (end == s || errno || (*end && *end != '\n')) {
			errno = EPROTO;
			errprintf(err, "asking slurmctld for its jobs: bad "
				       "answer");
			goto out;
		}
		if (*end)
			end++;
		if (FWD_GROW(*alive, cap, *n + 1, 64) < 0) {
			errprintf(err, "%s", strerror(errno));
			goto out;
		}
		(*alive)[(*n)++] = id;
	}
	qsort(*alive, *n, sizeof(**alive), cmp_u64);
	rv = 0;
out:
	if (rv < 0) {
		free(*alive);
		*alive = NULL;
		*n = 0;
	}
	free(out);
	return rv;
}

#define POOL_NO_PRIVATE "pool: no private forwarder is held by another job"

/* Whether a job other than self holds a private forwarder in l. */
static bool others_hold_private(const struct alloc_ledger *l, uint64_t self)
{
	char me[24];

	snprintf(me, sizeof(me), "%llu", (unsigned long long)self);
	for (size_t i = 0, n = alloc_ledger_count(l); i < n; i++) {
		const struct alloc_ledger_entry *e =
			alloc_ledger_entry_at(l, i);

		if (!strcmp(e->job_id, me))
			continue;
		for (size_t k = 0; k < e->n_forwarders; k++)
			if (e->private_fwd[k])
				return true;
	}
	return false;
}

int ctl_pool_holders(struct db *db, const struct alloc_ledger *l, uint64_t self,
		     double timeout, double now, char *buf, size_t size,
		     fwd_error_t *err)
{
	struct ledger_row *rows = NULL;
	uint64_t *alive = NULL;
	size_t n = 0, n_alive = 0, n_priv = 0, n_gone = 0, len = 0;
	int64_t oldest = 0;
	uint64_t last_job = 0;
	fwd_error_t serr = {""};
	int rv = -1;

	buf[0] = '\0';
	if (l && !others_hold_private(l, self)) {
		snprintf(buf, size, "%s", POOL_NO_PRIVATE);
		return 0;
	}
	if (ledger_store_held(db, &rows, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].is_private || rows[i].job_id == self)
			continue;
		n_priv++;
		if (!oldest || rows[i].acquired_at < oldest)
			oldest = rows[i].acquired_at;
	}
	if (!n_priv) {
		snprintf(buf, size, "%s", POOL_NO_PRIVATE);
		rv = 0;
		goto out;
	}
	if (alive_bounded(timeout, &alive, &n_alive, &serr) < 0) {
		/* slurmctld is not answering in time: say how long the
		 * oldest has been held, the operator can judge. */
		snprintf(buf, size,
			 "pool: %zu private forwarder%s held by other jobs, "
			 "the oldest for %.0fs; slurmctld could not be asked "
			 "which of them still run (%s)",
			 n_priv, n_priv == 1 ? "" : "s",
			 now > (double)oldest ? now - (double)oldest : 0.0,
			 serr.text);
		rv = 0;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (rows[i].is_private && rows[i].job_id != self &&
		    !bsearch(&rows[i].job_id, alive, n_alive, sizeof(*alive),
			     cmp_u64))
			n_gone++;
	len = (size_t)snprintf(buf, size,
			       "pool: %zu of %zu private forwarder%s held by "
			       "other jobs %s held by jobs Slurm no longer "
			       "runs",
			       n_gone, n_priv, n_priv == 1 ? "" : "s",
			       n_gone == 1 ? "is" : "are");
	/* Which jobs (rows are by job): fwdctl reconcile frees them. */
	for (size_t i = 0; i < n && len + 32 < size; i++) {
		if (!rows[i].is_private || rows[i].job_id == self ||
		    rows[i].job_id == last_job ||
		    bsearch(&rows[i].job_id, alive, n_alive, sizeof(*alive),
			    cmp_u64))
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%llu",
					last_job ? ", " : " (jobs ",
					(unsigned long long)rows[i].job_id);
		last_job = rows[i].job_id;
	}
	if (last_job && len + 32 < size)
		snprintf(buf + len, size - len,
			 "; fwdctl reconcile frees "
			 "them)");
	rv = 0;
out:
	ledger_store_rows_free(rows, n);
	free(alive);
	return rv;
}
