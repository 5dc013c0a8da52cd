/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The second stage of stored traces: a zstd stream (libzstd) over the
 * first-pass runs, as a stdio stream so that the trace reader and writer
 * keep reading and writing lines.  The reader recognises the stream by the
 * zstd frame magic (28 b5 2f fd), never by the file name.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "profiler/trace_zstd.h"

struct trace_zstd {
	FILE *f; /* the compressed side, not closed here */
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
	void *buf; /* compressed bytes: read-ahead or pending output */
	size_t cap;
	ZSTD_inBuffer in; /* reading: the read-ahead */
	size_t last;	  /* reading: 0 when the last frame is complete */
	bool started;
	char msg[160];
};

const char *trace_zstd_error(const struct trace_zstd *z)
{
	return z && z->msg[0] ? z->msg : NULL;
}

/* Record "zstd: what[detail]" (the first failure wins); -1, EBADMSG. */
static ssize_t fail(struct trace_zstd *z, const char *what, const char *detail)
{
	if (!z->msg[0])
		snprintf(z->msg, sizeof(z->msg), "zstd: %s%s", what,
			 detail ? detail : "");
	errno = EBADMSG;
	return -1;
}

static ssize_t z_read(void *cookie, char *buf, size_t size)
{
	struct trace_zstd *z = cookie;
	ZSTD_outBuffer out = {buf, size, 0};

	if (z->msg[0]) {
		errno = EBADMSG;
		return -1;
	}
	while (out.pos == 0) {
		size_t r;

		if (z->in.pos == z->in.size) {
			size_t got = fread(z->buf, 1, z->cap, z->f);

			if (!got) {
				if (ferror(z->f))
					return fail(z, "", strerror(errno));
				if (!z->started)
					return fail(z, "empty stream", NULL);
				if (z->last)
					return fail(z,
						    "truncated stream (the "
						    "last frame is incomplete)",
						    NULL);
				return 0;
			}
			if (!z->started &&
			    (got < 4 || memcmp(z->buf, "\x28\xb5\x2f\xfd", 4)))
				return fail(z, "not a zstd stream (bad magic)",
					    NULL);
			z->started = true;
			z->in = (ZSTD_inBuffer){z->buf, got, 0};
		}
		r = ZSTD_decompressStream(z->d, &out, &z->in);
		if (ZSTD_isError(r))
			return fail(z,
				    "damaged stream: ", ZSTD_getErrorName(r));
		z->last = r;
	}
	return (ssize_t)out.pos;
}

static ssize_t z_write(void *cookie, const char *buf, size_t size)
{
	struct trace_zstd *z = cookie;
	ZSTD_inBuffer in = {buf, size, 0};

	while (in.pos < in.size) {
		ZSTD_outBuffer out = {z->buf, z->cap, 0};
		size_t r =
			ZSTD_compressStream2(z->c, &out, &in, ZSTD_e_continue);

		if (ZSTD_isError(r))
			return fail(z, "", ZSTD_getErrorName(r));
		if (out.pos && fwrite(z->buf, 1, out.pos, z->f) != out.pos)
			return -1;
	}
	return (ssize_t)size;
}

static void z_free(struct trace_zstd *z)
{
	ZSTD_freeCCtx(z->c);
	ZSTD_freeDCtx(z->d);
	free(z->buf);
	free(z);
}

static int z_close(void *cookie)
{
	struct trace_zstd *z = cookie;
	int rv = 0;

	if (z->c) { /* end the frame */
		size_t r;

		do {
			ZSTD_inBuffer in = {NULL, 0, 0};
			ZSTD_outBuffer out = {z->buf, z->cap, 0};

			r = ZSTD_compressStream2(z->c, &out, &in, ZSTD_e_end);
			if (ZSTD_isError(r) ||
			    (out.pos &&
			     fwrite(z->buf, 1, out.pos, z->f) != out.pos)) {
				rv = -1;
				break;
			}
		} while (r);
	}
	z_free(z);
	return rv;
}

FILE *trace_zstd_open_read(FILE *src, struct trace_zstd **out)
{
	struct trace_zstd *z = calloc(1, sizeof(*z));
	cookie_io_functions_t io = {.read = z_read, .close = z_close};
	FILE *f;

	if (!z)
		return NULL;
	z->f = src;
	z->cap = ZSTD_DStreamInSize();
	z->buf = malloc(z->cap);
	z->d = ZSTD_createDCtx();
	z->last = 1;
	if (!z->buf || !z->d || !(f = fopencookie(z, "r", io))) {
		z_free(z);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 18);
	*out = z;
	return f;
}

FILE *trace_zstd_open_write(FILE *dst, int level)
{
	struct trace_zstd *z = calloc(1, sizeof(*z));
	cookie_io_functions_t io = {.write = z_write, .close = z_close};
	FILE *f;

	if (!z)
		return NULL;
	z->f = dst;
	z->cap = ZSTD_CStreamOutSize();
	z->buf = malloc(z->cap);
	z->c = ZSTD_createCCtx();
	if (!z->buf || !z->c ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_compressionLevel,
						level)) ||
	    /* a content checksum: damage is an error, not other records */
	    ZSTD_isError(
		    ZSTD_CCtx_setParameter(z->c, ZSTD_c_checksumFlag, 1)) ||
	    !(f = fopencookie(z, "w", io))) {
		z_free(z);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 18);
	return f;
}

bool trace_zstd_magic(int c)
{
	return c == 0x28;
}
