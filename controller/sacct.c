/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm accounting (sacct --parsable2) as history; see controller/sacct.h.
 * Field names and formats: SchedMD/slurm src/sacct/sacct.c (the field
 * table), src/common/slurmdb_defs.c (TRES strings "type/name=count,...",
 * usage sizes through convert_num_unit(): "1.50G" unless --noconvert),
 * acct_gather_filesystem/lustre (TRES fs/lustre).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/plausible.h"
#include "common/timeutil.h"
#include "controller/history.h"
#include "controller/ledger_store.h"
#include "controller/sacct.h"
#include "db/db.h"
#include "policies/policy.h"
#include "profiler/job_io.h"
#include "profiler/profile.h"

#define SACCT_LINE_MAX 65536
#define MAX_FIELDS 128

enum col {
	C_JOBID,
	C_NAME,
	C_USER,
	C_ACCOUNT,
	C_PARTITION,
	C_NNODES,
	C_NODELIST,
	C_START,
	C_END,
	C_STATE,
	C_IN,
	C_OUT,
	C_N,
};

static const char *const col_names[C_N] = {
	"JobID",     "JobName", "User",		  "Account",
	"Partition", "NNodes",	"NodeList",	  "Start",
	"End",	     "State",	"TRESUsageInTot", "TRESUsageOutTot",
};

static int bad(fwd_error_t *err, long line, const char *what, const char *v)
{
	errno = EINVAL;
	return errprintf(err, "line %ld: %s: '%.60s'", line, what, v);
}

/* Count a refused line (err holds "line N: ..."), keep its message. */
static void refuse(struct sacct_stats *st, const fwd_error_t *err)
{
	const char *reason = fwd_reason_take();
	size_t i;

	if (!reason)
		reason = FWD_REASON_MALFORMED;
	st->rejected++;
	for (i = 0; i < SACCT_REASONS && st->why[i].reason; i++)
		if (!strcmp(st->why[i].reason, reason))
			break;
	if (i == SACCT_REASONS)
		reason = "other";
	st->why[i].reason = reason;
	st->why[i].n++;
	if (st->n_errors < SACCT_ERRORS_KEPT)
		st->errors[st->n_errors++] = *err;
}

/* A plausibility error (err without its line) as "line N: ...". */
static void refuse_at(struct sacct_stats *st, long line, fwd_error_t *err)
{
	errprefix(err, "line %ld", line);
	refuse(st, err);
}

/* A sacct time ("2023-11-14T22:13:20", in the local time zone of the
 * host sacct ran on: the caller sets TZ to it) in seconds; 0 for
 * Unknown / None. */
static int sacct_time(const char *s, int64_t *out)
{
	double wall, t;

	*out = 0;
	if (!strcmp(s, "Unknown") || !strcmp(s, "None") || !*s)
		return 0;
	if (fwd_time_parse_iso(s, strlen(s), 0, &wall) < 0 ||
	    fwd_time_local(wall, &t) < 0)
		return -1;
	*out = (int64_t)t;
	return 0;
}

/* The fs/lustre count of a TRES string, raw or with a K/M/G/T/P suffix
 * (powers of 1024).  1 found, 0 absent, -1 malformed, -2 over 2^63-1. */
static int tres_lustre(const char *s, uint64_t *out)
{
	const char *p = s;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > 10 && !strncmp(p, "fs/lustre=", 10)) {
			char buf[64], *e;
			double v;
			size_t n = len - 10;
			const char *units = "KMGTP";
			const char *u;

			if (n == 0 || n >= sizeof(buf))
				return -1;
			memcpy(buf, p + 10, n);
			buf[n] = '\0';
			errno = 0;
			v = strtod(buf, &e);
			if (e == buf || errno || v < 0)
				return -1;
			if (*e) {
				if (e[1] || !(u = strchr(units, *e)))
					return -1;
				for (const char *k = units; k <= u; k++)
					v *= 1024;
			}
			/* 2^64-1 would convert to nonsense (undefined) */
			if (fwd_plaus_dtou64(v, out) < 0)
				return -2;
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

/* Record one finished job; *summarised when it got a job_io row. */
static int record(struct db *db, const struct sacct_job *j, int64_t now,
		  double max_bps, bool *summarised, struct sacct_stats *st,
		  fwd_error_t *err)
{
	int r;

	*summarised = false;
	r = ledger_store_job_import(
		db, j->job_id, j->user, j->account[0] ? j->account : NULL,
		j->name, j->partition[0] ? j->partition : NULL,
		j->nodelist[0] ? j->nodelist : NULL, j->nnodes, j->start,
		j->end, j->state, now, err);
	if (r < 0)
		return -1;
	st->jobs++;
	st->jobs_new += r > 0;
	if (!j->has_lustre || j->lustre_bad)
		return 0;
	{
		struct job_io_totals t = {0};
		fwd_error_t why = {{0}};
		uint64_t bytes =
			j->lustre_read > FWD_PLAUS_COUNTER_MAX - j->lustre_write
				? FWD_PLAUS_COUNTER_MAX
				: j->lustre_read + j->lustre_write;

		if (fwd_plaus_rate("fs/lustre bytes", bytes,
				   (double)(j->end - j->start), max_bps, "B",
				   &why) < 0) {
			refuse_at(st, j->line, &why);
			return 0;
		}

		t.read_bytes = j->lustre_read;
		t.write_bytes = j->lustre_write;
		t.io_nodes = j->nnodes;
		t.io_mode = FWD_IO_NONE;
		t.runtime = (double)(j->end - j->start);
		if (job_io_store_totals(db, j->job_id, JOB_IO_SACCT, &t, now,
					err) < 0)
			return -1;
	}
	st->summaries++;
	*summarised = true;
	return 0;
}

/* The profiles of the keys of jobs ids[0..n), once per key. */
static int refresh(struct db *db, const struct policy *p, const uint64_t *ids,
		   size_t n, int64_t now, struct sacct_stats *st,
		   fwd_error_t *err)
{
	struct history_job *v = NULL;
	char(*done)[512] = NULL;
	size_t nv = 0, nd = 0;
	int rv = -1;

	if (!n)
		return 0;
	if (history_jobs_by_id(db, ids, n, true, &v, &nv, err) < 0)
		return -1;
	if (!(done = calloc(nv, sizeof(*done)))) {
		errno = ENOMEM;
		errprintf(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nv; i++) {
		struct profile_job pj = {
			v[i].user,
			v[i].has_account ? v[i].account : NULL,
			v[i].name,
			v[i].has_partition ? v[i].partition : NULL,
			v[i].node_count,
		};
		struct profile_jobref *refs = NULL;
		char key[512];
		size_t nr = 0, k;
		int r;

		if (profile_key(p, &pj, key, sizeof(key), err))
			goto out;
		for (k = 0; k < nd && strcmp(done[k], key); k++)
			;
		if (k == nd) {
			snprintf(done[nd++], sizeof(done[0]), "%s", key);
			if (history_key_jobs(db, p, &pj, now, 0, &refs, &nr,
					     err) < 0)
				goto out;
			r = profile_db_update(db, p, &pj, refs, nr, now, err);
			free(refs);
			if (r < 0)
				goto out;
			st->profiles += r > 0;
		}
		if (job_io_mark_profiled(db, v[i].job_id, now, err) < 0)
			goto out;
	}
	rv = 0;
out:
	free(done);
	history_jobs_free(v, nv);
	return rv;
}

int ctl_sacct_import(struct db *db, const struct policy *p, FILE *f,
		     int64_t now, uint32_t max_nodes, struct sacct_stats *st,
		     fwd_error_t *err)
{
	double max_bps = p->ingest.max_bandwidth;
	fwd_error_t lerr;
	char *buf = malloc(SACCT_LINE_MAX);
	int idx[C_N], n_fields = 0;
	struct sacct_job cur;
	bool have = false, done_ok;
	uint64_t *ids = NULL;
	size_t n_ids = 0, cap = 0;
	long line = 0;
	int rv = -1;

	memset(st, 0, sizeof(*st));
	if (!buf) {
		errno = ENOMEM;
		return errprintf(err, "out of memory");
	}
	for (int c = 0; c < C_N; c++)
		idx[c] = -1;
	while (fgets(buf, SACCT_LINE_MAX, f)) {
		char *fld[MAX_FIELDS];
		size_t len = strlen(buf);
		int n = 0;

		line++;
		st->lines++;
		memset(&lerr, 0, sizeof(lerr));
		fwd_reason_clear();
		if (len && buf[len - 1] == '\n') {
			buf[--len] = '\0';
		} else if (len == SACCT_LINE_MAX - 1) {
			int c;

			if (line == 1) {
				bad(err, line, "line too long", buf);
				goto out;
			}
			while ((c = getc(f)) != EOF && c != '\n')
				;
			bad(&lerr, line, "line too long", buf);
			refuse(st, &lerr);
			continue;
		}
		for (char *s = buf; n < MAX_FIELDS;) {
			fld[n++] = s;
			if (!(s = strchr(s, '|')))
				break;
			*s++ = '\0';
		}
		if (line == 1) {
			n_fields = n;
			for (int i = 0; i < n; i++)
				for (int c = 0; c < C_N; c++)
					if (!strcmp(fld[i], col_names[c]))
						idx[c] = i;
			if (idx[C_JOBID] < 0 || idx[C_USER] < 0 ||
			    idx[C_START] < 0 || idx[C_END] < 0) {
				bad(err, line,
				    "not a sacct --parsable2 header (JobID, "
				    "User, Start and End are needed)",
				    buf);
				goto out;
			}
			continue;
		}
		if (n == 1 && !*fld[0])
			continue;
		if (n != n_fields) {
			errprintf(&lerr,
				  "line %ld: %d fields, the header has %d "
				  "(--parsable2 output, '|' without a final "
				  "one)",
				  line, n, n_fields);
			refuse(st, &lerr);
			continue;
		}
		{
			const char *id = fld[idx[C_JOBID]];
			size_t dn = strspn(id, "0123456789");
			char *end;
			uint64_t num;

			if (dn == 0) {
				bad(&lerr, line, "bad JobID", id);
				refuse(st, &lerr);
				continue;
			}
			if (id[dn] == '_' || id[dn] == '+') {
				st->array_het++;
				continue;
			}
			if (id[dn] && id[dn] != '.') {
				bad(&lerr, line, "bad JobID", id);
				refuse(st, &lerr);
				continue;
			}
			errno = 0;
			num = strtoull(id, &end, 10);
			if (errno) {
				bad(&lerr, line, "bad JobID", id);
				refuse(st, &lerr);
				continue;
			}
			if (id[dn] == '.') {
				/* a step: its usage adds to its job */
				for (int c = C_IN; c <= C_OUT; c++) {
					uint64_t v = 0;
					int r;

					if (idx[c] < 0)
						continue;
					r = tres_lustre(fld[idx[c]], &v);
					if (r < 0) {
						bad(&lerr, line,
						    r == -2 ? "fs/lustre TRES "
							      "over 2^63-1"
							    : "bad fs/lustre "
							      "TRES",
						    fld[idx[c]]);
						if (r == -2)
							fwd_plaus_fail(
								FWD_REASON_VALUE);
						refuse(st, &lerr);
						/* its job's sum would be
						 * wrong */
						if (have && cur.job_id == num)
							cur.lustre_bad = true;
						break;
					}
					if (!r || !have || cur.job_id != num)
						continue;
					cur.has_lustre = true;
					if (c == C_IN)
						cur.lustre_read += v;
					else
						cur.lustre_write += v;
				}
				continue;
			}
			/* a job line: the previous job is complete */
			if (have) {
				if (record(db, &cur, now, max_bps, &done_ok, st,
					   err) < 0)
					goto out;
				if (done_ok) {
					if (n_ids == cap) {
						uint64_t *v = realloc(
							ids,
							(cap ? cap * 2 : 64) *
								sizeof(*v));

						if (!v) {
							errno = ENOMEM;
							errprintf(err,
								  "out of "
								  "memory");
							goto out;
						}
						ids = v;
						cap = cap ? cap * 2 : 64;
					}
					ids[n_ids++] = cur.job_id;
				}
			}
			have = false;
			memset(&cur, 0, sizeof(cur));
			cur.job_id = num;
			cur.line = line;
			copy(cur.user, sizeof(cur.user), fld[idx[C_USER]]);
			if (idx[C_NAME] >= 0)
				copy(cur.name, sizeof(cur.name),
				     fld[idx[C_NAME]]);
			if (idx[C_ACCOUNT] >= 0)
				copy(cur.account, sizeof(cur.account),
				     fld[idx[C_ACCOUNT]]);
			if (idx[C_PARTITION] >= 0)
				copy(cur.partition, sizeof(cur.partition),
				     fld[idx[C_PARTITION]]);
			if (idx[C_NODELIST] >= 0 &&
			    strcmp(fld[idx[C_NODELIST]], "None assigned"))
				copy(cur.nodelist, sizeof(cur.nodelist),
				     fld[idx[C_NODELIST]]);
			copy(cur.state, sizeof(cur.state),
			     idx[C_STATE] >= 0 ? fld[idx[C_STATE]]
					       : "COMPLETED");
			/* "CANCELLED by 1000" */
			cur.state[strcspn(cur.state, " ")] = '\0';
			if (idx[C_NNODES] >= 0) {
				const char *nv = fld[idx[C_NNODES]];
				unsigned long long nn;

				/* digits only: strtoul reads "-5" as
				 * 4294967291 */
				errno = 0;
				nn = strtoull(nv, &end, 10);
				if (*end || end == nv ||
				    !(*nv >= '0' && *nv <= '9') || errno) {
					bad(&lerr, line, "bad NNodes", nv);
					refuse(st, &lerr);
					continue;
				}
				if (nn > UINT32_MAX)
					nn = UINT32_MAX;
				cur.nnodes = (uint32_t)nn;
			}
			if (sacct_time(fld[idx[C_START]], &cur.start) < 0) {
				bad(&lerr, line, "bad Start",
				    fld[idx[C_START]]);
				refuse(st, &lerr);
				continue;
			}
			if (sacct_time(fld[idx[C_END]], &cur.end) < 0) {
				bad(&lerr, line, "bad End", fld[idx[C_END]]);
				refuse(st, &lerr);
				continue;
			}
			if (!cur.start) {
				st->not_run++;
				continue;
			}
			if (!cur.end) {
				st->running++;
				continue;
			}
			if (!cur.user[0]) {
				bad(&lerr, line, "empty User", "");
				refuse(st, &lerr);
				continue;
			}
			if (fwd_plaus_interval("Start", cur.start, "End",
					       cur.end, now, &lerr) < 0 ||
			    (idx[C_NNODES] >= 0 &&
			     fwd_plaus_count("NNodes", cur.nnodes, 1,
					     max_nodes ? max_nodes
						       : FWD_PLAUS_NODES_MAX,
					     &lerr) < 0)) {
				refuse_at(st, line, &lerr);
				continue;
			}
			have = true;
		}
	}
	if (ferror(f)) {
		errno = EIO;
		errprintf(err, "line %ld: read error", line);
		goto out;
	}
	if (line == 0) {
		errno = EINVAL;
		errprintf(err, "line 1: empty input: expected sacct "
			       "--parsable2 output");
		goto out;
	}
	if (have) {
		if (record(db, &cur, now, max_bps, &done_ok, st, err) < 0)
			goto out;
		if (done_ok) {
			uint64_t *v = realloc(ids, (n_ids + 1) * sizeof(*v));

			if (!v) {
				errno = ENOMEM;
				errprintf(err, "out of memory");
				goto out;
			}
			ids = v;
			ids[n_ids++] = cur.job_id;
		}
	}
	rv = 0;
out:
	/* the profiles of what was recorded, even after an error */
	if (n_ids) {
		fwd_error_t e2 = {{0}};
		int saved = errno;

		if (refresh(db, p, ids, n_ids, now, st, &e2) < 0 && rv == 0) {
			*err = e2;
			rv = -1;
		} else {
			errno = saved;
		}
	}
	free(ids);
	free(buf);
	return rv;
}
