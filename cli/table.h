/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CLI_TABLE_H
#define FWD_CLI_TABLE_H

/*
 * The tables fwdctl prints, one way for every command: aligned columns
 * under a header by default; -n/--noheader drops the header; -P/--parsable
 * prints every field as is, separated by '|', no padding and no trailing
 * separator (sacct's --parsable2), for scripts.
 */

#include <stdbool.h>
#include <stddef.h>

struct fwdctl_table {
	const char *const *head; /* the column titles */
	const int *width;	 /* padded width of each column but the last;
				  * negative: aligned right */
	size_t ncols;
	bool parsable; /* -P */
	bool noheader; /* -n */
	bool header_done;
};

/* The long options and the short option letters every table command
 * accepts (add to its own), and their handling: true if c was one. */
#define FWDCTL_TABLE_SHORTOPTS "Pn"
/* clang-format 14 takes the last initializer for a block, 19 does not:
 * the list is laid out by hand (tests/integration/tree_layout.sh). */
/* clang-format off */
#define FWDCTL_TABLE_LONGOPTS \
	{"parsable", no_argument, NULL, 'P'}, \
	{"noheader", no_argument, NULL, 'n'}
/* clang-format on */
bool fwdctl_table_option(struct fwdctl_table *t, int c);

/* The header, once (nothing with noheader). */
void fwdctl_table_header(struct fwdctl_table *t);
/* One row of t->ncols cells (NULL prints "-"); the header first. */
void fwdctl_table_row(struct fwdctl_table *t, const char *const *cells);

/* The help lines of the two options. */
#define FWDCTL_TABLE_HELP                                                     \
	"  -P, --parsable  fields separated by '|', unpadded (for scripts)\n" \
	"  -n, --noheader  no header line\n"

#endif
