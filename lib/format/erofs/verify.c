// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl verify of composefs 1.0 (EROFS) images. Each reachable inode is
 * decoded by the EROFS reader, whose bounds checks (inode, xattr area,
 * shared xattrs, data blocks, symlink target, metacopy encoding) are the
 * ones the reader applies to any input; a failure there becomes a problem
 * report naming the path, and the walk goes on with the next entry. On top
 * of that this file checks, from the raw bytes, what the reader does not
 * need to: every directory block and entry (names, order, duplicates, "."
 * and "..", d_type, targets in bounds), cycles and directory hardlinks,
 * link counts, the overlay xattrs overlayfs will act on (a redirect must
 * spell the digest its metacopy holds; no overlay xattr where overlayfs
 * would misread it), the chunk map of a file kept outside the image, and
 * the superblock's counts. The objects then go to verify.c's checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "erofs-format.h"
#include "erofs.h"
#include "format/format.h"
#include "format/reader.h"
#include "format/verify-walk.h"

#define OVL "trusted.overlay."
#define OVL_LEN (sizeof(OVL) - 1)

/* Where the walk is in one directory. */
struct epos {
	uint64_t pos; /* logical offset of the current block */
	uint32_t entry; /* next entry in it */
	bool dot, dotdot; /* met its "." and ".." */
};

struct ewalk {
	struct cfs_verifier *v;
	struct cfs_image img;
	char msg[1024];
};

static uint8_t ft_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EROFS_FT_REG_FILE;
	case S_IFDIR: return EROFS_FT_DIR;
	case S_IFCHR: return EROFS_FT_CHRDEV;
	case S_IFBLK: return EROFS_FT_BLKDEV;
	case S_IFIFO: return EROFS_FT_FIFO;
	case S_IFSOCK: return EROFS_FT_SOCK;
	case S_IFLNK: return EROFS_FT_SYMLINK;
	}
	return EROFS_FT_UNKNOWN;
}

static uint64_t slot_offset(const struct ewalk *w, uint64_t nid)
{
	if (nid > (UINT64_MAX - CFS_EROFS_IMG(&w->img)->meta_base) / EROFS_SLOTSIZE)
		return CFS_NO_OFFSET;
	return CFS_EROFS_IMG(&w->img)->meta_base + nid * EROFS_SLOTSIZE;
}

/* ---- the header and superblock ---- */

static bool check_super(struct ewalk *w)
{
	struct cfs_verifier *v = w->v;
	const uint8_t *h = v->data, *sb;
	uint32_t flags, cver, compat;
	int ret;

	v->cur_path = NULL;
	cfs_msg_capture(w->msg, sizeof(w->msg));
	ret = cfs_erofs_open(&w->img);
	cfs_msg_capture(NULL, 0);
	if (ret < 0) {
		CFS_VERR(v, "superblock", ret == -EFSCORRUPTED ? EROFS_SUPER_OFFSET : CFS_NO_OFFSET, "%s",
		    ret == -EFSCORRUPTED ? w->msg : strerror(-ret));
		return false;
	}
	flags = get32(h + offsetof(struct cfs_erofs_header, flags));
	if (flags & ~CFS_EROFS_FLAGS_HAS_ACL)
		CFS_VWARN(v, "noncanonical", offsetof(struct cfs_erofs_header, flags),
		     "composefs header: unknown flags 0x%x", flags & ~CFS_EROFS_FLAGS_HAS_ACL);
	cver = get32(h + offsetof(struct cfs_erofs_header, composefs_version));
	if (cver > CFS_EROFS_COMPOSEFS_VERSION_MAX)
		CFS_VERR(v, "header", offsetof(struct cfs_erofs_header, composefs_version),
		    "composefs_version %u, this check knows up to %u", cver,
		    CFS_EROFS_COMPOSEFS_VERSION_MAX);
	for (size_t i = offsetof(struct cfs_erofs_header, unused); i < EROFS_SUPER_OFFSET; i++)
		if (h[i]) {
			CFS_VWARN(v, "noncanonical", i,
			     "composefs header: byte at offset %zu before the superblock is not 0", i);
			break;
		}
	sb = h + EROFS_SUPER_OFFSET;
	if (get32(sb + offsetof(struct erofs_super_block, checksum)))
		CFS_VWARN(v, "noncanonical", EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, checksum),
		     "superblock: a checksum, which composefs does not write (and the kernel does not check without SB_CHKSUM)");
	compat = get32(sb + offsetof(struct erofs_super_block, feature_compat));
	if (compat & ~(EROFS_FEATURE_COMPAT_MTIME | EROFS_FEATURE_COMPAT_XATTR_FILTER))
		CFS_VWARN(v, "noncanonical",
		     EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, feature_compat),
		     "superblock: compatible features 0x%x that composefs does not write", compat);
	if (get64(sb + offsetof(struct erofs_super_block, packed_nid)) ||
	    get16(sb + offsetof(struct erofs_super_block, available_compr_algs)))
		CFS_VERR(v, "superblock", EROFS_SUPER_OFFSET,
		    "superblock: a packed inode or compression, which composefs images do not use");
	return true;
}

/* ---- inodes ---- */

struct xcheck {
	struct ewalk *w;
	uint64_t off; /* the inode's file offset, for reports */
	uint32_t raw_type;
	bool root;
	const char *prev[64]; /* keys seen, for duplicates (copies) */
	size_t n_prev;
	char keys[64][CFS_MAX_NAME_LEN + 32];
	bool dup_reported, many;
};

/*
 * The overlay xattrs overlayfs acts on in an image layer: redirect and
 * metacopy on regular files, opaque on directories. Anything else in the
 * raw trusted.overlay. namespace (not escaped as trusted.overlay.overlay.)
 * would change what the mount shows.
 */
static int check_raw_xattr(void *ctx, const char *key, size_t len, const uint8_t *value,
			   size_t vlen)
{
	struct xcheck *x = ctx;
	struct cfs_verifier *v = x->w->v;

	for (size_t i = 0; i < x->n_prev; i++)
		if (strlen(x->keys[i]) == len && memcmp(x->keys[i], key, len) == 0 &&
		    !x->dup_reported) {
			CFS_VERR(v, "xattr-duplicate", x->off, "xattr '%.*s' is stored twice", (int)len, key);
			x->dup_reported = true;
		}
	if (x->n_prev < 64 && len < sizeof(x->keys[0])) {
		memcpy(x->keys[x->n_prev], key, len);
		x->keys[x->n_prev++][len] = '\0';
	}
	if (len <= OVL_LEN || memcmp(key, OVL, OVL_LEN) != 0 ||
	    (len > OVL_LEN + 8 && memcmp(key + OVL_LEN, "overlay.", 8) == 0))
		return 0;
	key += OVL_LEN;
	len -= OVL_LEN;
	if ((len == 8 && memcmp(key, "redirect", 8) == 0) ||
	    (len == 8 && memcmp(key, "metacopy", 8) == 0)) {
		if (x->raw_type != S_IFREG)
			CFS_VERR(v, "overlay-xattr", x->off,
			    "trusted.overlay.%.*s on a %s: overlayfs would follow it", (int)len, key,
			    cfs_type_word(x->raw_type));
		return 0;
	}
	if (len == 6 && memcmp(key, "opaque", 6) == 0) {
		if (x->raw_type != S_IFDIR || vlen != 1 || (value[0] != 'y' && value[0] != 'x'))
			CFS_VERR(v, "overlay-xattr", x->off,
			    "trusted.overlay.opaque of %zu bytes on a %s", vlen,
			    cfs_type_word(x->raw_type));
		return 0;
	}
	CFS_VERR(v, "overlay-xattr", x->off,
	    "unescaped trusted.overlay.%.*s, which overlayfs would act on", (int)len, key);
	return 0;
}

/* The chunk map of a file whose content is elsewhere: in the image, and all holes. */
static void check_chunks(struct ewalk *w, const struct cfs_inode *in, uint32_t fmt_word)
{
	struct cfs_verifier *v = w->v;
	const uint8_t *p = v->data + in->offset;
	uint32_t isize, icount, bits, xsize;
	uint64_t n, at;

	isize = ((get16(p) >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT ?
			sizeof(struct erofs_inode_compact) :
			sizeof(struct erofs_inode_extended);
	icount = get16(p + 2);
	xsize = icount ? sizeof(struct erofs_xattr_ibody_header) + (icount - 1) * 4 : 0;
	if (fmt_word & ~EROFS_CHUNK_FORMAT_BLKBITS_MASK) {
		CFS_VERR(v, "chunk-format", in->offset,
		    "chunk-based inode with chunk format 0x%x (composefs uses plain block maps)",
		    fmt_word);
		return;
	}
	bits = EROFS_BLKSIZ_BITS + (fmt_word & EROFS_CHUNK_FORMAT_BLKBITS_MASK);
	n = (in->size + (1ULL << bits) - 1) >> bits;
	at = in->offset + isize + xsize;
	if (n > (EROFS_BLKSIZ - at % EROFS_BLKSIZ) / 4)
		return; /* composefs 1.0 keeps no map that would leave the block: nothing to check */
	if (!fits(at, n * 4, v->size)) {
		CFS_VERR(v, "chunk-bounds", in->offset,
		    "block map of %llu chunks at offset %llu runs past the end of the image",
		    cfs_ull(n), cfs_ull(at));
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		if (get32(v->data + at + i * 4) != EROFS_NULL_ADDR) {
			CFS_VWARN(v, "noncanonical", at + i * 4,
			     "chunk %llu of a file kept outside the image is not a hole", cfs_ull(i));
			break;
		}
}

/*
 * Decode inode @nid at the current path, named by the entry at @at. Return 1 with *@out (and the raw
 * file type in *@raw_type) when it can be used, 0 when not, or -errno.
 */
static int decode(void *ctx, uint64_t nid, uint64_t at, struct cfs_inode *out,
		  uint32_t *raw_type)
{
	struct ewalk *w = ctx;
	struct cfs_verifier *v = w->v;
	struct xcheck *x;
	uint64_t off = slot_offset(w, nid);
	const uint8_t *p;
	uint32_t fmt;
	int ret;

	cfs_msg_capture(w->msg, sizeof(w->msg));
	ret = cfs_erofs_inode(&w->img, nid, out);
	cfs_msg_capture(NULL, 0);
	if (ret == -EFSCORRUPTED) {
		/* at the inode, or at the entry when the inode is not in the image */
		CFS_VERR(v, "inode", off != CFS_NO_OFFSET && off < v->size ? off : at, "%s", w->msg);
		return 0;
	}
	if (ret < 0)
		return ret;
	p = v->data + out->offset;
	fmt = get16(p);
	*raw_type = get16(p + 4) & S_IFMT;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->w = w;
	x->off = out->offset;
	x->raw_type = *raw_type;
	cfs_msg_capture(w->msg, sizeof(w->msg));
	ret = cfs_erofs_raw_xattrs(&w->img, nid, check_raw_xattr, x);
	cfs_msg_capture(NULL, 0);
	free(x);
	if (ret < 0)
		return ret; /* the reader decoded these a moment ago */

	if (((fmt >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT ?
		    get32(p + offsetof(struct erofs_inode_compact, i_reserved)) ||
			    get32(p + offsetof(struct erofs_inode_compact, i_reserved2)) :
		    get16(p + offsetof(struct erofs_inode_extended, i_reserved)) != 0)
		CFS_VWARN(v, "noncanonical", out->offset, "inode %llu: reserved bytes are not 0", cfs_ull(nid));

	if (*raw_type == S_IFREG && !CFS_EROFS_I(out)->has_content && out->size > 0) {
		uint8_t from[CFS_DIGEST_SIZE];

		if (((fmt >> EROFS_I_DATALAYOUT_BIT) & 7) != EROFS_INODE_CHUNK_BASED)
			CFS_VERR(v, "no-backing", out->offset,
			    "inode %llu: regular file of %llu bytes neither in the image nor chunk-based",
			    cfs_ull(nid), cfs_ull(out->size));
		else
			check_chunks(w, out, get16(p + 16));
		if (out->payload && out->has_digest &&
		    (cfs_digest_from_payload(out->payload, out->payload_len, from) != 0 ||
		     memcmp(from, out->digest, CFS_DIGEST_SIZE) != 0 ||
		     out->payload_len != CFS_OBJECT_PATH_SIZE - 1 || out->payload[2] != '/'))
			CFS_VERR(v, "redirect-digest", out->offset,
			    "inode %llu: trusted.overlay.redirect '/%.*s' is not the object path of the digest in trusted.overlay.metacopy",
			    cfs_ull(nid), (int)out->payload_len, out->payload);
	}
	if (*raw_type != S_IFREG && *raw_type != S_IFDIR && *raw_type != S_IFLNK && out->size)
		CFS_VWARN(v, "noncanonical", out->offset, "inode %llu: a size of %llu on a %s", cfs_ull(nid),
		     cfs_ull(out->size), cfs_type_word(*raw_type));
	return 1;
}

/* ---- directories ---- */

/*
 * The next raw entry of directory @d, read at @pos, or 0 at its end. A block that
 * cannot be read is reported and skipped; so is an entry.
 */
static int next_entry(void *ctx, void *pos, const struct cfs_inode *d, struct cfs_vdirent *out)
{
	struct ewalk *w = ctx;
	struct cfs_verifier *v = w->v;
	const struct cfs_erofs_inode *ei = CFS_EROFS_I(d);
	struct epos *f = pos;

	while (f->pos < d->size) {
		uint64_t blen = d->size - f->pos, boff, first, n;
		const uint8_t *b, *e;
		uint32_t nameoff, end;

		if (blen > EROFS_BLKSIZ)
			blen = EROFS_BLKSIZ;
		boff = f->pos < ei->tail_start ? ei->data_blocks + f->pos
					       : ei->data_tail + (f->pos - ei->tail_start);
		if (!fits(boff, blen, v->size)) {
			CFS_VERR(v, "dir-bounds", d->offset,
			    "directory block at offset %llu runs past the end of the image", cfs_ull(boff));
			f->pos = d->size;
			return 0;
		}
		b = v->data + boff;
		first = blen >= sizeof(struct erofs_dirent) ? get16(b + 8) : 0;
		if (first < sizeof(struct erofs_dirent) || first % sizeof(struct erofs_dirent) ||
		    first > blen) {
			if (f->entry == 0)
				CFS_VERR(v, "dir-block", boff,
				    "directory block: first name at %llu of %llu bytes (not after a whole number of entries)",
				    cfs_ull(first), cfs_ull(blen));
			f->pos += blen;
			f->entry = 0;
			continue;
		}
		n = first / sizeof(struct erofs_dirent);
		if (f->entry >= n) {
			f->pos += blen;
			f->entry = 0;
			continue;
		}
		e = b + (size_t)f->entry * sizeof(struct erofs_dirent);
		out->at = boff + (uint64_t)f->entry * sizeof(struct erofs_dirent);
		nameoff = get16(e + 8);
		end = f->entry + 1 < n ? get16(e + sizeof(struct erofs_dirent) + 8) : (uint32_t)blen;
		f->entry++;
		if (nameoff < first || end < nameoff || end > blen) {
			CFS_VERR(v, "entry-bounds", out->at, "entry %u: name at %u..%u outside its %llu-byte block",
			    f->entry - 1, nameoff, end, cfs_ull(blen));
			continue;
		}
		out->name = b + nameoff;
		out->len = end - nameoff;
		if (f->entry == n) /* the last name may be followed by padding */
			out->len = strnlen((const char *)out->name, out->len);
		out->ino = get64(e);
		out->d_type = e[10];
		if (e[11])
			CFS_VWARN(v, "noncanonical", out->at, "directory entry: reserved byte is not 0");
		return 1;
	}
	return 0;
}

/* "." and "..": no inode of their own, but they must name the right ones. */
static void dot_entry(void *ctx, void *pos, const struct cfs_inode *dir, uint64_t parent,
		      const struct cfs_vdirent *e)
{
	struct ewalk *w = ctx;
	struct cfs_verifier *v = w->v;
	struct epos *f = pos;
	uint64_t want = e->len == 1 ? dir->ino : parent;
	bool *seen = e->len == 1 ? &f->dot : &f->dotdot;
	int len = (int)e->len;

	if (*seen)
		CFS_VERR(v, "duplicate", e->at, "a second '%.*s' entry", len, "..");
	*seen = true;
	if (e->ino != want)
		CFS_VERR(v, "dot", e->at, "'%.*s' names inode %llu, not %llu", len, "..", cfs_ull(e->ino),
		    cfs_ull(want));
	if (e->d_type != EROFS_FT_DIR)
		CFS_VERR(v, "d_type", e->at, "'%.*s' has entry type %u, not a directory's", len, "..",
		    e->d_type);
}

static void close_dir(void *ctx, void *pos, const struct cfs_inode *dir)
{
	struct ewalk *w = ctx;
	struct epos *f = pos;

	if (!f->dot || !f->dotdot)
		CFS_VERR(w->v, "dot", dir->offset, "the directory has no '%s' entry", f->dot ? ".." : ".");
}

static uint64_t root_of(void *ctx, uint64_t *at)
{
	struct ewalk *w = ctx;

	*at = EROFS_SUPER_OFFSET;
	return w->img.root;
}

static unsigned int d_type_of(uint32_t type)
{
	return ft_of(type);
}

static uint64_t offset_of(void *ctx, uint64_t nid)
{
	return slot_offset(ctx, nid);
}

static const struct cfs_vwalk_ops erofs_format = {
	.pos_size = sizeof(struct epos),
	.dots = true,
	.bad_name = "invalid name (empty, too long, or holding '/' or NUL)",
	.root = root_of,
	.decode = decode,
	.d_type = d_type_of,
	.next = next_entry,
	.dot = dot_entry,
	.close_dir = close_dir,
	.offset_of = offset_of,
};

int cfs_erofs_verify(const struct cfs_format *f, struct cfs_verifier *v)
{
	struct ewalk *w = calloc(1, sizeof(*w));
	uint64_t inos;
	int ret = 0;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->img.keys_lock, NULL);
	w->v = v;
	w->img.data = v->data;
	w->img.size = v->size;
	w->img.format = f;
	if (!check_super(w))
		goto out;
	ret = cfs_verify_walk(v, &erofs_format, w);
	if (ret < 0)
		goto out;
	inos = get64(v->data + EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, inos));
	v->cur_path = NULL;
	if (inos != v->res->inodes)
		CFS_VWARN(v, "inodes", EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, inos),
		     "superblock counts %llu inodes, %llu are reachable", cfs_ull(inos),
		     cfs_ull(v->res->inodes));
out:
	cfs_erofs_close(&w->img);
	pthread_mutex_destroy(&w->img.keys_lock);
	free(w);
	/* even when the superblock was refused: what was met (nothing) is checked */
	return ret < 0 ? ret : 1;
}
