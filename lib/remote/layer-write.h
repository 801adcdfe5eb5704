/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A layer blob written from a scanned tree, or recompressed from another
 * layer's tar stream (layer-write.c): gzip, zstd or zstd:chunked.
 * Internal to libcfs.
 */
#ifndef CFS_LAYER_WRITE_H
#define CFS_LAYER_WRITE_H

#include <stdint.h>

#include "json.h"
#include "base/tree.h"
#include "cfs/push.h"

/**
 * struct cfs_layer_out - the blob written
 * @digest, @diff_id: raw sha256 of the blob and of its tar stream
 * @size: the blob's bytes
 * @annotations: zstd:chunked: the io.github.containers.zstd-chunked.*
 *		 annotations of its descriptor (a new reference); else NULL
 */
struct cfs_layer_out {
	uint8_t digest[32], diff_id[32];
	uint64_t size;
	json_t *annotations;
};

/**
 * cfs_layer_write() - write the layer of @root (cfs_tree_from_dir(), or
 * cfs_tree_from_dump() of an image whose backing paths are under
 * @objects; sorted) to @fd, which is named @what in messages
 *
 * Return: 0, or -errno with a message.
 */
int cfs_layer_write(struct cfs_node *root, const char *objects, enum cfs_push_compression comp,
		    int fd, const char *what, struct cfs_layer_out *out);

/**
 * cfs_layer_recompress() - the layer read from @in (a tar stream, plain,
 * gzip or zstd, told by its first bytes) written to @fd compressed as
 * @comp, its tar stream kept byte for byte: for zstd:chunked, each
 * header and file content framed, chunked and listed in the TOC and the
 * tar-split as cfs_layer_write() does for a tree. @what names it in
 * messages. @out->diff_id is the tar stream's sha256, for the caller to
 * check against the config.
 *
 * Return: 0, or -errno with a message (-EINVAL: not a tar stream, or one
 * cut short; -EOPNOTSUPP: an entry a layer cannot hold).
 */
int cfs_layer_recompress(int in, enum cfs_push_compression comp, int fd, const char *what,
			 struct cfs_layer_out *out);

#endif /* CFS_LAYER_WRITE_H */
