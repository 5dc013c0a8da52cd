/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `exec` remap driver: the site's own command, run with execve() in a
 * clean environment that carries the mapping.  Per-job state remembers what
 * was applied, so apply twice runs the command once and revert tells the
 * command which forwarders it is undoing.  With remap.exec.verify, each
 * change is read back: the verify command must confirm it (exit 0), else
 * an apply is undone and fails.
 *
 * The state is the intent, written before the command runs ("state=
 * pending"), and marked applied once the command (and the read-back)
 * succeeded.  A prolog killed while the command runs (slurmd's
 * PrologTimeout), or a command that times out, leaves the intent behind,
 * so the epilog's revert runs the revert command for it: the command's
 * revert must be harmless where its apply did not happen.  A command that
 * ran to its end and failed, or could not be executed, left nothing to
 * undo by its own contract: the intent is removed.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank/remap_priv.h"

#define SAFE_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

static int exec_prepare(struct remap *r, fwd_error_t *err)
{
	const struct policy_argv *c = &r->cfg.exec.command;

	errno = EINVAL;
	if (c->argc == 0 || !c->argv || !c->argv[0])
		return errprintf(err, "exec: remap.exec.command is not set");
	if (c->argv[0][0] != '/')
		return errprintf(err,
				 "exec: remap.exec.command: \"%s\" is "
				 "not an absolute path",
				 c->argv[0]);
	c = &r->cfg.exec.verify;
	if (c->argc > 0 && (!c->argv || !c->argv[0] || c->argv[0][0] != '/'))
		return errprintf(err,
				 "exec: remap.exec.verify: \"%s\" is "
				 "not an absolute path",
				 c->argv && c->argv[0] ? c->argv[0] : "");
	if (!r->cfg.lwfs.state_dir || r->cfg.lwfs.state_dir[0] != '/')
		return errprintf(err, "exec: remap.lwfs.state_dir must be an "
				      "absolute path");
	errno = 0;
	return 0;
}

/* "a,b,c" from the names (or addresses) of the targets; malloc'd. */
static char *join(const struct remap_target *t, size_t n, bool addresses)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(addresses ? remap_target_address(&t[i])
					: t[i].name) +
		       1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, addresses ? remap_target_address(&t[i]) : t[i].name);
	}
	return s;
}

static int run_command(struct remap *r, const char *action, const char *node,
		       uint32_t job, const char *fwds, const char *addrs,
		       fwd_error_t *err)
{
	bool verify = !strncmp(action, "verify-", 7);
	struct remap_env env = {NULL, 0};
	char jobs[16];
	int rv = -1;

	snprintf(jobs, sizeof(jobs), "%u", job);
	if (remap_env_add(&env, "PATH", SAFE_PATH) < 0 ||
	    remap_env_add(&env, "FWD_ACTION", action) < 0 ||
	    remap_env_add(&env, "FWD_JOB_ID", jobs) < 0 ||
	    remap_env_add(&env, "FWD_NODE", node) < 0 ||
	    remap_env_add(&env, "FWD_FORWARDERS", fwds) < 0 ||
	    remap_env_add(&env, "FWD_ADDRESSES", addrs) < 0) {
		errprintf(err, "exec: %s: out of memory", fwds);
		goto out;
	}
	if (remap_run(r,
		      verify ? r->cfg.exec.verify.argv
			     : r->cfg.exec.command.argv,
		      env.v, err) < 0) {
		if (verify)
			errprefix(err, "exec: %s: read back (%s) failed", fwds,
				  action);
		else
			errprefix(err, "exec: %s %s", action, fwds);
		goto out;
	}
	rv = 0;
out:
	remap_env_free(&env);
	return rv;
}

/* Drop the intent just written: back to the state there was before
 * (prev, NULL: none). */
static void forget(const char *dir, const char *name, const char *prev,
		   fwd_error_t *err)
{
	if (prev)
		remap_state_write(dir, name, prev, err);
	else
		remap_state_remove(dir, name, err);
}

/*
 * Run the command for `action` ("apply" with the forwarders, or "direct"
 * with none) unless the job's state says it is in effect already, and
 * remember it.  Frees fwds and addrs.
 */
static int exec_change(struct remap *r, const char *node, uint32_t job,
		       const char *action, char *fwds, char *addrs,
		       fwd_error_t *err)
{
	const char *dir = r->cfg.lwfs.state_dir;
	char name[128], *state = NULL;
	char *old_f = NULL, *old_a = NULL, *content = NULL;
	char verify[32];
	int lock = -1, rv = -1, have;
	size_t len;

	if (!fwds || !addrs) {
		errprintf(err, "exec: out of memory");
		goto out;
	}
	if (remap_state_name(name, sizeof(name), "exec", job, node) < 0) {
		errprintf(err, "exec: state name: %s", strerror(errno));
		goto out;
	}
	lock = remap_lock(r, dir, err);
	if (lock < 0) {
		errprefix(err, "exec: %s", fwds);
		goto out;
	}
	have = remap_state_read(dir, name, &state, err);
	if (have < 0) {
		errprefix(err, "exec: %s", fwds);
		goto out;
	}
	if (have) {
		char *st = remap_kv_get(state, "state");
		bool pending = st && !strcmp(st, "pending");

		free(st);
		old_f = remap_kv_get(state, "forwarders");
		old_a = remap_kv_get(state, "addresses");
		if (!pending && old_f && old_a && !strcmp(old_f, fwds) &&
		    !strcmp(old_a, addrs)) {
			rv = 0; /* already applied */
			goto out;
		}
	}
	len = strlen(fwds) + strlen(addrs) + 64;
	content = malloc(len);
	if (!content) {
		errprintf(err, "exec: %s: out of memory", fwds);
		goto out;
	}
	/* The intent first: whatever happens to this process while the
	 * command runs, the epilog knows what to revert. */
	snprintf(content, len, "forwarders=%s\naddresses=%s\nstate=pending\n",
		 fwds, addrs);
	if (remap_state_write(dir, name, content, err) < 0) {
		errprefix(err, "exec: %s", fwds);
		goto out;
	}
	if (run_command(r, action, node, job, fwds, addrs, err) < 0) {
		fwd_error_t ignored;

		/* Timed out (killed): it may have changed the node; the
		 * intent stays for the epilog's revert.  Otherwise the
		 * command ended and said it failed: nothing to undo. */
		if (errno != ETIMEDOUT) {
			int saved = errno;

			forget(dir, name, have ? state : NULL, &ignored);
			errno = saved;
		}
		goto out;
	}
	snprintf(verify, sizeof(verify), "verify-%s", action);
	if (r->cfg.exec.verify.argc &&
	    run_command(r, verify, node, job, fwds, addrs, err) < 0) {
		fwd_error_t ignored;
		int saved = errno;

		/* Not in effect as stated: undo what the command did (the
		 * intent stays if that fails, for the epilog to retry). */
		if (run_command(r, "revert", node, job, fwds, addrs,
				&ignored) == 0)
			forget(dir, name, have ? state : NULL, &ignored);
		errno = saved;
		goto out;
	}
	snprintf(content, len, "forwarders=%s\naddresses=%s\nstate=applied\n",
		 fwds, addrs);
	if (remap_state_write(dir, name, content, err) < 0) {
		errprefix(err, "exec: %s", fwds);
		goto out;
	}
	rv = 0;
out:
	remap_unlock(lock);
	free(content);
	free(old_f);
	free(old_a);
	free(state);
	free(fwds);
	free(addrs);
	return rv;
}

static int exec_apply(struct remap *r, const char *node, uint32_t job,
		      const struct remap_target *t, size_t n, fwd_error_t *err)
{
	return exec_change(r, node, job, "apply", join(t, n, false),
			   join(t, n, true), err);
}

/* Direct file-system access: the command runs with FWD_ACTION=direct and
 * empty FWD_FORWARDERS and FWD_ADDRESSES; revert undoes it as any apply. */
static int exec_direct(struct remap *r, const char *node, uint32_t job,
		       fwd_error_t *err)
{
	return exec_change(r, node, job, "direct", strdup(""), strdup(""), err);
}

static int exec_revert(struct remap *r, const char *node, uint32_t job,
		       fwd_error_t *err)
{
	const char *dir = r->cfg.lwfs.state_dir;
	char name[128], *state = NULL, *fwds = NULL, *addrs = NULL;
	int lock = -1, rv = -1, have;

	if (remap_state_name(name, sizeof(name), "exec", job, node) < 0)
		return errprintf(err, "exec: state name: %s", strerror(errno));
	lock = remap_lock(r, dir, err);
	if (lock < 0) {
		errprefix(err, "exec: revert job %u", job);
		goto out;
	}
	have = remap_state_read(dir, name, &state, err);
	if (have < 0) {
		errprefix(err, "exec: revert job %u", job);
		goto out;
	}
	if (!have) {
		rv = 0; /* nothing applied: nothing to undo */
		goto out;
	}
	fwds = remap_kv_get(state, "forwarders");
	addrs = remap_kv_get(state, "addresses");
	if (run_command(r, "revert", node, job, fwds ? fwds : "",
			addrs ? addrs : "", err) < 0 ||
	    (r->cfg.exec.verify.argc &&
	     run_command(r, "verify-revert", node, job, fwds ? fwds : "",
			 addrs ? addrs : "", err) < 0))
		goto out; /* state kept: a later revert retries */
	if (remap_state_remove(dir, name, err) < 0) {
		errprefix(err, "exec: revert %s", fwds ? fwds : "");
		goto out;
	}
	rv = 0;
out:
	remap_unlock(lock);
	free(state);
	free(fwds);
	free(addrs);
	return rv;
}

const struct remap_ops remap_exec_ops = {
	.name = "exec",
	.prepare = exec_prepare,
	.apply = exec_apply,
	.direct = exec_direct,
	.revert = exec_revert,
};
