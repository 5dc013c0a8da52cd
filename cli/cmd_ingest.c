/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl ingest: load forwarder/OST/MDT statistics into the database.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd_ingest.h"
#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "common/plausible.h"
#include "common/timeutil.h"
#include "controller/sacct.h"
#include "db/db.h"
#include "monitor/ingest.h"
#include "policies/policy.h"
#include "topology/topology.h"

#define SHOW_ERRORS 5
/* Commit at least this often on a slow stream so readers see new data. */
#define FLUSH_INTERVAL 2.0
/* After this long without using the connection, check it before use: a
 * pipe can sit idle past the server's wait_timeout. */
#define IDLE_CHECK 1.0
/* The lines of the open transaction are kept until it commits, to be
 * stored again on a new connection if the server drops it; past this
 * many bytes the transaction is committed early. */
#define HELD_MAX (64u << 20)

enum format { FMT_BEACON, FMT_INFLUX, FMT_JOBSTATS };

/* clang-format off */
/* What each format reads (the "Formats:" section of the help). */
static const struct {
	const char *name;
	const char *text;
} format_help[] = {
	{"beacon-lwfs",
"  beacon-lwfs       LWFS server statistics (Beacon):\n"
"                      <ip> [<local time>]  [Trace]: <Meta|Read|Write> <exe|wait>:\n"
"                          <8 cumulative latency-bucket counters> <UTC time>\n"
"                      <ip> [<local time>]  [Trace]: queue length: <n> <UTC time>\n"
"                    IPs are mapped to forwarder names through the topology's\n"
"                    forwarder addresses when a topology is available.\n"},
	{"influx",
"  influx            InfluxDB line protocol, measurements fwd (tag node=),\n"
"                    ost and mdt (tag target=); counter fields read_bytes,\n"
"                    write_bytes, read_ops, write_ops, md_ops; gauge\n"
"                    queue_len.  Also Telegraf's Lustre plugins as they\n"
"                    emit them: inputs.lustre2 (measurement lustre2, tag\n"
"                    name=: OST read_bytes/write_bytes/read_calls/\n"
"                    write_calls, MDT md_stats; with tag jobid=, the\n"
"                    jobstats_* fields into jobstats_raw) and\n"
"                    inputs.lustre2_lctl (lustre2_lctl_ost/_mdt, tags\n"
"                    volume=, jobid=, unit=: jobstats_<op>_samples/_min/\n"
"                    _max/_sum, stats_read_bytes_*, stats_write_bytes_*;\n"
"                    MDT md_stats stats_<op>_samples of the metadata\n"
"                    operations, summed into md_ops).\n"
"                    `telegraf --test` output (\"> \" prefix) is accepted.\n"
"                    Other measurements and unused Lustre lines are\n"
"                    ignored and counted by kind in the summary.\n"},
	{"lustre-jobstats",
"  lustre-jobstats   output of `lctl get_param obdfilter.*.job_stats\n"
"                    mdt.*.job_stats` (Lustre 2.12 to 2.16: secs.nsecs times,\n"
"                    start_time, hist); job ids map to Slurm jobs by the\n"
"                    policy's jobstats.jobid_name.  Entries are read one at\n"
"                    a time: an entry YAML cannot read (an unquoted job id\n"
"                    such as 'a: b.1001') is refused alone.\n"},
	{"sacct",
"  sacct             [FILE...] output of `sacct --parsable2 --noconvert\n"
"                    --allusers --starttime DATE --format=JobID,JobName,\n"
"                    User,Account,Partition,NNodes,NodeList,Start,End,State,\n"
"                    TRESUsageInTot,TRESUsageOutTot`: jobs that ran before\n"
"                    fwdalloc saw them join the jobs table, and their\n"
"                    fs/lustre TRES (acct_gather_filesystem/lustre) become\n"
"                    their history (source sacct).  Start and End are\n"
"                    wall-clock times of the zone of the host sacct ran\n"
"                    on: read in fwdctl's time zone (TZ), or --timezone.\n"},
	{"darshan",
"  darshan           FILE... each the output of `darshan-parser --total\n"
"                    --perf LOG` or `darshan-parser LOG` for one job: its\n"
"                    I/O summary (job id, processes, bytes, operations,\n"
"                    metadata operations, shared file or file per process)\n"
"                    becomes the job's history (source darshan).\n"},
};

/* What is printed, by kind of format. */
#define HELP_LINES_OUTPUT \
"Output (beacon-lwfs, influx, lustre-jobstats):\n" \
"  Refused lines and entries are listed on standard error with their line\n" \
"  numbers, the first %d in full:\n" \
"    fwdctl ingest: FILE:LINE: why\n" \
"    fwdctl ingest: FILE: N more rejected lines not shown\n" \
"  then counted by reason, and the lines understood but not used by kind:\n" \
"    fwdctl: FILE: rejected K lines: N1 REASON1, N2 REASON2, ...\n" \
"    fwdctl: FILE: ignored N lines: KIND (first at line L)\n" \
"  The last line on standard output is\n" \
"    read N lines, stored M samples, rejected K lines\n" \
"  followed by \" (S already stored or baselines, I ignored)\" when either is\n" \
"  not 0, and preceded, when implausible samples were refused, by\n" \
"    rejected N implausible samples: B byte counter deltas over the\n" \
"    bandwidth bound, O operation counter deltas over ingest.max_ops_rate,\n" \
"    Q queue lengths over ingest.max_queue_len\n" \
"  (on one line, the kinds that are not 0).  --json prints one object\n" \
"  instead: lines, stored, rejected, skipped (already stored or baselines),\n" \
"  ignored, implausible {samples, bytes, ops, queue_len}, errors [{line,\n" \
"  error}] (the first %d), ignored_by_kind {KIND: N} and\n" \
"  rejected_by_reason {REASON: N}.\n"

#define HELP_SACCT_OUTPUT \
"Output (sacct):\n" \
"  Each refused line on standard error (the first %d of each file),\n" \
"    fwdctl ingest: FILE:LINE: why\n" \
"  then the refusals by reason and the jobs not used:\n" \
"    fwdctl ingest: rejected K lines: N1 REASON1, N2 REASON2, ...\n" \
"    fwdctl ingest: ignored: N jobs that never started, N still running,\n" \
"    N array or heterogeneous job components\n" \
"  and on standard output\n" \
"    read N lines: J finished jobs (X new), S summaries from fs/lustre\n" \
"    usage, P profiles updated\n" \
"  --json: lines, jobs, jobs_new, summaries, not_run, running, array_het,\n" \
"  profiles, rejected_files, rejected_lines and rejected_by_reason\n" \
"  {REASON: N}.  A line refused costs only itself; a job whose step is\n" \
"  refused is recorded without a summary.\n"

#define HELP_DARSHAN_OUTPUT \
"Output (darshan):\n" \
"  Each refused file on standard error, and the refusals by reason:\n" \
"    fwdctl ingest: FILE:LINE: why\n" \
"    fwdctl ingest: rejected K files: N1 REASON1, N2 REASON2, ...\n" \
"  on standard output a line per stored job, then\n" \
"    read N files, stored M job summaries, rejected K files\n" \
"  --json: stored, rejected, errors [{file, line, error}] and\n" \
"  rejected_by_reason {REASON: N}.  A file refused costs only itself.\n"

#define HELP_REASONS \
"Refused, counted by reason and never stored (the other lines, entries\n" \
"and files are stored all the same):\n" \
"  malformed            not the format: a line cut short, a field that is\n" \
"                       not a number, a job_stats entry YAML cannot read,\n" \
"                       a Darshan log whose run is not that of the job\n" \
"  not valid UTF-8      a name, tag or job id that is not UTF-8\n" \
"  time out of range    a time before 2000 or more than a day ahead (a\n" \
"                       wrong --precision, a corrupt record)\n" \
"  end before start     an end, or a job_stats snapshot, before its start\n" \
"  value out of range   a counter over 2^63-1, a count out of its bounds\n" \
"                       (NNodes up to the topology's nodes, nprocs >= 1),\n" \
"                       a Darshan counter below -1, a number no integer\n" \
"                       holds\n" \
"  implausible rate     growth faster than the policy's ingest: bounds\n" \
"                       allow, a queue length over ingest.max_queue_len\n" \
"  not used (--strict)  a line understood but not used, under --strict\n" \
"  unreadable           darshan: a file that cannot be opened (sacct\n" \
"                       counts those in rejected_files)\n" \
"  other                the reasons past the first eight\n"

#define HELP_EXIT \
"Exit status:\n" \
"  0  every line was stored or skipped as already stored\n" \
"  1  the schema is missing or of another version\n" \
"  2  usage error, unreadable input, or some lines, entries or files were\n" \
"     refused, whatever the reason: an input error (the others are stored)\n" \
"  3  the database is unavailable at the start, or a connection lost\n" \
"     during the run did not come back within ingest.reconnect (1m by\n" \
"     default); what was committed stays.  beacon-lwfs and influx hold\n" \
"     the lines of the batch being stored until it commits: a batch the\n" \
"     server drops (a restart, a failover) is stored again on the new\n" \
"     connection, none of its lines twice.  Never because of what an\n" \
"     entry holds.\n"

static void usage(FILE *f, const char *format)
{
	size_t n = sizeof(format_help) / sizeof(format_help[0]), k;

	for (k = 0; format && k < n; k++)
		if (!strcmp(format, format_help[k].name))
			break;
	if (format && k < n) {
		/* fwdctl ingest --format FORMAT --help: that format only */
		fprintf(f, "Usage: fwdctl ingest --format %s [OPTION...] %s\n"
			   "\n%s\n",
			format,
			!strcmp(format, "darshan") ? "FILE..."
			: !strcmp(format, "sacct") ? "[FILE...|-]"
						   : "[FILE|-]",
			format_help[k].text);
		if (!strcmp(format, "darshan"))
			fputs(HELP_DARSHAN_OUTPUT, f);
		else if (!strcmp(format, "sacct"))
			fprintf(f, HELP_SACCT_OUTPUT, SACCT_ERRORS_KEPT);
		else
			fprintf(f, HELP_LINES_OUTPUT, SHOW_ERRORS, SHOW_ERRORS);
		fputs("\n" HELP_REASONS "\n" HELP_EXIT
		      "\nOptions: fwdctl ingest --help.\n",
		      f);
		return;
	}
	fprintf(f,
"Usage: fwdctl ingest --format FORMAT [--target NAME] [--batch N] [--json]\n"
"                     [--precision ns|us|ms|s] [--strict] [--timezone ZONE]\n"
"                     [FILE|-]\n"
"\n"
"Load monitoring data into the fwdalloc database (db/SCHEMA.md):\n"
"per-interval deltas of cumulative counters into samples_raw and\n"
"samples_hist, per-minute rollups, and Lustre job_stats into jobstats_raw.\n"
"Reads FILE, or standard input when FILE is '-' or absent; works on a pipe\n"
"(`tail -F log | fwdctl ingest ...`) in bounded memory.\n"
"\n"
"Formats (`fwdctl ingest --format FORMAT --help`: that format only):\n");
	for (k = 0; k < n; k++)
		fputs(format_help[k].text, f);
	fprintf(f,
"\n"
"Options:\n"
"  -f, --format FORMAT  one of the above (required)\n"
"  --target NAME        lustre-jobstats: target of `lctl get_param -n` output\n"
"                       that has no 'obdfilter.NAME.job_stats=' line\n"
"  --batch N            records per transaction (default 100000); a\n"
"                       transaction also ends every 2 s and before\n"
"                       waiting for input\n"
"  --precision P        influx: unit of the timestamps, ns (default, as\n"
"                       InfluxDB), us, ms or s (Telegraf's precision).  A\n"
"                       time before 2000 or more than a day ahead is an\n"
"                       error on its line.\n"
"  --timezone ZONE      sacct: the time zone of the host sacct ran on\n"
"                       (Europe/Paris, UTC...; default: fwdctl's own, TZ),\n"
"                       by its rules at each date (daylight saving)\n"
"  --strict             lines that are understood but not used (other\n"
"                       measurements, brw_stats...) are errors (exit 2)\n"
"  --json               print the summary as JSON\n"
"  -h, --help           this help\n"
"\n"
"Counters are cumulative: the first value of a series is its baseline, a\n"
"value below its predecessor is a restart (the delta is the new value).\n"
"Implausible samples are rejected (policy section `ingest:`): a byte\n"
"counter growing faster than max_rate_factor x the component's peak\n"
"bandwidth (max_bandwidth when the peak is unknown), an operation counter\n"
"or LWFS histogram faster than max_ops_rate, a queue length above\n"
"max_queue_len.  A rejected value does not become the baseline: the next\n"
"delta is taken from the last plausible value.\n"
"Every line or entry is parsed, checked and stored on its own: one that\n"
"is refused costs only itself, never the run or the lines after it.\n"
"Re-ingesting the same data stores nothing twice.\n"
"\n"
"Examples:\n"
"  fwdctl ingest --format beacon-lwfs /var/log/lwfs/server-stats.log\n"
"  telegraf --once | fwdctl ingest --format influx -\n"
"  lctl get_param obdfilter.*.job_stats | fwdctl ingest -f lustre-jobstats\n"
"  darshan-parser --total --perf app.darshan > a.txt &&\n"
"      fwdctl ingest --format darshan a.txt\n"
"\n"
HELP_LINES_OUTPUT "\n" HELP_SACCT_OUTPUT "\n" HELP_DARSHAN_OUTPUT "\n"
HELP_REASONS "\n" HELP_EXIT,
		SHOW_ERRORS, SHOW_ERRORS, SACCT_ERRORS_KEPT);
}
/* clang-format on */

#define IGNORED_KINDS 16
#define REASONS 8

/* Records joined over several lines: an influx job_stats record
 * (lustre2_lctl) and a lustre2_lctl md_stats sample, from line md_line. */
struct joined {
	struct jobstats_rec *js;
	bool has_js;
	struct influx_rec md;
	bool has_md;
	long md_line;
};

/* One copy of the records being joined into another (each keeps its own
 * job_stats buffer). */
static void joined_copy(struct joined *to, const struct joined *from)
{
	to->has_md = from->has_md;
	if (from->has_md) {
		to->md = from->md;
		to->md_line = from->md_line;
	}
	to->has_js = from->has_js;
	if (from->has_js)
		memcpy(to->js, from->js, sizeof(*to->js));
}

struct run {
	const char *path;	/* for messages */
	int64_t unit_ns;	/* --precision */
	const char *jobid_name; /* policy jobstats.jobid_name */
	bool strict;
	/* lines ignored by kind (the last slot counts the rest) */
	struct {
		char kind[96];
		uint64_t n;
		long first_line;
	} ign[IGNORED_KINDS + 1];
	size_t n_ign;
	/* the records being joined */
	struct joined join;
	struct fwdctl_ctx *ctx;
	struct db *db;
	size_t batch;
	double last_use;
	struct ingest_stats prev; /* of stores before a reconnect */
	/*
	 * Since the store last had no open transaction (settled()): the
	 * lines read, each as {long lineno; size_t len; bytes; NUL}; the
	 * store's totals then; the records being joined then.  A
	 * transaction the server drops is done again from these (recover()).
	 */
	struct {
		char *buf;
		size_t len, cap;
		long first, last;
	} held;
	struct ingest_stats settled_tot;
	struct joined settled;
	bool replaying; /* the held lines again: counted already */
	double lost_at; /* when the held lines' transaction was first lost */
	const struct policy_ingest *limits;
	struct ingest_store *store;
	struct ingest_stats st; /* lines, rejected, ignored */
	/* rejected lines by reason (FWD_REASON_*; the last slot: others) */
	struct {
		const char *reason;
		uint64_t n;
	} why[REASONS + 1];
	size_t n_why;
	json_t *errors; /* first SHOW_ERRORS messages */
	bool json;
	/* beacon-lwfs address -> forwarder name */
	const struct topology *topo;
	long last_fwd;
	double last_flush;
};

/* A rejected line or entry: counted by reason (NULL: the one the failed
 * call left, fwd_reason_take(), else malformed), the first SHOW_ERRORS
 * shown. */
static void reject(struct run *r, long line, const char *msg,
		   const char *reason)
{
	size_t i;

	if (r->replaying)
		return;
	if (!reason)
		reason = fwd_reason_take();
	if (!reason)
		reason = FWD_REASON_MALFORMED;
	for (i = 0; i < r->n_why; i++)
		if (!strcmp(r->why[i].reason, reason))
			break;
	if (i == r->n_why) {
		if (r->n_why == REASONS)
			reason = "other";
		else
			r->n_why++;
		r->why[i].reason = reason;
	}
	r->why[i].n++;
	r->st.rejected++;
	if (r->st.rejected > SHOW_ERRORS)
		return;
	if (line > 0)
		fwdctl_err("%s:%ld: %s", r->path, line, msg);
	else
		fwdctl_err("%s: %s", r->path, msg);
	if (r->errors) {
		json_t *e = json_pack("{s:I, s:s}", "line", (json_int_t)line,
				      "error", msg);

		if (e)
			json_array_append_new(r->errors, e);
	}
}

/* A line understood but not used: counted by kind. */
static void ignore(struct run *r, long line, const char *kind)
{
	size_t i;

	if (r->replaying)
		return;
	r->st.ignored++;
	if (!kind[0])
		return; /* blank line, comment */
	for (i = 0; i < r->n_ign; i++)
		if (!strcmp(r->ign[i].kind, kind))
			break;
	if (i == r->n_ign) {
		if (r->n_ign == IGNORED_KINDS) {
			i = IGNORED_KINDS;
			snprintf(r->ign[i].kind, sizeof(r->ign[i].kind),
				 "other");
		} else {
			r->n_ign++;
			snprintf(r->ign[i].kind, sizeof(r->ign[i].kind), "%s",
				 kind);
			r->ign[i].first_line = line;
		}
	}
	r->ign[i].n++;
	if (r->strict) {
		char msg[160];

		snprintf(msg, sizeof(msg), "not used: %s (--strict)", kind);
		reject(r, line, msg, "not used (--strict)");
	}
}

static const char *forwarder_name(struct run *r, const char *addr)
{
	const struct topology *t = r->topo;

	if (!t)
		return addr;
	if (r->last_fwd >= 0 && t->forwarders[r->last_fwd].address &&
	    !strcmp(t->forwarders[r->last_fwd].address, addr))
		return t->forwarders[r->last_fwd].name;
	for (size_t i = 0; i < t->n_forwarders; i++) {
		if (t->forwarders[i].address &&
		    !strcmp(t->forwarders[i].address, addr)) {
			r->last_fwd = (long)i;
			return t->forwarders[i].name;
		}
	}
	return addr;
}

/*
 * A new connection after the old one was lost, tried again with a growing
 * pause (0.1 s doubling up to 2 s) until the deadline (ingest.reconnect
 * after the loss) while the server is unavailable (a restart, a
 * failover).  The first failure is said once; NULL with err set when it
 * is still unavailable at the end, or refuses for another reason (a
 * password, the schema).
 */
static struct db *reconnect(struct run *r, double deadline, fwd_error_t *err)
{
	const struct policy *p = fwdctl_policy(r->ctx);
	double pause = 0.1;
	bool said = false;

	for (;;) {
		struct db *db =
			db_connect(&p->database, DB_ROLE_CONTROLLER, err);
		int e;

		if (db && db_check_schema(db, err) == 0) {
			if (said)
				fwdctl_err("%s: the database answers again; "
					   "going on",
					   r->path);
			return db;
		}
		e = errno;
		db_close(db);
		if (!db_err_unavailable(e) ||
		    fwd_clock_mono() + pause > deadline) {
			errno = e;
			return NULL;
		}
		if (!said)
			fwdctl_err("%s: %s; trying again for up to %gs "
				   "(ingest.reconnect), the lines read are "
				   "held",
				   r->path, err->text, r->limits->reconnect);
		said = true;
		poll(NULL, 0, (int)(pause * 1000));
		if (pause < 2)
			pause *= 2;
	}
}

/* What the stores so far have counted: those before the last new
 * connection, and the present one's. */
static struct ingest_stats totals(const struct run *r)
{
	struct ingest_stats t = r->prev;
	const struct ingest_stats *s;

	if (!r->store)
		return t;
	s = ingest_store_stats(r->store);
	t.stored += s->stored;
	t.skipped += s->skipped;
	t.implausible += s->implausible;
	t.implausible_bytes += s->implausible_bytes;
	t.implausible_ops += s->implausible_ops;
	t.implausible_queue += s->implausible_queue;
	return t;
}

/*
 * When the store has no open transaction, everything read so far is
 * committed (or refused): forget the held lines and note the totals and
 * the records being joined, the state a dropped transaction is done
 * again from.
 */
static void settled(struct run *r)
{
	if (!r->store || ingest_store_pending(r->store))
		return;
	r->held.len = 0;
	r->lost_at = 0;
	r->settled_tot = totals(r);
	joined_copy(&r->settled, &r->join);
}

/* Keep a line until its transaction commits. */
static int hold(struct run *r, long lineno, const char *line, fwd_error_t *err)
{
	size_t n = strlen(line), need = sizeof(long) + sizeof(size_t) + n + 1;

	if (r->held.cap - r->held.len < need) {
		size_t cap = r->held.cap ? r->held.cap : 65536;
		char *b;

		while (cap - r->held.len < need)
			cap *= 2;
		if (!(b = realloc(r->held.buf, cap)))
			return errprintf(err, "%s: %s", r->path,
					 strerror(errno));
		r->held.buf = b;
		r->held.cap = cap;
	}
	if (!r->held.len)
		r->held.first = lineno;
	r->held.last = lineno;
	memcpy(r->held.buf + r->held.len, &lineno, sizeof(long));
	r->held.len += sizeof(long);
	memcpy(r->held.buf + r->held.len, &n, sizeof(size_t));
	r->held.len += sizeof(size_t);
	memcpy(r->held.buf + r->held.len, line, n + 1);
	r->held.len += n + 1;
	return 0;
}

/* The end of the tries: err's reason said, err the verdict. */
static int give_up(struct run *r, fwd_error_t *err)
{
	int e = errno;

	fwdctl_err("%s", err->text);
	errno = db_err_unavailable(e) ? ECONNREFUSED : e;
	return errprintf(err,
			 "%s: giving up after the database connection was "
			 "lost",
			 r->path);
}

/*
 * A new connection and store in place of the old ones, whose
 * transaction, if any, is abandoned: the new store starts from the
 * committed baselines and the totals of settled().
 */
static int new_store(struct run *r, double deadline, fwd_error_t *err)
{
	r->prev = r->settled_tot;
	ingest_store_close(r->store);
	r->store = NULL;
	db_close(r->db);
	r->db = reconnect(r, deadline, err);
	if (!r->db)
		return give_up(r, err);
	r->last_use = r->last_flush = fwd_clock_mono();
	r->store = ingest_store_open(r->db, r->batch, err);
	if (!r->store)
		return -1;
	ingest_store_set_limits(r->store, r->limits);
	return 0;
}

/*
 * Before storing after an idle spell, make sure the connection is alive;
 * if the server dropped it (wait_timeout, restart), connect again.  Only
 * done between transactions, so nothing is held; the new store reloads
 * the counter baselines that were committed.
 */
static int ensure_conn(struct run *r, fwd_error_t *err)
{
	double now = fwd_clock_mono();

	if (ingest_store_pending(r->store) || now - r->last_use < IDLE_CHECK) {
		r->last_use = now;
		return 0;
	}
	r->last_use = now;
	if (db_ping(r->db, err) == 0)
		return 0;
	if (!db_err_unavailable(errno))
		return -1;
	settled(r);
	return new_store(r, now + r->limits->reconnect, err);
}

/*
 * Commit before blocking on a slow pipe (so the rows are visible and no
 * locks are held while waiting: no whole line read and nothing waiting on
 * the descriptor), at least every FLUSH_INTERVAL, and before the held
 * lines pass HELD_MAX.
 */
static int maybe_flush(struct run *r, const struct ingest_reader *rd,
		       fwd_error_t *err)
{
	struct pollfd pfd = {.fd = rd->fd, .events = POLLIN};
	double now = fwd_clock_mono();

	if (now - r->last_flush >= FLUSH_INTERVAL || r->held.len >= HELD_MAX ||
	    (!ingest_reader_ready(rd) && poll(&pfd, 1, 0) == 0)) {
		r->last_flush = now;
		return ingest_store_flush(r->store, err);
	}
	return 0;
}

/*
 * The Slurm job of a job_stats record under jobstats.jobid_name.  An id
 * that names no job is stored (with no job) and counted; under --strict
 * it is an error and not stored: false.
 */
static bool map_job(struct run *r, struct jobstats_rec *rec)
{
	char kind[96];

	rec->has_slurm_id = jobstats_map_id(r->jobid_name, rec->job_id,
					    &rec->slurm_id) == 1;
	if (rec->has_slurm_id)
		return true;
	snprintf(kind, sizeof(kind),
		 "job_stats ids naming no Slurm job under jobid_name '%.20s'",
		 r->jobid_name);
	ignore(r, rec->line, kind);
	if (!r->replaying)
		r->st.ignored--; /* stored all the same */
	return !r->strict;
}

static int store_jobstats(struct run *r, struct jobstats_rec *rec,
			  fwd_error_t *err)
{
	fwd_error_t bad = {{0}};

	if (jobstats_check(rec, (int64_t)fwd_clock_real(), r->limits, &bad) <
	    0) {
		reject(r, rec->line, bad.text, NULL);
		return 0;
	}
	if (!map_job(r, rec))
		return 0;
	if (ingest_store_jobstats(r->store, rec, err) < 0) {
		if (errno == EINVAL) {
			reject(r, rec->line, err->text, NULL);
			return 0;
		}
		return -1;
	}
	return 0;
}

/* Store the influx job_stats record being joined, if any. */
static int flush_pending(struct run *r, fwd_error_t *err)
{
	if (!r->join.has_js)
		return 0;
	r->join.has_js = false;
	return store_jobstats(r, r->join.js, err);
}

/* Store the md_stats sample being joined, if any (a rejected one is
 * reported on its first line). */
static int flush_md(struct run *r, fwd_error_t *err)
{
	if (!r->join.has_md)
		return 0;
	r->join.has_md = false;
	if (ingest_store_influx(r->store, &r->join.md, err) < 0) {
		if (errno != EINVAL)
			return -1;
		reject(r, r->join.md_line, err->text, NULL);
	}
	return 0;
}

/* One line of beacon-lwfs or influx: 0 (stored, refused or not used),
 * or -1 with err when the store failed (errno). */
static int one_line(struct run *r, enum format fmt, const char *line,
		    long lineno, struct jobstats_rec *js, fwd_error_t *err)
{
	fwd_error_t perr = {{0}};
	int p;

	fwd_reason_clear();
	if (fmt == FMT_BEACON) {
		struct beacon_rec rec;

		p = beacon_parse_line(line, &rec, &perr);
		if (p == INGEST_OK &&
		    beacon_check(&rec, (int64_t)fwd_clock_real(), &perr) < 0)
			p = -1;
		if (p == INGEST_OK &&
		    ingest_store_beacon(r->store, forwarder_name(r, rec.addr),
					&rec, err) < 0) {
			if (errno != EINVAL)
				return -1;
			reject(r, lineno, err->text, NULL);
			return 0;
		}
	} else {
		struct influx_opts o = {
			.now_ns = (int64_t)(fwd_clock_real() * 1e9),
			.unit_ns = r->unit_ns,
			.check_time = true,
		};
		struct influx_rec rec;

		p = influx_parse(line, &o, &rec, js, &perr);
		if (p == INGEST_OK && rec.md_part) {
			if (r->join.has_md &&
			    influx_merge_md(&r->join.md, &rec))
				return 0;
			if (flush_md(r, err) < 0)
				return -1;
			r->join.md = rec;
			r->join.md_line = lineno;
			r->join.has_md = true;
			return 0;
		}
		if (p == INGEST_OK &&
		    ingest_store_influx(r->store, &rec, err) < 0) {
			if (errno != EINVAL)
				return -1;
			reject(r, lineno, err->text, NULL);
			return 0;
		}
		if (p == INGEST_JOBSTATS) {
			js->line = lineno;
			if (r->join.has_js && jobstats_merge(r->join.js, js))
				return 0;
			if (flush_pending(r, err) < 0)
				return -1;
			memcpy(r->join.js, js, sizeof(*js));
			r->join.has_js = true;
			return 0;
		}
		if (p == INGEST_SKIP) {
			ignore(r, lineno, rec.ignored);
			return 0;
		}
	}
	if (p < 0)
		reject(r, lineno, perr.text, NULL);
	else if (p == INGEST_SKIP)
		ignore(r, lineno, "");
	return 0;
}

/* The held lines again, into a new store, from the records being joined
 * when they were settled. */
static int replay(struct run *r, enum format fmt, struct jobstats_rec *js,
		  fwd_error_t *err)
{
	size_t at = 0;
	int rv = 0;

	joined_copy(&r->join, &r->settled);
	r->replaying = true;
	while (at < r->held.len && rv == 0) {
		long lineno;
		size_t n;

		memcpy(&lineno, r->held.buf + at, sizeof(long));
		at += sizeof(long);
		memcpy(&n, r->held.buf + at, sizeof(size_t));
		at += sizeof(size_t);
		rv = one_line(r, fmt, r->held.buf + at, lineno, js, err);
		at += n + 1;
	}
	r->replaying = false;
	return rv;
}

/*
 * The store failed (errno): when the server went away (a restart, a
 * failover, a lost connection), connect again and store the lines of the
 * lost transaction again, until ingest.reconnect after it was first lost.
 * Lines already committed are found stored (the baselines say so), so
 * none is stored twice.  Other errors are returned as they are.
 */
static int recover(struct run *r, enum format fmt, struct jobstats_rec *js,
		   fwd_error_t *err)
{
	double now = fwd_clock_mono(), deadline;
	int e = errno;

	if (!db_err_unavailable(e))
		return -1;
	if (!r->lost_at)
		r->lost_at = now;
	else if (now > r->lost_at + r->limits->reconnect)
		return give_up(r, err);
	deadline = r->lost_at + r->limits->reconnect;
	for (;;) {
		if (r->held.len && r->held.first == r->held.last)
			fwdctl_err("%s: line %ld was not committed: %s; "
				   "storing it again on a new connection",
				   r->path, r->held.first, err->text);
		else if (r->held.len)
			fwdctl_err("%s: lines %ld to %ld were not committed: "
				   "%s; storing them again on a new "
				   "connection",
				   r->path, r->held.first, r->held.last,
				   err->text);
		if (new_store(r, deadline, err) < 0)
			return -1;
		if (replay(r, fmt, js, err) == 0)
			return 0;
		if (!db_err_unavailable(errno))
			return -1;
		if (fwd_clock_mono() > deadline)
			return give_up(r, err);
	}
}

/* The records being joined at the end of the input, and the last
 * commit. */
static int finish(struct run *r, fwd_error_t *err)
{
	if (flush_pending(r, err) < 0 || flush_md(r, err) < 0)
		return -1;
	return ingest_store_flush(r->store, err);
}

static int run_lines(struct run *r, FILE *in, enum format fmt, fwd_error_t *err)
{
	struct ingest_reader *rd = malloc(sizeof(*rd));
	struct jobstats_rec *js = malloc(sizeof(*js));
	int rv = -1;

	r->join.js = malloc(sizeof(*r->join.js));
	r->settled.js = malloc(sizeof(*r->settled.js));
	if (!rd || !js || !r->join.js || !r->settled.js) {
		errprintf(err, "%s", strerror(errno));
		free(rd);
		free(js);
		return -1;
	}
	ingest_reader_init(rd, in);
	for (;;) {
		const char *line;
		bool trunc;

		if (maybe_flush(r, rd, err) < 0 && recover(r, fmt, js, err) < 0)
			goto out;
		settled(r);
		line = ingest_reader_next(rd, &trunc);
		if (!line)
			break;
		r->st.lines++;
		if (trunc) {
			char msg[80];

			snprintf(msg, sizeof(msg), "line longer than %d bytes",
				 INGEST_MAX_LINE - 1);
			reject(r, rd->lineno, msg, NULL);
			continue;
		}
		if (ensure_conn(r, err) < 0 ||
		    hold(r, rd->lineno, line, err) < 0)
			goto out;
		if (one_line(r, fmt, line, rd->lineno, js, err) < 0 &&
		    recover(r, fmt, js, err) < 0)
			goto out;
	}
	if (ingest_reader_error(rd)) {
		errprintf(err, "%s: read error: %s", r->path,
			  strerror(ingest_reader_error(rd)));
		errno = EIO;
		goto out;
	}
	while (finish(r, err) < 0)
		if (recover(r, fmt, js, err) < 0)
			goto out;
	rv = 0;
out:
	free(rd);
	free(js);
	return rv;
}

static int run_jobstats(struct run *r, FILE *in, const char *target,
			fwd_error_t *err)
{
	struct jobstats_rec *rec = malloc(sizeof(*rec));
	struct jobstats_parser *p;
	int rv = -1;

	if (!rec) {
		errprintf(err, "%s", strerror(errno));
		return -1;
	}
	p = jobstats_open(in, target, err);
	if (!p) {
		errno = EINVAL;
		free(rec);
		return -1;
	}
	for (;;) {
		fwd_error_t perr = {{0}};
		int n;

		fwd_reason_clear();
		n = jobstats_next(p, rec, &perr);

		if (n == 0)
			break;
		if (n < 0) {
			/* "line N: ..." from the parser */
			long line = 0;

			if (sscanf(perr.text, "line %ld:", &line) == 1) {
				const char *m = strchr(perr.text, ':');

				reject(r, line, m ? m + 2 : perr.text, NULL);
			} else {
				reject(r, 0, perr.text, NULL);
			}
			continue;
		}
		if (ensure_conn(r, err) < 0)
			goto out;
		if (store_jobstats(r, rec, err) < 0)
			goto out;
		if (fwd_clock_mono() - r->last_flush >= FLUSH_INTERVAL) {
			r->last_flush = fwd_clock_mono();
			if (ingest_store_flush(r->store, err) < 0)
				goto out;
		}
	}
	if (ferror(in)) {
		errprintf(err, "%s: read error: %s", r->path, strerror(errno));
		errno = EIO;
		goto out;
	}
	rv = ingest_store_flush(r->store, err);
out:
	r->st.lines = (uint64_t)jobstats_lines(p);
	jobstats_close(p);
	free(rec);
	return rv;
}

static void summary(struct run *r)
{
	struct ingest_stats tot = totals(r);
	const struct ingest_stats *s = &tot;

	if (r->json) {
		json_t *kinds = json_object();

		for (size_t i = 0; i <= IGNORED_KINDS && kinds; i++)
			if (r->ign[i].n)
				json_object_set_new(
					kinds, r->ign[i].kind,
					json_integer((json_int_t)r->ign[i].n));
		json_t *j = json_pack(
			"{s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I, s:I}, "
			"s:O}",
			"lines", (json_int_t)r->st.lines, "stored",
			(json_int_t)s->stored, "rejected",
			(json_int_t)r->st.rejected, "skipped",
			(json_int_t)s->skipped, "ignored",
			(json_int_t)r->st.ignored, "implausible", "samples",
			(json_int_t)s->implausible, "bytes",
			(json_int_t)s->implausible_bytes, "ops",
			(json_int_t)s->implausible_ops, "queue_len",
			(json_int_t)s->implausible_queue, "errors", r->errors);
		if (j && kinds)
			json_object_set_new(j, "ignored_by_kind", kinds);
		else
			json_decref(kinds);
		if (j) {
			json_t *why = json_object();

			for (size_t i = 0; i <= REASONS && why; i++)
				if (r->why[i].n)
					json_object_set_new(
						why, r->why[i].reason,
						json_integer(
							(json_int_t)r->why[i]
								.n));
			if (why)
				json_object_set_new(j, "rejected_by_reason",
						    why);
		}
		char *txt =
			j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
			  : NULL;

		if (txt)
			puts(txt);
		free(txt);
		json_decref(j);
		return;
	}
	if (r->st.rejected > SHOW_ERRORS)
		fprintf(stderr,
			"fwdctl ingest: %s: %" PRIu64 " more rejected lines "
			"not shown\n",
			r->path, r->st.rejected - SHOW_ERRORS);
	if (s->implausible) {
		const char *sep = ": ";

		printf("rejected %" PRIu64 " implausible samples",
		       s->implausible);
		if (s->implausible_bytes) {
			printf("%s%" PRIu64 " byte counter deltas over the "
			       "bandwidth bound",
			       sep, s->implausible_bytes);
			sep = ", ";
		}
		if (s->implausible_ops) {
			printf("%s%" PRIu64 " operation counter deltas over "
			       "ingest.max_ops_rate",
			       sep, s->implausible_ops);
			sep = ", ";
		}
		if (s->implausible_queue)
			printf("%s%" PRIu64 " queue lengths over "
			       "ingest.max_queue_len",
			       sep, s->implausible_queue);
		putchar('\n');
	}
	/* what was refused, by reason, and what was not used, by kind: on
	 * stderr, before the summary */
	if (r->st.rejected) {
		const char *sep = "";

		fprintf(stderr,
			"fwdctl: %s: rejected %" PRIu64 " lines: ", r->path,
			r->st.rejected);
		for (size_t i = 0; i <= REASONS; i++) {
			if (!r->why[i].n)
				continue;
			fprintf(stderr, "%s%" PRIu64 " %s", sep, r->why[i].n,
				r->why[i].reason);
			sep = ", ";
		}
		fputc('\n', stderr);
	}
	for (size_t i = 0; i <= IGNORED_KINDS; i++)
		if (r->ign[i].n && !r->strict)
			fprintf(stderr,
				"fwdctl: %s: ignored %" PRIu64 " lines: %s "
				"(first at line %ld)\n",
				r->path, r->ign[i].n, r->ign[i].kind,
				r->ign[i].first_line);
	fflush(stderr);
	printf("read %" PRIu64 " lines, stored %" PRIu64
	       " samples, rejected %" PRIu64 " lines",
	       r->st.lines, s->stored, r->st.rejected);
	if (s->skipped || r->st.ignored)
		printf(" (%" PRIu64 " already stored or baselines, %" PRIu64
		       " ignored)",
		       s->skipped, r->st.ignored);
	putchar('\n');
}

/* The topology for beacon-lwfs: when one is named or the policy's
 * default file exists; NULL (IPs kept) otherwise. */
static int load_topology(struct fwdctl_ctx *ctx, const struct topology **out)
{
	struct policy *p = fwdctl_policy(ctx);

	*out = NULL;
	if (!p)
		return -1;
	if (!ctx->topology_path &&
	    (!p->topology || access(p->topology, R_OK) != 0))
		return 0;
	*out = fwdctl_topology(ctx);
	return *out ? 0 : -1;
}

static int cmd_ingest(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option lopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"target", required_argument, NULL, 'T'},
		{"batch", required_argument, NULL, 'b'},
		{"json", no_argument, NULL, 'j'},
		{"precision", required_argument, NULL, 'P'},
		{"strict", no_argument, NULL, 'S'},
		{"timezone", required_argument, NULL, 'Z'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct run r = {
		.last_fwd = -1, .json = ctx->json, .ctx = ctx, .unit_ns = 1};
	const char *format = NULL, *target = NULL, *tz = NULL;
	fwd_error_t err = {{0}};
	unsigned long batch = 0;
	enum format fmt;
	FILE *in = NULL;
	bool help = false;
	int c, rc, x;

	optind = 0;
	while ((c = getopt_long(argc, argv, "f:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'T':
			target = optarg;
			break;
		case 'b': {
			char *end;

			errno = 0;
			batch = strtoul(optarg, &end, 10);
			if (*end || errno || batch == 0 || batch > 1000000 ||
			    *optarg == '-') {
				fwdctl_err("ingest: --batch '%s': expected a "
					   "number from 1 to 1000000",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			break;
		}
		case 'j':
			r.json = true;
			break;
		case 'P':
			if (!strcmp(optarg, "ns")) {
				r.unit_ns = 1;
			} else if (!strcmp(optarg, "us")) {
				r.unit_ns = 1000;
			} else if (!strcmp(optarg, "ms")) {
				r.unit_ns = 1000000;
			} else if (!strcmp(optarg, "s")) {
				r.unit_ns = 1000000000;
			} else {
				fwdctl_err("ingest: --precision '%s': expected "
					   "ns, us, ms or s",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			break;
		case 'S':
			r.strict = true;
			break;
		case 'Z':
			if (!fwd_timezone_known(optarg)) {
				fwdctl_err("ingest: --timezone '%s': no such "
					   "time zone (a name of "
					   "/usr/share/zoneinfo, e.g. "
					   "Europe/Paris, or UTC)",
					   optarg);
				return FWD_EXIT_USAGE;
			}
			tz = optarg;
			break;
		case 'h':
			help = true;
			break;
		default:
			fwdctl_usage_hint("ingest");
			return FWD_EXIT_USAGE;
		}
	}
	if (help) {
		/* with --format, that format's help */
		usage(stdout, format);
		return FWD_EXIT_OK;
	}
	if (!format) {
		fwdctl_err("ingest: --format is required (beacon-lwfs, influx, "
			   "lustre-jobstats, darshan or sacct)");
		return FWD_EXIT_USAGE;
	}
	if (tz && strcmp(format, "sacct") != 0) {
		fwdctl_err("ingest: --timezone is for --format sacct");
		return FWD_EXIT_USAGE;
	}
	if (!strcmp(format, "sacct"))
		return ingest_sacct_files(ctx, argv + optind, argc - optind,
					  r.json, tz);
	if (!strcmp(format, "darshan"))
		return ingest_darshan_files(ctx, argv + optind, argc - optind,
					    r.json);
	if (!strcmp(format, "beacon-lwfs")) {
		fmt = FMT_BEACON;
	} else if (!strcmp(format, "influx")) {
		fmt = FMT_INFLUX;
	} else if (!strcmp(format, "lustre-jobstats")) {
		fmt = FMT_JOBSTATS;
	} else {
		fwdctl_err("ingest: unknown format '%s': expected beacon-lwfs, "
			   "influx, lustre-jobstats, darshan or sacct",
			   format);
		return FWD_EXIT_USAGE;
	}
	if (target && fmt != FMT_JOBSTATS) {
		fwdctl_err("ingest: --target applies to lustre-jobstats");
		return FWD_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		fwdctl_err("ingest: one input at most, got '%s' and '%s'",
			   argv[optind], argv[optind + 1]);
		return FWD_EXIT_USAGE;
	}
	r.path = optind < argc ? argv[optind] : "-";
	if (fmt == FMT_BEACON && load_topology(ctx, &r.topo) < 0)
		return FWD_EXIT_USAGE;
	if (!strcmp(r.path, "-")) {
		in = stdin;
		r.path = "<stdin>";
	} else if (!(in = fopen(r.path, "r"))) {
		fwdctl_err("ingest: %s: %s", r.path, strerror(errno));
		return FWD_EXIT_USAGE;
	}

	r.db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc);
	if (!r.db)
		goto out;
	if (!fwdctl_policy(ctx)) {
		rc = FWD_EXIT_USAGE;
		goto out;
	}
	r.limits = &fwdctl_policy(ctx)->ingest;
	r.jobid_name = fwdctl_policy(ctx)->jobstats.jobid_name;
	if (jobstats_pattern_check(r.jobid_name) < 0) {
		fwdctl_err("ingest: policy jobstats.jobid_name '%s': unknown "
			   "format code (Lustre's are %%e %%g %%h %%H %%j %%p "
			   "%%u %%%%)",
			   r.jobid_name);
		rc = FWD_EXIT_USAGE;
		goto out;
	}
	r.batch = batch;
	r.last_use = fwd_clock_mono();
	r.store = ingest_store_open(r.db, batch, &err);
	if (!r.store) {
		fwdctl_err("%s", err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	ingest_store_set_limits(r.store, r.limits);
	if (r.json)
		r.errors = json_array();
	r.last_flush = fwd_clock_mono();

	if (fmt == FMT_JOBSTATS)
		x = run_jobstats(&r, in, target, &err);
	else
		x = run_lines(&r, in, fmt, &err);
	if (x < 0) {
		int e = errno;

		fwdctl_err("%s", err.text);
		summary(&r);
		rc = db_err_unavailable(e)     ? FWD_EXIT_SERVICE
		     : e == EINVAL || e == EIO ? FWD_EXIT_USAGE
					       : FWD_EXIT_SERVICE;
		goto out;
	}
	summary(&r);
	rc = r.st.rejected ? FWD_EXIT_USAGE : FWD_EXIT_OK;
out:
	free(r.join.js);
	free(r.settled.js);
	free(r.held.buf);
	json_decref(r.errors);
	ingest_store_close(r.store);
	db_close(r.db);
	if (in && in != stdin)
		fclose(in);
	return rc;
}

FWDCTL_COMMAND(ingest_command, .name = "ingest",
	       .summary = "load forwarder/OST/MDT statistics into the database",
	       .order = 61, .run = cmd_ingest)
