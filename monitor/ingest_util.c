/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared pieces of the ingestion parsers: the bounded line reader, ISO-8601
 * times, component kind names.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	r->fd = fileno(f);
	r->lineno = 0;
	r->start = r->end = 0;
	r->eof = r->skip = false;
	r->error = 0;
}

/* More bytes after buf[end]: 0 at the end, -1 on an error. */
static ssize_t fill(struct ingest_reader *r)
{
	size_t room = sizeof(r->buf) - 1 - r->end;
	ssize_t n;

	if (r->fd < 0) {
		n = (ssize_t)fread(r->buf + r->end, 1, room, r->f);
		if (n == 0 && ferror(r->f)) {
			r->error = errno ? errno : EIO;
			return -1;
		}
		return n;
	}
	do
		n = read(r->fd, r->buf + r->end, room);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		r->error = errno;
	return n;
}

/* The line at s (n bytes, NUL-terminated at s[n]), counted, without its
 * '\r'. */
static const char *line_out(struct ingest_reader *r, char *s, size_t n)
{
	r->lineno++;
	if (n > 0 && s[n - 1] == '\r')
		s[n - 1] = '\0';
	return s;
}

const char *ingest_reader_next(struct ingest_reader *r, bool *truncated)
{
	*truncated = false;
	for (;;) {
		char *s = r->buf + r->start;
		size_t n = r->end - r->start;
		char *nl = memchr(s, '\n', n);
		ssize_t got;

		if (nl) {
			size_t len = (size_t)(nl - s);

			r->start += len + 1;
			if (r->skip) {
				r->skip = false;
				continue;
			}
			if (len > INGEST_MAX_LINE - 1) {
				len = INGEST_MAX_LINE - 1;
				*truncated = true;
			}
			s[len] = '\0';
			return line_out(r, s, len);
		}
		if (r->skip) {
			/* the rest of a line too long: dropped */
			r->start = r->end = 0;
			n = 0;
		} else if (n >= INGEST_MAX_LINE) {
			/* a line too long: its first bytes, the rest dropped */
			s[INGEST_MAX_LINE - 1] = '\0';
			r->start = r->end = 0;
			r->skip = true;
			*truncated = true;
			return line_out(r, s, INGEST_MAX_LINE - 1);
		}
		if (r->eof) {
			if (!n)
				return NULL;
			s[n] = '\0'; /* the last line, without a newline */
			r->start = r->end;
			return line_out(r, s, n);
		}
		if (r->start) {
			memmove(r->buf, s, n);
			r->start = 0;
			r->end = n;
		}
		got = fill(r);
		if (got < 0)
			return NULL;
		if (got == 0)
			r->eof = true;
		r->end += (size_t)got;
	}
}

bool ingest_reader_ready(const struct ingest_reader *r)
{
	return r->eof || r->error ||
	       memchr(r->buf + r->start, '\n', r->end - r->start) != NULL;
}

int ingest_reader_error(const struct ingest_reader *r)
{
	return r->error;
}
