/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node prolog's time limit, SlurmUser, the MUNGE socket and the
 * slurmctld hosts from slurm.conf (common/slurm_conf.h).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/slurm_conf.h"

#define NO_VAL16_TEXT 65534u

const char *fwd_slurm_conf_path(const char *path)
{
	const char *env = getenv("SLURM_CONF");

	if (path && *path)
		return path;
	if (env && *env)
		return env;
	if (access("/etc/slurm/slurm.conf", R_OK) == 0)
		return "/etc/slurm/slurm.conf";
	if (access("/run/slurm/conf/slurm.conf", R_OK) == 0)
		return "/run/slurm/conf/slurm.conf";
	return "/etc/slurm/slurm.conf";
}

/* The value of key=... in one line (comment stripped), or NULL. */
static const char *find_key(char *line, const char *key)
{
	size_t k = strlen(key);

	for (char *tok = strtok(line, " \t\r\n"); tok;
	     tok = strtok(NULL, " \t\r\n"))
		if (!strncasecmp(tok, key, k) && tok[k] == '=')
			return tok + k + 1;
	return NULL;
}

/* What scan() calls for each value of one of its keys (i: the key's
 * index): 0 to go on, or -1 with errno and err to stop. */
typedef int (*key_fn)(void *arg, size_t i, const char *val, fwd_error_t *err);

/* Each value of keys[0..nkeys) in the slurm.conf at path, in the file's
 * order, to fn.  0, or -1 with errno and err (the file cannot be read, or
 * fn's error). */
static int scan(const char *path, const char *const *keys, size_t nkeys,
		key_fn fn, void *arg, fwd_error_t *err)
{
	char line[4096], copy[sizeof(line)];
	int rv = 0, e = 0;
	FILE *f;

	if (!(f = fopen(path, "re")))
		return errprintf(err, "%s: %s", path, strerror(errno));
	while (rv == 0 && fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		for (size_t i = 0; rv == 0 && i < nkeys; i++) {
			const char *v;

			memcpy(copy, line, sizeof(line));
			if ((v = find_key(copy, keys[i])) &&
			    (rv = fn(arg, i, v, err)) < 0)
				e = errno;
		}
	}
	fclose(f);
	errno = e;
	return rv;
}

/* The last value of each key (as Slurm: the last one counts), key i's in
 * buf + i * width, and which keys were set. */
struct last_vals {
	char *buf;
	size_t width;
	unsigned found; /* bit i: key i */
};

static int keep_last(void *arg, size_t i, const char *val, fwd_error_t *err)
{
	struct last_vals *lv = arg;

	(void)err;
	snprintf(lv->buf + i * lv->width, lv->width, "%s", val);
	lv->found |= 1u << i;
	return 0;
}

int fwd_slurm_prolog_timeout(const char *path, uint32_t *secs, const char **key,
			     fwd_error_t *err)
{
	static const char *const keys[] = {"PrologTimeout",
					   "PrologEpilogTimeout"};
	char val[2][32] = {"", ""};
	struct last_vals lv = {&val[0][0], sizeof(val[0]), 0};

	path = fwd_slurm_conf_path(path);
	if (scan(path, keys, 2, keep_last, &lv, err) < 0)
		return -1;
	for (size_t i = 0; i < 2; i++) {
		char *end;
		unsigned long n;

		if (!val[i][0])
			continue;
		errno = 0;
		n = strtoul(val[i], &end, 10);
		if (*end || errno || n > 65535 || val[i][0] == '-') {
			errno = EINVAL;
			return errprintf(err,
					 "%s: %s=%s: not a number of seconds",
					 path, keys[i], val[i]);
		}
		if (n == NO_VAL16_TEXT)
			return 0;
		*secs = (uint32_t)n;
		*key = keys[i];
		return 1;
	}
	return 0;
}

/* The last value of key in the slurm.conf at path (as Slurm: the last one
 * counts) into val (n bytes): 1, 0 when no line sets it, -1 with errno
 * and err when the file cannot be read. */
static int last_value(const char *path, const char *key, char *val, size_t n,
		      fwd_error_t *err)
{
	struct last_vals lv = {val, n, 0};

	if (scan(path, &key, 1, keep_last, &lv, err) < 0)
		return -1;
	return lv.found ? 1 : 0;
}

int fwd_slurm_user(const char *path, char *buf, size_t len, fwd_error_t *err)
{
	char val[256] = "root";
	size_t n;

	path = fwd_slurm_conf_path(path);
	if (last_value(path, "SlurmUser", val, sizeof(val), err) < 0)
		return -1;
	n = strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789._-");
	if (!val[0] || val[n] || val[0] == '-' || n >= len) {
		errno = EINVAL;
		return errprintf(err, "%s: SlurmUser=%s: not a user name", path,
				 val);
	}
	memcpy(buf, val, n + 1);
	return 0;
}

int fwd_slurm_munge_socket(const char *path, char *buf, size_t len,
			   fwd_error_t *err)
{
	char val[4096] = "";
	const char *sock = NULL;
	size_t n;

	path = fwd_slurm_conf_path(path);
	if (last_value(path, "AuthInfo", val, sizeof(val), err) < 0)
		return -1;
	if ((sock = strstr(val, "socket=")))
		sock += 7;
	else if (!strchr(val, '='))
		sock = val;
	if (!sock || !*sock || *sock == ',')
		return 0;
	n = strcspn(sock, ",");
	if (n >= len) {
		errno = ENAMETOOLONG;
		return errprintf(err,
				 "%s: AuthInfo: the socket's path is "
				 "longer than %zu bytes",
				 path, len - 1);
	}
	memcpy(buf, sock, n);
	buf[n] = '\0';
	return 1;
}

/* One controller's address from its value (Slurm's _parse_slurmctld_host():
 * "name" or "name(addr)", the ')' last) into out: 0, or -1 with err. */
static int ctld_addr(const char *path, const char *key, const char *val,
		     char *out, fwd_error_t *err)
{
	const char *open = strchr(val, '('), *close = strrchr(val, ')');
	const char *a = val;
	size_t n = strlen(val);
	bool bad;

	if (open && close && close > open) {
		a = open + 1;
		n = (size_t)(close - a);
	}
	/* A name first; one ')', after the '(', ending the value; nothing
	 * between the parentheses but the address. */
	bad = !*val || *val == '(' || (!open) != (!close) ||
	      (close && (close < open || close[1] ||
			 strchr(val, ')') != close || memchr(a, '(', n)));
	bad = bad || !n || n >= FWD_SLURM_HOST_LEN || strcspn(a, " \t,") < n;
	if (bad) {
		errno = EINVAL;
		return errprintf(err,
				 "%s: %s=%s: not a host name, or a host name "
				 "and its address in parentheses, of fewer "
				 "than %d bytes",
				 path, key, val, FWD_SLURM_HOST_LEN);
	}
	memcpy(out, a, n);
	out[n] = '\0';
	return 0;
}

/* fwd_slurm_controllers()'s reading: the SlurmctldHost addresses in
 * order, the last value of each old key (kept one byte past the longest
 * address, so that ctld_addr() refuses a longer one instead of taking it
 * cut). */
struct ctld_scan {
	const char *path;
	char (*hosts)[FWD_SLURM_HOST_LEN];
	int n;
	char old[4][FWD_SLURM_HOST_LEN + 1];
};

static const char *const ctld_keys[] = {"SlurmctldHost", "ControlMachine",
					"ControlAddr", "BackupController",
					"BackupAddr"};

static int ctld_key(void *arg, size_t i, const char *val, fwd_error_t *err)
{
	struct ctld_scan *c = arg;

	if (i > 0) {
		snprintf(c->old[i - 1], sizeof(c->old[i - 1]), "%s", val);
		return 0;
	}
	if (c->n < FWD_SLURM_CTLD_MAX &&
	    ctld_addr(c->path, ctld_keys[0], val, c->hosts[c->n], err) < 0)
		return -1;
	c->n++;
	return 0;
}

int fwd_slurm_controllers(const char *path, char hosts[][FWD_SLURM_HOST_LEN],
			  fwd_error_t *err)
{
	const char *const *old = ctld_keys + 1;
	struct ctld_scan c = {.hosts = hosts};
	int n = 0;

	c.path = path = fwd_slurm_conf_path(path);
	if (scan(path, ctld_keys, 5, ctld_key, &c, err) < 0)
		return -1;
	if (c.n)
		return c.n < FWD_SLURM_CTLD_MAX ? c.n : FWD_SLURM_CTLD_MAX;
	/* The old keys: a controller, and its backup, each with its own
	 * address or else its name. */
	for (size_t i = 0; i < 4; i += 2) {
		size_t k = c.old[i + 1][0] ? i + 1 : i;

		if (!c.old[i][0])
			break;
		if (ctld_addr(path, old[k], c.old[k], hosts[n], err) < 0)
			return -1;
		n++;
	}
	if (!n) {
		errno = ENOENT;
		return errprintf(err,
				 "%s: no SlurmctldHost (nor ControlMachine): "
				 "no slurmctld host to send to",
				 path);
	}
	return n;
}
