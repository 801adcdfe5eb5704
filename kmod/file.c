// SPDX-License-Identifier: GPL-2.0
/*
 * composefs regular files. The first open of one resolves its backing path
 * beneath each basedir in turn (never following symlinks, never leaving
 * the basedir), checks the backing file's fs-verity digest against the one
 * the image records, and opens it, which the inode keeps until it is
 * evicted, so that later opens skip the lookup and the check. An object
 * on ext4 is then read and mapped through the composefs file itself, whose
 * f_mapping is the object's (cfs_can_share_mapping());
 * any other open has a backing file of its own, opened in ->open from the
 * kept one, whose user file is the composefs file (as overlayfs's): reads,
 * mmap and splice go to it. Either way the object's page cache is the only
 * copy of the data, shared by every image and path that reaches it.
 */
#include <linux/backing-file.h>
#include <linux/cred.h>
#include <linux/fadvise.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/pipe_fs_i.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <uapi/linux/hash_info.h>

#include "cfs-internal.h"
#include "compat.h"

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

/*
 * The open flags of every backing file. What an open adds (O_DIRECT,
 * O_NONBLOCK, and what fcntl(F_SETFL) changes later) stays in the
 * composefs file and reaches the backing file through each read's kiocb,
 * as fcntl(F_SETFL) on the composefs file cannot reach the backing one.
 */
#define CFS_BACKING_FLAGS (O_RDONLY | O_LARGEFILE)

/*
 * Open @real as a backing file showing @user's path, under the mounter's
 * credentials (the caller has overridden them).
 */
static struct file *cfs_backing_open(const struct file *user, int flags,
				     const struct path *real)
{
	return cfs_backing_file_open(user, flags, real, current_cred());
}

/*
 * Resolve, open and check the backing file of @inode, opened as @file.
 * As overlayfs's ovl_open_realfile() does, the mounter must be allowed to
 * read it (backing_file_open() checks nothing). Its user path is the
 * image's, not @file's: the inode keeps it past this open, and a
 * reference on a composefs dentry and mount would pin the inode and make
 * the mount busy for as long as the inode stays cached. No I/O goes
 * through it: each open reads and maps a backing file of its own
 * (cfs_open_own()), so that path shows nowhere and no LSM labels a read
 * after it.
 */
static struct file *cfs_open_shared(struct inode *inode, struct file *file)
{
	struct cfs_fs *fs = CFS_FS(inode->i_sb);
	struct cfs_inode_info *ci = CFS_I(inode);
	const struct cred *old_cred;
	struct file *real;
	struct path path;
	int err;

	old_cred = override_creds(fs->creator_cred);
	err = cfs_find_backing(fs, ci->payload, &path);
	if (err) {
		revert_creds(old_cred);
		if (err != -ENOENT)
			pr_warn_ratelimited(CFS_FS_NAME ": %pd4: cannot resolve backing path '%*pE': %d\n",
					    file->f_path.dentry, ci->payload_len,
					    ci->payload, err);
		return ERR_PTR(err);
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
		return ERR_PTR(err);
	}
	err = inode_permission(mnt_idmap(path.mnt), d_inode(path.dentry),
			       MAY_OPEN | MAY_READ);
	if (err)
		real = ERR_PTR(err);
	else
		real = cfs_backing_open(fs->descriptor, CFS_BACKING_FLAGS, &path);
	path_put(&path);
	revert_creds(old_cred);
	if (IS_ERR(real))
		return real;

	if (ci->has_digest && fs->verity_check >= 1) {
		err = cfs_check_verity(file, real);
		if (err) {
			fput(real);
			return ERR_PTR(err);
		}
	}
	return real;
}

/*
 * The backing file of @inode, referenced, for @file's open: the one the
 * inode keeps, else a new one, resolved and checked, which the inode keeps
 * from then on, as overlayfs keeps the lower data path an inode's first
 * lookup found: a basedir is not watched for changes under a mount, and
 * an object renamed, deleted or replaced after an inode's first open is
 * seen by its opens once the inode has left the inode cache. What an open
 * is given was permission- and fs-verity-checked when it was opened;
 * fs-verity cannot change on an inode, so that holds for as long as the
 * file is kept. The first of two concurrent opens to finish keeps its
 * file, and the other uses that one. The inode drops it when evicted.
 */
static struct file *cfs_inode_backing(struct inode *inode, struct file *file)
{
	struct cfs_inode_info *ci = CFS_I(inode);
	struct file *real, *kept;

	spin_lock(&inode->i_lock);
	real = ci->file;
	if (real)
		get_file(real);
	spin_unlock(&inode->i_lock);
	if (real)
		return real;

	real = cfs_open_shared(inode, file);
	if (IS_ERR(real))
		return real;
	spin_lock(&inode->i_lock);
	kept = ci->file;
	if (kept) {
		get_file(kept);
	} else {
		ci->file = get_file(real);
		/* st_blocks: the image records none, so until a first open
		 * it is the size in 512-byte units; from now on the backing
		 * file's, so a sparse object shows as sparse.
		 */
		inode->i_blocks = file_inode(real)->i_blocks;
	}
	spin_unlock(&inode->i_lock);
	if (kept) {
		fput(real);
		return kept;
	}
	return real;
}

/*
 * A backing file of @file's own, of the object @shared is open on (no
 * lookup: the very inode that was checked), under the mounter's
 * credentials.
 */
static struct file *cfs_open_own(struct file *file, struct file *shared,
				 int flags)
{
	const struct cred *old_cred;
	struct file *own;

	old_cred = override_creds(CFS_FS(file_inode(file)->i_sb)->creator_cred);
	own = cfs_backing_open(file, flags, &shared->f_path);
	revert_creds(old_cred);
	return own;
}

/*
 * The open flags of @file's own backing file. O_NOATIME is kept when the
 * mounter owns the object or is capable (inode_owner_or_capable(), as
 * overlayfs's ovl_open_realfile(); otherwise the flag is dropped, not
 * refused).
 */
static int cfs_own_flags(struct file *file, struct file *shared)
{
	const struct cred *old_cred;
	bool owner;

	if (!(file->f_flags & O_NOATIME))
		return CFS_BACKING_FLAGS;
	old_cred = override_creds(CFS_FS(file_inode(file)->i_sb)->creator_cred);
	owner = inode_owner_or_capable(mnt_idmap(shared->f_path.mnt),
				       file_inode(shared));
	revert_creds(old_cred);
	return owner ? CFS_BACKING_FLAGS | O_NOATIME : CFS_BACKING_FLAGS;
}

/*
 * Whether opens of @real's object read and map its page cache through the
 * composefs file itself, with no backing file of their own: the composefs
 * file's f_mapping is the object's mapping, as a block device node's is
 * its device's (blkdev_open()), so that filemap_read(), filemap_splice_read(),
 * generic_file_mmap() and generic_fadvise() act on the object's pages with
 * this open's f_ra, and /proc/pid/maps and every LSM hook see the composefs
 * file, the only file there is. What the object's filesystem is given of
 * such a read is the composefs file, as the file of its ->read_folio() and
 * ->readahead(): only a filesystem whose address space operations never use
 * that file qualifies. That is ext4 (and ext2, one magic), the filesystem
 * fs-verity stores are made on and the one tested; any other, or a DAX
 * inode, gets a backing file per open (cfs_open_own()). The inode's kept
 * file holds the object, and this open a reference to it (private_data),
 * for as long as the file or a mapping of it lives; O_DIRECT reads, which
 * bypass the page cache, and SEEK_DATA/SEEK_HOLE go to that kept file.
 */
static bool cfs_can_share_mapping(struct file *real)
{
	struct inode *ri = file_inode(real);

	return ri->i_sb->s_magic == EXT4_SUPER_MAGIC && S_ISREG(ri->i_mode) &&
	       !IS_DAX(ri) && real->f_mapping == ri->i_mapping &&
	       real->f_mapping->a_ops->read_folio;
}

/* Does @file read the object's page cache itself (cfs_can_share_mapping())? */
static inline bool cfs_mapped(struct file *file)
{
	return file->f_mapping != file_inode(file)->i_mapping;
}

static int cfs_open(struct inode *inode, struct file *file)
{
	struct cfs_fs *fs = CFS_FS(inode->i_sb);
	struct cfs_inode_info *ci = CFS_I(inode);
	struct file *shared, *real;
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

	shared = cfs_inode_backing(inode, file);
	if (IS_ERR(shared))
		return PTR_ERR(shared);
	/* Checked at every open: an object without fs-verity may change
	 * size in place, and the check costs nothing.
	 */
	if (i_size_read(file_inode(shared)) != i_size_read(inode)) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pd4: backing file size %lld, image says %lld\n",
				    file->f_path.dentry,
				    i_size_read(file_inode(shared)), i_size_read(inode));
		err = -EIO;
		goto out;
	}
	if (cfs_can_share_mapping(shared)) {
		/* The object's page cache as this file's: see cfs_mapped(). */
		file->f_mapping = shared->f_mapping;
		if (shared->f_mode & FMODE_CAN_ODIRECT)
			file->f_mode |= FMODE_CAN_ODIRECT;
		file->private_data = shared;
		return 0;
	}
	/* This open's own, here and not in ->mmap: nothing is opened under
	 * mmap_lock, and reads, mmap and fadvise all see this file as their
	 * user file (LSMs, /proc/pid/maps, f_ra).
	 */
	real = cfs_open_own(file, shared, cfs_own_flags(file, shared));
	if (IS_ERR(real)) {
		err = PTR_ERR(real);
		goto out;
	}
	/* O_DIRECT is checked after ->open: allow it when the backing file can. */
	if (real->f_mode & FMODE_CAN_ODIRECT)
		file->f_mode |= FMODE_CAN_ODIRECT;
	file->private_data = real;
	err = 0;
out:
	fput(shared);
	return err;
}

static int cfs_release(struct inode *inode, struct file *file)
{
	struct file *real = file->private_data;

	if (real)
		fput(real);
	return 0;
}

static void cfs_file_accessed(struct file *file)
{
	/* Read-only filesystem: no atime to update. */
}

/* What the backing_file_*() helpers need to act for @file. */
static void cfs_backing_ctx(struct backing_file_ctx *ctx, struct file *file)
{
	*ctx = (struct backing_file_ctx){
		.cred = CFS_FS(file_inode(file)->i_sb)->creator_cred,
		.accessed = cfs_file_accessed,
	};
	cfs_backing_ctx_set_user(ctx, file);
}

/*
 * Reads pass the composefs file's position (ki_pos, *ppos) to the backing
 * file, never its f_pos.
 */
static ssize_t cfs_read_object(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *real = file->private_data;
	struct backing_file_ctx ctx;
	const struct cred *old_cred;
	struct kiocb kiocb;
	ssize_t ret;

	if (cfs_mapped(file) && !(iocb->ki_flags & IOCB_DIRECT))
		return filemap_read(iocb, iter, 0);
	cfs_backing_ctx(&ctx, file);
	/* aio and io_uring: backing_file_read_iter() clones the kiocb, the
	 * flags of this open (IOCB_DIRECT) with it.
	 */
	if (!is_sync_kiocb(iocb))
		return backing_file_read_iter(real, iter, iocb, iocb->ki_flags,
					      &ctx);
	/* A synchronous read it would make with the backing file's flags
	 * (vfs_iter_read()): make it with a kiocb of this open's instead,
	 * so that its O_DIRECT, as fcntl(F_SETFL) last left it, decides.
	 */
	if ((iocb->ki_flags & IOCB_DIRECT) &&
	    !(real->f_mode & FMODE_CAN_ODIRECT))
		return -EINVAL;
	kiocb_clone(&kiocb, iocb, real);
	old_cred = override_creds(ctx.cred);
	ret = vfs_iocb_iter_read(real, &kiocb, iter);
	revert_creds(old_cred);
	iocb->ki_pos = kiocb.ki_pos;
	return ret;
}

/*
 * The image's size bounds every read, should an object without fs-verity
 * grow after ->open compared the two (as blkdev_read_iter() bounds a read
 * by the device's size).
 */
static ssize_t cfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	loff_t size = i_size_read(file_inode(iocb->ki_filp));
	size_t count = iov_iter_count(iter), shorted = 0;
	ssize_t ret;

	if (!iocb->ki_filp->private_data || !count)
		return 0;
	/* At or past the end, which ->open found the backing file's too:
	 * the read that ends every read loop costs no trip to the backing
	 * file and its credentials, checks and notifications.
	 */
	if (iocb->ki_pos >= size)
		return 0;
	if (count > size - iocb->ki_pos) {
		shorted = count - (size - iocb->ki_pos);
		iov_iter_truncate(iter, size - iocb->ki_pos);
	}
	ret = cfs_read_object(iocb, iter);
	if (shorted)
		iov_iter_reexpand(iter, iov_iter_count(iter) + shorted);
	return ret;
}

/*
 * Called only without O_DIRECT: vfs_splice_read() reads an O_DIRECT file
 * through ->read_iter (copy_splice_read()), and the backing file has no
 * O_DIRECT, so this splices from its page cache.
 */
static ssize_t cfs_splice_read(struct file *file, loff_t *ppos,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned int flags)
{
	struct file *real = file->private_data;
	loff_t size = i_size_read(file_inode(file));
	struct backing_file_ctx ctx;

	if (!real || *ppos >= size)
		return 0;
	len = min_t(u64, len, size - *ppos); /* as cfs_read_iter() */
	if (cfs_mapped(file))
		return filemap_splice_read(file, ppos, pipe, len, flags);
	cfs_backing_ctx(&ctx, file);
	return cfs_backing_splice_read(real, file, ppos, pipe, len, flags, &ctx);
}

/* SEEK_DATA and SEEK_HOLE answer from the backing file, where the holes
 * are; everything else is the generic seek within i_size. The backing
 * filesystem sets the backing file's f_pos to the answer, which nothing
 * reads (see cfs_read_iter()).
 */
static loff_t cfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *real = file->private_data;
	const struct cred *old_cred;
	loff_t pos;

	/* Within this inode's size: generic_file_llseek() would take the
	 * size of f_mapping's host, the object when cfs_mapped().
	 */
	if (!real || (whence != SEEK_DATA && whence != SEEK_HOLE))
		return generic_file_llseek_size(file, offset, whence,
						file_inode(file)->i_sb->s_maxbytes,
						i_size_read(file_inode(file)));
	old_cred = override_creds(CFS_FS(file_inode(file)->i_sb)->creator_cred);
	pos = vfs_llseek(real, offset, whence);
	revert_creds(old_cred);
	if (pos < 0)
		return pos;
	return vfs_setpos(file, pos, file_inode(file)->i_sb->s_maxbytes);
}

/*
 * The mapping's vm_file is this file, mapping the object's pages
 * (cfs_mapped()), or else this open's backing file, whose user path is
 * this file's, as /proc/pid/maps and the LSMs' mmap checks expect, holding
 * its own reference (backing_file_mmap()). Either was set up by ->open: as
 * overlayfs, nothing is opened here under mmap_lock.
 */
static int cfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *real = file->private_data;
	struct backing_file_ctx ctx;

	/* An empty file has no pages: any access faults with SIGBUS. */
	if (!real)
		return 0;
	if (cfs_mapped(file))
		return generic_file_readonly_mmap(file, vma);
	cfs_backing_ctx(&ctx, file);
	return backing_file_mmap(real, vma, &ctx);
}

/*
 * The advice goes to this file when it reads the object's pages itself
 * (cfs_mapped()), else to this open's own backing file: the page cache
 * advice (WILLNEED, DONTNEED) is about the object's pages, shared anyway,
 * and the readahead advice sets the f_ra and FMODE_RANDOM its reads use.
 */
static int cfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice)
{
	struct file *real = file->private_data;

	if (!real)
		return 0;
	if (cfs_mapped(file))
		return generic_fadvise(file, offset, len, advice);
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
