/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_TRACE_H
#define FWD_PROFILER_TRACE_H

/*
 * Compute-node I/O traces (LWFS client logs, one file per compute node) and
 * Beacon's first-pass compression.
 *
 * Raw lines (from the DFRA slides and Beacon's released collector):
 *
 *   [2016-08-27 10:14:44] T lwfs-fuse: 69742: OPEN() btio.out => 0x20
 *   [2016-08-27 10:14:44] T lwfs-fuse: 69745: WRITE (0x20, size=16, offset=0,
 *                                                    count=2)    (one line)
 *   [2016-08-27 10:14:44] T lwfs-fuse: 69740: RELEASE 0x20 (FLUSH implied)
 *   [2016-08-27 10:14:49] T READ 0x20 size=262144 offset=262144 count=4
 *
 * The "lwfs-fuse: PID:" prefix is optional and both the parenthesised and
 * the bare READ/WRITE argument forms are accepted with or without it.  A
 * READ/WRITE record stands for `count` requests of `size` bytes over the
 * contiguous range [offset, offset + size * count).  Other FUSE operations
 * (GETATTR, MKDIR, UNLINK, ...) are kept as metadata records.  Anything
 * else is a broken line: counted, reported by line number, skipped.
 *
 * Compressed files (profiler/README.md documents the format) hold runs: a
 * record plus a repeat count n, standing for n records whose offsets
 * advance by size * count.  Stored traces add a zstd stream over those
 * lines (.ctrace.zst; trace_compress_file() writes one when the output
 * name ends in ".zst").  trace_reader reads all three transparently,
 * recognising each by its first bytes.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

enum trace_op {
	TRACE_OP_OPEN = 0, /* OPEN() path => 0xFD */
	TRACE_OP_READ,
	TRACE_OP_WRITE,
	TRACE_OP_RELEASE, /* RELEASE 0xFD [text] */
	TRACE_OP_META,	  /* another FUSE operation, kept verbatim */
};

#define TRACE_NAME_MAX 16
#define TRACE_LINE_MAX 8192   /* longer lines are broken lines */
#define TRACE_MAX_RUN 1000000 /* longest run one compressed line holds */

struct trace_rec {
	int64_t time; /* the timestamp read as UTC, seconds */
	char level;   /* the letter after the timestamp ('T') */
	bool has_pid; /* had the "lwfs-fuse: PID:" prefix */
	uint32_t pid;
	enum trace_op op;
	char name[TRACE_NAME_MAX]; /* META: the operation name ("GETATTR") */
	uint64_t fd;		   /* OPEN, READ, WRITE, RELEASE */
	uint64_t size;		   /* READ, WRITE: bytes per request */
	uint64_t offset;	   /* READ, WRITE: first byte */
	uint64_t count;		   /* READ, WRITE: requests in the record */
	uint64_t n;		   /* run length; 1 for a raw line */
	/* OPEN: the path; RELEASE, META: the rest of the line ("" if none).
	 * Borrowed from the reader: valid until its next call. */
	const char *text;
};

/* Bytes and requests a record (with its run length) stands for. */
uint64_t trace_rec_bytes(const struct trace_rec *r);
uint64_t trace_rec_requests(const struct trace_rec *r);

/*
 * Parse one raw line (without or with its trailing newline).  The line is
 * modified in place (trailing blanks cut, the path of an OPEN terminated)
 * so rec->text can point into it.  Returns 1 and fills rec, 0 for a blank
 * line, -1 with err naming what is wrong for a broken line.
 */
int trace_parse_line(char *line, struct trace_rec *rec, fwd_error_t *err);

/*
 * Format the i-th record of rec's run (0 <= i < rec->n) as a raw line with
 * its newline, in the canonical form: the parenthesised form when the
 * record had a pid, the bare form otherwise.  Returns the length, or -1
 * (errno ENOSPC) when buf is too small.
 */
int trace_format_raw(const struct trace_rec *rec, uint64_t i, char *buf,
		     size_t len);

/* ---- reading ---- */

#define TRACE_BAD_KEEP 10 /* broken lines reported individually */

struct trace_stats {
	uint64_t lines;	  /* lines read */
	uint64_t records; /* records returned, counting run lengths */
	uint64_t runs;	  /* records returned, one per run */
	uint64_t skipped; /* broken lines */
	uint64_t bytes;	  /* bytes read */
	/* The first TRACE_BAD_KEEP broken lines: "FILE:LINE: reason". */
	char bad[TRACE_BAD_KEEP][1400];
	size_t n_bad;
};

struct trace_reader;

/*
 * Open a raw or compressed trace (detected from the first line); "-" is
 * standard input.  NULL with errno and err on failure.
 */
struct trace_reader *trace_reader_open(const char *path, fwd_error_t *err);

/*
 * Read from an open stream (never closed by the reader, also not when this
 * fails: a damaged compressed header gives NULL and err "NAME:LINE: ...");
 * name for messages.
 */
struct trace_reader *trace_reader_fdopen(FILE *f, const char *name,
					 fwd_error_t *err);

/*
 * Next record (a run when the input is compressed).  Returns 1, 0 at the
 * end, -1 on a read error or a malformed compressed file (err says where).
 * Broken raw lines are skipped and counted in the stats.
 */
int trace_reader_next(struct trace_reader *r, struct trace_rec *rec,
		      fwd_error_t *err);

/* True when the input is a compressed trace; its node name, or NULL. */
bool trace_reader_compressed(const struct trace_reader *r);
const char *trace_reader_node(const struct trace_reader *r);
const struct trace_stats *trace_reader_stats(const struct trace_reader *r);
void trace_reader_destroy(struct trace_reader *r);

/* ---- first-pass compression ---- */

struct trace_writer;

/*
 * Write a compressed trace to f (not closed by destroy).  node may be
 * NULL.  NULL with errno on failure.
 */
struct trace_writer *trace_writer_create(FILE *f, const char *node);

/*
 * The same with the zstd second stage (.ctrace.zst): the first-pass lines
 * go through a zstd stream at `level` into f; trace_writer_finish() ends
 * the frame.  The reader recognises such files by their zstd magic.
 */
struct trace_writer *trace_writer_create_zstd(FILE *f, const char *node,
					      int level);

/*
 * Add a record: merged into the pending run when it has the same
 * operation, level, pid, descriptor, size, count and second and starts
 * where the run ends; otherwise the run is written and rec starts the
 * next one.  -1 with errno on a write error.
 */
int trace_writer_add(struct trace_writer *w, const struct trace_rec *rec);

/* Flush the pending run and the trailer.  -1 with errno on error. */
int trace_writer_finish(struct trace_writer *w);

/* Records and runs (= record lines) written so far. */
uint64_t trace_writer_records(const struct trace_writer *w);
uint64_t trace_writer_runs(const struct trace_writer *w);
void trace_writer_destroy(struct trace_writer *w);

/*
 * Whole-file helpers used by `fwdctl trace compress|expand`: read in (raw
 * or compressed), write out compressed, or raw.  The stats of the read are
 * returned in st (may be NULL), except that after a successful compress
 * st->runs is the number of runs written; out_bytes gets the bytes written.
 */
int trace_compress_file(const char *in, const char *out, const char *node,
			struct trace_stats *st, uint64_t *out_bytes,
			fwd_error_t *err);
int trace_expand_file(const char *in, const char *out, struct trace_stats *st,
		      uint64_t *out_bytes, fwd_error_t *err);

/* The node name for a trace file: its base name without the extension. */
void trace_node_from_path(const char *path, char *buf, size_t len);

#endif
