/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A layer blob written from a scanned tree (layer-write.c): a tar stream,
 * gzip, zstd or zstd:chunked. Internal to libcfs.
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

#endif /* CFS_LAYER_WRITE_H */
