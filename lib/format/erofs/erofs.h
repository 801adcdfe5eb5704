/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the parts of the EROFS backend (lib/format/erofs/) share, and nothing
 * outside it uses: its state of an inode, and the reader's functions its
 * verify calls on a struct cfs_image of its own.
 */
#ifndef CFS_FORMAT_EROFS_H
#define CFS_FORMAT_EROFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/build.h"
#include "cfs/mount.h"
#include "format/reader.h"

/* Regular files up to this size go inside a composefs 1.0 image. */
#define CFS_EROFS_INLINE_MAX 64
/* The largest file it can hold: a block map of 1024 chunks of 2^43 bytes. */
#define CFS_EROFS_MAX_FILE_SIZE (1ULL << 53)

/**
 * struct cfs_erofs_image - what the EROFS backend keeps of an open image
 * @meta_base, @xattr_base: file offsets nids and shared xattr ids count from
 * @build_time, @build_time_nsec: the mtime of compact inodes
 * @keys, @n_keys, @keys_cap: interned xattr keys (an open-addressed hash
 *	set), so that struct cfs_xattr keys live as long as the image; under
 *	the image's @keys_lock
 */
struct cfs_erofs_image {
	uint64_t meta_base, xattr_base;
	int64_t build_time;
	uint32_t build_time_nsec;
	char **keys;
	size_t n_keys, keys_cap;
};

CFS_IMAGE_STATE(cfs_erofs_image, CFS_EROFS_IMG)

/**
 * struct cfs_erofs_inode - what the EROFS backend keeps of an inode in
 *	cfs_inode.priv (CFS_EROFS_I()), for itself and format/erofs/verify.c
 * @data_blocks: file offset of the first data block
 * @data_tail: file offset of the inline tail
 * @tail_start: logical offset the tail holds
 * @xattrs_off: file offset of the inode's xattrs (cfs_inode.xattrs_len bytes)
 * @marks: overlay whiteout markers, for the xattr listing
 * @has_content: a regular file whose content is in the image (its digest is
 *	then computed from it)
 */
struct cfs_erofs_inode {
	uint64_t data_blocks;
	uint64_t data_tail;
	uint64_t tail_start;
	uint64_t xattrs_off;
	uint32_t marks;
	bool has_content;
};

CFS_INODE_STATE(cfs_erofs_inode, CFS_EROFS_I)

/*
 * The EROFS backend's functions format/erofs/verify.c calls itself, on a struct
 * cfs_image of its own.
 */

/* One raw xattr: @key is in a buffer of the caller's, valid during the call. */
typedef int (*cfs_erofs_raw_fn)(void *ctx, const char *key, size_t key_len,
				const uint8_t *value, size_t value_len);

/*
 * Every xattr of inode @nid as stored, composefs's own and escaped ones
 * included, shared ones first; for verify. -EFSCORRUPTED with a message
 * when one does not fit.
 */
int cfs_erofs_raw_xattrs(const struct cfs_image *img, uint64_t nid, cfs_erofs_raw_fn fn,
			 void *ctx);

/* Does the image start with the composefs 1.0 (EROFS) magic? */
bool cfs_erofs_magic(const uint8_t *data, uint64_t size);

int cfs_erofs_open(struct cfs_image *img);
void cfs_erofs_close(struct cfs_image *img);
int cfs_erofs_inode(struct cfs_image *img, uint64_t nid, struct cfs_inode *out);

/*
 * The rest of what the format's table (format.c) names: the reader's
 * (reader.c), as struct cfs_format describes them, the writer
 * (writer.c), the checks (verify.c) and the mount (mount.c).
 */
int cfs_erofs_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
			    struct cfs_dir_iter *it);
int cfs_erofs_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out);
void cfs_erofs_dir_iter_skip(struct cfs_dir_iter *it);
int cfs_erofs_xattrs(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		     void *ctx);
int cfs_erofs_read(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		   size_t len);
bool cfs_erofs_content_in_image(const struct cfs_inode *in);
void cfs_erofs_describe(const struct cfs_image *img, struct cfs_image_desc *d);
void cfs_erofs_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			      struct cfs_inode_desc *d);
struct cfs_node;
int cfs_erofs_write(struct cfs_node *root, const struct cfs_write_options *opts, int fd);
struct cfs_verifier;
int cfs_erofs_verify(const struct cfs_format *f, struct cfs_verifier *v);
int cfs_erofs_mount(int fd, const char *image, const char *mnt,
		    const struct cfs_mount_options *o);

#endif /* CFS_FORMAT_EROFS_H */
