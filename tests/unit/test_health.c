/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Health state machine: hysteresis, recovery, idempotent windows, admin
 * overrides across scans, duration bins, feedback commands, HEALTH.json.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "monitor/anomaly.h"
#include "monitor/health.h"
#include "policies/policy.h"

#define W 600.0

struct seq_case {
	const char *name;
	const char *verdicts; /* B bad, G good, N none, one per window */
	const char *states;   /* o ok, s suspect, e excluded after each */
};

/* Policy defaults: suspect after 1 bad window, excluded after 3, back to
 * ok after 3 good ones. */
static const struct seq_case seq_cases[] = {
	{"three bad windows exclude", "BBB", "sse"},
	{"transient dip: one bad window, then good", "BGGG", "ssso"},
	{"a good window restarts the bad count", "BBGBBB", "ssssse"},
	{"recovery after hysteresis; idle windows change nothing", "BBBGGNG",
	 "sseeeeo"},
	{"a bad window restarts the good count", "BBBGGBGGG", "sseeeeeeo"},
	{"no evidence, no change", "NNN", "ooo"},
	{"healthy stays ok", "GGGG", "oooo"},
	{"bad again after recovery", "BBBGGGB", "sseeeos"},
};

static int verdict_of(char c)
{
	return c == 'B' ? ANOMALY_BAD : c == 'G' ? ANOMALY_GOOD : ANOMALY_NONE;
}

static char state_char(enum fwd_health s)
{
	return s == FWD_HEALTH_OK ? 'o' : s == FWD_HEALTH_SUSPECT ? 's' : 'e';
}

static void test_sequences(void **state)
{
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t c = 0; c < sizeof(seq_cases) / sizeof(seq_cases[0]); c++) {
		const struct seq_case *tc = &seq_cases[c];
		struct health_entry e;
		char got[32] = "";
		size_t n = strlen(tc->verdicts);

		print_message("# case: %s\n", tc->name);
		health_entry_init(&e, HEALTH_FORWARDER, "fwd2");
		for (size_t i = 0; i < n; i++) {
			struct health_change chg;

			assert_int_not_equal(
				health_step(&p->anomaly, &e, i * W, (i + 1) * W,
					    verdict_of(tc->verdicts[i]), "test",
					    &chg),
				-1);
			got[i] = state_char(e.state);
		}
		assert_string_equal(got, tc->states);
	}
	policy_destroy(p);
}

static void test_episode_times(void **state)
{
	struct policy *p = policy_defaults();
	struct health_entry e;
	struct health_change chg;
	const char *v = "GBBBGGG";

	assert_non_null(p);
	health_entry_init(&e, HEALTH_OST, "lustre-OST0007");
	for (size_t i = 0; i < 6; i++) {
		int r = health_step(&p->anomaly, &e, i * W, (i + 1) * W,
				    verdict_of(v[i]), "slow", &chg);

		if (i == 1) {
			assert_int_equal(r, 1);
			assert_int_equal(chg.from, FWD_HEALTH_OK);
			assert_int_equal(chg.to, FWD_HEALTH_SUSPECT);
			assert_true(chg.time == W);
		} else if (i == 3) {
			assert_int_equal(r, 1);
			assert_int_equal(chg.to, FWD_HEALTH_EXCLUDED);
			assert_true(chg.time == 3 * W);
			assert_false(chg.episode_closed);
		} else {
			assert_int_equal(r, 0);
		}
	}
	assert_true(e.episode_start == W);
	assert_int_equal(health_step(&p->anomaly, &e, 6 * W, 7 * W,
				     ANOMALY_GOOD, "served 2 GB/s", &chg),
			 1);
	assert_int_equal(chg.from, FWD_HEALTH_EXCLUDED);
	assert_int_equal(chg.to, FWD_HEALTH_OK);
	assert_true(chg.episode_closed);
	/* From the first bad window to the first good one of the streak
	 * that cleared it. */
	assert_true(chg.episode_start == W);
	assert_true(chg.episode_end == 4 * W);
	assert_true(chg.time == 4 * W);
	assert_string_equal(chg.reason, "served 2 GB/s");
	assert_string_equal(e.reason, "served 2 GB/s");
	assert_true(e.episode_start == 0);
	policy_destroy(p);
}

static void test_idempotent(void **state)
{
	struct policy *p = policy_defaults();
	struct health_entry e;
	struct health_change chg;

	assert_non_null(p);
	health_entry_init(&e, HEALTH_FORWARDER, "fwd1");
	assert_int_equal(
		health_step(&p->anomaly, &e, 0, W, ANOMALY_BAD, "x", &chg), 1);
	/* The same window again, and an older one: ignored. */
	assert_int_equal(
		health_step(&p->anomaly, &e, 0, W, ANOMALY_BAD, "x", &chg), 0);
	assert_int_equal(
		health_step(&p->anomaly, &e, -W, 0, ANOMALY_BAD, "x", &chg), 0);
	assert_int_equal(e.bad_streak, 1);
	assert_true(e.scanned_until == W);
	errno = 0;
	assert_int_equal(
		health_step(&p->anomaly, &e, 2 * W, W, ANOMALY_BAD, "x", &chg),
		-1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(
		health_step(&p->anomaly, &e, 2 * W, 3 * W, 7, "x", &chg), -1);
	policy_destroy(p);
}

static void test_admin_overrides(void **state)
{
	struct policy *p = policy_defaults();
	struct health_entry e;
	struct health_change chg;
	size_t w = 0;

	assert_non_null(p);
	health_entry_init(&e, HEALTH_OST, "lustre-OST0003");
	/* Excluded by an admin: good windows do not bring it back. */
	assert_int_equal(health_admin_exclude(&e, 100, "RAID rebuild", &chg),
			 1);
	assert_true(chg.admin);
	assert_int_equal(chg.to, FWD_HEALTH_EXCLUDED);
	for (; w < 10; w++)
		assert_int_equal(health_step(&p->anomaly, &e, w * W,
					     (w + 1) * W, ANOMALY_GOOD, "fine",
					     &chg),
				 0);
	assert_int_equal(e.state, FWD_HEALTH_EXCLUDED);
	assert_int_equal(e.override, HEALTH_OVERRIDE_EXCLUDE);
	assert_string_equal(e.reason, "RAID rebuild");
	/* The scanner's opinion is still counted. */
	assert_int_equal(e.good_streak, 10);

	/* Cleared by an admin: bad windows do not exclude it. */
	assert_int_equal(health_admin_clear(&e, 7000, "fixed", &chg), 1);
	assert_true(chg.episode_closed);
	assert_true(chg.episode_start == 100);
	assert_true(chg.episode_end == 7000);
	for (; w < 15; w++)
		assert_int_equal(health_step(&p->anomaly, &e, w * W,
					     (w + 1) * W, ANOMALY_BAD, "slow",
					     &chg),
				 0);
	assert_int_equal(e.state, FWD_HEALTH_OK);
	assert_int_equal(e.bad_streak, 5);

	/* Released: the scanner decides again, from empty streaks. */
	assert_int_equal(
		health_admin_release(&e, 9000, "back to scanner", &chg), 0);
	assert_int_equal(e.override, HEALTH_OVERRIDE_NONE);
	assert_int_equal(e.bad_streak, 0);
	assert_int_equal(health_step(&p->anomaly, &e, w * W, (w + 1) * W,
				     ANOMALY_BAD, "slow", &chg),
			 1);
	assert_int_equal(e.state, FWD_HEALTH_SUSPECT);
	w++;

	/* A scan catching up on windows before an admin change does not
	 * date its change before that change. */
	assert_int_equal(health_admin_release(&e, 15000, "reset", &chg), 1);
	assert_int_equal(health_step(&p->anomaly, &e, 100000 - W, 100000,
				     ANOMALY_BAD, "slow", &chg),
			 1);
	assert_true(chg.time == 99400);
	{
		struct health_entry old;

		health_entry_init(&old, HEALTH_FORWARDER, "fwd9");
		assert_int_equal(health_admin_clear(&old, 50000, "x", &chg), 0);
		assert_int_equal(health_admin_release(&old, 50000, "x", &chg),
				 0);
		old.since = 50000;
		assert_int_equal(health_step(&p->anomaly, &old, 0, W,
					     ANOMALY_BAD, "slow", &chg),
				 1);
		assert_true(chg.time == 50000);
	}

	/* Releasing an excluded component puts it back to ok. */
	assert_int_equal(health_admin_exclude(&e, 20000, "manual", &chg), 1);
	assert_int_equal(chg.from, FWD_HEALTH_SUSPECT);
	assert_int_equal(health_admin_exclude(&e, 20001, "again", &chg), 0);
	assert_int_equal(health_admin_release(&e, 30000, "done", &chg), 1);
	assert_int_equal(chg.to, FWD_HEALTH_OK);
	assert_int_equal(e.state, FWD_HEALTH_OK);
	policy_destroy(p);
}

static void test_bins(void **state)
{
	static const struct {
		double s;
		int bin;
		const char *name;
	} bc[] = {
		{0, HEALTH_BIN_UNDER_1H, "<1h"},
		{3599, HEALTH_BIN_UNDER_1H, "<1h"},
		{3600, HEALTH_BIN_1_4H, "1-4h"},
		{14399, HEALTH_BIN_1_4H, "1-4h"},
		{14400, HEALTH_BIN_4_12H, "4-12h"},
		{43199, HEALTH_BIN_4_12H, "4-12h"},
		{43200, HEALTH_BIN_12_96H, "12-96h"},
		{345599, HEALTH_BIN_12_96H, "12-96h"},
		{345600, HEALTH_BIN_96H_PLUS, ">=96h"},
		{1e9, HEALTH_BIN_96H_PLUS, ">=96h"},
	};

	for (size_t i = 0; i < sizeof(bc) / sizeof(bc[0]); i++) {
		assert_int_equal(health_duration_bin(bc[i].s), bc[i].bin);
		assert_string_equal(
			health_bin_name(health_duration_bin(bc[i].s)),
			bc[i].name);
	}
}

static void test_names(void **state)
{
	enum health_kind k;
	enum fwd_health s;

	assert_int_equal(health_kind_parse("ost", &k), 0);
	assert_int_equal(k, HEALTH_OST);
	assert_int_equal(health_kind_parse("forwarder", &k), 0);
	assert_int_equal(k, HEALTH_FORWARDER);
	assert_int_equal(health_kind_parse("router", &k), -1);
	assert_int_equal(fwd_health_parse("excluded", &s), 0);
	assert_int_equal(s, FWD_HEALTH_EXCLUDED);
	assert_int_equal(fwd_health_parse("broken", &s), -1);
	assert_string_equal(fwd_health_name(FWD_HEALTH_SUSPECT), "suspect");
	assert_string_equal(health_override_name(HEALTH_OVERRIDE_CLEAR),
			    "clear");
}

static void test_json(void **state)
{
	struct health_entry e[2];
	char *s;

	health_entry_init(&e[0], HEALTH_FORWARDER, "fwd1");
	health_entry_init(&e[1], HEALTH_OST, "lustre-OST0003");
	e[1].state = FWD_HEALTH_EXCLUDED;
	s = health_to_json(e, 2);
	assert_non_null(s);
	assert_string_equal(s, "[{\"kind\":\"forwarder\",\"name\":\"fwd1\","
			       "\"state\":\"ok\"},{\"kind\":\"ost\",\"name\":"
			       "\"lustre-OST0003\",\"state\":\"excluded\"}]");
	free(s);
	s = health_to_json(NULL, 0);
	assert_string_equal(s, "[]");
	free(s);
}

/* ---- commands ----------------------------------------------------------- */

static char tmpdir[64];

static int setup_tmp(void **state)
{
	strcpy(tmpdir, "/tmp/test_health.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	/* Remove the files this test made, by name. */
	for (const char *f = "env\0alert\0exclude\0restore\0stdout\0"; *f;
	     f += strlen(f) + 1) {
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", tmpdir, f);
		unlink(path);
	}
	return rmdir(tmpdir);
}

static char *slurp(const char *name)
{
	static char buf[4096];
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* An argv that appends the named variables to tmpdir/<file>.  The script
 * is the test's own; the component strings only travel in the
 * environment. */
static void shell_argv(struct policy_argv *a, char *store[4], char script[256],
		       const char *file, const char *what)
{
	snprintf(script, 256, "printf '%%s\\n' \"%s\" >> %s/%s", what, tmpdir,
		 file);
	store[0] = (char *)"/bin/sh";
	store[1] = (char *)"-c";
	store[2] = script;
	store[3] = NULL;
	a->argv = store;
	a->argc = 3;
}

static void test_command_environment(void **state)
{
	struct policy_argv a;
	char *store[4];
	char script[256];
	struct health_entry e;
	fwd_error_t err = {""};
	char *out;

	health_entry_init(&e, HEALTH_OST, "lustre-OST0007");
	e.state = FWD_HEALTH_EXCLUDED;
	/* A reason with shell metacharacters stays inert. */
	snprintf(e.reason, sizeof(e.reason), "slow; $(touch %s/pwned)", tmpdir);
	snprintf(script, sizeof(script), "env | sort > %s/env", tmpdir);
	store[0] = (char *)"/bin/sh";
	store[1] = (char *)"-c";
	store[2] = script;
	store[3] = NULL;
	a.argv = store;
	a.argc = 3;
	assert_int_equal(
		health_run_argv(&a, &e, FWD_HEALTH_SUSPECT, false, 10, &err),
		0);
	out = slurp("env");
	assert_non_null(out);
	assert_non_null(strstr(out, "FWD_COMPONENT=lustre-OST0007\n"));
	assert_non_null(strstr(out, "FWD_COMPONENT_KIND=ost\n"));
	assert_non_null(strstr(out, "FWD_STATE=excluded\n"));
	assert_non_null(strstr(out, "FWD_PREVIOUS_STATE=suspect\n"));
	assert_non_null(strstr(out, "FWD_REASON=slow; $(touch "));
	assert_null(strstr(out, "HOME="));
	assert_int_equal(access(tmpdir, F_OK), 0);
	{
		char pwned[128];

		snprintf(pwned, sizeof(pwned), "%s/pwned", tmpdir);
		assert_int_not_equal(access(pwned, F_OK), 0);
	}
}

/* A command's output must not land in our stdout (it would corrupt
 * `fwdctl health scan --json`), and it must not inherit our descriptors
 * (the database connection).  Its stdout goes to our stderr. */
static void test_command_io(void **state)
{
	char out_path[256], script[256];
	char *argv[4] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
	struct policy_argv a = {argv, 3};
	struct health_entry e;
	fwd_error_t err = {""};
	int saved, fd, spare, rc;
	struct stat sb;

	health_entry_init(&e, HEALTH_FORWARDER, "fwd3");
	snprintf(out_path, sizeof(out_path), "%s/stdout", tmpdir);
	spare = open("/dev/null", O_RDONLY); /* no O_CLOEXEC on purpose */
	assert_true(spare > 2);
	snprintf(script, sizeof(script),
		 "echo to-stdout; [ -e /proc/$$/fd/%d ] && exit 9; exit 0",
		 spare);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	rc = health_run_argv(&a, &e, FWD_HEALTH_OK, false, 10, &err);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(spare);
	assert_string_equal(err.text, "");
	assert_int_equal(rc, 0);
	assert_int_equal(stat(out_path, &sb), 0);
	assert_int_equal(sb.st_size, 0);
}

static void test_command_failures(void **state)
{
	static const struct {
		const char *argv0;
		const char *arg1;
		double timeout;
		int want_errno;
		const char *want;
	} fc[] = {
		{"false", NULL, 5, EINVAL,
		 "command false: must be an absolute path"},
		{"/bin/false", NULL, 5, EIO,
		 "command /bin/false: exited with status 1"},
		{"/nonexistent/alert", NULL, 5, EIO,
		 "command /nonexistent/alert: could not be executed (exit "
		 "127)"},
		{"/bin/sleep", "30", 0.5, ETIMEDOUT,
		 "command /bin/sleep: timed out after 0.5 s (killed)"},
	};
	struct health_entry e;

	health_entry_init(&e, HEALTH_FORWARDER, "fwd3");
	for (size_t i = 0; i < sizeof(fc) / sizeof(fc[0]); i++) {
		char *argv[3] = {(char *)fc[i].argv0, (char *)fc[i].arg1, NULL};
		struct policy_argv a = {argv, fc[i].arg1 ? 2 : 1};
		fwd_error_t err = {""};

		errno = 0;
		assert_int_equal(health_run_argv(&a, &e, FWD_HEALTH_OK, false,
						 fc[i].timeout, &err),
				 -1);
		assert_int_equal(errno, fc[i].want_errno);
		assert_string_equal(err.text, fc[i].want);
	}
}

static void test_run_commands(void **state)
{
	struct policy *p = policy_defaults();
	char *s1[4], *s2[4], *s3[4];
	char c1[256], c2[256], c3[256];
	struct health_entry ost, fwd;
	struct health_change chg = {.from = FWD_HEALTH_SUSPECT,
				    .to = FWD_HEALTH_EXCLUDED};
	fwd_error_t err = {""};
	char *out;

	assert_non_null(p);
	shell_argv(&p->anomaly.alert_command, s1, c1, "alert",
		   "$FWD_COMPONENT $FWD_PREVIOUS_STATE->$FWD_STATE");
	/* The OST's name is appended: sh -c gives it to the script as $0. */
	shell_argv(&p->anomaly.ost_exclude_command, s2, c2, "exclude",
		   "$0 $FWD_COMPONENT");
	shell_argv(&p->anomaly.ost_restore_command, s3, c3, "restore",
		   "$0 $FWD_STATE");
	health_entry_init(&ost, HEALTH_OST, "lustre-OST0009");
	health_entry_init(&fwd, HEALTH_FORWARDER, "fwd4");
	ost.state = fwd.state = FWD_HEALTH_EXCLUDED;
	assert_int_equal(health_run_commands(&p->anomaly, &fwd, &chg, 10, &err),
			 0);
	assert_int_equal(health_run_commands(&p->anomaly, &ost, &chg, 10, &err),
			 0);
	chg.from = FWD_HEALTH_EXCLUDED;
	chg.to = FWD_HEALTH_OK;
	ost.state = FWD_HEALTH_OK;
	assert_int_equal(health_run_commands(&p->anomaly, &ost, &chg, 10, &err),
			 0);
	out = slurp("alert");
	assert_non_null(out);
	assert_string_equal(out, "fwd4 suspect->excluded\n"
				 "lustre-OST0009 suspect->excluded\n"
				 "lustre-OST0009 excluded->ok\n");
	assert_string_equal(slurp("exclude"),
			    "lustre-OST0009 lustre-OST0009\n");
	assert_string_equal(slurp("restore"), "lustre-OST0009 ok\n");
	/* The policy does not own these vectors. */
	memset(&p->anomaly.alert_command, 0, sizeof(struct policy_argv));
	memset(&p->anomaly.ost_exclude_command, 0, sizeof(struct policy_argv));
	memset(&p->anomaly.ost_restore_command, 0, sizeof(struct policy_argv));
	policy_destroy(p);
}

/*
 * A scan up to a time in the future is refused before the database is
 * touched (db is NULL here): its windows would be marked scanned before
 * their statistics arrive and never looked at again.
 */
static void test_scan_until_future(void **state)
{
	static const struct {
		double until;
		const char *text; /* message up to "(now " */
	} cases[] = {
		{9999999999.0, "scan until 9999999999: in the future (now "},
		{1e18, "scan until 1000000000000000000: in the future (now "},
		{INFINITY, "scan until inf: in the future (now "},
		{NAN, "scan until nan: in the future (now "},
	};
	struct policy *p = policy_defaults();
	struct health_scan_stats st;

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct health_scan_opts o = {.until = cases[i].until};
		fwd_error_t err = {""};
		const char *tail = "): its windows are not complete yet";

		errno = 0;
		assert_int_equal(
			health_db_scan(NULL, p, NULL, &o, NULL, 0, &st, &err),
			-1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(
			strncmp(err.text, cases[i].text, strlen(cases[i].text)),
			0);
		assert_string_equal(err.text + strlen(err.text) - strlen(tail),
				    tail);
	}
	/* one hour ahead of the real clock */
	{
		struct health_scan_opts o = {0};
		fwd_error_t err = {""};

		o.until = (double)time(NULL) + 3600;

		assert_int_equal(
			health_db_scan(NULL, p, NULL, &o, NULL, 0, &st, &err),
			-1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.text, "in the future"));
	}
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_episode_times),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_admin_overrides),
		cmocka_unit_test(test_bins),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_command_environment),
		cmocka_unit_test(test_command_io),
		cmocka_unit_test(test_command_failures),
		cmocka_unit_test(test_run_commands),
		cmocka_unit_test(test_scan_until_future),
	};

	return cmocka_run_group_tests_name("health", tests, setup_tmp,
					   teardown_tmp);
}
