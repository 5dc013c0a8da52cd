/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared machinery of the remap drivers: bounded child processes and
 * crash-safe per-job state files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/run.h"
#include "common/safedir.h"
#include "spank/remap_priv.h"

/* ---- environment -------------------------------------------------------- */

int remap_env_add(struct remap_env *e, const char *key, const char *value)
{
	char **v, *s;
	size_t len = strlen(key) + strlen(value) + 2;

	s = malloc(len);
	if (!s)
		return -1;
	snprintf(s, len, "%s=%s", key, value);
	v = realloc(e->v, (e->n + 2) * sizeof(char *));
	if (!v) {
		free(s);
		return -1;
	}
	v[e->n++] = s;
	v[e->n] = NULL;
	e->v = v;
	return 0;
}

void remap_env_free(struct remap_env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

/* ---- child processes ---------------------------------------------------- */

int remap_run(const struct remap *r, char *const argv[], char *const envp[],
	      fwd_error_t *err)
{
	fwd_error_t why;

	if (!argv || !argv[0] || argv[0][0] != '/') {
		errno = EINVAL;
		return errprintf(err, "command \"%s\" is not an absolute path",
				 argv && argv[0] ? argv[0] : "");
	}
	if (fwd_run_cmd(argv, envp, r->cfg.timeout, r->deadline,
			FWD_RUN_CAPTURE_STDERR, &why) < 0)
		return errprintf(err, "%s %s", argv[0], why.text);
	return 0;
}

/* ---- state files ------------------------------------------------------- */

int remap_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rv;

	if (fd < 0)
		return -1;
	rv = fsync(fd);
	close(fd);
	return rv;
}

int remap_state_dir(const char *dir, fwd_error_t *err)
{
	/* Root keeps its state and its lock here: nobody else may be able
	 * to put a file or a link into it (common/safedir.h). */
	if (fwd_dir_check(dir, 0700, geteuid(), err) < 0)
		return errprefix(err, "state directory");
	return 0;
}

int remap_lock(struct remap *r, const char *dir, fwd_error_t *err)
{
	char path[PATH_MAX];
	int fd;

	if (remap_state_dir(dir, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.lock", dir, r->ops->name);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errprintf(err, "lock %s: %s", path, strerror(errno));
	/* Never block without bound: retry a non-blocking lock until the
	 * call's deadline. */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			errprintf(err, "lock %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (remap_remaining(r) <= 0) {
			close(fd);
			errno = ETIMEDOUT;
			return errprintf(err, "lock %s: timed out after %gs",
					 path, r->cfg.timeout);
		}
		usleep(10000);
	}
	return fd;
}

void remap_unlock(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd); /* releases the flock */
	errno = saved;
}

int remap_state_name(char *buf, size_t len, const char *driver, uint32_t job,
		     const char *node)
{
	int k = snprintf(buf, len, "%s.%u.%s", driver, job, node);

	if (k < 0 || (size_t)k >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int remap_state_read(const char *dir, const char *name, char **content,
		     fwd_error_t *err)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, rv = -1;

	*content = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return errprintf(err, "state %s: %s", path, strerror(errno));
	}
	for (;;) {
		ssize_t k;

		if (len + 1 >= cap) {
			char *nb;

			cap = cap ? cap * 2 : 1024;
			if (cap > 1 << 20) {
				errno = EFBIG;
				errprintf(err, "state %s: too large", path);
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				errprintf(err, "state %s: %s", path,
					  strerror(errno));
				goto out;
			}
			buf = nb;
		}
		k = read(fd, buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			errprintf(err, "state %s: %s", path, strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	*content = buf;
	buf = NULL;
	rv = 1;
out:
	free(buf);
	close(fd);
	return rv;
}

int remap_state_write(const char *dir, const char *name, const char *content,
		      fwd_error_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t len = strlen(content), off = 0;
	int fd, rv = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return errprintf(err, "state %s: %s", tmp, strerror(errno));
	while (off < len) {
		ssize_t k = write(fd, content + off, len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			errprintf(err, "state %s: write: %s", tmp,
				  strerror(errno));
			goto out;
		}
		off += (size_t)k;
	}
	if (fsync(fd) < 0) {
		errprintf(err, "state %s: fsync: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		errprintf(err, "state %s: close: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		errprintf(err, "state %s: rename: %s", path, strerror(errno));
		goto out;
	}
	if (remap_fsync_dir(dir) < 0) {
		errprintf(err, "state %s: fsync: %s", dir, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rv < 0) {
		int saved = errno;

		unlink(tmp);
		errno = saved;
	}
	return rv;
}

int remap_state_remove(const char *dir, const char *name, fwd_error_t *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) < 0 && errno != ENOENT)
		return errprintf(err, "state %s: %s", path, strerror(errno));
	if (remap_fsync_dir(dir) < 0)
		return errprintf(err, "state %s: fsync: %s", dir,
				 strerror(errno));
	return 0;
}

char *remap_kv_get(const char *content, const char *key)
{
	size_t klen = strlen(key);
	const char *p = content;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return strndup(p + klen + 1, len - klen - 1);
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}
