// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The map from inode number to a pointer that the image walks share (walk.c,
 * diff.c, verify.c): open addressing with linear probing, kept at most half
 * full, grown by doubling.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* A 64-bit finaliser (MurmurHash3's), so that sequential numbers spread. */
static size_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

void **cfs_inomap_find(const struct cfs_inomap *m, uint64_t ino)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(ino + 1) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == ino + 1)
			return &m->vals[i];
	return NULL;
}

int cfs_inomap_add(struct cfs_inomap *m, uint64_t ino, void *val)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		void **vals = calloc(cap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			for (i = mix(m->keys[j]) & (cap - 1); keys[i]; i = (i + 1) & (cap - 1))
				;
			keys[i] = m->keys[j];
			vals[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	for (i = mix(ino + 1) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = ino + 1;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void cfs_inomap_free(struct cfs_inomap *m, void (*drop)(void *))
{
	if (drop)
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				drop(m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = (struct cfs_inomap){ 0 };
}
