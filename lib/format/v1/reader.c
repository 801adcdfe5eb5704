// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The reader of v1 images (the layout of cfs-format.h), behind the
 * format-blind cfs_image_* API of reader.c: it decodes inodes, directory
 * chunks and xattr sets on demand. It trusts nothing in the file. Every
 * offset, length and count is checked against the end of the section it
 * points into, with arithmetic that cannot overflow, before a byte is read;
 * every on-disk field is copied out once and the copy validated. It relies
 * only on what the format itself guarantees (and what the 2022 kernel reader
 * enforced), not on the layout choices of any one writer, so images written
 * with another inode order, chunk packing or padding read the same.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "format/reader.h"
#include "v1.h"

/* Does [off, off + len) of the file stay inside one CFS_PAGE_SIZE page? */
static inline bool in_one_page(uint64_t off, uint64_t len)
{
	return len <= CFS_PAGE_SIZE && off % CFS_PAGE_SIZE + len <= CFS_PAGE_SIZE;
}

static bool name_valid(const char *name, size_t len)
{
	if (len == 0 || len > CFS_MAX_NAME_LEN)
		return false;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return false;
	return !memchr(name, '/', len) && !memchr(name, '\0', len);
}

static int corrupt(void)
{
	return -EFSCORRUPTED;
}

/* Where the variable data section starts, from the checked header. */
static uint64_t data_off(const struct cfs_image *img)
{
	return CFS_V1_IMG(img)->data_offset;
}

static int check_header(struct cfs_image *img)
{
	const uint8_t *h = img->data;
	uint64_t section;
	uint32_t magic;

	if (img->size == 0) {
		cfs_msg("image is empty");
		return corrupt();
	}
	if (img->size < CFS_INODE_SECTION_OFFSET + 4) {
		cfs_msg("image is too short: %llu bytes, a header and an inode take at least %llu",
			(unsigned long long)img->size,
			(unsigned long long)CFS_INODE_SECTION_OFFSET + 4);
		return corrupt();
	}
	magic = get32(h + offsetof(struct cfs_header, magic));
	if (magic != CFS_MAGIC) {
		cfs_msg("not a composefs image: magic 0x%08x at offset %zu, expected 0x%08x",
			magic, offsetof(struct cfs_header, magic), CFS_MAGIC);
		return corrupt();
	}
	img->version = h[offsetof(struct cfs_header, version)];
	if (img->version != CFS_VERSION) {
		cfs_msg("unsupported format version %u at offset 0 (this reader knows %u)",
			img->version, CFS_VERSION);
		return corrupt();
	}
	CFS_V1_IMG(img)->data_offset = get64(h + offsetof(struct cfs_header, data_offset));
	img->root = get64(h + offsetof(struct cfs_header, root_inode));
	if (data_off(img) < CFS_INODE_SECTION_OFFSET || data_off(img) > img->size) {
		cfs_msg("header at offset %zu: data section offset %llu outside the image (%llu..%llu)",
			offsetof(struct cfs_header, data_offset),
			(unsigned long long)data_off(img),
			(unsigned long long)CFS_INODE_SECTION_OFFSET,
			(unsigned long long)img->size);
		return corrupt();
	}
	section = data_off(img) - CFS_INODE_SECTION_OFFSET;
	if (!fits(img->root, 4, section)) {
		cfs_msg("header at offset %zu: root inode %llu lies outside the inode section (%llu bytes)",
			offsetof(struct cfs_header, root_inode), (unsigned long long)img->root,
			(unsigned long long)section);
		return corrupt();
	}
	return 0;
}

int cfs_v1_open(struct cfs_image *img)
{
	return check_header(img);
}

void cfs_v1_describe(const struct cfs_image *img, struct cfs_image_desc *d)
{
	d->format = "composefs-v1";
	d->label = "format version";
	snprintf(d->text, sizeof(d->text), "%u", img->version);
}

/* v1's CFS_INODE_FLAGS_* in words, lowest bit first. */
static void flag_names(uint32_t flags, char *buf, size_t size)
{
	static const char *const names[] = { "PAYLOAD", "MODE", "NLINK", "UIDGID", "RDEV", "TIMES",
					     "TIMES_NSEC", "LOW_SIZE", "HIGH_SIZE", "XATTRS", "DIGEST",
					     "DIGEST_FROM_PAYLOAD" };
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < 12 && o < size; i++)
		if (flags & (1U << i))
			o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? " " : "", names[i]);
}

void cfs_v1_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			   struct cfs_inode_desc *d)
{
	const struct cfs_v1_inode *vi = CFS_V1_I(in);

	*d = (struct cfs_inode_desc){
		.ino_kind = "fixed chunk",
		.has_flags = true,
		.has_chunks = true,
		.flags = vi->flags,
		.n_chunks = vi->n_chunks,
		.digest_note = (vi->flags & CFS_INODE_FLAGS_DIGEST) ? "" : " (from the backing path)",
		.xattrs_offset = data_off(img) + vi->xattrs_off,
	};
	flag_names(vi->flags, d->flag_names, sizeof(d->flag_names));
}

/* The file offset of inode @ino's fixed chunk, for messages. */
static unsigned long long ino_off(uint64_t ino)
{
	return (unsigned long long)(ino + CFS_INODE_SECTION_OFFSET);
}

/* The decoder is format/v1/inode.c's, in the reader's mode. */
int cfs_v1_inode(struct cfs_image *img, uint64_t ino, struct cfs_inode *out)
{
	return cfs_v1_decode_inode(img->data, img->size, data_off(img), ino, out, NULL);
}

/* ---- directories ---- */

struct chunk {
	const uint8_t *data; /* the dentries, then the names */
	uint32_t n; /* dentries */
	uint32_t size; /* bytes */
	uint64_t off; /* file offset, for messages */
};

static int load_chunk(const struct cfs_image *img, uint64_t dir_ino, const uint8_t *table,
		      uint32_t i, struct chunk *c)
{
	const uint8_t *e = table + sizeof(struct cfs_dir_header) + (size_t)i * sizeof(struct cfs_dir_chunk);
	uint32_t n = get16(e + offsetof(struct cfs_dir_chunk, n_dentries));
	uint32_t size = get16(e + offsetof(struct cfs_dir_chunk, chunk_size));
	uint64_t off = get64(e + offsetof(struct cfs_dir_chunk, chunk_offset));
	uint64_t vsize = img->size - data_off(img);

	if (n == 0 || size > CFS_MAX_DIR_CHUNK_SIZE || size < n * sizeof(struct cfs_dentry)) {
		cfs_msg("directory inode %llu at offset %llu: chunk %u has %u entries in %u bytes",
			(unsigned long long)dir_ino, ino_off(dir_ino), i, n, size);
		return corrupt();
	}
	if (!fits(off, size, vsize)) {
		cfs_msg("directory inode %llu at offset %llu: chunk %u of %u bytes at data offset %llu runs past the end of the image",
			(unsigned long long)dir_ino, ino_off(dir_ino), i, size, (unsigned long long)off);
		return corrupt();
	}
	if (!in_one_page(data_off(img) + off, size)) {
		cfs_msg("directory inode %llu at offset %llu: chunk %u of %u bytes at offset %llu crosses a %u-byte page boundary",
			(unsigned long long)dir_ino, ino_off(dir_ino), i, size,
			(unsigned long long)(data_off(img) + off), CFS_PAGE_SIZE);
		return corrupt();
	}
	c->data = img->data + data_off(img) + off;
	c->n = n;
	c->size = size;
	c->off = data_off(img) + off;
	return 0;
}

/* Decode entry @j (< c->n) of chunk @c. */
static int load_dentry(uint64_t dir_ino, const struct chunk *c, uint32_t j, struct cfs_dirent *d)
{
	const uint8_t *e = c->data + (size_t)j * sizeof(struct cfs_dentry);
	uint32_t names = c->n * (uint32_t)sizeof(struct cfs_dentry);
	uint32_t name_len = e[offsetof(struct cfs_dentry, name_len)];
	uint32_t name_off = get16(e + offsetof(struct cfs_dentry, name_offset));

	d->ino = get64(e + offsetof(struct cfs_dentry, inode_index));
	d->d_type = e[offsetof(struct cfs_dentry, d_type)];
	if (!fits(name_off, name_len, c->size - names)) {
		cfs_msg("directory inode %llu: entry %u of the chunk at offset %llu: name of %u bytes at %u runs past the chunk",
			(unsigned long long)dir_ino, j, (unsigned long long)c->off, name_len, name_off);
		return corrupt();
	}
	d->name = (const char *)c->data + names + name_off;
	d->name_len = name_len;
	if (!name_valid(d->name, d->name_len)) {
		cfs_msg("directory inode %llu: entry %u of the chunk at offset %llu: invalid name",
			(unsigned long long)dir_ino, j, (unsigned long long)c->off);
		return corrupt();
	}
	return 0;
}

/* Where an iterator is in a directory, in cfs_dir_iter.priv. */
struct v1_dir_pos {
	const uint8_t *table; /* the chunk table, inside the image */
	uint32_t n_chunks;
	uint32_t chunk; /* current chunk */
	uint32_t entry; /* next entry in the current chunk */
};

static struct v1_dir_pos *dir_pos(struct cfs_dir_iter *it)
{
	_Static_assert(sizeof(struct v1_dir_pos) <= sizeof(it->priv), "v1_dir_pos fits");
	return (struct v1_dir_pos *)(void *)it->priv;
}

int cfs_v1_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
			 struct cfs_dir_iter *it)
{
	struct v1_dir_pos *d = dir_pos(it);

	(void)img;
	d->n_chunks = CFS_V1_I(dir)->n_chunks;
	d->table = (const uint8_t *)dir->payload;
	if (d->n_chunks && !d->table)
		return -EINVAL;
	return 0;
}

int cfs_v1_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out)
{
	struct v1_dir_pos *d = dir_pos(it);
	struct chunk c;
	int ret;

	while (d->chunk < d->n_chunks) {
		ret = load_chunk(it->img, it->dir_ino, d->table, d->chunk, &c);
		if (ret < 0)
			return ret;
		if (d->entry >= c.n) {
			d->chunk++;
			d->entry = 0;
			continue;
		}
		ret = load_dentry(it->dir_ino, &c, d->entry, out);
		if (ret < 0)
			return ret;
		/* Lookup is a binary search: entries must be strictly sorted. */
		if (it->prev_name &&
		    cfs_name_cmp(it->prev_name, it->prev_len, out->name, out->name_len) >= 0) {
			cfs_msg("directory inode %llu: entry %u of the chunk at offset %llu is out of order",
				(unsigned long long)it->dir_ino, d->entry, (unsigned long long)c.off);
			return corrupt();
		}
		it->prev_name = out->name;
		it->prev_len = out->name_len;
		d->entry++;
		return 1;
	}
	return 0;
}

void cfs_v1_dir_iter_skip(struct cfs_dir_iter *it)
{
	struct v1_dir_pos *d = dir_pos(it);

	d->chunk++;
	d->entry = 0;
}

/* A binary search over the chunks, then inside the one that may hold @name. */
int cfs_v1_lookup(struct cfs_image *img, const struct cfs_inode *dir, const char *name,
		  size_t name_len, uint64_t *ino)
{
	const uint8_t *table = (const uint8_t *)dir->payload;
	int64_t lo = 0, hi = (int64_t)CFS_V1_I(dir)->n_chunks - 1;
	struct cfs_dirent d;
	struct chunk c;
	int ret, cmp;

	if (CFS_V1_I(dir)->n_chunks && !table)
		return -EINVAL;
	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2, elo, ehi;

		ret = load_chunk(img, dir->ino, table, (uint32_t)mid, &c);
		if (ret < 0)
			return ret;
		elo = 0;
		ehi = (int64_t)c.n - 1;
		cmp = 0;
		while (elo <= ehi) {
			int64_t emid = elo + (ehi - elo) / 2;

			ret = load_dentry(dir->ino, &c, (uint32_t)emid, &d);
			if (ret < 0)
				return ret;
			cmp = cfs_name_cmp(name, name_len, d.name, d.name_len);
			if (cmp == 0) {
				*ino = d.ino;
				return 0;
			}
			if (cmp > 0)
				elo = emid + 1;
			else
				ehi = emid - 1;
		}
		/* Not in this chunk: before its first entry or after its last? */
		if (elo == 0)
			hi = mid - 1;
		else if (elo == (int64_t)c.n)
			lo = mid + 1;
		else
			return -ENOENT; /* would sit inside this chunk */
	}
	return -ENOENT;
}

/* ---- xattrs ---- */

int cfs_v1_xattrs(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		  void *ctx)
{
	const uint8_t *set, *data;
	uint32_t n, len, pass, i;
	uint64_t hsize;
	int ret;

	/* The set's size and bounds were checked when the inode was decoded. */
	if (inode->xattrs_len == 0)
		return 0;
	len = inode->xattrs_len;
	set = img->data + data_off(img) + CFS_V1_I(inode)->xattrs_off;
	n = get16(set);
	hsize = cfs_xattr_header_size(n);
	if (hsize > len) {
		cfs_msg("xattr set at offset %llu: %u entries do not fit in its %u bytes",
			(unsigned long long)(data_off(img) + CFS_V1_I(inode)->xattrs_off), n, len);
		return corrupt();
	}
	/* Check the whole set first, so that @fn sees only a valid one. */
	for (pass = 0; pass < 2; pass++) {
		uint32_t left = len - (uint32_t)hsize;

		data = set + hsize;
		for (i = 0; i < n; i++) {
			const uint8_t *e = set + sizeof(struct cfs_xattr_header) +
					   (size_t)i * sizeof(struct cfs_xattr_element);
			uint32_t klen = get16(e + offsetof(struct cfs_xattr_element, key_length));
			uint32_t vlen = get16(e + offsetof(struct cfs_xattr_element, value_length));
			struct cfs_xattr x;

			if (klen > CFS_MAX_NAME_LEN || klen + vlen > left) {
				cfs_msg("xattr set at offset %llu: entry %u (key %u bytes, value %u bytes) runs past the set",
					(unsigned long long)(data_off(img) + CFS_V1_I(inode)->xattrs_off),
					i, klen, vlen);
				return corrupt();
			}
			if (pass == 1) {
				x.key = (const char *)data;
				x.key_len = klen;
				x.value = data + klen;
				x.value_len = vlen;
				ret = fn(ctx, &x);
				if (ret)
					return ret;
			}
			data += klen + vlen;
			left -= klen + vlen;
		}
	}
	return 0;
}
