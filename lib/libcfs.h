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

/* ---- small helpers (util.c) ---- */

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

/* ---- fs-verity (verity.c), on top of libfsverity ---- */

/** cfs_verity_digest_fd() - compute the fs-verity sha256 digest of @fd's content */
int cfs_verity_digest_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE]);

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
	uint64_t ino; /* index: offset of the fixed chunk in the inode section */
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

/** cfs_image_root() - index of the root directory's inode */
uint64_t cfs_image_root(const struct cfs_image *img);

/** cfs_image_size() - image size in bytes */
uint64_t cfs_image_size(const struct cfs_image *img);

/** cfs_image_data_offset() - file offset of the variable data section */
uint64_t cfs_image_data_offset(const struct cfs_image *img);

/** cfs_image_version() - the header's format version */
unsigned int cfs_image_version(const struct cfs_image *img);

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
	const struct cfs_dir_header *dir; /* chunk table, inside the image */
	uint32_t n_chunks;
	uint32_t chunk; /* current chunk */
	uint32_t entry; /* next entry in the current chunk */
	uint64_t dir_ino;
	const char *prev_name; /* the last entry returned, to check the order */
	size_t prev_len;
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
 * as "@" entries. Return: 0 or -errno.
 */
int cfs_image_write_dump(struct cfs_image *img, FILE *out);

/* ---- building images (tree.c, dump.c, scan.c, writer.c, store.c) ---- */

struct cfs_node; /* a file in a tree being built; see tree.h */

/**
 * struct cfs_build_options - what cfsctl build's options select
 */
struct cfs_build_options {
	const char *digest_store; /* NULL: record digests, store nothing */
	bool require_verity; /* fail where verity cannot be enabled on objects */
	bool use_epoch; /* all mtimes 0 */
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
 * cfs_tree_finish() - hash contents (in parallel), fill the store, link
 * hardlinks and count nlink, sort directories; the tree is then ready to be
 * written.
 */
int cfs_tree_finish(struct cfs_node *root, const struct cfs_build_options *opts);

/**
 * cfs_tree_write_image() - write the image of a finished tree to @fd
 *
 * Output is a function of the tree alone (reproducible).
 */
int cfs_tree_write_image(struct cfs_node *root, int fd);

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

#endif /* LIBCFS_H */
