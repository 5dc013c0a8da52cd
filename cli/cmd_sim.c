/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl sim: replay a job trace under several allocation policies and
 * report what each would have achieved (allocator/SIM.md).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fwdctl.h"
#include "cli/table.h"
#include "policies/policy.h"
#include "sim/sim.h"
#include "topology/topology.h"

#define MAX_COMPARE 16

/* Where the packages put the shipped examples (DOCDIR/examples). */
#define EX "/usr/share/doc/fwdalloc/examples"

/* clang-format off */
static void usage(FILE *f)
{
	fputs(
"Usage: fwdctl sim [--policy FILE] [--topology FILE] --jobs JOBS.csv\n"
"                  --curves CURVES.csv [--compare LIST] [--out DIR]\n"
"                  [--json | -P] [-n] [--per-job] [--cores-per-node N]\n"
"                  [--learn] [--quiet]\n"
"\n"
"Replay a job trace against the forwarding layer and report, for each\n"
"policy, what it would have achieved: aggregate bandwidth, I/O time, the\n"
"per-job speed-up over the static mapping, the jobs upgraded and their\n"
"core-hours, forwarder utilisation and the requests refused for lack of\n"
"idle forwarders.  The `dfra` policy runs the production decision code\n"
"with the given policy, every job asking --io-upgrade=auto.  The model\n"
"(placement, bandwidth sharing, interference, oracle) and both CSV\n"
"formats are described in SIM.md.\n"
"\n"
"Options:\n"
"  --policy FILE       policy YAML for `dfra`; its interference thresholds\n"
"                      also classify the jobs (default: the global one)\n"
"  --topology FILE     topology YAML (default: the policy's `topology:`)\n"
"  --jobs FILE         trace: job_id,app,nodes,submit,start,end[,io_seconds]\n"
"  --curves FILE       app,forwarders,bandwidth_bps curves, optional\n"
"                      app,io_mode,volume,iops,mdops profiles and\n"
"                      victim,disruptor,slowdown overrides\n"
"  --compare LIST      comma-separated policies to report, in order:\n"
"                      static, static-bez (Bez et al.'s STATIC: each job\n"
"                      ceil(nodes / R) forwarders of its own), dfra,\n"
"                      oracle, exact (the best combination of the\n"
"                      decision's options for each batch of jobs\n"
"                      starting together, within the policy's caps, rated\n"
"                      by this model), or a policy YAML file run like dfra\n"
"                      (default: static,dfra,oracle)\n"
"  --out DIR           write speedup.svg and utilisation.svg (and\n"
"                      report.json) into DIR, created if missing\n"
"  --json              print the report as JSON instead of a table\n"
"  -P, --parsable      table fields separated by '|', unpadded, and no\n"
"                      summary line before the table (for scripts)\n"
"  -n, --noheader      no header line\n"
"  --per-job           include every job's figures in the JSON\n"
"  --cores-per-node N  cores per node for core-hours (default 1, i.e.\n"
"                      node-hours)\n"
"  --learn             add `learned`: dfra deciding from a history that\n"
"                      starts with each app's k = 1 point and fills from\n"
"                      the simulated runs, instead of the exact curves\n"
"                      (learn: enabled, with the policy's budget)\n"
"  --quiet             no progress on stderr (printed for traces of\n"
"                      10,000 jobs or more)\n"
"  -h, --help          this help\n"
"\n"
"Examples:\n"
"  fwdctl sim --topology " EX "/topology-taihulight.yaml \\\n"
"      --jobs " EX "/sim-jobs.csv --curves " EX "/sim-curves.csv\n"
"  fwdctl sim --policy new.yaml --jobs week.csv --curves curves.csv \\\n"
"      --compare static,dfra,strict.yaml,oracle --out /tmp/report --json\n"
"\n"
"Exit status:\n"
"  0  report produced\n"
"  1  the simulation failed (the decision engine returned an error)\n"
"  2  usage error or bad input (every bad CSV line is listed as\n"
"     FILE:LINE: what)\n", f);
}
/* clang-format on */

struct prog {
	const char *last;
	int pct;
};

static void on_progress(void *arg, const char *policy, size_t done,
			size_t total)
{
	struct prog *p = arg;
	int pct = total ? (int)(100 * done / total) : 100;

	if (p->last != policy) {
		p->last = policy;
		p->pct = -10;
	}
	if (pct >= p->pct + 10 || (done == total && p->pct != 100)) {
		p->pct = pct - pct % 10;
		if (done == total)
			p->pct = 100;
		fprintf(stderr, "fwdctl sim: %s: %d%% (%zu/%zu events)\n",
			policy, pct, done, total);
	}
}

static const char *base_name(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	char *dot;

	snprintf(buf, len, "%s", b ? b + 1 : path);
	dot = strrchr(buf, '.');
	if (dot && dot != buf &&
	    (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		*dot = '\0';
	return buf;
}

static void fmt_rate(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2f GB/s", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1f MB/s", v / 1e6);
	else
		snprintf(buf, len, "%.0f B/s", v);
}

/* The summary line (not with -P), then one row per policy. */
static void print_table(const struct sim_result *r, struct fwdctl_table *t)
{
	static const char *const head[] = {"policy",
					   "agg bw",
					   "peak bw",
					   "I/O time s",
					   "speed-up med/mean/max",
					   "upgraded",
					   "upg core-h",
					   "util",
					   "held",
					   "refused"};
	static const int width[] = {16, -12, -12, -12, -22, -14, -12, -6, -6};

	t->head = head, t->width = width, t->ncols = 10;
	if (!t->parsable)
		printf("%zu jobs (%zu placed), %zu forwarders (%zu in the idle "
		       "pool), %.1f h simulated\n\n",
		       r->n_jobs, r->n_placed, r->n_forwarders, r->n_pool,
		       (r->t1 - r->t0) / 3600.0);
	fwdctl_table_header(t);
	for (size_t i = 0; i < r->n_pols; i++) {
		const struct sim_policy_result *p = &r->pols[i];
		char agg[32], peak[32], io[32], sp[80], up[48], ch[32];
		char util[16], held[16], refused[24];
		const char *cells[10] = {p->name, agg,	sp,   up,
					 ch,	  util, held, refused};

		fmt_rate(p->agg_bw_mean, agg, sizeof(agg));
		fmt_rate(p->agg_bw_peak, peak, sizeof(peak));
		snprintf(io, sizeof(io), "%.0f", p->io_time_total);
		snprintf(sp, sizeof(sp), "%.2f/%.2f/%.2f", p->speedup_median,
			 p->speedup_mean, p->speedup_max);
		snprintf(up, sizeof(up), "%zu (%.1f%%)", p->n_upgraded,
			 100 * p->upgraded_share);
		snprintf(ch, sizeof(ch), "%.0f", p->upgraded_core_hours);
		snprintf(util, sizeof(util), "%.1f%%", 100 * p->util_mean);
		snprintf(held, sizeof(held), "%.1f%%", 100 * p->held_mean);
		snprintf(refused, sizeof(refused), "%zu", p->n_refused);
		cells[1] = agg, cells[2] = peak, cells[3] = io, cells[4] = sp;
		cells[5] = up, cells[6] = ch, cells[7] = util, cells[8] = held;
		cells[9] = refused;
		fwdctl_table_row(t, cells);
	}
}

static int cmd_sim(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"topology", required_argument, NULL, 't'},
		{"jobs", required_argument, NULL, 'j'},
		{"curves", required_argument, NULL, 'c'},
		{"compare", required_argument, NULL, 'C'},
		{"out", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'J'},
		{"per-job", no_argument, NULL, 'X'},
		{"cores-per-node", required_argument, NULL, 'N'},
		{"quiet", no_argument, NULL, 'q'},
		{"learn", no_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		FWDCTL_TABLE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct fwdctl_table table = {0};
	const char *jobs_path = NULL, *curves_path = NULL, *out = NULL;
	const char *compare = "static,dfra,oracle";
	bool per_job = false, quiet = false, learn = false;
	struct sim_history *hist = NULL;
	struct policy learn_pol;
	double cores = 1;
	struct sim_policy pols[MAX_COMPARE];
	struct policy *loaded[MAX_COMPARE] = {NULL};
	char names[MAX_COMPARE][256];
	size_t n_pols = 0;
	struct sim_curves *curves = NULL;
	struct sim_jobs *jobs = NULL;
	struct sim_result *res = NULL;
	struct policy *pol;
	struct topology *topo;
	char *list = NULL, *tok, *save = NULL, *json = NULL;
	struct prog prog = {0};
	fwd_error_t err;
	int c, rc = FWD_EXIT_USAGE;

	while ((c = getopt_long(argc, argv, "h" FWDCTL_TABLE_SHORTOPTS, opts,
				NULL)) != -1) {
		if (fwdctl_table_option(&table, c))
			continue;
		switch (c) {
		case 'p':
			ctx->policy_path = optarg;
			ctx->policy_explicit = true;
			break;
		case 't':
			ctx->topology_path = optarg;
			break;
		case 'j':
			jobs_path = optarg;
			break;
		case 'c':
			curves_path = optarg;
			break;
		case 'C':
			compare = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'J':
			ctx->json = true;
			break;
		case 'X':
			per_job = true;
			break;
		case 'N': {
			char *end;

			errno = 0;
			cores = strtod(optarg, &end);
			if (*end || errno || !(cores >= 1) || cores > 1e6) {
				fwdctl_err("sim: --cores-per-node '%s': not a "
					   "number >= 1",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			break;
		}
		case 'q':
			quiet = true;
			break;
		case 'L':
			learn = true;
			break;
		case 'h':
			usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("sim");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("sim: unexpected argument '%s'", argv[optind]);
		return FWD_EXIT_USAGE;
	}
	if (!jobs_path || !curves_path) {
		fwdctl_err("sim: --jobs and --curves are required; see "
			   "'fwdctl sim --help'");
		return FWD_EXIT_USAGE;
	}
	if (!(pol = fwdctl_policy(ctx)) || !(topo = fwdctl_topology(ctx)))
		return FWD_EXIT_USAGE;
	if (!(list = strdup(compare))) {
		fwdctl_err("sim: out of memory");
		return FWD_EXIT_USAGE;
	}
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct sim_policy *p = &pols[n_pols];

		if (n_pols == MAX_COMPARE) {
			fwdctl_err("sim: --compare: at most %d policies",
				   MAX_COMPARE);
			goto out;
		}
		if (!strcmp(tok, "static")) {
			*p = (struct sim_policy){"static", SIM_POLICY_STATIC,
						 NULL};
		} else if (!strcmp(tok, "dfra")) {
			*p = (struct sim_policy){"dfra", SIM_POLICY_DFRA, pol};
		} else if (!strcmp(tok, "static-bez")) {
			*p = (struct sim_policy){"static-bez",
						 SIM_POLICY_STATIC_BEZ, NULL};
		} else if (!strcmp(tok, "exact")) {
			*p = (struct sim_policy){"exact", SIM_POLICY_EXACT,
						 pol};
		} else if (!strcmp(tok, "oracle")) {
			*p = (struct sim_policy){"oracle", SIM_POLICY_ORACLE,
						 NULL};
		} else {
			loaded[n_pols] = policy_load(tok, &err);
			if (!loaded[n_pols]) {
				fwdctl_err("sim: --compare: %s", err.text);
				goto out;
			}
			*p = (struct sim_policy){
				base_name(tok, names[n_pols],
					  sizeof(names[n_pols])),
				SIM_POLICY_DFRA, loaded[n_pols]};
		}
		for (size_t i = 0; i < n_pols; i++) {
			if (!strcmp(pols[i].name, p->name)) {
				fwdctl_err("sim: --compare: '%s' is listed "
					   "twice",
					   p->name);
				goto out;
			}
		}
		n_pols++;
	}
	if (!n_pols) {
		fwdctl_err("sim: --compare: no policy named");
		goto out;
	}
	if (!(curves = sim_curves_load(curves_path, &err))) {
		fwdctl_err("sim: %s", err.text);
		goto out;
	}
	if (!(jobs = sim_jobs_load(jobs_path, curves, &err))) {
		fwdctl_err("sim: %s", err.text);
		goto out;
	}
	if (learn) {
		if (n_pols == MAX_COMPARE) {
			fwdctl_err("sim: --learn: at most %d policies",
				   MAX_COMPARE);
			goto out;
		}
		if (!(hist = sim_history_create(curves, true))) {
			fwdctl_err("sim: out of memory");
			goto out;
		}
		/* the policy with learn.enabled (its budget as given); a
		 * shallow copy, read only */
		learn_pol = *pol;
		learn_pol.learn.enabled = true;
		pols[n_pols++] = (struct sim_policy){
			"learned", SIM_POLICY_DFRA, &learn_pol, NULL, NULL,
			hist};
	}
	struct sim_config cfg = {
		.topo = topo,
		.base = pol,
		.policies = pols,
		.n_policies = n_pols,
		.cores_per_node = cores,
		.progress = (!quiet && jobs->n >= 10000) ? on_progress : NULL,
		.progress_arg = &prog,
	};
	if (!(res = sim_run(&cfg, curves, jobs, &err))) {
		fwdctl_err("sim: %s", err.text);
		rc = errno == EINVAL ? FWD_EXIT_USAGE : FWD_EXIT_INVALID;
		goto out;
	}
	if (res->n_placed < res->n_jobs && res->n_pols) {
		size_t first = 0;

		while (res->pols[0].jobs[first].placed)
			first++;
		fwdctl_err("sim: warning: %zu of %zu jobs did not fit the "
			   "free nodes when they started and are left out "
			   "(first: job '%s', %s:%zu)",
			   res->n_jobs - res->n_placed, res->n_jobs,
			   jobs->jobs[first].id, jobs->path,
			   jobs->jobs[first].line);
	}
	if (ctx->json || out) {
		if (!(json = sim_result_to_json(res, jobs, per_job))) {
			fwdctl_err("sim: JSON: %s", strerror(errno));
			rc = FWD_EXIT_INVALID;
			goto out;
		}
	}
	if (out) {
		char path[4096];
		FILE *f;

		if (sim_write_svgs(res, out, &err) < 0) {
			fwdctl_err("sim: %s", err.text);
			goto out;
		}
		snprintf(path, sizeof(path), "%s/report.json", out);
		if (!(f = fopen(path, "w"))) {
			fwdctl_err("sim: %s: %s", path, strerror(errno));
			goto out;
		}
		fputs(json, f);
		fputc('\n', f);
		if (ferror(f) | fclose(f)) {
			fwdctl_err("sim: %s: write error", path);
			goto out;
		}
	}
	if (ctx->json)
		printf("%s\n", json);
	else
		print_table(res, &table);
	rc = FWD_EXIT_OK;
out:
	free(json);
	free(list);
	sim_result_destroy(res);
	sim_jobs_destroy(jobs);
	sim_curves_destroy(curves);
	sim_history_destroy(hist);
	for (size_t i = 0; i < MAX_COMPARE; i++)
		policy_destroy(loaded[i]);
	return rc;
}

FWDCTL_COMMAND(sim_command, .name = "sim",
	       .summary = "what-if: replay a job trace under several policies",
	       .order = 80, .run = cmd_sim);
