/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Controller-side pieces that need no Slurm and no database: the audit
 * file writer (one write per record, concurrent writers) and reader
 * (filters), the audit records, the bounded child runner (result,
 * timeout, crash, exit status, large output), the job read from the
 * prolog environment.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "allocator/decide.h"
#include "common/run.h"
#include "common/timeutil.h"
#include "controller/audit.h"
#include "controller/hook_run.h"
#include "controller/hooks.h"
#include "controller/job.h"
#include "controller/ledger_store.h"
#include "controller/profile_ctl.h"
#include "controller/publish.h"
#include "db/db.h"
#include "policies/policy.h"

static char tmpdir[] = "/tmp/fwd-test-ctl.XXXXXX";

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_audit_append(void **state)
{
	char path[256];
	fwd_error_t err;
	json_t *r = json_pack("{s:s,s:i}", "job_id", "42", "ts", 7);
	char *text;

	/* The directory is created on first use. */
	snprintf(path, sizeof(path), "%s/log/audit.jsonl", tmpdir);
	assert_int_equal(audit_append(path, r, &err), 0);
	assert_int_equal(audit_append_line(path, "{\"job_id\":\"43\"}", &err),
			 0);
	text = slurp(path);
	assert_string_equal(text, "{\"job_id\":\"42\",\"ts\":7}\n"
				  "{\"job_id\":\"43\"}\n");
	free(text);
	json_decref(r);
}

static void test_audit_refusals(void **state)
{
	static const struct {
		const char *path, *line, *msg;
		int err;
	} cases[] = {
		{"", "{}", "audit file: no path configured", EINVAL},
		{"/x", "{\"a\":\n1}", "audit record contains a newline",
		 EINVAL},
		{"/proc/fwd-no-such/a/b.jsonl", "{}",
		 "audit directory /proc/fwd-no-such/a: No such file or "
		 "directory",
		 ENOENT},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err;

		errno = 0;
		assert_int_equal(
			audit_append_line(cases[i].path, cases[i].line, &err),
			-1);
		assert_int_equal(errno, cases[i].err);
		assert_string_equal(err.text, cases[i].msg);
	}
}

/* n processes, each running body(w, path) for its number w, all exit 0. */
static void run_writers(int n, int (*body)(int w, const char *path),
			const char *path)
{
	pid_t pids[16];

	assert_true(n <= 16);
	for (int w = 0; w < n; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0)
			_exit(body(w, path));
	}
	for (int w = 0; w < n; w++) {
		int st;

		assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

enum { WRITERS = 8, RECORDS = 300, PAD = 599, ROUNDS = 40 };

/* Writer w of test_audit_concurrent: RECORDS records, PAD bytes each. */
static int append_padded(int w, const char *path)
{
	char pad[PAD + 1];

	memset(pad, 'x', PAD);
	pad[PAD] = '\0';
	for (int i = 0; i < RECORDS; i++) {
		json_t *r =
			json_pack("{s:i,s:i,s:s}", "w", w, "i", i, "pad", pad);

		if (audit_append(path, r, NULL) < 0)
			return 1;
		json_decref(r);
	}
	return 0;
}

/* Many processes appending at once: every record whole, none lost. */
static void test_audit_concurrent(void **state)
{
	char path[256];
	char *text, *line, *save = NULL;
	int lines = 0;

	snprintf(path, sizeof(path), "%s/concurrent.jsonl", tmpdir);
	run_writers(WRITERS, append_padded, path);
	text = slurp(path);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		json_t *r = json_loads(line, 0, NULL);

		assert_non_null(r);
		assert_int_equal(
			strlen(json_string_value(json_object_get(r, "pad"))),
			PAD);
		json_decref(r);
		lines++;
	}
	assert_int_equal(lines, WRITERS * RECORDS);
	free(text);
}

/* Writer w of test_audit_order: ROUNDS pairs of lines, each pair under
 * audit_order_lock() with a pause between its lines. */
static int append_pairs(int w, const char *path)
{
	for (int i = 0; i < ROUNDS; i++) {
		char a[64], b[64];
		int fd = audit_order_lock(path);

		if (fd < 0)
			return 2;
		snprintf(a, sizeof(a), "{\"b\":\"%d.%d\"}", w, i);
		snprintf(b, sizeof(b), "{\"e\":\"%d.%d\"}", w, i);
		if (audit_append_line(path, a, NULL) < 0)
			return 1;
		usleep(300);
		if (audit_append_line(path, b, NULL) < 0)
			return 1;
		audit_order_unlock(fd);
	}
	return 0;
}

/* Writers holding audit_order_lock() do not interleave: each one's
 * "begin" line is followed by its own "end" line, with a pause between
 * them that, without the lock, lets other writers in. */
static void test_audit_order(void **state)
{
	char path[256], prev[64] = "";
	char *text, *line, *save = NULL;
	int lines = 0;

	(void)state;
	assert_int_equal(audit_order_lock(NULL), -1);
	assert_int_equal(audit_order_lock(""), -1);
	audit_order_unlock(-1);
	snprintf(path, sizeof(path), "%s/order/audit.jsonl", tmpdir);
	run_writers(WRITERS, append_pairs, path);
	text = slurp(path);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		if (lines % 2 == 0) {
			assert_true(!strncmp(line, "{\"b\":", 5));
			snprintf(prev, sizeof(prev), "%s", line + 5);
		} else {
			/* Its own end, right after its begin. */
			assert_true(!strncmp(line, "{\"e\":", 5));
			assert_string_equal(line + 5, prev);
		}
	}
	assert_int_equal(lines, 2 * WRITERS * ROUNDS);
	free(text);
}

struct seen {
	char ids[8][24];
	size_t n;
	size_t bad;
};

static int collect(void *arg, unsigned long lineno, const char *line,
		   const json_t *rec)
{
	struct seen *s = arg;

	if (!rec) {
		s->bad++;
		return 0;
	}
	if (s->n < 8)
		snprintf(s->ids[s->n++], sizeof(s->ids[0]), "%s",
			 json_string_value(json_object_get(rec, "job_id")));
	return 0;
}

static void test_audit_read(void **state)
{
	static const struct {
		struct audit_filter f;
		const char *ids; /* matching job ids, in file order */
	} cases[] = {
		{{NULL, NULL, false, 0}, "1 2 3"},
		{{"2", NULL, false, 0}, "2"},
		{{NULL, "bob", false, 0}, "2 3"},
		{{"3", "alice", false, 0}, ""},
		{{NULL, NULL, true, 200}, "2 3"},
		{{NULL, "bob", true, 300}, "3"},
		{{"9", NULL, false, 0}, ""},
	};
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/read.jsonl", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"job_id\":\"1\",\"user\":\"alice\",\"ts\":100}\n"
	      "not json\n"
	      "{\"job_id\":\"2\",\"user\":\"bob\",\"ts\":200}\n"
	      "{\"job_id\":\"3\",\"user\":\"bob\",\"ts\":300}",
	      f);
	fclose(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seen s = {.n = 0};
		fwd_error_t err;
		char got[64] = "";

		assert_int_equal(
			audit_read(path, &cases[i].f, collect, &s, &err), 0);
		for (size_t k = 0; k < s.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", k ? " " : "", s.ids[k]);
		assert_string_equal(got, cases[i].ids);
		/* A line that is not JSON is always reported. */
		assert_int_equal(s.bad, 1);
	}

	/* No file yet: ENOENT, so callers can say "no record". */
	{
		struct seen s = {.n = 0};
		fwd_error_t err;

		snprintf(path, sizeof(path), "%s/none.jsonl", tmpdir);
		errno = 0;
		assert_int_equal(audit_read(path, NULL, collect, &s, &err), -1);
		assert_int_equal(errno, ENOENT);
		assert_int_equal(s.n, 0);
	}
}

/* The whole trail: ENOENT only when neither the file nor a rotated copy
 * exists; a missing live file beside its copies is no error. */
static void test_audit_read_all_missing(void **state)
{
	static const struct {
		const char *what;
		bool one, two, live; /* path.1, path.2, path exist */
		int rv;
		const char *ids;
	} cases[] = {
		{"nothing at all", false, false, false, -1, ""},
		{"the live file only", false, false, true, 0, "3"},
		{"rotated copies only", true, true, false, 0, "1 2"},
		{"the first copy only", true, false, false, 0, "2"},
		{"a gap: .2 without .1", false, true, true, 0, "3"},
		{"all three", true, true, true, 0, "1 2 3"},
	};
	char path[256], name[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/all.jsonl", tmpdir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static const char *const rec[] = {
			"{\"job_id\":\"1\",\"ts\":100}\n",
			"{\"job_id\":\"2\",\"ts\":200}\n",
			"{\"job_id\":\"3\",\"ts\":300}\n",
		};
		const bool exists[] = {cases[i].two, cases[i].one,
				       cases[i].live};
		const char *const suffix[] = {".2", ".1", ""};
		struct seen s = {.n = 0};
		fwd_error_t err;
		char got[64] = "";
		int rv;

		for (int k = 0; k < 3; k++) {
			snprintf(name, sizeof(name), "%s%s", path, suffix[k]);
			unlink(name);
			if (exists[k]) {
				FILE *f = fopen(name, "w");

				assert_non_null(f);
				fputs(rec[k], f);
				fclose(f);
			}
		}
		errno = 0;
		rv = audit_read_all(path, NULL, collect, &s, &err);
		if (rv != cases[i].rv || (rv < 0 && errno != ENOENT))
			fail_msg("%s: %d (errno %d), want %d", cases[i].what,
				 rv, errno, cases[i].rv);
		for (size_t k = 0; k < s.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", k ? " " : "", s.ids[k]);
		if (strcmp(got, cases[i].ids))
			fail_msg("%s: '%s', want '%s'", cases[i].what, got,
				 cases[i].ids);
	}
	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof(name), "%s%s", path,
			 k == 0	  ? ".2"
			 : k == 1 ? ".1"
				  : "");
		unlink(name);
	}
}

/* A compressed copy whose data is damaged: an error naming the line where
 * reading stopped, not a silently shorter trail. */
static void test_audit_read_damaged_gz(void **state)
{
	char path[256];
	struct seen s = {.n = 0};
	fwd_error_t err = {""};
	gzFile gz;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/damaged.jsonl.1.gz", tmpdir);
	gz = gzopen(path, "wb");
	assert_non_null(gz);
	for (int i = 0; i < 2000; i++)
		gzprintf(gz, "{\"job_id\":\"%d\",\"user\":\"u%d\",\"ts\":%d}\n",
			 i, i * 7919 % 1000, 100 + i);
	assert_int_equal(gzclose(gz), Z_OK);
	/* overwrite compressed bytes well inside the deflate stream */
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 200, SEEK_SET), 0);
	for (int i = 0; i < 64; i++)
		fputc(0xff, f);
	fclose(f);
	errno = 0;
	assert_int_equal(audit_read(path, NULL, collect, &s, &err), -1);
	if (!strstr(err.text, "damaged.jsonl.1.gz: line "))
		fail_msg("message: %s", err.text);
	unlink(path);
}

/* A batch's decision files: written under temporary names first, in
 * place only once finished; nothing visible before, nothing left after;
 * a file that cannot be finished leaves nothing. */
static void test_publish_two_steps(void **state)
{
	char dir[300], path[400], tmpl[PATH_MAX];
	struct policy p;
	struct ctl_job j[3];
	struct ctl_pub pb[3];
	fwd_error_t err;
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s/decisions", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	memset(&p, 0, sizeof(p));
	p.remap.decision_dir = dir;
	for (int i = 0; i < 3; i++) {
		memset(&j[i], 0, sizeof(j[i]));
		j[i].job_num = 700 + (uint64_t)i;
		snprintf(j[i].job_id, sizeof(j[i].job_id), "%d", 700 + i);
		j[i].user = "alice";
		j[i].name = "app";
		j[i].nodes = "c[1-2]";
		/* Direct access: the row needs no database. */
		assert_int_equal(ctl_publish_prepare(NULL, &p, &j[i], true,
						     NULL, &pb[i], &err),
				 0);
		assert_true(pb[i].fd >= 0);
		/* No database row can stand in for a direct row: synced. */
		assert_true(pb[i].sync);
		snprintf(path, sizeof(path), "%s/%d.decision", dir, 700 + i);
		assert_string_equal(pb[i].path, path);
		assert_int_equal(stat(path, &sb), -1);
		assert_int_equal(stat(pb[i].tmp, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, 0644);
	}
	for (int i = 0; i < 2; i++) {
		char *text;

		assert_int_equal(ctl_publish_finish(&p, &j[i], &pb[i], &err),
				 0);
		assert_int_equal(pb[i].fd, -1);
		assert_int_equal(stat(pb[i].tmp, &sb), -1);
		text = slurp(pb[i].path);
		assert_non_null(text);
		assert_non_null(strstr(text, "\"action\":\"direct\""));
		assert_non_null(strstr(text, "\"nodes\":\"c[1-2]\""));
		free(text);
		/* Finishing twice is a no-op. */
		assert_int_equal(ctl_publish_finish(&p, &j[i], &pb[i], &err),
				 0);
	}
	/* The third cannot be renamed into place (its temporary file is
	 * gone): an error naming the job, and no file left. */
	snprintf(tmpl, sizeof(tmpl), "%s", pb[2].tmp);
	assert_int_equal(unlink(tmpl), 0);
	assert_int_equal(ctl_publish_finish(&p, &j[2], &pb[2], &err), -1);
	assert_non_null(strstr(err.text, "job 702"));
	assert_int_equal(stat(pb[2].path, &sb), -1);
	/* Without remap.decision_dir there is nothing to do. */
	p.remap.decision_dir = NULL;
	assert_int_equal(
		ctl_publish_prepare(NULL, &p, &j[0], true, NULL, &pb[0], &err),
		0);
	assert_int_equal(pb[0].fd, -1);
	assert_int_equal(ctl_publish_finish(&p, &j[0], &pb[0], &err), 0);
}

/* Every record has the documented fields, in the documented order. */
static void test_audit_records(void **state)
{
	static const char *const keys =
		"time ts event job_id user account partition name nodes "
		"request action reasons inputs forwarders_before "
		"forwarders_after mapping outcome decision elapsed_us";
	struct ctl_job j = {.job_num = 42,
			    .job_id = "42",
			    .user = "alice",
			    .name = "app",
			    .nodes = "c[1-2]",
			    .request = FWD_REQ_SCALE,
			    .request_name = "scale"};
	const struct {
		json_t *rec;
		const char *event, *outcome;
		json_int_t elapsed;
	} cases[] = {
		{audit_record_fallback(&j, NULL, "prolog", "db down", 1000.25,
				       250),
		 "prolog", "fallback: db down", 250},
		{audit_record_fallback(&j, NULL, "epilog", "killed", 1000, 9),
		 "epilog", "fallback: killed", 9},
		{audit_record_release(&j, 1000, 3, NULL, 7), "epilog",
		 "released 3 allocation row(s)", 7},
		{audit_record_release(&j, 1000, 0, "gone", 7), "epilog",
		 "fallback: gone", 7},
		{audit_record_reconcile(42, 1000, 2), "reconcile",
		 "released 2 allocation row(s)", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = cases[i].rec;
		char got[512] = "";

		assert_non_null(r);
		for (void *it = json_object_iter(r); it;
		     it = json_object_iter_next(r, it)) {
			const char *k = json_object_iter_key(it);

			if (!strcmp(k, "policy_digest"))
				continue;
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", got[0] ? " " : "", k);
		}
		assert_string_equal(got, keys);
		assert_string_equal(
			json_string_value(json_object_get(r, "event")),
			cases[i].event);
		assert_string_equal(
			json_string_value(json_object_get(r, "outcome")),
			cases[i].outcome);
		assert_string_equal(
			json_string_value(json_object_get(r, "job_id")), "42");
		assert_int_equal(
			json_integer_value(json_object_get(r, "elapsed_us")),
			cases[i].elapsed);
		assert_int_equal(json_integer_value(json_object_get(r, "ts")),
				 1000);
		json_decref(r);
	}
}

static int child_ok(void *arg, int fd)
{
	return write(fd, "A hello", 7) == 7 ? 0 : 1;
}

static int child_big(void *arg, int fd)
{
	static char buf[300000];

	memset(buf, 'y', sizeof(buf));
	for (size_t off = 0; off < sizeof(buf);) {
		ssize_t w = write(fd, buf + off, sizeof(buf) - off);

		if (w <= 0)
			return 1;
		off += (size_t)w;
	}
	return 0;
}

static int child_sleep(void *arg, int fd)
{
	if (write(fd, "partial", 7) != 7)
		return 1;
	sleep(30);
	return 0;
}

static int child_crash(void *arg, int fd)
{
	/* cmocka catches SIGSEGV in-process; SIGKILL stands for any death
	 * by signal. */
	kill(getpid(), SIGKILL);
	return 0;
}

static int child_status(void *arg, int fd)
{
	return 3;
}

static void test_bounded(void **state)
{
	static const struct {
		int (*fn)(void *, int);
		double timeout;
		int rv;
		const char *msg;
		const char *out; /* NULL: don't check */
		size_t out_len;
	} cases[] = {
		{child_ok, 5, 0, "", "A hello", 7},
		{child_big, 5, 0, "", NULL, 300000},
		{child_sleep, 0.3, -1, "timed out after 0.3 s", "partial", 7},
		{child_crash, 5, -1, "killed by signal 9", NULL, 0},
		{child_status, 5, -1, "exited with status 3", NULL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fwd_error_t err = {""};
		char *out = NULL;

		/* Bounded: child_sleep's 30 s end in exit 0, so a timeout
		 * not enforced shows by value. */
		assert_int_equal(ctl_run_bounded(cases[i].timeout, cases[i].fn,
						 NULL, &out, &err),
				 cases[i].rv);
		assert_string_equal(err.text, cases[i].msg);
		if (cases[i].out)
			assert_string_equal(out, cases[i].out);
		if (cases[i].out_len)
			assert_int_equal(strlen(out), cases[i].out_len);
		free(out);
	}
}

static void test_job_from_env(void **state)
{
	static const struct {
		const char *id, *req, *acct;
		int rv;
		const char *msg, *request;
		enum fwd_request r;
	} cases[] = {
		{"42", "scale", "phys", 0, "", "scale", FWD_REQ_SCALE},
		{"42", NULL, "(null)", 0, "", "not requested", FWD_REQ_NONE},
		{"42", "shadow", NULL, 0, "", "shadow", FWD_REQ_SHADOW},
		{NULL, NULL, NULL, -1,
		 "SLURM_JOB_ID is not set: this command is run by slurmctld "
		 "as PrologSlurmctld or EpilogSlurmctld",
		 NULL, 0},
#define NOT_AN_ID(v, shown)                                          \
	{v,                                                          \
	 NULL,                                                       \
	 NULL,                                                       \
	 -1,                                                         \
	 "SLURM_JOB_ID=\"" shown "\": not a job id (1..4294967295)", \
	 NULL,                                                       \
	 0}
		NOT_AN_ID("12x", "12x"),
		/* Accepted before strtoull's leniency was closed (issue: the
		 * environment took what the command line refused). */
		NOT_AN_ID("-1", "-1"),
		NOT_AN_ID("4294967296", "4294967296"),
		NOT_AN_ID(" 5", " 5"),
		NOT_AN_ID("5 ", "5 "),
		NOT_AN_ID("+5", "+5"),
		NOT_AN_ID("05", "05"),
		NOT_AN_ID("0", "0"),
		{"", NULL, NULL, -1,
		 "SLURM_JOB_ID is not set: this command is run by slurmctld "
		 "as PrologSlurmctld or EpilogSlurmctld",
		 NULL, 0},
		NOT_AN_ID("18446744073709551615", "18446744073709551615"),
		NOT_AN_ID("5\n", "5\\x0a"),
#undef NOT_AN_ID
		{"4294967295", NULL, NULL, 0, "", "not requested",
		 FWD_REQ_NONE},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_job j;
		fwd_error_t err = {""};

		if (cases[i].id)
			setenv("SLURM_JOB_ID", cases[i].id, 1);
		else
			unsetenv("SLURM_JOB_ID");
		if (cases[i].req)
			setenv("SPANK_IO_UPGRADE", cases[i].req, 1);
		else
			unsetenv("SPANK_IO_UPGRADE");
		if (cases[i].acct)
			setenv("SLURM_JOB_ACCOUNT", cases[i].acct, 1);
		else
			unsetenv("SLURM_JOB_ACCOUNT");
		setenv("SLURM_JOB_NODELIST", "c[1-4]", 1);
		setenv("SLURM_JOB_NUM_NODES", "4", 1);
		assert_int_equal(ctl_job_from_env(&j, &err), cases[i].rv);
		assert_string_equal(err.text, cases[i].msg);
		if (cases[i].rv < 0)
			continue;
		assert_string_equal(j.job_id, cases[i].id);
		assert_int_equal(j.job_num, strtoull(cases[i].id, NULL, 10));
		assert_string_equal(j.request_name, cases[i].request);
		assert_int_equal(j.request, cases[i].r);
		assert_int_equal(j.n_nodes, 4);
		if (cases[i].acct && strcmp(cases[i].acct, "(null)"))
			assert_string_equal(j.account, cases[i].acct);
		else
			assert_null(j.account);
	}
}

#define assert_near(a, b) assert_near_((a), (b), #a)
static void assert_near_(double a, double b, const char *what)
{
	double eps = 1e-9 * (b < 0 ? -b : b) + 1e-9;

	if (!(a - b <= eps && b - a <= eps))
		fail_msg("%s = %.17g, want %.17g", what, a, b);
}

/* The allocator's view of a profile (moved with profile_to_alloc). */
static void test_to_alloc(void **state)
{
	static const struct {
		enum fwd_io_mode in;
		enum fwd_io_mode out;
	} modes[] = {
		{FWD_IO_NONE, FWD_IO_NONE}, {FWD_IO_1_1, FWD_IO_1_1},
		{FWD_IO_N_1, FWD_IO_N_1},   {FWD_IO_N_M, FWD_IO_N_M},
		{FWD_IO_N_N, FWD_IO_N_N},
	};
	struct profile p = {
		.io_volume_bytes = 123,
		.io_nodes = 45,
		.node_bandwidth_bps = 6,
		.peak_bandwidth_bps = 7,
		.iops = 8,
		.mdops = 9,
		.metadata_queue = 10,
		.runs = 11,
		.n_bw = 2,
		.bw = {{1, 1e9}, {4, 3e9}},
	};
	struct alloc_bw_point bw[PROFILE_MAX_BW];
	struct alloc_profile a;

	(void)state;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		p.io_mode = modes[i].in;
		profile_to_alloc(&p, &a, bw);
		assert_int_equal(a.io_mode, modes[i].out);
		if (modes[i].out != FWD_IO_NONE)
			assert_string_equal(fwd_io_mode_name(a.io_mode),
					    fwd_io_mode_name(p.io_mode));
	}
	assert_int_equal(a.io_volume_bytes, 123);
	assert_int_equal(a.io_nodes, 45);
	assert_near(a.node_bandwidth_bps, 6);
	assert_near(a.peak_bandwidth_bps, 7);
	assert_near(a.iops, 8);
	assert_near(a.mdops, 9);
	assert_near(a.metadata_queue, 10);
	assert_int_equal(a.runs, 11);
	assert_int_equal(a.n_bw, 2);
	assert_ptr_equal(a.bw, bw);
	assert_int_equal(a.bw[1].k, 4);
	assert_near(a.bw[1].bps, 3e9);
	assert_near(a.direct_bps, 0);
	p.n_bw = 0;
	profile_to_alloc(&p, &a, bw);
	assert_null(a.bw);
	/* k = 0, direct file-system access, is kept apart from the curve */
	p.n_bw = 3;
	p.bw[0] = (struct profile_bw){0, 5e9, 2, 0, false};
	p.bw[1] = (struct profile_bw){1, 1e9, 3, 0, false};
	p.bw[2] = (struct profile_bw){4, 3e9, 1, 0, false};
	profile_to_alloc(&p, &a, bw);
	assert_near(a.direct_bps, 5e9);
	assert_int_equal(a.n_bw, 2);
	assert_int_equal(a.bw[0].k, 1);
	assert_near(a.bw[0].bps, 1e9);
	assert_int_equal(a.bw[1].k, 4);
	assert_near(a.bw[1].bps, 3e9);
}

/* Strings from the environment made safe for JSON and the database:
 * valid UTF-8 kept, everything else escaped, cut at whole units. */
static void test_escape(void **state)
{
	static const struct {
		const char *in;
		size_t max;
		const char *out;
	} cases[] = {
		{"app", 255, "app"},
		{"", 255, ""},
		{"a\\b", 255, "a\\\\b"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 255,
		 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
		{"\xff\xfe", 255, "\\xff\\xfe"},
		{"a\nb\tc\x7f", 255, "a\\x0ab\\x09c\\x7f"},
		{"\"q\"", 255, "\"q\""},
		/* overlong, surrogate, beyond U+10FFFF, cut short */
		{"\xc0\xaf", 255, "\\xc0\\xaf"},
		{"\xed\xa0\x80", 255, "\\xed\\xa0\\x80"},
		{"\xf4\x90\x80\x80", 255, "\\xf4\\x90\\x80\\x80"},
		{"x\xe2\x82", 255, "x\\xe2\\x82"},
		/* exactly the limit: kept whole */
		{"abcdefghij", 10, "abcdefghij"},
		/* over it: cut, marked with "...", within the limit */
		{"abcdefghijk", 10, "abcdefg..."},
		/* an escape is never split */
		{"ab\xff\xff\xff", 10, "ab\\xff..."},
		/* limits count characters, not bytes */
		{"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4, "\xc3\xa9..."},
	};
	char out[1100];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ctl_escape(cases[i].in, cases[i].max, out, sizeof(out));
		if (strcmp(out, cases[i].out))
			fail_msg("case %zu: \"%s\", want \"%s\"", i, out,
				 cases[i].out);
	}
}

/* Set the job environment: id 42 on c[1-4], then NAME=VALUE pairs (a NULL
 * value unsets). */
static void job_env(const char *req, const char *name)
{
	setenv("SLURM_JOB_ID", "42", 1);
	setenv("SLURM_JOB_USER", "alice", 1);
	setenv("SLURM_JOB_NODELIST", "c[1-4]", 1);
	setenv("SLURM_JOB_NUM_NODES", "4", 1);
	unsetenv("SLURM_JOB_ACCOUNT");
	if (req)
		setenv("SPANK_IO_UPGRADE", req, 1);
	else
		unsetenv("SPANK_IO_UPGRADE");
	if (name)
		setenv("SLURM_JOB_NAME", name, 1);
	else
		unsetenv("SLURM_JOB_NAME");
}

/*
 * A SPANK_IO_UPGRADE that is not a mode (a user's own plugstack can set
 * anything) is not an error: the job is read, keeps no request, and says
 * why with the value escaped and cut.
 */
static void test_job_bad_request(void **state)
{
	char big[301], want[400];
	static const struct {
		const char *req, *why;
	} cases[] = {
		{"faster", "SPANK_IO_UPGRADE=\"faster\" is not a mode (auto, "
			   "scale, isolate, off, shadow)"},
		{"", "SPANK_IO_UPGRADE=\"\" is not a mode (auto, scale, "
		     "isolate, off, shadow)"},
		{"none", "SPANK_IO_UPGRADE=\"none\" is not a mode (auto, "
			 "scale, isolate, off, shadow)"},
		{"sc\xff\nale\"", "SPANK_IO_UPGRADE=\"sc\\xff\\x0aale\\\"\" "
				  "is not a mode (auto, scale, isolate, off, "
				  "shadow)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_job j;
		fwd_error_t err = {""};

		job_env(cases[i].req, "app");
		assert_int_equal(ctl_job_from_env(&j, &err), 0);
		assert_int_equal(j.request, FWD_REQ_NONE);
		assert_string_equal(j.request_name, "invalid");
		assert_string_equal(j.bad_request, cases[i].why);
		assert_string_equal(j.name, "app");
	}
	/* 300 bytes: the first 61 characters and "..." */
	memset(big, 'y', 300);
	big[300] = '\0';
	{
		struct ctl_job j;
		fwd_error_t err = {""};

		job_env(big, "app");
		assert_int_equal(ctl_job_from_env(&j, &err), 0);
		snprintf(want, sizeof(want),
			 "SPANK_IO_UPGRADE=\"%.61s...\" is not a mode (auto, "
			 "scale, isolate, off, shadow)",
			 big);
		assert_string_equal(j.bad_request, want);
		assert_true(strlen(j.bad_request) < 255 - strlen("fallback: "));
	}
	/* a good value leaves it empty */
	{
		struct ctl_job j;
		fwd_error_t err = {""};

		job_env("isolate", "app");
		assert_int_equal(ctl_job_from_env(&j, &err), 0);
		assert_string_equal(j.bad_request, "");
		assert_string_equal(j.request_name, "isolate");
	}
	unsetenv("SPANK_IO_UPGRADE");
}

/* Job names that are not UTF-8 or longer than jobs.name (VARCHAR(255))
 * are escaped and cut, and reach the audit record. */
static void test_job_odd_names(void **state)
{
	char big[301], want[300];
	struct ctl_job j;
	fwd_error_t err = {""};
	json_t *rec;

	(void)state;
	job_env("scale", "r\xe9sum\xe9\x01.sh");
	assert_int_equal(ctl_job_from_env(&j, &err), 0);
	assert_string_equal(j.name, "r\\xe9sum\\xe9\\x01.sh");
	rec = audit_record_fallback(&j, NULL, "prolog", "x", 1000, 1);
	assert_string_equal(json_string_value(json_object_get(rec, "name")),
			    "r\\xe9sum\\xe9\\x01.sh");
	json_decref(rec);

	memset(big, 'n', 300);
	big[300] = '\0';
	job_env("scale", big);
	assert_int_equal(ctl_job_from_env(&j, &err), 0);
	snprintf(want, sizeof(want), "%.252s...", big);
	assert_string_equal(j.name, want);
	rec = audit_record_fallback(&j, NULL, "prolog", "x", 1000, 1);
	assert_string_equal(json_string_value(json_object_get(rec, "name")),
			    want);
	json_decref(rec);
	unsetenv("SLURM_JOB_NAME");
}

/* A policy whose database cannot be reached, failing closed, auditing to
 * path. */
static struct policy *closed_policy(const char *path)
{
	struct policy *p = policy_defaults();

	assert_non_null(p);
	p->access.fail = POLICY_FAIL_CLOSED;
	p->access.mode = POLICY_MODE_OPT_IN;
	free(p->audit.file);
	p->audit.file = strdup(path);
	free(p->database.socket);
	p->database.socket = strdup("/nonexistent/fwdalloc-test.sock");
	p->database.timeout = 1;
	p->decision.decide_timeout = 5;
	return p;
}

/*
 * A bad SPANK_IO_UPGRADE is the user's doing, not fwdalloc being broken:
 * the prolog falls back (default mapping) and says why in the audit file,
 * but does not stop the job even under access.fail: closed.  A broken
 * fwdalloc (no database) still does.
 */
static void test_prolog_bad_request_open(void **state)
{
	char path[300];
	struct ctl_outcome out;
	struct ctl_job j;
	struct policy *p;
	fwd_error_t err = {""};
	char *text, *line;
	json_t *rec;

	(void)state;
	snprintf(path, sizeof(path), "%s/bad-request.jsonl", tmpdir);
	p = closed_policy(path);

	job_env("bogus\xff", "app");
	assert_int_equal(ctl_job_from_env(&j, &err), 0);
	ctl_prolog(p, NULL, &j, fwd_clock_real(), &out);
	assert_true(out.fallback);
	assert_false(out.stop_job);
	text = slurp(path);
	line = strtok(text, "\n");
	assert_non_null(line);
	rec = json_loads(line, 0, NULL);
	assert_non_null(rec);
	assert_string_equal(
		json_string_value(json_object_get(rec, "outcome")),
		"fallback: SPANK_IO_UPGRADE=\"bogus\\xff\" is not a mode "
		"(auto, scale, isolate, off, shadow)");
	assert_string_equal(json_string_value(json_object_get(rec, "action")),
			    "default");
	assert_string_equal(json_string_value(json_object_get(rec, "request")),
			    "invalid");
	json_decref(rec);
	free(text);

	/* the epilog of that job runs as usual (nothing to release) and
	 * fails open too */
	ctl_epilog(p, &j, fwd_clock_real(), &out);
	assert_false(out.stop_job);

	/* control: a good request and no database under fail: closed */
	job_env("scale", "app");
	assert_int_equal(ctl_job_from_env(&j, &err), 0);
	ctl_prolog(p, NULL, &j, fwd_clock_real(), &out);
	assert_true(out.fallback);
	assert_true(out.stop_job);
	unsetenv("SPANK_IO_UPGRADE");
	policy_destroy(p);
}

/* tests/unit/wrap_short_write.c: a full disk on demand. */
extern volatile int wrap_write_short;
extern volatile bool wrap_ftruncate_fail;

/* Every line of path parses as a JSON object; returns how many. */
static int whole_lines(const char *path)
{
	char *text = slurp(path), *line, *save = NULL;
	int n = 0;

	assert_int_equal(text[0] == '\0' || text[strlen(text) - 1] == '\n', 1);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		json_t *r = json_loads(line, 0, NULL);

		if (!json_is_object(r))
			fail_msg("line %d is not a record: %s", n + 1, line);
		json_decref(r);
		n++;
	}
	free(text);
	return n;
}

/*
 * A short write (disk full) leaves no half record: the file is cut back
 * to where the record began, the call fails with the reason, and the next
 * record starts on a line of its own.
 */
static void test_audit_short_write(void **state)
{
	char path[256], *text;
	fwd_error_t err = {""};

	(void)state;
	snprintf(path, sizeof(path), "%s/full.jsonl", tmpdir);
	assert_int_equal(
		audit_append_line(path, "{\"time\":\"a\",\"n\":1}", &err), 0);
	wrap_write_short = 1;
	errno = 0;
	assert_int_equal(audit_append_line(path,
					   "{\"time\":\"b\",\"n\":2,\"pad\":"
					   "\"xxxxxxxxxxxxxxxxxxxxxxxx\"}",
					   &err),
			 -1);
	wrap_write_short = 0;
	assert_int_equal(errno, ENOSPC);
	if (!strstr(err.text, "short write (26 of 52 bytes: file system "
			      "full or over quota); the partial record "
			      "was removed"))
		fail_msg("message: %s", err.text);
	text = slurp(path);
	assert_string_equal(text, "{\"time\":\"a\",\"n\":1}\n");
	free(text);
	assert_int_equal(
		audit_append_line(path, "{\"time\":\"c\",\"n\":3}", &err), 0);
	assert_int_equal(whole_lines(path), 2);
	text = slurp(path);
	assert_string_equal(text, "{\"time\":\"a\",\"n\":1}\n"
				  "{\"time\":\"c\",\"n\":3}\n");
	free(text);

	/* cannot cut it back either: said so */
	wrap_write_short = 1;
	wrap_ftruncate_fail = true;
	assert_int_equal(audit_append_line(path, "{\"time\":\"d\"}", &err), -1);
	wrap_write_short = 0;
	wrap_ftruncate_fail = false;
	if (!strstr(err.text, "short write (6 of 13 bytes)") ||
	    !strstr(err.text, "cannot remove the partial record: "
			      "Input/output error"))
		fail_msg("message: %s", err.text);

	/* the same into an empty file: the half record is all the file
	 * holds (its end is the bytes written), the cause is still the
	 * truncation's */
	{
		char empty[512];

		snprintf(empty, sizeof(empty), "%s.empty", path);
		unlink(empty);
		wrap_write_short = 1;
		wrap_ftruncate_fail = true;
		assert_int_equal(
			audit_append_line(empty, "{\"time\":\"d\"}", &err), -1);
		wrap_write_short = 0;
		wrap_ftruncate_fail = false;
		if (!strstr(err.text, "short write (6 of 13 bytes)") ||
		    !strstr(err.text, "cannot remove the partial record: "
				      "Input/output error"))
			fail_msg("empty file, message: %s", err.text);
		unlink(empty);
	}
}

/*
 * The hooks hand a record they could not write to the file back to their
 * caller (lost_record) to send elsewhere: the library does not log.
 */
static void test_hook_lost_record(void **state)
{
	char path[300];
	struct ctl_outcome out;
	struct ctl_job j;
	struct policy *p;
	fwd_error_t err = {""};
	json_t *rec;
	bool noted = false;

	(void)state;
	snprintf(path, sizeof(path), "%s/lost.jsonl", tmpdir);
	p = closed_policy(path);
	job_env("bogus", "app");
	assert_int_equal(ctl_job_from_env(&j, &err), 0);
	wrap_write_short = 1;
	ctl_prolog(p, NULL, &j, fwd_clock_real(), &out);
	wrap_write_short = 0;
	assert_true(out.fallback);
	assert_non_null(out.lost_record);
	rec = json_loads(out.lost_record, 0, NULL);
	assert_non_null(rec);
	assert_string_equal(json_string_value(json_object_get(rec, "job_id")),
			    "42");
	assert_string_equal(
		json_string_value(json_object_get(rec, "outcome")),
		"fallback: SPANK_IO_UPGRADE=\"bogus\" is not a mode (auto, "
		"scale, isolate, off, shadow)");
	json_decref(rec);
	for (size_t i = 0; i < out.n_notes; i++)
		noted |= strstr(out.notes[i].text, "short write") != NULL;
	assert_true(noted);
	assert_int_equal(whole_lines(path), 0);
	ctl_outcome_free(&out);
	assert_null(out.lost_record);

	/* written: nothing handed back */
	ctl_prolog(p, NULL, &j, fwd_clock_real(), &out);
	assert_null(out.lost_record);
	assert_int_equal(whole_lines(path), 1);
	ctl_outcome_free(&out);
	unsetenv("SPANK_IO_UPGRADE");
	policy_destroy(p);
}

/* The decision transaction runs again only after a conflict the server
 * rolled back (or a private forwarder taken meanwhile), a bounded number of
 * times, with a short back-off. */
static void test_tx_retry(void **state)
{
	static const int no[] = {ECONNREFUSED, ETIMEDOUT, EAGAIN, EPROTO,
				 ENOENT,       EACCES,	  EINVAL, 0};
	fwd_error_t err;
	unsigned int attempt;
	struct timespec t0, t1;
	double waited;

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		attempt = 1;
		assert_false(
			ledger_store_tx_retry(NULL, no[i], &attempt, &err));
		assert_int_equal(attempt, 1);
	}
	attempt = 1;
	assert_true(ledger_store_tx_retry(NULL, EEXIST, &attempt, &err));
	assert_int_equal(attempt, 2);

	attempt = 1;
	strcpy(err.text, "database x: (1213) Deadlock found");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int k = 1; k < LEDGER_STORE_TX_ATTEMPTS; k++) {
		assert_true(
			ledger_store_tx_retry(NULL, EDEADLK, &attempt, &err));
		assert_int_equal(attempt, k + 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waited = (double)(t1.tv_sec - t0.tv_sec) +
		 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* 10+20+40+80 ms at least (each wait's most is judged below, from
	 * its value: a loaded machine only lengthens a sleep) */
	assert_true(waited >= 0.150);
	errno = 0;
	assert_false(ledger_store_tx_retry(NULL, EDEADLK, &attempt, &err));
	assert_int_equal(attempt, LEDGER_STORE_TX_ATTEMPTS);
	assert_int_equal(errno, EDEADLK);
	assert_string_equal(err.text,
			    "after 5 attempts: database x: (1213) Deadlock "
			    "found");
}

/* The back-off: 10 ms doubling per attempt, plus a random part below it
 * that differs between seeds, never over 160 ms. */
static void test_tx_backoff(void **state)
{
	(void)state;
	for (unsigned int a = 1; a <= 6; a++) {
		long base = 10L << (a < 5 ? a - 1 : 4), lo = 1000, hi = 0;

		for (unsigned int seed = 0; seed < 2000; seed++) {
			long ms = ledger_store_tx_backoff_ms(
				a, seed * 2654435761u);

			lo = ms < lo ? ms : lo;
			hi = ms > hi ? ms : hi;
		}
		assert_true(lo >= (base < 160 ? base : 160));
		assert_true(hi <= (2 * base - 1 < 160 ? 2 * base - 1 : 160));
		/* spread: the seeds cover most of the range */
		if (base < 160)
			assert_true(hi - lo >=
				    (160 < 2 * base ? 160 - base : base) / 2);
	}
	assert_true(ledger_store_tx_backoff_ms(0, 7) >= 10);
}

/* Reconnecting after a lost server: only with several endpoints, only for
 * "unavailable" failures, counted as an attempt. */
static void test_tx_reconnect(void **state)
{
	char *hosts[] = {(char *)"/nonexistent/a.sock",
			 (char *)"/nonexistent/b.sock"};
	struct db_config c = {.name = (char *)"fwdalloc",
			      .user = (char *)"fwdalloc",
			      .timeout = 1,
			      .lock_timeout = 1};
	struct db *db = NULL;
	unsigned int attempt = 1;
	fwd_error_t err;

	c.hosts.items = hosts;
	c.hosts.count = 1;
	assert_int_equal(ledger_store_tx_reconnect(&db, &c, ECONNREFUSED,
						   &attempt, &err),
			 0);
	c.hosts.count = 2;
	assert_int_equal(
		ledger_store_tx_reconnect(&db, &c, EDEADLK, &attempt, &err), 0);
	assert_int_equal(attempt, 1);
	assert_int_equal(ledger_store_tx_reconnect(&db, &c, ECONNREFUSED,
						   &attempt, &err),
			 -1);
	assert_null(db);
	assert_int_equal(attempt, 2);
	assert_int_equal(errno, ECONNREFUSED);
	assert_non_null(strstr(err.text, "none of the 2 endpoints worked"));
	attempt = LEDGER_STORE_TX_ATTEMPTS;
	assert_int_equal(ledger_store_tx_reconnect(&db, &c, ECONNREFUSED,
						   &attempt, &err),
			 0);
}

/* A worker whose transaction was retried after a conflict began COMMIT
 * twice: its decision still reaches the parent as the record. */
static int twice_committing_child(void *arg, int fd)
{
	json_t *rec =
		json_pack("{s:s, s:s}", "job_id", "42", "outcome", "applied");
	int rc;

	(void)arg;
	rc = ctl_hook_mark_commit(fd) || ctl_hook_mark_commit(fd) ||
	     ctl_hook_send(fd, false, rec);
	json_decref(rec);
	return rc;
}

static void test_hook_commit_retried(void **state)
{
	char path[300];
	struct ctl_outcome out;
	struct ctl_job j;
	struct policy *p;
	fwd_error_t err = {""};
	struct ctl_hook h;
	char line[256] = "";
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/retried.jsonl", tmpdir);
	p = closed_policy(path);
	job_env("scale", "app");
	assert_int_equal(ctl_job_from_env(&j, &err), 0);
	h = (struct ctl_hook){.p = p, .j = &j, .t0 = fwd_clock_real()};
	ctl_hook_run(&h, twice_committing_child, "prolog", &out);
	assert_false(out.fallback);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_non_null(strstr(line, "\"outcome\":\"applied\""));
	ctl_outcome_free(&out);
	unsetenv("SPANK_IO_UPGRADE");
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_append),
		cmocka_unit_test(test_audit_refusals),
		cmocka_unit_test(test_audit_concurrent),
		cmocka_unit_test(test_audit_order),
		cmocka_unit_test(test_audit_read),
		cmocka_unit_test(test_audit_read_all_missing),
		cmocka_unit_test(test_audit_read_damaged_gz),
		cmocka_unit_test(test_audit_records),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_job_from_env),
		cmocka_unit_test(test_to_alloc),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_job_bad_request),
		cmocka_unit_test(test_job_odd_names),
		cmocka_unit_test(test_prolog_bad_request_open),
		cmocka_unit_test(test_audit_short_write),
		cmocka_unit_test(test_hook_lost_record),
		cmocka_unit_test(test_hook_commit_retried),
		cmocka_unit_test(test_tx_retry),
		cmocka_unit_test(test_tx_backoff),
		cmocka_unit_test(test_publish_two_steps),
		cmocka_unit_test(test_tx_reconnect),
	};

	return cmocka_run_group_tests_name("ctl", tests, setup, teardown);
}
