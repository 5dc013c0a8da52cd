/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clang-format off */
/*
 * Streaming parser for Lustre job_stats as printed by
 *   lctl get_param obdfilter.*.job_stats mdt.*.job_stats
 *
 *   obdfilter.lustre-OST0000.job_stats=
 *   job_stats:
 *   - job_id:          12345
 *     snapshot_time:   1692086403
 *     read_bytes:      { samples: 7, unit: bytes, min: 4096, max: 1048576, sum: 7340032 }
 *     ...
 *   mdt.lustre-MDT0000.job_stats=
 *   job_stats:
 *   ...
 *
 * The whole output is not one YAML document (the target lines are not
 * YAML), and Lustre 2.12 to 2.15 print job ids unquoted
 * (lprocfs_jobstats_seq_show(): "- %-16s %s\n"), so one id that is not
 * plain YAML ("a: b", "{x", "*x", invalid UTF-8...) would end the
 * document.  The input is therefore cut at the target lines and, inside a
 * target, at the "- job_id:" lines that start each entry; each entry is
 * fed alone to a fresh libyaml parser (after a "job_stats:" line of our
 * own), so a bad entry costs only itself and memory stays bounded by one
 * entry whatever the number of jobs.
 */
/* clang-format on */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "common/plausible.h"
#include "monitor/ingest.h"
#include "policies/policy.h"

enum state {
	S_STREAM, /* before/between documents */
	S_TOPKEY, /* in the top mapping, expecting a key */
	S_TOPVAL, /* after "job_stats", expecting the list (or null) */
	S_ITEM,	  /* in the list, expecting an entry */
	S_EKEY,	  /* in an entry, expecting a key */
	S_EVAL,	  /* in an entry, expecting a value */
	S_OKEY,	  /* in an operation's mapping, expecting a key */
	S_OVAL,	  /* in an operation's mapping, expecting a value */
	S_SKIP,	  /* skipping a nested collection we do not use */
};

struct jobstats_parser {
	FILE *f;
	struct ingest_reader rd;
	char *default_target;
	bool started; /* first target looked for */
	bool eof;     /* input exhausted */
	/* the target of the current piece and of the next one */
	char target[128];
	enum ingest_kind kind;
	bool have_next;
	char next_target[128];
	enum ingest_kind next_kind;
	char next_first[INGEST_MAX_LINE]; /* text after '=' on a target line */
	/* the piece: one target's lines */
	bool in_piece;
	bool piece_end;	 /* a target line or EOF ended the piece */
	bool header_ok;	 /* its "job_stats:" line was seen */
	bool have_entry; /* entry_first holds the next entry's first line */
	long entry_lineno;
	char entry_first[INGEST_MAX_LINE];
	char raw_id[256]; /* the entry's id as printed (unquoted ids) */
	/* feeding libyaml one entry */
	yaml_parser_t yp;
	bool in_entry;
	bool entry_end;	       /* the entry's lines are all fed */
	bool entry_done;       /* its mapping ended */
	long entry_line;       /* input line number of its first line */
	long entry_last_line;  /* and of its last line fed */
	long piece_first_line; /* input line number of libyaml's line 0 */
	const char *feed;      /* remaining bytes of the current line */
	size_t feed_len;
	bool feed_nl;			 /* the newline still to give */
	char fixed[INGEST_MAX_LINE + 8]; /* a reindented line */
	const char *first_line; /* a line to feed before reading more */
	/* event state */
	enum state st;
	enum state skip_return;
	int skip_depth;
	char key[64];
	struct jobstats_rec *rec;
	struct jobstats_op *op;
	bool entry_bad;
	fwd_error_t entry_err;
};

/* "obdfilter.<target>.job_stats=" or "mdt.<target>.job_stats=" */
static bool target_line(const char *line, char *target, size_t cap,
			enum ingest_kind *kind, const char **rest)
{
	const char *p, *end;
	size_t n;

	if (!strncmp(line, "obdfilter.", 10)) {
		*kind = INGEST_OST;
		p = line + 10;
	} else if (!strncmp(line, "mdt.", 4)) {
		*kind = INGEST_MDT;
		p = line + 4;
	} else {
		return false;
	}
	end = strstr(p, ".job_stats=");
	if (!end || end == p)
		return false;
	n = (size_t)(end - p);
	if (n >= cap || memchr(p, ' ', n))
		return false;
	memcpy(target, p, n);
	target[n] = '\0';
	*rest = end + strlen(".job_stats=");
	return true;
}

static int kind_from_target(const char *t, enum ingest_kind *kind)
{
	if (strstr(t, "-OST")) {
		*kind = INGEST_OST;
		return 0;
	}
	if (strstr(t, "-MDT")) {
		*kind = INGEST_MDT;
		return 0;
	}
	return -1;
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t")] == '\0';
}

/*
 * Lustre 2.15.0 and 2.15.1 print an entry's time lines unindented, with
 * the colon after the padding ("snapshot_time   : 1700000000.250000000
 * secs.nsecs", lprocfs_stats_header() without its prefix), which ends the
 * YAML list item: give them the entry's indentation back.
 */
static const char *reindent(struct jobstats_parser *p, const char *line)
{
	static const char *const keys[] = {"snapshot_time", "start_time",
					   "elapsed_time"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t k = strlen(keys[i]), sp;

		if (strncmp(line, keys[i], k) != 0)
			continue;
		sp = strspn(line + k, " ");
		if (line[k + sp] != ':')
			continue;
		snprintf(p->fixed, sizeof(p->fixed), "  %s:%s", keys[i],
			 line + k + sp + 1);
		return p->fixed;
	}
	return line;
}

/* "- ..." at the start of a line: the "- job_id:" line that starts an
 * entry, as Lustre prints it (list items at column 0). */
static bool entry_start(const char *line)
{
	return line[0] == '-' &&
	       (line[1] == ' ' || line[1] == '\t' || line[1] == '\0');
}

/*
 * The next line of the current piece in *line (reindented); 1 at its end:
 * a target line (kept as the next piece's) or the end of the input.
 */
static int piece_line(struct jobstats_parser *p, const char **line)
{
	const char *l, *rest;
	bool trunc;

	if (p->piece_end)
		return 1;
	l = ingest_reader_next(&p->rd, &trunc);
	if (!l) {
		p->eof = true;
		p->piece_end = true;
		return 1;
	}
	if (target_line(l, p->next_target, sizeof(p->next_target),
			&p->next_kind, &rest)) {
		snprintf(p->next_first, sizeof(p->next_first), "%s", rest);
		p->have_next = true;
		p->piece_end = true;
		return 1;
	}
	*line = reindent(p, l);
	return 0;
}

/* Keep line (read at p->rd.lineno) as the first line of the next entry. */
static void keep_entry(struct jobstats_parser *p, const char *line)
{
	snprintf(p->entry_first, sizeof(p->entry_first), "%s", line);
	p->entry_lineno = p->rd.lineno;
	p->have_entry = true;
}

/* libyaml read handler: our "job_stats:" line, then the lines of one
 * entry, up to the next entry, target line or the end. */
static int read_handler(void *data, unsigned char *buffer, size_t size,
			size_t *size_read)
{
	struct jobstats_parser *p = data;
	size_t n = 0;

	while (n < size) {
		const char *line;

		if (p->feed_len) {
			size_t k =
				p->feed_len < size - n ? p->feed_len : size - n;

			memcpy(buffer + n, p->feed, k);
			p->feed += k;
			p->feed_len -= k;
			n += k;
			continue;
		}
		if (p->feed_nl) {
			buffer[n++] = '\n';
			p->feed_nl = false;
			continue;
		}
		if (p->entry_end)
			break;
		if (p->first_line) {
			p->feed = p->first_line;
			p->feed_len = strlen(p->first_line);
			p->feed_nl = true;
			p->first_line = NULL;
			continue;
		}
		if (piece_line(p, &line)) {
			p->entry_end = true;
			break;
		}
		if (entry_start(line)) {
			keep_entry(p, line);
			p->entry_end = true;
			break;
		}
		p->entry_last_line = p->rd.lineno;
		p->feed = line;
		p->feed_len = strlen(line);
		p->feed_nl = true;
	}
	*size_read = n;
	return 1;
}

struct jobstats_parser *jobstats_open(FILE *f, const char *default_target,
				      fwd_error_t *err)
{
	struct jobstats_parser *p = calloc(1, sizeof(*p));

	if (!p) {
		errprintf(err, "job_stats: %s", strerror(errno));
		return NULL;
	}
	p->f = f;
	ingest_reader_init(&p->rd, f);
	if (default_target) {
		enum ingest_kind k;

		if (strlen(default_target) >= sizeof(p->target) ||
		    kind_from_target(default_target, &k) < 0) {
			errno = EINVAL;
			errprintf(err,
				  "target '%s': expected a Lustre target name "
				  "such as lustre-OST0000 or lustre-MDT0000",
				  default_target);
			free(p);
			return NULL;
		}
		p->default_target = strdup(default_target);
		if (!p->default_target) {
			errprintf(err, "job_stats: %s", strerror(errno));
			free(p);
			return NULL;
		}
	}
	return p;
}

long jobstats_lines(const struct jobstats_parser *p)
{
	return p->rd.lineno;
}

static void end_entry(struct jobstats_parser *p)
{
	if (p->in_entry)
		yaml_parser_delete(&p->yp);
	p->in_entry = false;
}

/* After an error in an entry: drop the rest of its lines. */
static void drain_entry(struct jobstats_parser *p)
{
	unsigned char sink[4096];
	size_t n;

	p->feed_len = 0;
	p->feed_nl = false;
	p->first_line = NULL;
	while (!p->entry_end) {
		read_handler(p, sink, sizeof(sink), &n);
		if (n == 0)
			break;
	}
	end_entry(p);
}

/* After an error in a target's header: drop the rest of the target. */
static void drain_piece(struct jobstats_parser *p)
{
	const char *line;

	p->have_entry = false;
	while (!piece_line(p, &line))
		;
	p->in_piece = false;
}

/* Start parsing the entry kept by keep_entry(). */
static void begin_entry(struct jobstats_parser *p)
{
	const char *id = p->entry_first;
	size_t n;

	yaml_parser_initialize(&p->yp);
	yaml_parser_set_input(&p->yp, read_handler, p);
	p->in_entry = true;
	p->entry_end = false;
	p->have_entry = false;
	/* libyaml's line 0 is our "job_stats:", line 1 the entry's first */
	p->feed = "job_stats:";
	p->feed_len = strlen(p->feed);
	p->feed_nl = true;
	p->first_line = p->entry_first;
	p->piece_first_line = p->entry_lineno - 1;
	p->entry_line = p->entry_lineno;
	p->entry_last_line = p->entry_lineno;
	p->entry_done = false;
	p->st = S_STREAM;
	/* the id as printed: what a plain scalar must be */
	p->raw_id[0] = '\0';
	if (!strncmp(id, "- job_id:", 9)) {
		id += 9;
		id += strspn(id, " \t");
		n = strlen(id);
		while (n && (id[n - 1] == ' ' || id[n - 1] == '\t'))
			n--;
		if (n < sizeof(p->raw_id)) {
			memcpy(p->raw_id, id, n);
			p->raw_id[n] = '\0';
		}
	}
}

/* One line of a target before its first entry ("job_stats:", blank). */
static int header_line(struct jobstats_parser *p, const char *line, long lineno,
		       fwd_error_t *err)
{
	size_t n = strlen(line);

	if (blank(line))
		return 0;
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	if (!p->header_ok && n == 10 && !strncmp(line, "job_stats:", 10)) {
		p->header_ok = true;
		return 0;
	}
	errno = EINVAL;
	return errprintf(err,
			 "line %ld: unexpected %s in %s job_stats (expected "
			 "'job_stats:' and a list of entries)",
			 lineno, entry_start(line) ? "list" : "value",
			 p->target);
}

/* Begin the next target (its header may be on the target line). */
static int begin_piece(struct jobstats_parser *p, fwd_error_t *err)
{
	snprintf(p->target, sizeof(p->target), "%s", p->next_target);
	p->kind = p->next_kind;
	p->have_next = false;
	p->in_piece = true;
	p->piece_end = false;
	p->header_ok = false;
	p->have_entry = false;
	if (header_line(p, p->next_first, p->rd.lineno, err) < 0) {
		drain_piece(p);
		return -1;
	}
	return 0;
}

/* Read the target's header up to its first entry: 1 with an entry kept,
 * 0 at the end of the target, -1 with err (the target is dropped). */
static int read_header(struct jobstats_parser *p, fwd_error_t *err)
{
	const char *line;

	while (!piece_line(p, &line)) {
		if (entry_start(line) && p->header_ok) {
			keep_entry(p, line);
			return 1;
		}
		if (header_line(p, line, p->rd.lineno, err) < 0) {
			drain_piece(p);
			return -1;
		}
	}
	p->in_piece = false;
	return 0;
}

/* Find the first target (or use the default); 0, or -1 with err. */
static int start(struct jobstats_parser *p, fwd_error_t *err)
{
	bool trunc;
	const char *line, *rest;

	p->started = true;
	while ((line = ingest_reader_next(&p->rd, &trunc))) {
		if (blank(line))
			continue;
		if (target_line(line, p->next_target, sizeof(p->next_target),
				&p->next_kind, &rest)) {
			snprintf(p->next_first, sizeof(p->next_first), "%s",
				 rest);
			p->have_next = true;
			return 0;
		}
		if (!p->default_target) {
			errno = EINVAL;
			errprintf(err,
				  "line %ld: expected a target line such as "
				  "'obdfilter.lustre-OST0000.job_stats=' (for "
				  "`lctl get_param -n` output give the target)",
				  p->rd.lineno);
			/* Skip to the first target line, if any. */
			while ((line = ingest_reader_next(&p->rd, &trunc))) {
				if (target_line(line, p->next_target,
						sizeof(p->next_target),
						&p->next_kind, &rest)) {
					snprintf(p->next_first,
						 sizeof(p->next_first), "%s",
						 rest);
					p->have_next = true;
					break;
				}
			}
			if (!line)
				p->eof = true;
			return -1;
		}
		/* `lctl get_param -n`: this line is the target's first */
		snprintf(p->next_target, sizeof(p->next_target), "%s",
			 p->default_target);
		kind_from_target(p->next_target, &p->next_kind);
		snprintf(p->next_first, sizeof(p->next_first), "%s",
			 reindent(p, line));
		p->have_next = true;
		return 0;
	}
	p->eof = true;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out, bool allow_frac)
{
	uint64_t v = 0;
	const char *q = s;

	if (!*q)
		return -1;
	for (; *q >= '0' && *q <= '9'; q++) {
		unsigned int d = (unsigned int)(*q - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (q == s)
		return -1;
	if (allow_frac && *q == '.') {
		q++;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q)
		return -1;
	*out = v;
	return 0;
}

/*
 * A time: "1692086403" (Lustre <= 2.14) or "1700000000.250000000
 * secs.nsecs" (2.15 and later: lprocfs_stats_header()); whole seconds.
 */
static int parse_secs(const char *v, uint64_t *out)
{
	char secs[24];
	size_t n = strspn(v, "0123456789");
	const char *q = v + n;

	if (n == 0 || n >= sizeof(secs))
		return -1;
	if (*q == '.') {
		size_t f = strspn(q + 1, "0123456789");

		if (f == 0 || f > 9)
			return -1;
		q += 1 + f;
	}
	if (*q && strcmp(q, " secs.nsecs") != 0)
		return -1;
	memcpy(secs, v, n);
	secs[n] = '\0';
	return parse_u64(secs, out, false);
}

static long ev_line(const struct jobstats_parser *p, const yaml_event_t *ev)
{
	return p->piece_first_line + (long)ev->start_mark.line;
}

static void entry_error(struct jobstats_parser *p, const yaml_event_t *ev,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void entry_error(struct jobstats_parser *p, const yaml_event_t *ev,
			const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (p->entry_bad)
		return; /* the first problem of an entry is the one shown */
	p->entry_bad = true;
	snprintf(p->entry_err.text, sizeof(p->entry_err.text),
		 "line %ld: ", ev_line(p, ev));
	n = strlen(p->entry_err.text);
	va_start(ap, fmt);
	vsnprintf(p->entry_err.text + n, sizeof(p->entry_err.text) - n, fmt,
		  ap);
	va_end(ap);
}

static void entry_scalar(struct jobstats_parser *p, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	struct jobstats_rec *r = p->rec;
	uint64_t u;

	if (!strcmp(p->key, "job_id")) {
		if (!*v || strlen(v) >= sizeof(r->job_id)) {
			entry_error(p, ev, "bad job_id '%.60s'", v);
			return;
		}
		/* Lustre prints ids unquoted (2.12 to 2.15) or quoted
		 * (2.16): a plain scalar must be the text as printed, not
		 * what YAML made of a comment, anchor or tag in it */
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    ev->start_mark.line == 1 && strcmp(v, p->raw_id) != 0) {
			entry_error(p, ev,
				    "job_id '%.60s' is not plain YAML (a "
				    "comment, anchor or tag)",
				    p->raw_id);
			return;
		}
		snprintf(r->job_id, sizeof(r->job_id), "%s", v);
		/* Slurm's numeric id: "12345", or "12345.<suffix>". */
		{
			char digits[24];
			size_t n = strspn(v, "0123456789");

			if (n > 0 && n < sizeof(digits) &&
			    (v[n] == '\0' || v[n] == '.' || v[n] == ':')) {
				memcpy(digits, v, n);
				digits[n] = '\0';
				if (parse_u64(digits, &u, false) == 0) {
					r->slurm_id = u;
					r->has_slurm_id = true;
				}
			}
		}
	} else if (!strcmp(p->key, "snapshot_time") ||
		   !strcmp(p->key, "start_time")) {
		if (parse_secs(v, &u) < 0 || u > INT64_MAX) {
			entry_error(p, ev,
				    "job %s: %s '%.40s' is not a time in "
				    "seconds",
				    r->job_id[0] ? r->job_id : "?", p->key, v);
			return;
		}
		if (p->key[1] == 'n')
			r->ts = (int64_t)u;
		else
			r->start = (int64_t)u;
	}
	/* elapsed_time and unknown scalars are not kept. */
}

static void op_scalar(struct jobstats_parser *p, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	struct jobstats_op *op = p->op;
	uint64_t *dst = NULL;
	uint64_t u;

	if (!op)
		return;
	if (!strcmp(p->key, "unit")) {
		snprintf(op->unit, sizeof(op->unit), "%s", v);
		return;
	}
	if (!strcmp(p->key, "samples"))
		dst = &op->samples;
	else if (!strcmp(p->key, "min"))
		dst = &op->min;
	else if (!strcmp(p->key, "max"))
		dst = &op->max;
	else if (!strcmp(p->key, "sum"))
		dst = &op->sum;
	if (!dst)
		return; /* sumsq, hist, ... */
	if (parse_u64(v, &u, false) < 0) {
		entry_error(p, ev,
			    "job %s: %s.%s: '%.40s' is not a non-negative "
			    "integer",
			    p->rec->job_id[0] ? p->rec->job_id : "?", op->name,
			    p->key, v);
		return;
	}
	*dst = u;
}

static void skip_collection(struct jobstats_parser *p, enum state ret)
{
	p->skip_return = ret;
	p->skip_depth = 1;
	p->st = S_SKIP;
}

/*
 * Consume one event.  Returns 1 when an entry is complete (good or bad),
 * 0 to continue, -1 on a structural error (err set).
 */
static int on_event(struct jobstats_parser *p, const yaml_event_t *ev,
		    fwd_error_t *err)
{
	yaml_event_type_t t = ev->type;
	const char *sv = t == YAML_SCALAR_EVENT && ev->data.scalar.value
				 ? (const char *)ev->data.scalar.value
				 : NULL;

	switch (p->st) {
	case S_STREAM:
		if (t == YAML_MAPPING_START_EVENT)
			p->st = S_TOPKEY;
		else if (sv && !*sv)
			; /* an empty document */
		else if (t != YAML_STREAM_START_EVENT &&
			 t != YAML_DOCUMENT_START_EVENT &&
			 t != YAML_DOCUMENT_END_EVENT &&
			 t != YAML_STREAM_END_EVENT)
			goto structure;
		return 0;
	case S_TOPKEY:
		if (t == YAML_MAPPING_END_EVENT) {
			p->st = S_STREAM;
			return 0;
		}
		if (sv && !strcmp(sv, "job_stats")) {
			p->st = S_TOPVAL;
			return 0;
		}
		goto structure;
	case S_TOPVAL:
		if (t == YAML_SEQUENCE_START_EVENT)
			p->st = S_ITEM;
		else if (t == YAML_SCALAR_EVENT) /* "job_stats:" and no jobs */
			p->st = S_TOPKEY;
		else
			goto structure;
		return 0;
	case S_ITEM:
		if (t == YAML_SEQUENCE_END_EVENT) {
			p->st = S_TOPKEY;
			return 0;
		}
		if (t != YAML_MAPPING_START_EVENT)
			goto structure;
		memset(p->rec, 0, sizeof(*p->rec));
		p->rec->kind = p->kind;
		snprintf(p->rec->target, sizeof(p->rec->target), "%s",
			 p->target);
		p->rec->ts = -1;
		p->rec->line = ev_line(p, ev);
		p->entry_bad = false;
		p->st = S_EKEY;
		return 0;
	case S_EKEY:
		if (t == YAML_MAPPING_END_EVENT) {
			p->st = S_ITEM;
			return 1;
		}
		if (!sv)
			goto structure;
		snprintf(p->key, sizeof(p->key), "%s", sv);
		p->st = S_EVAL;
		return 0;
	case S_EVAL:
		if (sv) {
			entry_scalar(p, ev);
			p->st = S_EKEY;
		} else if (t == YAML_MAPPING_START_EVENT) {
			p->op = NULL;
			if (p->rec->n_ops < JOBSTATS_MAX_OPS &&
			    strlen(p->key) < sizeof(p->op->name)) {
				p->op = &p->rec->ops[p->rec->n_ops++];
				snprintf(p->op->name, sizeof(p->op->name), "%s",
					 p->key);
			}
			p->st = S_OKEY;
		} else if (t == YAML_SEQUENCE_START_EVENT) {
			skip_collection(p, S_EKEY);
		} else {
			goto structure;
		}
		return 0;
	case S_OKEY:
		if (t == YAML_MAPPING_END_EVENT) {
			p->st = S_EKEY;
			return 0;
		}
		if (!sv)
			goto structure;
		snprintf(p->key, sizeof(p->key), "%s", sv);
		p->st = S_OVAL;
		return 0;
	case S_OVAL:
		if (sv) {
			op_scalar(p, ev);
			p->st = S_OKEY;
		} else if (t == YAML_MAPPING_START_EVENT ||
			   t == YAML_SEQUENCE_START_EVENT) {
			skip_collection(p, S_OKEY);
		} else {
			goto structure;
		}
		return 0;
	case S_SKIP:
		if (t == YAML_MAPPING_START_EVENT ||
		    t == YAML_SEQUENCE_START_EVENT)
			p->skip_depth++;
		else if (t == YAML_MAPPING_END_EVENT ||
			 t == YAML_SEQUENCE_END_EVENT)
			p->skip_depth--;
		if (p->skip_depth == 0)
			p->st = p->skip_return;
		return 0;
	}
structure:
	errno = EINVAL;
	return errprintf(err,
			 "line %ld: unexpected %s in %s job_stats (expected "
			 "'job_stats:' and a list of entries)",
			 ev_line(p, ev),
			 sv				  ? "value"
			 : t == YAML_SEQUENCE_START_EVENT ? "list"
			 : t == YAML_MAPPING_START_EVENT  ? "mapping"
							  : "element",
			 p->target);
}

static int finish_entry(struct jobstats_parser *p, fwd_error_t *err)
{
	struct jobstats_rec *r = p->rec;

	if (p->entry_bad) {
		errno = EINVAL;
		if (err)
			*err = p->entry_err;
		return -1;
	}
	if (!p->entry_done) {
		errno = EINVAL;
		return errprintf(err,
				 "line %ld: %s job_stats: an entry is "
				 "'- job_id: ...' and its values",
				 p->entry_line, p->target);
	}
	if (!r->job_id[0]) {
		errno = EINVAL;
		return errprintf(err, "line %ld: entry without job_id",
				 r->line);
	}
	if (r->ts < 0) {
		errno = EINVAL;
		return errprintf(err,
				 "line %ld: job %s: entry without "
				 "snapshot_time",
				 r->line, r->job_id);
	}
	return 1;
}

int jobstats_next(struct jobstats_parser *p, struct jobstats_rec *out,
		  fwd_error_t *err)
{
	p->rec = out;
	if (!p->started && start(p, err) < 0)
		return -1;
	while (!p->in_entry) {
		if (!p->in_piece) {
			if (!p->have_next)
				return 0;
			if (begin_piece(p, err) < 0)
				return -1;
		}
		if (!p->have_entry) {
			int r = read_header(p, err);

			if (r < 0)
				return -1;
			if (r == 0)
				continue;
		}
		begin_entry(p);
	}
	for (;;) {
		yaml_event_t ev;
		int r;

		if (!yaml_parser_parse(&p->yp, &ev)) {
			long line = p->piece_first_line +
				    (long)p->yp.problem_mark.line;

			/* an error at the end of the entry's text is on its
			 * last line, not on the next entry's */
			if (line > p->entry_last_line)
				line = p->entry_last_line;
			if (line < p->entry_line)
				line = p->entry_line;
			errno = EINVAL;
			errprintf(err, "line %ld: %s job_stats: %s", line,
				  p->target,
				  p->yp.problem ? p->yp.problem : "YAML error");
			drain_entry(p);
			return -1;
		}
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			end_entry(p);
			return finish_entry(p, err);
		}
		r = on_event(p, &ev, err);
		yaml_event_delete(&ev);
		if (r < 0) {
			drain_entry(p);
			return -1;
		}
		if (r > 0)
			p->entry_done = true;
	}
}

void jobstats_close(struct jobstats_parser *p)
{
	int saved = errno;

	if (!p)
		return;
	end_entry(p);
	free(p->default_target);
	free(p);
	errno = saved;
}

int jobstats_check(const struct jobstats_rec *r, int64_t now,
		   const struct policy_ingest *lim, fwd_error_t *err)
{
	char what[64];
	uint64_t bytes = 0, samples = 0;
	double age = -1;

	if (fwd_plaus_time("snapshot_time", r->ts, now, err) < 0)
		goto bad;
	if (r->start) {
		if (fwd_plaus_interval("start_time", r->start, "snapshot_time",
				       r->ts, now, err) < 0)
			goto bad;
		age = (double)(r->ts - r->start);
	}
	for (size_t i = 0; i < r->n_ops; i++) {
		const struct jobstats_op *o = &r->ops[i];
		const uint64_t v[4] = {o->samples, o->min, o->max, o->sum};
		static const char *const vn[4] = {"samples", "min", "max",
						  "sum"};

		for (int k = 0; k < 4; k++) {
			snprintf(what, sizeof(what), "%s.%s", o->name, vn[k]);
			if (fwd_plaus_counter(what, v[k], err) < 0)
				goto bad;
		}
		/* both under 2^63: no overflow */
		if (!strcmp(o->unit, "bytes") || strstr(o->name, "_bytes"))
			bytes = bytes + o->sum > FWD_PLAUS_COUNTER_MAX
					? FWD_PLAUS_COUNTER_MAX
					: bytes + o->sum;
		samples = samples + o->samples > FWD_PLAUS_COUNTER_MAX
				  ? FWD_PLAUS_COUNTER_MAX
				  : samples + o->samples;
	}
	if (age >= 0 && lim &&
	    (fwd_plaus_rate("bytes", bytes, age, lim->max_bandwidth, "B", err) <
		     0 ||
	     fwd_plaus_rate("samples", samples, age, lim->max_ops_rate, "ops",
			    err) < 0))
		goto bad;
	return 0;
bad:
	return errprefix(err, "job %.60s", r->job_id);
}
