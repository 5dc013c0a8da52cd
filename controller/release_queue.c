/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The controller epilog's hand-off: a directory of queued releases and
 * one drainer at a time (controller/release_queue.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "common/safedir.h"
#include "common/vocab.h"
#include "controller/hooks.h"
#include "controller/job.h"
#include "controller/release_queue.h"
#include "policies/policy.h"

/* What ctl_job_from_env() reads: all an entry carries. */

/* An entry is small: the variables above, each cut by Slurm's own
 * limits; anything larger is not one of ours. */
#define ENTRY_MAX (256 * 1024)

#define LOCK_NAME ".lock"

int relq_dir(const struct policy *p, char *buf, size_t n, fwd_error_t *err)
{
	const char *slash = p->audit.file ? strrchr(p->audit.file, '/') : NULL;
	int len;

	if (!slash) {
		errno = EINVAL;
		return errprintf(err,
				 "release queue: audit.file has no directory");
	}
	len = snprintf(buf, n, "%.*s/release-queue",
		       (int)(slash - p->audit.file), p->audit.file);
	if (len < 0 || (size_t)len >= n) {
		errno = ENAMETOOLONG;
		return errprintf(err, "release queue: path too long");
	}
	return 0;
}

/* A job id as a file name: the one strict form (common/vocab.h). */
static bool job_id_name(const char *s)
{
	uint32_t v;

	return s && fwd_job_id_parse(s, &v) == 0;
}

/* The directory, created if missing, checked (common/safedir.h): only
 * the controller's account may write into it.  fd, or -1. */
static int open_dir(const char *dir, fwd_error_t *err)
{
	int fd = fwd_dir_open_checked(dir, 0700, geteuid(), err);

	if (fd < 0)
		errprefix(err, "release queue");
	return fd;
}

int relq_put(const char *dir, double t0, fwd_error_t *err)
{
	const char *vals[CTL_JOB_N_VARS];

	for (size_t i = 0; i < CTL_JOB_N_VARS; i++)
		vals[i] = getenv(ctl_job_vars[i]);
	return relq_put_vars(dir, vals, t0, err);
}

int relq_put_vars(const char *dir, const char *const vals[], double t0,
		  fwd_error_t *err)
{
	const char *id = vals[0];
	char tmp[64], head[64], *buf = NULL;
	size_t len = 0, cap = 0;
	int dfd, fd = -1, rv = -1, n;

	if (!job_id_name(id)) {
		errno = EINVAL;
		return errprintf(err,
				 "SLURM_JOB_ID=%.32s: not a job id "
				 "(" FWD_JOB_ID_RANGE ")",
				 id ? id : "(unset)");
	}
	if ((dfd = open_dir(dir, err)) < 0)
		return -1;
	n = snprintf(head, sizeof(head), "t0=%.6f", t0);
	cap = (size_t)n + 1;
	for (size_t i = 0; i < CTL_JOB_N_VARS; i++) {
		const char *v = vals[i];

		if (v)
			cap += strlen(ctl_job_vars[i]) + strlen(v) + 2;
	}
	if (cap > ENTRY_MAX || !(buf = malloc(cap))) {
		if (cap > ENTRY_MAX)
			errno = E2BIG;
		errprintf(err, "release queue: job %s: %s", id,
			  strerror(errno));
		goto out;
	}
	memcpy(buf, head, (size_t)n + 1);
	len = (size_t)n + 1;
	for (size_t i = 0; i < CTL_JOB_N_VARS; i++) {
		const char *v = vals[i];

		if (v)
			len += (size_t)sprintf(buf + len, "%s=%s",
					       ctl_job_vars[i], v) +
			       1;
	}
	snprintf(tmp, sizeof(tmp), ".tmp.%s.%ld", id, (long)getpid());
	fd = openat(dfd, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0 || fwd_write_all(fd, buf, len) < 0 || close(fd) < 0) {
		errprintf(err, "release queue %s/%s: %s", dir, tmp,
			  strerror(errno));
		if (fd >= 0)
			unlinkat(dfd, tmp, 0);
		fd = -1;
		goto out;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, id) < 0) {
		errprintf(err, "release queue %s/%s: %s", dir, id,
			  strerror(errno));
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	rv = 0;
out:
	free(buf);
	close(dfd);
	return rv;
}

static int cmp_ids(const void *a, const void *b)
{
	unsigned long x = strtoul(*(char *const *)a, NULL, 10);
	unsigned long y = strtoul(*(char *const *)b, NULL, 10);

	return x < y ? -1 : x > y;
}

/* The queued job ids, sorted.  0 (possibly none), or -1. */
static int list_entries(int dfd, char ***names, size_t *n)
{
	int fd = dup(dfd);
	DIR *d;
	struct dirent *e;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (!job_id_name(e->d_name))
			continue;
		if (*n == cap) {
			char **v;

			cap = cap ? 2 * cap : 16;
			if (!(v = realloc(*names, cap * sizeof(*v))))
				goto fail;
			*names = v;
		}
		if (!((*names)[*n] = strdup(e->d_name)))
			goto fail;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_ids);
	return 0;
fail:
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free((*names)[i]);
	free(*names);
	*names = NULL;
	*n = 0;
	return -1;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * Read entry `name` into a NUL-terminated buffer and check its form:
 * "t0=<seconds>" then NAME=VALUE strings, each NUL-terminated, names from
 * ctl_job_vars only, SLURM_JOB_ID equal to the file name.  The buffer, or
 * NULL with err.
 */
static char *read_entry(int dfd, const char *name, size_t *len, double *t0,
			fwd_error_t *err)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *buf = NULL, *end;
	size_t off = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		errprintf(err, "entry %s: %s", name, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > ENTRY_MAX) {
		errprintf(err, "entry %s: not a queued release", name);
		goto bad;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		errprintf(err, "entry %s: %s", name, strerror(errno));
		goto bad;
	}
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + off, (size_t)st.st_size - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errprintf(err, "entry %s: %s", name,
				  r < 0 ? strerror(errno) : "short read");
			goto bad;
		}
		off += (size_t)r;
	}
	buf[off] = '\0';
	close(fd);
	fd = -1;
	if (off < 4 || buf[off - 1] != '\0' || strncmp(buf, "t0=", 3)) {
		errprintf(err, "entry %s: damaged", name);
		goto bad;
	}
	errno = 0;
	*t0 = strtod(buf + 3, &end);
	if (errno || *end || !(*t0 > 0)) {
		errprintf(err, "entry %s: damaged start time", name);
		goto bad;
	}
	*len = off;
	return buf;
bad:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* The entry's variables into vals[] (pointers into buf; unset ones
 * NULL); 0, or -1 with err. */
static int parse_entry(const char *name, const char *buf, size_t len,
		       const char *vals[CTL_JOB_N_VARS], fwd_error_t *err)
{
	size_t head = strlen(buf) + 1;

	if (ctl_job_vars_parse(buf + head, len - head, vals, err) < 0)
		return errprefix(err, "entry %s", name);
	if (!vals[0] || strcmp(vals[0], name)) {
		errno = EINVAL;
		return errprintf(err, "entry %s: names another job", name);
	}
	return 0;
}

/* Handle what the queue holds now.  0, or -1 (could not list). */
static int drain_once(int dfd,
		      void (*release)(void *, double, const char *const[]),
		      void *arg, size_t *n_done, size_t *n_bad,
		      fwd_error_t *err)
{
	char **names;
	size_t n;

	if (list_entries(dfd, &names, &n) < 0)
		return errprintf(err, "release queue: %s", strerror(errno));
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		double t0 = 0;
		fwd_error_t eerr;
		const char *vals[CTL_JOB_N_VARS];
		char *buf = read_entry(dfd, names[i], &len, &t0, &eerr);

		if (!buf || parse_entry(names[i], buf, len, vals, &eerr) < 0) {
			/* Unusable: dropped, counted, said; reconcile
			 * releases what the job held. */
			unlinkat(dfd, names[i], 0);
			free(buf);
			(*n_bad)++;
			*err = eerr;
			continue;
		}
		release(arg, t0, vals);
		free(buf);
		/* Removed once handled: a drainer that dies mid-way leaves
		 * the entry to the next one. */
		unlinkat(dfd, names[i], 0);
		(*n_done)++;
	}
	free_names(names, n);
	return 0;
}

static bool queue_empty(int dfd)
{
	char **names;
	size_t n;

	if (list_entries(dfd, &names, &n) < 0)
		return true;
	free_names(names, n);
	return n == 0;
}

int relq_drain(const char *dir,
	       void (*release)(void *arg, double t0, const char *const vals[]),
	       void *arg, size_t *n_done, size_t *n_bad, fwd_error_t *err)
{
	int dfd, lfd, rv = -1;

	*n_done = *n_bad = 0;
	if ((dfd = open_dir(dir, err)) < 0)
		return -1;
	lfd = openat(dfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (lfd < 0) {
		errprintf(err, "release queue %s/%s: %s", dir, LOCK_NAME,
			  strerror(errno));
		goto out;
	}
	for (;;) {
		if (flock(lfd, LOCK_EX | LOCK_NB) < 0) {
			if (errno == EWOULDBLOCK || errno == EINTR) {
				/* Another drainer: it rescans after it
				 * lets go, and finds what we queued. */
				rv = 0;
				break;
			}
			errprintf(err, "release queue %s/%s: lock: %s", dir,
				  LOCK_NAME, strerror(errno));
			break;
		}
		if (drain_once(dfd, release, arg, n_done, n_bad, err) < 0) {
			flock(lfd, LOCK_UN);
			break;
		}
		flock(lfd, LOCK_UN);
		/* Queued while we held the lock, by an epilog that then
		 * found it taken: ours to handle. */
		if (queue_empty(dfd)) {
			rv = 0;
			break;
		}
	}
	close(lfd);
out:
	close(dfd);
	return rv;
}

struct release_all {
	struct db *db;
	const struct policy *p;
	void (*log)(void *arg, int prio, const char *msg);
	void *arg;
	size_t failed;
};

static void release_one(void *arg, double t0, const char *const vals[])
{
	struct release_all *ra = arg;
	struct ctl_outcome out;
	struct ctl_job job;
	fwd_error_t err;
	char msg[1200];

	if (ctl_job_from_vars(&job, vals, &err) < 0) {
		snprintf(msg, sizeof(msg), "epilog: queued release: %s",
			 err.text);
		ra->log(ra->arg, LOG_WARNING, msg);
		ra->failed++;
		return;
	}
	if (ra->db)
		ctl_epilog_on(ra->db, ra->p, &job, t0, &out);
	else
		ctl_epilog(ra->p, &job, t0, &out);
	for (size_t i = 0; i < out.n_notes; i++)
		ra->log(ra->arg, LOG_WARNING, out.notes[i].text);
	if (out.lost_record) {
		size_t n = strlen(out.lost_record) + 128;
		char *m = malloc(n);

		if (m) {
			snprintf(m, n,
				 "epilog job %s: audit record not written to "
				 "the audit file: %s",
				 job.job_id, out.lost_record);
			ra->log(ra->arg, LOG_WARNING, m);
			free(m);
		}
	}
	if (out.fallback)
		ra->failed++;
	ctl_outcome_free(&out);
}

int relq_release_all(struct db *db, const struct policy *p, const char *dir,
		     void (*log)(void *arg, int prio, const char *msg),
		     void *arg, size_t *n_done, size_t *n_failed,
		     fwd_error_t *err)
{
	struct release_all ra = {db, p, log, arg, 0};
	size_t bad = 0;
	int rv = relq_drain(dir, release_one, &ra, n_done, &bad, err);

	if (rv == 0 && bad) {
		char msg[1200];

		snprintf(msg, sizeof(msg), "epilog: release queue: %s",
			 err->text);
		log(arg, LOG_WARNING, msg);
	}
	*n_failed = ra.failed + bad;
	return rv;
}
