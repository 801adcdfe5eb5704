/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The tar-split of a zstd:chunked layer (tarsplit.c): the layer's tar
 * stream rebuilt from the tar-split's segments and the files' content, for
 * its sha256, the layer's diff_id. It is internal to libcfs.
 */
#ifndef CFS_TARSPLIT_H
#define CFS_TARSPLIT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* The largest tar-split taken uncompressed, and one line of it. */
#define CFS_TARSPLIT_MAX_SIZE (1ull << 30)
#define CFS_TARSPLIT_LINE_MAX (16u << 20)

/**
 * cfs_tarsplit_digest() - the sha256 of the tar stream a tar-split rebuilds
 * @data, @len: the tar-split, one zstd frame, as fetched (its checksum
 *	checked by the caller)
 * @ulen: its size uncompressed, from the annotation: it must be exactly that
 * @what: names the layer in messages
 * @file: feeds the content of the regular file @name, of @size bytes, into
 *	@md; returns 0 or -errno with a message
 * @out: the digest
 *
 * Each line is a JSON object: type 2 a segment of the stream (its
 * "payload" in base64: headers, padding), type 1 a file ("name", and
 * "size" for one with content, read through @file). Return: 0, -EINVAL
 * with a message for a tar-split that is not one, -ENOMEM, or @file's error.
 */
int cfs_tarsplit_digest(const void *data, size_t len, uint64_t ulen, const char *what,
			int (*file)(void *ctx, const char *name, uint64_t size, EVP_MD_CTX *md),
			void *ctx, uint8_t out[32]);

#endif /* CFS_TARSPLIT_H */
