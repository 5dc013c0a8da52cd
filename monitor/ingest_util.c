/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared pieces of the ingestion parsers: the bounded line reader, ISO-8601
 * times, component kind names.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "monitor/ingest.h"

const char *ingest_kind_name(enum ingest_kind k)
{
	switch (k) {
	case INGEST_FWD:
		return "fwd";
	case INGEST_OST:
		return "ost";
	case INGEST_MDT:
		return "mdt";
	}
	return "?";
}

void ingest_reader_init(struct ingest_reader *r, FILE *f)
{
	r->f = f;
	r->lineno = 0;
	r->buf[0] = '\0';
}

const char *ingest_reader_next(struct ingest_reader *r, bool *truncated)
{
	size_t len;

	*truncated = false;
	if (!fgets(r->buf, sizeof(r->buf), r->f))
		return NULL;
	r->lineno++;
	len = strlen(r->buf);
	if (len > 0 && r->buf[len - 1] == '\n') {
		r->buf[--len] = '\0';
	} else if (!feof(r->f)) {
		int c;

		/* Too long: drop the rest of the line, keep memory bounded. */
		*truncated = true;
		while ((c = getc(r->f)) != EOF && c != '\n')
			;
	}
	if (len > 0 && r->buf[len - 1] == '\r')
		r->buf[--len] = '\0';
	return r->buf;
}
