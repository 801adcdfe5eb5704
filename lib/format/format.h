/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * struct cfs_format: one image format, as the shared code sees it. Each
 * format defines its one table in lib/format/NAME/format.c, holding what
 * it does for each role: writing (cfs_tree_write(), and the builders'
 * rules of what stays inside the image), reading (the reader's front end,
 * reader.c), checking (cfsctl verify, verify.c) and mounting (mount.c).
 * The shared code finds a format here, by its number or by an image's
 * magic, and never names one. Private to libcfs.
 */
#ifndef CFS_LIB_FORMAT_H
#define CFS_LIB_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "cfs/build.h"
#include "cfs/mount.h"

struct cfs_image;
struct cfs_node;
struct cfs_verifier;

/**
 * struct cfs_format - what the shared code asks of one format
 * @name: as cfsctl build --format names it
 *
 * Writing:
 * @takes_options: @write takes struct cfs_write_options (other formats
 *	refuse any but the defaults)
 * @holds_content: file content may be in the image: CONTENT, no backing file
 * @inline_max: with @holds_content: files read from a tree or archive up
 *	to this size stay inline (at most CFS_FORMAT_INLINE_MAX, tree.h)
 * @max_file_size: the largest regular file an image can hold
 * @write: encode the finished tree @root on @fd, as cfs_tree_write()
 *
 * Reading (the front end, reader.c, hands every call of cfs/image.h here):
 * @magic: does an image of @size bytes at @data start as one of this
 *	format? (NULL for the format that takes the rest, v1)
 * @open: check the header and fill @img's root, version and the format's
 *	own state; -EFSCORRUPTED with a message
 * @close: release what @open and the reads allocated (NULL: nothing); the
 *	front end unmaps the image and destroys @keys_lock
 * @inode, @xattrs, @describe, @inode_describe: as cfs_image_inode(),
 *	cfs_image_xattrs(), cfs_image_describe() and cfs_inode_describe()
 * @dir_iter_init: set up the format's part of @it, whose @img and
 *	@dir_ino the front end has filled, @dir being a directory
 * @dir_iter_next, @dir_iter_skip: as cfs_dir_iter_next() and cfs_dir_iter_skip()
 * @lookup: as cfs_image_lookup(), @dir being a directory (NULL: a scan of
 *	the entries in order)
 * @read: as cfs_image_read() (NULL: the format keeps no content, -EINVAL)
 * @content_in_image: as cfs_inode_content_in_image() (NULL: never)
 *
 * Checking:
 * @verify: the structural checks of cfsctl verify (verify-walk.h), given
 *	the table itself as @f (so that a check that opens the image with
 *	the format's reader need not name its own table): 1 when
 *	the objects the walk met are to be checked next, 0 when the image's
 *	header was refused (reported) and there is nothing more to check, or
 *	-errno
 *
 * Mounting:
 * @mount_caps: what a mount of such an image takes
 * @mount: as cfs_image_mount_fd(), with options @mount_caps allow: it
 *	mounts the open image @fd (named @image in messages), and never
 *	looks @image up again, so that what is measured is what is mounted
 */
struct cfs_format {
	const char *name;

	bool takes_options;
	bool holds_content;
	uint64_t inline_max;
	uint64_t max_file_size;
	int (*write)(struct cfs_node *root, const struct cfs_write_options *opts, int fd);

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

	int (*verify)(const struct cfs_format *f, struct cfs_verifier *v);

	struct cfs_mount_caps mount_caps;
	int (*mount)(int fd, const char *image, const char *mnt,
		     const struct cfs_mount_options *o);
};

/** cfs_format_get() - the format numbered @id, or NULL when there is none */
const struct cfs_format *cfs_format_get(enum cfs_image_format id);

/**
 * cfs_format_probe() - the format whose magic the @size bytes at @data
 * start with; v1, whose reader refuses what is not one, when no other
 * format's matches
 */
const struct cfs_format *cfs_format_probe(const uint8_t *data, uint64_t size);

/* The formats' tables, which format.c lists. */
extern const struct cfs_format cfs_format_v1; /* format/v1/format.c */
extern const struct cfs_format cfs_format_erofs; /* format/erofs/format.c */

#endif /* CFS_LIB_FORMAT_H */
