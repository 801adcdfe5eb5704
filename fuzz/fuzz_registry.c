// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for what a registry, or a user's files, say to the registry
 * client besides bodies: the input is taken, all at once, as response
 * header lines (one a line), as a WWW-Authenticate challenge, as base64, as
 * an image reference, and as an auth file. None may crash or leak; base64
 * must decode what it encodes; a reference that parses has a host, a
 * repository and a tag or a digest; credentials found have a user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfs/registry.h"
#include "fuzz.h"
#include "remote/http-parse.h"

static void headers(const char *text, size_t len)
{
	struct cfs_http_head h = { 0 };
	size_t i = 0;

	cfs_http_head_reset(&h);
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) + 1 : len - i;

		if (cfs_http_head_line(&h, text + i, n) < 0)
			break;
		if (h.status != 0 && (h.status < 100 || h.status > 999))
			fuzz_fail("status %ld", h.status);
		if (strlen(h.type) >= sizeof(h.type))
			fuzz_fail("an unterminated type");
		i += n;
	}
	cfs_http_head_reset(&h);
}

static void base64(const char *text, size_t len)
{
	char *dec = NULL, *enc, *again = NULL;
	size_t n, m;

	if (cfs_base64_decode(text, &dec, &n) == 0)
		free(dec);
	enc = cfs_base64_encode(text, len);
	if (!enc)
		fuzz_fail("base64 of %zu bytes failed", len);
	if (cfs_base64_decode(enc, &again, &m) != 0 || m != len || memcmp(again, text, len) != 0)
		fuzz_fail("base64 does not decode what it encodes");
	free(enc);
	free(again);
}

static void reference(const char *text)
{
	struct cfs_registry_ref ref;

	if (cfs_registry_ref_parse(text, &ref) != 0)
		return;
	if (!ref.host[0] || !ref.repo[0] || (!ref.tag == !ref.digest))
		fuzz_fail("'%s' parsed to host '%s' repo '%s'", text, ref.host, ref.repo);
	cfs_registry_ref_free(&ref);
}

static void authfile(const char *text, size_t len)
{
	char path[64], *user = NULL, *password = NULL;
	int fd = memfd_create("cfs-fuzz-auth", MFD_CLOEXEC);

	if (fd < 0)
		fuzz_fail("memfd_create: %s", strerror(errno));
	if (write(fd, text, len) != (ssize_t)len)
		fuzz_fail("write: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (cfs_registry_auth_lookup(path, "reg.example:5000", "team/app", &user, &password) == 0 &&
	    (!user || !password))
		fuzz_fail("credentials without a user or a password");
	free(user);
	free(password);
	close(fd);
}

int fuzz_registry_one(const uint8_t *data, size_t size)
{
	struct cfs_http_challenge c;
	char *text = malloc(size + 1);

	if (!text)
		fuzz_fail("malloc");
	memcpy(text, data, size);
	text[size] = '\0';
	headers(text, size);
	if (cfs_http_challenge_parse(text, &c) == 0 && c.realm && strlen(c.realm) > size)
		fuzz_fail("a realm longer than its challenge");
	cfs_http_challenge_free(&c);
	base64(text, size);
	reference(text);
	authfile(text, size);
	free(text);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_registry_one(data, size);
}
#endif
