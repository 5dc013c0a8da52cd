/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The YAML reader: tree shape, positions and paths of a good document, and
 * the exact message of every refusal.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/yamldoc.h"

/* open() is wrapped by tests/unit/wrap_eacces.c: paths ending in
 * "/eacces.yaml" fail with EACCES, since the suite runs as root. */

static const struct {
	const char *name;
	const char *text;
	size_t len; /* 0 = strlen(text) */
	const char *msg;
} bad[] = {
	{"empty", "", 0, "t.yaml:1:1: file is empty"},
	{"only a comment", "# nothing here\n\n", 0,
	 "t.yaml:1:1: file is empty"},
	{"null document", "---\n", 0, "t.yaml:2:1: document is empty"},
	{"tilde document", "~\n", 0, "t.yaml:1:1: document is empty"},
	{"duplicate key", "a: 1\nb: 2\na: 3\n", 0,
	 "t.yaml:3:1: a: duplicate key 'a' (first at line 1)"},
	{"nested duplicate", "x:\n  y:\n    - a\n    - b: 1\n      b: 2\n", 0,
	 "t.yaml:5:7: x.y[1].b: duplicate key 'b' (first at line 4)"},
	{"unclosed flow", "a: [1, 2\nb: 3\n", 0,
	 "t.yaml:2:2: invalid YAML: did not find expected ',' or ']' "
	 "while parsing a flow sequence (line 1)"},
	{"bad indentation", "a:\n  b: 1\n c: 2\n", 0,
	 "t.yaml:3:2: invalid YAML: did not find expected key while "
	 "parsing a block mapping (line 1)"},
	{"tab indentation", "a:\n\tb: 1\n", 0,
	 "t.yaml:2:1: invalid YAML: found character that cannot start any "
	 "token while scanning for the next token (line 2)"},
	{"invalid utf-8 leading", "a: 1\nbb: x\xff\n", 0,
	 "t.yaml:2:6: invalid UTF-8: invalid leading UTF-8 octet "
	 "(byte 0xff)"},
	{"invalid utf-8 trailing", "name: caf\xc3\x28\n", 0,
	 "t.yaml:1:11: invalid UTF-8: invalid trailing UTF-8 octet "
	 "(byte 0x28)"},
	{"utf-8 column counts characters", "k: \xc3\xa9\xc3\xa9\xff\n", 0,
	 "t.yaml:1:6: invalid UTF-8: invalid leading UTF-8 octet "
	 "(byte 0xff)"},
	{"truncated utf-8", "a: \xe2\x82", 0,
	 "t.yaml:1:4: invalid UTF-8: incomplete UTF-8 octet sequence"},
	{"NUL byte", "a: 1\n\0b: 2\n", 11,
	 "t.yaml:2:1: invalid UTF-8: control characters are not allowed "
	 "(byte 0x00)"},
	{"anchor", "a: &x 1\nb: *x\n", 0,
	 "t.yaml:1:4: a: anchors (&x) are not supported; write the value "
	 "out"},
	{"alias", "a: 1\nb: *x\n", 0,
	 "t.yaml:2:4: b: aliases (*x) are not supported; write the value "
	 "out"},
	{"tag", "a: !!str 1\n", 0,
	 "t.yaml:1:4: a: tags (tag:yaml.org,2002:str) are not supported; "
	 "write the plain value"},
	{"two documents", "a: 1\n---\nb: 2\n", 0,
	 "t.yaml:2:1: a second YAML document; the file must hold exactly "
	 "one"},
	{"complex key", "? [a]\n: 1\n", 0,
	 "t.yaml:1:3: document: mapping keys must be plain names"},
};

static void test_bad(void **state)
{
	fwd_error_t e;
	int failed = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
		struct ydoc *d;

		memset(&e, 0, sizeof(e));
		errno = 0;
		d = ydoc_parse("t.yaml", bad[i].text, len, &e);
		if (d)
			fail_msg("%s: parsed", bad[i].name);
		assert_int_equal(errno, EINVAL);
		if (strcmp(e.text, bad[i].msg)) {
			print_error("%s:\n got  %s\n want %s\n", bad[i].name,
				    e.text, bad[i].msg);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* Nesting at the limit: a value 64 levels below the root's mapping (63
 * nested keys and the leaf's) parses, one level more does not. */
static void test_depth_edge(void **state)
{
	(void)state;
	for (int depth = 61; depth <= 66; depth++) {
		char text[16384];
		size_t len = 0;
		struct ydoc *d;
		fwd_error_t e;

		for (int i = 0; i < depth; i++)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"%*sk%d:\n", 2 * i, "", i);
		snprintf(text + len, sizeof(text) - len, "%*sleaf: 1\n",
			 2 * depth, "");
		memset(&e, 0, sizeof(e));
		d = ydoc_parse("t.yaml", text, strlen(text), &e);
		if ((d != NULL) != (depth < 64))
			fail_msg("%d levels: %s", depth, d ? "parsed" : e.text);
		if (!d && !strstr(e.text, "nested too deeply (more than 64 "
					  "levels)"))
			fail_msg("%d levels: %s", depth, e.text);
		ydoc_destroy(d);
	}
}

static void test_good(void **state)
{
	static const char text[] = "# comment\n"
				   "name: \"quoted\"\n"
				   "list:\n"
				   "  - one\n"
				   "  - {k: v}\n"
				   "empty:\n"
				   "nested:\n"
				   "  deep: 'x'\n";
	fwd_error_t e;
	struct ydoc *d = ydoc_parse("g.yaml", text, strlen(text), &e);
	struct ydoc_node *r, *n;

	if (!d)
		fail_msg("%s", e.text);
	r = d->root;
	assert_int_equal(r->kind, YDOC_MAPPING);
	assert_int_equal(r->n_pairs, 4);
	assert_string_equal(r->path, "");

	n = ydoc_get(r, "name");
	assert_non_null(n);
	assert_int_equal(n->kind, YDOC_SCALAR);
	assert_string_equal(n->value, "quoted");
	assert_false(n->plain);
	assert_int_equal(n->line, 2);
	assert_int_equal(n->column, 7);
	assert_string_equal(n->path, "name");

	n = ydoc_get(r, "list");
	assert_int_equal(n->kind, YDOC_SEQUENCE);
	assert_int_equal(n->n_items, 2);
	assert_string_equal(n->items[0]->value, "one");
	assert_true(n->items[0]->plain);
	assert_string_equal(n->items[0]->path, "list[0]");
	assert_int_equal(n->items[1]->kind, YDOC_MAPPING);
	assert_string_equal(n->items[1]->pairs[0].value->path, "list[1].k");
	assert_int_equal(n->items[1]->pairs[0].key->line, 5);
	assert_int_equal(n->items[1]->pairs[0].key->column, 6);

	n = ydoc_get(r, "empty");
	assert_true(ydoc_is_null(n));
	assert_string_equal(ydoc_kind_name(n), "a scalar");

	n = ydoc_get(ydoc_get(r, "nested"), "deep");
	assert_string_equal(n->path, "nested.deep");
	assert_false(ydoc_is_null(n));
	assert_null(ydoc_get(r, "missing"));
	assert_null(ydoc_get(n, "deep")); /* not a mapping */

	/* The raw bytes are kept for the digest. */
	assert_int_equal(d->len, strlen(text));
	assert_memory_equal(d->bytes, text, d->len);

	/* ydoc_error formats the node's position. */
	assert_int_equal(ydoc_error(&e, d, n, "%s: bad", n->path), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(e.text, "g.yaml:8:9: nested.deep: bad");
	ydoc_destroy(d);
	ydoc_destroy(NULL);
}

static void test_quoted_null_is_a_string(void **state)
{
	fwd_error_t e;
	struct ydoc *d = ydoc_parse("q.yaml", "a: 'null'\nb: null\n", 18, &e);

	assert_non_null(d);
	assert_false(ydoc_is_null(ydoc_get(d->root, "a")));
	assert_true(ydoc_is_null(ydoc_get(d->root, "b")));
	ydoc_destroy(d);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/ydoc.XXXXXX", path[256];
	fwd_error_t e;
	struct ydoc *d;
	FILE *f;

	assert_non_null(mkdtemp(dir));

	snprintf(path, sizeof(path), "%s/missing.yaml", dir);
	assert_null(ydoc_load(path, &e));
	assert_int_equal(errno, ENOENT);
	char want[512];
	snprintf(want, sizeof(want),
		 "%s: cannot open: No such file or directory", path);
	assert_string_equal(e.text, want);

	/* A directory opens but cannot be read as a file. */
	assert_null(ydoc_load(dir, &e));
	assert_int_equal(errno, EISDIR);
	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", dir);
	assert_string_equal(e.text, want);

	/* Simulated EACCES (see __wrap_open above). */
	snprintf(path, sizeof(path), "%s/eacces.yaml", dir);
	assert_null(ydoc_load(path, &e));
	assert_int_equal(errno, EACCES);
	snprintf(want, sizeof(want), "%s: cannot open: Permission denied",
		 path);
	assert_string_equal(e.text, want);

	/* A device is not a regular file. */
	assert_null(ydoc_load("/dev/null", &e));
	assert_string_equal(e.text,
			    "/dev/null: cannot read: not a regular file");

	/* An empty file on disk. */
	snprintf(path, sizeof(path), "%s/empty.yaml", dir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	assert_null(ydoc_load(path, &e));
	snprintf(want, sizeof(want), "%s:1:1: file is empty", path);
	assert_string_equal(e.text, want);

	/* A good file larger than the first read buffer. */
	assert_non_null(f = fopen(path, "w"));
	for (int i = 0; i < 2000; i++)
		fprintf(f, "key%04d: value %d\n", i, i);
	fclose(f);
	d = ydoc_load(path, &e);
	if (!d)
		fail_msg("%s", e.text);
	assert_int_equal(d->root->n_pairs, 2000);
	assert_string_equal(ydoc_get(d->root, "key1999")->value, "value 1999");
	assert_int_equal(ydoc_get(d->root, "key1999")->line, 2000);
	ydoc_destroy(d);

	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_depth_edge),
		cmocka_unit_test(test_quoted_null_is_a_string),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests_name("yamldoc", tests, NULL, NULL);
}
