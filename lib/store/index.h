/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The sha256 index of a repository (index.c): from the sha256 of a file's
 * content, what a zstd:chunked TOC names, to the fs-verity digest that
 * names its object in REPO/objects. It is internal to libcfs.
 */
#ifndef CFS_INDEX_H
#define CFS_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/tree.h"

/* An open index: its table mapped, its log read, the entries added since. */
struct cfs_index;

/**
 * cfs_index_open() - the index of the repository whose objects are the
 * digest store @store_fd
 *
 * The store is a repository's when it is the directory "objects" of a
 * directory that also holds "images". The index is REPO/index, made if
 * missing; an index of the earlier form (a symlink per entry) is migrated
 * into it first, and its symlinks removed. @out: the index, for the
 * threads of one process to share. Return: 0; -ENOENT when the store is no
 * repository's; or another -errno. No message: the index only ever saves
 * work, a pull or build goes on without it.
 */
int cfs_index_open(int store_fd, struct cfs_index **out);

/**
 * cfs_index_close() - write the entries added to the index's log (and
 * merge the log into the table when it has grown), and free @ix
 *
 * @ix may be NULL. Return: 0 or -errno; the entries are lost on an error,
 * which costs only reading their objects again.
 */
int cfs_index_close(struct cfs_index *ix);

/**
 * cfs_index_lookup() - the object digest the index gives for @sha256
 *
 * Return: 0, or -ENOENT (also when @ix is NULL). The answer is a hint: the
 * object may be gone or (a damaged index) hold something else; check it
 * (cfs_index_vouches()) before use.
 */
int cfs_index_lookup(struct cfs_index *ix, const uint8_t sha256[32],
		     uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_index_vouches() - whether the index may be believed, without
 * reading the object, that the object @digest, whose lstat() is @st, has
 * the sha256 @sha256
 *
 * True when the newest entry of @sha256 names @digest, the newest entry of
 * @digest is of @sha256 and signed, and the object's inode
 * number, size and ctime are those it had when it was read for that
 * sha256: content written since changes the ctime, a file put in its
 * place is another inode. False means: read the object and hash it.
 */
bool cfs_index_vouches(struct cfs_index *ix, const uint8_t digest[CFS_DIGEST_SIZE],
		       const struct stat *st, const uint8_t sha256[32]);

/**
 * cfs_index_add() - record that the object @digest, whose fstat() when
 * it was read for its sha256 is @st, has the sha256 @sha256
 *
 * The entry is seen by lookups through @ix at once, and by others once
 * @ix is closed. Safe from several threads. Return: 0 or -errno.
 */
int cfs_index_add(struct cfs_index *ix, const uint8_t sha256[32],
		  const uint8_t digest[CFS_DIGEST_SIZE], const struct stat *st);

/**
 * cfs_index_learn() - index the object @digest of the store @store_fd,
 * read for its sha256, unless the index @ix (or NULL: none) knows it
 *
 * Errors are not reported: an object left out is fetched again later.
 */
void cfs_index_learn(struct cfs_index *ix, int store_fd, const uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_index_fill() - index the objects of @jobs (regular files with
 * digests, in the store @store_fd) that the index does not know yet,
 * reading each for its sha256
 *
 * Errors are not reported: an object left out is fetched again later.
 */
void cfs_index_fill(int store_fd, struct cfs_node *const *jobs, size_t n);

#endif /* CFS_INDEX_H */
