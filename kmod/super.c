// SPDX-License-Identifier: GPL-2.0
/*
 * composefs: a read-only filesystem whose metadata comes from an image file
 * (the "descriptor") and whose file contents come from backing files found
 * beneath one or more base directories, with optional fs-verity checks of
 * both. This file holds the module entry points, the mount options
 * (fs_context), superblock setup and teardown, and statfs.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/fsverity.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <uapi/linux/hash_info.h>

#include "cfs-internal.h"

enum cfs_param {
	Opt_basedir,
	Opt_digest,
	Opt_verity_check,
};

static const struct fs_parameter_spec cfs_parameters[] = {
	fsparam_string("basedir", Opt_basedir),
	fsparam_string("digest", Opt_digest),
	fsparam_u32("verity_check", Opt_verity_check),
	{}
};

static int cfs_parse_digest(const char *hex, u8 digest[CFS_DIGEST_SIZE])
{
	unsigned int i;

	if (strlen(hex) != 2 * CFS_DIGEST_SIZE)
		return -EINVAL;
	for (i = 0; i < CFS_DIGEST_SIZE; i++) {
		int hi = cfs_xdigit_value(hex[2 * i]);
		int lo = cfs_xdigit_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		digest[i] = hi << 4 | lo;
	}
	return 0;
}

static int cfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct cfs_fs *fs = fc->s_fs_info;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, cfs_parameters, param, &result);
	if (opt == -ENOPARAM)
		return vfs_parse_fs_param_source(fc, param);
	if (opt < 0)
		return opt;

	switch (opt) {
	case Opt_basedir:
		if (!*param->string)
			return invalfc(fc, "basedir: empty");
		kfree(fs->basedir_opt);
		fs->basedir_opt = param->string;
		param->string = NULL;
		break;
	case Opt_digest:
		if (cfs_parse_digest(param->string, fs->digest))
			return invalfc(fc, "digest: '%s' is not %d hex digits",
				       param->string, 2 * CFS_DIGEST_SIZE);
		fs->has_digest = true;
		break;
	case Opt_verity_check:
		if (result.uint_32 > 2)
			return invalfc(fc, "verity_check: %u is not 0, 1 or 2",
				       result.uint_32);
		fs->verity_check = result.uint_32;
		fs->verity_check_set = true;
		break;
	}
	return 0;
}

/* Split "a:b\:c" into NUL-separated parts in place; '\' escapes a ':'. */
static unsigned int cfs_split_basedirs(char *s)
{
	unsigned int n = 1;
	char *d = s;

	for (;; s++, d++) {
		if (*s == '\\' && s[1]) {
			s++;
		} else if (*s == ':') {
			*d = 0;
			n++;
			continue;
		}
		*d = *s;
		if (!*s)
			break;
	}
	return n;
}

static int cfs_open_basedirs(struct fs_context *fc, struct cfs_fs *fs)
{
	char *list, *name;
	unsigned int n, i;
	int err = 0;

	if (!fs->basedir_opt)
		return 0;
	list = kstrdup(fs->basedir_opt, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	n = cfs_split_basedirs(list);
	if (n > CFS_MAX_BASEDIRS) {
		err = invalfc(fc, "basedir: more than %d directories",
			      CFS_MAX_BASEDIRS);
		goto out;
	}
	fs->bases = kcalloc(n, sizeof(*fs->bases), GFP_KERNEL);
	if (!fs->bases) {
		err = -ENOMEM;
		goto out;
	}

	for (i = 0, name = list; i < n; i++, name += strlen(name) + 1) {
		struct vfsmount *mnt;
		struct path path;

		if (!*name) {
			err = invalfc(fc, "basedir: empty directory name");
			goto out;
		}
		err = kern_path(name, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &path);
		if (err) {
			errorfc(fc, "basedir '%s': cannot resolve: %d", name, err);
			goto out;
		}
		/* A private clone rooted at the basedir: backing paths are
		 * resolved beneath its root, and later mount changes at the
		 * original place do not affect us.
		 */
		mnt = clone_private_mount(&path);
		path_put(&path);
		if (IS_ERR(mnt)) {
			err = PTR_ERR(mnt);
			errorfc(fc, "basedir '%s': cannot clone mount: %d", name, err);
			goto out;
		}
		fs->bases[fs->n_bases++] = mnt;
		/* The basedirs' filesystems are the layer below us. */
		fs->stack_depth = max_t(unsigned int, fs->stack_depth,
				      mnt->mnt_sb->s_stack_depth + 1);
	}
	if (fs->stack_depth > FILESYSTEM_MAX_STACK_DEPTH)
		err = invalfc(fc, "basedir: on filesystems stacked too deep (%u levels, at most %d)",
			      fs->stack_depth, FILESYSTEM_MAX_STACK_DEPTH);
out:
	kfree(list);
	return err;
}

/*
 * The image is a regular file or a block device (busybox mount puts a loop
 * device under a file; an image may also be written to a partition). Its
 * type decides how the superblock is made (cfs_get_tree()); a FIFO or
 * anything else is refused before it is opened, since opening a FIFO
 * would block the mount.
 */
static int cfs_descriptor_type(struct fs_context *fc, umode_t *mode)
{
	struct path path;
	int err;

	if (!fc->source)
		return invalfc(fc, "no image file given");
	err = kern_path(fc->source, LOOKUP_FOLLOW, &path);
	if (err) {
		errorfc(fc, "%s: cannot resolve image: %d", fc->source, err);
		return err;
	}
	*mode = d_inode(path.dentry)->i_mode;
	path_put(&path);
	if (!S_ISREG(*mode) && !S_ISBLK(*mode))
		return invalfc(fc, "%s: image is not a regular file or a block device",
			       fc->source);
	return 0;
}

/*
 * The module chooses its own readahead windows around the descriptor's
 * misses (reader.c, cfs_ra_window()): one file serves every lookup, stat
 * and readdir of the mount, whose misses interleave a few sweeps, which
 * the readahead state of a file would take for random reads. As
 * POSIX_FADV_RANDOM does (generic_fadvise()), so that
 * page_cache_sync_readahead() reads each window as asked.
 */
static void cfs_descriptor_random(struct file *file)
{
	spin_lock(&file->f_lock);
	file->f_mode |= FMODE_RANDOM;
	spin_unlock(&file->f_lock);
}

/*
 * A block device was opened by get_tree_bdev(), exclusively, with the
 * superblock as its holder (sb->s_bdev_file), as erofs opens its device; we
 * read through that file's page cache. A regular file is opened here:
 * filp_open() checks, as erofs's file-backed mounts do, that the mounter
 * (whose credentials these are) may read it. Its type is checked again
 * once open, since the path may have changed since cfs_descriptor_type().
 */
static int cfs_open_descriptor(struct super_block *sb, struct fs_context *fc,
			       struct cfs_fs *fs)
{
	struct file *file;

	if (fs->descriptor_is_bdev) {
		fs->descriptor = get_file(sb->s_bdev_file);
		cfs_descriptor_random(fs->descriptor);
		return 0;
	}
	file = filp_open(fc->source, O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(file)) {
		errorfc(fc, "%s: cannot open image: %ld", fc->source, PTR_ERR(file));
		return PTR_ERR(file);
	}
	if (!S_ISREG(file_inode(file)->i_mode)) {
		fput(file);
		return invalfc(fc, "%s: image is not a regular file (it changed while mounting)",
			       fc->source);
	}
	/* Our reads of the image are no one's accesses: raise no fsnotify
	 * events for them, as overlayfs's backing files do not.
	 */
#ifdef FMODE_FSNOTIFY_MASK
	file->f_mode &= ~FMODE_FSNOTIFY_MASK;
#endif
	file->f_mode |= FMODE_NONOTIFY;
	cfs_descriptor_random(file);
	fs->descriptor = file;
	/* Some filesystems' files have no page cache to read through. */
	fs->read_by_kernel_read = !file->f_mapping->a_ops->read_folio;
	/* fs-verity files cannot be written, and their pages are verified
	 * when read: what was checked once stays what was checked.
	 */
	fs->descriptor_sealed = !fs->read_by_kernel_read && IS_VERITY(file_inode(file));
	return 0;
}

static int cfs_check_descriptor_digest(struct fs_context *fc, struct cfs_fs *fs)
{
	u8 digest[FS_VERITY_MAX_DIGEST_SIZE];
	enum hash_algo halg;
	u8 alg;
	int size;

	size = fsverity_get_digest(file_inode(fs->descriptor), digest, &alg, &halg);
	if (size == 0) {
		errorfc(fc, "%s: image has no fs-verity, but digest= was given",
			fc->source);
		return -ENODATA;
	}
	if (size != CFS_DIGEST_SIZE || halg != HASH_ALGO_SHA256 ||
	    memcmp(digest, fs->digest, CFS_DIGEST_SIZE)) {
		errorfc(fc, "%s: image fs-verity digest does not match digest=",
			fc->source);
		return -EIO;
	}
	return 0;
}

static int cfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct cfs_fs *fs = CFS_FS(dentry->d_sb);
	int err = 0;

	/* Space and file counts are those of the first basedir; without
	 * one there are none, but the block size is still the one we use.
	 */
	if (fs->n_bases) {
		struct path root = { .mnt = fs->bases[0],
				     .dentry = fs->bases[0]->mnt_root };

		err = vfs_statfs(&root, buf);
	} else {
		buf->f_bsize = PAGE_SIZE;
	}
	if (err)
		return err;
	buf->f_type = CFS_MAGIC;
	buf->f_namelen = CFS_MAX_NAME_LEN;
	buf->f_fsid = u64_to_fsid(huge_encode_dev(dentry->d_sb->s_dev));
	return 0;
}

static int cfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct cfs_fs *fs = CFS_FS(root->d_sb);

	if (fs->basedir_opt)
		seq_show_option(m, "basedir", fs->basedir_opt);
	if (fs->has_digest)
		seq_printf(m, ",digest=%*phN", CFS_DIGEST_SIZE, fs->digest);
	seq_printf(m, ",verity_check=%u", fs->verity_check);
	return 0;
}

static const struct super_operations cfs_super_operations = {
	.alloc_inode = cfs_alloc_inode,
	.free_inode = cfs_free_inode,
	.evict_inode = cfs_evict_inode,
	.statfs = cfs_statfs,
	.show_options = cfs_show_options,
};

static int cfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct cfs_fs *fs = sb->s_fs_info;
	struct inode *root;
	int err;

	sb->s_op = &cfs_super_operations;
	sb->s_xattr = cfs_xattr_handlers;
	sb->s_export_op = &cfs_export_operations;
	sb->s_magic = CFS_MAGIC;
	sb->s_flags |= SB_RDONLY | SB_NOATIME | SB_NODIRATIME | SB_POSIXACL;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_time_gran = 1;

	/* digest= means the whole tree is to be trusted: by default, require
	 * a recorded digest on every file too.
	 */
	if (fs->has_digest && !fs->verity_check_set)
		fs->verity_check = 2;

	fs->creator_cred = prepare_creds();
	if (!fs->creator_cred)
		return -ENOMEM;
	get_random_bytes(&fs->fh_key, sizeof(fs->fh_key));
	err = cfs_parents_init(fs);
	if (err)
		return err;

	err = cfs_open_basedirs(fc, fs);
	if (err)
		return err;
	err = cfs_open_descriptor(sb, fc, fs);
	if (err)
		return err;
	/* Both layers below count, the image's filesystem as the basedirs'
	 * (erofs counts its backing file's for a file-backed mount): an
	 * image on a composefs mount stacks on it. A block device is no
	 * layer.
	 */
	if (!fs->descriptor_is_bdev)
		fs->stack_depth = max_t(unsigned int, fs->stack_depth,
					file_inode(fs->descriptor)->i_sb->s_stack_depth + 1);
	if (fs->stack_depth > FILESYSTEM_MAX_STACK_DEPTH) {
		errorfc(fc, "%s: the image or a basedir is on filesystems stacked too deep (%u levels, at most %d)",
			fc->source, fs->stack_depth, FILESYSTEM_MAX_STACK_DEPTH);
		return -EINVAL;
	}
	sb->s_stack_depth = max(fs->stack_depth, 1U);
	if (fs->has_digest && fs->descriptor_is_bdev) {
		errorfc(fc, "%s: digest= needs the image's fs-verity, which a block device has not: pass the image file, not a device",
			fc->source);
		return -EINVAL;
	}
	if (fs->has_digest) {
		err = cfs_check_descriptor_digest(fc, fs);
		if (err)
			return err;
	}
	err = cfs_reader_init(fs);
	if (err) {
		errorfc(fc, "%s: not a valid composefs image: %d", fc->source, err);
		return err;
	}

	root = cfs_iget(sb, fs->root_index);
	if (IS_ERR(root)) {
		errorfc(fc, "%s: cannot read the root inode: %ld", fc->source,
			PTR_ERR(root));
		return PTR_ERR(root);
	}
	if (!S_ISDIR(root->i_mode)) {
		iput(root);
		errorfc(fc, "%s: root inode is not a directory", fc->source);
		return -EFSCORRUPTED;
	}
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	/* The root is its own parent: an entry naming it is refused. */
	return cfs_set_parent(fs, fs->root_index, fs->root_index, NULL, 0);
}

/*
 * A mount of a block device that is mounted already gets its superblock
 * (get_tree_bdev()), so it must ask for that superblock's options: other
 * basedirs would otherwise be ignored without a word.
 */
static int cfs_check_shared_sb(struct fs_context *fc)
{
	struct cfs_fs *fs = CFS_FS(fc->root->d_sb);
	struct cfs_fs *req = fc->s_fs_info;
	unsigned int verity_check = req->verity_check;

	if (req->has_digest && !req->verity_check_set)
		verity_check = 2;
	if (!req->basedir_opt != !fs->basedir_opt ||
	    (req->basedir_opt && strcmp(req->basedir_opt, fs->basedir_opt)) ||
	    req->has_digest != fs->has_digest ||
	    memcmp(req->digest, fs->digest, CFS_DIGEST_SIZE) ||
	    verity_check != fs->verity_check) {
		errorfc(fc, "%s: mounted already with other options", fc->source);
		return -EBUSY;
	}
	return 0;
}

static int cfs_get_tree(struct fs_context *fc)
{
	struct cfs_fs *fs = fc->s_fs_info;
	umode_t mode;
	int err;

	err = cfs_descriptor_type(fc, &mode);
	if (err)
		return err;
	/* Read-only whatever was asked: the device is opened for reading. */
	fc->sb_flags |= SB_RDONLY;
	if (!S_ISBLK(mode))
		return get_tree_nodev(fc, cfs_fill_super);
	/* As erofs: the device is held exclusively while mounted, with the
	 * superblock as holder and fs_holder_ops, so that its freeze,
	 * removal and sync reach this superblock.
	 */
	fs->descriptor_is_bdev = true;
	err = get_tree_bdev(fc, cfs_fill_super);
	if (err)
		return err;
	/* Still ours: the device's superblock was there already. It comes
	 * back locked (s_umount) and active; refused, it is dropped as the
	 * VFS drops one it refuses (fc_drop_locked()).
	 */
	if (fc->s_fs_info) {
		err = cfs_check_shared_sb(fc);
		if (err) {
			struct super_block *sb = fc->root->d_sb;

			dput(fc->root);
			fc->root = NULL;
			deactivate_locked_super(sb);
		}
	}
	return err;
}

/* Nothing can change on remount. A value other than the one in force is
 * refused, not ignored, so that no one believes it applied; the same value
 * is accepted, since mount(8) passes back what /proc/mounts shows.
 */
static int cfs_reconfigure(struct fs_context *fc)
{
	struct cfs_fs *fs = CFS_FS(fc->root->d_sb);
	struct cfs_fs *req = fc->s_fs_info;

	if (req->basedir_opt &&
	    (!fs->basedir_opt || strcmp(req->basedir_opt, fs->basedir_opt)))
		return invalfc(fc, "basedir: cannot change on remount");
	if (req->has_digest &&
	    (!fs->has_digest || memcmp(req->digest, fs->digest, CFS_DIGEST_SIZE)))
		return invalfc(fc, "digest: cannot change on remount");
	if (req->verity_check_set && req->verity_check != fs->verity_check)
		return invalfc(fc, "verity_check: cannot change on remount");
	/* Stay read-only whatever was asked. */
	fc->sb_flags |= SB_RDONLY;
	return 0;
}

static void cfs_free_fs(struct cfs_fs *fs)
{
	if (!fs)
		return;
	if (fs->descriptor)
		fput(fs->descriptor);
	if (fs->bases) {
		kern_unmount_array(fs->bases, fs->n_bases);
		kfree(fs->bases);
	}
	if (fs->creator_cred)
		put_cred(fs->creator_cred);
	cfs_parents_destroy(fs);
	kfree(fs->basedir_opt);
	kfree(fs);
}

static void cfs_fc_free(struct fs_context *fc)
{
	/* Set only while no superblock has taken it over. */
	cfs_free_fs(fc->s_fs_info);
}

static const struct fs_context_operations cfs_context_ops = {
	.parse_param = cfs_parse_param,
	.get_tree = cfs_get_tree,
	.reconfigure = cfs_reconfigure,
	.free = cfs_fc_free,
};

static int cfs_init_fs_context(struct fs_context *fc)
{
	struct cfs_fs *fs;

	/* All options zero: no basedir, no digest, verity_check=0. */
	fs = kzalloc(sizeof(*fs), GFP_KERNEL);
	if (!fs)
		return -ENOMEM;
	spin_lock_init(&fs->ra_lock);
	fc->s_fs_info = fs;
	fc->ops = &cfs_context_ops;
	return 0;
}

static void cfs_kill_sb(struct super_block *sb)
{
	struct cfs_fs *fs = sb->s_fs_info;

	if (fs->descriptor_is_bdev)
		kill_block_super(sb);
	else
		kill_anon_super(sb);
	cfs_free_fs(fs);
}

static struct file_system_type cfs_fs_type = {
	.owner = THIS_MODULE,
	.name = CFS_FS_NAME,
	.init_fs_context = cfs_init_fs_context,
	.parameters = cfs_parameters,
	.kill_sb = cfs_kill_sb,
	.fs_flags = FS_ALLOW_IDMAP,
};
MODULE_ALIAS_FS(CFS_FS_NAME);

static int __init cfs_init(void)
{
	int err;

	err = cfs_inode_cache_init();
	if (err)
		return err;
	err = register_filesystem(&cfs_fs_type);
	if (err)
		cfs_inode_cache_destroy();
	return err;
}

static void __exit cfs_exit(void)
{
	unregister_filesystem(&cfs_fs_type);
	cfs_inode_cache_destroy();
}

module_init(cfs_init);
module_exit(cfs_exit);

MODULE_DESCRIPTION("composefs: read-only image filesystem with shared, verified backing files");
MODULE_LICENSE("GPL");
