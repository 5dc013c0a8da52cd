/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hook_timer: times a PrologSlurmctld/EpilogSlurmctld as slurmctld runs
 * it, for bench/bench_burst.sh.  Slurm runs a hook with no arguments and
 * an environment of its own making, so everything comes from this
 * program's own path P (a copy of it, one per hook, named after the hook):
 *
 *   P.cmd            the command to run, one argument per line (the
 *                    first an absolute path; execv, no shell)
 *   dir(P)/times.log one line appended per run:
 *                    "NAME JOB_ID START END STATUS" (seconds since the
 *                    epoch, CLOCK_REALTIME; STATUS as waitpid gives it)
 *
 * The time runs from just before the fork to the moment waitpid returns:
 * the hook's fork, exec and run.  The timer's own exec by slurmctld
 * (about what a shell wrapper's exec costs) is outside it.  The command's
 * exit status is passed on, so Slurm sees what it would without the timer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 32

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	static char self[4096], path[4200], cmd[8192], line[512];
	char *argv[MAX_ARGS + 1], *p, *name;
	const char *job = getenv("SLURM_JOB_ID");
	ssize_t n;
	size_t len = 0;
	int fd, argc = 0, status = 0, rc;
	double t0, t1;
	pid_t pid;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s.cmd", self);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "hook_timer: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (len < sizeof(cmd) - 1 &&
	       (n = read(fd, cmd + len, sizeof(cmd) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	cmd[len] = '\0';
	for (p = strtok(cmd, "\n"); p && argc < MAX_ARGS;
	     p = strtok(NULL, "\n"))
		argv[argc++] = p;
	argv[argc] = NULL;
	if (argc == 0 || argv[0][0] != '/') {
		fprintf(stderr, "hook_timer: %s: no absolute command\n", path);
		return 1;
	}

	t0 = now();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	t1 = now();

	name = strrchr(self, '/');
	*name++ = '\0';
	snprintf(path, sizeof(path), "%s/times.log", self);
	n = snprintf(line, sizeof(line), "%s %s %.6f %.6f %d\n", name,
		     job ? job : "-", t0, t1, rc < 0 ? -1 : status);
	/* One write with O_APPEND: lines of hooks running at once do not
	 * mix. */
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		       0644)) >= 0) {
		if (write(fd, line, (size_t)n) < 0) {
			/* A lost timing must not fail the job. */
		}
		close(fd);
	}
	if (rc < 0)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
