// SPDX-License-Identifier: GPL-2.0
/*
 * composefs file handles (name_to_handle_at, open_by_handle_at, NFS export).
 * A handle is the inode's index in the image: the image is immutable while
 * mounted, so an index names the same inode for the life of the mount and
 * the generation is always 0. The format records no parent links, so a
 * directory handle resolves only while the directory is in the dcache.
 */
#include <linux/exportfs.h>
#include <linux/fs.h>

#include "cfs-internal.h"

#define CFS_FH_LEN 3 /* u32 words: index low, index high, generation */

static int cfs_encode_fh(struct inode *inode, u32 *fh, int *max_len,
			 struct inode *parent)
{
	u64 index = CFS_I(inode)->index;

	if (*max_len < CFS_FH_LEN) {
		*max_len = CFS_FH_LEN;
		return FILEID_INVALID;
	}
	fh[0] = lower_32_bits(index);
	fh[1] = upper_32_bits(index);
	fh[2] = 0;
	*max_len = CFS_FH_LEN;
	return FILEID_INO64_GEN;
}

static struct dentry *cfs_fh_to_dentry(struct super_block *sb, struct fid *fid,
				       int fh_len, int fh_type)
{
	struct inode *inode;
	u64 index;

	if (fh_type != FILEID_INO64_GEN || fh_len < CFS_FH_LEN)
		return NULL;
	if (fid->raw[2] != 0)
		return ERR_PTR(-ESTALE);
	index = (u64)fid->raw[1] << 32 | fid->raw[0];
	inode = cfs_iget(sb, index);
	if (IS_ERR(inode))
		/* Not an inode of this image: the handle is stale. */
		return ERR_PTR(PTR_ERR(inode) == -ENOMEM ? -ENOMEM : -ESTALE);
	return d_obtain_alias(inode);
}

static struct dentry *cfs_get_parent(struct dentry *child)
{
	/* No parent links in the format. */
	return ERR_PTR(-ESTALE);
}

const struct export_operations cfs_export_operations = {
	.encode_fh = cfs_encode_fh,
	.fh_to_dentry = cfs_fh_to_dentry,
	.get_parent = cfs_get_parent,
};
