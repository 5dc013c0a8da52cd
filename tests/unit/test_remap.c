/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Remap drivers none, exec, lwfs and lnet on a temporary directory, with
 * small shell scripts standing in for the site command, the remount
 * command and lnetctl.  rename(2) is wrapped so a test can crash the
 * process between the symlink and the rename of the lwfs driver.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/timeutil.h"
#include "spank/remap.h"

/* ---- rename(2) fake: crash between link and rename ---------------------- */

int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);

static int crash_on_link_rename;
/* Once set: right after the driver's rename, another writer points the
 * link at this target (a second tool racing with fwdalloc). */
static const char *race_link_to;

int __wrap_rename(const char *from, const char *to)
{
	static const char sfx[] = ".fwdalloc-tmp";
	size_t n = strlen(from);
	int r;

	if (crash_on_link_rename && n >= sizeof(sfx) - 1 &&
	    !strcmp(from + n - (sizeof(sfx) - 1), sfx))
		_exit(99); /* as if the node lost power here */
	r = __real_rename(from, to);
	if (r == 0 && race_link_to && n >= sizeof(sfx) - 1 &&
	    !strcmp(from + n - (sizeof(sfx) - 1), sfx)) {
		const char *other = race_link_to;

		race_link_to = NULL;
		if (unlink(to) < 0 || symlink(other, to) < 0)
			return -1;
	}
	return r;
}

/* ---- fixture ------------------------------------------------------------ */

struct fx {
	char dir[200];
	char state[256];
	char vol[256];
	char log[256];
	char script[256];
	char *argv[3];
	char arg1[256];
	struct policy_remap cfg;
};

static char s_link[] = "lwfs.vol";
static char s_net[] = "o2ib";

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_remap.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->vol, sizeof(f->vol), "%s/lwfs", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/log", f->dir);
	snprintf(f->script, sizeof(f->script), "%s/cmd.sh", f->dir);
	assert_int_equal(mkdir(f->vol, 0755), 0);
	f->cfg.timeout = 10;
	f->cfg.lwfs.state_dir = f->state;
	f->cfg.lwfs.volfile_dir = f->vol;
	f->cfg.lwfs.link_name = s_link;
	f->cfg.lnet.net = s_net;
	f->cfg.lnet.hops = 1;
	f->cfg.verbs.resolve_timeout = 2;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void write_file(const char *path, mode_t mode, const char *fmt, ...)
{
	va_list ap;
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* The whole file, or "" if it does not exist; static buffer. */
static const char *slurp(const char *path)
{
	static char buf[8192];
	ssize_t k;
	int fd = open(path, O_RDONLY);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[k > 0 ? k : 0] = '\0';
	return buf;
}

static const char *link_of(const struct fx *f)
{
	static char buf[PATH_MAX];
	char p[PATH_MAX];
	ssize_t k;

	snprintf(p, sizeof(p), "%s/%s", f->vol, s_link);
	k = readlink(p, buf, sizeof(buf) - 1);
	buf[k > 0 ? k : 0] = '\0';
	return buf;
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* A command (the script) taking the log path as its only argument. */
static void use_script(struct fx *f, struct policy_argv *a, const char *body)
{
	write_file(f->script, 0755, "#!/bin/sh\nLOG=\"$1\"\n%s", body);
	snprintf(f->arg1, sizeof(f->arg1), "%s", f->log);
	f->argv[0] = f->script;
	f->argv[1] = f->arg1;
	f->argv[2] = NULL;
	a->argv = f->argv;
	a->argc = 2;
}

static const struct remap_target two[] = {
	{"fwd081", "10.1.0.81", "10.1.0.81@o2ib"},
	{"fwd082", "10.1.0.82", "10.1.0.82@o2ib"},
};

/* ---- configuration and arguments ---------------------------------------- */

static void test_none(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	f->cfg.driver = POLICY_DRIVER_NONE;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_string_equal(remap_driver_name(r), "none");
	assert_int_equal(remap_apply(r, "c1", 7, NULL, 0, &err), 0);
	assert_int_equal(remap_apply(r, "c1", 7, two, 2, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 7, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 7, &err), 0);
	remap_destroy(r);
	remap_destroy(NULL);
}

static void test_create_invalid(void **state)
{
	struct fx *f = *state;
	static char rel[] = "remap.sh", rel_lnet[] = "lnetctl";
	static char abs_lnet[] = "/usr/sbin/lnetctl", bad_net[] = "o2ib@x";
	static char bad_link[] = "a/b", missing[] = "/nonexistent-fwdalloc";
	char *relv[] = {rel, NULL};
	char msg[PATH_MAX + 64];
	struct {
		enum policy_driver d;
		int what;
		const char *want;
	} cases[] = {
		{POLICY_DRIVER_EXEC, 0, "exec: remap.exec.command is not set"},
		{POLICY_DRIVER_EXEC, 1,
		 "exec: remap.exec.command: \"remap.sh\""
		 " is not an absolute path"},
		{POLICY_DRIVER_LWFS, 2,
		 "lwfs: volfile_dir "
		 "/nonexistent-fwdalloc: No such file or directory"},
		{POLICY_DRIVER_LWFS, 3,
		 "lwfs: remap.lwfs.link_name \"a/b\" is"
		 " not a plain file name"},
		{POLICY_DRIVER_LNET, 4,
		 "lnet: remap.lnet.lnetctl must be an "
		 "absolute path"},
		{POLICY_DRIVER_LNET, 5,
		 "lnet: remap.lnet.net \"o2ib@x\" is not"
		 " an LNet network name"},
		{POLICY_DRIVER_VERBS, 6,
		 "verbs: remap.verbs.resolve_timeout "
		 "must be positive, got 0"},
		{POLICY_DRIVER_VERBS, 7,
		 "verbs: remap.verbs.connect_probe "
		 "needs remap.verbs.port"},
		{POLICY_DRIVER_NONE, 8,
		 "none: remap.timeout must be positive, "
		 "got 0"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_remap c = f->cfg;
		fwd_error_t err = {""};

		c.driver = cases[i].d;
		c.lnet.lnetctl = abs_lnet;
		switch (cases[i].what) {
		case 1:
			c.exec.command.argv = relv;
			c.exec.command.argc = 1;
			break;
		case 2:
			c.lwfs.volfile_dir = missing;
			break;
		case 3:
			c.lwfs.link_name = bad_link;
			break;
		case 4:
			c.lnet.lnetctl = rel_lnet;
			break;
		case 5:
			c.lnet.net = bad_net;
			break;
		case 6:
			c.verbs.resolve_timeout = 0;
			break;
		case 7:
			c.verbs.connect_probe = true;
			c.verbs.port = 0;
			break;
		case 8:
			c.timeout = 0;
			break;
		}
		errno = 0;
		assert_null(remap_create(&c, &err));
		assert_int_equal(errno, cases[i].what == 2 ? ENOENT : EINVAL);
		snprintf(msg, sizeof(msg), "%s", cases[i].want);
		assert_string_equal(err.text, msg);
	}
}

static void test_bad_names(void **state)
{
	struct fx *f = *state;
	struct remap_target bad = {"fwd 1", NULL, NULL};
	fwd_error_t err;
	struct remap *r;

	use_script(f, &f->cfg.exec.command, "exit 0\n");
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "../c1", 1, two, 1, &err), -1);
	assert_string_equal(err.text, "exec: invalid node name \"../c1\"");
	assert_int_equal(remap_apply(r, "c1", 1, &bad, 1, &err), -1);
	assert_string_equal(err.text, "exec: invalid forwarder name \"fwd 1\"");
	assert_int_equal(remap_apply(r, "c1", 7, two, 0, &err), -1);
	assert_string_equal(err.text, "exec: job 7: no forwarder to apply");
	assert_int_equal(remap_revert(r, ".x", 1, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(slurp(f->log), ""); /* never ran */
	remap_destroy(r);
}

/* ---- exec --------------------------------------------------------------- */

static void test_exec_env(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	setenv("FWD_TEST_LEAK", "must-not-reach-the-command", 1);
	use_script(f, &f->cfg.exec.command,
		   "echo ---- >>\"$LOG\"\n"
		   "env | LC_ALL=C sort | grep -v -e '^PWD=' -e '^SHLVL=' "
		   "-e '^_=' >>\"$LOG\"\n");
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 42, two, 2, &err), 0);
	/* Twice = once: the command does not run again. */
	assert_int_equal(remap_apply(r, "c1", 42, two, 2, &err), 0);
	assert_true(exists(f->state, "exec.42.c1"));
	assert_int_equal(remap_revert(r, "c1", 42, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 42, &err), 0);
	assert_false(exists(f->state, "exec.42.c1"));
	assert_string_equal(slurp(f->log),
			    "----\n"
			    "FWD_ACTION=apply\n"
			    "FWD_ADDRESSES=10.1.0.81,10.1.0.82\n"
			    "FWD_FORWARDERS=fwd081,fwd082\n"
			    "FWD_JOB_ID=42\n"
			    "FWD_NODE=c1\n"
			    "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"
			    "----\n"
			    "FWD_ACTION=revert\n"
			    "FWD_ADDRESSES=10.1.0.81,10.1.0.82\n"
			    "FWD_FORWARDERS=fwd081,fwd082\n"
			    "FWD_JOB_ID=42\n"
			    "FWD_NODE=c1\n"
			    "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n");
	unsetenv("FWD_TEST_LEAK");
	remap_destroy(r);
}

static void lnet_setup(struct fx *f, const char *fail_on);

/* Action direct: the command runs with FWD_ACTION=direct and no
 * forwarders, once however often it is asked, and the revert undoes it. */
static void test_exec_direct(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	use_script(f, &f->cfg.exec.command,
		   "echo \"$FWD_ACTION $FWD_JOB_ID $FWD_NODE "
		   "[$FWD_FORWARDERS] [$FWD_ADDRESSES]\" >>\"$LOG\"\n");
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_direct(r, "c1", 42, &err), 0);
	assert_int_equal(remap_direct(r, "c1", 42, &err), 0);
	assert_true(exists(f->state, "exec.42.c1"));
	assert_int_equal(remap_revert(r, "c1", 42, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 42, &err), 0);
	assert_false(exists(f->state, "exec.42.c1"));
	assert_string_equal(slurp(f->log), "direct 42 c1 [] []\n"
					   "revert 42 c1 [] []\n");
	remap_destroy(r);
	/* With remap.exec.verify, direct is read back as verify-direct. */
	unlink(f->log);
	f->cfg.exec.verify = f->cfg.exec.command;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_direct(r, "c1", 43, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 43, &err), 0);
	assert_string_equal(slurp(f->log), "direct 43 c1 [] []\n"
					   "verify-direct 43 c1 [] []\n"
					   "revert 43 c1 [] []\n"
					   "verify-revert 43 c1 [] []\n");
	remap_destroy(r);
	memset(&f->cfg.exec.verify, 0, sizeof(f->cfg.exec.verify));
}

/* none records only; lwfs, lnet and verbs cannot give direct access. */
static void test_direct_refused(void **state)
{
	struct fx *f = *state;
	static const enum policy_driver drivers[] = {
		POLICY_DRIVER_LWFS, POLICY_DRIVER_LNET, POLICY_DRIVER_VERBS};
	static const char *const names[] = {"lwfs", "lnet", "verbs"};
	char want[200];
	fwd_error_t err;
	struct remap *r;

	f->cfg.driver = POLICY_DRIVER_NONE;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_direct(r, "c1", 7, &err), 0);
	remap_destroy(r);
	for (size_t i = 0; i < 3; i++) {
		if (drivers[i] == POLICY_DRIVER_LNET)
			lnet_setup(f, NULL);
		f->cfg.driver = drivers[i];
		r = remap_create(&f->cfg, &err);
		if (!r)
			fail_msg("%s: %s", names[i], err.text);
		assert_int_equal(remap_direct(r, "c1", 7, &err), -1);
		assert_int_equal(errno, ENOTSUP);
		snprintf(want, sizeof(want),
			 "%s: job 7: the driver cannot give a node direct "
			 "file-system access (no forwarder)",
			 names[i]);
		assert_string_equal(err.text, want);
		remap_destroy(r);
	}
}

/* remap.exec.verify reads each change back; the command and the verify
 * command are the same script here, told apart by FWD_ACTION.  With
 * "<log>.lie" present the apply "did not take": verify-apply fails, the
 * apply is undone and fails, and nothing is recorded as applied. */
static void test_exec_verify(void **state)
{
	struct fx *f = *state;
	char lie[300];
	fwd_error_t err;
	struct remap *r;

	use_script(f, &f->cfg.exec.command,
		   "echo \"$FWD_ACTION $FWD_FORWARDERS\" >>\"$LOG\"\n"
		   "if [ \"$FWD_ACTION\" = verify-apply ] && "
		   "[ -e \"$LOG.lie\" ]; then\n"
		   "  echo \"route to $FWD_FORWARDERS missing\" >&2; exit 3\n"
		   "fi\n");
	f->cfg.exec.verify = f->cfg.exec.command;
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 43, two, 2, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 43, &err), 0);
	assert_string_equal(slurp(f->log), "apply fwd081,fwd082\n"
					   "verify-apply fwd081,fwd082\n"
					   "revert fwd081,fwd082\n"
					   "verify-revert fwd081,fwd082\n");
	assert_int_equal(unlink(f->log), 0);

	snprintf(lie, sizeof(lie), "%s.lie", f->log);
	write_file(lie, 0644, "%s", "");
	assert_int_equal(remap_apply(r, "c1", 44, two, 2, &err), -1);
	assert_non_null(strstr(err.text, "exec: fwd081,fwd082: read back "
					 "(verify-apply) failed"));
	assert_non_null(strstr(err.text, "route to fwd081,fwd082 missing"));
	assert_false(exists(f->state, "exec.44.c1"));
	assert_string_equal(slurp(f->log), "apply fwd081,fwd082\n"
					   "verify-apply fwd081,fwd082\n"
					   "revert fwd081,fwd082\n");
	remap_destroy(r);
	f->cfg.exec.verify.argv = NULL;
	f->cfg.exec.verify.argc = 0;
}

static void test_exec_address_defaults_to_name(void **state)
{
	struct fx *f = *state;
	struct remap_target t = {"fwd090", NULL, NULL};
	fwd_error_t err;
	struct remap *r;

	use_script(f, &f->cfg.exec.command,
		   "echo \"$FWD_ACTION $FWD_FORWARDERS $FWD_ADDRESSES\" "
		   ">>\"$LOG\"\n");
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	/* Revert without apply: a no-op, the command does not run. */
	assert_int_equal(remap_revert(r, "c2", 5, &err), 0);
	assert_int_equal(remap_apply(r, "c2", 5, &t, 1, &err), 0);
	assert_string_equal(slurp(f->log), "apply fwd090 fwd090\n");
	remap_destroy(r);
}

static void test_exec_failure_tail(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 64];
	const char *tail;
	fwd_error_t err;
	struct remap *r;

	/* 700 bytes of noise, then the line that matters. */
	use_script(f, &f->cfg.exec.command,
		   "echo run >>\"$LOG\"\n"
		   "i=0; while [ $i -lt 70 ]; do printf 'noise-%03d ' $i >&2;"
		   " i=$((i+1)); done\n"
		   "echo >&2; echo 'remap: fabric manager said no' >&2\n"
		   "exit 3\n");
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 9, two, 1, &err), -1);
	assert_int_equal(errno, EIO);
	snprintf(want, sizeof(want),
		 "exec: apply fwd081: %s exited with "
		 "status 3: ",
		 f->script);
	assert_int_equal(strncmp(err.text, want, strlen(want)), 0);
	tail = err.text + strlen(want);
	assert_true(strlen(tail) <= 512);
	assert_true(strlen(tail) > 400);
	assert_non_null(
		strstr(tail, "noise-069  remap: fabric manager said no"));
	assert_null(strstr(tail, "noise-000"));
	assert_string_equal(tail + strlen(tail) - 29,
			    "remap: fabric manager said no");
	/* Failed apply leaves no state: revert does not run the command. */
	assert_false(exists(f->state, "exec.9.c1"));
	assert_int_equal(remap_revert(r, "c1", 9, &err), 0);
	assert_string_equal(slurp(f->log), "run\n");
	remap_destroy(r);
}

static void test_exec_not_executable(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 128];
	fwd_error_t err;
	struct remap *r;

	use_script(f, &f->cfg.exec.command, "exit 0\n");
	assert_int_equal(chmod(f->script, 0644), 0);
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 8, two, 1, &err), -1);
	snprintf(want, sizeof(want),
		 "exec: apply fwd081: %s could not be "
		 "executed (exit 127): execve %s failed: errno %d",
		 f->script, f->script, EACCES);
	assert_string_equal(err.text, want);
	assert_false(exists(f->state, "exec.8.c1"));
	remap_destroy(r);
}

static void test_exec_timeout_kills_group(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 64];
	fwd_error_t err;
	struct remap *r;
	pid_t bg;
	int gone = 0;

	/* A background child in the same group, then a hang. */
	use_script(f, &f->cfg.exec.command,
		   "sleep 30 & echo $! >\"$LOG\"\n"
		   "echo 'waiting for the fabric' >&2\n"
		   "wait\n");
	f->cfg.driver = POLICY_DRIVER_EXEC;
	f->cfg.timeout = 0.5;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	/* Killed at 0.5 s: a timeout not enforced would show as the
	 * script's exit 0 after 30 s, by value. */
	assert_int_equal(remap_apply(r, "c1", 3, two, 2, &err), -1);
	assert_int_equal(errno, ETIMEDOUT);
	snprintf(want, sizeof(want),
		 "exec: apply fwd081,fwd082: %s timed "
		 "out after 0.5 s (killed): waiting for the fabric",
		 f->script);
	assert_string_equal(err.text, want);
	bg = (pid_t)atol(slurp(f->log));
	assert_true(bg > 0);
	/* The grandchild died with the group (reaped by init shortly). */
	for (int i = 0; i < 200 && !gone; i++) {
		if (kill(bg, 0) < 0 && errno == ESRCH)
			gone = 1;
		else
			usleep(10000);
	}
	assert_true(gone);
	remap_destroy(r);
}

/*
 * The exec driver records its intent before the command runs: a command
 * that times out after changing the node, or a prolog killed while the
 * command runs (slurmd's PrologEpilogTimeout), leaves the intent behind,
 * and the epilog's revert undoes the change.  Reverting an intent that
 * was never applied, or twice, is harmless.
 */
#define CHANGE_THEN_HANG                                                  \
	"echo \"$FWD_ACTION $FWD_FORWARDERS\" >>\"$LOG\"\n"               \
	"case $FWD_ACTION in\n"                                           \
	"apply) echo \"$FWD_FORWARDERS\" >\"$LOG.applied\"; sleep 3 ;;\n" \
	"revert) rm -f \"$LOG.applied\" ;;\n"                             \
	"esac\n"

static void test_exec_intent_timeout(void **state)
{
	struct fx *f = *state;
	char applied[300];
	fwd_error_t err;
	struct remap *r;

	use_script(f, &f->cfg.exec.command, CHANGE_THEN_HANG);
	snprintf(applied, sizeof(applied), "%s.applied", f->log);
	f->cfg.driver = POLICY_DRIVER_EXEC;
	f->cfg.timeout = 0.5;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 61, two, 2, &err), -1);
	assert_int_equal(errno, ETIMEDOUT);
	/* the command changed the node before it was killed */
	assert_string_equal(slurp(applied), "fwd081,fwd082\n");
	assert_true(exists(f->state, "exec.61.c1"));
	assert_int_equal(remap_revert(r, "c1", 61, &err), 0);
	assert_false(exists(f->state, "exec.61.c1"));
	assert_false(exists(f->dir, "log.applied"));
	assert_string_equal(slurp(f->log), "apply fwd081,fwd082\n"
					   "revert fwd081,fwd082\n");
	/* twice: nothing left to undo, the command does not run */
	assert_int_equal(remap_revert(r, "c1", 61, &err), 0);
	assert_string_equal(slurp(f->log), "apply fwd081,fwd082\n"
					   "revert fwd081,fwd082\n");
	remap_destroy(r);
}

static void test_exec_intent_prolog_killed(void **state)
{
	struct fx *f = *state;
	char applied[300];
	fwd_error_t err;
	struct remap *r;
	pid_t pid;
	int status;

	use_script(f, &f->cfg.exec.command, CHANGE_THEN_HANG);
	snprintf(applied, sizeof(applied), "%s.applied", f->log);
	f->cfg.driver = POLICY_DRIVER_EXEC;
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	/* the node prolog, killed by slurmd while the command runs */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(remap_apply(r, "c1", 62, two, 1, &err) == 0 ? 0 : 1);
	for (int i = 0; i < 500 && !exists(f->dir, "log.applied"); i++)
		usleep(10000);
	assert_true(exists(f->dir, "log.applied"));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	/* the epilog */
	assert_int_equal(remap_revert(r, "c1", 62, &err), 0);
	assert_false(exists(f->dir, "log.applied"));
	assert_false(exists(f->state, "exec.62.c1"));
	assert_string_equal(slurp(f->log), "apply fwd081\nrevert fwd081\n");
	remap_destroy(r);
}

/* ---- lwfs --------------------------------------------------------------- */

static void lwfs_setup(struct fx *f, bool with_link, const char *remount)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/lwfs_default.vol", f->vol);
	write_file(p, 0644, "volume default\n");
	snprintf(p, sizeof(p), "%s/lwfs_fwd081.vol", f->vol);
	write_file(p, 0644, "volume fwd081\n");
	if (with_link) {
		snprintf(p, sizeof(p), "%s/%s", f->vol, s_link);
		assert_int_equal(symlink("lwfs_default.vol", p), 0);
	}
	if (remount)
		use_script(f, &f->cfg.lwfs.remount_command, remount);
	f->cfg.driver = POLICY_DRIVER_LWFS;
}

#define REMOUNT_LOG                                       \
	"echo \"$FWD_ACTION $FWD_JOB_ID $FWD_FORWARDERS " \
	"$FWD_VOLFILE\" >>\"$LOG\"\n"

static void test_lwfs_apply_revert(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 11, two, 1, &err), 0);
	assert_string_equal(link_of(f), "lwfs_fwd081.vol");
	assert_int_equal(remap_apply(r, "c1", 11, two, 1, &err), 0);
	assert_string_equal(link_of(f), "lwfs_fwd081.vol");
	assert_true(exists(f->state, "lwfs.11.c1"));
	assert_int_equal(remap_revert(r, "c1", 11, &err), 0);
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_int_equal(remap_revert(r, "c1", 11, &err), 0);
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_false(exists(f->state, "lwfs.11.c1"));
	assert_false(exists(f->vol, ".lwfs.vol.fwdalloc-tmp"));
	/* One remount per real change. */
	assert_string_equal(slurp(f->log),
			    "apply 11 fwd081 lwfs_fwd081.vol\n"
			    "revert 11 fwd081 lwfs_default.vol\n");
	remap_destroy(r);
}

/* Root's state directory: a link planted at <state_dir>/<driver>.lock is
 * not followed (nothing is created where it points), and a directory that
 * another account owns or others can write into is refused with the
 * reason; the node keeps its default mapping. */
static void test_state_dir_refusals(void **state)
{
	struct fx *f = *state;
	char lock[PATH_MAX], target[PATH_MAX];
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	assert_int_equal(mkdir(f->state, 0700), 0);
	snprintf(lock, sizeof(lock), "%s/lwfs.lock", f->state);
	snprintf(target, sizeof(target), "%s/created-by-root", f->dir);
	assert_int_equal(symlink(target, lock), 0);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 11, two, 1, &err), -1);
	assert_non_null(strstr(err.text, "lwfs.lock"));
	assert_false(exists(f->dir, "created-by-root"));
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_int_equal(unlink(lock), 0);

	assert_int_equal(chmod(f->state, 0777), 0);
	assert_int_equal(remap_apply(r, "c1", 11, two, 1, &err), -1);
	assert_non_null(strstr(err.text, "lets others write into it"));
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_int_equal(chmod(f->state, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(f->state, 65534, 65534), 0);
		assert_int_equal(remap_apply(r, "c1", 11, two, 1, &err), -1);
		assert_non_null(strstr(err.text, "owned by uid 65534"));
		assert_int_equal(chown(f->state, 0, 0), 0);
	}
	/* Safe again: it works. */
	assert_int_equal(remap_apply(r, "c1", 11, two, 1, &err), 0);
	assert_string_equal(link_of(f), "lwfs_fwd081.vol");
	assert_int_equal(remap_revert(r, "c1", 11, &err), 0);
	remap_destroy(r);
}

/* The link is read back after each change: a writer racing with the
 * driver makes the apply fail (the node keeps its default mapping), and
 * the driver puts back the link it found. */
static void test_lwfs_read_back(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	race_link_to = "lwfs_other.vol";
	assert_int_equal(remap_apply(r, "c1", 13, two, 1, &err), -1);
	assert_null(race_link_to);
	assert_non_null(strstr(err.text, "read back: "));
	assert_non_null(strstr(err.text, "points at \"lwfs_other.vol\", not "
					 "\"lwfs_fwd081.vol\" as just set"));
	/* Rolled back: the link it found, no state, no remount. */
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_false(exists(f->state, "lwfs.13.c1"));
	assert_int_not_equal(access(f->log, F_OK), 0);
	remap_destroy(r);
}

static void test_lwfs_no_previous_link(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, false, NULL);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 12, two, 1, &err), 0);
	assert_string_equal(link_of(f), "lwfs_fwd081.vol");
	assert_int_equal(remap_revert(r, "c1", 12, &err), 0);
	assert_false(exists(f->vol, s_link));
	remap_destroy(r);
}

static void test_lwfs_revert_leaves_foreign_link(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 17, two, 1, &err), 0);
	/* Someone else repoints the link while the job runs. */
	snprintf(p, sizeof(p), "%s/%s", f->vol, s_link);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink("lwfs_other.vol", p), 0);
	assert_int_equal(remap_revert(r, "c1", 17, &err), 0);
	assert_string_equal(link_of(f), "lwfs_other.vol");
	assert_false(exists(f->state, "lwfs.17.c1"));
	assert_string_equal(slurp(f->log), "apply 17 fwd081 lwfs_fwd081.vol\n");
	remap_destroy(r);
}

static void test_lwfs_refusals(void **state)
{
	struct fx *f = *state;
	struct remap_target t = {"fwd099", "10.1.0.99", NULL};
	char want[PATH_MAX + 128], p[PATH_MAX];
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 13, &t, 1, &err), -1);
	assert_int_equal(errno, ENOENT);
	snprintf(want, sizeof(want),
		 "lwfs: fwd099 (10.1.0.99): volfile "
		 "%s/lwfs_fwd099.vol does not exist",
		 f->vol);
	assert_string_equal(err.text, want);
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_int_equal(remap_apply(r, "c1", 13, two, 2, &err), -1);
	assert_string_equal(err.text,
			    "lwfs: fwd081: one forwarder per node, got 2");
	/* A regular file where the link should be is not ours to replace. */
	snprintf(p, sizeof(p), "%s/%s", f->vol, s_link);
	assert_int_equal(unlink(p), 0);
	write_file(p, 0644, "hand-written\n");
	assert_int_equal(remap_apply(r, "c1", 13, two, 1, &err), -1);
	snprintf(want, sizeof(want),
		 "lwfs: fwd081 (10.1.0.81): %s is not a "
		 "symbolic link; refusing to replace it",
		 p);
	assert_string_equal(err.text, want);
	assert_string_equal(slurp(p), "hand-written\n");
	assert_false(exists(f->state, "lwfs.13.c1"));
	assert_string_equal(slurp(f->log), "");
	remap_destroy(r);
}

static void test_lwfs_remount_failure_rolls_back(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 128];
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true,
		   REMOUNT_LOG "echo 'mount: /lwfs: busy' >&2\n"
			       "exit 2\n");
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 14, two, 1, &err), -1);
	snprintf(want, sizeof(want),
		 "lwfs: fwd081 (10.1.0.81): remount: %s "
		 "exited with status 2: mount: /lwfs: busy",
		 f->script);
	assert_string_equal(err.text, want);
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_false(exists(f->state, "lwfs.14.c1"));
	assert_int_equal(remap_revert(r, "c1", 14, &err), 0);
	assert_string_equal(slurp(f->log), "apply 14 fwd081 lwfs_fwd081.vol\n");
	remap_destroy(r);
}

/* Global, so the memory of a crashed child is still reachable (valgrind
 * would otherwise count it as lost in the child). */
static struct remap *crash_r;

/* Apply in a child that dies between symlink() and rename(). */
static void crash_apply(struct fx *f, uint32_t job)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		fwd_error_t err;

		crash_r = remap_create(&f->cfg, &err);
		crash_on_link_rename = 1;
		if (crash_r)
			remap_apply(crash_r, "c1", job, two, 1, &err);
		_exit(1); /* not reached when the crash happened */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 99);
	/* The crash left the temp link; the real link never moved. */
	assert_true(exists(f->vol, ".lwfs.vol.fwdalloc-tmp"));
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_true(exists(f->state, "lwfs.15.c1") || job != 15);
}

static void test_lwfs_crash_then_apply(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	crash_apply(f, 15);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	/* Apply again after the reboot: recovers and completes. */
	assert_int_equal(remap_apply(r, "c1", 15, two, 1, &err), 0);
	assert_false(exists(f->vol, ".lwfs.vol.fwdalloc-tmp"));
	assert_string_equal(link_of(f), "lwfs_fwd081.vol");
	/* The saved target is still the pre-crash one. */
	assert_int_equal(remap_revert(r, "c1", 15, &err), 0);
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_string_equal(slurp(f->log),
			    "apply 15 fwd081 lwfs_fwd081.vol\n"
			    "revert 15 fwd081 lwfs_default.vol\n");
	remap_destroy(r);
}

static void test_lwfs_crash_then_revert(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	lwfs_setup(f, true, REMOUNT_LOG);
	crash_apply(f, 16);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	/* The epilog runs after the crash: it restores and cleans up. */
	assert_int_equal(remap_revert(r, "c1", 16, &err), 0);
	assert_false(exists(f->vol, ".lwfs.vol.fwdalloc-tmp"));
	assert_false(exists(f->state, "lwfs.16.c1"));
	assert_string_equal(link_of(f), "lwfs_default.vol");
	assert_int_equal(remap_revert(r, "c1", 16, &err), 0);
	remap_destroy(r);
}

/* ---- lnet --------------------------------------------------------------- */

/*
 * lnetctl is tests/fixtures/lnetctl-fake (upstream's option tables, exit
 * 0 after its help on an unknown option, routes kept in f->dir/routes),
 * called through a wrapper that gives it its state directory: remap runs
 * commands with PATH alone in the environment.
 */
static char lnet_fail_on[64];

static void lnet_setup(struct fx *f, const char *fail_on)
{
	snprintf(f->arg1, sizeof(f->arg1), "%s/lnetctl", f->dir);
	write_file(f->arg1, 0755,
		   "#!/bin/sh\n"
		   "LNETCTL_STATE='%s'; export LNETCTL_STATE\n"
		   "exec /bin/sh '%s/lnetctl-fake' \"$@\"\n",
		   f->dir, FIXTURES);
	snprintf(lnet_fail_on, sizeof(lnet_fail_on), "%s",
		 fail_on ? fail_on : "-");
	f->cfg.lnet.lnetctl = f->arg1;
	f->cfg.driver = POLICY_DRIVER_LNET;
}

static void set_fail(struct fx *f, const char *verb, bool on)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/fail-%s-%s", f->dir, verb, lnet_fail_on);
	if (on)
		write_file(p, 0644, "");
	else
		unlink(p);
}

/* Make the fake lnetctl accept VERB and do nothing (or stop that). */
static void set_ignore(struct fx *f, const char *verb, bool on)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/ignore-%s", f->dir, verb);
	if (on)
		write_file(p, 0644, "");
	else
		unlink(p);
}

/* The routes the fake lnetctl holds: "NET GATEWAY HOP PRIORITY" lines. */
static const char *lnet_routes(const struct fx *f)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/routes", f->dir);
	return slurp(p);
}

/* How many `route show` calls read the routes back. */
static int lnet_shows(const struct fx *f)
{
	char p[PATH_MAX];
	const char *s;
	int n = 0;

	snprintf(p, sizeof(p), "%s/show-log", f->dir);
	for (s = slurp(p); *s; s++)
		n += *s == '\n';
	return n;
}

static void test_lnet_apply_revert(void **state)
{
	struct fx *f = *state;
	fwd_error_t err;
	struct remap *r;

	lnet_setup(f, NULL);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_revert(r, "c1", 20, &err), 0);
	assert_int_equal(remap_apply(r, "c1", 20, two, 2, &err), 0);
	/* lnetctl really holds the routes, with the hop count asked for,
	 * and the driver read each one back */
	assert_string_equal(lnet_routes(f), "o2ib 10.1.0.81@o2ib 1 0\n"
					    "o2ib 10.1.0.82@o2ib 1 0\n");
	assert_int_equal(lnet_shows(f), 2);
	assert_int_equal(remap_apply(r, "c1", 20, two, 2, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 20, &err), 0);
	assert_string_equal(lnet_routes(f), "");
	assert_int_equal(lnet_shows(f), 4);
	assert_int_equal(remap_revert(r, "c1", 20, &err), 0);
	assert_false(exists(f->state, "lnet.20.c1"));
	assert_string_equal(
		slurp(f->log),
		"route add --net o2ib --gateway 10.1.0.81@o2ib --hop-count 1\n"
		"route add --net o2ib --gateway 10.1.0.82@o2ib --hop-count 1\n"
		"route del --net o2ib --gateway 10.1.0.81@o2ib\n"
		"route del --net o2ib --gateway 10.1.0.82@o2ib\n");
	remap_destroy(r);
}

static void test_lnet_missing_nid(void **state)
{
	struct fx *f = *state;
	struct remap_target t[] = {
		{"fwd081", "10.1.0.81", "10.1.0.81@o2ib"},
		{"fwd083", "10.1.0.83", NULL},
		{"fwd084", NULL, "-x"},
	};
	fwd_error_t err;
	struct remap *r;

	lnet_setup(f, NULL);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 21, t, 2, &err), -1);
	assert_string_equal(err.text, "lnet: fwd083 (10.1.0.83): no LNet NID "
				      "in the topology");
	assert_int_equal(remap_apply(r, "c1", 21, &t[2], 1, &err), -1);
	assert_string_equal(err.text, "lnet: fwd084: invalid NID \"-x\"");
	assert_string_equal(slurp(f->log), "");
	remap_destroy(r);
}

static void test_lnet_add_failure_rolls_back(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 128];
	fwd_error_t err;
	struct remap *r;

	lnet_setup(f, "10.1.0.82@o2ib");
	set_fail(f, "add", true);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 22, two, 2, &err), -1);
	snprintf(want, sizeof(want),
		 "lnet: fwd082 (10.1.0.82@o2ib): route "
		 "add: %s exited with status 1: add:     - route: errno: -17 "
		 "descr: route exists",
		 f->arg1);
	assert_string_equal(err.text, want);
	assert_false(exists(f->state, "lnet.22.c1"));
	assert_int_equal(remap_revert(r, "c1", 22, &err), 0);
	assert_string_equal(
		slurp(f->log),
		"route add --net o2ib --gateway 10.1.0.81@o2ib --hop-count 1\n"
		"route add --net o2ib --gateway 10.1.0.82@o2ib --hop-count 1\n"
		"route del --net o2ib --gateway 10.1.0.81@o2ib\n");
	remap_destroy(r);
}

static void test_lnet_del_failure_retries(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 128];
	fwd_error_t err;
	struct remap *r;

	lnet_setup(f, "10.1.0.82@o2ib");
	f->cfg.lnet.hops = 0; /* no --hop-count */
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 23, two, 2, &err), 0);
	set_fail(f, "del", true);
	assert_int_equal(remap_revert(r, "c1", 23, &err), -1);
	snprintf(want, sizeof(want),
		 "lnet: 10.1.0.82@o2ib: route del: %s "
		 "exited with status 1: del:     - route: errno: -17 descr: "
		 "route exists",
		 f->arg1);
	assert_string_equal(err.text, want);
	assert_true(exists(f->state, "lnet.23.c1"));
	set_fail(f, "del", false);
	assert_int_equal(remap_revert(r, "c1", 23, &err), 0);
	assert_false(exists(f->state, "lnet.23.c1"));
	/* The retry deletes only the route that was left. */
	assert_string_equal(slurp(f->log),
			    "route add --net o2ib --gateway 10.1.0.81@o2ib\n"
			    "route add --net o2ib --gateway 10.1.0.82@o2ib\n"
			    "route del --net o2ib --gateway 10.1.0.81@o2ib\n"
			    "route del --net o2ib --gateway 10.1.0.82@o2ib\n"
			    "route del --net o2ib --gateway 10.1.0.82@o2ib\n");
	remap_destroy(r);
}

/*
 * lnetctl exits 0 after printing its help on an option it does not know,
 * and adds nothing: an add that does not show up in `route show` is a
 * failure, and the routes added before it are taken back.
 */
static void test_lnet_add_not_listed(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 160];
	fwd_error_t err;
	struct remap *r;

	lnet_setup(f, NULL);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	set_ignore(f, "add", true);
	assert_int_equal(remap_apply(r, "c1", 24, two, 2, &err), -1);
	snprintf(want, sizeof(want),
		 "lnet: fwd081 (10.1.0.81@o2ib): route add: %s exited 0 but "
		 "`route show` lists no route to o2ib via 10.1.0.81@o2ib",
		 f->arg1);
	assert_string_equal(err.text, want);
	assert_false(exists(f->state, "lnet.24.c1"));
	assert_string_equal(lnet_routes(f), "");

	/* the second gateway is the one lnetctl ignores: the first is
	 * deleted again */
	set_ignore(f, "add", false);
	assert_int_equal(remap_apply(r, "c1", 24, two, 1, &err), 0);
	assert_int_equal(remap_revert(r, "c1", 24, &err), 0);
	assert_string_equal(lnet_routes(f), "");
	remap_destroy(r);
}

/* The same for the fake itself: upstream's option table, where the old
 * --hops is unknown (help on stdout, exit 0, no route) and --hop-count and
 * its prefix --hop are known. */
static void test_lnet_fake_option_table(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX * 2];

	lnet_setup(f, NULL);
	snprintf(cmd, sizeof(cmd),
		 "%s route add --net o2ib --gateway 1@o2ib --hops 1 "
		 ">%s/out 2>%s/err",
		 f->arg1, f->dir, f->dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(lnet_routes(f), "");
	snprintf(cmd, sizeof(cmd), "%s/out", f->dir);
	assert_non_null(strstr(slurp(cmd), "route add: add a route"));
	snprintf(cmd, sizeof(cmd), "%s/err", f->dir);
	assert_string_equal(slurp(cmd),
			    "lnetctl: unrecognized option '--hops'\n");
	snprintf(cmd, sizeof(cmd),
		 "%s route add --net o2ib --gateway 1@o2ib --hop-count 2 && "
		 "%s route add --net o2ib --gateway 2@o2ib --hop 3",
		 f->arg1, f->arg1);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(lnet_routes(f), "o2ib 1@o2ib 2 0\n"
					    "o2ib 2@o2ib 3 0\n");
}

/* A del that lnetctl accepts but that leaves the route listed keeps it in
 * the state for a later revert. */
static void test_lnet_del_still_listed(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 160];
	fwd_error_t err;
	struct remap *r;

	lnet_setup(f, NULL);
	r = remap_create(&f->cfg, &err);
	assert_non_null(r);
	assert_int_equal(remap_apply(r, "c1", 25, two, 2, &err), 0);
	set_ignore(f, "del", true);
	assert_int_equal(remap_revert(r, "c1", 25, &err), -1);
	snprintf(want, sizeof(want),
		 "lnet: 10.1.0.81@o2ib: route del: %s exited 0 but `route "
		 "show` still lists the route to o2ib via 10.1.0.81@o2ib",
		 f->arg1);
	assert_string_equal(err.text, want);
	assert_true(exists(f->state, "lnet.25.c1"));
	set_ignore(f, "del", false);
	assert_int_equal(remap_revert(r, "c1", 25, &err), 0);
	assert_false(exists(f->state, "lnet.25.c1"));
	assert_string_equal(lnet_routes(f), "");
	remap_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_none),
		T(test_create_invalid),
		T(test_bad_names),
		T(test_exec_env),
		T(test_exec_verify),
		T(test_exec_direct),
		T(test_direct_refused),
		T(test_exec_address_defaults_to_name),
		T(test_exec_failure_tail),
		T(test_exec_not_executable),
		T(test_exec_timeout_kills_group),
		T(test_exec_intent_timeout),
		T(test_exec_intent_prolog_killed),
		T(test_lwfs_apply_revert),
		T(test_state_dir_refusals),
		T(test_lwfs_read_back),
		T(test_lwfs_no_previous_link),
		T(test_lwfs_revert_leaves_foreign_link),
		T(test_lwfs_refusals),
		T(test_lwfs_remount_failure_rolls_back),
		T(test_lwfs_crash_then_apply),
		T(test_lwfs_crash_then_revert),
		T(test_lnet_apply_revert),
		T(test_lnet_missing_nid),
		T(test_lnet_add_failure_rolls_back),
		T(test_lnet_del_failure_retries),
		T(test_lnet_add_not_listed),
		T(test_lnet_fake_option_table),
		T(test_lnet_del_still_listed),
#undef T
	};

	return cmocka_run_group_tests_name("remap", tests, NULL, NULL);
}
