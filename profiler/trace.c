/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LWFS client trace lines: parsing, canonical formatting, streaming reader
 * for raw and compressed traces, and Beacon's first-pass compression.
 *
 * The parser is hand-written rather than sscanf()-based: it runs over
 * every line of every compute node's trace, and it must tell a broken
 * line from a good one exactly (sscanf accepts trailing garbage).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "profiler/trace.h"
#include "profiler/trace_zstd.h"

#define COMPRESSED_MAGIC "#fwdtrace-compressed 1"
#define PID_TAG "lwfs-fuse: "
/* Version 2 (the zstd-stored form) adds stream references ("=K ..."). */
#define COMPRESSED_MAGIC_V2 "#fwdtrace-compressed 2"
#define N_STREAMS 64

/*
 * Version 2's streams: the last READ/WRITE run of each of up to N_STREAMS
 * (operation, level, pid, descriptor, size, count) keys, in slots that
 * writer and reader fill the same way: a full record line updates the
 * slot of its key, or takes the next slot in turn (replacing what was
 * there); a reference "=K" line continues slot K and updates it.
 */
struct trace_streams {
	struct trace_rec last[N_STREAMS];
	bool used[N_STREAMS];
	unsigned next;
};

static bool same_stream(const struct trace_rec *a, const struct trace_rec *b)
{
	return a->op == b->op && a->level == b->level &&
	       a->has_pid == b->has_pid && a->pid == b->pid && a->fd == b->fd &&
	       a->size == b->size && a->count == b->count;
}

static int stream_find(const struct trace_streams *s, const struct trace_rec *r)
{
	for (int k = 0; k < N_STREAMS; k++)
		if (s->used[k] && same_stream(&s->last[k], r))
			return k;
	return -1;
}

/* The slot of r's key, updated to r, or a new slot. */
static void stream_note(struct trace_streams *s, const struct trace_rec *r,
			int k)
{
	if (k < 0) {
		k = (int)s->next;
		s->next = (s->next + 1) % N_STREAMS;
	}
	s->last[k] = *r;
	s->last[k].text = "";
	s->used[k] = true;
}

/* Where slot k's run ends: the offset a continuing run starts at; false
 * when that overflows. */
static bool stream_next_offset(const struct trace_rec *l, uint64_t *off)
{
	uint64_t step = l->size * l->count;

	if (step && l->n > (UINT64_MAX - l->offset) / step)
		return false;
	*off = l->offset + l->n * step;
	return true;
}

/* FUSE operations other than OPEN/READ/WRITE/RELEASE: metadata records. */
static const char *const meta_ops[] = {
	"ACCESS",  "CHMOD",	"CHOWN",    "CREATE",	  "FLUSH",
	"FORGET",  "FSYNC",	"FSYNCDIR", "GETATTR",	  "GETXATTR",
	"LINK",	   "LISTXATTR", "LOOKUP",   "MKDIR",	  "MKNOD",
	"OPENDIR", "READDIR",	"READLINK", "RELEASEDIR", "REMOVEXATTR",
	"RENAME",  "RMDIR",	"SETATTR",  "SETXATTR",	  "STATFS",
	"SYMLINK", "TRUNCATE",	"UNLINK",   "UTIMENS",
};

uint64_t trace_rec_bytes(const struct trace_rec *r)
{
	if (r->op != TRACE_OP_READ && r->op != TRACE_OP_WRITE)
		return 0;
	return r->size * r->count * r->n;
}

uint64_t trace_rec_requests(const struct trace_rec *r)
{
	if (r->op != TRACE_OP_READ && r->op != TRACE_OP_WRITE)
		return r->n;
	return r->count * r->n;
}

/* ---- civil time without the C library's time zone machinery ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "[YYYY-MM-DD HH:MM:SS]" -> seconds; -1 when malformed. */
static int parse_stamp(const char *s, int64_t *out)
{
	static const unsigned mdays[] = {31, 28, 31, 30, 31, 30,
					 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, se;

	if (s[0] != '[' || s[5] != '-' || s[8] != '-' || s[11] != ' ' ||
	    s[14] != ':' || s[17] != ':' || s[20] != ']')
		return -1;
	y = digits(s + 1, 4);
	mo = digits(s + 6, 2);
	d = digits(s + 9, 2);
	h = digits(s + 12, 2);
	mi = digits(s + 15, 2);
	se = digits(s + 18, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 ||
	    mi > 59 || se < 0 || se > 60)
		return -1;
	if ((unsigned)d > mdays[mo - 1] + (mo == 2 && is_leap(y)))
		return -1;
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 +
	       h * 3600 + mi * 60 + se;
	return 0;
}

/* Times a 4-digit year can express: what raw stamps can produce. */
#define STAMP_MIN (-62167219200LL) /* 0000-01-01 00:00:00 */
#define STAMP_MAX 253402300799LL   /* 9999-12-31 23:59:59 */

static void format_stamp(int64_t t, char buf[32])
{
	int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
	int64_t rem = t - days * 86400;
	int64_t y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	snprintf(buf, 32, "%04u-%02u-%02u %02u:%02u:%02u",
		 (unsigned)(y % 10000) % 10000u, m % 100u, d % 100u,
		 (unsigned)(rem / 3600) % 100u, (unsigned)(rem / 60 % 60),
		 (unsigned)(rem % 60));
}

/* ---- number scanning: advance *p, -1 on no digits or overflow ---- */

static int scan_dec(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned dgt = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - dgt) / 10)
			return -1;
		v = v * 10 + dgt;
	}
	*out = v;
	*p = s;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "0x<hex>" */
static int scan_hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int h, n = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	for (s += 2; (h = hexval(*s)) >= 0; s++, n++) {
		if (v >> 60)
			return -1;
		v = v << 4 | (uint64_t)h;
	}
	if (n == 0)
		return -1;
	*out = v;
	*p = s;
	return 0;
}

static bool skip_lit(const char **p, const char *lit)
{
	const char *q = *p;

	/* By hand: called several times per trace line. */
	while (*lit)
		if (*q++ != *lit++)
			return false;
	*p = q;
	return true;
}

static bool is_meta_op(const char *name)
{
	for (size_t i = 0; i < sizeof(meta_ops) / sizeof(meta_ops[0]); i++)
		if (!strcmp(name, meta_ops[i]))
			return true;
	return false;
}

/* ", name=<dec>" (paren form) or " name=<dec>" (bare form). */
static int field(const char **p, bool paren, const char *name, uint64_t *v,
		 fwd_error_t *err)
{
	const char *q = *p, *e;

	if (!skip_lit(&q, paren ? ", " : " ") || !skip_lit(&q, name) ||
	    *q++ != '=')
		return errprintf(err, "missing %s= near \"%.20s\"", name, *p);
	e = q;
	if (scan_dec(&e, v) || (*e && *e != ',' && *e != ')' && *e != ' ')) {
		size_t n = strcspn(q, ", )");

		return errprintf(err, "bad %s=%.*s", name,
				 (int)(n > 24 ? 24 : n), q);
	}
	*p = e;
	return 0;
}

/* READ/WRITE arguments, both forms; p is just after the operation name. */
static int parse_rw(const char *p, struct trace_rec *rec, fwd_error_t *err)
{
	bool paren = skip_lit(&p, " (");

	if (!paren && !skip_lit(&p, " "))
		return errprintf(err, "%s: expected arguments",
				 rec->op == TRACE_OP_READ ? "READ" : "WRITE");
	if (scan_hex(&p, &rec->fd))
		return errprintf(err, "bad file descriptor \"%.20s\"", p);
	if (field(&p, paren, "size", &rec->size, err) ||
	    field(&p, paren, "offset", &rec->offset, err))
		return -1;
	rec->count = 1;
	if (*p && *p != ')') {
		if (field(&p, paren, "count", &rec->count, err))
			return -1;
		if (rec->count == 0)
			return errprintf(err, "bad count=0");
	}
	if (paren && !skip_lit(&p, ")"))
		return errprintf(err, "expected \")\" near \"%.20s\"", p);
	if (*p)
		return errprintf(err, "trailing text \"%.20s\"", p);
	/* The range must be addressable: offset + size * count fits. */
	if (rec->size > (UINT64_MAX - rec->offset) / rec->count)
		return errprintf(err, "offset + size * count overflows");
	return 0;
}

int trace_parse_line(char *line, struct trace_rec *rec, fwd_error_t *err)
{
	const char *p = line, *end;
	size_t len = strlen(line), nlen;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
		       line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	line[len] = '\0';
	if (len == 0)
		return 0;
	if (len > TRACE_LINE_MAX)
		return errprintf(err, "line too long");

	memset(rec, 0, sizeof(*rec));
	rec->n = 1;
	rec->text = "";
	if (len < 24 || parse_stamp(p, &rec->time))
		return errprintf(err, "no valid [YYYY-MM-DD HH:MM:SS] stamp");
	p += 21;
	if (p[0] != ' ' || p[1] < 'A' || p[1] > 'Z' || p[2] != ' ')
		return errprintf(err,
				 "expected a level letter after the stamp");
	rec->level = p[1];
	p += 3;
	if (skip_lit(&p, PID_TAG)) {
		uint64_t pid;

		if (scan_dec(&p, &pid) || pid > UINT32_MAX ||
		    !skip_lit(&p, ": "))
			return errprintf(err, "bad pid after \"lwfs-fuse:\"");
		rec->has_pid = true;
		rec->pid = (uint32_t)pid;
	}
	for (end = p; (*end >= 'A' && *end <= 'Z') || *end == '_'; end++)
		;
	nlen = (size_t)(end - p);
	if (nlen == 0 || nlen >= TRACE_NAME_MAX)
		return errprintf(err, "no operation name near \"%.20s\"", p);
	memcpy(rec->name, p, nlen);
	rec->name[nlen] = '\0';

	if (!strcmp(rec->name, "READ") || !strcmp(rec->name, "WRITE")) {
		rec->op = rec->name[0] == 'R' ? TRACE_OP_READ : TRACE_OP_WRITE;
		return parse_rw(end, rec, err) ? -1 : 1;
	}
	if (!strcmp(rec->name, "OPEN")) {
		char *arrow = NULL, *q;
		const char *h;

		rec->op = TRACE_OP_OPEN;
		if (strncmp(end, "() ", 3))
			return errprintf(err, "OPEN: expected \"OPEN() PATH "
					      "=> 0xFD\"");
		/* the last " => " separates the path from the descriptor */
		for (q = line + (end + 3 - line); (q = strstr(q, " => ")); q++)
			arrow = q;
		if (!arrow || arrow == end + 3)
			return errprintf(err, "OPEN: no \"PATH => 0xFD\"");
		h = arrow + 4;
		if (scan_hex(&h, &rec->fd) || *h)
			return errprintf(err, "OPEN: bad file descriptor");
		*arrow = '\0';
		rec->text = end + 3;
		return 1;
	}
	if (!strcmp(rec->name, "RELEASE")) {
		const char *q = end;

		rec->op = TRACE_OP_RELEASE;
		if (!skip_lit(&q, " ") || scan_hex(&q, &rec->fd))
			return errprintf(err, "RELEASE: bad file descriptor");
		if (*q) {
			if (*q != ' ')
				return errprintf(err,
						 "RELEASE: trailing "
						 "text \"%.20s\"",
						 q);
			q++;
		}
		rec->text = q;
		return 1;
	}
	if (is_meta_op(rec->name)) {
		rec->op = TRACE_OP_META;
		rec->text = end;
		return 1;
	}
	return errprintf(err, "unknown operation \"%s\"", rec->name);
}

int trace_format_raw(const struct trace_rec *rec, uint64_t i, char *buf,
		     size_t len)
{
	char stamp[32];
	char pfx[96];
	int n = 0;
	uint64_t off;

	format_stamp(rec->time, stamp);
	if (rec->has_pid)
		snprintf(pfx, sizeof(pfx), "[%s] %c " PID_TAG "%" PRIu32 ": ",
			 stamp, rec->level, rec->pid);
	else
		snprintf(pfx, sizeof(pfx), "[%s] %c ", stamp, rec->level);

	switch (rec->op) {
	case TRACE_OP_READ:
	case TRACE_OP_WRITE:
		off = rec->offset + i * rec->size * rec->count;
		n = snprintf(buf, len,
			     rec->has_pid ? "%s%s (0x%" PRIx64 ", size=%" PRIu64
					    ", offset=%" PRIu64
					    ", count=%" PRIu64 ")\n"
					  : "%s%s 0x%" PRIx64 " size=%" PRIu64
					    " offset=%" PRIu64 " count=%" PRIu64
					    "\n",
			     pfx, rec->op == TRACE_OP_READ ? "READ" : "WRITE",
			     rec->fd, rec->size, off, rec->count);
		break;
	case TRACE_OP_OPEN:
		n = snprintf(buf, len, "%sOPEN() %s => 0x%" PRIx64 "\n", pfx,
			     rec->text, rec->fd);
		break;
	case TRACE_OP_RELEASE:
		n = snprintf(buf, len, "%sRELEASE 0x%" PRIx64 "%s%s\n", pfx,
			     rec->fd, rec->text[0] ? " " : "", rec->text);
		break;
	case TRACE_OP_META:
		n = snprintf(buf, len, "%s%s%s\n", pfx, rec->name, rec->text);
		break;
	}
	if (n < 0 || (size_t)n >= len) {
		errno = ENOSPC;
		return -1;
	}
	return n;
}

/* ---- reader ---- */

struct trace_reader {
	FILE *f;
	bool own;
	char *name;
	bool compressed;
	bool ended; /* compressed: saw the #end trailer */
	uint64_t trailer_records;
	char *node;
	uint64_t lineno;
	int version;		       /* compressed: 1, or 2 with streams */
	struct trace_streams *streams; /* version 2 */
	FILE *zsrc;		       /* zstd: the compressed stream under f */
	struct trace_zstd *zst;	       /* zstd: its state, for error texts */
	struct trace_stats st;
	char line[TRACE_LINE_MAX + 2];
};

static void note_bad(struct trace_reader *r, const char *why)
{
	r->st.skipped++;
	if (r->st.n_bad < TRACE_BAD_KEEP)
		snprintf(r->st.bad[r->st.n_bad++], sizeof(r->st.bad[0]),
			 "%s:%" PRIu64 ": %s", r->name, r->lineno, why);
}

/*
 * Read one line into r->line.  1 = a line, 0 = EOF, -1 = read error.
 * An overlong line is consumed and reported as 2.
 */
static int read_line(struct trace_reader *r)
{
	size_t n;

	if (!fgets(r->line, sizeof(r->line), r->f))
		return ferror(r->f) ? -1 : 0;
	r->lineno++;
	r->st.lines++;
	n = strlen(r->line);
	r->st.bytes += n;
	if (n == sizeof(r->line) - 1 && r->line[n - 1] != '\n') {
		int c;

		while ((c = getc(r->f)) != EOF && c != '\n')
			r->st.bytes++;
		r->st.bytes += c == '\n';
		return 2;
	}
	return 1;
}

static int compressed_meta(struct trace_reader *r, fwd_error_t *err);
static int cbad(struct trace_reader *r, fwd_error_t *err, const char *what);

/*
 * reader_new failed: free the reader but not its stream.  On failure the
 * caller still owns f (trace_reader_open closes the file it opened), so
 * the stream is closed exactly once.
 */
static void reader_fail(struct trace_reader *r)
{
	if (r->zsrc)
		fclose(r->f); /* the zstd stream; the source stays open */
	r->f = NULL;
	r->zsrc = NULL;
	trace_reader_destroy(r);
}

/* The reason of a failed read: the zstd stage's when it has one. */
static const char *read_error(const struct trace_reader *r)
{
	const char *z = trace_zstd_error(r->zst);

	return z ? z : strerror(errno);
}

static bool magic_line(const char *line, const char *magic)
{
	size_t n = strlen(magic);

	return !strncmp(line, magic, n) && (line[n] == '\n' || line[n] == '\0');
}

static struct trace_reader *reader_new(FILE *f, bool own, const char *name,
				       fwd_error_t *err)
{
	struct trace_reader *r = calloc(1, sizeof(*r));
	int c;

	if (!r || !(r->name = strdup(name))) {
		free(r);
		errprintf(err, "%s: out of memory", name);
		return NULL;
	}
	r->f = f;
	r->own = own;
	c = getc(f);
	if (c != EOF)
		ungetc(c, f);
	/* A zstd stream (.ctrace.zst): read what it holds. */
	if (trace_zstd_magic(c)) {
		if (!(r->f = trace_zstd_open_read(f, &r->zst))) {
			errprintf(err, "%s: %s", name, strerror(errno));
			r->f = f;
			reader_fail(r);
			return NULL;
		}
		r->zsrc = f;
		f = r->f;
		c = getc(f);
		if (c != EOF) {
			ungetc(c, f);
		} else if (ferror(f)) {
			errprintf(err, "%s: %s", name,
				  trace_zstd_error(r->zst));
			reader_fail(r);
			return NULL;
		}
	}
	/* Peek: a compressed trace starts with its magic line. */
	if (c == '#') {
		int rv = read_line(r);

		if (rv == 1 && (magic_line(r->line, COMPRESSED_MAGIC) ||
				magic_line(r->line, COMPRESSED_MAGIC_V2))) {
			r->compressed = true;
			r->version =
				magic_line(r->line, COMPRESSED_MAGIC) ? 1 : 2;
			if (r->version == 2 &&
			    !(r->streams = calloc(1, sizeof(*r->streams)))) {
				errprintf(err, "%s: out of memory", name);
				reader_fail(r);
				return NULL;
			}
			/* the header comments, so the node name is known
			 * before the first record */
			while ((c = getc(f)) == '#') {
				ungetc(c, f);
				rv = read_line(r);
				if (rv == -1)
					errprintf(err, "%s: %s", name,
						  read_error(r));
				else if (rv == 2)
					cbad(r, err, "line too long");
				if (rv != 1 || compressed_meta(r, err)) {
					reader_fail(r);
					return NULL;
				}
			}
			if (c != EOF)
				ungetc(c, f);
		} else if (rv == 1) {
			note_bad(r, "comment line");
		} else if (rv == -1) {
			errprintf(err, "%s: %s", name, read_error(r));
			reader_fail(r);
			return NULL;
		} else if (rv == 2) {
			note_bad(r, "line too long");
		}
	}
	return r;
}

struct trace_reader *trace_reader_fdopen(FILE *f, const char *name,
					 fwd_error_t *err)
{
	return reader_new(f, false, name, err);
}

struct trace_reader *trace_reader_open(const char *path, fwd_error_t *err)
{
	FILE *f;
	struct trace_reader *r;

	if (!strcmp(path, "-"))
		return reader_new(stdin, false, "<stdin>", err);
	f = fopen(path, "r");
	if (!f) {
		errprintf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	r = reader_new(f, true, path, err);
	if (!r)
		fclose(f);
	return r;
}

static int cbad(struct trace_reader *r, fwd_error_t *err, const char *what)
{
	errno = EINVAL;
	return errprintf(err, "%s:%" PRIu64 ": malformed compressed trace: %s",
			 r->name, r->lineno, what);
}

static int scan_pid(const char **p, struct trace_rec *rec)
{
	uint64_t v;

	if (**p == '-') {
		(*p)++;
		rec->has_pid = false;
		return 0;
	}
	if (scan_dec(p, &v) || v > UINT32_MAX)
		return -1;
	rec->has_pid = true;
	rec->pid = (uint32_t)v;
	return 0;
}

/*
 * "=K[ tD][ oOFFSET][ nN]": the run continuing stream K, D seconds after
 * its last run (default 0), at OFFSET (default: where the last run ended),
 * N records long (default 1).
 */
static int parse_reference(struct trace_reader *r, struct trace_rec *rec,
			   fwd_error_t *err)
{
	const char *p = r->line + 1;
	const struct trace_rec *l;
	uint64_t k, v;

	if (scan_dec(&p, &k) || k >= N_STREAMS || !r->streams->used[k])
		return cbad(r, err, "reference to an unknown stream");
	l = &r->streams->last[k];
	*rec = *l;
	rec->n = 1;
	if (!stream_next_offset(l, &rec->offset))
		rec->offset = UINT64_MAX; /* must be given explicitly */
	bool has_off = rec->offset != UINT64_MAX;
	if (p[0] == ' ' && p[1] == 't') {
		bool neg = false;

		p += 2;
		if (*p == '-') {
			neg = true;
			p++;
		}
		if (scan_dec(&p, &v) || v > STAMP_MAX - STAMP_MIN)
			return cbad(r, err, "bad time step");
		rec->time = neg ? l->time - (int64_t)v : l->time + (int64_t)v;
		if (rec->time < STAMP_MIN || rec->time > STAMP_MAX)
			return cbad(r, err, "time out of range");
	}
	if (p[0] == ' ' && p[1] == 'o') {
		p += 2;
		if (scan_dec(&p, &rec->offset))
			return cbad(r, err, "bad offset");
		has_off = true;
	}
	if (p[0] == ' ' && p[1] == 'n') {
		p += 2;
		if (scan_dec(&p, &rec->n))
			return cbad(r, err, "bad run length");
	}
	if (*p || !has_off)
		return cbad(r, err, "bad stream reference");
	if (rec->n == 0 || rec->n > TRACE_MAX_RUN)
		return cbad(r, err, "count or run length out of range");
	if (rec->size * rec->count != 0 &&
	    rec->size * rec->count > (UINT64_MAX - rec->offset) / rec->n)
		return cbad(r, err, "run range overflows");
	stream_note(r->streams, rec, (int)k);
	return 1;
}

/* One compressed record line (the format is in profiler/README.md). */
static int parse_compressed(struct trace_reader *r, struct trace_rec *rec,
			    fwd_error_t *err)
{
	const char *p = r->line;
	char kind = *p;
	uint64_t t;
	size_t len = strlen(r->line);
	bool neg = false;

	while (len && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r'))
		r->line[--len] = '\0';
	memset(rec, 0, sizeof(*rec));
	rec->n = 1;
	rec->text = "";
	if (kind == '=' && r->streams)
		return parse_reference(r, rec, err);
	if (!strchr("RWOCM", kind) || p[1] != ' ')
		return cbad(r, err, "unknown record kind");
	p += 2;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (scan_dec(&p, &t) || t > INT64_MAX || *p++ != ' ')
		return cbad(r, err, "bad time");
	rec->time = neg ? -(int64_t)t : (int64_t)t;
	if (rec->time < STAMP_MIN || rec->time > STAMP_MAX)
		return cbad(r, err, "time out of range");
	if (*p < 'A' || *p > 'Z' || p[1] != ' ')
		return cbad(r, err, "bad level");
	rec->level = *p;
	p += 2;
	if (scan_pid(&p, rec) || *p++ != ' ')
		return cbad(r, err, "bad pid");
	if (kind == 'M') {
		const char *e = p;

		while ((*e >= 'A' && *e <= 'Z') || *e == '_')
			e++;
		if (e == p || (size_t)(e - p) >= TRACE_NAME_MAX)
			return cbad(r, err, "bad operation name");
		memcpy(rec->name, p, (size_t)(e - p));
		rec->name[e - p] = '\0';
		rec->op = TRACE_OP_META;
		if (*e == ' ')
			e++;
		else if (*e)
			return cbad(r, err, "bad metadata record");
		rec->text = e;
		return 1;
	}
	if (scan_hex(&p, &rec->fd))
		return cbad(r, err, "bad file descriptor");
	if (kind == 'O' || kind == 'C') {
		rec->op = kind == 'O' ? TRACE_OP_OPEN : TRACE_OP_RELEASE;
		strcpy(rec->name, kind == 'O' ? "OPEN" : "RELEASE");
		if (*p == ' ')
			p++;
		else if (*p)
			return cbad(r, err, "bad OPEN/RELEASE record");
		if (kind == 'O' && !*p)
			return cbad(r, err, "OPEN without a path");
		rec->text = p;
		return 1;
	}
	rec->op = kind == 'R' ? TRACE_OP_READ : TRACE_OP_WRITE;
	strcpy(rec->name, kind == 'R' ? "READ" : "WRITE");
	if (*p++ != ' ' || scan_dec(&p, &rec->size) || *p++ != ' ' ||
	    scan_dec(&p, &rec->offset) || *p++ != ' ' ||
	    scan_dec(&p, &rec->count) || *p++ != ' ' || scan_dec(&p, &rec->n) ||
	    *p)
		return cbad(r, err, "bad READ/WRITE record");
	if (rec->count == 0 || rec->n == 0 || rec->n > TRACE_MAX_RUN)
		return cbad(r, err, "count or run length out of range");
	if (rec->size > UINT64_MAX / rec->count)
		return cbad(r, err, "size * count overflows");
	if (rec->size * rec->count != 0 &&
	    rec->size * rec->count > (UINT64_MAX - rec->offset) / rec->n)
		return cbad(r, err, "run range overflows");
	if (r->streams)
		stream_note(r->streams, rec, stream_find(r->streams, rec));
	return 1;
}

static int compressed_meta(struct trace_reader *r, fwd_error_t *err)
{
	const char *p = r->line;
	size_t len = strlen(r->line);

	while (len && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r'))
		r->line[--len] = '\0';
	if (r->ended)
		return cbad(r, err, "text after #end");
	if (skip_lit(&p, "#node ")) {
		if (r->node || !*p)
			return cbad(r, err, "bad #node");
		if (!(r->node = strdup(p)))
			return errprintf(err, "out of memory");
		return 0;
	}
	if (skip_lit(&p, "#end records=")) {
		if (scan_dec(&p, &r->trailer_records) ||
		    !skip_lit(&p, " runs="))
			return cbad(r, err, "bad #end trailer");
		r->ended = true;
		return 0;
	}
	/* other comment lines (#fields ...) are documentation */
	return 0;
}

int trace_reader_next(struct trace_reader *r, struct trace_rec *rec,
		      fwd_error_t *err)
{
	fwd_error_t why;
	int rv;

	for (;;) {
		rv = read_line(r);
		if (rv == -1)
			return errprintf(err, "%s: %s", r->name, read_error(r));
		if (rv == 0) {
			if (r->compressed && !r->ended) {
				errno = EINVAL;
				return errprintf(err,
						 "%s: compressed trace "
						 "has no #end trailer "
						 "(truncated?)",
						 r->name);
			}
			if (r->compressed &&
			    r->trailer_records != r->st.records) {
				errno = EINVAL;
				return errprintf(err,
						 "%s: #end says %" PRIu64
						 " records, found %" PRIu64,
						 r->name, r->trailer_records,
						 r->st.records);
			}
			return 0;
		}
		if (r->compressed) {
			if (rv == 2)
				return cbad(r, err, "line too long");
			if (r->line[0] == '#') {
				if (compressed_meta(r, err))
					return -1;
				continue;
			}
			if (r->ended)
				return cbad(r, err, "record after #end");
			if (parse_compressed(r, rec, err) < 0)
				return -1;
			r->st.runs++;
			r->st.records += rec->n;
			return 1;
		}
		if (rv == 2) {
			note_bad(r, "line too long");
			continue;
		}
		rv = trace_parse_line(r->line, rec, &why);
		if (rv == 0)
			continue;
		if (rv < 0) {
			note_bad(r, why.text);
			continue;
		}
		r->st.runs++;
		r->st.records++;
		return 1;
	}
}

bool trace_reader_compressed(const struct trace_reader *r)
{
	return r->compressed;
}

const char *trace_reader_node(const struct trace_reader *r)
{
	return r->node;
}

const struct trace_stats *trace_reader_stats(const struct trace_reader *r)
{
	return &r->st;
}

void trace_reader_destroy(struct trace_reader *r)
{
	int saved = errno;

	if (!r)
		return;
	if (r->zsrc) {
		fclose(r->f);
		r->f = r->zsrc;
	}
	if (r->own && r->f)
		fclose(r->f);
	free(r->name);
	free(r->node);
	free(r->streams);
	free(r);
	errno = saved;
}

/* ---- writer: first-pass compression ---- */

struct trace_writer {
	FILE *f;
	FILE *zf; /* the zstd stream f is, when created so */
	struct trace_streams *streams; /* version 2 (with zf) */
	bool pending;
	struct trace_rec run; /* READ/WRITE only; text unused */
	uint64_t records, runs;
};

static int put_prefix(FILE *f, char kind, const struct trace_rec *r)
{
	if (r->has_pid)
		return fprintf(f, "%c %" PRId64 " %c %" PRIu32 " ", kind,
			       r->time, r->level, r->pid);
	return fprintf(f, "%c %" PRId64 " %c - ", kind, r->time, r->level);
}

static int put_reference(struct trace_writer *w, const struct trace_rec *r,
			 int k);
static int write_full(struct trace_writer *w, const struct trace_rec *r);

static int write_rec(struct trace_writer *w, const struct trace_rec *r)
{
	int rv;

	if (w->streams && (r->op == TRACE_OP_READ || r->op == TRACE_OP_WRITE)) {
		int k = stream_find(w->streams, r);

		if (k >= 0)
			rv = put_reference(w, r, k);
		else
			rv = write_full(w, r);
		stream_note(w->streams, r, k);
	} else {
		rv = write_full(w, r);
	}
	if (rv < 0)
		return -1;
	w->records += r->n;
	w->runs++;
	return 0;
}

/* "=K ..." for a run of stream k (parse_reference()); formatted by hand,
 * as it is most lines of a stored trace. */
static int put_reference(struct trace_writer *w, const struct trace_rec *r,
			 int k)
{
	const struct trace_rec *l = &w->streams->last[k];
	uint64_t next;
	char buf[96], *p = buf;

	*p++ = '=';
	p = units_put_dec(p, (uint64_t)k, 0);
	if (r->time != l->time) {
		*p++ = ' ';
		*p++ = 't';
		if (r->time < l->time) {
			*p++ = '-';
			p = units_put_dec(p, (uint64_t)(l->time - r->time), 0);
		} else {
			p = units_put_dec(p, (uint64_t)(r->time - l->time), 0);
		}
	}
	if (!stream_next_offset(l, &next) || next != r->offset) {
		*p++ = ' ';
		*p++ = 'o';
		p = units_put_dec(p, r->offset, 0);
	}
	if (r->n != 1) {
		*p++ = ' ';
		*p++ = 'n';
		p = units_put_dec(p, r->n, 0);
	}
	*p++ = '\n';
	return fwrite(buf, 1, (size_t)(p - buf), w->f) == (size_t)(p - buf)
		       ? 0
		       : -1;
}

static int write_full(struct trace_writer *w, const struct trace_rec *r)
{
	int rv;

	switch (r->op) {
	case TRACE_OP_READ:
	case TRACE_OP_WRITE:
		rv = put_prefix(w->f, r->op == TRACE_OP_READ ? 'R' : 'W', r);
		if (rv >= 0)
			rv = fprintf(w->f,
				     "0x%" PRIx64 " %" PRIu64 " %" PRIu64
				     " %" PRIu64 " %" PRIu64 "\n",
				     r->fd, r->size, r->offset, r->count, r->n);
		break;
	case TRACE_OP_OPEN:
	case TRACE_OP_RELEASE:
		rv = put_prefix(w->f, r->op == TRACE_OP_OPEN ? 'O' : 'C', r);
		if (rv >= 0)
			rv = fprintf(w->f, "0x%" PRIx64 "%s%s\n", r->fd,
				     r->text[0] ? " " : "", r->text);
		break;
	default:
		rv = put_prefix(w->f, 'M', r);
		if (rv >= 0)
			rv = fprintf(w->f, "%s%s%s\n", r->name,
				     r->text[0] ? " " : "", r->text);
		break;
	}
	return rv < 0 ? -1 : 0;
}

static struct trace_writer *writer_new(FILE *f, const char *node, int version)
{
	struct trace_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	if (version == 2 && !(w->streams = calloc(1, sizeof(*w->streams)))) {
		free(w);
		return NULL;
	}
	if (fprintf(f, "%s\n",
		    version == 2 ? COMPRESSED_MAGIC_V2 : COMPRESSED_MAGIC) <
		    0 ||
	    (node && fprintf(f, "#node %s\n", node) < 0) ||
	    fprintf(f, "#fields R|W time level pid|- fd size offset count n; "
		       "O|C time level pid|- fd [text]; "
		       "M time level pid|- NAME [text]\n") < 0 ||
	    (version == 2 &&
	     fprintf(f, "#fields =K [tDT] [oOFFSET] [nN]: stream K "
			"continued\n") < 0)) {
		free(w->streams);
		free(w);
		return NULL;
	}
	return w;
}

struct trace_writer *trace_writer_create(FILE *f, const char *node)
{
	return writer_new(f, node, 1);
}

static bool extends(const struct trace_rec *run, const struct trace_rec *r)
{
	uint64_t step = run->size * run->count;

	return r->op == run->op && r->fd == run->fd && r->size == run->size &&
	       r->count == run->count && r->time == run->time &&
	       r->level == run->level && r->has_pid == run->has_pid &&
	       r->pid == run->pid && run->n + r->n <= TRACE_MAX_RUN &&
	       (step == 0 || run->n <= (UINT64_MAX - run->offset) / step) &&
	       r->offset == run->offset + run->n * step;
}

int trace_writer_add(struct trace_writer *w, const struct trace_rec *r)
{
	bool rw = r->op == TRACE_OP_READ || r->op == TRACE_OP_WRITE;

	if (w->pending && rw && extends(&w->run, r)) {
		w->run.n += r->n;
		return 0;
	}
	if (w->pending) {
		w->pending = false;
		if (write_rec(w, &w->run))
			return -1;
	}
	if (!rw)
		return write_rec(w, r);
	w->run = *r;
	w->run.text = "";
	w->pending = true;
	return 0;
}

int trace_writer_finish(struct trace_writer *w)
{
	if (w->pending) {
		w->pending = false;
		if (write_rec(w, &w->run))
			return -1;
	}
	if (fprintf(w->f, "#end records=%" PRIu64 " runs=%" PRIu64 "\n",
		    w->records, w->runs) < 0)
		return -1;
	if (w->zf) { /* end the zstd frame */
		FILE *zf = w->zf;

		w->zf = NULL;
		return fclose(zf) ? -1 : 0;
	}
	return fflush(w->f);
}

struct trace_writer *trace_writer_create_zstd(FILE *f, const char *node,
					      int level)
{
	FILE *zf = trace_zstd_open_write(f, level);
	struct trace_writer *w;

	if (!zf)
		return NULL;
	if (!(w = writer_new(zf, node, 2))) {
		fclose(zf);
		return NULL;
	}
	w->zf = zf;
	return w;
}

uint64_t trace_writer_records(const struct trace_writer *w)
{
	return w->records + (w->pending ? w->run.n : 0);
}

uint64_t trace_writer_runs(const struct trace_writer *w)
{
	return w->runs + (w->pending ? 1 : 0);
}

void trace_writer_destroy(struct trace_writer *w)
{
	if (w && w->zf)
		fclose(w->zf);
	if (w)
		free(w->streams);
	free(w);
}

/* ---- whole files ---- */

void trace_node_from_path(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	const char *dot;
	size_t n;

	b = b ? b + 1 : path;
	dot = strchr(b, '.');
	n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
	if (n >= len)
		n = len - 1;
	memcpy(buf, b, n);
	buf[n] = '\0';
}

static FILE *open_out(const char *out, fwd_error_t *err)
{
	FILE *f;

	if (!strcmp(out, "-"))
		return stdout;
	f = fopen(out, "w");
	if (!f) {
		errprintf(err, "%s: %s", out, strerror(errno));
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

static int close_out(FILE *f, const char *out, uint64_t *bytes,
		     fwd_error_t *err)
{
	long pos;
	int rv = 0;

	if (!f)
		return 0;
	if (fflush(f))
		rv = errprintf(err, "%s: %s", out, strerror(errno));
	pos = ftell(f);
	if (bytes)
		*bytes = pos > 0 ? (uint64_t)pos : 0;
	if (f != stdout && fclose(f) && rv == 0)
		rv = errprintf(err, "%s: %s", out, strerror(errno));
	return rv;
}

/* Output names ending in ".zst" get the zstd second stage. */
static bool zstd_name(const char *out)
{
	size_t n = strlen(out);

	return n > 4 && !strcmp(out + n - 4, ".zst");
}

int trace_compress_file(const char *in, const char *out, const char *node,
			struct trace_stats *st, uint64_t *out_bytes,
			fwd_error_t *err)
{
	struct trace_reader *r;
	struct trace_writer *w = NULL;
	struct trace_rec rec;
	char nodebuf[256];
	FILE *f = NULL;
	int rv = -1, n;

	if (!(r = trace_reader_open(in, err)))
		return -1;
	if (!node)
		node = trace_reader_node(r);
	if (!node) {
		trace_node_from_path(in, nodebuf, sizeof(nodebuf));
		node = nodebuf;
	}
	if (!(f = open_out(out, err)))
		goto out;
	if (!(w = zstd_name(out)
			  ? trace_writer_create_zstd(f, node, TRACE_ZSTD_LEVEL)
			  : trace_writer_create(f, node))) {
		errprintf(err, "%s: %s", out, strerror(errno));
		goto out;
	}
	while ((n = trace_reader_next(r, &rec, err)) == 1) {
		if (trace_writer_add(w, &rec)) {
			errprintf(err, "%s: %s", out, strerror(errno));
			goto out;
		}
	}
	if (n < 0)
		goto out;
	if (trace_writer_finish(w)) {
		errprintf(err, "%s: %s", out, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (st) {
		*st = *trace_reader_stats(r);
		/* The reader counts one run per raw line: the runs are the
		 * ones written. */
		if (w && rv == 0)
			st->runs = trace_writer_runs(w);
	}
	if (close_out(f, out, out_bytes, rv ? NULL : err))
		rv = -1;
	trace_writer_destroy(w);
	trace_reader_destroy(r);
	return rv;
}

int trace_expand_file(const char *in, const char *out, struct trace_stats *st,
		      uint64_t *out_bytes, fwd_error_t *err)
{
	struct trace_reader *r;
	struct trace_rec rec;
	char buf[TRACE_LINE_MAX + 128];
	FILE *f = NULL;
	int rv = -1, n;

	if (!(r = trace_reader_open(in, err)))
		return -1;
	if (!(f = open_out(out, err)))
		goto out;
	while ((n = trace_reader_next(r, &rec, err)) == 1) {
		for (uint64_t i = 0; i < rec.n; i++) {
			int len = trace_format_raw(&rec, i, buf, sizeof(buf));

			if (len < 0 ||
			    fwrite(buf, 1, (size_t)len, f) != (size_t)len) {
				errprintf(err, "%s: %s", out, strerror(errno));
				goto out;
			}
		}
	}
	if (n < 0)
		goto out;
	rv = 0;
out:
	if (st)
		*st = *trace_reader_stats(r);
	if (close_out(f, out, out_bytes, rv ? NULL : err))
		rv = -1;
	trace_reader_destroy(r);
	return rv;
}
