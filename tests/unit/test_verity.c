// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of struct cfs_verity: content fed as data and runs of zeros,
 * cut anywhere, has the digest libfsverity computes of the same bytes, at
 * sizes around every block and tree level boundary; and a hole of 2^62
 * bytes costs no more than a few hashes. The data blocks' hashes kept by
 * cfs_verity_leaves_fd() are each block's, zero-padded, with the file's
 * digest, and cfs_verity_leaves_check() refuses a block changed by a byte.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/internal.h"
#include "check.h"

/* Feed @len bytes of @buf, the zero ones as runs of zeros when @holes. */
static int feed(struct cfs_verity *v, const uint8_t *buf, size_t len, size_t cut, bool holes)
{
	size_t i = 0;
	int r = 0;

	while (i < len && r == 0) {
		size_t k = len - i < cut ? len - i : cut, z = 0;

		while (holes && z < k && buf[i + z] == 0)
			z++;
		if (z)
			r = cfs_verity_zeros(v, z);
		else
			r = cfs_verity_update(v, buf + i, k);
		i += z ? z : k;
	}
	return r;
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 8192, 128 * 4096 - 1, 128 * 4096,
					128 * 4096 + 1, 129 * 4096, 130 * 4096 + 100,
					128 * 128 * 4096 + 4096 * 3 + 5 };
	static const size_t cuts[] = { 1000, 4096, 5000, 1 << 20 };
	uint8_t want[CFS_DIGEST_SIZE], got[CFS_DIGEST_SIZE];
	struct cfs_verity v;
	uint8_t *buf = malloc(128 * 128 * 4096 + 4096 * 4);

	srand(7);
	for (size_t s = 0; buf && s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];

		for (int pattern = 0; pattern < 3; pattern++) {
			/* 0: random; 1: all zeros; 2: random with long holes in odd places */
			for (size_t i = 0; i < len; i++)
				buf[i] = pattern == 1 ? 0 : (uint8_t)rand();
			if (pattern == 2)
				for (size_t i = 0; i < len; i += 200000)
					memset(buf + i + 100, 0, len - i - 100 < 150000 ? len - i - 100 : 150000);
			CHECK(cfs_verity_digest_mem(buf, len, want) == 0, "libfsverity of %zu bytes", len);
			for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
				for (int holes = 0; holes < 2; holes++) {
					CHECK(cfs_verity_init(&v, len) == 0, "init");
					CHECK(feed(&v, buf, len, cuts[c], holes) == 0, "feed");
					CHECK(cfs_verity_final(&v, got) == 0, "final");
					cfs_verity_free(&v);
					CHECK(memcmp(want, got, sizeof(want)) == 0,
					      "%zu bytes of pattern %d in pieces of %zu%s: another digest",
					      len, pattern, cuts[c], holes ? " with holes" : "");
				}
			}
		}
	}

	/* The kept hashes of the data blocks, at sizes around each level. */
	for (size_t s = 0; buf && s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		struct cfs_verity_leaves l;
		char name[] = "/tmp/cfs-leaves.XXXXXX";
		int fd = mkstemp(name);

		CHECK(fd >= 0, "mkstemp");
		if (fd < 0)
			break;
		unlink(name);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand();
		CHECK(write(fd, buf, len) == (ssize_t)len, "write");
		CHECK(cfs_verity_digest_mem(buf, len, want) == 0, "libfsverity of %zu bytes", len);
		CHECK(cfs_verity_leaves_fd(fd, got, &l) == 0, "leaves of %zu bytes", len);
		CHECK(memcmp(want, got, sizeof(want)) == 0, "%zu bytes: the leaves' digest differs", len);
		CHECK(l.n == (len + 4095) / 4096, "%zu bytes: %llu leaves", len, (unsigned long long)l.n);
		for (uint64_t b = 0; b < l.n; b++) {
			uint8_t block[4096] = { 0 }, h[CFS_DIGEST_SIZE];
			size_t n = len - b * 4096 < 4096 ? len - b * 4096 : 4096;
			unsigned int hl;

			memcpy(block, buf + b * 4096, n);
			EVP_Digest(block, sizeof(block), h, &hl, EVP_sha256(), NULL);
			if (memcmp(h, l.hashes + b * CFS_DIGEST_SIZE, sizeof(h)) != 0) {
				CHECK(0, "%zu bytes: block %llu's kept hash", len, (unsigned long long)b);
				break;
			}
		}
		CHECK(cfs_verity_leaves_check(&l, 0, buf, len) == 0, "%zu bytes check", len);
		if (len > 4096) {
			size_t off = (len - 1) / 4096 * 4096;

			CHECK(cfs_verity_leaves_check(&l, off, buf + off, len - off) == 0,
			      "%zu bytes: the last block checks", len);
			CHECK(cfs_verity_leaves_check(&l, 4096, buf + 4096, 100) == -EINVAL ||
				      len == 4096 + 100,
			      "%zu bytes: a part of a block is refused", len);
		}
		if (len) {
			buf[len / 2] ^= 1;
			CHECK(cfs_verity_leaves_check(&l, 0, buf, len) == -EIO,
			      "%zu bytes: a changed byte checks", len);
		}
		cfs_verity_leaves_free(&l);
		close(fd);
	}
	free(buf);

	/* Too much or too little content is an error, not another digest. */
	CHECK(cfs_verity_init(&v, 10) == 0, "init");
	CHECK(cfs_verity_update(&v, "0123456789A", 11) < 0, "more bytes than the size");
	CHECK(cfs_verity_update(&v, "01234", 5) == 0, "update");
	CHECK(cfs_verity_final(&v, got) < 0, "fewer bytes than the size");
	cfs_verity_free(&v);

	/* A hole of 2^62 bytes: a few hashes per level, at once. */
	{
		struct timespec a, b;
		uint64_t big = (uint64_t)1 << 62;

		clock_gettime(CLOCK_MONOTONIC, &a);
		CHECK(cfs_verity_init(&v, big + 3) == 0, "init");
		CHECK(cfs_verity_update(&v, "abc", 3) == 0, "update");
		CHECK(cfs_verity_zeros(&v, big) == 0, "a hole of 2^62 bytes");
		CHECK(cfs_verity_final(&v, got) == 0, "final");
		cfs_verity_free(&v);
		clock_gettime(CLOCK_MONOTONIC, &b);
		CHECK(b.tv_sec - a.tv_sec < 2, "a hole of 2^62 bytes took %ld s", (long)(b.tv_sec - a.tv_sec));
	}
	return check_exit("verity");
}
