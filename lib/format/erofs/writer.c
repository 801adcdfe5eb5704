// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_erofs_write(): encode a finished tree as a composefs 1.0 image,
 * an EROFS filesystem (erofs-format.h) laid out as composefs 1.0.8's
 * mkcomposefs lays it out, so that the same input gives the same bytes.
 *
 * The tree is first turned into a list of inodes as overlayfs will see them:
 * trusted.overlay.* xattrs of the source are escaped one level down, every
 * regular file whose content lives outside gets metacopy and redirect
 * xattrs, a whiteout (character device 0/0) becomes an escaped regular file,
 * the root is marked opaque and given the whiteouts 00..ff that a lower
 * layer may need, and every directory gets "." and "..". Inodes are
 * numbered breadth-first from the root, each directory's entries sorted by
 * name. Then the layout is computed (where each inode, its xattrs and tail
 * go) and the image is written front to back as it is encoded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs-format.h"
#include "base/internal.h"
#include "erofs.h"
#include "base/tree.h"
#include "cfs-format.h"

#define XATTR_TRUSTED_OVERLAY "trusted.overlay."
#define XATTR_ESCAPED_OVERLAY "trusted.overlay.overlay."
#define XATTR_METACOPY "trusted.overlay.metacopy"
#define XATTR_REDIRECT "trusted.overlay.redirect"
#define XATTR_OPAQUE "trusted.overlay.opaque"
#define XATTR_ESCAPED_OPAQUE "trusted.overlay.overlay.opaque"
#define XATTR_USER_OPAQUE "user.overlay.opaque"
#define XATTR_ESCAPED_WHITEOUT "trusted.overlay.overlay.whiteout"
#define XATTR_ESCAPED_WHITEOUTS "trusted.overlay.overlay.whiteouts"
#define XATTR_USER_WHITEOUT "user.overlay.whiteout"
#define XATTR_USER_WHITEOUTS "user.overlay.whiteouts"
#define FS_VERITY_ALG_SHA256 1

/*
 * How an xattr's value is held: as bytes at @value, or spelled when needed
 * from the file's digest at @value (the overlay xattrs of every file with
 * outside content, which the writer holds no copy of).
 */
enum xval { XV_BYTES, XV_METACOPY, XV_REDIRECT };

/* The longest value spelled from a digest: "/xx/<62 hex>" */
#define XVAL_MAX (1 + CFS_OBJECT_PATH_SIZE)

/* One xattr as it will be stored; -1 in @shared_off: stored inline. */
struct exattr {
	const char *key;
	size_t key_len;
	const uint8_t *value; /* the bytes, or for XV_METACOPY and XV_REDIRECT the digest */
	size_t value_len;
	int64_t shared_off;
	bool own_key, own_value; /* freed with the writer, else the tree's or constant */
	uint8_t spelled; /* enum xval */
};

/* One directory entry; @ino is resolved once every inode has its index. */
struct edirent {
	const char *name;
	size_t len;
	size_t ino;
	struct cfs_node *node; /* a child that holds its inode */
	struct cfs_node *link; /* a hardlink: the node holding its inode */
};

/*
 * One inode in the image, in breadth-first order: one for every entry of
 * the tree, so its fields are ordered by size, without padding, and counts
 * are 32 bits (an image holds fewer than 2^32 inodes, as i_ino says).
 */
struct eino {
	struct cfs_node *n; /* NULL for a whiteout the writer adds */
	const uint8_t *content; /* regular files stored in the image */
	struct exattr *xattrs;
	struct edirent *ents; /* directories, sorted, with "." and ".." */
	uint64_t size; /* regular files: st_size */
	int64_t mtime;
	uint64_t pos; /* file offset of the inode; its nid is pos / EROFS_SLOTSIZE */
	uint64_t blkaddr; /* first data block, when n_blocks > 0 */
	uint32_t parent; /* index of the directory it was found in */
	uint32_t mode, nlink, uid, gid, rdev;
	uint32_t mtime_nsec;
	uint32_t n_xattrs;
	uint32_t n_ents;

	/* The layout */
	uint32_t n_blocks; /* data blocks outside the metadata area */
	uint32_t tailsize; /* bytes inlined after the inode and xattrs */
	uint32_t xattr_size, n_shared;
	bool compact;
};

struct ewriter {
	const struct cfs_write_options *opts;
	unsigned int version;
	struct eino *inos;
	size_t n_inos, inos_alloc;
	char whiteout_names[256][3];
	int64_t min_mtime;
	uint32_t min_mtime_nsec;
	bool has_acl;
	struct exattr **shared; /* the shared xattrs, in stored order */
	size_t n_shared;
	uint64_t shared_size, inodes_end, data_start, n_data_blocks;
};

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

static int name_cmp(const char *a, size_t a_len, const char *b, size_t b_len)
{
	return cfs_name_cmp(a, a_len, b, b_len);
}

/* ---- xxh32, for the xattr name filter ---- */

#define XXH_P1 2654435761U
#define XXH_P2 2246822519U
#define XXH_P3 3266489917U
#define XXH_P4 668265263U
#define XXH_P5 374761393U

static uint32_t rotl32(uint32_t v, int r)
{
	return (v << r) | (v >> (32 - r));
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t xxh32_lane(uint32_t acc, uint32_t in)
{
	return rotl32(acc + in * XXH_P2, 13) * XXH_P1;
}

static uint32_t xxh32(const void *data, size_t len, uint32_t seed)
{
	const uint8_t *p = data, *end = p + len;
	uint32_t h;

	if (len >= 16) {
		uint32_t v[4] = { seed + XXH_P1 + XXH_P2, seed + XXH_P2, seed, seed - XXH_P1 };

		for (; end - p >= 16; p += 16)
			for (int i = 0; i < 4; i++)
				v[i] = xxh32_lane(v[i], le32_at(p + 4 * i));
		h = rotl32(v[0], 1) + rotl32(v[1], 7) + rotl32(v[2], 12) + rotl32(v[3], 18);
	} else {
		h = seed + XXH_P5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rotl32(h + le32_at(p) * XXH_P3, 17) * XXH_P4;
	for (; p < end; p++)
		h = rotl32(h + *p * XXH_P5, 11) * XXH_P1;
	h ^= h >> 15;
	h *= XXH_P2;
	h ^= h >> 13;
	h *= XXH_P3;
	h ^= h >> 16;
	return h;
}

/* ---- xattr names ---- */

/* The EROFS name index of @key and the suffix stored after it. */
static uint8_t xattr_index(const struct exattr *x, const char **suffix, size_t *suffix_len)
{
	static const struct {
		const char *prefix;
		uint8_t index;
	} prefixes[] = {
		{ "user.", EROFS_XATTR_INDEX_USER },
		{ "system.posix_acl_access", EROFS_XATTR_INDEX_POSIX_ACL_ACCESS },
		{ "system.posix_acl_default", EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT },
		{ "trusted.", EROFS_XATTR_INDEX_TRUSTED },
		{ "security.", EROFS_XATTR_INDEX_SECURITY },
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t plen = strlen(prefixes[i].prefix);

		if (x->key_len >= plen && memcmp(x->key, prefixes[i].prefix, plen) == 0) {
			*suffix = x->key + plen;
			*suffix_len = x->key_len - plen;
			return prefixes[i].index;
		}
	}
	*suffix = x->key;
	*suffix_len = x->key_len;
	return 0;
}

/* @x's value, spelled into @buf if it is not held. */
static const uint8_t *xval(const struct exattr *x, uint8_t buf[XVAL_MAX])
{
	switch (x->spelled) {
	case XV_METACOPY:
		buf[0] = 0; /* version */
		buf[1] = 4 + CFS_DIGEST_SIZE; /* length */
		buf[2] = 0; /* flags */
		buf[3] = FS_VERITY_ALG_SHA256;
		memcpy(buf + 4, x->value, CFS_DIGEST_SIZE);
		return buf;
	case XV_REDIRECT:
		buf[0] = '/';
		cfs_object_path(x->value, (char *)buf + 1);
		return buf;
	}
	return x->value;
}

static size_t xattr_entry_size(const struct exattr *x)
{
	const char *s;
	size_t len;

	xattr_index(x, &s, &len);
	return round_up(sizeof(struct erofs_xattr_entry) + len + x->value_len, 4);
}

static struct exattr *find_xattr(struct eino *e, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < e->n_xattrs; i++)
		if (e->xattrs[i].key_len == len && memcmp(e->xattrs[i].key, key, len) == 0)
			return &e->xattrs[i];
	return NULL;
}

/*
 * How set_xattr() takes a key or a value: copied; kept as given, for what
 * outlives the writer (the tree's, a constant); or taken over, malloc'd by
 * the caller. A file's own xattrs and the overlay xattrs of every file are
 * kept or taken, so that the writer holds no second copy of them.
 */
enum xa_how { XA_COPY, XA_KEEP, XA_TAKE };

/*
 * Add @key=@value to @e, replacing the value of an xattr of that name;
 * what is taken is freed on failure too.
 */
static int set_xattr(struct eino *e, const char *key, size_t key_len, enum xa_how key_how,
		     const void *value, size_t value_len, enum xa_how value_how)
{
	struct exattr *x = NULL;
	const uint8_t *v = value;
	char *k;

	if (value_how == XA_COPY) {
		uint8_t *c = malloc(value_len ? value_len : 1);

		if (!c)
			goto fail_key;
		memcpy(c, value, value_len);
		v = c;
	}
	for (size_t i = 0; i < e->n_xattrs; i++)
		if (e->xattrs[i].key_len == key_len && memcmp(e->xattrs[i].key, key, key_len) == 0)
			x = &e->xattrs[i];
	if (x) {
		if (x->own_value)
			free((void *)x->value);
		x->value = v;
		x->value_len = value_len;
		x->own_value = value_how != XA_KEEP;
		x->spelled = XV_BYTES;
		if (key_how == XA_TAKE)
			free((void *)key);
		return 0;
	}
	x = realloc(e->xattrs, (e->n_xattrs + 1) * sizeof(*x));
	if (!x)
		goto fail;
	e->xattrs = x;
	x = &e->xattrs[e->n_xattrs];
	if (key_how == XA_COPY) {
		k = malloc(key_len + 1);
		if (!k)
			goto fail;
		memcpy(k, key, key_len);
		k[key_len] = '\0';
		key = k;
	}
	x->key = key;
	x->key_len = key_len;
	x->own_key = key_how != XA_KEEP;
	x->value = v;
	x->value_len = value_len;
	x->own_value = value_how != XA_KEEP;
	x->spelled = XV_BYTES;
	x->shared_off = -1;
	e->n_xattrs++;
	return 0;

fail:
	if (value_how != XA_KEEP)
		free((void *)v);
fail_key:
	if (key_how == XA_TAKE)
		free((void *)key);
	return -ENOMEM;
}

/*
 * Add the constant @key with a value of @len bytes spelled (@how) from the
 * digest at @digest, which outlives the writer.
 */
static int set_xattr_spelled(struct eino *e, const char *key, const uint8_t *digest, size_t len,
			     enum xval how)
{
	int r = set_xattr(e, key, strlen(key), XA_KEEP, digest, len, XA_KEEP);

	if (r == 0)
		find_xattr(e, key)->spelled = (uint8_t)how;
	return r;
}

/* Add the constant @key=@value (a constant too unless @value_how says otherwise). */
static int set_xattr_str(struct eino *e, const char *key, const void *value, size_t value_len,
			 enum xa_how value_how)
{
	return set_xattr(e, key, strlen(key), XA_KEEP, value, value_len, value_how);
}

/* ---- the inode list ---- */

static struct eino *new_ino(struct ewriter *w)
{
	struct eino *a;

	if (w->n_inos >= UINT32_MAX)
		return NULL; /* more than the format can number, nor memory hold */
	a = cfs_grow(w->inos, &w->inos_alloc, w->n_inos, sizeof(*a), 256);
	if (!a)
		return NULL;
	w->inos = a;
	memset(&w->inos[w->n_inos], 0, sizeof(w->inos[0]));
	return &w->inos[w->n_inos++];
}

static int ent_cmp(const void *a, const void *b)
{
	const struct edirent *x = a, *y = b;

	return name_cmp(x->name, x->len, y->name, y->len);
}

/* Copy the inode fields of @n (an inode holder) into @e. */
static int fill_ino(struct ewriter *w, struct eino *e, struct cfs_node *n)
{
	e->n = n;
	e->mode = n->mode;
	e->uid = n->uid;
	e->gid = n->gid;
	e->rdev = n->rdev;
	e->mtime = n->mtime_sec;
	e->mtime_nsec = n->mtime_nsec;
	/* A dumpfile's NLINK is kept as given, as mkcomposefs does. */
	e->nlink = n->from_dump && !S_ISDIR(n->mode) ? n->dump_nlink : n->nlink;
	e->size = n->size;
	if (S_ISREG(n->mode) && n->content && n->size > 0)
		e->content = n->content;
	for (size_t i = 0; i < n->n_xattrs; i++) {
		const struct cfs_node_xattr *x = &n->xattrs[i];
		const char *key = x->key;
		size_t key_len = x->key_len;
		enum xa_how key_how = XA_KEEP;
		int r;

		if (w->opts->user_xattrs && strncmp(key, "user.", 5) != 0)
			continue;
		if (strncmp(key, XATTR_TRUSTED_OVERLAY, strlen(XATTR_TRUSTED_OVERLAY)) == 0) {
			/* Escaped one level down, so overlayfs shows it as it was. */
			size_t rest = key_len - strlen(XATTR_TRUSTED_OVERLAY);
			char *esc = malloc(strlen(XATTR_ESCAPED_OVERLAY) + rest + 1);

			if (!esc)
				return -ENOMEM;
			memcpy(esc, XATTR_ESCAPED_OVERLAY, strlen(XATTR_ESCAPED_OVERLAY));
			memcpy(esc + strlen(XATTR_ESCAPED_OVERLAY),
			       x->key + strlen(XATTR_TRUSTED_OVERLAY), rest + 1);
			key = esc;
			key_len = strlen(XATTR_ESCAPED_OVERLAY) + rest;
			key_how = XA_TAKE;
		}
		/* The tree outlives the writer: its values are kept, not copied. */
		r = set_xattr(e, key, key_len, key_how, x->value ? x->value : (const uint8_t *)"",
			      x->value_len, XA_KEEP);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The entries of directory @e (index @self): the tree's children, "." and
 * "..", and for the root the whiteouts 00..ff it lacks; sorted by name. New
 * inodes are appended for the entries that are not hardlinks.
 */
static int add_entries(struct ewriter *w, size_t self)
{
	struct cfs_node *n = w->inos[self].n;
	bool root = self == 0;
	size_t max = n->n_children + 2 + (root ? 256 : 0), k = 0;
	struct edirent *ents = calloc(max, sizeof(*ents));

	if (!ents)
		return -ENOMEM;
	ents[k++] = (struct edirent){ ".", 1, self, NULL, NULL };
	ents[k++] = (struct edirent){ "..", 2, w->inos[self].parent, NULL, NULL };
	for (size_t i = 0; i < n->n_children; i++) {
		struct cfs_node *c = n->children[i];

		if (c->link_target)
			ents[k++] = (struct edirent){ c->name, c->name_len, SIZE_MAX, NULL,
						      cfs_node_inode(c) };
		else
			ents[k++] = (struct edirent){ c->name, c->name_len, SIZE_MAX, c, NULL };
	}
	if (root) {
		/* The children are sorted: a binary search finds each name. */
		for (int i = 0; i < 256; i++) {
			const char *name = w->whiteout_names[i];
			size_t lo = 0, hi = n->n_children;
			bool found = false;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				int c = name_cmp(n->children[mid]->name, n->children[mid]->name_len,
						 name, 2);

				if (c == 0) {
					found = true;
					break;
				}
				if (c < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (!found)
				ents[k++] = (struct edirent){ name, 2, SIZE_MAX, NULL, NULL };
		}
	}
	qsort(ents, k, sizeof(*ents), ent_cmp);
	w->inos[self].ents = ents;
	w->inos[self].n_ents = k;

	/* Breadth-first: queue the new inodes in entry order. */
	for (size_t i = 0; i < k; i++) {
		struct edirent *d = &ents[i];
		struct cfs_node *c = d->node;
		struct eino *e;
		int r;

		if (d->ino != SIZE_MAX || d->link)
			continue; /* ".", "..", or a hardlink: queued where its inode is */
		e = new_ino(w);
		if (!e)
			return -ENOMEM;
		e->parent = self;
		d->ino = w->n_inos - 1;
		if (c) {
			c->inode_index = d->ino;
			c->indexed = true;
			r = fill_ino(w, e, c);
			if (r)
				return r;
		} else {
			/* A whiteout for the lower layers, looking like the root. */
			struct eino *rt = &w->inos[0];
			struct exattr *se;

			e->mode = S_IFCHR | 0644;
			e->nlink = 1;
			e->uid = rt->uid;
			e->gid = rt->gid;
			e->mtime = rt->mtime;
			e->mtime_nsec = rt->mtime_nsec;
			se = find_xattr(rt, "security.selinux");
			if (se) {
				r = set_xattr(e, se->key, se->key_len, XA_COPY, se->value, se->value_len,
					      XA_COPY);
				if (r)
					return r;
			}
		}
	}
	return 0;
}

/* The xattrs overlayfs needs for @e, which is not a directory added later. */
static int overlay_xattrs(struct ewriter *w, size_t idx)
{
	struct eino *e = &w->inos[idx];
	struct cfs_node *n = e->n;
	int r;

	if (S_ISREG(e->mode) && e->size > 0 && !e->content) {
		if (n->has_digest && !n->digest_derived)
			r = set_xattr_spelled(e, XATTR_METACOPY, n->digest, 4 + CFS_DIGEST_SIZE,
					      XV_METACOPY);
		else
			r = set_xattr_str(e, XATTR_METACOPY, "", 0, XA_KEEP);
		if (r)
			return r;
		if (n->payload_object && !n->payload_derived) {
			r = set_xattr_spelled(e, XATTR_REDIRECT, n->digest, 1 + n->payload_len,
					      XV_REDIRECT);
			if (r)
				return r;
		} else if (n->payload_len > 0 && !n->payload_derived) {
			char *path = malloc(n->payload_len + 2), obj[CFS_OBJECT_PATH_SIZE];

			if (!path)
				return -ENOMEM;
			path[0] = '/';
			memcpy(path + 1, cfs_node_payload(n, obj), n->payload_len);
			r = set_xattr_str(e, XATTR_REDIRECT, path, n->payload_len + 1, XA_TAKE);
			if (r)
				return r;
		}
	}
	if (S_ISCHR(e->mode) && e->rdev == 0) {
		/* A whiteout of the image itself: escaped, so it shows as one. */
		struct eino *parent = &w->inos[e->parent];

		e->mode = S_IFREG | (e->mode & 07777);
		r = set_xattr_str(e, XATTR_ESCAPED_WHITEOUT, "", 0, XA_KEEP);
		if (!r)
			r = set_xattr_str(e, XATTR_USER_WHITEOUT, "", 0, XA_KEEP);
		if (!r)
			r = set_xattr_str(parent, XATTR_ESCAPED_WHITEOUTS, "", 0, XA_KEEP);
		if (!r)
			r = set_xattr_str(parent, XATTR_USER_WHITEOUTS, "", 0, XA_KEEP);
		/* Version 1 also marks the directory opaque, in both namespaces. */
		if (!r && w->version >= 1)
			r = set_xattr_str(parent, XATTR_ESCAPED_OPAQUE, "x", 1, XA_KEEP);
		if (!r && w->version >= 1)
			r = set_xattr_str(parent, XATTR_USER_OPAQUE, "x", 1, XA_KEEP);
		if (r)
			return r;
	}
	return 0;
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct exattr *x = a, *y = b;

	return name_cmp(x->key, x->key_len, y->key, y->key_len);
}

/* cfs_tree_walk() visitor: stop (1) at the first whiteout of the tree. */
static int find_whiteout(void *ctx, struct cfs_node *n)
{
	(void)ctx;
	return !n->link_target && S_ISCHR(n->mode) && n->rdev == 0;
}

/* Build the inode list: numbering, entries, xattrs. */
static int collect(struct ewriter *w, struct cfs_node *root)
{
	struct eino *e;
	int r;

	for (int i = 0; i < 256; i++) {
		static const char hex[] = "0123456789abcdef";

		w->whiteout_names[i][0] = hex[i >> 4];
		w->whiteout_names[i][1] = hex[i & 15];
		w->whiteout_names[i][2] = '\0';
	}
	e = new_ino(w);
	if (!e)
		return -ENOMEM;
	e->parent = 0;
	root->inode_index = 0;
	root->indexed = true;
	r = fill_ino(w, e, root);
	if (r)
		return r;

	/*
	 * Breadth-first: each directory appends its entries' inodes as it is
	 * reached, so the list grows while it is walked. The whiteouts added
	 * to the root are left as they are: they are meant for overlayfs.
	 */
	r = set_xattr_str(&w->inos[0], XATTR_OPAQUE, "y", 1, XA_KEEP);
	for (size_t i = 0; !r && i < w->n_inos; i++) {
		if (!w->inos[i].n)
			continue;
		r = overlay_xattrs(w, i);
		if (!r && S_ISDIR(w->inos[i].mode))
			r = add_entries(w, i);
	}
	return r;
}

/* ---- layout ---- */

static void dir_size(struct eino *e)
{
	uint32_t n_blocks = 0;
	size_t block = 0;

	for (size_t i = 0; i < e->n_ents; i++) {
		size_t len = sizeof(struct erofs_dirent) + e->ents[i].len;

		if (block + len > EROFS_BLKSIZ) {
			n_blocks++;
			block = 0;
		}
		block += len;
	}
	/* A tail of more than half a block gets a block of its own. */
	if (block > EROFS_BLKSIZ / 2) {
		n_blocks++;
		block = 0;
	}
	e->n_blocks = n_blocks;
	e->tailsize = (uint32_t)block;
}

/* log2 of the chunk size for a file of @size bytes: one chunk if possible. */
static uint32_t chunk_bits(uint64_t size)
{
	uint32_t bits = 0;

	for (uint64_t v = size - 1; v; v >>= 1)
		bits++;
	if (bits < EROFS_BLKSIZ_BITS)
		bits = EROFS_BLKSIZ_BITS;
	if (bits - EROFS_BLKSIZ_BITS > EROFS_CHUNK_FORMAT_BLKBITS_MASK)
		bits = EROFS_CHUNK_FORMAT_BLKBITS_MASK + EROFS_BLKSIZ_BITS;
	return bits;
}

static uint64_t chunk_count(uint64_t size)
{
	uint32_t bits = chunk_bits(size);

	return (size + (1ULL << bits) - 1) >> bits;
}

static uint64_t ino_size(const struct eino *e)
{
	if (S_ISLNK(e->mode))
		return e->n->payload_len;
	if (S_ISDIR(e->mode))
		return (uint64_t)e->n_blocks * EROFS_BLKSIZ + e->tailsize;
	if (S_ISREG(e->mode))
		return e->size;
	return 0;
}

static void data_size(struct eino *e)
{
	e->n_blocks = 0;
	e->tailsize = 0;
	if (S_ISDIR(e->mode)) {
		dir_size(e);
	} else if (S_ISLNK(e->mode)) {
		e->tailsize = (uint32_t)e->n->payload_len;
	} else if (S_ISREG(e->mode) && e->size > 0) {
		if (e->content) {
			e->n_blocks = (uint32_t)(e->size / EROFS_BLKSIZ);
			e->tailsize = e->size % EROFS_BLKSIZ;
			if (e->tailsize > EROFS_BLKSIZ / 2) {
				e->n_blocks++;
				e->tailsize = 0;
			}
		} else {
			e->tailsize = (uint32_t)(chunk_count(e->size) * 4);
		}
	}
}

static bool fits_compact(const struct ewriter *w, const struct eino *e)
{
	uint64_t size = S_ISDIR(e->mode)   ? (uint64_t)e->n_blocks * EROFS_BLKSIZ + e->tailsize
			: S_ISLNK(e->mode) ? e->n->payload_len
					   : e->size;

	return e->mtime == w->min_mtime && e->mtime_nsec == w->min_mtime_nsec &&
	       e->nlink <= UINT16_MAX && e->uid <= UINT16_MAX && e->gid <= UINT16_MAX &&
	       size <= UINT32_MAX;
}

/*
 * Padding before the inode at @pos so that its tail does not cross a block;
 * a tail that cannot be kept in one block goes to a data block instead.
 */
static bool is_chunked(const struct eino *e)
{
	return S_ISREG(e->mode) && e->size > 0 && !e->content;
}

static uint64_t tail_padding(struct eino *e, uint64_t pos, size_t head)
{
	uint64_t remainder, pad;

	if (S_ISLNK(e->mode)) {
		/*
		 * The kernel wants a symlink's inode and target in one block;
		 * a target too long for that goes to a data block, and the inode
		 * is placed as if it were inline all the same.
		 */
		uint64_t total = head + e->tailsize;

		if (total >= EROFS_BLKSIZ) {
			e->n_blocks = 1;
			e->tailsize = 0;
		}
		if (pos / EROFS_BLKSIZ != (pos + total - 1) / EROFS_BLKSIZ)
			return round_up(pos, EROFS_BLKSIZ) - pos;
		return 0;
	}
	if (is_chunked(e) && e->tailsize + e->xattr_size % EROFS_SLOTSIZE > EROFS_BLKSIZ) {
		/* A block map too big to inline: a data block, the inode on a block. */
		e->n_blocks = 1;
		e->tailsize = 0;
		return round_up(pos, EROFS_BLKSIZ) - pos;
	}
	remainder = EROFS_BLKSIZ - (pos + head) % EROFS_BLKSIZ;
	if (remainder >= e->tailsize)
		return 0;
	pad = round_up(remainder, EROFS_SLOTSIZE);
	remainder = EROFS_BLKSIZ - (pos + head + pad) % EROFS_BLKSIZ;
	if (e->tailsize <= remainder)
		return pad;
	e->n_blocks++;
	e->tailsize = 0;
	return 0;
}

/* ---- shared xattrs ---- */

struct xcount {
	struct exattr *x;
	uint64_t hash;
	uint32_t count;
	int64_t off;
};

static uint64_t xattr_hash(const struct exattr *x)
{
	uint8_t buf[XVAL_MAX];
	uint64_t h = cfs_fnv1a(CFS_FNV1A_INIT, x->key, x->key_len);

	h = cfs_fnv1a(h, "\xff", 1); /* between key and value */
	return cfs_fnv1a(h, xval(x, buf), x->value_len);
}

static bool xattr_eq(const struct exattr *a, const struct exattr *b)
{
	uint8_t abuf[XVAL_MAX], bbuf[XVAL_MAX];

	return a->key_len == b->key_len && a->value_len == b->value_len &&
	       memcmp(a->key, b->key, a->key_len) == 0 &&
	       memcmp(xval(a, abuf), xval(b, bbuf), a->value_len) == 0;
}

/* The shared order: keys descending, then longer values, then bytes descending. */
static int shared_cmp(const void *a, const void *b)
{
	const struct exattr *x = (*(struct xcount *const *)a)->x;
	const struct exattr *y = (*(struct xcount *const *)b)->x;
	uint8_t xbuf[XVAL_MAX], ybuf[XVAL_MAX];
	int r = name_cmp(y->key, y->key_len, x->key, x->key_len);

	if (r)
		return r;
	if (x->value_len != y->value_len)
		return x->value_len < y->value_len ? 1 : -1;
	return memcmp(xval(y, ybuf), xval(x, xbuf), x->value_len);
}

static struct xcount *lookup_xattr(struct xcount *table, size_t size, const struct exattr *x,
				   uint64_t h)
{
	size_t j = (size_t)h & (size - 1);

	while (table[j].x && !(table[j].hash == h && xattr_eq(table[j].x, x)))
		j = (j + 1) & (size - 1);
	return &table[j];
}

static int share_xattrs(struct ewriter *w)
{
	size_t total = 0, size = 16, n = 0;
	struct xcount *table, **sorted;
	uint64_t off = 0;

	for (size_t i = 0; i < w->n_inos; i++)
		total += w->inos[i].n_xattrs;
	while (size < 2 * total)
		size *= 2;
	table = calloc(size, sizeof(*table));
	sorted = calloc(total ? total : 1, sizeof(*sorted));
	w->shared = calloc(total ? total : 1, sizeof(*w->shared));
	if (!table || !sorted || !w->shared) {
		free(table);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->n_inos; i++) {
		for (size_t k = 0; k < w->inos[i].n_xattrs; k++) {
			struct exattr *x = &w->inos[i].xattrs[k];
			uint64_t h = xattr_hash(x);
			struct xcount *c = lookup_xattr(table, size, x, h);

			if (!c->x) {
				c->x = x;
				c->hash = h;
				sorted[n++] = c;
			}
			c->count++;
		}
	}
	qsort(sorted, n, sizeof(*sorted), shared_cmp);
	for (size_t i = 0; i < n; i++) {
		sorted[i]->off = -1;
		if (sorted[i]->count > 1) {
			sorted[i]->off = (int64_t)off;
			w->shared[w->n_shared++] = sorted[i]->x;
			off += xattr_entry_size(sorted[i]->x);
		}
	}
	w->shared_size = off;
	for (size_t i = 0; i < w->n_inos; i++) {
		struct eino *e = &w->inos[i];
		size_t inline_size = 0;

		e->n_shared = 0;
		for (size_t k = 0; k < e->n_xattrs; k++) {
			struct exattr *x = &e->xattrs[k];
			struct xcount *c = lookup_xattr(table, size, x, xattr_hash(x));

			x->shared_off = -1;
			if (c->off >= 0 && e->n_shared < EROFS_XATTR_LONG_PREFIX) {
				x->shared_off = c->off;
				e->n_shared++;
			} else {
				inline_size += xattr_entry_size(x);
			}
		}
		e->xattr_size = 0;
		if (e->n_xattrs)
			e->xattr_size = (uint32_t)round_up(sizeof(struct erofs_xattr_ibody_header) +
							   4 * e->n_shared + inline_size, 4);
	}
	free(table);
	free(sorted);
	return 0;
}

static int layout(struct ewriter *w)
{
	uint64_t pos = EROFS_SUPER_OFFSET + sizeof(struct erofs_super_block);
	uint64_t blk;

	for (size_t i = 0; i < w->n_inos; i++) {
		struct eino *e = &w->inos[i];
		size_t head;

		data_size(e);
		e->compact = fits_compact(w, e);
		head = (e->compact ? sizeof(struct erofs_inode_compact)
				   : sizeof(struct erofs_inode_extended)) + e->xattr_size;
		pos = round_up(pos, EROFS_SLOTSIZE);
		pos += tail_padding(e, pos, head);
		e->pos = pos;
		w->n_data_blocks += e->n_blocks;
		pos += head + e->tailsize;
	}
	if (w->inos[0].pos / EROFS_SLOTSIZE > UINT16_MAX) {
		cfs_msg("the root inode does not fit in the superblock");
		return -EFBIG;
	}
	w->inodes_end = round_up(pos, EROFS_SLOTSIZE);
	w->data_start = round_up(w->inodes_end + w->shared_size, EROFS_BLKSIZ);
	blk = w->data_start / EROFS_BLKSIZ;
	for (size_t i = 0; i < w->n_inos; i++) {
		struct eino *e = &w->inos[i];

		if (e->n_blocks) {
			e->blkaddr = blk;
			blk += e->n_blocks;
		}
	}
	if (blk > UINT32_MAX) {
		cfs_msg("the image would have more than 2^32 blocks");
		return -EFBIG;
	}
	return 0;
}

/* ---- encoding ---- */

static uint8_t file_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return EROFS_FT_REG_FILE;
	case S_IFDIR:
		return EROFS_FT_DIR;
	case S_IFCHR:
		return EROFS_FT_CHRDEV;
	case S_IFBLK:
		return EROFS_FT_BLKDEV;
	case S_IFIFO:
		return EROFS_FT_FIFO;
	case S_IFSOCK:
		return EROFS_FT_SOCK;
	case S_IFLNK:
		return EROFS_FT_SYMLINK;
	}
	return EROFS_FT_UNKNOWN;
}

static uint8_t *put_xattr(uint8_t *p, const struct exattr *x)
{
	struct erofs_xattr_entry ent = { 0 };
	uint8_t buf[XVAL_MAX];
	const char *suffix;
	size_t len;

	ent.e_name_index = xattr_index(x, &suffix, &len);
	ent.e_name_len = (u8)len;
	ent.e_value_size = cpu_to_le16((u16)x->value_len);
	memcpy(p, &ent, sizeof(ent));
	memcpy(p + sizeof(ent), suffix, len);
	memcpy(p + sizeof(ent) + len, xval(x, buf), x->value_len);
	return p + xattr_entry_size(x);
}

/* Entries [first, first + count) of @e as one directory block at @p. */
static void put_dirents(const struct ewriter *w, const struct eino *e, size_t first,
			size_t count, uint8_t *p)
{
	size_t nameoff = count * sizeof(struct erofs_dirent);

	for (size_t i = first; i < first + count; i++) {
		const struct eino *t = &w->inos[e->ents[i].ino];
		struct erofs_dirent d = { 0 };

		d.nid = cpu_to_le64(t->pos / EROFS_SLOTSIZE);
		d.nameoff = cpu_to_le16((u16)nameoff);
		d.file_type = file_type(t->mode);
		memcpy(p + (i - first) * sizeof(d), &d, sizeof(d));
		memcpy(p + nameoff, e->ents[i].name, e->ents[i].len);
		nameoff += e->ents[i].len;
	}
}

/*
 * A directory's blocks (to @blocks, its first, unless NULL) and tail (to
 * @tail unless NULL), split as dir_size() counted them.
 */
static void put_dir(const struct ewriter *w, const struct eino *e, uint8_t *blocks, uint8_t *tail)
{
	size_t block = 0, first = 0, written = 0;

	for (size_t i = 0; i < e->n_ents; i++) {
		size_t len = sizeof(struct erofs_dirent) + e->ents[i].len;

		if (block + len > EROFS_BLKSIZ) {
			if (blocks)
				put_dirents(w, e, first, i - first, blocks + written * EROFS_BLKSIZ);
			written++;
			block = 0;
			first = i;
		}
		block += len;
	}
	if (written < e->n_blocks) {
		if (blocks)
			put_dirents(w, e, first, e->n_ents - first, blocks + written * EROFS_BLKSIZ);
		return;
	}
	if (block > 0 && tail)
		put_dirents(w, e, first, e->n_ents - first, tail);
}

/* @e's data blocks (e->n_blocks of them, zeroed) at @blocks. */
static void put_blocks(const struct ewriter *w, const struct eino *e, uint8_t *blocks)
{
	if (S_ISDIR(e->mode))
		put_dir(w, e, blocks, NULL);
	else if (S_ISLNK(e->mode))
		memcpy(blocks, e->n->payload, e->n->payload_len);
	else if (S_ISREG(e->mode) && e->content)
		memcpy(blocks, e->content, e->size - e->tailsize);
	else if (is_chunked(e))
		memset(blocks, 0xff, EROFS_BLKSIZ); /* a block map moved out: every chunk a hole */
}

/*
 * Inode @e (number @index) with its xattrs and tail at @p; its data blocks
 * are put_blocks()'.
 */
static void put_inode(const struct ewriter *w, const struct eino *e, size_t index, uint8_t *p)
{
	uint8_t *start = p;
	uint16_t layout = e->tailsize ? EROFS_INODE_FLAT_INLINE : EROFS_INODE_FLAT_PLAIN;
	union erofs_inode_i_u iu = { 0 };
	uint64_t nchunks = 0;

	if (is_chunked(e)) {
		layout = EROFS_INODE_CHUNK_BASED;
		nchunks = e->tailsize / 4;
	}
	if (e->n_blocks)
		iu.raw_blkaddr = cpu_to_le32((u32)e->blkaddr);
	else if (S_ISCHR(e->mode) || S_ISBLK(e->mode))
		iu.rdev = cpu_to_le32(e->rdev);
	if (layout == EROFS_INODE_CHUNK_BASED)
		iu.c.format = cpu_to_le16((u16)(chunk_bits(e->size) - EROFS_BLKSIZ_BITS));

	if (e->compact) {
		struct erofs_inode_compact c = { 0 };

		c.i_format = cpu_to_le16((u16)(layout << EROFS_I_DATALAYOUT_BIT |
					       EROFS_INODE_COMPACT << EROFS_I_VERSION_BIT));
		c.i_xattr_icount = cpu_to_le16(erofs_xattr_icount(e->xattr_size));
		c.i_mode = cpu_to_le16((u16)e->mode);
		c.i_nlink = cpu_to_le16((u16)e->nlink);
		c.i_size = cpu_to_le32((u32)ino_size(e));
		c.i_u = iu;
		c.i_ino = cpu_to_le32((u32)index);
		c.i_uid = cpu_to_le16((u16)e->uid);
		c.i_gid = cpu_to_le16((u16)e->gid);
		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
	} else {
		struct erofs_inode_extended x = { 0 };

		x.i_format = cpu_to_le16((u16)(layout << EROFS_I_DATALAYOUT_BIT |
					       EROFS_INODE_EXTENDED << EROFS_I_VERSION_BIT));
		x.i_xattr_icount = cpu_to_le16(erofs_xattr_icount(e->xattr_size));
		x.i_mode = cpu_to_le16((u16)e->mode);
		x.i_size = cpu_to_le64(ino_size(e));
		x.i_u = iu;
		x.i_ino = cpu_to_le32((u32)index);
		x.i_uid = cpu_to_le32(e->uid);
		x.i_gid = cpu_to_le32(e->gid);
		x.i_mtime = cpu_to_le64((u64)e->mtime);
		x.i_mtime_nsec = cpu_to_le32(e->mtime_nsec);
		x.i_nlink = cpu_to_le32(e->nlink);
		memcpy(p, &x, sizeof(x));
		p += sizeof(x);
	}

	if (e->xattr_size) {
		struct erofs_xattr_ibody_header h = { 0 };
		uint32_t filter = 0;

		for (size_t k = 0; k < e->n_xattrs; k++) {
			const char *suffix;
			size_t len;
			uint8_t idx = xattr_index(&e->xattrs[k], &suffix, &len);

			filter |= 1U << (xxh32(suffix, len, EROFS_XATTR_FILTER_SEED + idx) &
					 (EROFS_XATTR_FILTER_BITS - 1));
		}
		h.h_name_filter = cpu_to_le32(EROFS_XATTR_FILTER_DEFAULT & ~filter);
		h.h_shared_count = (u8)e->n_shared;
		memcpy(p, &h, sizeof(h));
		p += sizeof(h);
		for (size_t k = 0; k < e->n_xattrs; k++) {
			if (e->xattrs[k].shared_off >= 0) {
				__le32 id = cpu_to_le32(
					(u32)((w->inodes_end % EROFS_BLKSIZ +
					       (uint64_t)e->xattrs[k].shared_off) / 4));

				memcpy(p, &id, sizeof(id));
				p += sizeof(id);
			}
		}
		for (size_t k = 0; k < e->n_xattrs; k++)
			if (e->xattrs[k].shared_off < 0)
				p = put_xattr(p, &e->xattrs[k]);
		p = start + (e->compact ? sizeof(struct erofs_inode_compact)
				       : sizeof(struct erofs_inode_extended)) +
		    e->xattr_size;
	}

	if (S_ISDIR(e->mode)) {
		put_dir(w, e, NULL, p);
	} else if (S_ISLNK(e->mode)) {
		if (!e->n_blocks)
			memcpy(p, e->n->payload, e->n->payload_len);
	} else if (S_ISREG(e->mode) && e->content) {
		memcpy(p, e->content + (e->size - e->tailsize), e->tailsize);
	} else if (is_chunked(e) && !e->n_blocks) {
		memset(p, 0xff, nchunks * 4); /* every chunk a hole */
	}
}

/*
 * The image is written as it is encoded, front to back, through a window
 * of a few blocks rather than built whole in memory: the metadata (each
 * inode at its place, then the shared xattrs), then the data blocks in the
 * order layout() gave them, which is the inodes' order.
 */
#define WINDOW_SIZE (256 * EROFS_BLKSIZ)

struct out {
	int fd;
	uint8_t *buf; /* WINDOW_SIZE bytes: the image from @at on */
	uint64_t at;
};

/* Write the window up to image offset @to, which is then its start. */
static int out_flush(struct out *o, uint64_t to)
{
	int r = cfs_write_all(o->fd, o->buf, (size_t)(to - o->at));

	memset(o->buf, 0, WINDOW_SIZE);
	o->at = to;
	return r;
}

/*
 * The window's bytes at image offset @pos, with room for @len (a few
 * blocks at most) there: what comes before @pos is written out when it must be.
 */
static int out_at(struct out *o, uint64_t pos, size_t len, uint8_t **p)
{
	int r = 0;

	if (pos + len > o->at + WINDOW_SIZE)
		r = out_flush(o, pos);
	*p = o->buf + (pos - o->at);
	return r;
}

/* The image with header @hdr and superblock @sb, written to @fd. */
static int write_image(const struct ewriter *w, const struct cfs_erofs_header *hdr,
		       const struct erofs_super_block *sb, int fd)
{
	struct out o = { .fd = fd };
	uint8_t *blocks = NULL, *p;
	size_t blocks_size = 0;
	uint64_t pos;
	int r = 0;

	o.buf = calloc(1, WINDOW_SIZE);
	if (!o.buf)
		return -ENOMEM;
	memcpy(o.buf, hdr, sizeof(*hdr));
	memcpy(o.buf + EROFS_SUPER_OFFSET, sb, sizeof(*sb));
	/* An inode with its xattrs (a block at most) and its tail fits in three. */
	for (size_t i = 0; !r && i < w->n_inos; i++) {
		r = out_at(&o, w->inos[i].pos, 3 * EROFS_BLKSIZ, &p);
		if (!r)
			put_inode(w, &w->inos[i], i, p);
	}
	pos = w->inodes_end;
	for (size_t i = 0; !r && i < w->n_shared; i++) {
		r = out_at(&o, pos, EROFS_BLKSIZ, &p);
		if (!r)
			pos += (uint64_t)(put_xattr(p, w->shared[i]) - p);
	}
	/* The metadata is written up to where the data starts, zeros after it. */
	while (!r && o.at + WINDOW_SIZE < w->data_start)
		r = out_flush(&o, o.at + WINDOW_SIZE);
	if (!r)
		r = out_flush(&o, w->data_start);
	for (size_t i = 0; !r && i < w->n_inos; i++) {
		const struct eino *e = &w->inos[i];
		size_t size = (size_t)e->n_blocks * EROFS_BLKSIZ;

		if (!e->n_blocks)
			continue;
		if (size > blocks_size) {
			free(blocks);
			blocks_size = size;
			blocks = malloc(size);
			if (!blocks) {
				r = -ENOMEM;
				break;
			}
		}
		memset(blocks, 0, size);
		put_blocks(w, e, blocks);
		r = cfs_write_all(fd, blocks, size);
	}
	free(blocks);
	free(o.buf);
	return r;
}

static void free_writer(struct ewriter *w)
{
	for (size_t i = 0; i < w->n_inos; i++) {
		for (size_t k = 0; k < w->inos[i].n_xattrs; k++) {
			struct exattr *x = &w->inos[i].xattrs[k];

			if (x->own_key)
				free((void *)x->key);
			if (x->own_value)
				free((void *)x->value);
		}
		free(w->inos[i].xattrs);
		free(w->inos[i].ents);
	}
	free(w->inos);
	free(w->shared);
}

/* Check what the format cannot hold, naming the file. */
static int check_limits(const struct eino *e)
{
	const char *what = NULL;

	for (size_t k = 0; k < e->n_xattrs && !what; k++) {
		const char *suffix;
		size_t len;

		xattr_index(&e->xattrs[k], &suffix, &len);
		if (len > UINT8_MAX)
			what = "xattr name too long once escaped";
		else if (xattr_entry_size(&e->xattrs[k]) > EROFS_BLKSIZ)
			what = "xattr larger than a block";
	}
	if (!what && e->n_xattrs && e->xattr_size > EROFS_BLKSIZ)
		what = "xattrs take more than a block";
	if (!what && is_chunked(e) && chunk_count(e->size) > EROFS_BLKSIZ / 4)
		what = "file too large for the format";
	if (!what)
		return 0;
	if (e->n) {
		char *where = cfs_node_where(e->n);

		cfs_msg("%s: %s", where ? where : e->n->name, what);
		free(where);
	} else {
		cfs_msg("%s", what);
	}
	return -EFBIG;
}

int cfs_erofs_write(struct cfs_node *root, const struct cfs_write_options *opts, int fd)
{
	static const struct cfs_write_options defaults = { .max_version = 1 };
	struct ewriter w = { .opts = opts ? opts : &defaults };
	struct cfs_erofs_header hdr = { 0 };
	struct erofs_super_block sb = { 0 };
	uint64_t size;
	int r;

	if (w.opts->min_version > CFS_EROFS_COMPOSEFS_VERSION_MAX ||
	    w.opts->max_version > CFS_EROFS_COMPOSEFS_VERSION_MAX) {
		cfs_msg("composefs version must be 0 or 1");
		return -EINVAL;
	}
	/* The oldest version that can hold the tree, within the bounds. */
	w.version = w.opts->min_version;
	if (w.version < 1 && w.opts->max_version >= 1) {
		r = cfs_tree_walk(root, find_whiteout, NULL);
		if (r < 0)
			return r;
		if (r == 1)
			w.version = 1;
	}

	r = collect(&w, root);
	if (r)
		goto out;
	w.min_mtime = w.inos[0].mtime;
	w.min_mtime_nsec = w.inos[0].mtime_nsec;
	for (size_t i = 0; i < w.n_inos; i++) {
		struct eino *e = &w.inos[i];

		/* Hardlink entries point at inodes numbered by now. */
		for (size_t k = 0; k < e->n_ents; k++)
			if (e->ents[k].link)
				e->ents[k].ino = (size_t)e->ents[k].link->inode_index;
		if (e->n_xattrs > 1)
			qsort(e->xattrs, e->n_xattrs, sizeof(*e->xattrs), xattr_cmp);
		if (e->mtime < w.min_mtime ||
		    (e->mtime == w.min_mtime && e->mtime_nsec < w.min_mtime_nsec)) {
			w.min_mtime = e->mtime;
			w.min_mtime_nsec = e->mtime_nsec;
		}
		if (find_xattr(e, "system.posix_acl_access") ||
		    find_xattr(e, "system.posix_acl_default"))
			w.has_acl = true;
	}
	r = share_xattrs(&w);
	if (r)
		goto out;
	for (size_t i = 0; i < w.n_inos; i++) {
		r = check_limits(&w.inos[i]);
		if (r)
			goto out;
	}
	r = layout(&w);
	if (r)
		goto out;

	size = w.data_start + w.n_data_blocks * EROFS_BLKSIZ;
	hdr.magic = cpu_to_le32(CFS_EROFS_MAGIC);
	hdr.version = cpu_to_le32(CFS_EROFS_VERSION);
	hdr.flags = cpu_to_le32(w.has_acl ? CFS_EROFS_FLAGS_HAS_ACL : 0);
	hdr.composefs_version = cpu_to_le32(w.version);

	sb.magic = cpu_to_le32(EROFS_SUPER_MAGIC_V1);
	sb.feature_compat = cpu_to_le32(EROFS_FEATURE_COMPAT_MTIME |
					EROFS_FEATURE_COMPAT_XATTR_FILTER);
	sb.blkszbits = EROFS_BLKSIZ_BITS;
	sb.root_nid = cpu_to_le16((u16)(w.inos[0].pos / EROFS_SLOTSIZE));
	sb.inos = cpu_to_le64(w.n_inos);
	sb.build_time = cpu_to_le64((u64)w.min_mtime);
	sb.build_time_nsec = cpu_to_le32(w.min_mtime_nsec);
	sb.blocks = cpu_to_le32((u32)(size / EROFS_BLKSIZ));
	sb.meta_blkaddr = cpu_to_le32(0);
	sb.xattr_blkaddr = cpu_to_le32((u32)(w.inodes_end / EROFS_BLKSIZ));
	r = write_image(&w, &hdr, &sb, fd);
out:
	free_writer(&w);
	return r;
}
