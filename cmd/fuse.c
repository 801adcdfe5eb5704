// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl mount --fuse: an image of either format served from userspace
 * through libfuse3's low-level API, for users and machines that cannot
 * mount it in the kernel. This file is libfuse's side: the mount, and
 * each request answered with what fuse-ops.c computes. It reads the image only through libcfs's
 * format-blind reader in its mounted view (cfs/image.h), so that it shows
 * what the kernel mount shows, and opens the backing files the image names
 * beneath each basedir in turn, as the module does, with the credentials
 * of the user who mounted. Nothing of a backing file is served before its
 * fs-verity digest matches the image's: the kernel's measurement where the
 * file has fs-verity, else one computed at its first open, whose data
 * blocks' hashes are kept (for the mount's life, within VERIFIED_BUDGET)
 * and check every block read later, so that a file changed after it was
 * verified reads EIO. Where every backing file was there at mount, the
 * kernel opens files without asking, and each is opened and checked at
 * its first read instead (cfsfuse_node_get()). The kernel may cache entries, attributes, listings
 * and pages for the mount's life: the image never changes, and a page it
 * caches was checked when it was read. With --lazy-url, an object
 * missing from every basedir is fetched from the mirrors into the first
 * one when its file is first opened (lib/remote's fetcher: verified before
 * it is named), one fetch for all who wait for it. Linked into cfsctl
 * only: libcfs stays free of libfuse.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fuse.h"

static struct cfsfuse *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void op_init(void *data, struct fuse_conn_info *conn)
{
	struct cfsfuse *fs = data;

	if (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) {
		conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
		fs->no_opendir = true;
	}
	/*
	 * Files too, where every backing file was there at mount: no round
	 * trip per open, and the page cache kept (FOPEN_KEEP_CACHE). Each
	 * file is then opened and checked at its first read instead, and a
	 * backing file gone or changed since the mount fails that read with
	 * EIO; where one was missing at mount, each open asks, and a missing
	 * one fails its open.
	 */
	if ((conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) && fs->objects_there) {
		conn->want |= FUSE_CAP_NO_OPEN_SUPPORT;
		fs->no_open = true;
	}
	/* several reads of one file at once, and big ones */
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	/* the kernel checks an image's ACLs, as it does on a kernel mount */
	if (conn->capable & FUSE_CAP_POSIX_ACL)
		conn->want |= FUSE_CAP_POSIX_ACL;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA; /* nothing changes under the cache */
	/*
	 * Every listing with attributes, not only its first batch: else the
	 * kernel asks for the later batches of a large directory without them,
	 * and then looks each of their entries up.
	 */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .attr_timeout = FOREVER, .entry_timeout = FOREVER };
	uint64_t node;
	int r;

	r = cfsfuse_lookup(fs_of(req), parent, name, &node, &e.attr);
	if (r == -ENOENT) {
		/* a negative entry, cached for the mount's life too */
		memset(&e.attr, 0, sizeof(e.attr));
		fuse_reply_entry(req, &e);
		return;
	}
	if (r) {
		fuse_reply_err(req, -r);
		return;
	}
	e.ino = node;
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct stat st;
	int r;

	(void)fi;
	r = cfsfuse_getattr(fs_of(req), node, &st);
	if (r)
		fuse_reply_err(req, -r);
	else
		fuse_reply_attr(req, &st, FOREVER);
}

static void op_readlink(fuse_req_t req, fuse_ino_t node)
{
	char buf[PATH_MAX];
	int r;

	r = cfsfuse_readlink(fs_of(req), node, buf, sizeof(buf));
	if (r)
		fuse_reply_err(req, -r);
	else
		fuse_reply_readlink(req, buf);
}

static void op_open(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct ofile *f;
	int r;

	if (fs_of(req)->no_open) {
		/* the kernel opens this file and every later one without asking */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	r = cfsfuse_open(fs_of(req), node, fi->flags, &f);
	if (r) {
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->keep_cache = 1; /* the content never changes */
	if (fuse_reply_open(req, fi) == -ENOENT)
		cfsfuse_release(fs_of(req), f); /* the open was interrupted */
}

static void op_release(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	(void)node;
	cfsfuse_release(fs_of(req), (struct ofile *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct cfsfuse *fs = fs_of(req);
	struct ofile *f = (struct ofile *)(uintptr_t)fi->fh, *held = NULL;
	struct cfsfuse_data d = { .fd = -1 };
	int r = 0;

	/* opened by the kernel without asking: the file is opened here, by node */
	if (!f)
		r = cfsfuse_node_get(fs, node, &held);
	if (!r)
		r = cfsfuse_read(fs, held ? held : f, size, off, &d);
	if (r) {
		fuse_reply_err(req, -r);
	} else if (d.fd >= 0) {
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(d.len);

		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv.buf[0].fd = d.fd;
		bv.buf[0].pos = (off_t)d.pos;
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
	} else {
		fuse_reply_buf(req, d.data, d.len);
	}
	free(d.buf);
	if (held)
		cfsfuse_node_put(fs, held);
}

/*
 * The kernel opens directories without asking (FUSE_CAP_NO_OPENDIR_SUPPORT:
 * it caches their listings then, as it does with cache_readdir): no round
 * trip per directory opened. Where it cannot, each opendir answers alike.
 */
static void op_opendir(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	(void)node;
	if (fs_of(req)->no_opendir) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->fh = 0;
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static size_t add_plain(void *req, char *buf, size_t room, const struct cfsfuse_dirent *e)
{
	return fuse_add_direntry(req, buf, room, e->name, &e->attr, e->pos);
}

static size_t add_plus(void *req, char *buf, size_t room, const struct cfsfuse_dirent *e)
{
	struct fuse_entry_param p = { .ino = e->node, .attr = e->attr,
				      .attr_timeout = FOREVER, .entry_timeout = FOREVER };

	return fuse_add_direntry_plus(req, buf, room, e->name, &p, e->pos);
}

static void dir_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off, bool plus)
{
	char *buf = malloc(size ? size : 1);
	size_t used = 0;
	int r;

	r = buf ? cfsfuse_readdir(fs_of(req), node, buf, size, off, plus, plus ? add_plus : add_plain,
				  req, &used)
		: -ENOMEM;
	if (r)
		fuse_reply_err(req, -r);
	else
		fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	dir_read(req, node, size, off, false);
}

/* A listing with each entry's attributes: a walk needs no lookup per entry. */
static void op_readdirplus(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	(void)fi;
	dir_read(req, node, size, off, true);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t node, const char *name, size_t size)
{
	const void *value;
	size_t len;
	int r;

	r = cfsfuse_getxattr(fs_of(req), node, name, size, &value, &len);
	if (r)
		fuse_reply_err(req, -r);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, value, len);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t node, size_t size)
{
	struct cfsfuse *fs = fs_of(req);
	char *buf = NULL;
	size_t len = 0;
	int r = 0;

	if (size && !(buf = malloc(size)))
		r = -ENOMEM;
	/* as a disk filesystem lists them: trusted.* only to the privileged */
	if (!r)
		r = cfsfuse_listxattr(fs, node, fs->trusted_listed && fuse_req_ctx(req)->uid == 0,
				      buf, size, &len);
	if (r)
		fuse_reply_err(req, -r);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

static void op_statfs(fuse_req_t req, fuse_ino_t node)
{
	struct cfsfuse *fs = fs_of(req);
	struct statvfs sv = { 0 };

	(void)node;
	sv.f_bsize = BLOCK;
	sv.f_frsize = BLOCK;
	sv.f_blocks = (cfs_image_size(fs->img) + BLOCK - 1) / BLOCK;
	sv.f_namemax = 255;
	sv.f_flag = ST_RDONLY;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.open = op_open,
	.read = op_read,
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.statfs = op_statfs,
};

/* ---- the image, and the mount ---- */

/* Read all of @fd into memory: what is checked is what is served. */
static int read_image(int fd, void **data, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > SIZE_MAX / 2)
		return -EFBIG;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO; /* it shrank: refuse it */
		}
		got += (size_t)n;
	}
	*data = buf;
	*len = got;
	return 0;
}

bool cli_first_userns(void)
{
	unsigned long a, b, n;
	FILE *f = fopen("/proc/self/uid_map", "re");
	bool r;

	if (!f)
		return false;
	r = fscanf(f, "%lu %lu %lu", &a, &b, &n) == 3 && a == 0 && b == 0 && n == 4294967295UL;
	fclose(f);
	return r;
}

static void lib_message(void *ctx, const char *msg)
{
	(void)ctx;
	cli_error("mount: %s", msg);
}

/* Open the image from @o->imgfd, checked against @o->digest. EXIT_OK or EXIT_FAIL. */
static int open_image(struct cfsfuse *fs, const struct cli_fuse_options *o, void **data)
{
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_image *img;
	size_t len = 0;
	int r;

	r = read_image(o->imgfd, data, &len);
	if (r < 0) {
		cli_error("mount: reading '%s': %s", o->image, strerror(-r));
		return EXIT_FAIL;
	}
	if (o->digest) {
		/* the kernel's measurement (the file cannot change), else of the bytes read */
		r = cfs_verity_measure_fd(o->imgfd, digest);
		if (r < 0)
			r = cfs_verity_digest_mem(*data, len, digest);
		if (r < 0) {
			cli_error("mount: measuring '%s': %s", o->image, strerror(-r));
			return EXIT_FAIL;
		}
		if (memcmp(digest, o->digest, CFS_DIGEST_SIZE) != 0) {
			char hex[CFS_DIGEST_HEX_SIZE];

			cfs_digest_to_hex(digest, hex);
			cli_error("mount: '%s': its fs-verity digest is %s, not the one given",
				  o->image, hex);
			return EXIT_FAIL;
		}
	}
	r = cfs_image_open_mem(*data, len, &img);
	if (r < 0) {
		cli_error("mount: '%s': not an image cfsctl can read: %s", o->image, strerror(-r));
		return EXIT_FAIL;
	}
	/* its root a directory, and every path read, before anything is mounted */
	r = cfsfuse_start(fs, img);
	if (r < 0) {
		cli_error("mount: '%s': %s", o->image, strerror(-r));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_fuse_mount(const struct cli_fuse_options *o)
{
	struct cfsfuse fs = {
		.verity_check = o->verity_check, .trusted_listed = cli_first_userns(),
		.mirrors = o->mirrors,
		.store = o->basedirs && o->basedirs->n ? o->basedirs->dirs[0] : NULL,
	};
	char opts[256];
	char *fargv[] = { "cfsctl-mount", "-o", opts, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se = NULL;
	struct fuse_loop_config *cfg;
	void *data = NULL;
	size_t nd = o->basedirs ? o->basedirs->n : 0;
	int rc = EXIT_FAIL, r;

	cfs_set_message_handler(lib_message, NULL);
	cfsfuse_init(&fs);
	fs.image_esc = cfsfuse_escaped(o->image);
	fs.dirfds = calloc(nd ? nd : 1, sizeof(int));
	if (!fs.image_esc || !fs.dirfds) {
		cli_error("mount: %s", strerror(ENOMEM));
		goto out;
	}
	for (; fs.n_dirs < nd; fs.n_dirs++) {
		fs.dirfds[fs.n_dirs] = open(o->basedirs->dirs[fs.n_dirs],
					    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fs.dirfds[fs.n_dirs] < 0) {
			cli_error("mount: basedir '%s': %s", o->basedirs->dirs[fs.n_dirs],
				  strerror(errno));
			goto out;
		}
	}
	/* the basedirs first: each backing file is looked for as the image is read */
	if (open_image(&fs, o, &data) != EXIT_OK)
		goto out;

	/*
	 * Root's mount honours the image's setuid bits and devices, as the
	 * kernel's does; an ordinary user's is nosuid,nodev (fusermount3).
	 */
	snprintf(opts, sizeof(opts), "ro,default_permissions,fsname=cfs,subtype=cfs%s%s",
		 o->allow_other ? ",allow_other" : "",
		 geteuid() == 0 && fs.trusted_listed ? ",suid,dev" : "");
	se = fuse_session_new(&args, &ops, sizeof(ops), &fs);
	fuse_opt_free_args(&args);
	if (!se) {
		cli_error("mount: cannot start FUSE");
		goto out;
	}
	if (fuse_session_mount(se, o->mountpoint) != 0) {
		cli_error("mount: mounting FUSE on '%s' failed (is /dev/fuse there, and fusermount3?)",
			  o->mountpoint);
		goto out_destroy;
	}
	/* Mounted: the caller returns now, and the daemon serves until unmounted. */
	if (!o->foreground) {
		pid_t pid;
		int fd;

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			cli_error("mount: %s", strerror(errno));
			goto out_unmount;
		}
		if (pid > 0)
			_exit(EXIT_OK); /* the mount is the daemon's to undo */
		setsid();
		if (chdir("/") < 0) {
			/* nothing relies on the working directory */
		}
		/* stderr stays: it says which file could not be served, and why */
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			close(fd);
		}
	}
	if (fuse_set_signal_handlers(se) != 0) {
		cli_error("mount: cannot install signal handlers");
		goto out_unmount;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		cli_error("mount: %s", strerror(ENOMEM));
		goto out_signals;
	}
	fuse_loop_cfg_set_max_threads(cfg, 16);
	r = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	rc = r < 0 ? EXIT_FAIL : EXIT_OK;
	if (r < 0)
		cli_error("mount: serving '%s': %s", o->mountpoint, strerror(-r));
out_signals:
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_session_unmount(se);
out_destroy:
	fuse_session_destroy(se);
out:
	for (size_t i = 0; i < fs.n_dirs; i++)
		close(fs.dirfds[i]);
	free(fs.dirfds);
	if (fs.img)
		cfs_image_close(fs.img);
	free(data);
	free(fs.image_esc);
	cfsfuse_fini(&fs);
	return rc;
}
