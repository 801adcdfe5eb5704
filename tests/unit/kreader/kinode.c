// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kreader_inode(): the kernel module's decoder of a v1 inode, driven as a
 * lookup drives it, on the userspace stand-ins of fuzz/kshim/ (as
 * fuzz/fuzz_kreader.c does). Built with the kernel's dialect and warnings.
 */
#include "kshim.h"
#include "cfs-internal.h"
#include "kinode.h"

static int dir_table(struct cfs_fs *fs, const struct cfs_dinode *di)
{
	struct cfs_inode_info *ci = calloc(1, sizeof(*ci));
	struct super_block sb = { .s_fs_info = fs };
	struct cfs_dir_table *t;
	int err = 0;

	if (!ci)
		return -ENOMEM;
	ci->vfs_inode.i_sb = &sb;
	ci->index = di->index;
	ci->payload_len = di->payload_len;
	t = cfs_dir_table(&ci->vfs_inode);
	if (IS_ERR(t))
		err = PTR_ERR(t);
	kvfree(ci->dir);
	free(ci);
	return err;
}

int kreader_inode(const uint8_t *data, size_t size, uint64_t index)
{
	struct inode inode = { .i_size = (loff_t)size };
	struct address_space mapping = { .data = data, .size = size, .host = &inode };
	struct file file = { .f_mapping = &mapping, .f_inode = &inode };
	struct cfs_fs fs = { .descriptor = &file };
	u8 digest[CFS_DIGEST_SIZE];
	struct cfs_dinode di;
	char *payload;
	int err;

	err = cfs_reader_init(&fs);
	if (err)
		return err;
	err = cfs_read_dinode(&fs, index, &di);
	if (err)
		return err;
	switch (di.mode & S_IFMT) {
	case S_IFREG:
	case S_IFLNK:
		err = cfs_read_payload(&fs, &di, &payload);
		if (err)
			return err;
		/* kmod/inode.c: a digest the backing path must spell */
		if (S_ISREG(di.mode) && !di.has_digest && payload &&
		    (di.flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD) &&
		    cfs_digest_from_payload(payload, di.payload_len, digest))
			err = -EFSCORRUPTED;
		kfree(payload);
		return err;
	case S_IFDIR:
		return dir_table(&fs, &di);
	}
	return 0;
}
