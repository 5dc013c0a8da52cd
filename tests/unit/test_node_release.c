/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compute nodes' releases (service/node_release.h): the service's
 * check of a decoded credential; from slurm.conf (common/slurm_conf.h)
 * the munged a node uses (AuthInfo) and where it sends when
 * release.controllers is empty (SlurmctldHost); the node's call when it
 * has no credential or no controller.  munged itself, the service and
 * real node epilogs are tested on a real cluster
 * (tests/integration/node_release.sh).
 */
#include "config.h"

#include <errno.h>
#include <munge.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/slurm_conf.h"
#include "service/node_release.h"

#define REQ "FWDALLOC1 E 1700000000.250000\nSLURM_JOB_ID=42\0"

struct check_case {
	const char *what;
	int munge_rc;
	uid_t uid;
	const char *payload; /* NULL: none */
	size_t len;	     /* 0: strlen(payload) */
	const char *why;     /* NULL: accepted */
};

static void test_check(void **state)
{
	static const struct check_case cases[] = {
		{"root's epilog request", EMUNGE_SUCCESS, 0, REQ,
		 sizeof(REQ) - 1, NULL},
		{"a user's", EMUNGE_SUCCESS, 1001, REQ, sizeof(REQ) - 1,
		 "credential made by uid 1001: a node's release is made by "
		 "root (slurmd's epilog)"},
		{"SlurmUser's", EMUNGE_SUCCESS, 64030, REQ, sizeof(REQ) - 1,
		 "made by uid 64030"},
		{"forged", EMUNGE_CRED_INVALID, 0, REQ, sizeof(REQ) - 1,
		 "credential invalid (forged or damaged): TEXT"},
		{"replayed", EMUNGE_CRED_REPLAYED, 0, REQ, sizeof(REQ) - 1,
		 "credential replayed"},
		{"expired", EMUNGE_CRED_EXPIRED, 0, REQ, sizeof(REQ) - 1,
		 "credential expired"},
		{"munged down", EMUNGE_SOCKET, 0, NULL, 0,
		 "could not decode the credential"},
		{"no payload", EMUNGE_SUCCESS, 0, NULL, 0,
		 "credential payload is not an epilog request"},
		{"a prolog request", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 P 1700000000.0\nSLURM_JOB_ID=42", 0,
		 "not an epilog request"},
		{"a report request", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 Q job 42 json", 0, "not an epilog request"},
		{"the head alone, no newline", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E 1700000000.0", 0, "not an epilog request"},
		{"another magic", EMUNGE_SUCCESS, 0,
		 "FWDALLOC2 E 1700000000.0\nSLURM_JOB_ID=42", 0,
		 "not an epilog request"},
		{"a start time that is a word", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E soon\nSLURM_JOB_ID=42", 0,
		 "start time \"soon\" is not epoch seconds"},
		{"an empty start time", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E \nSLURM_JOB_ID=42", 0, "is not epoch seconds"},
		{"a negative start time", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E -5\nSLURM_JOB_ID=42", 0, "is not epoch seconds"},
		{"an infinite start time", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E inf\nSLURM_JOB_ID=42", 0, "is not epoch seconds"},
		{"a start time with a tail", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E 17x\nSLURM_JOB_ID=42", 0, "is not epoch seconds"},
		{"a start time past the buffer", EMUNGE_SUCCESS, 0,
		 "FWDALLOC1 E "
		 "1111111111111111111111111111111111111111111111111111111111111"
		 "1111111111\nSLURM_JOB_ID=42",
		 0, "not an epilog request"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct check_case *c = &cases[i];
		struct svcq_cred cr = {
			.munge_rc = c->munge_rc,
			.munge_text = "TEXT",
			.uid = c->uid,
			.payload = c->payload,
			.payload_len = c->payload ? c->len ? c->len
							   : strlen(c->payload)
						  : 0,
		};
		struct nrel_request r = {0};
		char why[512] = "";
		int rv = nrel_check(&cr, &r, why, sizeof(why));

		if (!c->why) {
			if (rv != 0)
				fail_msg("%s: refused: %s", c->what, why);
			continue;
		}
		if (rv != -1 || !strstr(why, c->why))
			fail_msg("%s: want \"%s\", got %d \"%s\"", c->what,
				 c->why, rv, why);
	}
}

/* What an accepted release carries: the start time and the variables,
 * NUL and all, pointing into the payload. */
static void test_check_fields(void **state)
{
	struct svcq_cred cr = {.munge_rc = EMUNGE_SUCCESS,
			       .uid = 0,
			       .payload = REQ,
			       .payload_len = sizeof(REQ) - 1};
	struct nrel_request r;
	char why[256];

	(void)state;
	assert_int_equal(nrel_check(&cr, &r, why, sizeof(why)), 0);
	assert_true(r.t0 == 1700000000.25);
	assert_int_equal(r.vars_len, strlen("SLURM_JOB_ID=42") + 1);
	assert_memory_equal(r.vars, "SLURM_JOB_ID=42", r.vars_len);
	assert_ptr_equal(r.vars,
			 (const char *)cr.payload +
				 strlen("FWDALLOC1 E 1700000000.250000\n"));
}

/* ---- the munged a node uses -------------------------------------------- */

struct sock_case {
	const char *what;
	const char *conf;
	int rv;
	const char *sock;
};

static void test_munge_socket(void **state)
{
	static const struct sock_case cases[] = {
		{"the documented form", "AuthInfo=socket=/run/m/m.sock\n", 1,
		 "/run/m/m.sock"},
		{"among other options",
		 "AuthType=auth/munge AuthInfo=ttl=300,socket=/s/a,x=1\n", 1,
		 "/s/a"},
		{"the old form, a bare path", "AuthInfo=/var/run/munge.sock\n",
		 1, "/var/run/munge.sock"},
		{"options without a socket", "AuthInfo=ttl=300\n", 0, NULL},
		{"no AuthInfo", "ClusterName=c\nSlurmUser=slurm\n", 0, NULL},
		{"an empty socket", "AuthInfo=socket=,ttl=9\n", 0, NULL},
		{"case-insensitive key", "authinfo=socket=/k\n", 1, "/k"},
		{"commented out", "#AuthInfo=socket=/x\n", 0, NULL},
		{"the last one counts",
		 "AuthInfo=socket=/first\nAuthInfo=socket=/second\n", 1,
		 "/second"},
		{"a comment after it", "AuthInfo=socket=/c # the daemon's\n", 1,
		 "/c"},
	};
	char path[] = "/tmp/fwd-test-slurmconf.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sock_case *c = &cases[i];
		char buf[64] = "unset";
		fwd_error_t err = {""};
		FILE *f = fopen(path, "w");
		int rv;

		assert_non_null(f);
		fputs(c->conf, f);
		fclose(f);
		rv = fwd_slurm_munge_socket(path, buf, sizeof(buf), &err);
		if (rv != c->rv)
			fail_msg("%s: want %d, got %d (%s)", c->what, c->rv, rv,
				 err.text);
		if (c->sock && strcmp(buf, c->sock))
			fail_msg("%s: want %s, got %s", c->what, c->sock, buf);
	}
	/* A path that does not fit the buffer: an error, not a cut path. */
	{
		fwd_error_t err = {""};
		char small[4];
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("AuthInfo=socket=/a/long/path\n", f);
		fclose(f);
		assert_int_equal(fwd_slurm_munge_socket(path, small,
							sizeof(small), &err),
				 -1);
		assert_int_equal(errno, ENAMETOOLONG);
		assert_non_null(strstr(err.text, "AuthInfo"));
	}
	unlink(path);
	{
		fwd_error_t err = {""};
		char buf[64];

		assert_int_equal(
			fwd_slurm_munge_socket(path, buf, sizeof(buf), &err),
			-1);
		assert_non_null(strstr(err.text, path));
	}
}

/* The slurmctld hosts, as Slurm reads them: the addresses joined by ',',
 * or the error's text. */
struct ctld_case {
	const char *what, *conf;
	int rv;
	const char *want;
};

static void test_controllers(void **state)
{
	static const struct ctld_case cases[] = {
		{"one host", "SlurmctldHost=ctl1\n", 1, "ctl1"},
		{"primary with its address, then a backup",
		 "SlurmctldHost=ctl1(10.0.0.1)\nSlurmctldHost=ctl2\n", 2,
		 "10.0.0.1,ctl2"},
		{"an IPv6 address", "SlurmctldHost=c(fe80::1)\n", 1, "fe80::1"},
		{"case-insensitive key", "slurmctldhost=a\n", 1, "a"},
		{"commented out", "#SlurmctldHost=x\nSlurmctldHost=y\n", 1,
		 "y"},
		{"a comment after it", "SlurmctldHost=x # primary\n", 1, "x"},
		{"among other keys", "ClusterName=c SlurmctldHost=z\n", 1, "z"},
		{"localhost, as the mini-cluster's",
		 "SlurmctldHost=localhost\n", 1, "localhost"},
		{"the old keys, ControlAddr",
		 "ControlMachine=m\nControlAddr=10.1.1.1\nBackupController=b\n",
		 2, "10.1.1.1,b"},
		{"the old keys, BackupAddr",
		 "ControlMachine=m\nBackupController=b\nBackupAddr=10.2.2.2\n",
		 2, "m,10.2.2.2"},
		{"SlurmctldHost wins over the old keys",
		 "ControlMachine=old\nSlurmctldHost=new\n", 1, "new"},
		{"none", "ClusterName=c\n", -1,
		 "no SlurmctldHost (nor ControlMachine): no slurmctld host to "
		 "send to"},
		{"a backup and no controller", "BackupController=b\n", -1,
		 "no SlurmctldHost (nor ControlMachine)"},
		{"empty", "SlurmctldHost=\n", -1,
		 "SlurmctldHost=: not a host name"},
		{"unclosed", "SlurmctldHost=a(b\n", -1,
		 "SlurmctldHost=a(b: not a host name"},
		{"reversed", "SlurmctldHost=a)b(\n", -1, "not a host name"},
		{"text after the address", "SlurmctldHost=a(b)c\n", -1,
		 "not a host name"},
		{"no name", "SlurmctldHost=(b)\n", -1, "not a host name"},
		{"no address", "SlurmctldHost=a()\n", -1, "not a host name"},
		{"nested", "SlurmctldHost=a(b(c))\n", -1, "not a host name"},
		{"a valid host after a bad one",
		 "SlurmctldHost=a(\nSlurmctldHost=b\n", -1, "not a host name"},
		{"several names without an address", "ControlMachine=a,b\n", -1,
		 "ControlMachine=a,b: not a host name"},
	};
	char path[] = "/tmp/fwd-test-slurmconf.XXXXXX";
	char hosts[FWD_SLURM_CTLD_MAX][FWD_SLURM_HOST_LEN];
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ctld_case *c = &cases[i];
		fwd_error_t err = {""};
		char got[512] = "";
		int rv;

		assert_non_null(f = fopen(path, "w"));
		fputs(c->conf, f);
		fclose(f);
		rv = fwd_slurm_controllers(path, hosts, &err);
		for (int k = 0; k < rv; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", k ? "," : "", hosts[k]);
		if (rv != c->rv)
			fail_msg("%s: want %d, got %d (%s%s)", c->what, c->rv,
				 rv, got, err.text);
		if (rv > 0 ? strcmp(got, c->want) != 0
			   : !strstr(err.text, c->want) ||
				     !strstr(err.text, path))
			fail_msg("%s: want \"%s\", got \"%s\"", c->what,
				 c->want, rv > 0 ? got : err.text);
		if (rv < 0)
			assert_int_equal(errno, strstr(c->want, "no Slurmctld")
							? ENOENT
							: EINVAL);
	}
	/* More hosts than are used: the first FWD_SLURM_CTLD_MAX, in order. */
	assert_non_null(f = fopen(path, "w"));
	for (int k = 0; k <= FWD_SLURM_CTLD_MAX; k++)
		fprintf(f, "SlurmctldHost=ctl%d\n", k);
	fclose(f);
	{
		fwd_error_t err = {""};

		assert_int_equal(fwd_slurm_controllers(path, hosts, &err),
				 FWD_SLURM_CTLD_MAX);
		assert_string_equal(hosts[0], "ctl0");
		assert_string_equal(hosts[FWD_SLURM_CTLD_MAX - 1], "ctl15");
	}
	/* An address longer than the room for one: an error, not a cut. */
	assert_non_null(f = fopen(path, "w"));
	fputs("SlurmctldHost=c(", f);
	for (int k = 0; k < FWD_SLURM_HOST_LEN; k++)
		fputc('a', f);
	fputs(")\n", f);
	fclose(f);
	{
		fwd_error_t err = {""};

		assert_int_equal(fwd_slurm_controllers(path, hosts, &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.text, "of fewer than 256 bytes"));
	}
	/* The same through the old keys, whose values are kept before they
	 * are read: refused too, not taken cut. */
	assert_non_null(f = fopen(path, "w"));
	fputs("ControlMachine=m\nControlAddr=", f);
	for (int k = 0; k < 300; k++)
		fputc('a', f);
	fputs("\n", f);
	fclose(f);
	{
		fwd_error_t err = {""};

		assert_int_equal(fwd_slurm_controllers(path, hosts, &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.text, "ControlAddr=aaa"));
		assert_non_null(strstr(err.text, "of fewer than 256 bytes"));
	}
	unlink(path);
	{
		fwd_error_t err = {""};

		assert_int_equal(fwd_slurm_controllers(path, hosts, &err), -1);
		assert_int_equal(errno, ENOENT);
		assert_non_null(strstr(err.text, path));
		assert_non_null(strstr(err.text, "No such file"));
	}
}

/* ---- the node's call, where it cannot succeed --------------------------- */

static void test_send_no_controller(void **state)
{
	const char *to = "unset";
	fwd_error_t err = {""};

	(void)state;
	assert_int_equal(nrel_send(NULL, 0, 6830, REQ, sizeof(REQ) - 1, 2.0,
				   NULL, &to, &err),
			 -1);
	assert_null(to);
	assert_string_equal(err.text, "no controller to send the release to "
				      "(release.controllers is empty)");
}

static void test_send_no_munged(void **state)
{
	const char *hosts[] = {"localhost"}, *to = "unset";
	fwd_error_t err = {""};

	(void)state;
	assert_int_equal(nrel_send(hosts, 1, 6830, REQ, sizeof(REQ) - 1, 2.0,
				   "/nonexistent/munge.sock", &to, &err),
			 -1);
	assert_null(to);
	if (!strstr(err.text, "no MUNGE credential (is munged running at "
			      "/nonexistent/munge.sock?)"))
		fail_msg("got \"%s\"", err.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_fields),
		cmocka_unit_test(test_munge_socket),
		cmocka_unit_test(test_controllers),
		cmocka_unit_test(test_send_no_controller),
		cmocka_unit_test(test_send_no_munged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
