/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Comparing two images path by path.
 */
#ifndef CFS_DIFF_H
#define CFS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/image.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

/* ---- comparing images (diff.c) ---- */

/* What changed about a path present in both images (bits of cfs_diff_entry.changes) */
#define CFS_DIFF_TYPE (1U << 0) /* file type; nothing else is compared then */
#define CFS_DIFF_CONTENT (1U << 1) /* regular files: digest or size */
#define CFS_DIFF_MODE (1U << 2) /* permission bits */
#define CFS_DIFF_OWNER (1U << 3) /* uid or gid */
#define CFS_DIFF_MTIME (1U << 4)
#define CFS_DIFF_XATTRS (1U << 5) /* some key added, removed or changed */
#define CFS_DIFF_TARGET (1U << 6) /* symlink target */
#define CFS_DIFF_HARDLINK (1U << 7) /* which other paths share the inode */
#define CFS_DIFF_RDEV (1U << 8) /* devices: device number */

/**
 * struct cfs_diff_xattr - one xattr key that differs
 * @key, @key_len: the key
 * @change: '+' only in NEW, '-' only in OLD, '~' value changed
 */
struct cfs_diff_xattr {
	const char *key;
	size_t key_len;
	char change;
};

/**
 * struct cfs_diff_entry - one path that differs between OLD and NEW
 * @change: '+' only in NEW, '-' only in OLD, 'M' in both but different
 * @path: "/a/b", NUL-terminated (raw bytes)
 * @old, @new: the inodes, NULL on the side the path is missing from
 * @changes: for 'M', CFS_DIFF_* bits
 * @old_link, @new_link: for CFS_DIFF_HARDLINK, the first path (in walk
 *	order) naming the inode on each side when it has several names, or NULL
 * @xattrs, @n_xattrs: for CFS_DIFF_XATTRS, the keys that differ, sorted
 *
 * Valid only during the callback.
 */
struct cfs_diff_entry {
	char change;
	const char *path;
	const struct cfs_inode *old, *new;
	unsigned int changes;
	const char *old_link, *new_link;
	const struct cfs_diff_xattr *xattrs;
	size_t n_xattrs;
};

/** typedef cfs_diff_fn - called per differing path; nonzero stops the diff */
typedef int (*cfs_diff_fn)(void *ctx, const struct cfs_diff_entry *e);

/**
 * struct cfs_diff_stats - counts of a diff
 * @added, @removed, @modified: paths, as passed to the callback
 * @objects_both, @objects_old, @objects_new: distinct backing objects (by
 *	digest when recorded, else by backing path) in both images, only in
 *	OLD, only in NEW
 * @fetch_bytes: the sizes of the objects only in NEW: what a machine that
 *	holds OLD's objects must fetch to have NEW's
 */
struct cfs_diff_stats {
	uint64_t added, removed, modified;
	uint64_t objects_both, objects_old, objects_new;
	uint64_t fetch_bytes;
};

/**
 * cfs_diff_images() - compare two images path by path
 *
 * Walks both trees at once, each directory's entries merged in their
 * stored (sorted) order, so memory grows with the depth of the trees and
 * the number of objects, not with the images. Paths come depth first,
 * parents before children; under a path that is a directory only on one
 * side, every path below it is passed as added or removed too.
 *
 * Return: 0 (@st filled), what @fn returned to stop, or -errno
 * (-EFSCORRUPTED with a message when an image is corrupt).
 */
int cfs_diff_images(struct cfs_image *old, struct cfs_image *new, cfs_diff_fn fn, void *ctx,
		    struct cfs_diff_stats *st);

#pragma GCC visibility pop

#endif /* CFS_DIFF_H */
