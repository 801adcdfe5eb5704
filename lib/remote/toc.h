/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The table of contents of a zstd:chunked layer (toc.c): where its two sets
 * of annotations put it, and its entries parsed and checked. It is
 * internal to libcfs.
 */
#ifndef CFS_TOC_H
#define CFS_TOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


/* The largest TOC taken, compressed or not. */
#define CFS_TOC_MAX_SIZE (64u << 20)

enum cfs_toc_type {
	CFS_TOC_REG,
	CFS_TOC_DIR,
	CFS_TOC_SYMLINK,
	CFS_TOC_HARDLINK,
	CFS_TOC_CHAR,
	CFS_TOC_BLOCK,
	CFS_TOC_FIFO,
};

struct cfs_toc_xattr {
	char *name;
	uint8_t *value;
	size_t len;
};

/**
 * struct cfs_toc_entry - one entry of the layer's tar stream
 * @name: as the tar stream names it ("./usr/bin/sh", "./usr/")
 * @link: a symlink's target or a hardlink's earlier entry; else NULL
 * @mode: the permission bits (07777)
 * @size: a regular file's size
 * @sha256: a regular file's content digest, when @size > 0
 * @offset: a regular file of @size > 0: where its zstd frames start in the blob
 * @end: and where they end (exclusive)
 */
struct cfs_toc_entry {
	enum cfs_toc_type type;
	char *name;
	char *link;
	uint32_t mode, uid, gid;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint64_t size;
	uint32_t devmajor, devminor;
	uint8_t sha256[32];
	uint64_t offset, end;
	struct cfs_toc_xattr *xattrs;
	size_t n_xattrs;
};

/**
 * struct cfs_toc - a parsed TOC
 * @entries, @n: its entries, "chunk" ones left out
 * @has_tarsplit_digest: it has "tarSplitDigest" (containers/storage writes
 *	it there now, where it wrote the tarsplit-checksum annotation before)
 * @tarsplit_sha256: that digest, of the tar-split's compressed bytes
 */
struct cfs_toc {
	struct cfs_toc_entry *entries;
	size_t n;
	bool has_tarsplit_digest;
	uint8_t tarsplit_sha256[32];
};

/**
 * struct cfs_toc_pos - where a layer's TOC is, from its annotations
 * @offset, @length: the compressed TOC's bytes in the blob
 * @ulength: its size uncompressed
 * @sha256: the digest of the @length compressed bytes
 * @tarsplit: where the layer's tar-split is, the same way, when its
 *	annotations say (@has_sum: with a checksum annotation)
 */
struct cfs_toc_pos {
	uint64_t offset, length, ulength;
	uint8_t sha256[32];
	struct {
		bool present, has_sum;
		uint64_t offset, length, ulength;
		uint8_t sha256[32];
	} tarsplit;
};

/**
 * cfs_toc_find() - the TOC position a layer's annotations give
 * @annotations: the descriptor's "annotations" object (a jansson json_t), or NULL
 * @blob_size: the layer blob's size
 * @what: names the layer in messages
 *
 * Takes io.github.containers.zstd-chunked.manifest-checksum and
 * -manifest-position, or the older io.containers.zstd-chunked.* pair; and
 * io.github.containers.zstd-chunked.tarsplit-position (OFFSET:LENGTH:SIZE)
 * with -tarsplit-checksum, when the layer has a tar-split.
 * Return: 0 and *@pos; 1 when the layer has neither (not zstd:chunked);
 * -EINVAL with a message when they are malformed or point outside the blob.
 */
int cfs_toc_find(const void *annotations, uint64_t blob_size, const char *what,
		 struct cfs_toc_pos *pos);

/**
 * cfs_toc_decode() - check, decompress and parse the TOC's bytes
 * @data, @len: the @pos->length bytes fetched from @pos->offset, in
 *	malloc()ed memory that it frees (as soon as they are decompressed, so
 *	that they and the parse never take memory at once)
 * @pos: from cfs_toc_find(); @data must hash to @pos->sha256 before
 *	 anything else is done with it
 * @what: names the layer in messages
 * @max_entries: the most entries it may list (--max-entries); 0: no limit
 * @text, @ctx: if @text, called as @text(@ctx, json, len) with the TOC's
 *	JSON once it has been checked and decompressed, before it is parsed:
 *	the caller may start work on what the text names while it is parsed.
 *	The text is freed before this returns; the work must not take
 *	anything from it as checked (the parse may yet refuse it).
 *
 * Every entry is checked: known types, sizes, a digest for each file
 * with content, frames inside the blob before the TOC and overlapping no
 * other file's, names the tar rules accept and none twice. Return: 0 and
 * *@out (cfs_toc_free()), -EINVAL with a message, -EFBIG without one
 * when the TOC holds more than CFS_JSON_MAX_VALUES JSON values (so much
 * memory would its parse take: the layer is better pulled whole), or
 * -ENOMEM.
 */
int cfs_toc_decode(void *data, size_t len, const struct cfs_toc_pos *pos, const char *what,
		   uint64_t max_entries, void (*text)(void *ctx, const char *json, size_t len),
		   void *ctx, struct cfs_toc **out);

/**
 * cfs_toc_parse() - parse and check an uncompressed TOC (JSON)
 * @limit: the frames of files must end at or before this offset
 *
 * What cfs_toc_decode() does after decompressing; the fuzz target's entry.
 */
int cfs_toc_parse(const char *json, size_t len, uint64_t limit, const char *what,
		  uint64_t max_entries, struct cfs_toc **out);

/**
 * cfs_toc_scan_sha256() - the sha256 digests a TOC's text names for its
 * files, found without parsing it (for work that starts during the parse)
 * @json, @len: the text, as cfs_toc_decode()'s @text callback has it (no
 *	C string)
 * @fn: called as @fn(@ctx, sha256) for each '"digest":"sha256:' that 64
 *	lowercase hex digits and a '"' follow, in the order of the text; a
 *	return other than 0 ends the scan
 *
 * Nothing is checked but the digits: a digest found may belong to no file
 * the parse will accept. Return: what @fn last returned, or 0.
 */
int cfs_toc_scan_sha256(const char *json, size_t len,
			int (*fn)(void *ctx, const uint8_t sha256[32]), void *ctx);

void cfs_toc_free(struct cfs_toc *toc);

#endif /* CFS_TOC_H */
