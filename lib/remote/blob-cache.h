/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The push blob cache (blob-cache.c): a layer's diff_id and compression
 * mapped to the descriptor of the blob it was compressed into, and the
 * seals of merged trees, for push.c.
 * Internal to libcfs.
 */
#ifndef CFS_BLOB_CACHE_H
#define CFS_BLOB_CACHE_H

#include <jansson.h>
#include <stdint.h>

/**
 * cfs_blob_cache_get() - the cached descriptor of the layer whose tar
 * stream is @diff_id, compressed as @compression
 * @dir: the cache's directory
 * @compression: "zstd-chunked", "zstd" or "gzip"
 * @diff_id: "sha256:<hex>"
 * @media_type: the media type the entry must name
 * @digest, @size: out: the compressed blob's
 * @annotations: out: its descriptor's annotations (a new reference), or NULL
 *
 * Return: 0, -ENOENT for no entry, -EINVAL for one that cannot be read or
 * is not what its name says (no entry either), -ENOMEM. Says nothing.
 */
int cfs_blob_cache_get(const char *dir, const char *compression, const char *diff_id,
		       const char *media_type, char digest[7 + 64 + 1], uint64_t *size,
		       json_t **annotations);

/**
 * cfs_blob_cache_put() - record what cfs_blob_cache_get() gives: made
 * with its directories (mode 0700), written to a temporary name and
 * renamed into place; a failure is ignored (the cache only saves time)
 */
void cfs_blob_cache_put(const char *dir, const char *compression, const char *diff_id,
			const char *media_type, const char *digest, uint64_t size,
			const json_t *annotations);

/**
 * cfs_seal_cache_get() - the cached seal of the image whose merged tree
 * @key determines
 * @dir: the cache's directory
 * @key: the seal's format, cfs's version and the layers' diff_ids in order
 *	 (push.c's seal_key())
 * @seal: out: 64 lowercase hex digits
 *
 * Return: 0, -ENOENT for no entry, -EINVAL for one that is not 64
 * lowercase hex digits and a newline (no entry either), -ENOMEM. Says
 * nothing.
 */
int cfs_seal_cache_get(const char *dir, const char *key, char seal[65]);

/**
 * cfs_seal_cache_put() - record what cfs_seal_cache_get() gives, as
 * cfs_blob_cache_put() records an entry (a failure is ignored)
 */
void cfs_seal_cache_put(const char *dir, const char *key, const char *seal);

#endif
