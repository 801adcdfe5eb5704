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
 * So that no path is kept per entry, the tree is walked twice: the first
 * walk marks the inodes named more than once, the second keeps the first
 * path of just those.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/internal.h"
#include "cfs-format.h"

struct frame {
	struct cfs_dir_iter it;
	size_t path_len; /* of the directory's path, "" for the root */
};

/*
 * A set of inode numbers as a bitmap over the image: both formats number
 * an inode below the image's size (v1 by offset, EROFS by offset / 32).
 * calloc() maps it lazily, so what a walk touches is what costs memory.
 */
struct inoset {
	uint64_t *w;
	uint64_t n;
};

static int inoset_init(struct inoset *s, const struct cfs_image *img)
{
	s->n = cfs_image_size(img) + 1;
	s->w = calloc((s->n + 63) / 64, sizeof(*s->w));
	return s->w ? 0 : -ENOMEM;
}

/* Add @ino; return whether it was there already. */
static bool inoset_add(struct inoset *s, uint64_t ino)
{
	uint64_t bit = 1ULL << (ino % 64), *w = &s->w[ino / 64];
	bool had = *w & bit;

	*w |= bit;
	return had;
}

static bool inoset_has(const struct inoset *s, uint64_t ino)
{
	return s->w[ino / 64] & (1ULL << (ino % 64));
}

/*
 * One walk of the tree. The first, with @shared set, only marks the
 * non-directory inodes that more than one entry names; the second calls
 * @fn for every path and keeps the first path of just those inodes, so
 * that memory does not grow with the number of entries. A corrupt inode
 * ends both at the same entry.
 */
struct walker {
	struct cfs_image *img;
	cfs_walk_fn fn;
	void *ctx;
	struct inoset dirs, seen, shared;
	bool counting;
	struct cfs_inomap links; /* of @shared's inodes: the first path */
	char *path;
	size_t path_cap;
};

static int set_path(struct walker *w, size_t at, const char *name, size_t name_len)
{
	size_t len = at + 1 + name_len;

	if (len + 1 > w->path_cap) {
		size_t cap = w->path_cap;
		char *p;

		while (len + 1 > cap)
			cap *= 2;
		p = realloc(w->path, cap);
		if (!p)
			return -ENOMEM;
		w->path = p;
		w->path_cap = cap;
	}
	w->path[at] = '/';
	memcpy(w->path + at + 1, name, name_len);
	w->path[len] = '\0';
	return 0;
}

/* A non-directory entry: its first path if met before, else remember it. */
static int link_entry(struct walker *w, const struct cfs_inode *in, struct cfs_walk_entry *e)
{
	void **first;
	char *copy;
	int ret;

	if (w->counting) {
		if (inoset_add(&w->seen, in->ino))
			inoset_add(&w->shared, in->ino);
		return 0;
	}
	if (!inoset_has(&w->shared, in->ino))
		return 0;
	first = cfs_inomap_find(&w->links, in->ino);
	if (first) {
		e->first_path = *first;
		return 0;
	}
	copy = strdup(w->path);
	if (!copy)
		return -ENOMEM;
	ret = cfs_inomap_add(&w->links, in->ino, copy);
	if (ret < 0)
		free(copy);
	return ret;
}

static int walk(struct walker *w)
{
	struct frame *stack = NULL;
	size_t depth = 0, stack_cap = 16, len;
	struct cfs_walk_entry e;
	struct cfs_inode in;
	struct cfs_dirent d;
	int ret;

	free(w->dirs.w);
	if (inoset_init(&w->dirs, w->img))
		return -ENOMEM;
	ret = cfs_image_inode(w->img, cfs_image_root(w->img), &in);
	if (ret < 0)
		return ret;
	if ((in.mode & S_IFMT) != S_IFDIR || in.ino >= w->dirs.n) {
		cfs_msg("root inode %llu at offset %llu is not a directory (mode 0%o)",
			(unsigned long long)in.ino,
			(unsigned long long)(in.ino + CFS_INODE_SECTION_OFFSET), in.mode);
		return -EFSCORRUPTED;
	}
	inoset_add(&w->dirs, in.ino);
	strcpy(w->path, "/");
	e = (struct cfs_walk_entry){ .path = w->path, .path_len = 1, .inode = &in };
	ret = w->counting ? 0 : w->fn(w->ctx, &e);
	if (ret)
		return ret;
	stack = malloc(stack_cap * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	ret = cfs_dir_iter_init(w->img, &in, &stack[0].it);
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
		if (!w->counting) {
			ret = set_path(w, f->path_len, d.name, d.name_len);
			if (ret < 0)
				goto out;
		}
		ret = cfs_image_inode(w->img, d.ino, &in);
		if (ret < 0)
			goto out;
		if (in.ino >= w->dirs.n) {
			cfs_msg("inode %llu lies beyond the image", (unsigned long long)in.ino);
			ret = -EFSCORRUPTED;
			goto out;
		}
		e = (struct cfs_walk_entry){ .path = w->path, .path_len = len, .inode = &in,
					     .depth = (unsigned int)depth, .d_type = d.d_type };
		if ((in.mode & S_IFMT) != S_IFDIR) {
			ret = link_entry(w, &in, &e);
			if (ret == 0 && !w->counting)
				ret = w->fn(w->ctx, &e);
			if (ret)
				goto out;
			continue;
		}
		if (inoset_add(&w->dirs, in.ino)) {
			cfs_msg("directory inode %llu at offset %llu is reached a second time, at '%s' (a cycle or a directory hardlink)",
				(unsigned long long)in.ino,
				(unsigned long long)(in.ino + CFS_INODE_SECTION_OFFSET), w->path);
			ret = -EFSCORRUPTED;
			goto out;
		}
		if (depth >= CFS_MAX_DEPTH) {
			cfs_msg("'%s': directories nested deeper than %d levels", w->path,
				CFS_MAX_DEPTH);
			ret = -ELOOP;
			goto out;
		}
		ret = w->counting ? 0 : w->fn(w->ctx, &e);
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
		ret = cfs_dir_iter_init(w->img, &in, &stack[depth].it);
		if (ret < 0)
			goto out;
		stack[depth].path_len = len;
		depth++;
	}
	ret = 0;
out:
	free(stack);
	return ret;
}

int cfs_image_walk(struct cfs_image *img, cfs_walk_fn fn, void *ctx)
{
	struct walker w = { .img = img, .fn = fn, .ctx = ctx, .path_cap = 256 };
	char msg[CFS_MSG_MAX + 1];
	int ret;

	w.path = malloc(w.path_cap);
	if (!w.path || inoset_init(&w.seen, img) || inoset_init(&w.shared, img)) {
		ret = -ENOMEM;
		goto out;
	}
	/* the second walk says what is wrong, where the first stopped too */
	w.counting = true;
	cfs_msg_capture(msg, sizeof(msg));
	walk(&w);
	cfs_msg_capture(NULL, 0);
	free(w.seen.w);
	w.seen.w = NULL;
	w.counting = false;
	ret = walk(&w);
out:
	free(w.path);
	free(w.dirs.w);
	free(w.seen.w);
	free(w.shared.w);
	cfs_inomap_free(&w.links, free);
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
