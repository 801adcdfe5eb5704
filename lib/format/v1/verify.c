// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl verify of v1 images: the header, each reachable inode and xattr
 * set and every directory chunk, decoded from the raw bytes rather than
 * through the reader, so that every problem is reported and the check goes
 * on wherever the rest still makes sense (an unsorted directory is still
 * listed, a chunk that crosses a page is still read). It also checks what
 * the reader has no need to: unreachable bytes of the inode section and
 * encodings a correct writer would not produce. The directory walk is
 * verify-walk.c's; this file gives it v1's inodes and entries. The objects
 * then go to verify.c's checks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "format/reader.h"
#include "v1.h"
#include "format/verify-walk.h"

/* Where the walk is in one v1 directory. */
struct v1_pos {
	uint64_t ino;
	const uint8_t *table; /* chunk table, or NULL */
	uint32_t n_chunks;
	uint32_t chunk, entry;
	bool chunk_loaded;
	const uint8_t *cdata; /* current chunk */
	uint32_t cn, csize;
	uint64_t coff;
};

/* A byte range of the inode section some reachable inode uses. */
struct v1_range {
	uint64_t start, end;
};

/* An xattr set already checked: checked once however many inodes use it. */
struct xset_seen {
	uint64_t off;
	uint32_t len;
};

/* What the check of a v1 image keeps beside the shared struct cfs_verifier. */
struct v1_check {
	struct cfs_verifier *v;
	uint64_t doff, section; /* the data section's offset; the inode section's size */
	struct v1_range *ranges;
	size_t n_ranges, ranges_cap;
	struct xset_seen *xsets;
	size_t n_xsets, xsets_cap;
};

/* ---- xattr sets ---- */

/*
 * The content of the xattr set an inode names, whose size and bounds its
 * decode checked: once, however many inodes share it.
 */
static int check_xattrs(struct v1_check *c, uint64_t xoff, uint32_t xlen)
{
	struct cfs_verifier *v = c->v;
	const uint8_t *set, *data;
	struct xset_seen *x;
	uint32_t n, left;
	uint64_t hsize, abs = c->doff + xoff;

	for (size_t i = 0; i < c->n_xsets; i++)
		if (c->xsets[i].off == xoff && c->xsets[i].len == xlen)
			return 0;
	x = cfs_grow(c->xsets, &c->xsets_cap, c->n_xsets, sizeof(*x), 64);
	if (!x)
		return -ENOMEM;
	c->xsets = x;
	c->xsets[c->n_xsets++] = (struct xset_seen){ xoff, xlen };
	if (xlen <= CFS_PAGE_SIZE && abs % CFS_PAGE_SIZE + xlen > CFS_PAGE_SIZE)
		CFS_VERR(v, "xattr-page", abs, "xattr set of %u bytes crosses a %u-byte page boundary",
		    xlen, CFS_PAGE_SIZE);
	set = v->data + abs;
	n = get16(set);
	hsize = cfs_xattr_header_size(n);
	if (hsize > xlen) {
		CFS_VERR(v, "xattr-bounds", abs, "xattr set: %u entries do not fit in its %u bytes", n,
		    xlen);
		return 0;
	}
	left = xlen - (uint32_t)hsize;
	data = set + hsize;
	const uint8_t *prev = NULL;
	uint32_t prev_len = 0;

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = set + sizeof(struct cfs_xattr_header) +
				   (size_t)i * sizeof(struct cfs_xattr_element);
		uint32_t klen = get16(e + offsetof(struct cfs_xattr_element, key_length));
		uint32_t vlen = get16(e + offsetof(struct cfs_xattr_element, value_length));
		int cmp;

		if (klen + vlen > left) {
			CFS_VERR(v, "xattr-bounds", abs,
			    "xattr set: entry %u (key %u bytes, value %u bytes) runs past the set", i,
			    klen, vlen);
			return 0;
		}
		if (klen == 0 || klen > CFS_MAX_NAME_LEN)
			CFS_VERR(v, "xattr-key", abs, "xattr set: entry %u has a key of %u bytes (must be 1..%u)",
			    i, klen, CFS_MAX_NAME_LEN);
		else if (memchr(data, '\0', klen))
			CFS_VERR(v, "xattr-key", abs, "xattr set: the key of entry %u holds a NUL byte", i);
		else if (!memchr(data, '.', klen))
			CFS_VWARN(v, "xattr-key", abs, "xattr set: the key of entry %u has no namespace prefix", i);
		if (prev) {
			cmp = cfs_name_cmp(prev, prev_len, data, klen);
			if (cmp == 0)
				CFS_VERR(v, "xattr-duplicate", abs, "xattr set: entry %u repeats the key of entry %u",
				    i, i - 1);
			else if (cmp > 0)
				CFS_VWARN(v, "noncanonical", abs,
				     "xattr set: entry %u sorts before entry %u (keys are not sorted)", i,
				     i - 1);
		}
		prev = data;
		prev_len = klen;
		data += klen + vlen;
		left -= klen + vlen;
	}
	if (left)
		CFS_VWARN(v, "noncanonical", abs, "xattr set: %u bytes after its last entry", left);
	return 0;
}

/* ---- inodes ---- */

static int add_range(struct v1_check *c, uint64_t start, uint64_t end)
{
	struct v1_range *r = cfs_grow(c->ranges, &c->ranges_cap, c->n_ranges, sizeof(*r), 1024);

	if (!r)
		return -ENOMEM;
	c->ranges = r;
	c->ranges[c->n_ranges++] = (struct v1_range){ start, end };
	return 0;
}

/* ---- directories ---- */

/* Load chunk f->chunk of the frame's directory; false when it cannot be read. */
static bool load_chunk(struct v1_check *c, struct v1_pos *f)
{
	struct cfs_verifier *v = c->v;
	const uint8_t *e = f->table + sizeof(struct cfs_dir_header) +
			   (size_t)f->chunk * sizeof(struct cfs_dir_chunk);
	uint32_t n = get16(e + offsetof(struct cfs_dir_chunk, n_dentries));
	uint32_t size = get16(e + offsetof(struct cfs_dir_chunk, chunk_size));
	uint64_t off = get64(e + offsetof(struct cfs_dir_chunk, chunk_offset));
	uint64_t vsize = v->size - c->doff, abs;
	uint64_t ioff = f->ino + CFS_INODE_SECTION_OFFSET;

	if (n == 0 || size < n * sizeof(struct cfs_dentry)) {
		CFS_VERR(v, "chunk-size", ioff, "chunk %u holds %u entries in %u bytes", f->chunk, n, size);
		return false;
	}
	if (!fits(off, size, vsize)) {
		CFS_VERR(v, "chunk-bounds", ioff,
		    "chunk %u of %u bytes at data offset %llu runs past the end of the image",
		    f->chunk, size, cfs_ull(off));
		return false;
	}
	abs = c->doff + off;
	if (size > CFS_MAX_DIR_CHUNK_SIZE)
		CFS_VERR(v, "chunk-oversized", abs, "chunk %u is %u bytes, more than %u", f->chunk, size,
		    CFS_MAX_DIR_CHUNK_SIZE);
	else if (abs % CFS_PAGE_SIZE + size > CFS_PAGE_SIZE)
		CFS_VERR(v, "chunk-page", abs, "chunk %u of %u bytes crosses a %u-byte page boundary",
		    f->chunk, size, CFS_PAGE_SIZE);
	f->cdata = v->data + abs;
	f->cn = n;
	f->csize = size;
	f->coff = abs;
	return true;
}

/*
 * The next entry of the directory at @pos, or 0 at its end. Entries that
 * cannot be read are reported and skipped.
 */
static int v1_next(void *ctx, void *pos, const struct cfs_inode *dir, struct cfs_vdirent *out)
{
	struct v1_check *c = ctx;
	struct cfs_verifier *v = c->v;
	struct v1_pos *f = pos;

	(void)dir;
	for (;;) {
		const uint8_t *e;
		uint32_t names, nlen, noff;

		if (f->chunk >= f->n_chunks)
			return 0;
		if (!f->chunk_loaded) {
			if (!load_chunk(c, f)) {
				f->chunk++;
				continue;
			}
			f->chunk_loaded = true;
			f->entry = 0;
		}
		if (f->entry >= f->cn) {
			f->chunk++;
			f->chunk_loaded = false;
			continue;
		}
		e = f->cdata + (size_t)f->entry * sizeof(struct cfs_dentry);
		names = f->cn * (uint32_t)sizeof(struct cfs_dentry);
		nlen = e[offsetof(struct cfs_dentry, name_len)];
		noff = get16(e + offsetof(struct cfs_dentry, name_offset));
		out->at = f->coff + (uint64_t)f->entry * sizeof(struct cfs_dentry);
		f->entry++;
		if (!fits(noff, nlen, f->csize - names)) {
			CFS_VERR(v, "entry-bounds", out->at, "entry %u of chunk %u: name of %u bytes at %u runs past the chunk",
			    f->entry - 1, f->chunk, nlen, noff);
			continue;
		}
		out->name = f->cdata + names + noff;
		out->len = nlen;
		out->ino = get64(e + offsetof(struct cfs_dentry, inode_index));
		out->d_type = e[offsetof(struct cfs_dentry, d_type)];
		return 1;
	}
}

static void v1_open_dir(void *ctx, void *pos, const struct cfs_inode *dir)
{
	struct v1_pos *f = pos;

	(void)ctx;
	f->ino = dir->ino;
	f->table = (const uint8_t *)dir->payload;
	f->n_chunks = dir->payload ? CFS_V1_I(dir)->n_chunks : 0;
}

static uint64_t v1_root(void *ctx, uint64_t *at)
{
	struct cfs_verifier *v = ((struct v1_check *)ctx)->v;

	*at = CFS_NO_OFFSET;
	return v->data ? get64(v->data + offsetof(struct cfs_header, root_inode)) : 0;
}

/* format/v1/inode.c's decoder in its strict mode, then the xattr set's content. */
static int v1_decode(void *ctx, uint64_t ino, uint64_t at, struct cfs_inode *in, uint32_t *type)
{
	struct v1_check *c = ctx;
	struct cfs_verifier *v = c->v;
	int ret = cfs_v1_decode_inode(v->data, v->size, c->doff, ino, in, v);

	(void)at;
	if (ret <= 0)
		return ret;
	ret = add_range(c, ino + cfs_inode_encoded_size(CFS_V1_I(in)->flags) - CFS_V1_I(in)->extent,
			ino + cfs_inode_encoded_size(CFS_V1_I(in)->flags));
	if (ret == 0 && in->xattrs_len)
		ret = check_xattrs(c, CFS_V1_I(in)->xattrs_off, in->xattrs_len);
	if (ret < 0)
		return ret;
	*type = in->mode;
	return 1;
}

static unsigned int v1_d_type(uint32_t type)
{
	return IFTODT(type);
}

static uint64_t v1_offset_of(void *ctx, uint64_t ino)
{
	(void)ctx;
	return ino + CFS_INODE_SECTION_OFFSET;
}

static const struct cfs_vwalk_ops v1_format = {
	.pos_size = sizeof(struct v1_pos),
	.bad_name = "invalid name (empty, '.', '..', or holding '/' or NUL)",
	.root = v1_root,
	.decode = v1_decode,
	.d_type = v1_d_type,
	.open_dir = v1_open_dir,
	.next = v1_next,
	.offset_of = v1_offset_of,
};

static int cmp_range(const void *a, const void *b)
{
	const struct v1_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Bytes of the inode section no reachable inode uses. */
static void check_coverage(struct v1_check *c)
{
	uint64_t pos = 0;

	if (c->n_ranges)
		qsort(c->ranges, c->n_ranges, sizeof(*c->ranges), cmp_range);
	for (size_t i = 0; i <= c->n_ranges; i++) {
		uint64_t start = i < c->n_ranges ? c->ranges[i].start : c->section;

		if (start > pos)
			cfs_vreport(c->v, CFS_VERIFY_WARNING, "unreachable", NULL,
				    pos + CFS_INODE_SECTION_OFFSET,
				    "%llu bytes of the inode section (up to offset %llu) belong to no reachable inode: an unreachable inode or padding",
				    cfs_ull(start - pos), cfs_ull(start + CFS_INODE_SECTION_OFFSET));
		if (i < c->n_ranges && c->ranges[i].end > pos)
			pos = c->ranges[i].end;
	}
}

static bool check_header(struct v1_check *c)
{
	struct cfs_verifier *v = c->v;
	const uint8_t *h = v->data;
	uint32_t magic;
	uint64_t root;

	v->cur_path = NULL;
	if (v->size < CFS_INODE_SECTION_OFFSET + 4) {
		CFS_VERR(v, "header", 0, "image of %llu bytes is too short for a header and an inode",
		    cfs_ull(v->size));
		return false;
	}
	magic = get32(h + offsetof(struct cfs_header, magic));
	if (magic != CFS_MAGIC) {
		CFS_VERR(v, "header", offsetof(struct cfs_header, magic),
		    "not a composefs image: magic 0x%08x, expected 0x%08x", magic, CFS_MAGIC);
		return false;
	}
	if (h[offsetof(struct cfs_header, version)] != CFS_VERSION) {
		CFS_VERR(v, "header", 0, "format version %u, this check knows %u",
		    h[offsetof(struct cfs_header, version)], CFS_VERSION);
		return false;
	}
	for (size_t i = 0; i < sizeof(struct cfs_header); i++) {
		if ((i >= 1 && i < 4) || i >= offsetof(struct cfs_header, unused3)) {
			if (h[i]) {
				CFS_VWARN(v, "noncanonical", i, "header: unused byte at offset %zu is not 0", i);
				break;
			}
		}
	}
	c->doff = get64(h + offsetof(struct cfs_header, data_offset));
	if (c->doff < CFS_INODE_SECTION_OFFSET || c->doff > v->size) {
		CFS_VERR(v, "header", offsetof(struct cfs_header, data_offset),
		    "data section offset %llu outside the image (%llu..%llu)", cfs_ull(c->doff),
		    cfs_ull(CFS_INODE_SECTION_OFFSET), cfs_ull(v->size));
		return false;
	}
	c->section = c->doff - CFS_INODE_SECTION_OFFSET;
	root = get64(h + offsetof(struct cfs_header, root_inode));
	if (!fits(root, 4, c->section)) {
		CFS_VERR(v, "header", offsetof(struct cfs_header, root_inode),
		    "root inode %llu lies outside the inode section (%llu bytes)", cfs_ull(root),
		    cfs_ull(c->section));
		return false;
	}
	return true;
}

int cfs_v1_verify(const struct cfs_format *f, struct cfs_verifier *v)
{
	struct v1_check c = { .v = v };
	int ret = 0;

	(void)f; /* the checks open no struct cfs_image */
	if (!check_header(&c))
		goto out;
	ret = cfs_verify_walk(v, &v1_format, &c);
	if (ret < 0)
		goto out;
	check_coverage(&c);
	ret = 1;
out:
	free(c.ranges);
	free(c.xsets);
	return ret;
}
