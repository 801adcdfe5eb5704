// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The reader of composefs 1.0 images (EROFS with overlayfs xattrs, the
 * layout of erofs-format.h), behind the format-blind cfs_image_* API. It
 * shows the tree as composefs presents it, not the raw EROFS one: a
 * regular file's backing path comes from trusted.overlay.redirect and its
 * digest from trusted.overlay.metacopy, escaped trusted.overlay.overlay.*
 * xattrs are unescaped, the composefs-internal ones are hidden, escaped
 * whiteouts show as the 0/0 character devices they stand for, and the
 * root's whiteouts for lower layers, "." and ".." are left out. In the
 * stored view (CFS_VIEW_STORED) it shows what mkcomposefs was given
 * instead, as composefs-info reads it: no digest for content in the image,
 * the opaque markers on the root, inline xattrs before shared ones. Like
 * reader.c it trusts nothing: every offset and length is checked against
 * the image before a byte is read, every field copied out once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "erofs-format.h"
#include "base/internal.h"
#include "erofs.h"
#include "format/reader.h"

#define OVL "trusted.overlay."
#define OVL_ESC "trusted.overlay.overlay."
#define OVL_LEN (sizeof(OVL) - 1)
#define OVL_ESC_LEN (sizeof(OVL_ESC) - 1)
#define MAX_KEY 512 /* the longest prefix plus a 255-byte suffix */

static int corrupt(void)
{
	return -EFSCORRUPTED;
}

bool cfs_erofs_magic(const uint8_t *data, uint64_t size)
{
	return size >= 4 && get32(data) == CFS_EROFS_MAGIC;
}

int cfs_erofs_open(struct cfs_image *img)
{
	struct cfs_erofs_image *e = CFS_EROFS_IMG(img);
	const uint8_t *sb = img->data + EROFS_SUPER_OFFSET;
	uint32_t magic, blkbits, meta, xattr, incompat, version, blocks;

	if (img->size < EROFS_SUPER_OFFSET + sizeof(struct erofs_super_block)) {
		cfs_msg("composefs 1.0 image is too short: %llu bytes, the superblock ends at %zu",
			(unsigned long long)img->size,
			EROFS_SUPER_OFFSET + sizeof(struct erofs_super_block));
		return corrupt();
	}
	version = get32(img->data + offsetof(struct cfs_erofs_header, version));
	if (version != CFS_EROFS_VERSION) {
		cfs_msg("unsupported composefs header version %u at offset %zu (this reader knows %u)",
			version, offsetof(struct cfs_erofs_header, version), CFS_EROFS_VERSION);
		return corrupt();
	}
	img->version = get32(img->data + offsetof(struct cfs_erofs_header, composefs_version));
	magic = get32(sb + offsetof(struct erofs_super_block, magic));
	if (magic != EROFS_SUPER_MAGIC_V1) {
		cfs_msg("not an EROFS superblock: magic 0x%08x at offset %u, expected 0x%08x", magic,
			EROFS_SUPER_OFFSET, EROFS_SUPER_MAGIC_V1);
		return corrupt();
	}
	blkbits = sb[offsetof(struct erofs_super_block, blkszbits)];
	if (blkbits != EROFS_BLKSIZ_BITS) {
		cfs_msg("superblock at offset %u: block size 2^%u, this reader knows 2^%u",
			EROFS_SUPER_OFFSET, blkbits, EROFS_BLKSIZ_BITS);
		return corrupt();
	}
	incompat = get32(sb + offsetof(struct erofs_super_block, feature_incompat));
	if (incompat) {
		cfs_msg("superblock at offset %u: incompatible features 0x%x", EROFS_SUPER_OFFSET,
			incompat);
		return corrupt();
	}
	if (sb[offsetof(struct erofs_super_block, sb_extslots)] ||
	    get16(sb + offsetof(struct erofs_super_block, extra_devices)) ||
	    sb[offsetof(struct erofs_super_block, xattr_prefix_count)] ||
	    sb[offsetof(struct erofs_super_block, dirblkbits)]) {
		cfs_msg("superblock at offset %u: uses EROFS features composefs does not",
			EROFS_SUPER_OFFSET);
		return corrupt();
	}
	blocks = get32(sb + offsetof(struct erofs_super_block, blocks));
	if ((uint64_t)blocks << EROFS_BLKSIZ_BITS > img->size) {
		cfs_msg("superblock at offset %u: %u blocks, but the image holds %llu bytes (truncated?)",
			EROFS_SUPER_OFFSET, blocks, (unsigned long long)img->size);
		return corrupt();
	}
	meta = get32(sb + offsetof(struct erofs_super_block, meta_blkaddr));
	xattr = get32(sb + offsetof(struct erofs_super_block, xattr_blkaddr));
	e->meta_base = (uint64_t)meta << EROFS_BLKSIZ_BITS;
	e->xattr_base = (uint64_t)xattr << EROFS_BLKSIZ_BITS;
	if (e->meta_base >= img->size || e->xattr_base > img->size) {
		cfs_msg("superblock at offset %u: metadata block %u or xattr block %u past the end of the image",
			EROFS_SUPER_OFFSET, meta, xattr);
		return corrupt();
	}
	img->root = get16(sb + offsetof(struct erofs_super_block, root_nid));
	e->build_time = (int64_t)get64(sb + offsetof(struct erofs_super_block, build_time));
	e->build_time_nsec =
		get32(sb + offsetof(struct erofs_super_block, build_time_nsec));
	return 0;
}

void cfs_erofs_close(struct cfs_image *img)
{
	struct cfs_erofs_image *e = CFS_EROFS_IMG(img);

	for (size_t i = 0; i < e->keys_cap; i++)
		free(e->keys[i]);
	free(e->keys);
	e->keys = NULL;
	e->n_keys = e->keys_cap = 0;
}

/* ---- xattrs, raw ---- */

static const char *prefix_of(uint8_t index)
{
	switch (index) {
	case 0:
		return "";
	case EROFS_XATTR_INDEX_USER:
		return "user.";
	case EROFS_XATTR_INDEX_POSIX_ACL_ACCESS:
		return "system.posix_acl_access";
	case EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT:
		return "system.posix_acl_default";
	case EROFS_XATTR_INDEX_TRUSTED:
		return "trusted.";
	case EROFS_XATTR_INDEX_SECURITY:
		return "security.";
	}
	return NULL;
}

/* Decode the entry at file offset @off, which must end by @limit; *@size: its padded size. */
static int one_xattr(const struct cfs_image *img, uint64_t nid, uint64_t off, uint64_t limit,
		     uint64_t *size, cfs_erofs_raw_fn fn, void *ctx)
{
	const uint8_t *e;
	uint32_t nlen, vlen;
	const char *prefix;
	char key[MAX_KEY];
	size_t plen;

	if (!fits(off, sizeof(struct erofs_xattr_entry), limit)) {
		cfs_msg("inode %llu: xattr entry at offset %llu runs past its area",
			(unsigned long long)nid, (unsigned long long)off);
		return corrupt();
	}
	e = img->data + off;
	nlen = e[offsetof(struct erofs_xattr_entry, e_name_len)];
	vlen = get16(e + offsetof(struct erofs_xattr_entry, e_value_size));
	prefix = prefix_of(e[offsetof(struct erofs_xattr_entry, e_name_index)]);
	if (!prefix) {
		cfs_msg("inode %llu: xattr entry at offset %llu has unknown name index %u",
			(unsigned long long)nid, (unsigned long long)off,
			e[offsetof(struct erofs_xattr_entry, e_name_index)]);
		return corrupt();
	}
	*size = (sizeof(struct erofs_xattr_entry) + nlen + vlen + 3) & ~3ULL;
	if (!fits(off, sizeof(struct erofs_xattr_entry) + nlen + vlen, limit)) {
		cfs_msg("inode %llu: xattr entry at offset %llu (name %u bytes, value %u bytes) runs past its area",
			(unsigned long long)nid, (unsigned long long)off, nlen, vlen);
		return corrupt();
	}
	plen = strlen(prefix);
	if (plen + nlen == 0 || memchr(e + sizeof(struct erofs_xattr_entry), '\0', nlen)) {
		cfs_msg("inode %llu: xattr entry at offset %llu has an invalid name",
			(unsigned long long)nid, (unsigned long long)off);
		return corrupt();
	}
	memcpy(key, prefix, plen);
	memcpy(key + plen, e + sizeof(struct erofs_xattr_entry), nlen);
	key[plen + nlen] = '\0';
	return fn(ctx, key, plen + nlen, e + sizeof(struct erofs_xattr_entry) + nlen, vlen);
}

/*
 * Every xattr of the inode whose xattr area is @xsize bytes at @xoff: the
 * shared ones first, or with @inline_first the inline ones first, the order
 * the kernel and composefs-info list them in.
 */
static int raw_xattrs(const struct cfs_image *img, uint64_t nid, uint64_t xoff, uint32_t xsize,
		      bool inline_first, cfs_erofs_raw_fn fn, void *ctx)
{
	uint64_t end = xoff + xsize, p, shared_ids, size;
	uint32_t shared;
	int ret;

	if (xsize == 0)
		return 0;
	shared = img->data[xoff + offsetof(struct erofs_xattr_ibody_header, h_shared_count)];
	p = xoff + sizeof(struct erofs_xattr_ibody_header);
	if ((uint64_t)shared * 4 > end - p) {
		cfs_msg("inode %llu: %u shared xattr ids do not fit its %u-byte xattr area",
			(unsigned long long)nid, shared, xsize);
		return corrupt();
	}
	shared_ids = p;
	for (int pass = 0; pass < 2; pass++) {
		if ((pass == 0) == inline_first) {
			for (p = shared_ids + (uint64_t)shared * 4; p < end; p += size) {
				ret = one_xattr(img, nid, p, end, &size, fn, ctx);
				if (ret)
					return ret;
			}
			continue;
		}
		for (uint32_t i = 0; i < shared; i++) {
			uint64_t off = CFS_EROFS_IMG(img)->xattr_base +
				       (uint64_t)get32(img->data + shared_ids + 4 * i) * 4;

			ret = one_xattr(img, nid, off, img->size, &size, fn, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int cfs_erofs_raw_xattrs(const struct cfs_image *img, uint64_t nid, cfs_erofs_raw_fn fn,
			 void *ctx)
{
	const uint8_t *p;
	uint64_t pos;
	uint32_t icount, isize;

	if (nid > (UINT64_MAX - CFS_EROFS_IMG(img)->meta_base) / EROFS_SLOTSIZE ||
	    !fits(pos = CFS_EROFS_IMG(img)->meta_base + nid * EROFS_SLOTSIZE,
		  sizeof(struct erofs_inode_compact), img->size))
		return corrupt();
	p = img->data + pos;
	isize = ((get16(p) >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT ?
			sizeof(struct erofs_inode_compact) :
			sizeof(struct erofs_inode_extended);
	icount = get16(p + 2);
	if (!icount)
		return 0;
	if (!fits(pos, isize + sizeof(struct erofs_xattr_ibody_header) + (icount - 1) * 4,
		  img->size))
		return corrupt();
	return raw_xattrs(img, nid, pos + isize,
			  sizeof(struct erofs_xattr_ibody_header) + (icount - 1) * 4, false, fn, ctx);
}

/* ---- what composefs makes of them ---- */

#define X_WHITEOUT 1 /* an escaped whiteout: the file is a 0/0 chardev */
#define X_WHITEOUTS 2 /* a directory holding escaped whiteouts */

struct scan {
	const struct cfs_image *img;
	uint64_t nid;
	unsigned int marks;
	uint32_t visible;
	const uint8_t *redirect, *metacopy;
	size_t redirect_len, metacopy_len;
};

static bool key_is(const char *key, size_t len, const char *what)
{
	return len == strlen(what) && memcmp(key, what, len) == 0;
}

/*
 * Is @key of an inode with @marks one readers do not see in @view? The raw
 * trusted.overlay.* keys are composefs's own, and so are the whiteout
 * markers mkcomposefs adds around an escaped whiteout. A mount hides the
 * opaque markers it adds beside them too; the stored view shows those,
 * as composefs-info does, since mkcomposefs keeps them when given them.
 */
static bool hidden(int view, unsigned int marks, const char *key, size_t len,
		   const uint8_t *value, size_t vlen)
{
	if (len >= OVL_LEN && memcmp(key, OVL, OVL_LEN) == 0 &&
	    !(len >= OVL_ESC_LEN && memcmp(key, OVL_ESC, OVL_ESC_LEN) == 0))
		return true;
	if (view == CFS_VIEW_STORED) {
		/* what composefs-info leaves out, whatever the inode */
		if (key_is(key, len, OVL_ESC "whiteouts") || key_is(key, len, "user.overlay.whiteout") ||
		    key_is(key, len, "user.overlay.whiteouts"))
			return true;
		return (marks & X_WHITEOUT) && key_is(key, len, OVL_ESC "whiteout");
	}
	if (marks & X_WHITEOUT)
		return key_is(key, len, OVL_ESC "whiteout") || key_is(key, len, "user.overlay.whiteout");
	if (marks & X_WHITEOUTS) {
		if (key_is(key, len, OVL_ESC "whiteouts") || key_is(key, len, "user.overlay.whiteouts"))
			return true;
		if ((key_is(key, len, OVL_ESC "opaque") || key_is(key, len, "user.overlay.opaque")) &&
		    vlen == 1 && value[0] == 'x')
			return true;
	}
	return false;
}

static int scan_one(void *ctx, const char *key, size_t len, const uint8_t *value, size_t vlen)
{
	struct scan *s = ctx;

	if (key_is(key, len, OVL "redirect")) {
		s->redirect = value;
		s->redirect_len = vlen;
	} else if (key_is(key, len, OVL "metacopy")) {
		s->metacopy = value;
		s->metacopy_len = vlen;
	} else if (key_is(key, len, OVL_ESC "whiteout")) {
		s->marks |= X_WHITEOUT;
	} else if (key_is(key, len, OVL_ESC "whiteouts")) {
		s->marks |= X_WHITEOUTS;
	}
	return 0;
}

static int count_one(void *ctx, const char *key, size_t len, const uint8_t *value, size_t vlen)
{
	struct scan *s = ctx;

	if (!hidden(s->img->view, s->marks, key, len, value, vlen))
		s->visible++;
	return 0;
}

/* ---- inodes ---- */

static int read_at(const struct cfs_image *img, const struct cfs_inode *in, uint64_t off,
		   void *buf, size_t len)
{
	const struct cfs_erofs_inode *ei = CFS_EROFS_I(in);

	while (len > 0) {
		uint64_t at, n;

		if (off < ei->tail_start) {
			n = EROFS_BLKSIZ - off % EROFS_BLKSIZ;
			if (n > ei->tail_start - off)
				n = ei->tail_start - off;
			at = ei->data_blocks + off;
		} else {
			n = in->size - off;
			at = ei->data_tail + (off - ei->tail_start);
		}
		if (n > len)
			n = len;
		if (!fits(at, n, img->size))
			return corrupt(); /* checked when the inode was decoded */
		memcpy(buf, img->data + at, n);
		buf = (uint8_t *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

int cfs_erofs_read(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		   size_t len)
{
	if (!CFS_EROFS_I(in)->has_content || off > in->size || len > in->size - off)
		return -EINVAL;
	return read_at(img, in, off, buf, len);
}

/* The fs-verity digest of @in's content in the image, as a backing file's. */
static int content_digest(const struct cfs_image *img, struct cfs_inode *in)
{
	uint8_t *buf = malloc(in->size);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = read_at(img, in, 0, buf, in->size);
	if (ret == 0)
		ret = cfs_verity_digest_mem(buf, in->size, in->digest);
	free(buf);
	if (ret < 0)
		return ret;
	in->has_digest = true;
	return 0;
}

int cfs_erofs_inode(struct cfs_image *img, uint64_t nid, struct cfs_inode *out)
{
	struct cfs_erofs_image *e = CFS_EROFS_IMG(img);
	struct cfs_inode in;
	struct cfs_erofs_inode *ei = CFS_EROFS_I(&in);
	struct scan s = { .img = img, .nid = nid };
	const uint8_t *p;
	uint64_t pos, head, xoff;
	uint32_t fmt, layout, isize, xsize, icount, type, iu;
	bool compact;
	int ret;

	memset(&in, 0, sizeof(in));
	in.ino = nid;
	if (nid > (UINT64_MAX - e->meta_base) / EROFS_SLOTSIZE ||
	    !fits(pos = e->meta_base + nid * EROFS_SLOTSIZE,
		  sizeof(struct erofs_inode_compact), img->size)) {
		cfs_msg("inode %llu: lies outside the image (%llu bytes)", (unsigned long long)nid,
			(unsigned long long)img->size);
		return corrupt();
	}
	p = img->data + pos;
	fmt = get16(p);
	if (fmt >> 4) {
		cfs_msg("inode %llu at offset %llu: unknown format bits 0x%x",
			(unsigned long long)nid, (unsigned long long)pos, fmt);
		return corrupt();
	}
	compact = ((fmt >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT;
	layout = (fmt >> EROFS_I_DATALAYOUT_BIT) & 7;
	isize = compact ? sizeof(struct erofs_inode_compact) : sizeof(struct erofs_inode_extended);
	icount = get16(p + 2);
	xsize = icount ? sizeof(struct erofs_xattr_ibody_header) + (icount - 1) * 4 : 0;
	head = isize + xsize;
	if (!fits(pos, head, img->size)) {
		cfs_msg("inode %llu at offset %llu: %llu bytes of inode and xattrs run past the end of the image",
			(unsigned long long)nid, (unsigned long long)pos, (unsigned long long)head);
		return corrupt();
	}
	in.mode = get16(p + 4);
	if (compact) {
		in.nlink = get16(p + 6);
		in.size = get32(p + 8);
		iu = get32(p + 16);
		in.uid = get16(p + 24);
		in.gid = get16(p + 26);
		in.mtime_sec = e->build_time;
		in.mtime_nsec = e->build_time_nsec;
	} else {
		in.size = get64(p + 8);
		iu = get32(p + 16);
		in.uid = get32(p + 24);
		in.gid = get32(p + 28);
		in.mtime_sec = (int64_t)get64(p + 32);
		in.mtime_nsec = get32(p + 40);
		in.nlink = get32(p + 44);
	}
	in.ctime_sec = in.mtime_sec;
	in.ctime_nsec = in.mtime_nsec;
	type = in.mode & S_IFMT;
	if (!cfs_mode_valid(in.mode)) {
		cfs_msg("inode %llu at offset %llu: mode 0%o is not a file type and permission bits",
			(unsigned long long)nid, (unsigned long long)pos, in.mode);
		return corrupt();
	}
	if (in.mtime_nsec >= 1000000000U) {
		cfs_msg("inode %llu at offset %llu: nanoseconds %u out of range",
			(unsigned long long)nid, (unsigned long long)pos, in.mtime_nsec);
		return corrupt();
	}
	if (type == S_IFCHR || type == S_IFBLK)
		in.rdev = iu;

	xoff = pos + isize;
	ret = raw_xattrs(img, nid, xoff, xsize, false, scan_one, &s);
	if (ret < 0)
		return ret;

	/* Where the data is: whole blocks, then a tail after the inode. */
	ei->data_tail = pos + head;
	if (type == S_IFREG || type == S_IFDIR || type == S_IFLNK) {
		uint64_t blocks = 0, tail = 0;

		switch (layout) {
		case EROFS_INODE_FLAT_PLAIN:
			blocks = (in.size + EROFS_BLKSIZ - 1) / EROFS_BLKSIZ;
			break;
		case EROFS_INODE_FLAT_INLINE:
			blocks = in.size / EROFS_BLKSIZ;
			tail = in.size % EROFS_BLKSIZ;
			break;
		case EROFS_INODE_CHUNK_BASED:
			if (type != S_IFREG) {
				cfs_msg("inode %llu at offset %llu: a chunk-based inode that is not a regular file",
					(unsigned long long)nid, (unsigned long long)pos);
				return corrupt();
			}
			break;
		default:
			cfs_msg("inode %llu at offset %llu: data layout %u is not one composefs uses",
				(unsigned long long)nid, (unsigned long long)pos, layout);
			return corrupt();
		}
		if (layout != EROFS_INODE_CHUNK_BASED && in.size > img->size) {
			cfs_msg("inode %llu at offset %llu: %llu bytes of data in an image of %llu",
				(unsigned long long)nid, (unsigned long long)pos,
				(unsigned long long)in.size, (unsigned long long)img->size);
			return corrupt();
		}
		ei->data_blocks = (uint64_t)iu << EROFS_BLKSIZ_BITS;
		ei->tail_start = blocks * EROFS_BLKSIZ;
		if (layout != EROFS_INODE_CHUNK_BASED &&
		    ((blocks && !fits(ei->data_blocks, ei->tail_start, img->size)) ||
		     !fits(ei->data_tail, tail, img->size) ||
		     (tail &&
		      ei->data_tail / EROFS_BLKSIZ != (ei->data_tail + tail - 1) / EROFS_BLKSIZ))) {
			cfs_msg("inode %llu at offset %llu: %llu bytes of data (block %u, tail at %llu) run past the image or cross a block",
				(unsigned long long)nid, (unsigned long long)pos,
				(unsigned long long)in.size, iu, (unsigned long long)ei->data_tail);
			return corrupt();
		}
		if (!blocks)
			ei->data_blocks = 0;
	}

	if (type == S_IFREG && layout != EROFS_INODE_CHUNK_BASED && in.size > 0) {
		/*
		 * Content in the image: mounted, its digest is what a backing
		 * file's would be; stored, there is none (a dump's DIGEST would
		 * ask for a metacopy xattr).
		 */
		if (s.redirect || s.metacopy) {
			cfs_msg("inode %llu at offset %llu: a file with content in the image has overlay metacopy xattrs",
				(unsigned long long)nid, (unsigned long long)pos);
			return corrupt();
		}
		ei->has_content = true;
		if (img->view == CFS_VIEW_MOUNTED) {
			ret = content_digest(img, &in);
			if (ret < 0)
				return ret;
		}
	} else if (type == S_IFREG) {
		if (s.redirect) {
			if (s.redirect_len < 2 || s.redirect[0] != '/' ||
			    s.redirect_len - 1 > CFS_MAX_PAYLOAD_PATH ||
			    memchr(s.redirect, '\0', s.redirect_len)) {
				cfs_msg("inode %llu at offset %llu: invalid trusted.overlay.redirect of %zu bytes",
					(unsigned long long)nid, (unsigned long long)pos, s.redirect_len);
				return corrupt();
			}
			in.payload = (const char *)s.redirect + 1;
			in.payload_len = (uint32_t)(s.redirect_len - 1);
		}
		if (s.metacopy && s.metacopy_len) {
			/* version, length, flags, algorithm, then the digest */
			if (s.metacopy_len != 4 + CFS_DIGEST_SIZE || s.metacopy[0] != 0 ||
			    s.metacopy[1] != 4 + CFS_DIGEST_SIZE || s.metacopy[3] != 1) {
				cfs_msg("inode %llu at offset %llu: trusted.overlay.metacopy of %zu bytes is not a sha256 fs-verity digest",
					(unsigned long long)nid, (unsigned long long)pos, s.metacopy_len);
				return corrupt();
			}
			memcpy(in.digest, s.metacopy + 4, CFS_DIGEST_SIZE);
			in.has_digest = true;
		}
		if ((s.marks & X_WHITEOUT) && in.size == 0) {
			in.mode = S_IFCHR | (in.mode & 07777);
			in.rdev = 0;
		} else {
			s.marks &= ~X_WHITEOUT;
		}
	} else if (type == S_IFLNK) {
		if (in.size == 0 || in.size > CFS_MAX_PAYLOAD_PATH ||
		    (ei->tail_start && ei->tail_start != in.size && in.size > ei->tail_start)) {
			cfs_msg("inode %llu at offset %llu: symlink target of %llu bytes (must be 1..%u, in one piece)",
				(unsigned long long)nid, (unsigned long long)pos,
				(unsigned long long)in.size, CFS_MAX_PAYLOAD_PATH);
			return corrupt();
		}
		in.payload = (const char *)img->data +
			     (ei->tail_start ? ei->data_blocks : ei->data_tail);
		in.payload_len = (uint32_t)in.size;
		if (memchr(in.payload, '\0', in.payload_len)) {
			cfs_msg("inode %llu at offset %llu: symlink target contains a NUL byte",
				(unsigned long long)nid, (unsigned long long)pos);
			return corrupt();
		}
	}
	if (type != S_IFDIR)
		s.marks &= ~X_WHITEOUTS;
	ret = raw_xattrs(img, nid, xoff, xsize, false, count_one, &s);
	if (ret < 0)
		return ret;
	ei->marks = s.marks;
	in.offset = pos;
	if (s.visible) {
		ei->xattrs_off = xoff;
		in.xattrs_len = xsize;
	}
	*out = in;
	return 0;
}

/* ---- directories ---- */

static uint8_t dt_of(uint8_t ft)
{
	static const uint8_t map[] = {
		[EROFS_FT_UNKNOWN] = 0,	      [EROFS_FT_REG_FILE] = 8, [EROFS_FT_DIR] = 4,
		[EROFS_FT_CHRDEV] = 2,	      [EROFS_FT_BLKDEV] = 6,   [EROFS_FT_FIFO] = 1,
		[EROFS_FT_SOCK] = 12,	      [EROFS_FT_SYMLINK] = 10,
	};

	return ft < sizeof(map) ? map[ft] : 0;
}

/* Where an iterator is in a directory, in cfs_dir_iter.priv. */
struct erofs_dir_pos {
	uint64_t size, data_blocks, data_tail, tail_start; /* the directory's data */
	uint64_t pos; /* logical offset of the current block */
	uint32_t entry; /* next entry in it */
	bool root;
};

static struct erofs_dir_pos *dir_pos(struct cfs_dir_iter *it)
{
	_Static_assert(sizeof(struct erofs_dir_pos) <= sizeof(it->priv), "erofs_dir_pos fits");
	return (struct erofs_dir_pos *)(void *)it->priv;
}

int cfs_erofs_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir,
			    struct cfs_dir_iter *it)
{
	const struct cfs_erofs_inode *ei = CFS_EROFS_I(dir);
	struct erofs_dir_pos *d = dir_pos(it);

	d->size = dir->size;
	d->data_blocks = ei->data_blocks;
	d->data_tail = ei->data_tail;
	d->tail_start = ei->tail_start;
	d->root = dir->ino == img->root;
	return 0;
}

static bool hex2(const char *name, size_t len)
{
	return len == 2 && strchr("0123456789abcdef", name[0]) && name[0] &&
	       strchr("0123456789abcdef", name[1]) && name[1];
}

/* Is @nid an inode of size 0 (what an escaped whiteout must be)? */
static bool empty_file(const struct cfs_image *img, uint64_t nid)
{
	const uint8_t *p;
	uint64_t pos;

	if (nid > (UINT64_MAX - CFS_EROFS_IMG(img)->meta_base) / EROFS_SLOTSIZE ||
	    !fits(pos = CFS_EROFS_IMG(img)->meta_base + nid * EROFS_SLOTSIZE,
		  sizeof(struct erofs_inode_extended), img->size))
		return true; /* let the full decode report it */
	p = img->data + pos;
	if (((get16(p) >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT)
		return get32(p + 8) == 0;
	return get64(p + 8) == 0;
}

int cfs_erofs_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out)
{
	struct cfs_image *img = it->img;
	struct erofs_dir_pos *d = dir_pos(it);
	int ret;

	while (d->pos < d->size) {
		uint64_t blen = d->size - d->pos, at, first, n;
		const uint8_t *b, *e;
		uint32_t nameoff, end;

		if (blen > EROFS_BLKSIZ)
			blen = EROFS_BLKSIZ;
		at = d->pos < d->tail_start ? d->data_blocks + d->pos
					      : d->data_tail + (d->pos - d->tail_start);
		if (!fits(at, blen, img->size)) {
			cfs_msg("directory inode %llu: block at offset %llu runs past the image",
				(unsigned long long)it->dir_ino, (unsigned long long)at);
			return corrupt();
		}
		b = img->data + at;
		first = blen >= sizeof(struct erofs_dirent) ? get16(b + 8) : 0;
		if (first < sizeof(struct erofs_dirent) || first % sizeof(struct erofs_dirent) ||
		    first > blen) {
			cfs_msg("directory inode %llu: block at offset %llu: first name at %llu of %llu bytes",
				(unsigned long long)it->dir_ino, (unsigned long long)at,
				(unsigned long long)first, (unsigned long long)blen);
			return corrupt();
		}
		n = first / sizeof(struct erofs_dirent);
		if (d->entry >= n) {
			d->pos += blen;
			d->entry = 0;
			continue;
		}
		e = b + (size_t)d->entry * sizeof(struct erofs_dirent);
		nameoff = get16(e + 8);
		end = d->entry + 1 < n ? get16(e + sizeof(struct erofs_dirent) + 8) : (uint32_t)blen;
		if (nameoff < first || end < nameoff || end > blen) {
			cfs_msg("directory inode %llu: block at offset %llu: entry %u: name at %u..%u outside the block",
				(unsigned long long)it->dir_ino, (unsigned long long)at, d->entry,
				nameoff, end);
			return corrupt();
		}
		out->name = (const char *)b + nameoff;
		out->name_len = end - nameoff;
		if (d->entry + 1 == n) /* the last name may be followed by padding */
			out->name_len = strnlen(out->name, out->name_len);
		out->ino = get64(e);
		out->d_type = dt_of(e[10]);
		if (out->name_len == 0 || out->name_len > CFS_MAX_NAME_LEN ||
		    memchr(out->name, '/', out->name_len) || memchr(out->name, '\0', out->name_len)) {
			cfs_msg("directory inode %llu: block at offset %llu: entry %u has an invalid name",
				(unsigned long long)it->dir_ino, (unsigned long long)at, d->entry);
			return corrupt();
		}
		if (it->prev_name &&
		    cfs_name_cmp(it->prev_name, it->prev_len, out->name, out->name_len) >= 0) {
			cfs_msg("directory inode %llu: block at offset %llu: entry %u is out of order",
				(unsigned long long)it->dir_ino, (unsigned long long)at, d->entry);
			return corrupt();
		}
		it->prev_name = out->name;
		it->prev_len = out->name_len;
		d->entry++;
		if (out->name[0] == '.' &&
		    (out->name_len == 1 || (out->name_len == 2 && out->name[1] == '.')))
			continue;
		if (d->root && e[10] == EROFS_FT_CHRDEV && hex2(out->name, out->name_len)) {
			/* The whiteouts mkcomposefs adds to hide the lower layers. */
			uint64_t ipos, meta = CFS_EROFS_IMG(img)->meta_base;
			const uint8_t *ip;

			if (out->ino <= (UINT64_MAX - meta) / EROFS_SLOTSIZE &&
			    fits(ipos = meta + out->ino * EROFS_SLOTSIZE,
				 sizeof(struct erofs_inode_compact), img->size)) {
				ip = img->data + ipos;
				if ((get16(ip + 4) & S_IFMT) == S_IFCHR && get32(ip + 16) == 0)
					continue;
			}
		}
		if (e[10] == EROFS_FT_REG_FILE && empty_file(img, out->ino)) {
			/* An escaped whiteout shows as the device it stands for. */
			struct cfs_inode in;

			ret = cfs_erofs_inode(img, out->ino, &in);
			if (ret < 0)
				return ret;
			out->d_type = dt_of(S_ISCHR(in.mode) ? EROFS_FT_CHRDEV : EROFS_FT_REG_FILE);
		}
		return 1;
	}
	return 0;
}

/* ---- xattrs, as readers see them ---- */

/*
 * An error leaves the position in the block that failed: go on with the
 * next block, as v1 goes on with the next chunk. Reading the failed one
 * again from its start would give its good entries twice and then the
 * same error, until the caller gave up.
 */
void cfs_erofs_dir_iter_skip(struct cfs_dir_iter *it)
{
	struct erofs_dir_pos *d = dir_pos(it);

	if (d->pos < d->size)
		d->pos += d->size - d->pos < EROFS_BLKSIZ ? d->size - d->pos : EROFS_BLKSIZ;
	d->entry = 0;
}

static size_t key_hash(const char *key, size_t len)
{
	return (size_t)cfs_fnv1a(CFS_FNV1A_INIT, key, len);
}

/* The image's lasting copy of @key; the caller holds keys_lock. */
static const char *intern_locked(struct cfs_image *img, const char *key, size_t len)
{
	struct cfs_erofs_image *e = CFS_EROFS_IMG(img);
	size_t i;

	if (2 * (e->n_keys + 1) > e->keys_cap) {
		size_t cap = e->keys_cap ? 2 * e->keys_cap : 64;
		char **keys = calloc(cap, sizeof(*keys));

		if (!keys)
			return NULL;
		for (size_t j = 0; j < e->keys_cap; j++) {
			char *k = e->keys[j];

			if (!k)
				continue;
			for (i = key_hash(k, strlen(k)) & (cap - 1); keys[i]; i = (i + 1) & (cap - 1))
				;
			keys[i] = k;
		}
		free(e->keys);
		e->keys = keys;
		e->keys_cap = cap;
	}
	for (i = key_hash(key, len) & (e->keys_cap - 1); e->keys[i];
	     i = (i + 1) & (e->keys_cap - 1))
		if (strlen(e->keys[i]) == len && memcmp(e->keys[i], key, len) == 0)
			return e->keys[i];
	e->keys[i] = strndup(key, len);
	if (!e->keys[i])
		return NULL;
	e->n_keys++;
	return e->keys[i];
}

/*
 * The image's lasting copy of @key. Threads may list xattrs of one image at
 * once, and a lookup may rehash the set, so every use takes the lock; the
 * strings themselves never move or change once made.
 */
static const char *intern(struct cfs_image *img, const char *key, size_t len)
{
	const char *k;

	pthread_mutex_lock(&img->keys_lock);
	k = intern_locked(img, key, len);
	pthread_mutex_unlock(&img->keys_lock);
	return k;
}

struct pub {
	struct cfs_image *img;
	unsigned int marks;
	cfs_xattr_fn fn;
	void *ctx;
};

static int pub_one(void *ctx, const char *key, size_t len, const uint8_t *value, size_t vlen)
{
	struct pub *p = ctx;
	struct cfs_xattr x;
	char buf[MAX_KEY];

	if (hidden(p->img->view, p->marks, key, len, value, vlen))
		return 0;
	if (len >= OVL_ESC_LEN && memcmp(key, OVL_ESC, OVL_ESC_LEN) == 0) {
		memcpy(buf, OVL, OVL_LEN);
		memcpy(buf + OVL_LEN, key + OVL_ESC_LEN, len - OVL_ESC_LEN);
		len -= OVL_ESC_LEN - OVL_LEN;
		key = buf;
	}
	x.key = intern(p->img, key, len);
	if (!x.key)
		return -ENOMEM;
	x.key_len = len;
	x.value = value;
	x.value_len = vlen;
	return p->fn(p->ctx, &x);
}

int cfs_erofs_xattrs(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		     void *ctx)
{
	const struct cfs_erofs_inode *ei = CFS_EROFS_I(inode);
	struct pub p = { img, ei->marks, fn, ctx };

	if (inode->xattrs_len == 0)
		return 0;
	if (!fits(ei->xattrs_off, inode->xattrs_len, img->size) ||
	    inode->xattrs_len < sizeof(struct erofs_xattr_ibody_header))
		return -EINVAL;
	return raw_xattrs(img, inode->ino, ei->xattrs_off, inode->xattrs_len,
			  img->view == CFS_VIEW_STORED, pub_one, &p);
}

bool cfs_erofs_content_in_image(const struct cfs_inode *in)
{
	return CFS_EROFS_I(in)->has_content;
}

void cfs_erofs_describe(const struct cfs_image *img, struct cfs_image_desc *d)
{
	d->format = "erofs";
	d->label = "format";
	snprintf(d->text, sizeof(d->text), "composefs 1.0 (EROFS), composefs_version %u",
		 img->version);
}

void cfs_erofs_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			      struct cfs_inode_desc *d)
{
	(void)img;
	/* no flags or chunks; xattrs_off is a file offset already */
	*d = (struct cfs_inode_desc){
		.ino_kind = "nid,",
		.digest_note = CFS_EROFS_I(in)->has_content ? " (of the content in the image)" : "",
		.xattrs_offset = CFS_EROFS_I(in)->xattrs_off,
		.content_in_image = CFS_EROFS_I(in)->has_content,
	};
}
