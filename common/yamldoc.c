/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * YAML files into a position-carrying tree, with libyaml's event parser.
 * The whole file is read first: the loaders also fingerprint its bytes,
 * and reading once avoids a race between the digest and the parse.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/array.h"
#include "common/yamldoc.h"

/* Configuration files are small; refuse anything absurd early. */
#define MAX_FILE_SIZE (64UL << 20)
/* Nesting deeper than this is not a configuration file. */
#define MAX_DEPTH 64

struct builder {
	struct ydoc *doc;
	const char *name;
	yaml_parser_t parser;
	fwd_error_t *err;
};

static void node_free(struct ydoc_node *n)
{
	if (!n)
		return;
	free(n->path);
	free(n->value);
	for (size_t i = 0; i < n->n_items; i++)
		node_free(n->items[i]);
	free(n->items);
	for (size_t i = 0; i < n->n_pairs; i++) {
		node_free(n->pairs[i].key);
		node_free(n->pairs[i].value);
	}
	free(n->pairs);
	free(n);
}

void ydoc_destroy(struct ydoc *d)
{
	int saved = errno;

	if (!d)
		return;
	node_free(d->root);
	free(d->bytes);
	free(d->path);
	free(d);
	errno = saved;
}

static int pos_error(struct builder *b, unsigned long line, unsigned long col,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int pos_error(struct builder *b, unsigned long line, unsigned long col,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrprintf(b->err, fmt, ap);
	va_end(ap);
	errno = EINVAL;
	return errprefix(b->err, "%s:%lu:%lu", b->name, line, col);
}

int ydoc_error(fwd_error_t *err, const struct ydoc *d,
	       const struct ydoc_node *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrprintf(err, fmt, ap);
	va_end(ap);
	errno = EINVAL;
	if (!n)
		return errprefix(err, "%s", d->path);
	return errprefix(err, "%s:%lu:%lu", d->path, n->line, n->column);
}

int ydoc_vpath_error(fwd_error_t *err, const struct ydoc *d,
		     const struct ydoc_node *n, const char *fmt, va_list ap)
{
	verrprintf(err, fmt, ap);
	errno = EINVAL;
	if (n && *n->path)
		errprefix(err, "%s", n->path);
	if (!n)
		return errprefix(err, "%s", d->path);
	return errprefix(err, "%s:%lu:%lu", d->path, n->line, n->column);
}

/* Line and column (in characters) of a byte offset, for reader errors. */
static void offset_position(const unsigned char *buf, size_t len, size_t off,
			    unsigned long *line, unsigned long *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if ((buf[i] & 0xc0) != 0x80) {
			(*col)++; /* count characters, not continuation bytes */
		}
	}
}

static int parser_error(struct builder *b)
{
	yaml_parser_t *p = &b->parser;
	unsigned long line, col;

	if (p->error == YAML_READER_ERROR) {
		offset_position(b->doc->bytes, b->doc->len, p->problem_offset,
				&line, &col);
		if (p->problem_value != -1)
			return pos_error(b, line, col,
					 "invalid UTF-8: %s (byte 0x%02x)",
					 p->problem, p->problem_value & 0xff);
		return pos_error(b, line, col, "invalid UTF-8: %s", p->problem);
	}
	if (p->error == YAML_MEMORY_ERROR) {
		errno = ENOMEM;
		return errprintf(b->err, "%s: out of memory", b->name);
	}
	if (p->context)
		return pos_error(
			b, p->problem_mark.line + 1, p->problem_mark.column + 1,
			"invalid YAML: %s %s (line %lu)", p->problem,
			p->context, (unsigned long)p->context_mark.line + 1);
	return pos_error(b, p->problem_mark.line + 1,
			 p->problem_mark.column + 1, "invalid YAML: %s",
			 p->problem ? p->problem : "parse error");
}

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return parser_error(b);
	return 0;
}

static struct ydoc_node *node_new(enum ydoc_kind kind, const yaml_mark_t *m,
				  const char *path)
{
	struct ydoc_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->kind = kind;
	n->line = m->line + 1;
	n->column = m->column + 1;
	if (!(n->path = strdup(path))) {
		free(n);
		return NULL;
	}
	return n;
}

static char *child_path(const char *parent, const char *key, size_t index)
{
	char *s = NULL;
	int rc;

	if (key)
		rc = *parent ? asprintf(&s, "%s.%s", parent, key)
			     : asprintf(&s, "%s", key);
	else
		rc = asprintf(&s, "%s[%zu]", parent, index);
	return rc < 0 ? NULL : s;
}

static int check_plain_event(struct builder *b, const yaml_event_t *ev,
			     const char *path)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;
	const char *where = *path ? path : "document";

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return pos_error(b, ev->start_mark.line + 1,
				 ev->start_mark.column + 1,
				 "%s: aliases (*%s) are not supported; write "
				 "the value out",
				 where, (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		break;
	}
	if (anchor)
		return pos_error(b, ev->start_mark.line + 1,
				 ev->start_mark.column + 1,
				 "%s: anchors (&%s) are not supported; write "
				 "the value out",
				 where, (const char *)anchor);
	if (tag)
		return pos_error(b, ev->start_mark.line + 1,
				 ev->start_mark.column + 1,
				 "%s: tags (%s) are not supported; write the "
				 "plain value",
				 where, (const char *)tag);
	return 0;
}

static struct ydoc_node *build_node(struct builder *b, yaml_event_t *ev,
				    const char *path, int depth);

/* Build the sequence whose start event is ev. */
static int build_sequence(struct builder *b, struct ydoc_node *n, int depth)
{
	yaml_event_t ev;
	int rv = -1;

	for (;;) {
		struct ydoc_node *item, **items;
		char *cpath;

		if (next_event(b, &ev))
			return -1;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (!(cpath = child_path(n->path, NULL, n->n_items)))
			goto oom;
		item = build_node(b, &ev, cpath, depth + 1);
		free(cpath);
		if (!item)
			return -1;
		items = realloc(n->items, (n->n_items + 1) * sizeof(*items));
		if (!items) {
			node_free(item);
			goto oom_noev;
		}
		n->items = items;
		n->items[n->n_items++] = item;
	}
oom:
	yaml_event_delete(&ev);
oom_noev:
	errno = ENOMEM;
	errprintf(b->err, "%s: out of memory", b->name);
	return rv;
}

static int build_mapping(struct builder *b, struct ydoc_node *n, int depth)
{
	yaml_event_t ev;

	for (;;) {
		struct ydoc_node *key, *value;
		struct ydoc_pair *pairs;
		char *cpath;

		if (next_event(b, &ev))
			return -1;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			int rc = check_plain_event(b, &ev, n->path);

			if (!rc)
				rc = pos_error(b, ev.start_mark.line + 1,
					       ev.start_mark.column + 1,
					       "%s: mapping keys must be plain "
					       "names",
					       *n->path ? n->path : "document");
			yaml_event_delete(&ev);
			return rc;
		}
		if (!(cpath = child_path(n->path,
					 (const char *)ev.data.scalar.value,
					 0))) {
			yaml_event_delete(&ev);
			goto oom;
		}
		key = build_node(b, &ev, cpath, depth + 1);
		if (!key) {
			free(cpath);
			return -1;
		}
		for (size_t i = 0; i < n->n_pairs; i++) {
			if (!strcmp(n->pairs[i].key->value, key->value)) {
				pos_error(b, key->line, key->column,
					  "%s: duplicate key '%s' (first at "
					  "line %lu)",
					  cpath, key->value,
					  n->pairs[i].key->line);
				free(cpath);
				node_free(key);
				return -1;
			}
		}
		if (next_event(b, &ev)) {
			free(cpath);
			node_free(key);
			return -1;
		}
		value = build_node(b, &ev, cpath, depth + 1);
		free(cpath);
		if (!value) {
			node_free(key);
			return -1;
		}
		pairs = realloc(n->pairs, (n->n_pairs + 1) * sizeof(*pairs));
		if (!pairs) {
			node_free(key);
			node_free(value);
			goto oom;
		}
		n->pairs = pairs;
		n->pairs[n->n_pairs].key = key;
		n->pairs[n->n_pairs].value = value;
		n->n_pairs++;
	}
oom:
	errno = ENOMEM;
	return errprintf(b->err, "%s: out of memory", b->name);
}

/* Takes ownership of ev (deletes it). */
static struct ydoc_node *build_node(struct builder *b, yaml_event_t *ev,
				    const char *path, int depth)
{
	struct ydoc_node *n = NULL;
	enum ydoc_kind kind;
	int rc;

	if (check_plain_event(b, ev, path))
		goto fail;
	if (depth > MAX_DEPTH) {
		pos_error(b, ev->start_mark.line + 1, ev->start_mark.column + 1,
			  "%s: nested too deeply (more than %d levels)", path,
			  MAX_DEPTH);
		goto fail;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		kind = YDOC_SCALAR;
		break;
	case YAML_SEQUENCE_START_EVENT:
		kind = YDOC_SEQUENCE;
		break;
	case YAML_MAPPING_START_EVENT:
		kind = YDOC_MAPPING;
		break;
	default:
		pos_error(b, ev->start_mark.line + 1, ev->start_mark.column + 1,
			  "invalid YAML: unexpected event");
		goto fail;
	}
	if (!(n = node_new(kind, &ev->start_mark, path)))
		goto oom;
	if (kind == YDOC_SCALAR) {
		n->value = strndup((const char *)ev->data.scalar.value,
				   ev->data.scalar.length);
		if (!n->value)
			goto oom;
		if (strlen(n->value) != ev->data.scalar.length) {
			pos_error(b, n->line, n->column,
				  "%s: NUL character in value", path);
			goto fail;
		}
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		yaml_event_delete(ev);
		return n;
	}
	yaml_event_delete(ev);
	rc = kind == YDOC_SEQUENCE ? build_sequence(b, n, depth)
				   : build_mapping(b, n, depth);
	if (rc) {
		node_free(n);
		return NULL;
	}
	return n;
oom:
	errno = ENOMEM;
	errprintf(b->err, "%s: out of memory", b->name);
fail:
	yaml_event_delete(ev);
	node_free(n);
	return NULL;
}

static int build_document(struct builder *b)
{
	yaml_event_t ev;
	int docs = 0;

	if (next_event(b, &ev))
		return -1;
	if (ev.type != YAML_STREAM_START_EVENT) {
		yaml_event_delete(&ev);
		return pos_error(b, 1, 1, "invalid YAML: no stream start");
	}
	yaml_event_delete(&ev);
	for (;;) {
		if (next_event(b, &ev))
			return -1;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&ev);
			return pos_error(b, 1, 1, "invalid YAML: no document");
		}
		if (++docs > 1) {
			int rc = pos_error(b, ev.start_mark.line + 1,
					   ev.start_mark.column + 1,
					   "a second YAML document; the file "
					   "must hold exactly one");
			yaml_event_delete(&ev);
			return rc;
		}
		yaml_event_delete(&ev);
		if (next_event(b, &ev))
			return -1;
		if (!(b->doc->root = build_node(b, &ev, "", 0)))
			return -1;
		if (next_event(b, &ev))
			return -1;
		yaml_event_delete(&ev); /* document end */
	}
	if (!docs) {
		errno = EINVAL;
		return errprintf(b->err, "%s:1:1: file is empty", b->name);
	}
	if (ydoc_is_null(b->doc->root)) {
		errno = EINVAL;
		return pos_error(b, b->doc->root->line, b->doc->root->column,
				 "document is empty");
	}
	return 0;
}

struct ydoc *ydoc_parse(const char *name, const void *buf, size_t len,
			fwd_error_t *err)
{
	struct builder b = {.name = name, .err = err};
	struct ydoc *d = calloc(1, sizeof(*d));

	if (!d || !(d->path = strdup(name)) || !(d->bytes = malloc(len + 1))) {
		ydoc_destroy(d);
		errno = ENOMEM;
		errprintf(err, "%s: out of memory", name);
		return NULL;
	}
	memcpy(d->bytes, buf, len);
	d->bytes[len] = '\0';
	d->len = len;
	b.doc = d;
	if (!yaml_parser_initialize(&b.parser)) {
		ydoc_destroy(d);
		errno = ENOMEM;
		errprintf(err, "%s: out of memory", name);
		return NULL;
	}
	yaml_parser_set_input_string(&b.parser, d->bytes, len);
	/* libyaml also accepts UTF-16 with a BOM; configuration is UTF-8. */
	yaml_parser_set_encoding(&b.parser, YAML_UTF8_ENCODING);
	if (build_document(&b)) {
		yaml_parser_delete(&b.parser);
		ydoc_destroy(d);
		errno = errno ? errno : EINVAL;
		return NULL;
	}
	yaml_parser_delete(&b.parser);
	return d;
}

struct ydoc *ydoc_load(const char *path, fwd_error_t *err)
{
	struct ydoc *d = NULL;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int fd;

	/* O_NONBLOCK: naming a FIFO must not hang; cleared effect for regular
	 * files, which never block. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		errprintf(err, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		errprintf(err, "%s: cannot stat: %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		errprintf(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		errprintf(err, "%s: cannot read: not a regular file", path);
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap >= MAX_FILE_SIZE) {
				errno = EFBIG;
				errprintf(err,
					  "%s: file too large (over %lu "
					  "MiB)",
					  path, MAX_FILE_SIZE >> 20);
				goto out;
			}
			if (FWD_GROW(buf, cap, len + 1, 8192) < 0) {
				errprintf(err, "%s: out of memory", path);
				goto out;
			}
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errprintf(err, "%s: cannot read: %s", path,
				  strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	d = ydoc_parse(path, buf ? (const void *)buf : "", len, err);
out:
	free(buf);
	close(fd);
	return d;
}

bool ydoc_is_null(const struct ydoc_node *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};

	if (!n || n->kind != YDOC_SCALAR || !n->plain)
		return false;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (!strcmp(n->value, nulls[i]))
			return true;
	return false;
}

const char *ydoc_kind_name(const struct ydoc_node *n)
{
	switch (n->kind) {
	case YDOC_MAPPING:
		return "a mapping";
	case YDOC_SEQUENCE:
		return "a sequence";
	default:
		return "a scalar";
	}
}

struct ydoc_node *ydoc_get(const struct ydoc_node *map, const char *key)
{
	if (!map || map->kind != YDOC_MAPPING)
		return NULL;
	for (size_t i = 0; i < map->n_pairs; i++)
		if (!strcmp(map->pairs[i].key->value, key))
			return map->pairs[i].value;
	return NULL;
}
