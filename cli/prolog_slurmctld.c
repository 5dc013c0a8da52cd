/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prolog-slurmctld: slurm.conf's PrologSlurmctld, a small static program.
 *
 * It hands the job (the variables of controller/job_vars.h) to the
 * controller service, fwdallocd, over its socket and waits at most its
 * budget for the answer (service/protocol.h), prints the service's notes
 * for slurmctld's log and exits with the status it names.  Linked
 * statically: one exec, no shell, no shared libraries, about a
 * millisecond.  When the service is not there it runs the decision itself,
 * exactly as before the service existed (`fwdctl --policy FILE prolog`,
 * bounded by the policy's decide_timeout).  When the service took the job
 * but did not answer within the budget (hung, overloaded) it runs `fwdctl
 * --policy FILE prolog --abandoned REASON`: whatever the service may have
 * committed is released and the job falls back, recorded.  Either way the
 * job is never failed because of fwdalloc (unless the policy says
 * access.fail: closed, as before).
 *
 * Slurm runs it with no arguments, as SlurmUser; the socket, the budget,
 * fwdctl's path and the policy's are fixed at build time, so nothing a job
 * submitter controls can choose them.  With arguments (the test
 * cluster's): `prolog-slurmctld SOCKET BUDGET_MS PROGRAM ARG...`, PROGRAM
 * ARG... being the one-process prolog command.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/client.h"
#include "service/protocol.h"

#ifndef FWD_SERVICE_SOCKET
#error "FWD_SERVICE_SOCKET (the service's socket) must be defined"
#endif
#ifndef FWD_HOOK_FWDCTL
#error "FWD_HOOK_FWDCTL (fwdctl's installed path) must be defined"
#endif
#ifndef FWD_HOOK_POLICY
#error "FWD_HOOK_POLICY (the installed policy's path) must be defined"
#endif
/* How long the hook waits for the service, in milliseconds. */
#ifndef FWD_PROLOG_BUDGET_MS
#define FWD_PROLOG_BUDGET_MS 5000
#endif

#define MAX_ARGS 64

/* Run the one-process prolog, with `extra` arguments (NULL-ended). */
static int run_fwdctl(char **cmd, char *const extra[])
{
	char *argv[MAX_ARGS + 4];
	size_t n = 0;

	for (; cmd[n] && n < MAX_ARGS; n++)
		argv[n] = cmd[n];
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	execv(argv[0], argv);
	fprintf(stderr,
		"fwdalloc prolog-slurmctld: %s: %s; the job keeps its "
		"default mapping\n",
		argv[0], strerror(errno));
	return 0;
}

/* Print the service's notes ("FWDALLOC1 <exit> <A|F>\n" then lines) and
 * return the exit status it names. */
static int report(char *ans)
{
	char *line = strchr(ans, '\n') + 1, *nl;
	int status = atoi(ans + sizeof(FWD_SVC_MAGIC));

	for (; *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			nl = line + strlen(line) - 1;
		fprintf(stderr, "fwdalloc: %.*s\n", (int)(nl - line), line);
	}
	return status == 1 ? 1 : 0;
}

int main(int argc, char **argv)
{
	static char fwdctl[] = FWD_HOOK_FWDCTL, opt[] = "--policy",
		    policy[] = FWD_HOOK_POLICY, sub[] = "prolog",
		    abandoned[] = "--abandoned";
	char *def[] = {fwdctl, opt, policy, sub, NULL};
	const char *sock = FWD_SERVICE_SOCKET;
	double budget = FWD_PROLOG_BUDGET_MS / 1000.0, start = svc_now();
	char **cmd = def;
	static char ans[FWD_SVC_MSG_MAX + 1];
	char why[600], reason[800];
	enum svc_result r;

	if (argc > 1) {
		if (argc < 4 || atof(argv[2]) <= 0) {
			fprintf(stderr, "usage: prolog-slurmctld [SOCKET "
					"BUDGET_MS PROGRAM ARG...]\n");
			return 0;
		}
		sock = argv[1];
		budget = atof(argv[2]) / 1000.0;
		cmd = argv + 3;
	}
	r = svc_call(sock, 'P', start + budget, start + budget, ans,
		     sizeof(ans), why, sizeof(why));
	if (r == SVC_ANSWERED && ans[sizeof(FWD_SVC_MAGIC)] != 'R')
		return report(ans);
	if (r == SVC_ABSENT)
		return run_fwdctl(cmd, NULL);
	if (r == SVC_ANSWERED) {
		/* Refused (not ours to ask, a request it cannot read): the
		 * service decided nothing; decide here. */
		fprintf(stderr,
			"fwdalloc: controller service %s refused the "
			"job: %s",
			sock, ans + sizeof(FWD_SVC_MAGIC) + 2);
		return run_fwdctl(cmd, NULL);
	}
	snprintf(reason, sizeof(reason),
		 "controller service %s: %s within the hook's budget of %.3gs",
		 sock, r == SVC_TIMEOUT ? "no answer" : why, budget);
	{
		char *extra[] = {abandoned, reason, NULL};

		return run_fwdctl(cmd, extra);
	}
}
