// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The directory walk of cfsctl verify, one for every format: depth first
 * from the root with an explicit stack, each inode decoded once however
 * many entries name it, and the checks that do not depend on the format
 * made here alike for all: entry names, their order, hardlinks and cycles,
 * d_type against the inode, link counts, nesting depth. A format supplies
 * the decoding of an inode and the reading of a directory's entries
 * (struct cfs_vwalk_ops); format/v1/verify.c does it for v1,
 * format/erofs/verify.c for composefs 1.0. Here too is the rest of what
 * the formats' checks share: the problem reports, the map of reachable
 * inodes, link counts and d_type of entries met again, and the objects
 * they name, remembered for verify.c to look up and hash. It calls no
 * format, so the formats sit above it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verify-walk.h"
#include "cfs-format.h"

/* The values of @m->ids are indexes into @m->info, which moves as it grows. */
struct cfs_vino *cfs_vmap_find(struct cfs_vino_map *m, uint64_t ino)
{
	void **slot = cfs_inomap_find(&m->ids, ino);

	return slot ? &m->info[(uintptr_t)*slot] : NULL;
}

struct cfs_vino *cfs_vmap_add(struct cfs_vino_map *m, uint64_t ino)
{
	struct cfs_vino *info = cfs_grow(m->info, &m->info_cap, m->n, sizeof(*info), 1024);

	if (!info)
		return NULL;
	m->info = info;
	if (cfs_inomap_add(&m->ids, ino, (void *)(uintptr_t)m->n) < 0)
		return NULL;
	memset(&m->info[m->n], 0, sizeof(m->info[m->n]));
	m->info[m->n].ino = ino;
	return &m->info[m->n++];
}

void cfs_vmap_free(struct cfs_vino_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->info[i].first_path);
	cfs_inomap_free(&m->ids, NULL);
	free(m->info);
}

void cfs_vdeliver(struct cfs_verifier *v, struct cfs_verify_problem *p, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	p->message = msg;
	if (p->severity == CFS_VERIFY_ERROR)
		v->res->errors++;
	else
		v->res->warnings++;
	if (v->fn)
		v->fn(v->fn_ctx, p);
}

void cfs_vreport(struct cfs_verifier *v, enum cfs_verify_severity sev, const char *kind,
		   const char *path, uint64_t offset, const char *fmt, ...)
{
	struct cfs_verify_problem p = { .severity = sev, .kind = kind, .path = path,
					.offset = offset };
	va_list ap;

	va_start(ap, fmt);
	cfs_vdeliver(v, &p, fmt, ap);
	va_end(ap);
}

/* ---- directories ---- */

int cfs_verify_met_again(struct cfs_verifier *v, struct cfs_vino *info, uint64_t ino,
			 uint64_t offset, unsigned int d_type, unsigned int want,
			 uint32_t want_mode, uint64_t at)
{
	int ret;

	info->names++;
	if (info->mode == 0)
		return 0; /* reported when first met */
	if (S_ISDIR(info->mode)) {
		if (info->on_stack)
			CFS_VERR(v, "cycle", at,
			    "names directory inode %llu, which contains this entry ('%s'): a cycle",
			    cfs_ull(ino), info->first_path ? info->first_path : "/");
		else
			CFS_VERR(v, "dir-hardlink", at,
			    "names directory inode %llu, already reached at '%s': a directory hardlink",
			    cfs_ull(ino), info->first_path ? info->first_path : "/");
		return 1;
	}
	if (d_type != want)
		CFS_VERR(v, "d_type", at, "entry type %u does not match the %s it names", d_type,
		    cfs_type_word(want_mode));
	if (S_ISREG(info->mode)) {
		/* a hardlink: one more user of the object */
		struct cfs_inode h = { .mode = info->mode, .ino = ino, .offset = offset,
				       .payload = info->payload,
				       .payload_len = info->payload_len,
				       .has_digest = info->has_digest, .size = info->size };

		memcpy(h.digest, info->digest, CFS_DIGEST_SIZE);
		ret = cfs_verify_add_object(v, &h, v->path);
		return ret < 0 ? ret : 0;
	}
	return 0;
}

struct cfs_vino *cfs_verify_met_first(struct cfs_verifier *v, uint64_t ino)
{
	struct cfs_vino *info = cfs_vmap_add(&v->map, ino);

	if (!info)
		return NULL;
	info->names = 1;
	info->first_path = strdup(v->path);
	return info->first_path ? info : NULL;
}

void cfs_verify_met_inode(struct cfs_vino *info, const struct cfs_inode *in)
{
	info->mode = in->mode;
	info->nlink = in->nlink;
	info->payload = in->payload;
	info->payload_len = in->payload_len;
	info->has_digest = in->has_digest;
	memcpy(info->digest, in->digest, CFS_DIGEST_SIZE);
	info->size = in->size;
}

int cfs_verify_add_object(struct cfs_verifier *v, const struct cfs_inode *in, const char *path)
{
	char bpath[CFS_MAX_PAYLOAD_PATH + 1];
	int ret;

	if (!v->o || !v->o->basedirs || !v->o->basedirs->n || !S_ISREG(in->mode) || !in->payload ||
	    !in->payload_len || memchr(in->payload, '\0', in->payload_len))
		return 0;
	memcpy(bpath, in->payload, in->payload_len);
	bpath[in->payload_len] = '\0';
	ret = cfs_objects_add(&v->objs, bpath, in->has_digest ? in->digest : NULL, in->size, 0,
			      path);
	if (ret == -EINVAL) {
		cfs_vreport(v, CFS_VERIFY_ERROR, "object-conflict", path, in->offset,
		       "backing file '%s' is recorded elsewhere in the image with another size or digest",
		       bpath);
		ret = 0;
	}
	return ret;
}

/* ---- the walk ---- */

/* One directory on the walk's stack; its format's position is beside it. */
struct vframe {
	struct cfs_inode dir;
	uint64_t parent; /* the inode ".." must name */
	const uint8_t *prev; /* the previous name, for the order */
	size_t prev_len;
	size_t path_len;
	uint32_t subdirs;
};

struct vstack {
	struct vframe *f;
	uint8_t *pos; /* fmt->pos_size bytes a frame */
	size_t depth, cap;
};

static bool is_dot(const uint8_t *name, size_t len)
{
	return (len == 1 || len == 2) && name[0] == '.' && (len == 1 || name[1] == '.');
}

static void *pos_of(const struct cfs_vwalk_ops *fmt, struct vstack *s, size_t i)
{
	return s->pos + i * fmt->pos_size;
}

static int push(const struct cfs_vwalk_ops *fmt, void *ctx, struct vstack *s,
		const struct cfs_inode *dir, uint64_t parent, size_t path_len)
{
	struct vframe *f;

	if (s->depth == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint8_t *pos;

		f = realloc(s->f, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		s->f = f;
		pos = realloc(s->pos, cap * fmt->pos_size);
		if (!pos)
			return -ENOMEM;
		s->pos = pos;
		s->cap = cap;
	}
	f = &s->f[s->depth];
	memset(f, 0, sizeof(*f));
	f->dir = *dir;
	f->parent = parent;
	f->path_len = path_len;
	memset(pos_of(fmt, s, s->depth), 0, fmt->pos_size);
	if (fmt->open_dir)
		fmt->open_dir(ctx, pos_of(fmt, s, s->depth), dir);
	s->depth++;
	return 0;
}

/* Check @e's name and its order after the one before it in @f. */
static void check_name(struct cfs_verifier *v, const struct cfs_vwalk_ops *fmt, struct vframe *f,
		       const struct cfs_vdirent *e)
{
	int cmp;

	if (e->len == 0 || e->len > CFS_MAX_NAME_LEN || memchr(e->name, '/', e->len) ||
	    memchr(e->name, '\0', e->len) || (!fmt->dots && is_dot(e->name, e->len)))
		CFS_VERR(v, "entry-name", e->at, "%s", fmt->bad_name);
	/*
	 * Against the one before: one misplaced name is one problem, and a
	 * second entry of a name is next to the first in a sorted directory.
	 */
	if (f->prev) {
		cmp = cfs_name_cmp(f->prev, f->prev_len, e->name, e->len);
		if (cmp == 0)
			CFS_VERR(v, "duplicate", e->at, "a second entry of this name in the directory");
		else if (cmp > 0)
			CFS_VERR(v, "unsorted", e->at,
			    "entry sorts before the one stored ahead of it (the directory is not sorted; lookups will miss entries)");
	}
	f->prev = e->name;
	f->prev_len = e->len;
}

int cfs_verify_walk(struct cfs_verifier *v, const struct cfs_vwalk_ops *fmt, void *ctx)
{
	struct vstack s = { 0 };
	struct cfs_vino *info;
	struct cfs_inode in;
	uint64_t root, at;
	uint32_t type;
	int ret;

	v->path_cap = 256;
	v->path = malloc(v->path_cap);
	if (!v->path)
		return -ENOMEM;
	strcpy(v->path, "/");
	v->cur_path = v->path;
	root = fmt->root(ctx, &at);
	info = cfs_vmap_add(&v->map, root);
	if (!info)
		return -ENOMEM;
	ret = fmt->decode(ctx, root, at, &in, &type);
	if (ret <= 0)
		goto out;
	info->mode = in.mode;
	info->nlink = in.nlink;
	info->names = 1;
	v->res->inodes++;
	if (!S_ISDIR(in.mode)) {
		CFS_VERR(v, "root", fmt->offset_of(ctx, in.ino), "the root inode is a %s, not a directory",
		    cfs_type_word(in.mode));
		ret = 0;
		goto out;
	}
	v->res->directories++;
	info->on_stack = true;
	ret = push(fmt, ctx, &s, &in, in.ino, 0);
	if (ret < 0)
		goto out;

	while (s.depth > 0) {
		struct vframe *f = &s.f[s.depth - 1];
		void *pos = pos_of(fmt, &s, s.depth - 1);
		struct cfs_vdirent e;

		v->path[f->path_len ? f->path_len : 1] = '\0';
		v->cur_path = v->path;
		ret = fmt->next(ctx, pos, &f->dir, &e);
		if (ret == 0) {
			/* the directory is done: its link count */
			info = cfs_vmap_find(&v->map, f->dir.ino);
			info->on_stack = false;
			if (fmt->close_dir)
				fmt->close_dir(ctx, pos, &f->dir);
			if (f->dir.nlink != 2 + f->subdirs)
				CFS_VWARN(v, "nlink", fmt->offset_of(ctx, f->dir.ino),
				     "directory with %u subdirectories records nlink %u, not %u",
				     f->subdirs, f->dir.nlink, 2 + f->subdirs);
			s.depth--;
			continue;
		}
		ret = cfs_path_set(&v->path, &v->path_cap, f->path_len, e.name, e.len);
		if (ret < 0)
			goto out;
		v->cur_path = v->path;
		check_name(v, fmt, f, &e);
		if (fmt->dots && is_dot(e.name, e.len)) {
			v->path[f->path_len ? f->path_len : 1] = '\0';
			fmt->dot(ctx, pos, &f->dir, f->parent, &e);
			continue;
		}
		v->res->entries++;

		info = cfs_vmap_find(&v->map, e.ino);
		if (info) {
			ret = cfs_verify_met_again(v, info, e.ino, fmt->offset_of(ctx, e.ino), e.d_type,
						   fmt->d_type(info->ftype), info->ftype, e.at);
			if (ret < 0)
				goto out;
			f->subdirs += ret;
			continue;
		}
		info = cfs_verify_met_first(v, e.ino);
		if (!info) {
			ret = -ENOMEM;
			goto out;
		}
		ret = fmt->decode(ctx, e.ino, e.at, &in, &type);
		if (ret < 0)
			goto out;
		if (ret == 0)
			continue;
		info = cfs_vmap_find(&v->map, e.ino); /* decoding may not move it, but be plain */
		cfs_verify_met_inode(info, &in);
		info->ftype = type;
		v->res->inodes++;
		if (e.d_type != fmt->d_type(type))
			CFS_VERR(v, "d_type", e.at, "entry type %u does not match the %s it names", e.d_type,
			    cfs_type_word(type));
		ret = cfs_verify_add_object(v, &in, v->path);
		if (ret < 0)
			goto out;
		if (S_ISDIR(in.mode)) {
			f->subdirs++;
			v->res->directories++;
			if (s.depth >= CFS_MAX_DEPTH) {
				CFS_VERR(v, "depth", e.at, "directories nested deeper than %d levels",
				    CFS_MAX_DEPTH);
				continue;
			}
			info->on_stack = true;
			ret = push(fmt, ctx, &s, &in, f->dir.ino, strlen(v->path));
			if (ret < 0)
				goto out;
		}
	}

	/* link counts of everything else */
	for (size_t i = 0; i < v->map.n; i++) {
		struct cfs_vino *x = &v->map.info[i];

		if (x->mode == 0 || S_ISDIR(x->mode) || x->nlink == x->names)
			continue;
		cfs_vreport(v, CFS_VERIFY_WARNING, "nlink", x->first_path, fmt->offset_of(ctx, x->ino),
			    "%s with %u names records nlink %u", cfs_type_word(x->mode), x->names,
			    x->nlink);
	}
	ret = 0;
out:
	free(s.f);
	free(s.pos);
	return ret;
}
