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

#include "bytes.h"
#include "reader.h"
#include "verify.h"

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

/* ---- xattr sets ---- */

static int check_xattrs(struct verifier *v, uint64_t ino, uint64_t xoff, uint32_t xlen)
{
	uint64_t abs, vsize = v->size - v->doff;
	const uint8_t *set, *data;
	struct xset_seen *x;
	uint32_t n, left;
	uint64_t hsize;

	(void)ino;
	if (xlen < sizeof(struct cfs_xattr_header) || xlen > CFS_MAX_XATTRS_SIZE) {
		ERR(v, "xattr-size", NO_OFFSET, "xattr set of %u bytes (must be 2..%u)", xlen,
		    CFS_MAX_XATTRS_SIZE);
		if (xlen < sizeof(struct cfs_xattr_header))
			return 0;
	}
	if (!fits(xoff, xlen, vsize)) {
		ERR(v, "xattr-bounds", NO_OFFSET,
		    "xattr set of %u bytes at data offset %llu runs past the end of the image", xlen,
		    ull(xoff));
		return 0;
	}
	abs = v->doff + xoff;
	for (size_t i = 0; i < v->n_xsets; i++)
		if (v->xsets[i].off == xoff && v->xsets[i].len == xlen)
			return 0;
	x = cfs_grow(v->xsets, &v->xsets_cap, v->n_xsets, sizeof(*x), 64);
	if (!x)
		return -ENOMEM;
	v->xsets = x;
	v->xsets[v->n_xsets++] = (struct xset_seen){ xoff, xlen };
	if (xlen <= CFS_PAGE_SIZE && abs % CFS_PAGE_SIZE + xlen > CFS_PAGE_SIZE)
		ERR(v, "xattr-page", abs, "xattr set of %u bytes crosses a %u-byte page boundary",
		    xlen, CFS_PAGE_SIZE);
	set = v->data + abs;
	n = get16(set);
	hsize = cfs_xattr_header_size(n);
	if (hsize > xlen) {
		ERR(v, "xattr-bounds", abs, "xattr set: %u entries do not fit in its %u bytes", n,
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
			ERR(v, "xattr-bounds", abs,
			    "xattr set: entry %u (key %u bytes, value %u bytes) runs past the set", i,
			    klen, vlen);
			return 0;
		}
		if (klen == 0 || klen > CFS_MAX_NAME_LEN)
			ERR(v, "xattr-key", abs, "xattr set: entry %u has a key of %u bytes (must be 1..%u)",
			    i, klen, CFS_MAX_NAME_LEN);
		else if (memchr(data, '\0', klen))
			ERR(v, "xattr-key", abs, "xattr set: the key of entry %u holds a NUL byte", i);
		else if (!memchr(data, '.', klen))
			WARN(v, "xattr-key", abs, "xattr set: the key of entry %u has no namespace prefix", i);
		if (prev) {
			cmp = cfs_name_cmp(prev, prev_len, data, klen);
			if (cmp == 0)
				ERR(v, "xattr-duplicate", abs, "xattr set: entry %u repeats the key of entry %u",
				    i, i - 1);
			else if (cmp > 0)
				WARN(v, "noncanonical", abs,
				     "xattr set: entry %u sorts before entry %u (keys are not sorted)", i,
				     i - 1);
		}
		prev = data;
		prev_len = klen;
		data += klen + vlen;
		left -= klen + vlen;
	}
	if (left)
		WARN(v, "noncanonical", abs, "xattr set: %u bytes after its last entry", left);
	return 0;
}

/* ---- inodes ---- */

static int add_range(struct verifier *v, uint64_t start, uint64_t end)
{
	struct range *r = cfs_grow(v->ranges, &v->ranges_cap, v->n_ranges, sizeof(*r), 1024);

	if (!r)
		return -ENOMEM;
	v->ranges = r;
	v->ranges[v->n_ranges++] = (struct range){ start, end };
	return 0;
}

/*
 * Decode inode @ino, reporting each problem. Return 1 with *@out when it
 * can be used (perhaps with problems), 0 when not, or -errno.
 */
static int decode_inode(struct verifier *v, uint64_t ino, struct cfs_inode *out)
{
	const uint8_t *base = v->data + CFS_INODE_SECTION_OFFSET, *p;
	uint64_t off = ino + CFS_INODE_SECTION_OFFSET;
	uint32_t flags, esize, type, raw_plen = 0;
	struct cfs_inode in;
	int ret;

	memset(&in, 0, sizeof(in));
	in.ino = ino;
	in.offset = off;
	if (!fits(ino, 4, v->section)) {
		ERR(v, "inode-bounds", NO_OFFSET,
		    "inode %llu lies outside the inode section (%llu bytes)", ull(ino),
		    ull(v->section));
		return 0;
	}
	p = base + ino;
	flags = get32(p);
	if (flags & ~CFS_INODE_FLAGS_KNOWN) {
		ERR(v, "inode-flags", off, "inode %llu: unknown flags 0x%x", ull(ino),
		    flags & ~CFS_INODE_FLAGS_KNOWN);
		return 0;
	}
	esize = cfs_inode_encoded_size(flags);
	if (!fits(ino, esize, v->section)) {
		ERR(v, "inode-bounds", off, "inode %llu: its %u bytes run past the inode section",
		    ull(ino), esize);
		return 0;
	}
	CFS_V1_I(&in)->flags = flags;
	p += 4;
	if (flags & CFS_INODE_FLAGS_PAYLOAD) {
		raw_plen = in.payload_len = get32(p);
		p += 4;
		if (raw_plen == 0)
			WARN(v, "noncanonical", off, "inode %llu: PAYLOAD flag with a length of 0", ull(ino));
	}
	in.mode = CFS_INODE_DEFAULT_MODE;
	if (flags & CFS_INODE_FLAGS_MODE) {
		in.mode = get32(p);
		p += 4;
		if (in.mode == CFS_INODE_DEFAULT_MODE)
			WARN(v, "noncanonical", off, "inode %llu: MODE flag with the default mode", ull(ino));
	}
	type = in.mode & S_IFMT;
	if (!cfs_mode_valid(in.mode & (S_IFMT | 07777))) { /* the type alone */
		ERR(v, "inode-mode", off, "inode %llu: mode 0%o has no valid file type", ull(ino),
		    in.mode);
		return 0;
	}
	if (in.mode & ~(S_IFMT | 07777U))
		ERR(v, "inode-mode", off, "inode %llu: mode 0%o has unknown bits set", ull(ino), in.mode);
	in.nlink = type == S_IFDIR ? CFS_INODE_DEFAULT_NLINK_DIR : CFS_INODE_DEFAULT_NLINK;
	if (flags & CFS_INODE_FLAGS_NLINK) {
		uint32_t def = in.nlink;

		in.nlink = get32(p);
		p += 4;
		if (in.nlink == def)
			WARN(v, "noncanonical", off, "inode %llu: NLINK flag with the default count", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_UIDGID) {
		in.uid = get32(p);
		in.gid = get32(p + 4);
		p += 8;
		if (in.uid == 0 && in.gid == 0)
			WARN(v, "noncanonical", off, "inode %llu: UIDGID flag with owner 0:0", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_RDEV) {
		in.rdev = get32(p);
		p += 4;
		if (type != S_IFCHR && type != S_IFBLK)
			WARN(v, "noncanonical", off, "inode %llu: RDEV flag on a file that is not a device",
			     ull(ino));
		else if (in.rdev == 0)
			WARN(v, "noncanonical", off, "inode %llu: RDEV flag with device 0", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_TIMES) {
		in.mtime_sec = (int64_t)get64(p);
		in.ctime_sec = (int64_t)get64(p + 8);
		p += 16;
		if (in.mtime_sec == 0 && in.ctime_sec == 0)
			WARN(v, "noncanonical", off, "inode %llu: TIMES flag with times 0", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_TIMES_NSEC) {
		in.mtime_nsec = get32(p);
		in.ctime_nsec = get32(p + 4);
		p += 8;
		if (in.mtime_nsec >= 1000000000U || in.ctime_nsec >= 1000000000U)
			ERR(v, "inode-time", off, "inode %llu: nanoseconds %u/%u out of range",
			    ull(ino), in.mtime_nsec, in.ctime_nsec);
		else if (in.mtime_nsec == 0 && in.ctime_nsec == 0)
			WARN(v, "noncanonical", off, "inode %llu: TIMES_NSEC flag with nanoseconds 0",
			     ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_LOW_SIZE) {
		in.size = get32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_HIGH_SIZE) {
		uint32_t high = get32(p);

		in.size |= (uint64_t)high << 32;
		p += 4;
		if (high == 0)
			WARN(v, "noncanonical", off, "inode %llu: HIGH_SIZE flag with high bits 0",
			     ull(ino));
	}
	if ((flags & CFS_INODE_FLAGS_LOW_SIZE) && (in.size & 0xffffffffULL) == 0)
		WARN(v, "noncanonical", off, "inode %llu: LOW_SIZE flag with low bits 0", ull(ino));
	if (type != S_IFREG && in.size)
		WARN(v, "noncanonical", off, "inode %llu: a size of %llu on a file that is not regular",
		     ull(ino), ull(in.size));
	if (flags & CFS_INODE_FLAGS_XATTRS) {
		uint64_t xoff = get64(p);
		uint32_t xlen = get32(p + 8);

		p += 12;
		if (xlen == 0) {
			WARN(v, "noncanonical", off, "inode %llu: XATTRS flag with an empty set", ull(ino));
		} else {
			ret = check_xattrs(v, ino, xoff, xlen);
			if (ret < 0)
				return ret;
			CFS_V1_I(&in)->xattrs_off = xoff;
			in.xattrs_len = xlen;
		}
	}
	if (flags & CFS_INODE_FLAGS_DIGEST) {
		memcpy(in.digest, p, CFS_DIGEST_SIZE);
		in.has_digest = true;
		p += CFS_DIGEST_SIZE;
	}
	if ((flags & (CFS_INODE_FLAGS_DIGEST | CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD)) &&
	    type != S_IFREG)
		WARN(v, "noncanonical", off, "inode %llu: a digest flag on a file that is not regular",
		     ull(ino));

	if (raw_plen > ino) {
		ERR(v, "payload-bounds", off,
		    "inode %llu: payload of %u bytes starts before the inode section", ull(ino),
		    raw_plen);
		raw_plen = in.payload_len = 0;
	}
	ret = add_range(v, ino - raw_plen, ino + esize);
	if (ret < 0)
		return ret;
	if (type == S_IFDIR && in.payload_len) {
		const uint8_t *d = base + ino - in.payload_len;
		uint32_t n = in.payload_len >= 4 ? get32(d) : 0;

		if (n == 0 || n > CFS_MAX_DIR_CHUNKS || in.payload_len != cfs_dir_header_size(n)) {
			ERR(v, "dir-table", off,
			    "directory inode %llu: payload of %u bytes does not hold a chunk table of %u chunks (at most %u)",
			    ull(ino), in.payload_len, n, CFS_MAX_DIR_CHUNKS);
			in.payload_len = 0;
		} else {
			CFS_V1_I(&in)->n_chunks = n;
			in.payload = (const char *)d;
		}
	} else if (type == S_IFREG || type == S_IFLNK) {
		const char *what = type == S_IFLNK ? "symlink target" : "backing path";

		if (in.payload_len > CFS_MAX_PAYLOAD_PATH || (type == S_IFLNK && in.payload_len == 0)) {
			ERR(v, "payload-size", off, "inode %llu: %s of %u bytes (must be %u..%u)",
			    ull(ino), what, in.payload_len, type == S_IFLNK ? 1 : 0,
			    CFS_MAX_PAYLOAD_PATH);
		} else if (in.payload_len) {
			in.payload = (const char *)base + ino - in.payload_len;
			if (memchr(in.payload, '\0', in.payload_len))
				ERR(v, "payload-nul", off, "inode %llu: %s contains a NUL byte", ull(ino),
				    what);
		}
		if (type == S_IFREG) {
			uint8_t from[CFS_DIGEST_SIZE];
			/* No payload when its size was wrong (reported above). */
			bool spells = in.payload &&
				      cfs_digest_from_payload(in.payload, in.payload_len, from) == 0;

			if (flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD) {
				if (in.has_digest) {
					WARN(v, "noncanonical", off,
					     "inode %llu: both DIGEST and DIGEST_FROM_PAYLOAD", ull(ino));
					if (spells && memcmp(from, in.digest, CFS_DIGEST_SIZE))
						ERR(v, "digest-mismatch", off,
						    "inode %llu: the DIGEST field and the backing path name different digests",
						    ull(ino));
				} else if (!spells) {
					ERR(v, "digest-payload", off,
					    "inode %llu: backing path does not encode the digest its flags promise",
					    ull(ino));
				} else {
					memcpy(in.digest, from, CFS_DIGEST_SIZE);
					in.has_digest = true;
				}
			} else if (in.has_digest && spells && memcmp(from, in.digest, CFS_DIGEST_SIZE) == 0) {
				WARN(v, "noncanonical", off,
				     "inode %llu: DIGEST stored although the backing path spells it", ull(ino));
			}
			if (in.size && !in.payload_len)
				ERR(v, "no-backing", off,
				    "inode %llu: regular file of %llu bytes without a backing path",
				    ull(ino), ull(in.size));
		}
	} else if (in.payload_len) {
		WARN(v, "noncanonical", off, "inode %llu: a payload of %u bytes on a %s", ull(ino),
		     in.payload_len, type == S_IFDIR ? "directory" : "special file");
		in.payload_len = 0;
	}
	*out = in;
	return 1;
}
/* ---- directories ---- */

/* Load chunk f->chunk of the frame's directory; false when it cannot be read. */
static bool load_chunk(struct verifier *v, struct v1_pos *f)
{
	const uint8_t *e = f->table + sizeof(struct cfs_dir_header) +
			   (size_t)f->chunk * sizeof(struct cfs_dir_chunk);
	uint32_t n = get16(e + offsetof(struct cfs_dir_chunk, n_dentries));
	uint32_t size = get16(e + offsetof(struct cfs_dir_chunk, chunk_size));
	uint64_t off = get64(e + offsetof(struct cfs_dir_chunk, chunk_offset));
	uint64_t vsize = v->size - v->doff, abs;
	uint64_t ioff = f->ino + CFS_INODE_SECTION_OFFSET;

	if (n == 0 || size < n * sizeof(struct cfs_dentry)) {
		ERR(v, "chunk-size", ioff, "chunk %u holds %u entries in %u bytes", f->chunk, n, size);
		return false;
	}
	if (!fits(off, size, vsize)) {
		ERR(v, "chunk-bounds", ioff,
		    "chunk %u of %u bytes at data offset %llu runs past the end of the image",
		    f->chunk, size, ull(off));
		return false;
	}
	abs = v->doff + off;
	if (size > CFS_MAX_DIR_CHUNK_SIZE)
		ERR(v, "chunk-oversized", abs, "chunk %u is %u bytes, more than %u", f->chunk, size,
		    CFS_MAX_DIR_CHUNK_SIZE);
	else if (abs % CFS_PAGE_SIZE + size > CFS_PAGE_SIZE)
		ERR(v, "chunk-page", abs, "chunk %u of %u bytes crosses a %u-byte page boundary",
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
static int v1_next(void *ctx, void *pos, const struct cfs_inode *dir, struct vdirent *out)
{
	struct verifier *v = ctx;
	struct v1_pos *f = pos;

	(void)dir;
	for (;;) {
		const uint8_t *e;
		uint32_t names, nlen, noff;

		if (f->chunk >= f->n_chunks)
			return 0;
		if (!f->chunk_loaded) {
			if (!load_chunk(v, f)) {
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
			ERR(v, "entry-bounds", out->at, "entry %u of chunk %u: name of %u bytes at %u runs past the chunk",
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
	struct verifier *v = ctx;

	*at = NO_OFFSET;
	return v->data ? get64(v->data + offsetof(struct cfs_header, root_inode)) : 0;
}

static int v1_decode(void *ctx, uint64_t ino, uint64_t at, struct cfs_inode *in, uint32_t *type)
{
	int ret = decode_inode(ctx, ino, in);

	(void)at;
	if (ret > 0)
		*type = in->mode;
	return ret;
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

static const struct verify_format v1_format = {
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
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Bytes of the inode section no reachable inode uses. */
static void check_coverage(struct verifier *v)
{
	uint64_t pos = 0;

	if (v->n_ranges)
		qsort(v->ranges, v->n_ranges, sizeof(*v->ranges), cmp_range);
	for (size_t i = 0; i <= v->n_ranges; i++) {
		uint64_t start = i < v->n_ranges ? v->ranges[i].start : v->section;

		if (start > pos)
			cfs_vreport(v, CFS_VERIFY_WARNING, "unreachable", NULL, pos + CFS_INODE_SECTION_OFFSET,
			       "%llu bytes of the inode section (up to offset %llu) belong to no reachable inode: an unreachable inode or padding",
			       ull(start - pos), ull(start + CFS_INODE_SECTION_OFFSET));
		if (i < v->n_ranges && v->ranges[i].end > pos)
			pos = v->ranges[i].end;
	}
}

static bool check_header(struct verifier *v)
{
	const uint8_t *h = v->data;
	uint32_t magic;
	uint64_t root;

	v->cur_path = NULL;
	if (v->size < CFS_INODE_SECTION_OFFSET + 4) {
		ERR(v, "header", 0, "image of %llu bytes is too short for a header and an inode",
		    ull(v->size));
		return false;
	}
	magic = get32(h + offsetof(struct cfs_header, magic));
	if (magic != CFS_MAGIC) {
		ERR(v, "header", offsetof(struct cfs_header, magic),
		    "not a composefs image: magic 0x%08x, expected 0x%08x", magic, CFS_MAGIC);
		return false;
	}
	if (h[offsetof(struct cfs_header, version)] != CFS_VERSION) {
		ERR(v, "header", 0, "format version %u, this check knows %u",
		    h[offsetof(struct cfs_header, version)], CFS_VERSION);
		return false;
	}
	for (size_t i = 0; i < sizeof(struct cfs_header); i++) {
		if ((i >= 1 && i < 4) || i >= offsetof(struct cfs_header, unused3)) {
			if (h[i]) {
				WARN(v, "noncanonical", i, "header: unused byte at offset %zu is not 0", i);
				break;
			}
		}
	}
	v->doff = get64(h + offsetof(struct cfs_header, data_offset));
	if (v->doff < CFS_INODE_SECTION_OFFSET || v->doff > v->size) {
		ERR(v, "header", offsetof(struct cfs_header, data_offset),
		    "data section offset %llu outside the image (%llu..%llu)", ull(v->doff),
		    ull(CFS_INODE_SECTION_OFFSET), ull(v->size));
		return false;
	}
	v->section = v->doff - CFS_INODE_SECTION_OFFSET;
	root = get64(h + offsetof(struct cfs_header, root_inode));
	if (!fits(root, 4, v->section)) {
		ERR(v, "header", offsetof(struct cfs_header, root_inode),
		    "root inode %llu lies outside the inode section (%llu bytes)", ull(root),
		    ull(v->section));
		return false;
	}
	return true;
}

int cfs_verify_v1(struct verifier *v)
{
	int ret;

	if (!check_header(v))
		return 0;
	ret = cfs_verify_walk(v, &v1_format, v);
	if (ret < 0)
		return ret;
	check_coverage(v);
	return 1;
}
