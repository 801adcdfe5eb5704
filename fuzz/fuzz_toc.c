// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the parser of zstd:chunked tables of contents (toc.c),
 * the JSON a registry serves for a partial pull. Any input must parse or
 * be refused without a crash or a leak; when it parses, what the pull
 * relies on must hold: every file's frames lie before the limit and
 * overlap no other's, every file with content has its size and frames,
 * and no name has a ".." component or starts with '/'. The same input is
 * also read as a tar-split (tarsplit.c), compressed here as the blob
 * would hold it: its lines must parse or be refused, and every file it
 * asks for is given as zeros. And the scan for the files' digests that
 * runs before the parse (cfs_toc_scan_sha256()) must take only digests
 * the text names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "fuzz.h"
#include "remote/tarsplit.h"
#include "remote/toc.h"

#define LIMIT (1ull << 40)

static bool bad_name(const char *s)
{
	if (s[0] == '/')
		return true;
	for (const char *p = s; (p = strstr(p, "..")); p += 2)
		if ((p == s || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

/* A file of the tar-split: zeros, and no more than 1 MiB of them in all. */
static int zeros(void *ctx, const char *name, uint64_t size, EVP_MD_CTX *md)
{
	static const uint8_t z[4096];
	uint64_t *left = ctx;

	(void)name;
	if (size > *left)
		return -EFBIG;
	*left -= size;
	for (; size; size -= size < sizeof(z) ? size : sizeof(z))
		EVP_DigestUpdate(md, z, size < sizeof(z) ? size : sizeof(z));
	return 0;
}

static void tarsplit_one(const uint8_t *data, size_t size)
{
	size_t cap = ZSTD_compressBound(size);
	uint8_t *z = malloc(cap), digest[32];
	uint64_t left = 1 << 20;
	size_t n;

	if (!z)
		return;
	n = ZSTD_compress(z, cap, data, size, 1);
	if (!ZSTD_isError(n))
		cfs_tarsplit_digest(z, n, size, "fuzz", zeros, &left, digest);
	free(z);
}

struct scan {
	const uint8_t *data;
	size_t size, found;
};

/* A digest the scan took: the text must name it, in lowercase hex. */
static int scanned(void *ctx, const uint8_t sha256[32])
{
	static const char key[] = "\"digest\":\"sha256:";
	struct scan *sc = ctx;
	char want[sizeof(key) - 1 + 64 + 1];

	memcpy(want, key, sizeof(key) - 1);
	for (int i = 0; i < 32; i++) {
		want[sizeof(key) - 1 + 2 * i] = "0123456789abcdef"[sha256[i] >> 4];
		want[sizeof(key) - 1 + 2 * i + 1] = "0123456789abcdef"[sha256[i] & 15];
	}
	want[sizeof(want) - 1] = '"';
	if (!memmem(sc->data, sc->size, want, sizeof(want)))
		fuzz_fail("the scan took a digest the text does not name: %.*s", 64,
			  want + sizeof(key) - 1);
	sc->found++;
	return 0;
}

int fuzz_toc_one(const uint8_t *data, size_t size)
{
	struct scan sc = { data, size, 0 };
	struct cfs_toc *toc = NULL;

	tarsplit_one(data, size);
	cfs_toc_scan_sha256((const char *)data, size, scanned, &sc);
	if (sc.found > size / (17 + 64 + 1))
		fuzz_fail("the scan took %zu digests from %zu bytes", sc.found, size);
	if (cfs_toc_parse((const char *)data, size, LIMIT, "fuzz", 1u << 20, &toc))
		return 0;
	for (size_t i = 0; i < toc->n; i++) {
		const struct cfs_toc_entry *e = &toc->entries[i];

		if (bad_name(e->name))
			fuzz_fail("entry %zu: the name '%s' was taken", i, e->name);
		if (e->type != CFS_TOC_REG || !e->size)
			continue;
		if (e->offset >= e->end || e->end > LIMIT)
			fuzz_fail("entry %zu: frames %llu-%llu taken", i,
				  (unsigned long long)e->offset, (unsigned long long)e->end);
		for (size_t k = 0; k < i; k++) {
			const struct cfs_toc_entry *o = &toc->entries[k];

			if (o->type == CFS_TOC_REG && o->size && o->offset < e->end &&
			    e->offset < o->end)
				fuzz_fail("entries %zu and %zu overlap", k, i);
		}
	}
	cfs_toc_free(toc);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_toc_one(data, size);
}
#endif
