// SPDX-License-Identifier: GPL-2.0
/*
 * composefs file handles (name_to_handle_at, open_by_handle_at, NFS export).
 * A handle is of the kernel's FILEID_INO64_GEN type: the inode number stat
 * shows (st_ino) and, as its 32-bit generation, a MAC of it, siphash keyed
 * by a random key drawn at mount: the image is immutable while mounted, so
 * a number names the same inode for the life of the mount, and a handle
 * this mount did not give out, or one from an earlier mount, names no
 * inode (ESTALE) instead of whatever decodes at an offset; as a
 * generation does for an inode number reused.
 * A directory's parent is the one its first lookup recorded (dir.c), so a
 * directory handle reconnects after its dentries were dropped.
 */
#include <linux/exportfs.h>
#include <linux/fs.h>
#include <linux/siphash.h>

#include "cfs-internal.h"

#define CFS_FH_LEN 3 /* u32 words: u64 st_ino, u32 MAC (struct fid's i64) */

static u32 cfs_fh_mac(struct cfs_fs *fs, u64 ino)
{
	return lower_32_bits(siphash_1u64(ino, &fs->fh_key));
}

static int cfs_encode_fh(struct inode *inode, u32 *fh, int *max_len,
			 struct inode *parent)
{
	struct fid *fid = (struct fid *)fh;
	u64 ino = cfs_index_to_ino(CFS_I(inode)->index);

	if (*max_len < CFS_FH_LEN) {
		*max_len = CFS_FH_LEN;
		return FILEID_INVALID;
	}
	fid->i64.ino = ino;
	fid->i64.gen = cfs_fh_mac(CFS_FS(inode->i_sb), ino);
	*max_len = CFS_FH_LEN;
	return FILEID_INO64_GEN;
}

static struct dentry *cfs_fh_to_dentry(struct super_block *sb, struct fid *fid,
				       int fh_len, int fh_type)
{
	struct inode *inode;
	u64 ino;

	if (fh_type != FILEID_INO64_GEN || fh_len < CFS_FH_LEN)
		return NULL;
	ino = fid->i64.ino;
	if (fid->i64.gen != cfs_fh_mac(CFS_FS(sb), ino) ||
	    ino < CFS_INODE_SECTION_OFFSET)
		return ERR_PTR(-ESTALE);
	inode = cfs_iget(sb, cfs_ino_to_index(ino));
	if (IS_ERR(inode))
		return ERR_PTR(PTR_ERR(inode) == -ENOMEM ? -ENOMEM : -ESTALE);
	return d_obtain_alias(inode);
}

static struct dentry *cfs_get_parent(struct dentry *child)
{
	struct super_block *sb = child->d_sb;
	struct inode *inode;
	u64 parent;

	if (cfs_parent_of(CFS_FS(sb), CFS_I(d_inode(child))->index, &parent))
		return ERR_PTR(-ESTALE);
	inode = cfs_iget(sb, parent);
	if (IS_ERR(inode))
		return ERR_CAST(inode);
	return d_obtain_alias(inode);
}

const struct export_operations cfs_export_operations = {
	.encode_fh = cfs_encode_fh,
	.fh_to_dentry = cfs_fh_to_dentry,
	.get_parent = cfs_get_parent,
};
