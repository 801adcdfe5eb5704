// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Comparing two images path by path, for cfsctl diff. Both trees are walked
 * at once, depth first, and each pair of directories is merged entry by
 * entry in the order the format stores them (sorted by name), so nothing is
 * loaded whole: memory holds the two directory stacks, the first path of
 * each hardlinked inode, and one key per backing object for the closing
 * counts of objects in both, only in OLD, only in NEW.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/internal.h"
#include "cfs-format.h"
#include "cfs/diff.h"

/* ---- object keys ---- */

struct okey {
	bool has_digest;
	uint8_t digest[CFS_DIGEST_SIZE];
	char *path; /* backing path, when there is no digest */
	uint64_t size;
};

struct okeys {
	struct okey *k;
	size_t n, cap;
};

static int okey_cmp(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	if (x->has_digest != y->has_digest)
		return x->has_digest ? -1 : 1;
	if (x->has_digest)
		return memcmp(x->digest, y->digest, CFS_DIGEST_SIZE);
	return strcmp(x->path, y->path);
}

/* ---- one side of the walk ---- */

struct side {
	struct cfs_image *img;
	struct cfs_inomap links; /* non-directories with nlink > 1: first path */
	struct cfs_inomap dirs; /* directories entered */
	struct okeys objs;
};

struct frame {
	struct cfs_dir_iter it[2];
	bool has[2]; /* the directory exists on this side */
	int state[2]; /* 0: fetch the next entry, 1: cur holds one, 2: at the end */
	struct cfs_dirent cur[2];
	size_t path_len;
};

struct differ {
	struct side s[2];
	cfs_diff_fn fn;
	void *ctx;
	struct cfs_diff_stats *st;
	char *path;
	size_t path_cap;
	struct frame *stack;
	size_t depth, cap;
};

static int add_object(struct side *s, const struct cfs_inode *in)
{
	struct okey *k;

	if (!S_ISREG(in->mode) || in->payload_len == 0)
		return 0;
	k = cfs_grow(s->objs.k, &s->objs.cap, s->objs.n, sizeof(*k), 1024);
	if (!k)
		return -ENOMEM;
	s->objs.k = k;
	k = &s->objs.k[s->objs.n];
	memset(k, 0, sizeof(*k));
	k->size = in->size;
	if (in->has_digest) {
		k->has_digest = true;
		memcpy(k->digest, in->digest, CFS_DIGEST_SIZE);
	} else {
		k->path = strndup(in->payload, in->payload_len);
		if (!k->path)
			return -ENOMEM;
	}
	s->objs.n++;
	return 0;
}

/*
 * Note inode @in met at the current path on side @s: its first path when
 * hardlinked (*@link, NULL otherwise), its object, and for a directory that
 * it is entered only once.
 */
static int visit(struct differ *d, int side, const struct cfs_inode *in, const char **link)
{
	struct side *s = &d->s[side];
	void **v;
	char *copy;
	int ret;

	*link = NULL;
	if (S_ISDIR(in->mode)) {
		if (cfs_inomap_find(&s->dirs, in->ino)) {
			cfs_msg("directory inode %llu is reached a second time, at '%s' (a cycle or a directory hardlink)",
				(unsigned long long)in->ino, d->path);
			return -EFSCORRUPTED;
		}
		return cfs_inomap_add(&s->dirs, in->ino, NULL);
	}
	if (in->nlink <= 1)
		return add_object(s, in);
	v = cfs_inomap_find(&s->links, in->ino);
	if (v) {
		*link = *v;
		return 0;
	}
	copy = strdup(d->path);
	if (!copy)
		return -ENOMEM;
	ret = cfs_inomap_add(&s->links, in->ino, copy);
	if (ret < 0) {
		free(copy);
		return ret;
	}
	*link = copy;
	return add_object(s, in);
}

/* ---- comparing two inodes ---- */

struct xlist {
	struct cfs_xattr *x;
	size_t n, cap;
};

static int collect_xattr(void *ctx, const struct cfs_xattr *x)
{
	struct xlist *l = ctx;
	struct cfs_xattr *p = cfs_grow(l->x, &l->cap, l->n, sizeof(*p), 16);

	if (!p)
		return -ENOMEM;
	l->x = p;
	l->x[l->n++] = *x;
	return 0;
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct cfs_xattr *x = a, *y = b;

	return cfs_name_cmp(x->key, x->key_len, y->key, y->key_len);
}

/* The keys that differ between the xattrs of @a and @b, sorted. */
static int diff_xattrs(struct differ *d, const struct cfs_inode *a, const struct cfs_inode *b,
		       struct cfs_diff_xattr **out, size_t *n_out)
{
	struct xlist la = { 0 }, lb = { 0 };
	struct cfs_diff_xattr *res = NULL;
	size_t i = 0, j = 0, n = 0;
	int ret;

	*out = NULL;
	*n_out = 0;
	if (a->xattrs_len == 0 && b->xattrs_len == 0)
		return 0;
	ret = cfs_image_xattrs(d->s[0].img, a, collect_xattr, &la);
	if (ret == 0)
		ret = cfs_image_xattrs(d->s[1].img, b, collect_xattr, &lb);
	if (ret != 0)
		goto out;
	if (la.n)
		qsort(la.x, la.n, sizeof(*la.x), xattr_cmp);
	if (lb.n)
		qsort(lb.x, lb.n, sizeof(*lb.x), xattr_cmp);
	res = calloc(la.n + lb.n + 1, sizeof(*res));
	if (!res) {
		ret = -ENOMEM;
		goto out;
	}
	while (i < la.n || j < lb.n) {
		int c = i == la.n ? 1 : j == lb.n ? -1 :
			xattr_cmp(&la.x[i], &lb.x[j]);

		if (c < 0) {
			res[n++] = (struct cfs_diff_xattr){ la.x[i].key, la.x[i].key_len, '-' };
			i++;
		} else if (c > 0) {
			res[n++] = (struct cfs_diff_xattr){ lb.x[j].key, lb.x[j].key_len, '+' };
			j++;
		} else {
			if (la.x[i].value_len != lb.x[j].value_len ||
			    memcmp(la.x[i].value, lb.x[j].value, la.x[i].value_len) != 0)
				res[n++] = (struct cfs_diff_xattr){ la.x[i].key, la.x[i].key_len, '~' };
			i++;
			j++;
		}
	}
	*out = res;
	*n_out = n;
	res = NULL;
out:
	free(res);
	free(la.x);
	free(lb.x);
	return ret < 0 ? ret : 0;
}

/* Payloads equal? (NULL when empty, which memcmp() must not see) */
static bool same_payload(const struct cfs_inode *a, const struct cfs_inode *b)
{
	return a->payload_len == b->payload_len &&
	       (a->payload_len == 0 || memcmp(a->payload, b->payload, a->payload_len) == 0);
}

static bool same_link(const char *a, uint32_t na, const char *b, uint32_t nb)
{
	if (!a || !b)
		return !a && !b;
	return na == nb && strcmp(a, b) == 0;
}

static int compare(struct differ *d, const struct cfs_inode *a, const struct cfs_inode *b,
		   const char *la, const char *lb)
{
	struct cfs_diff_entry e = { .change = 'M', .path = d->path, .old = a, .new = b };
	struct cfs_diff_xattr *xs = NULL;
	size_t nx = 0;
	int ret;

	if ((a->mode & S_IFMT) != (b->mode & S_IFMT)) {
		e.changes = CFS_DIFF_TYPE;
		goto report;
	}
	if ((a->mode & 07777) != (b->mode & 07777))
		e.changes |= CFS_DIFF_MODE;
	if (a->uid != b->uid || a->gid != b->gid)
		e.changes |= CFS_DIFF_OWNER;
	if (a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec)
		e.changes |= CFS_DIFF_MTIME;
	if (S_ISREG(a->mode)) {
		if (a->size != b->size || a->has_digest != b->has_digest ||
		    (a->has_digest && memcmp(a->digest, b->digest, CFS_DIGEST_SIZE) != 0) ||
		    (!a->has_digest && !same_payload(a, b)))
			e.changes |= CFS_DIFF_CONTENT;
	}
	if (S_ISLNK(a->mode) && !same_payload(a, b))
		e.changes |= CFS_DIFF_TARGET;
	if ((S_ISCHR(a->mode) || S_ISBLK(a->mode)) && a->rdev != b->rdev)
		e.changes |= CFS_DIFF_RDEV;
	if (!S_ISDIR(a->mode) && !same_link(la, a->nlink, lb, b->nlink)) {
		e.changes |= CFS_DIFF_HARDLINK;
		e.old_link = la;
		e.new_link = lb;
	}
	ret = diff_xattrs(d, a, b, &xs, &nx);
	if (ret < 0)
		return ret;
	if (nx) {
		e.changes |= CFS_DIFF_XATTRS;
		e.xattrs = xs;
		e.n_xattrs = nx;
	}
report:
	ret = 0;
	if (e.changes) {
		d->st->modified++;
		ret = d->fn ? d->fn(d->ctx, &e) : 0;
	}
	free(xs);
	return ret;
}

/* ---- the merged walk ---- */

static int push(struct differ *d, const struct cfs_inode *a, const struct cfs_inode *b,
		size_t path_len)
{
	const struct cfs_inode *in[2] = { a, b };
	struct frame *f;
	int ret;

	if (d->depth >= CFS_MAX_DEPTH) {
		cfs_msg("'%s': directories nested deeper than %d levels", d->path, CFS_MAX_DEPTH);
		return -ELOOP;
	}
	f = cfs_grow(d->stack, &d->cap, d->depth, sizeof(*f), 64);
	if (!f)
		return -ENOMEM;
	d->stack = f;
	f = &d->stack[d->depth];
	memset(f, 0, sizeof(*f));
	f->path_len = path_len;
	for (int s = 0; s < 2; s++) {
		if (!in[s] || !S_ISDIR(in[s]->mode)) {
			f->state[s] = 2;
			continue;
		}
		ret = cfs_dir_iter_init(d->s[s].img, in[s], &f->it[s]);
		if (ret < 0)
			return ret;
		f->has[s] = true;
	}
	d->depth++;
	return 0;
}

/* A path on one side only: '+' or '-'. */
static int one_side(struct differ *d, int s, const struct cfs_inode *in, const char *link)
{
	struct cfs_diff_entry e = { .change = s ? '+' : '-', .path = d->path };

	if (s) {
		e.new = in;
		e.new_link = link;
		d->st->added++;
	} else {
		e.old = in;
		e.old_link = link;
		d->st->removed++;
	}
	return d->fn ? d->fn(d->ctx, &e) : 0;
}

static int walk(struct differ *d)
{
	struct cfs_inode in[2];
	const char *link[2];
	int ret;

	for (int s = 0; s < 2; s++) {
		ret = cfs_image_inode(d->s[s].img, cfs_image_root(d->s[s].img), &in[s]);
		if (ret < 0)
			return ret;
		if (!S_ISDIR(in[s].mode)) {
			cfs_msg("the root inode is not a directory (mode 0%o)", in[s].mode);
			return -EFSCORRUPTED;
		}
		ret = visit(d, s, &in[s], &link[s]);
		if (ret < 0)
			return ret;
	}
	ret = compare(d, &in[0], &in[1], NULL, NULL);
	if (ret)
		return ret;
	ret = push(d, &in[0], &in[1], 0);
	if (ret < 0)
		return ret;

	while (d->depth > 0) {
		struct frame *f = &d->stack[d->depth - 1];
		bool take[2] = { false, false };
		const struct cfs_dirent *de;
		bool have_dir;

		for (int s = 0; s < 2; s++) {
			if (f->state[s] != 0)
				continue;
			ret = cfs_dir_iter_next(&f->it[s], &f->cur[s]);
			if (ret < 0)
				return ret;
			f->state[s] = ret == 1 ? 1 : 2;
		}
		if (f->state[0] == 2 && f->state[1] == 2) {
			d->depth--;
			continue;
		}
		if (f->state[0] == 2) {
			take[1] = true;
		} else if (f->state[1] == 2) {
			take[0] = true;
		} else {
			int c = cfs_name_cmp(f->cur[0].name, f->cur[0].name_len, f->cur[1].name,
					 f->cur[1].name_len);

			take[0] = c <= 0;
			take[1] = c >= 0;
		}
		de = take[0] ? &f->cur[0] : &f->cur[1];
		ret = cfs_path_set(&d->path, &d->path_cap, f->path_len, de->name, de->name_len);
		if (ret < 0)
			return ret;
		for (int s = 0; s < 2; s++) {
			if (!take[s])
				continue;
			f->state[s] = 0;
			ret = cfs_image_inode(d->s[s].img, f->cur[s].ino, &in[s]);
			if (ret < 0)
				return ret;
			ret = visit(d, s, &in[s], &link[s]);
			if (ret < 0)
				return ret;
		}
		if (take[0] && take[1])
			ret = compare(d, &in[0], &in[1], link[0], link[1]);
		else
			ret = one_side(d, take[1], take[1] ? &in[1] : &in[0],
				       take[1] ? link[1] : link[0]);
		if (ret)
			return ret;
		have_dir = (take[0] && S_ISDIR(in[0].mode)) || (take[1] && S_ISDIR(in[1].mode));
		if (have_dir) {
			ret = push(d, take[0] ? &in[0] : NULL, take[1] ? &in[1] : NULL,
				   strlen(d->path));
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Sort and deduplicate @o's keys. */
static void okeys_unique(struct okeys *o)
{
	size_t n = 0;

	if (!o->n)
		return;
	qsort(o->k, o->n, sizeof(*o->k), okey_cmp);
	for (size_t i = 0; i < o->n; i++) {
		if (n && okey_cmp(&o->k[n - 1], &o->k[i]) == 0) {
			free(o->k[i].path);
			continue;
		}
		o->k[n++] = o->k[i];
	}
	o->n = n;
}

static void count_objects(struct differ *d)
{
	struct okeys *a = &d->s[0].objs, *b = &d->s[1].objs;
	size_t i = 0, j = 0;

	okeys_unique(a);
	okeys_unique(b);
	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : okey_cmp(&a->k[i], &b->k[j]);

		if (c < 0) {
			d->st->objects_old++;
			i++;
		} else if (c > 0) {
			d->st->objects_new++;
			d->st->fetch_bytes += b->k[j].size;
			j++;
		} else {
			d->st->objects_both++;
			i++;
			j++;
		}
	}
}

int cfs_diff_images(struct cfs_image *old, struct cfs_image *new, cfs_diff_fn fn, void *ctx,
		    struct cfs_diff_stats *st)
{
	struct differ d = { .fn = fn, .ctx = ctx, .st = st };
	int ret;

	memset(st, 0, sizeof(*st));
	d.s[0].img = old;
	d.s[1].img = new;
	d.path_cap = 256;
	d.path = malloc(d.path_cap);
	if (!d.path)
		return -ENOMEM;
	strcpy(d.path, "/");
	ret = walk(&d);
	if (ret == 0)
		count_objects(&d);
	for (int s = 0; s < 2; s++) {
		cfs_inomap_free(&d.s[s].links, free);
		cfs_inomap_free(&d.s[s].dirs, NULL);
		for (size_t i = 0; i < d.s[s].objs.n; i++)
			free(d.s[s].objs.k[i].path);
		free(d.s[s].objs.k);
	}
	free(d.stack);
	free(d.path);
	return ret;
}
