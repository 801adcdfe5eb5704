/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the image readers share: struct cfs_image, and struct
 * cfs_format_ops, the seam between the format-blind front end (reader.c)
 * and one backend per format (format/v1/reader.c, format/erofs/reader.c). Private to
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
 * @ops: the backend of the image's format
 * @data_offset: v1: the variable data section; EROFS: 0
 * @root: the root inode (v1: index; EROFS: nid)
 * @version: v1: the header version; EROFS: composefs_version
 * @view: enum cfs_image_view, as cfs_image_set_view() chose
 * @keys_lock: guards the backend's interned xattr keys, so that threads may
 *	read xattrs of one image at once (fetch and verify do); initialised
 *	and destroyed by whoever makes the struct (cfs_image_open_mem() and
 *	cfs_image_close())
 * @priv: the backend's own state (CFS_IMAGE_STATE()); v1 keeps none
 */
struct cfs_image {
	const uint8_t *data;
	uint64_t size;
	size_t map_len;
	const struct cfs_format_ops *ops;
	uint64_t data_offset;
	uint64_t root;
	unsigned int version;
	int view;
	pthread_mutex_t keys_lock;
	uint64_t priv[8];
};

/**
 * struct cfs_format_ops - what the front end asks of a format's backend
 * @format: the format it reads
 * @mount: how an image of it is mounted (struct cfs_mount_format, mount-util.h)
 * @verify: its structural checks for cfsctl verify (verify-walk.h)
 * @magic: does an image of @size bytes at @data start as one of this
 *	format? (NULL for the format that takes the rest, v1)
 * @open: check the header and fill @img's root, version and the backend's
 *	own fields; -EFSCORRUPTED with a message
 * @close: release what @open and the reads allocated (NULL: nothing); the
 *	front end unmaps the image and destroys @keys_lock
 * @inode, @xattrs, @describe, @inode_describe: as cfs_image_inode(),
 *	cfs_image_xattrs(), cfs_image_describe() and cfs_inode_describe()
 * @dir_iter_init: set up the backend's part of @it, whose @img and
 *	@dir_ino the front end has filled, @dir being a directory
 * @dir_iter_next, @dir_iter_skip: as cfs_dir_iter_next() and cfs_dir_iter_skip()
 * @lookup: as cfs_image_lookup(), @dir being a directory (NULL: a scan of
 *	the entries in order)
 * @read: as cfs_image_read() (NULL: the format keeps no content, -EINVAL)
 * @content_in_image: as cfs_inode_content_in_image() (NULL: never)
 */
struct cfs_mount_format;
struct cfs_verifier;

struct cfs_format_ops {
	enum cfs_image_format format;
	const struct cfs_mount_format *mount;
	int (*verify)(struct cfs_verifier *v);
	bool (*magic)(const uint8_t *data, uint64_t size);
	int (*open)(struct cfs_image *img);
	void (*close)(struct cfs_image *img);
	int (*inode)(struct cfs_image *img, uint64_t ino, struct cfs_inode *out);
	int (*dir_iter_init)(struct cfs_image *img, const struct cfs_inode *dir,
			     struct cfs_dir_iter *it);
	int (*dir_iter_next)(struct cfs_dir_iter *it, struct cfs_dirent *out);
	void (*dir_iter_skip)(struct cfs_dir_iter *it);
	int (*lookup)(struct cfs_image *img, const struct cfs_inode *dir, const char *name,
		      size_t name_len, uint64_t *ino);
	int (*xattrs)(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		      void *ctx);
	int (*read)(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		    size_t len);
	bool (*content_in_image)(const struct cfs_inode *in);
	void (*describe)(const struct cfs_image *img, struct cfs_image_desc *d);
	void (*inode_describe)(const struct cfs_image *img, const struct cfs_inode *in,
			       struct cfs_inode_desc *d);
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
 * cfs_format_probe() - the backend of the format whose magic the @size
 * bytes at @data start with; v1's, which refuses what is not one, when
 * no other format's matches
 */
const struct cfs_format_ops *cfs_format_probe(const uint8_t *data, uint64_t size);

/**
 * cfs_image_map() - open the regular file @path and map it read-only
 * @map, @size: the mapping, and its size (no mapping, NULL, for an empty file)
 *
 * For the readers and verify. Return: the open file, or -errno.
 */
int cfs_image_map(const char *path, void **map, size_t *size);

extern const struct cfs_format_ops cfs_v1_ops; /* format/v1/reader.c */
extern const struct cfs_format_ops cfs_erofs_ops; /* format/erofs/reader.c */

#endif /* CFS_READER_H */
