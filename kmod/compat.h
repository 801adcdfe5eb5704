/* SPDX-License-Identifier: GPL-2.0 */
/*
 * composefs kernel module: the differences between the kernel lines the
 * module builds for (6.12 and the newest; docs/kernel.md), in one place, so
 * that the VFS code is written once. Each is decided by a probe of the
 * kernel's own headers in Kbuild (a CFS_* define) where a distribution
 * backports the change, so that a version number would not tell.
 */
#ifndef CFS_COMPAT_H
#define CFS_COMPAT_H

#include <linux/backing-file.h>
#include <linux/fs.h>
#include <linux/uio.h>

/*
 * backing_file_open() takes the user's struct file (Debian's 6.12 and
 * upstream from 6.13) or, in upstream 6.12.0, its path.
 */
static inline struct file *cfs_backing_file_open(const struct file *user,
						 int flags,
						 const struct path *real,
						 const struct cred *cred)
{
#ifdef CFS_BACKING_OPEN_USER_FILE
	return backing_file_open(user, flags, real, cred);
#else
	return backing_file_open(&user->f_path, flags, real, cred);
#endif
}

/*
 * struct backing_file_ctx names the user's file in 6.12; later kernels take
 * it from the kiocb (reads, splice) or the vma (mmap) instead.
 */
static inline void cfs_backing_ctx_set_user(struct backing_file_ctx *ctx,
					    struct file *user)
{
#ifdef CFS_BACKING_CTX_USER_FILE
	ctx->user_file = user;
#endif
}

/*
 * backing_file_splice_read() takes the position (6.12) or a kiocb of the
 * user's file that carries it (later kernels).
 */
static inline ssize_t cfs_backing_splice_read(struct file *real,
					      struct file *user, loff_t *ppos,
					      struct pipe_inode_info *pipe,
					      size_t len, unsigned int flags,
					      struct backing_file_ctx *ctx)
{
#ifdef CFS_BACKING_SPLICE_KIOCB
	struct kiocb iocb;
	ssize_t ret;

	init_sync_kiocb(&iocb, user);
	iocb.ki_pos = *ppos;
	ret = backing_file_splice_read(real, &iocb, pipe, len, flags, ctx);
	*ppos = iocb.ki_pos;
	return ret;
#else
	return backing_file_splice_read(real, ppos, pipe, len, flags, ctx);
#endif
}

/*
 * Whether iget_locked() handed out a new inode: i_state is a plain word in
 * 6.12 and a struct behind accessors later.
 */
static inline bool cfs_inode_is_new(struct inode *inode)
{
#ifdef CFS_INODE_STATE_ACCESSORS
	return inode_state_read_once(inode) & I_NEW;
#else
	return inode->i_state & I_NEW;
#endif
}

#endif /* CFS_COMPAT_H */
