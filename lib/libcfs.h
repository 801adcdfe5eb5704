/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcfs: the userspace composefs library behind cfsctl. It reads and writes
 * descriptors (format in cfs-format.h), parses and prints dumpfiles, computes
 * and measures fs-verity digests, and manages a content-addressed object
 * store. It never prints and never exits: functions return 0 (or a count) on
 * success and a negative errno on failure, and report the detail of a failure
 * through the message callback installed with cfs_set_message_handler().
 */
#ifndef LIBCFS_H
#define LIBCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfs-format.h"

#ifndef EFSCORRUPTED
#define EFSCORRUPTED EUCLEAN /* the image is corrupt */
#endif

#define CFS_DIGEST_HEX_SIZE (2 * CFS_DIGEST_SIZE + 1)
/* "xx/" + 62 hex digits + NUL */
#define CFS_OBJECT_PATH_SIZE (CFS_DIGEST_HEX_SIZE + 1)

/* ---- messages (util.c) ---- */

/**
 * typedef cfs_message_fn - receives one message, without trailing newline
 */
typedef void (*cfs_message_fn)(void *ctx, const char *msg);

/**
 * cfs_set_message_handler() - where the library's error details go
 * @fn: handler, or NULL to drop messages
 * @ctx: passed back to @fn
 *
 * The handler may be called from several threads at once.
 */
void cfs_set_message_handler(cfs_message_fn fn, void *ctx);

/**
 * cfs_msg() - report a detail of a failure (library internal use)
 */
void cfs_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * cfs_msg_capture() - keep this thread's messages in @buf instead (library internal use)
 * @buf: where the last message goes, truncated to @size bytes; NULL to stop
 * @size: its size
 *
 * For a caller that turns a failure's detail into a report of its own
 * (verify, on the reader's checks); other threads' messages are untouched.
 */
void cfs_msg_capture(char *buf, size_t size);

/* ---- small helpers (util.c) ---- */

/**
 * cfs_utf8_decode() - the valid UTF-8 sequence at @s (at most @n bytes, @n >= 1)
 *
 * Return: its length (1..4), with its code point in *@cp, or 0 when the
 * bytes are no valid sequence (overlong, a surrogate, beyond U+10FFFF, cut).
 */
size_t cfs_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/**
 * cfs_type_name() - the short name of @mode's file type, as cfsctl prints it
 *
 * "regular", "directory", "symlink", "chardev", "blockdev", "fifo" or
 * "socket"; "unknown" for any other type bits.
 */
const char *cfs_type_name(uint32_t mode);

/** cfs_type_word() - @mode's file type in words ("regular file", "character device"; "?") */
const char *cfs_type_word(uint32_t mode);

/** cfs_type_plural() - the short name for several ("regular", "directories"; "unknown") */
const char *cfs_type_plural(uint32_t mode);

/** cfs_digest_to_hex() - 64 lowercase hex digits and a NUL into @hex */
void cfs_digest_to_hex(const uint8_t digest[CFS_DIGEST_SIZE], char hex[CFS_DIGEST_HEX_SIZE]);

/** cfs_digest_from_hex() - parse exactly 64 hex digits; -EINVAL otherwise */
int cfs_digest_from_hex(const char *hex, uint8_t digest[CFS_DIGEST_SIZE]);

/** cfs_object_path() - the store-relative path "xx/<62 hex>" of a digest */
void cfs_object_path(const uint8_t digest[CFS_DIGEST_SIZE], char path[CFS_OBJECT_PATH_SIZE]);

/**
 * cfs_escape() - write @len bytes escaped as in composefs-dump(5) to @out
 * @flags: CFS_ESCAPE_EQUAL also escapes '='; CFS_ESCAPE_LONE_DASH writes a
 *	   value that is exactly "-" as "\x2d"
 *
 * Bytes outside printable ASCII, '\\' and (with the flags) '=' become \xXY
 * (or \\ \n \r \t). An empty value is written as "-".
 *
 * Return: 0, or -errno when writing to @out failed.
 */
#define CFS_ESCAPE_EQUAL 1
#define CFS_ESCAPE_LONE_DASH 2
int cfs_escape(FILE *out, const void *buf, size_t len, int flags);

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

/* The temporaries that builds and fetches write into a digest store */
#define CFS_BUILD_TMP_PREFIX ".tmp-" /* ".tmp-<PID>-<N>" */
#define CFS_BUILD_TMP_SEP '-'
#define CFS_FETCH_TMP_PREFIX ".cfs-fetch." /* ".cfs-fetch.<PID>.<N>" */
#define CFS_FETCH_TMP_SEP '.'

/* ---- fs-verity (verity.c), on top of libfsverity ---- */

/** cfs_verity_digest_fd() - compute the fs-verity sha256 digest of @fd's content */
int cfs_verity_digest_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_verity_digest_stream() - the fs-verity sha256 digest of @size bytes
 * that @read gives (libfsverity's read callback: 0, or -errno), in order
 */
int cfs_verity_digest_stream(void *ctx, int (*read)(void *ctx, void *buf, size_t count),
			     uint64_t size, uint8_t digest[CFS_DIGEST_SIZE]);

/** cfs_verity_digest_mem() - the fs-verity sha256 digest of @len bytes at @buf */
int cfs_verity_digest_mem(const void *buf, size_t len, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_verity_measure_fd() - the digest the kernel holds for @fd
 *
 * Return: 0, -ENODATA when verity is not enabled on the file, -EOPNOTSUPP
 * when the filesystem has no verity, or another -errno.
 */
int cfs_verity_measure_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_verity_enable_fd() - enable fs-verity (sha256, 4 KiB blocks) on @fd
 *
 * @fd must be open read-only with no writers. Return: 0, -EOPNOTSUPP where
 * the filesystem cannot, or another -errno.
 */
int cfs_verity_enable_fd(int fd);

/* ---- reading images (reader.c) ---- */

struct cfs_image;

/**
 * struct cfs_inode - one decoded inode; everything the image records
 *
 * @payload points into the image and stays valid until cfs_image_close().
 * All fields have been checked against the image: a directory's chunk table
 * fits, a payload lies inside the inode section, and so on.
 */
struct cfs_inode {
	uint64_t ino; /* v1: offset of the fixed chunk in the inode section; EROFS: nid */
	uint32_t flags; /* CFS_INODE_FLAGS_* as stored */
	uint32_t mode;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint32_t rdev;
	uint64_t size; /* regular files: content size; others: as stored */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	int64_t ctime_sec;
	uint32_t ctime_nsec;
	const char *payload; /* backing path or symlink target, not terminated */
	uint32_t payload_len;
	bool has_digest; /* from DIGEST or DIGEST_FROM_PAYLOAD */
	uint8_t digest[CFS_DIGEST_SIZE];
	uint64_t xattrs_off; /* in the variable data section */
	uint32_t xattrs_len; /* 0: no xattrs */
	uint32_t n_chunks; /* directories: number of entry chunks */
	uint64_t offset; /* file offset of the inode, in either format */
	/* what the image's format keeps of the inode for itself; private to libcfs */
	uint64_t priv[4];
};

/**
 * cfs_image_open() - open an image file for reading
 *
 * Checks the header; inodes are decoded on demand. Return: 0 and *@out, or
 * -errno (-EFSCORRUPTED for a bad header, with a message).
 */
int cfs_image_open(const char *path, struct cfs_image **out);

/**
 * cfs_image_open_mem() - read an image held in memory (tests, fuzzers)
 *
 * @data must stay valid until cfs_image_close(); it is not copied.
 */
int cfs_image_open_mem(const void *data, size_t len, struct cfs_image **out);

void cfs_image_close(struct cfs_image *img);

/**
 * enum cfs_image_view - how the reader presents what an image stores
 * @CFS_VIEW_MOUNTED: as a mount shows it (the default): a file whose content
 *	is in the image has the digest of that content, and the overlay
 *	xattrs composefs adds for its own whiteouts are hidden
 * @CFS_VIEW_STORED: what a writer needs to make the image again, as
 *	composefs-info reads it: no digest but a recorded one, and an
 *	inode's xattrs in stored order (EROFS: inline ones, then shared ones)
 *	with only those hidden that the writer adds itself
 *
 * The two differ for composefs 1.0 (EROFS) images only.
 */
enum cfs_image_view {
	CFS_VIEW_MOUNTED,
	CFS_VIEW_STORED,
};

/**
 * cfs_image_set_view() - choose how later calls present @img
 *
 * Set it before reading inodes: an inode decoded in one view and listed in
 * the other is not meaningful. Not to be changed while other threads read.
 */
void cfs_image_set_view(struct cfs_image *img, enum cfs_image_view view);

/** cfs_image_root() - index of the root directory's inode */
uint64_t cfs_image_root(const struct cfs_image *img);

/** cfs_image_size() - image size in bytes */
uint64_t cfs_image_size(const struct cfs_image *img);

/** cfs_image_data_offset() - file offset of the variable data section */
uint64_t cfs_image_data_offset(const struct cfs_image *img);

/** cfs_image_version() - the header's format version (EROFS: composefs_version) */
unsigned int cfs_image_version(const struct cfs_image *img);

/**
 * enum cfs_mount_kind - how an image of some format is mounted
 * @CFS_MOUNT_MODULE: by this project's composefs module (mount -t composefs),
 *	which takes basedir=, digest= and verity_check=
 * @CFS_MOUNT_EROFS_OVERLAY: as erofs with overlayfs on top (composefs 1.0):
 *	the image's digest is for the caller to check, and an upper directory
 *	may be stacked on it
 */
enum cfs_mount_kind {
	CFS_MOUNT_MODULE,
	CFS_MOUNT_EROFS_OVERLAY,
};

/**
 * cfs_image_mount_kind() - how the image file at @path is mounted, from its
 * magic
 *
 * Reads only the first bytes: the image is not checked, so that a caller
 * which hands it to the kernel leaves the verdict on the rest to it. A file
 * without the composefs 1.0 magic counts as v1 (CFS_MOUNT_MODULE).
 *
 * Return: an enum cfs_mount_kind, or -errno when the file cannot be read.
 */
int cfs_image_mount_kind(const char *path);

/**
 * struct cfs_image_desc - how to present an image's format, from its reader
 * @format: a stable name for scripts: "composefs-v1" or "erofs"
 * @label: what the summary calls the format line ("format version", "format")
 * @text: its value, in words ("1", "composefs 1.0 (EROFS), composefs_version 0")
 */
struct cfs_image_desc {
	const char *format;
	const char *label;
	char text[96];
};

/** cfs_image_describe() - fill *@d for @img */
void cfs_image_describe(const struct cfs_image *img, struct cfs_image_desc *d);

/**
 * struct cfs_inode_desc - how to present one inode's place in its image
 * @ino_kind: what the inode number is ("fixed chunk", "nid,")
 * @has_flags: the format stores per-inode flags (cfs_inode.flags) worth showing
 * @has_chunks: directories: the format stores a chunk count (cfs_inode.n_chunks)
 * @digest_note: where the digest comes from, "" or " (...)"
 * @xattrs_offset: the file offset of the inode's xattrs (when it has any)
 * @flag_names: with @has_flags, the flags' names, space-separated
 * @content_in_image: a regular file whose content the image holds itself
 *	(cfs_image_read() reads it), so it has no backing file
 */
struct cfs_inode_desc {
	const char *ino_kind;
	bool has_flags, has_chunks;
	const char *digest_note;
	uint64_t xattrs_offset;
	char flag_names[160];
	bool content_in_image;
};

/** cfs_inode_describe() - fill *@d for @in, an inode of @img */
void cfs_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			struct cfs_inode_desc *d);

/**
 * cfs_image_read() - copy @len bytes at @off of a file's in-image content
 *
 * For regular files whose content is in the image (cfs_inode_desc's
 * @content_in_image). Return: 0, -EINVAL (not such a
 * file, or past its end) or -EFSCORRUPTED.
 */
int cfs_image_read(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		   size_t len);

/**
 * cfs_image_inode() - decode the inode at index @ino
 *
 * Return: 0, or -EFSCORRUPTED with a message naming the inode and what is
 * wrong with it.
 */
int cfs_image_inode(struct cfs_image *img, uint64_t ino, struct cfs_inode *out);

/**
 * struct cfs_dirent - one directory entry; @name points into the image
 */
struct cfs_dirent {
	const char *name; /* not NUL-terminated */
	size_t name_len;
	uint64_t ino;
	uint8_t d_type;
};

/**
 * struct cfs_dir_iter - walks a directory's entries in stored (sorted) order
 *
 * Owned by the caller, filled by cfs_dir_iter_init(); no cleanup needed.
 */
struct cfs_dir_iter {
	struct cfs_image *img;
	uint64_t dir_ino;
	const char *prev_name; /* the last entry returned, to check the order */
	size_t prev_len;
	/* where the format's reader is in the directory; private to libcfs */
	uint64_t priv[6];
};

int cfs_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
		      struct cfs_dir_iter *it);

/**
 * cfs_dir_iter_next() - the next entry
 *
 * Return: 1 and *@out, 0 at the end, or -EFSCORRUPTED (bad chunk or name).
 */
int cfs_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out);

/**
 * cfs_dir_iter_skip() - after an error from cfs_dir_iter_next(), go on past
 *	what failed where the format can
 *
 * v1: the next call reads the next chunk of entries. EROFS: the next call
 * reads the failed block again from its first entry.
 */
void cfs_dir_iter_skip(struct cfs_dir_iter *it);

/**
 * cfs_image_lookup() - find @name in directory @dir by binary search
 *
 * Return: 0 and *@ino, -ENOENT, -ENOTDIR, or -EFSCORRUPTED.
 */
int cfs_image_lookup(struct cfs_image *img, const struct cfs_inode *dir,
		     const char *name, size_t name_len, uint64_t *ino);

/**
 * cfs_image_resolve() - the inode at @path ("/", "/a/b" or "a/b")
 *
 * Symlinks are not followed. Return: 0, -ENOENT, -ENOTDIR, -EFSCORRUPTED.
 */
int cfs_image_resolve(struct cfs_image *img, const char *path, struct cfs_inode *out);

/**
 * struct cfs_xattr - one extended attribute; pointers into the image
 */
struct cfs_xattr {
	const char *key;
	size_t key_len;
	const uint8_t *value;
	size_t value_len;
};

/**
 * typedef cfs_xattr_fn - called for each xattr of an inode, in stored order
 *
 * Return: 0 to go on, anything else to stop and return it.
 */
typedef int (*cfs_xattr_fn)(void *ctx, const struct cfs_xattr *x);

/**
 * cfs_image_xattrs() - call @fn for each xattr of @inode
 *
 * Return: 0, what @fn returned to stop, or -EFSCORRUPTED.
 */
int cfs_image_xattrs(struct cfs_image *img, const struct cfs_inode *inode,
		     cfs_xattr_fn fn, void *ctx);

/**
 * struct cfs_walk_entry - one path met by cfs_image_walk()
 *
 * Everything points into the walker's state and is valid only during the call.
 */
struct cfs_walk_entry {
	const char *path; /* "/" for the root, else "/a/b"; NUL-terminated */
	size_t path_len;
	const struct cfs_inode *inode;
	const char *first_path; /* a hardlink met before: the inode's first path; else NULL */
	unsigned int depth; /* 0 for the root */
	uint8_t d_type; /* as the directory entry records it; 0 for the root */
};

/**
 * typedef cfs_walk_fn - called for each path, parents before children
 *
 * Return: 0 to go on, anything else to stop the walk and return it.
 */
typedef int (*cfs_walk_fn)(void *ctx, const struct cfs_walk_entry *e);

/**
 * cfs_image_walk() - visit every path of the image, depth first
 *
 * Each directory's entries come in stored (byte) order, a directory before
 * its entries. A non-directory inode with nlink > 1 met again is passed with
 * @first_path set. The walk uses an explicit stack on the heap and visits
 * every directory at most once: a directory reached a second time (a cycle,
 * or a directory hardlink) is corruption, so the walk always ends.
 *
 * Return: 0, what @fn returned to stop, -ENOMEM, or -EFSCORRUPTED.
 */
int cfs_image_walk(struct cfs_image *img, cfs_walk_fn fn, void *ctx);

/**
 * cfs_image_write_dump() - write the image as a dumpfile to @out
 *
 * Paths in sorted order, parents first; hardlinks after their first path
 * as "@" entries that repeat the inode's fields, as composefs-info writes
 * them. What the fields hold follows the image's view: CFS_VIEW_STORED
 * gives the dump that builds the image again (composefs-info's, byte for
 * byte, for an image mkcomposefs wrote). Return: 0 or -errno.
 */
int cfs_image_write_dump(struct cfs_image *img, FILE *out);

/* ---- the digest store's lock (store.c) ---- */

/**
 * cfs_store_lock() - take the lock of the digest store @dirfd
 * @dirfd: the store directory
 * @exclusive: true for cfsctl gc, which removes objects; false (shared)
 *	for a build or fetch while it writes temporaries and publishes
 *	objects, so that gc never removes what it is about to reference
 * @wait: block until the lock is granted; otherwise fail at once
 *
 * The lock is an flock() on the store directory itself, so the store holds
 * nothing but objects and temporaries (a lock file would be served, synced
 * and counted with them). It goes away with the process: a killed run
 * never leaves the store locked. Any number of shared holders, or one
 * exclusive. Like flock(), it is for local filesystems.
 *
 * Return: a descriptor for cfs_store_unlock(), -EWOULDBLOCK when @wait is
 * false and another holds the lock, or another -errno; the caller, who
 * knows the store's name, reports it.
 */
int cfs_store_lock(int dirfd, bool exclusive, bool wait);

/** cfs_store_unlock() - release a lock from cfs_store_lock(); -1 is ignored */
void cfs_store_unlock(int lockfd);

/* ---- building images (tree.c, dump.c, scan.c, tar.c, store.c, format.c) ---- */

struct cfs_node; /* a file in a tree being built; see tree.h */

/**
 * enum cfs_image_format - the image formats cfsctl builds
 * @CFS_FORMAT_V1: the composefs descriptor of cfs-format.h
 * @CFS_FORMAT_EROFS: a composefs 1.0 image (EROFS), as mkcomposefs writes it;
 *	regular files of at most CFS_EROFS_INLINE_MAX bytes and dumpfile
 *	CONTENT are stored in the image, and a dumpfile's regular file may
 *	have no backing file at all
 */
enum cfs_image_format {
	CFS_FORMAT_V1 = 0,
	CFS_FORMAT_EROFS,
};

/**
 * cfs_format_from_name() - the format named @name ("v1", "erofs")
 *
 * Return: 0 and *@out, or -EINVAL for a name of no format.
 */
int cfs_format_from_name(const char *name, enum cfs_image_format *out);

/**
 * cfs_format_takes_options() - does the writer of @format take struct
 * cfs_erofs_options? cfs_tree_write() refuses options other than the
 * defaults for a format that does not.
 */
bool cfs_format_takes_options(enum cfs_image_format format);

/* Regular files up to this size go inside a composefs 1.0 image. */
#define CFS_EROFS_INLINE_MAX 64
/* The largest file it can hold: a block map of 1024 chunks of 2^43 bytes. */
#define CFS_EROFS_MAX_FILE_SIZE (1ULL << 53)

/**
 * struct cfs_build_options - what cfsctl build's options select
 */
struct cfs_build_options {
	enum cfs_image_format format; /* the image the tree is built for */
	const char *digest_store; /* NULL: record digests, store nothing */
	bool require_verity; /* fail where verity cannot be enabled on objects */
	bool use_epoch; /* all mtimes 0 */
	bool lax_dump; /* dumpfiles: missing trailing fields are "-", MODE is cut to 16 bits */
	bool skip_xattrs;
	bool skip_devices;
	unsigned int threads; /* 0: all CPUs */
	/* progress: called with files done and total, from any thread; may be NULL */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/**
 * cfs_tree_from_dir() - read a directory tree (never following symlinks)
 *
 * Contents are not read yet: cfs_tree_finish() does that.
 */
int cfs_tree_from_dir(const char *path, const struct cfs_build_options *opts,
		      struct cfs_node **root);

/**
 * cfs_tree_from_dump() - parse a dumpfile
 * @name: what messages call the input ("-" is "stdin"); errors name its line
 */
int cfs_tree_from_dump(FILE *in, const char *name,
		       const struct cfs_build_options *opts, struct cfs_node **root);

/**
 * cfs_tree_from_tar() - read a tar archive (any compression libarchive
 * detects) from @fd as one stream
 * @name: what messages call the archive ("-" is "stdin"); errors name it and
 *	  the entry
 *
 * Regular files are hashed as they are read, and with @opts->digest_store
 * written to temporaries in the store that cfs_tree_finish() publishes.
 * Return: 0, -EINVAL for a bad archive or entry, or another -errno.
 */
int cfs_tree_from_tar(int fd, const char *name, const struct cfs_build_options *opts,
		      struct cfs_node **root);

/**
 * cfs_tree_finish() - hash contents (in parallel), fill the store, link
 * hardlinks and count nlink, sort directories; the tree is then ready to be
 * written.
 */
int cfs_tree_finish(struct cfs_node *root, const struct cfs_build_options *opts);

/**
 * struct cfs_erofs_options - what a composefs 1.0 image may use
 * @min_version: the composefs_version to write at least (0 or 1)
 * @max_version: the highest it may be raised to when the tree needs it
 *	(1: the tree has whiteouts, which then also get user.overlay.* xattrs)
 * @user_xattrs: keep only the user.* xattrs of the tree
 */
struct cfs_erofs_options {
	unsigned int min_version;
	unsigned int max_version;
	bool user_xattrs;
};

/**
 * cfs_tree_write() - write the image of a finished tree to @fd
 * @root: the tree, finished by cfs_tree_finish() with the same @format
 * @format: the image format
 * @opts: what a composefs 1.0 image may use (v1 has no choices); NULL for
 *	the defaults (versions 0 to 1, every xattr)
 * @fd: where the image goes, from its start
 *
 * Output is a function of the tree and @opts alone (reproducible); a
 * composefs 1.0 image has the bytes composefs 1.0.8's mkcomposefs writes
 * for the same tree. Return: 0, -EINVAL or -EFBIG (with a message) for what
 * the format cannot hold or options it does not take, -ENOMEM, or a write
 * error.
 */
int cfs_tree_write(struct cfs_node *root, enum cfs_image_format format,
		   const struct cfs_erofs_options *opts, int fd);

void cfs_tree_free(struct cfs_node *root);

/* ---- objects images reference (objects.c) ---- */

/**
 * struct cfs_object_user - one path of one image that reads an object
 * @image: index of the image, in the order of cfs_objects_add_image() calls
 * @path: absolute path inside that image ("/usr/bin/sh")
 */
struct cfs_object_user {
	size_t image;
	char *path;
};

/**
 * enum cfs_object_state - what cfs_objects_locate() found for an object
 * @CFS_OBJECT_UNKNOWN: not looked for yet
 * @CFS_OBJECT_PRESENT: a regular file of the right size in some basedir
 * @CFS_OBJECT_MISSING: in none of the basedirs
 * @CFS_OBJECT_WRONG_SIZE: the first basedir holding it has a regular file
 *	of another size (a corrupt or foreign object)
 * @CFS_OBJECT_NOT_FILE: the first basedir holding it has something that is
 *	not a regular file there
 */
enum cfs_object_state {
	CFS_OBJECT_UNKNOWN = 0,
	CFS_OBJECT_PRESENT,
	CFS_OBJECT_MISSING,
	CFS_OBJECT_WRONG_SIZE,
	CFS_OBJECT_NOT_FILE,
};

/**
 * struct cfs_object - one backing file that images need
 * @path: the backing path as the images record it (leading '/' removed),
 *	  relative to a basedir; NUL-terminated. Unique within a set.
 * @has_digest: the images record its fs-verity digest
 * @digest: that digest
 * @canonical: @path is exactly cfs_object_path(@digest), the layout of a
 *	  digest store (what cfsctl fetch can download)
 * @size: its size, as the images record it
 * @users: the image paths that read it (hardlinks and duplicates included)
 * @n_users: how many
 * @state: filled by cfs_objects_locate()
 * @basedir: index of the basedir it was found in, or -1
 * @found_size: size of what was found there (for CFS_OBJECT_WRONG_SIZE)
 */
struct cfs_object {
	char *path;
	bool has_digest;
	bool canonical;
	uint8_t digest[CFS_DIGEST_SIZE];
	uint64_t size;
	struct cfs_object_user *users;
	size_t n_users;
	enum cfs_object_state state;
	int basedir;
	uint64_t found_size;
};

/**
 * struct cfs_objects - the unique objects one or more images reference
 * @objs: in the order first met (images in order, each walked in sorted
 *	  path order, parents first), so output built from it is stable
 * @n: how many
 *
 * Objects are unique by backing path: two regular files with the same path
 * are one object. The images must agree about it: a second sighting with
 * another digest or size is an error (see cfs_objects_add_image()).
 */
struct cfs_objects {
	struct cfs_object *objs;
	size_t n;
	/* private */
	size_t cap;
	size_t *hash;
	size_t hash_size;
	size_t n_images;
};

/** cfs_objects_init() - an empty set; release it with cfs_objects_free() */
void cfs_objects_init(struct cfs_objects *set);

/** cfs_objects_free() - release what the set holds; it is then empty again */
void cfs_objects_free(struct cfs_objects *set);

/**
 * cfs_objects_add() - add one use of an object by hand (tests, other sources)
 * @set: the set
 * @path: backing path (a leading '/' is dropped)
 * @digest: its fs-verity digest, or NULL when unknown
 * @size: its size
 * @image: image index for @user
 * @user: the image path using it, or NULL
 *
 * Return: 0, -EINVAL when @path is already in @set with another digest or
 * size (with a message naming both users), -ENOMEM.
 */
int cfs_objects_add(struct cfs_objects *set, const char *path,
		    const uint8_t *digest, uint64_t size, size_t image, const char *user);

/**
 * cfs_objects_find() - the object of backing path @path in @set, or NULL
 *
 * A leading '/' of @path is ignored, as when adding.
 */
const struct cfs_object *cfs_objects_find(const struct cfs_objects *set, const char *path);

/**
 * cfs_objects_add_image() - add every backing file @img references
 * @set: the set
 * @img: an open image
 *
 * Walks the whole tree with cfs_image_walk() and adds each regular file
 * that has a backing path, under every path that names it (hardlinks
 * included); files without one (empty files) need no object. The image is
 * numbered in @set by the order of the calls, starting at 0.
 *
 * Return: 0, -EFSCORRUPTED, -EINVAL (images disagree about an object),
 * -ENOMEM.
 */
int cfs_objects_add_image(struct cfs_objects *set, struct cfs_image *img);

/**
 * struct cfs_basedirs - base directories, from one or more basedir lists
 * @dirs: the names, each NUL-terminated and allocated, in lookup order
 * @n: how many
 * @cap: room in @dirs
 *
 * Zero-initialise, fill with cfs_basedirs_parse(), release with
 * cfs_basedirs_free().
 */
struct cfs_basedirs {
	char **dirs;
	size_t n, cap;
};

/**
 * cfs_basedirs_parse() - append the directories of a basedir list to @b
 * @b: the list to extend
 * @list: "DIR[:DIR]...", read as the kernel module reads its basedir=
 *	option and cfsctl mount its --basedir: ':' separates names, and '\'
 *	makes the next character part of the name ("\:" is a colon, "\\" a
 *	backslash); a '\' at the very end stays one
 *
 * Every name must be non-empty: "", "a::b" and a leading or trailing ':'
 * are refused, as the module refuses them, rather than silently dropped.
 * Return: 0; -EINVAL for an empty name, with a message; or -ENOMEM. @b
 * keeps what it held before on failure.
 */
int cfs_basedirs_parse(struct cfs_basedirs *b, const char *list);

/** cfs_basedirs_free() - release @b's names and make it empty */
void cfs_basedirs_free(struct cfs_basedirs *b);

/**
 * cfs_objects_locate() - look for each object in @basedirs, first match wins
 * @set: the set; each object's state, basedir and found_size are set
 * @basedirs: directories holding backing files, in lookup order
 * @n_basedirs: how many (0: everything is missing)
 *
 * As the kernel opens a backing file: symlinks are followed, and the
 * search stops at the first basedir that gives any answer but ENOENT (a
 * file of the wrong size or type there counts, it is not skipped).
 *
 * Return: the number of objects not CFS_OBJECT_PRESENT, or -errno when a
 * basedir cannot be opened (with a message naming it).
 */
int cfs_objects_locate(struct cfs_objects *set, const char *const *basedirs,
		       size_t n_basedirs);

/* ---- checking images and their objects (verify.c) ---- */

/**
 * enum cfs_verify_severity - how bad one problem is
 * @CFS_VERIFY_ERROR: the image or an object is wrong; the kernel would
 *	refuse it, return errors, or show something else than was recorded
 * @CFS_VERIFY_WARNING: legal, but not what a correct writer produces
 *	(unreachable bytes, non-canonical encodings, wrong link counts)
 */
enum cfs_verify_severity {
	CFS_VERIFY_ERROR,
	CFS_VERIFY_WARNING,
};

/**
 * struct cfs_verify_problem - one problem found by cfs_verify_image()
 * @severity: error or warning
 * @kind: a short stable name for the kind of problem ("unsorted",
 *	  "chunk-page", "missing", ...), for scripts and JSON
 * @path: the image path the problem is at (NUL-terminated, raw bytes), or
 *	  NULL when no path reaches it
 * @offset: the file offset in the image the problem is at, or UINT64_MAX
 * @object: for object problems, the backing path; else NULL
 * @users: for object problems, every image path using @object
 * @n_users: how many
 * @message: what is wrong, in words; never names @path or @object again
 *
 * Everything is valid only during the callback.
 */
struct cfs_verify_problem {
	enum cfs_verify_severity severity;
	const char *kind;
	const char *path;
	uint64_t offset;
	const char *object;
	const struct cfs_object_user *users;
	size_t n_users;
	const char *message;
};

/** typedef cfs_verify_fn - receives each problem, in a stable order */
typedef void (*cfs_verify_fn)(void *ctx, const struct cfs_verify_problem *p);

/**
 * struct cfs_verify_options - what cfs_verify_image() checks besides the structure
 * @basedirs: directories holding the backing files, in lookup order; with
 *	      none, objects are not looked at
 * @n_basedirs: how many
 * @image_digest: the fs-verity digest the image must have, or NULL
 * @require_verity: an object whose digest the image records but which has
 *	      no fs-verity is an error, not a warning
 * @jobs: threads hashing objects; 0: all CPUs
 * @progress: called from any thread (never two at once) as objects are
 *	      hashed, with objects and bytes done and their totals; may be NULL
 * @progress_ctx: passed back to @progress
 */
struct cfs_verify_options {
	const char *const *basedirs;
	size_t n_basedirs;
	const uint8_t *image_digest;
	bool require_verity;
	unsigned int jobs;
	void (*progress)(void *ctx, uint64_t done, uint64_t total, uint64_t done_bytes,
			 uint64_t total_bytes);
	void *progress_ctx;
};

/**
 * struct cfs_verify_result - what cfs_verify_image() saw
 * @errors, @warnings: problems reported, by severity
 * @inodes: distinct reachable inodes decoded
 * @directories, @entries: reachable directories and the entries they hold
 * @objects: distinct backing files the image references
 * @objects_ok: found, of the right size and (where recorded) digest
 * @objects_measured: digests the kernel measured (fs-verity enabled)
 * @objects_computed: digests computed by reading the content
 * @bytes_hashed: bytes read to compute digests
 * @image_digest: the image's fs-verity digest (when one was asked for)
 * @image_digest_measured: it was measured, not computed
 */
struct cfs_verify_result {
	uint64_t errors, warnings;
	uint64_t inodes, directories, entries;
	uint64_t objects, objects_ok, objects_measured, objects_computed, bytes_hashed;
	uint8_t image_digest[CFS_DIGEST_SIZE];
	bool image_digest_measured;
};

/**
 * cfs_verify_image() - check an image, and optionally its objects, thoroughly
 * @path: the image file
 * @opts: what else to check; NULL: the structure only
 * @fn: receives each problem (errors and warnings); may be NULL
 * @ctx: passed back to @fn
 * @res: out: counts
 *
 * Checks every rule of the format on every reachable inode, directory
 * chunk, entry and xattr set, more strictly than the reader does, and goes
 * on after a problem wherever it can, so that one run reports them all.
 * Never writes to the image or the basedirs.
 *
 * Return: 0 when the check ran (the problems are in @res), or -errno when
 * it could not (the image cannot be read, a basedir cannot be opened,
 * no memory), with a message.
 */
int cfs_verify_image(const char *path, const struct cfs_verify_options *opts,
		     cfs_verify_fn fn, void *ctx, struct cfs_verify_result *res);

/* ---- comparing images (diff.c) ---- */

/* What changed about a path present in both images (bits of cfs_diff_entry.changes) */
#define CFS_DIFF_TYPE (1U << 0) /* file type; nothing else is compared then */
#define CFS_DIFF_CONTENT (1U << 1) /* regular files: digest or size */
#define CFS_DIFF_MODE (1U << 2) /* permission bits */
#define CFS_DIFF_OWNER (1U << 3) /* uid or gid */
#define CFS_DIFF_MTIME (1U << 4)
#define CFS_DIFF_XATTRS (1U << 5) /* some key added, removed or changed */
#define CFS_DIFF_TARGET (1U << 6) /* symlink target */
#define CFS_DIFF_HARDLINK (1U << 7) /* which other paths share the inode */
#define CFS_DIFF_RDEV (1U << 8) /* devices: device number */

/**
 * struct cfs_diff_xattr - one xattr key that differs
 * @key, @key_len: the key
 * @change: '+' only in NEW, '-' only in OLD, '~' value changed
 */
struct cfs_diff_xattr {
	const char *key;
	size_t key_len;
	char change;
};

/**
 * struct cfs_diff_entry - one path that differs between OLD and NEW
 * @change: '+' only in NEW, '-' only in OLD, 'M' in both but different
 * @path: "/a/b", NUL-terminated (raw bytes)
 * @old, @new: the inodes, NULL on the side the path is missing from
 * @changes: for 'M', CFS_DIFF_* bits
 * @old_link, @new_link: for CFS_DIFF_HARDLINK, the first path (in walk
 *	order) naming the inode on each side when it has several names, or NULL
 * @xattrs, @n_xattrs: for CFS_DIFF_XATTRS, the keys that differ, sorted
 *
 * Valid only during the callback.
 */
struct cfs_diff_entry {
	char change;
	const char *path;
	const struct cfs_inode *old, *new;
	unsigned int changes;
	const char *old_link, *new_link;
	const struct cfs_diff_xattr *xattrs;
	size_t n_xattrs;
};

/** typedef cfs_diff_fn - called per differing path; nonzero stops the diff */
typedef int (*cfs_diff_fn)(void *ctx, const struct cfs_diff_entry *e);

/**
 * struct cfs_diff_stats - counts of a diff
 * @added, @removed, @modified: paths, as passed to the callback
 * @objects_both, @objects_old, @objects_new: distinct backing objects (by
 *	digest when recorded, else by backing path) in both images, only in
 *	OLD, only in NEW
 * @fetch_bytes: the sizes of the objects only in NEW: what a machine that
 *	holds OLD's objects must fetch to have NEW's
 */
struct cfs_diff_stats {
	uint64_t added, removed, modified;
	uint64_t objects_both, objects_old, objects_new;
	uint64_t fetch_bytes;
};

/**
 * cfs_diff_images() - compare two images path by path
 *
 * Walks both trees at once, each directory's entries merged in their
 * stored (sorted) order, so memory grows with the depth of the trees and
 * the number of objects, not with the images. Paths come depth first,
 * parents before children; under a path that is a directory only on one
 * side, every path below it is passed as added or removed too.
 *
 * Return: 0 (@st filled), what @fn returned to stop, or -errno
 * (-EFSCORRUPTED with a message when an image is corrupt).
 */
int cfs_diff_images(struct cfs_image *old, struct cfs_image *new, cfs_diff_fn fn, void *ctx,
		    struct cfs_diff_stats *st);

/* ---- removing what no image needs from a digest store (gc.c) ---- */

/**
 * enum cfs_gc_kind - what cfs_store_gc() met
 * @CFS_GC_OBJECT: an object ("xx/<62 hex>", a regular file) that no image
 *	references: removed
 * @CFS_GC_TEMPORARY: a temporary of a build or fetch whose process is
 *	dead: removed
 * @CFS_GC_OTHER: anything else (a wrong name, a directory that is not
 *	"xx", a symlink, a temporary of a live process): left alone
 */
enum cfs_gc_kind {
	CFS_GC_OBJECT,
	CFS_GC_TEMPORARY,
	CFS_GC_OTHER,
};

/**
 * struct cfs_gc_entry - one file cfs_store_gc() removed or left alone
 * @kind: see enum cfs_gc_kind
 * @path: relative to the store ("ab/cdef...", ".tmp-123-0"), raw bytes
 * @size: its size in bytes (st_size); 0 for CFS_GC_OTHER
 * @why: for CFS_GC_OTHER, why it is not an object, in words; else NULL
 *
 * Valid only during the callback.
 */
struct cfs_gc_entry {
	enum cfs_gc_kind kind;
	const char *path;
	uint64_t size;
	const char *why;
};

/** typedef cfs_gc_fn - receives each entry, in sorted path order */
typedef void (*cfs_gc_fn)(void *ctx, const struct cfs_gc_entry *e);

/**
 * struct cfs_gc_stats - counts of cfs_store_gc()
 * @kept, @kept_bytes: objects the images reference, found and kept
 * @objects, @objects_bytes: unreferenced objects removed
 * @temporaries, @temporaries_bytes: dead temporaries removed
 * @others: entries left alone that are not objects
 * @failed: removals that failed (each reported with a message)
 *
 * With @dry_run the "removed" counts are what would be removed.
 */
struct cfs_gc_stats {
	uint64_t kept, kept_bytes;
	uint64_t objects, objects_bytes;
	uint64_t temporaries, temporaries_bytes;
	uint64_t others;
	uint64_t failed;
};

/**
 * cfs_store_gc() - remove what no image needs from a digest store
 * @dirfd: the store directory; the caller holds its lock exclusively
 *	(cfs_store_lock()), so that no build or fetch is publishing
 * @name: the store's name, for messages
 * @keep: every object to keep: the complete sets of all images that use
 *	the store (cfs_objects_add_image()), listed before calling this
 * @dry_run: remove nothing, report what would be removed
 * @fn: receives each entry removed (or that would be) and each left
 *	alone; may be NULL
 * @ctx: passed back to @fn
 * @st: out: counts
 *
 * Looks only at the store's top level and its "xx" directories; symlinks
 * are never followed and nothing but objects and temporaries is removed.
 * A failed removal is reported and the sweep goes on.
 *
 * Return: 0, or the -errno of the first failure (a directory that cannot
 * be read, a removal that failed), with a message.
 */
int cfs_store_gc(int dirfd, const char *name, const struct cfs_objects *keep, bool dry_run,
		 cfs_gc_fn fn, void *ctx, struct cfs_gc_stats *st);

#endif /* LIBCFS_H */
