/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_MONITOR_HEALTH_PRIV_H
#define FWD_MONITOR_HEALTH_PRIV_H

/*
 * Helpers shared by the health store, scan, report and job check
 * (monitor/health_*.c); not part of monitor/health.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "monitor/health.h"
#include "policies/policy.h"

/*
 * The health lock: a scan and an admin override each run in a transaction
 * that starts by locking the one row of `health_lock` (health_store.c owns
 * it), so two of them never interleave their read-modify-write of an
 * episode.  A row lock, not a named lock: any account (the node account
 * too) can hold a named lock, and would stall every scan and every
 * `fwdctl health exclude` with it.  Begins the transaction; 0, or -1.
 */
int health_lock(struct db *db, const struct policy *p, fwd_error_t *err);

struct db;
struct topology;
struct comp;

/* ---- the store (monitor/health_store.c) ---- */

/* The kind column of health and health_history: "fwd" or "ost". */
const char *health_db_kind(enum health_kind k);
/* 0 for "fwd" and "ost", -1 for any other kind (mdt is not tracked). */
int health_db_parse_kind(const char *s, enum health_kind *k);
/* Order of health_db_load(): kind, then name. */
int health_cmp_entry(const void *a, const void *b);
/* Upsert e's health row. */
int health_write_entry(struct db *db, const struct health_entry *e, double now,
		       fwd_error_t *err);
/* Upsert the health rows of e[0..n), a few hundred per statement. */
int health_write_entries(struct db *db, const struct health_entry *e, size_t n,
			 double now, fwd_error_t *err);
/* Close the component's open history row and open one for the new state. */
int health_write_change(struct db *db, const struct health_entry *e,
			const struct health_change *c, fwd_error_t *err);
/* Run the feedback commands of a change; counts failures in *failed. */
void health_run_change_commands(const struct policy *p,
				const struct health_entry *final,
				const struct health_change *chg, double timeout,
				fwd_error_t *cmd_err, size_t *failed);

/* ---- the scan (monitor/health_scan.c) ---- */

struct scan {
	struct db *db;
	const struct policy *p;
	const struct topology *t;
	struct comp *c;
	size_t n, cap;
	bool sorted;
	double window;
	const struct health_job *jobs; /* the scan's finished jobs */
	size_t n_jobs;
	fwd_error_t *err;
	/* Statements prepared once per scan (health_scan_close()). */
	struct db_stmt *series_st; /* one component's rollups */
	struct db_stmt *names_st;  /* health_job_names() */
	const char *names_sql;	   /* names_st's SQL */
};

/* Close the statements a scan prepared. */
void health_scan_close(struct scan *s);

/* Names from a one-column SELECT bound to a job id. */
int health_job_names(struct scan *s, const char *sql, uint64_t job,
		     char ***names, size_t *n);
void health_free_names(char **v, size_t n);
/* The default forwarders of a node list, from the topology. */
int health_default_forwarders(struct scan *s, const char *nodelist,
			      char ***names, size_t *n);
/* Forwarders a job used: what it held, else its default mapping. */
int health_job_forwarders(struct scan *s, const struct health_job *j,
			  char ***names, size_t *n);

#endif
