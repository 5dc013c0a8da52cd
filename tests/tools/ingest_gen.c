/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ingest_gen FORMAT SEED DIR [TEMPLATE]: seeded random input for one
 * `fwdctl ingest` format, valid entries mixed with invalid ones, and what
 * the database must hold afterwards (tests/integration/ingest_property.sh).
 *
 * FORMAT is beacon-lwfs, influx, lustre-jobstats, sacct or darshan
 * (TEMPLATE: darshan-parser output whose job lines and POSIX byte totals
 * are replaced).  Written into DIR:
 *   input          the input (darshan: files, listed one a line)
 *   want.rows      the rows every valid entry must give, exactly once,
 *                  as the script's query for FORMAT prints them (sorted)
 *   want.json      {"stored": N, "skipped": N, "rejected": N,
 *                   "rejected_by_reason": {REASON: N, ...}}: what the
 *                  summary must say (skipped: first values of a series)
 *
 * The same seed gives the same files on every platform (xorshift64*, no
 * libc random, times from a fixed base in the plausible window).
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BASE_TS 1700000000LL /* 2023-11-14: inside the plausible window */
#define MAX_REASONS 8
#define MAX_ROWS 20000

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

static struct {
	const char *reason;
	unsigned n;
} why[MAX_REASONS];
static unsigned n_stored, n_skipped, n_rejected;
static char *rows[MAX_ROWS];
static size_t n_rows;
static FILE *in;

static void refused(const char *reason)
{
	size_t i;

	for (i = 0; i < MAX_REASONS && why[i].reason; i++)
		if (!strcmp(why[i].reason, reason))
			break;
	if (i == MAX_REASONS) {
		fprintf(stderr, "ingest_gen: too many reasons\n");
		exit(1);
	}
	why[i].reason = reason;
	why[i].n++;
	n_rejected++;
}

static void row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void row(const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (n_rows == MAX_ROWS) {
		fprintf(stderr, "ingest_gen: too many rows\n");
		exit(1);
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		perror("ingest_gen");
		exit(1);
	}
	va_end(ap);
	rows[n_rows++] = s;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The expectations: rows in byte order (the script sorts the query's
 * output with LC_ALL=C), the summary's counts. */
static int write_want(const char *dir)
{
	char path[4096];
	FILE *f;

	qsort(rows, n_rows, sizeof(rows[0]), cmp);
	snprintf(path, sizeof(path), "%s/want.rows", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	for (size_t i = 0; i < n_rows; i++)
		fprintf(f, "%s\n", rows[i]);
	if (fclose(f))
		return -1;
	snprintf(path, sizeof(path), "%s/want.json", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f,
		"{\"stored\": %u, \"skipped\": %u, \"rejected\": %u, "
		"\"rejected_by_reason\": {",
		n_stored, n_skipped, n_rejected);
	for (size_t i = 0; i < MAX_REASONS && why[i].reason; i++)
		fprintf(f, "%s\"%s\": %u", i ? ", " : "", why[i].reason,
			why[i].n);
	fprintf(f, "}}\n");
	return fclose(f);
}

/* ---- beacon-lwfs ------------------------------------------------------ */

#define B_FWD 4
#define B_SERIES 6 /* Meta/Read/Write x exe/wait */

static void iso(char *buf, size_t n, long long t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void beacon(unsigned steps)
{
	static const char *const op[3] = {"Meta", "Read", "Write"};
	static const char *const op_db[3] = {"meta", "read", "write"};
	static const char *const ph[2] = {"exe", "wait"};
	uint64_t v[B_FWD][B_SERIES][8] = {{{0}}};
	bool have[B_FWD][B_SERIES] = {{false}};
	long long last[B_FWD][B_SERIES] = {{0}};
	/* a rejected jump is kept as a candidate: a second one of the same
	 * value next is a counter that really moved (db/SCHEMA.md), so a
	 * jump only follows a plausible value */
	bool jumped[B_FWD][B_SERIES] = {{false}};

	for (unsigned t = 0; t < steps; t++) {
		long long ts = BASE_TS + 10LL * t;
		char when[32], local[32];

		iso(when, sizeof(when), ts);
		snprintf(local, sizeof(local), "%.10s %.8s", when, when + 11);
		for (int f = 0; f < B_FWD; f++) {
			uint64_t ops[3] = {0};
			bool has_ops[3] = {false};
			char ip[32];

			snprintf(ip, sizeof(ip), "10.0.7.%d", f + 1);
			for (int s = 0; s < B_SERIES; s++) {
				uint64_t d[8], sum = 0;

				if (below(4) == 0)
					continue; /* no line this step */
				for (int b = 0; b < 8; b++) {
					d[b] = below(b < 4 ? 5000 : 50);
					v[f][s][b] += d[b];
					sum += d[b];
				}
				fprintf(in, "%s [%s]  [Trace]: %s %s:", ip,
					local, op[s / 2], ph[s % 2]);
				for (int b = 0; b < 8; b++)
					fprintf(in, " %" PRIu64, v[f][s][b]);
				fprintf(in, " %s\n", when);
				if (!have[f][s]) {
					have[f][s] = true;
					n_skipped++;
				} else {
					n_stored++;
					row("%s\t%lld\t%s\t%s\t%lld\t%" PRIu64
					    "\t%" PRIu64 "\t%" PRIu64
					    "\t%" PRIu64 "\t%" PRIu64
					    "\t%" PRIu64 "\t%" PRIu64
					    "\t%" PRIu64,
					    ip, ts, op_db[s / 2], ph[s % 2],
					    ts - last[f][s], d[0], d[1], d[2],
					    d[3], d[4], d[5], d[6], d[7]);
					if (s % 2 == 0) {
						ops[s / 2] = sum;
						has_ops[s / 2] = true;
					}
				}
				last[f][s] = ts;
				jumped[f][s] = false;
			}
			if (has_ops[0] || has_ops[1] || has_ops[2]) {
				char c[3][24];

				for (int k = 0; k < 3; k++)
					if (has_ops[k])
						snprintf(c[k], sizeof(c[k]),
							 "%" PRIu64, ops[k]);
					else
						strcpy(c[k], "NULL");
				/* samples_raw: read_ops write_ops md_ops */
				row("%s\t%lld\tops\t%s\t%s\t%s", ip, ts, c[1],
				    c[2], c[0]);
			}
			/* the queue gauge, a second later */
			if (below(2)) {
				unsigned q = (unsigned)below(1000);
				char qw[32];

				iso(qw, sizeof(qw), ts + 1);
				fprintf(in,
					"%s [%s]  [Trace]: queue length: %u "
					"%s\n",
					ip, local, q, qw);
				n_stored++;
				row("%s\t%lld\tqueue\t%u", ip, ts + 1, q);
			}
			/* one invalid line in three, at ts + 5: never a
			 * baseline, never stored */
			if (below(3))
				continue;
			int s = (int)below(B_SERIES);
			char w5[32];

			iso(w5, sizeof(w5), ts + 5);
			switch (below(6)) {
			case 0: /* 7 counters */
				fprintf(in,
					"%s [%s]  [Trace]: %s %s: 1 2 3 4 5 6 "
					"7 %s\n",
					ip, local, op[s / 2], ph[s % 2], w5);
				refused("malformed");
				break;
			case 1: /* not a Beacon line at all */
				fprintf(in,
					"%s [%s]  [Trace]: %s sideways: "
					"%s\n",
					ip, local, op[s / 2], w5);
				refused("malformed");
				break;
			case 2: /* a time before 2000, or in 2999 */
				fprintf(in,
					"%s [%s]  [Trace]: %s %s: 1 1 1 1 1 1 "
					"1 1 %s\n",
					ip, local, op[s / 2], ph[s % 2],
					below(2) ? "1999-12-31T23:59:59Z"
						 : "2999-01-01T00:00:00Z");
				refused("time out of range");
				break;
			case 3: /* a counter of 2^64-1 */
				fprintf(in,
					"%s [%s]  [Trace]: %s %s: 1 1 1 "
					"18446744073709551615 1 1 1 1 %s\n",
					ip, local, op[s / 2], ph[s % 2], w5);
				refused("value out of range");
				break;
			case 4: /* a queue over ingest.max_queue_len */
				fprintf(in,
					"%s [%s]  [Trace]: queue length: "
					"%" PRIu64 " %s\n",
					ip, local, 1000001 + below(1000000000),
					w5);
				refused("implausible rate");
				break;
			default: /* a jump of 2^62 requests in 5 s, over a
				  * baseline (a first value has no rate) */
				if (!have[f][s] || jumped[f][s]) {
					fprintf(in, "\n"); /* blank: ignored */
					break;
				}
				jumped[f][s] = true;
				fprintf(in, "%s [%s]  [Trace]: %s %s:", ip,
					local, op[s / 2], ph[s % 2]);
				for (int b = 0; b < 8; b++)
					fprintf(in, " %" PRIu64,
						v[f][s][b] +
							(b == 2 ? UINT64_C(1)
									  << 62
								: 0));
				fprintf(in, " %s\n", w5);
				refused("implausible rate");
				break;
			}
		}
	}
}

/* ---- influx line protocol --------------------------------------------- */

#define I_SERIES 12

static void influx(unsigned lines)
{
	static const char *const piece[] = {"a",
					    "z",
					    "0",
					    "-",
					    "_",
					    ".",
					    "\xc3\xa9",
					    "\xe2\x82\xac",
					    "\xf0\x9f\x90\xa7"};
	static const char *const spoil[] = {"\xff", "\xc3", "\xed\xa0\x80",
					    "\xc0\xaf"};
	struct {
		char name[64];
		bool ost;
		bool have;
		bool jumped; /* as in beacon() */
		uint64_t c[4];
		long long last;
	} s[I_SERIES];
	static const char *const field[4] = {"read_bytes", "write_bytes",
					     "read_ops", "write_ops"};
	long long ts = BASE_TS;

	for (int i = 0; i < I_SERIES; i++) {
		int len = 1 + (int)below(6);

		memset(&s[i], 0, sizeof(s[i]));
		s[i].ost = i % 2;
		snprintf(s[i].name, sizeof(s[i].name), "%s%d-",
			 s[i].ost ? "ost" : "fwd", i);
		for (int k = 0; k < len; k++)
			strcat(s[i].name, piece[below(9)]);
	}
	for (unsigned l = 0; l < lines; l++) {
		int i = (int)below(I_SERIES), kind = (int)below(8);
		const char *meas = s[i].ost ? "ost,target=" : "fwd,node=";
		unsigned q = (unsigned)below(100);
		uint64_t d[4];

		ts += 1 + (long long)below(3);
		if (kind >= 2 || (kind == 1 && (!s[i].have || s[i].jumped))) {
			/* valid */
			for (int k = 0; k < 4; k++) {
				d[k] = below(k < 2 ? 1000000000 : 100000);
				s[i].c[k] += d[k];
			}
			fprintf(in,
				"%s%s read_bytes=%" PRIu64
				"i,write_bytes=%" PRIu64 "i,read_ops=%" PRIu64
				"i,write_ops=%" PRIu64 "i,queue_len=%u "
				"%lld000000000\n",
				meas, s[i].name, s[i].c[0], s[i].c[1],
				s[i].c[2], s[i].c[3], q, ts);
			n_stored++; /* the gauge is stored with the first */
			if (s[i].have)
				row("%s\t%s\t%lld\t%lld\t%" PRIu64 "\t%" PRIu64
				    "\t%" PRIu64 "\t%" PRIu64 "\t%u",
				    s[i].ost ? "ost" : "fwd", s[i].name, ts,
				    ts - s[i].last, d[0], d[1], d[2], d[3], q);
			else
				row("%s\t%s\t%lld\tNULL\tNULL\tNULL\tNULL\t"
				    "NULL\t%u",
				    s[i].ost ? "ost" : "fwd", s[i].name, ts, q);
			s[i].have = true;
			s[i].jumped = false;
			s[i].last = ts;
			continue;
		}
		if (kind == 1) { /* 2^62 bytes in a few seconds */
			fprintf(in,
				"%s%s read_bytes=%" PRIu64
				"i,queue_len=1 %lld000000000\n",
				meas, s[i].name,
				s[i].c[0] + (UINT64_C(1) << 62), ts);
			refused("implausible rate");
			s[i].jumped = true;
			continue;
		}
		switch (below(5)) {
		case 0:
			fprintf(in, "%s%s%s read_bytes=1i %lld000000000\n",
				meas, s[i].name, spoil[below(4)], ts);
			refused("not valid UTF-8");
			break;
		case 1:
			fprintf(in,
				"%s%s read_bytes=%" PRIu64 "u %lld000000000\n",
				meas, s[i].name,
				(rnd() >> 1) | (UINT64_C(1) << 63), ts);
			refused("value out of range");
			break;
		case 2:
			fprintf(in, "%s%s %s=1i %lld000000000\n", meas,
				s[i].name, field[below(4)],
				below(2) ? 2000000000LL +
						   (long long)below(1000000000)
					 : 900000000LL);
			refused("time out of range");
			break;
		case 3:
			fprintf(in,
				"%s%s read_bytes=%" PRIu64 "x %lld000000000\n",
				meas, s[i].name, below(1000), ts);
			refused("malformed");
			break;
		default:
			fprintf(in,
				"%s%s queue_len=%" PRIu64 " %lld000000000\n",
				meas, s[i].name, 1000001 + below(100000000),
				ts);
			refused("implausible rate");
			break;
		}
	}
}

/* ---- Lustre job_stats -------------------------------------------------- */

static void jobstats(unsigned entries)
{
	/* ids as Lustre 2.12 to 2.15 print them (unquoted) */
	static const char *const good[][2] = {{"", ""},
					      {"dd.", ""},
					      {"", ".c1"},
					      {"x-", "_y.n1"},
					      {"caf\xc3\xa9.", ""}};
	/* ids YAML cannot read, or not UTF-8: malformed */
	static const char *const bad[][2] = {
		{"a: b.", ""}, {"{x.", ""},  {"[a.", ""},  {"*ali.", ""},
		{"%p.", ""},   {"@at.", ""}, {"- d.", ""}, {"caf\xe9.", ""},
		{"`x.", ""},   {"|", ""}};
	char target[64] = "";
	unsigned uid = 0;

	for (unsigned e = 0; e < entries; e++) {
		long long ts = BASE_TS + (long long)below(100000);
		uint64_t w = below(UINT64_C(1) << 30),
			 r = below(UINT64_C(1) << 30);
		uint64_t ws = 1 + below(1000), rs = 1 + below(1000);
		unsigned kind = (unsigned)below(10);
		char id[64];

		if (e % 40 == 0) {
			snprintf(target, sizeof(target), "prop-OST%04x",
				 e / 40);
			fprintf(in, "obdfilter.%s.job_stats=\njob_stats:\n",
				target);
		}
		uid++;
		if (kind < 6) {
			const char *const *g = good[below(5)];

			snprintf(id, sizeof(id), "%s%u%s", g[0], uid, g[1]);
		} else if (kind == 6) {
			const char *const *b = bad[below(10)];

			snprintf(id, sizeof(id), "%s%u%s", b[0], uid, b[1]);
		} else {
			snprintf(id, sizeof(id), "%u", uid);
		}
		fprintf(in, "- job_id:          %s\n", id);
		switch (kind) {
		case 7: /* a time far ahead */
			fprintf(in, "  snapshot_time:   %lld\n",
				99999999999LL + (long long)below(1000000));
			break;
		case 8: /* started after its snapshot (2.15 layout) */
			fprintf(in,
				"  snapshot_time:   %lld.000000000 secs.nsecs\n"
				"  start_time:      %lld.000000000 "
				"secs.nsecs\n",
				ts, ts + 1 + (long long)below(1000));
			break;
		default:
			if (below(2))
				fprintf(in, "  snapshot_time:   %lld\n", ts);
			else
				fprintf(in,
					"  snapshot_time:   %lld.%09u "
					"secs.nsecs\n"
					"  start_time:      %lld.000000000 "
					"secs.nsecs\n"
					"  elapsed_time:    %lld.000000000 "
					"secs.nsecs\n",
					ts, (unsigned)below(1000000000),
					ts - 1000, 1000LL);
		}
		fprintf(in,
			"  read_bytes:      { samples: %" PRIu64
			", unit: bytes, min: 1, max: %" PRIu64 ", sum: %" PRIu64
			" }\n",
			rs, r, r);
		if (kind == 9) /* 2^64-1 samples */
			fprintf(in,
				"  write_bytes:     { samples: "
				"18446744073709551615, unit: bytes, min: 1, "
				"max: 1, sum: %" PRIu64 " }\n",
				w);
		else
			fprintf(in,
				"  write_bytes:     { samples: %" PRIu64
				", unit: bytes, min: 1, max: %" PRIu64
				", sum: %" PRIu64 " }\n",
				ws, w, w);
		switch (kind) {
		case 6:
			refused("malformed");
			break;
		case 7:
			refused("time out of range");
			break;
		case 8:
			refused("end before start");
			break;
		case 9:
			refused("value out of range");
			break;
		default:
			n_stored++;
			row("%s\t%s\t%lld\tread_bytes\t%" PRIu64 "\t%" PRIu64,
			    target, id, ts, rs, r);
			row("%s\t%s\t%lld\twrite_bytes\t%" PRIu64 "\t%" PRIu64,
			    target, id, ts, ws, w);
		}
	}
}

/* ---- sacct --parsable2 -------------------------------------------------- */

static void sacct_time(char *buf, size_t n, long long t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void sacct(unsigned jobs)
{
	fprintf(in, "JobID|JobName|User|Account|Partition|NNodes|NodeList|"
		    "Start|End|State|TRESUsageInTot|TRESUsageOutTot\n");
	for (unsigned j = 0; j < jobs; j++) {
		unsigned id = 7000 + j, nodes = 1 + (unsigned)below(64);
		long long start = BASE_TS + 86400LL * (long long)below(300) +
				  (long long)below(86400);
		long long run = 60 + (long long)below(7200);
		uint64_t r = below(UINT64_C(1) << 40),
			 w = below(UINT64_C(1) << 40);
		unsigned kind = (unsigned)below(10);
		char s[32], e[32], name[32], user[16];

		snprintf(name, sizeof(name), "app%u", (unsigned)below(20));
		snprintf(user, sizeof(user), "u%u", (unsigned)below(9));
		sacct_time(s, sizeof(s), start);
		sacct_time(e, sizeof(e), start + run);
		switch (kind) {
		case 6: /* a negative node count */
			fprintf(in,
				"%u|%s|%s|proj|batch|-%u|n1|%s|%s|COMPLETED||"
				"\n",
				id, name, user, nodes, s, e);
			refused("malformed");
			continue;
		case 7: /* ends before it starts */
			fprintf(in,
				"%u|%s|%s|proj|batch|%u|n1|%s|%s|COMPLETED||\n",
				id, name, user, nodes, e, s);
			refused("end before start");
			continue;
		case 8: /* in 2999 */
			fprintf(in,
				"%u|%s|%s|proj|batch|%u|n1|2999-01-01T00:00:00|"
				"2999-01-01T01:00:00|COMPLETED||\n",
				id, name, user, nodes);
			refused("time out of range");
			continue;
		case 9: /* a line cut short */
			fprintf(in, "%u|%s|%s\n", id, name, user);
			refused("malformed");
			continue;
		}
		fprintf(in, "%u|%s|%s|proj|batch|%u|n1|%s|%s|COMPLETED||\n", id,
			name, user, nodes, s, e);
		row("%u\tjob\t%s\t%s\t%u\t%lld\t%lld", id, name, user, nodes,
		    start, start + run);
		if (kind == 5) { /* its step's fs/lustre is 2^64-1: the job
				  * is stored, its summary is not */
			fprintf(in,
				"%u.0|x||proj||1|n1|%s|%s|COMPLETED|"
				"fs/lustre=18446744073709551615|"
				"fs/lustre=0\n",
				id, s, e);
			refused("value out of range");
			continue;
		}
		fprintf(in,
			"%u.0|x||proj||%u|n1|%s|%s|COMPLETED|cpu=00:00:05,"
			"fs/disk=1048576,fs/lustre=%" PRIu64
			",mem=1048576|fs/disk=1,fs/lustre=%" PRIu64 "\n",
			id, nodes, s, e, r, w);
		row("%u\tio\tsacct\t%" PRIu64 "\t%" PRIu64 "\t%lld", id, r, w,
		    run);
	}
}

/* ---- darshan-parser output -------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) || !(buf = malloc((size_t)n + 1)) ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static void darshan(unsigned files, const char *dir, const char *template)
{
	size_t len;
	char *t = slurp(template, &len);

	for (unsigned i = 0; i < files; i++) {
		unsigned id = 8000 + i, kind = (unsigned)below(10);
		long long start = BASE_TS + (long long)below(30000000);
		long long end = start + 100 + (long long)below(10000);
		uint64_t nprocs = 1 + below(4096);
		uint64_t r = below(UINT64_C(1) << 36),
			 w = below(UINT64_C(1) << 36);
		char path[4096], rs[32], ws[32];
		char *save = NULL, *copy = strdup(t);
		FILE *f;

		snprintf(path, sizeof(path), "%s/%u.darshan.txt", dir, id);
		if (!copy || !(f = fopen(path, "w"))) {
			perror(path);
			exit(1);
		}
		fprintf(in, "%s\n", path);
		snprintf(rs, sizeof(rs), "%" PRIu64, r);
		snprintf(ws, sizeof(ws), "%" PRIu64, w);
		switch (kind) {
		case 4: /* below -1 ("not monitored") */
			snprintf(ws, sizeof(ws), "-%u",
				 2 + (unsigned)below(99));
			refused("value out of range");
			break;
		case 5:
			nprocs = 0;
			refused("value out of range");
			break;
		case 6:
			snprintf(ws, sizeof(ws), "1e308");
			refused("value out of range");
			break;
		case 7: {
			long long x = start;

			start = end;
			end = x;
			refused("end before start");
			break;
		}
		case 8:
			start = 32503680000LL; /* 3000-01-01 */
			end = start + 100;
			refused("time out of range");
			break;
		case 9:
			fprintf(f, "this is not darshan-parser output\n");
			fclose(f);
			free(copy);
			refused("malformed");
			continue;
		default:
			n_stored++;
			row("%u\tdarshan\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			    "\t%lld",
			    id, r, w, nprocs, end - start + 1);
		}
		for (char *l = strtok_r(copy, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(l, "# jobid:", 8))
				fprintf(f, "# jobid: %u\n", id);
			else if (!strncmp(l, "# start_time:", 13))
				fprintf(f, "# start_time: %lld\n", start);
			else if (!strncmp(l, "# end_time:", 11))
				fprintf(f, "# end_time: %lld\n", end);
			else if (!strncmp(l, "# nprocs:", 9))
				fprintf(f, "# nprocs: %" PRIu64 "\n", nprocs);
			else if (!strncmp(l, "# run time:", 11))
				fprintf(f, "# run time: %lld.0000\n",
					end - start + 1);
			else if (!strncmp(l, "total_POSIX_BYTES_READ:", 23))
				fprintf(f, "total_POSIX_BYTES_READ: %s\n", rs);
			else if (!strncmp(l, "total_POSIX_BYTES_WRITTEN:", 26))
				fprintf(f, "total_POSIX_BYTES_WRITTEN: %s\n",
					ws);
			else
				fprintf(f, "%s\n", l);
		}
		free(copy);
		if (fclose(f)) {
			perror(path);
			exit(1);
		}
	}
	free(t);
}

int main(int argc, char **argv)
{
	const char *fmt, *dir;
	char path[4096];
	char *end;

	if (argc < 4) {
		fprintf(stderr, "usage: ingest_gen FORMAT SEED DIR "
				"[TEMPLATE]\n");
		return 2;
	}
	fmt = argv[1];
	dir = argv[3];
	rng = strtoull(argv[2], &end, 10);
	if (*end || !*argv[2]) {
		fprintf(stderr, "ingest_gen: bad seed '%s'\n", argv[2]);
		return 2;
	}
	/* a seed of 0 would stay 0 */
	rng = (rng + 1) * 0x9e3779b97f4a7c15ULL;
	snprintf(path, sizeof(path), "%s/input", dir);
	if (!(in = fopen(path, "w"))) {
		perror(path);
		return 1;
	}
	if (!strcmp(fmt, "beacon-lwfs")) {
		beacon(60);
	} else if (!strcmp(fmt, "influx")) {
		influx(3000);
	} else if (!strcmp(fmt, "lustre-jobstats")) {
		jobstats(600);
	} else if (!strcmp(fmt, "sacct")) {
		sacct(400);
	} else if (!strcmp(fmt, "darshan") && argc == 5) {
		darshan(60, dir, argv[4]);
	} else {
		fprintf(stderr, "ingest_gen: unknown format '%s'\n", fmt);
		return 2;
	}
	if (fclose(in) || write_want(dir) < 0) {
		perror(dir);
		return 1;
	}
	return 0;
}
