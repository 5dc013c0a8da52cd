/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_TESTS_FUZZ_H
#define FWD_TESTS_FUZZ_H

/*
 * Helpers shared by the libFuzzer targets (tests/fuzz/README.md): each
 * target feeds the input bytes to one real parser, through a memory
 * buffer where the parser takes one, else through a private file that is
 * rewritten for every input.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (aborts when out of memory, which
 * libFuzzer reports). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A read-only stream over the input; NULL for an empty input (fmemopen
 * refuses a zero-length buffer). */
static inline FILE *fuzz_stream(const uint8_t *data, size_t size)
{
	if (!size)
		return NULL;
	return fmemopen((void *)data, size, "r");
}

/*
 * The path of a private file holding the input, for parsers that take a
 * path (the YAML loaders check it is a regular file).  One file per
 * process, in $TMPDIR, removed at exit; `ext` keeps the suffix a parser
 * may look at.
 */
static char fuzz_path_buf[4096];

static inline void fuzz_path_cleanup(void)
{
	if (fuzz_path_buf[0])
		unlink(fuzz_path_buf);
}

static inline const char *fuzz_file(const uint8_t *data, size_t size,
				    const char *ext)
{
	FILE *f;

	if (!fuzz_path_buf[0]) {
		const char *dir = getenv("TMPDIR");
		int fd;

		snprintf(fuzz_path_buf, sizeof(fuzz_path_buf),
			 "%s/fwdfuzz-XXXXXX%s", dir && *dir ? dir : "/tmp",
			 ext);
		fd = mkstemps(fuzz_path_buf, (int)strlen(ext));
		if (fd < 0) {
			perror("fuzz: mkstemps");
			abort();
		}
		close(fd);
		atexit(fuzz_path_cleanup);
	}
	f = fopen(fuzz_path_buf, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
		perror(fuzz_path_buf);
		abort();
	}
	return fuzz_path_buf;
}

/* A fixture (tests/fixtures/...) the target cannot run without. */
#define FUZZ_REQUIRE(expr, what)                                            \
	do {                                                                \
		if (!(expr)) {                                              \
			fprintf(stderr, "fuzz: cannot load %s: %s\n", what, \
				err.text);                                  \
			abort();                                            \
		}                                                           \
	} while (0)

#endif
