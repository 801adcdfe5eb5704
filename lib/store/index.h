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

/**
 * cfs_index_open() - the index of the repository whose objects are the
 * digest store @store_fd
 *
 * The store is a repository's when it is the directory "objects" of a
 * directory that also holds "images". The index is REPO/index, made if
 * missing. Return: a directory descriptor; -ENOENT when the store is no
 * repository's; or another -errno. No message: the index only ever saves
 * work, a pull or build goes on without it.
 */
int cfs_index_open(int store_fd);

/**
 * cfs_index_lookup() - the object digest the index gives for @sha256
 *
 * Return: 0, or -ENOENT. The answer is a hint: the object may be gone or
 * (a damaged index) hold something else; check it (cfs_index_vouches())
 * before use.
 */
int cfs_index_lookup(int index_fd, const uint8_t sha256[32], uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_index_vouches() - whether the index may be believed, without
 * reading the object, that the object @digest, whose lstat() is @st, has
 * the sha256 @sha256
 *
 * True when the entry of the other direction (the object's) gives
 * @sha256 too, and the object's inode number, size and ctime are those it
 * had when it was read for that sha256: content written since changes the
 * ctime, a file put in its place is another inode, and a planted or
 * damaged entry of one direction does not agree with the other. False
 * means: read the object and hash it.
 */
bool cfs_index_vouches(int index_fd, const uint8_t digest[CFS_DIGEST_SIZE], const struct stat *st,
		       const uint8_t sha256[32]);

/**
 * cfs_index_add() - record that the object @digest, whose fstat() when
 * it was read for its sha256 is @st, has the sha256 @sha256
 *
 * Each entry is a symlink made under a temporary name and renamed into
 * place, so a reader sees an entry whole or not at all. Return: 0 or -errno.
 */
int cfs_index_add(int index_fd, const uint8_t sha256[32], const uint8_t digest[CFS_DIGEST_SIZE],
		  const struct stat *st);

/**
 * cfs_index_learn() - index the object @digest of the store @store_fd,
 * read for its sha256, unless the index (@index_fd, or -1: none) knows it
 *
 * Errors are not reported: an object left out is fetched again later.
 */
void cfs_index_learn(int index_fd, int store_fd, const uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_index_fill() - index the objects of @jobs (regular files with
 * digests, in the store @store_fd) that the index does not know yet,
 * reading each for its sha256
 *
 * Errors are not reported: an object left out is fetched again later.
 */
void cfs_index_fill(int store_fd, struct cfs_node *const *jobs, size_t n);

#endif /* CFS_INDEX_H */
