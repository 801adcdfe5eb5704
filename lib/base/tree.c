// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The in-memory tree of an image being built (see tree.h): allocating and
 * freeing nodes, the entry order, sorting directories, and counting links.
 * All walks are iterative so that tree depth only costs heap memory.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"
#include "cfs-format.h"
#include "internal.h"

/*
 * A node's name is kept in the node's own allocation, after it: a tree of a
 * million entries makes no million small allocations for them (a short name
 * often fits in what malloc rounds the node up to anyway). Only a name
 * moved to another node (cfs_node_swap_names()) is a block of its own.
 */
static bool name_inline(const struct cfs_node *n)
{
	return n->name == (const char *)(n + 1);
}

struct cfs_node *cfs_node_new(const char *name, size_t len)
{
	struct cfs_node *n = calloc(1, sizeof(*n) + len + 1);

	if (!n)
		return NULL;
	n->name = (char *)(n + 1);
	memcpy(n->name, name, len);
	n->name[len] = '\0';
	n->name_len = len;
	return n;
}

int cfs_node_add_child(struct cfs_node *dir, struct cfs_node *child)
{
	struct cfs_node **c = cfs_grow(dir->children, &dir->children_alloc, dir->n_children,
				       sizeof(*c), 8);

	if (!c)
		return -ENOMEM;
	dir->children = c;
	child->pos = dir->n_children;
	dir->children[dir->n_children++] = child;
	child->parent = dir;
	return 0;
}

uint64_t cfs_node_meta(const struct cfs_node *n)
{
	uint64_t meta = S_ISLNK(n->mode) && !n->link_target ? n->payload_len : 0;

	for (size_t i = 0; i < n->n_xattrs; i++)
		meta += n->xattrs[i].key_len + n->xattrs[i].value_len + CFS_ENTRY_META_XATTR;
	return meta;
}

int cfs_entries_check(uint64_t max, uint64_t entries, uint64_t meta, const char *fmt, ...)
{
	char where[2 * PATH_MAX];
	va_list ap;

	if (!max || (entries <= max && meta / CFS_ENTRY_META_BYTES < max))
		return 0;
	va_start(ap, fmt);
	vsnprintf(where, sizeof(where), fmt, ap);
	va_end(ap);
	if (entries > max)
		cfs_msg("%s: the tree would hold more than %llu entries (--max-entries)", where,
			(unsigned long long)max);
	else
		cfs_msg("%s: xattrs and symlink targets add up to %llu bytes, more than %u per entry --max-entries %llu allows",
			where, (unsigned long long)meta, CFS_ENTRY_META_BYTES,
			(unsigned long long)max);
	return -EFBIG;
}

char *cfs_node_path(const struct cfs_node *n)
{
	const struct cfs_node *p;
	size_t len = 0;
	char *s, *end;

	if (!n->parent)
		return strdup("/");
	for (p = n; p->parent; p = p->parent)
		len += 1 + p->name_len;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	end = s + len;
	*end = '\0';
	for (p = n; p->parent; p = p->parent) {
		end -= p->name_len;
		memcpy(end, p->name, p->name_len);
		*--end = '/';
	}
	return s;
}

char *cfs_node_where(const struct cfs_node *n)
{
	const struct cfs_node *root = n;
	char *path = cfs_node_path(n), *s;
	int r;

	if (!path)
		return NULL;
	while (root->parent)
		root = root->parent;
	if (n->layer >= 1 && n->layer <= root->n_origins && root->origins[n->layer - 1])
		r = asprintf(&s, "%s, entry '%s'", root->origins[n->layer - 1], path);
	else
		r = asprintf(&s, "'%s'", path);
	free(path);
	return r < 0 ? NULL : s;
}

int cfs_node_swap_names(struct cfs_node *a, struct cfs_node *b)
{
	char *an = a->name, *bn = b->name;
	size_t len = a->name_len;

	/* A name that lives in its node cannot leave it: the other gets a copy. */
	if (name_inline(a) && !(an = strndup(a->name, a->name_len)))
		return -ENOMEM;
	if (name_inline(b) && !(bn = strndup(b->name, b->name_len))) {
		if (an != a->name)
			free(an);
		return -ENOMEM;
	}
	a->name = bn;
	a->name_len = b->name_len;
	b->name = an;
	b->name_len = len;
	return 0;
}

int cfs_node_set_payload(struct cfs_node *n, const void *data, size_t len)
{
	char *p = malloc(len + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, data, len);
	p[len] = '\0';
	free(n->payload);
	n->payload = p;
	n->payload_len = len;
	n->payload_object = false;
	return 0;
}

void cfs_node_set_object_payload(struct cfs_node *n)
{
	free(n->payload);
	n->payload = NULL;
	n->payload_len = CFS_OBJECT_PATH_SIZE - 1;
	n->payload_object = true;
}

void cfs_node_clear_payload(struct cfs_node *n)
{
	free(n->payload);
	n->payload = NULL;
	n->payload_len = 0;
	n->payload_object = false;
}

const char *cfs_node_payload(const struct cfs_node *n, char buf[CFS_OBJECT_PATH_SIZE])
{
	if (!n->payload_object)
		return n->payload;
	cfs_object_path(n->digest, buf);
	return buf;
}

int cfs_node_add_xattr(struct cfs_node *n, const char *key, size_t key_len,
		       const void *value, size_t value_len)
{
	struct cfs_node_xattr *x;

	for (size_t i = 0; i < n->n_xattrs; i++)
		if (cfs_name_cmp(n->xattrs[i].key, n->xattrs[i].key_len, key, key_len) == 0)
			return -EEXIST;
	x = realloc(n->xattrs, (n->n_xattrs + 1) * sizeof(*x));
	if (!x)
		return -ENOMEM;
	n->xattrs = x;
	x = &n->xattrs[n->n_xattrs];
	x->key = malloc(key_len + 1);
	x->value = value_len ? malloc(value_len) : NULL;
	if (!x->key || (value_len && !x->value)) {
		free(x->key);
		free(x->value);
		return -ENOMEM;
	}
	memcpy(x->key, key, key_len);
	x->key[key_len] = '\0';
	x->key_len = key_len;
	if (value_len)
		memcpy(x->value, value, value_len);
	x->value_len = value_len;
	n->n_xattrs++;
	return 0;
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct cfs_node_xattr *x = a, *y = b;

	return cfs_name_cmp(x->key, x->key_len, y->key, y->key_len);
}

void cfs_node_sort_xattrs(struct cfs_node *n)
{
	if (n->n_xattrs > 1)
		qsort(n->xattrs, n->n_xattrs, sizeof(*n->xattrs), xattr_cmp);
}

int cfs_tree_walk(struct cfs_node *root, cfs_node_fn fn, void *ctx)
{
	struct cfs_node **stack;
	size_t depth = 0, alloc = 64;
	int r = 0;

	stack = malloc(alloc * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	stack[depth++] = root;
	while (depth > 0) {
		struct cfs_node *n = stack[--depth];

		r = fn(ctx, n);
		if (r)
			break;
		if (!cfs_node_is_dir(n))
			continue;
		if (depth + n->n_children > alloc) {
			size_t a = 2 * (depth + n->n_children);
			struct cfs_node **s = realloc(stack, a * sizeof(*s));

			if (!s) {
				r = -ENOMEM;
				break;
			}
			stack = s;
			alloc = a;
		}
		/* Pushed in reverse, so children are visited in stored order. */
		for (size_t i = n->n_children; i > 0; i--)
			stack[depth++] = n->children[i - 1];
	}
	free(stack);
	return r;
}

static int child_cmp(const void *a, const void *b)
{
	const struct cfs_node *x = *(struct cfs_node *const *)a;
	const struct cfs_node *y = *(struct cfs_node *const *)b;

	return cfs_name_cmp(x->name, x->name_len, y->name, y->name_len);
}

static int sort_one(void *ctx, struct cfs_node *n)
{
	(void)ctx;
	if (!cfs_node_is_dir(n) || n->n_children < 2)
		return 0;
	qsort(n->children, n->n_children, sizeof(*n->children), child_cmp);
	for (size_t i = 1; i < n->n_children; i++) {
		if (child_cmp(&n->children[i - 1], &n->children[i]) == 0) {
			char *path = cfs_node_path(n->children[i]);

			cfs_msg("'%s': duplicate entry", path ? path : n->children[i]->name);
			free(path);
			return -EEXIST;
		}
	}
	return 0;
}

void cfs_node_swap_inode(struct cfs_node *a, struct cfs_node *b)
{
	const size_t from = offsetof(struct cfs_node, mode);
	const size_t to = offsetof(struct cfs_node, inode_index);
	struct cfs_node tmp;

	memcpy((char *)&tmp + from, (char *)a + from, to - from);
	memcpy((char *)a + from, (char *)b + from, to - from);
	memcpy((char *)b + from, (char *)&tmp + from, to - from);
}

/* The node holding @n's inode, following links made by first_name(). */
static struct cfs_node *holder(struct cfs_node *n)
{
	while (n->link_target)
		n = n->link_target;
	return n;
}

/*
 * Visited in sorted order: make the first name of each hardlinked inode
 * the one that holds it. A scan meets the names in readdir order, which
 * depends on the filesystem; the image must not, and its dump (which names
 * the inode's first path in sorted order as the one the others link to)
 * must build the same image again. The inode's fields move from the old
 * holder to this node, and the old holder becomes a link to it. A dumpfile
 * says which name holds the inode, and that is kept as written.
 */
static int first_name(void *ctx, struct cfs_node *n)
{
	struct cfs_node *t;

	(void)ctx;
	if (!n->link_target) {
		n->indexed = true; /* met; cleared by cfs_tree_sort() */
		return 0;
	}
	t = holder(n);
	if (t->indexed || t->from_dump)
		return 0;
	cfs_node_swap_inode(n, t);
	n->link_target = NULL;
	t->link_target = n;
	n->indexed = true;
	return 0;
}

static int relink(void *ctx, struct cfs_node *n)
{
	(void)ctx;
	if (n->link_target)
		n->link_target = holder(n);
	n->indexed = false;
	return 0;
}

int cfs_tree_sort(struct cfs_node *root)
{
	int r = cfs_tree_walk(root, sort_one, NULL);

	if (!r)
		r = cfs_tree_walk(root, first_name, NULL);
	if (!r)
		r = cfs_tree_walk(root, relink, NULL);
	return r;
}

static int reset_links(void *ctx, struct cfs_node *n)
{
	(void)ctx;
	if (!n->link_target)
		n->nlink = 0;
	return 0;
}

static int add_links(void *ctx, struct cfs_node *n)
{
	struct cfs_node *ino = cfs_node_inode(n);

	(void)ctx;
	if (cfs_node_is_dir(n)) {
		n->nlink += 2;
		if (n->parent)
			n->parent->nlink++;
	} else {
		ino->nlink++;
	}
	if (ino->nlink >= UINT32_MAX - 1) {
		cfs_msg("too many links to one inode");
		return -EMLINK;
	}
	return 0;
}

int cfs_tree_count_links(struct cfs_node *root)
{
	int r = cfs_tree_walk(root, reset_links, NULL);

	return r ? r : cfs_tree_walk(root, add_links, NULL);
}

int cfs_node_table_reserve(struct cfs_node_table *t, size_t first,
			   size_t (*hash)(const struct cfs_node *n))
{
	size_t n = t->n_slots ? 2 * t->n_slots : first;
	struct cfs_node **slots;

	if (2 * (t->used + 1) <= t->n_slots)
		return 0;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_slots; i++) {
		struct cfs_node *e = t->slots[i];
		size_t j;

		if (!e)
			continue;
		for (j = hash(e) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = e;
	}
	free(t->slots);
	t->slots = slots;
	t->n_slots = n;
	return 0;
}

static void free_node(struct cfs_node *n)
{
	if (!name_inline(n))
		free(n->name);
	free(n->children);
	free(n->payload);
	for (size_t i = 0; i < n->n_xattrs; i++) {
		free(n->xattrs[i].key);
		free(n->xattrs[i].value);
	}
	free(n->xattrs);
	free(n->src_path);
	for (unsigned int i = 0; i < n->n_origins; i++)
		free(n->origins[i]);
	free(n->origins);
	free(n->content);
	free(n->store_tmp);
	free(n);
}

/**
 * cfs_tree_free() - free a tree and all its nodes
 * @root: the root returned by cfs_tree_from_dir() or cfs_tree_from_dump(),
 *	  or NULL
 *
 * Iterative and without allocating, so it cannot fail on a deep tree.
 */
void cfs_tree_free(struct cfs_node *root)
{
	struct cfs_node *pending = root;

	/*
	 * Chain nodes still to free through their parent pointer, which is not
	 * needed any more: a singly linked work list that costs no memory.
	 */
	if (root)
		root->parent = NULL;
	while (pending) {
		struct cfs_node *n = pending;

		pending = n->parent;
		if (cfs_node_is_dir(n)) {
			for (size_t i = 0; i < n->n_children; i++) {
				n->children[i]->parent = pending;
				pending = n->children[i];
			}
		}
		free_node(n);
	}
}
