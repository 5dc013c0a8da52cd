/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `lwfs` remap driver (TaihuLight style): the LWFS client reads its
 * forwarder from <volfile_dir>/<link_name>, a symlink to one of the
 * per-forwarder volfiles lwfs_<forwarder>.vol.  Apply repoints the link,
 * revert restores the target it had before the job.
 *
 * Crash safety: the previous target is saved (temp file, fsync, rename)
 * before the link changes; the link changes with symlink(2) on a temp name
 * and rename(2) over the link, so readers see the old or the new target,
 * never a missing link.  A crash between symlink and rename leaves only the
 * temp link behind; the next apply or revert removes it and carries on from
 * the saved state.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spank/remap_priv.h"

#define TMP_SUFFIX ".fwdalloc-tmp"
#define SAFE_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

static int lwfs_prepare(struct remap *r, fwd_error_t *err)
{
	const struct policy_remap_lwfs *c = &r->cfg.lwfs;
	const struct policy_argv *m = &c->remount_command;
	struct stat st;

	errno = EINVAL;
	if (!c->volfile_dir || c->volfile_dir[0] != '/')
		return errprintf(err, "lwfs: remap.lwfs.volfile_dir must be "
				      "an absolute path");
	if (!remap_name_ok(c->link_name))
		return errprintf(err,
				 "lwfs: remap.lwfs.link_name \"%s\" is "
				 "not a plain file name",
				 c->link_name ? c->link_name : "");
	if (!c->state_dir || c->state_dir[0] != '/')
		return errprintf(err, "lwfs: remap.lwfs.state_dir must be an "
				      "absolute path");
	if (m->argc > 0 && (!m->argv || !m->argv[0] || m->argv[0][0] != '/'))
		return errprintf(err,
				 "lwfs: remap.lwfs.remount_command: "
				 "\"%s\" is not an absolute path",
				 m->argv && m->argv[0] ? m->argv[0] : "");
	if (stat(c->volfile_dir, &st) < 0)
		return errprintf(err, "lwfs: volfile_dir %s: %s",
				 c->volfile_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return errprintf(err, "lwfs: volfile_dir %s: not a directory",
				 c->volfile_dir);
	}
	errno = 0;
	return 0;
}

struct paths {
	char link[PATH_MAX];
	char tmp[PATH_MAX];
};

static void make_paths(const struct remap *r, struct paths *p)
{
	const struct policy_remap_lwfs *c = &r->cfg.lwfs;

	snprintf(p->link, sizeof(p->link), "%s/%s", c->volfile_dir,
		 c->link_name);
	snprintf(p->tmp, sizeof(p->tmp), "%s/.%s" TMP_SUFFIX, c->volfile_dir,
		 c->link_name);
}

/* Remove a temp link left by a crash between symlink and rename. */
static int clean_stale(const struct paths *p, fwd_error_t *err)
{
	if (unlink(p->tmp) < 0 && errno != ENOENT)
		return errprintf(err, "removing stale %s: %s", p->tmp,
				 strerror(errno));
	return 0;
}

/*
 * The current target of the link into buf: 1 if it is a symlink, 0 if it
 * does not exist, -1 (err) if it is something else or unreadable.
 */
static int read_link(const struct paths *p, char *buf, size_t len,
		     fwd_error_t *err)
{
	ssize_t k = readlink(p->link, buf, len - 1);

	if (k < 0 && errno == ENOENT) {
		buf[0] = '\0';
		return 0;
	}
	if (k < 0 && errno == EINVAL)
		return errprintf(err,
				 "%s is not a symbolic link; refusing "
				 "to replace it",
				 p->link);
	if (k < 0)
		return errprintf(err, "readlink %s: %s", p->link,
				 strerror(errno));
	if ((size_t)k >= len - 1) {
		errno = ENAMETOOLONG;
		return errprintf(err, "readlink %s: target too long", p->link);
	}
	buf[k] = '\0';
	return 1;
}

/*
 * Read the link back: it must now point at target ("" = be absent).
 * Another writer (a second remap tool, a hand edit) racing with ours
 * would otherwise go unnoticed and the job run on a forwarder no record
 * names.
 */
static int verify_link(const struct paths *p, const char *target,
		       fwd_error_t *err)
{
	char now[PATH_MAX];
	int r = read_link(p, now, sizeof(now), err);

	if (r < 0)
		return errprefix(err, "reading the link back");
	if (strcmp(now, target)) {
		errno = EIO;
		return errprintf(err,
				 "read back: %s %s%s%s, not %s%s%s as just "
				 "set",
				 p->link, r ? "points at \"" : "is absent",
				 r ? now : "", r ? "\"" : "",
				 *target ? "\"" : "absent", target,
				 *target ? "\"" : "");
	}
	return 0;
}

/* Point the link at target ("" = remove the link), atomically, and read
 * it back. */
static int set_link(const struct remap *r, const struct paths *p,
		    const char *target, fwd_error_t *err)
{
	if (!*target) {
		if (unlink(p->link) < 0 && errno != ENOENT)
			return errprintf(err, "unlink %s: %s", p->link,
					 strerror(errno));
	} else {
		if (symlink(target, p->tmp) < 0)
			return errprintf(err, "symlink %s: %s", p->tmp,
					 strerror(errno));
		if (rename(p->tmp, p->link) < 0) {
			int saved = errno;

			unlink(p->tmp);
			errno = saved;
			return errprintf(err, "rename %s to %s: %s", p->tmp,
					 p->link, strerror(errno));
		}
	}
	if (remap_fsync_dir(r->cfg.lwfs.volfile_dir) < 0)
		return errprintf(err, "fsync %s: %s", r->cfg.lwfs.volfile_dir,
				 strerror(errno));
	return verify_link(p, target, err);
}

static int remount(struct remap *r, const char *action, const char *node,
		   uint32_t job, const char *fwd, const char *addr,
		   const char *volfile, fwd_error_t *err)
{
	struct remap_env env = {NULL, 0};
	char jobs[16];
	int rv = -1;

	if (r->cfg.lwfs.remount_command.argc == 0)
		return 0;
	snprintf(jobs, sizeof(jobs), "%u", job);
	if (remap_env_add(&env, "PATH", SAFE_PATH) < 0 ||
	    remap_env_add(&env, "FWD_ACTION", action) < 0 ||
	    remap_env_add(&env, "FWD_JOB_ID", jobs) < 0 ||
	    remap_env_add(&env, "FWD_NODE", node) < 0 ||
	    remap_env_add(&env, "FWD_FORWARDERS", fwd) < 0 ||
	    remap_env_add(&env, "FWD_ADDRESSES", addr) < 0 ||
	    remap_env_add(&env, "FWD_VOLFILE", volfile) < 0) {
		errprintf(err, "out of memory");
		goto out;
	}
	if (remap_run(r, r->cfg.lwfs.remount_command.argv, env.v, err) < 0) {
		errprefix(err, "remount");
		goto out;
	}
	rv = 0;
out:
	remap_env_free(&env);
	return rv;
}

static int lwfs_apply(struct remap *r, const char *node, uint32_t job,
		      const struct remap_target *t, size_t n, fwd_error_t *err)
{
	const char *sdir = r->cfg.lwfs.state_dir;
	char name[128], target[NAME_MAX + 1], vpath[PATH_MAX];
	char cur[PATH_MAX], *state = NULL, *saved_fwd = NULL;
	char *prev = NULL, *content = NULL;
	const char *addr;
	struct paths p;
	struct stat st;
	int lock = -1, rv = -1, have;
	size_t len;

	if (n != 1) {
		errno = EINVAL;
		return errprintf(err,
				 "lwfs: %s: one forwarder per node, got "
				 "%zu",
				 t[0].name, n);
	}
	addr = remap_target_address(&t[0]);
	make_paths(r, &p);
	snprintf(target, sizeof(target), "lwfs_%s.vol", t[0].name);
	snprintf(vpath, sizeof(vpath), "%s/%s", r->cfg.lwfs.volfile_dir,
		 target);
	/* Never point the client at a volfile that is not there. */
	if (stat(vpath, &st) < 0 || !S_ISREG(st.st_mode)) {
		errno = ENOENT;
		return errprintf(err,
				 "lwfs: %s (%s): volfile %s does not "
				 "exist",
				 t[0].name, addr, vpath);
	}
	if (remap_state_name(name, sizeof(name), "lwfs", job, node) < 0)
		return errprintf(err, "lwfs: state name: %s", strerror(errno));

	lock = remap_lock(r, sdir, err);
	if (lock < 0 || clean_stale(&p, err) < 0 ||
	    read_link(&p, cur, sizeof(cur), err) < 0)
		goto fail;
	have = remap_state_read(sdir, name, &state, err);
	if (have < 0)
		goto fail;
	if (have) {
		saved_fwd = remap_kv_get(state, "forwarder");
		prev = remap_kv_get(state, "previous");
		if (!prev) {
			errno = EINVAL;
			errprintf(err, "state %s/%s: no previous target", sdir,
				  name);
			goto fail;
		}
		if (saved_fwd && !strcmp(saved_fwd, t[0].name) &&
		    !strcmp(cur, target)) {
			rv = 0; /* already applied */
			goto out;
		}
	} else {
		prev = strdup(cur);
		if (!prev) {
			errprintf(err, "out of memory");
			goto fail;
		}
	}
	/* Save first: whatever happens next, revert knows where to go. */
	len = strlen(prev) + strlen(t[0].name) + strlen(addr) + 64;
	content = malloc(len);
	if (!content) {
		errprintf(err, "out of memory");
		goto fail;
	}
	snprintf(content, len, "forwarder=%s\naddress=%s\nprevious=%s\n",
		 t[0].name, addr, prev);
	if (remap_state_write(sdir, name, content, err) < 0)
		goto fail;
	if (set_link(r, &p, target, err) < 0)
		goto rollback;
	if (remount(r, "apply", node, job, t[0].name, addr, target, err) < 0)
		goto rollback;
	rv = 0;
	goto out;

rollback:
	/* Leave the node as we found it: old link, old state. */
	{
		fwd_error_t ignored;

		set_link(r, &p, cur, &ignored);
		if (have)
			remap_state_write(sdir, name, state, &ignored);
		else
			remap_state_remove(sdir, name, &ignored);
	}
fail:
	errprefix(err, "lwfs: %s (%s)", t[0].name, addr);
out:
	remap_unlock(lock);
	free(content);
	free(prev);
	free(saved_fwd);
	free(state);
	return rv;
}

static int lwfs_revert(struct remap *r, const char *node, uint32_t job,
		       fwd_error_t *err)
{
	const char *sdir = r->cfg.lwfs.state_dir;
	char name[128], target[NAME_MAX + 1], cur[PATH_MAX];
	char *state = NULL, *fwd = NULL, *prev = NULL, *addr = NULL;
	struct paths p;
	int lock = -1, rv = -1, have;

	make_paths(r, &p);
	if (remap_state_name(name, sizeof(name), "lwfs", job, node) < 0)
		return errprintf(err, "lwfs: state name: %s", strerror(errno));
	lock = remap_lock(r, sdir, err);
	if (lock < 0 || clean_stale(&p, err) < 0)
		goto fail;
	have = remap_state_read(sdir, name, &state, err);
	if (have < 0)
		goto fail;
	if (!have) {
		rv = 0; /* nothing applied */
		goto out;
	}
	fwd = remap_kv_get(state, "forwarder");
	prev = remap_kv_get(state, "previous");
	addr = remap_kv_get(state, "address");
	if (!fwd || !prev || !remap_name_ok(fwd)) {
		errno = EINVAL;
		errprintf(err, "state %s/%s: malformed", sdir, name);
		goto fail;
	}
	snprintf(target, sizeof(target), "lwfs_%s.vol", fwd);
	if (read_link(&p, cur, sizeof(cur), err) < 0)
		goto fail;
	/*
	 * Restore only what is ours: the link still points at this job's
	 * volfile, or already at the saved one (a retried revert, or a
	 * crash before the link moved).  If another job repointed it since,
	 * leave its choice alone.
	 */
	if (!strcmp(cur, target) || !strcmp(cur, prev)) {
		if (set_link(r, &p, prev, err) < 0)
			goto fail;
		if (remount(r, "revert", node, job, fwd, addr ? addr : fwd,
			    prev, err) < 0)
			goto fail; /* state kept: a later revert retries */
	}
	if (remap_state_remove(sdir, name, err) < 0)
		goto fail;
	rv = 0;
	goto out;
fail:
	errprefix(err, "lwfs: revert job %u%s%s", job, fwd ? ": " : "",
		  fwd ? fwd : "");
out:
	remap_unlock(lock);
	free(fwd);
	free(prev);
	free(addr);
	free(state);
	return rv;
}

const struct remap_ops remap_lwfs_ops = {
	.name = "lwfs",
	.prepare = lwfs_prepare,
	.apply = lwfs_apply,
	.revert = lwfs_revert,
};
