/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * epilog-slurmctld: slurm.conf's EpilogSlurmctld, a small static program.
 *
 * slurmctld keeps a job COMPLETING until EpilogSlurmctld ends, and when it
 * ends after the nodes' own epilogs, pending jobs wait for the next
 * periodic scheduling pass (sched_interval): a burst of short jobs then
 * runs tens of times slower.  So this program only starts the release and
 * returns: it forks a child that leaves slurmctld's session and process
 * group (Slurm kills the script's process group once the script exits)
 * and runs `fwdctl --policy FILE epilog --queue` (controller/
 * release_queue.h), waits until the child has left, and exits 0.  Linked
 * statically, it costs one exec and one fork: no shell, no shared
 * libraries.
 *
 * When the controller service (fwdallocd) runs, the hand-off is one
 * message to it instead: it queues the release and a drainer of its own
 * releases (service/protocol.h); no process is started here at all.  The
 * service not there, slow (more than EPILOG_BUDGET) or refusing: the
 * fork above, as without a service.
 *
 * Slurm runs it with no arguments, as SlurmUser; the socket, fwdctl's path
 * and the policy's are fixed at build time, so nothing a job submitter
 * controls can choose them.  With arguments, it runs them instead (the
 * test cluster's own fwdctl and policy): `epilog-slurmctld [--socket
 * PATH] PROGRAM ARG...`.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "service/client.h"
#include "service/protocol.h"

#ifndef FWD_EPILOG_FWDCTL
#error "FWD_EPILOG_FWDCTL (fwdctl's installed path) must be defined"
#endif
#ifndef FWD_EPILOG_POLICY
#error "FWD_EPILOG_POLICY (the installed policy's path) must be defined"
#endif
#ifndef FWD_SERVICE_SOCKET
#error "FWD_SERVICE_SOCKET (the service's socket) must be defined"
#endif

/* How long the hand-off to the service may take, in seconds. */
#define EPILOG_BUDGET 0.5

int main(int argc, char **argv)
{
	static char fwdctl[] = FWD_EPILOG_FWDCTL, opt[] = "--policy",
		    policy[] = FWD_EPILOG_POLICY, sub[] = "epilog",
		    queue[] = "--queue";
	char *def[] = {fwdctl, opt, policy, sub, queue, NULL};
	char **cmd = argc > 1 ? argv + 1 : def;
	const char *sock = FWD_SERVICE_SOCKET;
	static char ans[FWD_SVC_MSG_MAX + 1];
	char why[600];
	double t0 = svc_now();
	int p[2], fd;
	pid_t pid;
	char c;

	if (argc > 3 && !strcmp(argv[1], "--socket")) {
		sock = argv[2];
		cmd = argv + 3;
	}
	if (svc_call(sock, 'E', t0, t0 + EPILOG_BUDGET, ans, sizeof(ans), why,
		     sizeof(why)) == SVC_ANSWERED &&
	    !strncmp(ans, FWD_SVC_MAGIC " 0 A\n", sizeof(FWD_SVC_MAGIC) + 4))
		return 0;

	if (pipe(p) < 0 || (pid = fork()) < 0) {
		/* Cannot detach: release in the foreground rather than
		 * not at all (slower, never lost). */
		fprintf(stderr,
			"fwdalloc epilog-slurmctld: %s; releasing in "
			"the foreground\n",
			strerror(errno));
		execv(cmd[0], cmd);
		fprintf(stderr, "fwdalloc epilog-slurmctld: %s: %s\n", cmd[0],
			strerror(errno));
		return 0;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		/* Slurm reads the script's output until it is closed. */
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		/* Out of the process group: the parent may go. */
		if (write(p[1], "d", 1) < 0) {
			/* The parent is gone already: go on all the same. */
		}
		close(p[1]);
		execv(cmd[0], cmd);
		_exit(127);
	}
	close(p[1]);
	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}
