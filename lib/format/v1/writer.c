// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_v1_write(): encode a finished tree as a version 1 descriptor.
 *
 * The image is a function of the tree alone, so the same input always gives
 * the same bytes. Inodes are numbered breadth-first from the root, each
 * directory's entries in their sorted order, a hardlinked inode where it is
 * first met; every inode's payload is written just before its fixed chunk.
 * The variable data section holds the distinct xattr sets (each stored once,
 * in order of first use), then every directory's entry chunks in inode
 * order. No item there spans a CFS_PAGE_SIZE boundary of the file: an item
 * that would is moved to the next page and the gap left zero. Fields equal
 * to their defaults are left out through the flags word.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/internal.h"
#include "base/tree.h"
#include "v1.h"
#include "cfs-format.h"

/* An xattr set, encoded as it is stored, and where it went. */
struct xset {
	uint8_t *data;
	size_t len;
	uint64_t hash;
	uint64_t off; /* in the variable data section */
};

/* One chunk of a directory's entries: children[first .. first + count). */
struct chunk {
	size_t first;
	size_t count;
	size_t size;
	uint64_t off;
};

/* What the writer works out for each inode before writing anything. */
struct ino_info {
	struct cfs_node *n;
	uint32_t flags;
	uint32_t payload_len;
	size_t xset; /* index into the sets, or SIZE_MAX */
	size_t first_chunk; /* directories: index into the chunks */
	size_t n_chunks;
};

struct writer {
	struct ino_info *inos;
	size_t n_inos;
	struct xset *sets;
	size_t n_sets, sets_alloc;
	size_t *set_table; /* open addressing: 1 + index into sets, 0 free */
	size_t set_table_size;
	struct chunk *chunks;
	size_t n_chunks, chunks_alloc;
};

static void put_le16(uint8_t *p, uint16_t v)
{
	v = cpu_to_le16(v);
	memcpy(p, &v, sizeof(v));
}

static void put_le32(uint8_t *p, uint32_t v)
{
	v = cpu_to_le32(v);
	memcpy(p, &v, sizeof(v));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	v = cpu_to_le64(v);
	memcpy(p, &v, sizeof(v));
}

static void msg_node(const struct cfs_node *n, const char *what)
{
	char *where = cfs_node_where(n);

	cfs_msg("%s: %s", where ? where : n->name, what);
	free(where);
}

static int set_table_grow(struct writer *w)
{
	size_t size = w->set_table_size ? 2 * w->set_table_size : 256;
	size_t *t = calloc(size, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < w->n_sets; i++) {
		size_t j = (size_t)w->sets[i].hash & (size - 1);

		while (t[j])
			j = (j + 1) & (size - 1);
		t[j] = i + 1;
	}
	free(w->set_table);
	w->set_table = t;
	w->set_table_size = size;
	return 0;
}

/*
 * The index of @n's xattr set, adding it when it is new, or SIZE_MAX when @n
 * has no xattrs. Keys are sorted first, so equal sets encode equally.
 */
static int intern_xattrs(struct writer *w, struct cfs_node *n, size_t *out)
{
	size_t len = cfs_xattr_header_size(n->n_xattrs), pos, j;
	struct xset *sets;
	uint8_t *data;
	uint64_t hash;
	int r;

	*out = SIZE_MAX;
	if (n->n_xattrs == 0)
		return 0;
	cfs_node_sort_xattrs(n);
	for (size_t i = 0; i < n->n_xattrs; i++) {
		if (n->xattrs[i].key_len == 0 || n->xattrs[i].key_len > CFS_MAX_NAME_LEN) {
			msg_node(n, "xattr key is empty or longer than 255 bytes");
			return -EINVAL;
		}
		if (n->xattrs[i].value_len > CFS_MAX_XATTRS_SIZE)
			len = SIZE_MAX / 2;
		else
			len += n->xattrs[i].key_len + n->xattrs[i].value_len;
	}
	if (n->n_xattrs > UINT16_MAX || len > CFS_MAX_XATTRS_SIZE) {
		msg_node(n, "xattrs take more than 4096 bytes");
		return -E2BIG;
	}
	data = malloc(len);
	if (!data)
		return -ENOMEM;
	put_le16(data, (uint16_t)n->n_xattrs);
	pos = cfs_xattr_header_size(n->n_xattrs);
	for (size_t i = 0; i < n->n_xattrs; i++) {
		const struct cfs_node_xattr *x = &n->xattrs[i];

		put_le16(data + 2 + 4 * i, (uint16_t)x->key_len);
		put_le16(data + 4 + 4 * i, (uint16_t)x->value_len);
		memcpy(data + pos, x->key, x->key_len);
		pos += x->key_len;
		if (x->value_len)
			memcpy(data + pos, x->value, x->value_len);
		pos += x->value_len;
	}

	hash = cfs_fnv1a(CFS_FNV1A_INIT, data, len);
	if (2 * (w->n_sets + 1) > w->set_table_size) {
		r = set_table_grow(w);
		if (r)
			goto err;
	}
	for (j = (size_t)hash & (w->set_table_size - 1); w->set_table[j];
	     j = (j + 1) & (w->set_table_size - 1)) {
		struct xset *s = &w->sets[w->set_table[j] - 1];

		if (s->hash == hash && s->len == len && memcmp(s->data, data, len) == 0) {
			free(data);
			*out = w->set_table[j] - 1;
			return 0;
		}
	}
	sets = cfs_grow(w->sets, &w->sets_alloc, w->n_sets, sizeof(*sets), 64);
	if (!sets) {
		r = -ENOMEM;
		goto err;
	}
	w->sets = sets;
	w->sets[w->n_sets] = (struct xset){ .data = data, .len = len, .hash = hash };
	w->set_table[j] = w->n_sets + 1;
	*out = w->n_sets++;
	return 0;
err:
	free(data);
	return r;
}

static int add_chunk(struct writer *w, size_t first)
{
	struct chunk *c = cfs_grow(w->chunks, &w->chunks_alloc, w->n_chunks, sizeof(*c), 64);

	if (!c)
		return -ENOMEM;
	w->chunks = c;
	w->chunks[w->n_chunks++] = (struct chunk){ .first = first };
	return 0;
}

/* Split directory @ii's sorted entries into chunks of at most 4096 bytes. */
static int split_chunks(struct writer *w, struct ino_info *ii)
{
	struct cfs_node *d = ii->n;
	struct chunk *c = NULL;
	int r;

	ii->first_chunk = w->n_chunks;
	for (size_t i = 0; i < d->n_children; i++) {
		struct cfs_node *e = d->children[i];
		size_t need = sizeof(struct cfs_dentry) + e->name_len;

		if (e->name_len == 0 || e->name_len > CFS_MAX_NAME_LEN) {
			msg_node(e, "name is empty or longer than 255 bytes");
			return -EINVAL;
		}
		if (!c || c->size + need > CFS_MAX_DIR_CHUNK_SIZE) {
			r = add_chunk(w, i);
			if (r)
				return r;
			c = &w->chunks[w->n_chunks - 1];
		}
		c->count++;
		c->size += need;
	}
	ii->n_chunks = w->n_chunks - ii->first_chunk;
	if (ii->n_chunks > CFS_MAX_DIR_CHUNKS)
		return -E2BIG;
	return 0;
}

/* Work out flags and payload of inode @ii; directories are already split. */
static int plan_inode(struct writer *w, struct ino_info *ii)
{
	struct cfs_node *n = ii->n;
	uint32_t flags = 0;
	uint8_t from_payload[CFS_DIGEST_SIZE];
	int r;

	r = intern_xattrs(w, n, &ii->xset);
	if (r)
		return r;
	if (S_ISDIR(n->mode)) {
		ii->payload_len = ii->n_chunks ? (uint32_t)cfs_dir_header_size(ii->n_chunks) : 0;
	} else if (S_ISREG(n->mode) || S_ISLNK(n->mode)) {
		if (n->payload_len >= CFS_MAX_PAYLOAD_PATH) { /* PATH_MAX with the NUL */
			msg_node(n, "payload path too long");
			return -ENAMETOOLONG;
		}
		if (S_ISLNK(n->mode) && n->payload_len == 0) {
			msg_node(n, "symlink without a target");
			return -EINVAL;
		}
		ii->payload_len = (uint32_t)n->payload_len;
	} else {
		ii->payload_len = 0;
	}

	if (ii->payload_len)
		flags |= CFS_INODE_FLAGS_PAYLOAD;
	if (n->mode != CFS_INODE_DEFAULT_MODE)
		flags |= CFS_INODE_FLAGS_MODE;
	if (n->nlink != (S_ISDIR(n->mode) ? CFS_INODE_DEFAULT_NLINK_DIR : CFS_INODE_DEFAULT_NLINK))
		flags |= CFS_INODE_FLAGS_NLINK;
	if (n->uid != CFS_INODE_DEFAULT_UIDGID || n->gid != CFS_INODE_DEFAULT_UIDGID)
		flags |= CFS_INODE_FLAGS_UIDGID;
	if ((S_ISCHR(n->mode) || S_ISBLK(n->mode)) && n->rdev != CFS_INODE_DEFAULT_RDEV)
		flags |= CFS_INODE_FLAGS_RDEV;
	if (n->mtime_sec != CFS_INODE_DEFAULT_TIMES)
		flags |= CFS_INODE_FLAGS_TIMES;
	if (n->mtime_nsec != 0)
		flags |= CFS_INODE_FLAGS_TIMES_NSEC;
	if (S_ISREG(n->mode)) {
		if (n->size & 0xffffffffULL)
			flags |= CFS_INODE_FLAGS_LOW_SIZE;
		if (n->size >> 32)
			flags |= CFS_INODE_FLAGS_HIGH_SIZE;
		if (n->has_digest) {
			/* The payload spells the digest: no need to store it twice. */
			if (n->payload_object ||
			    (n->payload &&
			     cfs_digest_from_payload(n->payload, (u32)n->payload_len, from_payload) == 0 &&
			     memcmp(from_payload, n->digest, CFS_DIGEST_SIZE) == 0))
				flags |= CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD;
			else
				flags |= CFS_INODE_FLAGS_DIGEST;
		}
	}
	if (ii->xset != SIZE_MAX)
		flags |= CFS_INODE_FLAGS_XATTRS;
	ii->flags = flags;
	return 0;
}

/* The offset at which an item of @size fits without crossing a page. */
static uint64_t place(uint64_t data_offset, uint64_t *pos, size_t size)
{
	uint64_t abs = data_offset + *pos, off;

	if (abs % CFS_PAGE_SIZE + size > CFS_PAGE_SIZE)
		*pos += CFS_PAGE_SIZE - abs % CFS_PAGE_SIZE;
	off = *pos;
	*pos += size;
	return off;
}

/* Store @v little-endian at @p; return the byte after it. */
static uint8_t *emit32(uint8_t *p, uint32_t v)
{
	put_le32(p, v);
	return p + 4;
}

static uint8_t *emit64(uint8_t *p, uint64_t v)
{
	put_le64(p, v);
	return p + 8;
}

/* The fixed chunk of @ii: the flags word, then the fields it selects. */
static uint8_t *encode_inode(uint8_t *p, const struct ino_info *ii, const struct writer *w)
{
	const struct cfs_node *n = ii->n;
	uint32_t f = ii->flags;

	p = emit32(p, f);
	if (f & CFS_INODE_FLAGS_PAYLOAD)
		p = emit32(p, ii->payload_len);
	if (f & CFS_INODE_FLAGS_MODE)
		p = emit32(p, n->mode);
	if (f & CFS_INODE_FLAGS_NLINK)
		p = emit32(p, n->nlink);
	if (f & CFS_INODE_FLAGS_UIDGID) {
		p = emit32(p, n->uid);
		p = emit32(p, n->gid);
	}
	if (f & CFS_INODE_FLAGS_RDEV)
		p = emit32(p, n->rdev);
	if (f & CFS_INODE_FLAGS_TIMES) {
		p = emit64(p, (uint64_t)n->mtime_sec); /* mtime */
		p = emit64(p, (uint64_t)n->mtime_sec); /* ctime: the same */
	}
	if (f & CFS_INODE_FLAGS_TIMES_NSEC) {
		p = emit32(p, n->mtime_nsec);
		p = emit32(p, n->mtime_nsec);
	}
	if (f & CFS_INODE_FLAGS_LOW_SIZE)
		p = emit32(p, (uint32_t)n->size);
	if (f & CFS_INODE_FLAGS_HIGH_SIZE)
		p = emit32(p, (uint32_t)(n->size >> 32));
	if (f & CFS_INODE_FLAGS_XATTRS) {
		p = emit64(p, w->sets[ii->xset].off);
		p = emit32(p, (uint32_t)w->sets[ii->xset].len);
	}
	if (f & CFS_INODE_FLAGS_DIGEST) {
		memcpy(p, n->digest, CFS_DIGEST_SIZE);
		p += CFS_DIGEST_SIZE;
	}
	return p;
}

static int clear_index(void *ctx, struct cfs_node *n)
{
	(void)ctx;
	n->indexed = false;
	return 0;
}

/* Number the inodes breadth-first; w->inos doubles as the queue. */
static int collect_inodes(struct writer *w, struct cfs_node *root)
{
	size_t alloc = 1024;
	int r = cfs_tree_walk(root, clear_index, NULL);

	if (r)
		return r;
	w->inos = calloc(alloc, sizeof(*w->inos));
	if (!w->inos)
		return -ENOMEM;
	w->inos[w->n_inos++].n = root;
	root->indexed = true;
	for (size_t i = 0; i < w->n_inos; i++) {
		struct cfs_node *d = w->inos[i].n;

		if (!S_ISDIR(d->mode))
			continue;
		for (size_t k = 0; k < d->n_children; k++) {
			struct cfs_node *c = cfs_node_inode(d->children[k]);

			if (c->indexed)
				continue;
			if (w->n_inos == alloc) {
				struct ino_info *a = realloc(w->inos, 2 * alloc * sizeof(*a));

				if (!a)
					return -ENOMEM;
				memset(a + alloc, 0, alloc * sizeof(*a));
				w->inos = a;
				alloc *= 2;
			}
			c->indexed = true;
			w->inos[w->n_inos++].n = c;
		}
	}
	return 0;
}

int cfs_v1_write(struct cfs_node *root, const struct cfs_write_options *opts, int fd)
{
	struct writer w = { 0 };
	uint64_t ino_size = 0, data_offset, vpos = 0, total;
	uint8_t *img = NULL, *p;
	int r;

	(void)opts; /* v1 takes none: cfs_tree_write() refused any */
	if (!S_ISDIR(root->mode)) {
		cfs_msg("the root of an image must be a directory");
		return -ENOTDIR;
	}
	r = collect_inodes(&w, root);
	if (r)
		goto out;

	/* Plan: flags, payload sizes and thus every inode's index. */
	for (size_t i = 0; i < w.n_inos; i++) {
		struct ino_info *ii = &w.inos[i];

		if (S_ISDIR(ii->n->mode)) {
			r = split_chunks(&w, ii);
			if (r)
				goto out;
		}
		r = plan_inode(&w, ii);
		if (r)
			goto out;
		ino_size += ii->payload_len;
		ii->n->inode_index = ino_size;
		ino_size += cfs_inode_encoded_size(ii->flags);
	}
	data_offset = CFS_INODE_SECTION_OFFSET + ino_size;

	/* Lay out the variable data: xattr sets, then directory chunks. */
	for (size_t i = 0; i < w.n_sets; i++)
		w.sets[i].off = place(data_offset, &vpos, w.sets[i].len);
	for (size_t i = 0; i < w.n_chunks; i++)
		w.chunks[i].off = place(data_offset, &vpos, w.chunks[i].size);
	/* Whole 512-byte sectors: a loop device over the file, or a
	 * partition, holds only whole sectors, and would cut a partial last
	 * one off.
	 */
	total = data_offset + vpos;
	total += (512 - total % 512) % 512;

	img = calloc(1, total);
	if (!img) {
		r = -ENOMEM;
		goto out;
	}
	img[0] = CFS_VERSION;
	put_le32(img + 4, CFS_MAGIC);
	put_le64(img + 8, data_offset);
	put_le64(img + 16, root->inode_index);

	p = img + CFS_INODE_SECTION_OFFSET;
	for (size_t i = 0; i < w.n_inos; i++) {
		struct ino_info *ii = &w.inos[i];
		struct cfs_node *n = ii->n;

		if (S_ISDIR(n->mode) && ii->n_chunks) {
			put_le32(p, (uint32_t)ii->n_chunks);
			for (size_t k = 0; k < ii->n_chunks; k++) {
				const struct chunk *c = &w.chunks[ii->first_chunk + k];
				uint8_t *e = p + cfs_dir_header_size(k);

				put_le16(e, (uint16_t)c->count);
				put_le16(e + 2, (uint16_t)c->size);
				put_le64(e + 4, c->off);
			}
		} else if (ii->payload_len) {
			char obj[CFS_OBJECT_PATH_SIZE];

			memcpy(p, cfs_node_payload(n, obj), ii->payload_len);
		}
		p += ii->payload_len;
		p = encode_inode(p, ii, &w);
	}

	for (size_t i = 0; i < w.n_sets; i++)
		memcpy(img + data_offset + w.sets[i].off, w.sets[i].data, w.sets[i].len);
	for (size_t i = 0; i < w.n_inos; i++) {
		struct cfs_node *d = w.inos[i].n;

		for (size_t k = 0; k < w.inos[i].n_chunks; k++) {
			const struct chunk *c = &w.chunks[w.inos[i].first_chunk + k];
			uint8_t *de = img + data_offset + c->off;
			uint8_t *names = de + c->count * sizeof(struct cfs_dentry);
			size_t name_off = 0;

			for (size_t j = 0; j < c->count; j++, de += sizeof(struct cfs_dentry)) {
				struct cfs_node *e = d->children[c->first + j];
				struct cfs_node *t = cfs_node_inode(e);

				put_le64(de, t->inode_index);
				de[8] = (uint8_t)((t->mode & S_IFMT) >> 12); /* DT_* */
				de[9] = (uint8_t)e->name_len;
				put_le16(de + 10, (uint16_t)name_off);
				memcpy(names + name_off, e->name, e->name_len);
				name_off += e->name_len;
			}
		}
	}

	/* A failed write is left to the caller to report: it knows the file. */
	r = cfs_write_all(fd, img, total);
out:
	free(img);
	for (size_t i = 0; i < w.n_sets; i++)
		free(w.sets[i].data);
	free(w.sets);
	free(w.set_table);
	free(w.chunks);
	free(w.inos);
	return r;
}
