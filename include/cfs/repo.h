/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A repository: a digest store and the images that use it, each named by
 * its own fs-verity digest, with names that point at them. The layout is a
 * contract (docs/repository.md):
 *
 *	REPO/objects/xx/<62 hex>	the digest store (a basedir as it is)
 *	REPO/images/<64 hex>		an image, named by its fs-verity digest
 *	REPO/images/refs/<name>		a name: a symlink to ../<64 hex>
 *
 * Other entries of REPO belong to the repository too and are left alone.
 */
#ifndef CFS_REPO_H
#define CFS_REPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/build.h"
#include "cfs/util.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

/* The longest name, and the longest component of one */
#define CFS_REPO_NAME_MAX 1024
#define CFS_REPO_NAME_COMPONENT_MAX 255
/* Room for the name of a temporary in images/ (see cfs_repo_image_create()) */
#define CFS_REPO_TMP_SIZE 48

struct cfs_repo;

/**
 * cfs_repo_open() - open the repository at @path
 * @path: its directory
 * @create: make it (and what it lacks of objects/, images/ and
 *	images/refs/) if missing; otherwise objects/ and images/ must exist
 * @repo: out: the repository, for cfs_repo_close()
 *
 * Return: 0, -ENOENT with a message when @path is not a repository and
 * @create is false, or another -errno with a message naming the directory.
 */
int cfs_repo_open(const char *path, bool create, struct cfs_repo **repo);

/** cfs_repo_close() - release @repo; NULL is ignored */
void cfs_repo_close(struct cfs_repo *repo);

/** cfs_repo_path() - the directory @repo was opened with */
const char *cfs_repo_path(const struct cfs_repo *repo);

/**
 * cfs_repo_objects() - the path of the digest store, "REPO/objects": the
 * digest store of a build and the basedir of a mount, as it is
 */
const char *cfs_repo_objects(const struct cfs_repo *repo);

/**
 * cfs_repo_exposed() - cfs_store_exposed() of the repository: whether other
 *	users can reach what it holds (cfs_repo_open() warns of it once a run,
 *	and a write into a repository an older cfs made closes its folders)
 *
 * Return: 1 when they can, 0 when not, or -errno.
 */
int cfs_repo_exposed(const struct cfs_repo *repo);

/**
 * cfs_repo_lock() - take the digest store's lock (cfs_store_lock()) on
 * REPO/objects
 * @exclusive: true for a gc, which removes objects and unnamed images;
 *	false for a build or pull, from before its first object is written
 *	until its name is set, so that a gc never sees its objects or its
 *	image unnamed
 * @wait: block until the lock is granted; otherwise -EWOULDBLOCK
 *
 * Return: a descriptor for cfs_store_unlock(), or -errno (no message).
 */
int cfs_repo_lock(struct cfs_repo *repo, bool exclusive, bool wait);

/**
 * cfs_repo_name_check() - is @name a name a repository takes?
 *
 * A name is one or more components separated by single '/', each of 1 to
 * 255 bytes of letters, digits and "._-+@:=,~", not starting with '.' or
 * (the first) with '-', at most 1024 bytes in all, and not 64 hex digits
 * (which would read as a digest).
 * Return: 0, or -EINVAL with a message saying why not.
 */
int cfs_repo_name_check(const char *name);

/**
 * cfs_repo_image_create() - a new temporary file in REPO/images to write
 * an image into
 * @tmp: out: its name in REPO/images, ".tmp-<PID>-<N>", for
 *	cfs_repo_image_commit() or cfs_repo_image_abort()
 *
 * Return: a descriptor open for reading and writing, or -errno with a
 * message. A run that dies leaves the temporary to the next gc.
 */
int cfs_repo_image_create(struct cfs_repo *repo, char tmp[CFS_REPO_TMP_SIZE]);

/**
 * cfs_repo_image_commit() - make the finished temporary @tmp an image
 * @fd: its descriptor from cfs_repo_image_create(), closed here
 * @require_verity: fail when fs-verity cannot be enabled on the image
 * @digest: out: the image's fs-verity digest, its name
 *
 * The file is synced, its digest computed, fs-verity enabled where the
 * filesystem can, and it is renamed to REPO/images/<64 hex> unless an
 * image of that digest is already there (then the temporary is removed);
 * the directory is synced. On failure the temporary is removed.
 * Return: 0 or -errno, with a message.
 */
int cfs_repo_image_commit(struct cfs_repo *repo, int fd, const char *tmp, bool require_verity,
			  uint8_t digest[CFS_DIGEST_SIZE]);

/** cfs_repo_image_abort() - close @fd (if >= 0) and remove the temporary @tmp */
void cfs_repo_image_abort(struct cfs_repo *repo, int fd, const char *tmp);

/**
 * struct cfs_image_target - where cfs_tree_commit() puts a tree's image
 * @path: a file to write, through a temporary beside it (mode 0644 less
 *	the umask) renamed over it at the end; or NULL, with @repo
 * @repo: a repository to store the image in and point @name at (with
 *	@origin, if not NULL, recorded for it: cfs_repo_set_origin())
 * @format: the image's format
 * @wo: its writer's options, or NULL (cfs_tree_write())
 * @require_verity: with @repo, fail when the image cannot get fs-verity
 * @want_digest: with @path, compute the written image's digest (a
 *	repository's image always has it)
 * @guard: NULL, or called with true before a file is made that a caller
 *	stopping now would have to remove, and with false once @pending has
 *	been told it: a caller with a signal handler holds its signals there
 * @pending: NULL, or told the full path of the one file to remove if the
 *	program stops now, and NULL when there is none any more
 * @ctx: for @guard and @pending
 * @store_seal: with @repo, store the tree's sealed form too: the
 *	composefs 1.0 image with the defaults that cfs_tree_seal() measures,
 *	under its digest in REPO/images, unless the image itself is that one
 *	(the caller checked the seal); it is stored before anything is
 *	published, and removed again on failure like the image (a run killed
 *	between its storing and the naming leaves it unnamed, to the next gc)
 * @seal: with @store_seal, the digest (64 lowercase hex digits) the
 *	sealed form must have, or NULL when the caller checked it: measured
 *	as it is stored (once: no other copy is written to check it), and
 *	another digest fails the commit (-EBADMSG, with a message naming
 *	both) before anything is published
 * @digest: out: the image's fs-verity digest (with @repo or @want_digest)
 */
struct cfs_image_target {
	const char *path;
	struct cfs_repo *repo;
	const char *name, *origin;
	enum cfs_image_format format;
	const struct cfs_write_options *wo;
	bool require_verity, want_digest;
	void (*guard)(void *ctx, bool on);
	void (*pending)(void *ctx, const char *path);
	void *ctx;
	uint8_t digest[CFS_DIGEST_SIZE];
	bool store_seal;
	union {
		const char *seal;
		uint64_t seal_room; /* the struct keeps its size */
	};
	uint64_t reserved[2]; /* zero: room for options to come (libcfs refuses others) */
};

/**
 * cfs_tree_commit() - finish a built tree and write its image where it is
 * to stay: the one sequence of build, pull and ostree's builds
 * @root: the tree, from cfs_tree_from_dir() and the like (not freed here)
 * @opts: as for cfs_tree_finish(); its before_publish, if any, runs first
 *	in the step below
 * @t: where the image goes
 *
 * cfs_tree_finish() hashes the contents and writes the new objects; before
 * any is published, the image is written to a temporary, and with @repo
 * stored under its digest and its name checked (a caller checks it with
 * cfs_repo_name_usable() before its work too, to fail early). Then the objects are published, and the
 * image renamed into place, or named. On failure nothing is left: no
 * image, no name changed, no new object.
 * Return: 0, or -errno with a message.
 */
int cfs_tree_commit(struct cfs_node *root, const struct cfs_build_options *opts,
		    struct cfs_image_target *t);

/**
 * cfs_repo_set_name() - point @name at the image @digest, atomically
 *
 * The image must be in the repository. The symlink is made under a
 * temporary name in the name's directory (made if missing) and renamed
 * over @name, so a reader sees the old target or the new one, never
 * neither; the directory is synced.
 * Return: 0, -EINVAL for a bad name, -ENOENT when there is no such
 * image, -EISDIR when @name is a directory of other names, or -errno;
 * each with a message.
 */
int cfs_repo_set_name(struct cfs_repo *repo, const char *name,
		      const uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_repo_name_usable() - could cfs_repo_set_name() point @name now?
 *
 * For a build that checks its name before any work: @name is valid, no
 * part of it is a name, and it is not a directory of names.
 * Return: 0, or -EINVAL, -ENOTDIR, -EISDIR or -errno, each with a message.
 */
int cfs_repo_name_usable(struct cfs_repo *repo, const char *name);

/**
 * cfs_repo_set_origin() - record where the image @digest that @name is
 * about to point at came from: @text, for cfs_repo_get_origin()
 *
 * Kept in REPO/images/origins/, one file for each name (written to a
 * temporary and renamed); a record counts only while the name points at
 * @digest. Return: 0, or -errno with a message.
 */
int cfs_repo_set_origin(struct cfs_repo *repo, const char *name,
			const uint8_t digest[CFS_DIGEST_SIZE], const char *text);

/**
 * cfs_repo_get_origin() - the text cfs_repo_set_origin() recorded for
 * @name pointing at @digest (malloc()ed, in *@text)
 * Return: 0; -ENOENT (no message) when there is none, or it was recorded
 * for another image; another -errno.
 */
int cfs_repo_get_origin(struct cfs_repo *repo, const char *name,
			const uint8_t digest[CFS_DIGEST_SIZE], char **text);

/**
 * cfs_repo_remove_name() - remove @name; the directories it leaves empty
 * under images/refs go too. The image stays (until a gc).
 * Return: 0, -ENOENT when there is no such name, or -errno; with a message.
 */
int cfs_repo_remove_name(struct cfs_repo *repo, const char *name);

/**
 * cfs_repo_resolve() - the image @what names
 * @what: a name, or the 64 hex digits of an image's digest
 * @digest: out: the image's digest, or NULL
 * @path: out: "REPO/images/<64 hex>", allocated (free()), or NULL
 *
 * A name must be a symlink "../<64 hex>" (with one more "../" for each
 * '/' in the name) to an image that exists.
 * Return: 0, -ENOENT when there is no such name or image, -EISDIR when
 * @what is a directory of names, -EINVAL when the name is malformed or is
 * not a symlink of that form, or -errno; each with a message naming @what.
 */
int cfs_repo_resolve(struct cfs_repo *repo, const char *what, uint8_t digest[CFS_DIGEST_SIZE],
		     char **path);

/**
 * struct cfs_repo_name - one name of a repository
 * @name: the name ("os/stable")
 * @ok: it is a symlink of the right form to an image that exists
 * @digest: with @ok, the image it points at
 * @problem: without @ok, what is wrong, in words
 */
struct cfs_repo_name {
	char *name;
	bool ok;
	uint8_t digest[CFS_DIGEST_SIZE];
	const char *problem;
};

/**
 * struct cfs_repo_image - one image of a repository
 * @digest: its fs-verity digest, its name in REPO/images
 * @size: its size in bytes
 * @n_names: how many names point at it
 */
struct cfs_repo_image {
	uint8_t digest[CFS_DIGEST_SIZE];
	uint64_t size;
	size_t n_names;
};

/**
 * struct cfs_repo_list - what cfs_repo_list() found
 * @names: the names, sorted bytewise
 * @images: the images (regular files named by 64 lowercase hex digits),
 *	sorted by digest
 */
struct cfs_repo_list {
	struct cfs_repo_name *names;
	size_t n_names;
	struct cfs_repo_image *images;
	size_t n_images;
};

/**
 * cfs_repo_list() - every name and every image of @repo
 *
 * Entries of REPO/images that are neither images, refs/ nor temporaries,
 * and entries of refs/ whose names no name may have, are skipped.
 * Return: 0 or -errno with a message; free @list with cfs_repo_list_free().
 */
int cfs_repo_list(struct cfs_repo *repo, struct cfs_repo_list *list);

/** cfs_repo_list_free() - release what @list holds */
void cfs_repo_list_free(struct cfs_repo_list *list);

/**
 * cfs_repo_list_find() - the image of @digest in @list, or NULL
 */
const struct cfs_repo_image *cfs_repo_list_find(const struct cfs_repo_list *list,
						const uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * typedef cfs_repo_gc_fn - an image or temporary cfs_repo_gc() removed
 * (or would remove): @path relative to REPO ("images/<64 hex>",
 * "images/.tmp-123-0", "images/refs/os/.tmp-123-1"), @size in bytes,
 * @temporary whether it is a dead run's temporary
 */
typedef void (*cfs_repo_gc_fn)(void *ctx, const char *path, uint64_t size, bool temporary);

/**
 * struct cfs_repo_gc_stats - counts of cfs_repo_gc()
 * @images, @images_bytes: images no name reaches, removed
 * @temporaries, @temporaries_bytes: temporaries of dead runs, removed
 * @failed: removals that failed (each with a message)
 */
struct cfs_repo_gc_stats {
	uint64_t images, images_bytes;
	uint64_t temporaries, temporaries_bytes;
	uint64_t failed;
};

/**
 * cfs_repo_gc() - remove the images of REPO/images not in @keep, and the
 * temporaries dead runs left in images/ and images/refs/
 * @keep: the images to keep (those names reach, and any others asked for)
 * @n_keep: how many
 * @dry_run: remove nothing, report what would be removed
 * @fn: receives each, may be NULL
 *
 * The caller holds the lock exclusively (cfs_repo_lock()) and sweeps the
 * objects with cfs_store_gc() after this, keeping what the kept images
 * reference.
 * Return: 0, or the -errno of the first failure, with a message.
 */
int cfs_repo_gc(struct cfs_repo *repo, const uint8_t (*keep)[CFS_DIGEST_SIZE], size_t n_keep,
		bool dry_run, cfs_repo_gc_fn fn, void *ctx, struct cfs_repo_gc_stats *st);

#pragma GCC visibility pop

#endif /* CFS_REPO_H */
