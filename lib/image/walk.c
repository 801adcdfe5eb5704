// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The whole-image walk behind dumps and summaries: depth first, parents
 * before children, with an explicit stack rather than recursion. Images are
 * untrusted, so the walk remembers every directory it entered and refuses
 * to enter one twice; that stops cycles, and it also keeps a directory that
 * several entries name from multiplying the work. Hardlinks are entries
 * that name a non-directory inode already seen: they are recognised by the
 * inode number, never by nlink, which an image may set to 1 on an inode that
 * several entries share (composefs-info reads such an image the same way).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/internal.h"
#include "cfs-format.h"

struct frame {
	struct cfs_dir_iter it;
	size_t path_len; /* of the directory's path, "" for the root */
};

int cfs_image_walk(struct cfs_image *img, cfs_walk_fn fn, void *ctx)
{
	struct cfs_inomap dirs = { 0 }, links = { 0 };
	struct frame *stack = NULL;
	size_t depth = 0, stack_cap = 0, path_cap = 256, len;
	struct cfs_walk_entry e;
	struct cfs_inode in;
	struct cfs_dirent d;
	char *path, *p;
	void **first;
	int ret;

	path = malloc(path_cap);
	if (!path)
		return -ENOMEM;
	ret = cfs_image_inode(img, cfs_image_root(img), &in);
	if (ret < 0)
		goto out;
	if ((in.mode & S_IFMT) != S_IFDIR) {
		cfs_msg("root inode %llu at offset %llu is not a directory (mode 0%o)",
			(unsigned long long)in.ino,
			(unsigned long long)(in.ino + CFS_INODE_SECTION_OFFSET), in.mode);
		ret = -EFSCORRUPTED;
		goto out;
	}
	ret = cfs_inomap_add(&dirs, in.ino, NULL);
	if (ret < 0)
		goto out;
	strcpy(path, "/");
	e = (struct cfs_walk_entry){ .path = path, .path_len = 1, .inode = &in };
	ret = fn(ctx, &e);
	if (ret)
		goto out;
	stack_cap = 16;
	stack = malloc(stack_cap * sizeof(*stack));
	if (!stack) {
		ret = -ENOMEM;
		goto out;
	}
	ret = cfs_dir_iter_init(img, &in, &stack[0].it);
	if (ret < 0)
		goto out;
	stack[0].path_len = 0;
	depth = 1;

	while (depth > 0) {
		struct frame *f = &stack[depth - 1];

		ret = cfs_dir_iter_next(&f->it, &d);
		if (ret < 0)
			goto out;
		if (ret == 0) {
			depth--;
			continue;
		}
		len = f->path_len + 1 + d.name_len;
		if (len + 1 > path_cap) {
			while (len + 1 > path_cap)
				path_cap *= 2;
			p = realloc(path, path_cap);
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			path = p;
		}
		path[f->path_len] = '/';
		memcpy(path + f->path_len + 1, d.name, d.name_len);
		path[len] = '\0';

		ret = cfs_image_inode(img, d.ino, &in);
		if (ret < 0)
			goto out;
		e = (struct cfs_walk_entry){ .path = path, .path_len = len, .inode = &in,
					     .depth = (unsigned int)depth, .d_type = d.d_type };
		if ((in.mode & S_IFMT) == S_IFDIR) {
			if (cfs_inomap_find(&dirs, in.ino)) {
				cfs_msg("directory inode %llu at offset %llu is reached a second time, at '%s' (a cycle or a directory hardlink)",
					(unsigned long long)in.ino,
					(unsigned long long)(in.ino + CFS_INODE_SECTION_OFFSET), path);
				ret = -EFSCORRUPTED;
				goto out;
			}
			if (depth >= CFS_MAX_DEPTH) {
				cfs_msg("'%s': directories nested deeper than %d levels", path,
					CFS_MAX_DEPTH);
				ret = -ELOOP;
				goto out;
			}
			ret = cfs_inomap_add(&dirs, in.ino, NULL);
			if (ret < 0)
				goto out;
			ret = fn(ctx, &e);
			if (ret)
				goto out;
			if (depth == stack_cap) {
				struct frame *s = realloc(stack, 2 * stack_cap * sizeof(*stack));

				if (!s) {
					ret = -ENOMEM;
					goto out;
				}
				stack = s;
				stack_cap *= 2;
			}
			ret = cfs_dir_iter_init(img, &in, &stack[depth].it);
			if (ret < 0)
				goto out;
			stack[depth].path_len = len;
			depth++;
			continue;
		}
		first = cfs_inomap_find(&links, in.ino);
		if (first) {
			e.first_path = *first;
		} else {
			char *copy = strdup(path);

			if (!copy) {
				ret = -ENOMEM;
				goto out;
			}
			ret = cfs_inomap_add(&links, in.ino, copy);
			if (ret < 0) {
				free(copy);
				goto out;
			}
		}
		ret = fn(ctx, &e);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	free(stack);
	free(path);
	cfs_inomap_free(&dirs, NULL);
	cfs_inomap_free(&links, free);
	return ret;
}

/* ---- the objects an image uses (cfs/store.h) ---- */

struct add_ctx {
	struct cfs_objects *set;
	int ret;
};

static int add_entry(void *arg, const struct cfs_walk_entry *e)
{
	struct add_ctx *c = arg;
	const struct cfs_inode *ino = e->inode;
	char path[CFS_MAX_PAYLOAD_PATH + 1];

	/* empty files have no backing file; nor does anything but a file */
	if ((ino->mode & S_IFMT) != S_IFREG || ino->payload_len == 0)
		return 0;
	if (ino->payload_len > CFS_MAX_PAYLOAD_PATH ||
	    memchr(ino->payload, '\0', ino->payload_len)) {
		cfs_msg("image: backing path of '%s' is not a valid path", e->path);
		c->ret = -EFSCORRUPTED;
		return 1;
	}
	memcpy(path, ino->payload, ino->payload_len);
	path[ino->payload_len] = '\0';
	c->ret = cfs_objects_add(c->set, path, ino->has_digest ? ino->digest : NULL, ino->size,
				 c->set->n_images, e->path);
	return c->ret < 0 ? 1 : 0;
}

int cfs_objects_add_image(struct cfs_objects *set, struct cfs_image *img)
{
	struct add_ctx c = { .set = set };
	int ret;

	/* every path, hardlinks included: each is a user of the object */
	ret = cfs_image_walk(img, add_entry, &c);
	if (ret == 1)
		return c.ret;
	if (ret < 0)
		return ret;
	set->n_images++;
	return 0;
}
