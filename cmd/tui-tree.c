// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl tui: the lazily read tree of an image (see tui.h). Directories are
 * read on demand with cfs_dir_iter_*; a chunk that cannot be read becomes an
 * error node and reading goes on with the next chunk, so a corrupt image
 * shows everything that is still readable. Each directory inode is read at
 * most once: meeting it again (a cycle or a directory hardlink, both
 * corruption) gives an error node, so walks and searches always end.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tui.h"

/* Error rows one directory may show before giving up on the rest of it. */
#define MAX_DIR_ERRORS 32

static char last_msg[CFS_MSG_MAX + 1]; /* a message, escaped and shortened already */

static void keep_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

void tree_catch_messages(void)
{
	cfs_set_message_handler(keep_msg, NULL);
}

const char *tree_error_text(int err)
{
	static char text[sizeof(last_msg)];

	if (last_msg[0]) {
		memcpy(text, last_msg, sizeof(text));
		last_msg[0] = '\0';
		return text;
	}
	return strerror(err < 0 ? -err : err);
}

bool tree_is_dir(const struct tnode *n)
{
	return !n->error && n->d_type == DT_DIR;
}

int tree_open(struct tree *t, struct cfs_image *img)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->img = img;
	t->root.name = "/";
	t->root.name_len = 1;
	t->root.ino = cfs_image_root(img);
	t->root.d_type = DT_DIR;
	t->root.expanded = true;
	t->n_nodes = 1;
	ret = tree_load(t, &t->root);
	if (ret < 0)
		return ret;
	return tree_rebuild_rows(t);
}

static void free_kids(struct tnode *n)
{
	/* Iterative, post-order: an image may nest deeper than the stack allows. */
	struct tnode *cur = n;
	size_t start = 0;

	for (;;) {
		size_t i;

		for (i = start; i < cur->n_kids && !cur->kids[i].n_kids; i++)
			;
		if (i < cur->n_kids) {
			cur = &cur->kids[i];
			start = 0;
			continue;
		}
		for (i = 0; i < cur->n_kids; i++) {
			free(cur->kids[i].error);
			free(cur->kids[i].verify);
		}
		free(cur->kids);
		cur->kids = NULL;
		cur->n_kids = 0;
		if (cur == n)
			break;
		start = (size_t)(cur - cur->parent->kids) + 1;
		cur = cur->parent;
	}
}

void tree_free(struct tree *t)
{
	free_kids(&t->root);
	free(t->root.verify);
	free(t->rows);
	free(t->dirs_seen);
	memset(t, 0, sizeof(*t));
}

/* Add @ino to the set of loaded directories; 1 if it was new, 0 if seen. */
static int seen_add(struct tree *t, uint64_t ino)
{
	uint64_t key = ino + 1; /* 0 marks a free slot */
	size_t i;

	if (2 * (t->seen_n + 1) > t->seen_cap) {
		size_t cap = t->seen_cap ? 2 * t->seen_cap : 64;
		uint64_t *set = calloc(cap, sizeof(*set));

		if (!set)
			return -ENOMEM;
		for (size_t k = 0; k < t->seen_cap; k++) {
			if (!t->dirs_seen[k])
				continue;
			for (i = (t->dirs_seen[k] * 0x9e3779b97f4a7c15ULL) & (cap - 1); set[i];
			     i = (i + 1) & (cap - 1))
				;
			set[i] = t->dirs_seen[k];
		}
		free(t->dirs_seen);
		t->dirs_seen = set;
		t->seen_cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ULL) & (t->seen_cap - 1); t->dirs_seen[i];
	     i = (i + 1) & (t->seen_cap - 1))
		if (t->dirs_seen[i] == key)
			return 0;
	t->dirs_seen[i] = key;
	t->seen_n++;
	return 1;
}

struct kids {
	struct tnode *v;
	size_t n, cap;
};

static struct tnode *kids_add(struct kids *k)
{
	struct tnode *v = cfs_grow(k->v, &k->cap, k->n, sizeof(*v), 16);

	if (!v)
		return NULL;
	k->v = v;
	memset(&k->v[k->n], 0, sizeof(k->v[0]));
	return &k->v[k->n++];
}

static int add_error(struct kids *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_error(struct kids *k, const char *fmt, ...)
{
	struct tnode *e = kids_add(k);
	va_list ap;
	int r;

	if (!e)
		return -ENOMEM;
	va_start(ap, fmt);
	r = vasprintf(&e->error, fmt, ap);
	va_end(ap);
	if (r < 0) {
		e->error = NULL;
		k->n--;
		return -ENOMEM;
	}
	return 0;
}

int tree_load(struct tree *t, struct tnode *n)
{
	struct kids k = { 0 };
	struct cfs_dir_iter it;
	struct cfs_dirent d;
	struct cfs_inode in;
	unsigned int n_errors = 0;
	int ret;

	if (n->loaded || !tree_is_dir(n))
		return 0;
	last_msg[0] = '\0';
	ret = cfs_image_inode(t->img, n->ino, &in);
	if (ret < 0) {
		ret = add_error(&k, "%s", tree_error_text(ret));
		goto done;
	}
	ret = seen_add(t, n->ino);
	if (ret < 0)
		goto err;
	if (ret == 0) {
		ret = add_error(&k, "directory inode %llu is reached twice (a cycle or a directory hardlink)",
				(unsigned long long)n->ino);
		goto done;
	}
	ret = cfs_dir_iter_init(t->img, &in, &it);
	if (ret < 0) {
		ret = add_error(&k, "%s", tree_error_text(ret));
		goto done;
	}
	for (;;) {
		ret = cfs_dir_iter_next(&it, &d);
		if (ret == 0)
			break;
		if (ret < 0) {
			if (++n_errors > MAX_DIR_ERRORS) {
				ret = add_error(&k, "more errors: the rest of this directory is not read");
				goto done;
			}
			ret = add_error(&k, "%s", tree_error_text(ret));
			if (ret < 0)
				goto err;
			/* Go on with the next chunk: show what can be read. */
			cfs_dir_iter_skip(&it);
			continue;
		}
		struct tnode *c = kids_add(&k);

		if (!c) {
			ret = -ENOMEM;
			goto err;
		}
		c->name = d.name;
		c->name_len = d.name_len;
		c->ino = d.ino;
		c->d_type = d.d_type;
	}
	ret = 0;
done:
	if (ret < 0)
		goto err;
	for (size_t i = 0; i < k.n; i++) {
		k.v[i].parent = n;
		k.v[i].depth = n->depth + 1;
	}
	n->kids = k.v;
	n->n_kids = k.n;
	n->loaded = true;
	t->n_nodes += k.n;
	return 0;
err:
	for (size_t i = 0; i < k.n; i++)
		free(k.v[i].error);
	free(k.v);
	return ret;
}

/* The next visible node after @n, or NULL. */
static struct tnode *visible_next(struct tnode *n)
{
	if (n->expanded && n->n_kids)
		return &n->kids[0];
	while (n->parent) {
		if (n + 1 < n->parent->kids + n->parent->n_kids)
			return n + 1;
		n = n->parent;
	}
	return NULL;
}

int tree_rebuild_rows(struct tree *t)
{
	t->n_rows = 0;
	for (struct tnode *n = &t->root; n; n = visible_next(n)) {
		struct tnode **rows = cfs_grow(t->rows, &t->cap_rows, t->n_rows, sizeof(*rows), 256);

		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		t->rows[t->n_rows++] = n;
	}
	return 0;
}

long tree_row_of(const struct tree *t, const struct tnode *n)
{
	for (size_t i = 0; i < t->n_rows; i++)
		if (t->rows[i] == n)
			return (long)i;
	return -1;
}

int tree_reveal(struct tree *t, struct tnode *n)
{
	for (struct tnode *p = n->parent; p; p = p->parent)
		p->expanded = true;
	return tree_rebuild_rows(t);
}

/* Depth-first successor over the whole tree, loading directories; wraps. */
static struct tnode *dfs_next(struct tree *t, struct tnode *n)
{
	if (tree_is_dir(n) && tree_load(t, n) == 0 && n->n_kids)
		return &n->kids[0];
	while (n->parent) {
		if (n + 1 < n->parent->kids + n->parent->n_kids)
			return n + 1;
		n = n->parent;
	}
	return &t->root;
}

static struct tnode *last_descendant(struct tree *t, struct tnode *n)
{
	while (tree_is_dir(n) && tree_load(t, n) == 0 && n->n_kids)
		n = &n->kids[n->n_kids - 1];
	return n;
}

static struct tnode *dfs_prev(struct tree *t, struct tnode *n)
{
	if (!n->parent)
		return last_descendant(t, n);
	if (n > n->parent->kids)
		return last_descendant(t, n - 1);
	return n->parent;
}

static bool has_upper(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			return true;
	return false;
}

static int fold(int c, bool icase)
{
	return icase && c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool contains(const char *s, size_t n, const char *pat, size_t m, bool icase)
{
	if (m > n)
		return false;
	for (size_t i = 0; i + m <= n; i++) {
		size_t j = 0;

		while (j < m && fold((unsigned char)s[i + j], icase) == fold((unsigned char)pat[j], icase))
			j++;
		if (j == m)
			return true;
	}
	return false;
}

struct tnode *tree_search(struct tree *t, struct tnode *from, const char *pat, size_t pat_len,
			  bool forward)
{
	bool icase = !has_upper(pat, pat_len);
	struct tnode *n = from;

	if (!pat_len)
		return NULL;
	/* Ends: each directory is loaded once, so the tree is finite. */
	do {
		n = forward ? dfs_next(t, n) : dfs_prev(t, n);
		if (!n->error && contains(n->name, n->name_len, pat, pat_len, icase))
			return n;
	} while (n != from);
	return NULL;
}

int tree_find_path(struct tree *t, const char *path, size_t len, struct tnode **found)
{
	struct tnode *cur = &t->root;
	size_t i = 0;

	*found = cur;
	while (i < len) {
		size_t j, k;

		while (i < len && path[i] == '/')
			i++;
		if (i == len)
			break;
		for (j = i; j < len && path[j] != '/'; j++)
			;
		if (!tree_is_dir(cur))
			return -ENOTDIR;
		tree_load(t, cur);
		for (k = 0; k < cur->n_kids; k++) {
			struct tnode *c = &cur->kids[k];

			if (!c->error && c->name_len == j - i && memcmp(c->name, path + i, j - i) == 0)
				break;
		}
		if (k == cur->n_kids)
			return -ENOENT;
		cur = &cur->kids[k];
		*found = cur;
		i = j;
	}
	return 0;
}
