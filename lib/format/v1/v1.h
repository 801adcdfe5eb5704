/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the parts of the v1 backend (lib/format/v1/) share, and nothing
 * outside it uses: its state of an image and of an inode, the one decoder
 * of an inode, and what its table (format.c) names.
 */
#ifndef CFS_FORMAT_V1_H
#define CFS_FORMAT_V1_H

#include <stdint.h>

#include "cfs/build.h"
#include "cfs/mount.h"
#include "format/reader.h"

struct cfs_verifier;

/**
 * struct cfs_v1_image - what the v1 backend keeps of an open image in
 *	cfs_image.priv (CFS_V1_IMG())
 * @data_offset: where the variable data section starts, from the checked
 *	header
 */
struct cfs_v1_image {
	uint64_t data_offset;
};

CFS_IMAGE_STATE(cfs_v1_image, CFS_V1_IMG)

/**
 * struct cfs_v1_inode - what the v1 backend keeps of an inode in
 *	cfs_inode.priv (CFS_V1_I()), for itself and format/v1/verify.c
 * @xattrs_off: where the inode's xattrs are, in the variable data section
 * @flags: CFS_INODE_FLAGS_* as stored
 * @n_chunks: directories: number of entry chunks
 * @extent: bytes of the inode section the inode takes, its payload and
 *	fixed chunk, ending at the fixed chunk's end
 */
struct cfs_v1_inode {
	uint64_t xattrs_off;
	uint32_t flags;
	uint32_t n_chunks;
	uint64_t extent;
};

CFS_INODE_STATE(cfs_v1_inode, CFS_V1_I)

/**
 * cfs_v1_decode_inode() - decode and check v1 inode @ino of an image
 * @data: the image's bytes
 * @size: their number
 * @doff: the data section's offset, from a checked header
 * @ino: the inode's index in the inode section
 * @out: the inode, with CFS_V1_I() filled in
 * @strict: NULL for the reader's mode; a verifier for verify's strict mode
 *
 * The reader's mode stops at the first error, with a message naming the
 * inode and its offset. The strict mode reports every problem to @strict
 * (errors, and warnings of noncanonical encodings) and goes on wherever the
 * rest of the inode still makes sense; the xattr set's own content, and
 * whether it crosses a page, are left to the caller.
 *
 * Return: reader's mode: 0 or -EFSCORRUPTED; strict mode: 1 when *@out can
 * be used (perhaps with problems reported), 0 when not.
 */
int cfs_v1_decode_inode(const uint8_t *data, uint64_t size, uint64_t doff, uint64_t ino,
			struct cfs_inode *out, struct cfs_verifier *strict);

/*
 * What the format's table (format.c) names: the reader's (reader.c), as
 * struct cfs_format describes them, the writer (writer.c), the checks
 * (verify.c) and the mount (mount.c).
 */
int cfs_v1_open(struct cfs_image *img);
int cfs_v1_inode(struct cfs_image *img, uint64_t ino, struct cfs_inode *out);
int cfs_v1_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
			 struct cfs_dir_iter *it);
int cfs_v1_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out);
void cfs_v1_dir_iter_skip(struct cfs_dir_iter *it);
int cfs_v1_lookup(struct cfs_image *img, const struct cfs_inode *dir, const char *name,
		  size_t name_len, uint64_t *ino);
int cfs_v1_xattrs(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		  void *ctx);
void cfs_v1_describe(const struct cfs_image *img, struct cfs_image_desc *d);
void cfs_v1_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			   struct cfs_inode_desc *d);
struct cfs_node;
int cfs_v1_write(struct cfs_node *root, const struct cfs_write_options *opts, int fd);
int cfs_v1_verify(const struct cfs_format *f, struct cfs_verifier *v);
int cfs_v1_mount(int fd, const char *image, const char *mnt,
		 const struct cfs_mount_options *o);

#endif /* CFS_FORMAT_V1_H */
