/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Policy loading: the example file equals the built-in defaults, overrides
 * land in the right fields, every kind of bad input gives its exact
 * message, and `policy show` output (YAML) loads back to the same policy;
 * the interference classes read from its thresholds.
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
#include <unistd.h>

#include <cmocka.h>

#include "common/sha256.h"
#include "policies/classify.h"
#include "policies/policy.h"

#define EXAMPLE FIXTURES "/../../etc/fwdalloc.yaml"
#define GiB (1024ULL * 1024 * 1024)

/* open() is wrapped by tests/unit/wrap_eacces.c: paths ending in
 * "/eacces.yaml" fail with EACCES, since the suite runs as root. */

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/policy-test.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write text (len bytes; 0 = strlen) to tmpdir/name; return the path. */
static const char *write_file(const char *name, const char *text, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	if (!len)
		len = strlen(text);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

/* Expected messages say FILE for the file name. */
static void expect_msg(const char *got, const char *want, const char *path,
		       const char *name)
{
	char full[2048];

	if (!strncmp(want, "FILE", 4))
		snprintf(full, sizeof(full), "%s%s", path, want + 4);
	else
		snprintf(full, sizeof(full), "%s", want);
	if (strcmp(got, full))
		fail_msg("%s:\n got  %s\n want %s", name, got, full);
}

/* The same policy, ignoring where it came from. */
static char *json_without_origin(struct policy *p)
{
	char *saved_path = p->path, saved_digest[65], *s;

	memcpy(saved_digest, p->digest, sizeof(saved_digest));
	p->path = NULL;
	snprintf(p->digest, sizeof(p->digest), "x");
	s = policy_to_json(p);
	p->path = saved_path;
	memcpy(p->digest, saved_digest, sizeof(saved_digest));
	assert_non_null(s);
	return s;
}

static void test_example_is_defaults(void **state)
{
	fwd_error_t err;
	struct policy *def = policy_defaults(),
		      *ex = policy_load(EXAMPLE, &err);
	char *a, *b;

	if (!ex)
		fail_msg("%s", err.text);
	/* The example names its topology relative to itself. */
	assert_non_null(strstr(ex->topology, "/etc/topology.yaml"));
	free(ex->topology);
	ex->topology = strdup(def->topology);
	/* The installed example names /var/log; defaults follow
	 * --localstatedir, which the test suite sets to /var. */
	if (strcmp(def->audit.file, "/var/log/fwdalloc/audit.jsonl") ||
	    strcmp(def->remap.lwfs.state_dir, "/var/lib/fwdalloc")) {
		free(ex->audit.file);
		ex->audit.file = strdup(def->audit.file);
		free(ex->remap.lwfs.state_dir);
		ex->remap.lwfs.state_dir = strdup(def->remap.lwfs.state_dir);
	}
	a = json_without_origin(def);
	b = json_without_origin(ex);
	assert_string_equal(a, b);
	assert_string_equal(ex->path, EXAMPLE);
	assert_int_equal(strlen(ex->digest), 64);
	free(a);
	free(b);
	policy_destroy(def);
	policy_destroy(ex);
}

static void test_overrides(void **state)
{
	static const char text[] =
		"topology: /srv/topo.yaml\n"
		"access:\n"
		"  mode: shadow\n"
		"  fail: closed\n"
		"  allow_users: [alice, bob]\n"
		"  deny_partitions:\n"
		"    - debug\n"
		"decision:\n"
		"  avoid_anomalies: false\n"
		"  contention: fcfs\n"
		"  decide_timeout: 2500ms\n"
		"  scale:\n"
		"    min_volume: 512MB\n"
		"    min_io_nodes: 0\n"
		"    max_metadata_rate: 12.5\n"
		"  interference: {enabled: false, high_bandwidth: 0}\n"
		"  caps: {max_forwarders_per_job: 8, max_pool_share: 0.25, "
		"reserve: 0}\n"
		"history:\n"
		"  key: [account, partition]\n"
		"  runs: 1\n"
		"  max_age: 1h30m\n"
		"database:\n"
		"  socket: /run/mysqld/mysqld.sock\n"
		"  port: 3307\n"
		"  hosts: [db1:3306, db2, \"[::1]:3310\", /run/mysqld/a.sock]\n"
		"  password_file: /etc/fwdalloc/db.password\n"
		"  breaker: 45s\n"
		"ingest: {max_rate_factor: 2.5, max_bandwidth: 200GB/s,\n"
		"  max_ops_rate: 500000, max_queue_len: 4096, reconnect: 90s}\n"
		"anomaly:\n"
		"  peer: {noise_floor: 800MiB/s, min_job_volume: 2TB}\n"
		"  alert_command: [/usr/bin/logger, -t, fwdalloc]\n"
		"remap:\n"
		"  driver: exec\n"
		"  exec:\n"
		"    command: [/usr/local/sbin/remap, \"--with space\"]\n"
		"  verbs: {device: mlx5_0, port: 7000, connect_probe: true}\n"
		"release: {port: 6830, controllers: [ctl1, ctl2], timeout: "
		"1500ms}\n";
	fwd_error_t err;
	const char *path = write_file("over.yaml", text, 0);
	struct policy *p = policy_load(path, &err);
	char hex[65];

	if (!p)
		fail_msg("%s", err.text);
	assert_string_equal(p->topology, "/srv/topo.yaml");
	assert_int_equal(p->access.mode, POLICY_MODE_SHADOW);
	assert_int_equal(p->access.fail, POLICY_FAIL_CLOSED);
	assert_int_equal(p->access.allow_users.count, 2);
	assert_string_equal(p->access.allow_users.items[1], "bob");
	assert_null(p->access.allow_users.items[2]);
	assert_string_equal(p->access.deny_partitions.items[0], "debug");
	assert_false(p->decision.avoid_anomalies);
	assert_int_equal(p->decision.contention, POLICY_CONTENTION_FCFS);
	assert_true(p->decision.decide_timeout == 2.5);
	assert_int_equal(p->decision.scale.min_volume, 512000000);
	assert_int_equal(p->decision.scale.min_io_nodes, 0);
	assert_true(p->decision.scale.max_metadata_rate == 12.5);
	assert_true(p->decision.scale.enabled); /* untouched default */
	assert_false(p->decision.interference.enabled);
	assert_true(p->decision.interference.high_bandwidth == 0);
	assert_true(p->decision.interference.vulnerable_iops == 1000);
	assert_int_equal(p->decision.caps.max_forwarders_per_job, 8);
	assert_true(p->decision.caps.max_pool_share == 0.25);
	assert_int_equal(p->decision.caps.reserve, 0);
	assert_int_equal(p->history.key.count, 2);
	assert_string_equal(p->history.key.items[0], "account");
	assert_int_equal(p->history.runs, 1);
	assert_true(p->history.max_age == 5400);
	assert_string_equal(p->database.socket, "/run/mysqld/mysqld.sock");
	assert_int_equal(p->database.port, 3307);
	assert_true(p->database_breaker == 45);
	assert_string_equal(p->database.host, "localhost");
	assert_int_equal(p->database.hosts.count, 4);
	assert_string_equal(p->database.hosts.items[0], "db1:3306");
	assert_string_equal(p->database.hosts.items[1], "db2");
	assert_string_equal(p->database.hosts.items[2], "[::1]:3310");
	assert_string_equal(p->database.hosts.items[3], "/run/mysqld/a.sock");
	assert_string_equal(p->database.password_file,
			    "/etc/fwdalloc/db.password");
	assert_true(p->ingest.max_rate_factor == 2.5);
	assert_true(p->ingest.max_bandwidth == 200e9);
	assert_true(p->ingest.max_ops_rate == 500000);
	assert_true(p->ingest.max_queue_len == 4096);
	assert_true(fabs(p->ingest.reconnect - 90) < 1e-9);
	assert_true(p->anomaly.peer.noise_floor == 800.0 * 1048576);
	assert_int_equal(p->anomaly.peer.min_job_volume, 2000000000000ULL);
	assert_int_equal(p->anomaly.alert_command.argc, 3);
	assert_string_equal(p->anomaly.alert_command.argv[2], "fwdalloc");
	assert_null(p->anomaly.alert_command.argv[3]);
	assert_int_equal(p->remap.driver, POLICY_DRIVER_EXEC);
	assert_string_equal(p->remap.exec.command.argv[1], "--with space");
	assert_string_equal(p->remap.verbs.device, "mlx5_0");
	assert_int_equal(p->remap.verbs.port, 7000);
	assert_int_equal(p->release.port, 6830);
	assert_int_equal(p->release.controllers.count, 2);
	assert_string_equal(p->release.controllers.items[0], "ctl1");
	assert_string_equal(p->release.controllers.items[1], "ctl2");
	assert_true(fabs(p->release.timeout - 1.5) < 1e-9);
	assert_true(p->remap.verbs.connect_probe);
	/* Digest of the file's bytes. */
	sha256_hex(text, strlen(text), hex);
	assert_string_equal(p->digest, hex);
	assert_string_equal(p->path, path);
	policy_destroy(p);
}

/* With remap.driver none (decisions recorded, nodes untouched: what
 * `fwdctl sim` compares) direct access may be chosen. */
static void test_direct_driver_none(void **state)
{
	fwd_error_t err;
	const char *path = write_file(
		"direct.yaml",
		"decision: {curve: {direct: true}}\nremap: {driver: none}\n",
		0);
	struct policy *p = policy_load(path, &err);

	(void)state;
	if (!p)
		fail_msg("%s", err.text);
	assert_true(p->decision.curve.direct);
	assert_int_equal(p->remap.driver, POLICY_DRIVER_NONE);
	policy_destroy(p);
}

/* The exec driver performs direct access (FWD_ACTION=direct) when the
 * decision is published. */
static void test_direct_driver_exec(void **state)
{
	fwd_error_t err;
	const char *path = write_file(
		"direct-exec.yaml",
		"decision: {curve: {direct: true}}\n"
		"remap:\n  driver: exec\n  decision_dir: /run/fwdalloc\n"
		"  exec: {command: [/bin/true]}\n",
		0);
	struct policy *p = policy_load(path, &err);

	(void)state;
	if (!p)
		fail_msg("%s", err.text);
	assert_true(p->decision.curve.direct);
	assert_int_equal(p->remap.driver, POLICY_DRIVER_EXEC);
	policy_destroy(p);
}

static void test_relative_topology(void **state)
{
	fwd_error_t err;
	const char *path = write_file("rel.yaml", "topology: sub/t.yaml\n", 0);
	struct policy *p = policy_load(path, &err);
	char want[256];

	if (!p)
		fail_msg("%s", err.text);
	snprintf(want, sizeof(want), "%s/sub/t.yaml", tmpdir);
	assert_string_equal(p->topology, want);
	policy_destroy(p);
}

/* Empty sections and sections whose keys are all commented out. */
static void test_empty_sections(void **state)
{
	fwd_error_t err;
	const char *path = write_file("es.yaml",
				      "access:\ndecision:\n  scale:\n"
				      "# nothing\nremap: {}\n",
				      0);
	struct policy *p = policy_load(path, &err);

	if (!p)
		fail_msg("%s", err.text);
	assert_int_equal(p->access.mode, POLICY_MODE_OPT_IN);
	policy_destroy(p);

	/* Releases from the nodes with no controllers listed: the nodes'
	 * slurm.conf names them. */
	path = write_file("rel.yaml", "release:\n  port: 6830\n", 0);
	if (!(p = policy_load(path, &err)))
		fail_msg("%s", err.text);
	assert_int_equal(p->release.port, 6830);
	assert_int_equal(p->release.controllers.count, 0);
	policy_destroy(p);
}

#define KEYS_TOP                                                          \
	"topology, access, decision, history, learn, database, audit, "   \
	"retention, ingest, anomaly, remap, jobstats, reports, release, " \
	"history_loop"
#define ARGV_HELP                                                            \
	"a command is a YAML list [program, arg, ...] run without a shell, " \
	"e.g. [/usr/local/sbin/fwd-alert, --severity, high]"
#define SIZE_ALLOWED                                                      \
	"a size is a number with an optional unit k, M, G, T, P (powers " \
	"of 1000) or Ki, Mi, Gi, Ti, Pi (powers of 1024), optionally "    \
	"followed by B, e.g. 20GiB or 512MB"
#define DURATION_ALLOWED                                                  \
	"a duration is a number of seconds, or numbers with units d, h, " \
	"m, s, ms in that order, e.g. 90s, 60m, 1h30m, 7d or 250ms"
#define FRACTION_ALLOWED                                                 \
	"a fraction is a number from 0 to 1 or a percentage from 0% to " \
	"100%, e.g. 0.3 or 30%"

static const struct {
	const char *name;
	const char *text;
	size_t len;
	const char *msg;
} bad[] = {
	{"unknown top-level key", "access:\n  mode: opt-in\nfoo: 1\n", 0,
	 "FILE:3:1: foo: unknown key; allowed keys: " KEYS_TOP},
	{"unknown nested key", "decision:\n  scale:\n    enable: true\n", 0,
	 "FILE:3:5: decision.scale.enable: unknown key; allowed keys: "
	 "enabled, min_volume, min_io_nodes, max_metadata_rate"},
	{"duplicate key", "access:\n  mode: off\n  mode: shadow\n", 0,
	 "FILE:3:3: access.mode: duplicate key 'mode' (first at line 2)"},
	{"root is a list", "- a\n- b\n", 0,
	 "FILE:1:1: the policy must be a mapping with keys " KEYS_TOP},
	{"root is a scalar", "hello\n", 0,
	 "FILE:1:1: the policy must be a mapping with keys " KEYS_TOP},
	{"section is a scalar", "decision: fast\n", 0,
	 "FILE:1:11: decision: value 'fast': expected a mapping with keys "
	 "avoid_anomalies, contention, decide_timeout, scale, "
	 "interference, caps, curve"},
	{"section is a list", "audit: [a]\n", 0,
	 "FILE:1:8: audit: value is a sequence; expected a mapping with "
	 "keys file, database"},
	{"ingest factor below 1", "ingest: {max_rate_factor: 0.5}\n", 0,
	 "FILE:1:27: ingest.max_rate_factor: value '0.5': expected a number "
	 "from 1 to 1000000"},
	{"ingest ceiling of 0", "ingest: {max_bandwidth: 0}\n", 0,
	 "FILE:1:25: ingest.max_bandwidth: value '0': expected a rate "
	 "greater than 0"},
	{"ingest ops rate in exponent form", "ingest: {max_ops_rate: 1e7}\n", 0,
	 "FILE:1:24: ingest.max_ops_rate: value '1e7': expected a number "
	 "greater than 0"},
	{"ingest queue bound of 0", "ingest: {max_queue_len: 0}\n", 0,
	 "FILE:1:25: ingest.max_queue_len: value '0': expected a number "
	 "greater than 0"},
	{"ingest section is a list", "ingest: [4]\n", 0,
	 "FILE:1:9: ingest: value is a sequence; expected a mapping with "
	 "keys max_rate_factor, max_bandwidth, max_ops_rate, max_queue_len, "
	 "reconnect"},
	{"ingest reconnect beyond an hour", "ingest: {reconnect: 2h}\n", 0,
	 "FILE:1:21: ingest.reconnect: value '2h': expected a duration "
	 "from 0s to 1h"},
	{"bad enum", "access:\n  mode: maybe\n", 0,
	 "FILE:2:9: access.mode: value 'maybe': expected one of off, "
	 "opt-in, opt-out, shadow"},
	{"bad fail", "access: {fail: half}\n", 0,
	 "FILE:1:16: access.fail: value 'half': expected one of open, "
	 "closed"},
	{"bad bool", "decision:\n  avoid_anomalies: yes\n", 0,
	 "FILE:2:20: decision.avoid_anomalies: value 'yes': expected true "
	 "or false"},
	{"quoted bool", "audit: {database: \"true\"}\n", 0,
	 "FILE:1:19: audit.database: value 'true': expected true or false"},
	{"bool is a list", "audit: {database: [true]}\n", 0,
	 "FILE:1:19: audit.database: value is a sequence; expected true or "
	 "false"},
	{"empty bool", "audit:\n  database:\n", 0,
	 "FILE:2:12: audit.database: value is empty; expected true or "
	 "false"},
	{"size with bad unit", "decision: {scale: {min_volume: 20GB/s}}\n", 0,
	 "FILE:1:32: decision.scale.min_volume: value '20GB/s': a rate is "
	 "not a size; " SIZE_ALLOWED},
	{"negative size", "decision: {scale: {min_volume: -1}}\n", 0,
	 "FILE:1:32: decision.scale.min_volume: value '-1': negative values "
	 "are not allowed; " SIZE_ALLOWED},
	{"whole number", "decision: {scale: {min_io_nodes: 3.5}}\n", 0,
	 "FILE:1:34: decision.scale.min_io_nodes: value '3.5': expected a "
	 "whole number from 0 to 4294967295"},
	{"u32 too large", "decision: {scale: {min_io_nodes: 4294967296}}\n", 0,
	 "FILE:1:34: decision.scale.min_io_nodes: value '4294967296': "
	 "expected a whole number from 0 to 4294967295"},
	{"count below 1", "decision:\n  caps:\n    max_forwarders_per_job: 0\n",
	 0,
	 "FILE:3:29: decision.caps.max_forwarders_per_job: value '0': "
	 "expected a whole number from 1 to 4294967295"},
	{"port out of range", "database: {port: 70000}\n", 0,
	 "FILE:1:18: database.port: value '70000': expected a whole number "
	 "from 1 to 65535"},
	{"number with exponent",
	 "decision: {scale: {max_metadata_rate: 1e3}}\n", 0,
	 "FILE:1:39: decision.scale.max_metadata_rate: value '1e3': expected "
	 "a number of at least 0"},
	{"negative number", "decision: {interference: {vulnerable_iops: -5}}\n",
	 0,
	 "FILE:1:44: decision.interference.vulnerable_iops: value '-5': "
	 "expected a number of at least 0"},
	{"eps zero", "anomaly: {dbscan: {eps: 0}}\n", 0,
	 "FILE:1:25: anomaly.dbscan.eps: value '0': expected a number "
	 "greater than 0 and at most 1"},
	{"fraction above 1", "decision: {caps: {max_pool_share: 150%}}\n", 0,
	 "FILE:1:35: decision.caps.max_pool_share: value '150%': out of "
	 "range; " FRACTION_ALLOWED},
	{"zero timeout", "database: {timeout: 0s}\n", 0,
	 "FILE:1:21: database.timeout: value '0s': expected a duration "
	 "greater than 0s and at most 1h"},
	{"breaker too long", "database: {breaker: 2h}\n", 0,
	 "FILE:1:21: database.breaker: value '2h': expected a duration "
	 "from 0s to 1h"},
	{"timeout too long", "remap: {timeout: 2h}\n", 0,
	 "FILE:1:18: remap.timeout: value '2h': expected a duration greater "
	 "than 0s and at most 1h"},
	{"bad duration", "history: {max_age: 3 months}\n", 0,
	 "FILE:1:20: history.max_age: value '3 months': unknown "
	 "unit; " DURATION_ALLOWED},
	{"bad rate", "anomaly: {peer: {noise_floor: 1MB}}\n", 0,
	 "FILE:1:31: anomaly.peer.noise_floor: value '1MB': a size is not a "
	 "rate (add /s); a rate is a number of bytes per second with an "
	 "optional unit k, M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, "
	 "Pi (powers of 1024) followed by B/s, e.g. 2.5GB/s or 800MiB/s"},
	{"list given a string", "access: {allow_users: alice}\n", 0,
	 "FILE:1:23: access.allow_users: value 'alice': expected a list of "
	 "names, e.g. [alice, bob]"},
	{"list item a mapping", "access:\n  deny_users:\n    - {a: b}\n", 0,
	 "FILE:3:7: access.deny_users[0]: value is a mapping; expected a "
	 "name"},
	{"empty list item", "access:\n  deny_users: [\"\"]\n", 0,
	 "FILE:2:16: access.deny_users[0]: value '': expected a name"},
	{"unknown history key", "history: {key: [user, jobname]}\n", 0,
	 "FILE:1:23: history.key[1]: value 'jobname': expected one of user, "
	 "account, name, partition, node_bucket"},
	{"history key twice", "history: {key: [user, user]}\n", 0,
	 "FILE:1:23: history.key[1]: value 'user': listed twice"},
	{"empty history key", "history: {key: []}\n", 0,
	 "FILE:1:16: history.key: value is a sequence; expected a non-empty "
	 "list of key fields, each one of user, account, name, partition, "
	 "node_bucket"},
	{"command as a string",
	 "anomaly:\n  alert_command: /usr/bin/mail -s alert root\n", 0,
	 "FILE:2:18: anomaly.alert_command: value '/usr/bin/mail -s alert "
	 "root': " ARGV_HELP},
	{"command as a mapping", "anomaly: {alert_command: {a: 1}}\n", 0,
	 "FILE:1:26: anomaly.alert_command: value is a mapping; "
	 "expected " ARGV_HELP},
	{"relative program", "anomaly: {alert_command: [mail, root]}\n", 0,
	 "FILE:1:27: anomaly.alert_command[0]: value 'mail': the program "
	 "must be an absolute path (commands run without a shell or PATH "
	 "search)"},
	{"relative password file", "database: {password_file: db.pw}\n", 0,
	 "FILE:1:27: database.password_file: value 'db.pw': expected an "
	 "absolute path (starting with /) or null"},
	{"relative audit file", "audit: {file: audit.jsonl}\n", 0,
	 "FILE:1:15: audit.file: value 'audit.jsonl': expected an absolute "
	 "path (starting with /)"},
	{"null audit file", "audit: {file: null}\n", 0,
	 "FILE:1:15: audit.file: value is empty; expected an absolute path"},
	{"hosts not a list", "database: {hosts: db1}\n", 0,
	 "FILE:1:19: database.hosts: value 'db1': expected a list of "
	 "endpoints, e.g. [db1:3306, db2, /run/mysqld/mysqld.sock]"},
	{"hosts bad port", "database:\n  hosts: [db1, db2:0]\n", 0,
	 "FILE:2:16: database.hosts[1]: value 'db2:0': port '0': expected 1 to "
	 "65535; expected an endpoint: host, host:port, [ipv6]:port or "
	 "/unix/socket"},
	{"hosts bare ipv6", "database: {hosts: ['::1']}\n", 0,
	 "FILE:1:20: database.hosts[0]: value '::1': an IPv6 address goes in "
	 "brackets, e.g. [::1]:3306; expected an endpoint: host, host:port, "
	 "[ipv6]:port or /unix/socket"},
	{"hosts twice", "database: {hosts: [db1, db1]}\n", 0,
	 "FILE:1:25: database.hosts[1]: value 'db1': listed twice"},
	{"hosts empty item", "database: {hosts: [db1, '']}\n", 0,
	 "FILE:1:25: database.hosts[1]: value '': expected an endpoint: host, "
	 "host:port, [ipv6]:port or /unix/socket"},
	{"hosts too many",
	 "database: {hosts: [a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q]}\n", 0,
	 "FILE:1:19: database.hosts: 17 endpoints: at most 16"},
	{"empty host", "database: {host: ''}\n", 0,
	 "FILE:1:18: database.host: value '': expected a non-empty string"},
	{"link name with slash", "remap: {lwfs: {link_name: a/b}}\n", 0,
	 "FILE:1:27: remap.lwfs.link_name: value 'a/b': expected a file name "
	 "without '/'"},
	{"exec driver without command", "remap:\n  driver: exec\n", 0,
	 "FILE:2:11: remap.driver: value 'exec': the exec driver needs "
	 "remap.exec.command, " ARGV_HELP},
	{"unknown driver", "remap: {driver: rdma}\n", 0,
	 "FILE:1:17: remap.driver: value 'rdma': expected one of none, exec, "
	 "verbs, lwfs, lnet"},
	/* lwfs, lnet and verbs cannot give a node direct access */
	{"direct with the lnet driver",
	 "decision:\n  curve:\n    direct: true\nremap:\n  driver: lnet\n", 0,
	 "FILE:3:13: decision.curve.direct: value 'true': remap.driver 'lnet' "
	 "cannot give a node direct file-system access (no forwarder); direct "
	 "needs remap.driver exec (its command runs with FWD_ACTION=direct) "
	 "or none (decisions only recorded)"},
	{"direct with the lwfs driver",
	 "remap: {driver: lwfs}\ndecision: {curve: {direct: true}}\n", 0,
	 "FILE:2:28: decision.curve.direct: value 'true': remap.driver 'lwfs' "
	 "cannot give a node direct file-system access (no forwarder); direct "
	 "needs remap.driver exec (its command runs with FWD_ACTION=direct) "
	 "or none (decisions only recorded)"},
	{"direct with the exec driver and no decision directory",
	 "remap:\n  driver: exec\n  exec: {command: [/bin/true]}\n"
	 "decision: {curve: {direct: true}}\n",
	 0,
	 "FILE:4:28: decision.curve.direct: value 'true': remap.driver exec "
	 "learns of direct access only from the published decision: set "
	 "remap.decision_dir"},
	{"probe without port", "remap:\n  verbs:\n    connect_probe: true\n", 0,
	 "FILE:3:20: remap.verbs.connect_probe: value 'true': the connect "
	 "probe needs remap.verbs.port, the forwarding service's port (1 to "
	 "65535)"},
	{"release port past 65535",
	 "release: {port: 65536, controllers: [ctl1]}\n", 0,
	 "FILE:1:17: release.port: value '65536': expected a whole number "
	 "from 0 to 65535"},
	{"release timeout zero",
	 "release: {port: 6830, controllers: [ctl1], timeout: 0s}\n", 0,
	 "FILE:1:53: release.timeout: value '0s': expected a duration "
	 "greater than 0s and at most 1m"},
	{"release controllers not a list",
	 "release: {port: 6830, controllers: ctl1}\n", 0,
	 "FILE:1:36: release.controllers: value 'ctl1': expected a list of "
	 "names, e.g. [alice, bob]"},
	{"empty file", "", 0, "FILE:1:1: file is empty"},
	{"comments only", "# all defaults\n", 0, "FILE:1:1: file is empty"},
	{"invalid utf-8", "access:\n  allow_users: [caf\xe9]\n", 0,
	 "FILE:2:21: invalid UTF-8: invalid trailing UTF-8 octet (byte "
	 "0x5d)"},
	{"syntax error", "access:\n  mode: [opt-in\n", 0,
	 "FILE:3:1: invalid YAML: did not find expected ',' or ']' while "
	 "parsing a flow sequence (line 2)"},
	{"anchor", "access:\n  allow_users: &u [a]\n  deny_users: *u\n", 0,
	 "FILE:2:16: access.allow_users: anchors (&u) are not supported; "
	 "write the value out"},
};

static void test_bad(void **state)
{
	fwd_error_t err;
	int failed = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *path =
			write_file("bad.yaml", bad[i].text, bad[i].len);
		char full[2048];
		struct policy *p;

		memset(&err, 0, sizeof(err));
		errno = 0;
		p = policy_load(path, &err);
		if (p) {
			print_error("%s: loaded\n", bad[i].name);
			policy_destroy(p);
			failed++;
			continue;
		}
		if (errno != EINVAL) {
			print_error("%s: errno %d\n", bad[i].name, errno);
			failed++;
		}
		snprintf(full, sizeof(full), "%s%s", path, bad[i].msg + 4);
		if (strcmp(err.text, full)) {
			print_error("%s:\n got  %s\n want %s\n", bad[i].name,
				    err.text, full);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void test_file_errors(void **state)
{
	fwd_error_t err;
	char path[256];

	snprintf(path, sizeof(path), "%s/none.yaml", tmpdir);
	assert_null(policy_load(path, &err));
	assert_int_equal(errno, ENOENT);
	expect_msg(err.text, "FILE: cannot open: No such file or directory",
		   path, "missing");

	/* Simulated EACCES (see __wrap_open). */
	snprintf(path, sizeof(path), "%s/eacces.yaml", tmpdir);
	assert_null(policy_load(path, &err));
	assert_int_equal(errno, EACCES);
	expect_msg(err.text, "FILE: cannot open: Permission denied", path,
		   "eacces");

	/* A directory named as the policy. */
	assert_null(policy_load(tmpdir, &err));
	assert_int_equal(errno, EISDIR);
	expect_msg(err.text, "FILE: cannot read: Is a directory", tmpdir,
		   "directory");

	/* Really unreadable, when not running as root. */
	if (geteuid() != 0) {
		const char *p = write_file("mode000.yaml", "access: {}\n", 0);

		assert_int_equal(chmod(p, 0), 0);
		assert_null(policy_load(p, &err));
		assert_int_equal(errno, EACCES);
		expect_msg(err.text, "FILE: cannot open: Permission denied", p,
			   "mode 000");
	}
}

/* Load, print as YAML, load the print: the same policy. */
static void round_trip(struct policy *p)
{
	fwd_error_t err;
	char *yaml = policy_to_yaml(p), *a, *b;
	const char *path;
	struct policy *q;

	assert_non_null(yaml);
	path = write_file("rt.yaml", yaml, 0);
	q = policy_load(path, &err);
	if (!q)
		fail_msg("%s\n%s", err.text, yaml);
	a = json_without_origin(p);
	b = json_without_origin(q);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(yaml);
	policy_destroy(q);
}

static void test_round_trip(void **state)
{
	static const char text[] =
		"access: {mode: opt-out, allow_users: [\"o'brien\", "
		"\"has space\", \"true\", \"null\", \"-dash\", \"#hash\"]}\n"
		"decision:\n"
		"  decide_timeout: 0.333\n"
		"  scale: {max_metadata_rate: 0.1, min_volume: 1234567}\n"
		"  caps: {max_pool_share: 0.123456789}\n"
		"  interference: {high_bandwidth: 123456.789}\n"
		"database: {socket: /tmp/s, host: \"db:1\", user: \"a\\\"b\",\n"
		"  hosts: [\"[fe80::1]:3306\", db-2, /tmp/x.sock]}\n"
		"anomaly: {dbscan: {eps: 0.07}, ost_exclude_command: "
		"[/bin/echo, \"x y\", \"a\\tb\"]}\n"
		"remap: {driver: exec, exec: {command: [/bin/true]}}\n";
	fwd_error_t err;
	struct policy *p = policy_defaults();

	round_trip(p);
	policy_destroy(p);

	p = policy_load(EXAMPLE, &err);
	assert_non_null(p);
	round_trip(p);
	policy_destroy(p);

	p = policy_load(write_file("rt-src.yaml", text, 0), &err);
	if (!p)
		fail_msg("%s", err.text);
	assert_string_equal(p->access.allow_users.items[0], "o'brien");
	assert_string_equal(p->database.user, "a\"b");
	assert_int_equal(p->database.hosts.count, 3);
	assert_string_equal(p->database.hosts.items[0], "[fe80::1]:3306");
	assert_string_equal(p->anomaly.ost_exclude_command.argv[2], "a\tb");
	round_trip(p);
	policy_destroy(p);
}

static void test_json(void **state)
{
	struct policy *p = policy_defaults();
	char *s = policy_to_json(p);

	assert_non_null(s);
	/* Raw units in JSON: bytes, bytes/s, seconds, fractions. */
	assert_non_null(strstr(s, "\"min_volume\": 21474836480"));
	assert_non_null(strstr(s, "\"high_bandwidth\": 5000000000.0"));
	assert_non_null(strstr(s, "\"max_age\": 7776000.0"));
	assert_non_null(strstr(s, "\"max_pool_share\": 0.5"));
	assert_non_null(strstr(s, "\"mode\": \"opt-in\""));
	assert_non_null(strstr(s, "\"socket\": null"));
	assert_non_null(strstr(s, "\"digest\": \"defaults\""));
	assert_non_null(strstr(s, "\"key\": [\n      \"user\",\n"));
	free(s);
	policy_destroy(p);
}

/* ---- interference classes --------------------------------------------- */

enum { TW_NONE, TW_BW_OFF, TW_N1_ZERO };

#define N1 POLICY_DISRUPT_N_TO_1
#define MD POLICY_DISRUPT_METADATA
#define BW POLICY_DISRUPT_BANDWIDTH

/* Default thresholds: N-1 > 64 nodes, > 300 md ops/s, peak > 5 GB/s. */
static void test_disruptive(void **state)
{
	static const struct {
		int tweak;
		bool n_to_1;
		size_t nodes;
		double mdops, peak;
		unsigned want;
		const char *why;
	} tab[] = {
		{TW_NONE, false, 1000, 0, 0, 0, ""},
		{TW_NONE, true, 64, 0, 0, 0, ""},
		{TW_NONE, true, 65, 0, 0, N1, "N-1 I/O on 65 nodes > 64"},
		{TW_NONE, false, 65, 0, 0, 0, ""},
		{TW_NONE, true, SIZE_MAX, 0, 0, N1,
		 "N-1 I/O on 18446744073709551615 nodes > 64"},
		{TW_NONE, false, 1, 300, 0, 0, ""},
		{TW_NONE, false, 1, 301, 0, MD,
		 "metadata-heavy: 301 ops/s > 300 ops/s"},
		{TW_NONE, false, 1, 0, 5e9, 0, ""},
		{TW_NONE, false, 1, 0, 6e9, BW,
		 "high bandwidth: peak 6GB/s > 5GB/s"},
		{TW_NONE, false, 1, 0, 5.25e9, BW,
		 "high bandwidth: peak 5.25GB/s > 5GB/s"},
		/* Every rule met: all bits, the first rule's sentence. */
		{TW_NONE, true, 128, 500, 6e9, N1 | MD | BW,
		 "N-1 I/O on 128 nodes > 64"},
		{TW_NONE, false, 128, 500, 6e9, MD | BW,
		 "metadata-heavy: 500 ops/s > 300 ops/s"},
		{TW_BW_OFF, false, 1, 0, 1e15, 0, ""},
		{TW_BW_OFF, true, 65, 0, 1e15, N1, "N-1 I/O on 65 nodes > 64"},
		{TW_N1_ZERO, true, 1, 0, 0, N1, "N-1 I/O on 1 node > 0"},
		{TW_N1_ZERO, true, 0, 0, 0, 0, ""},
	};
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct policy_interference *in = &p->decision.interference;
		char why[160] = "junk";
		unsigned got, bare;

		in->high_bandwidth = tab[i].tweak == TW_BW_OFF ? 0 : 5e9;
		in->n1_min_nodes = tab[i].tweak == TW_N1_ZERO ? 0 : 64;
		got = policy_job_disruptive(
			&p->decision.interference, tab[i].n_to_1, tab[i].nodes,
			tab[i].mdops, tab[i].peak, why, sizeof(why));
		/* Without a buffer: the same answer. */
		bare = policy_job_disruptive(
			&p->decision.interference, tab[i].n_to_1, tab[i].nodes,
			tab[i].mdops, tab[i].peak, NULL, 0);
		if (got != tab[i].want || bare != tab[i].want ||
		    strcmp(why, tab[i].why))
			fail_msg("case %zu: got %#x (%#x without why) '%s', "
				 "want %#x '%s'",
				 i, got, bare, why, tab[i].want, tab[i].why);
	}
	/* A buffer of length 0 is not written, not even its first byte. */
	{
		char why[8] = "junk";

		assert_int_equal(
			policy_job_disruptive(&p->decision.interference, true,
					      128, 500, 6e9, why, 0),
			N1 | MD | BW);
		assert_string_equal(why, "junk");
	}
	policy_destroy(p);
}

/* Every mode and driver by name and back; unknown names and NULL refused. */
static void test_names_roundtrip(void **state)
{
	static const struct {
		const char *name;
		int mode; /* -1: not a mode */
	} modes[] = {
		{"off", POLICY_MODE_OFF},
		{"opt-in", POLICY_MODE_OPT_IN},
		{"opt-out", POLICY_MODE_OPT_OUT},
		{"shadow", POLICY_MODE_SHADOW},
		{"Off", -1},
		{"", -1},
		{"opt-in ", -1},
	};
	static const struct {
		const char *name;
		int driver;
	} drivers[] = {
		{"none", POLICY_DRIVER_NONE},
		{"exec", POLICY_DRIVER_EXEC},
		{"verbs", POLICY_DRIVER_VERBS},
		{"lwfs", POLICY_DRIVER_LWFS},
		{"lnet", POLICY_DRIVER_LNET},
		{"rdma", -1},
		{"", -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		enum policy_mode m = POLICY_MODE_SHADOW;
		int rv = policy_mode_parse(modes[i].name, &m);

		if (modes[i].mode < 0 ? rv != -1
				      : rv != 0 || (int)m != modes[i].mode ||
						strcmp(policy_mode_name(m),
						       modes[i].name))
			fail_msg("mode '%s': %d (%d)", modes[i].name, rv,
				 (int)m);
	}
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		enum policy_driver d = POLICY_DRIVER_LNET;
		int rv = policy_driver_parse(drivers[i].name, &d);

		if (drivers[i].driver < 0
			    ? rv != -1
			    : rv != 0 || (int)d != drivers[i].driver ||
				      strcmp(policy_driver_name(d),
					     drivers[i].name))
			fail_msg("driver '%s': %d (%d)", drivers[i].name, rv,
				 (int)d);
	}
	{
		enum policy_mode m;
		enum policy_driver d;

		assert_int_equal(policy_mode_parse(NULL, &m), -1);
		assert_int_equal(policy_driver_parse(NULL, &d), -1);
	}
}

/* Default threshold: more than 1000 IOPS. */
static void test_vulnerable(void **state)
{
	static const struct {
		double vulnerable_iops, iops;
		bool want;
	} tab[] = {
		/* clang-format off */
		{1000, 0, false},
		{1000, 1000, false},
		{1000, 1000.5, true},
		{1000, 5000, true},
		{0, 0, false},
		{0, 0.1, true},
		{1000, NAN, false},
		/* clang-format on */
	};
	struct policy *p = policy_defaults();

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		p->decision.interference.vulnerable_iops =
			tab[i].vulnerable_iops;
		if (policy_job_vulnerable(&p->decision.interference,
					  tab[i].iops) != tab[i].want)
			fail_msg("case %zu: %g IOPS against %g: want %s", i,
				 tab[i].iops, tab[i].vulnerable_iops,
				 tab[i].want ? "vulnerable" : "not");
	}
	policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_is_defaults),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_direct_driver_none),
		cmocka_unit_test(test_direct_driver_exec),
		cmocka_unit_test(test_relative_topology),
		cmocka_unit_test(test_empty_sections),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_disruptive),
		cmocka_unit_test(test_vulnerable),
		cmocka_unit_test(test_names_roundtrip),
	};

	return cmocka_run_group_tests_name("policy", tests, setup, teardown);
}
