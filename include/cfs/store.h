/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The digest store and the objects images reference: the store's lock,
 * base directory lists, locating objects, and removing unreferenced ones.
 */
#ifndef CFS_STORE_H
#define CFS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/image.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

/* ---- the digest store's lock (store.c) ---- */

/**
 * cfs_store_lock() - take the lock of the digest store @dirfd
 * @dirfd: the store directory
 * @exclusive: true for cfsctl gc, which removes objects; false (shared)
 *	for a build or fetch while it writes temporaries and publishes
 *	objects, so that gc never removes what it is about to reference. A
 *	repository's store is locked the same way, for longer: a build or
 *	pull into it holds the lock shared until its image is named, and
 *	its gc exclusively (cfs_repo_lock(), repo.h)
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

/**
 * cfs_store_remove_own_tmpfiles() - remove the temporaries this process
 *	(build, pull or fetch) named in the store directory @dirfd
 *
 * Async-signal-safe (no allocation, no stdio): for a handler of SIGINT,
 * SIGTERM or SIGHUP, which then exits. Unnamed temporaries (O_TMPFILE) go
 * with the process anyway.
 */
void cfs_store_remove_own_tmpfiles(int dirfd);

/**
 * cfs_store_dir_open() - create (if needed) and open the digest store @dir
 *
 * A store cfs makes is its owner's alone: mode 0700 from its first moment,
 * as is every directory cfs makes in it; the objects it writes are 0400
 * (docs/security.md). A store that lets other users reach what it holds
 * (cfs_store_exposed()) is said to be so, once a run, through the message
 * handler, naming the fix; it is not changed.
 *
 * Return: a directory fd, or -errno with a message naming @dir.
 */
int cfs_store_dir_open(const char *dir);

/**
 * cfs_store_exposed() - whether other users can reach what the digest
 *	store or repository @dirfd holds: its top directory lets them in (any
 *	group or other bit), and so does a directory in it
 *
 * Return: 1 when they can, 0 when not, or -errno.
 */
int cfs_store_exposed(int dirfd);

/**
 * cfs_store_check_private() - cfs_store_exposed(), and when it is, a
 *	warning through the message handler (once a run) that names the fix
 * @kind: "digest store" or "repository", for the message
 * @path: its name, for the message
 *
 * Return: as cfs_store_exposed().
 */
int cfs_store_check_private(int dirfd, const char *kind, const char *path);

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
 * struct cfs_basedirs - base directories, in lookup order: the one type of
 *	a basedir list in the API (verify, mount, the object lookup)
 * @dirs: the names, each NUL-terminated and allocated, in lookup order
 * @n: how many
 * @cap: room in @dirs
 *
 * Zero-initialise, fill with cfs_basedirs_parse() where a list comes in as
 * text (once, at the edge) or cfs_basedirs_add(), release with
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

/**
 * cfs_basedirs_add() - append directory @dir (a name, not a list) to @b
 *
 * Return: 0, -EINVAL for an empty name (with a message), or -ENOMEM.
 */
int cfs_basedirs_add(struct cfs_basedirs *b, const char *dir);

/** cfs_basedirs_free() - release @b's names and make it empty */
void cfs_basedirs_free(struct cfs_basedirs *b);

/**
 * cfs_objects_locate() - look for each object in @basedirs, first match wins
 * @set: the set; each object's state, basedir and found_size are set
 * @basedirs: directories holding backing files, in lookup order (none:
 *	everything is missing)
 *
 * As the kernel opens a backing file: symlinks are followed, and the
 * search stops at the first basedir that gives any answer but ENOENT (a
 * file of the wrong size or type there counts, it is not skipped).
 *
 * Return: the number of objects not CFS_OBJECT_PRESENT, or -errno when a
 * basedir cannot be opened (with a message naming it).
 */
int cfs_objects_locate(struct cfs_objects *set, const struct cfs_basedirs *basedirs);

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

#pragma GCC visibility pop

#endif /* CFS_STORE_H */
