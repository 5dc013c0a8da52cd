/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl's tables (cli/table.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/table.h"

bool fwdctl_table_option(struct fwdctl_table *t, int c)
{
	if (c == 'P')
		t->parsable = true;
	else if (c == 'n')
		t->noheader = true;
	else
		return false;
	return true;
}

static void print_cells(const struct fwdctl_table *t, const char *const *c)
{
	for (size_t i = 0; i < t->ncols; i++) {
		const char *v = c[i] ? c[i] : "-";
		bool last = i + 1 == t->ncols;

		if (t->parsable)
			printf("%s%s", i ? "|" : "", v);
		else if (last)
			printf("%s%s", i ? " " : "", v);
		else
			printf("%s%*s", i ? " " : "", -t->width[i], v);
	}
	putchar('\n');
}

void fwdctl_table_header(struct fwdctl_table *t)
{
	if (t->header_done)
		return;
	t->header_done = true;
	if (!t->noheader)
		print_cells(t, t->head);
}

void fwdctl_table_row(struct fwdctl_table *t, const char *const *cells)
{
	fwdctl_table_header(t);
	print_cells(t, cells);
}
