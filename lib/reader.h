/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the image readers share: struct cfs_image, and the EROFS backend
 * (reader-erofs.c) that reader.c hands composefs 1.0 images to. Private to
 * libcfs.
 */
#ifndef CFS_READER_H
#define CFS_READER_H

#include <pthread.h>

#include "libcfs.h"

/**
 * struct cfs_image - an open image
 * @data: the image bytes (mapped, or the caller's buffer)
 * @size: their number
 * @map_len: non-zero when @data is our mapping, to unmap on close
 * @format: CFS_FORMAT_V1 or CFS_FORMAT_EROFS
 * @data_offset: v1: the variable data section; EROFS: 0
 * @root: the root inode (v1: index; EROFS: nid)
 * @version: v1: the header version; EROFS: composefs_version
 * @meta_base, @xattr_base: EROFS: file offsets nids and shared xattr ids count from
 * @build_time, @build_time_nsec: EROFS: the mtime of compact inodes
 * @keys, @n_keys, @keys_cap: EROFS: interned xattr keys (an open-addressed
 *	hash set), so that struct cfs_xattr keys live as long as the image
 * @view: enum cfs_image_view, as cfs_image_set_view() chose
 * @keys_lock: guards the keys, so that threads may read xattrs of one image
 *	at once (fetch and verify do); initialised by whoever makes the
 *	struct, destroyed by cfs_erofs_close()
 */
struct cfs_image {
	const uint8_t *data;
	uint64_t size;
	size_t map_len;
	int format;
	uint64_t data_offset;
	uint64_t root;
	unsigned int version;
	int view;
	uint64_t meta_base, xattr_base;
	int64_t build_time;
	uint32_t build_time_nsec;
	char **keys;
	size_t n_keys, keys_cap;
	pthread_mutex_t keys_lock;
};

/* One raw xattr: @key is in a buffer of the caller's, valid during the call. */
typedef int (*raw_fn)(void *ctx, const char *key, size_t key_len, const uint8_t *value,
		      size_t value_len);

/*
 * Every xattr of inode @nid as stored, composefs's own and escaped ones
 * included, shared ones first; for verify. -EFSCORRUPTED with a message
 * when one does not fit.
 */
int cfs_erofs_raw_xattrs(const struct cfs_image *img, uint64_t nid, raw_fn fn, void *ctx);

/* Does the image start with the composefs 1.0 (EROFS) magic? */
bool cfs_erofs_magic(const uint8_t *data, uint64_t size);

int cfs_erofs_open(struct cfs_image *img);
void cfs_erofs_close(struct cfs_image *img);
int cfs_erofs_inode(struct cfs_image *img, uint64_t nid, struct cfs_inode *out);
int cfs_erofs_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
			    struct cfs_dir_iter *it);
int cfs_erofs_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out);
int cfs_erofs_xattrs(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		     void *ctx);
int cfs_erofs_read(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		   size_t len);

#endif /* CFS_READER_H */
