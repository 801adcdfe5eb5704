// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl mount --fuse's operations, apart from libfuse: each request's
 * answer (an entry, attributes, a listing, an xattr, bytes of a file)
 * computed from the image, read only through libcfs's format-blind reader
 * in its mounted view, and from the backing files, opened beneath each
 * basedir in turn and checked against the digests the image records.
 * fuse.c hands the answers to libfuse; fuzz/fuzz_fuse.c drives these on
 * crafted images without a kernel.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse.h"
#include "cfs/fetch.h"
#include "cfs/store.h"

/* FUSE's node ids: 1 is the root; the image's inode numbers move up by 2. */
static uint64_t node_of(const struct cfsfuse *fs, uint64_t ino)
{
	return ino == fs->root ? CFSFUSE_ROOT : ino + 2;
}

static int get_inode(struct cfsfuse *fs, uint64_t node, struct cfs_inode *in)
{
	uint64_t ino;

	if (node == CFSFUSE_ROOT)
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
char *cfsfuse_escaped(const char *s)
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
	char *path = NULL, *object = obj ? cfsfuse_escaped(obj) : NULL;

	if (f) {
		f->ino = ino;
		f->path[0] = '\0';
		pthread_mutex_lock(&fs->say_lock);
		cfs_image_walk(fs->img, find_path_fn, f);
		pthread_mutex_unlock(&fs->say_lock);
		path = cfsfuse_escaped(f->path);
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


/* ---- files ---- */

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

/*
 * The backing path of the regular file @in, relative to the basedirs, into
 * @rel (PATH_MAX): 1, 0 where it has none (content in the image, or empty),
 * or -EIO (a path no basedir can hold).
 */
static int backing_rel(struct cfsfuse *fs, const struct cfs_inode *in, char *rel)
{
	struct cfs_inode_desc d;
	const char *p = in->payload;
	size_t len = in->payload_len;

	cfs_inode_describe(fs->img, in, &d);
	if (d.content_in_image)
		return 0;
	if (len == 0)
		return in->size == 0 ? 0 : -EIO; /* an empty file has no backing file */
	while (len && *p == '/')
		p++, len--;
	if (len == 0 || len >= PATH_MAX || memchr(p, '\0', len))
		return -EIO;
	memcpy(rel, p, len);
	rel[len] = '\0';
	return 1;
}

static int open_file(struct cfsfuse *fs, const struct cfs_inode *in, struct ofile *f)
{
	struct cfs_inode_desc d;
	char rel[PATH_MAX];
	struct stat st;
	int r;

	r = backing_rel(fs, in, rel);
	if (r <= 0) {
		cfs_inode_describe(fs->img, in, &d);
		f->in_image = d.content_in_image;
		return r;
	}
	if (fs->verity_check >= 2 && !in->has_digest) {
		say(fs, in->ino, NULL, "the image records no fs-verity digest for it (verity-check=2)");
		return -EIO;
	}
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


void cfsfuse_init(struct cfsfuse *fs)
{
	pthread_mutex_init(&fs->say_lock, NULL);
	pthread_mutex_init(&fs->fetch_lock, NULL);
	pthread_cond_init(&fs->fetch_done, NULL);
	pthread_mutex_init(&fs->verified_lock, NULL);
	pthread_mutex_init(&fs->resume_lock, NULL);
	pthread_mutex_init(&fs->node_lock, NULL);
	pthread_cond_init(&fs->node_done, NULL);
}

void cfsfuse_fini(struct cfsfuse *fs)
{
	for (size_t i = 0; i < NODE_FILES; i++) {
		if (fs->node_files[i])
			cfsfuse_node_put(fs, fs->node_files[i]);
		fs->node_files[i] = NULL;
	}
	while (fs->oldest)
		verified_drop(fs, fs->oldest);
	free(fs->vtab);
	fs->vtab = NULL;
	pthread_mutex_destroy(&fs->say_lock);
	pthread_mutex_destroy(&fs->fetch_lock);
	pthread_cond_destroy(&fs->fetch_done);
	pthread_mutex_destroy(&fs->verified_lock);
	pthread_mutex_destroy(&fs->resume_lock);
	pthread_mutex_destroy(&fs->node_lock);
	pthread_cond_destroy(&fs->node_done);
}

/*
 * Is the backing file of @in there, as its open would find it: a regular
 * file of the size the image records, beneath the first basedir that does
 * not answer ENOENT? No backing file is there too; a file that
 * --verity-check=2 refuses is not.
 */
static bool object_there(struct cfsfuse *fs, const struct cfs_inode *in)
{
	char rel[PATH_MAX];
	struct stat st;
	int r = backing_rel(fs, in, rel);

	if (r <= 0)
		return r == 0;
	if (fs->verity_check >= 2 && !in->has_digest)
		return false;
	for (size_t i = 0; i < fs->n_dirs; i++) {
		if (fstatat(fs->dirfds[i], rel, &st, 0) == 0)
			return S_ISREG(st.st_mode) && (uint64_t)st.st_size == in->size;
		if (errno != ENOENT)
			return false;
	}
	return false;
}

/*
 * Every path, so that a corrupt tree is refused before anything is
 * mounted; and each regular file's backing file looked for, until one is
 * not there.
 */
static int walk_fn(void *ctx, const struct cfs_walk_entry *e)
{
	struct cfsfuse *fs = ctx;

	if (fs->objects_there && S_ISREG(e->inode->mode) && !e->first_path &&
	    !object_there(fs, e->inode))
		fs->objects_there = false;
	return 0;
}

int cfsfuse_start(struct cfsfuse *fs, struct cfs_image *img)
{
	struct cfs_inode root;
	int r;

	fs->img = img;
	cfs_image_set_view(img, CFS_VIEW_MOUNTED);
	fs->root = cfs_image_root(img);
	r = cfs_image_inode(img, fs->root, &root);
	if (!r && !S_ISDIR(root.mode))
		r = -EFSCORRUPTED;
	fs->objects_there = true;
	if (!r)
		r = cfs_image_walk(img, walk_fn, fs);
	if (r < 0)
		fs->objects_there = false;
	return r < 0 ? r : 0;
}

/* ---- entries and attributes ---- */

int cfsfuse_lookup(struct cfsfuse *fs, uint64_t parent, const char *name, uint64_t *node,
		   struct stat *st)
{
	struct cfs_inode dir, in;
	uint64_t ino;
	int r;

	r = get_inode(fs, parent, &dir);
	if (!r)
		r = cfs_image_lookup(fs->img, &dir, name, strlen(name), &ino);
	if (!r)
		r = cfs_image_inode(fs->img, ino, &in);
	if (r == -ENOENT || r == -ENOTDIR)
		return r;
	if (r)
		return -EIO;
	*node = node_of(fs, in.ino);
	fill_stat(fs, &in, st);
	return 0;
}

int cfsfuse_getattr(struct cfsfuse *fs, uint64_t node, struct stat *st)
{
	struct cfs_inode in;
	int r = get_inode(fs, node, &in);

	if (!r)
		fill_stat(fs, &in, st);
	return r;
}

int cfsfuse_readlink(struct cfsfuse *fs, uint64_t node, char *buf, size_t size)
{
	struct cfs_inode in;
	int r;

	r = get_inode(fs, node, &in);
	if (!r && !S_ISLNK(in.mode))
		r = -EINVAL;
	if (!r && (in.payload_len == 0 || in.payload_len >= size))
		r = -EIO;
	if (r)
		return r;
	memcpy(buf, in.payload, in.payload_len);
	buf[in.payload_len] = '\0';
	return 0;
}

/* ---- reads ---- */

/* Open the regular file @node into @f (f->fd -1): 0, or -errno. */
static int open_node(struct cfsfuse *fs, uint64_t node, int flags, struct ofile *f)
{
	struct cfs_inode in;
	int r;

	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	r = get_inode(fs, node, &in);
	if (!r && !S_ISREG(in.mode))
		r = -EISDIR;
	if (r)
		return r;
	f->ino = in.ino;
	f->size = in.size;
	return open_file(fs, &in, f);
}

int cfsfuse_open(struct cfsfuse *fs, uint64_t node, int flags, struct ofile **out)
{
	struct ofile *f;
	int r;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = -1;
	r = open_node(fs, node, flags, f);
	if (r) {
		cfsfuse_release(fs, f);
		return r;
	}
	*out = f;
	return 0;
}

void cfsfuse_release(struct cfsfuse *fs, struct ofile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->v)
		verified_put(fs, f->v);
	free(f->rel);
	free(f);
}

/*
 * Files the kernel opened without asking (fuse.c: FUSE_CAP_NO_OPEN_SUPPORT)
 * are opened here at their first read, by node, and kept open in one of
 * NODE_FILES slots (the node's number picks it) until another node takes
 * the slot or the mount ends. A slot holds a failed open too, so that its
 * reads go on failing with one line said. An ofile here counts its users:
 * the slot, and each read that holds it.
 */
static void node_file_put(struct cfsfuse *fs, struct ofile *f)
{
	bool gone;

	pthread_mutex_lock(&fs->node_lock);
	gone = --f->refs == 0;
	pthread_mutex_unlock(&fs->node_lock);
	if (gone)
		cfsfuse_release(fs, f);
}

/*
 * The file @node, open and checked as cfsfuse_open() checks it, taken
 * for one read (cfsfuse_node_put() after): 0 and *@out, or -errno (-EIO
 * where it cannot be served, said once).
 */
int cfsfuse_node_get(struct cfsfuse *fs, uint64_t node, struct ofile **out)
{
	struct ofile **slot = &fs->node_files[node % NODE_FILES], *f, *old;
	int r;

	pthread_mutex_lock(&fs->node_lock);
	while ((f = *slot) && f->node == node && !f->ready)
		pthread_cond_wait(&fs->node_done, &fs->node_lock); /* being opened */
	if (f && f->node == node) {
		r = f->err;
		if (!r)
			f->refs++;
		pthread_mutex_unlock(&fs->node_lock);
		*out = r ? NULL : f;
		return r;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		pthread_mutex_unlock(&fs->node_lock);
		return -ENOMEM;
	}
	f->fd = -1;
	f->node = node;
	f->refs = 2; /* the slot's and this read's */
	old = *slot;
	*slot = f;
	pthread_mutex_unlock(&fs->node_lock);
	if (old)
		node_file_put(fs, old);

	r = open_node(fs, node, O_RDONLY, f);
	/* a read answers EIO, not what the open would have (ENOENT, EISDIR) */
	if (r && r != -ENOMEM)
		r = -EIO;
	pthread_mutex_lock(&fs->node_lock);
	f->err = r;
	f->ready = true;
	if (r == -ENOMEM && *slot == f) {
		*slot = NULL; /* tried again at the next read */
		f->refs--;
	}
	pthread_cond_broadcast(&fs->node_done);
	pthread_mutex_unlock(&fs->node_lock);
	if (r) {
		node_file_put(fs, f);
		return r;
	}
	*out = f;
	return 0;
}

void cfsfuse_node_put(struct cfsfuse *fs, struct ofile *f)
{
	node_file_put(fs, f);
}

/*
 * Read the whole blocks around @size bytes at @off, check each against the
 * hash kept, and answer the part asked for: a byte that is not the one
 * hashed is never served.
 */
static int read_checked(struct cfsfuse *fs, struct ofile *f, size_t size, uint64_t off,
			struct cfsfuse_data *d)
{
	/* off + size is within the file (cfsfuse_read); whole blocks, the last one may be short */
	uint64_t start = off / BLOCK * BLOCK, end = (off + size + BLOCK - 1) / BLOCK * BLOCK;
	size_t len, got = 0;
	uint8_t *buf;
	int r = 0;

	if (end > f->size)
		end = f->size;
	len = (size_t)(end - start);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
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
		free(buf);
		return r == -ENOMEM ? -ENOMEM : -EIO;
	}
	d->buf = (char *)buf;
	d->data = d->buf + (off - start);
	d->len = size;
	return 0;
}

int cfsfuse_read(struct cfsfuse *fs, struct ofile *f, size_t size, off_t off,
		 struct cfsfuse_data *d)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (off < 0 || (uint64_t)off >= f->size || size == 0)
		return 0;
	if (size > f->size - (uint64_t)off)
		size = (size_t)(f->size - (uint64_t)off);
	if (f->in_image) {
		struct cfs_inode in;
		int r;

		d->buf = malloc(size);
		r = d->buf ? cfs_image_inode(fs->img, f->ino, &in) : -ENOMEM;
		if (!r)
			r = cfs_image_read(fs->img, &in, (uint64_t)off, d->buf, size);
		if (r) {
			free(d->buf);
			d->buf = NULL;
			return r == -ENOMEM ? -ENOMEM : -EIO;
		}
		d->data = d->buf;
		d->len = size;
		return 0;
	}
	if (f->fd < 0)
		return -EIO;
	if (f->v)
		return read_checked(fs, f, size, (uint64_t)off, d);
	/* the kernel checks a file with fs-verity; else no check was asked for */
	d->fd = f->fd;
	d->pos = (uint64_t)off;
	d->len = size;
	return 0;
}

/* ---- directories: read from the image at each readdir, the listing cached by the kernel ---- */

/*
 * Where a readdir that did not reach the end stopped: the next one, at
 * that offset, goes on from there rather than from the start.
 */
static bool resume_take(struct cfsfuse *fs, uint64_t node, off_t pos, struct cfs_dir_iter *it)
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

static void resume_put(struct cfsfuse *fs, uint64_t node, off_t pos, const struct cfs_dir_iter *it)
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
 * The entry @name, ending at offset @pos, as @add puts it: with its
 * attributes in a listing with them (@in; NULL for "." and "..", which the
 * kernel does not look up), else with its inode number and type.
 */
static size_t add_dirent(struct cfsfuse *fs, cfsfuse_add_fn add, void *ctx, char *buf,
			 size_t room, const char *name, const struct cfs_inode *in, uint64_t ino,
			 uint8_t type, off_t pos, bool plus)
{
	struct cfsfuse_dirent e = { .name = name, .pos = pos };

	if (plus && in) {
		e.node = node_of(fs, in->ino);
		fill_stat(fs, in, &e.attr);
	} else {
		e.attr.st_ino = node_of(fs, ino);
		e.attr.st_mode = (mode_t)type << 12;
	}
	return add(ctx, buf, room, &e);
}

int cfsfuse_readdir(struct cfsfuse *fs, uint64_t node, char *buf, size_t size, off_t off,
		    bool plus, cfsfuse_add_fn add, void *ctx, size_t *used)
{
	struct cfs_dir_iter it, at;
	struct cfs_inode dir, in;
	struct cfs_dirent de;
	char name[PATH_MAX];
	off_t pos = off < 0 ? 0 : off;
	size_t n;
	int r;

	*used = 0;
	r = get_inode(fs, node, &dir);
	if (!r && !S_ISDIR(dir.mode))
		r = -ENOTDIR;
	if (r)
		return r;
	/* offsets: "." ends at 1, ".." at 2, the image's Nth entry at N + 2 */
	for (; pos < 2; pos++) {
		n = add_dirent(fs, add, ctx, buf + *used, size - *used, pos ? ".." : ".", NULL,
			       dir.ino, DT_DIR, pos + 1, plus);
		if (n > size - *used)
			return 0;
		*used += n;
	}
	if (!resume_take(fs, node, pos, &it)) {
		r = cfs_dir_iter_init(fs->img, &dir, &it);
		for (off_t i = 2; !r && i < pos; i++) {
			r = cfs_dir_iter_next(&it, &de);
			r = r == 1 ? 0 : r == 0 ? 1 : r; /* 1: past the end */
		}
		if (r == 1)
			return 0;
	}
	while (!r) {
		at = it;
		r = cfs_dir_iter_next(&it, &de);
		if (r <= 0)
			break;
		r = 0;
		if (de.name_len >= sizeof(name)) {
			r = -EFSCORRUPTED;
			break;
		}
		memcpy(name, de.name, de.name_len);
		name[de.name_len] = '\0';
		if (plus && (r = cfs_image_inode(fs->img, de.ino, &in)) < 0)
			break;
		n = add_dirent(fs, add, ctx, buf + *used, size - *used, name, &in, de.ino,
			       de.d_type, pos + 1, plus);
		if (n > size - *used) {
			resume_put(fs, node, pos, &at);
			break;
		}
		*used += n;
		pos++;
	}
	if (r < 0 && r != -ENOMEM) {
		say(fs, dir.ino, NULL, strerror(-r));
		r = -EIO;
	}
	return r < 0 ? r : 0;
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

int cfsfuse_getxattr(struct cfsfuse *fs, uint64_t node, const char *name, size_t size,
		     const void **value, size_t *len)
{
	struct xattr_ctx c = { .name = name, .name_len = strlen(name) };
	struct cfs_inode in;
	int r;

	r = get_inode(fs, node, &in);
	if (!r)
		r = cfs_image_xattrs(fs->img, &in, get_fn, &c);
	if (r < 0)
		return -EIO;
	if (!c.found)
		return -ENODATA;
	*value = c.copy.value;
	*len = c.copy.value_len;
	return size && size < c.copy.value_len ? -ERANGE : 0;
}

int cfsfuse_listxattr(struct cfsfuse *fs, uint64_t node, bool trusted, char *buf, size_t size,
		      size_t *len)
{
	struct xattr_ctx c = { .list = buf, .cap = size, .no_trusted = !trusted };
	struct cfs_inode in;
	int r;

	r = get_inode(fs, node, &in);
	if (!r)
		r = cfs_image_xattrs(fs->img, &in, list_fn, &c);
	if (r < 0)
		return r == -ERANGE || r == -ENOMEM ? r : -EIO;
	*len = c.len;
	return 0;
}
