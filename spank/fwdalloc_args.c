/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --io-upgrade and the plugstack.conf arguments.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "common/vocab.h"
#include "spank/fwdalloc.h"

struct fwdalloc_conf fwdalloc_conf;

/* Holds the validated value; the option callback may run twice with the
 * same value (once per parse pass), which is harmless. */
static char option_mode[16];

int fwdalloc_mode_valid(const char *s)
{
	enum fwd_request r;

	return fwd_request_parse(s, &r) == 0;
}

static int option_cb(int val, const char *optarg, int remote)
{
	/* "(null)": a bare --io-upgrade as sbatch passes it on to the
	 * job's environment (SLURM_SPANK__SLURM_SPANK_OPTION_fwdalloc_
	 * io_upgrade, seen with Slurm 24.11), which an srun inside the job
	 * reads back: without a value, it means auto. */
	const char *v =
		optarg && *optarg && strcmp(optarg, "(null)") ? optarg : "auto";

	if (!fwdalloc_mode_valid(v)) {
		/* Only the submitting side reports it: the user sees it
		 * there, and a remote copy of a value that passed sbatch
		 * cannot be bad. */
		if (!remote)
			slurm_error("fwdalloc: --io-upgrade=%s: invalid value; "
				    "allowed values: %s",
				    v, fwd_request_choices());
		return -1;
	}
	snprintf(option_mode, sizeof(option_mode), "%s", v);
	return 0;
}

/* struct spank_option takes non-const strings (-Wwrite-strings). */
static char opt_name[] = "io-upgrade";
static char opt_arginfo[] = "mode";
static char opt_usage[] = "Application-aware I/O forwarding for this job; "
			  "mode is auto (default), scale, isolate, off or "
			  "shadow.";

static struct spank_option io_upgrade_option = {
	.name = opt_name,
	.arginfo = opt_arginfo,
	.usage = opt_usage,
	.has_arg = 2, /* optional: --io-upgrade alone means auto */
	.val = 0,
	.cb = option_cb,
};

int fwdalloc_option_register(spank_t sp)
{
	spank_err_t rc = spank_option_register(sp, &io_upgrade_option);

	if (rc != ESPANK_SUCCESS) {
		slurm_error("fwdalloc: init: registering --io-upgrade: %s",
			    spank_strerror(rc));
		return -1;
	}
	return 0;
}

const char *fwdalloc_option_mode(void)
{
	return option_mode[0] ? option_mode : NULL;
}

int fwdalloc_args_parse(int ac, char **av)
{
	int ignored = 0;

	for (int i = 0; i < ac; i++) {
		if (!strncmp(av[i], "policy=", 7) && av[i][7] &&
		    strlen(av[i] + 7) < sizeof(fwdalloc_conf.policy)) {
			snprintf(fwdalloc_conf.policy,
				 sizeof(fwdalloc_conf.policy), "%s", av[i] + 7);
			continue;
		}
		slurm_error("fwdalloc: plugstack.conf: unknown argument '%s' "
			    "ignored; allowed: policy=PATH",
			    av[i]);
		ignored++;
	}
	return ignored;
}
