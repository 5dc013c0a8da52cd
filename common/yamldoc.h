/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_YAMLDOC_H
#define FWD_COMMON_YAMLDOC_H

/*
 * A YAML file read with libyaml into a small tree whose every node carries
 * its line:column and its key path ("decision.scale.min_volume",
 * "forwarders[3].name"), so that loaders can report
 * "FILE:LINE:COL: key.path: value 'X': what is allowed".
 *
 * Refused while reading, each with file:line:column: a missing or
 * unreadable file, a file that is not a regular file, an empty file (no
 * document, or a document holding only a null), invalid UTF-8, syntax
 * errors, more than one document, duplicate mapping keys, non-scalar
 * mapping keys, anchors, aliases and explicit tags (configuration files
 * should read the same to a person and to the program).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

enum ydoc_kind {
	YDOC_SCALAR,
	YDOC_SEQUENCE,
	YDOC_MAPPING,
};

struct ydoc_node;

struct ydoc_pair {
	struct ydoc_node *key; /* always a scalar */
	struct ydoc_node *value;
};

struct ydoc_node {
	enum ydoc_kind kind;
	unsigned long line, column; /* 1-based */
	char *path;		    /* "" for the root */
	/* YDOC_SCALAR */
	char *value; /* never NULL */
	bool plain;  /* unquoted, not a block scalar */
	/* YDOC_SEQUENCE */
	struct ydoc_node **items;
	size_t n_items;
	/* YDOC_MAPPING, in file order */
	struct ydoc_pair *pairs;
	size_t n_pairs;
};

struct ydoc {
	char *path;	      /* as given to ydoc_load() */
	unsigned char *bytes; /* the file's bytes, NUL-terminated */
	size_t len;
	struct ydoc_node *root;
};

/* Read and parse a file.  NULL with errno and err set on any refusal. */
struct ydoc *ydoc_load(const char *path, fwd_error_t *err);

/* Parse a buffer; `name` stands for the file name in messages. */
struct ydoc *ydoc_parse(const char *name, const void *buf, size_t len,
			fwd_error_t *err);

void ydoc_destroy(struct ydoc *d);

/* A plain scalar spelling null: "", "~", "null", "Null", "NULL". */
bool ydoc_is_null(const struct ydoc_node *n);

/* "a mapping", "a sequence" or "a scalar", for messages. */
const char *ydoc_kind_name(const struct ydoc_node *n);

/* Value of key in a mapping, or NULL. */
struct ydoc_node *ydoc_get(const struct ydoc_node *map, const char *key);

/*
 * Format "FILE:LINE:COL: <fmt>" for node n into err and return -1 with
 * errno = EINVAL.
 */
int ydoc_error(fwd_error_t *err, const struct ydoc *d,
	       const struct ydoc_node *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The same with the node's key path after the position, as the loaders
 * report a bad value: "FILE:LINE:COL: key.path: <fmt>" (no path for the
 * root), from a va_list.
 */
int ydoc_vpath_error(fwd_error_t *err, const struct ydoc *d,
		     const struct ydoc_node *n, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif
