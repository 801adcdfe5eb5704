// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl mount --fuse: an image of either format served from userspace
 * through libfuse3's low-level API, for users and machines that cannot
 * mount it in the kernel. It reads the image only through libcfs's
 * format-blind reader in its mounted view (cfs/image.h), so that it shows
 * what the kernel mount shows, and opens the backing files the image names
 * beneath each basedir in turn, as the module does, with the credentials
 * of the user who mounted. Nothing of a backing file is served before its
 * fs-verity digest matches the image's: the kernel's measurement where the
 * file has fs-verity, else one computed at its first open, whose data
 * blocks' hashes are kept (for the mount's life, within VERIFIED_BUDGET)
 * and check every block read later, so that a file changed after it was
 * verified reads EIO. The kernel may cache entries, attributes, listings
 * and pages for the mount's life: the image never changes, and a page it
 * caches was checked when it was read. With --lazy-url, an object
 * missing from every basedir is fetched from the mirrors into the first
 * one when its file is first opened (lib/remote's fetcher: verified before
 * it is named), one fetch for all who wait for it. Linked into cfsctl
 * only: libcfs stays free of libfuse.
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/fetch.h"
#include "cfs/image.h"
#include "cfs/store.h"
#include "cfs/util.h"

#define BLOCK 4096
/* The kernel may cache what an immutable image shows for the mount's life. */
#define FOREVER (365.0 * 24 * 3600)
/*
 * The memory the hashes of verified files may take (with their records):
 * 16 MiB holds the hashes of 2 GiB of content, or of some 130000 files
 * of 8 KiB (a record takes 64 bytes beside its hashes). Past it the least recently opened file's are forgotten, and its
 * next open computes its digest again; a file whose hashes alone exceed
 * it keeps them only while it is open.
 */
#define VERIFIED_BUDGET (16u << 20)
#define VERIFIED_BUCKETS 65536 /* 512 KiB, allocated at the first */

/* What was verified of one backing file, the file known by its inode. */
struct verified {
	uint64_t ino;
	struct cfs_verity_leaves leaves;
	unsigned int opens; /* the open files that check reads against it */
	bool kept; /* in the table; else freed at the last close */
	bool said; /* a changed block was said once */
	struct verified *hnext; /* the bucket's chain */
	struct verified *older, *newer; /* the order of last use */
};

/* Where a readdir stopped, for the next one (resume_take()). */
#define RESUME_SLOTS 64
struct resume {
	fuse_ino_t node; /* 0: unused */
	off_t pos;
	struct cfs_dir_iter it;
};

struct cfsfuse {
	struct cfs_image *img;
	uint64_t root;
	int *dirfds; /* the basedirs, opened once */
	size_t n_dirs;
	int verity_check;
	bool trusted_listed; /* root's requests may list trusted.* (the first user namespace) */
	pthread_mutex_t say_lock; /* one path search at a time, for messages */
	const struct cli_mirrors *mirrors; /* --lazy-url, or NULL */
	const char *store; /* the first basedir, which fetches fill */
	pthread_mutex_t fetch_lock;
	pthread_cond_t fetch_done;
	struct inflight *fetching; /* the objects being fetched */
	char *image_esc; /* IMAGE, escaped for messages */
	pthread_mutex_t verified_lock;
	struct verified **vtab; /* VERIFIED_BUCKETS chains, or NULL before the first */
	struct verified *oldest, *newest;
	size_t vbytes; /* what the kept ones take */
	bool no_opendir; /* the kernel opens directories without asking */
	pthread_mutex_t resume_lock;
	struct resume resume[RESUME_SLOTS];
	unsigned int resume_next;
};

/* An object being fetched, and how many wait for it (its fetcher too). */
struct inflight {
	uint8_t digest[CFS_DIGEST_SIZE];
	bool done;
	int err;
	unsigned int waiters;
	struct inflight *next;
};

/* An open regular file. */
struct ofile {
	uint64_t ino;
	uint64_t size;
	int fd; /* the backing file, or -1 (content in the image, or empty) */
	bool in_image;
	struct verified *v; /* each read checked against it (no fs-verity on the file), or NULL */
	char *rel; /* the backing path, for messages */
};


static struct cfsfuse *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* FUSE's node ids: 1 is the root; the image's inode numbers move up by 2. */
static uint64_t node_of(const struct cfsfuse *fs, uint64_t ino)
{
	return ino == fs->root ? FUSE_ROOT_ID : ino + 2;
}

static int get_inode(struct cfsfuse *fs, fuse_ino_t node, struct cfs_inode *in)
{
	uint64_t ino;

	if (node == FUSE_ROOT_ID)
		ino = fs->root;
	else if (node < 2 || node - 2 == fs->root)
		return -ENOENT;
	else
		ino = node - 2;
	return cfs_image_inode(fs->img, ino, in) < 0 ? -EIO : 0;
}

static void fill_stat(const struct cfsfuse *fs, const struct cfs_inode *in, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = node_of(fs, in->ino);
	st->st_mode = in->mode;
	st->st_nlink = in->nlink;
	st->st_uid = in->uid;
	st->st_gid = in->gid;
	/* the image's number is the kernel's encoding, which FUSE's attr carries too */
	st->st_rdev = in->rdev;
	/* as the module: a symlink's size is its target's, blocks only for files */
	st->st_size = S_ISLNK(in->mode) ? (off_t)in->payload_len : (off_t)in->size;
	st->st_blksize = BLOCK;
	if (S_ISREG(in->mode))
		st->st_blocks = (blkcnt_t)((in->size + 511) / 512);
	st->st_mtim.tv_sec = in->mtime_sec;
	st->st_mtim.tv_nsec = in->mtime_nsec;
	st->st_atim = st->st_mtim; /* as the module: no atime of its own */
	st->st_ctim.tv_sec = in->ctime_sec;
	st->st_ctim.tv_nsec = in->ctime_nsec;
}

static void op_init(void *data, struct fuse_conn_info *conn)
{
	struct cfsfuse *fs = data;

	if (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) {
		conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
		fs->no_opendir = true;
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
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cfsfuse *fs = fs_of(req);
	struct fuse_entry_param e = { .attr_timeout = FOREVER, .entry_timeout = FOREVER };
	struct cfs_inode dir, in;
	uint64_t ino;
	int r;

	r = get_inode(fs, parent, &dir);
	if (!r)
		r = cfs_image_lookup(fs->img, &dir, name, strlen(name), &ino);
	if (!r)
		r = cfs_image_inode(fs->img, ino, &in);
	if (r == -ENOENT) {
		/* a negative entry, cached for the mount's life too */
		fuse_reply_entry(req, &e);
		return;
	}
	if (r) {
		fuse_reply_err(req, r == -ENOTDIR ? ENOTDIR : EIO);
		return;
	}
	e.ino = node_of(fs, in.ino);
	fill_stat(fs, &in, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct cfsfuse *fs = fs_of(req);
	struct cfs_inode in;
	struct stat st;
	int r;

	(void)fi;
	r = get_inode(fs, node, &in);
	if (r) {
		fuse_reply_err(req, -r);
		return;
	}
	fill_stat(fs, &in, &st);
	fuse_reply_attr(req, &st, FOREVER);
}

static void op_readlink(fuse_req_t req, fuse_ino_t node)
{
	struct cfsfuse *fs = fs_of(req);
	struct cfs_inode in;
	char buf[PATH_MAX];
	int r;

	r = get_inode(fs, node, &in);
	if (!r && !S_ISLNK(in.mode))
		r = -EINVAL;
	if (!r && (in.payload_len == 0 || in.payload_len >= sizeof(buf)))
		r = -EIO;
	if (r) {
		fuse_reply_err(req, -r);
		return;
	}
	memcpy(buf, in.payload, in.payload_len);
	buf[in.payload_len] = '\0';
	fuse_reply_readlink(req, buf);
}

/* ---- messages: the path of an inode, found when something must be said of it ---- */

struct find_path {
	uint64_t ino;
	char path[PATH_MAX];
};

static int find_path_fn(void *ctx, const struct cfs_walk_entry *e)
{
	struct find_path *f = ctx;

	if (e->inode->ino != f->ino)
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", e->path);
	return 1;
}

/* @s escaped for the terminal, in memory of its own (NULL: out of memory) */
static char *escaped(const char *s)
{
	size_t len = strlen(s), size = 4 * len + 1;
	char *out = malloc(size);

	if (out)
		cfs_escape_buf(out, size, s, len, CFS_ESCAPE_TEXT);
	return out;
}

/*
 * One line on stderr about the file @ino: the image, the file's path in it,
 * its backing file @obj (NULL: none) and @what.
 */
static void say(struct cfsfuse *fs, uint64_t ino, const char *obj, const char *what)
{
	struct find_path *f = malloc(sizeof(*f));
	char *path = NULL, *object = obj ? escaped(obj) : NULL;

	if (f) {
		f->ino = ino;
		f->path[0] = '\0';
		pthread_mutex_lock(&fs->say_lock);
		cfs_image_walk(fs->img, find_path_fn, f);
		pthread_mutex_unlock(&fs->say_lock);
		path = escaped(f->path);
	}
	cli_error("mount: '%s': '%s': %s%s%s%s", fs->image_esc, path ? path : "?",
		  object ? "object '" : "", object ? object : "", object ? "': " : "", what);
	free(object);
	free(path);
	free(f);
}

/* ---- what was verified, kept for the mount's life within VERIFIED_BUDGET ---- */

static size_t verified_bytes(const struct verified *v)
{
	return sizeof(*v) + (size_t)v->leaves.n * CFS_DIGEST_SIZE;
}

static void verified_free(struct verified *v)
{
	cfs_verity_leaves_free(&v->leaves);
	free(v);
}

/* Take @v out of the order of use (verified_lock held). */
static void verified_unlink(struct cfsfuse *fs, struct verified *v)
{
	*(v->older ? &v->older->newer : &fs->oldest) = v->newer;
	*(v->newer ? &v->newer->older : &fs->newest) = v->older;
	v->older = v->newer = NULL;
}

/* Forget @v (verified_lock held): freed now, or at its last close. */
static void verified_drop(struct cfsfuse *fs, struct verified *v)
{
	struct verified **pp = &fs->vtab[v->ino % VERIFIED_BUCKETS];

	while (*pp != v)
		pp = &(*pp)->hnext;
	*pp = v->hnext;
	verified_unlink(fs, v);
	fs->vbytes -= verified_bytes(v);
	v->kept = false;
	if (!v->opens)
		verified_free(v);
}

/* What was verified of the file @ino, taken for one more open; NULL: nothing kept. */
static struct verified *verified_get(struct cfsfuse *fs, uint64_t ino)
{
	struct verified *v = NULL;

	pthread_mutex_lock(&fs->verified_lock);
	if (fs->vtab)
		for (v = fs->vtab[ino % VERIFIED_BUCKETS]; v && v->ino != ino; v = v->hnext)
			;
	if (v) {
		v->opens++;
		verified_unlink(fs, v);
		v->older = fs->newest;
		*(fs->newest ? &fs->newest->newer : &fs->oldest) = v;
		fs->newest = v;
	}
	pthread_mutex_unlock(&fs->verified_lock);
	return v;
}

/*
 * Keep the hashes @l of the file @ino, just verified, taken for one open:
 * *@l is moved into what is returned (or freed, where another open kept
 * the same file's first). NULL: out of memory.
 */
static struct verified *verified_add(struct cfsfuse *fs, uint64_t ino, struct cfs_verity_leaves *l)
{
	struct verified *v = verified_get(fs, ino), *n;

	if (v) {
		cfs_verity_leaves_free(l);
		return v;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		cfs_verity_leaves_free(l);
		return NULL;
	}
	n->ino = ino;
	n->leaves = *l;
	memset(l, 0, sizeof(*l));
	n->opens = 1;
	pthread_mutex_lock(&fs->verified_lock);
	if (!fs->vtab)
		fs->vtab = calloc(VERIFIED_BUCKETS, sizeof(*fs->vtab));
	if (fs->vtab && verified_bytes(n) <= VERIFIED_BUDGET) {
		while (fs->vbytes + verified_bytes(n) > VERIFIED_BUDGET)
			verified_drop(fs, fs->oldest);
		n->kept = true;
		n->hnext = fs->vtab[ino % VERIFIED_BUCKETS];
		fs->vtab[ino % VERIFIED_BUCKETS] = n;
		n->older = fs->newest;
		*(fs->newest ? &fs->newest->newer : &fs->oldest) = n;
		fs->newest = n;
		fs->vbytes += verified_bytes(n);
	}
	pthread_mutex_unlock(&fs->verified_lock);
	return n;
}

/* An open of @v ends. */
static void verified_put(struct cfsfuse *fs, struct verified *v)
{
	bool gone;

	pthread_mutex_lock(&fs->verified_lock);
	gone = --v->opens == 0 && !v->kept;
	pthread_mutex_unlock(&fs->verified_lock);
	if (gone)
		verified_free(v);
}

static void verified_clear(struct cfsfuse *fs)
{
	while (fs->oldest)
		verified_drop(fs, fs->oldest);
	free(fs->vtab);
}

/* ---- files ---- */

static void free_ofile(struct cfsfuse *fs, struct ofile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->v)
		verified_put(fs, f->v);
	free(f->rel);
	free(f);
}

/*
 * Open the backing file @rel beneath the basedirs, as the module looks it
 * up: the first answer but ENOENT wins. The fd, or -errno.
 */
static int open_backing(struct cfsfuse *fs, const char *rel)
{
	for (size_t i = 0; i < fs->n_dirs; i++) {
		int fd = openat(fs->dirfds[i], rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		if (fd >= 0)
			return fd;
		if (errno != ENOENT)
			return -errno;
	}
	return -ENOENT;
}

/*
 * Check the backing file @f->fd against the digest the image records: the
 * kernel's measurement where it has fs-verity, else computed here at the
 * file's first open and its blocks' hashes kept; at a later open, its
 * reads are checked against the hashes kept, and a block changed since
 * reads EIO. 0, or -EIO after saying why.
 */
static int check_verity(struct cfsfuse *fs, struct ofile *f, const char *rel,
			const uint8_t want[CFS_DIGEST_SIZE])
{
	struct cfs_verity_leaves l = { 0 };
	uint8_t got[CFS_DIGEST_SIZE];
	int r;

	/* verified before: each read is checked, whatever the file is now */
	f->v = verified_get(fs, f->ino);
	if (f->v)
		return 0;
	r = cfs_verity_measure_fd(f->fd, got);
	if (r == -ENODATA || r == -EOPNOTSUPP || r == -ENOTTY) {
		/* computed: the whole file read once now, its blocks' hashes kept */
		r = cfs_verity_leaves_fd(f->fd, got, &l);
		if (r == 0 && memcmp(got, want, CFS_DIGEST_SIZE) == 0) {
			f->v = verified_add(fs, f->ino, &l);
			if (!f->v)
				r = -ENOMEM;
		}
		cfs_verity_leaves_free(&l);
	}
	if (r < 0) {
		say(fs, f->ino, rel, strerror(-r));
		return -EIO;
	}
	if (memcmp(got, want, CFS_DIGEST_SIZE) != 0) {
		say(fs, f->ino, rel, "its fs-verity digest is not the one the image records");
		return -EIO;
	}
	return 0;
}

/* Fetch the object @digest into the store: 0, -ENOENT (no mirror has it) or -EIO. */
static int fetch(struct cfsfuse *fs, const uint8_t digest[CFS_DIGEST_SIZE], uint64_t size,
		 char **why)
{
	/* the size the image records: a mirror that sends more is refused */
	struct cfs_fetch_object obj = { .size = size };
	struct cfs_fetch_options fo = {
		.basedir = fs->store,
		.urls = fs->mirrors->urls,
		.n_urls = fs->mirrors->n_urls,
		.jobs = 1,
		.retries = fs->mirrors->retries,
		.timeout = fs->mirrors->timeout,
		.cainfo = fs->mirrors->cacert,
		.logins = fs->mirrors->logins,
		.reserve = CFS_RESERVE_AUTO,
	};
	int r;

	memcpy(obj.digest, digest, CFS_DIGEST_SIZE);
	r = cfs_fetch_objects(&obj, 1, &fo, NULL);
	if (r < 0)
		*why = strdup(strerror(-r));
	else if (obj.status == CFS_FETCH_FETCHED || obj.status == CFS_FETCH_PRESENT)
		r = 0;
	else
		r = obj.status == CFS_FETCH_UNAVAILABLE ? -ENOENT : -EIO;
	if (r < 0 && !*why)
		*why = obj.reason ? obj.reason : strdup("no mirror has it");
	else
		free(obj.reason);
	return r;
}

/*
 * Have the store hold the object of the file @in: fetch it, or
 * wait for the fetch of it already running. 0, or -errno after saying why.
 */
static int fetch_object(struct cfsfuse *fs, const struct cfs_inode *in, const char *rel)
{
	struct inflight *p, **pp;
	char *why = NULL, msg[300];
	int r;

	pthread_mutex_lock(&fs->fetch_lock);
	for (p = fs->fetching; p; p = p->next)
		if (!p->done && memcmp(p->digest, in->digest, CFS_DIGEST_SIZE) == 0)
			break;
	if (p) {
		p->waiters++;
		while (!p->done)
			pthread_cond_wait(&fs->fetch_done, &fs->fetch_lock);
	} else {
		p = calloc(1, sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&fs->fetch_lock);
			return -ENOMEM;
		}
		memcpy(p->digest, in->digest, CFS_DIGEST_SIZE);
		p->waiters = 1;
		p->next = fs->fetching;
		fs->fetching = p;
		pthread_mutex_unlock(&fs->fetch_lock);
		r = fetch(fs, in->digest, in->size, &why);
		if (r < 0) {
			snprintf(msg, sizeof(msg), "fetching it from the mirrors: %s",
				 why ? why : strerror(-r));
			say(fs, in->ino, rel, msg);
		}
		free(why);
		pthread_mutex_lock(&fs->fetch_lock);
		p->err = r;
		p->done = true;
		pthread_cond_broadcast(&fs->fetch_done);
	}
	r = p->err;
	if (--p->waiters == 0) {
		for (pp = &fs->fetching; *pp != p; pp = &(*pp)->next)
			;
		*pp = p->next;
		free(p);
	}
	pthread_mutex_unlock(&fs->fetch_lock);
	return r;
}

static int open_file(struct cfsfuse *fs, const struct cfs_inode *in, struct ofile *f)
{
	struct cfs_inode_desc d;
	char rel[PATH_MAX];
	const char *p = in->payload;
	size_t len = in->payload_len;
	struct stat st;
	int r;

	cfs_inode_describe(fs->img, in, &d);
	if (d.content_in_image) {
		f->in_image = true;
		return 0;
	}
	if (len == 0)
		return in->size == 0 ? 0 : -EIO; /* an empty file has no backing file */
	if (fs->verity_check >= 2 && !in->has_digest) {
		say(fs, in->ino, NULL, "the image records no fs-verity digest for it (verity-check=2)");
		return -EIO;
	}
	while (len && *p == '/')
		p++, len--;
	if (len == 0 || len >= sizeof(rel) || memchr(p, '\0', len))
		return -EIO;
	memcpy(rel, p, len);
	rel[len] = '\0';
	r = open_backing(fs, rel);
	if (r == -ENOENT && fs->mirrors && in->has_digest) {
		r = fetch_object(fs, in, rel);
		if (r == 0)
			r = open_backing(fs, rel);
		else if (r != -ENOMEM)
			return r; /* said */
	}
	f->rel = strdup(rel);
	if (r < 0) {
		say(fs, in->ino, rel, strerror(-r));
		return r;
	}
	f->fd = r;
	if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != in->size) {
		say(fs, in->ino, rel, "not a regular file of the size the image records");
		return -EIO;
	}
	if (in->has_digest && fs->verity_check >= 1)
		return check_verity(fs, f, rel, in->digest);
	return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct cfsfuse *fs = fs_of(req);
	struct cfs_inode in;
	struct ofile *f;
	int r;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	r = get_inode(fs, node, &in);
	if (!r && !S_ISREG(in.mode))
		r = -EISDIR;
	f = r ? NULL : calloc(1, sizeof(*f));
	if (!r && !f)
		r = -ENOMEM;
	if (r) {
		fuse_reply_err(req, -r);
		return;
	}
	f->fd = -1;
	f->ino = in.ino;
	f->size = in.size;
	r = open_file(fs, &in, f);
	if (r) {
		free_ofile(fs, f);
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->keep_cache = 1; /* the content never changes */
	if (fuse_reply_open(req, fi) == -ENOENT)
		free_ofile(fs, f); /* the open was interrupted */
}

static void op_release(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	(void)node;
	free_ofile(fs_of(req), (struct ofile *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/*
 * Read the whole blocks around @size bytes at @off, check each against the
 * hash kept at open, and reply with the part asked for: a byte that is not
 * the one hashed is never served.
 */
static void read_checked(fuse_req_t req, struct cfsfuse *fs, struct ofile *f, size_t size,
			 uint64_t off)
{
	/* off + size is within the file (op_read); whole blocks, the last one may be short */
	uint64_t start = off / BLOCK * BLOCK, end = (off + size + BLOCK - 1) / BLOCK * BLOCK;
	size_t len, got = 0;
	uint8_t *buf;
	int r = 0;

	if (end > f->size)
		end = f->size;
	len = (size_t)(end - start);
	buf = malloc(len);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	while (got < len) {
		ssize_t n = pread(f->fd, buf + got, len - got, (off_t)(start + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO; /* it shrank */
			break;
		}
		got += (size_t)n;
	}
	if (!r)
		r = cfs_verity_leaves_check(&f->v->leaves, start, buf, len);
	if (r) {
		if (!__atomic_test_and_set(&f->v->said, __ATOMIC_RELAXED))
			say(fs, f->ino, f->rel,
			    r == -EIO ? "its content changed since it was verified: a block does not verify"
				      : strerror(-r));
		fuse_reply_err(req, r == -ENOMEM ? ENOMEM : EIO);
	} else {
		fuse_reply_buf(req, (const char *)buf + (off - start), size);
	}
	free(buf);
}

static void op_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct cfsfuse *fs = fs_of(req);
	struct ofile *f = (struct ofile *)(uintptr_t)fi->fh;

	(void)node;
	if (off < 0 || (uint64_t)off >= f->size || size == 0) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > f->size - (uint64_t)off)
		size = (size_t)(f->size - (uint64_t)off);
	if (f->in_image) {
		struct cfs_inode in;
		char *buf = malloc(size);
		int r = buf ? cfs_image_inode(fs->img, f->ino, &in) : -ENOMEM;

		if (!r)
			r = cfs_image_read(fs->img, &in, (uint64_t)off, buf, size);
		if (r)
			fuse_reply_err(req, r == -ENOMEM ? ENOMEM : EIO);
		else
			fuse_reply_buf(req, buf, size);
		free(buf);
		return;
	}
	if (f->fd < 0) {
		fuse_reply_err(req, EIO);
		return;
	}
	if (f->v) {
		read_checked(req, fs, f, size, (uint64_t)off);
		return;
	}
	/* the kernel checks a file with fs-verity; else no check was asked for */
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);

	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = f->fd;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
}

/* ---- directories: read from the image at each readdir, the listing cached by the kernel ---- */

/*
 * Where a readdir that did not reach the end stopped: the next one, at
 * that offset, goes on from there rather than from the start.
 */
static bool resume_take(struct cfsfuse *fs, fuse_ino_t node, off_t pos, struct cfs_dir_iter *it)
{
	bool found = false;

	pthread_mutex_lock(&fs->resume_lock);
	for (size_t i = 0; i < RESUME_SLOTS && !found; i++) {
		struct resume *p = &fs->resume[i];

		if (p->node == node && p->pos == pos) {
			*it = p->it;
			p->node = 0;
			found = true;
		}
	}
	pthread_mutex_unlock(&fs->resume_lock);
	return found;
}

static void resume_put(struct cfsfuse *fs, fuse_ino_t node, off_t pos, const struct cfs_dir_iter *it)
{
	struct resume *p;

	pthread_mutex_lock(&fs->resume_lock);
	p = &fs->resume[fs->resume_next++ % RESUME_SLOTS];
	p->node = node;
	p->pos = pos;
	p->it = *it;
	pthread_mutex_unlock(&fs->resume_lock);
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

/*
 * Add the entry @name at offset @pos - 1 to @buf: with its attributes for a
 * readdirplus (@in; NULL for "." and "..", which the kernel does not look
 * up), else with its inode number and type. The room it takes, as
 * fuse_add_direntry*() say.
 */
static size_t add_dirent(fuse_req_t req, struct cfsfuse *fs, char *buf, size_t room,
			 const char *name, const struct cfs_inode *in, uint64_t ino,
			 uint8_t type, off_t pos, bool plus)
{
	struct fuse_entry_param e = { .attr_timeout = FOREVER, .entry_timeout = FOREVER };

	if (plus && in) {
		e.ino = node_of(fs, in->ino);
		fill_stat(fs, in, &e.attr);
	} else {
		e.attr.st_ino = node_of(fs, ino);
		e.attr.st_mode = (mode_t)type << 12;
	}
	if (plus)
		return fuse_add_direntry_plus(req, buf, room, name, &e, pos);
	return fuse_add_direntry(req, buf, room, name, &e.attr, pos);
}

static void dir_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off, bool plus)
{
	struct cfsfuse *fs = fs_of(req);
	struct cfs_dir_iter it, at;
	struct cfs_inode dir, in;
	struct cfs_dirent de;
	char name[PATH_MAX];
	size_t used = 0, n;
	off_t pos = off < 0 ? 0 : off;
	char *buf = NULL;
	int r;

	r = get_inode(fs, node, &dir);
	if (!r && !S_ISDIR(dir.mode))
		r = -ENOTDIR;
	if (!r && !(buf = malloc(size ? size : 1)))
		r = -ENOMEM;
	if (r)
		goto err;
	/* offsets: "." ends at 1, ".." at 2, the image's Nth entry at N + 2 */
	for (; pos < 2; pos++) {
		n = add_dirent(req, fs, buf + used, size - used, pos ? ".." : ".", NULL, dir.ino,
			       DT_DIR, pos + 1, plus);
		if (n > size - used)
			goto reply;
		used += n;
	}
	if (!resume_take(fs, node, pos, &it)) {
		r = cfs_dir_iter_init(fs->img, &dir, &it);
		for (off_t i = 2; !r && i < pos; i++) {
			r = cfs_dir_iter_next(&it, &de);
			r = r == 1 ? 0 : r == 0 ? 1 : r; /* 1: past the end */
		}
		if (r == 1)
			goto reply;
		if (r)
			goto err;
	}
	for (;;) {
		at = it;
		r = cfs_dir_iter_next(&it, &de);
		if (r <= 0)
			break;
		if (de.name_len >= sizeof(name)) {
			r = -EFSCORRUPTED;
			break;
		}
		memcpy(name, de.name, de.name_len);
		name[de.name_len] = '\0';
		if (plus && (r = cfs_image_inode(fs->img, de.ino, &in)) < 0)
			break;
		n = add_dirent(req, fs, buf + used, size - used, name, &in, de.ino, de.d_type,
			       pos + 1, plus);
		if (n > size - used) {
			resume_put(fs, node, pos, &at);
			r = 0;
			break;
		}
		used += n;
		pos++;
	}
	if (r < 0)
		goto err;
reply:
	fuse_reply_buf(req, buf, used);
	free(buf);
	return;
err:
	if (r != -ENOMEM && r != -ENOTDIR) {
		say(fs, dir.ino, NULL, strerror(-r));
		r = -EIO;
	}
	fuse_reply_err(req, -r);
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

/* ---- xattrs, under their own names ---- */

struct xattr_ctx {
	const char *name; /* getxattr: the one wanted */
	size_t name_len;
	bool found;
	struct cfs_xattr copy;
	char *list; /* listxattr: names, each NUL-ended */
	size_t len, cap;
	bool no_trusted; /* listxattr: leave out trusted.*, which the kernel would refuse to read */
};

static int get_fn(void *ctx, const struct cfs_xattr *x)
{
	struct xattr_ctx *c = ctx;

	if (x->key_len != c->name_len || memcmp(x->key, c->name, x->key_len) != 0)
		return 0;
	c->copy = *x;
	c->found = true;
	return 1;
}

static int list_fn(void *ctx, const struct cfs_xattr *x)
{
	struct xattr_ctx *c = ctx;

	if (c->no_trusted && x->key_len >= 8 && memcmp(x->key, "trusted.", 8) == 0)
		return 0;
	if (c->cap) {
		if (x->key_len + 1 > c->cap - c->len)
			return -ERANGE;
		memcpy(c->list + c->len, x->key, x->key_len);
		c->list[c->len + x->key_len] = '\0';
	}
	c->len += x->key_len + 1;
	return 0;
}

static void op_getxattr(fuse_req_t req, fuse_ino_t node, const char *name, size_t size)
{
	struct cfsfuse *fs = fs_of(req);
	struct xattr_ctx c = { .name = name, .name_len = strlen(name) };
	struct cfs_inode in;
	int r;

	r = get_inode(fs, node, &in);
	if (!r)
		r = cfs_image_xattrs(fs->img, &in, get_fn, &c);
	if (r < 0) {
		fuse_reply_err(req, EIO);
		return;
	}
	if (!c.found)
		fuse_reply_err(req, ENODATA);
	else if (size == 0)
		fuse_reply_xattr(req, c.copy.value_len);
	else if (size < c.copy.value_len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, (const char *)c.copy.value, c.copy.value_len);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t node, size_t size)
{
	struct cfsfuse *fs = fs_of(req);
	struct xattr_ctx c = { 0 };
	struct cfs_inode in;
	int r;

	/* as a disk filesystem lists them: trusted.* only to the privileged */
	c.no_trusted = !(fs->trusted_listed && fuse_req_ctx(req)->uid == 0);
	r = get_inode(fs, node, &in);
	if (!r && size) {
		c.list = malloc(size);
		c.cap = size;
		if (!c.list)
			r = -ENOMEM;
	}
	if (!r)
		r = cfs_image_xattrs(fs->img, &in, list_fn, &c);
	if (r < 0)
		fuse_reply_err(req, r == -ERANGE || r == -ENOMEM ? -r : EIO);
	else if (size == 0)
		fuse_reply_xattr(req, c.len);
	else
		fuse_reply_buf(req, c.list, c.len);
	free(c.list);
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

/* Every path, so that a corrupt tree is refused before anything is mounted. */
static int walk_fn(void *ctx, const struct cfs_walk_entry *e)
{
	(void)ctx, (void)e;
	return 0;
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
	struct cfs_inode root;
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
	r = cfs_image_open_mem(*data, len, &fs->img);
	if (r < 0) {
		cli_error("mount: '%s': not an image cfsctl can read: %s", o->image, strerror(-r));
		return EXIT_FAIL;
	}
	cfs_image_set_view(fs->img, CFS_VIEW_MOUNTED);
	fs->root = cfs_image_root(fs->img);
	r = cfs_image_inode(fs->img, fs->root, &root);
	if (!r && !S_ISDIR(root.mode))
		r = -EFSCORRUPTED;
	if (!r)
		r = cfs_image_walk(fs->img, walk_fn, NULL);
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
	pthread_mutex_init(&fs.say_lock, NULL);
	pthread_mutex_init(&fs.fetch_lock, NULL);
	pthread_cond_init(&fs.fetch_done, NULL);
	pthread_mutex_init(&fs.verified_lock, NULL);
	pthread_mutex_init(&fs.resume_lock, NULL);
	fs.image_esc = escaped(o->image);
	fs.dirfds = calloc(nd ? nd : 1, sizeof(int));
	if (!fs.image_esc || !fs.dirfds) {
		cli_error("mount: %s", strerror(ENOMEM));
		goto out;
	}
	if (open_image(&fs, o, &data) != EXIT_OK)
		goto out;
	for (; fs.n_dirs < nd; fs.n_dirs++) {
		fs.dirfds[fs.n_dirs] = open(o->basedirs->dirs[fs.n_dirs],
					    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fs.dirfds[fs.n_dirs] < 0) {
			cli_error("mount: basedir '%s': %s", o->basedirs->dirs[fs.n_dirs],
				  strerror(errno));
			goto out;
		}
	}

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
	verified_clear(&fs);
	pthread_mutex_destroy(&fs.verified_lock);
	pthread_mutex_destroy(&fs.resume_lock);
	pthread_mutex_destroy(&fs.say_lock);
	pthread_mutex_destroy(&fs.fetch_lock);
	pthread_cond_destroy(&fs.fetch_done);
	return rc;
}
