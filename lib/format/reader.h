/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the image readers share: struct cfs_image, between the
 * format-blind front end (reader.c) and each format's reader
 * (format/v1/reader.c, format/erofs/reader.c), which the front end reaches
 * through the format's table (struct cfs_format, format.h), and the room
 * each format keeps its own state of an inode and an image in. Private to
 * libcfs.
 */
#ifndef CFS_READER_H
#define CFS_READER_H

#include <pthread.h>

#include "base/internal.h"

struct cfs_format;

/**
 * struct cfs_image - an open image
 * @data: the image bytes (mapped, or the caller's buffer)
 * @size: their number
 * @map_len: non-zero when @data is our mapping, to unmap on close
 * @format: the image's format, whose table the front end asks
 * @root: the root inode (v1: index; EROFS: nid)
 * @version: v1: the header version; EROFS: composefs_version
 * @view: enum cfs_image_view, as cfs_image_set_view() chose
 * @keys_lock: guards the backend's interned xattr keys, so that threads may
 *	read xattrs of one image at once (fetch and verify do); initialised
 *	and destroyed by whoever makes the struct (cfs_image_open_mem() and
 *	cfs_image_close())
 * @priv: the backend's own state (CFS_IMAGE_STATE())
 */
struct cfs_image {
	const uint8_t *data;
	uint64_t size;
	size_t map_len;
	const struct cfs_format *format;
	uint64_t root;
	unsigned int version;
	int view;
	pthread_mutex_t keys_lock;
	uint64_t priv[8];
};

/*
 * CFS_INODE_STATE(type, name) - define name(in), which gives a backend's
 * struct type, kept in cfs_inode.priv (checked to fit there)
 */
#define CFS_INODE_STATE(type, name)                                                   \
	static inline struct type *name(const struct cfs_inode *in)                   \
	{                                                                             \
		_Static_assert(sizeof(struct type) <= sizeof(in->priv), #type " fits"); \
		return (struct type *)(void *)in->priv;                               \
	}

/*
 * CFS_IMAGE_STATE(type, name) - define name(img), which gives a backend's
 * struct type, kept in cfs_image.priv (checked to fit there)
 */
#define CFS_IMAGE_STATE(type, name)                                                    \
	static inline struct type *name(const struct cfs_image *img)                   \
	{                                                                              \
		_Static_assert(sizeof(struct type) <= sizeof(img->priv), #type " fits"); \
		return (struct type *)(void *)img->priv;                               \
	}

/**
 * cfs_inode_content_in_image() - does @img hold @in's content itself
 *	(cfs_image_read() reads it)?
 */
bool cfs_inode_content_in_image(const struct cfs_image *img, const struct cfs_inode *in);

/**
 * cfs_image_map() - open the regular file @path and map it read-only
 * @map, @size: the mapping, and its size (no mapping, NULL, for an empty file)
 *
 * For the readers and verify. Return: the open file, or -errno.
 */
int cfs_image_map(const char *path, void **map, size_t *size);

#endif /* CFS_READER_H */
