/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CLI_FWDCTL_H
#define FWD_CLI_FWDCTL_H

/*
 * fwdctl: the one admin/ops command.  Each subcommand lives in its own
 * cli/cmd_*.c and registers itself with FWDCTL_COMMAND(); fwdctl.c parses
 * the global options and dispatches.  Subcommands print; libraries do not.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

/* Exit codes shared by every subcommand. */
enum {
	FWD_EXIT_OK = 0,      /* success */
	FWD_EXIT_INVALID = 1, /* the thing checked is invalid / not found */
	FWD_EXIT_USAGE = 2,   /* usage or input error */
	FWD_EXIT_SERVICE = 3, /* a service (database, Slurm) unavailable */
};

/* The exit code for a library failure with errno `errnum`: a service
 * unavailable (db_err_unavailable()) is FWD_EXIT_SERVICE, anything else
 * FWD_EXIT_INVALID. */
int fwdctl_exit_code(int errnum);

struct policy;
struct topology;

struct fwdctl_ctx {
	const char *prog;	   /* "fwdctl" */
	const char *cmd;	   /* the command running: "prolog" */
	const char *policy_path;   /* --policy, FWDALLOC_POLICY or default */
	bool policy_explicit;	   /* given by --policy or the environment */
	const char *topology_path; /* --topology, or NULL = from the policy */
	bool json;		   /* --json given before the subcommand */
	struct policy *policy;	   /* loaded on demand by fwdctl_policy() */
	struct topology *topology; /* loaded on demand by fwdctl_topology() */
};

struct fwdctl_command {
	const char *name;    /* "policy" */
	const char *summary; /* one line for `fwdctl --help` */
	int order;	     /* position in `fwdctl --help` */
	/* argv[0] is the subcommand name; returns an exit code. */
	int (*run)(struct fwdctl_ctx *ctx, int argc, char **argv);
};

void fwdctl_register(const struct fwdctl_command *cmd);

#define FWDCTL_COMMAND(ident, ...)                                      \
	static const struct fwdctl_command ident = {__VA_ARGS__};       \
	__attribute__((constructor)) static void ident##_register(void) \
	{                                                               \
		fwdctl_register(&ident);                                \
	}

/*
 * The policy named by the global options, loaded once.  Prints the error
 * and returns NULL on failure (the caller exits with FWD_EXIT_USAGE).
 * When no policy file was named and the default one does not exist, the
 * built-in defaults are used.
 */
struct policy *fwdctl_policy(struct fwdctl_ctx *ctx);

/* The topology from --topology or the policy's `topology:` key. */
struct topology *fwdctl_topology(struct fwdctl_ctx *ctx);

/* "fwdctl CMD: <fmt>\n" on stderr ("fwdctl: " before a command is
 * known; just "fwdctl " when fmt already starts with "CMD:" or "CMD ");
 * control characters in the text other than newlines are written escaped
 * (\t, \xNN). */
void fwdctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * "fwdctl: see 'fwdctl CMD --help'" on stderr (CMD NULL: the global help).
 * For a bad option: getopt_long has already named it on one line, and the
 * full usage would bury that line.
 */
void fwdctl_usage_hint(const char *cmd);

/*
 * A Slurm job id as given on the command line: decimal digits only, 1 ..
 * 4294967295.  0, or -1 after printing "WHAT: 'S' is not a job id
 * (1..4294967295)" (the caller exits with FWD_EXIT_USAGE).
 */
int fwdctl_job_id(const char *what, const char *s, uint64_t *out);

/*
 * After getopt_long returned '?': true, with the message of fwdctl_job_id,
 * if the option it refused was a negative number ("-5") where a command
 * takes a positional JOBID (the caller exits with FWD_EXIT_USAGE).
 */
bool fwdctl_negative_job_id(const char *what, int argc, char **argv);

/*
 * "fwdctl CMD" or "fwdctl CMD ACTION" (action NULL: the former), in static
 * storage: the argv[0] a command gives getopt_long, whose messages then
 * start like every other message of the command.
 */
const char *fwdctl_prog_name(const char *cmd, const char *action);

/* True if argv[i] is -h or --help; subcommands print their usage then. */
bool fwdctl_wants_help(int argc, char **argv);

/*
 * Arguments of `fwdctl CMD ACTION [FILE] [--json]`, for commands whose only
 * options are --json, --help and the table's -P and -n (cli/table.h; set
 * in *table, which the caller initialises).  Returns true with *action and
 * *file (NULL when absent) set; otherwise false with *rc the exit code to
 * return (help printed, or a usage error reported).
 */
struct fwdctl_table;
bool fwdctl_action_file_args(struct fwdctl_ctx *ctx, const char *cmd, int argc,
			     char **argv, void (*usage)(FILE *),
			     const char **action, const char **file,
			     struct fwdctl_table *table, int *rc);

#endif
