/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl remap: run a remap driver by hand (what the node prolog and
 * epilog do), and probe the RDMA fabric.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/fwdctl.h"
#include "common/slurm_compat.h"
#include "common/vocab.h"
#include "policies/policy.h"
#include "spank/remap.h"
#include "topology/topology.h"

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl remap apply  --job ID --forwarders LIST [--node NODE]\n"
"                           [--driver DRIVER] [--json]\n"
"       fwdctl remap revert --job ID [--node NODE] [--driver DRIVER] [--json]\n"
"       fwdctl remap probe  [--forwarders LIST] [--json]\n"
"\n"
"Point a compute node's forwarding client at forwarders and back, exactly\n"
"as the Slurm node prolog and epilog do, so an administrator can test the\n"
"configured remap driver by hand; or report the node's RDMA fabric.\n"
"\n"
"Actions:\n"
"  apply    map NODE to the forwarders in LIST for job ID.  Applying the\n"
"           same forwarders twice changes nothing the second time.\n"
"  revert   undo the job's mapping on NODE; harmless if nothing is applied.\n"
"  probe    list RDMA devices, their ports and port states, and for each\n"
"           forwarder in LIST resolve address and route with librdmacm\n"
"           (and connect to remap.verbs.port when remap.verbs.connect_probe\n"
"           is set), using the policy's remap.verbs settings.\n"
"\n"
"Options:\n"
"  -j, --job ID          Slurm job id (1..4294967295)\n"
"  -n, --node NODE       compute node name (default: this host's short name)\n"
"  -f, --forwarders LIST forwarder names, comma-separated or a Slurm hostlist\n"
"                        (\"fwd05,fwd06\", \"fwd[05-06]\").  Addresses and\n"
"                        LNet NIDs come from the topology; a name the\n"
"                        topology does not know is an error.  Without a\n"
"                        topology file, names are used as addresses.\n"
"  -d, --driver DRIVER   none, exec, lwfs, lnet or verbs (default: the\n"
"                        policy's remap.driver); its settings come from the\n"
"                        policy's remap section\n"
"      --json            print the result as one JSON object\n"
"  -h, --help            this help\n"
"\n"
"Drivers:\n"
"  none   nothing changes\n"
"  exec   runs remap.exec.command with FWD_ACTION, FWD_JOB_ID, FWD_NODE,\n"
"         FWD_FORWARDERS and FWD_ADDRESSES in a clean environment\n"
"  lwfs   repoints <volfile_dir>/<link_name> at lwfs_<forwarder>.vol\n"
"         (one forwarder per node) and runs remap.lwfs.remount_command\n"
"  lnet   lnetctl route add/del --net <net> --gateway <nid> per forwarder\n"
"  verbs  checks an active RDMA port and address/route resolution\n"
"Per-job state lives in remap.lwfs.state_dir; every action is bounded by\n"
"remap.timeout seconds.\n"
"\n"
"Examples:\n"
"  fwdctl remap apply --job 4242 --node c17 --forwarders fwd05,fwd06\n"
"  fwdctl remap revert --job 4242 --node c17\n"
"  fwdctl --topology /etc/fwdalloc/topology.yaml remap probe \\\n"
"      --forwarders 'fwd[05-08]'\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  the driver failed (the node keeps its previous mapping), a forwarder\n"
"     is not in the topology, or a probed forwarder is unreachable\n"
"  2  usage or input error (including an invalid remap configuration)\n"
"  3  no RDMA device on this node (verbs driver, probe)\n");
}
/* clang-format on */

struct targets {
	struct remap_target *t;
	char **names;
	size_t n;
};

static void targets_free(struct targets *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		free(ts->names[i]);
	free(ts->names);
	free(ts->t);
	memset(ts, 0, sizeof(*ts));
}

/*
 * Expand LIST with libslurm's hostlist and look every name up in the
 * topology, if there is one.  Returns an exit code.
 */
static int parse_targets(const char *list, const struct topology *topo,
			 struct targets *ts)
{
	fwd_hostlist_t hl = slurm_hostlist_create(list);
	int count, rc = FWD_EXIT_USAGE;
	char *h;

	if (!hl || (count = slurm_hostlist_count(hl)) <= 0) {
		fwdctl_err("remap: --forwarders: invalid list \"%s\"", list);
		goto out;
	}
	ts->t = calloc((size_t)count, sizeof(*ts->t));
	ts->names = calloc((size_t)count, sizeof(*ts->names));
	if (!ts->t || !ts->names) {
		fwdctl_err("remap: %s", strerror(errno));
		goto out;
	}
	while ((h = slurm_hostlist_shift(hl))) {
		struct remap_target *t = &ts->t[ts->n];
		long idx;

		ts->names[ts->n++] = h;
		t->name = h;
		/* libslurm is lenient with malformed brackets ("fwd[01-"
		 * yields "fwd]"): check what it expanded to. */
		if (!*h || strspn(h, "abcdefghijklmnopqrstuvwxyz"
				     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789-_.") != strlen(h)) {
			fwdctl_err("remap: --forwarders: invalid list \"%s\"",
				   list);
			goto out;
		}
		if (!topo)
			continue;
		idx = topo_forwarder_index(topo, h);
		if (idx < 0) {
			fwdctl_err("remap: forwarder %s is not in the topology "
				   "%s",
				   h, topo->path ? topo->path : "");
			rc = FWD_EXIT_INVALID;
			goto out;
		}
		t->address = topo->forwarders[idx].address;
		t->nid = topo->forwarders[idx].nid;
	}
	rc = FWD_EXIT_OK;
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	return rc;
}

/* The topology if one is configured and present; *rc on a load error. */
static struct topology *maybe_topology(struct fwdctl_ctx *ctx, struct policy *p,
				       int *rc)
{
	struct topology *t;

	*rc = FWD_EXIT_OK;
	if (!ctx->topology_path &&
	    (!p->topology || access(p->topology, F_OK) != 0))
		return NULL;
	t = fwdctl_topology(ctx);
	if (!t)
		*rc = FWD_EXIT_USAGE;
	return t;
}

static char *short_hostname(char *buf, size_t len)
{
	char *dot;

	if (gethostname(buf, len) < 0)
		return NULL;
	buf[len - 1] = '\0';
	dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
	return buf;
}

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);

	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

static const char *link_layer_name(int l)
{
	switch (l) {
	case 1:
		return "InfiniBand";
	case 2:
		return "Ethernet";
	default:
		return "unspecified";
	}
}

static int run_probe(struct policy *p, const struct targets *ts, bool json)
{
	struct remap_probe *pr = NULL;
	fwd_error_t err = {""};
	int rc, failed = 0;

	rc = remap_probe(&p->remap, ts->t, ts->n, &pr, &err);
	if (rc < 0 && !pr) {
		fwdctl_err("remap probe: %s", err.text);
		return errno == ENODEV ? FWD_EXIT_SERVICE : FWD_EXIT_INVALID;
	}
	for (size_t i = 0; i < pr->n_targets; i++)
		failed += !pr->targets[i].ok;
	if (json) {
		json_t *o = json_object(), *devs = json_array();
		json_t *fw = json_array();

		for (size_t i = 0; i < pr->n_devices; i++) {
			const struct remap_probe_device *d = &pr->devices[i];
			json_t *ports = json_array();

			for (size_t k = 0; k < d->n_ports; k++) {
				const struct remap_probe_port *pt =
					&d->ports[k];

				json_array_append_new(
					ports,
					json_pack("{s:i, s:s, s:s}", "port",
						  (int)pt->num, "state",
						  pt->state, "link_layer",
						  link_layer_name(
							  pt->link_layer)));
			}
			json_array_append_new(
				devs,
				json_pack("{s:s, s:o, s:s?}", "name", d->name,
					  "ports", ports, "error",
					  d->error ? strerror(d->error)
						   : NULL));
		}
		for (size_t i = 0; i < pr->n_targets; i++) {
			const struct remap_probe_target *t = &pr->targets[i];

			json_array_append_new(
				fw,
				json_pack("{s:s, s:s, s:b, s:s}", "name",
					  t->name, "address", t->address, "ok",
					  t->ok, "message", t->message));
		}
		json_object_set_new(o, "devices", devs);
		json_object_set_new(o, "forwarders", fw);
		json_object_set_new(o, "error",
				    rc < 0 ? json_string(err.text)
					   : json_null());
		print_json(o);
	} else {
		printf("RDMA devices:%s\n", pr->n_devices ? "" : " none");
		for (size_t i = 0; i < pr->n_devices; i++) {
			const struct remap_probe_device *d = &pr->devices[i];

			if (d->error) {
				printf("  %s: %s\n", d->name,
				       strerror(d->error));
				continue;
			}
			for (size_t k = 0; k < d->n_ports; k++)
				printf("  %s port %u: %s (%s)\n", d->name,
				       d->ports[k].num, d->ports[k].state,
				       link_layer_name(d->ports[k].link_layer));
		}
		if (pr->n_targets)
			printf("Forwarders:\n");
		for (size_t i = 0; i < pr->n_targets; i++) {
			const struct remap_probe_target *t = &pr->targets[i];

			printf("  %s (%s): %s: %s\n", t->name, t->address,
			       t->ok ? "ok" : "FAILED", t->message);
		}
	}
	if (rc < 0) {
		fwdctl_err("remap probe: %s", err.text);
		rc = FWD_EXIT_SERVICE;
	} else {
		rc = failed ? FWD_EXIT_INVALID : FWD_EXIT_OK;
	}
	remap_probe_destroy(pr);
	return rc;
}

static int run_remap(struct policy *p, enum policy_driver driver, bool apply,
		     const char *node, uint32_t job, const struct targets *ts,
		     bool json)
{
	struct policy_remap cfg = p->remap;
	const char *action = apply ? "apply" : "revert";
	fwd_error_t err = {""};
	struct remap *r;
	int rv, rc;

	cfg.driver = driver;
	r = remap_create(&cfg, &err);
	if (!r) {
		fwdctl_err("remap %s: %s", action, err.text);
		return FWD_EXIT_USAGE;
	}
	if (apply)
		rv = remap_apply(r, node, job, ts->t, ts->n, &err);
	else
		rv = remap_revert(r, node, job, &err);
	rc = rv == 0	       ? FWD_EXIT_OK
	     : errno == ENODEV ? FWD_EXIT_SERVICE
			       : FWD_EXIT_INVALID;
	if (json) {
		json_t *o =
			json_pack("{s:s, s:s, s:I, s:s, s:[], s:b}", "action",
				  action, "driver", remap_driver_name(r),
				  "job_id", (json_int_t)job, "node", node,
				  "forwarders", "ok", rv == 0);

		for (size_t i = 0; o && i < ts->n; i++)
			json_array_append_new(json_object_get(o, "forwarders"),
					      json_string(ts->t[i].name));
		if (o)
			json_object_set_new(o, "error",
					    rv ? json_string(err.text)
					       : json_null());
		if (o)
			print_json(o);
	} else if (rv == 0) {
		printf("remap %s: job %u node %s driver %s%s", action, job,
		       node, remap_driver_name(r), ts->n ? ":" : "");
		for (size_t i = 0; i < ts->n; i++)
			printf("%s%s", i ? "," : " ", ts->t[i].name);
		printf(": ok\n");
	}
	if (rv < 0)
		fwdctl_err("remap %s: %s", action, err.text);
	remap_destroy(r);
	return rc;
}

static int cmd_remap(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"job", required_argument, NULL, 'j'},
		{"node", required_argument, NULL, 'n'},
		{"forwarders", required_argument, NULL, 'f'},
		{"driver", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *action, *node = NULL, *list = NULL, *drv = NULL;
	const char *job_s = NULL;
	struct targets ts = {NULL, NULL, 0};
	struct topology *topo = NULL;
	enum policy_driver driver;
	char host[256];
	bool json = ctx->json;
	uint32_t job = 0;
	struct policy *p;
	int c, rc;

	if (fwdctl_wants_help(argc, argv)) {
		usage(stdout);
		return FWD_EXIT_OK;
	}
	if (argc < 2) {
		usage(stderr);
		return FWD_EXIT_USAGE;
	}
	action = argv[1];
	if (strcmp(action, "apply") && strcmp(action, "revert") &&
	    strcmp(action, "probe")) {
		fwdctl_err("remap: unknown action '%s'; see 'fwdctl remap "
			   "--help'",
			   action);
		return FWD_EXIT_USAGE;
	}
	argv[1] = (char *)fwdctl_prog_name("remap", action);
	while ((c = getopt_long(argc - 1, argv + 1, "j:n:f:d:h", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'j':
			job_s = optarg;
			break;
		case 'n':
			node = optarg;
			break;
		case 'f':
			list = optarg;
			break;
		case 'd':
			drv = optarg;
			break;
		case 'J':
			json = true;
			break;
		default:
			fwdctl_usage_hint("remap");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc - 1) {
		fwdctl_err("remap %s: unexpected argument '%s'", action,
			   argv[1 + optind]);
		return FWD_EXIT_USAGE;
	}
	if (strcmp(action, "probe")) {
		if (!job_s) {
			fwdctl_err("remap %s: --job is required", action);
			return FWD_EXIT_USAGE;
		}
		if (fwd_job_id_parse(job_s, &job) < 0) {
			fwdctl_err("remap %s: --job \"%s\": not a job id "
				   "(" FWD_JOB_ID_RANGE ")",
				   action, job_s);
			return FWD_EXIT_USAGE;
		}
		if (!strcmp(action, "apply") && !list) {
			fwdctl_err("remap apply: --forwarders is required");
			return FWD_EXIT_USAGE;
		}
		if (!node) {
			node = short_hostname(host, sizeof(host));
			if (!node) {
				fwdctl_err("remap %s: no --node and no host "
					   "name: %s",
					   action, strerror(errno));
				return FWD_EXIT_USAGE;
			}
		}
	}
	p = fwdctl_policy(ctx);
	if (!p)
		return FWD_EXIT_USAGE;
	driver = p->remap.driver;
	if (drv && policy_driver_parse(drv, &driver) < 0) {
		fwdctl_err("remap %s: --driver \"%s\": expected none, exec, "
			   "lwfs, lnet or verbs",
			   action, drv);
		return FWD_EXIT_USAGE;
	}
	if (list) {
		topo = maybe_topology(ctx, p, &rc);
		if (rc != FWD_EXIT_OK)
			return rc;
		rc = parse_targets(list, topo, &ts);
		if (rc != FWD_EXIT_OK)
			goto out;
	}
	if (!strcmp(action, "probe"))
		rc = run_probe(p, &ts, json);
	else
		rc = run_remap(p, driver, !strcmp(action, "apply"), node,
			       (uint32_t)job, &ts, json);
out:
	targets_free(&ts);
	return rc;
}

FWDCTL_COMMAND(remap_command, .name = "remap",
	       .summary = "apply, revert or probe a node's forwarder mapping",
	       .order = 60, .run = cmd_remap)
