/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_PROFILER_TRACE_ZSTD_H
#define FWD_PROFILER_TRACE_ZSTD_H

/*
 * zstd streams as stdio streams (profiler/trace_zstd.c), for the stored
 * traces' second stage (.ctrace.zst).  Internal to profiler/.
 */

#include <stdbool.h>
#include <stdio.h>

struct trace_zstd;

/* The decompressed bytes of src (not closed by fclose() of the result).
 * *z gives the error text after a failed read.  NULL with errno. */
FILE *trace_zstd_open_read(FILE *src, struct trace_zstd **z);

/* A stream whose bytes are compressed at `level` into dst (not closed);
 * fclose() ends the frame and fails when that cannot be written. */
FILE *trace_zstd_open_write(FILE *dst, int level);

/* What went wrong in the stream ("zstd: ..."), or NULL. */
const char *trace_zstd_error(const struct trace_zstd *z);

/* True when c can be the first byte of a zstd frame (0x28; a raw trace
 * starts with '[', a first-pass one with '#'). */
bool trace_zstd_magic(int c);

/* The level stored traces are compressed with. */
#define TRACE_ZSTD_LEVEL 1

#endif
