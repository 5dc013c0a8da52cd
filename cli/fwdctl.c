/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl: entry point, global options and subcommand dispatch.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/fwdctl.h"
#include "cli/table.h"
#include "common/vocab.h"
#include "db/db.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define MAX_COMMANDS 64

static const struct fwdctl_command *commands[MAX_COMMANDS];
static size_t n_commands;
/* The command running, for the prefix of every message ("fwdctl CMD:"). */
static const char *current_cmd;
/* The last error message (prefix included), for the JSON error document. */
static char last_error[8300];
/* Bytes written to stdout while a --json command runs (json_guard_on). */
static size_t stdout_bytes;

int fwdctl_exit_code(int errnum)
{
	return db_err_unavailable(errnum) ? FWD_EXIT_SERVICE : FWD_EXIT_INVALID;
}

void fwdctl_register(const struct fwdctl_command *cmd)
{
	if (n_commands < MAX_COMMANDS)
		commands[n_commands++] = cmd;
}

void fwdctl_err(const char *fmt, ...)
{
	char buf[8192];
	/* The whole line, written at once: stderr is unbuffered, and a
	 * character at a time costs a system call each. */
	char line[sizeof(buf) * 4 + 256];
	size_t n = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Control characters a quoted value holds (from a file, a job
	 * name, a log line) are shown escaped rather than sent to the
	 * terminal.  Newlines stay: some messages list one problem a line
	 * (fwdctl sim on a bad trace). */
	/* "fwdctl CMD: ...", like getopt_long's messages; a message that
	 * already starts with the command's name ("alloc show: ...") gets
	 * only "fwdctl ". */
	if (!current_cmd) {
		n = (size_t)snprintf(line, sizeof(line), "fwdctl: ");
	} else {
		size_t len = strlen(current_cmd);

		if (!strncmp(buf, current_cmd, len) &&
		    (buf[len] == ':' || buf[len] == ' '))
			n = (size_t)snprintf(line, sizeof(line), "fwdctl ");
		else
			n = (size_t)snprintf(line, sizeof(line),
					     "fwdctl %.200s: ", current_cmd);
	}
	for (const char *c = buf; *c; c++) {
		unsigned char u = (unsigned char)*c;

		if (u == '\t') {
			line[n++] = '\\';
			line[n++] = 't';
		} else if (u != '\n' && (u < 0x20 || u == 0x7f)) {
			n += (size_t)snprintf(line + n, sizeof(line) - n,
					      "\\x%02x", u);
		} else {
			line[n++] = (char)u;
		}
	}
	/* The JSON error document of a failed --json command repeats the
	 * last message, warnings aside. */
	if (current_cmd ? !strstr(buf, "warning:")
			: strncmp(buf, "warning:", 8) != 0)
		snprintf(last_error, sizeof(last_error), "%.*s", (int)n, line);
	line[n++] = '\n';
	fwrite(line, 1, n, stderr);
}

void fwdctl_usage_hint(const char *cmd)
{
	if (cmd)
		fwdctl_err("%s: see 'fwdctl %s --help'", cmd, cmd);
	else
		fwdctl_err("see 'fwdctl --help'");
}

bool fwdctl_action_file_args(struct fwdctl_ctx *ctx, const char *cmd, int argc,
			     char **argv, void (*usage)(FILE *),
			     const char **action, const char **file,
			     struct fwdctl_table *table, int *rc)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		FWDCTL_TABLE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	int c;

	*rc = FWD_EXIT_USAGE;
	*file = NULL;
	while ((c = getopt_long(argc, argv, "h" FWDCTL_TABLE_SHORTOPTS, opts,
				NULL)) != -1) {
		if (fwdctl_table_option(table, c))
			continue;
		switch (c) {
		case 'j':
			ctx->json = true;
			break;
		case 'h':
			usage(stdout);
			*rc = FWD_EXIT_OK;
			return false;
		default:
			fwdctl_usage_hint(cmd);
			return false;
		}
	}
	if (optind >= argc) {
		fwdctl_err("%s: missing action (check or show)", cmd);
		usage(stderr);
		return false;
	}
	*action = argv[optind++];
	if (optind < argc)
		*file = argv[optind++];
	if (optind < argc) {
		fwdctl_err("%s %s: unexpected argument '%s'", cmd, *action,
			   argv[optind]);
		return false;
	}
	return true;
}

bool fwdctl_negative_job_id(const char *what, int argc, char **argv)
{
	/* getopt stepped past "-5" (optind - 1) or stays inside "-55" */
	for (int i = optind - 1; i <= optind && i < argc; i++) {
		if (i > 0 && argv[i][0] == '-' && argv[i][1] >= '0' &&
		    argv[i][1] <= '9' && optopt >= '0' && optopt <= '9') {
			fwdctl_err("%s: '%s' is not a job id (1..4294967295)",
				   what, argv[i]);
			return true;
		}
	}
	return false;
}

int fwdctl_job_id(const char *what, const char *s, uint64_t *out)
{
	uint32_t v;

	if (fwd_job_id_parse(s, &v) < 0) {
		fwdctl_err("%s: '%s' is not a job id (" FWD_JOB_ID_RANGE ")",
			   what, s);
		return -1;
	}
	*out = v;
	return 0;
}

const char *fwdctl_prog_name(const char *cmd, const char *action)
{
	/* One command and action per process: static storage is enough. */
	static char name[128];

	snprintf(name, sizeof(name), "fwdctl %s%s%s", cmd, action ? " " : "",
		 action ? action : "");
	return name;
}

bool fwdctl_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

struct policy *fwdctl_policy(struct fwdctl_ctx *ctx)
{
	fwd_error_t err;

	if (ctx->policy)
		return ctx->policy;
	if (!ctx->policy_explicit && access(ctx->policy_path, F_OK) != 0) {
		ctx->policy = policy_defaults();
		if (!ctx->policy)
			fwdctl_err("policy defaults: %s", strerror(errno));
		return ctx->policy;
	}
	ctx->policy = policy_load(ctx->policy_path, &err);
	if (!ctx->policy)
		fwdctl_err("%s", err.text);
	return ctx->policy;
}

struct topology *fwdctl_topology(struct fwdctl_ctx *ctx)
{
	const char *path = ctx->topology_path;
	fwd_error_t err;

	if (ctx->topology)
		return ctx->topology;
	if (!path) {
		struct policy *p = fwdctl_policy(ctx);

		if (!p)
			return NULL;
		path = p->topology;
	}
	ctx->topology = topo_load(path, &err);
	if (!ctx->topology)
		fwdctl_err("%s", err.text);
	return ctx->topology;
}

static int cmp_order(const void *a, const void *b)
{
	const struct fwdctl_command *x =
		*(const struct fwdctl_command *const *)a;
	const struct fwdctl_command *y =
		*(const struct fwdctl_command *const *)b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl [GLOBAL OPTIONS] COMMAND [ARGS...]\n"
"\n"
"Application-aware I/O forwarding allocation for Slurm: decide, apply,\n"
"audit and monitor the mapping of compute nodes to I/O forwarders.\n"
"\n"
"Global options:\n"
"  --policy FILE     policy YAML (default: $FWDALLOC_POLICY, else\n"
"                    " POLICY_DEFAULT_PATH ")\n"
"  --topology FILE   topology YAML (default: the policy's `topology:` key)\n"
"  --json            machine-readable output where a command supports it:\n"
"                    always one JSON document on stdout; a command that\n"
"                    fails without a result prints {\"error\": MESSAGE,\n"
"                    \"exit\": STATUS} (MESSAGE as on stderr)\n"
"  -h, --help        this help; `fwdctl COMMAND --help` for a command\n"
"  -V, --version     print the version\n"
"\n"
"Commands:\n");
	for (size_t i = 0; i < n_commands; i++)
		fprintf(f, "  %-12s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(f,
"\n"
"Exit status:\n"
"  0  success\n"
"  1  the thing checked is invalid, or was not found\n"
"  2  usage or input error\n"
"  3  a service (database, Slurm) is unavailable\n");
}
/* clang-format on */

/*
 * --json means one JSON document on stdout, whatever happens: a command
 * that fails before printing one (unknown job, bad value, database down)
 * gets {"error": "<its last message>", "exit": N} instead of nothing; the
 * message still goes to stderr.  stdout is wrapped in a stream counting
 * what reaches the file descriptor to know whether anything was printed.
 */
static ssize_t counted_write(void *cookie, const char *buf, size_t n)
{
	size_t done = 0;

	(void)cookie;
	while (done < n) {
		ssize_t w = write(STDOUT_FILENO, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)w;
	}
	stdout_bytes += n;
	return (ssize_t)n;
}

static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--json"))
			return true;
	}
	return false;
}

static void json_guard_on(void)
{
	static const cookie_io_functions_t io = {.write = counted_write};
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return;
	/* glibc's stdout is an ordinary variable, meant to be reassigned */
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	stdout = f;
}

static int json_guard_off(int rc)
{
	json_t *o;

	fflush(stdout);
	if (rc == FWD_EXIT_OK || stdout_bytes > 0)
		return rc;
	o = json_pack("{s:s,s:i}", "error",
		      *last_error ? last_error : "fwdctl: failed", "exit", rc);
	if (o) {
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		fflush(stdout);
		json_decref(o);
	}
	return rc;
}

static int fwdctl_main(int argc, char **argv);

int main(int argc, char **argv)
{
	bool json = wants_json(argc, argv);

	if (json)
		json_guard_on();
	return json ? json_guard_off(fwdctl_main(argc, argv))
		    : fwdctl_main(argc, argv);
}

static int fwdctl_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"topology", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct fwdctl_ctx ctx = {.prog = "fwdctl"};
	const char *env = getenv("FWDALLOC_POLICY");
	int c, rc;

	qsort(commands, n_commands, sizeof(commands[0]), cmp_order);
	argv[0] = (char *)"fwdctl"; /* getopt_long's messages name it */
	ctx.policy_path = POLICY_DEFAULT_PATH;
	if (env && *env) {
		ctx.policy_path = env;
		ctx.policy_explicit = true;
	}
	/* '+': stop at the first non-option, the subcommand. */
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			ctx.policy_path = optarg;
			ctx.policy_explicit = true;
			break;
		case 't':
			ctx.topology_path = optarg;
			break;
		case 'j':
			ctx.json = true;
			break;
		case 'h':
			usage(stdout);
			return FWD_EXIT_OK;
		case 'V':
			printf("fwdctl %s\n", PACKAGE_VERSION);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint(NULL);
			return FWD_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return FWD_EXIT_USAGE;
	}
	for (size_t i = 0; i < n_commands; i++) {
		int first = optind;

		if (strcmp(commands[i]->name, argv[first]) != 0)
			continue;
		/* Subcommands parse their own options: reset getopt (glibc
		 * reinitialises on optind = 0). */
		optind = 0;
		/* getopt_long names argv[0] in its messages: "fwdctl CMD:". */
		ctx.cmd = commands[i]->name;
		current_cmd = commands[i]->name;
		argv[first] = (char *)fwdctl_prog_name(commands[i]->name, NULL);
		rc = commands[i]->run(&ctx, argc - first, argv + first);
		policy_destroy(ctx.policy);
		topo_destroy(ctx.topology);
		return rc;
	}
	fwdctl_err("unknown command '%s'; see 'fwdctl --help'", argv[optind]);
	return FWD_EXIT_USAGE;
}
