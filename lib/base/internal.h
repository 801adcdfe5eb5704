/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers that several parts of libcfs share and nothing outside it uses:
 * messages, the store's temporaries, basedirs opened once, the walk depth
 * bound, FNV-1a, the map from inode number to a value, the path of a walk,
 * and the write loops.
 * Private to libcfs.
 */
#ifndef CFS_INTERNAL_H
#define CFS_INTERNAL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfs/image.h"
#include "cfs/store.h"
#include "cfs/util.h"

/* ---- messages and temporaries (util.c), digests (verity.c) ---- */

/**
 * cfs_msg() - report a detail of a failure (library internal use)
 */
void cfs_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * cfs_msg_count() - how many messages this thread has reported: a caller
 * compares two counts to tell whether a failure was said (library
 * internal use)
 */
unsigned int cfs_msg_count(void);

/**
 * cfs_msg_capture() - keep this thread's messages in @buf instead (library internal use)
 * @buf: where the last message goes, truncated to @size bytes; NULL to stop
 * @size: its size
 *
 * For a caller that turns a failure's detail into a report of its own
 * (verify, on the reader's checks); other threads' messages are untouched.
 */
void cfs_msg_capture(char *buf, size_t size);

/**
 * cfs_basedirs_open() - open each of @b's directories (O_PATH), in order
 * @b: the basedirs, or NULL for none
 * @fds: out: an array of their descriptors, to cfs_basedirs_close()
 *
 * Return: 0, or -errno with a message naming the directory that cannot be
 * opened (then nothing stays open).
 */
int cfs_basedirs_open(const struct cfs_basedirs *b, int **fds);

/** cfs_basedirs_close() - close the @n descriptors of @fds and free it */
void cfs_basedirs_close(int *fds, size_t n);

/**
 * cfs_objects_locate_at() - cfs_objects_locate() in basedirs already open
 * @set: the set
 * @fds: the basedirs' descriptors, from cfs_basedirs_open()
 * @n_basedirs: how many
 *
 * Return: the number of objects not present.
 */
int cfs_objects_locate_at(struct cfs_objects *set, const int *fds, size_t n_basedirs);

/**
 * cfs_opendir_at() - a directory stream on directory @dirfd (internal)
 * @dirfd: an open directory; it stays open and its offset is not moved
 *
 * Return: the stream, on a descriptor of its own (closedir() closes that
 * one), or NULL with errno set.
 */
DIR *cfs_opendir_at(int dirfd);

/**
 * cfs_remove_dead_tmpfiles() - remove temporaries of runs that died (internal)
 * @dirfd: the store directory
 * @prefix, @sep: the names are "<prefix><PID><sep>...", e.g. ".tmp-" and '-'
 *
 * A file whose PID is no longer a live process is removed; the files of
 * this process and of live ones (another run into the same store) stay.
 * Best effort: errors are ignored.
 */
void cfs_remove_dead_tmpfiles(int dirfd, const char *prefix, char sep);

/**
 * cfs_tmpfile_state() - is @name a temporary of a run, and is that run dead?
 * @name: a file name in a store
 * @prefix, @sep: as for cfs_remove_dead_tmpfiles()
 *
 * Return: -1 when @name is not "<prefix><PID><sep>...", 1 when it is and
 * no process of that PID lives, 0 when one does (or it is this process).
 */
int cfs_tmpfile_state(const char *name, const char *prefix, char sep);

/**
 * cfs_tmpfile_drop() - give up a temporary file in a store
 * @dirfd: the store directory
 * @fd: its open file, closed and set to -1 (already -1: none)
 * @name: its name, removed and emptied ("": unnamed, O_TMPFILE)
 */
void cfs_tmpfile_drop(int dirfd, int *fd, char *name);

/*
 * The modes of what a digest store or repository holds (docs/security.md).
 * Every directory cfs makes in one, the top one too, is its owner's alone
 * from its first moment (made so, never opened up and closed after); an
 * object carries no write, exec or set-id bit and no read bit for others,
 * so that it shows nothing to them even where a directory above it was
 * opened by hand; an image in a repository is the same; the index's files
 * are its owner's to write.
 */
#define CFS_STORE_DIR_MODE 0700
#define CFS_OBJECT_MODE 0400
#define CFS_STORE_FILE_MODE 0600

/**
 * cfs_private_mkdirat() - make the directory @name in @dirfd, mode 0700
 * (CFS_STORE_DIR_MODE): every directory of a store or repository is made here
 *
 * Return: 1 when made, 0 when something of that name was there, or -errno.
 */
int cfs_private_mkdirat(int dirfd, const char *name);

/**
 * cfs_object_dir_open() - open the "xx" directory of an object, making it first
 * @store_fd: the store directory
 * @objpath: the object's store-relative path, "xx/<62 hex>"
 *
 * A writer links its object into this directory by its file, never through
 * the path "xx/...": in a store that another user can write, "xx" may be a
 * symlink to a directory of theirs choosing.
 *
 * Return: the directory's file, or -ENOTDIR when "xx" is a symlink or not a
 * directory, or another -errno.
 */
int cfs_object_dir_open(int store_fd, const char *objpath);

/* The temporaries that builds and fetches write into a digest store */
#define CFS_BUILD_TMP_PREFIX ".tmp-" /* ".tmp-<PID>-<N>" */
#define CFS_BUILD_TMP_SEP '-'
#define CFS_FETCH_TMP_PREFIX ".cfs-fetch." /* ".cfs-fetch.<PID>.<N>" */
#define CFS_FETCH_TMP_SEP '.'

/**
 * cfs_verity_digest_stream() - the fs-verity sha256 digest of @size bytes
 * that @read gives (libfsverity's read callback: 0, or -errno), in order
 */
int cfs_verity_digest_stream(void *ctx, int (*read)(void *ctx, void *buf, size_t count),
			     uint64_t size, uint8_t digest[CFS_DIGEST_SIZE]);

/*
 * Directories nested deeper than this are refused rather than walked, by
 * every walk of an image (a dump, a diff, a verify): the image is untrusted.
 */
#define CFS_MAX_DEPTH 65536

/* ---- FNV-1a, 64 bits (util.c) ---- */

#define CFS_FNV1A_INIT 0xcbf29ce484222325ULL

/**
 * cfs_fnv1a() - hash @len bytes at @buf into @h (CFS_FNV1A_INIT to start)
 *
 * For hash tables only: it is fast, not collision resistant. Feeding two
 * buffers in turn gives the hash of their concatenation.
 */
static inline uint64_t cfs_fnv1a(uint64_t h, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* ---- inode number -> value (inomap.c) ---- */

/**
 * struct cfs_inomap - an open-addressing map from an inode number to a pointer
 *
 * Zero-initialise; release with cfs_inomap_free(). For the walks that
 * remember the directories they entered and the first path of a hardlink.
 */
struct cfs_inomap {
	uint64_t *keys; /* ino + 1; 0 marks a free slot */
	void **vals;
	size_t cap, n;
};

/** cfs_inomap_find() - the slot of @ino's value, or NULL when @ino is not in @m */
void **cfs_inomap_find(const struct cfs_inomap *m, uint64_t ino);

/**
 * cfs_inomap_add() - add @ino, which is not in @m yet, with @val
 *
 * Return: 0 or -ENOMEM (@m is unchanged then).
 */
int cfs_inomap_add(struct cfs_inomap *m, uint64_t ino, void *val);

/** cfs_inomap_free() - release @m, passing each value to @drop (when not NULL) */
void cfs_inomap_free(struct cfs_inomap *m, void (*drop)(void *));

/* ---- the path of a walk (util.c) ---- */

/**
 * cfs_path_set() - make *@path its first @at bytes, '/' and the @len bytes
 * of @name, and a NUL
 * @cap: the size of *@path (not 0), doubled as often as it takes
 *
 * Return: 0 or -ENOMEM (*@path is unchanged then).
 */
int cfs_path_set(char **path, size_t *cap, size_t at, const void *name, size_t len);

/* ---- writing (util.c) ---- */

/**
 * cfs_write_all() - write all @len bytes of @buf to @fd
 *
 * Retries short writes and EINTR. Return: 0 or -errno.
 */
int cfs_write_all(int fd, const void *buf, size_t len);

/**
 * cfs_tmpfile() - an unnamed temporary file, for data that is read back
 * @dir_fd: a directory whose filesystem is preferred, or -1
 * @dir: where to make it otherwise; NULL or "" for $TMPDIR, else /tmp
 *
 * O_TMPFILE, mode 0600; where a filesystem has no O_TMPFILE, a mkostemp()
 * name removed at once. Says which directory failed.
 *
 * Return: the file descriptor (O_RDWR, O_CLOEXEC) or -errno.
 */
int cfs_tmpfile(int dir_fd, const char *dir);

/**
 * cfs_mkdir_p() - @path and each directory above it, as mkdir -p makes them
 * @mode: of those it makes
 *
 * Return: 0 (each exists, made or not) or -errno.
 */
int cfs_mkdir_p(const char *path, mode_t mode);

/** cfs_pwrite_all() - the same at offset @off, with pwrite() */
int cfs_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

/** cfs_pread_all() - read exactly @len bytes at @off: 0, -EIO at the end of the file, or -errno */
int cfs_pread_all(int fd, void *buf, size_t len, uint64_t off);

/**
 * cfs_reserved_ok() - are the @n bytes of a public struct's reserved
 * fields at @p all zero? If not, says so for @what ("mount options"): a
 * caller built against a later libcfs asked for what this one lacks.
 */
bool cfs_reserved_ok(const void *p, size_t n, const char *what);

#endif /* CFS_INTERNAL_H */
