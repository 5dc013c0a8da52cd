/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl setup: make the directories and the system files fwdalloc's
 * controller side writes with follow SlurmUser, read from slurm.conf or
 * given once.  Run as root by the packages' maintainer scripts and by the
 * administrator after changing SlurmUser.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include "cli/fwdctl.h"
#include "common/slurm_conf.h"
#include "policies/policy.h"

/* The units that run as SlurmUser (their etc/ templates name it). */
static const char *const units[] = {
	"fwdalloc-reconcile.service",
	"fwdalloc-history.service",
	"fwdalloc-health-scan.service",
	"fwdallocd.service",
};

/* clang-format off */
static void setup_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl setup [--slurm-user NAME] [--root DIR] [--dry-run]\n"
"\n"
"Make what fwdalloc writes on the controller follow SlurmUser, the account\n"
"slurmctld runs as, and so PrologSlurmctld and EpilogSlurmctld: read from\n"
"slurm.conf (SLURM_CONF, else /etc/slurm/slurm.conf; Slurm's default\n"
"\"root\" when it does not set it), or given once with --slurm-user.  Run\n"
"it as root on the controller: the packages run it when installed or\n"
"upgraded; run it again after changing SlurmUser.  Idempotent.\n"
"\n"
"  " LOCALSTATEDIR "/log/fwdalloc   created when missing, mode 0750,\n"
"        owned by SlurmUser and its group, and so are the files and\n"
"        directories in it (the audit trail, its rotated copies, the\n"
"        breaker's state, the topology cache, the release queue);\n"
"        symbolic links are refused\n"
"  " LOCALSTATEDIR "/lib/fwdalloc   created when missing, mode 0700, root's\n"
"        (the node prologs' state: root follows nothing another account\n"
"        could plant there)\n"
"  " SYSCONFDIR "/tmpfiles.d/fwdalloc.conf   the same two directories for\n"
"        systemd-tmpfiles at boot; it overrides the packaged\n"
"        /usr/lib/tmpfiles.d/fwdalloc.conf (tmpfiles.d(5))\n"
"  " SYSCONFDIR "/systemd/system/UNIT.d/slurm-user.conf   User=SlurmUser for\n"
"        fwdalloc-reconcile, fwdalloc-history, fwdalloc-health-scan and\n"
"        fwdallocd (systemd.unit(5) drop-ins); `systemctl daemon-reload`\n"
"        after it\n"
"and it says what is still wrong: a policy's database.password_file not\n"
"owned by SlurmUser or readable by others, a remap.decision_dir not\n"
"SlurmUser's.\n"
"\n"
"Options:\n"
"  --slurm-user NAME  SlurmUser, instead of reading slurm.conf\n"
"  --root DIR         write under DIR instead of /, and read\n"
"                     DIR/etc/slurm/slurm.conf unless SLURM_CONF is set\n"
"                     (a package installed into DIR: dpkg's $DPKG_ROOT)\n"
"  --dry-run          say what would change, change nothing\n"
"  -h, --help         this help\n"
"\n"
"Examples:\n"
"  fwdctl setup --dry-run\n"
"  fwdctl setup --slurm-user slurm --root /tmp/pkgroot\n"
"\n"
"Exit status:\n"
"  0  done (warnings on stderr)\n"
"  1  SlurmUser cannot be told or is no account here, or a file or\n"
"     directory cannot be made\n"
"  2  usage error\n");
}
/* clang-format on */

struct setup {
	const char *root; /* "" or DIR */
	bool dry;
	uid_t uid;
	gid_t gid;
	const char *user;
	unsigned changed;
};

static int path_under(const struct setup *s, char *buf, size_t n,
		      const char *path)
{
	int len = snprintf(buf, n, "%s%s", s->root, path);

	if (len < 0 || (size_t)len >= n) {
		fwdctl_err("setup: %s%s: path too long", s->root, path);
		return -1;
	}
	return 0;
}

/* dir exists as a directory (created when missing), with mode, uid, gid. */
static int make_dir(struct setup *s, const char *path, mode_t mode, uid_t uid,
		    gid_t gid)
{
	char p[4096];
	struct stat st;

	if (path_under(s, p, sizeof(p), path) < 0)
		return -1;
	if (lstat(p, &st) < 0) {
		if (errno != ENOENT) {
			fwdctl_err("setup: %s: %s", p, strerror(errno));
			return -1;
		}
		printf("%s %s (mode %04o, %s)\n",
		       s->dry ? "would create" : "created", p, (unsigned)mode,
		       uid ? s->user : "root");
		s->changed++;
		if (s->dry)
			return 0;
		/* Its parents (under --root they may be missing). */
		for (char *sl = strchr(p + 1, '/'); sl;
		     sl = strchr(sl + 1, '/')) {
			*sl = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST) {
				fwdctl_err("setup: creating %s: %s", p,
					   strerror(errno));
				return -1;
			}
			*sl = '/';
		}
		if (mkdir(p, mode) < 0 || lstat(p, &st) < 0) {
			fwdctl_err("setup: creating %s: %s", p,
				   strerror(errno));
			return -1;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		fwdctl_err("setup: %s: not a directory (a symbolic link or a "
			   "file): remove it, then run `fwdctl setup` again",
			   p);
		return -1;
	}
	if (st.st_uid == uid && st.st_gid == gid &&
	    (st.st_mode & 07777) == mode)
		return 0;
	printf("%s %s to mode %04o, owner %s\n",
	       s->dry ? "would change" : "changed", p, (unsigned)mode,
	       uid ? s->user : "root");
	s->changed++;
	if (s->dry)
		return 0;
	if (lchown(p, uid, gid) < 0 || chmod(p, mode) < 0) {
		fwdctl_err("setup: %s: %s", p, strerror(errno));
		return -1;
	}
	return 0;
}

/* The entries of dir (and of its subdirectories, one level: the release
 * queue) owned by uid:gid; links are refused, not followed. */
static int own_entries(struct setup *s, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rv = 0;

	if (!d)
		return errno == ENOENT && s->dry ? 0 : -1;
	while ((e = readdir(d))) {
		char p[4096];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			fwdctl_err("setup: %s: a symbolic link where fwdalloc "
				   "writes: remove it",
				   p);
			rv = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth > 0 &&
		    own_entries(s, p, depth - 1) < 0)
			rv = -1;
		if (st.st_uid == s->uid && st.st_gid == s->gid)
			continue;
		printf("%s the owner of %s to %s\n",
		       s->dry ? "would change" : "changed", p, s->user);
		s->changed++;
		if (!s->dry && lchown(p, s->uid, s->gid) < 0) {
			fwdctl_err("setup: %s: %s", p, strerror(errno));
			rv = -1;
		}
	}
	closedir(d);
	return rv;
}

/* path (under the root) holds exactly text, mode 0644, root's: written
 * atomically when it does not.  Its directory is created (0755). */
static int put_file(struct setup *s, const char *path, const char *text)
{
	char p[4096], tmp[4120], old[4096];
	size_t n = strlen(text), have = 0;
	int fd;

	if (path_under(s, p, sizeof(p), path) < 0)
		return -1;
	if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		ssize_t r = read(fd, old, sizeof(old));

		close(fd);
		have = r > 0 ? (size_t)r : 0;
		if (have == n && !memcmp(old, text, n))
			return 0;
	}
	printf("%s %s\n", s->dry ? "would write" : "wrote", p);
	s->changed++;
	if (s->dry)
		return 0;
	for (char *slash = strchr(p + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			fwdctl_err("setup: creating %s: %s", p,
				   strerror(errno));
			return -1;
		}
		*slash = '/';
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", p);
	if ((fd = mkstemp(tmp)) < 0) {
		fwdctl_err("setup: %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0644) < 0 || write(fd, text, n) != (ssize_t)n ||
	    fsync(fd) < 0 || close(fd) < 0 || rename(tmp, p) < 0) {
		fwdctl_err("setup: %s: %s", p, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* What is still wrong under the policy (warnings only). */
static void check_policy(struct fwdctl_ctx *ctx, struct setup *s)
{
	fwd_error_t err;
	struct policy *p;
	struct stat st;

	if (access(ctx->policy_path, F_OK) != 0)
		return;
	if (!(p = policy_load(ctx->policy_path, &err))) {
		fwdctl_err("setup: warning: %s", err.text);
		return;
	}
	if (p->database.password_file &&
	    stat(p->database.password_file, &st) == 0) {
		if (st.st_uid != s->uid)
			fwdctl_err("setup: warning: database.password_file %s "
				   "is not owned by SlurmUser %s, who runs "
				   "PrologSlurmctld: chown %s %s",
				   p->database.password_file, s->user, s->user,
				   p->database.password_file);
		if (st.st_mode & 077)
			fwdctl_err("setup: warning: database.password_file %s "
				   "is mode %04o: others may read it, so it is "
				   "refused: chmod 0600 %s",
				   p->database.password_file,
				   (unsigned)(st.st_mode & 07777),
				   p->database.password_file);
	}
	if (p->remap.decision_dir && stat(p->remap.decision_dir, &st) == 0 &&
	    st.st_uid != s->uid)
		fwdctl_err("setup: warning: remap.decision_dir %s is not owned "
			   "by SlurmUser %s, who publishes the decisions: "
			   "chown %s %s",
			   p->remap.decision_dir, s->user, s->user,
			   p->remap.decision_dir);
	policy_destroy(p);
}

static int cmd_setup(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"slurm-user", required_argument, NULL, 'u'},
		{"root", required_argument, NULL, 'r'},
		{"dry-run", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct setup s = {.root = ""};
	const char *given = NULL;
	char name[256], text[1024], dir[4096], confbuf[4096];
	const char *conf = NULL;
	struct passwd *pw;
	fwd_error_t err;
	int c, rc = FWD_EXIT_OK;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			given = optarg;
			break;
		case 'r':
			s.root = optarg;
			break;
		case 'n':
			s.dry = true;
			break;
		case 'h':
			setup_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("setup");
			return FWD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fwdctl_err("setup: unexpected argument '%s'", argv[optind]);
		return FWD_EXIT_USAGE;
	}
	/* Under --root, that root's slurm.conf (unless SLURM_CONF says). */
	if (s.root[0] && !getenv("SLURM_CONF")) {
		snprintf(confbuf, sizeof(confbuf), "%s/etc/slurm/slurm.conf",
			 s.root);
		conf = confbuf;
	}
	if (given) {
		snprintf(name, sizeof(name), "%s", given);
	} else if (fwd_slurm_user(conf, name, sizeof(name), &err) < 0) {
		fwdctl_err("setup: cannot tell SlurmUser: %s; pass "
			   "--slurm-user NAME",
			   err.text);
		return FWD_EXIT_INVALID;
	}
	if (!(pw = getpwnam(name))) {
		fwdctl_err("setup: SlurmUser %s%s: no such account here; "
			   "create it (Slurm needs it on every node) or pass "
			   "--slurm-user NAME",
			   name, given ? "" : " (slurm.conf)");
		return FWD_EXIT_INVALID;
	}
	s.user = name;
	s.uid = pw->pw_uid;
	s.gid = pw->pw_gid;
	printf("SlurmUser: %s (uid %u, gid %u)%s\n", name, (unsigned)s.uid,
	       (unsigned)s.gid, given ? "" : ", from slurm.conf");

	if (make_dir(&s, LOCALSTATEDIR "/log/fwdalloc", 0750, s.uid, s.gid) <
		    0 ||
	    make_dir(&s, LOCALSTATEDIR "/lib/fwdalloc", 0700, 0, 0) < 0)
		rc = FWD_EXIT_INVALID;
	if (path_under(&s, dir, sizeof(dir), LOCALSTATEDIR "/log/fwdalloc") ==
		    0 &&
	    own_entries(&s, dir, 1) < 0)
		rc = FWD_EXIT_INVALID;
	snprintf(text, sizeof(text),
		 "# Written by `fwdctl setup` for SlurmUser %s; overrides "
		 "/usr/lib/tmpfiles.d/fwdalloc.conf.\n"
		 "d %s/log/fwdalloc 0750 %s %s - -\n"
		 "d %s/lib/fwdalloc 0700 root root - -\n",
		 name, LOCALSTATEDIR, name, name, LOCALSTATEDIR);
	if (put_file(&s, SYSCONFDIR "/tmpfiles.d/fwdalloc.conf", text) < 0)
		rc = FWD_EXIT_INVALID;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		char path[512];

		snprintf(path, sizeof(path),
			 SYSCONFDIR "/systemd/system/%s.d/slurm-user.conf",
			 units[i]);
		snprintf(text, sizeof(text),
			 "# Written by `fwdctl setup`: SlurmUser runs it.\n"
			 "[Service]\nUser=%s\n",
			 name);
		if (put_file(&s, path, text) < 0)
			rc = FWD_EXIT_INVALID;
	}
	if (!s.changed)
		printf("nothing to change\n");
	else if (!s.dry && !s.root[0])
		printf("run `systemctl daemon-reload` if systemd runs here\n");
	check_policy(ctx, &s);
	return rc;
}

FWDCTL_COMMAND(cmd_setup_def, .name = "setup",
	       .summary = "make fwdalloc's directories and units follow "
			  "SlurmUser",
	       .order = 59, .run = cmd_setup);
