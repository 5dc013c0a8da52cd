/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdio.h>

#include "bench/report.h"

/* Print s with tabs and newlines turned into spaces. */
static void put_field(const char *s)
{
	for (; s && *s; s++)
		putchar(*s == '\t' || *s == '\n' ? ' ' : *s);
}

void bench_figure(const char *bench, const char *name, double value,
		  const char *unit, double ref, const char *ref_name)
{
	double ratio = ref > 0 ? value / ref : 0;

	if (ref > 0)
		printf("  %-44s %12.6g %-8s ref %12.6g (%s)  ratio %.3g\n",
		       name, value, unit, ref, ref_name, ratio);
	else
		printf("  %-44s %12.6g %s\n", name, value, unit);
	fputs("@bench\t", stdout);
	put_field(bench);
	putchar('\t');
	put_field(name);
	printf("\t%.9g\t", value);
	put_field(unit);
	printf("\t%.9g\t", ref);
	put_field(ref > 0 ? ref_name : "");
	printf("\t%.9g\n", ratio);
	fflush(stdout);
}
