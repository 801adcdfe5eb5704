// SPDX-License-Identifier: GPL-2.0
/*
 * composefs regular files. Opening one resolves its backing path beneath
 * each basedir in turn (never following symlinks, never leaving the
 * basedir; the inode keeps the result for the next open while it still
 * names the object), checks the backing file's fs-verity digest against the one the
 * image records, and opens it as a backing file. Reads, mmap and splice go
 * to the backing file, so its page cache is the only copy of the data,
 * shared by every image and path that reaches the same object.
 */
#include <linux/backing-file.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/pipe_fs_i.h>
#include <linux/uio.h>
#include <uapi/linux/hash_info.h>

#include "cfs-internal.h"

/* Resolution of a backing path: beneath the basedir, no symlinks anywhere
 * (not even the last component), no mount crossings, and no ".." above the
 * basedir (-EXDEV). The basedir is the root of the lookup, so an absolute
 * path is taken relative to it.
 */
#define CFS_BACKING_LOOKUP (LOOKUP_BENEATH | LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV)

static int cfs_find_backing(struct cfs_fs *fs, const char *rel,
			    struct path *out)
{
	unsigned int i;

	for (i = 0; i < fs->n_bases; i++) {
		struct vfsmount *mnt = fs->bases[i];
		int err;

		err = vfs_path_lookup(mnt->mnt_root, mnt, rel,
				      CFS_BACKING_LOOKUP, out);
		/* This basedir does not hold the path (ENOTDIR: a component
		 * is not a directory here, say "xx" is a file): try the next.
		 * Any other error is the answer.
		 */
		if (err != -ENOENT && err != -ENOTDIR)
			return err;
	}
	return -ENOENT;
}

/*
 * Whether @p, found for @rel by an earlier open, still names it: the
 * dentry hashed, and each component of @rel, from the last, the name of
 * the dentry at that level, up to the root of the basedir it was found in.
 * An unlink or a rename over the object unhashes its dentry; a rename of
 * it, or of a directory above it, changes a name or a parent. Paths with
 * "." or ".." are never taken as current: they are resolved every time.
 */
static bool cfs_backing_current(const struct path *p, const char *rel,
				size_t len)
{
	struct dentry *d = p->dentry;
	size_t end = len, start;
	unsigned int seq;
	bool ok = true;

	rcu_read_lock();
	seq = read_seqbegin(&rename_lock);
	for (;;) {
		while (end && rel[end - 1] == '/')
			end--;
		if (!end)
			break;
		for (start = end; start && rel[start - 1] != '/'; start--)
			;
		if (rel[start] == '.' &&
		    (end - start == 1 || (end - start == 2 && rel[start + 1] == '.'))) {
			ok = false;
			break;
		}
		if (d == p->mnt->mnt_root || d_unhashed(d) ||
		    d->d_name.len != end - start ||
		    memcmp(d->d_name.name, rel + start, end - start)) {
			ok = false;
			break;
		}
		d = READ_ONCE(d->d_parent);
		end = start;
	}
	if (d != p->mnt->mnt_root || read_seqretry(&rename_lock, seq))
		ok = false;
	rcu_read_unlock();
	return ok;
}

/*
 * The backing path of @inode: the one an earlier open resolved, while it
 * still names the object, else resolved again beneath the basedirs and
 * kept for the next open (regular files only). The caller runs with the
 * mounter's credentials; every open still checks what it opens.
 */
static int cfs_backing_path(struct inode *inode, struct path *out)
{
	struct cfs_inode_info *ci = CFS_I(inode);
	struct path old = {};
	int err;

	spin_lock(&inode->i_lock);
	*out = ci->backing;
	if (out->dentry)
		path_get(out);
	spin_unlock(&inode->i_lock);
	if (out->dentry) {
		if (cfs_backing_current(out, ci->payload, ci->payload_len))
			return 0;
		path_put(out);
	}

	err = cfs_find_backing(CFS_FS(inode->i_sb), ci->payload, out);
	if (err || !d_is_reg(out->dentry))
		return err;
	path_get(out);
	spin_lock(&inode->i_lock);
	old = ci->backing;
	ci->backing = *out;
	spin_unlock(&inode->i_lock);
	if (old.dentry)
		path_put(&old);
	return 0;
}

static struct file *cfs_open_backing(struct file *file, const struct path *real)
{
	struct cfs_fs *fs = CFS_FS(file_inode(file)->i_sb);
	int flags = (file->f_flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC |
				       O_ACCMODE)) |
		    O_RDONLY | O_LARGEFILE;

#ifdef CFS_BACKING_OPEN_USER_FILE
	return backing_file_open(file, flags, real, fs->creator_cred);
#else
	return backing_file_open(&file->f_path, flags, real, fs->creator_cred);
#endif
}

/* Is the fs-verity digest of @real the one the image records? */
static int cfs_check_verity(struct file *file, struct file *real)
{
	struct cfs_inode_info *ci = CFS_I(file_inode(file));
	u8 digest[FS_VERITY_MAX_DIGEST_SIZE];
	enum hash_algo halg;
	u8 alg;
	int size;

	/* Returns the digest size, or 0 when the file has no fs-verity. */
	size = fsverity_get_digest(file_inode(real), digest, &alg, &halg);
	if (size == 0) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pd4: backing file has no fs-verity\n",
				    file->f_path.dentry);
		return -EIO;
	}
	if (size != CFS_DIGEST_SIZE || halg != HASH_ALGO_SHA256 ||
	    memcmp(digest, ci->digest, CFS_DIGEST_SIZE)) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pd4: backing file has the wrong fs-verity digest\n",
				    file->f_path.dentry);
		return -EIO;
	}
	return 0;
}

static int cfs_open(struct inode *inode, struct file *file)
{
	struct cfs_fs *fs = CFS_FS(inode->i_sb);
	struct cfs_inode_info *ci = CFS_I(inode);
	const struct cred *old_cred;
	struct file *real;
	struct path path;
	int err;

	if ((file->f_flags & O_ACCMODE) != O_RDONLY ||
	    (file->f_flags & (O_CREAT | O_TRUNC)))
		return -EROFS;

	file->private_data = NULL;
	if (!ci->payload)
		return 0; /* empty file: nothing behind it */

	if (fs->verity_check >= 2 && !ci->has_digest) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pd4: image records no fs-verity digest (verity_check=2)\n",
				    file->f_path.dentry);
		return -EIO;
	}

	old_cred = override_creds(fs->creator_cred);
	err = cfs_backing_path(inode, &path);
	if (err) {
		revert_creds(old_cred);
		if (err != -ENOENT)
			pr_warn_ratelimited(CFS_FS_NAME ": %pd4: cannot resolve backing path '%*pE': %d\n",
					    file->f_path.dentry, ci->payload_len,
					    ci->payload, err);
		return err;
	}
	if (!d_is_reg(path.dentry)) {
		/* LOOKUP_NO_SYMLINKS does not cover an unfollowed last
		 * component: a symlink there is refused like any other.
		 */
		err = d_is_symlink(path.dentry) ? -ELOOP : -EIO;
		path_put(&path);
		revert_creds(old_cred);
		pr_warn_ratelimited(CFS_FS_NAME ": %pd4: backing path '%*pE' is not a regular file\n",
				    file->f_path.dentry, ci->payload_len, ci->payload);
		return err;
	}
	real = cfs_open_backing(file, &path);
	path_put(&path);
	revert_creds(old_cred);
	if (IS_ERR(real))
		return PTR_ERR(real);

	if (ci->has_digest && fs->verity_check >= 1) {
		err = cfs_check_verity(file, real);
		if (err)
			goto err;
	}
	if (i_size_read(file_inode(real)) != i_size_read(inode)) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pd4: backing file size %lld, image says %lld\n",
				    file->f_path.dentry,
				    i_size_read(file_inode(real)), i_size_read(inode));
		err = -EIO;
		goto err;
	}
	/* O_DIRECT is checked after ->open: allow it when the backing file can. */
	if (real->f_mode & FMODE_CAN_ODIRECT)
		file->f_mode |= FMODE_CAN_ODIRECT;
	file->private_data = real;
	return 0;
err:
	fput(real);
	return err;
}

static int cfs_release(struct inode *inode, struct file *file)
{
	if (file->private_data)
		fput(file->private_data);
	return 0;
}

static void cfs_file_accessed(struct file *file)
{
	/* Read-only filesystem: no atime to update. */
}

#define CFS_BACKING_CTX(file)                                                  \
	{                                                                      \
		.cred = CFS_FS(file_inode(file)->i_sb)->creator_cred,          \
		.user_file = (file),                                           \
		.accessed = cfs_file_accessed,                                 \
	}

static ssize_t cfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *real = file->private_data;
	struct backing_file_ctx ctx = CFS_BACKING_CTX(file);

	if (!real)
		return 0;
	if (!iov_iter_count(iter))
		return 0;
	return backing_file_read_iter(real, iter, iocb, iocb->ki_flags, &ctx);
}

static ssize_t cfs_splice_read(struct file *file, loff_t *ppos,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned int flags)
{
	struct file *real = file->private_data;
	struct backing_file_ctx ctx = CFS_BACKING_CTX(file);

	if (!real)
		return 0;
	return backing_file_splice_read(real, ppos, pipe, len, flags, &ctx);
}

static int cfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *real = file->private_data;
	struct backing_file_ctx ctx = CFS_BACKING_CTX(file);

	/* An empty file has no pages: any access faults with SIGBUS. */
	if (!real)
		return 0;
	return backing_file_mmap(real, vma, &ctx);
}

static int cfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice)
{
	struct file *real = file->private_data;

	if (!real)
		return 0;
	return vfs_fadvise(real, offset, len, advice);
}

const struct file_operations cfs_file_operations = {
	.open = cfs_open,
	.release = cfs_release,
	.llseek = generic_file_llseek,
	.read_iter = cfs_read_iter,
	.splice_read = cfs_splice_read,
	.mmap = cfs_mmap,
	.fadvise = cfs_fadvise,
	.fsync = noop_fsync,
};

/* The data lives in the backing file's page cache, never in ours. */
const struct address_space_operations cfs_aops = {
};
