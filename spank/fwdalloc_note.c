/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the job got, from the node's job prolog to the job's tasks: the job
 * prolog (slurmd, root) writes one line "ACTION FORWARDERS REQUEST" per
 * job and
 * node into remap.lwfs.state_dir; slurmstepd reads it for each task (as
 * root, before privileges are dropped), puts FWDALLOC_ACTION and
 * FWDALLOC_FORWARDERS into the task's environment, and the batch script of
 * a job that asked for --io-upgrade gets one line on its stderr.  The job
 * epilog removes the file.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/safedir.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"

static int note_path(const char *dir, uint32_t job, const char *node, char *buf,
		     size_t len)
{
	int n;

	if (!dir || dir[0] != '/' || !node || !*node || strchr(node, '/'))
		return -1;
	n = snprintf(buf, len, "%s/job-%u.%s.note", dir, job, node);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

int fwdalloc_note_write(const struct policy *p, uint32_t job, const char *node,
			const char *request, const char *action,
			const char *forwarders, fwd_error_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], line[1200];
	int fd, n;

	if (note_path(p->remap.lwfs.state_dir, job, node, path, sizeof(path)) <
	    0)
		return 0; /* no state directory: nothing to tell */
	n = snprintf(line, sizeof(line), "%s %s %s\n", action,
		     forwarders && *forwarders ? forwarders : "-",
		     request && *request ? request : "-");
	if (n < 0 || (size_t)n >= sizeof(line)) {
		errno = ENAMETOOLONG;
		return errprintf(err, "note for job %u: too long", job);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	/* Only root may write where root writes (common/safedir.h). */
	if (fwd_dir_check(p->remap.lwfs.state_dir, 0755, geteuid(), err) < 0)
		return errprefix(err, "note for job %u", job);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return errprintf(err, "%s: %s", tmp, strerror(errno));
	if (write(fd, line, (size_t)n) != n || close(fd) < 0) {
		int e = errno ? errno : EIO;

		unlink(tmp);
		errno = e;
		return errprintf(err, "%s: %s", tmp, strerror(e));
	}
	if (rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		errno = e;
		return errprintf(err, "%s: %s", path, strerror(e));
	}
	return 0;
}

int fwdalloc_note_read(const char *state_dir, uint32_t job, const char *node,
		       struct fwdalloc_note *out)
{
	char path[PATH_MAX], line[1200], *f1, *f2, *nl;
	FILE *f;

	fwd_error_t err;
	int fd;

	/* A note is trusted only from a directory nobody else can write
	 * into, and never through a link. */
	if (note_path(state_dir, job, node, path, sizeof(path)) < 0 ||
	    fwd_dir_check(state_dir, 0, geteuid(), &err) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	if ((nl = strchr(line, '\n')))
		*nl = '\0';
	if (!(f1 = strchr(line, ' ')) || !(f2 = strchr(f1 + 1, ' ')))
		return 0;
	*f1++ = '\0';
	*f2++ = '\0';
	if (strlen(line) >= sizeof(out->action) ||
	    strlen(f1) >= sizeof(out->forwarders) ||
	    strlen(f2) >= sizeof(out->request))
		return 0; /* not a note this plugin wrote */
	strcpy(out->action, line);
	strcpy(out->forwarders, strcmp(f1, "-") ? f1 : "");
	strcpy(out->request, strcmp(f2, "-") ? f2 : "");
	return 1;
}

int fwdalloc_note_read_job(const char *state_dir, uint32_t job,
			   struct fwdalloc_note *out, size_t max)
{
	char prefix[32];
	struct dirent *e;
	size_t n = 0, plen;
	DIR *d;

	if (!state_dir || state_dir[0] != '/' || !(d = opendir(state_dir)))
		return 0;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "job-%u.", job);
	while (n < max && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct fwdalloc_note *o = &out[n];

		if (len <= plen + 5 || strncmp(e->d_name, prefix, plen) ||
		    strcmp(e->d_name + len - 5, ".note") ||
		    len - plen - 5 >= sizeof(o->node))
			continue;
		memcpy(o->node, e->d_name + plen, len - plen - 5);
		o->node[len - plen - 5] = '\0';
		if (fwdalloc_note_read(state_dir, job, o->node, o) == 1)
			n++;
	}
	closedir(d);
	return (int)n;
}

void fwdalloc_note_remove(const struct policy *p, uint32_t job,
			  const char *node)
{
	char path[PATH_MAX];

	if (note_path(p->remap.lwfs.state_dir, job, node, path, sizeof(path)) ==
	    0)
		unlink(path);
}
