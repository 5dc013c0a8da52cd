/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SPANK_REMAP_PRIV_H
#define FWD_SPANK_REMAP_PRIV_H

/*
 * Internals shared by the remap drivers: the driver table, the deadline,
 * child processes with a time bound, and crash-safe per-job state files.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spank/remap.h"

struct remap;

struct remap_ops {
	const char *name;
	int (*prepare)(struct remap *r, fwd_error_t *err);
	int (*apply)(struct remap *r, const char *node, uint32_t job,
		     const struct remap_target *t, size_t n, fwd_error_t *err);
	/* Direct file-system access (no forwarder); NULL: the driver
	 * cannot give it. */
	int (*direct)(struct remap *r, const char *node, uint32_t job,
		      fwd_error_t *err);
	int (*revert)(struct remap *r, const char *node, uint32_t job,
		      fwd_error_t *err);
};

struct remap {
	const struct remap_ops *ops;
	struct policy_remap cfg; /* deep copy */
	double deadline;	 /* monotonic seconds, set per call */
};

extern const struct remap_ops remap_none_ops;
extern const struct remap_ops remap_exec_ops;
extern const struct remap_ops remap_lwfs_ops;
extern const struct remap_ops remap_lnet_ops;
extern const struct remap_ops remap_verbs_ops;

/* Seconds left before r->deadline, never negative. */
double remap_remaining(const struct remap *r);

/* True if s is a safe name ([A-Za-z0-9_.-]+, no leading '.', <= 64). */
bool remap_name_ok(const char *s);

/* The address to use for a target: its address, else its name. */
const char *remap_target_address(const struct remap_target *t);

/*
 * Run argv (argv[0] an absolute path) with exactly the environment envp,
 * stdin and stdout on /dev/null, stderr captured, in its own process group
 * (fwd_run_cmd() in common/run.h).  Waits until r->deadline at most; then
 * the process group gets SIGKILL.  Returns 0 when the command exited 0.
 * Otherwise -1 and err says "<argv[0]> exited with status N: <stderr
 * tail>", "... killed by signal S: ...", "... could not be executed (exit
 * 127): execve ... failed: errno E" or "... timed out after
 * <remap.timeout> s (killed): ..."; errno is EIO, or ETIMEDOUT on timeout.
 * The stderr tail is at most the last 512 bytes, on one line, with control
 * characters replaced by '?'.
 */
int remap_run(const struct remap *r, char *const argv[], char *const envp[],
	      fwd_error_t *err);

/* A growable NULL-terminated environment for remap_run(). */
struct remap_env {
	char **v;
	size_t n;
};
int remap_env_add(struct remap_env *e, const char *key, const char *value);
void remap_env_free(struct remap_env *e);

/*
 * Per-job state under the state directory.  remap_state_dir() creates the
 * directory (0700) if missing.  remap_lock() takes an exclusive flock on
 * "<dir>/<driver>.lock", retrying until the deadline; returns the fd.
 * remap_state_read() returns 1 and a malloc'd NUL-terminated *content if the
 * file exists, 0 if it does not, -1 on error.  remap_state_write() writes a
 * temp file, fsyncs it and renames it over the name, then fsyncs the
 * directory.  remap_state_remove() unlinks (absent is fine) and fsyncs the
 * directory.
 */
int remap_state_dir(const char *dir, fwd_error_t *err);
int remap_lock(struct remap *r, const char *dir, fwd_error_t *err);
void remap_unlock(int fd);
int remap_state_name(char *buf, size_t len, const char *driver, uint32_t job,
		     const char *node);
int remap_state_read(const char *dir, const char *name, char **content,
		     fwd_error_t *err);
int remap_state_write(const char *dir, const char *name, const char *content,
		      fwd_error_t *err);
int remap_state_remove(const char *dir, const char *name, fwd_error_t *err);
int remap_fsync_dir(const char *dir);

/* State files are "key=value" lines; the value of key, malloc'd, or NULL
 * when absent (or out of memory). */
char *remap_kv_get(const char *content, const char *key);

#endif
