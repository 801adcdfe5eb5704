/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Building images: a tree from a directory, a dumpfile or a tar archive,
 * its contents hashed (and stored), then written in the chosen format.
 */
#ifndef CFS_BUILD_H
#define CFS_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfs/util.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

/* ---- building images (tree.c, dump.c, scan.c, tar.c, store.c, format.c) ---- */

struct cfs_node; /* a file in a tree being built; see tree.h */

#define CFS_RESERVE_AUTO UINT64_MAX
#define CFS_RESERVE_AUTO_MAX ((uint64_t)1 << 30)

/*
 * The bytes of xattrs (names and values, and CFS_ENTRY_META_XATTR for each)
 * and symlink targets a tree of archives may read for each entry
 * max_entries allows, in all: the memory they take stays in proportion.
 */
#define CFS_ENTRY_META_BYTES 256
#define CFS_ENTRY_META_XATTR 64

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
 * cfs_write_options? cfs_tree_write() refuses options other than the
 * defaults for a format that does not.
 */
bool cfs_format_takes_options(enum cfs_image_format format);

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
	/* the most bytes of file content (holes included) to take in; 0: no limit */
	uint64_t max_size;
	/*
	 * the most entries a tree read from a tar archive, container image,
	 * pull, dumpfile or directory may hold (and CFS_ENTRY_META_BYTES per
	 * entry of it for the xattrs and symlink targets read); 0: no limit
	 */
	uint64_t max_entries;
	/* bytes of the store's filesystem never written; CFS_RESERVE_AUTO: 5%, at most 1 GiB */
	uint64_t reserve;
	/* progress: called with files done and total, from any thread; may be NULL */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/*
	 * before_publish: called by cfs_tree_finish() once every digest is
	 * known and every new object written, before any is published (to
	 * write the image first); nonzero (-errno) fails the build, which
	 * then keeps no new object. May be NULL.
	 */
	int (*before_publish)(void *ctx, struct cfs_node *root);
	void *before_publish_ctx;
	uint64_t reserved[4]; /* zero: room for options to come (libcfs refuses others) */
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
 * struct cfs_write_options - what the writer of a format that takes options
 *	(cfs_format_takes_options()) may use; today composefs 1.0's
 * @min_version: the composefs_version to write at least (0 or 1)
 * @max_version: the highest it may be raised to when the tree needs it
 *	(1: the tree has whiteouts, which then also get user.overlay.* xattrs)
 * @user_xattrs: keep only the user.* xattrs of the tree
 */
struct cfs_write_options {
	unsigned int min_version;
	unsigned int max_version;
	bool user_xattrs;
	uint64_t reserved[4]; /* zero: room for options to come (libcfs refuses others) */
};

/**
 * cfs_tree_write() - write the image of a finished tree to @fd
 * @root: the tree, finished by cfs_tree_finish() with the same @format
 * @format: the image format
 * @opts: what the image may use, for a format that takes options; NULL
 *	for the defaults (versions 0 to 1, every xattr)
 * @fd: where the image goes, from its start
 *
 * Output is a function of the tree and @opts alone (reproducible); a
 * composefs 1.0 image has the bytes composefs 1.0.8's mkcomposefs writes
 * for the same tree. Return: 0, -EINVAL or -EFBIG (with a message) for what
 * the format cannot hold or options it does not take, -ENOMEM, or a write
 * error.
 */
int cfs_tree_write(struct cfs_node *root, enum cfs_image_format format,
		   const struct cfs_write_options *opts, int fd);

/**
 * cfs_tree_can_seal() - does every tree finished with @opts give its seal?
 *
 * The seal measures the composefs 1.0 image, which holds small files'
 * content: a tree finished for that format always kept it. A tree
 * finished for another format gives its seal only when its source kept
 * that content too (a registry pull does for a sealed image), which
 * cfs_tree_seal() checks.
 */
bool cfs_tree_can_seal(const struct cfs_build_options *opts);

/**
 * cfs_tree_seal() - the composefs seal of a finished tree
 * @root: the tree, finished by cfs_tree_finish() with @opts
 * @opts: as given to cfs_tree_finish()
 * @tmpdir: where the image is written, unnamed (NULL: $TMPDIR, else /tmp)
 * @digest: the seal: the fs-verity digest of the tree's composefs 1.0
 *	image with the defaults, as cfsctl push annotates an image with it
 *	(CFS_SEAL_ANNOTATION, cfs/push.h)
 *
 * Return: 0, -EINVAL for a tree that cannot be sealed (one of another
 * format that lacks a small file's content), or -errno; each with a
 * message.
 */
int cfs_tree_seal(struct cfs_node *root, const struct cfs_build_options *opts,
		  const char *tmpdir, uint8_t digest[CFS_DIGEST_SIZE]);

void cfs_tree_free(struct cfs_node *root);

#pragma GCC visibility pop

#endif /* CFS_BUILD_H */
