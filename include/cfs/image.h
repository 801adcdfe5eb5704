/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Reading images of either format: inodes, directories, xattrs, walks and
 * dumps. Which format an image has is the reader's business; a caller
 * learns it only from cfs_image_describe().
 */
#ifndef CFS_IMAGE_H
#define CFS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfs/util.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

/* ---- reading images (reader.c) ---- */

struct cfs_image;

/**
 * struct cfs_inode - one decoded inode; everything the image records
 *
 * @payload points into the image and stays valid until cfs_image_close().
 * All fields have been checked against the image: a directory's chunk table
 * fits, a payload lies inside the inode section, and so on.
 */
struct cfs_inode {
	uint64_t ino; /* v1: offset of the fixed chunk in the inode section; EROFS: nid */
	uint32_t mode;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint32_t rdev;
	uint64_t size; /* regular files: content size; others: as stored */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	int64_t ctime_sec;
	uint32_t ctime_nsec;
	const char *payload; /* backing path or symlink target, not terminated */
	uint32_t payload_len;
	bool has_digest; /* from DIGEST or DIGEST_FROM_PAYLOAD */
	uint8_t digest[CFS_DIGEST_SIZE];
	uint32_t xattrs_len; /* bytes of xattrs the format stores for it; 0: none */
	uint64_t offset; /* file offset of the inode, in either format */
	/* what the image's format keeps of the inode for itself; private to libcfs */
	uint64_t priv[6];
};

/**
 * cfs_image_open() - open an image file for reading
 *
 * Checks the header; inodes are decoded on demand. Return: 0 and *@out, or
 * -errno (-EFSCORRUPTED for a bad header, with a message).
 */
int cfs_image_open(const char *path, struct cfs_image **out);

/**
 * cfs_image_open_mem() - read an image held in memory (tests, fuzzers)
 *
 * @data must stay valid until cfs_image_close(); it is not copied.
 */
int cfs_image_open_mem(const void *data, size_t len, struct cfs_image **out);

void cfs_image_close(struct cfs_image *img);

/**
 * enum cfs_image_view - how the reader presents what an image stores
 * @CFS_VIEW_MOUNTED: as a mount shows it (the default): a file whose content
 *	is in the image has the digest of that content, and the overlay
 *	xattrs composefs adds for its own whiteouts are hidden
 * @CFS_VIEW_STORED: what a writer needs to make the image again, as
 *	composefs-info reads it: no digest but a recorded one, and an
 *	inode's xattrs in stored order (EROFS: inline ones, then shared ones)
 *	with only those hidden that the writer adds itself
 *
 * The two differ for composefs 1.0 (EROFS) images only.
 */
enum cfs_image_view {
	CFS_VIEW_MOUNTED,
	CFS_VIEW_STORED,
};

/**
 * cfs_image_set_view() - choose how later calls present @img
 *
 * Set it before reading inodes: an inode decoded in one view and listed in
 * the other is not meaningful. Not to be changed while other threads read.
 */
void cfs_image_set_view(struct cfs_image *img, enum cfs_image_view view);

/** cfs_image_root() - index of the root directory's inode */
uint64_t cfs_image_root(const struct cfs_image *img);

/** cfs_image_size() - image size in bytes */
uint64_t cfs_image_size(const struct cfs_image *img);

/** cfs_image_version() - the header's format version (EROFS: composefs_version) */
unsigned int cfs_image_version(const struct cfs_image *img);

/**
 * struct cfs_image_desc - how to present an image's format, from its reader
 * @format: a stable name for scripts: "composefs-v1" or "erofs"
 * @label: what the summary calls the format line ("format version", "format")
 * @text: its value, in words ("1", "composefs 1.0 (EROFS), composefs_version 0")
 */
struct cfs_image_desc {
	const char *format;
	const char *label;
	char text[96];
	uint64_t reserved[4]; /* room for what a later libcfs reports; zeroed */
};

/** cfs_image_describe() - fill *@d for @img */
void cfs_image_describe(const struct cfs_image *img, struct cfs_image_desc *d);

/**
 * struct cfs_inode_desc - how to present one inode's place in its image
 * @ino_kind: what the inode number is ("fixed chunk", "nid,")
 * @has_flags: the format stores per-inode flags worth showing (@flags)
 * @has_chunks: directories: the format stores a chunk count (@n_chunks)
 * @flags: with @has_flags, the flags as stored
 * @n_chunks: with @has_chunks, the number of chunks of entries
 * @digest_note: where the digest comes from, "" or " (...)"
 * @xattrs_offset: the file offset of the inode's xattrs (when it has any)
 * @flag_names: with @has_flags, the flags' names, space-separated
 * @content_in_image: a regular file whose content the image holds itself
 *	(cfs_image_read() reads it), so it has no backing file
 */
struct cfs_inode_desc {
	const char *ino_kind;
	bool has_flags, has_chunks;
	uint32_t flags, n_chunks;
	const char *digest_note;
	uint64_t xattrs_offset;
	char flag_names[160];
	bool content_in_image;
	uint64_t reserved[4]; /* room for what a later libcfs reports; zeroed */
};

/** cfs_inode_describe() - fill *@d for @in, an inode of @img */
void cfs_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			struct cfs_inode_desc *d);

/**
 * cfs_image_read() - copy @len bytes at @off of a file's in-image content
 *
 * For regular files whose content is in the image (cfs_inode_desc's
 * @content_in_image). Return: 0, -EINVAL (not such a
 * file, or past its end) or -EFSCORRUPTED.
 */
int cfs_image_read(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		   size_t len);

/**
 * cfs_image_inode() - decode the inode at index @ino
 *
 * Return: 0, or -EFSCORRUPTED with a message naming the inode and what is
 * wrong with it.
 */
int cfs_image_inode(struct cfs_image *img, uint64_t ino, struct cfs_inode *out);

/**
 * struct cfs_dirent - one directory entry; @name points into the image
 */
struct cfs_dirent {
	const char *name; /* not NUL-terminated */
	size_t name_len;
	uint64_t ino;
	uint8_t d_type;
};

/**
 * struct cfs_dir_iter - walks a directory's entries in stored (sorted) order
 *
 * Owned by the caller, filled by cfs_dir_iter_init(); no cleanup needed.
 */
struct cfs_dir_iter {
	struct cfs_image *img;
	uint64_t dir_ino;
	const char *prev_name; /* the last entry returned, to check the order */
	size_t prev_len;
	/* where the format's reader is in the directory; private to libcfs */
	uint64_t priv[6];
};

int cfs_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
		      struct cfs_dir_iter *it);

/**
 * cfs_dir_iter_next() - the next entry
 *
 * Return: 1 and *@out, 0 at the end, or -EFSCORRUPTED (bad chunk or name).
 */
int cfs_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out);

/**
 * cfs_dir_iter_skip() - after an error from cfs_dir_iter_next(), go on past
 *	what failed where the format can
 *
 * The next call reads the next unit of entries: v1's next chunk, EROFS's
 * next directory block; the rest of the one that failed is lost.
 */
void cfs_dir_iter_skip(struct cfs_dir_iter *it);

/**
 * cfs_image_lookup() - find @name in directory @dir by binary search
 *
 * Return: 0 and *@ino, -ENOENT, -ENOTDIR, or -EFSCORRUPTED.
 */
int cfs_image_lookup(struct cfs_image *img, const struct cfs_inode *dir,
		     const char *name, size_t name_len, uint64_t *ino);

/**
 * cfs_image_resolve() - the inode at @path ("/", "/a/b" or "a/b")
 *
 * Symlinks are not followed. Return: 0, -ENOENT, -ENOTDIR, -EFSCORRUPTED.
 */
int cfs_image_resolve(struct cfs_image *img, const char *path, struct cfs_inode *out);

/**
 * struct cfs_xattr - one extended attribute; pointers into the image
 */
struct cfs_xattr {
	const char *key;
	size_t key_len;
	const uint8_t *value;
	size_t value_len;
};

/**
 * typedef cfs_xattr_fn - called for each xattr of an inode, in stored order
 *
 * Return: 0 to go on, anything else to stop and return it.
 */
typedef int (*cfs_xattr_fn)(void *ctx, const struct cfs_xattr *x);

/**
 * cfs_image_xattrs() - call @fn for each xattr of @inode
 *
 * Return: 0, what @fn returned to stop, or -EFSCORRUPTED.
 */
int cfs_image_xattrs(struct cfs_image *img, const struct cfs_inode *inode,
		     cfs_xattr_fn fn, void *ctx);

/**
 * struct cfs_walk_entry - one path met by cfs_image_walk()
 *
 * Everything points into the walker's state and is valid only during the call.
 */
struct cfs_walk_entry {
	const char *path; /* "/" for the root, else "/a/b"; NUL-terminated */
	size_t path_len;
	const struct cfs_inode *inode;
	const char *first_path; /* a hardlink met before: the inode's first path; else NULL */
	unsigned int depth; /* 0 for the root */
	uint8_t d_type; /* as the directory entry records it; 0 for the root */
};

/**
 * typedef cfs_walk_fn - called for each path, parents before children
 *
 * Return: 0 to go on, anything else to stop the walk and return it.
 */
typedef int (*cfs_walk_fn)(void *ctx, const struct cfs_walk_entry *e);

/**
 * cfs_image_walk() - visit every path of the image, depth first
 *
 * Each directory's entries come in stored (byte) order, a directory before
 * its entries. A non-directory inode met again is passed with @first_path
 * set, whatever its nlink says. The walk uses an explicit stack on the heap
 * and visits every directory at most once: a directory reached a second time
 * (a cycle, or a directory hardlink) is corruption, so the walk always ends.
 * It reads the tree twice, first to find the inodes that more than one entry
 * names, so that what it holds beyond the mapped image does not grow with
 * the number of entries.
 *
 * Return: 0, what @fn returned to stop, -ENOMEM, or -EFSCORRUPTED.
 */
int cfs_image_walk(struct cfs_image *img, cfs_walk_fn fn, void *ctx);

/**
 * cfs_image_write_dump() - write the image as a dumpfile to @out
 *
 * Paths in sorted order, parents first; hardlinks after their first path
 * as "@" entries that repeat the inode's fields, as composefs-info writes
 * them. What the fields hold follows the image's view: CFS_VIEW_STORED
 * gives the dump that builds the image again (composefs-info's, byte for
 * byte, for an image mkcomposefs wrote). Return: 0 or -errno.
 */
int cfs_image_write_dump(struct cfs_image *img, FILE *out);

#pragma GCC visibility pop

#endif /* CFS_IMAGE_H */
