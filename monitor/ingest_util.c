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

static int digits(const char *s, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int ingest_parse_iso8601(const char *s, size_t len, int64_t *out)
{
	struct tm tm = {0};
	int y, mo, d, h, mi, sec;
	size_t i = 19;
	time_t t;

	if (len < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
		goto bad;
	if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) ||
	    digits(s + 17, 2, &sec))
		goto bad;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 59 || y < 1970)
		goto bad;
	if (s[i] == '.' || s[i] == ',') {
		i++;
		if (i >= len || s[i] < '0' || s[i] > '9')
			goto bad;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	/* UTC only: the format promises UTC, and a local offset here would
	 * mean the producer is misconfigured. */
	if (len - i == 1 && s[i] == 'Z')
		;
	else if (len - i == 6 &&
		 (!strncmp(s + i, "+00:00", 6) || !strncmp(s + i, "-00:00", 6)))
		;
	else
		goto bad;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		goto bad;
	/* timegm normalises 31 February into March: refuse that. */
	{
		struct tm chk;

		gmtime_r(&t, &chk);
		if (chk.tm_mday != d)
			goto bad;
	}
	*out = (int64_t)t;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}
