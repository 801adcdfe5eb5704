// SPDX-License-Identifier: GPL-2.0
/*
 * composefs inodes: instantiating a VFS inode from a decoded image inode
 * (one VFS inode per image index, so hardlinks share it), the inode cache,
 * and the inode operations of regular files, symlinks and special files.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/posix_acl.h>
#include <linux/slab.h>
#include <linux/stat.h>
#include <linux/user_namespace.h>

#include "cfs-internal.h"
#include "compat.h"

static struct kmem_cache *cfs_inode_cachep;

/**
 * cfs_alloc_inode() - ->alloc_inode: a cfs_inode_info with nothing decoded
 * @sb: the superblock
 *
 * Return: the embedded VFS inode, or NULL.
 */
struct inode *cfs_alloc_inode(struct super_block *sb)
{
	struct cfs_inode_info *ci;

	ci = alloc_inode_sb(sb, cfs_inode_cachep, GFP_KERNEL);
	if (!ci)
		return NULL;
	ci->index = 0;
	ci->payload = NULL;
	ci->payload_len = 0;
	ci->has_digest = false;
	ci->xattrs_offset = 0;
	ci->xattrs_len = 0;
	ci->dir = NULL;
	ci->file = NULL;
	return &ci->vfs_inode;
}

/**
 * cfs_free_inode() - ->free_inode: release what cfs_fill_inode() allocated
 * @inode: the inode
 *
 * Called after an RCU grace period: RCU path walks may read i_link (the
 * payload) until then.
 */
void cfs_free_inode(struct inode *inode)
{
	struct cfs_inode_info *ci = CFS_I(inode);

	kfree(ci->payload);
	kfree(ci->dir);
	kmem_cache_free(cfs_inode_cachep, ci);
}

/**
 * cfs_evict_inode() - ->evict_inode: drop the kept backing file
 * @inode: the inode
 *
 * No open can race with this: an open file holds the inode.
 */
void cfs_evict_inode(struct inode *inode)
{
	struct cfs_inode_info *ci = CFS_I(inode);

	/* Close the backing file the opens shared (file.c). */
	if (ci->file) {
		fput(ci->file);
		ci->file = NULL;
	}
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
}

static void cfs_inode_init_once(void *p)
{
	struct cfs_inode_info *ci = p;

	inode_init_once(&ci->vfs_inode);
}

/**
 * cfs_inode_cache_init() - create the inode slab cache (module init)
 *
 * Return: 0 or -ENOMEM.
 */
int cfs_inode_cache_init(void)
{
	cfs_inode_cachep = kmem_cache_create("composefs_inode",
					     sizeof(struct cfs_inode_info), 0,
					     SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					     cfs_inode_init_once);
	return cfs_inode_cachep ? 0 : -ENOMEM;
}

/**
 * cfs_inode_cache_destroy() - destroy it (module exit), after RCU frees
 */
void cfs_inode_cache_destroy(void)
{
	/* Inodes are freed after RCU grace periods; wait for them. */
	rcu_barrier();
	kmem_cache_destroy(cfs_inode_cachep);
}

/* Fill a new (I_NEW) inode from the image. */
static int cfs_fill_inode(struct inode *inode, const struct cfs_dinode *di)
{
	struct super_block *sb = inode->i_sb;
	struct cfs_fs *fs = CFS_FS(sb);
	struct cfs_inode_info *ci = CFS_I(inode);
	kuid_t uid = make_kuid(sb->s_user_ns, di->uid);
	kgid_t gid = make_kgid(sb->s_user_ns, di->gid);
	int err;

	if (!uid_valid(uid) || !gid_valid(gid))
		return -EOVERFLOW;

	ci->index = di->index;
	ci->xattrs_len = di->xattrs_len;
	ci->xattrs_offset = fs->data_offset + di->xattrs_offset;

	inode->i_mode = di->mode;
	inode->i_uid = uid;
	inode->i_gid = gid;
	set_nlink(inode, di->nlink);
	inode_set_mtime(inode, di->mtime_sec, di->mtime_nsec);
	inode_set_atime(inode, di->mtime_sec, di->mtime_nsec);
	inode_set_ctime(inode, di->ctime_sec, di->ctime_nsec);
	/* i_mapping keeps the VFS's empty_aops: the data lives in the
	 * backing file's page cache, never in ours.
	 */
	/* No xattrs, no ACL: permission checks need not leave RCU walk. */
	if (!di->xattrs_len)
		cache_no_acl(inode);

	switch (di->mode & S_IFMT) {
	case S_IFREG:
		err = cfs_read_payload(fs, di, &ci->payload);
		if (err)
			return err;
		ci->payload_len = di->payload_len;
		if (di->has_digest) {
			memcpy(ci->digest, di->digest, CFS_DIGEST_SIZE);
			ci->has_digest = true;
		} else if ((di->flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD) &&
			   ci->payload) {
			if (cfs_digest_from_payload(ci->payload, ci->payload_len,
						    ci->digest)) {
				pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: inode %llu: backing path encodes no digest\n",
						    fs->descriptor, di->index);
				return -EFSCORRUPTED;
			}
			ci->has_digest = true;
		}
		inode->i_size = di->size;
		inode->i_blocks = DIV_ROUND_UP_ULL(di->size, 512);
		inode->i_op = &cfs_file_inode_operations;
		inode->i_fop = &cfs_file_operations;
		break;
	case S_IFLNK:
		err = cfs_read_payload(fs, di, &ci->payload);
		if (err)
			return err;
		ci->payload_len = di->payload_len;
		inode->i_link = ci->payload;
		inode->i_size = di->payload_len;
		inode->i_op = &cfs_symlink_inode_operations;
		break;
	case S_IFDIR:
		/* The chunk table is read on first lookup or readdir. */
		ci->payload_len = di->payload_len;
		inode->i_size = di->size;
		inode->i_op = &cfs_dir_inode_operations;
		inode->i_fop = &cfs_dir_operations;
		break;
	case S_IFCHR:
	case S_IFBLK:
		/*
		 * A device node in an image mounted from a user namespace
		 * would hand its owner the device: refuse it.
		 */
		if (sb->s_user_ns != &init_user_ns)
			return -EPERM;
		fallthrough;
	default:
		inode->i_size = di->size;
		inode->i_op = &cfs_special_inode_operations;
		init_special_inode(inode, di->mode, new_decode_dev(di->rdev));
		break;
	}
	return 0;
}

/**
 * cfs_iget() - the VFS inode of image inode @index
 * @sb: the composefs superblock
 * @index: the inode's index in the image
 *
 * Return: a referenced inode, or ERR_PTR(-errno).
 */
struct inode *cfs_iget(struct super_block *sb, u64 index)
{
	struct cfs_dinode di;
	struct inode *inode;
	int err;

	if (index > U64_MAX - CFS_INODE_SECTION_OFFSET)
		return ERR_PTR(-EFSCORRUPTED);
	inode = iget_locked(sb, cfs_index_to_ino(index));
	if (!inode)
		return ERR_PTR(-ENOMEM);
	/* Not new: a cached inode. One whose fill failed is never handed
	 * out (iget_failed() unhashes it, and iget_locked() looks again).
	 */
	if (!cfs_inode_is_new(inode))
		return inode;

	err = cfs_read_dinode(CFS_FS(sb), index, &di);
	if (!err)
		err = cfs_fill_inode(inode, &di);
	if (err) {
		iget_failed(inode);
		return ERR_PTR(err);
	}
	unlock_new_inode(inode);
	return inode;
}

const struct inode_operations cfs_file_inode_operations = {
	.listxattr = cfs_listxattr,
	.get_inode_acl = cfs_get_inode_acl,
};

const struct inode_operations cfs_symlink_inode_operations = {
	.get_link = simple_get_link,
	.listxattr = cfs_listxattr,
};

const struct inode_operations cfs_special_inode_operations = {
	.listxattr = cfs_listxattr,
	.get_inode_acl = cfs_get_inode_acl,
};
