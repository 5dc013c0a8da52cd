/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl trace: compress, expand and summarise compute-node LWFS traces.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cmd_trace.h"
#include "cli/fwdctl.h"
#include "common/timeutil.h"
#include "profiler/summary.h"
#include "profiler/trace.h"

void trace_cmd_usage(FILE *f)
{
	fprintf(f,
		"Usage: fwdctl trace compress [--node NAME] IN OUT\n"
		"       fwdctl trace expand IN OUT\n"
		"       fwdctl trace summarize [--json] [--nodes N] FILE...\n"
		"       fwdctl trace ingest --job ID [--json] FILE...\n"
		"\n"
		"Work with compute-node I/O traces (LWFS client logs, one file "
		"per node):\n"
		"\n"
		"  [2016-08-27 10:14:44] T lwfs-fuse: 69745: WRITE (0x2000, "
		"size=161320, offset=0, count=2)\n"
		"  [2016-08-27 10:14:44] T READ 0x2000 size=262144 "
		"offset=262144 count=4\n"
		"  ... OPEN() PATH => 0xFD, RELEASE 0xFD, and other FUSE "
		"metadata operations\n"
		"\n"
		"compress   Beacon's first-pass compression: adjacent requests "
		"with the\n"
		"           same operation, descriptor, size, process and "
		"second over\n"
		"           contiguous ranges become one record plus a count.  "
		"Lossless:\n"
		"           `expand` gives back the same operation stream "
		"(byte for byte\n"
		"           for traces in the canonical form).  Prints the "
		"ratio.  The\n"
		"           node name stored in OUT is --node, else IN's name "
		"without its\n"
		"           extension.\n"
		"expand     Write a compressed trace back as raw lines.\n"
		"summarize  The job's I/O summary from the traces of all its "
		"nodes (raw\n"
		"           or compressed; node name = file name without "
		"extension):\n"
		"           io_mode (N-N, N-1, N-M, 1-1 by volume), io_nodes, "
		"io_procs,\n"
		"           read_bytes, write_bytes, files, node_bandwidth_bps "
		"(B_c in I/O\n"
		"           phases), peak_bandwidth_bps, iops, mdops, "
		"mdops_rate, phases.\n"
		"ingest     Summarise the traces for job ID and store the "
		"summary in the\n"
		"           database (job_io), then refresh the profile of the "
		"job's key.\n"
		"           The job must be in the jobs table: only records "
		"between its\n"
		"           start and end count (a node's trace holds every "
		"job that ran\n"
		"           there), every FILE must be one of its nodes, and "
		"its node\n"
		"           count is the job's.\n"
		"\n"
		"IN, OUT and FILE may be - for standard input / output.  "
		"Broken lines are\n"
		"skipped and reported on standard error with file and line "
		"number.\n"
		"\n"
		"Options:\n"
		"  --node NAME   node name recorded in the compressed file\n"
		"  --nodes N     the job's node count, when nodes without I/O "
		"have no\n"
		"                trace file (it tells N-M aggregation from "
		"N-N)\n"
		"  --job ID      the job whose traces these are (ingest)\n"
		"  --json        machine-readable output\n"
		"  -h, --help    this help\n"
		"\n"
		"Examples:\n"
		"  fwdctl trace compress c1.trace c1.ctrace\n"
		"  fwdctl trace expand c1.ctrace c1.trace\n"
		"  fwdctl trace summarize --json traces/job4711/*.trace\n"
		"  fwdctl trace ingest --job 4711 /var/log/lwfs/c*.trace\n"
		"\n"
		"Exit status: 0 success, 1 job not in the jobs table, 2 usage "
		"or input\n"
		"error (unreadable file, damaged compressed trace, a file of a "
		"node not in\n"
		"the job), 3 database unavailable.\n");
}

static void report_bad(const struct trace_stats *st)
{
	for (size_t i = 0; i < st->n_bad; i++)
		fprintf(stderr, "fwdctl trace: skipped %s\n", st->bad[i]);
	if (st->skipped > st->n_bad)
		fprintf(stderr,
			"fwdctl: ... %" PRIu64 " more broken lines "
			"skipped\n",
			st->skipped - st->n_bad);
}

static int do_compress(int argc, char **argv, bool expand)
{
	static const struct option opts[] = {
		{"node", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *node = NULL;
	struct trace_stats st;
	uint64_t out_bytes = 0;
	fwd_error_t err;
	int c, rv;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (expand) {
				fwdctl_err("trace expand: --node is for "
					   "compress");
				return FWD_EXIT_USAGE;
			}
			node = optarg;
			break;
		case 'h':
			trace_cmd_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("trace");
			return FWD_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fwdctl_err("trace %s: need IN and OUT; see 'fwdctl trace "
			   "--help'",
			   expand ? "expand" : "compress");
		return FWD_EXIT_USAGE;
	}
	if (node && (!*node || strchr(node, '\n'))) {
		fwdctl_err("trace compress: bad --node \"%s\"", node);
		return FWD_EXIT_USAGE;
	}
	memset(&st, 0, sizeof(st));
	if (expand)
		rv = trace_expand_file(argv[optind], argv[optind + 1], &st,
				       &out_bytes, &err);
	else
		rv = trace_compress_file(argv[optind], argv[optind + 1], node,
					 &st, &out_bytes, &err);
	report_bad(&st);
	if (rv) {
		fwdctl_err("trace %s: %s", expand ? "expand" : "compress",
			   err.text);
		return FWD_EXIT_USAGE;
	}
	/* the report goes to stderr when the data went to stdout */
	FILE *rep = strcmp(argv[optind + 1], "-") ? stdout : stderr;

	if (expand)
		fprintf(rep,
			"%s: %" PRIu64 " runs -> %" PRIu64 " records, %" PRIu64
			" -> %" PRIu64 " bytes\n",
			argv[optind], st.runs, st.records, st.bytes, out_bytes);
	else
		fprintf(rep,
			"%s: %" PRIu64 " records in %" PRIu64 " runs, %" PRIu64
			" -> %" PRIu64 " bytes, ratio %.1fx (%" PRIu64
			" broken lines skipped)\n",
			argv[optind], st.records, st.runs, st.bytes, out_bytes,
			out_bytes ? (double)st.bytes / (double)out_bytes : 0,
			st.skipped);
	return FWD_EXIT_OK;
}

static void print_summary(const struct trace_summary *s)
{
	printf("io_mode:            %s (read %s, write %s)\n",
	       fwd_io_mode_name(s->io_mode), fwd_io_mode_name(s->read_mode),
	       fwd_io_mode_name(s->write_mode));
	printf("nodes:              %" PRIu32 "\n", s->nodes);
	printf("io_nodes:           %" PRIu32 "\n", s->io_nodes);
	printf("io_procs:           %" PRIu32 "\n", s->io_procs);
	printf("read_bytes:         %" PRIu64 "\n", s->read_bytes);
	printf("write_bytes:        %" PRIu64 "\n", s->write_bytes);
	printf("read_ops:           %" PRIu64 "\n", s->read_ops);
	printf("write_ops:          %" PRIu64 "\n", s->write_ops);
	printf("files:              %" PRIu32 " (%" PRIu32 " shared)\n",
	       s->files, s->shared_files);
	printf("node_bandwidth_bps: %.0f\n", s->node_bandwidth_bps);
	printf("peak_bandwidth_bps: %.0f\n", s->peak_bandwidth_bps);
	printf("iops:               %.1f\n", s->iops);
	printf("mdops:              %" PRIu64 " (%.1f/s in I/O phases)\n",
	       s->mdops, s->mdops_rate);
	printf("io_seconds:         %.0f\n", s->io_seconds);
	printf("phases:             %zu\n", s->n_phases);
	for (size_t i = 0; i < s->n_phases && i < 20; i++) {
		char a[32], b[32];

		fwd_time_format((double)s->phases[i].start, a, sizeof(a));
		fwd_time_format((double)s->phases[i].end, b, sizeof(b));
		printf("  %s..%s  %" PRIu64 " bytes  %" PRIu64 " ops  %" PRIu64
		       " mdops\n",
		       a, b, s->phases[i].bytes, s->phases[i].ops,
		       s->phases[i].mdops);
	}
	if (s->n_phases > 20)
		printf("  ... %zu more\n", s->n_phases - 20);
	printf("records:            %" PRIu64 " (%" PRIu64 " broken lines "
	       "skipped)\n",
	       s->records, s->skipped);
}

int trace_cmd_summarize(char **files, int n, uint32_t job_nodes, int64_t from,
			int64_t to, struct trace_summary *s)
{
	struct trace_summary_opts o;
	struct trace_job *j;
	fwd_error_t err;
	int rc = FWD_EXIT_USAGE;

	trace_summary_opts_default(&o);
	o.job_nodes = job_nodes;
	o.from = from;
	o.to = to;
	if (!(j = trace_job_create(&o))) {
		fwdctl_err("trace: %s", strerror(errno));
		return FWD_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++) {
		struct trace_stats st;

		memset(&st, 0, sizeof(st));
		if (trace_job_add_file(j, files[i], NULL, &st, &err)) {
			report_bad(&st);
			fwdctl_err("trace: %s", err.text);
			goto out;
		}
		report_bad(&st);
	}
	if (trace_job_finish(j, s, &err)) {
		fwdctl_err("trace: %s", err.text);
		goto out;
	}
	rc = FWD_EXIT_OK;
out:
	trace_job_destroy(j);
	return rc;
}

static int parse_nodes(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v == 0 || v > UINT32_MAX || *s == '-') {
		fwdctl_err("trace summarize: --nodes \"%s\": must be a "
			   "positive node count",
			   s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int do_summarize(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"nodes", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct trace_summary s;
	uint32_t job_nodes = 0;
	bool json = ctx->json;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'N':
			if (parse_nodes(optarg, &job_nodes))
				return FWD_EXIT_USAGE;
			break;
		case 'h':
			trace_cmd_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("trace");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fwdctl_err("trace summarize: no trace files; see 'fwdctl "
			   "trace --help'");
		return FWD_EXIT_USAGE;
	}
	rc = trace_cmd_summarize(argv + optind, argc - optind, job_nodes, 0, 0,
				 &s);
	if (rc)
		return rc;
	if (json) {
		json_t *o = trace_summary_to_json(&s);

		if (!o || json_dumpf(o, stdout, JSON_INDENT(2)) ||
		    putchar('\n') == EOF) {
			fwdctl_err("trace summarize: %s", strerror(errno));
			rc = FWD_EXIT_USAGE;
		}
		json_decref(o);
	} else {
		print_summary(&s);
	}
	trace_summary_free(&s);
	return rc;
}

static int cmd_trace(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	const char *action = argc > 1 ? argv[1] : NULL;

	if (!action) {
		fwdctl_err("trace: missing action (compress, expand, summarize "
			   "or ingest); see 'fwdctl trace --help'");
		return FWD_EXIT_USAGE;
	}
	if (!strcmp(action, "-h") || !strcmp(action, "--help")) {
		trace_cmd_usage(stdout);
		return FWD_EXIT_OK;
	}
	argv[1] = (char *)fwdctl_prog_name("trace", action);
	if (!strcmp(action, "compress"))
		return do_compress(argc - 1, argv + 1, false);
	if (!strcmp(action, "expand"))
		return do_compress(argc - 1, argv + 1, true);
	if (!strcmp(action, "summarize") || !strcmp(action, "summarise"))
		return do_summarize(ctx, argc - 1, argv + 1);
	if (!strcmp(action, "ingest"))
		return trace_cmd_ingest(ctx, argc - 1, argv + 1);
	fwdctl_err("trace: unknown action '%s'; see 'fwdctl trace --help'",
		   action);
	return FWD_EXIT_USAGE;
}

FWDCTL_COMMAND(trace_command, .name = "trace",
	       .summary = "compress, expand and summarise compute-node "
			  "I/O traces",
	       .order = 60, .run = cmd_trace)
