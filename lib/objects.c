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

#include "libcfs.h"

/* Deeper than PATH_MAX allows: the image is lying. */
#define MAX_DEPTH 2048

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
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (size_t)h;
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

/* ---- walking an image ---- */

struct frame {
	struct cfs_dir_iter it;
	size_t path_len; /* of the directory's path, without a trailing '/' */
};

struct walk {
	struct frame *stack;
	size_t depth, cap;
	char *path;
	size_t path_cap;
	uint64_t *seen; /* directory inodes met, open addressing, 0 = free */
	size_t seen_size, n_seen;
};

/* Record directory @ino; -EEXIST when it was met before (a loop). */
static int mark_dir(struct walk *w, uint64_t ino)
{
	uint64_t key = ino + 1; /* 0 marks a free slot */
	size_t i;

	if (2 * (w->n_seen + 1) > w->seen_size) {
		size_t size = w->seen_size ? w->seen_size * 2 : 64;
		uint64_t *seen = calloc(size, sizeof(*seen)), *old = w->seen;

		if (!seen)
			return -ENOMEM;
		for (size_t k = 0; k < w->seen_size; k++) {
			if (!old[k])
				continue;
			for (i = (size_t)(old[k] * 0x9e3779b97f4a7c15ULL) & (size - 1); seen[i];
			     i = (i + 1) & (size - 1))
				;
			seen[i] = old[k];
		}
		free(old);
		w->seen = seen;
		w->seen_size = size;
	}
	for (i = (size_t)(key * 0x9e3779b97f4a7c15ULL) & (w->seen_size - 1); w->seen[i];
	     i = (i + 1) & (w->seen_size - 1))
		if (w->seen[i] == key)
			return -EEXIST;
	w->seen[i] = key;
	w->n_seen++;
	return 0;
}

static int set_path(struct walk *w, size_t at, const char *name, size_t len)
{
	if (at + 1 + len + 1 > w->path_cap) {
		size_t cap = (at + len + 2) * 2;
		char *p = realloc(w->path, cap);

		if (!p)
			return -ENOMEM;
		w->path = p;
		w->path_cap = cap;
	}
	w->path[at] = '/';
	memcpy(w->path + at + 1, name, len);
	w->path[at + 1 + len] = '\0';
	return 0;
}

static int push_dir(struct walk *w, struct cfs_image *img, const struct cfs_inode *dir,
		    size_t path_len)
{
	int ret;

	ret = mark_dir(w, dir->ino);
	if (ret == -EEXIST) {
		cfs_msg("image: directory inode %llu is reached twice (at '%s')",
			(unsigned long long)dir->ino, path_len ? w->path : "/");
		return -EFSCORRUPTED;
	}
	if (ret < 0)
		return ret;
	if (w->depth >= MAX_DEPTH) {
		cfs_msg("image: directories nested deeper than %d at '%s'", MAX_DEPTH, w->path);
		return -EFSCORRUPTED;
	}
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct frame *s = realloc(w->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->stack = s;
		w->cap = cap;
	}
	ret = cfs_dir_iter_init(img, dir, &w->stack[w->depth].it);
	if (ret < 0)
		return ret;
	w->stack[w->depth].path_len = path_len;
	w->depth++;
	return 0;
}

static int add_file(struct cfs_objects *set, const struct cfs_inode *ino, const char *user)
{
	char path[CFS_MAX_PAYLOAD_PATH + 1];

	if (ino->payload_len > CFS_MAX_PAYLOAD_PATH ||
	    memchr(ino->payload, '\0', ino->payload_len)) {
		cfs_msg("image: backing path of '%s' is not a valid path", user);
		return -EFSCORRUPTED;
	}
	memcpy(path, ino->payload, ino->payload_len);
	path[ino->payload_len] = '\0';
	return cfs_objects_add(set, path, ino->has_digest ? ino->digest : NULL, ino->size,
			       set->n_images, user);
}

int cfs_objects_add_image(struct cfs_objects *set, struct cfs_image *img)
{
	struct walk w = { 0 };
	struct cfs_inode root, ino;
	struct cfs_dirent de;
	int ret;

	ret = cfs_image_inode(img, cfs_image_root(img), &root);
	if (ret < 0)
		return ret;
	if ((root.mode & S_IFMT) != S_IFDIR) {
		cfs_msg("image: the root inode is not a directory");
		return -EFSCORRUPTED;
	}
	ret = set_path(&w, 0, "", 0);
	if (ret < 0)
		goto out;
	ret = push_dir(&w, img, &root, 0);
	if (ret < 0)
		goto out;

	while (w.depth > 0) {
		struct frame *top = &w.stack[w.depth - 1];
		size_t len;

		ret = cfs_dir_iter_next(&top->it, &de);
		if (ret < 0)
			goto out;
		if (ret == 0) {
			w.depth--;
			continue;
		}
		if ((de.name_len == 1 && de.name[0] == '.') ||
		    (de.name_len == 2 && de.name[0] == '.' && de.name[1] == '.'))
			continue;
		len = top->path_len;
		ret = set_path(&w, len, de.name, de.name_len);
		if (ret < 0)
			goto out;
		ret = cfs_image_inode(img, de.ino, &ino);
		if (ret < 0)
			goto out;
		if ((ino.mode & S_IFMT) == S_IFDIR) {
			ret = push_dir(&w, img, &ino, len + 1 + de.name_len);
		} else if ((ino.mode & S_IFMT) == S_IFREG && ino.payload_len > 0) {
			ret = add_file(set, &ino, w.path);
		}
		if (ret < 0)
			goto out;
	}
	set->n_images++;
	ret = 0;
out:
	free(w.stack);
	free(w.path);
	free(w.seen);
	return ret;
}

/* ---- looking objects up ---- */

int cfs_objects_locate(struct cfs_objects *set, const char *const *basedirs,
		       size_t n_basedirs)
{
	int *fds = NULL, ret = 0, missing = 0;
	size_t b, opened = 0;

	if (n_basedirs) {
		fds = calloc(n_basedirs, sizeof(*fds));
		if (!fds)
			return -ENOMEM;
	}
	for (opened = 0; opened < n_basedirs; opened++) {
		fds[opened] = open(basedirs[opened], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fds[opened] < 0) {
			ret = -errno;
			cfs_msg("opening basedir '%s': %s", basedirs[opened], strerror(errno));
			goto out;
		}
	}
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
	ret = missing;
out:
	while (opened-- > 0)
		close(fds[opened]);
	free(fds);
	return ret;
}
