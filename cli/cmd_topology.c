/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl topology check|show: validate the topology file, print the
 * forwarders, the default mapping and the OSTs.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fwdctl.h"
#include "cli/table.h"
#include "common/units.h"
#include "policies/policy.h"
#include "topology/topology.h"

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl topology check [FILE] [--json]\n"
"       fwdctl topology show [FILE] [--json | -P] [-n]\n"
"\n"
"Validate the forwarding topology, or print it.\n"
"\n"
"FILE defaults to the global --topology option, else the policy's\n"
"`topology:` key (" SYSCONFDIR "/fwdalloc/topology.yaml by default).\n"
"\n"
"  check [FILE]  load and validate FILE: forwarders (unique names, a\n"
"                bandwidth, role service or backup), OSTs, compute nodes\n"
"                as Slurm hostlists, and the default mapping (explicit\n"
"                entries and/or nodes_per_forwarder).  Unknown forwarder\n"
"                names, nodes mapped twice, nodes left unmapped, bad\n"
"                units and unknown keys are errors, reported on stderr as\n"
"                FILE:LINE:COLUMN: key.path: what is wrong\n"
"  show [FILE]   print the forwarders, the mapping and the OSTs as three\n"
"                tables (headers FORWARDER ADDRESS BANDWIDTH GROUP ROLE\n"
"                NODES; NODES COUNT FORWARDER; OST BANDWIDTH), a blank\n"
"                line before each but the first, then a summary line\n"
"                (not with -P);\n"
"                with --json exactly\n"
"                {\"forwarders\": [{\"name\", \"address\", \"bandwidth_bps\",\n"
"                  \"group\", \"role\"}], \"mapping\": [{\"nodes\",\n"
"                  \"forwarder\"}], \"osts\": [{\"name\", \"bandwidth_bps\"}]}\n"
"\n"
"Options:\n"
"  --json        machine-readable output (also accepted before `topology`)\n"
"  -P, --parsable  show: fields separated by '|', unpadded (for scripts)\n"
"  -n, --noheader  show: no header lines\n"
"  -h, --help    this help\n"
"\n"
"Examples:\n"
"  fwdctl topology check /etc/fwdalloc/topology.yaml\n"
"  fwdctl --policy /etc/fwdalloc/fwdalloc.yaml topology show\n"
"  fwdctl topology show --json | jq '.mapping | length'\n"
"\n"
"Exit status:\n"
"  0  the topology is valid (check) or was printed (show)\n"
"  1  the topology (or the policy naming it) is invalid, missing or\n"
"     unreadable\n"
"  2  usage error\n");
}
/* clang-format on */

static void summary(const struct topology *t, char *buf, size_t len)
{
	size_t service = 0;

	for (size_t i = 0; i < t->n_forwarders; i++)
		service += t->forwarders[i].role == TOPO_ROLE_SERVICE;
	snprintf(buf, len,
		 "%zu compute nodes, %zu forwarders (%zu service, %zu "
		 "backup), %zu OSTs",
		 t->n_nodes, t->n_forwarders, service,
		 t->n_forwarders - service, t->n_osts);
}

static void print_table(const struct topology *t,
			const struct fwdctl_table *opt)
{
	static const char *const fhead[] = {"FORWARDER", "ADDRESS", "BANDWIDTH",
					    "GROUP",	 "ROLE",    "NODES"};
	static const char *const mhead[] = {"NODES", "COUNT", "FORWARDER"};
	static const char *const ohead[] = {"OST", "BANDWIDTH"};
	size_t *nodes = calloc(t->n_forwarders + 1, sizeof(*nodes));
	char bw[64], num[32], line[256];
	int fw[5] = {9, 7, 10, 5, 7}, mw[2] = {5, 9}, ow[1] = {4};
	struct fwdctl_table ft = *opt, mt = *opt, ot = *opt;

	ft.head = fhead, ft.width = fw, ft.ncols = 6, ft.header_done = false;
	mt.head = mhead, mt.width = mw, mt.ncols = 3, mt.header_done = false;
	ot.head = ohead, ot.width = ow, ot.ncols = 2, ot.header_done = false;
	for (size_t i = 0; nodes && i < t->n_mapping; i++)
		nodes[t->mapping[i].forwarder] += t->mapping[i].count;
	for (size_t i = 0; i < t->n_forwarders; i++) {
		const struct topo_forwarder *f = &t->forwarders[i];

		if ((int)strlen(f->name) > fw[0])
			fw[0] = (int)strlen(f->name);
		if ((int)strlen(f->address) > fw[1])
			fw[1] = (int)strlen(f->address);
		if ((int)strlen(f->group) > fw[3])
			fw[3] = (int)strlen(f->group);
	}
	for (size_t i = 0; i < t->n_mapping; i++)
		if ((int)strlen(t->mapping[i].nodes) > mw[0])
			mw[0] = (int)strlen(t->mapping[i].nodes);
	for (size_t i = 0; i < t->n_osts; i++)
		if ((int)strlen(t->osts[i].name) > ow[0])
			ow[0] = (int)strlen(t->osts[i].name);

	fwdctl_table_header(&ft);
	for (size_t i = 0; i < t->n_forwarders; i++) {
		const struct topo_forwarder *f = &t->forwarders[i];
		const char *cells[6];

		units_format_rate(f->bandwidth_bps, bw, sizeof(bw));
		snprintf(num, sizeof(num), "%zu", nodes ? nodes[i] : 0);
		cells[0] = f->name, cells[1] = f->address, cells[2] = bw;
		cells[3] = f->group;
		cells[4] = f->role == TOPO_ROLE_BACKUP ? "backup" : "service";
		cells[5] = num;
		fwdctl_table_row(&ft, cells);
	}
	putchar('\n');
	fwdctl_table_header(&mt);
	for (size_t i = 0; i < t->n_mapping; i++) {
		const char *cells[3];

		snprintf(num, sizeof(num), "%zu", t->mapping[i].count);
		cells[0] = t->mapping[i].nodes, cells[1] = num;
		cells[2] = t->forwarders[t->mapping[i].forwarder].name;
		fwdctl_table_row(&mt, cells);
	}
	if (t->n_osts) {
		putchar('\n');
		fwdctl_table_header(&ot);
		for (size_t i = 0; i < t->n_osts; i++) {
			const char *cells[2];

			units_format_rate(t->osts[i].bandwidth_bps, bw,
					  sizeof(bw));
			cells[0] = t->osts[i].name, cells[1] = bw;
			fwdctl_table_row(&ot, cells);
		}
	}
	if (!opt->parsable) {
		summary(t, line, sizeof(line));
		printf("\n%s\n", line);
	}
	free(nodes);
}

/* The file to use: FILE, else --topology, else the policy's key. */
static const char *topology_path(struct fwdctl_ctx *ctx, const char *file)
{
	struct policy *p;

	if (file)
		return file;
	if (ctx->topology_path)
		return ctx->topology_path;
	if (!(p = fwdctl_policy(ctx)))
		return NULL;
	return p->topology;
}

static int run(struct fwdctl_ctx *ctx, bool show, const char *file,
	       const struct fwdctl_table *table)
{
	const char *path = topology_path(ctx, file);
	struct topology *t;
	fwd_error_t err;
	char line[256];

	if (!path)
		return FWD_EXIT_INVALID;
	if (!(t = topo_load(path, &err))) {
		if (ctx->json && !show) {
			json_t *o = json_pack("{s:s, s:b, s:s}", "path", path,
					      "valid", 0, "error", err.text);
			char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;

			if (s)
				printf("%s\n", s);
			free(s);
			json_decref(o);
		}
		fwdctl_err("%s", err.text);
		return FWD_EXIT_INVALID;
	}
	if (show && ctx->json) {
		char *s = topo_to_json(t);

		if (!s) {
			fwdctl_err("topology show: out of memory");
			topo_destroy(t);
			return FWD_EXIT_INVALID;
		}
		printf("%s\n", s);
		free(s);
	} else if (show) {
		print_table(t, table);
	} else if (ctx->json) {
		size_t service = 0;
		json_t *o;
		char *s;

		for (size_t i = 0; i < t->n_forwarders; i++)
			service += t->forwarders[i].role == TOPO_ROLE_SERVICE;
		o = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I}", "path",
			      path, "valid", 1, "compute_nodes",
			      (json_int_t)t->n_nodes, "forwarders",
			      (json_int_t)t->n_forwarders, "service",
			      (json_int_t)service, "backup",
			      (json_int_t)(t->n_forwarders - service), "osts",
			      (json_int_t)t->n_osts);
		s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(o);
	} else {
		summary(t, line, sizeof(line));
		printf("%s: valid: %s\n", path, line);
	}
	topo_destroy(t);
	return FWD_EXIT_OK;
}

static int topology_run(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	struct fwdctl_table table = {0};
	const char *action, *file;
	int rc;

	if (!fwdctl_action_file_args(ctx, "topology", argc, argv, usage,
				     &action, &file, &table, &rc))
		return rc;
	if (!strcmp(action, "check"))
		return run(ctx, false, file, &table);
	if (!strcmp(action, "show"))
		return run(ctx, true, file, &table);
	fwdctl_err("topology: unknown action '%s' (check or show)", action);
	return FWD_EXIT_USAGE;
}

FWDCTL_COMMAND(topology_command, .name = "topology",
	       .summary = "validate the topology file, show forwarders and "
			  "mapping",
	       .order = 11, .run = topology_run)
