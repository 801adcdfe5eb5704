// SPDX-License-Identifier: GPL-2.0
/*
 * composefs directories: readdir and lookup. A directory's position is the
 * number of entries before it (0 and 1 are "." and ".."), so telldir and
 * seekdir work with any getdents buffer size. Directory cycles in a corrupt
 * image end in ELOOP from d_splice_alias(), which refuses to make a
 * directory its own descendant.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/slab.h>

#include "cfs-internal.h"

static int cfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *inode = file_inode(file);
	struct cfs_fs *fs = CFS_FS(inode->i_sb);
	struct cfs_inode_info *ci = CFS_I(inode);
	struct cfs_chunk_buf *buf;
	u64 skip, first = 0;
	u32 c;
	int err = 0;

	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos < 2)
		return 0;
	skip = ctx->pos - 2;

	buf = kmalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	for (c = 0; c < ci->n_chunks; c++) {
		const struct cfs_chunk *chunk = &ci->chunks[c];
		unsigned int i;

		if (skip >= first + chunk->n_dentries) {
			first += chunk->n_dentries;
			continue;
		}
		err = cfs_load_chunk(fs, chunk, buf);
		if (err)
			break;
		for (i = skip > first ? skip - first : 0; i < buf->n_dentries; i++) {
			struct cfs_entry e;

			cfs_chunk_entry(buf, i, &e);
			if (e.index > U64_MAX - CFS_INODE_SECTION_OFFSET) {
				err = -EFSCORRUPTED;
				goto out;
			}
			if (!dir_emit(ctx, e.name, e.name_len,
				      cfs_index_to_ino(e.index), e.d_type))
				goto out;
			ctx->pos++;
		}
		first += chunk->n_dentries;
	}
out:
	kfree(buf);
	return err;
}

static struct dentry *cfs_lookup(struct inode *dir, struct dentry *dentry,
				 unsigned int flags)
{
	struct cfs_fs *fs = CFS_FS(dir->i_sb);
	struct inode *inode = NULL;
	u64 index;
	u8 d_type;
	int err;

	if (dentry->d_name.len > CFS_MAX_NAME_LEN)
		return ERR_PTR(-ENAMETOOLONG);

	err = cfs_dir_lookup(fs, CFS_I(dir), dentry->d_name.name,
			     dentry->d_name.len, &index, &d_type);
	if (err == -ENOENT)
		return d_splice_alias(NULL, dentry);
	if (err)
		return ERR_PTR(err);

	inode = cfs_iget(dir->i_sb, index);
	if (IS_ERR(inode))
		return ERR_CAST(inode);
	/* readdir reported d_type; an entry that names another type of inode
	 * is corrupt, not something to let through half-checked.
	 */
	if (d_type != fs_umode_to_dtype(inode->i_mode)) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: entry '%pd' has type %u, inode %llu is 0%o\n",
				    fs->descriptor, dentry, d_type, index,
				    inode->i_mode & S_IFMT);
		iput(inode);
		return ERR_PTR(-EFSCORRUPTED);
	}
	/* A directory reached again (a cycle or a hardlinked directory) is
	 * refused here with -ELOOP rather than walked forever.
	 */
	return d_splice_alias(inode, dentry);
}

const struct file_operations cfs_dir_operations = {
	.llseek = generic_file_llseek,
	.read = generic_read_dir,
	.iterate_shared = cfs_iterate,
};

const struct inode_operations cfs_dir_inode_operations = {
	.lookup = cfs_lookup,
	.listxattr = cfs_listxattr,
	.get_inode_acl = cfs_get_inode_acl,
};
