// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The objects images reference: collects the unique backing files of one or
 * more images (backing path, fs-verity digest, size and every image path
 * that reads it) and looks them up in a list of basedirs the way the kernel
 * does, first match wins. cfsctl fetch, inspect missing and verify all start
 * from this answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

void cfs_objects_init(struct cfs_objects *set)
{
	memset(set, 0, sizeof(*set));
}

void cfs_objects_free(struct cfs_objects *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct cfs_object *o = &set->objs[i];

		for (size_t u = 0; u < o->n_users; u++)
			free(o->users[u].path);
		free(o->users);
		free(o->path);
	}
	free(set->objs);
	free(set->hash);
	cfs_objects_init(set);
}

static size_t hash_str(const char *s)
{
	return (size_t)cfs_fnv1a(CFS_FNV1A_INIT, s, strlen(s));
}

/* The slot of @path in the hash table: holds its index + 1, or 0 (free). */
static size_t *hash_slot(struct cfs_objects *set, const char *path)
{
	size_t mask = set->hash_size - 1, i = hash_str(path) & mask;

	for (;;) {
		size_t *slot = &set->hash[i];

		if (*slot == 0 || strcmp(set->objs[*slot - 1].path, path) == 0)
			return slot;
		i = (i + 1) & mask;
	}
}

static int grow(struct cfs_objects *set)
{
	size_t cap = set->cap ? set->cap * 2 : 256, *hash;
	struct cfs_object *objs;

	objs = realloc(set->objs, cap * sizeof(*objs));
	if (!objs)
		return -ENOMEM;
	set->objs = objs;
	set->cap = cap;
	/* the table stays at most half full */
	hash = calloc(cap * 2, sizeof(*hash));
	if (!hash)
		return -ENOMEM;
	free(set->hash);
	set->hash = hash;
	set->hash_size = cap * 2;
	for (size_t i = 0; i < set->n; i++)
		*hash_slot(set, set->objs[i].path) = i + 1;
	return 0;
}

static int add_user(struct cfs_object *o, size_t image, const char *user)
{
	struct cfs_object_user *users;
	char *copy;

	if (!user)
		return 0;
	/* n_users is a power of two or 0 whenever the array is full */
	if (o->n_users == 0 || (o->n_users & (o->n_users - 1)) == 0) {
		size_t cap = o->n_users ? o->n_users * 2 : 1;

		users = realloc(o->users, cap * sizeof(*users));
		if (!users)
			return -ENOMEM;
		o->users = users;
	}
	copy = strdup(user);
	if (!copy)
		return -ENOMEM;
	o->users[o->n_users].image = image;
	o->users[o->n_users].path = copy;
	o->n_users++;
	return 0;
}

int cfs_objects_add(struct cfs_objects *set, const char *path,
		    const uint8_t *digest, uint64_t size, size_t image, const char *user)
{
	char canon[CFS_OBJECT_PATH_SIZE];
	struct cfs_object *o;
	size_t *slot;
	int ret;

	while (*path == '/')
		path++;
	if (set->n + 1 > set->cap) {
		ret = grow(set);
		if (ret < 0)
			return ret;
	}
	slot = hash_slot(set, path);
	if (*slot) {
		o = &set->objs[*slot - 1];
		if (o->size != size || o->has_digest != (digest != NULL) ||
		    (digest && memcmp(o->digest, digest, CFS_DIGEST_SIZE) != 0)) {
			cfs_msg("backing file '%s': '%s' (image %zu) and '%s' (image %zu) disagree about its %s",
				path, o->n_users ? o->users[0].path : "?",
				o->n_users ? o->users[0].image : 0, user ? user : "?", image,
				o->size != size ? "size" : "digest");
			return -EINVAL;
		}
		return add_user(o, image, user);
	}

	o = &set->objs[set->n];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	o->size = size;
	o->basedir = -1;
	if (digest) {
		o->has_digest = true;
		memcpy(o->digest, digest, CFS_DIGEST_SIZE);
		cfs_object_path(digest, canon);
		o->canonical = strcmp(canon, path) == 0;
	}
	ret = add_user(o, image, user);
	if (ret < 0) {
		free(o->path);
		return ret;
	}
	set->n++;
	*slot = set->n;
	return 0;
}

const struct cfs_object *cfs_objects_find(const struct cfs_objects *set, const char *path)
{
	size_t mask, i;

	while (*path == '/')
		path++;
	if (set->hash_size == 0)
		return NULL;
	mask = set->hash_size - 1;
	for (i = hash_str(path) & mask; set->hash[i]; i = (i + 1) & mask)
		if (strcmp(set->objs[set->hash[i] - 1].path, path) == 0)
			return &set->objs[set->hash[i] - 1];
	return NULL;
}

/* ---- looking objects up ---- */

int cfs_objects_locate(struct cfs_objects *set, const struct cfs_basedirs *basedirs)
{
	int *fds, ret;

	ret = cfs_basedirs_open(basedirs, &fds);
	if (ret < 0)
		return ret;
	ret = cfs_objects_locate_at(set, fds, basedirs ? basedirs->n : 0);
	cfs_basedirs_close(fds, basedirs ? basedirs->n : 0);
	return ret;
}

int cfs_objects_locate_at(struct cfs_objects *set, const int *fds, size_t n_basedirs)
{
	int missing = 0;
	size_t b;

	for (size_t i = 0; i < set->n; i++) {
		struct cfs_object *o = &set->objs[i];
		struct stat st;

		o->state = CFS_OBJECT_MISSING;
		o->basedir = -1;
		o->found_size = 0;
		/* as the kernel opens a backing file: follow symlinks, and any
		 * answer but "no such file" ends the search */
		for (b = 0; b < n_basedirs; b++) {
			if (fstatat(fds[b], o->path, &st, 0) < 0) {
				if (errno == ENOENT)
					continue;
				o->state = CFS_OBJECT_NOT_FILE;
			} else if (!S_ISREG(st.st_mode)) {
				o->state = CFS_OBJECT_NOT_FILE;
			} else {
				o->found_size = (uint64_t)st.st_size;
				o->state = o->found_size == o->size ? CFS_OBJECT_PRESENT :
								      CFS_OBJECT_WRONG_SIZE;
			}
			o->basedir = (int)b;
			break;
		}
		if (o->state != CFS_OBJECT_PRESENT)
			missing++;
	}
	return missing;
}
