/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Concurrent node prologs of one job (bench/fanout.h). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/fanout.h"
#include "bench/report.h"
#include "common/array.h"
#include "common/timeutil.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"

static void node_prolog(const struct policy *p, uint32_t job, const char *node,
			struct fanout_node *out)
{
	struct fwdalloc_node_decision nd;
	fwd_error_t err = {""}, e2;
	const char *why = NULL;
	double t0 = fwd_clock_mono();
	size_t off = 0;

	out->r = fwdalloc_node_decision(p, job, node, &nd, &err);
	out->sec = fwd_clock_mono() - t0;
	out->source = (int)nd.source;
	snprintf(out->action, sizeof(out->action), "%s", nd.action);
	for (size_t i = 0; out->r > 0 && i < nd.n; i++) {
		int k = snprintf(out->targets + off, sizeof(out->targets) - off,
				 "%s%s=%s", i ? "," : "", nd.t[i].name,
				 nd.t[i].address ? nd.t[i].address : "-");

		if (k < 0 || (size_t)k >= sizeof(out->targets) - off)
			break;
		off += (size_t)k;
	}
	/* The job prolog's reasons to keep the default mapping
	 * (spank/fwdalloc_job.c), the driver's own failures aside. */
	if (out->r < 0)
		why = err.text;
	else if (out->r > 0 && nd.n == 0 &&
		 (!strcmp(nd.action, "scale") ||
		  !strcmp(nd.action, "isolate") ||
		  !strcmp(nd.action, "avoid-anomaly")))
		why = "no forwarder for this node";
	if (why) {
		out->fallback = 1;
		snprintf(out->err, sizeof(out->err), "%s", why);
		if (fwdalloc_node_fallback_note(p, job, node, why, &e2) < 0)
			snprintf(out->err, sizeof(out->err), "%.120s; %.120s",
				 why, e2.text);
	}
	out->done = 1;
}

int fanout_run(const struct policy *p, uint32_t job, const char *prefix,
	       size_t n, double limit, struct fanout_node *nodes,
	       struct fanout_stats *st)
{
	struct fanout_node *shm;
	size_t bytes = n * sizeof(*shm), started = 0, left;
	pid_t *pids = calloc(n ? n : 1, sizeof(*pids));
	double *secs = calloc(n ? n : 1, sizeof(*secs));
	int gate[2] = {-1, -1}, rv = -1;
	double t0 = 0, deadline;

	memset(st, 0, sizeof(*st));
	st->n = n;
	shm = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!pids || !secs || shm == MAP_FAILED || pipe(gate) < 0) {
		fprintf(stderr, "fanout: %s\n", strerror(errno));
		goto out;
	}
	memset(shm, 0, bytes);
	fflush(NULL);
	for (; started < n; started++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "fanout: fork %zu: %s\n", started + 1,
				strerror(errno));
			goto out;
		}
		if (pid == 0) {
			char node[128], c;

			close(gate[1]);
			/* The gate opens (EOF) when the parent closes it. */
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			snprintf(node, sizeof(node), "%s%zu", prefix,
				 started + 1);
			node_prolog(p, job, node, &shm[started]);
			_exit(0);
		}
		pids[started] = pid;
	}
	close(gate[0]);
	gate[0] = -1;
	t0 = fwd_clock_mono();
	close(gate[1]);
	gate[1] = -1;
	deadline = t0 + limit;
	left = n;
	while (left > 0) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG);

		if (w > 0) {
			for (size_t i = 0; i < started; i++)
				if (pids[i] == w)
					pids[i] = 0;
			left--;
			continue;
		}
		if (w < 0 && errno != EINTR)
			break;
		if (fwd_clock_mono() > deadline)
			break;
		{
			struct timespec ts = {0, 5000000};

			nanosleep(&ts, NULL);
		}
	}
	st->wall = fwd_clock_mono() - t0;
	rv = 0;
out:
	/* Whatever still runs (past the limit, or the start failed). */
	for (size_t i = 0; i < started; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	if (gate[1] >= 0)
		close(gate[1]);
	if (gate[0] >= 0)
		close(gate[0]);
	for (size_t i = 0; i < started; i++)
		while (pids[i] > 0 && waitpid(pids[i], NULL, 0) < 0 &&
		       errno == EINTR)
			;
	if (rv == 0) {
		for (size_t i = 0; i < n; i++) {
			nodes[i] = shm[i];
			if (!nodes[i].done) {
				nodes[i].fallback = 1;
				nodes[i].sec = limit;
				snprintf(nodes[i].err, sizeof(nodes[i].err),
					 "killed after %.0f s", limit);
				st->timed_out++;
			}
			secs[i] = nodes[i].sec;
			st->fallbacks += nodes[i].fallback != 0;
			st->no_decision += nodes[i].done && nodes[i].r == 0;
			if (nodes[i].done &&
			    nodes[i].source == FWDALLOC_SOURCE_FILE)
				st->from_file++;
			else if (nodes[i].done)
				st->from_db++;
		}
		if (n) {
			qsort(secs, n, sizeof(*secs), fwd_cmp_double);
			st->p50 = secs[n / 2];
			st->p99 = secs[(size_t)((double)(n - 1) * 0.99 + 0.5)];
			st->max = secs[n - 1];
		}
	}
	if (shm != MAP_FAILED)
		munmap(shm, bytes ? bytes : 1);
	free(pids);
	free(secs);
	return rv;
}
