/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reconcile (controller/reconcile.c) over every Slurm job state, and what
 * a refused prolog says about the pool's holders: slurmctld's job list
 * (slurm_load_jobs) and the ledger's rows are faked through --wrap, the
 * rules are the real ones.
 *
 * The rule under test (controller/reconcile.h): an allocation stays while
 * Slurm reports its job running, suspended, configuring or completing;
 * any other state, or a job Slurm no longer knows, frees it.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <slurm/slurm.h>

#include "controller/ledger_store.h"
#include "controller/reconcile.h"
#include "db/db.h"
#include "policies/policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the fakes ------------------------------------------------------ */

struct fake_job {
	uint32_t id;
	uint32_t state;
};

static const struct fake_job *slurm_jobs;
static size_t n_slurm_jobs;
static bool slurm_down;
static const uint64_t *held_jobs;
static size_t n_held_jobs;
static const struct ledger_row *held_rows;
static size_t n_held_rows;
static size_t n_released;

struct db *__wrap_db_connect_current(const struct db_config *cfg,
				     enum db_role role, fwd_error_t *err);
struct db *__wrap_db_connect_current(const struct db_config *cfg,
				     enum db_role role, fwd_error_t *err)
{
	static char fake_db;

	(void)cfg;
	(void)role;
	(void)err;
	return (struct db *)&fake_db;
}

void __wrap_db_close(struct db *db);
void __wrap_db_close(struct db *db)
{
	(void)db;
}

int __wrap_db_commit(struct db *db, fwd_error_t *err);
int __wrap_db_commit(struct db *db, fwd_error_t *err)
{
	(void)db;
	(void)err;
	return 0;
}

int __wrap_db_rollback(struct db *db);
int __wrap_db_rollback(struct db *db)
{
	(void)db;
	return 0;
}

int __wrap_ledger_store_lock(struct db *db, double timeout, fwd_error_t *err);
int __wrap_ledger_store_lock(struct db *db, double timeout, fwd_error_t *err)
{
	(void)db;
	(void)timeout;
	(void)err;
	return 0;
}

int __wrap_ledger_store_held_jobs(struct db *db, uint64_t **jobs, size_t *n,
				  fwd_error_t *err);
int __wrap_ledger_store_held_jobs(struct db *db, uint64_t **jobs, size_t *n,
				  fwd_error_t *err)
{
	(void)db;
	(void)err;
	*jobs = calloc(n_held_jobs + 1, sizeof(**jobs));
	assert_non_null(*jobs);
	memcpy(*jobs, held_jobs, n_held_jobs * sizeof(**jobs));
	*n = n_held_jobs;
	return 0;
}

int __wrap_ledger_store_held(struct db *db, struct ledger_row **rows, size_t *n,
			     fwd_error_t *err);
int __wrap_ledger_store_held(struct db *db, struct ledger_row **rows, size_t *n,
			     fwd_error_t *err)
{
	(void)db;
	(void)err;
	*rows = calloc(n_held_rows + 1, sizeof(**rows));
	assert_non_null(*rows);
	memcpy(*rows, held_rows, n_held_rows * sizeof(**rows));
	*n = n_held_rows;
	return 0;
}

void __wrap_ledger_store_rows_free(struct ledger_row *rows, size_t n);
void __wrap_ledger_store_rows_free(struct ledger_row *rows, size_t n)
{
	(void)n;
	free(rows);
}

int __wrap_ledger_store_release(struct db *db, uint64_t job_num,
				const char *reason, double now,
				uint64_t *released, fwd_error_t *err);
int __wrap_ledger_store_release(struct db *db, uint64_t job_num,
				const char *reason, double now,
				uint64_t *released, fwd_error_t *err)
{
	(void)db;
	(void)job_num;
	(void)now;
	(void)err;
	assert_string_equal(reason, "reconcile");
	*released = 1;
	n_released++;
	return 0;
}

int __wrap_ledger_store_job_end(struct db *db, uint64_t job_num,
				const char *state, double now,
				fwd_error_t *err);
int __wrap_ledger_store_job_end(struct db *db, uint64_t job_num,
				const char *state, double now, fwd_error_t *err)
{
	(void)db;
	(void)job_num;
	(void)now;
	(void)err;
	assert_string_equal(state, "GONE");
	return 0;
}

void __wrap_slurm_init(const char *conf);
void __wrap_slurm_init(const char *conf)
{
	(void)conf;
}

int __wrap_slurm_load_jobs(time_t update_time, job_info_msg_t **resp,
			   uint16_t show_flags);
int __wrap_slurm_load_jobs(time_t update_time, job_info_msg_t **resp,
			   uint16_t show_flags)
{
	job_info_msg_t *m;

	(void)update_time;
	(void)show_flags;
	if (slurm_down)
		return SLURM_ERROR;
	m = calloc(1, sizeof(*m));
	assert_non_null(m);
	m->job_array = calloc(n_slurm_jobs + 1, sizeof(*m->job_array));
	assert_non_null(m->job_array);
	m->record_count = (uint32_t)n_slurm_jobs;
	for (size_t i = 0; i < n_slurm_jobs; i++) {
		m->job_array[i].job_id = slurm_jobs[i].id;
		m->job_array[i].job_state = slurm_jobs[i].state;
	}
	*resp = m;
	return SLURM_SUCCESS;
}

void __wrap_slurm_free_job_info_msg(job_info_msg_t *m);
void __wrap_slurm_free_job_info_msg(job_info_msg_t *m)
{
	if (m)
		free(m->job_array);
	free(m);
}

/* ---- reconcile over every state --------------------------------------- */

static const struct {
	const char *what;
	uint32_t state;
	bool kept;
} states[] = {
	{"pending", JOB_PENDING, false},
	{"running", JOB_RUNNING, true},
	{"suspended", JOB_SUSPENDED, true},
	{"complete", JOB_COMPLETE, false},
	{"cancelled", JOB_CANCELLED, false},
	{"failed", JOB_FAILED, false},
	{"timeout", JOB_TIMEOUT, false},
	{"node fail", JOB_NODE_FAIL, false},
	{"preempted", JOB_PREEMPTED, false},
	{"boot fail", JOB_BOOT_FAIL, false},
	{"deadline", JOB_DEADLINE, false},
	{"out of memory", JOB_OOM, false},
	{"complete, completing", JOB_COMPLETE | JOB_COMPLETING, true},
	{"cancelled, completing", JOB_CANCELLED | JOB_COMPLETING, true},
	{"running, completing", JOB_RUNNING | JOB_COMPLETING, true},
	{"pending, configuring", JOB_PENDING | JOB_CONFIGURING, true},
	{"running, configuring", JOB_RUNNING | JOB_CONFIGURING, true},
	{"pending, requeued", JOB_PENDING | JOB_REQUEUE, false},
	{"suspended, resizing", JOB_SUSPENDED | JOB_RESIZING, true},
	{"failed, requeue held", JOB_FAILED | JOB_REQUEUE_HOLD, false},
};

static int setup(void **state)
{
	char path[] = "/tmp/fwd-test-reconcile.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	/* reconcile checks that Slurm's configuration exists before it
	 * calls libslurm (faked here) */
	setenv("SLURM_CONF", path, 1);
	*state = strdup(path);
	slurm_down = false;
	n_released = 0;
	return 0;
}

static int teardown(void **state)
{
	unlink(*state);
	free(*state);
	return 0;
}

/* Each state as the only job, then all of them at once in an order
 * Slurm's list does not sort, plus a job Slurm no longer knows. */
static void test_every_state(void **state)
{
	struct policy *p = policy_defaults();
	struct fake_job all[N(states)];
	uint64_t held[N(states) + 1];
	struct ctl_reconcile r;
	fwd_error_t err;
	size_t want_kept = 0, want_freed = 0;

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < N(states); i++) {
		struct fake_job one = {1000, states[i].state};
		uint64_t id = 1000;

		slurm_jobs = &one;
		n_slurm_jobs = 1;
		held_jobs = &id;
		n_held_jobs = 1;
		if (ctl_reconcile(p, true, &r, &err) != 0)
			fail_msg("%s: %s", states[i].what, err.text);
		if (r.n_kept != (states[i].kept ? 1u : 0u) ||
		    r.n_freed != (states[i].kept ? 0u : 1u))
			fail_msg("%s (0x%x): kept %zu freed %zu, want %s",
				 states[i].what, states[i].state, r.n_kept,
				 r.n_freed, states[i].kept ? "kept" : "freed");
		ctl_reconcile_free(&r);
	}

	/* All at once: ids 100 + 7i descending in Slurm's list, held in
	 * ascending order; 99 is held but unknown to Slurm. */
	for (size_t i = 0; i < N(states); i++) {
		all[i].id = (uint32_t)(100 + 7 * (N(states) - 1 - i));
		all[i].state = states[N(states) - 1 - i].state;
		held[i + 1] = 100 + 7 * i;
		if (states[i].kept)
			want_kept++;
		else
			want_freed++;
	}
	held[0] = 99;
	want_freed++;
	slurm_jobs = all;
	n_slurm_jobs = N(states);
	held_jobs = held;
	n_held_jobs = N(held);
	assert_int_equal(ctl_reconcile(p, true, &r, &err), 0);
	assert_int_equal(r.n_kept, want_kept);
	assert_int_equal(r.n_freed, want_freed);
	assert_int_equal(r.freed[0], 99);
	for (size_t i = 0, k = 0, f = 1; i < N(states); i++) {
		uint64_t id = 100 + 7 * i;

		if (states[i].kept)
			assert_int_equal(r.kept[k++], id);
		else
			assert_int_equal(r.freed[f++], id);
	}
	assert_int_equal(n_released, 0); /* a dry run */
	ctl_reconcile_free(&r);
	policy_destroy(p);
}

/* Not a dry run: the freed jobs are released, the kept ones are not. */
static void test_release(void **state)
{
	struct policy *p = policy_defaults();
	struct fake_job jobs[] = {
		{3, JOB_RUNNING}, {1, JOB_COMPLETE}, {2, JOB_SUSPENDED}};
	uint64_t held[] = {1, 2, 3, 4};
	char audit[] = "/tmp/fwd-test-reconcile-audit.XXXXXX";
	int fd = mkstemp(audit);
	struct ctl_reconcile r;
	fwd_error_t err;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	free(p->audit.file);
	p->audit.file = strdup(audit);
	p->audit.database = false;
	slurm_jobs = jobs;
	n_slurm_jobs = N(jobs);
	held_jobs = held;
	n_held_jobs = N(held);
	assert_int_equal(ctl_reconcile(p, false, &r, &err), 0);
	assert_int_equal(r.n_freed, 2);
	assert_int_equal(r.freed[0], 1);
	assert_int_equal(r.freed[1], 4);
	assert_int_equal(r.n_kept, 2);
	assert_int_equal(r.kept[0], 2);
	assert_int_equal(r.kept[1], 3);
	assert_int_equal(n_released, 2);
	ctl_reconcile_free(&r);

	/* slurmctld not answering: nothing freed, unavailable */
	slurm_down = true;
	n_released = 0;
	assert_int_equal(ctl_reconcile(p, false, &r, &err), -1);
	assert_true(r.unavailable);
	assert_int_equal(r.n_freed, 0);
	assert_int_equal(n_released, 0);
	ctl_reconcile_free(&r);
	unlink(audit);
	policy_destroy(p);
}

/* ---- the pool's holders, for a refused prolog ------------------------- */

static void test_pool_holders(void **state)
{
	/* job 5 (self) and jobs 6, 7, 8, 9: 6 runs, 7 completed, 8 is
	 * unknown to Slurm, 9 holds a shared forwarder only */
	struct ledger_row rows[] = {
		{.job_id = 5, .is_private = true, .acquired_at = 100},
		{.job_id = 6, .is_private = true, .acquired_at = 400},
		{.job_id = 7, .is_private = true, .acquired_at = 300},
		{.job_id = 7, .is_private = true, .acquired_at = 300},
		{.job_id = 8, .is_private = true, .acquired_at = 500},
		{.job_id = 9, .is_private = false, .acquired_at = 200},
	};
	struct fake_job jobs[] = {{9, JOB_RUNNING},
				  {7, JOB_COMPLETE},
				  {6, JOB_RUNNING},
				  {5, JOB_RUNNING}};
	char buf[512];
	fwd_error_t err;

	(void)state;
	held_rows = rows;
	n_held_rows = N(rows);
	slurm_jobs = jobs;
	n_slurm_jobs = N(jobs);
	assert_int_equal(ctl_pool_holders(NULL, NULL, 5, 10, 1000, buf,
					  sizeof(buf), &err),
			 0);
	assert_string_equal(buf, "pool: 3 of 4 private forwarders held by "
				 "other jobs are held by jobs Slurm no longer "
				 "runs (jobs 7, 8; fwdctl reconcile frees "
				 "them)");

	/* slurmctld down: the oldest private row of another job (job 7's,
	 * at 300, not self's at 100) held for 700 s */
	slurm_down = true;
	assert_int_equal(ctl_pool_holders(NULL, NULL, 5, 10, 1000, buf,
					  sizeof(buf), &err),
			 0);
	assert_non_null(strstr(buf, "pool: 4 private forwarders held by "
				    "other jobs, the oldest for 700s;"));
	/* ... and at the very second it was taken: 0 s */
	assert_int_equal(ctl_pool_holders(NULL, NULL, 5, 10, 300, buf,
					  sizeof(buf), &err),
			 0);
	assert_non_null(strstr(buf, "the oldest for 0s;"));

	/* only self holds privately */
	n_held_rows = 1;
	assert_int_equal(ctl_pool_holders(NULL, NULL, 5, 10, 1000, buf,
					  sizeof(buf), &err),
			 0);
	assert_string_equal(buf, "pool: no private forwarder is held by "
				 "another job");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_holders, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("reconcile", tests, NULL, NULL);
}
