/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_SHA256_H
#define FWD_COMMON_SHA256_H

/*
 * SHA-256 (FIPS 180-4), used to fingerprint the policy file recorded with
 * every decision.  Not for secrets: no constant-time claims are made.
 */

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
	uint32_t state[8];
	uint64_t bytes;	       /* message length so far */
	unsigned char buf[64]; /* partial block */
	size_t used;	       /* bytes in buf */
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, unsigned char out[32]);

/* One call: the digest of buf as 64 lower-case hex digits + NUL. */
void sha256_hex(const void *buf, size_t len, char hex[65]);

#endif
