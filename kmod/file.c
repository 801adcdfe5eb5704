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

/*
 * The first basedir holding @rel wins. When that is not the first one, the
 * earlier ones are asked again, and the first of them that holds @rel now
 * wins instead: a later basedir may fill an earlier one while it is looked
 * up (cfsctl lazy fetches the object into the local store and only then
 * answers), and the file to open is the one in the earlier basedir, with
 * its fs-verity and its page cache shared with every other image. A hit in
 * the first basedir costs nothing more.
 */
static int cfs_find_backing(struct cfs_fs *fs, const char *rel,
			    struct path *out)
{
	unsigned int i, j;

	for (i = 0; i < fs->n_bases; i++) {
		struct vfsmount *mnt = fs->bases[i];
		int err;

		err = vfs_path_lookup(mnt->mnt_root, mnt, rel,
				      CFS_BACKING_LOOKUP, out);
		/* This basedir does not hold the path (ENOTDIR: a component
		 * is not a directory here, say "xx" is a file): try the next.
		 * Any other error is the answer.
		 */
		if (!err)
			break;
		if (err != -ENOENT && err != -ENOTDIR)
			return err;
	}
	if (i == fs->n_bases)
		return -ENOENT;
	if (i == 0 || !d_is_reg(out->dentry))
		return 0; /* the first basedir's, or not a file: cfs_open refuses it */
	for (j = 0; j < i; j++) {
		struct vfsmount *mnt = fs->bases[j];
		struct path again;

		if (vfs_path_lookup(mnt->mnt_root, mnt, rel, CFS_BACKING_LOOKUP,
				    &again) == 0) {
			path_put(out);
			*out = again;
			break;
		}
	}
	return 0;
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

/*
 * Open @real for @file, under the mounter's credentials (the caller has
 * overridden them). As overlayfs's ovl_open_realfile() does: the mounter
 * must be allowed to read the backing file, and O_NOATIME passes only when
 * the mounter owns it or is capable; backing_file_open() checks neither.
 */
static struct file *cfs_open_backing(struct file *file, const struct path *real)
{
	struct cfs_fs *fs = CFS_FS(file_inode(file)->i_sb);
	struct mnt_idmap *idmap = mnt_idmap(real->mnt);
	struct inode *rinode = d_inode(real->dentry);
	int flags = (file->f_flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC |
				       O_ACCMODE)) |
		    O_RDONLY | O_LARGEFILE;
	int err;

	err = inode_permission(idmap, rinode, MAY_OPEN | MAY_READ);
	if (err)
		return ERR_PTR(err);
	if (!inode_owner_or_capable(idmap, rinode))
		flags &= ~O_NOATIME;

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
	if (!ci->payload) {
		/* An empty file: nothing behind it, nothing to read directly
		 * or otherwise, so O_DIRECT is no reason to refuse the open.
		 */
		file->f_mode |= FMODE_CAN_ODIRECT;
		return 0;
	}

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
	/* st_blocks: the image records none, so until a first open it is
	 * the size in 512-byte units; from now on the backing file's, so a
	 * sparse object shows as sparse.
	 */
	spin_lock(&inode->i_lock);
	inode->i_blocks = file_inode(real)->i_blocks;
	spin_unlock(&inode->i_lock);
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

/* The flags fcntl(F_SETFL) may change that matter to the backing file. */
#define CFS_SETFL_MASK (O_NONBLOCK | O_NDELAY | O_DIRECT)

/*
 * fcntl(F_SETFL) changes only the composefs file's flags: bring the
 * backing file's in step before using it, as overlayfs's
 * ovl_change_flags() does. Otherwise a cleared O_DIRECT would still make
 * unaligned reads fail, and a set one would leave sync reads buffered.
 * setfl() accepted O_DIRECT only because ->open found the backing file
 * able to do direct I/O (FMODE_CAN_ODIRECT); check it again all the same.
 */
static int cfs_sync_flags(struct file *file, struct file *real)
{
	unsigned int flags = READ_ONCE(file->f_flags) & CFS_SETFL_MASK;

	if (!((flags ^ real->f_flags) & CFS_SETFL_MASK))
		return 0;
	if ((flags & O_DIRECT) && !(real->f_mode & FMODE_CAN_ODIRECT))
		return -EINVAL;
	if (real->f_op->check_flags) {
		int err = real->f_op->check_flags(flags);

		if (err)
			return err;
	}
	spin_lock(&real->f_lock);
	real->f_flags = (real->f_flags & ~CFS_SETFL_MASK) | flags;
	real->f_iocb_flags = iocb_flags(real);
	spin_unlock(&real->f_lock);
	return 0;
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

	int err;

	if (!real)
		return 0;
	if (!iov_iter_count(iter))
		return 0;
	/* At or past the end, which ->open found the backing file's too:
	 * the read that ends every read loop costs no trip to the backing
	 * file and its credentials, checks and notifications.
	 */
	if (iocb->ki_pos >= i_size_read(file_inode(file)))
		return 0;
	err = cfs_sync_flags(file, real);
	if (err)
		return err;
	return backing_file_read_iter(real, iter, iocb, iocb->ki_flags, &ctx);
}

static ssize_t cfs_splice_read(struct file *file, loff_t *ppos,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned int flags)
{
	struct file *real = file->private_data;
	struct backing_file_ctx ctx = CFS_BACKING_CTX(file);

	int err;

	if (!real || *ppos >= i_size_read(file_inode(file)))
		return 0;
	err = cfs_sync_flags(file, real);
	if (err)
		return err;
	return backing_file_splice_read(real, ppos, pipe, len, flags, &ctx);
}

/* SEEK_DATA and SEEK_HOLE answer from the backing file, where the holes
 * are; everything else is the generic seek within i_size.
 */
static loff_t cfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *real = file->private_data;
	const struct cred *old_cred;
	loff_t pos;

	if (!real || (whence != SEEK_DATA && whence != SEEK_HOLE))
		return generic_file_llseek(file, offset, whence);
	old_cred = override_creds(CFS_FS(file_inode(file)->i_sb)->creator_cred);
	pos = vfs_llseek(real, offset, whence);
	revert_creds(old_cred);
	if (pos < 0)
		return pos;
	return vfs_setpos(file, pos, file_inode(file)->i_sb->s_maxbytes);
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
	.llseek = cfs_llseek,
	.read_iter = cfs_read_iter,
	.splice_read = cfs_splice_read,
	.mmap = cfs_mmap,
	.fadvise = cfs_fadvise,
	.fsync = noop_fsync,
};

/* The data lives in the backing file's page cache, never in ours. */
const struct address_space_operations cfs_aops = {
};
