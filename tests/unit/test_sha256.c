/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 against the FIPS 180-2 appendix B test vectors. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/sha256.h"

static const struct {
	const char *msg;
	const char *hex;
} vectors[] = {
	{"abc",
	 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{"",
	 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	/* 55, 56 and 64 bytes: the padding boundaries. */
	{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
	{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
	{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
};

static void test_vectors(void **state)
{
	char hex[65];

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		sha256_hex(vectors[i].msg, strlen(vectors[i].msg), hex);
		assert_string_equal(hex, vectors[i].hex);
	}
}

/* One million 'a', fed in uneven pieces to exercise the block buffer. */
static void test_million_a(void **state)
{
	struct sha256_ctx c;
	unsigned char d[32];
	char chunk[997], hex[65];
	size_t left = 1000000;

	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&c);
	while (left) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);

		sha256_update(&c, chunk, n);
		left -= n;
	}
	sha256_final(&c, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a4972"
				 "00e046d39ccc7112cd0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_million_a),
	};

	return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
