// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_from_tar(): a tree from a tar archive (plain, gzip, xz, zstd...,
 * the compression found from the data by libarchive), read as one stream and
 * never unpacked. Each entry keeps what the archive records: uid and gid
 * numbers (never names), mode, mtime with nanoseconds, xattrs, POSIX ACLs
 * (as the kernel's system.posix_acl_* xattrs), hardlinks, symlinks, devices
 * and fifos. A regular file's content is read once, as its entry comes by:
 * hashed, and with a digest store written to a temporary object there that
 * cfs_tree_finish() publishes. Entries are applied as tar extracts them: a
 * later entry for a path replaces the earlier one (a directory keeps its
 * entries and takes the new metadata; other hardlinks to a replaced file keep
 * its inode); directories only implied by a path are 0755, owned by 0:0,
 * with mtime 0.
 *
 * Several archives may be applied to one tree in turn, as the layers of an
 * OCI image (cfs_tar_apply()): then whiteouts remove what earlier layers
 * made and never appear themselves, and an entry replaces a directory too.
 * Each node remembers the last layer that named it (or a path through it),
 * which is what an opaque directory keeps.
 *
 * A layer can be recorded as it is applied, as a fragment: a tar of the same
 * entries in the same order where a file of more than CFS_FORMAT_INLINE_MAX
 * bytes has no content but its fs-verity digest and size, in the xattrs
 * FRAG_DIGEST and FRAG_SIZE (no real xattr has a name without a namespace).
 * Applying the fragment gives what applying the layer gives, whatever the
 * build options, without reading or hashing those files again.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/tree.h"
#include "cfs/oci.h"
#include "cfs/store.h"
#include "cfs-format.h"
#include "base/internal.h"

#define FRAG_DIGEST "cfs.digest" /* 64 hex digits */
#define FRAG_SIZE "cfs.size" /* decimal */

struct cfs_tar {
	struct archive *a;
	const char *name; /* the archive, for messages */
	const struct cfs_build_options *opts;
	int store_fd;
	struct cfs_node *root;
	char *entry; /* the entry being read, for messages */
	bool read_failed; /* the archive failed (not the store) */
	bool oci; /* the archive is an OCI layer: whiteouts, replacing entries */
	bool keep_small; /* keep small files' content for the seal (cfs_tar_keep_small()) */
	unsigned int layer; /* the archive's number, from 1 */
	/* (directory, name) -> node: open addressing, a power of two in size */
	struct cfs_node_table tab;

	/* recording a fragment (cfs_tar_record()) */
	struct archive *rec;
	bool rec_failed;
	struct cfs_node *last; /* the regular file add_entry() read, or NULL */
	uint8_t small[CFS_FORMAT_INLINE_MAX]; /* its content, when it is that small */
	size_t small_len;
	bool capture;
	/* applying one: the entry's FRAG_DIGEST and FRAG_SIZE */
	bool fragment, frag_has_digest;
	uint64_t taken; /* bytes of file content read, holes included, for --max-size */
	uint64_t meta; /* bytes of xattrs and symlink targets read, for --max-entries */
	const char *image; /* the image the layers are of, for messages; NULL: none */
	uint64_t pull_end, pull_size; /* pull(): the end of the last piece, the entry's size */
	uint8_t frag_digest[CFS_DIGEST_SIZE];
	uint64_t frag_size;
};

static size_t slot_hash(const struct cfs_node *dir, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)dir;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

static size_t node_slot_hash(const struct cfs_node *n)
{
	return slot_hash(n->parent, n->name, n->name_len);
}

static struct cfs_node *lookup(struct cfs_tar *t, struct cfs_node *dir, const char *name, size_t len)
{
	size_t mask = t->tab.n_slots - 1;

	if (!t->tab.n_slots)
		return NULL;
	for (size_t i = slot_hash(dir, name, len) & mask;; i = (i + 1) & mask) {
		struct cfs_node *n = t->tab.slots[i];

		if (!n)
			return NULL;
		if (n->parent == dir && n->name_len == len && memcmp(n->name, name, len) == 0)
			return n;
	}
}

/* The archive being applied, for messages: "'NAME'", or with its layer and image. */
static const char *origin(const struct cfs_tar *t)
{
	const struct cfs_node *root = t->root;

	if (t->layer >= 1 && t->layer <= root->n_origins && root->origins[t->layer - 1])
		return root->origins[t->layer - 1];
	return "the archive";
}

/*
 * What the tree holds stays in proportion to --max-entries: the entries
 * (every node but the root), and the bytes of xattrs and symlink targets
 * read, whichever entries they went to.
 */
static int too_many(struct cfs_tar *t)
{
	return cfs_entries_check(t->opts ? t->opts->max_entries : 0, t->tab.used + 1, t->meta,
				 "%s, entry '%s'", origin(t), t->entry ? t->entry : "?");
}

static int insert(struct cfs_tar *t, struct cfs_node *n)
{
	int r = too_many(t);
	size_t mask, i;

	if (r == 0)
		r = cfs_node_table_reserve(&t->tab, 1024, node_slot_hash);
	if (r)
		return r;
	mask = t->tab.n_slots - 1;
	for (i = node_slot_hash(n) & mask; t->tab.slots[i]; i = (i + 1) & mask)
		;
	t->tab.slots[i] = n;
	t->tab.used++;
	return 0;
}

/* Take @n out of the table; backward-shift deletion keeps every probe intact. */
static void unhash(struct cfs_tar *t, struct cfs_node *n)
{
	size_t mask = t->tab.n_slots - 1, i, j;

	for (i = slot_hash(n->parent, n->name, n->name_len) & mask; t->tab.slots[i] != n;
	     i = (i + 1) & mask)
		if (!t->tab.slots[i])
			return;
	t->tab.slots[i] = NULL;
	t->tab.used--;
	for (j = (i + 1) & mask; t->tab.slots[j]; j = (j + 1) & mask) {
		struct cfs_node *m = t->tab.slots[j];
		size_t k = slot_hash(m->parent, m->name, m->name_len) & mask;

		/* m may fill the hole at i unless its home k lies in (i, j] */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			t->tab.slots[i] = m;
			t->tab.slots[j] = NULL;
			i = j;
		}
	}
}

static int add_child(struct cfs_tar *t, struct cfs_node *dir, struct cfs_node *n)
{
	int r = cfs_node_add_child(dir, n);

	if (r)
		return r;
	r = insert(t, n);
	if (r) {
		dir->n_children--;
		n->parent = NULL;
	}
	return r;
}

static int bad(struct cfs_tar *t, int r, const char *why)
{
	cfs_msg("'%s': entry '%s': %s", t->name, t->entry, why);
	return r;
}

/* @n, a hardlink, stops naming its inode: it leaves the chain at once. */
static void unlink_entry(struct cfs_node *n)
{
	struct cfs_node *h = n->link_target;

	n->prev_link->next_link = n->next_link;
	if (n->next_link)
		n->next_link->prev_link = n->prev_link;
	n->next_link = NULL;
	n->prev_link = NULL;
	n->link_target = NULL;
	h->nlink--;
}

/*
 * @h, being removed, holds an inode that entries outside the subtree being
 * removed link to: rather than give the inode to one of them and point
 * every other at it (an archive that removes each new holder in turn would
 * take time in the square of the links), @h takes the place of the first
 * of them, which goes with the subtree in its stead. Return 0 when every
 * link is in that subtree (the inode goes with them), 1 when passed, or
 * -ENOMEM.
 */
static int pass_inode(struct cfs_tar *t, struct cfs_node *h)
{
	struct cfs_node *l = h->next_link, *lp;
	size_t mask = t->tab.n_slots - 1, i, lpos;
	unsigned int layer;
	int r;

	while (l && l->dying)
		l = l->next_link; /* each leaves the chain when the walk meets it */
	if (!l)
		return 0;
	for (i = slot_hash(l->parent, l->name, l->name_len) & mask; t->tab.slots[i] != l;
	     i = (i + 1) & mask)
		;
	r = cfs_node_swap_names(l, h);
	if (r)
		return r;
	unlink_entry(l);
	lp = l->parent;
	lpos = l->pos;
	layer = l->layer;
	l->parent = h->parent;
	l->pos = h->pos;
	l->layer = h->layer;
	l->dying = true;
	l->parent->children[l->pos] = l;
	h->parent = lp;
	h->pos = lpos;
	h->layer = layer;
	h->dying = false;
	lp->children[lpos] = h;
	t->tab.slots[i] = h;
	return 1;
}

/* One node of a subtree being removed leaves the table, and its inode the tree. */
static int forget(void *ctx, struct cfs_node *n)
{
	struct cfs_tar *t = ctx;
	int r = 0;

	unhash(t, n);
	if (n->link_target)
		unlink_entry(n);
	else if (!n->next_link || (r = pass_inode(t, n)) == 0)
		cfs_store_drop(t->store_fd, n);
	return r < 0 ? r : 0;
}

static int mark_dying(void *ctx, struct cfs_node *n)
{
	(void)ctx;
	n->dying = true;
	return 0;
}

/*
 * Forget the subtree at @parent's @i-th entry, then free it: what is there
 * by then, as pass_inode() may have put another entry in its place.
 */
static int remove_at(struct cfs_tar *t, struct cfs_node *parent, size_t i)
{
	int r = cfs_tree_walk(parent->children[i], mark_dying, NULL);

	if (r == 0)
		r = cfs_tree_walk(parent->children[i], forget, t);
	if (r == 0)
		cfs_tree_free(parent->children[i]);
	return r;
}

/*
 * Remove @n with everything below it. The last entry of its directory
 * takes its place: the order is the archive's only until cfs_tree_sort(),
 * and an archive that names a directory's entries again must not cost
 * time in the square of their number.
 */
static int remove_node(struct cfs_tar *t, struct cfs_node *n)
{
	struct cfs_node *d = n->parent;
	size_t i = n->pos;
	int r;

	if (i >= d->n_children || d->children[i] != n)
		return -ENOENT;
	r = remove_at(t, d, i);
	if (r)
		return r;
	if (i != --d->n_children) {
		d->children[i] = d->children[d->n_children];
		d->children[i]->pos = i;
	}
	return 0;
}

/*
 * Make @dir opaque: what the earlier layers put below it goes, what this
 * layer put there stays, whichever came first in the archive. A directory
 * this layer names (or leads through) keeps only this layer's entries, as
 * the earlier layers' directory is hidden in full.
 */
static int make_opaque(struct cfs_tar *t, struct cfs_node *dir)
{
	struct cfs_node **stack = NULL, **s;
	size_t depth = 0, alloc = 0;
	int r = 0;

	do {
		size_t k = 0, i;

		for (i = 0; i < dir->n_children; i++) {
			struct cfs_node *c = dir->children[i];

			if (c->layer != t->layer) {
				r = remove_at(t, dir, i);
				if (r)
					break;
				continue;
			}
			c->pos = k;
			dir->children[k++] = c;
			if (!cfs_node_is_dir(c))
				continue;
			s = cfs_grow(stack, &alloc, depth, sizeof(*s), 16);
			if (!s) {
				r = -ENOMEM;
				i++;
				break;
			}
			stack = s;
			stack[depth++] = c;
		}
		while (i < dir->n_children) {
			dir->children[i]->pos = k;
			dir->children[k++] = dir->children[i++];
		}
		dir->n_children = k;
		if (r)
			break;
		dir = depth ? stack[--depth] : NULL;
	} while (dir);
	free(stack);
	return r;
}

/*
 * The node for @path, directories on the way made as needed. *@name and
 * *@len are the last component, and the node is its directory; the root
 * itself has an empty last component.
 */
static int walk_path(struct cfs_tar *t, const char *path, bool create, struct cfs_node **dir,
		     const char **name, size_t *len)
{
	struct cfs_node *d = t->root;
	const char *p = path;

	*name = "";
	*len = 0;
	if (create)
		d->layer = t->layer; /* this layer leads through it */
	for (;;) {
		const char *c, *end;
		struct cfs_node *n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		end = strchr(c, '/');
		if (!end)
			end = c + strlen(c);
		p = end;
		if (end - c == 1 && c[0] == '.')
			continue;
		if (end - c == 2 && c[0] == '.' && c[1] == '.')
			return bad(t, -EINVAL, "a path with '..' would reach outside the tree");
		if ((size_t)(end - c) > CFS_MAX_NAME_LEN)
			return bad(t, -ENAMETOOLONG, "a name is longer than 255 bytes");
		while (*p == '/' || (p[0] == '.' && (p[1] == '/' || !p[1])))
			p++; /* a trailing "/" or "/." does not make c the parent */
		if (!*p) {
			*name = c;
			*len = (size_t)(end - c);
			break;
		}
		n = lookup(t, d, c, (size_t)(end - c));
		if (n && !cfs_node_is_dir(n))
			return bad(t, -ENOTDIR, "a directory on its path is not a directory");
		if (!n) {
			int r;

			if (!create)
				return -ENOENT;
			n = cfs_node_new(c, (size_t)(end - c));
			if (!n)
				return -ENOMEM;
			n->mode = S_IFDIR | 0755;
			r = add_child(t, d, n);
			if (r) {
				cfs_tree_free(n);
				return r;
			}
		}
		d = n;
		if (create)
			d->layer = t->layer;
	}
	*dir = d;
	return 0;
}

/* Forget what a directory recorded, before a later entry of its path fills it again. */
static void reset_dir(struct cfs_node *n)
{
	for (size_t i = 0; i < n->n_xattrs; i++) {
		free(n->xattrs[i].key);
		free(n->xattrs[i].value);
	}
	free(n->xattrs);
	n->xattrs = NULL;
	n->n_xattrs = 0;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

/* The kernel's encoding of a POSIX ACL (include/uapi/linux/posix_acl_xattr.h). */
struct acl_ent {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static int acl_cmp(const void *a, const void *b)
{
	const struct acl_ent *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Add @type's ACL of @e, when it has one, to @n as its system.posix_acl_* xattr. */
static int add_acl(struct cfs_tar *t, struct archive_entry *e, struct cfs_node *n, int type)
{
	const char *key = type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS ? "system.posix_acl_access" :
								   "system.posix_acl_default";
	int count = archive_entry_acl_reset(e, type), etype, perm, tag, id, mask = -1, r;
	struct acl_ent *ents;
	uint8_t *buf;
	size_t k = 0;
	const char *uname;

	if (count <= 0)
		return 0;
	ents = calloc((size_t)count, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	while (k < (size_t)count &&
	       archive_entry_acl_next(e, type, &etype, &perm, &tag, &id, &uname) == ARCHIVE_OK) {
		struct acl_ent *a = &ents[k++];

		a->perm = (uint16_t)(perm & 7);
		a->id = UINT32_MAX; /* ACL_UNDEFINED_ID */
		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ: a->tag = 0x01; break;
		case ARCHIVE_ENTRY_ACL_USER: a->tag = 0x02; a->id = (uint32_t)id; break;
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: a->tag = 0x04; break;
		case ARCHIVE_ENTRY_ACL_GROUP: a->tag = 0x08; a->id = (uint32_t)id; break;
		case ARCHIVE_ENTRY_ACL_MASK: a->tag = 0x10; mask = a->perm; break;
		case ARCHIVE_ENTRY_ACL_OTHER: a->tag = 0x20; break;
		default:
			free(ents);
			return bad(t, -EINVAL, "an ACL entry of unknown kind");
		}
	}
	qsort(ents, k, sizeof(*ents), acl_cmp);
	buf = malloc(4 + 8 * k);
	if (!buf) {
		free(ents);
		return -ENOMEM;
	}
	put_le32(buf, 2); /* POSIX_ACL_XATTR_VERSION */
	for (size_t i = 0; i < k; i++) {
		put_le16(buf + 4 + 8 * i, ents[i].tag);
		put_le16(buf + 6 + 8 * i, ents[i].perm);
		put_le32(buf + 8 + 8 * i, ents[i].id);
	}
	/*
	 * libarchive folds the group:: entry into the mode; on disk, with a
	 * mask, the mode's group bits are the mask.
	 */
	if (type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS && mask >= 0)
		n->mode = (n->mode & ~(uint32_t)070) | ((uint32_t)mask << 3);
	r = cfs_node_add_xattr(n, key, strlen(key), buf, 4 + 8 * k);
	free(buf);
	free(ents);
	return r;
}

static int add_xattrs(struct cfs_tar *t, struct archive_entry *e, struct cfs_node *n)
{
	const char *key;
	const void *value;
	size_t size;
	int r;

	r = add_acl(t, e, n, ARCHIVE_ENTRY_ACL_TYPE_ACCESS);
	if (r == 0)
		r = add_acl(t, e, n, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT);
	if (r)
		return r;
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &key, &value, &size) == ARCHIVE_OK) {
		size_t len = strlen(key);

		if (len == 0 || len > CFS_MAX_NAME_LEN)
			return bad(t, -EINVAL, "an xattr name is empty or longer than 255 bytes");
		r = cfs_node_add_xattr(n, key, len, value, size);
		if (r == -EEXIST)
			continue; /* an ACL given both ways: the ACL wins */
		if (r)
			return r;
	}
	return 0;
}

/*
 * Content from the archive for cfs_store_stream(): the pieces libarchive
 * reads, with the holes of a sparse entry (GNU or pax) between them, which
 * are neither expanded nor hashed block by block.
 */
static int pull(void *ctx, const void **data, size_t *len, uint64_t *off)
{
	struct cfs_tar *t = ctx;
	la_int64_t o;
	int r = archive_read_data_block(t->a, data, len, &o);

	if (r == ARCHIVE_EOF) {
		*len = 0;
		return 0;
	}
	if (r < ARCHIVE_WARN) {
		t->read_failed = true;
		cfs_msg("'%s': entry '%s': %s", t->name, t->entry, archive_error_string(t->a));
		return -EIO;
	}
	if (o < 0 || (uint64_t)o < t->pull_end || (uint64_t)o > t->pull_size ||
	    *len > t->pull_size - (uint64_t)o) {
		t->read_failed = true;
		cfs_msg("'%s': entry '%s': content at byte %lld, before what came already or beyond its size",
			t->name, t->entry, (long long)o);
		return -EINVAL;
	}
	*off = (uint64_t)o;
	t->pull_end = *off + *len;
	if (t->capture && t->pull_end <= sizeof(t->small)) {
		memset(t->small + t->small_len, 0, *off - t->small_len);
		memcpy(t->small + *off, *data, *len);
		t->small_len = (size_t)t->pull_end;
	}
	return 0;
}

/* @count bytes of content from the archive, holes as zeros. */
static int read_exact(struct cfs_tar *t, void *buf, size_t count)
{
	uint8_t *p = buf;

	while (count > 0) {
		la_ssize_t n = archive_read_data(t->a, p, count);

		if (n <= 0) {
			t->read_failed = true;
			if (n == 0)
				cfs_msg("'%s': entry '%s': the archive ends inside its content",
					t->name, t->entry);
			else
				cfs_msg("'%s': entry '%s': %s", t->name, t->entry,
					archive_error_string(t->a));
			return -EIO;
		}
		if (t->capture && t->small_len + (size_t)n <= sizeof(t->small)) {
			memcpy(t->small + t->small_len, p, (size_t)n);
			t->small_len += (size_t)n;
		}
		p += n;
		count -= (size_t)n;
	}
	return 0;
}

static int read_content(struct cfs_tar *t, struct cfs_node *n)
{
	bool store_failed;
	int r;

	if (n->size == 0)
		return 0;
	t->taken = n->size > UINT64_MAX - t->taken ? UINT64_MAX : t->taken + n->size;
	if (t->opts && t->opts->max_size && (n->size > t->opts->max_size || t->taken > t->opts->max_size)) {
		cfs_msg("'%s': entry '%s': %llu bytes, and with the files before it %llu: more than --max-size %llu",
			t->name, t->entry, (unsigned long long)n->size, (unsigned long long)t->taken,
			(unsigned long long)t->opts->max_size);
		t->read_failed = true;
		return -EFBIG;
	}
	/* A fragment being recorded keeps a small file's content. */
	t->capture = t->rec && n->size <= CFS_FORMAT_INLINE_MAX;
	t->small_len = 0;
	if (cfs_format_keeps_inline(t->opts, n->size) ||
	    (t->keep_small && cfs_seal_keeps_inline(n->size))) {
		/*
		 * A composefs 1.0 image holds small files itself: keep the
		 * bytes, as a dumpfile's inline content is kept, and let
		 * cfs_tree_finish() hash (and store, for a format that
		 * needs an object) them with the rest.
		 */
		n->content = malloc((size_t)n->size);
		if (!n->content)
			return -ENOMEM;
		return read_exact(t, n->content, (size_t)n->size);
	}
	t->pull_end = 0;
	t->pull_size = n->size;
	r = cfs_store_stream(t->store_fd, pull, t, n, t->opts ? t->opts->reserve : 0, &store_failed);
	if (r == 0 && t->capture && t->small_len < n->size) {
		memset(t->small + t->small_len, 0, (size_t)n->size - t->small_len); /* a tail hole */
		t->small_len = (size_t)n->size;
	}
	if (r && !t->read_failed)
	{
		if (store_failed)
			cfs_msg("'%s': entry '%s': writing its object in the digest store '%s': %s",
				t->name, t->entry, t->opts->digest_store, strerror(-r));
		else
			cfs_msg("'%s': entry '%s': hashing it: %s", t->name, t->entry,
				strerror(-r));
	}
	return r;
}

/*
 * An OCI whiteout: ".wh..wh..opq" makes its directory opaque, ".wh.NAME"
 * removes NAME as the earlier layers made it. Return 1 when @path is no
 * whiteout, else 0 or -errno.
 */
static int whiteout(struct cfs_tar *t, const char *path)
{
	const char *end = path + strlen(path), *base, *wname;
	struct cfs_node *pdir, *dir, *n;
	const char *dname;
	size_t dlen, wlen;
	char *dpath;
	int r;

	while (end > path && end[-1] == '/')
		end--;
	for (base = end; base > path && base[-1] != '/'; base--)
		;
	if (end - base < 4 || memcmp(base, ".wh.", 4) != 0)
		return 1;
	wname = base + 4;
	wlen = (size_t)(end - wname);
	dpath = strndup(path, (size_t)(base - path));
	if (!dpath)
		return -ENOMEM;
	if (wlen == 8 && memcmp(wname, ".wh..opq", 8) == 0) {
		r = walk_path(t, dpath, true, &pdir, &dname, &dlen);
		if (r)
			goto out;
		dir = dlen ? lookup(t, pdir, dname, dlen) : t->root;
		if (!dir) {
			/* The layer's own directory, made empty: implied, as by tar. */
			dir = cfs_node_new(dname, dlen);
			r = -ENOMEM;
			if (!dir)
				goto out;
			dir->mode = S_IFDIR | 0755;
			r = add_child(t, pdir, dir);
			if (r) {
				cfs_tree_free(dir);
				goto out;
			}
		}
		if (!cfs_node_is_dir(dir)) {
			r = bad(t, -ENOTDIR, "an opaque whiteout in a non-directory");
			goto out;
		}
		dir->layer = t->layer;
		r = make_opaque(t, dir);
		goto out;
	}
	r = 0;
	if (wlen >= 4 && memcmp(wname, ".wh.", 4) == 0)
		goto out; /* other ".wh..wh." names are aufs metadata: no entries */
	if (wlen == 0 || (wlen == 1 && wname[0] == '.') ||
	    (wlen == 2 && wname[0] == '.' && wname[1] == '.')) {
		r = bad(t, -EINVAL, "a whiteout that names no entry");
		goto out;
	}
	r = walk_path(t, dpath, false, &pdir, &dname, &dlen);
	if (r == -ENOENT) {
		r = 0; /* nothing there to remove */
		goto out;
	}
	if (r)
		goto out;
	dir = dlen ? lookup(t, pdir, dname, dlen) : t->root;
	n = dir && cfs_node_is_dir(dir) && wlen <= CFS_MAX_NAME_LEN ? lookup(t, dir, wname, wlen) : NULL;
	if (!n)
		goto out;
	if (n->layer != t->layer)
		r = remove_node(t, n);
	else if (cfs_node_is_dir(n))
		r = make_opaque(t, n); /* removed and made again in this layer */
out:
	free(dpath);
	return r;
}

static int add_entry(struct cfs_tar *t, struct archive_entry *e)
{
	const char *path = archive_entry_pathname(e), *hl = archive_entry_hardlink(e), *name;
	mode_t type = archive_entry_filetype(e);
	struct cfs_node *dir, *n, *target = NULL;
	size_t len;
	bool fresh = false;
	int r;

	free(t->entry);
	t->last = NULL;
	t->entry = strdup(path ? path : "?");
	if (!t->entry)
		return -ENOMEM;
	if (!path)
		return bad(t, -EINVAL, "no path name");
	if (t->oci) {
		r = whiteout(t, path);
		if (r <= 0)
			return r;
	}
	if (hl) {
		struct cfs_node *tdir;
		const char *tname;
		size_t tlen;

		r = walk_path(t, hl, false, &tdir, &tname, &tlen);
		if (r == 0)
			target = tlen ? lookup(t, tdir, tname, tlen) : NULL;
		if (r == -ENOENT || (r == 0 && !target))
			return bad(t, -EINVAL, "a hardlink to a path no earlier entry made");
		if (r)
			return r;
		if (cfs_node_is_dir(target))
			return bad(t, -EINVAL, "a hardlink to a directory");
		target = cfs_node_inode(target);
	} else if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK &&
		   type != AE_IFCHR && type != AE_IFBLK && type != AE_IFIFO) {
		return bad(t, -EINVAL, "an entry of an unknown type");
	}
	if (!hl && (type == AE_IFCHR || type == AE_IFBLK) && t->opts && t->opts->skip_devices)
		return 0;

	r = walk_path(t, path, true, &dir, &name, &len);
	if (r)
		return r;
	n = len ? lookup(t, dir, name, len) : t->root;
	if (n == target && n)
		return 0; /* a link to itself: nothing changes */
	if (n && !(cfs_node_is_dir(n) && !hl && type == AE_IFDIR)) {
		/* The old entry goes, as tar unlinks it; other links keep its inode. */
		if (!len || (n->n_children && !t->oci))
			return bad(t, -EISDIR, "replaces a directory that has entries");
		for (struct cfs_node *p = target; p; p = p->parent)
			if (p == n)
				return bad(t, -EINVAL, "a hardlink into the directory it replaces");
		r = remove_node(t, n);
		if (r)
			return r;
		n = NULL;
	}
	if (!n) {
		n = cfs_node_new(name, len);
		if (!n)
			return -ENOMEM;
		fresh = true;
	} else {
		reset_dir(n); /* a directory keeps its entries, gets new metadata */
	}
	n->layer = t->layer;

	if (hl) {
		n->link_target = target;
		n->next_link = target->next_link;
		if (n->next_link)
			n->next_link->prev_link = n;
		n->prev_link = target;
		target->next_link = n;
		target->nlink++; /* counted again by cfs_tree_finish() */
		n->mode = target->mode;
		goto add;
	}
	/*
	 * Linux keeps no permission bits for a symlink: every filesystem shows
	 * 0777, and so does a tree unpacked from the archive (tar, umoci),
	 * whatever the header says.
	 */
	n->mode = type == AE_IFLNK ? (S_IFLNK | 0777) : archive_entry_mode(e);
	if (archive_entry_uid(e) < 0 || archive_entry_uid(e) > UINT32_MAX ||
	    archive_entry_gid(e) < 0 || archive_entry_gid(e) > UINT32_MAX) {
		r = bad(t, -EOVERFLOW, "uid or gid does not fit in 32 bits");
		goto err;
	}
	n->uid = (uint32_t)archive_entry_uid(e);
	n->gid = (uint32_t)archive_entry_gid(e);
	if (!t->opts || !t->opts->use_epoch) {
		n->mtime_sec = archive_entry_mtime(e);
		n->mtime_nsec = (uint32_t)archive_entry_mtime_nsec(e);
	} else {
		n->mtime_sec = 0;
		n->mtime_nsec = 0;
	}
	if (!t->opts || !t->opts->skip_xattrs) {
		r = add_xattrs(t, e, n);
		if (r)
			goto err;
		t->meta += cfs_node_meta(n);
		r = too_many(t);
		if (r)
			goto err;
	}

	switch (type) {
	case AE_IFREG:
		if (archive_entry_size(e) < 0) {
			r = bad(t, -EINVAL, "a negative size");
			goto err;
		}
		n->size = (uint64_t)archive_entry_size(e);
		if (t->fragment && t->frag_has_digest) {
			n->size = t->frag_size;
			memcpy(n->digest, t->frag_digest, CFS_DIGEST_SIZE);
			n->has_digest = true;
			cfs_node_set_object_payload(n);
		} else {
			r = read_content(t, n);
		}
		if (r)
			goto err;
		t->last = n;
		break;
	case AE_IFLNK: {
		const char *target_path = archive_entry_symlink(e);

		if (!target_path || !target_path[0]) {
			r = bad(t, -EINVAL, "a symlink without a target");
			goto err;
		}
		t->meta += strlen(target_path);
		r = too_many(t);
		if (r == 0)
			r = cfs_node_set_payload(n, target_path, strlen(target_path));
		if (r)
			goto err;
		break;
	}
	case AE_IFCHR:
	case AE_IFBLK: {
		uint64_t dev = makedev(archive_entry_rdevmajor(e), archive_entry_rdevminor(e));

		if (dev > UINT32_MAX) {
			r = bad(t, -EOVERFLOW, "device number does not fit in 32 bits");
			goto err;
		}
		n->rdev = (uint32_t)dev;
		break;
	}
	default:
		break;
	}
add:
	if (fresh) {
		r = add_child(t, dir, n);
		if (r)
			goto err;
	}
	return 0;
err:
	if (fresh) {
		if (n->link_target)
			unlink_entry(n);
		cfs_store_drop(t->store_fd, n);
		cfs_tree_free(n);
	}
	return r;
}

/* Remove the temporaries of a tree that will not be finished. */
static int drop_tmp(void *ctx, struct cfs_node *n)
{
	cfs_store_drop(*(int *)ctx, n);
	return 0;
}

int cfs_tar_new(const struct cfs_build_options *opts, struct cfs_tar **tp)
{
	struct cfs_tar *t = calloc(1, sizeof(*t));

	*tp = NULL;
	if (!t)
		return -ENOMEM;
	t->opts = opts;
	t->store_fd = -1;
	t->root = cfs_node_new("", 0);
	if (!t->root) {
		free(t);
		return -ENOMEM;
	}
	t->root->mode = S_IFDIR | 0755;
	if (opts && opts->digest_store) {
		t->store_fd = cfs_store_dir_open(opts->digest_store);
		if (t->store_fd < 0) {
			int r = t->store_fd;

			cfs_tree_free(t->root);
			free(t);
			return r;
		}
	}
	*tp = t;
	return 0;
}

struct archive *cfs_tar_reader(void)
{
	struct archive *a = archive_read_new();

	if (a) {
		archive_read_support_format_tar(a);
		archive_read_support_format_gnutar(a);
	}
	return a;
}

/*
 * In a fragment, take FRAG_DIGEST and FRAG_SIZE out of @e's xattrs. Return
 * 0, or 1 when they are malformed.
 */
static int take_frag_xattrs(struct cfs_tar *t, struct archive_entry *e)
{
	struct archive_entry *rest = archive_entry_new();
	const char *key;
	const void *value;
	size_t size;
	char buf[65];
	int r = 0;

	if (!rest)
		return -ENOMEM;
	t->frag_has_digest = false;
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &key, &value, &size) == ARCHIVE_OK) {
		if (strcmp(key, FRAG_DIGEST) == 0) {
			memcpy(buf, value, size < 64 ? size : 64);
			buf[64] = '\0';
			if (size != 64 || cfs_digest_from_hex(buf, t->frag_digest))
				r = 1;
			t->frag_has_digest = true;
		} else if (strcmp(key, FRAG_SIZE) == 0) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(size < 20 ? size : 20), (const char *)value);
			t->frag_size = strtoull(buf, NULL, 10);
		} else {
			archive_entry_xattr_add_entry(rest, key, value, size);
		}
	}
	archive_entry_xattr_clear(e);
	archive_entry_xattr_reset(rest);
	while (archive_entry_xattr_next(rest, &key, &value, &size) == ARCHIVE_OK)
		archive_entry_xattr_add_entry(e, key, value, size);
	archive_entry_free(rest);
	if (t->frag_has_digest && t->frag_size <= CFS_FORMAT_INLINE_MAX)
		r = 1;
	return r;
}

/* Write what add_entry() made of @e to the fragment being recorded. */
static void record(struct cfs_tar *t, struct archive_entry *e)
{
	struct archive_entry *c = NULL;
	char hex[CFS_DIGEST_HEX_SIZE], size[24];
	const void *data = NULL;
	size_t len = 0;
	int r;

	if (t->last && t->last->size > CFS_FORMAT_INLINE_MAX) {
		c = archive_entry_clone(e);
		if (!c)
			goto fail;
		cfs_digest_to_hex(t->last->digest, hex);
		snprintf(size, sizeof(size), "%llu", (unsigned long long)t->last->size);
		archive_entry_set_size(c, 0);
		archive_entry_xattr_add_entry(c, FRAG_DIGEST, hex, 64);
		archive_entry_xattr_add_entry(c, FRAG_SIZE, size, strlen(size));
		e = c;
	} else if (t->last) {
		data = t->last->content ? t->last->content : t->small;
		len = (size_t)t->last->size;
	} else if (archive_entry_size(e) != 0) {
		c = archive_entry_clone(e); /* a hardlink, a whiteout: no content */
		if (!c)
			goto fail;
		archive_entry_set_size(c, 0);
		e = c;
	}
	r = archive_write_header(t->rec, e);
	if (r == ARCHIVE_OK && len && archive_write_data(t->rec, data, len) != (la_ssize_t)len)
		r = ARCHIVE_FATAL;
	archive_entry_free(c);
	if (r == ARCHIVE_OK)
		return;
fail:
	t->rec_failed = true;
}

int cfs_tar_fragment_entry(struct archive_entry *e, const uint8_t digest[CFS_DIGEST_SIZE],
			   uint64_t size)
{
	char hex[CFS_DIGEST_HEX_SIZE], num[24];

	if (size <= CFS_FORMAT_INLINE_MAX)
		return -EINVAL;
	cfs_digest_to_hex(digest, hex);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
	archive_entry_set_size(e, 0);
	archive_entry_xattr_add_entry(e, FRAG_DIGEST, hex, 64);
	archive_entry_xattr_add_entry(e, FRAG_SIZE, num, strlen(num));
	return 0;
}

bool cfs_tar_fragment_xattr(const char *name)
{
	return strcmp(name, FRAG_DIGEST) == 0 || strcmp(name, FRAG_SIZE) == 0;
}

void cfs_tar_record(struct cfs_tar *t, struct archive *w)
{
	t->rec = w;
	t->rec_failed = false;
}

bool cfs_tar_record_failed(const struct cfs_tar *t)
{
	return t->rec_failed;
}

int cfs_tar_fragment_check(struct cfs_tar *t, struct archive *a, bool objects)
{
	struct archive_entry *e;
	char objpath[CFS_OBJECT_PATH_SIZE];
	int r;

	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF) {
			r = 0;
			break;
		}
		r = r < ARCHIVE_WARN ? 1 : take_frag_xattrs(t, e);
		if (r)
			break;
		if (!objects || !t->frag_has_digest || t->store_fd < 0)
			continue;
		cfs_object_path(t->frag_digest, objpath);
		if (faccessat(t->store_fd, objpath, F_OK, 0) < 0) {
			r = 1;
			break;
		}
	}
	t->frag_has_digest = false;
	return r;
}

/* cfs_tree_walk() callback: 1 at a file whose object the store lacks. */
static int lacks_object(void *ctx, struct cfs_node *n)
{
	int *store_fd = ctx;
	char objpath[CFS_OBJECT_PATH_SIZE];

	if (!S_ISREG(n->mode) || n->link_target || !n->has_digest || n->store_tmp || n->content)
		return 0;
	cfs_object_path(n->digest, objpath);
	return faccessat(*store_fd, objpath, F_OK, AT_SYMLINK_NOFOLLOW) < 0 ? 1 : 0;
}

int cfs_tar_objects_missing(struct cfs_tar *t)
{
	if (t->store_fd < 0)
		return 0;
	return cfs_tree_walk(t->root, lacks_object, &t->store_fd);
}

int cfs_tar_apply_fragment(struct cfs_tar *t, struct archive *a, const char *name)
{
	int r;

	t->fragment = true;
	r = cfs_tar_apply(t, a, name, true);
	t->fragment = false;
	t->frag_has_digest = false;
	return r;
}

void cfs_tar_set_image(struct cfs_tar *t, const char *image)
{
	t->image = image;
}

void cfs_tar_keep_small(struct cfs_tar *t)
{
	t->keep_small = true;
}

/* Name the archive applied as layer t->layer, for cfs_node_where(). */
static int add_origin(struct cfs_tar *t, const char *name, bool layer)
{
	struct cfs_node *root = t->root;
	char **o, *s;

	if (root->n_origins >= t->layer)
		return 0;
	o = realloc(root->origins, t->layer * sizeof(*o));
	if (!o)
		return -ENOMEM;
	root->origins = o;
	while (root->n_origins < t->layer - 1)
		root->origins[root->n_origins++] = NULL;
	if ((!layer	 ? asprintf(&s, "'%s'", name) :
	     t->image ? asprintf(&s, "'%s' (layer %u of '%s')", name, t->layer, t->image) :
			asprintf(&s, "'%s' (layer %u)", name, t->layer)) < 0)
		return -ENOMEM;
	root->origins[root->n_origins++] = s;
	return 0;
}

int cfs_tar_apply(struct cfs_tar *t, struct archive *a, const char *name, bool layer)
{
	struct archive_entry *e;
	int r;

	t->a = a;
	t->name = name;
	t->oci = layer;
	t->layer++;
	r = add_origin(t, name, layer);
	if (r)
		return r;
	t->read_failed = false;
	free(t->entry);
	t->entry = NULL;
	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			if (t->entry)
				cfs_msg("'%s': after entry '%s': %s", t->name, t->entry,
					archive_error_string(a));
			else
				cfs_msg("'%s': %s", t->name, archive_error_string(a));
			return -EINVAL;
		}
		if (t->fragment && take_frag_xattrs(t, e) != 0) {
			cfs_msg("'%s': entry '%s': not a fragment cfs wrote", t->name,
				archive_entry_pathname(e) ? archive_entry_pathname(e) : "?");
			return -EINVAL;
		}
		r = add_entry(t, e);
		if (r)
			return t->read_failed ? -EINVAL : r;
		if (t->rec && !t->rec_failed)
			record(t, e);
	}
	return 0;
}

int cfs_tar_end(struct cfs_tar *t, int r, struct cfs_node **rootp)
{
	*rootp = NULL;
	if (!t)
		return r;
	free(t->tab.slots);
	free(t->entry);
	if (r) {
		if (t->store_fd >= 0)
			cfs_tree_walk(t->root, drop_tmp, &t->store_fd);
		cfs_tree_free(t->root);
	} else {
		*rootp = t->root;
	}
	if (t->store_fd >= 0)
		close(t->store_fd);
	free(t);
	return r;
}

int cfs_tree_from_tar(int fd, const char *name, const struct cfs_build_options *opts,
		      struct cfs_node **rootp)
{
	const char *shown = strcmp(name, "-") == 0 ? "stdin" : name;
	struct archive *a = NULL;
	struct cfs_tar *t;
	int r;

	r = cfs_tar_new(opts, &t);
	if (r)
		return cfs_tar_end(NULL, r, rootp);
	a = cfs_tar_reader();
	if (!a) {
		r = -ENOMEM;
		goto out;
	}
	archive_read_support_filter_all(a);
	if (archive_read_open_fd(a, fd, 64 * 1024) != ARCHIVE_OK) {
		cfs_msg("'%s': %s", shown, archive_error_string(a));
		r = -EINVAL;
		goto out;
	}
	r = cfs_tar_apply(t, a, shown, false);
out:
	if (a)
		archive_read_free(a);
	return cfs_tar_end(t, r, rootp);
}
