/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The remap driver interface: configuration copy, argument checks, the
 * per-call deadline, and the `none` driver.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/timeutil.h"
#include "spank/remap.h"
#include "spank/remap_priv.h"

double remap_remaining(const struct remap *r)
{
	double left = r->deadline - fwd_clock_mono();

	return left > 0 ? left : 0;
}

bool remap_name_ok(const char *s)
{
	size_t len;

	if (!s || !*s || *s == '.')
		return false;
	len = strlen(s);
	if (len > 64)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

const char *remap_target_address(const struct remap_target *t)
{
	return t->address && *t->address ? t->address : t->name;
}

/* ---- configuration copy ---------------------------------------------- */

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -1;
}

static void free_argv(struct policy_argv *a)
{
	if (a->argv) {
		for (size_t i = 0; i < a->argc; i++)
			free(a->argv[i]);
		free(a->argv);
	}
	a->argv = NULL;
	a->argc = 0;
}

static int dup_argv(struct policy_argv *dst, const struct policy_argv *src)
{
	dst->argv = NULL;
	dst->argc = 0;
	if (!src->argv || src->argc == 0)
		return 0;
	dst->argv = calloc(src->argc + 1, sizeof(char *));
	if (!dst->argv)
		return -1;
	for (size_t i = 0; i < src->argc; i++) {
		if (!src->argv[i]) {
			errno = EINVAL;
			free_argv(dst);
			return -1;
		}
		dst->argv[i] = strdup(src->argv[i]);
		if (!dst->argv[i]) {
			free_argv(dst);
			return -1;
		}
		dst->argc = i + 1;
	}
	return 0;
}

static void free_cfg(struct policy_remap *c)
{
	free_argv(&c->exec.command);
	free_argv(&c->exec.verify);
	free(c->verbs.device);
	free(c->lwfs.volfile_dir);
	free(c->lwfs.link_name);
	free(c->lwfs.state_dir);
	free_argv(&c->lwfs.remount_command);
	free(c->lnet.lnetctl);
	free(c->lnet.net);
	memset(c, 0, sizeof(*c));
}

static int copy_cfg(struct policy_remap *d, const struct policy_remap *s)
{
	*d = *s;
	d->exec.command.argv = d->exec.verify.argv = NULL;
	d->lwfs.remount_command.argv = NULL;
	d->verbs.device = d->lwfs.volfile_dir = d->lwfs.link_name = NULL;
	d->lwfs.state_dir = d->lnet.lnetctl = d->lnet.net = NULL;
	if (dup_argv(&d->exec.command, &s->exec.command) < 0 ||
	    dup_argv(&d->exec.verify, &s->exec.verify) < 0 ||
	    dup_str(&d->verbs.device, s->verbs.device) < 0 ||
	    dup_str(&d->lwfs.volfile_dir, s->lwfs.volfile_dir) < 0 ||
	    dup_str(&d->lwfs.link_name, s->lwfs.link_name) < 0 ||
	    dup_str(&d->lwfs.state_dir, s->lwfs.state_dir) < 0 ||
	    dup_argv(&d->lwfs.remount_command, &s->lwfs.remount_command) < 0 ||
	    dup_str(&d->lnet.lnetctl, s->lnet.lnetctl) < 0 ||
	    dup_str(&d->lnet.net, s->lnet.net) < 0) {
		int saved = errno;

		free_cfg(d);
		errno = saved;
		return -1;
	}
	return 0;
}

/* ---- the interface ------------------------------------------------------ */

static const struct remap_ops *ops_for(enum policy_driver d)
{
	switch (d) {
	case POLICY_DRIVER_NONE:
		return &remap_none_ops;
	case POLICY_DRIVER_EXEC:
		return &remap_exec_ops;
	case POLICY_DRIVER_LWFS:
		return &remap_lwfs_ops;
	case POLICY_DRIVER_LNET:
		return &remap_lnet_ops;
	case POLICY_DRIVER_VERBS:
		return &remap_verbs_ops;
	}
	return NULL;
}

struct remap *remap_create(const struct policy_remap *cfg, fwd_error_t *err)
{
	struct remap *r = NULL;
	const struct remap_ops *ops;

	if (!cfg) {
		errno = EINVAL;
		errprintf(err, "remap: no configuration");
		return NULL;
	}
	ops = ops_for(cfg->driver);
	if (!ops) {
		errno = EINVAL;
		errprintf(err, "remap: unknown driver %d", (int)cfg->driver);
		return NULL;
	}
	if (!(cfg->timeout > 0)) {
		errno = EINVAL;
		errprintf(err, "%s: remap.timeout must be positive, got %g",
			  ops->name, cfg->timeout);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		errprintf(err, "%s: out of memory", ops->name);
		return NULL;
	}
	r->ops = ops;
	if (copy_cfg(&r->cfg, cfg) < 0) {
		errprintf(err, "%s: copying the configuration: %s", ops->name,
			  strerror(errno));
		goto fail;
	}
	if (ops->prepare && ops->prepare(r, err) < 0)
		goto fail;
	return r;
fail:
	remap_destroy(r);
	return NULL;
}

void remap_destroy(struct remap *r)
{
	int saved = errno;

	if (r) {
		free_cfg(&r->cfg);
		free(r);
	}
	errno = saved;
}

const char *remap_driver_name(const struct remap *r)
{
	return r ? r->ops->name : NULL;
}

/* A driver, and a node name it may be given. */
static int check_node(const struct remap *r, const char *node, fwd_error_t *err)
{
	if (!r) {
		errno = EINVAL;
		return errprintf(err, "remap: no driver");
	}
	if (!remap_name_ok(node)) {
		errno = EINVAL;
		return errprintf(err, "%s: invalid node name \"%s\"",
				 r->ops->name, node ? node : "(null)");
	}
	return 0;
}

int remap_apply(struct remap *r, const char *node, uint32_t job_id,
		const struct remap_target *fwds, size_t n, fwd_error_t *err)
{
	if (check_node(r, node, err) < 0)
		return -1;
	if (n > 0 && !fwds) {
		errno = EINVAL;
		return errprintf(err, "%s: no forwarder list", r->ops->name);
	}
	for (size_t i = 0; i < n; i++) {
		if (!remap_name_ok(fwds[i].name)) {
			errno = EINVAL;
			return errprintf(
				err, "%s: invalid forwarder name \"%s\"",
				r->ops->name,
				fwds[i].name ? fwds[i].name : "(null)");
		}
		if (fwds[i].address && strchr(fwds[i].address, ',')) {
			errno = EINVAL;
			return errprintf(err, "%s: %s: invalid address \"%s\"",
					 r->ops->name, fwds[i].name,
					 fwds[i].address);
		}
	}
	if (n == 0 && r->ops != &remap_none_ops) {
		errno = EINVAL;
		return errprintf(err, "%s: job %u: no forwarder to apply",
				 r->ops->name, job_id);
	}
	r->deadline = fwd_clock_mono() + r->cfg.timeout;
	return r->ops->apply(r, node, job_id, fwds, n, err);
}

int remap_direct(struct remap *r, const char *node, uint32_t job_id,
		 fwd_error_t *err)
{
	if (check_node(r, node, err) < 0)
		return -1;
	if (!r->ops->direct) {
		errno = ENOTSUP;
		return errprintf(err,
				 "%s: job %u: the driver cannot give a node "
				 "direct file-system access (no forwarder)",
				 r->ops->name, job_id);
	}
	r->deadline = fwd_clock_mono() + r->cfg.timeout;
	return r->ops->direct(r, node, job_id, err);
}

int remap_revert(struct remap *r, const char *node, uint32_t job_id,
		 fwd_error_t *err)
{
	if (check_node(r, node, err) < 0)
		return -1;
	r->deadline = fwd_clock_mono() + r->cfg.timeout;
	return r->ops->revert(r, node, job_id, err);
}

/* ---- none --------------------------------------------------------------- */

static int none_apply(struct remap *r, const char *node, uint32_t job,
		      const struct remap_target *t, size_t n, fwd_error_t *err)
{
	return 0;
}

static int none_direct(struct remap *r, const char *node, uint32_t job,
		       fwd_error_t *err)
{
	return 0;
}

static int none_revert(struct remap *r, const char *node, uint32_t job,
		       fwd_error_t *err)
{
	return 0;
}

const struct remap_ops remap_none_ops = {
	.name = "none",
	.apply = none_apply,
	.direct = none_direct,
	.revert = none_revert,
};
