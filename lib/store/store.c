// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_finish() and the digest store. Every regular file's content is
 * read exactly once. A file of up to 1 MiB is read whole in one call,
 * hashed from memory, and written in one call to a new object only when
 * the store lacks it. A larger one is hashed
 * piece by piece (struct cfs_verity: holes, found with SEEK_DATA or
 * between a stream's pieces, cost one hash per tree level), and each piece
 * is written to the new object as it goes, holes left holes (or the object
 * is a reflink of the source, and the digest is computed from the clone).
 * Writing keeps --reserve free on the store's filesystem. A new object is an unnamed file
 * (O_TMPFILE) held open until it is published; where the filesystem or a
 * missing /proc cannot do that, it is a temporary named ".tmp-PID-N" in
 * the store's top directory. Objects are published in a second pass: once
 * every new object is written, one syncfs() makes them all durable (one
 * fsync per object cost most of a build of many small files), then each
 * gets fs-verity where the filesystem has it and is linked (a temporary:
 * linked, then unlinked) to "xx/<62 hex>" without replacing an object
 * already there, and
 * a last syncfs() makes the names durable before the image refers to
 * them. The open files are what bounds a pass: a build of more new objects
 * than it may hold open writes and publishes them in batches, unless the
 * caller must see every digest before any object is published (the
 * before_publish callback, which writes the image): then its temporaries
 * get names, and hold no file open. A build
 * killed at any moment leaves only complete objects under object names;
 * an unnamed object vanishes with the process, and named temporaries are
 * removed by the next build. Both passes run on a small pool of threads. A
 * stream (a tar archive) cannot wait for the pool: cfs_store_stream()
 * hashes and writes each file as the stream reaches it, under temporary
 * names, and the pool only publishes those. From before the pool's first
 * temporary until the names are durable the build holds the store's lock
 * shared (cfs_store_lock()), so that cfsctl gc, which takes it
 * exclusively, never removes an object the build found present or has just
 * published; a stream's temporaries are those of a live process, which gc
 * leaves alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <libfsverity.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfs/store.h"
#include "index.h"
#include "base/internal.h"
#include "base/tree.h"

#define TMP_PREFIX CFS_BUILD_TMP_PREFIX
#define TMP_NAME_SIZE 48
/* New objects a batch holds open at most, at least, and open files kept spare. */
#define BATCH_MAX 16384
#define BATCH_MIN 64
#define BATCH_SPARE 256

enum pass { PASS_WRITE, PASS_PUBLISH };

/* A new object: an unnamed file open as @fd, or a temporary named @tmp. */
struct newobj {
	int fd; /* -1: none (or, for a named one waiting to be published, closed) */
	char tmp[TMP_NAME_SIZE]; /* "": unnamed */
};

struct pool {
	const struct cfs_build_options *opts;
	enum pass pass;
	int root_fd; /* the scanned directory, or -1 for a dumpfile tree */
	const char *root_path;
	int store_fd; /* -1 without a digest store */
	pid_t pid; /* in the names of our temporaries */
	struct cfs_node **jobs;
	struct newobj *objs; /* per job: its new object to publish, if any */
	size_t n_jobs;
	size_t end; /* the jobs of this batch end here */
	atomic_size_t next;
	atomic_size_t done;
	atomic_bool failed;
	/* Learnt from the first object, the same for the rest: the store is one filesystem. */
	atomic_bool no_clone; /* FICLONE fails from the source to the store */
	atomic_bool no_verity; /* the store has no fs-verity (and it is not required) */
	atomic_bool named; /* no O_TMPFILE (or no /proc): temporaries have names */
	pthread_mutex_t lock; /* first_err, err_job, progress */
	int first_err;
	size_t err_job;
};

/*
 * The source of a digest computation. File content is read in large pieces
 * into @buf and hashed from there; holes (found with SEEK_DATA, or between
 * the pieces a stream gives) are neither read nor hashed block by block
 * (cfs_verity_zeros()). With @copy_fd, each piece is also written to the
 * new object, zero blocks skipped so that sparse files stay sparse.
 */
#define READ_BUF_SIZE (1024 * 1024)

struct reader {
	int in_fd; /* -1: content comes from @pull or @mem */
	cfs_pull_fn pull; /* a stream (a tar archive); NULL: not */
	void *pull_ctx;
	bool pull_failed;
	const uint8_t *mem;
	uint64_t size; /* what the content should be */
	uint64_t pos; /* of the next byte to hash */
	uint8_t *buf;
	const uint8_t *piece; /* the next piece of data (in @buf, or the stream's) */
	size_t piece_len;
	uint64_t hole; /* or: the next piece is a hole of that many bytes */
	const uint8_t *pend; /* a stream's piece not reached yet: @pend_len bytes at @pend_off */
	size_t pend_len;
	uint64_t pend_off;
	bool pull_end; /* the stream gave its last piece */
	int copy_fd; /* -1: no copy */
	uint64_t copy_end; /* the copy's size so far: a tail of zero blocks is not written */
	uint64_t reserve; /* bytes of the store's filesystem writing keeps free */
	bool dense; /* no holes (st_blocks covers st_size): SEEK_DATA would find none */
	bool eof_checked; /* reading found the file's end where it should be */
	bool short_read; /* the file ended before its recorded size */
	bool copy_failed; /* writing the copy failed (a full store, say) */
};

static bool all_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/*
 * Room to write @len bytes to the store's filesystem (@fd is a file there)
 * and keep @reserve free. Asked of the filesystem once in a while, not on
 * every write: what was free at the last look is spent down, shared by
 * every thread, and looked at again once spent (or every 256 MiB).
 */
static pthread_mutex_t space_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t space_left; /* under space_lock */
static uint64_t space_free_seen, space_reserve_seen; /* for the message */

#define SPACE_LOOK_EVERY ((int64_t)256 << 20)

static int take_space(int fd, uint64_t reserve, size_t len)
{
	struct statvfs sv;
	int r = 0;

	if (reserve == 0)
		return 0;
	pthread_mutex_lock(&space_lock);
	if (space_left < (int64_t)len) {
		if (fstatvfs(fd, &sv) < 0) {
			r = -errno;
		} else {
			uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
			uint64_t total = (uint64_t)sv.f_blocks * sv.f_frsize;

			if (reserve == CFS_RESERVE_AUTO)
				reserve = total / 20 < CFS_RESERVE_AUTO_MAX ? total / 20
									    : CFS_RESERVE_AUTO_MAX;
			space_free_seen = avail;
			space_reserve_seen = reserve;
			space_left = avail > reserve ? (int64_t)(avail - reserve) : 0;
			if (space_left > SPACE_LOOK_EVERY)
				space_left = SPACE_LOOK_EVERY;
			if (space_left < (int64_t)len) {
				space_left = 0;
				r = -ENOSPC;
			}
		}
	}
	if (r == 0)
		space_left -= (int64_t)len;
	pthread_mutex_unlock(&space_lock);
	if (r == -ENOSPC)
		cfs_msg("the digest store's filesystem has %llu bytes free, and %llu are kept free "
			"(--reserve)",
			(unsigned long long)space_free_seen, (unsigned long long)space_reserve_seen);
	return r;
}

/* Write @len bytes of @p, which belong at @off, to the copy, but no zero blocks. */
static int copy_out(struct reader *rd, const uint8_t *p, size_t len, uint64_t off)
{
	size_t i = 0;

	while (i < len) {
		size_t start, blk = len - i < 4096 ? len - i : 4096;
		int r;

		if (all_zero(p + i, blk)) {
			i += blk;
			continue;
		}
		/* A run of non-zero blocks goes out in one write. */
		start = i;
		do {
			i += blk;
			blk = len - i < 4096 ? len - i : 4096;
		} while (i < len && !all_zero(p + i, blk));
		r = take_space(rd->copy_fd, rd->reserve, i - start);
		if (r == 0)
			r = cfs_pwrite_all(rd->copy_fd, p + start, i - start, off + start);
		if (r) {
			rd->copy_failed = true;
			return r;
		}
		if (off + i > rd->copy_end)
			rd->copy_end = off + i;
	}
	return 0;
}

/* The next piece of the file at rd->pos: data into rd->buf, or a hole. */
static int refill(struct reader *rd)
{
	uint64_t left = rd->size - rd->pos;
	size_t want = left < READ_BUF_SIZE ? (size_t)left : READ_BUF_SIZE;
	off_t data = rd->dense ? (off_t)rd->pos : lseek(rd->in_fd, (off_t)rd->pos, SEEK_DATA);
	bool last = want == left;
	size_t got = 0;

	if (data < 0 && errno == ENXIO)
		data = (off_t)rd->size; /* a hole to the end */
	if (data > (off_t)rd->pos) {
		/* Nothing to read or copy: the object gets a hole too. */
		rd->hole = (uint64_t)data - rd->pos;
		if (rd->hole > left)
			rd->hole = left;
		return 0;
	}
	/* The last piece asks for one byte more: the file must end there. */
	while (got < want + last) {
		ssize_t n = pread(rd->in_fd, rd->buf + got, want + last - got, (off_t)(rd->pos + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (last && got == want)
			break; /* a short read of a regular file: its end, where it should be */
	}
	if (got < want || got > want) {
		rd->short_read = true; /* shorter or longer than it was scanned */
		return -EIO;
	}
	rd->eof_checked = last;
	rd->piece = rd->buf;
	rd->piece_len = got;
	return rd->copy_fd >= 0 ? copy_out(rd, rd->buf, got, rd->pos) : 0;
}

/*
 * The next piece of a stream at rd->pos, and its copy: what it gives, or
 * the hole before it (or before its end).
 */
static int refill_pull(struct reader *rd)
{
	int r;

	if (!rd->pend_len && !rd->pull_end) {
		const void *data;

		r = rd->pull(rd->pull_ctx, &data, &rd->pend_len, &rd->pend_off);
		if (r) {
			rd->pull_failed = true;
			return r;
		}
		rd->pend = data;
		rd->pull_end = rd->pend_len == 0;
	}
	if (rd->pull_end) {
		rd->hole = rd->size - rd->pos; /* a sparse file's tail */
		return 0;
	}
	if (rd->pend_off < rd->pos || rd->pend_off > rd->size ||
	    rd->pend_len > rd->size - rd->pend_off) {
		rd->pull_failed = true; /* the source checks that, and says so */
		return -EINVAL;
	}
	if (rd->pend_off > rd->pos) {
		rd->hole = rd->pend_off - rd->pos;
		return 0;
	}
	rd->piece = rd->pend;
	rd->piece_len = rd->pend_len;
	rd->pend_len = 0;
	return rd->copy_fd >= 0 ? copy_out(rd, rd->piece, rd->piece_len, rd->pos) : 0;
}

static int compute_digest(struct reader *rd, uint64_t size, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct cfs_verity *v = malloc(sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	r = cfs_verity_init(v, size);
	if (r == 0 && rd->in_fd < 0 && !rd->pull) {
		r = cfs_verity_update(v, rd->mem, (size_t)size);
		if (r == 0 && rd->copy_fd >= 0)
			r = copy_out(rd, rd->mem, (size_t)size, 0);
		rd->pos = size;
	}
	while (r == 0 && rd->pos < size) {
		rd->hole = 0;
		rd->piece_len = 0;
		r = rd->pull ? refill_pull(rd) : refill(rd);
		if (r)
			break;
		if (rd->hole) {
			r = cfs_verity_zeros(v, rd->hole);
			rd->pos += rd->hole;
		} else if (rd->piece_len) {
			r = cfs_verity_update(v, rd->piece, rd->piece_len);
			rd->pos += rd->piece_len;
		} else {
			r = -EIO; /* nothing came: cannot be */
		}
	}
	if (r == 0)
		r = cfs_verity_final(v, digest);
	cfs_verity_free(v);
	free(v);
	return r;
}

/* Shared by every temporary this process makes, so that names never collide. */
static atomic_uint tmp_counter;

/*
 * Create a new temporary object in the store, named into @tmp. A build
 * killed earlier may have left a temporary of the same name (PIDs are
 * reused): take the next name rather than fail. Return: an fd or -errno.
 */
static int create_tmp(int store_fd, pid_t pid, char tmp[TMP_NAME_SIZE])
{
	int fd = -1;

	for (unsigned int tries = 0; tries < 1000; tries++) {
		unsigned int k = atomic_fetch_add(&tmp_counter, 1);

		snprintf(tmp, TMP_NAME_SIZE, TMP_PREFIX "%ld-%u", (long)pid, k);
		fd = openat(store_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, CFS_OBJECT_MODE);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		tmp[0] = '\0';
		return -errno;
	}
	return fd;
}

/* Start a new object in the store. Return: 0 or -errno. */
static int obj_create(struct pool *p, struct newobj *o)
{
	o->tmp[0] = '\0';
	if (!atomic_load(&p->named)) {
		o->fd = openat(p->store_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, CFS_OBJECT_MODE);
		if (o->fd >= 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -errno;
		atomic_store(&p->named, true); /* the filesystem cannot: names */
	}
	o->fd = create_tmp(p->store_fd, p->pid, o->tmp);
	return o->fd < 0 ? o->fd : 0;
}

/* Give up a new object: an unnamed one goes with its file. */
static void obj_discard(struct pool *p, struct newobj *o)
{
	cfs_tmpfile_drop(p->store_fd, &o->fd, o->tmp);
}

/* Hand the written object @o to job @i, to be published. Return: 0 or -errno. */
static int obj_keep(struct pool *p, struct newobj *o, size_t i)
{
	/* A named temporary is published by its name: its file can go. */
	if (o->tmp[0]) {
		int r = close(o->fd) < 0 ? -errno : 0;

		o->fd = -1;
		if (r)
			return r;
	}
	p->objs[i] = *o;
	o->fd = -1;
	o->tmp[0] = '\0';
	return 0;
}

/* A name for messages: the source path, or the path in the dump and its line. */
static char *job_name(struct pool *p, struct cfs_node *n)
{
	char *s = NULL, *path;

	if (n->src_path && p->root_path) {
		if (asprintf(&s, "%s/%s", p->root_path, n->src_path) < 0)
			s = NULL;
		return s;
	}
	path = cfs_node_path(n);
	if (path && n->line) {
		if (asprintf(&s, "%s (line %lu)", path, n->line) < 0)
			s = NULL;
		free(path);
		return s;
	}
	return path;
}

/*
 * Open a scanned file below the root without following any symlink, and
 * without waiting: the source's owner may have swapped a FIFO in since the
 * scan, whose open would block for ever with the store's lock held. The
 * caller checks that it is still the regular file that was scanned.
 */
static int open_source(struct pool *p, struct cfs_node *n)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd;
	int tries = 0;

	/* A rename anywhere on the system while the path is walked makes a
	 * scoped lookup fail with EAGAIN (or, on some kernels, EXDEV) rather
	 * than risk an escape: try again, as openat2(2) says to.
	 */
	do
		fd = syscall(SYS_openat2, p->root_fd, n->src_path, &how, sizeof(how));
	while (fd < 0 && (errno == EAGAIN || errno == EXDEV) && ++tries < 16);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		fd = openat(p->root_fd, n->src_path, (int)how.flags);
	return fd < 0 ? -errno : (int)fd;
}

/* Enable fs-verity on the new object open read-only as @fd, where the store can. */
static int enable_verity(struct pool *p, int fd)
{
	int r = cfs_verity_enable_fd(fd);

	if (r == -EOPNOTSUPP && !p->opts->require_verity)
		atomic_store(&p->no_verity, true); /* nor will the next object */
	if (r == -EOPNOTSUPP || r == -EEXIST)
		r = p->opts->require_verity && r == -EOPNOTSUPP ? -EOPNOTSUPP : 0;
	if (r)
		cfs_msg("enabling fs-verity on an object in '%s': %s", p->opts->digest_store,
			r == -EOPNOTSUPP ? "not supported by the filesystem" : strerror(-r));
	return r;
}

/*
 * Link the finished unnamed object @o to @objpath unless one is there, and
 * close it. fs-verity wants a read-only file with no writer left: the
 * object is opened again through /proc (as linkat() is: AT_EMPTY_PATH
 * would need CAP_DAC_READ_SEARCH).
 */
static int publish_unnamed(struct pool *p, struct newobj *o, const char *objpath)
{
	char proc[32];
	int fd, r, dirfd = cfs_object_dir_open(p->store_fd, objpath);

	if (dirfd < 0)
		return dirfd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	if (!atomic_load(&p->no_verity)) {
		fd = open(proc, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			goto out;
		}
		close(o->fd);
		o->fd = fd;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = enable_verity(p, fd);
		if (r)
			goto out;
	}
	r = 0;
	if (linkat(AT_FDCWD, proc, dirfd, objpath + 3, AT_SYMLINK_FOLLOW) < 0 &&
	    errno != EEXIST) { /* EEXIST: another file with the same content won */
		r = -errno;
		goto out;
	}
	close(o->fd);
	o->fd = -1;
out:
	close(dirfd);
	return r;
}

/* Publish the finished temporary object @tmp as @objpath unless one is there. */
static int publish(struct pool *p, const char *tmp, const char *objpath)
{
	int fd, r, dirfd = cfs_object_dir_open(p->store_fd, objpath);

	if (dirfd < 0)
		return dirfd;
	if (!atomic_load(&p->no_verity)) {
		fd = openat(p->store_fd, tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			r = -errno;
			goto out;
		}
		r = enable_verity(p, fd);
		close(fd);
		if (r)
			goto out;
	}

	/*
	 * A link and an unlink, not a rename: a rename from the top directory
	 * into "xx/" crosses directories, and every such rename of a
	 * filesystem takes its one s_vfs_rename_mutex, so the pool's threads
	 * would publish one at a time. A link takes only the directory it
	 * writes, and, like RENAME_NOREPLACE, never replaces an object.
	 */
	if (linkat(p->store_fd, tmp, dirfd, objpath + 3, 0) == 0 || errno == EEXIST) {
		/* EEXIST: the same content won */
		r = unlinkat(p->store_fd, tmp, 0) < 0 ? -errno : 0;
		goto out;
	}
	r = -errno;
	if (r != -EPERM && r != -EOPNOTSUPP && r != -EMLINK)
		goto out;
	/* A filesystem without hard links (or full of them): a rename. */
	r = 0;
	if (renameat2(p->store_fd, tmp, dirfd, objpath + 3, RENAME_NOREPLACE) < 0)
		r = errno != EEXIST ? -errno : unlinkat(p->store_fd, tmp, 0) < 0 ? -errno : 0;
out:
	close(dirfd);
	return r;
}

/* With --require-verity, an object already present must have verity too. */
static int check_existing(struct pool *p, const char *objpath, const uint8_t *digest)
{
	uint8_t have[CFS_DIGEST_SIZE];
	int fd, r;

	if (!p->opts->require_verity)
		return 0;
	fd = openat(p->store_fd, objpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = cfs_verity_measure_fd(fd, have);
	if (r == -ENODATA) {
		r = cfs_verity_enable_fd(fd);
		if (r == 0)
			r = cfs_verity_measure_fd(fd, have);
	}
	close(fd);
	if (r == 0 && memcmp(have, digest, CFS_DIGEST_SIZE) != 0)
		r = -EBADMSG;
	if (r)
		cfs_msg("object '%s/%s': %s", p->opts->digest_store, objpath,
			r == -EOPNOTSUPP ? "fs-verity not supported by the filesystem" :
			r == -EBADMSG	 ? "fs-verity digest does not match its name" :
					   strerror(-r));
	return r;
}

/*
 * Job @i's object was streamed into the store already: it only needs to be
 * published, unless an object of that digest is there.
 */
static int adopt(struct pool *p, size_t i)
{
	struct cfs_node *n = p->jobs[i];
	char objpath[CFS_OBJECT_PATH_SIZE];

	if (p->store_fd < 0) {
		free(n->store_tmp);
		n->store_tmp = NULL;
		return 0;
	}
	cfs_object_path(n->digest, objpath);
	if (faccessat(p->store_fd, objpath, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		cfs_store_drop(p->store_fd, n);
		return check_existing(p, objpath, n->digest);
	}
	snprintf(p->objs[i].tmp, TMP_NAME_SIZE, "%s", n->store_tmp);
	free(n->store_tmp);
	n->store_tmp = NULL;
	return 0;
}

/*
 * Read the whole of a small file (@rd->size bytes) into a new buffer, asking
 * for one byte more: the file must end where it ended when it was scanned.
 */
static int slurp(struct reader *rd, uint8_t **out)
{
	uint8_t *buf = malloc((size_t)rd->size + 1);
	size_t got = 0;

	if (!buf)
		return -ENOMEM;
	while (got <= rd->size) {
		ssize_t n = pread(rd->in_fd, buf + got, (size_t)rd->size + 1 - got, (off_t)got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == rd->size)
			break; /* short of the byte more: the file's end, where it should be */
	}
	if (got != rd->size) {
		free(buf);
		rd->short_read = true;
		return -ESTALE;
	}
	*out = buf;
	return 0;
}

/* Write content held in memory (rd->mem) to a new object, handed to job @i. */
static int write_new(struct pool *p, struct reader *rd, size_t i, const char **what)
{
	struct newobj o;
	int r = obj_create(p, &o);

	if (r) {
		*what = "creating the object of";
		return r;
	}
	*what = "writing the object of";
	rd->copy_fd = o.fd;
	r = copy_out(rd, rd->mem, (size_t)rd->size, 0);
	rd->copy_fd = -1;
	if (r == 0 && rd->copy_end < rd->size && ftruncate(o.fd, (off_t)rd->size) < 0)
		r = -errno;
	if (r == 0)
		r = obj_keep(p, &o, i);
	if (r)
		obj_discard(p, &o);
	return r;
}

/* FICLONE cannot work between these filesystems (for any file). */
static bool clone_unsupported(int err)
{
	return err == EOPNOTSUPP || err == ENOTTY || err == EXDEV || err == ENOSYS;
}

/*
 * Write job @i's object (or find it present); publishing comes later. A
 * small file is read whole in one call and hashed from memory, so that its
 * object is created only when the store lacks it and written in one call;
 * a larger one (or any, where the store can reflink the source) is hashed
 * as it is copied.
 */
static int process(struct pool *p, size_t i)
{
	struct cfs_node *n = p->jobs[i];
	struct reader rd = {
		.in_fd = -1, .copy_fd = -1, .mem = n->content, .size = n->size,
		.reserve = p->opts->reserve,
	};
	struct newobj o = { .fd = -1 };
	char objpath[CFS_OBJECT_PATH_SIZE], *name;
	uint8_t digest[CFS_DIGEST_SIZE], *whole = NULL;
	const char *what = "reading";
	bool in_store = false; /* the failure is the store's, not the source's */
	bool swapped = false; /* the source is not the regular file scanned */
	/* A composefs 1.0 image holds small files itself: no object for them. */
	bool inlined = cfs_format_keeps_inline(p->opts, n->size);
	struct stat st;
	int r = 0;

	if (n->store_tmp)
		return adopt(p, i);
	if (!n->content) {
		rd.in_fd = open_source(p, n);
		if (rd.in_fd < 0) {
			r = rd.in_fd;
			goto err;
		}
		if (fstat(rd.in_fd, &st) < 0) {
			r = -errno;
			goto err;
		}
		if (!S_ISREG(st.st_mode) || st.st_ino != n->src_ino || st.st_dev != n->src_dev) {
			r = -ESTALE;
			what = "opening";
			swapped = true;
			goto err;
		}
		if ((uint64_t)st.st_size != n->size ||
		    fcntl(rd.in_fd, F_SETFL, fcntl(rd.in_fd, F_GETFL) & ~O_NONBLOCK) < 0) {
			r = -ESTALE;
			goto err;
		}
		rd.dense = (uint64_t)st.st_blocks * 512 >= n->size;
		if (n->size <= READ_BUF_SIZE &&
		    (p->store_fd < 0 || atomic_load(&p->no_clone) || inlined)) {
			r = slurp(&rd, &whole);
			if (r)
				goto err;
			close(rd.in_fd);
			rd.in_fd = -1;
			rd.mem = whole;
		}
	}

	if (rd.mem) {
		r = compute_digest(&rd, n->size, digest);
		if (r)
			goto err;
		if (n->check_digest && memcmp(n->digest, digest, CFS_DIGEST_SIZE) != 0) {
			r = -EBADMSG;
			what = "checking DIGEST of";
			goto err;
		}
		cfs_object_path(digest, objpath);
		if (p->store_fd >= 0 && !inlined) {
			in_store = true;
			if (faccessat(p->store_fd, objpath, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
				r = check_existing(p, objpath, digest);
				if (r)
					goto out;
			} else {
				r = write_new(p, &rd, i, &what);
				if (r)
					goto err;
			}
		}
		if (whole && inlined) {
			n->content = whole;
			whole = NULL;
		}
		goto done;
	}

	if (p->store_fd >= 0) {
		r = obj_create(p, &o);
		if (r) {
			what = "creating the object of";
			in_store = true;
			goto err;
		}
		/* A reflink shares the extents; hash the clone then, copy nothing. */
		if (!atomic_load(&p->no_clone) && ioctl(o.fd, FICLONE, rd.in_fd) == 0) {
			if (fstat(o.fd, &st) < 0 || (uint64_t)st.st_size != n->size) {
				r = -ESTALE;
				what = "file changed while building";
				goto err;
			}
			close(rd.in_fd);
			rd.in_fd = o.fd; /* read from the clone; o keeps it */
			rd.dense = false; /* the clone's holes are not known */
		} else {
			if (clone_unsupported(errno))
				atomic_store(&p->no_clone, true);
			rd.copy_fd = o.fd;
		}
	}

	rd.buf = malloc(READ_BUF_SIZE + 1);
	if (!rd.buf) {
		r = -ENOMEM;
		goto err;
	}
	r = compute_digest(&rd, n->size, digest);
	if (r == 0 && !rd.eof_checked) {
		char c;

		/* The file must end where it ended when it was scanned. */
		if (pread(rd.in_fd, &c, 1, (off_t)n->size) != 0 || fstat(rd.in_fd, &st) < 0 ||
		    (uint64_t)st.st_size != n->size)
			rd.short_read = true;
	}
	if (rd.short_read)
		r = -ESTALE;
	if (r)
		goto err;

	cfs_object_path(digest, objpath);
	if (p->store_fd >= 0) {
		what = "writing the object of";
		in_store = true;
		if (rd.in_fd == o.fd)
			rd.in_fd = -1; /* the clone: o closes it */
		/* A tail of zero blocks was not written: the size says it. */
		if (rd.copy_fd >= 0 && rd.copy_end < n->size && ftruncate(o.fd, (off_t)n->size) < 0) {
			r = -errno;
			goto err;
		}
		if (faccessat(p->store_fd, objpath, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			/* Present already: leave the object as it is. */
			obj_discard(p, &o);
			r = check_existing(p, objpath, digest);
			if (r)
				goto out;
		} else {
			r = obj_keep(p, &o, i);
			if (r)
				goto err;
		}
	}

done:
	memcpy(n->digest, digest, CFS_DIGEST_SIZE);
	n->has_digest = true;
	cfs_node_set_object_payload(n);
	r = 0;
	goto out;

err:
	name = job_name(p, n);
	if (in_store || rd.copy_failed)
		cfs_msg("%s '%s' in the digest store '%s': %s",
			rd.copy_failed ? "writing the object of" : what, name ? name : n->name,
			p->opts->digest_store, strerror(-r));
	else
		cfs_msg("%s '%s': %s", what, name ? name : n->name,
			swapped	      ? "not the regular file that was scanned (replaced since?)" :
			r == -ESTALE  ? "the file changed while it was read" :
			r == -EBADMSG ? "the content does not match it" :
					strerror(-r));
	free(name);
out:
	free(whole);
	free(rd.buf);
	if (rd.in_fd >= 0 && rd.in_fd != o.fd)
		close(rd.in_fd);
	obj_discard(p, &o);
	return r;
}

/* Publish job @i's new object, written and synced by the first pass. */
static int publish_job(struct pool *p, size_t i)
{
	struct newobj *o = &p->objs[i];
	char objpath[CFS_OBJECT_PATH_SIZE], *name;
	int r;

	if (o->fd < 0 && !o->tmp[0])
		return 0;
	cfs_object_path(p->jobs[i]->digest, objpath);
	if (o->fd >= 0)
		r = publish_unnamed(p, o, objpath);
	else
		r = publish(p, o->tmp, objpath);
	if (r == -ENOTDIR) {
		cfs_msg("digest store '%s': '%.2s' is a symlink or not a directory: refusing to write through it",
			p->opts->digest_store, objpath);
	} else if (r && r != -EOPNOTSUPP) {
		name = job_name(p, p->jobs[i]);
		cfs_msg("writing the object of '%s' in the digest store '%s': %s",
			name ? name : p->jobs[i]->name, p->opts->digest_store, strerror(-r));
		free(name);
	}
	if (r == 0)
		o->tmp[0] = '\0';
	return r;
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	while (!atomic_load(&p->failed)) {
		size_t i = atomic_fetch_add(&p->next, 1), done;
		int r;

		if (i >= p->end)
			break;
		r = p->pass == PASS_WRITE ? process(p, i) : publish_job(p, i);
		pthread_mutex_lock(&p->lock);
		if (r && (!p->first_err || i < p->err_job)) {
			p->first_err = r;
			p->err_job = i;
			atomic_store(&p->failed, true);
		}
		if (p->pass == PASS_WRITE) {
			done = atomic_fetch_add(&p->done, 1) + 1;
			if (p->opts->progress)
				p->opts->progress(p->opts->progress_ctx, done, p->n_jobs);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/* Run the pass @p->pass over jobs @start up to @p->end. */
static int run_pool(struct pool *p, size_t start)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = p->opts->threads ? p->opts->threads : (cpus > 0 ? (size_t)cpus : 1);
	pthread_t *tids;
	size_t started = 0;
	int r = 0;

	atomic_store(&p->next, start);
	if (n > p->end - start)
		n = p->end - start;
	if (n <= 1) {
		worker(p);
		return p->first_err;
	}
	tids = calloc(n, sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	for (; started < n; started++) {
		r = pthread_create(&tids[started], NULL, worker, p);
		if (r) {
			r = -r;
			break;
		}
	}
	if (started == 0) /* could not start any: do the work here */
		worker(p);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return p->first_err ? p->first_err : (started ? 0 : r);
}

static int sync_store(struct pool *p)
{
	int r;

	if (syncfs(p->store_fd) == 0)
		return 0;
	r = -errno;
	cfs_msg("syncing the digest store '%s': %s", p->opts->digest_store, strerror(-r));
	return r;
}

/*
 * The second pass over jobs @start up to @p->end: their new objects, all
 * written, become durable at once, then get fs-verity and their names;
 * then the names become durable.
 */
static int publish_all(struct pool *p, size_t start)
{
	int r = sync_store(p);

	if (r)
		return r;
	p->pass = PASS_PUBLISH;
	r = run_pool(p, start);
	return r ? r : sync_store(p);
}

/*
 * How many new objects a batch may hold open: most of what the limit on
 * open files allows, raised to its ceiling first. With room for too few,
 * temporaries get names instead (and hold no file open).
 */
static size_t batch_size(struct pool *p)
{
	struct rlimit rl;
	size_t room;

	if (access("/proc/self/fd", X_OK) < 0) /* nothing to link an unnamed file by */
		goto named;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		goto named;
	if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < BATCH_MAX + BATCH_SPARE) {
		rl.rlim_cur = rl.rlim_max < BATCH_MAX + BATCH_SPARE ? rl.rlim_max
								   : BATCH_MAX + BATCH_SPARE;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < BATCH_MIN + BATCH_SPARE)
		goto named;
	room = rl.rlim_cur - BATCH_SPARE;
	return room < BATCH_MAX ? room : BATCH_MAX;
named:
	atomic_store(&p->named, true);
	return p->n_jobs;
}

struct collect {
	struct cfs_node **jobs;
	size_t n, alloc;
};

static int collect_job(void *ctx, struct cfs_node *n)
{
	struct collect *c = ctx;
	struct cfs_node **j;

	if (n->link_target || !S_ISREG(n->mode))
		return 0;
	if (n->size == 0) {
		/* Empty files have no backing file and no digest. */
		cfs_node_clear_payload(n);
		n->has_digest = false;
		return 0;
	}
	if (!n->src_path && !n->content && !n->store_tmp)
		return 0; /* a dumpfile gave its payload and digest, or a tar without a store */
	j = cfs_grow(c->jobs, &c->alloc, c->n, sizeof(*j), 256);
	if (!j)
		return -ENOMEM;
	c->jobs = j;
	c->jobs[c->n++] = n;
	return 0;
}

int cfs_store_lock(int dirfd, bool exclusive, bool wait)
{
	/* A description of its own: flock() locks belong to one. */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);

	if (fd < 0)
		return -errno;
	while (flock(fd, op) < 0) {
		int r = -errno;

		if (r == -EINTR)
			continue;
		close(fd);
		return r;
	}
	return fd;
}

void cfs_store_unlock(int lockfd)
{
	if (lockfd >= 0)
		close(lockfd);
}

int cfs_store_dir_open(const char *dir)
{
	int fd, r;

	r = cfs_private_mkdirat(AT_FDCWD, dir);
	if (r < 0) {
		cfs_msg("cannot create digest store '%s': %s", dir, strerror(-r));
		return r;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		cfs_msg("cannot open digest store '%s': %s", dir, strerror(errno));
		return r;
	}
	cfs_store_check_private(fd, "digest store", dir);
	return fd;
}

int cfs_tree_finish(struct cfs_node *root, const struct cfs_build_options *opts)
{
	static const struct cfs_build_options defaults = { 0 };
	struct pool p = { .opts = opts ? opts : &defaults, .root_fd = -1, .store_fd = -1 };
	struct collect c = { 0 };
	size_t batch;
	int r, lock_fd = -1;

	if (!cfs_reserved_ok(p.opts->reserved, sizeof(p.opts->reserved), "build options"))
		return -EINVAL;
	r = cfs_tree_sort(root);
	if (r)
		return r;
	r = cfs_tree_count_links(root);
	if (r)
		return r;
	r = cfs_tree_walk(root, collect_job, &c);
	if (r)
		goto out;
	p.jobs = c.jobs;
	p.n_jobs = c.n;
	if (p.opts->max_size) {
		/* A stream (tar) counted what it read as it came. */
		uint64_t total = 0;

		for (size_t i = 0; i < p.n_jobs; i++)
			if (p.jobs[i]->src_path || p.jobs[i]->from_dump)
				total = p.jobs[i]->size > UINT64_MAX - total ? UINT64_MAX
									    : total + p.jobs[i]->size;
		if (total > p.opts->max_size) {
			cfs_msg("the files add up to %llu bytes, more than --max-size %llu",
				(unsigned long long)total, (unsigned long long)p.opts->max_size);
			r = -EFBIG;
			goto out;
		}
	}
	if (p.n_jobs == 0) {
		if (p.opts->before_publish)
			r = p.opts->before_publish(p.opts->before_publish_ctx, root);
		goto out;
	}

	if (root->src_path) {
		p.root_path = root->src_path;
		p.root_fd = open(root->src_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (p.root_fd < 0) {
			r = -errno;
			cfs_msg("cannot open directory '%s': %s", root->src_path, strerror(errno));
			goto out;
		}
	}
	if (p.opts->digest_store) {
		p.store_fd = cfs_store_dir_open(p.opts->digest_store);
		if (p.store_fd < 0) {
			r = p.store_fd;
			goto out;
		}
		/* Shared, until the objects are published: gc waits for us. */
		lock_fd = cfs_store_lock(p.store_fd, false, true);
		if (lock_fd < 0) {
			r = lock_fd;
			cfs_msg("cannot lock digest store '%s': %s", p.opts->digest_store,
				strerror(-r));
			goto out;
		}
		cfs_remove_dead_tmpfiles(p.store_fd, TMP_PREFIX, CFS_BUILD_TMP_SEP);
		p.objs = calloc(p.n_jobs, sizeof(*p.objs));
		if (!p.objs) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < p.n_jobs; i++)
			p.objs[i].fd = -1;
	}
	p.pid = getpid();
	r = pthread_mutex_init(&p.lock, NULL);
	if (r) {
		r = -r;
		goto out;
	}
	batch = p.store_fd >= 0 ? batch_size(&p) : p.n_jobs;
	if (p.opts->before_publish && batch < p.n_jobs) {
		/*
		 * Nothing is published before the callback has said yes:
		 * one batch, of temporaries with names, which hold no file
		 * open.
		 */
		atomic_store(&p.named, true);
		batch = p.n_jobs;
	}
	for (size_t start = 0; r == 0 && start < p.n_jobs; start = p.end) {
		p.end = p.n_jobs - start > batch ? start + batch : p.n_jobs;
		p.pass = PASS_WRITE;
		r = run_pool(&p, start);
		if (r == 0 && p.end == p.n_jobs && p.opts->before_publish)
			r = p.opts->before_publish(p.opts->before_publish_ctx, root);
		if (r == 0 && p.store_fd >= 0)
			r = publish_all(&p, start);
	}
	pthread_mutex_destroy(&p.lock);
out:
	if (p.root_fd >= 0)
		close(p.root_fd);
	/* A repository's sha256 index learns the objects (index.c). */
	if (r == 0 && p.store_fd >= 0)
		cfs_index_fill(p.store_fd, p.jobs, p.n_jobs);
	if (p.store_fd >= 0) {
		/* After a failure: the objects written but never published. */
		for (size_t i = 0; p.objs && i < p.n_jobs; i++) {
			obj_discard(&p, &p.objs[i]);
			cfs_store_drop(p.store_fd, p.jobs[i]);
		}
		cfs_store_unlock(lock_fd);
		close(p.store_fd);
	}
	free(p.objs);
	free(c.jobs);
	return r;
}

int cfs_store_stream(int store_fd, cfs_pull_fn pull, void *ctx, struct cfs_node *n,
		     uint64_t reserve, bool *store_failed)
{
	struct reader rd = {
		.in_fd = -1, .copy_fd = -1, .pull = pull, .pull_ctx = ctx, .size = n->size,
		.reserve = reserve,
	};
	char tmp[TMP_NAME_SIZE] = "";
	uint8_t digest[CFS_DIGEST_SIZE];
	int r;

	*store_failed = false;
	if (store_fd >= 0) {
		rd.copy_fd = create_tmp(store_fd, getpid(), tmp);
		if (rd.copy_fd < 0) {
			*store_failed = true;
			return rd.copy_fd;
		}
	}
	r = compute_digest(&rd, n->size, digest);
	if (r == 0 && rd.copy_fd >= 0 && ftruncate(rd.copy_fd, (off_t)n->size) < 0) {
		r = -errno;
		rd.copy_failed = true;
	}
	if (rd.copy_fd >= 0 && close(rd.copy_fd) < 0 && r == 0) {
		r = -errno;
		rd.copy_failed = true;
	}
	if (r == 0) {
		memcpy(n->digest, digest, CFS_DIGEST_SIZE);
		cfs_node_set_object_payload(n);
	}
	if (r == 0 && tmp[0]) {
		n->store_tmp = strdup(tmp);
		if (!n->store_tmp)
			r = -ENOMEM;
	}
	if (r) {
		if (tmp[0])
			unlinkat(store_fd, tmp, 0);
		*store_failed = rd.copy_failed;
		return r;
	}
	memcpy(n->digest, digest, CFS_DIGEST_SIZE);
	n->has_digest = true;
	return 0;
}

void cfs_store_drop(int store_fd, struct cfs_node *n)
{
	if (!n->store_tmp)
		return;
	unlinkat(store_fd, n->store_tmp, 0);
	free(n->store_tmp);
	n->store_tmp = NULL;
}
