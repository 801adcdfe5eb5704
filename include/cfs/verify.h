/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Checking an image and the objects it references, as the kernel would
 * read them.
 */
#ifndef CFS_VERIFY_H
#define CFS_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/image.h"
#include "cfs/store.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

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
 *	      none (NULL or empty), objects are not looked at
 * @image_digest: the fs-verity digest the image must have, or NULL
 * @require_verity: an object whose digest the image records but which has
 *	      no fs-verity is an error, not a warning
 * @jobs: threads hashing objects; 0: all CPUs
 * @progress: called from any thread (never two at once) as objects are
 *	      hashed, with objects and bytes done and their totals; may be NULL
 * @progress_ctx: passed back to @progress
 */
struct cfs_verify_options {
	const struct cfs_basedirs *basedirs;
	const uint8_t *image_digest;
	bool require_verity;
	unsigned int jobs;
	void (*progress)(void *ctx, uint64_t done, uint64_t total, uint64_t done_bytes,
			 uint64_t total_bytes);
	void *progress_ctx;
	uint64_t reserved[4]; /* zero: room for options to come (libcfs refuses others) */
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
	uint64_t reserved[4]; /* room for what a later libcfs reports; zeroed */
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

#pragma GCC visibility pop

#endif /* CFS_VERIFY_H */
