/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers that several parts of libcfs share and nothing outside it uses:
 * the walk depth bound, FNV-1a, the map from inode number to a value, and
 * the write loops. Private to libcfs.
 */
#ifndef CFS_INTERNAL_H
#define CFS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* ---- writing (util.c) ---- */

/**
 * cfs_write_all() - write all @len bytes of @buf to @fd
 *
 * Retries short writes and EINTR. Return: 0 or -errno.
 */
int cfs_write_all(int fd, const void *buf, size_t len);

/** cfs_pwrite_all() - the same at offset @off, with pwrite() */
int cfs_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

#endif /* CFS_INTERNAL_H */
