/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl policy check|show: validate a policy file, print the effective
 * policy with every default filled in.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/fwdctl.h"
#include "cli/table.h"
#include "common/slurm_conf.h"
#include "policies/caps_room.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl policy check [FILE] [--json]\n"
"       fwdctl policy show [FILE] [--json]\n"
"       fwdctl policy keys [--json | -P] [-n]\n"
"\n"
"Validate the administrator's policy file, or print the effective policy.\n"
"\n"
"  check [FILE]  load and validate FILE (default: the global --policy,\n"
"                $FWDALLOC_POLICY, else " SYSCONFDIR "/fwdalloc/fwdalloc.yaml).\n"
"                Prints \"FILE: valid\" and the file's SHA-256 digest, or\n"
"                the first error on stderr as\n"
"                FILE:LINE:COLUMN: key.path: value 'X': what is allowed\n"
"                Unknown keys, duplicate keys, wrong types, out-of-range\n"
"                values, a missing, unreadable or empty file and invalid\n"
"                UTF-8 are all errors.  Against the topology (the global\n"
"                --topology, else the policy's, when it exists) it warns\n"
"                when the caps leave no backup forwarder to any job\n"
"                (decision.caps.reserve not below the number of backup\n"
"                forwarders, or max_pool_share of them less than one):\n"
"                every upgrade would be refused on this machine.  With\n"
"                release.port and no release.controllers it warns when\n"
"                this host's slurm.conf names no slurmctld host the\n"
"                nodes could send releases to.  Use\n"
"                `fwdctl topology check` to check the topology file.\n"
"  show [FILE]   print the effective policy: every key, with the value\n"
"                from FILE or its default.  YAML by default (which\n"
"                `fwdctl policy check` accepts back); with --json, sizes\n"
"                in bytes, rates in bytes/s, durations in seconds,\n"
"                fractions in [0,1], plus \"path\" and \"digest\".  Without a\n"
"                FILE and without a policy file, shows the built-in\n"
"                defaults.\n"
"  keys          list every key a policy file may hold: its dotted path,\n"
"                type and allowed range (the loader's own schema, also\n"
"                the source of fwdalloc.yaml(5)), under the header\n"
"                KEY TYPE RANGE.  The TYPE of a key taking words lists\n"
"                them separated by '|' (off|opt-in|...): with -P, KEY is\n"
"                the first field and RANGE the last.\n"
"\n"
"Options:\n"
"  --json        machine-readable output (also accepted before `policy`)\n"
"  -P, --parsable  keys: fields separated by '|', unpadded (for scripts)\n"
"  -n, --noheader  keys: no header line\n"
"  -h, --help    this help\n"
"\n"
"Examples:\n"
"  fwdctl policy check /etc/fwdalloc/fwdalloc.yaml\n"
"  fwdctl policy show --json | jq .decision.scale\n"
"  fwdctl --policy test.yaml policy show\n"
"  fwdctl policy keys -n | grep ^decision.caps\n"
"\n"
"Exit status:\n"
"  0  the policy is valid (check; a warning on stderr when the node\n"
"     prolog's worst case, database.connect_timeout + 2 x database.timeout\n"
"     + remap.timeout, reaches slurm.conf's PrologTimeout or\n"
"     PrologEpilogTimeout, when the caps leave no upgrade possible, or\n"
"     when the nodes would have no controller to send releases to)\n"
"     or was printed (show, keys)\n"
"  1  the policy is invalid, missing or unreadable\n"
"  2  usage error\n");
}
/* clang-format on */

/*
 * A warning in warn[] when the node prolog's worst case under p reaches
 * the limit slurmd gives it (slurm.conf), else "".  An unreadable
 * slurm.conf (not a Slurm host) is no warning.
 */
static void prolog_budget(const struct policy *p, char *warn, size_t len)
{
	double worst = policy_node_prolog_worst(p);
	const char *key = NULL;
	fwd_error_t err;
	uint32_t secs = 0;

	warn[0] = '\0';
	if (fwd_slurm_prolog_timeout(NULL, &secs, &key, &err) <= 0 ||
	    worst < secs)
		return;
	snprintf(warn, len,
		 "the node prolog may take %gs (database.connect_timeout "
		 "%gs + 2 x database.timeout %gs + remap.timeout %gs), not "
		 "less than %s=%" PRIu32 " in %s: slurmd would kill it, drain "
		 "the node and requeue the job whatever access.fail says; "
		 "lower those timeouts (the node prolog cuts its own to fit, "
		 "leaving the remap less time) or raise %s",
		 worst, p->database.connect_timeout, p->database.timeout,
		 p->remap.timeout, key, secs, fwd_slurm_conf_path(NULL), key);
}

/*
 * A warning in warn[] when the nodes would have nowhere to send releases:
 * release.port set, no release.controllers, and this host's slurm.conf
 * names no usable slurmctld host (the nodes read theirs: the same file
 * on most sites).  No slurm.conf here (a policy checked away from its
 * cluster): no warning.
 */
static void release_hosts(const struct policy *p, char *warn, size_t len)
{
	char hosts[FWD_SLURM_CTLD_MAX][FWD_SLURM_HOST_LEN];
	fwd_error_t err;

	warn[0] = '\0';
	if (!p->release.port || p->release.controllers.count ||
	    access(fwd_slurm_conf_path(NULL), F_OK) != 0 ||
	    fwd_slurm_controllers(NULL, hosts, &err) > 0)
		return;
	snprintf(warn, len,
		 "release.port %" PRIu32 " with no release.controllers: the "
		 "nodes send releases to slurm.conf's slurmctld hosts, but "
		 "%s; list them in release.controllers or fix slurm.conf "
		 "(until then every release is left to fwdctl reconcile)",
		 p->release.port, err.text);
}

/*
 * A warning in warn[] when the caps leave no forwarder of the topology's
 * idle pool (its backup forwarders) to any job, so that every upgrade is
 * refused on this machine, else "".  The topology: the global --topology,
 * else the policy's; one that does not exist (a policy checked away from
 * its cluster) is no warning, one that does not load is.
 */
static void caps_room(struct fwdctl_ctx *ctx, const struct policy *p,
		      char *warn, size_t len)
{
	const char *path =
		ctx->topology_path ? ctx->topology_path : p->topology;
	struct topology *t;
	fwd_error_t err;

	warn[0] = '\0';
	if (!(t = topo_load(path, &err))) {
		if (errno != ENOENT || ctx->topology_path)
			snprintf(warn, len,
				 "caps not checked against the topology: %s",
				 err.text);
		return;
	}
	policy_caps_room(p, t, path, warn, len);
	topo_destroy(t);
}

static int check(struct fwdctl_ctx *ctx, const char *path)
{
	fwd_error_t err;
	struct policy *p = policy_load(path, &err);
	int rc = p ? FWD_EXIT_OK : FWD_EXIT_INVALID;
	char warn[1024] = "", caps[2048] = "", rel[1536] = "";

	if (p) {
		prolog_budget(p, warn, sizeof(warn));
		caps_room(ctx, p, caps, sizeof(caps));
		release_hosts(p, rel, sizeof(rel));
	}

	if (ctx->json) {
		json_t *o = json_pack("{s:s, s:b}", "path", path, "valid",
				      p != NULL);
		char *s;

		if (o)
			json_object_set_new(
				o, p ? "digest" : "error",
				json_string(p ? p->digest : err.text));
		if (o && (warn[0] || caps[0] || rel[0])) {
			json_t *w = json_array();

			if (warn[0])
				json_array_append_new(w, json_string(warn));
			if (caps[0])
				json_array_append_new(w, json_string(caps));
			if (rel[0])
				json_array_append_new(w, json_string(rel));
			json_object_set_new(o, "warnings", w);
		}
		s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(o);
	} else if (p) {
		printf("%s: valid (sha256 %s)\n", path, p->digest);
	}
	if (!p)
		fwdctl_err("%s", err.text);
	if (warn[0])
		fwdctl_err("%s: warning: %s", path, warn);
	if (caps[0])
		fwdctl_err("%s: warning: %s", path, caps);
	if (rel[0])
		fwdctl_err("%s: warning: %s", path, rel);
	policy_destroy(p);
	return rc;
}

static int show(struct fwdctl_ctx *ctx, const char *path)
{
	struct policy *p, *owned = NULL;
	fwd_error_t err;
	char *s;

	if (path) {
		if (!(p = owned = policy_load(path, &err))) {
			fwdctl_err("%s", err.text);
			return FWD_EXIT_INVALID;
		}
	} else if (!(p = fwdctl_policy(ctx))) {
		return FWD_EXIT_INVALID;
	}
	s = ctx->json ? policy_to_json(p) : policy_to_yaml(p);
	if (!s) {
		fwdctl_err("policy show: out of memory");
		policy_destroy(owned);
		return FWD_EXIT_INVALID;
	}
	fputs(s, stdout);
	if (ctx->json)
		fputc('\n', stdout);
	free(s);
	policy_destroy(owned);
	return FWD_EXIT_OK;
}

/* "[1,1000]", "(0,3600]", "[0,inf)": brackets include the bound. */
static void range_text(const struct policy_key *k, char *buf, size_t len)
{
	char hi[32];

	if (!k->has_range) {
		snprintf(buf, len, "-");
		return;
	}
	if (isinf(k->max))
		snprintf(hi, sizeof(hi), "inf)");
	else
		snprintf(hi, sizeof(hi), "%.15g]", k->max);
	snprintf(buf, len, "%c%.15g,%s", k->min_excl ? '(' : '[', k->min, hi);
}

static const char *const key_head[] = {"KEY", "TYPE", "RANGE"};
static const int key_width[] = {42, 26};

static int key_text(void *arg, const struct policy_key *k)
{
	char range[64];
	const char *cells[3];

	if (k->section)
		return 0;
	range_text(k, range, sizeof(range));
	cells[0] = k->path;
	cells[1] = k->type;
	cells[2] = range;
	fwdctl_table_row(arg, cells);
	return 0;
}

static int key_json(void *arg, const struct policy_key *k)
{
	json_t *o;

	if (k->section)
		return 0;
	o = json_pack("{s:s, s:s}", "key", k->path, "type", k->type);
	if (!o)
		return -1;
	if (k->has_range) {
		json_object_set_new(o, "min", json_real(k->min));
		json_object_set_new(o, "min_exclusive",
				    json_boolean(k->min_excl));
		json_object_set_new(o, "max",
				    isinf(k->max) ? json_null()
						  : json_real(k->max));
	}
	return json_array_append_new(arg, o);
}

static int keys(struct fwdctl_ctx *ctx, const char *file,
		struct fwdctl_table *t)
{
	json_t *a;

	if (file) {
		fwdctl_err("policy keys: unexpected argument '%s'", file);
		return FWD_EXIT_USAGE;
	}
	if (!ctx->json)
		return policy_schema_foreach(key_text, t) ? FWD_EXIT_USAGE
							  : FWD_EXIT_OK;
	if (!(a = json_array()) || policy_schema_foreach(key_json, a)) {
		fwdctl_err("policy keys: out of memory");
		json_decref(a);
		return FWD_EXIT_USAGE;
	}
	json_dumpf(a, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(a);
	return FWD_EXIT_OK;
}

static int policy_run(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	struct fwdctl_table table = {
		.head = key_head, .width = key_width, .ncols = 3};
	const char *action, *file;
	int rc;

	if (!fwdctl_action_file_args(ctx, "policy", argc, argv, usage, &action,
				     &file, &table, &rc))
		return rc;
	if (!strcmp(action, "check"))
		return check(ctx, file ? file : ctx->policy_path);
	if (!strcmp(action, "show"))
		return show(ctx, file);
	if (!strcmp(action, "keys"))
		return keys(ctx, file, &table);
	fwdctl_err("policy: unknown action '%s' (check, show or keys)", action);
	return FWD_EXIT_USAGE;
}

FWDCTL_COMMAND(policy_command, .name = "policy",
	       .summary = "validate the policy file, show the effective policy",
	       .order = 10, .run = policy_run)
