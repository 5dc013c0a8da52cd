/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The epilog's release queue (controller/release_queue.h): what is queued
 * comes back exactly once, in job id order, with the job's variables and
 * no others; an entry queued while another drainer holds the lock is
 * left to it; damaged entries, links, foreign and writable directories
 * and bad job ids are refused with their reason.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/release_queue.h"

struct seen {
	size_t n;
	char ids[16][32];
	char names[16][64];
	bool io_upgrade_set[16];
	double t0[16];
	const char *dir; /* queue more while draining */
	const char *more_id;
};

/* The drain passes each entry's values (CTL_JOB_VARS order: 0 the job
 * id, 4 the name, 7 SPANK_IO_UPGRADE) and leaves the environment alone. */
static void record(void *arg, double t0, const char *const vals[])
{
	struct seen *s = arg;
	const char *v;

	assert_true(s->n < 16);
	assert_null(getenv("SLURM_JOB_ID"));
	snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", vals[0]);
	v = vals[4];
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", v ? v : "-");
	s->io_upgrade_set[s->n] = vals[7] != NULL;
	s->t0[s->n] = t0;
	s->n++;
	if (s->more_id) {
		fwd_error_t err;

		setenv("SLURM_JOB_ID", s->more_id, 1);
		unsetenv("SPANK_IO_UPGRADE");
		assert_int_equal(relq_put(s->dir, 42.0, &err), 0);
		unsetenv("SLURM_JOB_ID");
		s->more_id = NULL;
	}
}

static char *make_dir(void)
{
	char *d = strdup("/tmp/fwd-relq.XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_dir(char *d)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

static void queue(const char *dir, const char *id, const char *name,
		  const char *req, double t0)
{
	fwd_error_t err;

	setenv("SLURM_JOB_ID", id, 1);
	setenv("SLURM_JOB_NAME", name, 1);
	if (req)
		setenv("SPANK_IO_UPGRADE", req, 1);
	else
		unsetenv("SPANK_IO_UPGRADE");
	assert_int_equal(relq_put(dir, t0, &err), 0);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_JOB_NAME");
}

static void test_order_and_variables(void **state)
{
	char *top = make_dir(), q[256];
	struct seen s = {0};
	size_t done, bad;
	fwd_error_t err;

	(void)state;
	snprintf(q, sizeof(q), "%s/release-queue", top);
	queue(q, "30", "third", NULL, 3.5);
	queue(q, "4", "first; rm -rf /", "scale", 1.25);
	queue(q, "1000", "x\ny=z", NULL, 7.0);
	/* Left over from the jobs above: must not leak into the next. */
	setenv("SPANK_IO_UPGRADE", "isolate", 1);
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), 0);
	assert_int_equal(done, 3);
	assert_int_equal(bad, 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.ids[0], "4");
	assert_string_equal(s.names[0], "first; rm -rf /");
	assert_true(s.io_upgrade_set[0]);
	assert_true(s.t0[0] == 1.25);
	assert_string_equal(s.ids[1], "30");
	assert_false(s.io_upgrade_set[1]);
	assert_string_equal(s.ids[2], "1000");
	assert_string_equal(s.names[2], "x\ny=z");
	/* Drained: a second drain finds nothing. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), 0);
	assert_int_equal(done, 0);
	assert_int_equal(s.n, 0);
	rm_dir(top);
}

/* An epilog that queues while a drainer is at work: the drainer takes
 * its job too, before it returns. */
static void test_queued_during_drain(void **state)
{
	char *top = make_dir(), q[256];
	struct seen s = {0};
	size_t done, bad;
	fwd_error_t err;

	(void)state;
	snprintf(q, sizeof(q), "%s/release-queue", top);
	queue(q, "7", "a", NULL, 1.0);
	s.dir = q;
	s.more_id = "8";
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), 0);
	assert_int_equal(done, 2);
	assert_string_equal(s.ids[0], "7");
	assert_string_equal(s.ids[1], "8");
	assert_true(s.t0[1] == 42.0);
	rm_dir(top);
}

/* Another drainer holds the lock: this one leaves the queue to it. */
static void test_other_drainer(void **state)
{
	char *top = make_dir(), q[256], lock[300];
	struct seen s = {0};
	size_t done, bad;
	fwd_error_t err;
	int fd;

	(void)state;
	snprintf(q, sizeof(q), "%s/release-queue", top);
	queue(q, "9", "a", NULL, 1.0);
	snprintf(lock, sizeof(lock), "%s/.lock", q);
	fd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), 0);
	assert_int_equal(done, 0);
	assert_int_equal(s.n, 0);
	close(fd);
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), 0);
	assert_int_equal(done, 1);
	rm_dir(top);
}

static void write_file(const char *path, const char *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

/* Damaged entries are dropped and counted; the good one still runs. */
static void test_damaged_entries(void **state)
{
	char *top = make_dir(), q[256], path[300], target[300];
	struct seen s = {0};
	size_t done, bad;
	fwd_error_t err;
	static const char no_t0[] = "SLURM_JOB_ID=11";
	static const char other_job[] = "t0=1.0\0SLURM_JOB_ID=99";
	static const char foreign_var[] =
		"t0=1.0\0SLURM_JOB_ID=13\0LD_PRELOAD=x";

	(void)state;
	snprintf(q, sizeof(q), "%s/release-queue", top);
	queue(q, "10", "good", NULL, 1.0);
	snprintf(path, sizeof(path), "%s/11", q);
	write_file(path, no_t0, sizeof(no_t0));
	snprintf(path, sizeof(path), "%s/12", q);
	write_file(path, other_job, sizeof(other_job));
	snprintf(path, sizeof(path), "%s/13", q);
	write_file(path, foreign_var, sizeof(foreign_var));
	/* A link is not followed, whatever it points at. */
	snprintf(target, sizeof(target), "%s/target", top);
	write_file(target, "t0=1.0\0SLURM_JOB_ID=14", 23);
	snprintf(path, sizeof(path), "%s/14", q);
	assert_int_equal(symlink(target, path), 0);
	/* Names that are not job ids are not entries. */
	snprintf(path, sizeof(path), "%s/0", q);
	write_file(path, "x", 1);
	unsetenv("LD_PRELOAD");
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), 0);
	assert_int_equal(done, 1);
	assert_int_equal(bad, 4);
	assert_string_equal(s.ids[0], "10");
	assert_null(getenv("LD_PRELOAD"));
	/* The link went, its target stays. */
	assert_int_equal(access(target, F_OK), 0);
	snprintf(path, sizeof(path), "%s/14", q);
	assert_int_equal(access(path, F_OK), -1);
	rm_dir(top);
}

static void test_bad_job_ids(void **state)
{
	static const char *const bad_ids[] = {
		"",    "0",    "-1", "4294967296",
		" 5",  "5 ",   "05", "18446744073709551615",
		"1e3", "../x",
	};
	char *top = make_dir(), q[256];
	fwd_error_t err;

	(void)state;
	snprintf(q, sizeof(q), "%s/release-queue", top);
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		setenv("SLURM_JOB_ID", bad_ids[i], 1);
		errno = 0;
		assert_int_equal(relq_put(q, 1.0, &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.text, "not a job id"));
	}
	unsetenv("SLURM_JOB_ID");
	assert_int_equal(relq_put(q, 1.0, &err), -1);
	setenv("SLURM_JOB_ID", "4294967295", 1);
	assert_int_equal(relq_put(q, 1.0, &err), 0);
	rm_dir(top);
}

static void test_unsafe_directory(void **state)
{
	char *top = make_dir(), q[256], link[300];
	struct seen s = {0};
	size_t done, bad;
	fwd_error_t err;

	(void)state;
	snprintf(q, sizeof(q), "%s/release-queue", top);
	assert_int_equal(mkdir(q, 0700), 0);
	assert_int_equal(chmod(q, 0770), 0);
	setenv("SLURM_JOB_ID", "5", 1);
	errno = 0;
	assert_int_equal(relq_put(q, 1.0, &err), -1);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(err.text, "lets others write"));
	assert_int_equal(relq_drain(q, record, &s, &done, &bad, &err), -1);
	assert_int_equal(chmod(q, 0700), 0);
	/* Owned by another account (as root: chown to nobody). */
	if (geteuid() == 0) {
		assert_int_equal(chown(q, 65534, 65534), 0);
		assert_int_equal(relq_put(q, 1.0, &err), -1);
		assert_non_null(strstr(err.text, "owned by uid 65534"));
		assert_int_equal(chown(q, 0, 0), 0);
	}
	/* The queue itself a link: refused. */
	snprintf(link, sizeof(link), "%s/link-queue", top);
	assert_int_equal(symlink(q, link), 0);
	assert_int_equal(relq_put(link, 1.0, &err), -1);
	rm_dir(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_variables),
		cmocka_unit_test(test_queued_during_drain),
		cmocka_unit_test(test_other_drainer),
		cmocka_unit_test(test_damaged_entries),
		cmocka_unit_test(test_bad_job_ids),
		cmocka_unit_test(test_unsafe_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
